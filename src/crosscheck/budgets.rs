//! A pod selected by two PodDisruptionBudgets cannot be evicted at all (the
//! eviction API answers 500 for it), so every drain of its node blocks.
//! Budgets come from every instance of the cluster that shares the namespace:
//! shipped ones and the ones kix derives.

use super::index::ClusterWorkloads;
use crate::derive::InstancePlan;
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::selector::Selector;
use kix_yaml::Value;
use std::collections::{BTreeSet, HashSet};

/// Reports every workload whose pods two budgets select. `overlapping` workloads are skipped: their
/// overlap (K0406) already explains why two budgets cover their pods.
pub fn report(
    workloads: &ClusterWorkloads<'_>,
    plans: &[InstancePlan],
    overlapping: &BTreeSet<(String, String)>,
    diagnostics: &mut Diagnostics,
) {
    // Per entry, the budgets that select its pods, in budget order.
    // Each budget as (its name, its instance's name).
    let mut covering: Vec<Vec<(&str, &str)>> = vec![Vec::new(); workloads.entries.len()];
    // A budget two instances both emit is one object (reported as a duplicate, K0417): count it once.
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for plan in plans {
        // A budget's name and selector are never stamped.
        for object in plan.unstamped() {
            let Some((name, selector)) = budget(object) else { continue };
            if !seen.insert((plan.namespace.as_str(), name)) {
                continue;
            }
            let Some(selector) = selector else { continue };
            for entry in workloads.selected_by(&plan.namespace, &selector) {
                covering[entry].push((name, &plan.name));
            }
        }
    }
    for (entry, budgets) in workloads.entries.iter().zip(&covering) {
        let (instance, workload) = (entry.instance, entry.workload);
        if budgets.len() < 2 || overlapping.contains(&(instance.name.clone(), workload.name().to_string())) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::SharedBudget,
                format!(
                    "the pods of {} {} in namespace `{}` are selected by {} PodDisruptionBudgets: {}; the eviction \
                     API refuses to evict such a pod, so every drain of its node blocks",
                    workload.kind().as_str(),
                    workload.name(),
                    instance.namespace,
                    budgets.len(),
                    budgets
                        .iter()
                        .map(|(name, instance)| format!("{name} (instance `{instance}`)"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .at(instance.package.documents[workload.document].locate(&["spec", "selector"]))
            .about(&Subject { workload: Some(workload.name().to_string()), ..instance.subject.clone() }),
        );
    }
}

/// A `policy` PodDisruptionBudget's name and its selector (`None` when absent or unreadable: it selects nothing).
fn budget(object: &Value) -> Option<(&str, Option<Selector>)> {
    let is_pdb = object.get("kind").and_then(Value::as_str) == Some("PodDisruptionBudget")
        && object.get("apiVersion").and_then(Value::as_str).map(kix_kube::kind::api_group) == Some("policy");
    if !is_pdb {
        return None;
    }
    let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
    let selector = object
        .get("spec")
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null())
        .and_then(|s| Selector::from_value(s).ok());
    Some((name, selector))
}
