//! What a cluster's admission policies guard ([`crate::admission`] fills it after derive, issue 40): one
//! record per object kix compiled and the policies enforce, and the documents of `_admission.yaml`. A record
//! of the plan, beside the others emit reads, so that derive's plan holds it without importing the stage
//! that makes it.

use kix_kube::level::Level;
use kix_yaml::Value;

/// The API resource of a guarded object: what a policy's `resourceRules` name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Resource {
    pub group: String,
    /// The resource's plural name (`deployments`).
    pub plural: String,
    pub kind: String,
}

impl Resource {
    pub fn of(group: &str, plural: &str, kind: &str) -> Resource {
        Resource { group: group.to_string(), plural: plural.to_string(), kind: kind.to_string() }
    }

    /// `deployments.apps`, as `kubectl api-resources` names it (the core group's resources by plural alone).
    pub fn qualified(&self) -> String {
        match self.group.as_str() {
            "" => self.plural.clone(),
            group => format!("{}.{group}", self.plural),
        }
    }
}

/// What a policy checks on the objects of one resource (one policy per resource and check).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// A workload's own count (at `count`, defaulted to `default` when absent) and, for those with
    /// `spread`, its pod template's hard constraint on the level's key.
    Workload { count: Vec<String>, default: u32, spread: Option<SpreadAt> },
    /// The workload's `/scale` subresource (an `autoscaling/v1` Scale: `spec.replicas`).
    Scale,
    /// An autoscaler's minimum (`spec.minReplicas`, `spec.minReplicaCount`) and its default.
    Autoscaler { min: &'static str, default: u32 },
    /// One of kix's PodDisruptionBudgets: not deleted, not weakened.
    Budget,
}

/// Where a workload's spread constraints are, and whether its pod labels are there too (a custom
/// resource's operator labels its pods itself, so its selector cannot be checked against the object).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpreadAt {
    pub constraints: Vec<String>,
    pub labels: Option<Vec<String>>,
}

/// One object kix compiled and its cluster's policies guard.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub resource: Resource,
    pub check: Check,
    pub namespace: String,
    pub name: String,
    /// The workload it serves, as messages name it (`Deployment shop/api`).
    pub workload: String,
    /// The level it holds.
    pub level: Level,
    /// The fewest pods the level needs (workloads, scale, autoscalers).
    pub floor: Option<u32>,
    /// The topology key of the level's hard constraint (workloads whose spread kix derived).
    pub spread_key: Option<String>,
    /// How `kix explain` shows the decision.
    pub explain: String,
}

/// A cluster's admission: what it guards and the objects `_admission.yaml` holds.
#[derive(Clone, Debug, Default)]
pub struct AdmissionPlan {
    pub guards: Vec<Guard>,
    /// The policies, their bindings and one params ConfigMap per namespace, in file order.
    pub documents: Vec<Value>,
}
