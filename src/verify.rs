//! `kix verify`: prove each compiled workload meets its resolved level by
//! running the scheduler model's scenarios on the cluster's nodes.
//!
//! For every cluster, the nodes come from `--state` (a snapshot, with its
//! existing pods) or from the cluster file's `[[nodePools]]`; a cluster with
//! neither is reported as not verified (it is not a failure: there is nothing
//! to simulate on), unless `--require-nodes` or the cluster file's
//! `[verify] requireNodes = true` asks for nodes (K0624). Every instance is checked on a fresh copy of those nodes.
//! This is the edge between the compiler and the scheduler model: it turns
//! plans and inventory nodes into the model's typed inputs.

mod domain_keys;
mod findings;
mod junit;
mod report_html;

pub use domain_keys::MissingKey;
pub use junit::junit;
pub use report_html::render_html;

use crate::compile::{Compiled, Selection, UsageError, cluster_names, compile_keeping_model};
use crate::derive::{ClusterPlan, InstancePlan, Unplaced};
use crate::load::package::Survive;
use crate::resolve::Acknowledged;
use crate::resolve::inventory::InventoryNode;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use kix_sim::objects::{Node, Resources};
use kix_sim::{FindingKind, State, WorkloadLevel, WorkloadVerdict, verify_workloads};
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
    /// Where to write the HTML report (`--report`), when the verify got as far as reports.
    pub report: Option<PathBuf>,
}

/// What a verify run found: the compile's findings, and the reports when it got that far.
#[derive(Debug)]
pub struct Verified {
    pub diagnostics: Diagnostics,
    /// `None` when the compile or the snapshot failed (see the diagnostics).
    pub reports: Option<Vec<ClusterReport>>,
    /// What stops the cluster's operators although the workloads pass (the text report's `notes:`).
    pub notes: Vec<crate::formats::Note>,
}

impl Verified {
    /// Workloads that do not meet their level.
    pub fn failures(&self) -> usize {
        self.reports.iter().flatten().map(ClusterReport::failures).sum()
    }
}

/// Compiles the selection, reads the snapshot if any, and verifies every instance.
pub fn run(request: &VerifyRequest) -> Result<Verified, UsageError> {
    let (model, Compiled { clusters, mut diagnostics }) = compile_keeping_model(&request.selection);
    if diagnostics.has_errors() {
        return Ok(Verified { diagnostics, reports: None, notes: Vec::new() });
    }
    if request.state.is_some() && clusters.len() != 1 {
        return Err(UsageError::StateNeedsOneCluster { clusters: cluster_names(&clusters) });
    }
    let snapshot = match request.state.as_deref().map(kix_sim::read_state).transpose() {
        Ok(snapshot) => snapshot,
        Err(problems) => {
            diagnostics.extend(Diagnostics::from(problems));
            return Ok(Verified { diagnostics, reports: None, notes: Vec::new() });
        }
    };
    let reports = verify(&clusters, snapshot.as_ref());
    // K0610: the report carries each missing key; the warning also goes with the diagnostics,
    // located at the snapshot or the cluster file whose nodes lack it.
    for (cluster, report) in clusters.iter().zip(&reports) {
        let file = request.state.clone().unwrap_or_else(|| cluster.file.clone());
        for missing in &report.missing_keys {
            diagnostics.push(
                Diagnostic::new(Code::VerifyKeyMissing, missing.message(&cluster.name))
                    .at(Location::file(file.clone()))
                    .about(&Subject { cluster: Some(cluster.name.clone().into()), ..Subject::default() }),
            );
        }
    }
    // K0624: a cluster with nothing to simulate on, where the request or its cluster file requires nodes.
    for report in reports.iter().filter(|r| r.nodes_from == NodesFrom::None) {
        let Some(cluster) = model.clusters.iter().find(|c| c.name == report.cluster) else { continue };
        let (at, why) = match (&cluster.require_nodes, request.require_nodes) {
            (Some(at), _) => (at.clone(), "its cluster file sets `[verify] requireNodes = true`"),
            (None, true) => (Location::file(cluster.source.path()), "--require-nodes is given"),
            (None, false) => continue,
        };
        diagnostics.push(
            Diagnostic::new(
                Code::VerifyNoNodes,
                format!(
                    "cluster `{}` has no [[nodePools]] and no --state snapshot, so nothing is verified, and {why}",
                    cluster.name
                ),
            )
            .at(at)
            .about(&cluster.subject())
            .help("declare the cluster's [[nodePools]] (`kix init cluster --from-state nodes.yaml` writes them), or pass --state"),
        );
    }
    // Each finding of a failed scenario is an error diagnostic, located in the workload's manifest.
    let mut notes = Vec::new();
    for report in &reports {
        let Some(cluster) = model.clusters.iter().find(|c| c.name == report.cluster) else { continue };
        for instance_report in &report.instances {
            let Some(instance) = cluster.instances.iter().find(|i| i.name == instance_report.instance) else {
                continue;
            };
            for verdict in &instance_report.workloads {
                findings::diagnostics(cluster, instance, verdict, &mut diagnostics);
                findings::notes(cluster, instance, verdict, &mut notes);
            }
        }
    }
    // Verify's own warnings are acknowledged (`allow`) and denied (`--deny-warnings`) like the compile's.
    let acknowledged = Acknowledged::of(&model);
    diagnostics.settle(|d| acknowledged.contains(d), request.selection.deny_warnings);
    if let Some(path) = &request.report
        && let Err(error) = write_report(path, &render_html(&reports))
    {
        diagnostics.push(
            Diagnostic::new(Code::WriteFailed, format!("cannot write the report {}: {error}", path.display()))
                .at(Location::file(path.clone())),
        );
    }
    Ok(Verified { diagnostics, reports: Some(reports), notes })
}

/// Writes the report beside its place and renames it there, so a reader never sees half a page.
fn write_report(path: &std::path::Path, html: &str) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut staged = std::ffi::OsString::from(".");
    staged.push(name);
    staged.push(".kix-tmp");
    let staged = path.with_file_name(staged);
    std::fs::write(&staged, html)?;
    std::fs::rename(&staged, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&staged);
    })
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
    pub instance: String,
    pub namespace: String,
    pub workloads: Vec<WorkloadVerdict>,
    /// Custom resources that run pods kix does not place (K0435): not simulated, so not verified.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<Unplaced>,
}

impl ClusterReport {
    pub fn failures(&self) -> usize {
        self.instances.iter().flat_map(|i| &i.workloads).filter(|w| !w.meets_level).count()
    }
}

/// Verifies every instance of every cluster.
pub fn verify(clusters: &[ClusterPlan], snapshot: Option<&State>) -> Vec<ClusterReport> {
    let mut reports = Vec::new();
    for cluster in clusters {
        let (state, nodes_from) = match snapshot {
            Some(state) => (Some(state.clone()), NodesFrom::State),
            None if cluster.nodes.is_empty() => (None, NodesFrom::None),
            None => {
                let nodes = cluster.nodes.iter().map(simulated_node).collect();
                (Some(State { nodes, ..State::default() }), NodesFrom::Inventory)
            }
        };
        let nodes = state.as_ref().map_or(0, |s| s.nodes.len());
        let mut topology: Vec<NodeReport> =
            state.iter().flat_map(|s| &s.nodes).map(|n| NodeReport::of(n, &cluster.domains.zone)).collect();
        topology.sort_by(|a, b| a.name.cmp(&b.name));
        let instances = match &state {
            None => Vec::new(),
            Some(state) => cluster.instances.iter().map(|instance| verify_instance(cluster, instance, state)).collect(),
        };
        // One instance order in every report: by name, as build's summary and capacity list them.
        let mut instances: Vec<InstanceReport> = instances;
        instances.sort_by(|a, b| a.instance.cmp(&b.instance));
        let missing_keys = state
            .as_ref()
            .map(|s| domain_keys::missing_keys(&cluster.domains, &s.nodes, &cluster.instances))
            .unwrap_or_default();
        reports.push(ClusterReport {
            cluster: cluster.name.clone(),
            nodes_from,
            nodes,
            node_key: cluster.domains.node.clone(),
            zone_key: cluster.domains.zone.clone(),
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
    }
}

fn verify_instance(cluster: &ClusterPlan, instance: &InstancePlan, state: &State) -> InstanceReport {
    // A member of a group across instances is simulated with the other members (their pods and the
    // group's budget, which the first member emits) and judged on the group's pods.
    let members: Vec<&InstancePlan> = match &instance.across {
        Some(group) => cluster.instances.iter().filter(|i| i.across.as_ref() == Some(group)).collect(),
        None => vec![instance],
    };
    let objects = members.iter().flat_map(|m| m.objects());
    let request = kix_sim::ScenarioRequest {
        workloads: members
            .iter()
            .flat_map(|m| &m.workloads)
            // A workload scaled to zero runs no pods: there is nothing to simulate.
            .filter(|w| !w.scaled_to_zero)
            .map(|w| WorkloadLevel {
                kind: w.kind,
                namespace: instance.namespace.clone(),
                name: w.name.clone(),
                level: w.level,
                // Under an autoscaler the level must hold at its minimum, not at spec.replicas.
                min_replicas: w.autoscaler.as_ref().map(|a| a.min_replicas),
                group: w.group.clone(),
                survive: match w.survive {
                    Survive::One => kix_sim::Survive::One,
                    Survive::Majority => kix_sim::Survive::Majority,
                },
            })
            .collect(),
        node_key: cluster.domains.node.clone(),
        zone_key: cluster.domains.zone.clone(),
        kinds: kix_kube::operators::KindTable::exactly(
            members.iter().flat_map(|m| &m.workloads).filter_map(|w| w.kind.profile()).collect(),
        ),
    };
    let budgets: Vec<kix_yaml::Value> = members.iter().flat_map(|m| operator_budgets(m)).collect();
    let objects: Vec<kix_yaml::Value> = objects.cloned().chain(budgets).collect();
    InstanceReport {
        instance: instance.name.clone(),
        namespace: instance.namespace.clone(),
        workloads: (verify_workloads(state, &objects, &request).into_iter())
            .filter(|v| instance.workloads.iter().any(|w| w.kind == v.kind && w.name == v.name))
            .collect(),
        unverified: instance.unplaced.clone(),
    }
}

/// The budgets operators make for their own pods (a custom resource's profile says whether,
/// `kix_kube::operators`), as verify simulates them: one per distinct selector of the instance's
/// workloads, `minAvailable` all but one of the pods it selects (Strimzi's custom-controller budget;
/// CloudNativePG's two budgets, over the primary and over the replicas, as one that allows one pod down).
/// Not emitted: the operator makes them.
fn operator_budgets(instance: &InstancePlan) -> Vec<kix_yaml::Value> {
    let mut selectors: std::collections::BTreeMap<&kix_kube::selector::Labels, u32> = Default::default();
    for w in instance.workloads.iter().filter(|w| !w.scaled_to_zero) {
        if let Some(labels) = &w.operator_budget {
            *selectors.entry(labels).or_insert(0) += w.autoscaler.as_ref().map_or(w.replicas, |a| a.min_replicas);
        }
    }
    selectors
        .into_iter()
        .enumerate()
        .map(|(index, (labels, pods))| {
            let mut labels_text = String::new();
            for (key, value) in labels {
                let _ = writeln!(labels_text, "      {key}: {value:?}");
            }
            let text = format!(
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: kix-operator-budget-{index}\n  \
                 namespace: {}\nspec:\n  minAvailable: {}\n  selector:\n    matchLabels:\n{labels_text}",
                instance.namespace,
                pods.saturating_sub(1)
            );
            kix_yaml::from_str(&text).expect("a budget kix writes")
        })
        .collect()
}

/// The text report: one table per cluster, then every finding of a failed scenario.
pub fn render_text(reports: &[ClusterReport], width: crate::table::Width) -> String {
    let mut out = String::new();
    for report in reports {
        let _ = match report.nodes_from {
            NodesFrom::None => writeln!(
                out,
                "cluster {}: not verified (no [[nodePools]] in clusters/{}.toml and no --state)\n",
                report.cluster, report.cluster
            ),
            from => writeln!(
                out,
                "cluster {} ({} node{} from {})",
                report.cluster,
                report.nodes,
                if report.nodes == 1 { "" } else { "s" },
                from.as_str()
            ),
        };
        if report.nodes_from == NodesFrom::None {
            continue;
        }
        let mut rows = vec![[
            "INSTANCE".to_string(),
            "WORKLOAD".into(),
            "LEVEL".into(),
            "REPLICAS".into(),
            "WORST-CASE RUNNING".into(),
            "REPLACEMENTS".into(),
            "VERDICT".into(),
        ]];
        let mut findings = Vec::new();
        let mut notes = Vec::new();
        for instance in &report.instances {
            for w in &instance.workloads {
                rows.push(verdict_row(&instance.instance, w));
                for scenario in &w.scenarios {
                    for finding in &scenario.findings {
                        let (list, code) = match findings::role_in(finding, scenario) {
                            findings::Role::Failure(code) if !scenario.pass => (&mut findings, code.id()),
                            findings::Role::Blocker(code) => (&mut notes, code.id()),
                            _ if !scenario.pass => (&mut findings, "note"),
                            _ => continue,
                        };
                        list.push(format!(
                            "  {}/{} {}/{}: {}: [{code}] {finding}",
                            report.cluster, instance.instance, w.kind, w.name, scenario.scenario
                        ));
                    }
                }
            }
        }
        let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
        out.push_str(&crate::table::render(&rows, width));
        let unverified: Vec<String> = report
            .instances
            .iter()
            .flat_map(|i| {
                i.unverified.iter().map(move |u| format!("  {}/{} {}/{}", report.cluster, i.instance, u.kind, u.name))
            })
            .collect();
        if !unverified.is_empty() {
            let _ = writeln!(
                out,
                "not verified (custom resources whose pods an operator runs; kix does not place them, K0435):"
            );
            for line in unverified {
                let _ = writeln!(out, "{line}");
            }
        }
        if !findings.is_empty() {
            let _ = writeln!(out, "findings:");
            for finding in findings {
                let _ = writeln!(out, "{finding}");
            }
        }
        if !notes.is_empty() {
            let _ = writeln!(out, "notes (the workloads pass; these stop the cluster's operators):");
            for note in notes {
                let _ = writeln!(out, "{note}");
            }
        }
        if !report.missing_keys.is_empty() {
            let _ = writeln!(out, "warnings:");
            for missing in &report.missing_keys {
                let _ = writeln!(out, "  {}", missing.message(&report.cluster));
            }
        }
        out.push('\n');
    }
    let failures: usize = reports.iter().map(ClusterReport::failures).sum();
    let verified: usize = reports.iter().flat_map(|r| &r.instances).map(|i| i.workloads.len()).sum();
    let unverified: usize = reports.iter().flat_map(|r| &r.instances).map(|i| i.unverified.len()).sum();
    let _ = writeln!(
        out,
        "kix verify: {} checked, {} not meet their level{}{}",
        crate::words::plural(verified, "workload"),
        crate::words::counted(failures, "does", "do"),
        if failures == 0 { "" } else { " (see findings)" },
        if unverified == 0 {
            String::new()
        } else {
            format!(", {} not verified", crate::words::plural(unverified, "custom resource"))
        }
    );
    out
}

/// One row of a cluster's table: instance, workload, level, replicas, worst case, replacements, verdict.
fn verdict_row(instance: &str, w: &WorkloadVerdict) -> [String; 7] {
    let losses = w.domain_losses.len();
    let pending: usize = w.domain_losses.iter().map(|l| l.pending.len()).sum();
    [
        instance.to_string(),
        format!("{}/{}", w.kind, w.name),
        w.level.to_string(),
        w.replicas.to_string(),
        w.worst_case_running.map_or("-".into(), |n| {
            let of = w.group_replicas.unwrap_or(w.replicas);
            let group = w.group.as_ref().map_or(String::new(), |g| format!(" (group {g})"));
            match w.majority {
                Some(majority) => format!("{n} of {of}, majority {majority}{group}"),
                None => format!("{n} of {of}{group}"),
            }
        }),
        if losses == 0 { "-".into() } else { replacements_cell(w, pending) },
        if w.meets_level {
            format!("meets {}", w.level)
        } else {
            let failed: Vec<&str> = w.scenarios.iter().filter(|s| !s.pass).map(|s| s.scenario.as_str()).collect();
            format!("FAILS {} ({})", w.level, failed.join(", "))
        },
    ]
}

/// The REPLACEMENTS cell, per domain loss: how many losses, how many replacements each scheduled
/// (`3 losses, 1 each`), after how long (the longest wait for the taint eviction over the losses), and
/// how many stayed Pending or are never replaced, in all.
fn replacements_cell(w: &WorkloadVerdict, pending: usize) -> String {
    // A StatefulSet replaces nothing on a lost node: its pods stay Terminating until force-deleted
    // (the findings and JSON say so per pod); the table says why there is nothing to count.
    let waits = w.scenarios.iter().flat_map(|s| &s.findings).any(|f| f.kind == FindingKind::StaysTerminating);
    if !w.kind.deployment_like() && w.replacements_scheduled == 0 && pending == 0 && waits {
        return "none (force-delete needed)".to_string();
    }
    let losses = w.domain_losses.len();
    let each: Vec<usize> = w.domain_losses.iter().map(|l| l.replacements.len()).collect();
    let (least, most) = (each.iter().min().copied().unwrap_or(0), each.iter().max().copied().unwrap_or(0));
    let mut cell = if losses == 1 {
        format!("1 loss, {most} scheduled")
    } else if least == most {
        format!("{losses} losses, {most} each")
    } else {
        format!("{losses} losses, {least}-{most} each")
    };
    if let Some(gap) = w.domain_losses.iter().filter_map(|l| l.replaced_after_seconds).max().filter(|g| *g > 0) {
        let _ = write!(cell, ", after {gap}s");
    }
    if pending > 0 {
        let _ = write!(cell, ", {pending} pending in all");
    }
    let never: usize = w.domain_losses.iter().map(|l| l.not_replaced.len()).sum();
    if never > 0 {
        let _ = write!(cell, ", {never} never replaced in all");
    }
    cell
}
