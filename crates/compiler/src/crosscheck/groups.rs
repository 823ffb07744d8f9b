//! A group's selector against the other instances of its namespace (issue 17, K0424): the group's
//! spread constraints and budget count every pod the selector selects in the namespace, so a pod
//! template of another instance there that carries all of the group's shared labels would be
//! counted (and budgeted) as one of the group's. Within its own package the selector was checked
//! once, by `resolve`.

use super::index::ClusterWorkloads;
use crate::resolve::Cluster;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::selector::Selector;
use std::collections::BTreeSet;

/// Reports each group whose selector selects a pod template of another instance in its namespace;
/// returns those workloads (indices into `workloads.entries`), whose two budgets K0415 then does not
/// report again.
pub fn report(cluster: &Cluster, workloads: &ClusterWorkloads<'_>, diagnostics: &mut Diagnostics) -> BTreeSet<usize> {
    let mut selected = BTreeSet::new();
    for instance in &cluster.instances {
        for group in &instance.package.groups {
            let selector = Selector { match_labels: group.selector.clone(), requirements: Vec::new() };
            for entry in workloads.selected_by(&instance.namespace, &selector) {
                let other = &workloads.entries[entry];
                // The other members of a group across instances are the group's own pods (a group across
                // instances is its name in the cluster file).
                let fellow = group.across
                    && (other.instance.across.as_ref().zip(instance.across.as_ref()))
                        .is_some_and(|(a, b)| a.name == b.name);
                if std::ptr::eq(other.instance, instance) || fellow {
                    continue;
                }
                selected.insert(entry);
                let selector_text = crate::resolve::labels_text(&group.selector);
                let document = &other.instance.package.documents[other.workload.document];
                diagnostics.push(
                    Diagnostic::new(
                        Code::GroupSelector,
                        format!(
                            "group `{}` of instance `{}` selects its pods by {selector_text} (the labels its members \
                             share), which also selects the pods of {} {} of instance `{}` in namespace `{}`",
                            group.name,
                            instance.name,
                            other.workload.kind().as_str(),
                            other.workload.name(),
                            other.instance.name,
                            instance.namespace
                        ),
                    )
                    .at(group.at.clone())
                    .with_label(document.locate(&["metadata", "name"]), "also selected")
                    .about(&instance.subject)
                    .help(format!(
                        "run instance `{}` in another namespace, or give the group's members a label of their own, \
                         e.g. `kix.dev/group: {}` in their pod templates (changing a pod template restarts its pods once)",
                        other.instance.name, group.name
                    )),
                );
            }
        }
    }
    selected
}
