//! `kix lint` end to end: kix's own output, compiled from the shipped examples, must lint clean;
//! directories, stdin and lists; an unknown `--cluster`; the real-world corpus's findings. The cases
//! under `tests/lint/<case>/`, one per finding, are one trial each in the `corpus` target
//! (tests/corpus/lint.rs).

use crate::support::*;

/// kix's own output never trips a lint rule: each shipped cluster's compiled stream lints clean, with and
/// without its `--cluster` facts.
#[test]
fn compiled_examples_lint_clean() {
    let t = Test::new().examples();
    for cluster in ["dev", "edge", "prod", "staging"] {
        let built = t.clone().args(["build", "--stdout", "--cluster", cluster]).run().status(0);
        let file = format!("{cluster}.yaml");
        std::fs::write(t.root().join(&file), &built.stdout).unwrap();
        for extra in [vec![], vec!["--cluster", cluster]] {
            let mut args = vec!["lint", file.as_str()];
            args.extend(extra);
            t.clone().args(args).run().status(0).stderr_ends_with("kix: 0 errors, 0 warnings\n");
        }
    }
}

/// Directories are walked in path order (kustomization.yaml skipped), `-` is stdin, lists are flattened.
#[test]
fn directories_stdin_and_lists() {
    let dep = std::fs::read_to_string(repo_path("tests/lint/k0715-no-spread-no-anti-affinity/manifests.yaml")).unwrap();
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}",
        dep.split("---\n").map(|d| format!("- {}", d.trim_end().replace('\n', "\n  "))).collect::<Vec<_>>().join("\n")
    );
    let t = Test::new().tree([
        ("m/b/list.yaml", list.as_str()),
        ("m/a.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"),
        ("m/kustomization.yaml", "resources: [a.yml]\n"),
        ("m/notes.txt", "not yaml"),
    ]);
    let out = t.clone().args(["lint", "m"]).run().status(0);
    assert!(out.stderr.contains("warning[K0715]") && out.stderr.contains("--> m/b/list.yaml:16:7"), "{}", out.stderr);
    assert!(out.stderr.contains("linted 3 objects (1 workload, 1 PodDisruptionBudget) from 2 files"), "{}", out.stderr);

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kix"))
        .args(["lint", "-", "--format", "json"])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(dep.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let finding = &document["diagnostics"][0];
    assert_eq!((finding["code"].as_str(), finding["file"].as_str()), (Some("K0715"), Some("<stdin>")));
}

/// `--cluster` names a cluster that does not exist: one located error, exit 1.
#[test]
fn unknown_cluster_is_an_error() {
    Test::in_dir("tests/lint/clean")
        .args(["lint", "manifests.yaml", "--cluster", "nope"])
        .run()
        .status(1)
        .stderr_contains("error[K0106]: no cluster file clusters/nope.toml");
}

/// Every package of the real-world corpus lints without a crash (findings are recorded in the report,
/// not goldened).
#[test]
fn realworld_packages_lint_to_the_findings_their_readme_explains() {
    // tests/realworld/README.md explains each: multi-replica workloads without spread (K0715; the
    // operators' resources of kix's built-in profiles are read like Deployments, issue 18) and the
    // kube-prometheus and gatekeeper budgets without an eviction policy (K0714), and Argo CD's preferred
    // anti-affinity over a label its pods do not carry (K0724).
    let expected: &[(&str, &[&str])] = &[
        ("alertmanager-example", &["K0715"]),
        ("argo-cd-ha", &["K0724"]),
        ("argo-rollouts", &["K0715"]),
        ("cassandra", &["K0715"]),
        ("cloudnative-pg", &["K0715"]),
        ("contour", &[]),
        ("descheduler", &[]),
        ("external-dns", &[]),
        ("gatekeeper", &["K0714"]),
        ("guestbook", &["K0715"]),
        ("ingress-nginx", &[]),
        ("istio-spire", &[]),
        ("kube-prometheus", &["K0714", "K0715"]),
        ("kubernetes-dashboard", &[]),
        ("metallb", &[]),
        ("microservices-demo", &[]),
        ("mpi-operator", &[]),
        ("nats", &[]),
        ("php-apache-hpa", &["K0715"]),
        // Its RabbitmqCluster is placed through the package's [kinds], which lint does not read.
        ("rabbitmq-hello-world", &[]),
        ("strimzi-kafka", &["K0715"]),
        ("vllm-hpa", &["K0715"]),
    ];
    let mut packages: Vec<String> = std::fs::read_dir(repo_path("tests/realworld/packages"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    packages.sort();
    assert_eq!(
        packages,
        expected.iter().map(|(p, _)| p.to_string()).collect::<Vec<_>>(),
        "a corpus package without an expectation"
    );
    for (package, codes) in expected {
        let path = repo_path(format!("tests/realworld/packages/{package}"));
        let out = Test::in_repo().args(["lint", path.to_str().unwrap(), "--format", "json"]).run().status(0);
        let mut found: Vec<String> =
            out.diagnostics().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
        found.sort();
        found.dedup();
        assert_eq!(found, *codes, "{package}: {}", out.stderr);
    }
}
