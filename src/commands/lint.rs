//! `kix lint`: manifests kix did not write, checked for placement mistakes.

use super::output::{finish, outcome, unsupported, usage_error};
use crate::cli::Format;
use crate::cli::LintArgs;
use kix_compiler::compile;
use kix_lint as lint;
use std::path::Path;
use std::process::ExitCode;

/// `kix lint`: exit 1 when a finding is an error (or a warning, with `--deny-warnings`). `-` reads stdin
/// (once, however often it is named).
pub fn lint(args: &LintArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.format, "lint", &[Format::Sarif, Format::Junit, Format::Github]) {
        return refused;
    }
    // A lint's memory is bounded by twice its largest input (issue 20): each document's tree is freed as
    // soon as its records are taken, and given back to the OS at once rather than after mimalloc's purge
    // delay, which left the trees of the last second resident at the peak (docs/performance.md).
    kix_alloc::free_at_once();
    let mut stdin = None;
    let mut inputs = Vec::new();
    for path in &args.inputs {
        if path.as_os_str() == "-" {
            if stdin.is_none() {
                let mut text = String::new();
                if let Err(error) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    return usage_error(&format!("cannot read stdin: {error}"));
                }
                stdin = Some(());
                inputs.push(lint::Input::Text { name: "<stdin>".into(), text });
            }
        } else {
            inputs.push(lint::Input::Path(path.clone()));
        }
    }
    let root = args.root.clone().unwrap_or_else(|| compile::find_root(Path::new(".")));
    let request = lint::LintRequest { inputs, cluster: args.cluster.clone(), root, deny_warnings: args.deny_warnings };
    let linted = lint::lint(&request);
    let plural = kix_diag::words::plural::<usize>;
    let done = format!(
        "linted {} ({}, {}) from {}",
        plural(linted.objects.len(), "object"),
        plural(linted.workloads, "workload"),
        plural(linted.budgets, "PodDisruptionBudget"),
        plural(linted.files, "file")
    );
    // Lint's paths are the inputs' own, relative to the working directory.
    let mut outcome = outcome("lint", &linted.diagnostics, ".".into());
    outcome.report.insert(
        "linted".into(),
        serde_json::json!({
            "files": linted.files, "objects": linted.objects.len(), "workloads": linted.workloads,
            "budgets": linted.budgets,
        }),
    );
    // The JUnit cases hold every finding rendered again: built only when asked for.
    let suites = if args.format == Format::Junit { crate::formats::lint_junit::junit(&linted) } else { Vec::new() };
    finish(&outcome, args.format, Some(&done), &suites)
}
