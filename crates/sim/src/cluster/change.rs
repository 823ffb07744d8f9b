//! The records of [`super::journal`]: one change to a [`super::Cluster`] and what it replaced, the
//! checkpoint a scenario rolls back to, the key that makes nodes interchangeable (a node class),
//! what the tie-break ranks nodes by ([`Rank`]), a reference cycle's result ([`Cycle`]), the
//! group-key slots and the InterPodAffinity [`Plan`] that [`super::affinity`] builds. Plain data
//! (the plan's filter and score read only its own fields), so the cluster that holds them and the
//! journal, grouped path and affinity counts that use them share this file without importing each
//! other.

use crate::framework::Rejection;
use crate::interpod::{self, REASON_AFFINITY, REASON_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY};
use crate::objects::{Node, Pod, Resources};
use crate::plugins::Scores;
use kix_kube::labels::HOSTNAME;
use kix_kube::selector::Selector;
use kix_kube::taints::Taint;
use std::collections::BTreeMap;

/// What makes nodes interchangeable: labels but the hostname, whether it has one, taints,
/// cordon and allocatable (see [`super`]).
pub(super) type ClassKey = (Vec<(String, String)>, bool, Vec<Taint>, bool, Resources, bool);

pub(super) fn class_key(node: &Node) -> ClassKey {
    let labels = node.labels.iter().filter(|(k, _)| *k != HOSTNAME).map(|(k, v)| (k.clone(), v.clone())).collect();
    (labels, node.labels.contains_key(HOSTNAME), node.taints.clone(), node.unschedulable, node.allocatable, node.absent)
}

/// One recorded change and what it replaced.
#[derive(Clone, Debug)]
pub(super) enum Change {
    /// A pod was bound into this slot (the last one).
    Bound { slot: usize },
    /// A bound pod was deleted from its slot, at this position of its node's pod list.
    Removed { slot: usize, node: usize, position: usize, pod: Pod },
    /// A node's taints, cordon and presence before they changed.
    Node { node: usize, taints: Vec<Taint>, unschedulable: bool, absent: bool },
    /// A namespace the model first learnt of from a bound pod.
    Namespace(String),
}

/// The state to roll back to: the journal's length when it was taken.
#[derive(Debug)]
#[must_use = "a checkpoint must be rolled back"]
pub struct Checkpoint(pub(super) usize);

/// What [`super::Cluster::select_ranked`] breaks ties by, among the nodes with the best total score:
/// the highest rank, then the lowest name.
pub enum Rank<'a> {
    /// No rank: the lowest name.
    None,
    /// A value that every node of a class shares (it reads no name or hostname).
    Class(&'a dyn Fn(&Node) -> i64),
    /// The pods of `namespace` that `selector` matches (terminating ones included) in the node's
    /// `kubernetes.io/hostname` domain; 0 for a node without the label. Taken only when every
    /// hostname is unique, so the domain is the node.
    Hostname { namespace: &'a str, selector: &'a Selector },
}

/// One node's outcome in a cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Feasible(Scores),
    Rejected(Rejection),
}

/// The full result of one reference scheduling cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// Every node by name with its outcome.
    pub nodes: BTreeMap<String, Outcome>,
    /// The chosen node: highest total score, lowest name on ties.
    pub selected: Option<String>,
}

impl Cycle {
    /// Distinct rejection reasons with how many nodes gave each (for Pending messages).
    pub fn reasons(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for outcome in self.nodes.values() {
            if let Outcome::Rejected(r) = outcome {
                *out.entry(r.message()).or_insert(0) += 1;
            }
        }
        out
    }

    /// The scheduler's FailedScheduling message: `0/N nodes are available: 3 reason, ...`.
    pub fn failure_message(&self) -> String {
        failure_text(self.nodes.len(), &self.reasons())
    }
}

/// `0/N nodes are available: 3 reason, ...` for `nodes` nodes with these rejection reasons.
/// Nodes the cluster autoscaler has not added (issue 39) are no nodes of the cluster: not counted.
pub(super) fn failure_text(nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    let absent = reasons.get(crate::plugins::REASON_ABSENT).copied().unwrap_or(0);
    let nodes = nodes - absent;
    if nodes == 0 {
        return "no nodes available to schedule pods".to_string();
    }
    let parts: Vec<String> = reasons
        .iter()
        .filter(|(r, _)| r.as_str() != crate::plugins::REASON_ABSENT)
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    format!("0/{nodes} nodes are available: {}.", parts.join(", "))
}

/// How many per-node counts a group key holds: the hostname spread constraint's tally
/// ([`HOST_SLOT`]), the tie-break rank's ([`RANK_SLOT`]) and InterPodAffinity's four on hostname
/// domains (see [`super::affinity`]).
pub(super) const SLOTS: usize = 6;
pub(super) const HOST_SLOT: usize = 0;
pub(super) const RANK_SLOT: usize = 1;

/// A per-node count a tally or an owned-term count gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Source {
    Tally(usize),
    Owned(usize),
}

/// One count of a group key: the weighted sum of some per-node counts (empty: always 0).
pub(super) type Slot = Vec<(Source, i64)>;

/// The slot of the pods matching all the incoming pod's required affinity terms on the node.
pub(super) const AFFINITY: usize = 2;
/// Of the pods matching one of its hostname required anti-affinity terms (summed over terms).
pub(super) const ANTI: usize = 3;
/// Of existing pods' hostname required anti-affinity terms that match the incoming pod.
pub(super) const EXISTING_ANTI: usize = 4;
/// Of the score's hostname pairs, weighted.
pub(super) const SCORE: usize = 5;

/// What an existing pod's term does to an incoming pod it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Role {
    /// Required affinity: scores `hardPodAffinityWeight`.
    Required,
    /// Required anti-affinity: filters (`existingAntiAffinityCounts`).
    RequiredAnti,
    /// Preferred affinity (+weight) and anti-affinity (-weight): score.
    Preferred(i64),
}

/// InterPodAffinity for one incoming pod, from counts: per class what the pairs of keys other than
/// the hostname decide, and the hostname pairs as slots of per-node counts.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// [`SLOTS`] slots; the first two (spread and rank) are empty here.
    pub(super) slots: Vec<Slot>,
    /// The node lacks a required affinity term's key (per class).
    pub(super) lacks_key: Vec<bool>,
    /// Every required affinity term on a key other than the hostname has matching pods in the
    /// node's pair.
    pub(super) affinity_ok: Vec<bool>,
    /// Some required anti-affinity term on another key has matching pods in the node's pair.
    pub(super) anti: Vec<bool>,
    /// Some existing pod's required anti-affinity term on another key matches, in the node's pair.
    pub(super) existing_anti: Vec<bool>,
    /// The score of the pairs of other keys.
    pub(super) score: Vec<i64>,
    /// The class's nodes carry a hostname label.
    pub(super) labelled: Vec<bool>,
    /// A required affinity term is on the hostname.
    pub(super) host_required: bool,
    /// `satisfyPodAffinity`'s first pod of a group: no pod anywhere matches all required terms
    /// (`len(affinityCounts) == 0`) and the pod matches them itself.
    pub(super) first_of_group: bool,
}

impl Plan {
    /// `Filter` for a node of class `ci` whose slots hold `h`: affinity, anti-affinity, then
    /// existing pods' anti-affinity, as [`interpod::Prepared::filter`].
    pub(super) fn filter(&self, ci: usize, h: &[i64; SLOTS]) -> Result<(), Rejection> {
        if self.lacks_key[ci] {
            return Err(interpod::reject(REASON_AFFINITY, true));
        }
        let pods_exist = self.affinity_ok[ci] && (!self.host_required || h[AFFINITY] > 0);
        if !pods_exist && !self.first_of_group {
            return Err(interpod::reject(REASON_AFFINITY, true));
        }
        if self.anti[ci] || (self.labelled[ci] && h[ANTI] > 0) {
            return Err(interpod::reject(REASON_ANTI_AFFINITY, false));
        }
        if self.existing_anti[ci] || (self.labelled[ci] && h[EXISTING_ANTI] > 0) {
            return Err(interpod::reject(REASON_EXISTING_ANTI_AFFINITY, false));
        }
        Ok(())
    }

    /// `Score` before normalisation for a node of class `ci` whose slots hold `h`.
    pub(super) fn raw_score(&self, ci: usize, h: &[i64; SLOTS]) -> i64 {
        self.score[ci] + if self.labelled[ci] { h[SCORE] } else { 0 }
    }
}

/// InterPodAffinity for one cycle: from every bound pod (the reference) or from counts.
pub(super) enum InterPod {
    Reference(interpod::Prepared),
    Counted(Plan),
}

impl InterPod {
    /// `NormalizeScore` over the feasible nodes' raw scores.
    pub(super) fn normalise(&self, raw: &[i64]) -> Vec<i64> {
        match self {
            InterPod::Reference(prepared) => prepared.normalise(raw),
            InterPod::Counted(_) => interpod::normalise(raw),
        }
    }
}
