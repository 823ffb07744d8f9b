//! `kix build` and `kix check` end to end: the real binary over the shipped examples and small
//! trees. The fixture trees of tests/fixtures/ (the shipped examples' goldens included) are one
//! trial each in the `corpus` target (tests/corpus/fixtures.rs).

use crate::support::*;

#[test]
fn output_is_byte_identical_across_runs_and_stdout_matches_files() {
    let t = Test::new().examples();
    let first = read_tree(&t.clone().args(["build"]).run().status(0).root().join("out"));
    let second = read_tree(&t.clone().args(["build"]).run().status(0).root().join("out"));
    assert_eq!(second, first);

    let stream_of = |cluster: &str| {
        let mut instances: Vec<_> =
            first.keys().filter(|p| p.starts_with(cluster) && !p.ends_with("kustomization.yaml")).collect();
        // The admission policies come last in a stream (`kubectl apply -f -` applies in order: their
        // params need the instances' namespaces), first among the files (`kubectl apply -k` orders by kind).
        instances.sort_by_key(|p| (p.ends_with("_admission.yaml"), p.to_path_buf()));
        instances.into_iter().map(|path| std::str::from_utf8(&first[path]).unwrap()).collect::<String>()
    };
    // One cluster's stream is what its files hold.
    t.clone().args(["build", "--stdout", "--cluster", "prod"]).run().status(0).stdout(&stream_of("prod"));
    // Every cluster's only when asked for, each named.
    let all: String =
        ["dev", "edge", "prod", "staging"].iter().map(|c| format!("# kix: cluster {c}\n{}", stream_of(c))).collect();
    t.clone().args(["build", "--stdout", "--all"]).run().status(0).stdout(&all);
    // Piped into `kubectl apply -f -`, several clusters' objects would land on one: a usage error.
    t.args(["build", "--stdout"])
        .run()
        .status(2)
        .stdout("")
        .stderr_contains("--stdout writes one cluster's manifests")
        .stderr_contains("clusters here: dev, edge, prod, staging");
}

#[test]
fn cluster_directories_are_replaced_whole_and_others_kept() {
    let t = Test::new().examples();
    let root = t.root().to_path_buf();
    t.clone().args(["build"]).run().status(0);
    std::fs::write(root.join("out/prod/stale.yaml"), "left over").unwrap();
    std::fs::write(root.join("out/dev/stale.yaml"), "left over").unwrap();
    t.clone().args(["build", "--cluster", "prod"]).run().status(0);
    assert!(!root.join("out/prod/stale.yaml").exists(), "a rebuilt cluster's directory is replaced whole");
    assert!(root.join("out/dev/stale.yaml").exists(), "clusters not selected are left alone");
    let leftovers: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("kix-") && !kept_beside_out(&n.to_string_lossy()))
        .collect();
    assert!(leftovers.is_empty(), "staging directories left behind: {leftovers:?}");
}

/// `build --cluster X` touches only X's directory (issue 20): the rest of `out/` is left in place, not
/// copied (the same inodes), and not even read: a FIFO in another cluster's directory, which a full
/// build refuses, does not stop it.
#[test]
fn a_build_of_one_cluster_leaves_the_rest_of_out_in_place() {
    use std::os::unix::fs::MetadataExt;
    let t = Test::new().examples();
    let root = t.root().to_path_buf();
    t.clone().args(["build"]).run().status(0);
    std::fs::write(root.join("out/NOTES.md"), "the user's own file").unwrap();
    let inode = |path: &str| std::fs::symlink_metadata(root.join(path)).unwrap().ino();
    let kept = ["out", "out/dev", "out/dev/kustomization.yaml", "out/NOTES.md"].map(|p| (p, inode(p)));
    let full = read_tree(&root.join("out"));
    std::fs::write(root.join("out/prod/kustomization.yaml"), "edited by hand").unwrap();
    assert!(std::process::Command::new("mkfifo").arg(root.join("out/dev/pipe")).status().unwrap().success());
    t.clone().args(["build", "--cluster", "prod"]).run().status(0);
    for (path, before) in kept {
        assert_eq!(inode(path), before, "{path} is left in place");
    }
    std::fs::remove_file(root.join("out/dev/pipe")).unwrap();
    assert_eq!(read_tree(&root.join("out")), full, "the hand-edited file is written again");
    let leftovers: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("kix-") && !kept_beside_out(&n.to_string_lossy()))
        .collect();
    assert!(leftovers.is_empty(), "staging directories left behind: {leftovers:?}");
    // A build of a cluster out/ has no directory for yet moves it in.
    std::fs::remove_dir_all(root.join("out/prod")).unwrap();
    t.clone().args(["build", "--cluster", "prod"]).run().status(0);
    assert_eq!(read_tree(&root.join("out")), full);
}

#[test]
fn check_writes_nothing_and_out_flag_is_honoured() {
    let t = Test::new().examples();
    let root = t.root().to_path_buf();
    let run = t.clone().args(["check"]).run().status(0);
    assert_eq!(run.stderr, "kix: 0 errors, 0 warnings (5 acknowledged)\n", "the examples acknowledge their warnings");
    assert!(!root.join("out").exists());
    t.clone().args(["build", "--out", "elsewhere/manifests"]).run().status(0);
    assert!(root.join("elsewhere/manifests/prod/shop.yaml").is_file());
}

/// The shipped examples without their `allow = [...]` acknowledgements: four warnings again.
fn examples_unacknowledged() -> Test {
    let t = Test::new().examples();
    for cluster in ["clusters/edge.toml", "clusters/prod.toml", "clusters/staging.toml"] {
        let path = t.root().join(cluster);
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.starts_with("allow = ") && !l.starts_with("# Acknowledged:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, kept).unwrap();
    }
    t
}

#[test]
fn deny_warnings_fails_and_writes_nothing() {
    let run =
        examples_unacknowledged().args(["build", "--deny-warnings"]).run().status(1).stderr_contains("error[K0502]");
    assert!(!run.root().join("out").exists());
    // Acknowledged warnings are not denied.
    Test::new().examples().args(["build", "--deny-warnings"]).run().status(0);
}

#[test]
fn acknowledged_warnings_are_counted_not_printed_and_only_for_their_instance() {
    let t = examples_unacknowledged();
    t.clone().args(["check"]).run().status(0).stderr_ends_with("kix: 0 errors, 5 warnings\n");
    // prod's `operator` acknowledges K0308; staging's does not: only staging's warning is printed.
    let prod = t.root().join("clusters/prod.toml");
    let text = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(
        &prod,
        text.replace("namespace = \"operator-system\"\n", "namespace = \"operator-system\"\nallow = [\"K0308\"]\n"),
    )
    .unwrap();
    let run =
        t.clone().args(["check"]).run().status(0).stderr_ends_with("kix: 0 errors, 4 warnings (1 acknowledged)\n");
    assert!(
        run.stderr.contains("cluster `staging` instance `operator`: package `operator` caps 1 workload"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("cluster `prod` instance `operator`"), "{}", run.stderr);
    // An error cannot be acknowledged, and an unknown code is refused.
    std::fs::write(
        &prod,
        text.replace(
            "namespace = \"operator-system\"\n",
            "namespace = \"operator-system\"\nallow = [\"K0302\", \"K9999\"]\n",
        ),
    )
    .unwrap();
    t.args(["check"])
        .run()
        .status(1)
        .stderr_contains("error[K0207]: allow: `K0302` is an error")
        .stderr_contains("error[K0207]: allow: `K9999` is not a diagnostic code");
}

#[test]
fn json_diagnostics_carry_code_location_and_subject() {
    let run = examples_unacknowledged().args(["check", "--format", "json"]).run().status(0);
    let lines = run.diagnostics();
    assert_eq!(lines.len(), 5);
    let ceiling = lines.iter().find(|d| d["code"] == "K0307").unwrap();
    assert_eq!(ceiling["severity"], "warning");
    // At the ceiling in the package's kix.toml (issue 42: one cause however many instances it lowers).
    assert_eq!(ceiling["file"], "packages/cache/kix.toml");
    assert_eq!(ceiling["line"], 7);
    assert_eq!(ceiling["column"], 7);
    assert_eq!(ceiling["cluster"], "prod");
    assert_eq!(ceiling["instance"], "sessions");
    assert_eq!(ceiling["package"], "cache");
}

/// A duplicate package version points at both definitions: the second is where the diagnostic is, the
/// first a secondary label, in the JSON as in the text (`labels`, only when there are some).
#[test]
fn json_diagnostics_carry_secondary_labels() {
    let run = Test::new().fixture("tests/bad/r13-duplicate-name-and-version").args(["check", "--format", "json"]).run();
    let run = run.status(1);
    let lines = run.diagnostics();
    let duplicate = lines.iter().find(|d| d["code"] == "K0306").unwrap();
    assert_eq!(
        (&duplicate["file"], &duplicate["line"], &duplicate["column"]),
        (&"packages/web-copy/kix.toml".into(), &3.into(), &11.into())
    );
    let first =
        serde_json::json!({"column": 11, "file": "packages/web/kix.toml", "label": "first defined here", "line": 3});
    assert_eq!(duplicate["labels"], serde_json::json!([first]));
    assert!(lines.iter().filter(|d| d["code"] != "K0306").all(|d| d.get("labels").is_none()));
}

#[test]
fn usage_errors_exit_2() {
    let t = Test::new().examples();
    t.clone().args(["build", "--no-such-flag"]).run().status(2);
    t.clone().args(["explain", "K9999"]).run().status(2);
    t.args(["explain", "K0403"]).run().status(0).stdout_contains("one replica cannot survive losing a pod");
}

/// The README's code table, `kix explain` and the code enum say the same: every code, once, in order, with
/// its severity and summary, and each code's own explanation names its summary.
#[test]
fn readme_code_table_matches_explain() {
    let readme = std::fs::read_to_string(repo_path("README.md")).unwrap();
    let cell = |text: &str| text.trim().to_string();
    let table: Vec<[String; 3]> = readme
        .lines()
        .filter(|line| line.starts_with("| K"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
            [cell(cells[0]), cell(cells[1]), cell(cells[2])]
        })
        .collect();
    let listed = Test::in_repo().args(["explain"]).run().status(0);
    let explained: Vec<[String; 3]> = listed
        .stdout
        .lines()
        .map(|line| {
            let (code, rest) = line.split_once("  ").unwrap();
            let (severity, summary) = rest.trim_start().split_once(' ').unwrap();
            [cell(code), cell(severity), cell(summary)]
        })
        .collect();
    assert_eq!(table, explained, "README.md's code table and `kix explain` differ");
    let mut ids: Vec<&str> = explained.iter().map(|[code, _, _]| code.as_str()).collect();
    ids.dedup();
    assert_eq!(ids.len(), explained.len(), "a code is listed twice");
    for [code, severity, summary] in &explained {
        let one = Test::in_repo().args(["explain", code]).run().status(0);
        assert!(one.stdout.starts_with(&format!("{code} ({severity}): {summary}\n\n")), "{}", one.stdout);
    }
}

#[test]
fn leftovers_of_a_killed_run_are_cleaned_up_and_never_read() {
    // What a kix killed mid-build (pid 999999 is not running) leaves beside out/.
    let run = Test::new()
        .examples()
        .tree([(".kix/.out.kix-staging-999999/prod/shop.yaml", "half written")])
        .args(["build"])
        .run()
        .status(0);
    assert!(!run.root().join(".kix/.out.kix-staging-999999").exists());
    assert!(std::fs::read_to_string(run.root().join("out/prod/shop.yaml")).unwrap().starts_with("# Generated by kix"));
}

#[test]
fn out_may_not_overwrite_the_inputs() {
    let t = Test::new().examples();
    let before = read_tree(t.root());
    for out in ["packages", "packages/web", "clusters", ".", "..", "./clusters/../packages"] {
        t.clone().args(["build", "--out", out]).run().status(1).stderr_contains("would overwrite kix's own inputs");
        assert_eq!(read_tree(t.root()), before, "--out {out} changed the tree");
    }
}

#[test]
fn a_full_build_drops_directories_of_removed_clusters_and_keeps_other_files() {
    let t = Test::new().examples();
    let root = t.root().to_path_buf();
    t.clone().args(["build"]).run().status(0);
    std::fs::write(root.join("out/README.md"), "kept").unwrap();
    std::fs::remove_file(root.join("clusters/edge.toml")).unwrap();
    // A selective build leaves other clusters' directories alone, even stale ones.
    t.clone().args(["build", "--cluster", "prod"]).run().status(0);
    assert!(root.join("out/edge/shop.yaml").exists());
    // A full build removes what kix generated for a cluster that no longer exists.
    t.clone().args(["build"]).run().status(0);
    assert!(!root.join("out/edge").exists(), "stale cluster output lingers");
    assert_eq!(std::fs::read_to_string(root.join("out/README.md")).unwrap(), "kept");
    assert!(root.join("out/dev/kustomization.yaml").exists());
}

#[test]
fn completions_cover_subcommands_and_the_names_on_disk() {
    // Every shell gets a script that registers kix and calls back into it.
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = Test::in_repo().args(["completions", shell]).run().status(0);
        assert!(run.stdout.contains("COMPLETE") && run.stdout.contains("kix"), "{shell}: {}", run.stdout);
    }
    Test::in_repo().args(["completions", "tcsh"]).run().status(2);
    // What the shell gets back while completing (bash's protocol): `kix <word>` at index 1, and so on.
    let complete = |words: &[&str]| {
        let mut args = vec!["--", "kix"];
        args.extend_from_slice(words);
        Test::new()
            .examples()
            .in_subdirectory("packages")
            .env("COMPLETE", "bash")
            .env("_CLAP_COMPLETE_INDEX", words.len().to_string())
            .args(args)
            .run()
            .status(0)
            .stdout
    };
    let subcommands = complete(&[""]);
    for command in ["build", "check", "verify", "schedule", "simulate", "explain", "completions"] {
        assert!(subcommands.lines().any(|l| l == command), "no {command} in {subcommands}");
    }
    assert_eq!(complete(&["build", "--cluster", "s"]), "staging");
    assert_eq!(complete(&["build", "--cluster", ""]), "dev\nedge\nprod\nstaging");
    assert_eq!(complete(&["explain", "--cluster", "prod", "--instance", "o"]), "operator\norders-db");
}

#[test]
fn kix_finds_its_root_upward_and_says_how_to_point_at_one() {
    // Inside a package directory, kix builds the tree above it (as cargo finds Cargo.toml).
    let inside = Test::new().examples().in_subdirectory("packages/web");
    let run = inside.args(["check"]).run().status(0);
    assert_eq!(run.stderr, "kix: 0 errors, 0 warnings (5 acknowledged)\n");
    // Outside any kix root: one error that says what to do.
    Test::new()
        .args(["check"])
        .run()
        .status(1)
        .stderr_contains("error[K0106]: no clusters/ directory: this is not a kix root")
        .stderr_contains("pass --root DIR");
}

#[test]
fn build_check_lists_what_a_build_would_change_and_writes_nothing() {
    let t = Test::new().examples();
    let root = t.root().to_path_buf();
    // Nothing built yet: every file is missing, nothing is written.
    let run = t.clone().args(["build", "--check"]).run().status(1);
    // issue 21: the summary line says why the status is 1.
    let run = run.stdout_contains("missing  ./out/prod/shop.yaml").stdout_contains("24 files differ");
    run.stderr_ends_with("kix: 0 errors, 0 warnings (5 acknowledged), 24 files out of date\n");
    assert!(!root.join("out").exists());
    // Right after a build: clean.
    t.clone().args(["build"]).run().status(0);
    t.clone().args(["build", "--check"]).run().status(0).stdout("");
    // One file out of date is said in the singular (issue 41).
    std::fs::write(root.join("out/prod/stray.txt"), "mine").unwrap();
    t.clone().args(["build", "--check"]).run().status(1).stdout_contains("kix: 1 file differs from what");
    std::fs::remove_file(root.join("out/prod/stray.txt")).unwrap();
    // A hand edit, a stray file and a removed cluster's directory are each reported; --diff shows the edit.
    let edited = root.join("out/prod/orders-db.yaml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("replicas: 3", "replicas: 4")).unwrap();
    std::fs::write(root.join("out/prod/notes.txt"), "mine").unwrap();
    std::fs::remove_file(root.join("clusters/dev.toml")).unwrap();
    let before = read_tree(&root.join("out"));
    let run = t.clone().args(["build", "--check", "--diff"]).run().status(1);
    run.stdout_contains(
        "changed  ./out/prod/orders-db.yaml\n--- a/out/prod/orders-db.yaml\n+++ b/out/prod/orders-db.yaml\n",
    )
    .stdout_contains("-  replicas: 4\n+  replicas: 3\n")
    .stdout_contains("extra    ./out/prod/notes.txt (a build removes it)")
    .stdout_contains("extra    ./out/dev (a build removes it)")
    .stdout_contains("kix: 3 files differ");
    assert_eq!(read_tree(&root.join("out")), before, "--check wrote something");
    // Without --diff, no diff; --diff needs --check; --check and --stdout exclude each other.
    let run = t.clone().args(["build", "--check"]).run().status(1);
    assert!(!run.stdout.contains("+++"), "{}", run.stdout);
    t.clone().args(["build", "--diff"]).run().status(2);
    t.args(["build", "--check", "--stdout"]).run().status(2);
}

#[test]
fn a_build_prints_a_summary_table_unless_quiet() {
    let t = Test::new().examples();
    t.clone().args(["build"]).run().status(0).stdout_golden(format!("{EXAMPLES}/expected/summary.txt"));
    t.clone().args(["build", "--quiet"]).run().status(0).stdout("");
    let json = t.args(["build", "--format", "json"]).run().status(0).json();
    let prod = json["clusters"].as_array().unwrap().iter().find(|c| c["cluster"] == "prod").unwrap();
    let sessions = prod["instances"].as_array().unwrap().iter().find(|i| i["instance"] == "sessions").unwrap();
    assert_eq!((sessions["requested"].as_str(), sessions["level"].as_str()), (Some("zone"), Some("node")));
    assert_eq!(sessions["workloads"][0]["replicas"], 2);
    assert_eq!(sessions["workloads"][0]["pdb"], true);
    assert_eq!(sessions["workloads"][0]["hard"], "kubernetes.io/hostname");
}

#[test]
fn the_man_page_comes_from_the_same_definitions() {
    let run = Test::in_repo().args(["man"]).run().status(0);
    assert!(run.stdout.contains(".TH kix 1"), "{}", &run.stdout[..200]);
    for command in ["build", "check", "verify", "schedule", "simulate", "explain", "completions"] {
        assert!(run.stdout.contains(&format!("kix\\-{command}(1)")), "the man page lacks kix-{command}(1)");
    }
    let page = Test::in_repo().args(["man", "init", "cluster"]).run().status(0).stdout;
    assert!(page.contains(".TH kix\\-init\\-cluster 1") || page.contains(".TH kix-init-cluster 1"), "{page}");
    Test::in_repo().args(["man", "nope"]).run().status(2).stderr_contains("no command `nope`");
}

/// Issue 24: a page per command, each with EXIT STATUS, ENVIRONMENT and EXAMPLES, every page another
/// names exists, and `man -l` and groff render each without a warning. `.ci/run` installs man-db and
/// groff-base and sets `KIX_REQUIRE_MAN=1`, so CI never skips the rendering.
#[test]
fn man_pages_per_command_render_without_warnings() {
    let t = Test::new();
    t.clone().args(["man", "--out", "man1"]).run().status(0).stderr_contains("kix: wrote 17 man pages to man1");
    let dir = t.root().join("man1");
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert!(names.contains(&"kix.1".to_string()) && names.contains(&"kix-init-package.1".to_string()), "{names:?}");
    let mut references = 0;
    for name in &names {
        let page = std::fs::read_to_string(dir.join(name)).unwrap();
        for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH EXAMPLES"] {
            assert!(page.contains(section), "{name} lacks {section}");
        }
        // Every page referenced (`kix-build(1)`, roff-escaped) is one of the pages written.
        for (at, _) in page.match_indices("(1)") {
            let start = page[..at].rfind(|c: char| c.is_whitespace() || c == 'B').map_or(0, |i| i + 1);
            let reference = page[start..at].replace("\\-", "-").replace("\\fR", "");
            if reference.starts_with("kix") {
                references += 1;
                assert!(
                    names.contains(&format!("{reference}.1")),
                    "{name} refers to {reference}(1), which is not written"
                );
            }
        }
    }
    assert!(references >= 30, "{references} references found: the check reads nothing");
    let installed =
        |tool: &str| std::process::Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !installed("groff") || !installed("man") {
        if std::env::var_os("KIX_REQUIRE_MAN").is_some_and(|v| v == "1") {
            panic!("man and groff are required (KIX_REQUIRE_MAN=1) but not installed");
        }
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED man_pages_per_command_render_without_warnings (rendering): man or groff is not installed \
             (apt-get install man-db groff-base)"
        );
        return;
    }
    for name in &names {
        let path = dir.join(name);
        let groff = std::process::Command::new("groff").args(["-man", "-ww", "-z"]).arg(&path).output().unwrap();
        assert!(
            groff.status.success() && groff.stderr.is_empty(),
            "groff on {name}: {}",
            String::from_utf8_lossy(&groff.stderr)
        );
        let man = std::process::Command::new("man")
            .args(["--warnings", "-l"])
            .arg(&path)
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        assert!(
            man.status.success() && man.stderr.is_empty(),
            "man -l {name}: {}",
            String::from_utf8_lossy(&man.stderr)
        );
        let text = String::from_utf8_lossy(&man.stdout);
        assert!(text.contains("EXIT STATUS") && text.contains("EXAMPLES"), "{name} rendered:\n{text}");
    }
}

#[test]
fn stdout_prints_shared_objects_once_then_instances_in_kustomization_order() {
    let t = Test::new().fixture("tests/fixtures/namespaces-shared");
    let out = t.clone().args(["build"]).run().status(0).root().join("out/prod");
    let kustomization = std::fs::read_to_string(out.join("kustomization.yaml")).unwrap();
    let files: Vec<&str> = kustomization.lines().filter_map(|l| l.strip_prefix("- ")).collect();
    assert_eq!(files[0], "_shared.yaml", "{kustomization}");
    let expected: String = files.iter().map(|f| std::fs::read_to_string(out.join(f)).unwrap()).collect();
    let stream = t.args(["build", "--stdout"]).run().status(0);
    assert_eq!(stream.stdout, expected);
    assert_eq!(stream.stdout.matches("name: prometheusrules.monitoring.coreos.com").count(), 1);
    assert_eq!(stream.stdout.matches("\n  name: metrics\n").count(), 1, "the shared Namespace once");
    // The build's summary names each shared object and the instances that emit it.
    Test::new().fixture("tests/fixtures/namespaces-shared").args(["build"]).run().status(0).stdout_contains(
        "  shared (_shared.yaml): CustomResourceDefinition prometheusrules.monitoring.coreos.com (instances grafana, \
         grafana-dev)\n",
    );
}

#[test]
fn yaml_in_a_subdirectory_without_resources_is_warned_about_not_dropped_silently() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n";
    let crd_dir = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n";
    let t = Test::new().tree([
        ("clusters/c.toml", "availability = \"none\"\n[[instances]]\nname = \"app\"\npackage = \"p\"\n"),
        ("packages/p/kix.toml", "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n"),
        ("packages/p/cm.yaml", cm),
        ("packages/p/crds/extra.yaml", crd_dir),
        ("packages/p/.git/ignored.yaml", cm),
    ]);
    t.clone()
        .args(["check"])
        .run()
        .status(0)
        .stderr_contains("warning[K0113]: crds/ holds 1 YAML file that kix does not read")
        .stderr_contains("resources = [\"*.yaml\", \"crds/**/*.yaml\"]");
    std::fs::write(
        t.root().join("packages/p/kix.toml"),
        "resources = [\"*.yaml\", \"crds/*.yaml\"]\n[meta]\nname = \"p\"\nversion = \"1.0.0\"\n",
    )
    .unwrap();
    let run = t.args(["check"]).run().status(0);
    assert!(!run.stderr.contains("K0113"), "{}", run.stderr);
}

#[test]
fn a_kept_namespace_nothing_creates_is_a_warning_until_an_instance_creates_it() {
    let adapter = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: adapter-config\n  namespace: monitoring\n";
    let cluster = "availability = \"none\"\n[[instances]]\nname = \"adapter\"\npackage = \"p\"\n";
    let t = Test::new().tree([
        ("clusters/c.toml", cluster),
        (
            "packages/p/kix.toml",
            "[meta]\nname = \"p\"\nversion = \"1.0.0\"\nkeepNamespaces = [\"monitoring\", \"kube-system\"]\n",
        ),
        ("packages/p/cm.yaml", adapter),
        ("packages/q/kix.toml", "[meta]\nname = \"q\"\nversion = \"1.0.0\"\n"),
        ("packages/q/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: q\n"),
    ]);
    t.clone()
        .args(["check"])
        .run()
        .status(0)
        .stderr_contains("warning[K0421]: instance `adapter` keeps objects in namespace `monitoring`, which nothing in cluster `c` creates");
    // An instance living in `monitoring` that creates its namespace settles it; kube-system never needs one.
    let creating = format!("{cluster}[[instances]]\nname = \"monitoring\"\npackage = \"q\"\ncreateNamespace = true\n");
    std::fs::write(t.root().join("clusters/c.toml"), creating).unwrap();
    let run = t.args(["check"]).run().status(0);
    assert!(!run.stderr.contains("K0421"), "{}", run.stderr);
}

/// YAML read as kubectl reads it (issue 19, part 3), through the real binary: an integer key in a
/// ConfigMap's `data` is the string key kubectl sends (the ingress-nginx tcp-services idiom, which
/// was K0442), an octal `defaultMode` is its value (0644 is 420), and a quoted `'on'` stays a string
/// (merge keys, quoted `'<<'` included, are covered by crates/yaml's conformance table).
#[test]
fn yaml_is_read_as_kubectl_reads_it() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tcp-services\ndata:\n  5432: \"db/postgres:5432\"\n  flag: 'on'\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x\n  volumes:\n  - name: v\n    configMap:\n      name: tcp-services\n      defaultMode: 0644\n";
    let t = Test::new().tree([
        ("clusters/c.toml", "availability = \"none\"\n[[instances]]\nname = \"app\"\npackage = \"p\"\n"),
        ("packages/p/kix.toml", "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n"),
        ("packages/p/cm.yaml", cm),
        ("packages/p/pod.yaml", pod),
    ]);
    t.clone().args(["build"]).run().status(0);
    let out = std::fs::read_to_string(t.root().join("out/c/app.yaml")).unwrap();
    assert!(out.contains("  '5432': db/postgres:5432\n"), "{out}");
    assert!(out.contains("  flag: 'on'\n"), "{out}");
    assert!(out.contains("      defaultMode: 420\n"), "{out}");
    // A null key cannot be a JSON key: kubectl refuses it, and so does kix, at its line.
    std::fs::write(t.root().join("packages/p/cm.yaml"), format!("{cm}  ~: x\n")).unwrap();
    t.args(["build"]).run().status(1).stderr_contains("packages/p/cm.yaml:8:3");
}

/// The labels of each object of a YAML stream, in stream order.
fn labels_of(stream: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    kix_yaml::from_str_all(stream)
        .unwrap()
        .iter()
        .map(|d| serde_json::to_value(d).unwrap())
        .filter(serde_json::Value::is_object)
        .map(|o| o["metadata"]["labels"].as_object().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn instance_label_leave_writes_no_app_instance_label_and_keeps_kix_instance() {
    let default = Test::new().examples().args(["build", "--quiet"]);
    default.run().status(0);
    // Argo CD tracks prod by label: kix leaves app.kubernetes.io/instance alone there, and only there.
    let leave = Test::new().examples().args(["build", "--quiet"]);
    let prod = leave.root().join("clusters/prod.toml");
    let text = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(
        &prod,
        text.replace("availability = \"zone\"\n", "availability = \"zone\"\ninstanceLabel = \"leave\"\n"),
    )
    .unwrap();
    leave.run().status(0);
    let built = |t: &Test, cluster: &str| read_tree(&t.root().join("out").join(cluster));
    assert_eq!(
        built(&leave, "staging"),
        built(&default, "staging"),
        "other clusters of the same compile are unchanged"
    );

    let stream = |t: &Test| t.clone().args(["build", "--stdout", "--cluster", "prod"]).run().status(0).stdout;
    let (added, left) = (labels_of(&stream(&default)), labels_of(&stream(&leave)));
    assert_eq!(added.len(), left.len());
    let mut dropped = 0;
    for (added, left) in added.iter().zip(&left) {
        // kix.dev/instance stays on every object kix labels for an instance (shared objects carry none).
        assert_eq!(added.get("kix.dev/instance"), left.get("kix.dev/instance"));
        if added == left {
            // The package wrote app.kubernetes.io/instance itself (kept as written), or the object has no labels.
            continue;
        }
        let mut expected = added.clone();
        let value = expected.remove("app.kubernetes.io/instance").expect("only the instance label differs");
        assert_eq!(&expected, left, "only app.kubernetes.io/instance is left out");
        assert_eq!(Some(&value), added.get("kix.dev/instance"), "it was kix's, with the instance's name");
        dropped += 1;
    }
    assert!(dropped > 10, "prod's objects lost kix's app.kubernetes.io/instance ({dropped})");
}

/// `git` in `dir` with an identity of its own (commits work on a fresh machine).
fn git(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(["-c", "user.name=kix test", "-c", "user.email=test@kix.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git")
}

#[test]
fn check_diff_is_a_patch_git_apply_accepts_from_the_root_and_below_it() {
    let t = Test::new().examples().args(["build", "--quiet"]);
    t.run().status(0);
    let root = t.root().to_path_buf();
    assert!(git(&root, &["init", "--quiet"]).status.success());
    assert!(git(&root, &["add", "."]).status.success());
    assert!(git(&root, &["commit", "--quiet", "-m", "built"]).status.success());
    // Two changes: an input (web at zone runs 4 replicas) and an output edited by hand.
    let kix_toml = root.join("packages/web/kix.toml");
    let text = std::fs::read_to_string(&kix_toml).unwrap();
    std::fs::write(&kix_toml, text.replace("zone = 3 }", "zone = 4 }")).unwrap();
    let shop = root.join("out/prod/shop.yaml");
    let mut edited = std::fs::read_to_string(&shop).unwrap();
    edited.push_str("# edited by hand\n");
    std::fs::write(&shop, edited).unwrap();

    let diff = t.clone().args(["build", "--check", "--diff"]).run().status(1).stdout;
    assert!(diff.contains("--- a/out/prod/shop.yaml\n+++ b/out/prod/shop.yaml\n"), "{diff}");
    assert!(diff.contains("-  replicas: 3\n+  replicas: 4\n") && diff.contains("-# edited by hand\n"), "{diff}");
    // The same patch from a directory below the root (kix finds the root upward).
    let below = t.clone().in_subdirectory("packages").args(["build", "--check", "--diff"]).run().status(1).stdout;
    let hunks = |d: &str| d.lines().filter(|l| !l.starts_with("changed ")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(hunks(&below), hunks(&diff));

    std::fs::write(root.join("../check.diff"), &diff).unwrap();
    let check = git(&root, &["apply", "--check", "../check.diff"]);
    assert!(check.status.success(), "git apply --check: {}", String::from_utf8_lossy(&check.stderr));
    assert!(git(&root, &["apply", "../check.diff"]).status.success());
    t.clone().args(["build", "--check"]).run().status(0);
}

/// Issue 24: the build summary fits `COLUMNS` (the WORKLOADS cell of microservices-demo alone ran to 310
/// characters), and a pipe without `COLUMNS` keeps one line per instance.
#[test]
fn the_build_summary_fits_the_width() {
    let t = Test::new();
    for dir in ["clusters", "packages"] {
        crate::support::copy_tree(&repo_path("tests/realworld").join(dir), &t.root().join(dir));
    }
    let longest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let piped = t.clone().args(["build"]).run().status(0).stdout;
    assert!(longest(&piped) > 300, "{piped}");
    for columns in [100, 120, 160] {
        let fitted = t.clone().args(["build"]).env("COLUMNS", columns.to_string()).run().status(0).stdout;
        assert!(longest(&fitted) <= columns, "COLUMNS={columns}:\n{fitted}");
        // Nothing lost: the same workloads, in the same order.
        let items = |text: &str| text.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(items(&fitted), items(&piped), "COLUMNS={columns}");
    }
}
