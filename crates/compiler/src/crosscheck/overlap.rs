//! R12 across a namespace: two workloads must not select each other's pods
//! (each controller would adopt or fight over the other's pods). The same
//! object twice is a duplicate (K0412/K0417), not an overlap with itself.

use super::index::{ClusterWorkloads, Entry};
use crate::load::documents::Document;
use crate::resolve::Cluster;
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use std::collections::BTreeSet;

/// Reports every overlapping pair, at the selector that takes the other's pods, with the other workload as a
/// secondary label (its selector when each takes the other's, else its pods' labels); returns the
/// entries (indices into `workloads.entries`) involved in one.
pub fn report(cluster: &Cluster, workloads: &ClusterWorkloads<'_>, diagnostics: &mut Diagnostics) -> BTreeSet<usize> {
    // Each unordered pair once, lower entry first, found through the index.
    let mut pairs = BTreeSet::new();
    for (a, entry) in workloads.entries.iter().enumerate() {
        for b in workloads.selected_by(entry.namespace(), &entry.workload.view.selector) {
            let other = &workloads.entries[b];
            // An object's identity (its kind and name in the namespace): the same object emitted twice.
            let same_object =
                entry.workload.kind() == other.workload.kind() && entry.workload.name() == other.workload.name();
            if a != b && !same_object {
                pairs.insert((a.min(b), a.max(b)));
            }
        }
    }
    let describe = |e: &Entry<'_>| {
        format!("{} {} (instance `{}`)", e.workload.kind().as_str(), e.workload.name(), e.instance.name)
    };
    let mut involved = BTreeSet::new();
    for (i, j) in pairs {
        let (a, b) = (&workloads.entries[i], &workloads.entries[j]);
        let a_selects_b = a.workload.view.selector.matches(b.labels());
        let b_selects_a = b.workload.view.selector.matches(a.labels());
        let message = match (a_selects_b, b_selects_a) {
            (true, true) => format!("{} and {} select each other's pods", describe(a), describe(b)),
            (true, false) => format!("the selector of {} also selects the pods of {}", describe(a), describe(b)),
            _ => format!("the selector of {} also selects the pods of {}", describe(b), describe(a)),
        };
        let (at, other) = if a_selects_b { (a, b) } else { (b, a) };
        involved.extend([i, j]);
        // The other place: the other selector when each selects the other, else the labels it selects.
        let (other_at, other_label) = if a_selects_b && b_selects_a {
            (document(other).locate(&["spec", "selector"]), format!("the selector of {}", describe(other)))
        } else {
            let labels = document(other).locate(&["spec", "template", "metadata", "labels"]);
            (labels, format!("the pods of {}", describe(other)))
        };
        diagnostics.push(
            Diagnostic::new(
                Code::OverlappingSelectors,
                format!("{message} in namespace `{}` of cluster `{}`", a.namespace(), cluster.name),
            )
            .at(document(at).locate(&["spec", "selector"]))
            .with_label(other_at, other_label)
            .about(&Subject { workload: Some(at.workload.name().to_string().into()), ..at.instance.subject.clone() }),
        );
    }
    involved
}

/// The document a workload was read from.
fn document<'a>(entry: &Entry<'a>) -> &'a Document {
    &entry.instance.package.documents[entry.workload.document]
}
