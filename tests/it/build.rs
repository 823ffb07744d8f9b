//! `kix build` and `kix check` end to end: the real binary over fixture trees,
//! compared with golden output.

mod support;

use support::*;

/// Copies the shipped examples (clusters/ and packages/) into a scratch root.
fn examples_root() -> tempfile::TempDir {
    let scratch = tempfile::tempdir().unwrap();
    for dir in ["clusters", "packages"] {
        copy_tree(&repo_root().join(dir), &scratch.path().join(dir));
    }
    scratch
}

#[test]
fn shipped_examples_compile_to_the_golden_tree() {
    let scratch = examples_root();
    let run = kix(scratch.path(), &["build"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_golden(&repo_root().join("tests/golden/examples/stderr.txt"), &run.stderr);
    assert_golden_tree(&repo_root().join("tests/golden/examples/out"), &scratch.path().join("out"));
}

#[test]
fn output_is_byte_identical_across_runs_and_stdout_matches_files() {
    let scratch = examples_root();
    assert_eq!(kix(scratch.path(), &["build"]).status, 0);
    let first = read_tree(&scratch.path().join("out"));
    assert_eq!(kix(scratch.path(), &["build"]).status, 0);
    assert_eq!(read_tree(&scratch.path().join("out")), first);

    let stream = kix(scratch.path(), &["build", "--stdout"]);
    assert_eq!(stream.status, 0);
    let mut expected = String::new();
    for cluster in ["dev", "edge", "prod", "staging"] {
        let mut instances: Vec<_> =
            first.keys().filter(|p| p.starts_with(cluster) && !p.ends_with("kustomization.yaml")).collect();
        instances.sort();
        for path in instances {
            expected.push_str(std::str::from_utf8(&first[path]).unwrap());
        }
    }
    assert_eq!(stream.stdout, expected);
}

#[test]
fn cluster_directories_are_replaced_whole_and_others_kept() {
    let scratch = examples_root();
    let root = scratch.path();
    assert_eq!(kix(root, &["build"]).status, 0);
    std::fs::write(root.join("out/prod/stale.yaml"), "left over").unwrap();
    std::fs::write(root.join("out/dev/stale.yaml"), "left over").unwrap();
    assert_eq!(kix(root, &["build", "--cluster", "prod"]).status, 0);
    assert!(!root.join("out/prod/stale.yaml").exists(), "a rebuilt cluster's directory is replaced whole");
    assert!(root.join("out/dev/stale.yaml").exists(), "clusters not selected are left alone");
    let leftovers: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("kix-"))
        .collect();
    assert!(leftovers.is_empty(), "staging directories left behind: {leftovers:?}");
}

#[test]
fn check_writes_nothing_and_out_flag_is_honoured() {
    let scratch = examples_root();
    let root = scratch.path();
    let run = kix(root, &["check"]);
    assert_eq!(run.status, 0);
    assert!(run.stderr.ends_with("kix: 0 errors, 4 warnings\n"), "{}", run.stderr);
    assert!(!root.join("out").exists());
    assert_eq!(kix(root, &["build", "--out", "elsewhere/manifests"]).status, 0);
    assert!(root.join("elsewhere/manifests/prod/shop.yaml").is_file());
}

#[test]
fn deny_warnings_fails_and_writes_nothing() {
    let scratch = examples_root();
    let run = kix(scratch.path(), &["build", "--deny-warnings"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("error[K0502]"), "{}", run.stderr);
    assert!(!scratch.path().join("out").exists());
}

#[test]
fn json_diagnostics_carry_code_location_and_subject() {
    let scratch = examples_root();
    let run = kix(scratch.path(), &["check", "--format", "json"]);
    assert_eq!(run.status, 0);
    let lines: Vec<serde_json::Value> =
        run.stdout.lines().chain(run.stderr.lines()).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    let ceiling = lines.iter().find(|d| d["code"] == "K0307").unwrap();
    assert_eq!(ceiling["severity"], "warning");
    assert_eq!(ceiling["file"], "clusters/prod.toml");
    assert_eq!(ceiling["line"], 23);
    assert_eq!(ceiling["column"], 8);
    assert_eq!(ceiling["cluster"], "prod");
    assert_eq!(ceiling["instance"], "sessions");
    assert_eq!(ceiling["package"], "cache");
}

#[test]
fn usage_errors_exit_2() {
    let scratch = examples_root();
    assert_eq!(kix(scratch.path(), &["build", "--no-such-flag"]).status, 2);
    assert_eq!(kix(scratch.path(), &["explain", "K9999"]).status, 2);
    let explained = kix(scratch.path(), &["explain", "K0403"]);
    assert_eq!(explained.status, 0);
    assert!(explained.stdout.contains("one replica cannot survive losing a pod"));
}

/// Every fixture under tests/fixtures/<case>/ (a root with clusters/ and packages/) is built and its
/// stderr and out/ compared with tests/fixtures/<case>/expected/.
#[test]
fn fixture_trees_match_their_golden_output() {
    let fixtures = repo_root().join("tests/fixtures");
    let mut cases: Vec<_> = std::fs::read_dir(&fixtures).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(!cases.is_empty());
    for case in cases {
        let scratch = tempfile::tempdir().unwrap();
        for dir in ["clusters", "packages"] {
            if case.join(dir).exists() {
                copy_tree(&case.join(dir), &scratch.path().join(dir));
            }
        }
        let run = kix(scratch.path(), &["build"]);
        let expected = case.join("expected");
        assert_golden(&expected.join("stderr.txt"), &format!("exit status {}\n{}", run.status, run.stderr));
        assert_golden_tree(&expected.join("out"), &scratch.path().join("out"));
    }
}

#[test]
fn readme_lists_every_diagnostic_code() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let codes = kix(&repo_root(), &["explain"]);
    for line in codes.stdout.lines() {
        let code = line.split_whitespace().next().unwrap();
        assert!(readme.contains(&format!("| {code} |")), "README.md does not list {code}");
    }
}

#[test]
fn leftovers_of_a_killed_run_are_cleaned_up_and_never_read() {
    let scratch = examples_root();
    let root = scratch.path();
    // What a kix killed mid-build (pid 999999 is not running) leaves beside out/.
    std::fs::create_dir_all(root.join(".out.kix-staging-999999/prod")).unwrap();
    std::fs::write(root.join(".out.kix-staging-999999/prod/shop.yaml"), "half written").unwrap();
    assert_eq!(kix(root, &["build"]).status, 0);
    assert!(!root.join(".out.kix-staging-999999").exists());
    assert!(std::fs::read_to_string(root.join("out/prod/shop.yaml")).unwrap().starts_with("# Generated by kix"));
}

#[test]
fn out_may_not_overwrite_the_inputs() {
    let scratch = examples_root();
    let root = scratch.path();
    let before = read_tree(root);
    for out in ["packages", "packages/web", "clusters", ".", "..", "./clusters/../packages"] {
        let run = kix(root, &["build", "--out", out]);
        assert_eq!(run.status, 1, "--out {out}: {}", run.stderr);
        assert!(run.stderr.contains("would overwrite kix's own inputs"), "--out {out}: {}", run.stderr);
        assert_eq!(read_tree(root), before, "--out {out} changed the tree");
    }
}

#[test]
fn a_full_build_drops_directories_of_removed_clusters_and_keeps_other_files() {
    let scratch = examples_root();
    let root = scratch.path();
    assert_eq!(kix(root, &["build"]).status, 0);
    std::fs::write(root.join("out/README.md"), "kept").unwrap();
    std::fs::remove_file(root.join("clusters/edge.toml")).unwrap();
    // A selective build leaves other clusters' directories alone, even stale ones.
    assert_eq!(kix(root, &["build", "--cluster", "prod"]).status, 0);
    assert!(root.join("out/edge/shop.yaml").exists());
    // A full build removes what kix generated for a cluster that no longer exists.
    assert_eq!(kix(root, &["build"]).status, 0);
    assert!(!root.join("out/edge").exists(), "stale cluster output lingers");
    assert_eq!(std::fs::read_to_string(root.join("out/README.md")).unwrap(), "kept");
    assert!(root.join("out/dev/kustomization.yaml").exists());
}

#[test]
fn completions_cover_every_subcommand() {
    let run = kix(&repo_root(), &["completions", "bash"]);
    assert_eq!(run.status, 0);
    for command in ["build", "check", "verify", "schedule", "simulate", "explain"] {
        assert!(run.stdout.contains(command), "bash completion lacks {command}");
    }
    assert_eq!(kix(&repo_root(), &["completions", "tcsh"]).status, 2);
}
