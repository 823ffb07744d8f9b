//! Invariants of kix's output, checked by property tests over generated trees
//! (issue 4, item 4).
//!
//! Each case generates cluster files and packages (substrates from single-node
//! to four zones or unknown, levels, ceilings, replica mappings, explicit
//! placement, shipped PodDisruptionBudgets), writes them to a scratch root,
//! runs the real pipeline (`kix::compile::compile`) and checks what no
//! compiled output may ever do: a derived workload without exactly one budget,
//! two hard constraints, a constraint on a key the cluster lacks, a level above
//! a ceiling or the declared substrate, placement on a one-replica workload,
//! a touched explicit placement, output that depends on the order files are
//! listed in, or an object the API server would refuse. A rebuild after one
//! package changed (a comment, its objects, or the whole package replaced) and
//! after the change is undone reports and writes what a clean build does
//! (issue 42: it compiles the instances that run the package in part where it
//! may).
//!
//! The generator repairs what would be a user error (levels the declared
//! substrate rules out, too few replicas, decreasing mappings), so those cases
//! must compile; "raw" cases skip the repair and may fail, but only with the
//! codes for the errors they were allowed to make.
//!
//! Seeds are fixed so `cargo test` is deterministic; `PROPTEST_CASES` raises the count and
//! `PROPTEST_RNG_SEED` picks another seed for a longer hunt.
//!
//! Layout: [`model`] (the generated tree and what the rules make of it), [`strategies`] (proptest
//! generators), [`tree`] (writing and compiling it), [`checks`] (the invariants). The shipped
//! examples and every fixture are checked the same way, one trial per case, by the `corpus` target
//! (tests/corpus/fixtures.rs).

mod checks;
mod model;
mod strategies;
mod tree;

use checks::{canonical, check_invariants, messages};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use strategies::tree;
use tree::{build_into, compile_tree, trust_manifest, write_model};

fn config(cases: u32, seed: u64) -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(cases),
        rng_seed: RngSeed::Fixed(std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(seed)),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(128, 0x6b69_7801))]

    /// Repaired trees compile, and their output keeps every invariant.
    #[test]
    fn compiled_output_keeps_the_invariants(tree in tree(0.0)) {
        let compiled = compile_tree(&tree, false);
        prop_assert!(!compiled.diagnostics.has_errors(), "a valid tree failed: {:#?}", messages(&compiled));
        check_invariants(&tree, &compiled);
    }
}

proptest! {
    #![proptest_config(config(96, 0x6b69_7802))]

    /// Trees left partly unrepaired may hold user errors: they fail only with the codes for those errors,
    /// and whenever they compile, the output keeps every invariant.
    #[test]
    fn raw_trees_fail_only_for_their_errors(tree in tree(0.15)) {
        let compiled = compile_tree(&tree, false);
        if compiled.diagnostics.has_errors() {
            // K0301 contradictory capabilities, K0302 level above the substrate, K0401 decreasing mapping,
            // K0402 many replicas under a none ceiling, K0403 too few replicas.
            let allowed = ["K0301", "K0302", "K0401", "K0402", "K0403"];
            for diagnostic in compiled.diagnostics.iter() {
                if diagnostic.severity() == kix_diag::Severity::Error {
                    prop_assert!(
                        allowed.contains(&diagnostic.code.id()),
                        "unexpected error {}: {}", diagnostic.code.id(), diagnostic.message
                    );
                }
            }
        } else {
            check_invariants(&tree, &compiled);
        }
    }
}

proptest! {
    #![proptest_config(config(64, 0x6b69_7803))]

    /// The same inputs listed in another order compile to the same output.
    #[test]
    fn output_does_not_depend_on_input_order(tree in tree(0.1)) {
        let first = compile_tree(&tree, false);
        let second = compile_tree(&tree, true);
        prop_assert_eq!(canonical(&first), canonical(&second));
    }
}

proptest! {
    #![proptest_config(config(32, 0x6b69_7804))]

    /// A rebuild after one package changed reports and writes what a clean build of the new tree does
    /// (issue 42: the instances that run it compiled in part, or their clusters whole, whichever the rebuild
    /// takes), and so does the rebuild after the change is undone. The change is one of: a comment added
    /// to its YAML files (nothing but the bytes), its workloads' image changed (their objects, which no
    /// check across instances reads), or the package replaced by another the generator makes (its
    /// versions, workloads, mappings, ceilings, selectors, budgets and placements).
    #[test]
    fn a_rebuild_after_a_package_changed_is_a_clean_builds(
        first in tree(0.1),
        replacement in strategies::package(0.1),
        which in any::<proptest::sample::Index>(),
        change in 0..3u8,
    ) {
        let replaced = which.index(first.packages.len());
        let mut second = first.clone();
        if change == 2 {
            second.packages[replaced] = replacement;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_model(&first, root, false);
        build_into(root, "out");
        for (step, tree, edit) in [("changed", &second, change), ("undone", &first, 2)] {
            trust_manifest(root, "out");
            std::fs::remove_dir_all(root.join("packages")).unwrap();
            write_model(tree, root, false);
            if edit < 2 {
                edit_package(root, &tree::package_name(replaced), edit);
            }
            let rebuilt = build_into(root, "out");
            let _ = std::fs::remove_dir_all(root.join("clean"));
            let _ = std::fs::remove_dir_all(root.join(".kix/.clean.kix-spare"));
            let _ = std::fs::remove_file(root.join(".kix/.clean.kix-manifest"));
            let clean = build_into(root, "clean");
            prop_assert_eq!(&rebuilt.0, &clean.0, "{}: findings differ from a clean build's", step);
            prop_assert_eq!(rebuilt.1, clean.1, "{}: one wrote and the other did not", step);
            prop_assert!(rebuilt.2 == clean.2, "{}: out/ differs from a clean build's", step);
        }
    }
}

/// Edits every YAML file of `package`'s versions (written by `write_model`): `0` appends a comment, `1`
/// changes its workloads' image.
fn edit_package(root: &std::path::Path, package: &str, edit: u8) {
    for entry in std::fs::read_dir(root.join("packages")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.file_name().unwrap().to_string_lossy().ends_with(&format!("-{package}")) {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let edited = if edit == 0 {
                    format!("{text}# touched\n")
                } else {
                    text.replace("image: example/", "image: example.org/")
                };
                std::fs::write(&path, edited).unwrap();
            }
        }
    }
}
