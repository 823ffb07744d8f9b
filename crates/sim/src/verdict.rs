//! What verify is asked and what it finds: the request (each workload with the level it must
//! meet), the scenarios, and each workload's verdict with every scenario's result and its findings
//! (typed: what was found, what it is about, and the sentence reports show). The types sit
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
    /// That autoscaler's maximum: with it (above the minimum) verify runs the scale-down scenario,
    /// from the maximum back to the minimum (issue 39).
    pub max_replicas: Option<u32>,
    /// The availability group it is a member of (issue 17): the members of one group in one namespace
    /// are judged on their pods together.
    pub group: Option<String>,
    /// Which of the request's groups of that name and namespace it is in: the caller's numbering (kix
    /// gives each instance's own groups the instance's index, and a group across instances one number
    /// for all its members), so two instances sharing a namespace keep their groups apart.
    pub group_scope: usize,
    /// How many of its pods (or its group's) must keep running through a failure.
    pub survive: Survive,
}

/// What must keep running through one failure: one pod, or more than half of them (the one definition,
/// which kix.toml's `survive` is read into).
pub use kix_kube::level::Survive;

/// What the scenario engine is asked to verify: per-workload levels and the cluster's failure-domain
/// keys (the compiler's `kix verify` request, which names clusters and a snapshot, is another type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioRequest {
    pub workloads: Vec<WorkloadLevel>,
    /// The node failure-domain key (usually `kubernetes.io/hostname`).
    pub node_key: String,
    /// The zone failure-domain key (usually `topology.kubernetes.io/zone`).
    pub zone_key: String,
    /// The profiles custom resources among the objects are read with (issue 18): each one of these
    /// kinds is placed as a workload, its pods stamped from its profile.
    pub kinds: kix_kube::operators::KindTable,
    /// What the cluster's persistent volumes are bound to once provisioned (`[storage] topology`,
    /// issue 39): a pod with a claim returns to its volume's zone (or node) in every scenario.
    pub volumes: kix_kube::volumes::VolumeTopology,
    /// The node groups the cluster autoscaler may grow (issue 39); their nodes are in the state, absent.
    pub node_groups: Vec<NodeGroup>,
}

/// One pool's node group in one zone (`maxNodesPerZone`): the nodes the autoscaler may add, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGroup {
    pub pool: String,
    pub zone: Option<String>,
    pub nodes: Vec<String>,
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
    /// A workload under an autoscaler scaled from its maximum to its minimum (issue 39).
    ScaleDown,
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
            Scenario::ScaleDown => "scale-down",
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
    /// What the scenario found, failures and the facts behind a pass alike, in the order found.
    pub findings: Vec<Finding>,
    /// Where each of its steps (a domain lost, a node drained, the update) left the workload's pods.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

impl ScenarioResult {
    /// A result without steps (the scenario changes no placement, or stops before it does).
    pub fn new(scenario: Scenario, pass: bool, findings: Vec<Finding>) -> ScenarioResult {
        ScenarioResult { scenario, pass, findings, steps: Vec::new() }
    }
}

/// What one step of a scenario did to the verified workload's pods, as a change to the placement it
/// started from (the workload's `placement`, or with `adversarial` the tie-break's): what
/// `kix verify --report` draws before and after. A change, not the placement after, so a step costs
/// what it moved (a drain of one of 3,000 nodes records one pod, not 3,000). The placement after the
/// step is the one before without `gone` and with `placed`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Step {
    /// What happened, as reports show it: `zone eu-1a` (lost), `drain of n1`, `rolling update`.
    pub step: String,
    /// The nodes it failed or drained.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// It starts from its scenario's first step's outcome (its first step applied to `placement`): the
    /// tie-break's adversarial placement, or the pods a scale-down left.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub adversarial: bool,
    /// Its pods no longer bound where they were (lost, evicted, replaced), pod to the node they left.
    /// Pods that stay bound to a failed node (Terminating, or never evicted) are not gone.
    pub gone: BTreeMap<String, String>,
    /// Its pods bound where they were not before (replacements, new revisions), pod to node.
    pub placed: BTreeMap<String, String>,
    /// Its pods left Pending, pod to the scheduler's message.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pending: BTreeMap<String, String>,
    /// Seconds from the failure until the last replacement was created (a domain loss: the pods'
    /// `node.kubernetes.io/unreachable` tolerationSeconds); none when nothing was replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_after_seconds: Option<i64>,
}

impl Step {
    pub fn new(step: impl Into<String>, nodes: Vec<String>) -> Step {
        Step { step: step.into(), nodes, ..Step::default() }
    }

    /// The step from one placement to another (an update, the adversarial placement), pod to node.
    pub fn between(
        step: impl Into<String>,
        before: &BTreeMap<String, String>,
        after: &BTreeMap<String, String>,
    ) -> Step {
        let moved = |from: &BTreeMap<String, String>, to: &BTreeMap<String, String>| {
            from.iter().filter(|(pod, node)| to.get(*pod) != Some(*node)).map(|(p, n)| (p.clone(), n.clone())).collect()
        };
        Step { gone: moved(before, after), placed: moved(after, before), ..Step::new(step, Vec::new()) }
    }

    /// The placement after the step, from the one before it.
    pub fn apply(&self, before: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut after: BTreeMap<String, String> = before
            .iter()
            .filter(|(pod, _)| !self.gone.contains_key(*pod))
            .map(|(p, n)| (p.clone(), n.clone()))
            .collect();
        after.extend(self.placed.iter().map(|(p, n)| (p.clone(), n.clone())));
        after
    }
}

/// One finding of a scenario: what was found, what it is about, and the sentence reports show. Reports
/// (text and JSON) show the message alone: a finding serializes as its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    pub subject: FindingSubject,
    pub message: String,
}

impl Finding {
    pub fn new(kind: FindingKind, subject: FindingSubject, message: impl Into<String>) -> Finding {
        Finding { kind, subject, message: message.into() }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.message)
    }
}

/// What a scenario found (see [`super::scenarios`] for what each scenario promises).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    /// The model cannot take the workload (say, an autoscaler's minimum above what it simulates).
    NotSimulated,
    /// A pod of the rollout, or of a Recreate update, stays Pending.
    Pending,
    /// A spread constraint's selector counts a set of at most one pod: it balances nothing.
    LoneSelector,
    /// No replica is running, so every domain loss takes them all.
    NothingRunning,
    /// A lost pod tolerates `node.kubernetes.io/unreachable` forever: it is never replaced.
    NeverReplaced,
    /// A lost StatefulSet pod stays Terminating: no replacement until it is force-deleted.
    StaysTerminating,
    /// A replacement stays Pending although surviving nodes have room (fails level node and zone).
    ReplacementPending,
    /// A replacement stays Pending with no room left.
    NoRoomLeft,
    /// A domain's loss leaves no replica running.
    NoReplicaLeft,
    /// A domain's loss leaves no replica running on the placement with ties broken against the level,
    /// though it leaves one on kix's: the verdict rests on the scheduler's random choice.
    RestsOnTieBreak,
    /// With ties broken against the level, every loss still leaves a replica running.
    SurvivesTieBreak,
    /// The pods a scale-down leaves (victims in the controllers' order, ties against the level) do not
    /// survive a domain loss of the level.
    ScaleDownUnmet,
    /// After the scale-down every domain loss of the level still leaves enough running.
    ScaleDownHolds,
    /// Pods of the scale-up to the autoscaler's maximum stay Pending (deleted first on the way down).
    ScaleUpPending,
    /// A replacement can run only where its provisioned volume is bound (its zone or node) and no node
    /// there takes it (issue 39): a failure at level pod and node.
    VolumeBound,
    /// At level zone, a replacement waits for the zone its volume is bound to: the member of that zone
    /// is down while it does, which the level allows.
    WaitsForVolumeZone,
    /// A zone whose node groups hold no node yet (they may add some) is no domain of the workload's
    /// hard zone spread (KEP-3022): the replicas spread over the other zones.
    NotADomain,
    /// The cluster autoscaler added a node for a pod of the workload (a fact: which node, for whom,
    /// how long the pod waited).
    ScaledUp,
    /// A drain stops before evicting anything: the node holds pods that declare no controller.
    DrainUnmanaged,
    /// An eviction fails with an error other than 429: kubectl gives up on the pod, the drain fails.
    EvictionFailed,
    /// Evicting a pod of the workload is refused for good (429 every round): the drain is blocked.
    DrainBlocked,
    /// Evicting another workload's pod is refused for good: the drain never finishes.
    DrainNeverFinishes,
    /// The replacement of an evicted pod stays Pending.
    EvictedReplacementPending,
    /// How an update went: its strategy and the fewest replicas available during it.
    UpdateProgress,
    /// The API server refuses the update strategy (maxSurge and maxUnavailable both 0).
    StrategyRefused,
    /// A Deployment's rolling update deadlocks.
    UpdateDeadlocks,
    /// A Deployment's rolling update does not converge.
    UpdateDoesNotConverge,
    /// An update drops to no available replica.
    UpdateDropsAvailability,
    /// Strategy Recreate stops every old pod before the new ones start.
    Recreate,
    /// updateStrategy OnDelete: the controller replaces pods only when they are deleted.
    OnDelete,
    /// A StatefulSet's update stops at a pod whose new revision stays Pending.
    UpdateStops,
}

/// What a finding is about, within the verified workload.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingSubject {
    /// The workload as a whole.
    Workload,
    /// A failed domain, as reports show it (`zone eu-1a`, `node n1`, `pod web-0`).
    Domain(String),
    /// A node (drained).
    Node(String),
    /// A pod: a replica, a replacement, or another workload's pod in the way.
    Pod { namespace: String, name: String },
    /// A spread constraint, by topology key and whenUnsatisfiable (`kubernetes.io/hostname (DoNotSchedule)`).
    Constraint(String),
}

impl FindingSubject {
    pub fn pod(namespace: &str, name: &str) -> FindingSubject {
        FindingSubject::Pod { namespace: namespace.to_string(), name: name.to_string() }
    }
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
    /// The index of the request's workload (`ScenarioRequest::workloads`) this verdict answers: the
    /// caller joins it to what it asked about by index.
    #[serde(skip)]
    pub request: usize,
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    pub replicas: i64,
    /// Where the rollout placed its pods, pod to node: the placement every scenario starts from.
    pub placement: BTreeMap<String, String>,
    /// Its pods the rollout left Pending, pod to the scheduler's message.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pending: BTreeMap<String, String>,
    /// Fewest replicas left running under the loss of one domain of the level (None below pod).
    pub worst_case_running: Option<i64>,
    /// Replacements scheduled, summed over the domain losses, and per loss where they went.
    pub replacements_scheduled: i64,
    pub domain_losses: Vec<DomainLoss>,
    /// For each spread constraint (by topology key and whenUnsatisfiable), the pods its selector counts.
    pub selector_counts: BTreeMap<String, usize>,
    pub scenarios: Vec<ScenarioResult>,
    pub meets_level: bool,
    /// The availability group the workload is judged with, and that group's pods (the running
    /// counts above are the group's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_replicas: Option<i64>,
    /// Under `survive = "majority"`: how many pods are a majority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub majority: Option<i64>,
}
