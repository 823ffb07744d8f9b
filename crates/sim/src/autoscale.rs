//! The cluster autoscaler as `kix verify` models it (issue 39): a pod left Pending gets a node from
//! the first node group whose next node, added, lets the scheduler place it.
//!
//! The cluster-autoscaler (kubernetes/autoscaler `cluster-autoscaler/core/scaleup`) simulates a
//! pending pod's scheduler filters on a template node of each node group and grows a group whose
//! template fits, up to the group's maximum; with one node group per zone (the FAQ's way to keep zones
//! balanced, and what `maxNodesPerZone` declares) a group adds nodes only in its zone. kix adds the
//! group's next node (named and labelled as the pool's next node in that zone), runs the scheduler,
//! and keeps the node when the pod now places, on it or elsewhere; otherwise the node is taken away
//! again and the next group is tried. Groups are tried in the cluster file's pool order, then zone
//! order (the autoscaler's expander picks among fitting groups; kix's choice is the first). A group in
//! a zone the scenario has lost (its nodes tainted `node.kubernetes.io/unreachable`) adds nothing: the
//! cloud cannot provision there either. A node takes [`PROVISIONING_SECONDS`] to join: the pod waits
//! that long, which findings say.
//!
//! The nodes a group may add are in the cluster from the start, absent (`Node::absent`): no filter
//! admits them, no spread domain counts them, no message counts them; adding one is a journalled
//! change, undone with the scenario like a taint.

use super::cluster::Cluster;
use super::objects::Pod;
use super::verdict::NodeGroup;
use kix_kube::labels::TAINT_UNREACHABLE;

/// Seconds from a pod going Pending until the node added for it is Ready and the pod bound: the
/// autoscaler's 10 s scan, the cloud's instance start and the kubelet's registration, about two minutes
/// on the major clouds (stated, not measured: kix cannot know a cloud's figure).
pub const PROVISIONING_SECONDS: i64 = 120;

/// A node the autoscaler added, and the pod it was added for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Added {
    pub node: String,
    pub pool: String,
    pub zone: Option<String>,
    pub namespace: String,
    pub pod: String,
    /// The verified workload the pod is of (by index into the world's), set by the world.
    pub owner: Option<usize>,
}

/// Adds the first node group's next node that lets `select` place `pod`; returns the record and the
/// node `select` chose. Leaves `cluster` as it was when no group helps.
pub(super) fn scale_up(
    cluster: &mut Cluster,
    groups: &[NodeGroup],
    zone_key: &str,
    pod: &Pod,
    mut select: impl FnMut(&mut Cluster, &Pod) -> Option<String>,
) -> Option<(Added, String)> {
    for group in groups {
        let lost = group.zone.as_ref().is_some_and(|zone| {
            cluster.nodes().iter().any(|n| {
                !n.absent && n.labels.get(zone_key) == Some(zone) && n.taints.iter().any(|t| t.key == TAINT_UNREACHABLE)
            })
        });
        if lost {
            continue;
        }
        let Some(next) = group.nodes.iter().find(|n| cluster.node(n).is_some_and(|n| n.absent)).cloned() else {
            continue;
        };
        cluster.provision(&next, true);
        if let Some(chosen) = select(cluster, pod) {
            let added = Added {
                node: next,
                pool: group.pool.clone(),
                zone: group.zone.clone(),
                namespace: pod.namespace.clone(),
                pod: pod.name.clone(),
                owner: None,
            };
            return Some((added, chosen));
        }
        cluster.provision(&next, false);
    }
    None
}

impl Added {
    /// The finding's sentence: `the cluster autoscaler adds general-a-3 (pool general, zone a) for
    /// api-x: it waits 120 s for it`.
    pub fn sentence(&self, during: &str) -> String {
        let zone = self.zone.as_ref().map_or(String::new(), |z| format!(", zone {z}"));
        format!(
            "{during}: the cluster autoscaler adds {} (pool {}{zone}) for {}, which waits {PROVISIONING_SECONDS} s for it",
            self.node, self.pool, self.pod
        )
    }
}
