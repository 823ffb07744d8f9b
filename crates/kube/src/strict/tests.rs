//! Strict validation over the real-world corpus (tests/realworld/: manifests that kubectl applies
//! to a 1.33 cluster as they are), and its tables.

use super::*;
use kix_yaml::{Limits, parse_stream};
use std::path::{Path, PathBuf};

fn objects(text: &str) -> Vec<Value> {
    parse_stream(text, &Limits::PACKAGE)
        .into_iter()
        .map(|document| document.expect("the corpus parses"))
        .filter(|document| !document.value.is_null())
        .flat_map(|document| crate::list::flatten(document.value, document.marks).expect("lists flatten"))
        .map(|(value, _)| value)
        .collect()
}

fn yaml_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(path);
        }
    }
}

#[test]
fn strict_validation_accepts_every_object_of_the_realworld_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/realworld");
    // The corpus's packages, and those of its expected-failure roots.
    let dirs = |dir: PathBuf| -> Vec<PathBuf> {
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect()
    };
    let mut packages = dirs(root.join("packages"));
    for case in dirs(root.join("expected-failures")) {
        packages.extend(dirs(case.join("packages")));
    }
    packages.sort();
    assert!(packages.len() >= 8, "{packages:?}");
    let (mut built_in, mut custom_checked, mut failures) = (0, 0, Vec::new());
    for package in &packages {
        let mut files = Vec::new();
        yaml_files(package, &mut files);
        let texts: Vec<(PathBuf, String)> =
            files.into_iter().map(|f| (f.clone(), std::fs::read_to_string(&f).unwrap())).collect();
        let all: Vec<(PathBuf, Value)> =
            texts.iter().flat_map(|(file, text)| objects(text).into_iter().map(|o| (file.clone(), o))).collect();
        // A shipped kustomization.yaml is kustomize's, not the API server's (and may lack a kind).
        let all: Vec<(PathBuf, Value)> = all
            .into_iter()
            .filter(|(file, _)| file.file_name().is_some_and(|name| name != "kustomization.yaml"))
            .collect();
        let custom = CustomKinds::from_objects(all.iter().map(|(_, o)| o));
        for (file, object) in &all {
            let (api_version, kind) = (object["apiVersion"].as_str().unwrap(), object["kind"].as_str().unwrap());
            if served::lookup(api_version, kind).is_some() {
                built_in += 1;
            } else if custom.defines(crate::kind::api_group(api_version), kind) {
                custom_checked += 1;
            }
            for error in check_object(object, &custom) {
                let file = file.strip_prefix(&root).unwrap().display();
                failures
                    .push(format!("{file}: {kind} {}: {error}", object["metadata"]["name"].as_str().unwrap_or("-")));
            }
        }
    }
    // The one refusal is right: metrics-server's base Deployment gets its selector from its
    // kustomization's commonLabels, and `kubectl apply -f deployment.yaml` alone is refused with
    // "spec.selector: Required value" (see tests/realworld/README.md, metrics-server).
    let expected = [
        "expected-failures/metrics-server/packages/metrics-server/deployment.yaml: Deployment metrics-server: required field `spec.selector` is missing (Kubernetes 1.33)",
    ];
    assert_eq!(failures, expected, "{}", failures.join("\n"));
    eprintln!("{built_in} built-in objects, {custom_checked} custom resources checked against their CRD");
    // Measured on the corpus when this test was written: nothing vacuous passes.
    // The corpus is frozen (tests/realworld/sha256sums), so these counts are too.
    // (276: argo-rollouts added the Deployment of its workloadRef example, issue 18; its Rollouts have no CRD.
    // 279 and 15: cloudnative-pg and strimzi-kafka added three CRDs and, checked against them, a Cluster,
    // a Kafka and two KafkaNodePools; 295: contour's 16 objects, issue 19, its Deployment's `defaultMode: 0644`
    // read as 420; 321: istio-spire's 26 objects, issue 19, read with libyaml's flow-context indentation;
    // 327 and 18: kube-prometheus's Alertmanager with its budget and service account, the
    // Prometheus and Alertmanager CRDs, and prometheus-operator's example Alertmanager with its Service and
    // CRD, so its Prometheus and both Alertmanagers are checked, issue 18; 358: gatekeeper's 31 objects, issue 24,
    // its 9 CRDs with no custom resource of theirs; 365: descheduler's 7 objects, issue 20; 379: kubernetes-dashboard's
    // 14 objects; 382: nats's 3 objects, issue 43; 390 and 19: mpi-operator's 7 objects (its kustomization
    // skipped) and rabbitmq-hello-world's CRD and, checked against it, its RabbitmqCluster, issue 43.)
    assert_eq!((built_in, custom_checked), (390, 19), "built-in objects, custom resources with their CRD");
}

/// What kix emits for the corpus (tests/realworld/expected/out, checked against a fresh build by
/// tests/it/realworld.rs) is as strict-valid as its input: in particular the replica counts and spread
/// constraints kix writes into operators' resources at their profiles' fields (issue 18) are fields the
/// shipped CRDs declare, with the types they declare. Each cluster's objects are checked against the
/// CRDs that cluster's output holds (a CRD two instances ship is in `_shared.yaml`).
#[test]
fn strict_validation_accepts_every_object_kix_emits_for_the_corpus() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/realworld/expected/out");
    let mut clusters: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    clusters.sort();
    let (mut custom_checked, mut failures) = (0, Vec::new());
    for cluster in &clusters {
        let mut files = Vec::new();
        yaml_files(cluster, &mut files);
        let all: Vec<(PathBuf, Value)> = files
            .iter()
            .filter(|f| f.file_name().is_some_and(|name| name != "kustomization.yaml"))
            .flat_map(|f| objects(&std::fs::read_to_string(f).unwrap()).into_iter().map(move |o| (f.clone(), o)))
            .collect();
        let custom = CustomKinds::from_objects(all.iter().map(|(_, o)| o));
        for (file, object) in &all {
            let (api_version, kind) = (object["apiVersion"].as_str().unwrap(), object["kind"].as_str().unwrap());
            if custom.defines(crate::kind::api_group(api_version), kind) {
                custom_checked += 1;
            }
            for error in check_object(object, &custom) {
                let file = file.strip_prefix(&out).unwrap().display();
                failures
                    .push(format!("{file}: {kind} {}: {error}", object["metadata"]["name"].as_str().unwrap_or("-")));
            }
        }
    }
    // The metrics-server Deployment is not in the output (its root fails); nothing else is refused.
    assert_eq!(failures, Vec::<String>::new(), "{}", failures.join("\n"));
    // The operators' resources kix places, with their CRDs: kube-prometheus's Prometheus and Alertmanager
    // (dev and prod), CloudNativePG's Cluster, Strimzi's Kafka and two KafkaNodePools, the example
    // Alertmanager (prod), and the ServiceMonitors and PrometheusRules kube-prometheus ships.
    assert!(custom_checked >= 10, "only {custom_checked} custom resources checked");
}
