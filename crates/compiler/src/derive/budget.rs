//! R10: the PodDisruptionBudget kix derives for a workload: `maxUnavailable: 1`
//! over the workload's own selector, named after it, with the eviction policy
//! the package chose (or the one that fits the kind); and a group's, over the
//! group's selector, named after the group.

use super::workload_plan::GroupBudget;
use crate::load::package::EvictionPolicy;
use kix_kube::selector::Labels;
use kix_kube::workload::WorkloadView;
use kix_yaml::{Mapping, Value};

/// R10: the derived budget, without its namespace and kix's labels (derive writes them with the
/// instance's other per-instance fields, `patch::set_instance_fields`).
pub fn derived_pdb(view: &WorkloadView, policy: EvictionPolicy) -> Value {
    budget(&view.name, view.selector_value.clone(), policy)
}

/// A group's budget (issue 17): named after the group, over the group's selector.
pub fn group_pdb(budget_plan: &GroupBudget) -> Value {
    let mut pdb = budget(&budget_plan.name, match_labels(&budget_plan.selector), budget_plan.policy);
    if let Some(metadata) = pdb.get_mut("metadata").and_then(Value::as_mapping_mut) {
        let mut annotations = Mapping::new();
        annotations.insert(kix_kube::kix_names::GROUP_ANNOTATION.into(), budget_plan.name.as_str().into());
        metadata.insert("annotations".into(), Value::Mapping(annotations));
    }
    pdb
}

/// `{ matchLabels: ... }` for a group's selector.
pub fn match_labels(labels: &Labels) -> Value {
    let mut match_labels = Mapping::new();
    for (key, value) in labels {
        match_labels.insert(key.as_str().into(), value.as_str().into());
    }
    let mut selector = Mapping::new();
    selector.insert("matchLabels".into(), Value::Mapping(match_labels));
    Value::Mapping(selector)
}

fn budget(name: &str, selector: Value, policy: EvictionPolicy) -> Value {
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), name.into());
    let mut spec = Mapping::new();
    spec.insert("maxUnavailable".into(), 1.into());
    spec.insert("selector".into(), selector);
    spec.insert("unhealthyPodEvictionPolicy".into(), policy.as_str().into());
    let mut pdb = Mapping::new();
    pdb.insert("apiVersion".into(), "policy/v1".into());
    pdb.insert("kind".into(), "PodDisruptionBudget".into());
    pdb.insert("metadata".into(), Value::Mapping(metadata));
    pdb.insert("spec".into(), Value::Mapping(spec));
    Value::Mapping(pdb)
}
