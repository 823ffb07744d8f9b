//! R10: the PodDisruptionBudget kix derives for a workload: `maxUnavailable: 1`
//! over the workload's own selector, named after it, with the eviction policy
//! the package chose (or the one that fits the kind).

use crate::load::package::EvictionPolicy;
use kix_kube::workload::WorkloadView;
use kix_yaml::{Mapping, Value};

/// R10: the derived budget, without its namespace and kix's labels (derive writes them with the
/// instance's other per-instance fields, `patch::set_instance_fields`).
pub fn derived_pdb(view: &WorkloadView, policy: EvictionPolicy) -> Value {
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), view.name.clone().into());
    let mut spec = Mapping::new();
    spec.insert("maxUnavailable".into(), 1.into());
    spec.insert("selector".into(), view.selector_value.clone());
    spec.insert("unhealthyPodEvictionPolicy".into(), policy.as_str().into());
    let mut pdb = Mapping::new();
    pdb.insert("apiVersion".into(), "policy/v1".into());
    pdb.insert("kind".into(), "PodDisruptionBudget".into());
    pdb.insert("metadata".into(), Value::Mapping(metadata));
    pdb.insert("spec".into(), Value::Mapping(spec));
    Value::Mapping(pdb)
}
