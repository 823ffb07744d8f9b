//! The bad-input corpus, one trial per tree under tests/bad/<case>/ (`bad::<case>`): each must fail
//! with one clear, located error, exit status 1, and leave out/ exactly as it was.
//!
//! Each case holds `clusters/` and `packages/` (symlinks and non-UTF-8 files are
//! committed as they are), `expected.stderr` (the golden report, rewritten with
//! `KIX_BLESS=1`), and optionally `generate.txt` for inputs too big to commit:
//! lines `big <path> <bytes>` (a YAML file of that size) or
//! `deep <path> <levels>` (a document nested that deep) or `fifo <path>` (a named pipe, which git
//! cannot hold).

use crate::support::*;
use crate::{case_dirs, case_name};
use libtest_mimic::{Failed, Trial};
use std::path::Path;

fn generate(case: &Path, root: &Path) {
    let Ok(script) = std::fs::read_to_string(case.join("generate.txt")) else { return };
    for line in script.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let path = root.join(parts[1]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        match parts[0] {
            "big" => {
                let size: usize = parts[2].parse().unwrap();
                let mut text =
                    String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: \"");
                text.push_str(&"x".repeat(size.saturating_sub(text.len() + 2)));
                text.push_str("\"\n");
                std::fs::write(path, text).unwrap();
            }
            "deep" => {
                let levels: usize = parts[2].parse().unwrap();
                let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: ");
                text.push_str(&"[".repeat(levels));
                text.push_str(&"]".repeat(levels));
                text.push('\n');
                std::fs::write(path, text).unwrap();
            }
            // A FIFO cannot be committed: made here (a build that opened it would wait forever).
            "fifo" => assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success()),
            other => panic!("unknown generate.txt directive {other}"),
        }
    }
}

/// Runs one case: `kix build` over a copy of it with a previous `out/`, then `kix check --format json`.
fn run_case(case: &Path) -> Result<(), Failed> {
    // A previous build's output that must survive untouched.
    let t = Test::new().fixture(case).tree([("out/prod/shop.yaml", "# previous output\n")]);
    let root = t.root().to_path_buf();
    generate(case, &root);
    let before = read_tree(&root.join("out"));

    let run = t.clone().args(["build"]).run();
    if run.status != 1 {
        return Err(format!("exit status {} (expected 1)\n{}", run.status, run.stderr).into());
    }
    let mut failures = Vec::new();
    if read_tree(&root.join("out")) != before {
        failures.push("out/ changed".to_string());
    }
    let leftovers: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("kix-"))
        .collect();
    if !leftovers.is_empty() {
        failures.push(format!("left {leftovers:?} behind"));
    }
    let json = t.args(["check", "--format", "json"]).run();
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap_or_default();
    let errors: Vec<serde_json::Value> = document["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["severity"] == "error")
        .cloned()
        .collect();
    if errors.len() != 1 {
        failures.push(format!("{} errors (expected exactly one):\n{}", errors.len(), run.stderr));
    } else if errors[0]["file"].is_null() {
        failures.push("the error names no file".to_string());
    }
    if let Err(difference) = check_golden(case.join("expected.stderr"), &run.stderr) {
        failures.push(difference);
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n").into()) }
}

/// One trial per case directory of tests/bad/.
pub fn trials() -> Vec<Trial> {
    case_dirs("tests/bad", 60)
        .into_iter()
        .map(|case| Trial::test(format!("bad::{}", case_name(&case)), move || run_case(&case)))
        .collect()
}
