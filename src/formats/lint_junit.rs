//! `kix lint --format junit`: one test suite per file, one test case per object (`Deployment shop/api`),
//! failed when an error is on it (every finding on it as the failure's text; its warnings too when
//! `--deny-warnings` denies them), its warnings otherwise as the case's output. Findings on no object
//! (a file that cannot be read or parsed, K0502) are cases of their file's suite, or of a suite `kix`.

use crate::formats::junit::{Case, Failure, Suite};
use kix_diag::{Code, Diagnostic, Severity};
use kix_lint::Linted;
use std::collections::BTreeMap;

/// The suites of a lint run, files in input order.
pub fn junit(linted: &Linted) -> Vec<Suite> {
    let denied = linted.diagnostics.iter().any(|d| d.code == Code::WarningsDenied);
    let fails = |d: &Diagnostic| d.severity() == Severity::Error || denied;
    let case = |name: String, classname: String, found: Vec<&Diagnostic>| {
        let text: Vec<String> = found.iter().map(|d| d.render(kix_diag::Style::Plain)).collect();
        let failing = found.iter().find(|d| fails(d));
        Case {
            name,
            classname,
            failure: failing.map(|d| Failure {
                kind: d.code.id().into(),
                message: d.message.to_string(),
                text: text.join("\n"),
            }),
            skipped: None,
            output: (failing.is_none() && !text.is_empty()).then(|| text.join("\n")),
        }
    };
    let mut suites: Vec<Suite> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    // Each finding goes to the first object holding it, found through the index by file (a scan of every
    // object per finding was quadratic: seconds for a lint of a few hundred files).
    let by_file = kix_lint::ByFile::new(&linted.objects);
    let mut held: Vec<Vec<&Diagnostic>> = vec![Vec::new(); linted.objects.len()];
    let mut rest: Vec<&Diagnostic> = Vec::new();
    for diagnostic in linted.diagnostics.iter() {
        match by_file.index_holding(diagnostic) {
            Some(object) => held[object].push(diagnostic),
            None => rest.push(diagnostic),
        }
    }
    for (object, found) in linted.objects.iter().zip(held) {
        let file = object.file.display().to_string();
        let suite = *index.entry(file.clone()).or_insert_with(|| {
            suites.push(Suite { name: file.clone(), cases: Vec::new() });
            suites.len() - 1
        });
        suites[suite].cases.push(case(object.name(), format!("kix.lint.{file}"), found));
    }
    for diagnostic in rest {
        let file = diagnostic.location().map(|l| l.path().display().to_string());
        let name =
            format!("{} {}", diagnostic.code.id(), diagnostic.location().map(ToString::to_string).unwrap_or_default());
        let classname = format!("kix.lint.{}", file.as_deref().unwrap_or("kix"));
        let suite = match file.as_ref().and_then(|f| index.get(f)) {
            Some(&suite) => suite,
            None => {
                let name = file.unwrap_or_else(|| "kix".into());
                index.insert(name.clone(), suites.len());
                suites.push(Suite { name, cases: Vec::new() });
                suites.len() - 1
            }
        };
        suites[suite].cases.push(case(name, classname, vec![diagnostic]));
    }
    suites
}
