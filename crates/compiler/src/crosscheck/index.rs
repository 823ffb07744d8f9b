//! What the cross-instance checks look candidates up in: every workload of a cluster's instances
//! ([`Entry`]), indexed by namespace and template label ([`LabelIndex`]), so no check compares
//! every pair of a cluster's workloads. `kix lint` looks up the pods a selector may select in it too.

use crate::resolve::{Cluster, Instance, Workload};
use foldhash::fast::RandomState as Fast;
use kix_kube::selector::{Labels, Selector};
use std::collections::HashMap;

/// One workload of one instance, as the checks see it.
pub struct Entry<'a> {
    pub instance: &'a Instance,
    pub workload: &'a Workload,
}

impl Entry<'_> {
    pub(super) fn namespace(&self) -> &str {
        &self.instance.namespace
    }

    pub(super) fn labels(&self) -> &Labels {
        &self.workload.view.template_labels
    }
}

/// Every workload of a cluster's instances, indexed by namespace and template label.
pub struct ClusterWorkloads<'a> {
    pub entries: Vec<Entry<'a>>,
    index: LabelIndex<'a>,
}

impl<'a> ClusterWorkloads<'a> {
    pub(super) fn of(cluster: &'a Cluster) -> ClusterWorkloads<'a> {
        let entries: Vec<Entry<'a>> = cluster
            .instances
            .iter()
            .flat_map(|instance| instance.package.workloads.iter().map(move |workload| Entry { instance, workload }))
            .collect();
        let index = LabelIndex::new(cluster.instances.iter().flat_map(|instance| {
            (instance.package.workloads.iter())
                .map(move |workload| (instance.namespace.as_str(), &workload.view.template_labels))
        }));
        ClusterWorkloads { entries, index }
    }

    /// The entries of `namespace` whose pod template the selector selects, in entry order (an iterator:
    /// every budget and workload of a fleet asks, and most take one entry).
    pub(super) fn selected_by<'s>(
        &'s self,
        namespace: &str,
        selector: &'s Selector,
    ) -> impl Iterator<Item = usize> + 's {
        let candidates = self.index.candidates(namespace, selector).iter().copied();
        candidates.filter(move |&i| selector.matches(self.entries[i].labels()))
    }
}

/// Positions of labelled things by namespace, and by namespace and `key=value`.
///
/// A selector's candidates are the posting list of its rarest `matchLabels` pair (every match carries all
/// of them), or the whole namespace for a selector with expressions only; the caller confirms each.
/// Keys borrow from the cluster's model (this is built for every cluster of a fleet), one level per part
/// so that a lookup borrows its parts too.
pub struct LabelIndex<'a> {
    by_namespace: HashMap<&'a str, Namespace<'a>, Fast>,
}

/// One namespace's positions, and its positions by label key and value.
#[derive(Default)]
struct Namespace<'a> {
    all: Vec<usize>,
    by_label: HashMap<&'a str, HashMap<&'a str, Vec<usize>, Fast>, Fast>,
}

impl<'a> LabelIndex<'a> {
    pub fn new(items: impl Iterator<Item = (&'a str, &'a Labels)>) -> LabelIndex<'a> {
        LabelIndex::of_pairs(items.map(|(namespace, labels)| (namespace, labels.iter().map(|(k, v)| (&**k, &**v)))))
    }

    /// [`LabelIndex::new`] over labels of any form, each as its `(key, value)` pairs.
    pub fn of_pairs<P: Iterator<Item = (&'a str, &'a str)>>(
        items: impl Iterator<Item = (&'a str, P)>,
    ) -> LabelIndex<'a> {
        let mut by_namespace: HashMap<&'a str, Namespace<'a>, Fast> = HashMap::default();
        for (position, (namespace, labels)) in items.enumerate() {
            let namespace = by_namespace.entry(namespace).or_default();
            namespace.all.push(position);
            for (key, value) in labels {
                namespace.by_label.entry(key).or_default().entry(value).or_default().push(position);
            }
        }
        LabelIndex { by_namespace }
    }

    pub fn candidates(&self, namespace: &str, selector: &Selector) -> &[usize] {
        self.candidates_for(namespace, selector.match_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// [`LabelIndex::candidates`] for a selector given as its `matchLabels` pairs.
    pub fn candidates_for<'k>(
        &self,
        namespace: &str,
        match_labels: impl Iterator<Item = (&'k str, &'k str)>,
    ) -> &[usize] {
        let Some(namespace) = self.by_namespace.get(namespace) else { return &[] };
        let postings = match_labels.map(|(key, value)| {
            let list = namespace.by_label.get(key).and_then(|values| values.get(value));
            list.map_or(&[][..], Vec::as_slice)
        });
        postings.min_by_key(|list| list.len()).unwrap_or(&namespace.all)
    }
}
