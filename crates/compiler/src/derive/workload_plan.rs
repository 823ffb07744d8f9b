//! What kix decided for each workload: the records derive fills and every later stage
//! (crosscheck, emit, verify, explain, the build summary) reads. They sit apart from the code that
//! fills them (`placement`, `patch`, `shape`) so that those files and the module root do not
//! import each other.

use crate::load::package::{EvictionPolicy, Survive};
use kix_kube::autoscaler::AutoscalerKind;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_kube::selector::Labels;

/// What kix decided for one workload.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkloadPlan {
    pub kind: WorkloadKind,
    pub name: String,
    pub requested: Level,
    pub level: Level,
    pub replicas: u32,
    /// Its index among the resolved instance's workloads (`resolve::Instance::workloads`): the one it
    /// was derived from, which every consumer joins it to.
    pub resolved: usize,
    /// The derived spread constraints, one per topology key (empty when none were derived); at most
    /// one is hard.
    pub spreads: Vec<Spread>,
    /// R9, R11: why it has these spread constraints, or none, as placement decided it.
    pub spread_reason: SpreadReason,
    /// R9: why its hard spread has no `minDomains` (None without a hard spread), as placement decided it.
    pub min_domains: Option<MinDomainsReason>,
    /// R11's input: the workload brings its own topologySpreadConstraints (whether or not it runs pods;
    /// `spread_reason` says scaled to zero first).
    pub explicit_placement: bool,
    /// R10: which budget covers it, or why none does, as placement decided it.
    pub budget: BudgetReason,
    /// A custom resource whose operator makes its own budget: the labels that budget selects (verify
    /// simulates it, allowing one pod down at a time).
    pub operator_budget: Option<Labels>,
    /// Its manifest scales it to zero (`spec.replicas: 0`, no mapping, no autoscaler): it runs no pods, so
    /// kix emits it as written (no spread, no budget, no availability annotations) and verify skips it.
    pub scaled_to_zero: bool,
    /// The autoscaler that owns its `spec.replicas` (kix then leaves that field as written, and
    /// `replicas` is the autoscaler's minimum).
    pub autoscaler: Option<AutoscalerPlan>,
    /// The `[groups.X]` it is a member of, by name: its spread constraints select the group's pods.
    pub group: Option<String>,
    /// The selector of its spread constraints when it is not its own: a group's (no `matchLabelKeys`).
    pub spread_selector: Option<Labels>,
    /// The group's budget, which kix emits right after this workload (the group's first member).
    pub group_budget: Option<GroupBudget>,
    /// What must keep running through a failure: its own `survive`, or its group's.
    pub survive: Survive,
    /// One pod's requests as the scheduler counts them; `None` when a quantity cannot be read.
    pub pod_requests: Option<kix_kube::requests::Requests>,
}

/// The PodDisruptionBudget kix derives for a group: named after it, over the group's selector.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupBudget {
    pub name: String,
    pub selector: Labels,
    pub policy: EvictionPolicy,
    /// Index into the package's `groups`.
    pub group: usize,
}

impl WorkloadPlan {
    /// The key of the one `DoNotSchedule` constraint, if any.
    pub fn hard_key(&self) -> Option<&str> {
        self.spreads.iter().find(|spread| spread.hard).map(|spread| spread.key.as_str())
    }

    /// R10: kix derives a budget of its own for it (emitted right after it).
    pub fn derived_pdb(&self) -> bool {
        self.budget == BudgetReason::Derived
    }
}

/// Why a workload has the spread constraints it has (R9, R11): placement's decision, in the order it
/// takes it, which patching, explain and verify read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpreadReason {
    /// R9: one constraint per failure-domain key, hard on the key the level names.
    Derived,
    /// Its manifest scales it to zero: it runs no pods, so it is emitted as written.
    ScaledToZero,
    /// R11: it brings its own constraints (`custom`: a custom resource setting its operator's field).
    Explicit { custom: bool },
    /// K0436: a custom resource whose profile names no field for spread constraints.
    Unplaceable,
    /// R9: fewer than two pods (its own, or its group's) have nothing to spread.
    FewerThanTwoPods,
    /// R9: the cluster is declared single-node.
    SingleNode,
}

/// R9: why kix derives no `minDomains` on a hard spread (issue 39). Below minDomains eligible domains
/// PodTopologySpread counts the global minimum as 0 (pkg/scheduler/framework/plugins/podtopologyspread/
/// filtering.go), so a pod may not go where the count already reaches maxSkew: that lets the scheduler
/// hold a pod for a domain that has no node yet (the autoscaler then adds one, KEP-3022), and it holds
/// every replacement Pending while a lost domain leaves fewer than minDomains (the lost domain's nodes,
/// tainted unreachable, are no domain under kix's `nodeTaintsPolicy: Honor`), which the domain-loss
/// scenario fails at the level the spread is hard for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MinDomainsReason {
    /// Every domain of the key has nodes (or no inventory says otherwise): minDomains changes nothing
    /// until a domain is lost, and then strands the replacements.
    EveryDomainHasNodes,
    /// These zones have no node yet and their pools may add some: minDomains would bring them up, but
    /// would strand the replacements of every zone loss; kix keeps the zone losses.
    ZonesAtZero { zones: Vec<String> },
}

/// Which PodDisruptionBudget covers a workload, or why none does (R10): placement's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BudgetReason {
    /// Its own budget, derived (maxUnavailable 1), emitted right after it.
    Derived,
    /// A budget shipped in the package selects its pods: the index of its document in the package.
    Shipped { document: usize },
    /// Its operator makes its own budget (its kind's profile).
    Operator,
    /// Its manifest scales it to zero: no pods to protect.
    ScaledToZero,
    /// R11: it brings its own placement, and kix derives no budget for it.
    Explicit,
    /// Fewer than two pods: a budget would block every drain.
    FewerThanTwoPods,
    /// The cluster is declared single-node: a budget would block the drain of its only node.
    SingleNode,
    /// A member of a group: what covers the group's pods.
    Group(GroupBudgetReason),
}

/// Which budget covers an availability group's pods, or why none does (R10 for a group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupBudgetReason {
    /// The group's budget, derived and emitted with this member (its first member whose placement is kix's).
    Derived,
    /// The group's budget, emitted with another member (or, across instances, by the first member instance).
    EmittedByAnother,
    /// A budget shipped in the package selects the group's pods.
    Shipped,
    /// Fewer than two pods in the group.
    FewerThanTwoPods,
    /// The cluster is declared single-node.
    SingleNode,
    /// Every member brings its own placement: kix derives nothing for the group.
    NoPlacedMember,
}

/// One derived topology spread constraint: its key, and whether it is hard (`DoNotSchedule`, on the key
/// the level names) or soft (`ScheduleAnyway`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spread {
    pub key: String,
    pub hard: bool,
}

/// The autoscaler of a workload as emitted: its range after kix raised it to the level's floor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AutoscalerPlan {
    pub kind: AutoscalerKind,
    pub name: String,
    pub min_replicas: u32,
    pub max_replicas: u32,
}

/// A custom resource whose pods an operator runs and kix does not place (K0435): verify lists it as
/// unverified.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Unplaced {
    pub kind: String,
    pub name: String,
}
