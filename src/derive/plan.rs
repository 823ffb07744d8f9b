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
    /// The topology keys of the derived constraints (empty when none were derived).
    pub spread_keys: Vec<String>,
    /// The key of the one `DoNotSchedule` constraint, if any.
    pub hard_key: Option<String>,
    pub derived_pdb: bool,
    /// R11: the workload brings its own topologySpreadConstraints.
    pub explicit_placement: bool,
    /// The autoscaler that owns its `spec.replicas` (kix then leaves that field as written, and
    /// `replicas` is the autoscaler's minimum).
    pub autoscaler: Option<AutoscalerPlan>,
}

/// The autoscaler of a workload as emitted: its range after kix raised it to the level's floor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AutoscalerPlan {
    pub kind: AutoscalerKind,
    pub name: String,
    pub min_replicas: u32,
    pub max_replicas: u32,
}
