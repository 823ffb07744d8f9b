//! The build fixtures, one trial per directory of tests/fixtures/ (`fixtures::<case>`). A case is a
//! kix root (`clusters/`, `packages/`) with `expected/stderr.txt` (`exit status N`, then what `kix
//! build` printed on stderr) and `expected/out/` (every file it wrote); `examples` holds the shipped
//! examples' goldens instead (bare stderr: the build must succeed), their root being the repository
//! root. Each case is built in a scratch copy by the real binary and compared with its goldens, and
//! compiled through the library: no errors, something compiled, every object valid under kix's own
//! Kubernetes validation (the property tests cover generated trees; these are the trees people read
//! first).

use crate::support::*;
use crate::{case_dirs, case_name};
use kix::compile::{Selection, compile};
use kix_kube::validate::validate_object;
use libtest_mimic::{Failed, Trial};
use std::path::Path;

/// What kix's library makes of the root: no errors, something compiled, every object valid.
fn check_validation(root: &Path) -> Result<(), Failed> {
    let compiled = compile(&Selection { root: root.to_path_buf(), ..Selection::default() });
    let messages: Vec<String> = compiled.diagnostics.iter().map(|d| format!("{:?}: {}", d.code, d.message)).collect();
    if compiled.diagnostics.has_errors() {
        return Err(format!("compile errors: {messages:#?}").into());
    }
    let objects: Vec<&kix_yaml::Value> =
        compiled.clusters.iter().flat_map(|c| &c.instances).flat_map(|i| i.objects()).collect();
    if objects.is_empty() {
        return Err("nothing compiled".into());
    }
    let invalid: Vec<String> = objects
        .into_iter()
        .filter_map(|object| {
            let problems = validate_object(object);
            (!problems.is_empty()).then(|| {
                let kind = object["kind"].as_str().unwrap_or_default();
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                format!("{kind} {name}: {problems:?}")
            })
        })
        .collect();
    if invalid.is_empty() {
        Ok(())
    } else {
        Err(format!("objects kix's validation refuses:\n{}", invalid.join("\n")).into())
    }
}

/// A kix root with golden output: built, compared, validated.
fn run_root(case: &Path) -> Result<(), Failed> {
    let expected = case.join("expected");
    let t = Test::new().fixture(case);
    check_validation(t.root())?;
    t.args(["build"])
        .run()
        .status_and_stderr_golden(expected.join("stderr.txt"))
        .files_golden("out", expected.join("out"));
    Ok(())
}

/// The shipped examples (their kix root is the repository root) against tests/fixtures/examples/.
fn run_examples() -> Result<(), Failed> {
    let t = Test::new().examples();
    check_validation(t.root())?;
    t.args(["build"])
        .run()
        .status(0)
        .stderr_golden(format!("{EXAMPLES}/expected/stderr.txt"))
        .files_golden("out", format!("{EXAMPLES}/expected/out"));
    Ok(())
}

/// One trial per directory of tests/fixtures/: `examples` and every kix root.
pub fn trials() -> Vec<Trial> {
    let cases = case_dirs("tests/fixtures", 2);
    let roots = fixture_cases();
    assert_eq!(roots.len() + 1, cases.len(), "tests/fixtures/ holds `examples` and kix roots only");
    cases
        .into_iter()
        .map(|case| {
            let name = case_name(&case);
            if case == repo_path(EXAMPLES) {
                Trial::test(format!("fixtures::{name}"), run_examples)
            } else {
                Trial::test(format!("fixtures::{name}"), move || run_root(&case))
            }
        })
        .collect()
}
