//! The world `kix verify`'s scenarios change: the cluster, the verified workloads, the budgets in
//! force, and counters kept up to date as pods come and go.
//!
//! Every scenario starts from the placed state and must leave it as it found it. A scenario takes
//! a [`Saved`] mark ([`World::checkpoint`]), applies its failure or drain as changes, and undoes
//! them ([`World::rollback`]): the cluster journals its changes and undoes them in place (see
//! [`super::cluster::Checkpoint`]), so a scenario costs what it changes, not a copy of the
//! cluster. All changes go through the world's methods, so its counters follow them: the pods each
//! workload owns, and per PodDisruptionBudget the pods it covers, the healthy ones and their
//! controllers, from which a budget's status is read without a pass over every pod.
//!
//! Unit tests run the same scenarios in a reference mode that copies the cluster per scenario,
//! rebuilds node classes on every taint and cordon and counts by scanning every pod (the engine
//! before the journal), and check both give the same verdicts.

use super::budget::{Budget, BudgetStatus, Eviction};
use super::cluster::{Checkpoint, Cluster, Outcome, Rank};
use super::objects::{Controller, Pod, VolumePin};
use super::workload::Workload;
use kix_kube::quantity::{bytes_text, milli_text};
use kix_kube::taints::Taint;
use kix_kube::volumes::{Claims, VolumeTopology};
use std::collections::BTreeMap;

/// The pods one budget covers, counted.
#[derive(Clone, Debug, Default)]
struct Covered {
    pods: i64,
    /// Covered pods that are Ready and not terminating.
    healthy: i64,
    /// Per controller key (see [`World::scale_of`]): pods per scale it reported.
    controllers: BTreeMap<String, BTreeMap<i64, i64>>,
}

/// Per namespace, the workloads and budgets whose pods are of it: what a pod coming or going can
/// change (issue 38: one world holds every workload of a cluster, and a bind compared every one).
#[derive(Clone, Debug, Default)]
struct Namespaced {
    of: std::collections::HashMap<String, (Vec<usize>, Vec<usize>)>,
}

impl Namespaced {
    fn new(workloads: &[Workload], budgets: &[Budget]) -> Namespaced {
        let mut of: std::collections::HashMap<String, (Vec<usize>, Vec<usize>)> = Default::default();
        for (w, workload) in workloads.iter().enumerate() {
            of.entry(workload.namespace.clone()).or_default().0.push(w);
        }
        for (b, budget) in budgets.iter().enumerate() {
            of.entry(budget.namespace.clone()).or_default().1.push(b);
        }
        Namespaced { of }
    }

    /// The workloads and budgets of `namespace`, by index.
    fn of(&self, namespace: &str) -> (&[usize], &[usize]) {
        self.of.get(namespace).map_or((&[], &[]), |(w, b)| (w.as_slice(), b.as_slice()))
    }

    /// The workload that owns `pod`.
    fn owner(&self, workloads: &[Workload], pod: &Pod) -> Option<usize> {
        self.of(&pod.namespace).0.iter().copied().find(|&w| workloads[w].owns(pod))
    }
}

/// Counters over the bound pods.
#[derive(Clone, Debug, Default)]
struct Counts {
    /// Per workload, the bound pods it owns.
    owned: Vec<i64>,
    /// Per budget, the bound pods it covers.
    covered: Vec<Covered>,
}

/// A world, with its references: what scenarios read and change.
#[derive(Clone)]
pub(super) struct World<'a> {
    cluster: Cluster,
    pub(super) workloads: &'a [Workload],
    pub(super) budgets: &'a [Budget],
    /// Pods per snapshot controller (namespace, controller), as the snapshot had them.
    scales: &'a BTreeMap<(String, Controller), i64>,
    /// Replacement counter per workload, for fresh Deployment pod names.
    next_index: Vec<usize>,
    counts: Counts,
    namespaced: Namespaced,
    /// What the cluster's volumes are and the zone key (issue 39); None: no volume is followed.
    volumes: Option<(VolumeTopology, String)>,
    /// The provisioned claims' node affinity, per workload and claim (a StatefulSet pod's name, or ""
    /// for a claim the workload's pods share): where the claim's pods may run from now on.
    pins: BTreeMap<(usize, String), VolumePin>,
    /// The node groups the cluster autoscaler may grow, and the zone key (issue 39).
    groups: std::sync::Arc<(Vec<super::verdict::NodeGroup>, String)>,
    /// Every node the autoscaler added, in order (a record: rollbacks keep it; see [`World::added`]).
    added: Vec<super::autoscale::Added>,
    /// Reference mode (tests): copy per scenario, rebuild classes, count by scanning.
    #[cfg(test)]
    pub(super) reference: bool,
}

enum Mark {
    Journal(Checkpoint),
    #[cfg(test)]
    Copy(Box<Cluster>),
}

/// The state a scenario rolls back to.
pub(super) struct Saved {
    mark: Mark,
    next_index: Vec<usize>,
    pins: BTreeMap<(usize, String), VolumePin>,
}

/// A pod's controller and its scale (see [`World::scale_of`]).
fn scale_of(
    workloads: &[Workload],
    namespaced: &Namespaced,
    scales: &BTreeMap<(String, Controller), i64>,
    pod: &Pod,
) -> Option<(String, i64)> {
    if let Some(workload) = namespaced.owner(workloads, pod).map(|w| &workloads[w]) {
        return Some((format!("{}/{}/{}", workload.kind, workload.namespace, workload.name), workload.replicas));
    }
    let c = pod.controller.as_ref()?;
    let key = (pod.namespace.clone(), c.clone());
    Some((format!("{}/{}/{}", c.kind, pod.namespace, c.name), scales.get(&key).copied().unwrap_or(0)))
}

impl Counts {
    /// Counts a pod bound (`sign` 1) or gone (-1).
    fn apply(
        &mut self,
        workloads: &[Workload],
        budgets: &[Budget],
        namespaced: &Namespaced,
        scales: &BTreeMap<(String, Controller), i64>,
        pod: &Pod,
        sign: i64,
    ) {
        let (of_workloads, of_budgets) = namespaced.of(&pod.namespace);
        for &w in of_workloads {
            if workloads[w].owns(pod) {
                self.owned[w] += sign;
            }
        }
        for &b in of_budgets {
            let budget = &budgets[b];
            if !budget.covers(pod) {
                continue;
            }
            let covered = &mut self.covered[b];
            covered.pods += sign;
            if !pod.terminating && pod.ready {
                covered.healthy += sign;
            }
            if let Some((key, scale)) = scale_of(workloads, namespaced, scales, pod) {
                let scales = covered.controllers.entry(key.clone()).or_default();
                let n = scales.entry(scale).or_insert(0);
                *n += sign;
                if *n == 0 {
                    scales.remove(&scale);
                }
                if scales.is_empty() {
                    covered.controllers.remove(&key);
                }
            }
        }
    }
}

impl<'a> World<'a> {
    pub(super) fn new(
        cluster: Cluster,
        workloads: &'a [Workload],
        budgets: &'a [Budget],
        scales: &'a BTreeMap<(String, Controller), i64>,
    ) -> World<'a> {
        let mut counts = Counts { owned: vec![0; workloads.len()], covered: vec![Covered::default(); budgets.len()] };
        let namespaced = Namespaced::new(workloads, budgets);
        for (pod, _) in cluster.pods() {
            counts.apply(workloads, budgets, &namespaced, scales, pod, 1);
        }
        World {
            cluster,
            workloads,
            budgets,
            scales,
            next_index: workloads.iter().map(|w| w.replicas.max(0) as usize).collect(),
            counts,
            namespaced,
            volumes: None,
            pins: BTreeMap::new(),
            groups: Default::default(),
            added: Vec::new(),
            #[cfg(test)]
            reference: false,
        }
    }

    pub(super) fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Marks the state to come back to; every change until [`World::rollback`] is undone there.
    pub(super) fn checkpoint(&mut self) -> Saved {
        #[cfg(test)]
        if self.reference {
            return Saved {
                mark: Mark::Copy(Box::new(self.cluster.clone())),
                next_index: self.next_index.clone(),
                pins: self.pins.clone(),
            };
        }
        Saved {
            mark: Mark::Journal(self.cluster.checkpoint()),
            next_index: self.next_index.clone(),
            pins: self.pins.clone(),
        }
    }

    /// Runs a scenario step on the world and undoes every change it made: the world is as it was after.
    pub(super) fn trial<R>(&mut self, step: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.checkpoint();
        let result = step(self);
        self.rollback(saved);
        result
    }

    /// Undoes every change since `saved`.
    pub(super) fn rollback(&mut self, saved: Saved) {
        let World { cluster, workloads, budgets, scales, counts, namespaced, .. } = self;
        match saved.mark {
            Mark::Journal(checkpoint) => {
                cluster
                    .rollback(checkpoint, |pod, sign| counts.apply(workloads, budgets, namespaced, scales, pod, sign));
            }
            #[cfg(test)]
            Mark::Copy(copy) => *cluster = *copy,
        }
        self.next_index = saved.next_index;
        self.pins = saved.pins;
    }

    /// Deletes a bound pod.
    pub(super) fn remove(&mut self, namespace: &str, name: &str) -> Option<Pod> {
        let pod = self.cluster.remove(namespace, name)?;
        self.counts.apply(self.workloads, self.budgets, &self.namespaced, self.scales, &pod, -1);
        Some(pod)
    }

    /// Binds a pod to a node; returns the pod of the same name it replaced, with its node.
    fn bind(&mut self, pod: Pod, node: &str) -> Option<(Pod, String)> {
        let before = self.cluster.node_of(&pod.namespace, &pod.name).map(str::to_string);
        let replaced = before.and_then(|n| self.remove(&pod.namespace, &pod.name).map(|p| (p, n)));
        self.counts.apply(self.workloads, self.budgets, &self.namespaced, self.scales, &pod, 1);
        let _ = self.cluster.bind(pod, node);
        replaced
    }

    /// Adds taints to a node.
    pub(super) fn taint(&mut self, node: &str, taints: &[Taint]) {
        self.cluster.taint(node, taints);
        self.rebuild_in_reference_mode();
    }

    /// Cordons a node.
    pub(super) fn cordon(&mut self, node: &str) {
        self.cluster.cordon(node, true);
        self.rebuild_in_reference_mode();
    }

    fn rebuild_in_reference_mode(&mut self) {
        #[cfg(test)]
        if self.reference {
            self.cluster.rebuild_classes();
        }
    }

    /// Bound pods of workload `w` with their nodes, by pod name.
    pub(super) fn owned(&self, w: usize) -> Vec<(Pod, String)> {
        let workload = &self.workloads[w];
        let mut pods: Vec<(Pod, String)> = (self.cluster.pods_in(&workload.namespace))
            .filter(|(p, _)| workload.owns(p))
            .map(|(p, n)| (p.clone(), n.to_string()))
            .collect();
        pods.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        pods
    }

    /// Bound pods of workload `w` with their nodes, in no particular order and not copied (for
    /// counts and node lists: [`World::owned`] copies and sorts every pod).
    pub(super) fn owned_unsorted(&self, w: usize) -> impl Iterator<Item = (&Pod, &str)> {
        let workload = &self.workloads[w];
        self.cluster.pods_in(&workload.namespace).filter(move |(p, _)| workload.owns(p))
    }

    /// Where workload `w`'s bound pods are, pod to node.
    pub(super) fn placement(&self, w: usize) -> BTreeMap<String, String> {
        let workload = &self.workloads[w];
        (self.cluster.pods_in(&workload.namespace))
            .filter(|(p, _)| workload.owns(p))
            .map(|(p, n)| (p.name.clone(), n.to_string()))
            .collect()
    }

    /// How many bound pods workload `w` owns.
    pub(super) fn owned_count(&self, w: usize) -> i64 {
        #[cfg(test)]
        if self.reference {
            return self.owned(w).len() as i64;
        }
        self.counts.owned[w]
    }

    pub(super) fn owner_of(&self, pod: &Pod) -> Option<usize> {
        self.namespaced.owner(self.workloads, pod)
    }

    /// The controller's replacement for a deleted pod (same revision; StatefulSets keep the name).
    pub(super) fn replacement(&mut self, w: usize, deleted: &Pod) -> Pod {
        let workload = &self.workloads[w];
        let spec = std::sync::Arc::clone(&deleted.spec);
        let mut pod = if workload.kind.deployment_like() {
            let index = self.next_index[w];
            self.next_index[w] += 1;
            let mut pod = workload.pod(&spec, 0, index);
            pod.labels = deleted.labels.clone();
            pod
        } else {
            deleted.clone()
        };
        pod.node_name = None;
        pod
    }

    /// A new pod of workload `w` as its controller creates one when it scales up (issue 39): a
    /// Deployment's next fresh name (so later replacements never reuse it), a StatefulSet's `ordinal`.
    pub(super) fn scale_up_pod(
        &mut self,
        w: usize,
        spec: &std::sync::Arc<super::objects::PodSpec>,
        ordinal: usize,
    ) -> Pod {
        let workload = &self.workloads[w];
        if workload.kind.deployment_like() {
            let index = self.next_index[w];
            self.next_index[w] += 1;
            workload.pod(spec, 0, index)
        } else {
            workload.pod(spec, 0, ordinal)
        }
    }

    /// Follows the claims of the workloads (issue 39): a claim is provisioned where its first pod binds
    /// and binds its later pods there (the zone under `topology = "zonal"`, the node under `"node"`).
    pub(super) fn follow_volumes(&mut self, topology: VolumeTopology, zone_key: &str) {
        self.volumes = (topology != VolumeTopology::Regional).then(|| (topology, zone_key.to_string()));
    }

    /// The claim a pod of workload `w` mounts: its own (a StatefulSet's `volumeClaimTemplates`, by pod
    /// name) or the one its workload's pods share; None without one, or when volumes are not followed.
    fn claim_of(&self, w: usize, pod: &Pod) -> Option<(usize, String)> {
        self.volumes.as_ref()?;
        match self.workloads[w].claims {
            Claims::None => None,
            Claims::PerPod => Some((w, pod.name.clone())),
            Claims::Shared => Some((w, String::new())),
        }
    }

    /// Where a pod's provisioned claim binds it, if it has one yet.
    pub(super) fn volume_pin(&self, pod: &Pod) -> Option<&VolumePin> {
        let w = self.owner_of(pod)?;
        self.pins.get(&self.claim_of(w, pod)?)
    }

    /// Where a pod stuck on its volume is bound, as findings say it (`zone eu-1a`, `node n1`): Some when
    /// the pod has a provisioned claim and the scheduler's `message` names the volume's node affinity.
    pub(super) fn volume_wait(&self, pod: &Pod, message: &str) -> Option<String> {
        let pin = self.volume_pin(pod).filter(|_| message.contains(super::plugins::REASON_VOLUME_AFFINITY))?;
        let what = if pin.key == kix_kube::labels::HOSTNAME { "node" } else { "zone" };
        Some(format!("{what} {}", pin.value))
    }

    /// The pod with its claim's node affinity, as VolumeBinding will filter it.
    fn pinned(&self, mut pod: Pod) -> Pod {
        if let Some(pin) = self.volume_pin(&pod).filter(|pin| pod.spec.volume.as_ref() != Some(*pin)) {
            std::sync::Arc::make_mut(&mut pod.spec).volume = Some(pin.clone());
        }
        pod
    }

    /// A pod bound to `node`: a claim of its not yet provisioned is made there (WaitForFirstConsumer).
    fn provision(&mut self, pod: &Pod, node: &str) {
        let Some((topology, zone_key)) = &self.volumes else { return };
        let Some(claim) = self.owner_of(pod).and_then(|w| self.claim_of(w, pod)) else { return };
        if self.pins.contains_key(&claim) {
            return;
        }
        let key = match topology {
            VolumeTopology::Node => kix_kube::labels::HOSTNAME.to_string(),
            _ => zone_key.clone(),
        };
        if let Some(value) = self.cluster.node(node).and_then(|n| n.labels.get(&key)) {
            let pin = VolumePin { key, value: value.clone() };
            self.pins.insert(claim, pin);
        }
    }

    /// The node groups the cluster autoscaler may grow when a pod stays Pending (issue 39).
    pub(super) fn autoscale(&mut self, groups: &[super::verdict::NodeGroup], zone_key: &str) {
        self.groups = std::sync::Arc::new((groups.to_vec(), zone_key.to_string()));
    }

    /// The nodes the autoscaler added between records `from` and `to` ([`World::added_len`] before and
    /// after a scenario).
    pub(super) fn added(&self, from: usize, to: usize) -> &[super::autoscale::Added] {
        &self.added[from.min(to)..to.min(self.added.len())]
    }

    pub(super) fn added_len(&self) -> usize {
        self.added.len()
    }

    /// Schedules a pod; binds it and returns the node, or the Pending message.
    pub(super) fn schedule(&mut self, pod: Pod) -> Result<String, String> {
        let pod = self.pinned(pod);
        #[cfg(test)]
        let chosen = if self.reference { self.cluster.cycle(&pod).selected } else { self.cluster.select(&pod) };
        #[cfg(not(test))]
        let chosen = self.cluster.select(&pod);
        match chosen {
            Some(node) => {
                self.provision(&pod, &node);
                self.bind(pod, &node);
                Ok(node)
            }
            None => {
                let groups = std::sync::Arc::clone(&self.groups);
                let (groups, zone_key) = &*groups;
                #[cfg(test)]
                let reference = self.reference;
                #[cfg(not(test))]
                let reference = false;
                let select = |cluster: &mut Cluster, pod: &Pod| {
                    if reference { cluster.cycle(pod).selected } else { cluster.select(pod) }
                };
                match super::autoscale::scale_up(&mut self.cluster, groups, zone_key, &pod, select) {
                    Some((mut added, node)) => {
                        self.rebuild_in_reference_mode();
                        added.owner = self.owner_of(&pod);
                        self.added.push(added);
                        self.provision(&pod, &node);
                        self.bind(pod, &node);
                        Ok(node)
                    }
                    None => Err(self.failure_message(&pod)),
                }
            }
        }
    }

    /// Why a pod stays Pending now: the scheduler's FailedScheduling message; where nodes lack room
    /// for it (NodeResourcesFit's `Insufficient`), the nodes nearest to holding it and what fills them.
    pub(super) fn failure_message(&mut self, pod: &Pod) -> String {
        #[cfg(test)]
        let message =
            if self.reference { self.cluster.cycle(pod).failure_message() } else { self.cluster.failure_message(pod) };
        #[cfg(not(test))]
        let message = self.cluster.failure_message(pod);
        if message.contains("Insufficient") { format!("{message}{}", self.room_note(pod)) } else { message }
    }

    /// The nodes with the most room left that still cannot hold `pod` (at most three), each with what it
    /// has requested of its allocatable and the workloads whose pods hold it (issue 38: on a shared
    /// cluster the room is taken by other instances): ` Full: node-a1 (1800m of 2000m cpu, 200Mi of 16Gi
    /// memory: i1/Deployment/api, i2/Deployment/api x2)`.
    fn room_note(&self, pod: &Pod) -> String {
        let wanted = &pod.spec.requests;
        let cluster = &self.cluster;
        let mut full: Vec<(i64, i64, &str, i64, i64)> = Vec::new();
        for node in cluster.nodes() {
            let pods = cluster.pods_on(&node.name);
            let (cpu, memory) =
                pods.iter().fold((0, 0), |(c, m), p| (c + p.spec.requests.milli_cpu, m + p.spec.requests.memory));
            let fits = cpu + wanted.milli_cpu <= node.allocatable.milli_cpu
                && memory + wanted.memory <= node.allocatable.memory;
            if !fits && !node.unschedulable && !node.absent {
                full.push((
                    node.allocatable.milli_cpu - cpu,
                    node.allocatable.memory - memory,
                    &node.name,
                    cpu,
                    memory,
                ));
            }
        }
        full.sort_by(|a, b| (b.0, b.1, a.2).cmp(&(a.0, a.1, b.2)));
        let shown: Vec<String> = full
            .iter()
            .take(3)
            .map(|&(_, _, name, cpu, memory)| {
                let node = cluster.nodes().iter().find(|n| n.name == name).expect("a node of the cluster");
                let mut holders: BTreeMap<String, usize> = BTreeMap::new();
                for p in cluster.pods_on(name) {
                    let holder = match self.owner_of(p) {
                        Some(w) => {
                            let w = &self.workloads[w];
                            format!("{}/{}/{}", w.namespace, w.kind, w.name)
                        }
                        None => format!("{}/{}", p.namespace, p.name),
                    };
                    *holders.entry(holder).or_default() += 1;
                }
                let holders: Vec<String> =
                    holders.into_iter().map(|(h, n)| if n == 1 { h } else { format!("{h} x{n}") }).collect();
                format!(
                    "{name} ({} of {} cpu, {} of {} memory: {})",
                    milli_text(cpu),
                    milli_text(node.allocatable.milli_cpu),
                    bytes_text(memory),
                    bytes_text(node.allocatable.memory),
                    holders.join(", ")
                )
            })
            .collect();
        if shown.is_empty() {
            return String::new();
        }
        let more = full.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!(" Full: {}{more}.", shown.join("; "))
    }

    /// Whether a node not named in `outside` rejects the pod for `reason` alone.
    pub(super) fn rejects_only_for(&mut self, pod: &Pod, reason: &str, outside: &[String]) -> bool {
        #[cfg(test)]
        if self.reference {
            return self.cluster.cycle(pod).nodes.iter().any(|(node, outcome)| {
                !outside.contains(node) && matches!(outcome, Outcome::Rejected(r) if r.reasons == [reason])
            });
        }
        self.cluster.rejects_only_for(pod, reason, outside)
    }

    /// Pods of workload `w` per value of `key` on their nodes: what [`World::schedule_against`]
    /// breaks ties by.
    pub(super) fn held(&self, w: usize, key: Option<&str>) -> BTreeMap<String, usize> {
        let mut held = BTreeMap::new();
        for (p, node) in self.cluster.pods() {
            if self.workloads[w].owns(p)
                && let Some(value) = key.and_then(|k| self.cluster.node(node).and_then(|n| n.labels.get(k)))
            {
                *held.entry(value.clone()).or_insert(0) += 1;
            }
        }
        held
    }

    /// Schedules a pod of workload `w`, breaking ties **against** the level: among the nodes
    /// with the best total score, the one whose domain under `key` already holds the most pods of
    /// the workload (`held`, from [`World::held`], kept up to date here), then the lowest name.
    /// Without a key this is the lowest-name choice. The grouped path ranks the node groups
    /// ([`Cluster::select_ranked`]): a key other than the hostname is shared by every node of a
    /// node class; under the hostname key a node's domain is the node (hostnames unique), and
    /// what it holds is the cluster's per-node count of the workload's pods, which is `held`
    /// read by node. Where the grouped path does not apply, every node is evaluated on the
    /// reference path, so the set of nodes with the best total is exact. Binds the pod.
    pub(super) fn schedule_against(
        &mut self,
        pod: Pod,
        w: usize,
        key: Option<&str>,
        held: &mut BTreeMap<String, usize>,
    ) -> Result<String, String> {
        let pod = self.pinned(pod);
        #[cfg(test)]
        let grouped = !self.reference;
        #[cfg(not(test))]
        let grouped = true;
        if grouped {
            let class_rank = |node: &super::objects::Node| {
                key.and_then(|k| node.labels.get(k)).and_then(|v| held.get(v)).map_or(0, |&n| n as i64)
            };
            let workload = &self.workloads[w];
            let rank = match key {
                None => Rank::None,
                Some(kix_kube::labels::HOSTNAME) => {
                    Rank::Hostname { namespace: &workload.namespace, selector: &workload.selector }
                }
                Some(_) => Rank::Class(&class_rank),
            };
            if let Some(chosen) = self.cluster.select_ranked(&pod, &rank) {
                let node = chosen.ok_or_else(|| self.cluster.cycle(&pod).failure_message())?;
                self.bound_against(pod, &node, w, key, held);
                return Ok(node);
            }
        }
        let cycle = self.cluster.cycle(&pod);
        let total = |o: &Outcome| match o {
            Outcome::Feasible(s) => Some(s.total),
            Outcome::Rejected(_) => None,
        };
        let Some(best) = cycle.nodes.values().filter_map(total).max() else { return Err(cycle.failure_message()) };
        let domain =
            |cluster: &Cluster, node: &str| key.and_then(|k| cluster.node(node).and_then(|n| n.labels.get(k))).cloned();
        let mut chosen: Option<(&String, usize)> = None;
        // Nodes in name order: only a strictly larger count displaces the lowest name.
        for (node, outcome) in &cycle.nodes {
            if total(outcome) != Some(best) {
                continue;
            }
            let count = domain(&self.cluster, node).and_then(|v| held.get(&v)).copied().unwrap_or(0);
            if chosen.is_none_or(|(_, c)| count > c) {
                chosen = Some((node, count));
            }
        }
        let node = chosen.map(|(n, _)| n.clone()).ok_or_else(|| cycle.failure_message())?;
        self.bound_against(pod, &node, w, key, held);
        Ok(node)
    }

    /// Binds a pod [`World::schedule_against`] placed and counts it in `held`.
    fn bound_against(&mut self, pod: Pod, node: &str, w: usize, key: Option<&str>, held: &mut BTreeMap<String, usize>) {
        let domain =
            |cluster: &Cluster, node: &str| key.and_then(|k| cluster.node(node).and_then(|n| n.labels.get(k))).cloned();
        let owned = self.workloads[w].owns(&pod);
        self.provision(&pod, node);
        if let Some((old, on)) = self.bind(pod, node)
            && self.workloads[w].owns(&old)
            && let Some(value) = domain(&self.cluster, &on)
            && let Some(n) = held.get_mut(&value)
        {
            *n -= 1;
        }
        if owned && let Some(value) = domain(&self.cluster, node) {
            *held.entry(value).or_insert(0) += 1;
        }
    }

    /// A pod's controller and its scale, for a budget's expected count (`getExpectedScale`): a
    /// verified workload's pods count its replicas; a snapshot pod's controller (a ReplicaSet or
    /// StatefulSet the snapshot does not hold) counts the pods it had in the snapshot, the one
    /// scale kix can know; a pod without a controller counts nothing.
    pub(super) fn scale_of(&self, pod: &Pod) -> Option<(String, i64)> {
        scale_of(self.workloads, &self.namespaced, self.scales, pod)
    }

    /// A budget's status as the disruption controller computes it now, from the counters.
    pub(super) fn budget_status(&self, budget: &Budget) -> BudgetStatus {
        let counted = self.budgets.iter().position(|b| std::ptr::eq(b, budget)).map(|b| &self.counts.covered[b]);
        #[cfg(test)]
        let counted = counted.filter(|_| !self.reference);
        // Two scales under one controller key (a workload and a foreign controller of the same
        // kind and name): the scan settles which one counts.
        match counted.filter(|c| c.controllers.values().all(|s| s.len() == 1)) {
            Some(c) => budget
                .status_from(c.pods, c.healthy, || c.controllers.values().filter_map(|s| s.keys().next()).sum::<i64>()),
            None => budget.status(self.cluster.pods().map(|(p, _)| p), |p| self.scale_of(p)),
        }
    }

    /// The eviction API's answer for a bound pod now.
    pub(super) fn evict(&self, pod: &Pod) -> Eviction {
        super::budget::evict(pod, self.budgets, |b| self.budget_status(b))
    }
}

#[cfg(test)]
#[path = "world_tests.rs"]
mod tests;
