//! The records of [`super::journal`]: one change to a [`super::Cluster`] and what it replaced, the
//! checkpoint a scenario rolls back to, the key that makes nodes interchangeable (a node class),
//! what the tie-break ranks nodes by ([`Rank`]), and a reference cycle's result ([`Cycle`]). Plain data, so the cluster that holds them
//! and the journal and grouped path that use them share this file without importing each other.

use crate::framework::Rejection;
use crate::objects::{Node, Pod, Resources};
use crate::plugins::Scores;
use kix_kube::labels::HOSTNAME;
use kix_kube::selector::Selector;
use kix_kube::taints::Taint;
use std::collections::BTreeMap;

/// What makes nodes interchangeable: labels but the hostname, whether it has one, taints,
/// cordon and allocatable (see [`super`]).
pub(super) type ClassKey = (Vec<(String, String)>, bool, Vec<Taint>, bool, Resources);

pub(super) fn class_key(node: &Node) -> ClassKey {
    let labels = node.labels.iter().filter(|(k, _)| *k != HOSTNAME).map(|(k, v)| (k.clone(), v.clone())).collect();
    (labels, node.labels.contains_key(HOSTNAME), node.taints.clone(), node.unschedulable, node.allocatable)
}

/// One recorded change and what it replaced.
#[derive(Clone, Debug)]
pub(super) enum Change {
    /// A pod was bound into this slot (the last one).
    Bound { slot: usize },
    /// A bound pod was deleted from its slot, at this position of its node's pod list.
    Removed { slot: usize, node: usize, position: usize, pod: Pod },
    /// A node's taints and cordon before they changed.
    Node { node: usize, taints: Vec<Taint>, unschedulable: bool },
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
pub(super) fn failure_text(nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    if nodes == 0 {
        return "no nodes available to schedule pods".to_string();
    }
    let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    format!("0/{nodes} nodes are available: {}.", parts.join(", "))
}
