//! Tallies: per class and per node, the bound pods a selector of one namespace counts (spread
//! constraints, the tie-break's rank), or the pods an InterPodAffinity term counts; each made on first
//! use by reading the pods of its namespace, and filed by namespace and by node so a bind and a class
//! change touch only the tallies they can change (issue 38).

use super::{Cluster, Counted, Tally, counts};
use crate::objects::Pod;
use crate::plugins::Spread;
use kix_kube::selector::Selector;

impl Cluster {
    /// The tally of each constraint's selector (hard ones first, then soft), created on first use.
    pub(super) fn tallies_for(&mut self, pod: &Pod, spread: &Spread) -> Vec<Option<usize>> {
        spread
            .hard
            .iter()
            .chain(&spread.soft)
            .map(|c| c.selector.as_ref().map(|s| self.tally(&pod.namespace, s, false)))
            .collect()
    }

    /// The tally of pods of `namespace` that `selector` matches (terminating ones too if
    /// `terminating`), created on first use.
    pub(super) fn tally(&mut self, namespace: &str, selector: &Selector, terminating: bool) -> usize {
        let key = format!("{namespace}\u{0}{terminating}\u{0}{selector:?}");
        let counted = || Counted::Pods { namespace: namespace.to_string(), selector: selector.clone(), terminating };
        self.tally_of(key, counted)
    }

    /// The tally known by `key`, counting what `counted` says, created on first use.
    pub(super) fn tally_of(&mut self, key: String, counted: impl FnOnce() -> Counted) -> usize {
        if let Some(&t) = self.tally_index.get(&key) {
            return t;
        }
        let mut tally =
            Tally { counted: counted(), per_class: vec![0; self.classes.len()], per_node: vec![0; self.nodes.len()] };
        let t = self.tallies.len();
        // A tally of one namespace's pods reads only the slots of that namespace.
        let namespace = match &tally.counted {
            Counted::Pods { namespace, .. } => Some(self.namespace_id(namespace)),
            Counted::Terms(_) => None,
        };
        for (slot, entry) in self.pods.iter().enumerate() {
            let Some((pod, ni)) = entry else { continue };
            if namespace.is_some_and(|id| self.slot_namespace[slot] != id) {
                continue;
            }
            if counts(&tally, pod, &self.namespaces) {
                tally.per_class[self.class_of[*ni]] += 1;
                if tally.per_node[*ni] == 0 {
                    self.node_tallies[*ni].push(t);
                }
                tally.per_node[*ni] += 1;
            }
        }
        match namespace {
            Some(id) => self.namespace_tallies[id as usize].push(t),
            None => self.term_tallies.push(t),
        }
        self.tallies.push(tally);
        self.tally_index.insert(key, t);
        t
    }

    /// The number of a namespace (see `namespace_ids`), given on first sight.
    pub(super) fn namespace_id(&mut self, namespace: &str) -> u32 {
        if let Some(&id) = self.namespace_ids.get(namespace) {
            return id;
        }
        let id = self.namespace_tallies.len() as u32;
        self.namespace_ids.insert(namespace.to_string(), id);
        self.namespace_tallies.push(Vec::new());
        id
    }
}
