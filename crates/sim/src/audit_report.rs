//! What `kix audit` is asked and what it finds (issue 23): the model types of an audit of pods
//! as they are bound now, apart from [`super::audit`], the code that fills them.

use super::verdict::Survive;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_kube::selector::Labels;
use serde::Serialize;
use std::collections::BTreeMap;

/// One compiled workload to audit, with the level it was compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditWorkload {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    pub survive: Survive,
    /// The availability group it belongs to and the group's pod selector: the group's pods are
    /// judged together.
    pub group: Option<(String, Labels)>,
}

/// What to audit: the compiled workloads, their compiled objects, the failure-domain keys.
#[derive(Clone, Debug)]
pub struct AuditRequest {
    pub workloads: Vec<AuditWorkload>,
    pub node_key: String,
    pub zone_key: String,
}

/// The pods of a workload as they are now.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PodStates {
    /// Pods the workload's selector selects in its namespace (terminal pods are not read).
    pub total: usize,
    /// Bound, not terminating, Ready: what survives counts.
    pub running: usize,
    /// Not bound to a node.
    pub pending: Vec<String>,
    /// Bound, not terminating, but not Ready.
    pub not_ready: Vec<String>,
    /// `metadata.deletionTimestamp` set.
    pub terminating: Vec<String>,
}

/// One spread constraint of the compiled template against today's pods.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpreadAudit {
    pub topology_key: String,
    pub when_unsatisfiable: String,
    pub max_skew: i64,
    /// Matching pods per eligible domain (a domain with none is 0).
    pub counts: BTreeMap<String, i64>,
    /// The largest count minus the global minimum (0 below minDomains).
    pub skew: i64,
    /// A DoNotSchedule constraint whose skew is above maxSkew.
    pub violated: bool,
}

/// Whether the placement survives the loss of any one domain of the level's key, pods where they are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Survival {
    pub topology_key: String,
    /// The domain whose loss leaves the fewest running (ties: the first by name).
    pub worst_domain: String,
    /// Running pods (the group's, for a group) left after losing the worst domain.
    pub running_after: i64,
    /// Of how many (the compiled replicas, summed over a group).
    pub of: i64,
    /// The fewest running that keep the level: 1, or a majority.
    pub required: i64,
    pub survives: bool,
}

/// A simulated `kubectl rollout restart` (or apply) and what it ends in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Remedy {
    /// The commands to run.
    pub commands: Vec<String>,
    /// Pods per domain of the level's key once the simulated rollout is done.
    pub counts: BTreeMap<String, i64>,
    /// New pods the model could not place (Pending): the rollout stops there.
    pub pending: usize,
    /// The simulated end state against the level (None at levels without a domain).
    pub survival: Option<Survival>,
    pub survives: bool,
    /// When the rollout does not restore the level: what would.
    pub otherwise: Vec<String>,
}

/// The audit of one workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadAudit {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    pub survive: Survive,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The compiled replica count.
    pub replicas: i64,
    /// No pod of it is in the snapshot: nothing to audit (not a failure).
    pub absent: bool,
    pub pods: PodStates,
    pub spreads: Vec<SpreadAudit>,
    pub survival: Option<Survival>,
    /// Pods whose spec lacks a derived constraint (topology key and whenUnsatisfiable), by name.
    pub drift: Vec<String>,
    /// Budgets covering its pods whose disruptionsAllowed is 0: a drain stops there.
    pub blocked_budgets: Vec<String>,
    /// A hard constraint violated, or the worst domain loss leaves too few running.
    pub fails: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remedy: Option<Remedy>,
}
