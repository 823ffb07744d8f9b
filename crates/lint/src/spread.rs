//! Spread-constraint rules (K0701, K0703, K0705-K0709): each workload's
//! `topologySpreadConstraints`, read leniently (a field of the wrong shape is the API server's
//! concern, not lint's) and checked against how kube-scheduler's PodTopologySpread plugin reads
//! them (`pkg/scheduler/framework/plugins/podtopologyspread/common.go`
//! `filterTopologySpreadConstraints`, `filtering.go`) and against the API server's
//! `ValidateTopologySpreadConstraints` (`pkg/apis/core/validation/validation.go`).

use super::pod_spec::{Constraint, SelectorField};
use super::set::{Set, Target};
use kix_compiler::crosscheck::index::LabelIndex;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Message};
use kix_kube::kind::WorkloadKind;
use kix_kube::labels::POD_TEMPLATE_HASH;
use kix_kube::selector::CompactLabels;

/// Every spread rule over every workload.
pub fn check(set: &Set, index: &LabelIndex<'_>, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        for constraint in &target.constraints {
            selector_rules(set, index, target, constraint, diagnostics);
            field_rules(target, constraint, diagnostics);
        }
        duplicates(target, &target.constraints, diagnostics);
    }
}

fn finding(target: &Target, code: Code, at: &Location, message: impl Into<Message>) -> Diagnostic {
    Diagnostic::new(code, message).at(at.clone()).workload(&target.name)
}

/// K0705 (no or empty selector), K0701 (misses the workload's pods), K0703 (counts another workload's pods).
fn selector_rules(set: &Set, index: &LabelIndex<'_>, target: &Target, c: &Constraint, diagnostics: &mut Diagnostics) {
    let who = target.label();
    let selector = match &c.selector {
        SelectorField::Invalid(why) => {
            let message = format!("{} of {who}: labelSelector: {why}", c.describe());
            diagnostics.push(finding(target, Code::InvalidSelector, &c.at_selector, message));
            return;
        }
        SelectorField::Missing => {
            let message =
                format!("{} of {who} has no labelSelector, so it counts no pods and spreads nothing", c.describe());
            diagnostics.push(
                finding(target, Code::LintSpreadWithoutSelector, &c.at, message)
                    .help("set labelSelector to the workload's spec.selector"),
            );
            return;
        }
        SelectorField::Set(selector) if selector.is_empty() => {
            let message = format!(
                "{} of {who} has an empty labelSelector, which spreads nothing (kubernetes#141339)",
                c.describe()
            );
            diagnostics.push(
                finding(target, Code::LintSpreadWithoutSelector, &c.at_selector, message)
                    .help("set labelSelector to the workload's spec.selector"),
            );
            return;
        }
        SelectorField::Set(selector) => selector,
    };
    if !selector.matches(target.pod_labels()) {
        let message = format!(
            "{} of {who} selects none of the workload's own pods (labels {}), so it does not spread them",
            c.describe(),
            show_labels(target.pod_labels())
        );
        diagnostics.push(
            finding(target, Code::LintSpreadMissesOwnPods, &c.at_selector, message)
                .help("copy the workload's spec.selector into labelSelector"),
        );
        return;
    }
    // A group's members (issue 17) count each other on purpose.
    let others: Vec<String> = set
        .candidates(index, target, selector)
        .filter(|other| {
            c.counts(target.owner(), other.pod_labels(), false) && !Set::same_group(&target.group, &other.group)
        })
        .map(Target::label)
        .collect();
    if !others.is_empty() {
        let message = format!(
            "{} of {who} also counts the pods of {}, so the scheduler balances them together",
            c.describe(),
            super::text::and_list(&others)
        );
        let help = match target.kind.template_hash_label() {
            Some(key) => {
                format!("narrow labelSelector to the workload's spec.selector, or add matchLabelKeys: [{key}]")
            }
            None => "narrow labelSelector to the workload's spec.selector".to_string(),
        };
        diagnostics.push(finding(target, Code::LintSpreadCountsOthers, &c.at_selector, message).help(help));
    }
}

/// K0706 (hard spread without pod-template-hash), K0707 (minDomains on a soft constraint), K0709 (a
/// matchLabelKeys key also in the selector).
fn field_rules(target: &Target, c: &Constraint, diagnostics: &mut Diagnostics) {
    let who = target.label();
    // A group's member (issue 17) has none: pod-template-hash would narrow the count to its own ReplicaSet.
    if c.hard()
        && target.kind == WorkloadKind::Deployment
        && !c.match_label_keys.iter().any(|k| k == POD_TEMPLATE_HASH)
        && target.group.is_none()
    {
        // The sentence after the names is the program's text, not copied into each of a stream's findings.
        let message = Message::in_parts(
            &format!("{} of {who}", c.describe()),
            " has no matchLabelKeys: [pod-template-hash], so a rolling update balances old and new pods together \
             and can leave the new ones lopsided",
        );
        diagnostics.push(
            finding(target, Code::LintHardSpreadWithoutHash, &c.at, message)
                .help("add `matchLabelKeys: [pod-template-hash]` to the constraint"),
        );
    }
    if c.min_domains.is_some() && !c.hard() {
        let message = format!(
            "{} of {who} sets minDomains, which the API server accepts only with whenUnsatisfiable: DoNotSchedule",
            c.describe()
        );
        diagnostics.push(
            finding(target, Code::LintMinDomainsSoft, &c.at_min_domains, message)
                .help("remove minDomains, or make the constraint DoNotSchedule"),
        );
    }
    if let SelectorField::Set(selector) = &c.selector {
        for (i, key) in c.match_label_keys.iter().enumerate() {
            if selector.keys().any(|k| k == key) {
                let message = format!(
                    "{} of {who} lists `{key}` in matchLabelKeys and in labelSelector, which the API server refuses",
                    c.describe()
                );
                diagnostics.push(
                    finding(target, Code::LintMatchLabelKeyInSelector, &c.at_match_label_keys[i], message)
                        .help(format!("remove `{key}` from matchLabelKeys or from labelSelector")),
                );
            }
        }
    }
}

/// K0708: a (topologyKey, whenUnsatisfiable) pair written twice.
fn duplicates(target: &Target, constraints: &[Constraint], diagnostics: &mut Diagnostics) {
    for (i, c) in constraints.iter().enumerate() {
        if let Some(first) = constraints[..i].iter().find(|f| f.topology_key == c.topology_key && f.when == c.when) {
            let message = format!(
                "topologySpreadConstraints[{}] of {} repeats the pair (`{}`, {}) of topologySpreadConstraints[{}], \
                 which the API server refuses",
                c.index,
                target.label(),
                c.topology_key,
                c.when,
                first.index
            );
            diagnostics.push(
                finding(target, Code::LintDuplicateConstraint, &c.at, message)
                    .help("merge the two constraints into one"),
            );
        }
    }
}

/// `{app: web, tier: api}`.
pub(crate) fn show_labels(labels: &CompactLabels) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", pairs.join(", "))
}
