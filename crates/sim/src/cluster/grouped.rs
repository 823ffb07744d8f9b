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
//!
//! InterPodAffinity joins the same way ([`super::affinity`]): its pairs of keys other than the
//! hostname are class attributes, its hostname pairs four more slots of the group key. The same
//! groups give the FailedScheduling message ([`Cluster::failure_message`]: each group's rejection
//! counted once per member) and whether a node outside some failed ones rejects a pod only for a
//! given reason ([`Cluster::rejects_only_for`]), without a reference cycle over every node.

use super::change::{HOST_SLOT, Plan, RANK_SLOT, Rank, SLOTS, Slot, Source};
use super::{Cluster, GroupKey, plugins};
use crate::framework::Rejection;
use crate::interpod;
use crate::objects::Pod;
use crate::plugins::{Candidate, Domains, Scores, Spread};
use kix_kube::labels::HOSTNAME;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What the grouped path prepared for one pod: its spread constraints' tallies (hard ones first),
/// the rank's tally, the grouping (None: every slot is 0, the usage buckets serve) and the
/// InterPodAffinity plan.
struct Setup {
    spread: Spread,
    tallies: Vec<Option<usize>>,
    rank_tally: Option<usize>,
    grouping: Option<usize>,
    affinity: Option<Plan>,
}

/// One group of interchangeable nodes and what the cycle made of them.
struct Unit<'a> {
    first: usize,
    members: &'a BTreeSet<usize>,
    rank: i64,
    verdict: Result<Scores, Rejection>,
}

impl Cluster {
    /// Like [`Cluster::select`], but among the nodes with the best total score the one with the
    /// highest `rank`, then the lowest name. None when the grouped path does not apply: the caller
    /// then ranks [`Cluster::cycle`]'s nodes itself.
    pub fn select_ranked(&mut self, pod: &Pod, rank: &Rank<'_>) -> Option<Option<String>> {
        let spread = Spread::of(pod);
        if !self.grouped_applies(pod, &spread) || (matches!(rank, Rank::Hostname { .. }) && !self.unique_hostnames) {
            return None;
        }
        Some(self.grouped(pod, spread, rank))
    }

    /// The FailedScheduling message [`Cluster::cycle`] gives ([`super::Cycle::failure_message`]),
    /// from the node groups where the grouped path applies.
    pub fn failure_message(&mut self, pod: &Pod) -> String {
        let spread = Spread::of(pod);
        if !self.grouped_applies(pod, &spread) {
            return self.cycle(pod).failure_message();
        }
        let setup = self.setup(pod, spread, &Rank::None);
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for unit in self.units(pod, &setup, &Rank::None, true) {
            if let Err(r) = unit.verdict {
                *reasons.entry(r.message()).or_insert(0) += unit.members.len();
            }
        }
        super::failure_text(self.nodes.len(), &reasons)
    }

    /// Whether a node not named in `outside` rejects the pod for `reason` alone (as
    /// [`Cluster::cycle`] would say).
    pub fn rejects_only_for(&mut self, pod: &Pod, reason: &str, outside: &[String]) -> bool {
        let spread = Spread::of(pod);
        if !self.grouped_applies(pod, &spread) {
            return self.cycle(pod).nodes.iter().any(|(node, outcome)| {
                !outside.contains(node) && matches!(outcome, super::Outcome::Rejected(r) if r.reasons == [reason])
            });
        }
        let setup = self.setup(pod, spread, &Rank::None);
        self.units(pod, &setup, &Rank::None, true).iter().any(|unit| {
            matches!(&unit.verdict, Err(r) if r.reasons == [reason])
                && unit.members.iter().any(|&m| !outside.contains(&self.nodes[m].name))
        })
    }

    /// The grouped path: one node per group of interchangeable nodes.
    pub(super) fn grouped(&mut self, pod: &Pod, spread: Spread, rank: &Rank<'_>) -> Option<String> {
        let setup = self.setup(pod, spread, rank);
        let mut best: Option<(i64, i64, usize)> = None;
        for unit in self.units(pod, &setup, rank, false) {
            let Ok(scores) = unit.verdict else { continue };
            let key = (scores.total, unit.rank, std::cmp::Reverse(unit.first));
            if best.is_none_or(|(total, br, node)| key > (total, br, std::cmp::Reverse(node))) {
                best = Some((key.0, key.1, unit.first));
            }
        }
        best.map(|(_, _, i)| self.nodes[i].name.clone())
    }

    /// The tallies, grouping and InterPodAffinity plan a grouped cycle reads, created on first use.
    fn setup(&mut self, pod: &Pod, spread: Spread, rank: &Rank<'_>) -> Setup {
        let tallies = self.tallies_for(pod, &spread);
        let host = spread.hard.iter().chain(&spread.soft).position(|c| c.key == HOSTNAME);
        let rank_tally = match rank {
            Rank::Hostname { namespace, selector } => Some(self.tally(namespace, selector, true)),
            Rank::None | Rank::Class(_) => None,
        };
        let affinity = self.interpod_applies(pod).then(|| self.affinity_plan(pod));
        let mut slots: Vec<Slot> = affinity.as_ref().map_or_else(|| vec![Vec::new(); SLOTS], |a| a.slots.clone());
        // The tally whose per-node count joins the group key (None: every count is 0).
        if let Some(t) = host.and_then(|c| tallies[c]) {
            slots[HOST_SLOT] = vec![(Source::Tally(t), 1)];
        }
        if let Some(t) = rank_tally {
            slots[RANK_SLOT] = vec![(Source::Tally(t), 1)];
        }
        let grouping = slots.iter().any(|s| !s.is_empty()).then(|| self.grouping(slots));
        Setup { spread, tallies, rank_tally, grouping, affinity }
    }

    /// Every group of nodes with its verdict; rejected classes only if `rejected` (their members
    /// count in a failure message).
    fn units<'a>(&'a self, pod: &Pod, setup: &Setup, rank: &Rank<'_>, rejected: bool) -> Vec<Unit<'a>> {
        let (spread, tallies) = (&setup.spread, &setup.tallies);
        let groups = setup.grouping.map(|g| &self.groupings[g].per_class);
        let hard: Vec<Domains<'_>> = spread
            .hard
            .iter()
            .enumerate()
            .map(|(c, con)| {
                if con.key != HOSTNAME {
                    return Domains::new(self.class_counts(pod, con, &spread.hard, tallies[c]));
                }
                // Each eligible node is a domain: count them and find the smallest count.
                let (mut len, mut min) = (0usize, i64::MAX);
                for (ci, class) in self.classes.iter().enumerate() {
                    let node = &self.nodes[class.representative];
                    if class.size == 0 || !plugins::has_all_keys(&node.labels, &spread.hard) || !con.includes(pod, node)
                    {
                        continue;
                    }
                    len += class.size;
                    let smallest = match groups {
                        Some(groups) => groups[ci].keys().map(|(_, n)| n[HOST_SLOT]).min().unwrap_or(0),
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
                if con.key == HOSTNAME { HashMap::new() } else { self.class_counts(pod, con, all, tallies[offset + c]) }
            })
            .collect();
        let mut units: Vec<Unit<'a>> = Vec::new();
        // Per feasible unit: its index, own hostname count, InterPodAffinity raw score; candidate.
        let mut feasible: Vec<(usize, i64, i64)> = Vec::new();
        let mut candidates = Vec::new();
        const NONE: [i64; SLOTS] = [0; SLOTS];
        for (ci, class) in self.classes.iter().enumerate() {
            let node = &self.nodes[class.representative];
            if class.size == 0 {
                continue;
            }
            // Without a grouping, the usage buckets with every slot 0.
            let grouped: Box<dyn Iterator<Item = (GroupKey, &'a BTreeSet<usize>)>> = match groups {
                Some(groups) => Box::new(groups[ci].iter().map(|(k, m)| (*k, m))),
                None => Box::new(class.buckets.iter().map(|(u, m)| ((*u, NONE), m))),
            };
            if let Err(r) = plugins::filter_node(pod, node) {
                if rejected {
                    for (_, members) in grouped {
                        let first = *members.first().expect("a group has members");
                        units.push(Unit { first, members, rank: 0, verdict: Err(r.clone()) });
                    }
                }
                continue;
            }
            let labelled = node.labels.contains_key(HOSTNAME);
            // A node outside the hard hostname constraint's domains (lacking another hard key, or
            // left out by its inclusion policies) counts 0 there, as upstream's PreFilter pairs.
            let host_domain = plugins::has_all_keys(&node.labels, &spread.hard)
                && spread.hard.iter().filter(|c| c.key == HOSTNAME).all(|c| c.includes(pod, node));
            let class_rank = match rank {
                Rank::Class(f) => f(node),
                Rank::None | Rank::Hostname { .. } => 0,
            };
            for ((usage, counts), members) in grouped {
                let own = counts[HOST_SLOT];
                let in_domain = if host_domain { own } else { 0 };
                let verdict = plugins::filter_fit(pod, &node.allocatable, &usage)
                    .and_then(|()| plugins::filter_volume(pod, node))
                    .and_then(|()| plugins::filter_spread(pod, spread, &hard, &node.labels, in_domain))
                    .and_then(|()| setup.affinity.as_ref().map_or(Ok(()), |a| a.filter(ci, &counts)));
                if verdict.is_err() && !rejected {
                    continue;
                }
                let first = *members.first().expect("a group has members");
                let r =
                    if setup.rank_tally.is_some() { if labelled { counts[RANK_SLOT] } else { 0 } } else { class_rank };
                if verdict.is_ok() {
                    let raw = setup.affinity.as_ref().map_or(0, |a| a.raw_score(ci, &counts));
                    feasible.push((units.len(), own, raw));
                    candidates.push(Candidate { node, usage, multiplicity: members.len() });
                }
                units.push(Unit { first, members, rank: r, verdict: verdict.map(|()| Scores::default()) });
            }
        }
        let mut scores = plugins::score(pod, spread, &candidates, &soft, |k, _| feasible[k].1);
        if setup.affinity.is_some() {
            let raw: Vec<i64> = feasible.iter().map(|f| f.2).collect();
            for (s, score) in scores.iter_mut().zip(interpod::normalise(&raw)) {
                s.inter_pod_affinity = score;
                s.total += plugins::WEIGHT_INTER_POD * score;
            }
        }
        for (&(u, _, _), s) in feasible.iter().zip(scores) {
            units[u].verdict = Ok(s);
        }
        units
    }
}
