//! PodDisruptionBudget rules (K0702, K0704, K0710-K0714), with the disruption controller's
//! arithmetic (`pkg/controller/disruption/disruption.go` `getExpectedPodCount`,
//! `updatePdbStatus`): the expected count is the sum of the selected pods' controllers' scale,
//! percentages round up, and `disruptionsAllowed = healthy - desiredHealthy`. The eviction API
//! (`pkg/registry/core/pod/storage/eviction.go`) refuses a pod that more than one budget
//! selects, and evicts a not-ready pod under the default `IfHealthyBudget` only while the budget
//! is healthy (`unhealthyPodEvictionPolicy`, GA in 1.31).

use super::set::{Budget, Set, Target};
use kix_compiler::crosscheck::index::LabelIndex;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Message};
use kix_kube::int_or_percent::IntOrPercent;

/// Every budget rule.
pub fn check(set: &Set, index: &LabelIndex<'_>, diagnostics: &mut Diagnostics) {
    for budget in &set.budgets {
        let selected: Vec<&Target> = selected(set, index, budget);
        coverage(set, budget, &selected, diagnostics);
        arithmetic(set, budget, &selected, diagnostics);
        if !budget.eviction_policy {
            diagnostics.push(
                // The sentence after the name is the program's text, not copied into each finding.
                locate(&budget.at_spec, Code::LintPdbNoEvictionPolicy, Message::in_parts(
                    &budget.label(),
                    " has no unhealthyPodEvictionPolicy, so under the default IfHealthyBudget a running but not-ready \
                     pod blocks drains while the budget is unhealthy",
                ))
                .help("set `unhealthyPodEvictionPolicy: AlwaysAllow` (or IfHealthyBudget, deliberately)"),
            );
        }
    }
    for target in &set.workloads {
        let over: Vec<&Budget> = set.budgets_in(&target.namespace).filter(|b| b.selects(target.pod_labels())).collect();
        if over.len() >= 2 {
            let names: Vec<String> = over.iter().map(|b| b.label()).collect();
            let diagnostic = Diagnostic::new(
                Code::LintPodsUnderTwoPdbs,
                format!(
                    "the pods of {} are selected by {}: the eviction API refuses to evict them, so no drain of \
                         their nodes finishes",
                    target.label(),
                    super::text::and_list(&names)
                ),
            )
            .at(target.at_selector.clone())
            .workload(&target.name)
            .help("keep one budget per workload");
            let labelled = over.iter().fold(diagnostic, |diagnostic, budget| {
                diagnostic.with_label(budget.at_selector.clone(), format!("the selector of {}", budget.label()))
            });
            diagnostics.push(labelled);
        }
    }
}

/// Whether the budget selects the pods an operator runs for a custom resource of its namespace in the
/// manifests ([`kix_kube::operators::operator_pod_labels`]).
fn over_operator_pods(set: &Set, budget: &Budget) -> bool {
    set.operator_pods.iter().any(|(namespace, labels)| *namespace == budget.namespace && budget.selects(labels))
}

/// The workloads of the budget's namespace whose pods it selects, in input order.
pub(crate) fn selected<'a>(set: &'a Set, index: &LabelIndex<'_>, budget: &Budget) -> Vec<&'a Target> {
    let Some(selector) = &budget.selector else { return Vec::new() };
    let candidates =
        index.candidates_for(&budget.namespace, selector.match_labels.iter()).iter().map(|&i| &set.workloads[i]);
    candidates.filter(|w| selector.matches(w.pod_labels())).collect()
}

fn locate(at: &Location, code: Code, message: impl Into<Message>) -> Diagnostic {
    Diagnostic::new(code, message).at(at.clone())
}

/// K0702 (selects no workload) and K0704 (selects several).
fn coverage(set: &Set, budget: &Budget, selected: &[&Target], diagnostics: &mut Diagnostics) {
    match selected {
        // The pods of a Prometheus or Alertmanager of the manifests, which its operator runs: not K0702.
        [] if over_operator_pods(set, budget) => {}
        [] => {
            let why = if budget.selector.is_none() {
                "has no selector, so it selects no pods".to_string()
            } else {
                let namespace =
                    if budget.namespace.is_empty() { String::new() } else { format!(" `{}`", budget.namespace) };
                format!(
                    "selects the pods of no Deployment or StatefulSet of the linted manifests in its namespace{namespace}"
                )
            };
            diagnostics.push(
                locate(&budget.at_selector, Code::LintPdbSelectsNothing, format!("{} {why}", budget.label()))
                    .help("make spec.selector match the pod template labels of the workload it protects"),
            );
        }
        [_] => {}
        // A group's budget (issue 17) selects its members on purpose.
        several if several.iter().all(|w| Set::same_group(&budget.group, &w.group)) => {}
        several => {
            let names: Vec<String> = several.iter().map(|w| w.label()).collect();
            let diagnostic = locate(
                &budget.at_selector,
                Code::LintPdbOverSeveral,
                format!("{} selects the pods of {}", budget.label(), super::text::and_list(&names)),
            )
            .help("give each workload its own budget with the workload's own selector");
            let labelled = several.iter().fold(diagnostic, |diagnostic, workload| {
                diagnostic.with_label(workload.at_pod_labels.clone(), format!("the pods of {}", workload.label()))
            });
            diagnostics.push(labelled);
        }
    }
}

/// K0710 (maxUnavailable 0), K0711 (minAvailable leaves no disruption), K0712 (one replica, nothing protected).
fn arithmetic(set: &Set, budget: &Budget, selected: &[&Target], diagnostics: &mut Diagnostics) {
    let who = budget.label();
    if budget.max_unavailable.is_some_and(|m| m.is_zero()) {
        diagnostics.push(
            locate(
                &budget.at_max_unavailable,
                Code::LintPdbZeroMaxUnavailable,
                format!("{who} has maxUnavailable: {}, so it allows no eviction and every drain of its pods' nodes waits forever", budget.max_unavailable.unwrap_or(IntOrPercent::Int(0))),
            )
            .help("use `maxUnavailable: 1`"),
        );
        return;
    }
    if selected.is_empty() {
        if budget.min_available == Some(IntOrPercent::Percent(100)) {
            diagnostics.push(min_available_blocks(budget, "allows no eviction".into()));
        }
        return;
    }
    let expected: i64 = selected.iter().map(|w| i64::from(set.low_replicas(w))).sum();
    let scale = if selected.iter().any(|w| w.autoscaler.is_some()) {
        " at its lowest scale (the HPA's minReplicas)"
    } else {
        ""
    };
    let desired = match (budget.min_available, budget.max_unavailable) {
        (Some(min), _) => min.scaled_value(expected, true),
        (None, Some(max)) => expected - max.scaled_value(expected, true),
        (None, None) => expected - 1,
    };
    let allowed = expected - desired;
    let replicas = if expected == 1 { "1 replica".to_string() } else { format!("{expected} replicas") };
    let names: Vec<String> = selected.iter().map(|w| w.label()).collect();
    if budget.min_available.is_some() && allowed <= 0 && expected > 0 {
        let min = budget.min_available.unwrap_or(IntOrPercent::Int(0));
        diagnostics.push(min_available_blocks(
            budget,
            format!(
                "is minAvailable: {min} over the {replicas} of {}{scale}, which leaves no disruption allowed",
                super::text::and_list(&names)
            ),
        ));
    } else if expected == 1 && allowed >= 1 && selected.iter().all(|w| w.autoscaler.is_none()) {
        diagnostics.push(
            locate(
                &budget.at_spec,
                Code::LintPdbOverOneReplica,
                format!("{who} covers {}, which runs 1 replica: the budget lets the only pod be evicted and protects nothing", super::text::and_list(&names)),
            )
            .help("run two or more replicas, or drop the budget"),
        );
    }
}

fn min_available_blocks(budget: &Budget, why: String) -> Diagnostic {
    locate(
        &budget.at_min_available,
        Code::LintPdbMinAvailableBlocks,
        format!("{} {why}: every drain of its pods' nodes waits forever", budget.label()),
    )
    .help("use `maxUnavailable: 1`, or a minAvailable below the replica count")
}
