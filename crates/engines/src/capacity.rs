//! `kix capacity`: what each level costs and what is left after the failure it guards against (issue 22).
//!
//! Per cluster, instance and workload: one pod's requests as the scheduler counts them
//! (`kix_kube::requests`, upstream `PodRequests`); for each level the replica count a build at that
//! level would give, from resolve's own functions with the level overridden
//! ([`kix_compiler::resolve::workload_at`]: the ceilings and the autoscaler floor applied), and the requests
//! that many pods take; the instance's cost one level up and down; totals per instance and cluster
//! against the inventory's allocatable; at the resolved level, the worst single domain loss as
//! `kix verify` simulates it on the inventory (pods left, the surviving fraction, whether the
//! replacements fit and, where they do not, the nodes short for each lost domain); and the pods a
//! rolling update surges.
//!
//! Nothing here decides a level or a count: the counts come from resolve, the placement after a loss
//! from the scheduler model, the split of an even spread from [`split`], which the sizing findings
//! ([`sizing`], K0460, K0461) share.

pub use kix_compiler::sizing::cost::{Cost, instance_requests, requests_text, workload_requests};
use kix_compiler::sizing::split;

use crate::verify::{ClusterReport, NodesFrom, VerifiedWorkload};
use kix_compiler::compile::{CompiledCluster, CompiledInstance, Selection, compile_clusters};
use kix_compiler::derive::WorkloadPlan;
use kix_compiler::resolve::{self, Instance};
use kix_diag::Diagnostics;
use kix_kube::int_or_percent::IntOrPercent;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_kube::requests::Requests;
use kix_sim::WorkloadVerdict;
use serde::Serialize;
use std::collections::BTreeMap;

/// `kix capacity`: which clusters (the selection) and, optionally, one instance.
#[derive(Clone, Debug)]
pub struct CapacityRequest {
    pub selection: Selection,
    pub instance: Option<String>,
}

/// Why `kix capacity` printed no report.
#[derive(Debug)]
pub enum CapacityError {
    /// The compile failed (its diagnostics).
    Compile(Diagnostics),
    /// `--instance` names no instance of the selected clusters.
    Unknown(String),
}

/// The report: what scripts read (`schemas/capacity.schema.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub clusters: Vec<ClusterCapacity>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClusterCapacity {
    pub name: String,
    /// Where the nodes the worst loss is simulated on come from (`inventory` or `none`).
    pub nodes_from: &'static str,
    /// The inventory's allocatable, summed over its nodes (absent without an inventory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<Cost>,
    /// What the cluster can grow to (issue 39): `allocatable` with every node the pools'
    /// `maxNodesPerZone` lets the cluster autoscaler add (absent when no pool autoscales).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub can_grow_to: Option<Cost>,
    /// What every instance takes at its resolved level.
    pub requests: Cost,
    /// `requests` over `allocatable`, per resource (absent without an inventory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<Share>,
    pub instances: Vec<InstanceCapacity>,
}

#[derive(Clone, Debug, Serialize)]
pub struct InstanceCapacity {
    pub name: String,
    pub package: String,
    /// The instance's resolved level.
    pub level: Level,
    /// What its workloads take at their resolved levels.
    pub requests: Cost,
    /// What requesting one level higher (lower) adds (takes away), after the ceilings; absent at the top
    /// (bottom).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up: Option<Delta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub down: Option<Delta>,
    pub workloads: Vec<WorkloadCapacity>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WorkloadCapacity {
    pub kind: WorkloadKind,
    pub name: String,
    /// The resolved level.
    pub level: Level,
    /// One pod's requests.
    pub pod: Resources,
    /// For each level a build would run it at (`none`, `pod`, `node`, `zone`): its pods and their requests.
    pub levels: BTreeMap<Level, Cost>,
    /// At the resolved level, the worst single domain loss; absent below level pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_worst_loss: Option<AfterLoss>,
    /// The extra pods a rolling update runs at once (maxSurge) and their requests; absent for kinds
    /// that do not surge (a StatefulSet replaces pods in place).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surge: Option<Cost>,
}

/// Requests in canonical units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Resources {
    pub cpu_millicores: i64,
    pub memory_bytes: i64,
}

/// What one level up or down changes for an instance.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Delta {
    pub level: Level,
    pub replicas: i64,
    pub cpu_millicores: i64,
    pub memory_bytes: i64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Share {
    pub cpu: f64,
    pub memory: f64,
}

/// The worst single domain loss at the resolved level.
#[derive(Clone, Debug, Serialize)]
pub struct AfterLoss {
    pub pods_left: u64,
    /// `pods_left` over the pods before the loss (a group's: its members'), to three places.
    pub surviving_fraction: f64,
    /// Whether the surviving nodes hold every replacement, placed by the scheduler model as `kix verify`
    /// places them; without an inventory there is nothing to place on and this is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacements_fit: Option<bool>,
    /// For each domain whose loss leaves replacements Pending: the nodes (of the inventory's largest
    /// node) short to hold them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes_short: BTreeMap<String, u64>,
}

impl Delta {
    /// What `to` costs more than `from`, at `level`.
    fn between(from: Cost, to: Cost, level: Level) -> Delta {
        Delta {
            level,
            replicas: i64::try_from(to.replicas).unwrap_or(i64::MAX) - i64::try_from(from.replicas).unwrap_or(0),
            cpu_millicores: to.cpu_millicores.saturating_sub(from.cpu_millicores),
            memory_bytes: to.memory_bytes.saturating_sub(from.memory_bytes),
        }
    }
}

/// Compiles the selection, simulates the worst loss on each cluster's inventory and builds the report.
pub fn capacity(request: &CapacityRequest) -> Result<Report, CapacityError> {
    let compiled = compile_clusters(&request.selection);
    if compiled.diagnostics.has_errors() {
        return Err(CapacityError::Compile(compiled.diagnostics));
    }
    let clusters = &compiled.clusters;
    // `--instance`: the name the user typed (the one comparison of names capacity makes).
    if let Some(wanted) = &request.instance
        && !clusters.iter().any(|c| c.instances().any(|i| &i.resolved.name == wanted))
    {
        let names: Vec<&str> = clusters.iter().map(|c| c.resolved.name.as_str()).collect();
        return Err(CapacityError::Unknown(format!(
            "no instance `{wanted}` in the selected clusters ({})",
            names.join(", ")
        )));
    }
    let reports = crate::verify::verify(clusters, None);
    let clusters = (clusters.iter().zip(&reports))
        .map(|(cluster, report)| cluster_capacity(cluster, report, request.instance.as_deref()))
        .collect();
    Ok(Report { clusters })
}

fn cluster_capacity(cluster: &CompiledCluster, report: &ClusterReport, only: Option<&str>) -> ClusterCapacity {
    let plan = &cluster.plan;
    let largest = plan.nodes.iter().map(|n| (n.milli_cpu, n.memory)).max();
    let mut instances = Vec::new();
    // `--instance`, as the user typed it.
    for instance in cluster.instances().filter(|i| only.is_none_or(|o| i.resolved.name == o)) {
        let verdicts = report.instances.iter().find(|r| r.index == instance.index).map(|r| r.workloads.as_slice());
        let zones = cluster.resolved.substrate.zones.as_ref().map(Vec::len);
        instances.push(instance_capacity(&cluster.resolved, instance, verdicts.unwrap_or_default(), zones, largest));
    }
    instances.sort_by(|a, b| a.name.cmp(&b.name));
    let requests = instances.iter().map(|i| i.requests).fold(Cost::default(), Cost::plus);
    let allocatable = (!plan.nodes.is_empty()).then(|| {
        plan.nodes.iter().fold(Cost::default(), |sum, n| {
            sum.plus(Cost { replicas: 0, cpu_millicores: n.milli_cpu, memory_bytes: n.memory })
        })
    });
    let share = allocatable.map(|a| Share {
        cpu: fraction(requests.cpu_millicores, a.cpu_millicores),
        memory: fraction(requests.memory_bytes, a.memory_bytes),
    });
    ClusterCapacity {
        name: plan.name.clone(),
        nodes_from: if report.nodes_from == NodesFrom::Inventory { "inventory" } else { "none" },
        allocatable: allocatable.map(|a| Cost { replicas: 0, ..a }),
        can_grow_to: allocatable.filter(|_| !cluster.resolved.node_groups.is_empty()).map(|a| {
            (cluster.resolved.node_groups.iter().flat_map(|g| &g.nodes)).fold(Cost { replicas: 0, ..a }, |sum, n| {
                sum.plus(Cost { replicas: 0, cpu_millicores: n.milli_cpu, memory_bytes: n.memory })
            })
        }),
        requests,
        share,
        instances,
    }
}

fn instance_capacity(
    cluster: &resolve::Cluster,
    instance: CompiledInstance<'_>,
    verdicts: &[VerifiedWorkload],
    zones: Option<usize>,
    largest: Option<(i64, i64)>,
) -> InstanceCapacity {
    let mut workloads = Vec::new();
    let mut at_level: BTreeMap<Level, Cost> = BTreeMap::new();
    for (index, compiled) in instance.workloads().enumerate() {
        let (resolved, workload) = (compiled.resolved, compiled.plan);
        let pod = workload.pod_requests.unwrap_or_default();
        let levels: BTreeMap<Level, Cost> = Level::ALL
            .iter()
            .map(|&level| {
                let (_, replicas) = resolve::workload_at(&cluster.name, instance.resolved, resolved, level);
                let replicas = if workload.scaled_to_zero { 0 } else { u64::from(replicas) };
                (level, Cost::of(pod, replicas))
            })
            .collect();
        for (level, cost) in &levels {
            let sum = at_level.entry(*level).or_default();
            *sum = sum.plus(*cost);
        }
        let verdict = verdicts.iter().find(|v| v.plan == index).map(|v| &v.verdict);
        workloads.push(WorkloadCapacity {
            kind: workload.kind,
            name: workload.name.clone(),
            level: workload.level,
            pod: Resources { cpu_millicores: pod.milli_cpu, memory_bytes: pod.memory },
            levels,
            after_worst_loss: after_worst_loss(workload, verdict, zones, pod, largest),
            surge: surge(instance.resolved, resolved, workload, pod),
        });
    }
    let requests = workloads.iter().map(|w| w.levels[&w.level]).fold(Cost::default(), Cost::plus);
    let level = instance.resolved.level.value;
    let here = at_level.get(&level).copied().unwrap_or_default();
    let position = Level::ALL.iter().position(|l| *l == level).unwrap_or(0);
    let neighbour =
        |l: Option<&Level>| l.map(|l| Delta::between(here, at_level.get(l).copied().unwrap_or_default(), *l));
    InstanceCapacity {
        name: instance.resolved.name.clone(),
        package: instance.resolved.package.name.clone(),
        level,
        requests,
        up: neighbour(Level::ALL.get(position + 1)),
        down: neighbour(position.checked_sub(1).and_then(|i| Level::ALL.get(i))),
        workloads,
    }
}

/// The worst single domain loss: simulated on the inventory where there is one (`kix verify`'s domain
/// losses), else the arithmetic of an even spread over the declared zones (level zone) or of one pod or
/// node lost (levels pod and node: at most one pod per domain under the hard spread).
fn after_worst_loss(
    workload: &WorkloadPlan,
    verdict: Option<&WorkloadVerdict>,
    zones: Option<usize>,
    pod: Requests,
    largest: Option<(i64, i64)>,
) -> Option<AfterLoss> {
    if workload.level < Level::Pod || workload.scaled_to_zero {
        return None;
    }
    let replicas = workload.replicas as usize;
    if let Some(verdict) = verdict {
        let running = u64::try_from(verdict.worst_case_running?).unwrap_or(0);
        let of = u64::try_from(verdict.group_replicas.unwrap_or(verdict.replicas)).unwrap_or(0);
        let mut nodes_short = BTreeMap::new();
        for loss in verdict.domain_losses.iter().filter(|l| !l.pending.is_empty()) {
            nodes_short.insert(loss.value.clone(), nodes_for(loss.pending.len() as u64, pod, largest));
        }
        return Some(AfterLoss {
            pods_left: running,
            surviving_fraction: rounded(running, of),
            replacements_fit: Some(verdict.domain_losses.iter().all(|l| l.pending.is_empty())),
            nodes_short,
        });
    }
    let lost = match (workload.level, zones) {
        (Level::Zone, Some(zones)) if zones > 0 => split::worst_zone_loss(replicas, zones),
        _ => 1.min(replicas),
    };
    let left = (replicas - lost) as u64;
    Some(AfterLoss {
        pods_left: left,
        surviving_fraction: rounded(left, replicas as u64),
        replacements_fit: None,
        nodes_short: BTreeMap::new(),
    })
}

/// The nodes of the largest inventory node's size that `pending` pods need (at least one).
fn nodes_for(pending: u64, pod: Requests, largest: Option<(i64, i64)>) -> u64 {
    let Some((cpu, memory)) = largest else { return 0 };
    let fits = |have: i64, need: i64| if need <= 0 { u64::MAX } else { u64::try_from(have / need).unwrap_or(0) };
    let per_node = fits(cpu, pod.milli_cpu).min(fits(memory, pod.memory)).max(1);
    pending.div_ceil(per_node).max(1)
}

/// The pods a rolling update adds at once: maxSurge of the replicas, rounded up (Deployment and Rollout
/// semantics, `deployment/util.ResolveFenceposts`); a StatefulSet does not surge.
fn surge(
    instance: &Instance,
    resolved: &resolve::InstanceWorkload,
    workload: &WorkloadPlan,
    pod: Requests,
) -> Option<Cost> {
    if !workload.kind.deployment_like() || workload.scaled_to_zero {
        return None;
    }
    let view = &instance.package.workloads[resolved.workload].view;
    let strategy = view.strategy().ok()?;
    if strategy.recreate {
        return None;
    }
    let surge: &IntOrPercent = &strategy.max_surge;
    let pods = u64::try_from(surge.scaled_value(i64::from(workload.replicas), true)).unwrap_or(0);
    Some(Cost::of(pod, pods))
}

fn fraction(part: i64, whole: i64) -> f64 {
    if whole <= 0 { 0.0 } else { (part as f64 / whole as f64 * 1000.0).round() / 1000.0 }
}

fn rounded(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { (part as f64 / whole as f64 * 1000.0).round() / 1000.0 }
}
