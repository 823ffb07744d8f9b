//! The pre-commit hooks (`.pre-commit-hooks.yaml`) run by pre-commit itself, as a user's
//! repository runs them: `pre-commit try-repo` of a hook repository holding the shipped file,
//! in a sample kix repository, passing on a committed out/ that is current and clean
//! manifests, failing on a stale out/ and on a placement mistake.
//!
//! pre-commit comes from PyPI: `.ci/run` installs it in `.venv` and sets
//! `KIX_REQUIRE_PRECOMMIT=1`, so CI can never skip this test; elsewhere it is skipped with a
//! visible message when pre-commit is not installed. The hooks are `language: system`: they
//! run the kix on PATH, here the binary under test.

use crate::support::*;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pre_commit() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("KIX_PRE_COMMIT").map(PathBuf::from),
        Some(repo_path(".venv/bin/pre-commit")),
        Some(PathBuf::from("pre-commit")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|candidate| Command::new(candidate).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// pre-commit, or `None` after saying on stderr that `test` is skipped; under `KIX_REQUIRE_PRECOMMIT=1`
/// (CI) a missing pre-commit fails the test instead.
fn pre_commit_or_skip(test: &str) -> Option<PathBuf> {
    let found = pre_commit();
    if found.is_none() {
        if std::env::var_os("KIX_REQUIRE_PRECOMMIT").is_some_and(|v| v == "1") {
            panic!("pre-commit is required (KIX_REQUIRE_PRECOMMIT=1) but not installed");
        }
        // Written straight to stderr, not through eprintln!, which the test harness captures and hides.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: pre-commit is not installed (python3 -m venv .venv && .venv/bin/pip install pre-commit)"
        );
    }
    found
}

/// `git` in `dir`, with an identity of its own so commits work on a fresh machine.
fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=kix test", "-c", "user.email=test@kix.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
}

/// A hook repository holding the shipped `.pre-commit-hooks.yaml`, committed.
fn hook_repository(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(repo_path(".pre-commit-hooks.yaml"), dir.join(".pre-commit-hooks.yaml")).unwrap();
    git(dir, &["init", "--quiet"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "hooks"]);
}

/// `pre-commit try-repo HOOKS HOOK --all-files` in `sample`: exit status and what it printed.
fn try_repo(pre_commit: &Path, home: &Path, hooks: &Path, sample: &Path, hook: &str) -> (i32, String) {
    let kix_dir = Path::new(env!("CARGO_BIN_EXE_kix")).parent().unwrap().to_path_buf();
    let path: OsString = std::env::join_paths(
        std::iter::once(kix_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let output = Command::new(pre_commit)
        .arg("try-repo")
        .arg(hooks)
        .args([hook, "--all-files", "--color", "never"])
        .current_dir(sample)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", home)
        .env("NO_COLOR", "1")
        .output()
        .expect("run pre-commit");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

#[test]
fn pre_commit_hooks_pass_on_a_current_repository_and_fail_on_a_stale_out_or_a_lint_finding() {
    let Some(pre_commit) =
        pre_commit_or_skip("pre_commit_hooks_pass_on_a_current_repository_and_fail_on_a_stale_out_or_a_lint_finding")
    else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let hooks = scratch.path().join("hooks");
    let home = scratch.path().join("pre-commit-home");
    hook_repository(&hooks);

    // The sample: the shipped examples with their out/ built and committed, and one clean manifest
    // kix did not write.
    let t = Test::new().examples().args(["build", "--quiet"]);
    t.run().status(0);
    let sample = t.root().to_path_buf();
    let clean = std::fs::read(repo_path("tests/lint/clean/manifests.yaml")).unwrap();
    write_tree(&sample, [("deploy/clean.yaml", clean)]);
    git(&sample, &["init", "--quiet"]);
    git(&sample, &["add", "."]);
    git(&sample, &["commit", "--quiet", "-m", "sample"]);

    let (status, text) = try_repo(&pre_commit, &home, &hooks, &sample, "kix-build-check");
    assert_eq!(status, 0, "kix-build-check on a current out/:\n{text}");
    assert!(text.contains("kix build --check") && text.contains("Passed"), "{text}");
    let (status, text) = try_repo(&pre_commit, &home, &hooks, &sample, "kix-lint");
    assert_eq!(status, 0, "kix-lint on clean manifests:\n{text}");
    assert!(text.contains("kix lint") && text.contains("Passed"), "{text}");

    // A stale out/: one instance file edited by hand. The hook fails, naming the file, with its diff.
    let edited = read_tree(&sample.join("out")).into_keys().find(|p| !p.ends_with("kustomization.yaml")).unwrap();
    let path = sample.join("out").join(&edited);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("# edited by hand\n");
    std::fs::write(&path, text).unwrap();
    git(&sample, &["add", "."]);
    let (status, text) = try_repo(&pre_commit, &home, &hooks, &sample, "kix-build-check");
    assert_eq!(status, 1, "kix-build-check on a stale out/:\n{text}");
    assert!(text.contains("Failed"), "{text}");
    assert!(text.contains(&edited.display().to_string()), "the stale file is named:\n{text}");
    assert!(text.contains("-# edited by hand"), "with its diff:\n{text}");

    // A placement mistake in a manifest kix did not write: a budget that blocks every eviction (in a
    // namespace of its own, so it does not meet the clean manifest's objects).
    let blocking = std::fs::read_to_string(repo_path("tests/lint/k0711-pdb-min-available-blocks/manifests.yaml"))
        .unwrap()
        .replace("namespace: shop", "namespace: blocked");
    write_tree(&sample, [("deploy/blocking.yaml", blocking)]);
    git(&sample, &["add", "."]);
    let (status, text) = try_repo(&pre_commit, &home, &hooks, &sample, "kix-lint");
    assert_eq!(status, 1, "kix-lint on a blocking budget:\n{text}");
    assert!(text.contains("Failed") && text.contains("K0711") && text.contains("deploy/blocking.yaml"), "{text}");
}

/// Issue 41, point 2: the kix root in `deploy/` (the layout docs/flux.md and docs/ci.md show), no hook
/// configuration changed: `kix-build-check` fails a stale `deploy/out/` and passes a fresh one.
#[test]
fn build_check_hook_finds_a_kix_root_in_a_subdirectory() {
    let Some(pre_commit) = pre_commit_or_skip("build_check_hook_finds_a_kix_root_in_a_subdirectory") else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let hooks = scratch.path().join("hooks");
    let home = scratch.path().join("pre-commit-home");
    hook_repository(&hooks);
    let sample = scratch.path().join("sample");
    let deploy = sample.join("deploy");
    copy_examples(&deploy);
    write_tree(&sample, [("README.md", "a repository whose kix root is deploy/\n")]);
    let built =
        Command::new(env!("CARGO_BIN_EXE_kix")).args(["build", "--quiet", "--root"]).arg(&deploy).output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    git(&sample, &["init", "--quiet"]);
    git(&sample, &["add", "."]);
    git(&sample, &["commit", "--quiet", "-m", "sample"]);

    let (status, text) = try_repo(&pre_commit, &home, &hooks, &sample, "kix-build-check");
    assert_eq!(status, 0, "kix-build-check on a current deploy/out/:\n{text}");
    assert!(text.contains("Passed") && !text.contains("Skipped"), "{text}");

    let path = deploy.join("out/prod/shop.yaml");
    let mut stale = std::fs::read_to_string(&path).unwrap();
    stale.push_str("# edited by hand\n");
    std::fs::write(&path, stale).unwrap();
    git(&sample, &["add", "."]);
    let (status, text) = try_repo(&pre_commit, &home, &hooks, &sample, "kix-build-check");
    assert_eq!(status, 1, "kix-build-check on a stale deploy/out/:\n{text}");
    assert!(
        text.contains("Failed") && text.contains("out/prod/shop.yaml") && text.contains("-# edited by hand"),
        "{text}"
    );
}
