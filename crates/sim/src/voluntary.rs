//! `kix verify`'s rolling-update scenario: the rolling update (or Recreate)
//! of a Deployment, and the rolling update of a StatefulSet. See [`super::scenarios`] for what each scenario promises; this file holds
//! the Deployment controller's arithmetic: `deploymentutil.ResolveFenceposts`
//! (maxSurge rounded up, maxUnavailable down). The drain is in [`super::drain`].

use super::objects::{Phase, Pod};
use super::quorum::Quorum;
use super::verdict::{Finding, FindingKind, FindingSubject, Scenario, ScenarioResult, Step};
use super::world::World;
use kix_kube::labels::POD_TEMPLATE_HASH;
use kix_kube::level::Level;
use std::collections::BTreeMap;

/// The rolling update of a Deployment, from the placed state and back to it.
pub(super) fn rolling_update(world: &mut World<'_>, w: usize, quorum: &Quorum, level: Level) -> ScenarioResult {
    // The other members of its group keep running while this one updates.
    let others = quorum.running(world) - world.owned_count(w);
    world.trial(|world| deployment_update(world, w, quorum, others, level))
}

/// The fewest available replicas of an update against what must keep running (issue 17): at least
/// one, or with the other running pods of its group (`others`), the quorum. Pushes the finding and
/// returns false when the update breaks it.
fn keeps_quorum(min_available: i64, quorum: &Quorum, others: i64, noun: &str, findings: &mut Vec<Finding>) -> bool {
    let running = min_available.saturating_add(others);
    if running >= quorum.required {
        if !quorum.is_plain() {
            let text = format!("during the {noun}: {}", quorum.figures(running.max(0)));
            findings.push(Finding::new(FindingKind::UpdateProgress, FindingSubject::Workload, text));
        }
        return true;
    }
    let text = if quorum.is_plain() {
        format!("the {noun} drops to {min_available} available replicas")
    } else {
        let whose = quorum.group.as_ref().map_or(String::new(), |g| format!(" of group {g}"));
        format!("the {noun} drops to {}{whose}", quorum.figures(running.max(0)))
    };
    findings.push(Finding::new(FindingKind::UpdateDropsAvailability, FindingSubject::Workload, text));
    false
}

/// The syncs of [`rolling_update`]; changes `world`, the caller rolls it back.
fn deployment_update(world: &mut World<'_>, w: usize, quorum: &Quorum, others: i64, level: Level) -> ScenarioResult {
    let before = world.placement(w);
    let workloads = world.workloads;
    let workload = &workloads[w];
    let replicas = workload.replicas;
    let surge = workload.max_surge.scaled_value(replicas, true);
    let mut unavailable = workload.max_unavailable.scaled_value(replicas, false);
    let mut findings = Vec::new();
    if workload.max_surge.is_zero() && workload.max_unavailable.is_zero() {
        let text = "maxSurge and maxUnavailable are both 0: the API server refuses this strategy";
        let f = Finding::new(FindingKind::StrategyRefused, FindingSubject::Workload, text);
        return ScenarioResult::new(Scenario::RollingUpdate, false, vec![f]);
    }
    if surge == 0 && unavailable == 0 {
        // The deployment controller's fencepost: both rounded to 0, so one pod may be unavailable.
        unavailable = 1;
    }
    if workload.recreate {
        return recreate(world, w, level, &before);
    }
    let new_spec = workload.pod_spec(1);
    let new_hash = workload.revision_hash(1);
    // pod-template-hash on a Deployment's pods, rollouts-pod-template-hash on a Rollout's.
    let hash_key = workload.kind.template_hash_label().unwrap_or(POD_TEMPLATE_HASH);
    let is_new = |p: &Pod| p.labels.get(hash_key) == Some(&new_hash);
    // The Deployment controller works in syncs: it scales the new ReplicaSet up within maxSurge
    // and the old one down by as much as maxUnavailable allows, counting only *available* pods.
    // A new pod becomes available one sync after it is bound (readiness is not instant), so a
    // strategy like maxUnavailable 100% takes every old pod down before any new one is ready.
    let mut ready: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut pending: Vec<Pod> = Vec::new();
    let mut created = 0usize;
    let mut min_available = i64::MAX;
    let mut pass = true;
    loop {
        let mut progress = false;
        // Pending new pods get another scheduling attempt each sync.
        let mut still = Vec::new();
        for pod in std::mem::take(&mut pending) {
            match world.schedule(pod.clone()) {
                Ok(_) => progress = true,
                Err(_) => still.push(pod),
            }
        }
        pending = still;
        // Scale up the new ReplicaSet within maxSurge (new pods have fresh names: binding one
        // changes no other pod, so the counts are kept here).
        let owned = world.owned_count(w);
        let old = world.owned_unsorted(w).filter(|(p, _)| !is_new(p)).count() as i64;
        let mut new_bound = owned - old;
        loop {
            let new_total = new_bound + pending.len() as i64;
            if new_total >= replicas || old + new_total >= replicas + surge {
                break;
            }
            let pod = workload.pod(&new_spec, 1, created);
            created += 1;
            if world.schedule(pod.clone()).is_err() {
                pending.push(pod);
            } else {
                new_bound += 1;
            }
            progress = true;
        }
        // Scale down the old ReplicaSet by what availability allows, all at once.
        let owned = world.owned(w);
        let mut old: Vec<(Pod, String)> = owned.iter().filter(|(p, _)| !is_new(p)).cloned().collect();
        sort_for_deletion(&mut old, &owned);
        let old: Vec<Pod> = old.into_iter().map(|(p, _)| p).collect();
        let available =
            old.len() as i64 + owned.iter().filter(|(p, _)| is_new(p) && ready.contains(&p.name)).count() as i64;
        let removable = (available - (replicas - unavailable)).clamp(0, old.len() as i64) as usize;
        for pod in &old[..removable] {
            world.remove(&pod.namespace, &pod.name);
            progress = true;
        }
        min_available = min_available.min(available - removable as i64);
        // End of the sync: bound new pods become ready.
        for (pod, _) in world.owned_unsorted(w) {
            if is_new(pod) && ready.insert(pod.name.clone()) {
                progress = true;
            }
        }
        let (count, all_new) = world.owned_unsorted(w).fold((0, true), |(n, all), (p, _)| (n + 1, all && is_new(p)));
        if count == replicas && all_new && pending.is_empty() {
            break;
        }
        if !progress {
            pass = false;
            let reasons: Vec<String> =
                pending.iter().map(|p| format!("{} Pending: {}", p.name, world.failure_message(p))).collect();
            // Which limit blocks (issue 41): with maxUnavailable 0 no old pod may stop before a surge pod
            // runs; with more, old pods did stop and the new ones still fit nowhere.
            let blocked = match unavailable {
                0 => format!(
                    "maxUnavailable 0 lets no old pod stop until a new one runs, and the maxSurge {surge} new pods find no node"
                ),
                n => format!(
                    "maxUnavailable {n} let old pods stop, and the new pods still find no node (maxSurge {surge})"
                ),
            };
            let text = format!(
                "the rollout deadlocks with {} new and {} old pods running: {blocked}: {}",
                owned.iter().filter(|(p, _)| is_new(p)).count(),
                owned.iter().filter(|(p, _)| !is_new(p)).count(),
                reasons.join("; ")
            );
            findings.push(Finding::new(FindingKind::UpdateDeadlocks, FindingSubject::Workload, text));
            break;
        }
        if created > 4 * replicas.max(1) as usize + 16 {
            pass = false;
            let text = "the rollout does not converge";
            findings.push(Finding::new(FindingKind::UpdateDoesNotConverge, FindingSubject::Workload, text));
            break;
        }
    }
    if level >= Level::Pod && replicas > 0 && !keeps_quorum(min_available, quorum, others, "rollout", &mut findings) {
        pass = false;
    }
    let text = format!(
        "maxSurge {surge}, maxUnavailable {unavailable}; fewest available during the rollout: {}",
        min_available.max(0)
    );
    findings.insert(0, Finding::new(FindingKind::UpdateProgress, FindingSubject::Workload, text));
    let pending = pending.iter().map(|p| (p.name.clone(), world.failure_message(p))).collect();
    let steps = vec![update_step(world, w, "rolling update", &before, pending)];
    ScenarioResult { scenario: Scenario::RollingUpdate, pass, findings, steps }
}

/// What an update did to the workload's pods, against `before` (the placement it started from).
fn update_step(
    world: &World<'_>,
    w: usize,
    step: &str,
    before: &BTreeMap<String, String>,
    pending: BTreeMap<String, String>,
) -> Step {
    Step { pending, ..Step::between(step, before, &world.placement(w)) }
}

/// `strategy.type: Recreate`: every old pod is deleted, then the new ones are created.
fn recreate(world: &mut World<'_>, w: usize, level: Level, before: &BTreeMap<String, String>) -> ScenarioResult {
    let workloads = world.workloads;
    let workload = &workloads[w];
    for (pod, _) in world.owned(w) {
        world.remove(&pod.namespace, &pod.name);
    }
    let spec = workload.pod_spec(1);
    let text = "strategy Recreate stops every old pod before the new ones start: no replica runs meanwhile";
    let mut findings = vec![Finding::new(FindingKind::Recreate, FindingSubject::Workload, text)];
    let mut pending = BTreeMap::new();
    for index in 0..workload.replicas.max(0) as usize {
        let pod = workload.pod(&spec, 1, index);
        let subject = FindingSubject::pod(&pod.namespace, &pod.name);
        let name = pod.name.clone();
        if let Err(message) = world.schedule(pod) {
            findings.push(Finding::new(FindingKind::Pending, subject, format!("{name} Pending: {message}")));
            pending.insert(name, message);
        }
    }
    let pass = level < Level::Pod && findings.len() == 1;
    let steps = vec![update_step(world, w, "recreate", before, pending)];
    ScenarioResult { scenario: Scenario::RollingUpdate, pass, findings, steps }
}

/// The ReplicaSet controller's order for scaling down (kubernetes/kubernetes
/// pkg/controller/replicaset/replica_set.go `getPodsToDelete`, `getPodsRankedByRelatedPodsOnSameNode`;
/// pkg/controller/controller_utils.go `ActivePodsWithRanks.Less`): unassigned before assigned,
/// Pending before Unknown before Running, not Ready before Ready, then pods on nodes holding more
/// of the Deployment's active pods (old and new ReplicaSets: the related pods) first. The model's
/// pods have no deletion cost, ready time, restarts or creation time to tell them apart further,
/// so the rest is by name (upstream: creation time, then a pseudo-random order).
pub(super) fn sort_for_deletion(pods: &mut [(Pod, String)], related: &[(Pod, String)]) {
    let mut on_node: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (_, node) in related.iter().filter(|(p, _)| !p.terminating) {
        *on_node.entry(node.as_str()).or_insert(0) += 1;
    }
    // podPhaseToOrdinal; a phase it does not list (none at all, here) looks up as 0.
    let phase = |p: &Pod| match p.phase {
        Some(Phase::Pending) | None => 0,
        Some(Phase::Unknown) => 1,
        Some(Phase::Running) => 2,
    };
    let key = |(p, node): &(Pod, String)| {
        let rank = on_node.get(node.as_str()).copied().unwrap_or(0);
        (!node.is_empty(), phase(p), p.ready, std::cmp::Reverse(rank), p.name.clone())
    };
    pods.sort_by_cached_key(key);
}

/// A StatefulSet's rolling update (kubernetes/kubernetes pkg/controller/statefulset/
/// stateful_set_control.go, `updateStatefulSet`): with `podManagementPolicy: OrderedReady` the
/// controller replaces pods one at a time from the highest ordinal down to `partition`, deleting
/// the old pod, recreating it under the same name at the new revision and waiting until it is
/// Running and Ready before the next; pods below the partition keep the old revision. `OnDelete`
/// replaces nothing by itself. (`Parallel` only changes scaling, not updates: the same order
/// applies.) At level pod and up one replica must stay available throughout; a replacement left
/// Pending stops the update there for good.
pub(super) fn statefulset_update(world: &mut World<'_>, w: usize, quorum: &Quorum, level: Level) -> ScenarioResult {
    let others = quorum.running(world) - world.owned_count(w);
    world.trial(|world| statefulset_steps(world, w, quorum, others, level))
}

/// The steps of [`statefulset_update`]; changes `world`, the caller rolls it back.
fn statefulset_steps(world: &mut World<'_>, w: usize, quorum: &Quorum, others: i64, level: Level) -> ScenarioResult {
    let before = world.placement(w);
    let workloads = world.workloads;
    let workload = &workloads[w];
    let replicas = workload.replicas.max(0);
    let Some(partition) = workload.partition else {
        let text = "updateStrategy OnDelete: the controller replaces pods only when they are deleted";
        let f = Finding::new(FindingKind::OnDelete, FindingSubject::Workload, text);
        return ScenarioResult::new(Scenario::RollingUpdate, true, vec![f]);
    };
    let spec = workload.pod_spec(1);
    let mut findings = Vec::new();
    let mut pass = true;
    let mut min_available = world.owned_count(w);
    let mut updated = Vec::new();
    let mut pending = BTreeMap::new();
    for ordinal in (partition.clamp(0, replicas)..replicas).rev() {
        let name = format!("{}-{ordinal}", workload.name);
        world.remove(&workload.namespace, &name);
        min_available = min_available.min(world.owned_count(w));
        let pod = workload.pod(&spec, 1, ordinal as usize);
        if let Err(message) = world.schedule(pod) {
            pass = false;
            let text = format!(
                "the update stops at {name}: its new revision stays Pending, so the controller (OrderedReady) never moves on: {message}"
            );
            findings.push(Finding::new(
                FindingKind::UpdateStops,
                FindingSubject::pod(&workload.namespace, &name),
                text,
            ));
            pending.insert(name, message);
            break;
        }
        updated.push(name);
    }
    if level >= Level::Pod && replicas > 0 && !keeps_quorum(min_available, quorum, others, "update", &mut findings) {
        pass = false;
    }
    let text = format!(
        "partition {partition}: {} updated highest ordinal first, one at a time ({}); fewest available during the update: {}",
        updated.len(),
        if updated.is_empty() { "none".to_string() } else { updated.join(", ") },
        min_available.max(0)
    );
    findings.insert(0, Finding::new(FindingKind::UpdateProgress, FindingSubject::Workload, text));
    let steps = vec![update_step(world, w, "rolling update", &before, pending)];
    ScenarioResult { scenario: Scenario::RollingUpdate, pass, findings, steps }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, phase: &str, ready: bool) -> Pod {
        let status = match (phase, ready) {
            ("", _) => String::new(),
            (p, r) => format!(
                "status: {{phase: {p}, conditions: [{{type: Ready, status: '{}'}}]}}\n",
                if r { "True" } else { "False" }
            ),
        };
        let yaml = format!("kind: Pod\nmetadata: {{name: {name}, namespace: ns}}\n{status}");
        crate::snapshot::parse_pod(&kix_yaml::from_str(&yaml).unwrap(), "ns").unwrap()
    }

    /// controller_utils.go ActivePodsWithRanks.Less, as a table: pods (name, node, phase, ready),
    /// related pods per node beyond them, and the deletion order.
    #[test]
    fn old_pods_go_in_the_replicaset_controllers_order() {
        type Case = (
            &'static [(&'static str, &'static str, &'static str, bool)],
            &'static [&'static str],
            &'static [&'static str],
        );
        let cases: &[Case] = &[
            // 1. Unassigned before assigned.
            (&[("a", "n1", "Running", true), ("b", "", "Pending", false)], &[], &["b", "a"]),
            // 2. Pending < Unknown < Running.
            (
                &[("a", "n1", "Running", true), ("b", "n2", "Unknown", true), ("c", "n3", "Pending", true)],
                &[],
                &["c", "b", "a"],
            ),
            // 3. Not ready before ready.
            (&[("a", "n1", "Running", true), ("b", "n2", "Running", false)], &[], &["b", "a"]),
            // 4. More of the set's pods on the pod's node first (new pods on n2 count too).
            (&[("a", "n1", "Running", true), ("b", "n2", "Running", true)], &["n2"], &["b", "a"]),
            // Otherwise by name.
            (&[("b", "n1", "Running", true), ("a", "n2", "Running", true)], &[], &["a", "b"]),
        ];
        for (pods, extra, want) in cases {
            let mut list: Vec<(Pod, String)> =
                pods.iter().map(|(n, node, phase, ready)| (pod(n, phase, *ready), node.to_string())).collect();
            let mut related = list.clone();
            related.extend(
                extra.iter().enumerate().map(|(i, node)| (pod(&format!("new{i}"), "Running", true), node.to_string())),
            );
            sort_for_deletion(&mut list, &related);
            let got: Vec<&str> = list.iter().map(|(p, _)| p.name.as_str()).collect();
            assert_eq!(&got, want, "{pods:?}");
        }
    }
}
