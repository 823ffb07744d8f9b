//! kix's corpora, one libtest-mimic trial per case (tests/README.md): every broken tree of
//! `tests/bad/` (`bad::<case>`), every fixture of `tests/fixtures/` (`fixtures::<case>`) and every
//! lint case of `tests/lint/` (`lint::<case>`). A failing case names itself and the others still run;
//! `cargo test --test corpus bad::` runs one corpus, `cargo test --test corpus lint::clean` one case.
//! A harness = false target cannot hold `#[test]`s, so this is a binary of its own beside tests/it/,
//! sharing its support module (trees, goldens honouring `KIX_BLESS=1`, the `Test` builder).

#[path = "../it/support.rs"]
#[allow(dead_code)] // shared with tests/it/; the corpora use part of it
mod support;

mod bad;
mod fixtures;
mod lint;

use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};

/// The case directories of a corpus (relative to the repository root), sorted. Every entry must be a
/// directory, so nothing in a corpus goes unchecked, and the corpus must hold at least `min` cases.
pub fn case_dirs(corpus: &str, min: usize) -> Vec<PathBuf> {
    let dir = support::repo_path(corpus);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    for case in &cases {
        assert!(case.is_dir(), "{} is not a case directory (see tests/README.md)", case.display());
    }
    assert!(cases.len() >= min, "{corpus} should hold at least {min} cases, it has {}", cases.len());
    cases
}

/// A case directory's name.
pub fn case_name(case: &Path) -> String {
    case.file_name().unwrap().to_string_lossy().into_owned()
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    trials.extend(bad::trials());
    trials.extend(fixtures::trials());
    trials.extend(lint::trials());
    let total = trials.len() as u64;
    let conclusion = libtest_mimic::run(&args, trials);
    // Every case ran (or was filtered out by the command line): none is skipped silently.
    if !args.list {
        let accounted =
            conclusion.num_passed + conclusion.num_failed + conclusion.num_ignored + conclusion.num_filtered_out;
        assert_eq!(accounted, total, "cases run or filtered out ({accounted}) differ from the cases found ({total})");
    }
    conclusion.exit();
}
