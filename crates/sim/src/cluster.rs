//! A mutable cluster: nodes, bound pods, and one scheduling cycle two ways.
//!
//! [`Cluster::cycle`] is the reference path: it runs every filter and score
//! on every node and reports each node's outcome (what `kix schedule` prints).
//! [`Cluster::select`] is the fast path the simulations use. Nodes that differ
//! only in name and hostname label (same other labels, hostname present or
//! not, taints, cordon and allocatable) form a class; within a class, nodes
//! with the same usage form a bucket, kept in name order. When the pod looks
//! at no node's identity (no `nodeName`, no `matchFields`, no hostname key in
//! its node affinity) and asks for no host port (NodePorts reads each node's
//! pods, which no bucket records), every node of a bucket filters and scores alike, so
//! the fast path evaluates one node per bucket and takes the bucket's lowest
//! name. Hostname spread constraints (kix's own, the system defaults) are
//! handled by grouping each class's nodes by usage *and* the node's own count
//! under the constraint's selector, kept up to date as pods bind and leave.
//! Per-domain counts come from per-(namespace, selector) tallies per class
//! and per node: no pass over all pods per cycle. Anything else (hostname
//! constraints with different selectors, node-name affinity, duplicate
//! hostname labels) is evaluated on every node with the per-node tallies.
//! Tests check that `select` always chooses the reference path's node.
//! The grouped path and its groupings (nodes keyed by usage and two tallies'
//! per-node counts: the hostname constraint's and the tie-break rank's) are in
//! [`grouped`].
//!
//! InterPodAffinity ([`super::interpod`]) applies to a pod with pod affinity or anti-affinity
//! terms, and to any pod on a cluster where a bound pod has such terms (its required
//! anti-affinity filters every incoming pod, its preferred and required terms score it). The
//! reference path evaluates it from a scan of every bound pod per cycle; the scheduling paths read
//! counts kept as pods bind and leave ([`affinity`]): per class for keys other than the hostname,
//! per node (joining the group key) for the hostname, so node classes still stand for the nodes
//! whose pods no term counts. With duplicate hostnames it falls back to the scan.

mod affinity;
mod change;
mod grouped;
mod grouping;
mod journal;
mod tallies;

use change::{Change, ClassKey, InterPod, Role, SLOTS, Slot, class_key, failure_text};
pub use change::{Checkpoint, Cycle, Outcome, Rank};

use super::interpod::{self, NamespaceIndex};
use super::node_ports;
use super::objects::{Node, Pod};
use super::plugins::{self, Candidate, Domains, Spread, Usage};
use super::snapshot::State;
use kix_kube::labels::HOSTNAME;
use kix_kube::selector::Selector;
use kix_kube::taints::Taint;
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Clone, Debug)]
struct Class {
    /// A member node, for the filters and scores that read only class attributes.
    representative: usize,
    /// Nodes by usage, each set in name order.
    buckets: BTreeMap<Usage, BTreeSet<usize>>,
    /// How many nodes the class holds.
    size: usize,
}

/// A node's usage and its [`SLOTS`] counts.
type GroupKey = (Usage, [i64; SLOTS]);

/// How many groupings a cluster keeps at once (see [`Cluster::grouping`]).
const MAX_GROUPINGS: usize = 128;

/// Nodes of one class grouped by their [`GroupKey`], in name order (see [`grouped`]).
type Groups = BTreeMap<GroupKey, BTreeSet<usize>>;

/// Per class, the nodes grouped by usage and the per-node counts of some slots; built the first
/// time a cycle needs it, and brought up to date when a cycle needs it again (issue 38: a cluster of
/// 3,000 workloads has about as many groupings, and refiling every node in every grouping at each bind
/// made a bind cost the whole cluster's workloads). `filed` names, by index into `keys`, the class
/// and key each node is filed under (four bytes a node: a workload's grouping is made often on a
/// large cluster); `seen` how far it has read the cluster's log of changed nodes.
#[derive(Clone, Debug)]
struct Grouping {
    slots: Vec<Slot>,
    per_class: Vec<Groups>,
    filed: Vec<u32>,
    keys: Vec<(usize, GroupKey)>,
    seen: usize,
}

/// What a tally counts.
#[derive(Clone, Debug)]
enum Counted {
    /// Pods of `namespace` that `selector` matches; terminating ones too if `terminating` (a
    /// workload's own pods, as the tie-break counts them); spread constraints count only pods
    /// that are not terminating.
    Pods { namespace: String, selector: Selector, terminating: bool },
    /// Pods matching every one of an incoming pod's InterPodAffinity terms, terminating or not.
    Terms(Vec<interpod::Term>),
}

#[derive(Clone, Debug)]
struct Tally {
    counted: Counted,
    /// Counted pods per class.
    per_class: Vec<i64>,
    /// The same per node.
    per_node: Vec<i64>,
}

/// Bound pods carrying one InterPodAffinity term (its role and weight, resolved against its owner)
/// per node and per class: what upstream finds by walking `HavePodsWithAffinityList`.
#[derive(Clone, Debug)]
struct Owned {
    role: Role,
    term: interpod::Term,
    per_class: Vec<i64>,
    per_node: Vec<i64>,
}

/// Nodes and bound pods, with the indexes both scheduling paths use.
#[derive(Clone, Debug)]
pub struct Cluster {
    nodes: Vec<Node>,
    by_name: HashMap<String, usize>,
    /// Bound pods in slots; None marks a deleted pod.
    pods: Vec<Option<(Pod, usize)>>,
    pod_slot: HashMap<(String, String), usize>,
    on_node: Vec<Vec<usize>>,
    usage: Vec<Usage>,
    class_of: Vec<usize>,
    classes: Vec<Class>,
    /// Each class by what its nodes share; a class whose nodes all left stays, empty.
    class_index: BTreeMap<ClassKey, usize>,
    tallies: Vec<Tally>,
    tally_index: HashMap<String, usize>,
    /// Per namespace (by [`Cluster::namespace_id`]), the tallies of pods of that namespace; and the
    /// tallies of InterPodAffinity terms, which may count any namespace's pods. A bind looks at these
    /// only (issue 38: a cluster of 3,000 workloads holds about 9,000 tallies).
    namespace_tallies: Vec<Vec<usize>>,
    term_tallies: Vec<usize>,
    /// Per node, the tallies that count a pod on it: what a node changing class moves (its other
    /// tallies count 0 there).
    node_tallies: Vec<Vec<usize>>,
    /// Every namespace a pod or tally named, numbered; and each slot's pod's namespace number, so a new
    /// tally counts the pods of its namespace without comparing every pod's namespace text.
    namespace_ids: HashMap<String, u32>,
    slot_namespace: Vec<u32>,
    /// Bound pods' InterPodAffinity terms, counted per node (see [`affinity`]).
    owned: Vec<Owned>,
    owned_index: HashMap<String, usize>,
    groupings: Vec<Grouping>,
    grouping_index: HashMap<Vec<Slot>, usize>,
    /// The nodes whose usage, counts or class changed, in order, from position `changed_from` of
    /// the whole log (a grouping that has read less is refiled whole): what groupings catch up on.
    changed: Vec<usize>,
    changed_from: usize,
    /// Every node has its own `kubernetes.io/hostname` value (or none): then a hostname
    /// domain is one node, which the fast path relies on.
    unique_hostnames: bool,
    /// Namespaces the model knows (declared ones and those of pods), for `namespaceSelector`.
    namespaces: NamespaceIndex,
    /// Bound pods with pod affinity or anti-affinity terms.
    pods_with_affinity: i64,
    /// Changes since the oldest open checkpoint (see [`journal`]).
    journal: Vec<Change>,
    /// Checkpoints open.
    open: usize,
}

impl Cluster {
    /// Builds a cluster from a snapshot; pods not bound to a known node are left out.
    pub fn new(state: &State) -> Cluster {
        Cluster::with(state.nodes.clone(), state.pods.iter().cloned(), &state.namespaces)
    }

    /// [`Cluster::new`] taking the snapshot's nodes and pods instead of copying them (`simulate` and
    /// `schedule` read a snapshot once: copying 5,000 nodes and pods was a fifth of `kix simulate`).
    pub fn from_state(state: State) -> Cluster {
        Cluster::with(state.nodes, state.pods.into_iter(), &state.namespaces)
    }

    fn with(
        mut nodes: Vec<Node>,
        pods: impl Iterator<Item = Pod>,
        namespaces: &[super::objects::Namespace],
    ) -> Cluster {
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
        let n = nodes.len();
        let mut cluster = Cluster {
            nodes,
            by_name,
            pods: Vec::with_capacity(pods.size_hint().0),
            pod_slot: HashMap::with_capacity(pods.size_hint().0),
            on_node: vec![Vec::new(); n],
            usage: vec![Usage::default(); n],
            class_of: Vec::new(),
            classes: Vec::new(),
            class_index: BTreeMap::new(),
            tallies: Vec::new(),
            tally_index: HashMap::new(),
            namespace_tallies: Vec::new(),
            term_tallies: Vec::new(),
            node_tallies: vec![Vec::new(); n],
            namespace_ids: HashMap::new(),
            slot_namespace: Vec::new(),
            owned: Vec::new(),
            owned_index: HashMap::new(),
            groupings: Vec::new(),
            grouping_index: HashMap::new(),
            changed: Vec::new(),
            changed_from: 0,
            unique_hostnames: true,
            namespaces: NamespaceIndex::default(),
            pods_with_affinity: 0,
            journal: Vec::new(),
            open: 0,
        };
        for namespace in namespaces {
            cluster.namespaces.declare(&namespace.name, &namespace.labels);
        }
        cluster.rebuild_classes();
        for pod in pods {
            if let Some(node) = pod.node_name.clone() {
                let _ = cluster.bind(pod, &node);
            }
        }
        cluster
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.by_name.get(name).map(|&i| &self.nodes[i])
    }

    /// Bound pods with their node names, in no particular order.
    pub fn pods(&self) -> impl Iterator<Item = (&Pod, &str)> {
        self.pods.iter().flatten().map(|(p, n)| (p, self.nodes[*n].name.as_str()))
    }

    /// Bound pods of one namespace, with their nodes' names (issue 38: a workload's own pods are found
    /// among its namespace's, not by comparing every pod of a shared cluster).
    pub fn pods_in(&self, namespace: &str) -> impl Iterator<Item = (&Pod, &str)> {
        let id = self.namespace_ids.get(namespace).copied();
        (self.pods.iter().zip(&self.slot_namespace))
            .filter(move |(_, ns)| Some(**ns) == id)
            .filter_map(|(entry, _)| entry.as_ref())
            .map(|(p, n)| (p, self.nodes[*n].name.as_str()))
    }

    /// Pods bound to one node.
    pub fn pods_on(&self, node: &str) -> Vec<&Pod> {
        let Some(&i) = self.by_name.get(node) else { return Vec::new() };
        self.on_node[i].iter().filter_map(|&s| self.pods[s].as_ref().map(|(p, _)| p)).collect()
    }

    /// The node a pod is bound to.
    pub fn node_of(&self, namespace: &str, name: &str) -> Option<&str> {
        let slot = self.pod_slot.get(&(namespace.to_string(), name.to_string()))?;
        self.pods[*slot].as_ref().map(|(_, n)| self.nodes[*n].name.as_str())
    }

    /// Binds a pod to a node (replacing a bound pod of the same namespace and name).
    pub fn bind(&mut self, mut pod: Pod, node: &str) -> Result<(), String> {
        let &ni = self.by_name.get(node).ok_or_else(|| format!("no node `{node}`"))?;
        self.remove(&pod.namespace, &pod.name);
        pod.node_name = Some(node.to_string());
        if self.namespaces.note(&pod.namespace) {
            self.record(|| Change::Namespace(pod.namespace.clone()));
        }
        self.account(ni, &pod, 1);
        let slot = self.pods.len();
        let namespace = self.namespace_id(&pod.namespace);
        self.slot_namespace.push(namespace);
        self.record(|| Change::Bound { slot });
        self.pod_slot.insert((pod.namespace.clone(), pod.name.clone()), slot);
        self.on_node[ni].push(slot);
        self.pods.push(Some((pod, ni)));
        Ok(())
    }

    /// Deletes a bound pod; returns it if it was there.
    pub fn remove(&mut self, namespace: &str, name: &str) -> Option<Pod> {
        let slot = self.pod_slot.remove(&(namespace.to_string(), name.to_string()))?;
        let (pod, ni) = self.pods[slot].take()?;
        let position = self.on_node[ni].iter().position(|&s| s == slot).expect("a bound pod on its node");
        self.on_node[ni].remove(position);
        self.account(ni, &pod, -1);
        self.record(|| Change::Removed { slot, node: ni, position, pod: pod.clone() });
        Some(pod)
    }

    /// Adds taints to a node (skipping ones it already has).
    pub fn taint(&mut self, node: &str, taints: &[Taint]) {
        if let Some(&i) = self.by_name.get(node) {
            self.record_node(i);
            for t in taints {
                if !self.nodes[i].taints.contains(t) {
                    self.nodes[i].taints.push(t.clone());
                }
            }
            self.reclass(i);
        }
    }

    /// Adds a node the cluster autoscaler may add to the cluster (`present`), or takes it away again
    /// (issue 39); undone by a rollback like any change.
    pub fn provision(&mut self, node: &str, present: bool) {
        if let Some(&i) = self.by_name.get(node) {
            self.record_node(i);
            self.nodes[i].absent = !present;
            self.reclass(i);
        }
    }

    /// Sets `spec.unschedulable` (cordon) together with the `node.kubernetes.io/unschedulable:NoSchedule`
    /// taint the node lifecycle controller adds to a cordoned node and takes off an uncordoned one.
    pub fn cordon(&mut self, node: &str, unschedulable: bool) {
        if let Some(&i) = self.by_name.get(node) {
            self.record_node(i);
            let taint = Taint::unschedulable();
            let node = &mut self.nodes[i];
            node.unschedulable = unschedulable;
            node.taints.retain(|t| *t != taint);
            if unschedulable {
                node.taints.push(taint);
            }
            self.reclass(i);
        }
    }

    /// Adds (`sign` 1) or takes away (-1) a pod's usage and tally counts on node `ni`, moving
    /// the node between its class's buckets and groups.
    fn account(&mut self, ni: usize, pod: &Pod, sign: i64) {
        let owned = if pod.spec.pod_affinity.is_empty() {
            Vec::new()
        } else {
            self.pods_with_affinity += sign;
            self.owned_terms(pod)
        };
        let ci = self.class_of[ni];
        self.node_changed(ni);
        let old = self.usage[ni];
        let class = &mut self.classes[ci];
        take(&mut class.buckets, &old, ni);
        self.usage[ni].add(pod, sign);
        let new = self.usage[ni];
        class.buckets.entry(new).or_default().insert(ni);
        let of_namespace =
            self.namespace_ids.get(&pod.namespace).and_then(|&id| self.namespace_tallies.get(id as usize));
        for &t in of_namespace.into_iter().flatten().chain(&self.term_tallies) {
            let tally = &mut self.tallies[t];
            if counts(tally, pod, &self.namespaces) {
                tally.per_class[ci] += sign;
                let before = tally.per_node[ni];
                tally.per_node[ni] += sign;
                let on_node = &mut self.node_tallies[ni];
                if before == 0 {
                    on_node.push(t);
                } else if tally.per_node[ni] == 0
                    && let Some(at) = on_node.iter().position(|&x| x == t)
                {
                    on_node.swap_remove(at);
                }
            }
        }
        for o in owned {
            self.owned[o].per_class[ci] += sign;
            self.owned[o].per_node[ni] += sign;
        }
    }

    /// Groups the nodes into classes from scratch (tallies are rebuilt on next use).
    pub(super) fn rebuild_classes(&mut self) {
        let mut keys: BTreeMap<ClassKey, usize> = BTreeMap::new();
        let mut class_of = Vec::with_capacity(self.nodes.len());
        let mut classes: Vec<Class> = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let key = class_key(node);
            let next = classes.len();
            let c = *keys.entry(key).or_insert(next);
            if c == next {
                classes.push(Class { representative: i, buckets: BTreeMap::new(), size: 0 });
            }
            classes[c].buckets.entry(self.usage[i]).or_default().insert(i);
            classes[c].size += 1;
            class_of.push(c);
        }
        let mut hostnames: Vec<&String> = self.nodes.iter().filter_map(|n| n.labels.get(HOSTNAME)).collect();
        let labelled = hostnames.len();
        hostnames.sort_unstable();
        hostnames.dedup();
        self.unique_hostnames = hostnames.len() == labelled;
        self.class_of = class_of;
        self.classes = classes;
        self.class_index = keys;
        self.tallies.clear();
        self.tally_index.clear();
        self.namespace_tallies.iter_mut().for_each(Vec::clear);
        self.term_tallies.clear();
        self.node_tallies.iter_mut().for_each(Vec::clear);
        self.groupings.clear();
        self.grouping_index.clear();
        self.changed.clear();
        for owned in &mut self.owned {
            owned.per_class = vec![0; self.classes.len()];
            for (ni, &count) in owned.per_node.iter().enumerate() {
                owned.per_class[self.class_of[ni]] += count;
            }
        }
    }

    /// Per-domain counts from the per-class tallies (classes share every label but the hostname).
    fn class_counts<'a>(
        &'a self,
        pod: &Pod,
        con: &plugins::Constraint,
        all: &[plugins::Constraint],
        tally: Option<usize>,
    ) -> plugins::DomainCounts<'a> {
        let mut counts = HashMap::new();
        for (ci, class) in self.classes.iter().enumerate() {
            let node = &self.nodes[class.representative];
            if class.size == 0 || !plugins::has_all_keys(&node.labels, all) || !con.includes(pod, node) {
                continue;
            }
            let value = node.labels.get(&con.key).map_or("", String::as_str);
            *counts.entry(value).or_insert(0) += tally.map_or(0, |t| self.tallies[t].per_class[ci]);
        }
        counts
    }

    /// The reference path: every plugin on every node, counting pods by a plain scan.
    pub fn cycle(&self, pod: &Pod) -> Cycle {
        let spread = Spread::of(pod);
        let constraints: Vec<&plugins::Constraint> = spread.hard.iter().chain(&spread.soft).collect();
        let on_node = |i: usize, c: usize| -> i64 {
            self.on_node[i]
                .iter()
                .filter_map(|&s| self.pods[s].as_ref())
                .filter(|(p, _)| constraints[c].matches(&pod.namespace, p))
                .count() as i64
        };
        let affinity = self.interpod_applies(pod).then(|| InterPod::Reference(self.interpod(pod)));
        let (outcomes, selected) = self.evaluate(pod, &spread, &on_node, affinity.as_ref());
        Cycle {
            nodes: self.nodes.iter().zip(outcomes).filter_map(|(n, o)| o.map(|o| (n.name.clone(), o))).collect(),
            selected: selected.map(|i| self.nodes[i].name.clone()),
        }
    }

    /// Every plugin on every node; `on_node(i, c)` is the number of pods on node `i` that
    /// constraint `c` (hard ones first, then soft) counts: upstream's `countPodsMatchSelector`.
    /// Returns each node's outcome (by index) and the selected node's index.
    fn evaluate(
        &self,
        pod: &Pod,
        spread: &Spread,
        on_node: &dyn Fn(usize, usize) -> i64,
        affinity: Option<&InterPod>,
    ) -> (Vec<Option<Outcome>>, Option<usize>) {
        // Per-domain counts over the nodes that carry every key of `all` and pass the
        // constraint's inclusion policies (upstream PreFilter and PreScore counting).
        let domain_counts = |c: usize, con: &plugins::Constraint, all: &[plugins::Constraint]| {
            let mut counts: plugins::DomainCounts<'_> = HashMap::new();
            for (i, node) in self.nodes.iter().enumerate() {
                if plugins::has_all_keys(&node.labels, all) && con.includes(pod, node) {
                    let value = node.labels.get(&con.key).map_or("", String::as_str);
                    *counts.entry(value).or_insert(0) += on_node(i, c);
                }
            }
            counts
        };
        let hard: Vec<Domains<'_>> =
            spread.hard.iter().enumerate().map(|(c, con)| Domains::new(domain_counts(c, con, &spread.hard))).collect();
        let mut outcomes: Vec<Option<Outcome>> = vec![None; self.nodes.len()];
        let mut feasible = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let verdict = plugins::filter_node(pod, node)
                .and_then(|()| node_ports::filter_ports(pod, self.bound_on(i)))
                .and_then(|()| plugins::filter_fit(pod, &node.allocatable, &self.usage[i]))
                .and_then(|()| plugins::filter_volume(pod, node))
                .and_then(|()| plugins::filter_spread(pod, spread, &hard, &node.labels, 0))
                .and_then(|()| affinity.map_or(Ok(()), |a| self.interpod_filter(a, i)));
            match verdict {
                Ok(()) => feasible.push(i),
                Err(r) => outcomes[i] = Some(Outcome::Rejected(r)),
            }
        }
        let all: &[plugins::Constraint] = if spread.require_all_keys { &spread.soft } else { &[] };
        let offset = spread.hard.len();
        // Hostname constraints score with each node's own count (below), not a domain map.
        let soft: Vec<plugins::DomainCounts<'_>> = spread
            .soft
            .iter()
            .enumerate()
            .map(|(c, con)| if con.key == HOSTNAME { HashMap::new() } else { domain_counts(offset + c, con, all) })
            .collect();
        let candidates: Vec<Candidate<'_>> = feasible
            .iter()
            .map(|&i| Candidate { node: &self.nodes[i], usage: self.usage[i], multiplicity: 1 })
            .collect();
        let mut scores = plugins::score(pod, spread, &candidates, &soft, |c, ci| on_node(feasible[c], offset + ci));
        if let Some(affinity) = affinity {
            let raw: Vec<i64> = feasible.iter().map(|&i| self.interpod_raw_score(affinity, i)).collect();
            for (s, score) in scores.iter_mut().zip(affinity.normalise(&raw)) {
                s.inter_pod_affinity = score;
                s.total += plugins::WEIGHT_INTER_POD * score;
            }
        }
        let mut selected: Option<(i64, usize)> = None;
        for (k, &i) in feasible.iter().enumerate() {
            if selected.is_none_or(|(best, _)| scores[k].total > best) {
                selected = Some((scores[k].total, i));
            }
            outcomes[i] = Some(Outcome::Feasible(scores[k]));
        }
        (outcomes, selected.map(|(_, i)| i))
    }

    /// The pods bound to node `ni` (terminating ones too: they hold their ports until they are gone).
    fn bound_on(&self, ni: usize) -> impl Iterator<Item = &Pod> {
        self.on_node[ni].iter().filter_map(|&s| self.pods[s].as_ref().map(|(p, _)| p))
    }

    /// Whether InterPodAffinity has anything to do for this pod: its own terms, or bound pods with terms.
    fn interpod_applies(&self, pod: &Pod) -> bool {
        self.pods_with_affinity > 0 || !pod.spec.pod_affinity.is_empty()
    }

    /// InterPodAffinity's PreFilter and PreScore state for a pod, from every bound pod.
    fn interpod(&self, pod: &Pod) -> interpod::Prepared {
        let bound = self.pods.iter().flatten().map(|(p, n)| (p, &self.nodes[*n].labels));
        interpod::Prepared::new(pod, bound, &self.namespaces)
    }

    /// The per-node path for pods whose constraints or affinity look at node identity: every
    /// node is still evaluated, but counts come from the per-node tallies, not a pass over pods.
    fn select_per_node(&mut self, pod: &Pod, spread: &Spread) -> Option<String> {
        let tallies = self.tallies_for(pod, spread);
        let affinity = self.interpod_applies(pod).then(|| self.interpod_counted(pod));
        let this = &*self;
        let on_node = |i: usize, c: usize| -> i64 { tallies[c].map_or(0, |t| this.tallies[t].per_node[i]) };
        this.evaluate(pod, spread, &on_node, affinity.as_ref()).1.map(|i| this.nodes[i].name.clone())
    }

    /// Whether the grouped path gives exactly the reference answer for this pod (see
    /// [`Cluster::fast_path_applies`]); with InterPodAffinity, only while every hostname is unique
    /// (then a hostname pair is one node, whose counts join the group key).
    fn grouped_applies(&self, pod: &Pod, spread: &Spread) -> bool {
        self.fast_path_applies(pod, spread) && (self.unique_hostnames || !self.interpod_applies(pod))
    }

    /// Whether the grouped path gives exactly the reference answer for this pod: it must not
    /// look at a node's name or hostname except through hostname spread constraints that all
    /// count with one selector (then a node's own count joins its group key).
    fn fast_path_applies(&self, pod: &Pod, spread: &Spread) -> bool {
        let mut host_selectors =
            spread.hard.iter().chain(&spread.soft).filter(|c| c.key == HOSTNAME).map(|c| &c.selector);
        let one_selector = match host_selectors.next() {
            None => true,
            Some(first) => self.unique_hostnames && host_selectors.all(|s| s == first),
        };
        // One hard hostname constraint at most: a node is in its domains or not (see `grouped`).
        one_selector
            && spread.hard.iter().filter(|c| c.key == HOSTNAME).count() <= 1
            && pod.spec.node_name.is_none()
            // Ports a node's pods hold are in no group key: a pod asking for host ports sees every node.
            && pod.spec.host_ports.is_empty()
            // A local volume's node affinity singles out one node by its hostname.
            && pod.spec.volume.as_ref().is_none_or(|v| v.key != HOSTNAME)
            && !pod.spec.node_selector.contains_key(HOSTNAME)
            && !pod.spec.required_terms.iter().flatten().any(|t| t.mentions_node_identity())
            && !pod.spec.preferred_terms.iter().any(|(_, t)| t.mentions_node_identity())
    }

    /// Chooses the node the reference path would choose, usually without visiting every node.
    pub fn select(&mut self, pod: &Pod) -> Option<String> {
        let spread = Spread::of(pod);
        if !self.grouped_applies(pod, &spread) {
            return self.select_per_node(pod, &spread);
        }
        self.grouped(pod, spread, &Rank::None)
    }
}

/// Removes a node from a keyed set, dropping the key when the set empties.
fn take<K: Ord>(map: &mut BTreeMap<K, BTreeSet<usize>>, key: &K, node: usize) {
    if let Some(set) = map.get_mut(key) {
        set.remove(&node);
        if set.is_empty() {
            map.remove(key);
        }
    }
}

fn counts(tally: &Tally, pod: &Pod, namespaces: &NamespaceIndex) -> bool {
    match &tally.counted {
        Counted::Pods { namespace, selector, terminating } => {
            (*terminating || !pod.terminating) && pod.namespace == *namespace && selector.matches(&pod.labels)
        }
        Counted::Terms(terms) => {
            let labels = namespaces.labels_of(&pod.namespace);
            terms.iter().all(|t| t.matches(pod, &labels))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(yaml: &str) -> Cluster {
        Cluster::new(&State::from_yaml_str(yaml).unwrap())
    }

    fn pod(yaml: &str) -> Pod {
        crate::snapshot::parse_pod(&kix_yaml::from_str(yaml).unwrap(), "default").unwrap()
    }

    #[test]
    fn ties_go_to_the_lowest_node_name() {
        let mut c = cluster(
            "kind: List\nitems:\n- {kind: Node, metadata: {name: b}, status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}}\n- {kind: Node, metadata: {name: a}, status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}}\n",
        );
        let p = pod("kind: Pod\nmetadata: {name: p}\n");
        let cycle = c.cycle(&p);
        assert_eq!(cycle.selected.as_deref(), Some("a"));
        assert_eq!(c.select(&p).as_deref(), Some("a"));
    }

    /// VolumeBinding on a bound claim (issue 39): both paths admit only the volume's zone, or for a
    /// local volume its node, and say so in the scheduler's words.
    #[test]
    fn a_pinned_pod_goes_only_where_its_volume_is() {
        let node = |n: &str, z: &str| {
            format!(
                "- {{kind: Node, metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, zone: {z}}}}}, status: {{allocatable: {{cpu: '1', memory: 1Gi, pods: '10'}}}}}}\n"
            )
        };
        let mut c = cluster(&format!("kind: List\nitems:\n{}{}{}", node("a1", "a"), node("b1", "b"), node("b2", "b")));
        for (key, value, expected) in [("zone", "b", "b1"), ("kubernetes.io/hostname", "b2", "b2")] {
            let mut p = pod("kind: Pod\nmetadata: {name: p}\n");
            std::sync::Arc::make_mut(&mut p.spec).volume =
                Some(crate::objects::VolumePin { key: key.into(), value: value.into() });
            assert_eq!(c.cycle(&p).selected.as_deref(), Some(expected), "{key}");
            assert_eq!(c.select(&p).as_deref(), Some(expected), "{key}");
        }
        let mut p = pod("kind: Pod\nmetadata: {name: p}\n");
        std::sync::Arc::make_mut(&mut p.spec).volume =
            Some(crate::objects::VolumePin { key: "zone".into(), value: "c".into() });
        assert_eq!(c.select(&p), None);
        assert_eq!(
            c.cycle(&p).failure_message(),
            "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity."
        );
    }

    #[test]
    fn failure_messages_read_like_the_schedulers() {
        let c = cluster("kind: Node\nmetadata: {name: a}\nspec: {unschedulable: true}\n");
        let cycle = c.cycle(&pod("kind: Pod\nmetadata: {name: p}\n"));
        assert_eq!(cycle.selected, None);
        assert_eq!(cycle.failure_message(), "0/1 nodes are available: 1 node(s) were unschedulable.");
        let empty = Cluster::new(&State::default()).cycle(&pod("kind: Pod\nmetadata: {name: p}\n"));
        assert_eq!(empty.failure_message(), "no nodes available to schedule pods");
    }

    #[test]
    fn bind_and_remove_keep_usage_and_counts() {
        let mut c = cluster(
            "kind: Node\nmetadata: {name: a, labels: {zone: z}}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '1'}}\n",
        );
        let p = pod("kind: Pod\nmetadata: {name: p, labels: {app: x}}\n");
        c.bind(p.clone(), "a").unwrap();
        // The node holds one pod of one allowed: the next one does not fit.
        let q = pod("kind: Pod\nmetadata: {name: q}\n");
        assert_eq!(c.select(&q), None);
        assert_eq!(c.node_of("default", "p"), Some("a"));
        assert!(c.remove("default", "p").is_some());
        assert_eq!(c.select(&q).as_deref(), Some("a"));
        assert!(c.bind(q, "nowhere").is_err());
    }
}
