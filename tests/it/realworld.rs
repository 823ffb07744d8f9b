//! The real-world corpus (`tests/realworld/`, described in its README): upstream packages kept byte
//! for byte under `packages/`, each with a kix.toml, instantiated by the four example cluster shapes
//! under `clusters/`. The corpus is a kix root of its own:
//!
//! - it builds to the golden tree `expected/out/` with the golden stderr `expected/stderr.txt`;
//! - `kix verify` prints the golden report `expected/verify.txt`;
//! - every object kix writes equals its upstream document once the fields kix owns are taken out of
//!   both (see [`strip_owned_fields`]): any other difference fails;
//! - each case of `expected-failures/` (a package that cannot compile as upstream ships it) fails with
//!   its golden diagnostic;
//! - the upstream files still match `sha256sums`.
//!
//! The schema test (`schema.rs`) validates `expected/out/` too.

use crate::support::*;
use kix_yaml::{Mapping, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CORPUS: &str = "tests/realworld";

fn build() -> Output {
    Test::new().fixture(CORPUS).args(["build"]).run()
}

#[test]
fn corpus_compiles_to_the_golden_tree() {
    build()
        .status(0)
        .status_and_stderr_golden(format!("{CORPUS}/expected/stderr.txt"))
        .files_golden("out", format!("{CORPUS}/expected/out"));
}

#[test]
fn corpus_verifies_to_the_golden_report() {
    // Exit status 1: one workload fails on the single-node cluster (README, "Known findings").
    let run = Test::new().fixture(CORPUS).args(["verify"]).run();
    assert_golden(format!("{CORPUS}/expected/verify.txt"), &format!("exit status {}\n{}", run.status, run.stdout));
}

#[test]
fn expected_failures_fail_with_their_golden_diagnostic() {
    let cases = std::fs::read_dir(repo_path(format!("{CORPUS}/expected-failures"))).unwrap();
    let mut seen = 0;
    for case in cases {
        let case = case.unwrap().path();
        Test::new()
            .fixture(&case)
            .args(["build"])
            .run()
            .status(1)
            .status_and_stderr_golden(case.join("expected.stderr"));
        seen += 1;
    }
    assert!(seen >= 1, "no expected-failure case");
}

#[test]
fn upstream_files_are_byte_identical() {
    let output = std::process::Command::new("sha256sum")
        .args(["--check", "--quiet", "--strict", "sha256sums"])
        .current_dir(repo_path(CORPUS))
        .output()
        .expect("run sha256sum");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let listed = std::fs::read_to_string(repo_path(format!("{CORPUS}/sha256sums"))).unwrap().lines().count();
    assert!(listed >= 90, "sha256sums lists {listed} files");
}

// ---------------------------------------------------------------------------
// Every user object comes out unchanged apart from the fields kix owns.

/// A package of the corpus as its kix.toml and files declare it.
struct Package {
    namespace: Option<String>,
    keep: Vec<String>,
    /// The package's `[kinds]` profiles, by kind.
    kinds: BTreeMap<String, Kind>,
    /// Every object of its YAML files (Lists unwrapped, kustomizations skipped), with its file.
    objects: Vec<(String, Value)>,
}

/// A `[kinds]` profile of a package's kix.toml: the fields kix writes (dotted paths) and the pod labels
/// a budget it derives selects (`{name}` is the resource's name).
struct Kind {
    replicas: Option<Vec<String>>,
    spread: Option<Vec<String>>,
    pod_labels: BTreeMap<String, String>,
}

/// An instance of a cluster file: its package and namespace.
struct Instance {
    package: String,
    namespace: String,
}

fn toml_table(path: &Path) -> toml::Table {
    std::fs::read_to_string(path).unwrap().parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn toml_str<'a>(table: &'a toml::Table, key: &str) -> Option<&'a str> {
    table.get(key).and_then(toml::Value::as_str)
}

fn yaml_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            yaml_files(&path, files);
        } else if (name.ends_with(".yaml") || name.ends_with(".yml")) && !name.starts_with("kustomization.") {
            files.push(path);
        }
    }
}

fn packages(root: &Path) -> BTreeMap<String, Package> {
    let mut packages = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("packages")).unwrap() {
        let dir = entry.unwrap().path();
        let kix = toml_table(&dir.join("kix.toml"));
        let meta = kix["meta"].as_table().unwrap();
        let keep = meta
            .get("keepNamespaces")
            .and_then(toml::Value::as_array)
            .map_or(Vec::new(), |list| list.iter().map(|n| n.as_str().unwrap().to_string()).collect());
        let mut files = Vec::new();
        yaml_files(&dir, &mut files);
        let mut objects = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let local = file.strip_prefix(root).unwrap().display().to_string();
            for document in kix_yaml::from_str_all(&text).unwrap_or_else(|e| panic!("{local}: {e}")) {
                let kind = document.get("kind").and_then(Value::as_str).unwrap_or_default();
                if document.is_null() || kind == "Kustomization" {
                    continue;
                }
                match document.get("items").and_then(Value::as_sequence) {
                    Some(items) if kind.ends_with("List") => {
                        objects.extend(items.iter().map(|item| (local.clone(), item.clone())));
                    }
                    _ => objects.push((local.clone(), document)),
                }
            }
        }
        let mut kinds = BTreeMap::new();
        for (key, profile) in kix.get("kinds").and_then(toml::Value::as_table).into_iter().flatten() {
            let profile = profile.as_table().unwrap();
            let path = |field: &str| toml_str(profile, field).map(|p| p.split('.').map(str::to_string).collect());
            let pod_labels = profile["podLabels"].as_table().unwrap();
            let pod_labels = pod_labels.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect();
            let kind = Kind { replicas: path("replicas"), spread: path("topologySpreadConstraints"), pod_labels };
            kinds.insert(key.rsplit_once('/').unwrap().1.to_string(), kind);
        }
        let name = toml_str(meta, "name").unwrap().to_string();
        let namespace = toml_str(meta, "namespace").map(str::to_string);
        packages.insert(name, Package { namespace, keep, kinds, objects });
    }
    packages
}

fn instances(root: &Path, cluster: &str) -> BTreeMap<String, Instance> {
    let file = toml_table(&root.join(format!("clusters/{cluster}.toml")));
    let list = file.get("instances").and_then(toml::Value::as_array).cloned().unwrap_or_default();
    list.iter()
        .map(|instance| {
            let table = instance.as_table().unwrap();
            let name = toml_str(table, "name").unwrap().to_string();
            let namespace = toml_str(table, "namespace").unwrap_or(&name).to_string();
            (name, Instance { package: toml_str(table, "package").unwrap().to_string(), namespace })
        })
        .collect()
}

fn get<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

fn remove(value: &mut Value, path: &[&str]) -> Option<Value> {
    let (last, parents) = path.split_last().unwrap();
    let parent = parents.iter().try_fold(value, |v, key| v.get_mut(key))?;
    parent.as_mapping_mut()?.remove(*last)
}

/// Takes a mapping out when it became empty only because kix's keys were removed from it.
fn drop_if_emptied(value: &mut Value, path: &[&str], existed_in_source: bool) {
    if !existed_in_source && get(value, path).and_then(Value::as_mapping).is_some_and(Mapping::is_empty) {
        remove(value, path);
    }
}

const KIX_INSTANCE: &str = "kix.dev/instance";
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
const APP_INSTANCE: &str = "app.kubernetes.io/instance";
const ANNOTATIONS: [&str; 2] = ["kix.dev/availability-requested", "kix.dev/availability-resolved"];

/// Removes from the emitted object and its source exactly the fields kix owns, after checking what kix
/// may put there: the labels it adds (never replacing a user's value), its two annotations,
/// `metadata.namespace` (the instance's, or a kept one as written, or none for cluster-scoped kinds),
/// `spec.replicas` and the derived pod-template `topologySpreadConstraints` of Deployments and
/// StatefulSets, the count and spread fields of the operators' resources kix places, an autoscaler's range, the namespace references the rewrite moves, and a renamed
/// Namespace's name.
fn strip_owned_fields(
    emitted: &mut Value,
    source: &mut Value,
    package: &Package,
    namespace: &str,
) -> Result<(), String> {
    let kind = source["kind"].as_str().unwrap_or_default().to_string();
    let moved = |written: &str| written == namespace || Some(written) == package.namespace.as_deref();

    // Labels: kix.dev/instance always (the instance's, absent on shared objects); the two
    // app.kubernetes.io labels only where the user wrote none.
    let source_labels = get(source, &["metadata", "labels"]).cloned();
    for key in [KIX_INSTANCE, MANAGED_BY, APP_INSTANCE] {
        let written = source_labels.as_ref().and_then(|l| l.get(key)).cloned();
        let out = get(emitted, &["metadata", "labels", key]).cloned();
        match (key, written, out) {
            (KIX_INSTANCE, _, _) => {}
            (_, Some(written), out) if out.as_ref() != Some(&written) => {
                return Err(format!("label {key}: the user's {written:?} became {out:?}"));
            }
            (_, Some(_), _) => continue,
            (MANAGED_BY, None, Some(out)) if out != "kix" => return Err(format!("label {key} added as {out:?}")),
            _ => {}
        }
        remove(emitted, &["metadata", "labels", key]);
        remove(source, &["metadata", "labels", key]);
    }
    drop_if_emptied(emitted, &["metadata", "labels"], source_labels.is_some());
    let source_annotations = get(source, &["metadata", "annotations"]).is_some();
    for key in ANNOTATIONS {
        remove(emitted, &["metadata", "annotations", key]);
    }
    drop_if_emptied(emitted, &["metadata", "annotations"], source_annotations);

    // Where the object goes.
    let written = remove(source, &["metadata", "namespace"]).and_then(|n| n.as_str().map(str::to_string));
    match remove(emitted, &["metadata", "namespace"]).as_ref().and_then(Value::as_str) {
        None => {} // cluster-scoped: kix drops any namespace written on it
        Some(out) => {
            let expected = match &written {
                Some(w) if package.keep.contains(w) => w.as_str(),
                Some(w) if !moved(w) => return Err(format!("namespace `{w}` is neither moved nor kept")),
                _ => namespace,
            };
            if out != expected {
                return Err(format!("emitted in namespace `{out}`, expected `{expected}`"));
            }
        }
    }
    if kind == "Namespace"
        && Some(source["metadata"]["name"].as_str().unwrap_or_default()) == package.namespace.as_deref()
    {
        if emitted["metadata"]["name"] != namespace {
            return Err(format!("the shipped Namespace is named {:?}, not `{namespace}`", emitted["metadata"]["name"]));
        }
        remove(emitted, &["metadata", "name"]);
        remove(source, &["metadata", "name"]);
    }

    // Replicas and placement of the workloads kix manages; an autoscaler's range.
    // Argo Rollouts' Rollout is placed like a Deployment (issue 18); the Deployment its workloadRef names
    // holds its spread constraints.
    if matches!(kind.as_str(), "Deployment" | "StatefulSet" | "Rollout") {
        remove(emitted, &["spec", "replicas"]);
        remove(source, &["spec", "replicas"]);
        if get(source, &["spec", "template", "spec", "topologySpreadConstraints"]).is_none() {
            remove(emitted, &["spec", "template", "spec", "topologySpreadConstraints"]);
        }
    }
    // The operators' resources kix places through its built-in profiles (issue 18) or the package's
    // `[kinds]` (issue 43): the pod count and the spread constraints at the fields each operator reads
    // (where the package wrote none).
    fn strs(path: &Option<Vec<String>>) -> Option<Vec<&str>> {
        path.as_ref().map(|p| p.iter().map(String::as_str).collect())
    }
    let declared = package.kinds.get(&kind).map(|k| (strs(&k.replicas), strs(&k.spread)));
    let fields = match (&declared, operator_fields(&kind)) {
        (Some((replicas, spread)), _) => Some((replicas.as_deref(), spread.as_deref())),
        (None, Some((replicas, spread))) => Some((Some(replicas), Some(spread))),
        (None, None) => None,
    };
    if let Some((replicas, spread)) = fields {
        if let Some(replicas) = replicas {
            remove(emitted, replicas);
            remove(source, replicas);
        }
        if let Some(spread) = spread.filter(|spread| get(source, spread).is_none()) {
            remove(emitted, spread);
            // The mappings kix created on the way (`spec.template.pod` of a KafkaNodePool), with the least
            // values it filled their required fields with (`containers: []` in a pod spec, issue 43).
            for depth in (1..spread.len()).rev() {
                let existed = get(source, &spread[..depth]).is_some();
                if !existed {
                    let created = spread[..depth].iter().try_fold(&mut *emitted, |v, key| v.get_mut(key));
                    if let Some(mapping) = created.and_then(Value::as_mapping_mut) {
                        mapping.retain(|_, value| value.as_sequence().is_none_or(|items| !items.is_empty()));
                    }
                }
                drop_if_emptied(emitted, &spread[..depth], existed);
            }
        }
        // A `spec` kix created for the count alone (a resource written with none, issue 43).
        if let Some(replicas) = replicas {
            for depth in (1..replicas.len()).rev() {
                drop_if_emptied(emitted, &replicas[..depth], get(source, &replicas[..depth]).is_some());
            }
        }
    }
    if kind == "HorizontalPodAutoscaler" {
        for field in ["minReplicas", "maxReplicas"] {
            let (before, after) = (get(source, &["spec", field]).cloned(), get(emitted, &["spec", field]).cloned());
            if after.as_ref().and_then(Value::as_i64) < before.as_ref().and_then(Value::as_i64) {
                return Err(format!("{field} lowered from {before:?} to {after:?}"));
            }
            remove(emitted, &["spec", field]);
            remove(source, &["spec", field]);
        }
    }

    // References the namespace rewrite moves: each is as written, or moved from the package's own.
    let mut references: Vec<Vec<String>> = Vec::new();
    let path = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    match kind.as_str() {
        "RoleBinding" | "ClusterRoleBinding" => {
            for (index, subject) in
                source.get("subjects").and_then(Value::as_sequence).into_iter().flatten().enumerate()
            {
                if subject["kind"] == "ServiceAccount" {
                    references.push(path(&["subjects", &index.to_string(), "namespace"]));
                }
            }
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            for index in 0..source.get("webhooks").and_then(Value::as_sequence).map_or(0, Vec::len) {
                references.push(path(&["webhooks", &index.to_string(), "clientConfig", "service", "namespace"]));
            }
        }
        "APIService" => references.push(path(&["spec", "service", "namespace"])),
        "CustomResourceDefinition" => {
            references.push(path(&["spec", "conversion", "webhook", "clientConfig", "service", "namespace"]));
        }
        _ => {}
    }
    for reference in references {
        // A ServiceAccount subject written without a namespace gets the namespace the package's
        // ServiceAccount of its name lands in (issue 43): a kept one as written, else the instance's.
        let account = (reference[0] == "subjects").then(|| {
            let subject = &source["subjects"][reference[1].parse::<usize>().unwrap()];
            package
                .objects
                .iter()
                .find(|(_, o)| o["kind"] == "ServiceAccount" && o["metadata"]["name"] == subject["name"])
                .map(|(_, o)| match o["metadata"]["namespace"].as_str() {
                    Some(kept) if package.keep.iter().any(|k| k == kept) => kept.to_string(),
                    _ => namespace.to_string(),
                })
        });
        let (before, after) = (take(source, &reference), take(emitted, &reference));
        let moved_here = before.as_ref().and_then(Value::as_str).is_some_and(moved) && after == Some(namespace.into());
        let filled = before.is_none() && after.is_some() && account.flatten().map(Value::from) == after;
        if before != after && !moved_here && !filled {
            return Err(format!("{} changed from {before:?} to {after:?}", reference.join(".")));
        }
    }
    Ok(())
}

/// Removes a field at a path whose numeric parts index sequences.
fn take(value: &mut Value, path: &[String]) -> Option<Value> {
    let (last, parents) = path.split_last().unwrap();
    let mut current = value;
    for part in parents {
        current = match part.parse::<usize>() {
            Ok(index) => current.as_sequence_mut()?.get_mut(index)?,
            Err(_) => current.get_mut(part)?,
        };
    }
    current.as_mapping_mut()?.remove(last.as_str())
}

/// Group, kind and name: what identifies an object within one namespace.
fn identity(object: &Value) -> (String, String, String) {
    let group = object["apiVersion"].as_str().unwrap_or_default().rsplit_once('/').map_or("", |(g, _)| g).to_string();
    (
        group,
        object["kind"].as_str().unwrap_or_default().to_string(),
        object["metadata"]["name"].as_str().unwrap_or_default().to_string(),
    )
}

/// The emitted documents of one file, each with the comment lines written above it.
fn emitted_documents(text: &str) -> Vec<(String, Value)> {
    text.split("\n---\n")
        .skip(1)
        .map(|chunk| {
            let comment = chunk.lines().take_while(|l| l.starts_with('#')).collect::<Vec<_>>().join("\n");
            (comment, kix_yaml::from_str(chunk).unwrap())
        })
        .collect()
}

/// Matches one emitted object with its source object among an instance's package and compares them.
fn check_object(emitted: &Value, package: &Package, instance: &Instance, used: &mut [bool]) -> Result<(), String> {
    let (group, kind, name) = identity(emitted);
    let out_namespace = emitted["metadata"]["namespace"].as_str();
    let mut errors = Vec::new();
    for (index, (file, source)) in package.objects.iter().enumerate() {
        let (source_group, source_kind, mut source_name) = identity(source);
        if kind == "Namespace" && Some(source_name.as_str()) == package.namespace.as_deref() {
            source_name = instance.namespace.clone();
        }
        if (source_group, source_kind, source_name) != (group.clone(), kind.clone(), name.clone()) {
            continue;
        }
        // Another namespace's object of this name (kube-prometheus's RoleList holds three).
        let written = source["metadata"]["namespace"].as_str();
        let goes_to = written.filter(|w| package.keep.iter().any(|k| k == w)).unwrap_or(&instance.namespace);
        if out_namespace.is_some_and(|out| out != goes_to) {
            continue;
        }
        let (mut out, mut original) = (emitted.clone(), source.clone());
        match strip_owned_fields(&mut out, &mut original, package, &instance.namespace) {
            Ok(()) if out == original => {
                used[index] = true;
                return Ok(());
            }
            Ok(()) => errors.push(format!("{file}: {}", first_difference(&out, &original, ""))),
            Err(e) => errors.push(format!("{file}: {e}")),
        }
    }
    Err(if errors.is_empty() { "no source object".to_string() } else { errors.join("; ") })
}

fn first_difference(out: &Value, source: &Value, at: &str) -> String {
    match (out, source) {
        (Value::Mapping(a), Value::Mapping(b)) => {
            for (key, value) in a.iter() {
                let key_text = key.as_str().unwrap_or("?");
                match b.get(key_text) {
                    Some(other) if other == value => {}
                    Some(other) => return first_difference(value, other, &format!("{at}.{key_text}")),
                    None => return format!("{at}.{key_text} added by kix"),
                }
            }
            let missing = b.keys().find(|k| !a.contains_key(k.as_str().unwrap_or("?")));
            format!("{at}.{} dropped by kix", missing.and_then(Value::as_str).unwrap_or("?"))
        }
        (Value::Sequence(a), Value::Sequence(b)) if a.len() == b.len() => {
            let index = a.iter().zip(b).position(|(x, y)| x != y).unwrap();
            first_difference(&a[index], &b[index], &format!("{at}[{index}]"))
        }
        _ => format!("{at}: {out:?} written as {source:?}"),
    }
}

/// The pod count's and the spread constraints' fields of an operator's kind, as its operator reads them
/// (crates/kube/src/operators.rs cites the source of each).
fn operator_fields(kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    match kind {
        "Prometheus" | "Alertmanager" => Some((&["spec", "replicas"], &["spec", "topologySpreadConstraints"])),
        "Cluster" => Some((&["spec", "instances"], &["spec", "topologySpreadConstraints"])),
        "KafkaNodePool" => Some((&["spec", "replicas"], &["spec", "template", "pod", "topologySpreadConstraints"])),
        _ => None,
    }
}

/// The labels prometheus-operator gives an Alertmanager's or a Prometheus's pods (its `makeSelectorLabels`),
/// which a derived budget selects.
fn operator_pod_labels(object: &Value) -> Option<Value> {
    let name = object["metadata"]["name"].as_str()?;
    let text = match object["kind"].as_str()? {
        "Alertmanager" => format!(
            "matchLabels: {{alertmanager: {name}, app.kubernetes.io/instance: {name}, \
             app.kubernetes.io/managed-by: prometheus-operator, app.kubernetes.io/name: alertmanager}}"
        ),
        "Prometheus" => format!(
            "matchLabels: {{app.kubernetes.io/instance: {name}, app.kubernetes.io/managed-by: prometheus-operator, \
             app.kubernetes.io/name: prometheus, operator.prometheus.io/name: {name}, prometheus: {name}}}"
        ),
        _ => return None,
    };
    kix_yaml::from_str(&text).ok()
}

/// What kix adds of its own: an instance's Namespace (createNamespace) and a derived budget, which
/// selects exactly its workload's pods.
fn is_derived(emitted: &Value, instance: &Instance, package: &Package, instance_objects: &[Value]) -> bool {
    match emitted["kind"].as_str() {
        Some("Namespace") => emitted["metadata"]["name"] == instance.namespace.as_str(),
        Some("PodDisruptionBudget") => instance_objects.iter().any(|workload| {
            // A Rollout with workloadRef and no selector of its own selects its Deployment's pods.
            let referenced = || {
                instance_objects.iter().find(|d| {
                    d["kind"] == "Deployment" && d["metadata"]["name"] == workload["spec"]["workloadRef"]["name"]
                })
            };
            // A `[kinds]` resource's pods carry the profile's pod labels.
            let declared = workload["kind"].as_str().and_then(|kind| package.kinds.get(kind));
            let declared_labels = declared.map(|kind| {
                let name = workload["metadata"]["name"].as_str().unwrap_or_default();
                let labels: Mapping = kind
                    .pod_labels
                    .iter()
                    .map(|(k, v)| (Value::from(k.as_str()), Value::from(v.replace("{name}", name))))
                    .collect();
                let mut selector = Mapping::new();
                selector.insert("matchLabels".into(), Value::Mapping(labels));
                Value::Mapping(selector)
            });
            let selector = match workload["spec"].get("selector") {
                _ if declared.is_some() => declared_labels,
                None if workload["kind"] == "Rollout" => referenced().map(|d| d["spec"]["selector"].clone()),
                None => operator_pod_labels(workload),
                Some(selector) => Some(selector.clone()),
            };
            (declared.is_some()
                || matches!(
                    workload["kind"].as_str(),
                    Some("Deployment" | "StatefulSet" | "Rollout" | "Prometheus" | "Alertmanager")
                ))
                && workload["metadata"]["name"] == emitted["metadata"]["name"]
                && selector.as_ref() == Some(&emitted["spec"]["selector"])
        }),
        _ => false,
    }
}

#[test]
fn user_objects_change_only_in_the_fields_kix_owns() {
    let run = build().status(0);
    let root = run.root().to_path_buf();
    let packages = packages(&root);
    let mut failures = Vec::new();
    let mut checked = 0;
    for cluster in std::fs::read_dir(root.join("out")).unwrap() {
        let cluster_dir = cluster.unwrap().path();
        let cluster = cluster_dir.file_name().unwrap().to_string_lossy().into_owned();
        let instances = instances(&root, &cluster);
        let mut used: BTreeMap<&str, Vec<bool>> = BTreeMap::new();
        let shared_file = cluster_dir.join("_shared.yaml");
        let shared = std::fs::read_to_string(&shared_file).map(|t| emitted_documents(&t)).unwrap_or_default();
        for (name, instance) in &instances {
            let package = &packages[&instance.package];
            let used = used.entry(name).or_insert_with(|| vec![false; package.objects.len()]);
            let text = std::fs::read_to_string(cluster_dir.join(format!("{name}.yaml"))).unwrap();
            let objects: Vec<Value> = emitted_documents(&text).into_iter().map(|(_, v)| v).collect();
            for object in &objects {
                let (_, kind, object_name) = identity(object);
                if object["metadata"]["labels"][KIX_INSTANCE] != name.as_str() {
                    failures.push(format!("{cluster}/{name}: {kind} {object_name} lacks {KIX_INSTANCE}: {name}"));
                }
                checked += 1;
                if let Err(e) = check_object(object, package, instance, used) {
                    if !is_derived(object, instance, package, &objects) {
                        failures.push(format!("{cluster}/{name}: {kind} {object_name}: {e}"));
                    }
                }
            }
            // A shared object is compared with the source of every instance that emits it.
            for (comment, object) in &shared {
                if comment.split([' ', ',']).any(|word| word == name) {
                    checked += 1;
                    if let Err(e) = check_object(object, package, instance, used) {
                        let (_, kind, object_name) = identity(object);
                        failures.push(format!("{cluster}/_shared.yaml ({name}): {kind} {object_name}: {e}"));
                    }
                }
            }
        }
        // Nothing of a package is lost on the way.
        for (name, flags) in used {
            let package = &packages[&instances[name].package];
            for (index, _) in flags.iter().enumerate().filter(|(_, used)| !**used) {
                let (file, object) = &package.objects[index];
                let (_, kind, object_name) = identity(object);
                failures.push(format!("{cluster}/{name}: {file}: {kind} {object_name} is not emitted"));
            }
        }
    }
    assert!(failures.is_empty(), "{} objects differ beyond kix's fields:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 700, "only {checked} objects checked");

    // The comparison sees a change kix does not own: the controller's image, altered.
    let instance = Instance { package: "ingress-nginx".into(), namespace: "edge-ingress".into() };
    let package = &packages["ingress-nginx"];
    let text = std::fs::read_to_string(root.join("out/prod/ingress.yaml")).unwrap();
    let mut deployment =
        emitted_documents(&text).into_iter().map(|(_, v)| v).find(|v| v["kind"] == "Deployment").unwrap();
    let mut used = vec![false; package.objects.len()];
    check_object(&deployment, package, &instance, &mut used).unwrap();
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_sequence_mut().unwrap();
    containers[0]["image"] = "nginx:latest".into();
    let error = check_object(&deployment, package, &instance, &mut used).unwrap_err();
    assert!(error.contains(".spec.template.spec.containers[0].image"), "{error}");
}
