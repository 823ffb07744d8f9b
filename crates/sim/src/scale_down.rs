//! Scenario "scale-down" of `kix verify` (issue 39): a workload under an autoscaler scaled from its
//! maximum back to its minimum, the victims chosen as the controllers choose them, then the domain
//! losses of its level on what is left.
//!
//! The scheduler places a pod once; nothing re-checks a bound pod, and the controllers delete pods
//! without consulting spread constraints (kubernetes/kubernetes#124149: an HPA's nightly scale-in
//! left one zone with a single pod; #124306, #96748, #115911). So a placement that met the level at
//! the maximum can leave it unmet at the minimum.
//!
//! - **Scale-up.** From the placed state (the workload at its minimum), the controller creates the
//!   pods up to the autoscaler's maximum (at most [`super::workload::MAX_SIMULATED_REPLICAS`]) and
//!   the scheduler places them among every other workload's pods. A pod that finds no node stays
//!   Pending: it is unassigned, so the ReplicaSet controller deletes it first, and the scale-down
//!   starts from the pods that were placed (reported as a fact).
//! - **Victims of a Deployment** (and of a custom resource run as one): the ReplicaSet controller's
//!   `getPodsToDelete` (pkg/controller/replicaset/replica_set.go) sorts the pods once with
//!   `ActivePodsWithRanks.Less` (pkg/controller/controller_utils.go), the rank of a pod being the
//!   number of the set's active pods on its node (`getPodsRankedByRelatedPodsOnSameNode`), and
//!   deletes the first `diff`: unassigned before assigned; Pending < Unknown < Running; not ready
//!   before ready; lower `controller.kubernetes.io/pod-deletion-cost` first; higher rank first;
//!   then newer ready time, more restarts and newer creation. kix's pods have no times and no
//!   restarts, and with LogarithmicScaleDown (GA in 1.31) ready and creation times in one log2
//!   bucket of their age are compared by UID, at random: pods equal on the keys kix knows are a tie
//!   the controller breaks by chance, so kix breaks it **against** the level, as the tie-break
//!   scenario breaks the scheduler's: among the tied pods it deletes, one at a time, a pod of the
//!   level's domain (the zone at level zone, the node at level node) holding the fewest of the
//!   workload's remaining pods (then the lowest domain value, then the lowest pod name), so the
//!   survivors crowd into the fewest domains. (A greedy adversary: one bad draw, not every draw.)
//!   The template's deletion cost is the same for every pod, so it orders nothing here.
//! - **Victims of a StatefulSet**: the StatefulSet controller deletes the highest ordinal first
//!   (pkg/controller/statefulset/stateful_set_control.go, `condemned` in descending ordinal order),
//!   whatever the policy: no chance involved.
//! - **The verdict.** On what is left, each domain of the level fails as in the domain-loss
//!   scenario ([`super::domain_loss::domain_losses`]); a loss that leaves fewer running than the
//!   level needs fails the scenario, and the finding names the split the scale-down left
//!   (`0/0/2 over zones a/b/c`) and what restores the spread: `kubectl rollout restart` (every pod
//!   re-placed under the spread constraints) or the descheduler's
//!   `RemovePodsViolatingTopologySpreadConstraint` strategy (it evicts pods of a domain above the
//!   hard constraint's maxSkew). kix emits neither; verify judges the state right after the
//!   scale-down, before any such pass, since both run later or not at all.
//!
//! Every change is made inside one [`World::trial`]: the world is as it was after.

use super::domain_loss::{Judged, domain_losses};
use super::objects::{Phase, Pod};
use super::quorum::Quorum;
use super::verdict::{Finding, FindingKind, FindingSubject, Scenario, ScenarioRequest, ScenarioResult, Step};
use super::world::World;
use kix_kube::level::Level;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// What the ReplicaSet controller sorts a pod by when it picks the pods to delete, as far as kix knows
/// it (`ActivePodsWithRanks.Less`, rules 1-5; rules 6-8, ready time, restarts and creation time, are
/// unknown to the model and compared at random by LogarithmicScaleDown within a bucket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Standing {
    /// Bound to a node (`spec.nodeName` set).
    pub assigned: bool,
    /// `podPhaseToOrdinal`: Pending 0, Unknown 1, Running 2 (a phase the map lacks reads as 0).
    pub phase: u8,
    /// `podutil.IsPodReady`.
    pub ready: bool,
    /// `controller.kubernetes.io/pod-deletion-cost` (0 when absent or invalid).
    pub deletion_cost: i32,
    /// The set's active pods on the pod's node (`getPodsRankedByRelatedPodsOnSameNode`).
    pub rank: usize,
}

impl Standing {
    /// A pod as the model holds it, with its rank.
    fn of(pod: &Pod, assigned: bool, rank: usize) -> Standing {
        let phase = match pod.phase {
            Some(Phase::Running) => 2,
            Some(Phase::Unknown) => 1,
            Some(Phase::Pending) | None => 0,
        };
        Standing { assigned, phase, ready: pod.ready && assigned, deletion_cost: 0, rank }
    }
}

/// `ActivePodsWithRanks.Less` on the keys kix knows: `Less` (deleted earlier) first; `Equal` is a
/// tie the controller breaks by time, restarts or at random.
pub(super) fn deletion_order(a: &Standing, b: &Standing) -> Ordering {
    // 1. Unassigned < assigned.
    (a.assigned.cmp(&b.assigned))
        // 2. PodPending < PodUnknown < PodRunning.
        .then(a.phase.cmp(&b.phase))
        // 3. Not ready < ready.
        .then(a.ready.cmp(&b.ready))
        // 4. Lower pod-deletion-cost < higher.
        .then(a.deletion_cost.cmp(&b.deletion_cost))
        // 5. Doubled up < not doubled up: the higher rank first.
        .then(b.rank.cmp(&a.rank))
}

/// One pod the scale-down may delete: its name, its node (None: Pending) and its standing.
#[derive(Clone, Debug)]
struct Candidate {
    name: String,
    node: Option<String>,
    standing: Standing,
    /// The StatefulSet ordinal (the pod's index), for StatefulSets.
    ordinal: usize,
}

/// The victims of a Deployment's scale-down by `diff`, in the order taken: sorted by
/// [`deletion_order`], each run of ties broken against the level (`domain_of` gives a pod's domain
/// under the level's key; pods without one count as their own domain).
fn replica_set_victims(
    mut candidates: Vec<Candidate>,
    diff: usize,
    domain_of: &dyn Fn(&Candidate) -> Option<String>,
) -> Vec<(Candidate, bool)> {
    candidates.sort_by(|a, b| deletion_order(&a.standing, &b.standing).then_with(|| a.name.cmp(&b.name)));
    // The workload's pods per domain, as victims leave.
    let mut held: BTreeMap<String, usize> = BTreeMap::new();
    for c in &candidates {
        if let Some(d) = domain_of(c).filter(|_| c.node.is_some()) {
            *held.entry(d).or_insert(0) += 1;
        }
    }
    let mut victims: Vec<(Candidate, bool)> = Vec::new();
    let mut rest = candidates.as_slice();
    while victims.len() < diff && !rest.is_empty() {
        let run = rest.iter().take_while(|c| deletion_order(&c.standing, &rest[0].standing) == Ordering::Equal).count();
        let (tied, after) = rest.split_at(run);
        rest = after;
        let wanted = diff - victims.len();
        if tied.len() <= wanted {
            for c in tied {
                leave(&mut held, domain_of(c).filter(|_| c.node.is_some()));
                victims.push((c.clone(), false));
            }
            continue;
        }
        // A partial run: the controller's draw, broken against the level.
        let mut pool: Vec<&Candidate> = tied.iter().collect();
        for _ in 0..wanted {
            let key = |c: &Candidate| {
                let d = domain_of(c);
                let n = d.as_ref().and_then(|d| held.get(d)).copied().unwrap_or(0);
                (n, d, c.name.clone())
            };
            let (i, _) = pool.iter().enumerate().min_by_key(|(_, c)| key(c)).expect("a non-empty pool");
            let c = pool.remove(i);
            leave(&mut held, domain_of(c).filter(|_| c.node.is_some()));
            victims.push((c.clone(), true));
        }
    }
    victims
}

fn leave(held: &mut BTreeMap<String, usize>, domain: Option<String>) {
    if let Some(n) = domain.and_then(|d| held.get_mut(&d)) {
        *n = n.saturating_sub(1);
    }
}

/// Scenario "scale-down" for workload `w` at `level` under an autoscaler whose maximum is `max`.
pub(super) fn scale_down(
    world: &mut World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    max: i64,
    request: &ScenarioRequest,
) -> ScenarioResult {
    world.trial(|world| run(world, w, quorum, level, max, request))
}

fn run(
    world: &mut World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    max: i64,
    request: &ScenarioRequest,
) -> ScenarioResult {
    let workloads = world.workloads;
    let workload = &workloads[w];
    let deployment = workload.kind.deployment_like();
    let min = world.owned_count(w);
    let max = max.min(super::workload::MAX_SIMULATED_REPLICAS);
    let before = world.placement(w);
    let mut findings = Vec::new();
    // Scale-up: the controller's new pods, placed among everything else.
    let spec = world.owned(w).first().map_or_else(|| workload.pod_spec(0), |(p, _)| std::sync::Arc::clone(&p.spec));
    let mut pending: BTreeMap<String, (Pod, String)> = BTreeMap::new();
    for ordinal in workload.replicas.max(0) as usize..max as usize {
        let pod = world.scale_up_pod(w, &spec, ordinal);
        let name = pod.name.clone();
        let kept = pod.clone();
        if let Err(message) = world.schedule(pod) {
            pending.insert(name, (kept, message));
        }
    }
    let placed_at_max = world.owned_count(w);
    if !pending.is_empty() {
        let (first, (_, message)) = pending.iter().next().expect("not empty");
        let text = format!(
            "at its maximum {max}, {} of the scale-up's pods {} Pending ({first}: {message}): the controller deletes Pending pods first, so the scale-down starts from the {placed_at_max} placed",
            pending.len(),
            if pending.len() == 1 { "stays" } else { "stay" },
        );
        findings.push(Finding::new(FindingKind::ScaleUpPending, FindingSubject::Workload, text));
    }
    let key = if level == Level::Zone { request.zone_key.as_str() } else { request.node_key.as_str() };
    let victims = {
        let cluster = world.cluster();
        let domain_of_node = |node: &str| cluster.node(node).and_then(|n| n.labels.get(key)).cloned();
        // Every pod of the workload now: bound ones ranked by the set's pods on their node, then the Pending.
        let owned = world.owned(w);
        let mut on_node: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, node) in &owned {
            *on_node.entry(node.as_str()).or_insert(0) += 1;
        }
        let index_of = |pod: &Pod| {
            pod.labels
                .get(kix_kube::labels::POD_INDEX)
                .and_then(|i| i.parse().ok())
                .unwrap_or_else(|| pod.name.rsplit('-').next().and_then(|i| i.parse().ok()).unwrap_or(0))
        };
        let mut candidates: Vec<Candidate> = owned
            .iter()
            .map(|(p, n)| Candidate {
                name: p.name.clone(),
                node: Some(n.clone()),
                standing: Standing::of(p, true, on_node[n.as_str()]),
                ordinal: index_of(p),
            })
            .collect();
        candidates.extend(pending.values().map(|(p, _)| Candidate {
            name: p.name.clone(),
            node: None,
            standing: Standing::of(p, false, 0),
            ordinal: index_of(p),
        }));
        let total = candidates.len();
        let diff = total.saturating_sub(min.max(0) as usize);
        let victims: Vec<(Candidate, bool)> = if deployment {
            let domain_of = |c: &Candidate| c.node.as_deref().and_then(&domain_of_node);
            replica_set_victims(candidates, diff, &domain_of)
        } else {
            // The StatefulSet controller: highest ordinal first.
            candidates.sort_by_key(|c| std::cmp::Reverse(c.ordinal));
            candidates.into_iter().take(diff).map(|c| (c, false)).collect()
        };
        victims
    };
    let order = describe_victims(&victims, deployment);
    for (victim, _) in &victims {
        if victim.node.is_some() {
            world.remove(&workload.namespace, &victim.name);
        }
    }
    let after = world.placement(w);
    let split = split(world, w, key, level);
    let mut steps = vec![Step::between(format!("scaled to {max} and back to {min}"), &before, &after)];
    let judged = Judged { w, quorum, level };
    let (result, losses) = domain_losses(world, &[judged], request).pop().expect("one judged workload");
    steps.extend(result.steps.into_iter().map(|step| Step { adversarial: true, ..step }));
    let mut pass = true;
    let remedy = restore(workload.kind, &workload.name);
    for loss in losses.iter().filter(|l| l.running < quorum.required) {
        pass = false;
        let what = if quorum.is_plain() {
            format!("no replica keeps running ({} lost)", loss.lost)
        } else {
            format!("{} ({} lost)", quorum.figures(loss.running), loss.lost)
        };
        let text = format!(
            "scaled from {placed_at_max} to {min}, {order}: left {split}, and {} lost: {what}. The controller deletes pods without consulting spread constraints (kubernetes/kubernetes#124149); {remedy}; verify judges the state right after the scale-down, before either",
            loss.domain
        );
        findings.push(Finding::new(FindingKind::ScaleDownUnmet, FindingSubject::Domain(loss.domain.clone()), text));
    }
    if pass {
        let text = format!(
            "scaled from {placed_at_max} to {min}, {order}: left {split}; every single {} loss still leaves {}",
            match level {
                Level::Zone => "zone",
                Level::Node => "node",
                _ => "pod",
            },
            if quorum.is_plain() { "one running".to_string() } else { format!("{} running", quorum.required) }
        );
        findings.push(Finding::new(FindingKind::ScaleDownHolds, FindingSubject::Workload, text));
    }
    ScenarioResult { scenario: Scenario::ScaleDown, pass, findings, steps }
}

/// The victims as the finding tells them: `the 2 pods on a1 (the node holding most of its pods),
/// then 2 of 4 tied pods (chosen at random; here those on b1, b2)`.
fn describe_victims(victims: &[(Candidate, bool)], deployment: bool) -> String {
    if !deployment {
        let ordinals: Vec<String> = victims.iter().map(|(c, _)| c.ordinal.to_string()).collect();
        return format!("the StatefulSet controller deletes the highest ordinals first ({})", ordinals.join(", "));
    }
    let mut parts: Vec<String> = Vec::new();
    let nodes = |cs: &[&Candidate]| {
        let mut nodes: Vec<&str> = cs.iter().map(|c| c.node.as_deref().unwrap_or("no node")).collect();
        nodes.sort();
        nodes.dedup();
        nodes.join(", ")
    };
    let mut i = 0;
    while i < victims.len() {
        let standing = victims[i].0.standing;
        let random = victims[i].1;
        let run: Vec<&Candidate> =
            victims[i..].iter().take_while(|(c, r)| c.standing == standing && *r == random).map(|(c, _)| c).collect();
        i += run.len();
        let n = run.len();
        let pods = if n == 1 { "pod" } else { "pods" };
        parts.push(if !standing.assigned {
            format!("the {n} Pending {pods}")
        } else if random {
            format!(
                "{n} {pods} the controller picks at random among pods of equal rank {} (ready times in one logarithmic bucket), taken against the level on {}",
                standing.rank,
                nodes(&run)
            )
        } else {
            format!("the {n} {pods} on {} (rank {}: the set's pods on their node)", nodes(&run), standing.rank)
        });
    }
    format!("the ReplicaSet controller deletes {}", parts.join(", then "))
}

/// What restores the level after a scale-down: said in every failing finding.
fn restore(kind: kix_kube::kind::WorkloadKind, name: &str) -> String {
    let resource = match kind {
        kix_kube::kind::WorkloadKind::StatefulSet => "statefulset".to_string(),
        kix_kube::kind::WorkloadKind::Deployment => "deployment".to_string(),
        other => other.as_str().to_ascii_lowercase(),
    };
    format!(
        "`kubectl rollout restart {resource}/{name}` re-places every pod under the spread constraints, and the descheduler's RemovePodsViolatingTopologySpreadConstraint strategy evicts pods of a domain above a hard constraint's maxSkew"
    )
}

/// The workload's pods per domain of the level's key after the scale-down: `0/0/2 over zones a/b/c`
/// (every domain with a node, in value order), or only the domains holding pods when there are more
/// than eight.
fn split(world: &World<'_>, w: usize, key: &str, level: Level) -> String {
    let cluster = world.cluster();
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for node in cluster.nodes() {
        if let Some(v) = node.labels.get(key) {
            counts.entry(v).or_insert(0);
        }
    }
    for (_, node) in world.owned_unsorted(w) {
        if let Some(v) = cluster.node(node).and_then(|n| n.labels.get(key)) {
            *counts.entry(v).or_insert(0) += 1;
        }
    }
    let noun = match level {
        Level::Zone => "zones",
        _ => "nodes",
    };
    if counts.len() <= 8 {
        let values: Vec<String> = counts.values().map(ToString::to_string).collect();
        let names: Vec<&str> = counts.keys().map(|k| k.as_str()).collect();
        return format!("{} over {noun} {}", values.join("/"), names.join("/"));
    }
    let held: Vec<String> = counts.iter().filter(|(_, n)| **n > 0).map(|(k, n)| format!("{n} on {k}")).collect();
    let empty = counts.values().filter(|n| **n == 0).count();
    format!("{} (none on the {empty} other {noun})", held.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(assigned: bool, phase: u8, ready: bool, deletion_cost: i32, rank: usize) -> Standing {
        Standing { assigned, phase, ready, deletion_cost, rank }
    }

    /// `ActivePodsWithRanks.Less`, rule by rule, as pkg/controller/controller_utils.go writes it (and
    /// its test `TestSortingActivePodsWithRanks` orders its pods): each row is (a, b, which goes first).
    #[test]
    fn deletion_order_follows_active_pods_with_ranks() {
        let running = standing(true, 2, true, 0, 1);
        let table: &[(&str, Standing, Standing, Ordering)] = &[
            ("1. unassigned before assigned", standing(false, 0, false, 0, 0), running, Ordering::Less),
            ("1. even a ready-looking unassigned pod", standing(false, 2, false, 5, 0), running, Ordering::Less),
            (
                "2. Pending before Unknown",
                standing(true, 0, false, 0, 1),
                standing(true, 1, false, 0, 1),
                Ordering::Less,
            ),
            ("2. Unknown before Running", standing(true, 1, true, 0, 1), running, Ordering::Less),
            ("3. not ready before ready", standing(true, 2, false, 0, 1), running, Ordering::Less),
            (
                "3. before the deletion cost",
                standing(true, 2, false, 100, 1),
                standing(true, 2, true, -100, 1),
                Ordering::Less,
            ),
            ("4. lower deletion cost first", standing(true, 2, true, -1, 1), running, Ordering::Less),
            ("4. before the rank", standing(true, 2, true, 0, 1), standing(true, 2, true, 1, 5), Ordering::Less),
            ("5. more of the set's pods on its node first", standing(true, 2, true, 0, 3), running, Ordering::Less),
            ("5. fewer later", running, standing(true, 2, true, 0, 2), Ordering::Greater),
            ("6-8. the rest is a tie kix breaks against the level", running, running, Ordering::Equal),
        ];
        for (rule, a, b, expected) in table {
            assert_eq!(deletion_order(a, b), *expected, "{rule}");
            assert_eq!(deletion_order(b, a), expected.reverse(), "{rule} (reversed)");
        }
    }

    fn candidate(name: &str, node: Option<&str>, rank: usize) -> Candidate {
        Candidate {
            name: name.to_string(),
            node: node.map(str::to_string),
            standing: standing(node.is_some(), if node.is_some() { 2 } else { 0 }, node.is_some(), 0, rank),
            ordinal: 0,
        }
    }

    /// The case by hand: 6 pods at 2/2/2 over zones a (one node, a1), b (b1, b2) and c (c1, c2),
    /// scaled to 2. a1's two pods rank 2 and go first; the four others tie at rank 1, and the two taken
    /// against the level are both of one zone (b, the lowest of the two equal zones), leaving 0/0/2.
    #[test]
    fn the_doubled_up_pods_go_first_and_the_tied_rest_crowd_into_one_zone() {
        let zone = |c: &Candidate| c.node.as_deref().map(|n| n[..1].to_string());
        let pods = vec![
            candidate("p-b1", Some("b1"), 1),
            candidate("p-a1x", Some("a1"), 2),
            candidate("p-c1", Some("c1"), 1),
            candidate("p-a1y", Some("a1"), 2),
            candidate("p-c2", Some("c2"), 1),
            candidate("p-b2", Some("b2"), 1),
        ];
        let victims = replica_set_victims(pods.clone(), 4, &zone);
        let names: Vec<(&str, bool)> = victims.iter().map(|(c, r)| (c.name.as_str(), *r)).collect();
        assert_eq!(names, [("p-a1x", false), ("p-a1y", false), ("p-b1", true), ("p-b2", true)]);
        // A Pending pod is always the first victim; ties come after.
        let mut with_pending = pods;
        with_pending.push(candidate("p-new", None, 0));
        let victims = replica_set_victims(with_pending, 1, &zone);
        assert_eq!(victims[0].0.name, "p-new");
        assert!(!victims[0].1);
    }

    /// Against the level at level node: the tied victims come from the nodes holding fewest pods, so the
    /// survivors share one node where they can.
    #[test]
    fn tied_victims_leave_the_survivors_on_the_fewest_domains() {
        let node = |c: &Candidate| c.node.clone();
        let pods = vec![candidate("p1", Some("n1"), 1), candidate("p2", Some("n2"), 1), candidate("p3", Some("n3"), 1)];
        let victims = replica_set_victims(pods, 2, &node);
        let names: Vec<&str> = victims.iter().map(|(c, _)| c.name.as_str()).collect();
        assert_eq!(names, ["p1", "p2"]);
        assert!(victims.iter().all(|(_, random)| *random));
    }
}
