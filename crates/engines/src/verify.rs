//! `kix verify`: prove each compiled workload meets its resolved level by
//! running the scheduler model's scenarios on the cluster's nodes.
//!
//! For every cluster, the nodes come from `--state` (a snapshot, with its
//! existing pods) or from the cluster file's `[[nodePools]]`; a cluster with
//! neither is reported as not verified (it is not a failure: there is nothing
//! to simulate on), unless `--require-nodes` or the cluster file's
//! `[verify] requireNodes = true` asks for nodes (K0624). Every instance of a cluster is placed
//! on those nodes together, and every scenario runs on that one world (issue 38).
//! This is the edge between the compiler and the scheduler model: it turns
//! plans and inventory nodes into the model's typed inputs.

mod domain_keys;
pub mod findings;

pub use domain_keys::MissingKey;
pub use findings::Note;

use kix_compiler::compile::{
    Compiled, CompiledCluster, CompiledInstance, Selection, UsageError, cluster_names, compile_clusters,
};
use kix_compiler::derive::{InstancePlan, Unplaced};
use kix_compiler::resolve::inventory::InventoryNode;
use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use kix_sim::objects::{Node, Resources};
use kix_sim::{State, WorkloadLevel, WorkloadVerdict, verify_workloads};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `kix verify`: what to compile and, optionally, the snapshot to verify on.
#[derive(Clone, Debug)]
pub struct VerifyRequest {
    pub selection: Selection,
    /// A snapshot of one cluster (`kubectl get nodes,pods -A -o yaml`), instead of its inventory.
    pub state: Option<PathBuf>,
    /// `--require-nodes`: a cluster with neither inventory nor snapshot fails (K0624), as if every cluster
    /// file said `[verify] requireNodes = true`.
    pub require_nodes: bool,
}

/// What a verify run found: the compile's findings, and the reports when it got that far.
#[derive(Debug)]
pub struct Verified {
    pub diagnostics: Diagnostics,
    /// `None` when the compile or the snapshot failed (see the diagnostics).
    pub reports: Option<Vec<ClusterReport>>,
    /// What stops the cluster's operators although the workloads pass (the text report's `notes:`).
    pub notes: Vec<Note>,
}

impl Verified {
    /// Workloads that do not meet their level.
    pub fn failures(&self) -> usize {
        self.reports.iter().flatten().map(ClusterReport::failures).sum()
    }
}

/// Compiles the selection, reads the snapshot if any, and verifies every instance.
pub fn run(request: &VerifyRequest) -> Result<Verified, UsageError> {
    let Compiled { clusters, mut diagnostics, acknowledged } = compile_clusters(&request.selection);
    if diagnostics.has_errors() {
        return Ok(Verified { diagnostics, reports: None, notes: Vec::new() });
    }
    if request.state.is_some() && clusters.len() != 1 {
        return Err(UsageError::StateNeedsOneCluster { clusters: cluster_names(clusters.iter().map(|c| &c.plan)) });
    }
    let snapshot = match request.state.as_deref().map(kix_sim::read_state).transpose() {
        Ok(snapshot) => snapshot,
        Err(problems) => {
            diagnostics.extend(Diagnostics::from(problems));
            return Ok(Verified { diagnostics, reports: None, notes: Vec::new() });
        }
    };
    let reports = verify(&clusters, snapshot.as_ref());
    let mut notes = Vec::new();
    for (cluster, report) in clusters.iter().zip(&reports) {
        let resolved = &cluster.resolved;
        // K0610: the report carries each missing key; the warning also goes with the diagnostics,
        // located at the snapshot or the cluster file whose nodes lack it.
        let file = request.state.clone().unwrap_or_else(|| cluster.plan.file.clone());
        for missing in &report.missing_keys {
            diagnostics.push(
                Diagnostic::new(Code::VerifyKeyMissing, missing.message(&resolved.name))
                    .at(Location::file(file.clone()))
                    .about(&resolved.subject()),
            );
        }
        // K0624: a cluster with nothing to simulate on, where the request or its cluster file requires nodes.
        if report.nodes_from == NodesFrom::None {
            let required = match (&resolved.require_nodes, request.require_nodes) {
                (Some(at), _) => Some((at.clone(), "its cluster file sets `[verify] requireNodes = true`")),
                (None, true) => Some((Location::file(resolved.source.path()), "--require-nodes is given")),
                (None, false) => None,
            };
            if let Some((at, why)) = required {
                diagnostics.push(
                    Diagnostic::new(
                        Code::VerifyNoNodes,
                        format!(
                            "cluster `{}` has no [[nodePools]] and no --state snapshot, so nothing is verified, and {why}",
                            resolved.name
                        ),
                    )
                    .at(at)
                    .about(&resolved.subject())
                    .help("declare the cluster's [[nodePools]] (`kix init cluster --from-state nodes.yaml` writes them), or pass --state"),
                );
            }
        }
        // Each finding of a failed scenario is an error diagnostic, located in the workload's manifest.
        for instance_report in &report.instances {
            let instance = cluster.instance(instance_report.index);
            for verified in &instance_report.workloads {
                let workload = instance.workload(&instance.plan.workloads[verified.plan]);
                findings::diagnostics(resolved, instance.resolved, workload.workload, verified, &mut diagnostics);
                findings::notes(resolved, instance.resolved, workload.workload, verified, &mut notes);
            }
        }
    }
    // Verify's own warnings are acknowledged (`allow`) and denied (`--deny-warnings`) like the compile's.
    diagnostics.settle(|d| acknowledged.contains(d), request.selection.deny_warnings);
    Ok(Verified { diagnostics, reports: Some(reports), notes })
}

/// Where a cluster's simulated nodes came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodesFrom {
    /// The cluster file's `[[nodePools]]`.
    Inventory,
    /// The `--state` snapshot.
    State,
    /// Neither: the cluster is not verified.
    None,
}

impl NodesFrom {
    pub fn as_str(self) -> &'static str {
        match self {
            NodesFrom::Inventory => "inventory",
            NodesFrom::State => "state",
            NodesFrom::None => "none",
        }
    }
}

/// The verdicts for one cluster.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterReport {
    pub cluster: String,
    pub nodes_from: NodesFrom,
    pub nodes: usize,
    /// The failure-domain keys the scenarios failed nodes and zones by.
    pub node_key: String,
    pub zone_key: String,
    /// The nodes simulated on, by name: what the report draws (the pods on them are each
    /// workload's `placement`; every instance is placed on its own copy of these nodes).
    pub topology: Vec<NodeReport>,
    pub instances: Vec<InstanceReport>,
    /// Failure-domain keys some or all of the nodes lack (K0610).
    pub missing_keys: Vec<MissingKey>,
}

/// One simulated node, as the report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct NodeReport {
    pub name: String,
    /// Its zone key's value; none when the node lacks the key (K0610).
    pub zone: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// `key=value:Effect`, as `kubectl taint` writes them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    pub allocatable: Allocatable,
}

/// A node's allocatable resources.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Allocatable {
    pub milli_cpu: i64,
    pub memory_bytes: i64,
    pub pods: i64,
}

impl NodeReport {
    fn of(node: &Node, zone_key: &str) -> NodeReport {
        let taint = |t: &kix_kube::taints::Taint| match t.value.as_str() {
            "" => format!("{}:{}", t.key, t.effect),
            value => format!("{}={value}:{}", t.key, t.effect),
        };
        NodeReport {
            name: node.name.clone(),
            zone: node.labels.get(zone_key).cloned(),
            labels: node.labels.clone(),
            taints: node.taints.iter().map(taint).collect(),
            unschedulable: node.unschedulable,
            allocatable: Allocatable {
                milli_cpu: node.allocatable.milli_cpu,
                memory_bytes: node.allocatable.memory,
                pods: node.allocatable.pods,
            },
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct InstanceReport {
    /// Its index among the compiled cluster's instances ([`CompiledCluster::instance`]).
    #[serde(skip)]
    pub index: usize,
    pub instance: String,
    pub namespace: String,
    pub workloads: Vec<VerifiedWorkload>,
    /// Custom resources that run pods kix does not place (K0435): not simulated, so not verified.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<Unplaced>,
}

/// One workload's verdict, with the plan it judges: its index among its instance's workload plans.
#[derive(Clone, Debug, Serialize)]
pub struct VerifiedWorkload {
    #[serde(skip)]
    pub plan: usize,
    #[serde(flatten)]
    pub verdict: WorkloadVerdict,
}

impl std::ops::Deref for VerifiedWorkload {
    type Target = WorkloadVerdict;
    fn deref(&self) -> &WorkloadVerdict {
        &self.verdict
    }
}

impl ClusterReport {
    pub fn failures(&self) -> usize {
        self.instances.iter().flat_map(|i| &i.workloads).filter(|w| !w.meets_level).count()
    }
}

/// Verifies every instance of every cluster.
pub fn verify(clusters: &[CompiledCluster], snapshot: Option<&State>) -> Vec<ClusterReport> {
    let mut reports = Vec::new();
    for cluster in clusters {
        let plan = &cluster.plan;
        let (state, nodes_from) = match snapshot {
            Some(state) => (Some(state.clone()), NodesFrom::State),
            None if plan.nodes.is_empty() => (None, NodesFrom::None),
            None => {
                let nodes = plan.nodes.iter().map(simulated_node).collect();
                (Some(State { nodes, ..State::default() }), NodesFrom::Inventory)
            }
        };
        let nodes = state.as_ref().map_or(0, |s| s.nodes.len());
        let mut topology: Vec<NodeReport> =
            state.iter().flat_map(|s| &s.nodes).map(|n| NodeReport::of(n, &plan.domains.zone)).collect();
        topology.sort_by(|a, b| a.name.cmp(&b.name));
        let mut instances: Vec<InstanceReport> = match &state {
            None => Vec::new(),
            // The nodes the cluster autoscaler may add join the inventory absent (issue 39): not in the
            // topology or the key check, which describe the nodes that run.
            Some(state) if nodes_from == NodesFrom::Inventory && !cluster.resolved.node_groups.is_empty() => {
                let mut state = state.clone();
                for node in cluster.resolved.node_groups.iter().flat_map(|g| &g.nodes) {
                    state.nodes.push(Node { absent: true, ..simulated_node(node) });
                }
                verify_cluster_world(cluster, &state)
            }
            Some(state) => verify_cluster_world(cluster, state),
        };
        // One instance order in every report: by name, as build's summary and capacity list them.
        instances.sort_by(|a, b| a.instance.cmp(&b.instance));
        let missing_keys = state
            .as_ref()
            .map(|s| domain_keys::missing_keys(&plan.domains, &s.nodes, &plan.instances))
            .unwrap_or_default();
        reports.push(ClusterReport {
            cluster: plan.name.clone(),
            nodes_from,
            nodes,
            node_key: plan.domains.node.clone(),
            zone_key: plan.domains.zone.clone(),
            topology,
            instances,
            missing_keys,
        });
    }
    reports
}

/// An inventory node as the scheduler model sees it.
fn simulated_node(node: &InventoryNode) -> Node {
    Node {
        name: node.name.clone(),
        labels: node.labels.clone(),
        taints: node.taints.clone(),
        unschedulable: false,
        allocatable: Resources { milli_cpu: node.milli_cpu, memory: node.memory, pods: node.pods },
        absent: false,
    }
}

/// Every compiled workload of the cluster placed together on its nodes (one world, issue 38): each
/// instance's objects in the cluster file's order, each instance's operator budgets after its objects,
/// the snapshot's other pods where they are bound. Every workload's scenarios run on that world, so a
/// workload's pods compete for room with every other instance's; the verdicts go to their instances.
fn verify_cluster_world(cluster: &CompiledCluster, state: &State) -> Vec<InstanceReport> {
    // A group across instances is judged on all its members' pods: one scope for all of them; an
    // instance's own groups are scoped to it.
    let across: Vec<&String> = {
        let mut names: Vec<&String> = cluster.instances().filter_map(|i| i.plan.across.as_ref()).collect();
        names.sort();
        names.dedup();
        names
    };
    let instances = cluster.plan.instances.len();
    let scope_of = |instance: CompiledInstance<'_>| match &instance.plan.across {
        Some(group) => instances + across.binary_search(&group).unwrap_or(0),
        None => instance.index,
    };
    // What the model is asked about, each with the instance and workload plan it comes from.
    let (asked, from): (Vec<WorkloadLevel>, Vec<(usize, usize)>) = cluster
        .instances()
        .flat_map(|i| i.plan.workloads.iter().enumerate().map(move |(w, workload)| (i, w, workload)))
        // A workload scaled to zero runs no pods: there is nothing to simulate.
        .filter(|(_, _, w)| !w.scaled_to_zero)
        .map(|(instance, index, w)| {
            let level = WorkloadLevel {
                kind: w.kind,
                namespace: instance.plan.namespace.clone(),
                name: w.name.clone(),
                level: w.level,
                // Under an autoscaler the level must hold at its minimum, not at spec.replicas.
                min_replicas: w.autoscaler.as_ref().map(|a| a.min_replicas),
                // From its maximum it runs the scale-down scenario (issue 39).
                max_replicas: w.autoscaler.as_ref().map(|a| a.max_replicas),
                group: w.group.clone(),
                group_scope: scope_of(instance),
                survive: w.survive,
            };
            (level, (instance.index, index))
        })
        .unzip();
    let request = kix_sim::ScenarioRequest {
        workloads: asked,
        node_key: cluster.plan.domains.node.clone(),
        zone_key: cluster.plan.domains.zone.clone(),
        kinds: kix_kube::operators::KindTable::exactly(
            cluster.plan.instances.iter().flat_map(|i| &i.workloads).filter_map(|w| w.kind.profile()).collect(),
        ),
        volumes: cluster.resolved.storage,
        node_groups: (cluster.resolved.node_groups.iter())
            .map(|g| kix_sim::NodeGroup {
                pool: g.pool.clone(),
                zone: g.zone.clone(),
                nodes: g.nodes.iter().map(|n| n.name.clone()).collect(),
            })
            .collect(),
    };
    let mut objects: Vec<kix_yaml::Value> = Vec::new();
    for instance in &cluster.plan.instances {
        objects.extend(instance.objects().iter().cloned());
        objects.extend(operator_budgets(instance));
    }
    let mut reports: Vec<InstanceReport> = cluster
        .instances()
        .map(|i| InstanceReport {
            index: i.index,
            instance: i.plan.name.clone(),
            namespace: i.plan.namespace.clone(),
            workloads: Vec::new(),
            unverified: i.plan.unplaced.clone(),
        })
        .collect();
    // The workloads that bring their own placement are verified alone too, each on its own copy of the
    // nodes: independent, so on every core.
    let verdicts: Vec<kix_sim::WorkloadVerdict> = verify_workloads(state, &objects, &request)
        .into_par_iter()
        .map(|verdict| {
            let (instance, plan) = from[verdict.request];
            let asked = &request.workloads[verdict.request];
            match alone_if_it_fails(cluster.instance(instance), plan, asked, state, &request) {
                Some(alone) => kix_sim::WorkloadVerdict { request: verdict.request, ..alone },
                None => verdict,
            }
        })
        .collect();
    for verdict in verdicts {
        let (instance, plan) = from[verdict.request];
        reports[instance].workloads.push(VerifiedWorkload { plan, verdict });
    }
    reports
}

/// A workload that brings its own placement (R11) at level node or zone has no DoNotSchedule
/// constraint kix derived on its level's key: where its pods land, and so whether a domain loss
/// leaves one running, rests on scoring, which the other instances' pods change. The shared placement
/// is one order of applying the cluster's instances; applying this one first puts it on nodes none of
/// the others hold yet. Such a workload is also verified alone on the nodes (its own object and the
/// budgets of its instance), and must meet its level both ways: its verdict alone, when that fails.
fn alone_if_it_fails(
    instance: CompiledInstance<'_>,
    plan: usize,
    asked: &WorkloadLevel,
    state: &State,
    shared: &kix_sim::ScenarioRequest,
) -> Option<kix_sim::WorkloadVerdict> {
    let workload = &instance.plan.workloads[plan];
    if !workload.explicit_placement || workload.level < kix_kube::level::Level::Node || workload.group.is_some() {
        return None;
    }
    let own = |object: &&kix_yaml::Value| {
        let text = |path: &[&str]| path.iter().try_fold(*object, |v, k| v.get(k)).and_then(kix_yaml::Value::as_str);
        text(&["kind"]) == Some("PodDisruptionBudget")
            || (text(&["kind"]) == Some(workload.kind.as_str()) && text(&["metadata", "name"]) == Some(&workload.name))
    };
    let objects: Vec<kix_yaml::Value> = instance.plan.objects().iter().filter(own).cloned().collect();
    let request = kix_sim::ScenarioRequest { workloads: vec![asked.clone()], ..shared.clone() };
    let alone = verify_workloads(state, &objects, &request).into_iter().next()?;
    (!alone.meets_level).then_some(alone)
}

/// The budgets operators make for their own pods (a custom resource's profile says whether,
/// `kix_kube::operators`), as verify simulates them: one per distinct selector of the instance's
/// workloads, `minAvailable` all but one of the pods it selects (Strimzi's custom-controller budget;
/// CloudNativePG's two budgets, over the primary and over the replicas, as one that allows one pod down),
/// each named as the operator names it (`kix_kube::operators::operator_budget_names`: the Cluster's
/// name for CloudNativePG's, `<kafka>-kafka` for Strimzi's), so findings name the budget the cluster
/// shows. Not emitted: the operator makes them.
fn operator_budgets(instance: &InstancePlan) -> Vec<kix_yaml::Value> {
    let mut selectors: std::collections::BTreeMap<&kix_kube::selector::Labels, (String, u32)> = Default::default();
    for w in instance.workloads.iter().filter(|w| !w.scaled_to_zero) {
        if let Some(labels) = &w.operator_budget {
            let name = || match w.kind.profile() {
                Some(profile) => kix_kube::operators::operator_budget_names(profile, &w.name, labels).remove(0),
                None => w.name.clone(),
            };
            let entry = selectors.entry(labels).or_insert_with(|| (name(), 0));
            entry.1 += w.autoscaler.as_ref().map_or(w.replicas, |a| a.min_replicas);
        }
    }
    selectors
        .into_iter()
        .map(|(labels, (name, pods))| {
            let mut labels_text = String::new();
            for (key, value) in labels {
                let _ = writeln!(labels_text, "      {key}: {value:?}");
            }
            let text = format!(
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {name:?}\n  \
                 namespace: {}\nspec:\n  minAvailable: {}\n  selector:\n    matchLabels:\n{labels_text}",
                instance.namespace,
                pods.saturating_sub(1)
            );
            kix_yaml::from_str(&text).expect("a budget kix writes")
        })
        .collect()
}
