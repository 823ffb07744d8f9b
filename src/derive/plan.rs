//! What kix decided for each workload: the records derive fills and every later stage
//! (crosscheck, emit, verify, explain, the build summary) reads. They sit apart from the code that
//! fills them (`placement`, `patch`, `shape`) so that those files and the module root do not
//! import each other.

use kix_kube::autoscaler::AutoscalerKind;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;

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
    /// R11: the workload brings its own topologySpreadConstraints.
    pub explicit_placement: bool,
    /// Its manifest scales it to zero (`spec.replicas: 0`, no mapping, no autoscaler): it runs no pods, so
    /// kix emits it as written (no spread, no budget, no availability annotations) and verify skips it.
    pub scaled_to_zero: bool,
    /// The autoscaler that owns its `spec.replicas` (kix then leaves that field as written, and
    /// `replicas` is the autoscaler's minimum).
    pub autoscaler: Option<AutoscalerPlan>,
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
