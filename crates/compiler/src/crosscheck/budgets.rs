//! A pod selected by two PodDisruptionBudgets cannot be evicted at all (the
//! eviction API answers 500 for it), so every drain of its node blocks.
//! Budgets come from every instance of the cluster that shares the namespace:
//! shipped ones and the ones kix derives.

use super::index::ClusterWorkloads;
use crate::derive::InstancePlan;
use crate::resolve::{Cluster, Instance};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use std::collections::{BTreeSet, HashSet};

/// Reports every workload whose pods two budgets select, at its selector, with each budget as a secondary label. `overlapping` workloads are skipped: their
/// overlap (K0406) already explains why two budgets cover their pods.
pub fn report(
    cluster: &Cluster,
    workloads: &ClusterWorkloads<'_>,
    plans: &[InstancePlan],
    overlapping: &BTreeSet<usize>,
    diagnostics: &mut Diagnostics,
) {
    // Per entry, the budgets that select its pods, in budget order.
    // Each budget as (its name, its instance's index: the plans are the resolved instances, in order).
    let mut covering: Vec<Vec<(&str, usize)>> = vec![Vec::new(); workloads.entries.len()];
    // A budget two instances both emit is one object (reported as a duplicate, K0417): count it once.
    let mut seen: HashSet<(&str, &str), foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(plans.len() * 4, Default::default());
    for (position, plan) in plans.iter().enumerate() {
        // A budget's name and selector are never stamped: each is read once for its shape.
        for (index, facts) in plan.facts().enumerate() {
            let Some(selector) = &facts.budget else { continue };
            let name = plan.name_of(index);
            if !seen.insert((plan.namespace.as_str(), name)) {
                continue;
            }
            let Some(selector) = selector else { continue };
            for entry in workloads.selected_by(&plan.namespace, selector) {
                covering[entry].push((name, position));
            }
        }
    }
    for (index, (entry, budgets)) in workloads.entries.iter().zip(&covering).enumerate() {
        let (instance, workload) = (entry.instance, entry.workload);
        if budgets.len() < 2 || overlapping.contains(&index) {
            continue;
        }
        let diagnostic = Diagnostic::new(
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
                    .map(|(name, instance)| format!("{name} (instance `{}`)", cluster.instances[*instance].name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .at(instance.package.documents[workload.document].locate(&["spec", "selector"]))
        .about(&Subject { workload: Some(workload.name().to_string().into()), ..instance.subject.clone() });
        let labels = budgets.iter().map(|(name, instance)| budget_label(&cluster.instances[*instance], name));
        diagnostics.push(labels.fold(diagnostic, |diagnostic, (at, label)| diagnostic.with_label(at, label)));
    }
}

/// Where a budget over the pods is: a shipped one at its selector, one kix derives at the instance that
/// derives it (its name in the cluster file).
fn budget_label(instance: &Instance, name: &str) -> (Location, String) {
    let package = &instance.package;
    let shipped = package.budgets().map(|(index, _)| &package.documents[index]).find(|d| d.name() == name);
    match shipped {
        Some(document) => (
            document.locate(&["spec", "selector"]),
            format!("PodDisruptionBudget `{name}` of instance `{}`", instance.name),
        ),
        None => (
            instance.location.clone(),
            format!("kix derives PodDisruptionBudget `{name}` for instance `{}`", instance.name),
        ),
    }
}
