//! Cross-instance checks: a stage of its own over one cluster's derived
//! output, since two instances that are each fine alone can still break each
//! other when applied together.
//!
//! - [`overlap`]: two workloads of one namespace whose selectors take each
//!   other's pods (R12, K0406);
//! - [`budgets`]: pods selected by two PodDisruptionBudgets, which the
//!   eviction API refuses to evict (K0415);
//! - [`shared_objects`]: one object emitted by two instances (K0417);
//! - [`kept_namespaces`]: a kept namespace nothing in the cluster creates (K0421).
//!
//! Every check finds its candidates through an index by namespace and label
//! ([`LabelIndex`]), never by comparing every pair of a cluster's workloads.

mod budgets;
mod kept_namespaces;
mod overlap;
mod shared_objects;

use crate::derive::ClusterPlan;
use crate::resolve::{Cluster, Instance, Workload};
use kix_diag::Diagnostics;
use kix_kube::selector::{Labels, Selector};
use std::collections::HashMap;

/// Runs every cross-instance check of one cluster.
pub fn check(cluster: &Cluster, plan: &ClusterPlan, diagnostics: &mut Diagnostics) {
    let plans = &plan.instances;
    let workloads = ClusterWorkloads::of(cluster);
    let overlapping = overlap::report(cluster, &workloads, diagnostics);
    budgets::report(cluster, &workloads, plans, &overlapping, diagnostics);
    shared_objects::report(cluster, plans, diagnostics);
    kept_namespaces::report(cluster, plan, diagnostics);
}

/// One workload of one instance, as the checks see it.
pub struct Entry<'a> {
    pub instance: &'a Instance,
    pub workload: &'a Workload,
}

impl Entry<'_> {
    fn namespace(&self) -> &str {
        &self.instance.namespace
    }

    fn labels(&self) -> &Labels {
        &self.workload.view.template_labels
    }
}

/// Every workload of a cluster's instances, indexed by namespace and template label.
pub struct ClusterWorkloads<'a> {
    pub entries: Vec<Entry<'a>>,
    index: LabelIndex<'a>,
}

impl<'a> ClusterWorkloads<'a> {
    fn of(cluster: &'a Cluster) -> ClusterWorkloads<'a> {
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

    /// The entries of `namespace` whose pod template the selector selects, in entry order.
    fn selected_by(&self, namespace: &str, selector: &Selector) -> Vec<usize> {
        self.index
            .candidates(namespace, selector)
            .iter()
            .copied()
            .filter(|&i| selector.matches(self.entries[i].labels()))
            .collect()
    }
}

/// Positions of labelled things by namespace, and by namespace and `key=value`.
///
/// A selector's candidates are the posting list of its rarest `matchLabels` pair (every match carries all
/// of them), or the whole namespace for a selector with expressions only; the caller confirms each.
/// Keys borrow from the cluster's model (this is built for every cluster of a fleet), one level per part
/// so that a lookup borrows its parts too.
pub struct LabelIndex<'a> {
    by_namespace: HashMap<&'a str, Namespace<'a>>,
}

/// One namespace's positions, and its positions by label key and value.
#[derive(Default)]
struct Namespace<'a> {
    all: Vec<usize>,
    by_label: HashMap<&'a str, HashMap<&'a str, Vec<usize>>>,
}

impl<'a> LabelIndex<'a> {
    fn new(items: impl Iterator<Item = (&'a str, &'a Labels)>) -> LabelIndex<'a> {
        let mut by_namespace: HashMap<&'a str, Namespace<'a>> = HashMap::new();
        for (position, (namespace, labels)) in items.enumerate() {
            let namespace = by_namespace.entry(namespace).or_default();
            namespace.all.push(position);
            for (key, value) in labels {
                namespace.by_label.entry(key).or_default().entry(value).or_default().push(position);
            }
        }
        LabelIndex { by_namespace }
    }

    fn candidates(&self, namespace: &str, selector: &Selector) -> &[usize] {
        let Some(namespace) = self.by_namespace.get(namespace) else { return &[] };
        let postings = selector.match_labels.iter().map(|(key, value)| {
            let list = namespace.by_label.get(key.as_str()).and_then(|values| values.get(value.as_str()));
            list.map_or(&[][..], Vec::as_slice)
        });
        postings.min_by_key(|list| list.len()).unwrap_or(&namespace.all)
    }
}
