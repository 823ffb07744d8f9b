//! Every manifest the shipped examples (and the fixture trees) compile to passes
//! the Kubernetes 1.33 OpenAPI schema in strict mode, checked with the PyPI
//! package `kubernetes-validate`.
//!
//! `.ci/run` installs it in `.venv` and sets `KIX_REQUIRE_SCHEMA=1`, so CI can
//! never skip this test; elsewhere it is skipped with a visible message when the
//! validator is not installed.

use crate::support::*;
use std::path::PathBuf;
use std::process::Command;

fn validator() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("KIX_KUBERNETES_VALIDATE").map(PathBuf::from),
        Some(repo_path(".venv/bin/kubernetes-validate")),
        Some(PathBuf::from("kubernetes-validate")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|candidate| Command::new(candidate).arg("--version").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn compiled_examples_pass_the_kubernetes_1_33_schema_strictly() {
    let Some(validator) = validator() else {
        if std::env::var_os("KIX_REQUIRE_SCHEMA").is_some_and(|v| v == "1") {
            panic!("kubernetes-validate is required (KIX_REQUIRE_SCHEMA=1) but not installed");
        }
        // Written straight to stderr, not through eprintln!, which the test harness captures and hides.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED compiled_examples_pass_the_kubernetes_1_33_schema_strictly: kubernetes-validate is not \
             installed (python3 -m venv .venv && .venv/bin/pip install kubernetes-validate)"
        );
        return;
    };
    let run = Test::new().examples().args(["build"]).run().status(0);
    let built = run.root().join("out");
    let mut manifests: Vec<PathBuf> =
        read_tree(&built).into_keys().filter(|p| !p.ends_with("kustomization.yaml")).map(|p| built.join(p)).collect();
    // The fixture trees' golden output too (it is what kix emits for them), and the real-world
    // corpus's (tests/realworld/expected/out, checked against a fresh build by realworld.rs).
    let goldens = fixture_cases().into_iter().map(|case| case.join("expected/out"));
    for out in goldens.chain([repo_path("tests/realworld/expected/out")]) {
        manifests
            .extend(read_tree(&out).into_keys().filter(|p| !p.ends_with("kustomization.yaml")).map(|p| out.join(p)));
    }
    assert!(manifests.len() >= 14, "expected every instance file, got {manifests:?}");

    let output = Command::new(&validator)
        .args(["--strict", "--kubernetes-version", "1.33.0"])
        .args(&manifests)
        .output()
        .expect("run kubernetes-validate");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "kubernetes-validate failed:\n{report}");
    let passed = report.lines().filter(|l| l.starts_with("INFO") && l.contains(" passed ")).count();
    assert!(passed >= 700, "too few objects validated ({passed}):\n{report}");
    // The only objects without a schema: the fixtures' own custom resources, kube-prometheus's (in
    // namespaces-shared and the corpus), Argo Rollouts' Rollouts (the argo-rollouts fixture and the
    // corpus), CloudNativePG's Cluster, Strimzi's Kafka and KafkaNodePools and RabbitMQ's RabbitmqCluster
    // (the corpus): their CRDs are not in Kubernetes' OpenAPI (kix's own strict check validates them, as
    // the packages ship them and as kix emits them, against the CRDs the packages ship: kix_kube::strict's
    // tests). Every other object, CRDs and APIServices included, is validated.
    let custom = [
        ("ClusterIssuer", "example.com/v1"),
        ("Certificate", "example.com/v1"),
        ("Cache", "example.com/v1"),
        ("ServiceMonitor", "monitoring.coreos.com/v1"),
        ("PrometheusRule", "monitoring.coreos.com/v1"),
        ("Prometheus", "monitoring.coreos.com/v1"),
        ("Alertmanager", "monitoring.coreos.com/v1"),
        ("Rollout", "argoproj.io/v1alpha1"),
        ("Cluster", "postgresql.cnpg.io/v1"),
        ("Kafka", "kafka.strimzi.io/v1"),
        ("KafkaNodePool", "kafka.strimzi.io/v1"),
        ("RabbitmqCluster", "rabbitmq.com/v1beta1"),
    ];
    for line in report.lines() {
        let skipped = custom.iter().any(|(kind, api_version)| {
            line.ends_with(&format!(
                "Couldn't find schema for kind {kind} with api version {api_version} for kubernetes version 1.33"
            ))
        });
        assert!(
            line.starts_with("INFO") || (line.starts_with("WARN") && skipped),
            "unexpected validator output: {line}"
        );
    }
}

#[test]
fn kustomizations_list_exactly_the_instance_files() {
    let run = Test::new().examples().args(["build"]).run().status(0);
    for cluster in std::fs::read_dir(run.root().join("out")).unwrap() {
        let dir = cluster.unwrap().path();
        let kustomization: kix_yaml::Value =
            kix_yaml::from_str(&std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap()).unwrap();
        assert_eq!(kustomization["apiVersion"], "kustomize.config.k8s.io/v1beta1");
        assert_eq!(kustomization["kind"], "Kustomization");
        let listed: Vec<String> =
            kustomization["resources"].as_sequence().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "kustomization.yaml")
            .collect();
        files.sort();
        assert_eq!(listed, files, "{}", dir.display());
    }
}
