//! Test support shared by the integration tests: run the real `kix` binary over a
//! tree and compare what it printed and wrote with golden files.
//!
//! Golden files are rewritten instead of compared when `KIX_BLESS=1` is set.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of the binary did.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `kix` with the given arguments in `dir`, with colour off.
pub fn kix(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_kix"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kix");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn blessing() -> bool {
    std::env::var_os("KIX_BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the golden file at `path` (or writes it when blessing).
pub fn assert_golden(path: &Path, actual: &str) {
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("missing golden file {} ({e}); run with KIX_BLESS=1 to create it", path.display()));
    if expected != actual {
        panic!(
            "{} differs from the golden file (run with KIX_BLESS=1 to accept)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

/// Every file under `dir`, by relative path, with its contents.
pub fn read_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut files);
    }
    files
}

fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(root, &path, files);
        } else {
            files.insert(path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
        }
    }
}

/// Compares a written tree with a golden tree (or replaces the golden tree when blessing).
pub fn assert_golden_tree(golden: &Path, actual: &Path) {
    let actual_files = read_tree(actual);
    if blessing() {
        let _ = std::fs::remove_dir_all(golden);
        for (path, bytes) in &actual_files {
            let target = golden.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, bytes).unwrap();
        }
        return;
    }
    let expected_files = read_tree(golden);
    let expected_names: Vec<_> = expected_files.keys().collect();
    let actual_names: Vec<_> = actual_files.keys().collect();
    assert_eq!(actual_names, expected_names, "files written differ from {}", golden.display());
    for path in expected_files.keys() {
        assert_golden(&golden.join(path), &String::from_utf8_lossy(&actual_files[path]));
    }
}

/// Copies a directory tree (fixture into a scratch directory).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The repository root (where the shipped examples live).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
