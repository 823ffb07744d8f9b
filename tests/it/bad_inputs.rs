//! The bad-input corpus: every tree under tests/bad/<case>/ must fail with one
//! clear, located error, exit status 1, and leave out/ exactly as it was.
//!
//! Each case holds `clusters/` and `packages/` (symlinks and non-UTF-8 files are
//! committed as they are), `expected.stderr` (the golden report, rewritten with
//! `KIX_BLESS=1`), and optionally `generate.txt` for inputs too big to commit:
//! lines `big <path> <bytes>` (a YAML file of that size) or
//! `deep <path> <levels>` (a document nested that deep).

mod support;

use std::path::Path;
use support::*;

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
            other => panic!("unknown generate.txt directive {other}"),
        }
    }
}

/// Copies a case tree, keeping symlinks as symlinks.
fn copy_case(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let file_type = entry.file_type().unwrap();
        if file_type.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), target).unwrap();
        } else if file_type.is_dir() {
            copy_case(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn every_bad_input_gives_one_located_error_and_writes_nothing() {
    let corpus = repo_root().join("tests/bad");
    let mut cases: Vec<_> = std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        for dir in ["clusters", "packages"] {
            if case.join(dir).exists() {
                copy_case(&case.join(dir), &root.join(dir));
            }
        }
        generate(case, &root);
        // A previous build's output that must survive untouched.
        std::fs::create_dir_all(root.join("out/prod")).unwrap();
        std::fs::write(root.join("out/prod/shop.yaml"), "# previous output\n").unwrap();
        let before = read_tree(&root.join("out"));

        let run = kix(&root, &["build"]);
        if run.status != 1 {
            failures.push(format!("{name}: exit status {} (expected 1)\n{}", run.status, run.stderr));
            continue;
        }
        if read_tree(&root.join("out")) != before {
            failures.push(format!("{name}: out/ changed"));
        }
        let leftovers: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("kix-"))
            .collect();
        if !leftovers.is_empty() {
            failures.push(format!("{name}: left {leftovers:?} behind"));
        }
        let json = kix(&root, &["check", "--format", "json"]);
        let errors: Vec<serde_json::Value> = json
            .stderr
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|d| d["severity"] == "error")
            .collect();
        if errors.len() != 1 {
            failures.push(format!("{name}: {} errors (expected exactly one):\n{}", errors.len(), run.stderr));
        } else if errors[0]["file"].is_null() {
            failures.push(format!("{name}: the error names no file"));
        }
        let expected = case.join("expected.stderr");
        if blessing() {
            std::fs::write(&expected, &run.stderr).unwrap();
        } else {
            match std::fs::read_to_string(&expected) {
                Ok(text) if text == run.stderr => {}
                Ok(text) => {
                    failures.push(format!("{name}: stderr differs\n--- expected\n{text}--- actual\n{}", run.stderr))
                }
                Err(_) => failures.push(format!("{name}: no expected.stderr (KIX_BLESS=1 writes it)")),
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
    assert!(cases.len() >= 60, "the corpus should hold at least 60 cases, it has {}", cases.len());
}
