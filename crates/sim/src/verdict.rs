//! What verify is asked and what it finds: the request (each workload with the level it must
//! meet), the scenarios, and each workload's verdict with every scenario's result. The types sit
//! apart from the engine ([`super::scenarios`]) and the scenario files (`domain_loss`, `voluntary`,
//! `drain`) that fill them, so those files and the engine do not import each other.

use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use serde::Serialize;
use std::collections::BTreeMap;

/// One workload to verify and the level it was compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadLevel {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    /// The minimum of the autoscaler that owns the workload's `spec.replicas`: verified at this
    /// many replicas instead of `spec.replicas` (an HPA or ScaledObject may scale down to it).
    pub min_replicas: Option<u32>,
}

/// What to verify: per-workload levels and the cluster's failure-domain keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyRequest {
    pub workloads: Vec<WorkloadLevel>,
    /// The node failure-domain key (usually `kubernetes.io/hostname`).
    pub node_key: String,
    /// The zone failure-domain key (usually `topology.kubernetes.io/zone`).
    pub zone_key: String,
}

/// The scenarios `kix verify` runs, in the order it runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    Rollout,
    /// Spread constraints whose selector counts one pod.
    Selectors,
    DomainLoss,
    TieBreak,
    RollingUpdate,
    Drain,
}

impl Scenario {
    /// The name reports use (`domain-loss`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::Rollout => "rollout",
            Scenario::Selectors => "selectors",
            Scenario::DomainLoss => "domain-loss",
            Scenario::TieBreak => "tie-break",
            Scenario::RollingUpdate => "rolling-update",
            Scenario::Drain => "drain",
        }
    }
}

impl std::fmt::Display for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one scenario for one workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioResult {
    pub scenario: Scenario,
    pub pass: bool,
    pub findings: Vec<String>,
}

/// One failed domain in scenario 2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DomainLoss {
    /// The zone, node or pod that failed, as reports show it (`zone eu-1a`).
    pub domain: String,
    /// Its label value (the zone or node name; the pod's name at level pod).
    #[serde(skip)]
    pub value: String,
    /// Replicas still running right after the failure.
    pub running: i64,
    /// Replicas the failure took.
    pub lost: i64,
    /// Replacement pod to the node it was scheduled on.
    pub replacements: BTreeMap<String, String>,
    /// Replacement pod to the scheduler's message, for those left Pending.
    pub pending: BTreeMap<String, String>,
    /// Seconds from the failure until the controller has recreated the last of the lost pods it
    /// replaces: the pods stay bound to the unreachable nodes for their
    /// `node.kubernetes.io/unreachable` tolerationSeconds (300 by default). None when no pod is
    /// replaced; 0 when the pods are deleted at once (a pod lost at level pod).
    pub replaced_after_seconds: Option<i64>,
    /// Lost pods that get no replacement during the outage, with the reason (they tolerate
    /// `unreachable` forever, or are StatefulSet pods that stay Terminating).
    pub not_replaced: BTreeMap<String, String>,
}

/// The verdict on one workload (instance-agnostic: the caller adds cluster and instance).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadVerdict {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    pub replicas: i64,
    /// Fewest replicas left running under the loss of one domain of the level (None below pod).
    pub worst_case_running: Option<i64>,
    /// Replacements scheduled, summed over the domain losses, and per loss where they went.
    pub replacements_scheduled: i64,
    pub domain_losses: Vec<DomainLoss>,
    /// For each spread constraint (by topology key and whenUnsatisfiable), the pods its selector counts.
    pub selector_counts: BTreeMap<String, usize>,
    pub scenarios: Vec<ScenarioResult>,
    pub meets_level: bool,
}
