//! A grouped cycle's groupings kept as pods bind and leave: each grouping files every node under its
//! usage and the counts of some slots, and catches up on the nodes changed since it was last used
//! (issue 38: with thousands of workloads on one cluster, refiling every grouping at every bind made a
//! bind cost every workload). Past a bound the groupings are dropped and made again when next used.

use super::change::{SLOTS, Slot, Source};
use super::{Cluster, GroupKey, Grouping, Groups, MAX_GROUPINGS, take};

impl Cluster {
    /// Notes that node `ni`'s key may have changed in every grouping: each catches up when it is next
    /// used ([`Cluster::grouping`]). A log longer than a few times the nodes is dropped, and the
    /// groupings behind it refile every node when next used.
    pub(super) fn node_changed(&mut self, ni: usize) {
        if self.groupings.is_empty() {
            return;
        }
        if self.changed.len() >= 4 * self.nodes.len().max(16) {
            self.changed_from += self.changed.len();
            self.changed.clear();
        }
        self.changed.push(ni);
    }

    /// Brings grouping `g` up to the current counts: the nodes changed since it last looked refiled,
    /// or every node when the log it needed was dropped.
    pub(super) fn catch_up(&mut self, g: usize) {
        let end = self.changed_from + self.changed.len();
        let seen = self.groupings[g].seen;
        if seen == end {
            return;
        }
        let mut nodes: Vec<usize> = if seen < self.changed_from {
            (0..self.nodes.len()).collect()
        } else {
            self.changed[seen - self.changed_from..].to_vec()
        };
        nodes.sort_unstable();
        nodes.dedup();
        for ni in nodes {
            let now = (self.class_of[ni], self.group_key(&self.groupings[g], ni));
            let grouping = &mut self.groupings[g];
            let (class, key) = grouping.keys[grouping.filed[ni] as usize];
            if (class, key) != now {
                take(&mut grouping.per_class[class], &key, ni);
                grouping.per_class[now.0].entry(now.1).or_default().insert(ni);
                grouping.filed[ni] = grouping.keys.len() as u32;
                grouping.keys.push(now);
            }
        }
        self.groupings[g].seen = end;
    }

    /// Node `ni`'s key in a grouping: its usage and the slots' counts on it.
    pub(super) fn group_key(&self, grouping: &Grouping, ni: usize) -> GroupKey {
        (self.usage[ni], self.slot_counts(&grouping.slots, ni))
    }

    /// The counts of `slots` (at most [`SLOTS`]) on node `ni`.
    pub(super) fn slot_counts(&self, slots: &[Slot], ni: usize) -> [i64; SLOTS] {
        let mut counts = [0; SLOTS];
        for (count, slot) in counts.iter_mut().zip(slots) {
            for &(source, weight) in slot {
                *count += weight * self.source(source).1[ni];
            }
        }
        counts
    }

    /// A source's per-class and per-node counts.
    pub(super) fn source(&self, source: Source) -> (&[i64], &[i64]) {
        match source {
            Source::Tally(t) => (&self.tallies[t].per_class, &self.tallies[t].per_node),
            Source::Owned(o) => (&self.owned[o].per_class, &self.owned[o].per_node),
        }
    }

    /// The grouping of some slots, built on first use.
    pub(super) fn grouping(&mut self, slots: Vec<Slot>) -> usize {
        if let Some(&g) = self.grouping_index.get(&slots) {
            self.catch_up(g);
            return g;
        }
        // A cluster of thousands of workloads would hold a grouping of every node for each: past
        // [`MAX_GROUPINGS`] they are dropped and rebuilt when next used (a cycle uses one; a workload's
        // pods are scheduled together, so each is rebuilt about once per scenario that needs it).
        if self.groupings.len() >= MAX_GROUPINGS {
            self.groupings.clear();
            self.grouping_index.clear();
            self.changed.clear();
            self.changed_from = 0;
        }
        let seen = self.changed_from + self.changed.len();
        // Every node whose slots count nothing is in its class's usage bucket: the buckets copied,
        // then the few nodes where a slot's source counts pods moved to their own keys (a workload's
        // grouping on a large shared cluster differs from the buckets at a handful of nodes).
        const NONE: [i64; SLOTS] = [0; SLOTS];
        let per_class: Vec<Groups> = (self.classes.iter())
            .map(|class| class.buckets.iter().map(|(usage, members)| ((*usage, NONE), members.clone())).collect())
            .collect();
        let mut keys: Vec<(usize, GroupKey)> = Vec::new();
        let mut filed = vec![0u32; self.nodes.len()];
        for (ci, class) in self.classes.iter().enumerate() {
            for (usage, members) in &class.buckets {
                for &ni in members {
                    filed[ni] = keys.len() as u32;
                }
                keys.push((ci, (*usage, NONE)));
            }
        }
        let mut grouping = Grouping { slots: slots.clone(), per_class, filed, keys, seen };
        let mut counting: Vec<usize> = (slots.iter().flatten())
            .flat_map(|&(source, _)| {
                let per_node = self.source(source).1;
                per_node.iter().enumerate().filter(|(_, n)| **n != 0).map(|(ni, _)| ni)
            })
            .collect();
        counting.sort_unstable();
        counting.dedup();
        for ni in counting {
            let key = self.group_key(&grouping, ni);
            if key.1 != NONE {
                let ci = self.class_of[ni];
                take(&mut grouping.per_class[ci], &(key.0, NONE), ni);
                grouping.per_class[ci].entry(key).or_default().insert(ni);
                grouping.filed[ni] = grouping.keys.len() as u32;
                grouping.keys.push((ci, key));
            }
        }
        self.groupings.push(grouping);
        self.grouping_index.insert(slots, self.groupings.len() - 1);
        self.groupings.len() - 1
    }
}
