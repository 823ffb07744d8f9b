//! Changes to a [`Cluster`] that can be undone, and node classes kept up to date in place.
//!
//! `kix verify` runs hundreds or thousands of scenarios (a domain failure, a node drain) from the
//! same placed state. Instead of copying the whole cluster for each, a scenario opens a
//! [`Checkpoint`], changes the cluster (binds, deletions, taints, cordons), and rolls back: while a
//! checkpoint is open every change is written to a journal with what it replaced, and
//! [`Cluster::rollback`] applies the inverse of each, newest first. Undoing restores the exact
//! layout (pod slots, each node's pod order, usage, tallies and groups), not just an equal state,
//! so what a later scenario iterates comes in the same order as on a fresh copy.
//!
//! A node's taints or cordon move it from one node class to another ([`Cluster::reclass`]): its
//! bucket, its tallies' per-class counts and groups move with it; a class left empty stays (with
//! size 0, skipped by the scheduling paths) so undoing the change finds it again.

use super::change::{Change, Checkpoint, class_key};
use super::{Class, Cluster, take};
use crate::objects::Pod;
use std::collections::BTreeMap;

impl Cluster {
    /// Starts recording changes; [`Cluster::rollback`] undoes every change made since.
    /// Checkpoints nest.
    pub fn checkpoint(&mut self) -> Checkpoint {
        self.open += 1;
        Checkpoint(self.journal.len())
    }

    /// Undoes every change since `checkpoint`, newest first. `on_pod` hears of every pod the
    /// undo binds again (+1) or deletes (-1), for callers that count pods.
    pub fn rollback(&mut self, checkpoint: Checkpoint, mut on_pod: impl FnMut(&Pod, i64)) {
        while self.journal.len() > checkpoint.0 {
            match self.journal.pop().expect("journal entry") {
                Change::Bound { slot } => {
                    let (pod, ni) = self.pods[slot].take().expect("a bound pod to unbind");
                    self.pod_slot.remove(&(pod.namespace.clone(), pod.name.clone()));
                    debug_assert_eq!(self.on_node[ni].last(), Some(&slot));
                    self.on_node[ni].pop();
                    self.account(ni, &pod, -1);
                    debug_assert_eq!(slot + 1, self.pods.len());
                    self.pods.truncate(slot);
                    self.slot_namespace.truncate(slot);
                    on_pod(&pod, -1);
                }
                Change::Removed { slot, node, position, pod } => {
                    self.account(node, &pod, 1);
                    on_pod(&pod, 1);
                    self.pod_slot.insert((pod.namespace.clone(), pod.name.clone()), slot);
                    self.on_node[node].insert(position, slot);
                    self.pods[slot] = Some((pod, node));
                }
                Change::Node { node, taints, unschedulable, absent } => {
                    self.nodes[node].taints = taints;
                    self.nodes[node].unschedulable = unschedulable;
                    self.nodes[node].absent = absent;
                    self.reclass(node);
                }
                Change::Namespace(name) => self.namespaces.forget(&name),
            }
        }
        self.open -= 1;
    }

    /// Records a change while a checkpoint is open.
    pub(super) fn record(&mut self, change: impl FnOnce() -> Change) {
        if self.open > 0 {
            self.journal.push(change());
        }
    }

    /// Records a node's taints and cordon before they change.
    pub(super) fn record_node(&mut self, ni: usize) {
        let node = &self.nodes[ni];
        let (taints, unschedulable, absent) = (node.taints.clone(), node.unschedulable, node.absent);
        self.record(|| Change::Node { node: ni, taints, unschedulable, absent });
    }

    /// Moves node `ni` to the class its attributes now give it (creating the class if new),
    /// carrying its bucket, its tallies' per-class counts and its groups along.
    pub(super) fn reclass(&mut self, ni: usize) {
        let key = class_key(&self.nodes[ni]);
        let next = self.classes.len();
        let to = *self.class_index.entry(key).or_insert(next);
        let from = self.class_of[ni];
        if to == from {
            return;
        }
        if to == next {
            self.classes.push(Class { representative: ni, buckets: BTreeMap::new(), size: 0 });
            for tally in &mut self.tallies {
                tally.per_class.push(0);
            }
            for owned in &mut self.owned {
                owned.per_class.push(0);
            }
            for grouping in &mut self.groupings {
                grouping.per_class.push(BTreeMap::new());
            }
        }
        let usage = self.usage[ni];
        let old = &mut self.classes[from];
        take(&mut old.buckets, &usage, ni);
        old.size -= 1;
        if old.representative == ni {
            // The lowest member, as a fresh build would pick (any member would do).
            old.representative = old.buckets.values().filter_map(|m| m.first().copied()).min().unwrap_or(ni);
        }
        let new = &mut self.classes[to];
        new.buckets.entry(usage).or_default().insert(ni);
        new.representative = if new.size == 0 { ni } else { new.representative.min(ni) };
        new.size += 1;
        // Only the tallies that count a pod on the node have anything to move.
        for &t in &self.node_tallies[ni] {
            let tally = &mut self.tallies[t];
            let own = tally.per_node[ni];
            tally.per_class[from] -= own;
            tally.per_class[to] += own;
        }
        for owned in &mut self.owned {
            let own = owned.per_node[ni];
            owned.per_class[from] -= own;
            owned.per_class[to] += own;
        }
        self.class_of[ni] = to;
        self.node_changed(ni);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Cluster;
    use crate::objects::Pod;
    use crate::snapshot::{State, parse_pod};
    use kix_kube::taints::Taint;
    use std::collections::{BTreeMap, BTreeSet};
    use std::fmt::Write as _;

    use crate::test_rng::Rng;

    /// Everything scheduling reads, in a form that does not depend on hash order: nodes, pods by
    /// slot, each node's pods, usage, the classes as sets of nodes with their buckets, the first
    /// `tallies` tallies, `groupings` groupings and `owned` owned-term counts (those made since
    /// count pods all the same).
    fn fingerprint(c: &mut Cluster, (tallies, groupings, owned): (usize, usize, usize)) -> String {
        // Groupings catch up when they are used: as a cycle would find them.
        for g in 0..c.groupings.len() {
            c.catch_up(g);
        }
        let c = &*c;
        let tallies = &c.tallies[..tallies];
        let groupings = &c.groupings[..groupings];
        let mut out = format!("{:?}\n{:?}\n{:?}\n{:?}\n", c.nodes, c.pods, c.on_node, c.usage);
        let slots: BTreeMap<_, _> = c.pod_slot.iter().collect();
        let classes: BTreeSet<String> = c
            .classes
            .iter()
            .enumerate()
            .filter(|(_, class)| class.size > 0)
            .map(|(ci, class)| {
                let tallies: Vec<_> = tallies.iter().map(|t| t.per_class[ci]).collect();
                let groups: Vec<_> = groupings.iter().map(|g| &g.per_class[ci]).collect();
                format!("{} {:?} {:?} {:?}", class.representative, class.buckets, tallies, groups)
            })
            .collect();
        let tallies: Vec<_> = tallies.iter().map(|t| &t.per_node).collect();
        let owned: Vec<_> = c.owned[..owned].iter().map(|o| (&o.per_node, o.per_class.iter().sum::<i64>())).collect();
        let _ = write!(
            out,
            "{slots:?}\n{classes:?}\n{tallies:?}\n{owned:?}\n{:?} {:?}",
            c.namespaces, c.pods_with_affinity
        );
        out
    }

    /// Pod affinity terms, or none: required and preferred, affinity and anti-affinity, on the
    /// hostname and the zone.
    fn terms(rng: &mut Rng) -> &'static str {
        match rng.below(6) {
            0 => {
                "\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}}"
            }
            1 => {
                "\n  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 4, podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: topology.kubernetes.io/zone}}]}}"
            }
            2 => {
                "\n  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, namespaceSelector: {}, topologyKey: topology.kubernetes.io/zone}]}}"
            }
            _ => "",
        }
    }

    fn random_state(rng: &mut Rng) -> String {
        let mut out = String::new();
        let nodes = 3 + rng.below(10);
        for i in 0..nodes {
            let zone = ["a", "b", "c"][rng.below(3) as usize];
            let cpu = ["2", "4"][rng.below(2) as usize];
            let taints = if rng.below(5) == 0 { "[{key: dedicated, effect: NoSchedule}]" } else { "[]" };
            let _ = writeln!(
                out,
                "---\nkind: Node\nmetadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}, topology.kubernetes.io/zone: {zone}}}}}\nspec: {{taints: {taints}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '20'}}}}"
            );
        }
        for p in 0..rng.below(15) {
            let node = rng.below(nodes);
            let terms = terms(rng);
            let _ = writeln!(
                out,
                "---\nkind: Pod\nmetadata: {{name: e{p}, namespace: default, labels: {{app: web}}}}\nspec:\n  nodeName: n{node}\n  containers: [{{name: c, resources: {{requests: {{cpu: 250m}}}}}}]{terms}",
            );
        }
        out
    }

    fn pod(name: &str, namespace: &str, host: &str, terms: &str) -> Pod {
        let yaml = format!(
            "kind: Pod\nmetadata: {{name: {name}, namespace: {namespace}, labels: {{app: web}}}}\nspec:{terms}\n  containers: [{{name: c, resources: {{requests: {{cpu: 500m}}}}}}]\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Honor, labelSelector: {{matchLabels: {{app: web}}}}}}\n  - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: {host}, labelSelector: {{matchLabels: {{app: web}}}}}}\n"
        );
        parse_pod(&kix_yaml::from_str(&yaml).unwrap(), namespace).unwrap()
    }

    /// Random binds, deletions, taints and cordons, with pods carrying pod affinity terms: in place,
    /// the fast path still picks the reference path's node (and InterPodAffinity's counts, kept as
    /// pods bind and leave and as nodes change class, give the reference's answers); rolled back,
    /// the cluster is exactly what it was.
    #[test]
    fn changes_roll_back_exactly_and_classes_moved_in_place_schedule_as_the_reference() {
        for seed in 1..=60u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut cluster = Cluster::new(&State::from_yaml_str(&random_state(&mut rng)).unwrap());
            let n = cluster.nodes.len() as u64;
            // Warm the tallies and groups a scenario would find.
            let _ = cluster.select(&pod("warm", "default", "ScheduleAnyway", ""));
            let _ = cluster.select(&pod("warm", "default", "DoNotSchedule", terms(&mut rng)));
            let tallies = (cluster.tallies.len(), cluster.groupings.len(), cluster.owned.len());
            let before = fingerprint(&mut cluster, tallies);
            let outer = cluster.checkpoint();
            for round in 0..3 {
                let inner = cluster.checkpoint();
                for step in 0..12 {
                    let node = format!("n{}", rng.below(n));
                    match rng.below(5) {
                        0 => cluster.taint(&node, &Taint::unreachable()),
                        1 => cluster.cordon(&node, rng.below(2) == 0),
                        2 => {
                            let victim = cluster.pods().nth(rng.below(20) as usize).map(|(p, _)| p.clone());
                            if let Some(p) = victim {
                                cluster.remove(&p.namespace, &p.name);
                            }
                        }
                        _ => {
                            let ns = if rng.below(4) == 0 { "fresh" } else { "default" };
                            let host = if rng.below(2) == 0 { "DoNotSchedule" } else { "ScheduleAnyway" };
                            let p = pod(&format!("p{round}-{step}"), ns, host, terms(&mut rng));
                            let cycle = cluster.cycle(&p);
                            let want = cycle.selected.clone();
                            assert_eq!(cluster.select(&p), want, "seed {seed} round {round} step {step}");
                            assert_eq!(cluster.failure_message(&p), cycle.failure_message(), "seed {seed}");
                            if let Some(node) = want {
                                cluster.bind(p, &node).unwrap();
                            }
                        }
                    }
                }
                let mut heard = 0;
                let middle = if round == 1 { Some(fingerprint(&mut cluster, tallies)) } else { None };
                cluster.rollback(inner, |_, _| heard += 1);
                if let Some(middle) = middle {
                    assert!(middle != fingerprint(&mut cluster, tallies), "seed {seed}: the changes changed nothing");
                }
            }
            cluster.rollback(outer, |_, _| {});
            assert!(before == fingerprint(&mut cluster, tallies), "seed {seed}: not rolled back exactly");
            assert!(cluster.journal.is_empty() && cluster.open == 0);
        }
    }
}
