//! K0462: the cluster as it is shared (issue 38). Every compiled workload of a cluster runs on the same
//! nodes, so what they request together is held against what the cluster's inventory holds, and
//! against what is left after losing the worst domain of the cluster's level: a cluster whose
//! instances each fit alone can be full together, and then a drain's evicted pods, an update's surge
//! pods and a zone's replacements stay Pending (`kix verify` proves it on the shared world; this says
//! it at build, from arithmetic alone).
//!
//! Requests are each pod's as the scheduler counts them (`kix_kube::requests`, upstream
//! `PodRequests`) times its replicas at the resolved level (an autoscaler's minimum). The room is the
//! allocatable of the inventory's nodes without a NoSchedule or NoExecute taint: kix does not read
//! which taints a pod tolerates here, so a tainted pool (system, GPU) is room only for pods verify
//! places there. Figures in one unit each: millicores and bytes (shown as Gi/Mi).

use super::cost::{cpu, memory};
use crate::derive::ClusterPlan;
use crate::resolve::Cluster;
use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use kix_kube::level::Level;
use kix_kube::taints::Effect;
use std::collections::BTreeMap;

/// CPU and memory: what pods request, or what nodes hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Room {
    pub milli_cpu: i64,
    pub memory: i64,
}

impl Room {
    fn plus(self, other: Room) -> Room {
        Room { milli_cpu: self.milli_cpu + other.milli_cpu, memory: self.memory + other.memory }
    }

    fn minus(self, other: Room) -> Room {
        Room { milli_cpu: self.milli_cpu - other.milli_cpu, memory: self.memory - other.memory }
    }

    /// Whether `self` holds `wanted`, in both resources.
    fn holds(self, wanted: Room) -> bool {
        wanted.milli_cpu <= self.milli_cpu && wanted.memory <= self.memory
    }

    fn text(self) -> String {
        format!("{} cpu, {} memory", cpu(self.milli_cpu), memory(self.memory))
    }
}

/// What the cluster's compiled workloads request together, and the workloads whose requests are unknown.
pub fn requested(plan: &ClusterPlan) -> (Room, Vec<String>) {
    let mut total = Room::default();
    let mut unknown = Vec::new();
    for instance in &plan.instances {
        for w in instance.workloads.iter().filter(|w| !w.scaled_to_zero) {
            let replicas = w.autoscaler.as_ref().map_or(w.replicas, |a| a.min_replicas);
            match w.pod_requests {
                Some(pod) => {
                    let all = pod.times(u64::from(replicas));
                    total = total.plus(Room { milli_cpu: all.milli_cpu, memory: all.memory });
                }
                None => unknown.push(format!("{}/{} {}", instance.name, w.kind, w.name)),
            }
        }
    }
    (total, unknown)
}

/// The room of the inventory's nodes pods can use, and per domain of `key` (a zone, or a node) its share.
pub fn room(cluster: &Cluster, key: Option<&str>) -> (Room, BTreeMap<String, Room>) {
    let mut total = Room::default();
    let mut domains: BTreeMap<String, Room> = BTreeMap::new();
    let usable = |taints: &[kix_kube::taints::Taint]| {
        !taints.iter().any(|t| matches!(t.effect, Effect::NoSchedule | Effect::NoExecute))
    };
    for node in cluster.inventory.iter().filter(|n| usable(&n.taints)) {
        let room = Room { milli_cpu: node.milli_cpu, memory: node.memory };
        total = total.plus(room);
        if let Some(value) = key.and_then(|k| node.labels.get(k)) {
            let domain = domains.entry(value.clone()).or_default();
            *domain = domain.plus(room);
        }
    }
    (total, domains)
}

/// K0462 for one cluster with an inventory.
pub fn check(cluster: &Cluster, plan: &ClusterPlan, diagnostics: &mut Diagnostics) {
    if cluster.inventory.is_empty() {
        return;
    }
    let (wanted, unknown) = requested(plan);
    let level = cluster.level.value;
    let key = match level {
        Level::Zone => Some(cluster.domains.zone.as_str()),
        Level::Node => Some(cluster.domains.node.as_str()),
        _ => None,
    };
    let (room, domains) = room(cluster, key);
    let worst = domains.iter().max_by_key(|(_, r)| (r.milli_cpu, r.memory)).map(|(d, r)| (d.clone(), *r));
    let unknown_note = (!unknown.is_empty()).then(|| {
        let shown: Vec<&str> = unknown.iter().take(5).map(String::as_str).collect();
        let more = unknown.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!("requests unknown (not counted): {}{more}", shown.join(", "))
    });
    let (message, help) = if !room.holds(wanted) {
        (
            format!(
                "cluster `{}`: its compiled workloads request {} together, more than its nodes hold ({} allocatable \
                 on the nodes without a NoSchedule or NoExecute taint): pods stay Pending at rollout",
                cluster.name,
                wanted.text(),
                room.text()
            ),
            "add nodes to the cluster's [[nodePools]], run fewer replicas (a lower level), or acknowledge this with \
             allow = [\"K0462\"]",
        )
    } else if let Some((domain, lost)) = worst.filter(|(_, lost)| !room.minus(*lost).holds(wanted)) {
        let what = if level == Level::Zone { "zone" } else { "node" };
        (
            format!(
                "cluster `{}`: its compiled workloads request {} together; losing {what} `{domain}`, the worst domain of \
                 level `{level}`, leaves {} of the {} its nodes hold: the lost pods' replacements cannot all run",
                cluster.name,
                wanted.text(),
                room.minus(lost).text(),
                room.text()
            ),
            "add nodes to every zone (or node room), so that the cluster without its largest domain still holds what \
             its workloads request, or acknowledge this with allow = [\"K0462\"]",
        )
    } else {
        return;
    };
    let mut diagnostic = Diagnostic::new(Code::ClusterTooSmall, message)
        .at(Location::file(cluster.source.path()))
        .about(&cluster.subject())
        .help(help);
    if let Some(note) = unknown_note {
        diagnostic = diagnostic.note(note);
    }
    diagnostics.push(diagnostic);
}
