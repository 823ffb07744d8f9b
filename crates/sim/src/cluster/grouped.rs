//! The grouped path of [`Cluster::select`]: one node per group of interchangeable nodes.
//!
//! Within a node class, nodes with the same usage, the same count under the pod's hostname spread
//! constraint and the same count under the rank's tally filter and score alike and rank alike,
//! so each such group is evaluated once and stands for its lowest-named member. The groups
//! ([`super::Grouping`]) are kept up to date as pods bind and leave (`Cluster::account`) and as
//! nodes change class (`Cluster::reclass`): a cycle costs the number of groups, not of nodes.
//!
//! [`Cluster::select_ranked`] breaks ties among the best-scoring nodes by a [`Rank`]: a value read
//! from class attributes (a zone), or the number of a workload's pods in the node's hostname
//! domain (the tie-break scenario at level node), which is a per-node tally and so joins the
//! group key. Nothing here compares label strings per node: counts are read by node index.

use super::change::Rank;
use super::{Cluster, plugins};
use crate::objects::Pod;
use crate::plugins::{Candidate, Domains, Spread, Usage};
use kix_kube::labels::HOSTNAME;
use std::collections::{BTreeSet, HashMap};

impl Cluster {
    /// Like [`Cluster::select`], but among the nodes with the best total score the one with the
    /// highest `rank`, then the lowest name. None when the grouped path does not apply: the caller
    /// then ranks [`Cluster::cycle`]'s nodes itself.
    pub fn select_ranked(&mut self, pod: &Pod, rank: &Rank<'_>) -> Option<Option<String>> {
        let spread = Spread::of(pod);
        if !self.fast_path_applies(pod, &spread)
            || self.interpod_applies(pod)
            || (matches!(rank, Rank::Hostname { .. }) && !self.unique_hostnames)
        {
            return None;
        }
        Some(self.grouped(pod, &spread, rank))
    }

    /// The grouped path: one node per group of interchangeable nodes.
    pub(super) fn grouped(&mut self, pod: &Pod, spread: &Spread, rank: &Rank<'_>) -> Option<String> {
        let tallies = self.tallies_for(pod, spread);
        let constraints: Vec<&plugins::Constraint> = spread.hard.iter().chain(&spread.soft).collect();
        let host = constraints.iter().position(|c| c.key == HOSTNAME);
        // The tally whose per-node count joins the group key (None: every count is 0).
        let host_tally = host.and_then(|c| tallies[c]);
        let rank_tally = match rank {
            Rank::Hostname { namespace, selector } => Some(self.tally(namespace, selector, true)),
            Rank::None | Rank::Class(_) => None,
        };
        let grouping = (host_tally.is_some() || rank_tally.is_some()).then(|| self.grouping(host_tally, rank_tally));
        let this = &*self;
        let groups = grouping.map(|g| &this.groupings[g].per_class);
        let hard: Vec<Domains<'_>> = spread
            .hard
            .iter()
            .enumerate()
            .map(|(c, con)| {
                if con.key != HOSTNAME {
                    return Domains::new(this.class_counts(pod, con, &spread.hard, tallies[c]));
                }
                // Each eligible node is a domain: count them and find the smallest count.
                let (mut len, mut min) = (0usize, i64::MAX);
                for (ci, class) in this.classes.iter().enumerate() {
                    let node = &this.nodes[class.representative];
                    if class.size == 0 || !plugins::has_all_keys(&node.labels, &spread.hard) || !con.includes(pod, node)
                    {
                        continue;
                    }
                    len += class.size;
                    let smallest = match groups {
                        Some(groups) => groups[ci].keys().map(|(_, n, _)| *n).min().unwrap_or(0),
                        None => 0,
                    };
                    min = min.min(smallest);
                }
                Domains::per_node(len, if len == 0 { 0 } else { min })
            })
            .collect();
        let all: &[plugins::Constraint] = if spread.require_all_keys { &spread.soft } else { &[] };
        let offset = spread.hard.len();
        let soft: Vec<plugins::DomainCounts<'_>> = spread
            .soft
            .iter()
            .enumerate()
            .map(|(c, con)| {
                if con.key == HOSTNAME { HashMap::new() } else { this.class_counts(pod, con, all, tallies[offset + c]) }
            })
            .collect();
        // Feasible groups: the lowest node, the group's own hostname count and its rank.
        let mut units: Vec<(usize, i64, i64)> = Vec::new();
        let mut candidates = Vec::new();
        for (ci, class) in this.classes.iter().enumerate() {
            let node = &this.nodes[class.representative];
            if class.size == 0 || plugins::filter_node(pod, node).is_err() {
                continue;
            }
            let labelled = node.labels.contains_key(HOSTNAME);
            let class_rank = match rank {
                Rank::Class(f) => f(node),
                Rank::None | Rank::Hostname { .. } => 0,
            };
            let grouped: Box<dyn Iterator<Item = (Usage, i64, i64, &BTreeSet<usize>)>> = match groups {
                Some(groups) => Box::new(groups[ci].iter().map(|((u, n, r), m)| (*u, *n, *r, m))),
                None => Box::new(class.buckets.iter().map(|(u, m)| (*u, 0, 0, m))),
            };
            for (usage, own, counted, members) in grouped {
                if plugins::filter_fit(pod, &node.allocatable, &usage).is_ok()
                    && plugins::filter_spread(pod, spread, &hard, &node.labels, own).is_ok()
                {
                    let first = *members.first()?;
                    let r = if rank_tally.is_some() { if labelled { counted } else { 0 } } else { class_rank };
                    units.push((first, own, r));
                    candidates.push(Candidate { node, usage, multiplicity: members.len() });
                }
            }
        }
        let scores = plugins::score(pod, spread, &candidates, &soft, |k, _| units[k].1);
        let mut best: Option<(i64, i64, usize)> = None;
        for (k, &(first, _, r)) in units.iter().enumerate() {
            let key = (scores[k].total, r, std::cmp::Reverse(first));
            if best.is_none_or(|(total, br, node)| key > (total, br, std::cmp::Reverse(node))) {
                best = Some((key.0, key.1, first));
            }
        }
        best.map(|(_, _, i)| this.nodes[i].name.clone())
    }
}
