//! Daily use without traps (issue 41): what a new user meets adopting kix, each case as they would run it.

use crate::support::{Output, Test};

/// Issue 41: `build --check` in a machine format reports each stale, missing and extra file as a
/// diagnostic at the file, so a CI annotation or a SARIF result points at the cause.
#[test]
fn build_check_annotates_each_stale_file_in_machine_formats() {
    let t = Test::new().examples();
    t.clone().args(["build"]).run().status(0);
    let out = t.root().join("out");
    std::fs::write(out.join("prod/shop.yaml"), "# edited by hand\n").unwrap();
    std::fs::remove_file(out.join("dev/kustomization.yaml")).unwrap();
    std::fs::write(out.join("prod/stale.yaml"), "kind: ConfigMap\n").unwrap();
    let github = t.clone().args(["build", "--check", "--format", "github"]).run().status(1);
    let annotations: Vec<&str> = github.stdout.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(annotations.len(), 3, "{}", github.stdout);
    for (file, says) in [
        ("out/dev/kustomization.yaml", "is missing"),
        ("out/prod/shop.yaml", "differs from what `kix build` would write"),
        ("out/prod/stale.yaml", "a build removes it"),
    ] {
        assert!(
            annotations.iter().any(|a| a.contains(&format!("file={file},")) && a.contains("K0504") && a.contains(says)),
            "no annotation at {file}: {}",
            github.stdout
        );
    }
    let sarif = t.clone().args(["build", "--check", "--format", "sarif"]).run().status(1).json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let stale: Vec<&str> = results
        .iter()
        .filter(|r| r["ruleId"] == "K0504")
        .map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap())
        .collect();
    assert_eq!(stale, ["out/dev/kustomization.yaml", "out/prod/shop.yaml", "out/prod/stale.yaml"], "{sarif}");
    // The text form lists each once, on stdout, and nothing was written.
    let text = t.clone().args(["build", "--check"]).run().status(1);
    assert!(!text.stderr.contains("K0504"), "{}", text.stderr);
    assert_eq!(std::fs::read_to_string(out.join("prod/shop.yaml")).unwrap(), "# edited by hand\n");
}

/// Issue 41, point 7: an instance naming a directory that has manifests but no kix.toml is told how to
/// make it a package.
#[test]
fn a_package_directory_without_kix_toml_suggests_init_package() {
    let run = Test::new()
        .tree([
            (
                "clusters/c.toml",
                "availability = \"none\"\n[[instances]]\nname = \"guestbook\"\npackage = \"guestbook\"\n",
            ),
            ("packages/guestbook/web.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"),
        ])
        .args(["check"])
        .run()
        .status(1);
    run.stderr_contains("warning[K0107]: directory under packages/ has no kix.toml; skipped")
        .stderr_contains("error[K0304]: package `guestbook` does not exist")
        .stderr_contains("help: packages/guestbook/ has no kix.toml: `kix init package packages/guestbook` writes one");
}

/// Issue 41, point 9: every message a user can meet is a kix sentence, not a serde or Rust type name. The
/// bad-input corpus, the fixtures' and the real-world corpus's goldens are every message kix is known to print.
#[test]
fn no_golden_message_names_a_rust_type_or_a_serde_variant() {
    let mut files = Vec::new();
    for dir in ["tests/bad", "tests/fixtures", "tests/lint", "tests/realworld/expected", "crates/sim/tests/corpus"] {
        collect(&crate::support::repo_path(dir), &mut files);
    }
    assert!(files.len() > 200, "too few goldens read: {}", files.len());
    let mut offending = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        for line in text.lines() {
            let message = line.trim_start();
            let is_message = message.starts_with("error[")
                || message.starts_with("warning[")
                || message.starts_with("note[")
                || message.starts_with("= help:")
                || message.starts_with("= note:");
            let words = ["variant", "u32", "u64", "usize", "i64", "expected a "];
            if is_message
                && words
                    .iter()
                    .any(|w| message.split(|c: char| !c.is_alphanumeric() && c != ' ').any(|part| part.contains(w)))
            {
                offending.push(format!("{}: {message}", file.display()));
            }
        }
    }
    assert!(offending.is_empty(), "messages in Rust's or serde's words:\n{}", offending.join("\n"));
}

fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "stderr" || e == "stdout" || e == "txt") {
            out.push(path);
        }
    }
}

/// Issue 41, point 5: kix's own state (the output manifest, the spare, the lock) lives in `.kix/`, which
/// kix gives a `.gitignore` of `*`, so `git add -A` in a repository that commits `out/` takes only the
/// user's files and `out/`; an earlier kix's state beside `out/` is removed.
#[test]
fn git_add_all_after_two_builds_takes_no_state_of_kixs() {
    let t = Test::new().examples();
    let root = t.root().to_path_buf();
    std::fs::write(root.join(".out.kix-manifest"), "an earlier kix's manifest").unwrap();
    std::fs::create_dir_all(root.join(".out.kix-spare/prod")).unwrap();
    t.clone().args(["build", "-q"]).run().status(0);
    // A stray file in out/, so the second build stages and swaps, and leaves a spare (a rebuild of unchanged
    // inputs over an unchanged out/ leaves everything in place).
    std::fs::write(root.join("out/prod/zz-stray.yaml"), "kind: Stray\n").unwrap();
    t.clone().args(["build", "-q"]).run().status(0);
    assert!(!root.join("out/prod/zz-stray.yaml").exists(), "the second build did not stage");
    assert!(root.join(".kix/.out.kix-manifest").is_file() && root.join(".kix/.out.kix-spare").is_dir());
    assert!(!root.join(".out.kix-manifest").exists() && !root.join(".out.kix-spare").exists());
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git").args(args).current_dir(&root).output().expect("git");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    git(&["init", "--quiet"]);
    git(&["add", "-A"]);
    let staged = git(&["diff", "--cached", "--name-only"]);
    assert!(staged.lines().any(|l| l == "out/prod/shop.yaml"), "{staged}");
    let foreign: Vec<&str> = staged
        .lines()
        .filter(|l| {
            !(l.starts_with("out/")
                || l.starts_with("clusters/")
                || l.starts_with("packages/")
                || l.starts_with("schemas/"))
        })
        .collect();
    assert!(foreign.is_empty(), "git add -A took kix's state: {foreign:?}");
}

/// Issue 41, point 9: a cluster named that has no file (Argo CD's `KIX_CLUSTER` misspelt) lists the
/// clusters there are.
#[test]
fn an_unknown_cluster_lists_the_clusters_there_are() {
    Test::new()
        .examples()
        .args(["build", "--stdout", "--cluster", "prdo"])
        .run()
        .status(1)
        .stderr_contains("error[K0106]: no cluster file clusters/prdo.toml")
        .stderr_contains("help: the clusters there are: dev, edge, prod, staging");
}

/// Issue 41, point 9: SARIF from `kix lint -` locates its results at the standard input, not at a file
/// whose name is `%3Cstdin%3E`.
#[test]
fn sarif_of_stdin_says_standard_input() {
    let manifest =
        std::fs::read_to_string(crate::support::repo_path("tests/lint/k0711-pdb-min-available-blocks/manifests.yaml"))
            .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kix"))
        .args(["lint", "--format", "sarif", "-"])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(manifest.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let log: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for result in results {
        let artifact = &result["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(artifact["uri"], "stdin", "{result}");
        assert_eq!(artifact["description"]["text"], "the standard input (kix lint -)");
    }
    assert!(!stdout.contains("%3C"), "{stdout}");
}

/// Issue 41, point 9: in a terminal, verify shows each finding once (the located diagnostic on stderr;
/// the report counts them); redirected, stdout holds the complete report as before. The terminal is a
/// pseudo-terminal from util-linux's `script`, which Debian always has (package bsdutils).
#[test]
fn verify_in_a_terminal_shows_each_finding_once() {
    let t = api_on_three_one_cpu_nodes();
    // Redirected: the report lists every finding, and stderr has each located.
    let piped = t.clone().args(["verify"]).run().status(1);
    let listed =
        piped.stdout.lines().filter(|l| l.starts_with("  c/i1 Deployment/api: ") && l.contains(": [K06")).count();
    assert!(listed >= 3, "{}", piped.stdout);
    let located = piped.stderr.matches("error[K0614]").count();
    assert!(located >= 3, "{}", piped.stderr);
    // In a terminal: the findings once, below the report.
    let kix = env!("CARGO_BIN_EXE_kix");
    let output = std::process::Command::new("script")
        .args(["-qec", &format!("{kix} verify"), "/dev/null"])
        .current_dir(t.root())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .output()
        .expect("util-linux script");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(screen.contains(&format!("{} findings: shown below, each where it comes from", listed)), "{screen}");
    assert_eq!(screen.lines().filter(|l| l.starts_with("  c/i1 Deployment/api: ")).count(), 0, "{screen}");
    assert_eq!(screen.matches("error[K0614]").count(), located, "{screen}");
    assert!(screen.contains("1 does not meet its level (see the findings below)"), "{screen}");
}

/// Issue 41, point 1: `staging/web.yaml` and `prod/web.yaml` each hold Deployment `web` and its budget
/// in namespace `web`: two environments, each linted on its own, so the tree reports only what each file
/// has alone; the same object twice in one environment is its own finding (K0725).
#[test]
fn lint_judges_each_environment_on_its_own() {
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: web\nspec:\n  replicas: 3\n  \
        selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      \
        topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: kubernetes.io/hostname\n        whenUnsatisfiable: DoNotSchedule\n        \
        labelSelector:\n          matchLabels: {app: web}\n        matchLabelKeys: [pod-template-hash]\n      containers:\n      - name: web\n        image: web:1\n\
        ---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  namespace: web\nspec:\n  maxUnavailable: 1\n  \
        unhealthyPodEvictionPolicy: AlwaysAllow\n  selector:\n    matchLabels: {app: web}\n";
    let t = Test::new().tree([("manifests/staging/web.yaml", web), ("manifests/prod/web.yaml", web)]);
    let alone = t.clone().args(["lint", "manifests/staging/web.yaml", "--format", "json"]).run();
    let alone_codes: Vec<String> =
        alone.diagnostics().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
    for args in [
        vec!["lint", "manifests", "--format", "json"],
        vec!["lint", "manifests/staging/web.yaml", "manifests/prod/web.yaml", "--format", "json"],
    ] {
        let run = t.clone().args(args.clone()).run();
        let codes: Vec<String> = run.diagnostics().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
        assert!(!codes.iter().any(|c| c == "K0713" || c == "K0704" || c == "K0725"), "{args:?}: {codes:?}");
        assert_eq!(codes.len(), 2 * alone_codes.len(), "{args:?}: each file's own findings, once each: {codes:?}");
    }
    // One environment holding the object twice (two files of one directory): K0725 at the second copy.
    let twice = Test::new().tree([("manifests/a.yaml", web), ("manifests/b.yaml", web)]);
    let run = twice.args(["lint", "manifests"]).run();
    assert!(run.stderr.contains("warning[K0725]: Deployment web/web is written twice in manifests"), "{}", run.stderr);
    assert!(run.stderr.contains("manifests/b.yaml"), "{}", run.stderr);
}

/// A build that fails leaves the tree as it found it: no `.kix/` of its making, though the clusters that
/// compiled were staged in it before another one failed.
#[test]
fn a_failed_build_makes_no_state_directory() {
    let t = Test::new().examples();
    std::fs::write(
        t.root().join("clusters/zz.toml"),
        "availability = \"none\"\n[[instances]]\nname = \"x\"\npackage = \"missing\"\n",
    )
    .unwrap();
    let run = t.args(["build"]).run().status(1);
    assert!(run.stderr.contains("error[K0304]"), "{}", run.stderr);
    assert!(!run.root().join(".kix").exists() && !run.root().join("out").exists());
}

/// The instances `kix check --format json` warns with K0428, in report order.
fn namespace_not_created(run: &Output) -> Vec<String> {
    let warned = run.diagnostics().into_iter().filter(|d| d["code"] == "K0428");
    warned.map(|d| d["instance"].as_str().unwrap().to_string()).collect()
}

/// The fixture `namespace-not-created` with its cluster file (and any other file) edited by `edits`:
/// `(path, from, to)`, each `from` present.
fn namespace_case(edits: &[(&str, &str, &str)]) -> Test {
    let t = Test::new().fixture("tests/fixtures/namespace-not-created");
    for (path, from, to) in edits {
        let path = t.root().join(path);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{} has no {from:?}", path.display());
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
    t.args(["check", "--format", "json"])
}

/// Issue 41, point 7: an instance whose namespace nothing in its cluster creates is warned (K0428), at
/// its entry in the cluster file, saying why `kubectl apply -k` fails; not an instance with
/// `createNamespace`, one whose package ships its Namespace, one beside instances that create it (the
/// Namespace written once to `_shared.yaml`), one in a system namespace, or one with only cluster-scoped
/// objects. Each of those is then undone, and the warning follows.
#[test]
fn an_instance_namespace_nothing_creates_is_warned() {
    const CLUSTER: &str = "clusters/prod.toml";
    let run = namespace_case(&[]).run().status(0);
    assert_eq!(namespace_not_created(&run), ["shop"]);
    let shop = &run.diagnostics().into_iter().find(|d| d["code"] == "K0428").unwrap();
    assert_eq!(
        (shop["file"].as_str(), shop["line"].as_u64(), shop["severity"].as_str()),
        (Some(CLUSTER), Some(6), Some("warning"))
    );
    assert!(shop["help"].as_str().unwrap().starts_with("set `createNamespace = true` on the instance"), "{shop}");
    let text = Test::new().fixture("tests/fixtures/namespace-not-created").args(["check"]).run().status(0);
    text.stderr_contains(
        "warning[K0428]: cluster `prod` instance `shop`: nothing in the cluster creates namespace `shop`: on a fresh \
         cluster, `kubectl apply -k out/prod` (and Flux's apply) is refused because the namespace does not exist",
    );
    // createNamespace on the instance.
    let created = namespace_case(&[(
        CLUSTER,
        "name = \"shop\"\npackage = \"web\"\n",
        "name = \"shop\"\npackage = \"web\"\ncreateNamespace = true\n",
    )]);
    assert_eq!(namespace_not_created(&created.run().status(0)), Vec::<String>::new());
    // `store` is created by cart and queue only (their one Namespace in _shared.yaml): without them, all
    // three of its instances are warned.
    let built = Test::new().fixture("tests/fixtures/namespace-not-created").args(["build", "-q"]).run().status(0);
    let shared = std::fs::read_to_string(built.root().join("out/prod/_shared.yaml")).unwrap();
    assert!(shared.contains("kind: Namespace\nmetadata:\n  name: store\n"), "{shared}");
    let uncreated = namespace_case(&[
        (CLUSTER, "namespace = \"store\"\ncreateNamespace = true\n", "namespace = \"store\"\n"),
        (CLUSTER, "namespace = \"store\"\ncreateNamespace = true\n", "namespace = \"store\"\n"),
    ]);
    assert_eq!(namespace_not_created(&uncreated.run().status(0)), ["shop", "cart", "queue", "jobs"]);
    // The package's own Namespace, renamed for the instance: without it, invoices is warned.
    let unshipped = namespace_case(&[(
        "packages/billing/billing.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: billing\n---\n",
        "",
    )]);
    assert_eq!(namespace_not_created(&unshipped.run().status(0)), ["shop", "invoices"]);
    // A system namespace needs nothing; any other does.
    let agent = namespace_case(&[(CLUSTER, "namespace = \"kube-system\"", "namespace = \"agents\"")]);
    assert_eq!(namespace_not_created(&agent.run().status(0)), ["shop", "agent"]);
}

/// Issue 41, point 7: K0428 is acknowledged like every warning, by the instance's `allow` (the
/// fixture's `reports`) or the cluster's, and then counted, not printed.
#[test]
fn an_uncreated_namespace_is_acknowledged_by_allow() {
    const CLUSTER: &str = "clusters/prod.toml";
    let acknowledged = |run: &Output| run.json()["summary"]["acknowledged"].as_u64().unwrap();
    let run = namespace_case(&[]).run().status(0);
    assert_eq!((namespace_not_created(&run), acknowledged(&run)), (vec!["shop".to_string()], 1));
    let unallowed = namespace_case(&[(CLUSTER, "allow = [\"K0428\"]\n", "")]).run().status(0);
    assert_eq!(
        (namespace_not_created(&unallowed), acknowledged(&unallowed)),
        (vec!["shop".into(), "reports".into()], 0)
    );
    let cluster = namespace_case(&[
        (CLUSTER, "allow = [\"K0428\"]\n", ""),
        (CLUSTER, "availability = \"none\"\n", "availability = \"none\"\nallow = [\"K0428\"]\n"),
    ]);
    let run = cluster.run().status(0);
    assert_eq!((namespace_not_created(&run), acknowledged(&run)), (Vec::<String>::new(), 2));
    // Denied warnings are the ones left: none here.
    let denied = Test::new().fixture("tests/fixtures/namespace-not-created").args(["check", "--deny-warnings"]).run();
    denied.status(1).stderr_contains("error[K0502]");
}

/// Issue 41, point 9: one order for every report, errors first, then warnings, each by file and line.
/// The warning here (K0428, in `clusters/`) sorts before the error (K0403, in `packages/`) by file, and is
/// printed after it in text, JSON and GitHub annotations alike.
#[test]
fn errors_are_reported_before_warnings_each_by_file_and_line() {
    let package = "[meta]\nname = \"web\"\nversion = \"1.0.0\"\n[workloads.api]\nreplicas = { none = 1 }\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  \
        template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers: [{name: api, image: example/api:1}]\n";
    let t = Test::new().tree([
        (
            "clusters/prod.toml",
            "availability = \"pod\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"shop\"\npackage = \"web\"\n\
             [[instances]]\nname = \"cart\"\npackage = \"web\"\navailability = \"none\"\n",
        ),
        ("packages/web/kix.toml", package),
        ("packages/web/api.yaml", deployment),
    ]);
    let text = t.clone().args(["check"]).run().status(1);
    let titles: Vec<&str> = text
        .stderr
        .lines()
        .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
        .map(|l| &l[..l.find(']').unwrap() + 1])
        .collect();
    assert_eq!(titles, ["error[K0403]", "warning[K0428]", "warning[K0428]"], "{}", text.stderr);
    let shop = text.stderr.find("instance `shop`: nothing").unwrap();
    assert!(shop < text.stderr.find("instance `cart`: nothing").unwrap(), "by line: {}", text.stderr);
    let json = t.clone().args(["check", "--format", "json"]).run().status(1);
    let order: Vec<(String, u64)> = json
        .diagnostics()
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(order, [("K0403".to_string(), 5), ("K0428".into(), 5), ("K0428".into(), 8)]);
    let github = t.args(["check", "--format", "github"]).run().status(1);
    let kinds: Vec<&str> = github.stdout.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(kinds, ["::error", "::warning", "::warning"], "{}", github.stdout);
}

/// Issue 41, point 9: verify's report keeps each kind of line in a block of its own, in the order of
/// every report: the findings (each with its code, no `[note]` among them), then what fails nothing, the
/// facts behind the failed scenarios (the diagnostics' notes), after them.
#[test]
fn verify_lists_facts_after_the_findings_never_among_them() {
    let t = api_on_three_one_cpu_nodes();
    let run = t.args(["verify"]).run().status(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let block = |title: &str| {
        let start = lines.iter().position(|l| *l == title).unwrap_or_else(|| panic!("no {title}\n{}", run.stdout));
        let end = (start + 1..lines.len()).find(|&i| !lines[i].starts_with("  ")).unwrap_or(lines.len());
        (start, lines[start + 1..end].to_vec())
    };
    let (findings_at, findings) = block("findings:");
    let (facts_at, facts) = block("facts behind the failed scenarios:");
    assert!(findings_at < facts_at, "{}", run.stdout);
    assert!(findings.iter().all(|l| l.contains(": [K06")), "{}", run.stdout);
    assert!(!run.stdout.contains("[note]"), "{}", run.stdout);
    let fact =
        "c/i1 Deployment/api: rolling-update: maxSurge 1, maxUnavailable 0; fewest available during the rollout: 3";
    assert_eq!(facts, [format!("  {fact}")], "{}", run.stdout);
    // The same fact is a note of the located diagnostic of its scenario.
    run.stderr_contains("= note: maxSurge 1, maxUnavailable 0; fewest available during the rollout: 3");
}

/// Issue 41, point 9: in a terminal, verify's report keeps the notes (drains another workload stops: no
/// diagnostic says them) and leaves the facts to the diagnostics, whose notes they are; the real-world
/// corpus's `dev` has all three kinds. The terminal is util-linux's `script`, as above.
#[test]
fn verify_in_a_terminal_lists_the_notes_and_leaves_the_facts_to_the_diagnostics() {
    let kix = env!("CARGO_BIN_EXE_kix");
    let output = std::process::Command::new("script")
        .args(["-qec", &format!("{kix} verify --cluster dev"), "/dev/null"])
        .current_dir(crate::support::repo_path("tests/realworld"))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .output()
        .expect("util-linux script");
    let screen = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    let counted = screen.find("findings: shown below, each where it comes from").expect(&screen);
    let notes = screen.find("notes (the workloads pass; these stop the cluster's operators):").expect(&screen);
    assert!(counted < notes, "{screen}");
    assert!(screen.contains("  dev/cassandra StatefulSet/cassandra: drain: [K0622] "), "{screen}");
    assert!(!screen.contains("facts behind the failed scenarios:"), "{screen}");
    assert!(screen.contains("= note: partition 0: 0 updated highest ordinal first"), "{screen}");
    // Errors first, then warnings, in the diagnostics below the report.
    let last_error = screen.rfind("error[").expect(&screen);
    assert!(screen.find("warning[").is_none_or(|first| last_error < first), "{screen}");
}

/// A zone-level Deployment of three pods of 900m cpu on three nodes of one cpu: each pod fills a node, so
/// verify's rolling update and drains find no room (its failures and their facts are what the tests read).
fn api_on_three_one_cpu_nodes() -> Test {
    let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
        [[instances]]\nname = \"i1\"\npackage = \"api\"\ncreateNamespace = true\n[[nodePools]]\nname = \"general\"\n\
        zones = [\"a\", \"b\", \"c\"]\nnodesPerZone = 1\nallocatable = { cpu = \"1\", memory = \"16Gi\", pods = 110 }\n";
    let package =
        "[meta]\nname = \"api\"\nversion = \"1.0.0\"\n[workloads.api]\nreplicas = { none = 1, pod = 2, zone = 3 }\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  \
        template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: example/api:1\n        \
        resources:\n          requests: {cpu: 900m, memory: 100Mi}\n";
    Test::new().tree([
        ("clusters/c.toml", cluster),
        ("packages/api/kix.toml", package),
        ("packages/api/api.yaml", deployment),
    ])
}
