//! `kix verify`'s rolling-update scenario: the rolling update (or Recreate)
//! of a Deployment. See [`super::verify`] for what each scenario promises; this file holds
//! the Deployment controller's arithmetic: `deploymentutil.ResolveFenceposts`
//! (maxSurge rounded up, maxUnavailable down). The drain is in [`super::drain`].

use super::objects::Pod;
use super::verify::{Scenario, ScenarioResult, World};
use crate::kube::labels::POD_TEMPLATE_HASH;
use crate::level::Level;

pub(super) fn rolling_update(world: &World<'_>, w: usize, level: Level) -> ScenarioResult {
    let mut world = world.clone();
    let workload = world.workloads[w].clone();
    let replicas = workload.replicas;
    let surge = workload.max_surge.scaled_value(replicas, true);
    let mut unavailable = workload.max_unavailable.scaled_value(replicas, false);
    let mut findings = Vec::new();
    if workload.max_surge.is_zero() && workload.max_unavailable.is_zero() {
        let f = "maxSurge and maxUnavailable are both 0: the API server refuses this strategy".to_string();
        return ScenarioResult { scenario: Scenario::RollingUpdate, pass: false, findings: vec![f] };
    }
    if surge == 0 && unavailable == 0 {
        // The deployment controller's fencepost: both rounded to 0, so one pod may be unavailable.
        unavailable = 1;
    }
    if workload.recreate {
        return recreate(world, w, level);
    }
    let new_spec = workload.pod_spec(1);
    let new_hash = workload.revision_hash(1);
    let is_new = |p: &Pod| p.labels.get(POD_TEMPLATE_HASH) == Some(&new_hash);
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
        // Scale up the new ReplicaSet within maxSurge.
        loop {
            let owned = world.owned(w);
            let old = owned.iter().filter(|(p, _)| !is_new(p)).count() as i64;
            let new_total = (owned.len() as i64 - old) + pending.len() as i64;
            if new_total >= replicas || old + new_total >= replicas + surge {
                break;
            }
            let pod = workload.pod(&new_spec, 1, created);
            created += 1;
            if world.schedule(pod.clone()).is_err() {
                pending.push(pod);
            }
            progress = true;
        }
        // Scale down the old ReplicaSet by what availability allows, all at once.
        let owned = world.owned(w);
        let old: Vec<Pod> = owned.iter().filter(|(p, _)| !is_new(p)).map(|(p, _)| p.clone()).collect();
        let available =
            old.len() as i64 + owned.iter().filter(|(p, _)| is_new(p) && ready.contains(&p.name)).count() as i64;
        let removable = (available - (replicas - unavailable)).clamp(0, old.len() as i64) as usize;
        for pod in &old[..removable] {
            world.cluster.remove(&pod.namespace, &pod.name);
            progress = true;
        }
        min_available = min_available.min(available - removable as i64);
        // End of the sync: bound new pods become ready.
        for (pod, _) in world.owned(w) {
            if is_new(&pod) && ready.insert(pod.name.clone()) {
                progress = true;
            }
        }
        let owned = world.owned(w);
        if owned.len() as i64 == replicas && owned.iter().all(|(p, _)| is_new(p)) && pending.is_empty() {
            break;
        }
        if !progress {
            pass = false;
            let reasons: Vec<String> = pending
                .iter()
                .map(|p| format!("{} Pending: {}", p.name, world.cluster.cycle(p).failure_message()))
                .collect();
            findings.push(format!(
                "the rollout deadlocks with {} new and {} old pods running (maxSurge {surge}, maxUnavailable {unavailable}): {}",
                owned.iter().filter(|(p, _)| is_new(p)).count(),
                owned.iter().filter(|(p, _)| !is_new(p)).count(),
                reasons.join("; ")
            ));
            break;
        }
        if created > 4 * replicas.max(1) as usize + 16 {
            pass = false;
            findings.push("the rollout does not converge".into());
            break;
        }
    }
    if level >= Level::Pod && min_available < 1 && replicas > 0 {
        pass = false;
        findings.push(format!("the rollout drops to {min_available} available replicas"));
    }
    findings.insert(
        0,
        format!(
            "maxSurge {surge}, maxUnavailable {unavailable}; fewest available during the rollout: {}",
            min_available.max(0)
        ),
    );
    ScenarioResult { scenario: Scenario::RollingUpdate, pass, findings }
}

/// `strategy.type: Recreate`: every old pod is deleted, then the new ones are created.
fn recreate(mut world: World<'_>, w: usize, level: Level) -> ScenarioResult {
    let workload = world.workloads[w].clone();
    for (pod, _) in world.owned(w) {
        world.cluster.remove(&pod.namespace, &pod.name);
    }
    let spec = workload.pod_spec(1);
    let mut findings =
        vec!["strategy Recreate stops every old pod before the new ones start: no replica runs meanwhile".to_string()];
    for index in 0..workload.replicas.max(0) as usize {
        let pod = workload.pod(&spec, 1, index);
        let name = pod.name.clone();
        if let Err(message) = world.schedule(pod) {
            findings.push(format!("{name} Pending: {message}"));
        }
    }
    let pass = level < Level::Pod && findings.len() == 1;
    ScenarioResult { scenario: Scenario::RollingUpdate, pass, findings }
}
