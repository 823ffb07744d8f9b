//! `kix lint`, one trial per case under `tests/lint/<case>/` (`lint::<case>`): `manifests.yaml`, an
//! optional `args` file of extra arguments one per line, `clusters/` for `--cluster` cases. Each
//! gives exactly the finding its name starts with (`clean` none), every finding located and with
//! help; goldens `expected.txt` (exit status and stderr) and, where present, `expected.json`
//! (`--format json`); the exit status is 1 exactly when a finding is an error.

use crate::support::*;
use crate::{case_dirs, case_name};
use libtest_mimic::{Failed, Trial};
use std::path::Path;

const CASES: &str = "tests/lint";

fn lint_args(case: &Path, format: &str) -> Vec<String> {
    let mut args = vec!["lint".to_string(), "manifests.yaml".to_string(), "--format".to_string(), format.to_string()];
    if let Ok(extra) = std::fs::read_to_string(case.join("args")) {
        args.extend(extra.lines().filter(|l| !l.is_empty()).map(str::to_string));
    }
    args
}

fn run_case(case: &Path) -> Result<(), Failed> {
    let name = case_name(case);
    let relative = format!("{CASES}/{name}");
    let mut failures = Vec::new();
    let json = Test::in_dir(&relative).args(lint_args(case, "json")).run();
    let document: serde_json::Value =
        serde_json::from_str(&json.stdout).map_err(|e| format!("stdout is not one JSON document ({e})"))?;
    let findings: Vec<serde_json::Value> = document["diagnostics"].as_array().cloned().unwrap_or_default();
    // The golden: one finding per line, as the JSON document lists them.
    let lines: String = findings.iter().map(|f| format!("{f}\n")).collect();
    let codes: Vec<String> =
        findings.iter().map(|finding| finding["code"].as_str().unwrap_or_default().to_string()).collect();
    let expected: Vec<String> = match name.split_once('-') {
        Some((code, _)) if code.starts_with('k') => vec![code.to_uppercase()],
        _ => Vec::new(),
    };
    if codes != expected {
        failures.push(format!("codes {codes:?}, expected {expected:?}\n{lines}"));
    }
    // Every finding is located: file, line and column.
    for (finding, line) in findings.iter().zip(lines.lines()) {
        if ["file", "line", "column", "help"].iter().any(|key| finding[key].is_null()) {
            failures.push(format!("a finding without location or help: {line}"));
        }
    }
    let text = Test::in_dir(&relative).args(lint_args(case, "text")).run();
    let golden = format!("exit status {}\n{}", text.status, text.stderr);
    if let Err(difference) = check_golden(format!("{relative}/expected.txt"), &golden) {
        failures.push(difference);
    }
    if case.join("expected.json").exists()
        && let Err(difference) = check_golden(format!("{relative}/expected.json"), &lines)
    {
        failures.push(difference);
    }
    let errors = codes.iter().any(|code| {
        let explained = Test::in_repo().args(["explain", code.as_str()]).run().stdout;
        explained.contains("(error)")
    });
    if text.status != i32::from(errors) {
        failures.push(format!("exit status {} with errors {errors}", text.status));
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n").into()) }
}

/// One trial per case directory of tests/lint/ (one per lint code and a clean one).
pub fn trials() -> Vec<Trial> {
    case_dirs(CASES, 21)
        .into_iter()
        .map(|case| Trial::test(format!("lint::{}", case_name(&case)), move || run_case(&case)))
        .collect()
}
