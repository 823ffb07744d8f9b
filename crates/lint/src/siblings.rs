//! The set of one (K0723, issue 17): single-replica Deployments of one namespace whose spread
//! constraints each select only their own pods, while their pod templates share labels. Each
//! constraint then balances one pod, so all of them can land in one zone: the trap Bindy's
//! zone-spreading guide describes for nameservers with identities. The fix is a selector over the
//! siblings (in kix, a `[groups.X]`).

use super::pod_spec::{Constraint, SelectorField};
use super::set::{Set, Target};
use kix_compiler::crosscheck::index::LabelIndex;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::kind::WorkloadKind;
use kix_kube::selector::CompactLabels;

/// A single-replica Deployment whose every spread constraint counts only its own pods.
fn alone<'a>(set: &'a Set, index: &'a LabelIndex<'a>, target: &'a Target) -> Option<&'a [Constraint]> {
    let one = target.kind == WorkloadKind::Deployment
        && target.manifest_replicas.unwrap_or(1) == 1
        && set.autoscaler(target).is_none();
    let list = &target.constraints;
    let only_own = !list.is_empty()
        && list.iter().all(|c| {
            let SelectorField::Set(selector) = &c.selector else { return false };
            c.counts(target.owner(), target.pod_labels(), true)
                && !set
                    .candidates(index, target, selector)
                    .any(|other| c.counts(target.owner(), other.pod_labels(), false))
        });
    (one && only_own).then_some(list.as_slice())
}

/// The labels both carry with one value.
fn shared(one: &CompactLabels, other: &CompactLabels) -> CompactLabels {
    one.iter().filter(|(k, v)| other.get(k) == Some(*v)).collect()
}

/// K0723 once per set of siblings (at the first in document order, the others as secondary labels),
/// naming them and the labels they share.
pub fn check(set: &Set, index: &LabelIndex<'_>, diagnostics: &mut Diagnostics) {
    let mut reported: Vec<usize> = Vec::new();
    for target in &set.workloads {
        if reported.contains(&target.object) {
            continue;
        }
        let Some(list) = alone(set, index, target) else { continue };
        let siblings: Vec<(&Target, &[Constraint])> = set
            .neighbours(target)
            .filter(|other| !shared(target.pod_labels(), other.pod_labels()).is_empty())
            .filter_map(|other| Some((other, alone(set, index, other)?)))
            .collect();
        let common =
            siblings.iter().fold(target.pod_labels().clone(), |labels, (s, _)| shared(&labels, s.pod_labels()));
        if siblings.is_empty() || common.is_empty() {
            continue;
        }
        reported.extend(siblings.iter().map(|(s, _)| s.object));
        let names: Vec<String> =
            std::iter::once(target).chain(siblings.iter().map(|(s, _)| *s)).map(Target::label).collect();
        let labels = common.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ");
        let message = format!(
            "{} each run one replica and their spread constraints each select only the workload's own pod, so each \
             balances a set of one, though their pod templates share the labels {labels}: nothing keeps them out of \
             one domain",
            super::text::and_list(&names)
        );
        let at = |list: &[Constraint]| list[0].at_selector.clone();
        let diagnostic =
            Diagnostic::new(Code::LintSetOfOne, message).at(at(list)).workload(&target.name).help(format!(
                "select the siblings together: labelSelector matchLabels {{{labels}}} without matchLabelKeys (in kix, \
                 declare them one [groups.X])"
            ));
        let diagnostic = siblings
            .iter()
            .fold(diagnostic, |d, (s, list)| d.with_label(at(list), format!("{} selects only its own pod", s.label())));
        diagnostics.push(diagnostic);
    }
}
