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
//! listed in, or an object the API server would refuse.
//!
//! The generator repairs what would be a user error (levels the declared
//! substrate rules out, too few replicas, decreasing mappings), so those cases
//! must compile; "raw" cases skip the repair and may fail, but only with the
//! codes for the errors they were allowed to make.
//!
//! Seeds are fixed so `cargo test` is deterministic; `PROPTEST_CASES` raises the count and
//! `PROPTEST_RNG_SEED` picks another seed for a longer hunt.

use kix::api::{InstancePlan, WorkloadPlan};
use kix::compile::{Compiled, Selection, compile};
use kix_kube::level::Level;
use kix_kube::selector::{Labels, Selector};
use kix_kube::validate::validate_object;
use kix_yaml::Value;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed};
use std::collections::BTreeMap;
use std::path::Path;

const NODE_KEY: &str = "kubernetes.io/hostname";
const ZONE_KEY: &str = "topology.kubernetes.io/zone";
const CUSTOM_NODE_KEY: &str = "example.com/host";
const CUSTOM_ZONE_KEY: &str = "example.com/zone";
const EXTRA_KEYS: [&str; 2] = ["example.com/rack", "node.kubernetes.io/capacity-type"];
const VERSIONS: [&str; 3] = ["1.0.0", "1.1.0", "2.0.0"];

// ---------------------------------------------------------------------------
// The model of a generated tree.

#[derive(Clone, Debug)]
struct TreeModel {
    clusters: Vec<ClusterModel>,
    packages: Vec<PackageModel>,
}

#[derive(Clone, Debug)]
struct ClusterModel {
    multi_node: Option<bool>,
    zones: Option<usize>,
    node_key: Option<&'static str>,
    zone_key: Option<&'static str>,
    extra: Vec<&'static str>,
    level: Level,
    instances: Vec<InstanceModel>,
    /// Left as generated: its levels may be above what its substrate allows.
    unrepaired: bool,
}

#[derive(Clone, Debug)]
struct InstanceModel {
    package: usize,
    requirement: Requirement,
    own_namespace: bool,
    level: Option<Level>,
}

#[derive(Clone, Copy, Debug)]
enum Requirement {
    Any,
    /// `=V` for the package's version at this index.
    Exact(usize),
    /// `^MAJOR` of the package's version at this index.
    Major(usize),
}

#[derive(Clone, Debug)]
struct PackageModel {
    versions: Vec<VersionModel>,
}

#[derive(Clone, Debug)]
struct VersionModel {
    version: &'static str,
    ceiling: Option<Level>,
    service: bool,
    workloads: Vec<WorkloadModel>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Deployment,
    StatefulSet,
}

/// One explicit constraint: (key index, hard, maxSkew, with a labelSelector, minDomains when hard).
type ExplicitConstraint = (usize, bool, u32, bool, Option<u32>);

/// Everything a compile produced, independent of input order: sorted codes, and per
/// (cluster, instance) the sorted objects and workload plans.
type Canonical = (Vec<String>, BTreeMap<(String, String), (Vec<String>, Vec<String>)>);

#[derive(Clone, Debug)]
struct WorkloadModel {
    kind: Kind,
    manifest_replicas: Option<u32>,
    /// Steps for none, pod, node, zone.
    mapping: Option<[Option<u32>; 4]>,
    ceiling: Option<Level>,
    /// Explicit `topologySpreadConstraints` (R11).
    explicit: Option<Vec<ExplicitConstraint>>,
    /// A shipped budget over the workload's pods: maxUnavailable 1 or minAvailable 50%.
    shipped_pdb: Option<bool>,
    policy: Option<&'static str>,
    selector_style: u8,
    /// Which YAML file (0 or 1) holds it.
    file: usize,
    /// Left as generated: its mapping may decrease, its replicas break R7 or R8.
    unrepaired: bool,
}

impl ClusterModel {
    fn zone_count(&self) -> usize {
        self.zones.unwrap_or(0)
    }
    fn node_key(&self) -> &'static str {
        self.node_key.unwrap_or(NODE_KEY)
    }
    fn zone_key(&self) -> &'static str {
        self.zone_key.unwrap_or(ZONE_KEY)
    }
    fn single_node(&self) -> bool {
        self.multi_node == Some(false)
    }
    /// The highest level the declared capabilities leave possible.
    fn substrate_cap(&self) -> Level {
        if self.single_node() {
            Level::None
        } else if self.zones.is_some_and(|n| n < 2) {
            Level::Node
        } else {
            Level::Zone
        }
    }
    /// R3: whether a level is possible (supported, or unverified because a capability is unknown).
    fn allows(&self, level: Level) -> bool {
        match level {
            Level::None => true,
            _ if self.single_node() => false,
            Level::Zone => self.zones.is_none_or(|n| n >= 2),
            Level::Pod | Level::Node => true,
        }
    }
    /// Every node-label key the cluster is known or assumed to have.
    fn keys(&self, level: Level) -> Vec<&'static str> {
        let mut keys = vec![self.node_key()];
        if self.zone_count() >= 2 || (self.zones.is_none() && level == Level::Zone) {
            keys.push(self.zone_key());
        }
        keys.extend(self.extra.iter().copied());
        keys
    }
}

impl PackageModel {
    /// R13: the version an instance gets.
    fn choose(&self, requirement: Requirement) -> &VersionModel {
        let major = |v: &str| v.split('.').next().unwrap().to_string();
        let candidates: Vec<&VersionModel> = match requirement {
            Requirement::Any => self.versions.iter().collect(),
            Requirement::Exact(i) => vec![&self.versions[i % self.versions.len()]],
            Requirement::Major(i) => {
                let wanted = major(self.versions[i % self.versions.len()].version);
                self.versions.iter().filter(|v| major(v.version) == wanted).collect()
            }
        };
        candidates.into_iter().max_by_key(|v| semver::Version::parse(v.version).unwrap()).unwrap()
    }
}

impl WorkloadModel {
    /// R6: the step function.
    fn replicas_at(&self, level: Level) -> u32 {
        let manifest = self.manifest_replicas.unwrap_or(1);
        match &self.mapping {
            None => manifest,
            Some(steps) => Level::ALL
                .iter()
                .zip(steps)
                .rfind(|(step, count)| **step <= level && count.is_some())
                .map_or(manifest, |(_, count)| count.unwrap()),
        }
    }

    /// Turns what would be a user error into a valid setting: a monotone mapping,
    /// one replica at most under a none ceiling, two or more from pod up.
    fn repair(&mut self, package_ceiling: Option<Level>) {
        if let Some(steps) = &mut self.mapping {
            make_monotone(steps);
        }
        let none_ceiling = package_ceiling == Some(Level::None) || self.ceiling == Some(Level::None);
        match &mut self.mapping {
            Some(steps) if none_ceiling => {
                if let Some(none) = &mut steps[0] {
                    *none = (*none).min(1);
                } else {
                    self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).min(1));
                }
            }
            None if none_ceiling => self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).min(1)),
            Some(steps) => {
                steps[1] = Some(steps[1].unwrap_or(0).max(steps[0].unwrap_or(0)).max(2));
                make_monotone(steps);
            }
            None => self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).max(2)),
        }
        // R6: below the lowest named level the manifest's replicas apply, so they are a step too.
        if let Some(steps) = &self.mapping {
            if let (None, Some(first)) = (steps[0], steps.iter().flatten().next()) {
                self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).min(*first));
            }
        }
    }
}

fn make_monotone(steps: &mut [Option<u32>; 4]) {
    let mut floor = 0;
    for count in steps.iter_mut().flatten() {
        *count = (*count).max(floor);
        floor = *count;
    }
}

// ---------------------------------------------------------------------------
// Strategies.

fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(Level::ALL.to_vec())
}

fn workload(raw: f64) -> impl Strategy<Value = WorkloadModel> {
    let explicit =
        prop::collection::vec((0usize..3, any::<bool>(), 1u32..3, any::<bool>(), prop::option::of(1u32..4)), 0..3);
    let replicas =
        (any::<bool>(), prop::option::of(0u32..5), prop::option::of(prop::array::uniform4(prop::option::of(0u32..5))));
    let settings = (
        prop::option::weighted(0.3, level()),
        prop::option::weighted(0.2, explicit),
        prop::option::weighted(0.3, any::<bool>()),
        prop::option::of(prop::sample::select(vec!["AlwaysAllow", "IfHealthyBudget"])),
    );
    (replicas, settings, 0u8..4, 0usize..2, prop::bool::weighted(raw)).prop_map(
        |(
            (deployment, manifest_replicas, mapping),
            (ceiling, explicit, shipped_pdb, policy),
            selector_style,
            file,
            unrepaired,
        )| {
            WorkloadModel {
                kind: if deployment { Kind::Deployment } else { Kind::StatefulSet },
                manifest_replicas,
                mapping,
                ceiling,
                explicit,
                shipped_pdb,
                policy,
                selector_style,
                file,
                unrepaired,
            }
        },
    )
}

fn version_model(raw: f64) -> impl Strategy<Value = VersionModel> {
    (prop::option::weighted(0.3, level()), any::<bool>(), prop::collection::vec(workload(raw), 1..4))
        .prop_map(|(ceiling, service, workloads)| VersionModel { version: VERSIONS[0], ceiling, service, workloads })
}

fn package(raw: f64) -> impl Strategy<Value = PackageModel> {
    (prop::sample::subsequence(VERSIONS.to_vec(), 1..=2), prop::collection::vec(version_model(raw), 2)).prop_map(
        |(versions, models)| PackageModel {
            versions: versions
                .into_iter()
                .zip(models)
                .map(|(version, model)| VersionModel { version, ..model })
                .collect(),
        },
    )
}

fn instance() -> impl Strategy<Value = InstanceModel> {
    (any::<Index>(), 0u8..3, any::<Index>(), any::<bool>(), prop::option::of(level())).prop_map(
        |(package, kind, version, own_namespace, level)| InstanceModel {
            package: package.index(usize::MAX),
            requirement: match kind {
                0 => Requirement::Any,
                1 => Requirement::Exact(version.index(usize::MAX)),
                _ => Requirement::Major(version.index(usize::MAX)),
            },
            own_namespace,
            level,
        },
    )
}

fn cluster(raw: f64) -> impl Strategy<Value = ClusterModel> {
    (
        (prop::option::of(any::<bool>()), prop::option::of(0usize..5)),
        (prop::option::weighted(0.2, Just(CUSTOM_NODE_KEY)), prop::option::weighted(0.2, Just(CUSTOM_ZONE_KEY))),
        prop::sample::subsequence(EXTRA_KEYS.to_vec(), 0..=2),
        level(),
        prop::collection::vec(instance(), 1..4),
        prop::bool::weighted(raw),
    )
        .prop_map(|((multi_node, zones), (node_key, zone_key), extra, level, instances, unrepaired)| {
            ClusterModel { multi_node, zones, node_key, zone_key, extra, level, instances, unrepaired }
        })
}

/// Lowers a level until the cluster's declared substrate allows it (R3).
fn allowed(cluster: &ClusterModel, mut level: Level) -> Level {
    while !cluster.allows(level) {
        level = Level::ALL[Level::ALL.iter().position(|l| *l == level).unwrap() - 1];
    }
    level
}

/// A tree in which each cluster and each workload is left unrepaired with probability `raw`;
/// with `raw` 0 it must compile without errors.
fn tree(raw: f64) -> impl Strategy<Value = TreeModel> {
    (prop::collection::vec(cluster(raw), 1..3), prop::collection::vec(package(raw), 1..4)).prop_map(
        |(mut clusters, mut packages)| {
            for cluster in &mut clusters {
                for instance in &mut cluster.instances {
                    instance.package %= packages.len();
                }
            }
            for cluster in clusters.iter_mut().filter(|c| !c.unrepaired) {
                // K0301: single-node with two or more zones.
                if cluster.single_node() && cluster.zone_count() >= 2 {
                    cluster.zones = Some(1);
                }
                // K0302: levels the declared substrate rules out.
                cluster.level = allowed(cluster, cluster.level);
                let own: Vec<Option<Level>> =
                    cluster.instances.iter().map(|i| i.level.map(|l| allowed(cluster, l))).collect();
                for (instance, level) in cluster.instances.iter_mut().zip(own) {
                    instance.level = level;
                }
            }
            for package in &mut packages {
                for version in &mut package.versions {
                    let ceiling = version.ceiling;
                    for workload in version.workloads.iter_mut().filter(|w| !w.unrepaired) {
                        workload.repair(ceiling);
                    }
                }
            }
            TreeModel { clusters, packages }
        },
    )
}

// ---------------------------------------------------------------------------
// Writing a tree.

fn yaml(text: &str) -> Value {
    kix_yaml::from_str(text).unwrap_or_else(|e| panic!("generator YAML does not parse ({e}):\n{text}"))
}

fn workload_name(index: usize) -> String {
    format!("w{index}")
}

/// The labels every generated pod template carries.
fn template_labels(name: &str) -> Labels {
    [("app".to_string(), name.to_string()), ("tier".to_string(), "backend".to_string())].into_iter().collect()
}

fn selector_value(name: &str, style: u8) -> Value {
    yaml(&match style {
        0 => format!("{{matchLabels: {{app: {name}}}}}"),
        1 => format!("{{matchExpressions: [{{key: app, operator: In, values: [{name}]}}]}}"),
        2 => format!("{{matchLabels: {{app: {name}}}, matchExpressions: [{{key: tier, operator: Exists}}]}}"),
        _ => format!(
            "{{matchLabels: {{app: {name}}}, matchExpressions: [{{key: pod-template-hash, operator: DoesNotExist}}]}}"
        ),
    })
}

/// The explicit constraints a workload brings, exactly as written.
fn explicit_constraints(name: &str, workload: &WorkloadModel) -> Option<Value> {
    let constraints = workload.explicit.as_ref()?;
    let keys = [NODE_KEY, ZONE_KEY, "example.com/rack"];
    let mut seen = Vec::new();
    let mut list = Vec::new();
    for &(key, hard, skew, with_selector, min_domains) in constraints {
        if seen.contains(&(key, hard)) {
            continue; // (topologyKey, whenUnsatisfiable) must be unique
        }
        seen.push((key, hard));
        let mut text = format!(
            "{{maxSkew: {skew}, topologyKey: {}, whenUnsatisfiable: {}",
            keys[key],
            if hard { "DoNotSchedule" } else { "ScheduleAnyway" }
        );
        if with_selector {
            text.push_str(&format!(", labelSelector: {{matchLabels: {{app: {name}}}}}"));
        }
        if let (true, Some(min)) = (hard, min_domains) {
            text.push_str(&format!(", minDomains: {min}"));
        }
        text.push('}');
        list.push(yaml(&text));
    }
    Some(Value::Sequence(list))
}

fn workload_document(index: usize, workload: &WorkloadModel) -> Value {
    let name = workload_name(index);
    let kind = match workload.kind {
        Kind::Deployment => "Deployment",
        Kind::StatefulSet => "StatefulSet",
    };
    let replicas = workload.manifest_replicas.map(|r| format!("  replicas: {r}\n")).unwrap_or_default();
    let service_name = if workload.kind == Kind::StatefulSet { "  serviceName: svc\n" } else { "" };
    let mut document = yaml(&format!(
        "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n  labels: {{team: t1}}\nspec:\n{replicas}\
         {service_name}  selector: null\n  template:\n    metadata:\n      labels: {{app: {name}, tier: backend}}\n    \
         spec:\n      containers: [{{name: main, image: example/{name}:1}}]\n"
    ));
    document["spec"]["selector"] = selector_value(&name, workload.selector_style);
    if let Some(constraints) = explicit_constraints(&name, workload) {
        document["spec"]["template"]["spec"]
            .as_mapping_mut()
            .unwrap()
            .insert("topologySpreadConstraints".into(), constraints);
    }
    document
}

fn shipped_pdb_document(index: usize, workload: &WorkloadModel) -> Option<Value> {
    let max_unavailable = workload.shipped_pdb?;
    let name = workload_name(index);
    let budget = if max_unavailable { "maxUnavailable: 1" } else { "minAvailable: 50%" };
    let mut document = yaml(&format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {name}-budget\nspec:\n  {budget}\n  \
         selector: null\n"
    ));
    document["spec"]["selector"] = selector_value(&name, workload.selector_style);
    Some(document)
}

/// The YAML files of one version: (file index, documents), documents in file order.
fn documents(version: &VersionModel) -> [Vec<Value>; 2] {
    let mut files: [Vec<Value>; 2] = [Vec::new(), Vec::new()];
    if version.service {
        files[0].push(yaml(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  selector: {app: w0}\n  ports: [{port: 80}]\n",
        ));
    }
    for (index, workload) in version.workloads.iter().enumerate() {
        files[workload.file].push(workload_document(index, workload));
        files[workload.file].extend(shipped_pdb_document(index, workload));
    }
    files
}

fn manifest(name: &str, version: &VersionModel) -> String {
    let mut text = format!("[meta]\nname = \"{name}\"\nversion = \"{}\"\n", version.version);
    if let Some(ceiling) = version.ceiling {
        text.push_str(&format!("availability = {{ max = \"{ceiling}\" }}\n"));
    }
    for (index, workload) in version.workloads.iter().enumerate() {
        text.push_str(&format!("\n[workloads.{}]\n", workload_name(index)));
        if let Some(steps) = &workload.mapping {
            let named: Vec<String> = Level::ALL
                .iter()
                .zip(steps)
                .filter_map(|(level, count)| count.map(|c| format!("{level} = {c}")))
                .collect();
            text.push_str(&format!("replicas = {{ {} }}\n", named.join(", ")));
        }
        if let Some(ceiling) = workload.ceiling {
            text.push_str(&format!("availability = {{ max = \"{ceiling}\" }}\n"));
        }
        if let Some(policy) = workload.policy {
            text.push_str(&format!("pdb = {{ unhealthyPodEvictionPolicy = \"{policy}\" }}\n"));
        }
    }
    text
}

fn package_name(index: usize) -> String {
    format!("p{index}")
}

fn instance_name(index: usize) -> String {
    format!("i{index}")
}

fn instance_namespace(index: usize, instance: &InstanceModel) -> String {
    if instance.own_namespace { format!("ns-{}", instance_name(index)) } else { instance_name(index) }
}

fn cluster_file(cluster: &ClusterModel, packages: &[PackageModel], reverse_instances: bool) -> String {
    let mut text = format!("availability = \"{}\"\n[capabilities]\n", cluster.level);
    if let Some(multi) = cluster.multi_node {
        text.push_str(&format!("multiNode = {multi}\n"));
    }
    if let Some(zones) = cluster.zones {
        let names: Vec<String> = (0..zones).map(|z| format!("\"z{z}\"")).collect();
        text.push_str(&format!("availabilityZones = [{}]\n", names.join(", ")));
    }
    text.push_str("[failureDomains]\n");
    if let Some(key) = cluster.node_key {
        text.push_str(&format!("node = \"{key}\"\n"));
    }
    if let Some(key) = cluster.zone_key {
        text.push_str(&format!("zone = \"{key}\"\n"));
    }
    let extra: Vec<String> = cluster.extra.iter().map(|k| format!("\"{k}\"")).collect();
    text.push_str(&format!("extra = [{}]\n", extra.join(", ")));
    let mut order: Vec<usize> = (0..cluster.instances.len()).collect();
    if reverse_instances {
        order.reverse();
    }
    for index in order {
        let instance = &cluster.instances[index];
        let package = &packages[instance.package];
        text.push_str(&format!(
            "\n[[instances]]\nname = \"{}\"\npackage = \"{}\"\n",
            instance_name(index),
            package_name(instance.package)
        ));
        match instance.requirement {
            Requirement::Any => {}
            Requirement::Exact(i) => {
                text.push_str(&format!("version = \"={}\"\n", package.versions[i % package.versions.len()].version))
            }
            Requirement::Major(i) => text.push_str(&format!(
                "version = \"^{}\"\n",
                package.versions[i % package.versions.len()].version.split('.').next().unwrap()
            )),
        }
        if instance.own_namespace {
            text.push_str(&format!("namespace = \"{}\"\n", instance_namespace(index, instance)));
        }
        if let Some(level) = instance.level {
            text.push_str(&format!("availability = \"{level}\"\n"));
        }
    }
    text
}

fn render_stream(documents: &[Value]) -> String {
    documents.iter().map(|d| format!("---\n{}", kix_yaml::emit::to_string(d))).collect()
}

/// Writes the tree under `root`. `permuted` lists every input in another order: package
/// directories renamed so they sort the other way round, the two YAML files swapped, documents
/// in each file reversed, instances in each cluster file reversed.
fn write_model(tree: &TreeModel, root: &Path, permuted: bool) {
    let mut files: Vec<(String, String)> = Vec::new();
    for (index, cluster) in tree.clusters.iter().enumerate() {
        files.push((format!("clusters/c{index}.toml"), cluster_file(cluster, &tree.packages, permuted)));
    }
    let directories: Vec<(usize, usize)> = tree
        .packages
        .iter()
        .enumerate()
        .flat_map(|(p, package)| (0..package.versions.len()).map(move |v| (p, v)))
        .collect();
    for (position, &(p, v)) in directories.iter().enumerate() {
        let version = &tree.packages[p].versions[v];
        let rank = if permuted { directories.len() - 1 - position } else { position };
        let dir = format!("packages/d{rank:02}-{}", package_name(p));
        files.push((format!("{dir}/kix.toml"), manifest(&package_name(p), version)));
        let names = if permuted { ["b.yml", "a.yaml"] } else { ["a.yaml", "b.yml"] };
        for (file, mut documents) in documents(version).into_iter().enumerate() {
            if permuted {
                documents.reverse();
            }
            if !documents.is_empty() {
                files.push((format!("{dir}/{}", names[file]), render_stream(&documents)));
            }
        }
    }
    crate::support::write_tree(root, files);
}

fn compile_tree(tree: &TreeModel, permuted: bool) -> Compiled {
    let dir = tempfile::tempdir().unwrap();
    write_model(tree, dir.path(), permuted);
    compile(&Selection { root: dir.path().to_path_buf(), ..Selection::default() })
}

// ---------------------------------------------------------------------------
// The invariants.

fn messages(compiled: &Compiled) -> Vec<String> {
    compiled.diagnostics.iter().map(|d| format!("{:?}: {}", d.code, d.message)).collect()
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn selects(pdb: &Value, labels: &Labels) -> bool {
    let selector = &pdb["spec"]["selector"];
    !selector.is_null() && Selector::from_value(selector).expect("emitted PDB selector parses").matches(labels)
}

/// Checks every invariant of one successful compile against the tree it came from.
fn check_invariants(tree: &TreeModel, compiled: &Compiled) {
    let context = || format!("diagnostics: {:#?}", messages(compiled));
    assert_eq!(compiled.clusters.len(), tree.clusters.len(), "{}", context());
    for (c, cluster) in tree.clusters.iter().enumerate() {
        let plan = compiled.clusters.iter().find(|p| p.name == format!("c{c}")).expect("cluster plan");
        assert_eq!(plan.instances.len(), cluster.instances.len(), "{}", context());
        for (i, instance) in cluster.instances.iter().enumerate() {
            let instance_plan = plan.instances.iter().find(|p| p.name == instance_name(i)).expect("instance plan");
            let version = tree.packages[instance.package].choose(instance.requirement);
            check_instance(cluster, instance, version, i, instance_plan);
        }
    }
}

fn check_instance(
    cluster: &ClusterModel,
    instance: &InstanceModel,
    version: &VersionModel,
    index: usize,
    plan: &InstancePlan,
) {
    let at = format!("instance {} of {} on {cluster:?}", plan.name, version.version);
    // R2, R4.
    let requested = instance.level.unwrap_or(cluster.level);
    assert_eq!(plan.requested, requested, "{at}");
    assert_eq!(plan.level, version.ceiling.map_or(requested, |c| c.min(requested)), "{at}");
    assert_eq!(plan.namespace, instance_namespace(index, instance), "{at}");

    // Every emitted object is valid, namespaced to the instance and labelled.
    for object in plan.objects() {
        let problems = validate_object(object);
        assert!(problems.is_empty(), "{at}: kix emitted an object the API server refuses: {problems:?}\n{object:?}");
        assert_eq!(object["metadata"]["namespace"].as_str(), Some(plan.namespace.as_str()), "{at}");
        assert_eq!(object["metadata"]["labels"]["app.kubernetes.io/instance"].as_str(), Some(plan.name.as_str()));
        assert_eq!(object["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str(), Some("kix"));
        assert_eq!(object["metadata"]["labels"]["kix.dev/instance"].as_str(), Some(plan.name.as_str()));
    }
    let input_count: usize = documents(version).iter().map(Vec::len).sum();
    let derived_pdbs = plan.workloads.iter().filter(|w| w.derived_pdb).count();
    assert_eq!(plan.objects().len(), input_count + derived_pdbs, "{at}: objects are the inputs plus derived PDBs");
    assert_eq!(plan.workloads.len(), version.workloads.len(), "{at}");

    let pdbs: Vec<&Value> = plan.objects().iter().filter(|o| o["kind"] == "PodDisruptionBudget").collect();
    for (w, workload) in version.workloads.iter().enumerate() {
        let name = workload_name(w);
        let workload_plan = plan.workloads.iter().find(|p| p.name == name).expect("workload plan");
        let at = format!("{at}, workload {name} {workload:?}");
        check_workload(cluster, plan, version, w, workload, workload_plan, &pdbs, &at);
    }
}

fn check_workload(
    cluster: &ClusterModel,
    plan: &InstancePlan,
    version: &VersionModel,
    index: usize,
    workload: &WorkloadModel,
    workload_plan: &WorkloadPlan,
    pdbs: &[&Value],
    at: &str,
) {
    let name = workload_name(index);
    // Levels: never above the package ceiling, the workload ceiling or the declared substrate (R3-R5).
    let level = workload_plan.level;
    assert!(version.ceiling.is_none_or(|c| level <= c), "{at}: level {level} above the package ceiling");
    assert!(workload.ceiling.is_none_or(|c| level <= c), "{at}: level {level} above the workload ceiling");
    assert!(level <= cluster.substrate_cap(), "{at}: level {level} above the declared substrate");
    assert_eq!(level, workload.ceiling.map_or(plan.level, |c| c.min(plan.level)), "{at}");
    // R6.
    let replicas = workload.replicas_at(level);
    assert_eq!(workload_plan.replicas, replicas, "{at}");

    let object = plan
        .objects()
        .iter()
        .find(|o| name_of(o) == name && o["kind"] != "PodDisruptionBudget")
        .unwrap_or_else(|| panic!("{at}: workload missing from the output"));
    assert_eq!(object["spec"]["replicas"].as_u64(), Some(u64::from(replicas)), "{at}");
    let spread = object["spec"]["template"]["spec"].get("topologySpreadConstraints");
    let labels = template_labels(&name);
    let selecting: Vec<&&Value> = pdbs.iter().filter(|p| selects(p, &labels)).collect();
    let derived_pdb = pdbs.iter().find(|p| name_of(p) == name);
    assert_eq!(derived_pdb.is_some(), workload_plan.derived_pdb, "{at}");

    // R11: explicit placement is never touched and gets no derived PDB.
    if let Some(explicit) = explicit_constraints(&name, workload) {
        assert!(workload_plan.explicit_placement, "{at}");
        assert_eq!(spread, Some(&explicit), "{at}: explicit placement was changed");
        assert!(derived_pdb.is_none(), "{at}: PDB derived for explicit placement");
        return;
    }
    // No placement on a one-replica workload, or on a confirmed single node.
    if replicas < 2 || cluster.single_node() {
        assert_eq!(spread, None, "{at}: spread on a workload that must have none");
        assert!(derived_pdb.is_none(), "{at}: PDB derived for a workload that must have none");
        assert!(workload_plan.spreads.is_empty(), "{at}");
        return;
    }

    // R10: exactly one budget selects its pods, and it selects no other workload's pods.
    assert_eq!(selecting.len(), 1, "{at}: {} PDBs select the workload's pods", selecting.len());
    let budget = selecting[0];
    for other in 0..version.workloads.len() {
        if other != index {
            assert!(!selects(budget, &template_labels(&workload_name(other))), "{at}: its PDB selects w{other}");
        }
    }
    assert_eq!(workload.shipped_pdb.is_none(), workload_plan.derived_pdb, "{at}");
    if workload_plan.derived_pdb {
        assert_eq!(budget["spec"]["maxUnavailable"].as_u64(), Some(1), "{at}");
        assert_eq!(budget["spec"]["selector"], object["spec"]["selector"], "{at}");
        let policy = workload.policy.unwrap_or(match workload.kind {
            Kind::Deployment => "AlwaysAllow",
            Kind::StatefulSet => "IfHealthyBudget",
        });
        assert_eq!(budget["spec"]["unhealthyPodEvictionPolicy"].as_str(), Some(policy), "{at}");
    }

    // R9: one constraint per key the cluster has, the level's key the only hard one.
    let constraints = spread.and_then(Value::as_sequence).unwrap_or_else(|| panic!("{at}: no derived spread"));
    let keys: Vec<&str> = constraints.iter().map(|c| c["topologyKey"].as_str().unwrap()).collect();
    let cluster_keys = cluster.keys(level);
    for key in &keys {
        assert!(cluster_keys.contains(key), "{at}: constraint on `{key}`, which the cluster does not have");
    }
    assert_eq!(keys, cluster_keys, "{at}");
    let hard: Vec<&str> = constraints
        .iter()
        .filter(|c| c["whenUnsatisfiable"] == "DoNotSchedule")
        .map(|c| c["topologyKey"].as_str().unwrap())
        .collect();
    assert!(hard.len() <= 1, "{at}: {} DoNotSchedule constraints", hard.len());
    let expected_hard = match level {
        Level::Node => Some(cluster.node_key()),
        Level::Zone => Some(cluster.zone_key()),
        Level::None | Level::Pod => None,
    };
    assert_eq!(hard.first().copied(), expected_hard, "{at}: hard key for level {level}");
    assert_eq!(workload_plan.hard_key(), expected_hard, "{at}");
    let uses_hash = workload.selector_style == 3;
    for constraint in constraints {
        assert_eq!(constraint["maxSkew"].as_u64(), Some(1), "{at}");
        assert_eq!(constraint["labelSelector"], object["spec"]["selector"], "{at}");
        assert!(constraint.get("minDomains").is_none(), "{at}");
        let hash = constraint.get("matchLabelKeys").is_some();
        assert_eq!(hash, workload.kind == Kind::Deployment && !uses_hash, "{at}: matchLabelKeys");
    }
}

/// Everything a compile produced, in a form that does not depend on the order kix documents
/// (files in name order, documents in file order, instances in cluster-file order).
fn canonical(compiled: &Compiled) -> Canonical {
    let mut codes: Vec<String> = compiled.diagnostics.iter().map(|d| format!("{:?}", d.code)).collect();
    codes.sort();
    let mut instances = BTreeMap::new();
    for cluster in &compiled.clusters {
        for instance in &cluster.instances {
            let mut objects: Vec<String> = instance.objects().iter().map(kix_yaml::emit::to_string).collect();
            objects.sort();
            let mut workloads: Vec<String> = instance.workloads.iter().map(|w| format!("{w:?}")).collect();
            workloads.sort();
            let header =
                format!("{} {} {} {}", instance.namespace, instance.package, instance.requested, instance.level);
            objects.push(header);
            instances.insert((cluster.name.clone(), instance.name.clone()), (objects, workloads));
        }
    }
    (codes, instances)
}

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

/// The shipped examples and every fixture pass kix's own validation (the property
/// tests cover generated trees; these are the trees people read first).
#[test]
fn shipped_examples_and_fixtures_pass_validation() {
    let examples = tempfile::tempdir().unwrap();
    crate::support::copy_examples(examples.path());
    let mut roots = vec![examples.path().to_path_buf()];
    roots.extend(crate::support::fixture_cases());
    for root in roots {
        let compiled = compile(&Selection { root: root.clone(), ..Selection::default() });
        assert!(!compiled.diagnostics.has_errors(), "{}: {:#?}", root.display(), messages(&compiled));
        let objects: Vec<&Value> =
            compiled.clusters.iter().flat_map(|c| &c.instances).flat_map(|i| i.objects()).collect();
        assert!(!objects.is_empty(), "{}: nothing compiled", root.display());
        for object in objects {
            let problems = validate_object(object);
            assert!(
                problems.is_empty(),
                "{}: {} {}: {problems:?}",
                root.display(),
                object["kind"].as_str().unwrap_or(""),
                name_of(object)
            );
        }
    }
}
