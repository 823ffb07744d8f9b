//! InterPodAffinity from counts kept as pods bind and leave, instead of a pass over every bound pod
//! per cycle.
//!
//! Upstream's PreFilter (kubernetes/kubernetes v1.33
//! `pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`) builds a `preFilterState`
//! of three `topologyToMatchedTermCount` maps: `getExistingAntiAffinityCounts` (existing pods'
//! required anti-affinity terms that match the incoming pod, per topology pair of their node),
//! and `getIncomingAffinityAntiAffinityCounts` (`affinityCounts`: existing pods matching all of
//! the incoming pod's required affinity terms; `antiAffinityCounts`: those matching one of its
//! required anti-affinity terms), and keeps the state current within a cycle through its
//! `PreFilterExtensions` `AddPod`/`RemovePod` (`updateWithPod`). PreScore (`scoring.go`,
//! `processExistingPod`) sums the same kind of pairs for scoring. kix keeps those counts across
//! cycles instead, in the cluster's indexes, updated by every bind and unbind (also those the
//! journal undoes):
//!
//! - the incoming pod's terms are tallies ([`super::Counted::Terms`]): pods matching a term (or all
//!   of the required affinity terms) per node and per class, created on first use;
//! - existing pods' terms are [`super::Owned`] counts: how many bound pods carry each distinct term
//!   (resolved against its owner: `matchLabelKeys`, its namespace), per node and per class. A cycle
//!   matches each distinct term against the incoming pod once, not each pod's.
//!
//! A topology pair's count is then a sum of per-class counts for a key other than the hostname
//! (a class's nodes share every label but the hostname) and one node's count for the hostname
//! (taken only while every hostname is unique, so the pair is the node). [`Plan`] holds, per
//! class, what the class-level pairs decide, and four weighted sums of per-node counts
//! (its [`Plan::slots`]: required affinity, required anti-affinity, existing anti-affinity,
//! score) for the hostname pairs. Those sums join the grouped path's group key, so nodes whose
//! pods no term counts (and nodes that hold the same counts) stay one group: node classes stand
//! for them. The reference path ([`interpod::Prepared`], from every bound pod) stays, used by
//! [`Cluster::cycle`], and tests compare the two on random clusters.

use super::change::{AFFINITY, ANTI, EXISTING_ANTI, InterPod, Plan, Role, SCORE, SLOTS, Slot, Source};
use super::{Cluster, Counted, Owned};
use crate::framework::Rejection;
use crate::interpod::{HARD_POD_AFFINITY_WEIGHT, Term};
use crate::objects::{AffinityTerm, Pod};
use kix_kube::labels::HOSTNAME;
use std::collections::HashMap;

/// One contribution to a topology pair: the key, the per-node counts and a weight.
type Part = (String, Source, i64);

impl Cluster {
    /// InterPodAffinity for a pod on the per-node path: from counts while hostnames are unique,
    /// else from every bound pod.
    pub(super) fn interpod_counted(&mut self, pod: &Pod) -> InterPod {
        if self.unique_hostnames {
            InterPod::Counted(self.affinity_plan(pod))
        } else {
            InterPod::Reference(self.interpod(pod))
        }
    }

    /// [`InterPod`]'s filter on node `ni`.
    pub(super) fn interpod_filter(&self, affinity: &InterPod, ni: usize) -> Result<(), Rejection> {
        match affinity {
            InterPod::Reference(prepared) => prepared.filter(&self.nodes[ni].labels),
            InterPod::Counted(plan) => plan.filter(self.class_of[ni], &self.slot_counts(&plan.slots, ni)),
        }
    }

    /// [`InterPod`]'s raw score on node `ni`.
    pub(super) fn interpod_raw_score(&self, affinity: &InterPod, ni: usize) -> i64 {
        match affinity {
            InterPod::Reference(prepared) => prepared.raw_score(&self.nodes[ni].labels),
            InterPod::Counted(plan) => plan.raw_score(self.class_of[ni], &self.slot_counts(&plan.slots, ni)),
        }
    }

    /// The [`Plan`] for an incoming pod (hostnames must be unique).
    pub(super) fn affinity_plan(&mut self, pod: &Pod) -> Plan {
        let own = &pod.spec.pod_affinity;
        let counted =
            |terms: &[&AffinityTerm]| -> Vec<Term> { terms.iter().map(|t| Term::new(t, pod, None)).collect() };
        // The incoming pod's terms: tallies of the pods they match.
        let required = counted(&own.required.iter().collect::<Vec<_>>());
        let affinity = (!required.is_empty()).then(|| self.terms_tally(required.clone()));
        let mut anti: Vec<Part> = Vec::new();
        for t in &own.required_anti {
            let term = counted(&[t]);
            let key = term[0].key.clone();
            anti.push((key, Source::Tally(self.terms_tally(term)), 1));
        }
        let mut score: Vec<Part> = Vec::new();
        for (sign, terms) in [(1, &own.preferred), (-1, &own.preferred_anti)] {
            for (w, t) in terms {
                let term = counted(&[t]);
                let key = term[0].key.clone();
                score.push((key, Source::Tally(self.terms_tally(term)), sign * w));
            }
        }
        // Existing pods' terms that match the incoming pod.
        let own_labels = self.namespaces.labels(&pod.namespace);
        let mut existing: Vec<Part> = Vec::new();
        for (o, owned) in self.owned.iter().enumerate() {
            if !owned.term.matches(pod, &own_labels) {
                continue;
            }
            let part = |w| (owned.term.key.clone(), Source::Owned(o), w);
            match owned.role {
                Role::RequiredAnti => existing.push(part(1)),
                Role::Required => score.push(part(HARD_POD_AFFINITY_WEIGHT)),
                Role::Preferred(w) => score.push(part(w)),
            }
        }
        let resolved: Vec<Term> = own.required.iter().map(|t| Term::new(t, pod, Some(&self.namespaces))).collect();
        let self_match = !resolved.is_empty() && resolved.iter().all(|t| t.matches(pod, &own_labels));

        // Per class: the pairs of keys other than the hostname.
        let this = &*self;
        let mut pair_counts: HashMap<(Source, String), Vec<i64>> = HashMap::new();
        let mut count_at = |source: Source, key: &str, ci: usize| -> i64 {
            pair_counts.entry((source, key.to_string())).or_insert_with(|| this.pair_counts(source, key))[ci]
        };
        let classes = self.classes.len();
        let mut plan = Plan {
            slots: vec![Vec::new(); SLOTS],
            lacks_key: vec![false; classes],
            affinity_ok: vec![true; classes],
            anti: vec![false; classes],
            existing_anti: vec![false; classes],
            score: vec![0; classes],
            labelled: vec![false; classes],
            host_required: own.required.iter().any(|t| t.topology_key == HOSTNAME),
            first_of_group: false,
        };
        let mut everywhere = 0;
        for ci in 0..classes {
            let labels = &this.nodes[this.classes[ci].representative].labels;
            plan.labelled[ci] = labels.contains_key(HOSTNAME);
            let mut lacks = false;
            let mut affinity_ok = true;
            for t in &own.required {
                if !labels.contains_key(&t.topology_key) {
                    lacks = true;
                    continue;
                }
                let a = affinity.expect("a tally for required terms");
                everywhere += this.tallies[a].per_class[ci];
                if t.topology_key != HOSTNAME && count_at(Source::Tally(a), &t.topology_key, ci) <= 0 {
                    affinity_ok = false;
                }
            }
            plan.lacks_key[ci] = lacks;
            plan.affinity_ok[ci] = affinity_ok;
            plan.anti[ci] = hostless(&anti).any(|(key, s, _)| count_at(*s, key, ci) > 0);
            plan.existing_anti[ci] = hostless(&existing).any(|(key, s, _)| count_at(*s, key, ci) > 0);
            plan.score[ci] = hostless(&score).map(|(key, s, w)| w * count_at(*s, key, ci)).sum();
        }
        plan.first_of_group = self_match && everywhere == 0;
        let host = |parts: &[Part]| -> Slot {
            parts.iter().filter(|(k, _, _)| k == HOSTNAME).map(|(_, s, w)| (*s, *w)).collect()
        };
        if plan.host_required {
            plan.slots[AFFINITY] = vec![(Source::Tally(affinity.expect("a tally for required terms")), 1)];
        }
        plan.slots[ANTI] = host(&anti);
        plan.slots[EXISTING_ANTI] = host(&existing);
        plan.slots[SCORE] = host(&score);
        plan
    }

    /// Per class, a source's count in the class's pair of `key` (a key other than the hostname,
    /// which a class's nodes share; 0 for a class without it).
    fn pair_counts(&self, source: Source, key: &str) -> Vec<i64> {
        let per_class = self.source(source).0;
        let value = |ci: usize| self.nodes[self.classes[ci].representative].labels.get(key);
        let mut per_value: HashMap<&str, i64> = HashMap::new();
        for (ci, &count) in per_class.iter().enumerate() {
            if let Some(v) = value(ci) {
                *per_value.entry(v.as_str()).or_insert(0) += count;
            }
        }
        (0..self.classes.len()).map(|ci| value(ci).map_or(0, |v| per_value[v.as_str()])).collect()
    }

    /// The tally of pods matching all of `terms` (an incoming pod's), created on first use.
    fn terms_tally(&mut self, terms: Vec<Term>) -> usize {
        let key = format!("terms\u{0}{terms:?}");
        self.tally_of(key, || Counted::Terms(terms))
    }

    /// The owned-term counts a bound pod's terms add to, one entry per term (created on first use).
    pub(super) fn owned_terms(&mut self, pod: &Pod) -> Vec<usize> {
        let own = &pod.spec.pod_affinity;
        let roles = own
            .required
            .iter()
            .map(|t| (Role::Required, t))
            .chain(own.required_anti.iter().map(|t| (Role::RequiredAnti, t)))
            .chain(own.preferred.iter().map(|(w, t)| (Role::Preferred(*w), t)))
            .chain(own.preferred_anti.iter().map(|(w, t)| (Role::Preferred(-w), t)));
        let mut out = Vec::new();
        for (role, t) in roles {
            let term = Term::new(t, pod, None);
            let key = format!("{role:?}\u{0}{term:?}");
            let next = self.owned.len();
            let o = *self.owned_index.entry(key).or_insert(next);
            if o == next {
                let (classes, nodes) = (self.classes.len(), self.nodes.len());
                self.owned.push(Owned { role, term, per_class: vec![0; classes], per_node: vec![0; nodes] });
            }
            out.push(o);
        }
        out
    }
}

/// The parts on keys other than the hostname.
fn hostless(parts: &[Part]) -> impl Iterator<Item = &Part> {
    parts.iter().filter(|(key, _, _)| key != HOSTNAME)
}
