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
    /// The derived spread constraints, one per topology key (empty when none were derived); at most
    /// one is hard.
    pub spreads: Vec<Spread>,
    pub derived_pdb: bool,
    /// A custom resource whose operator makes its own budget: the labels that budget selects (verify
    /// simulates it, allowing one pod down at a time).
    pub operator_budget: Option<Labels>,
    /// R11: the workload brings its own topologySpreadConstraints.
    pub explicit_placement: bool,
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
