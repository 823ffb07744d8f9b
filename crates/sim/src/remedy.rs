//! The remedy `kix audit` proves (issue 23): `kubectl rollout restart` of a failing workload,
//! simulated on today's cluster with the compiled template, and whether the placement it ends
//! in survives the level's worst domain loss.
//!
//! A Deployment's rollout follows the deployment controller (kubernetes/kubernetes
//! pkg/controller/deployment/rolling.go, `reconcileNewReplicaSet` and `reconcileOldReplicaSets`):
//! the new ReplicaSet grows while all pods stay within `replicas + maxSurge` (maxSurge rounded up,
//! maxUnavailable down, `ResolveFenceposts`), and old pods are deleted while
//! `old + new available - (replicas - maxUnavailable)` is above 0, in the ReplicaSet controller's
//! deletion order ([`super::voluntary::sort_for_deletion`]). The old pods stay bound while the new
//! ones are scheduled: they hold capacity, and a constraint without `matchLabelKeys:
//! [pod-template-hash]` counts them, which is how a rollout can end lopsided. Pods the model cannot
//! place stay Pending and are retried each step, as the scheduler's queue retries them when pods
//! leave. `strategy.type: Recreate` deletes every old pod first. A StatefulSet's restart replaces
//! pods one at a time from the highest ordinal down (stateful_set_control.go), each deleted before
//! it is recreated.

use super::audit::{Index, is_running, level_key, survival, template_pod};
use super::audit_report::{AuditRequest, AuditWorkload, Remedy};
use super::cluster::Cluster;
use super::objects::Pod;
use super::voluntary::sort_for_deletion;
use super::workload::Workload;
use kix_kube::kind::WorkloadKind;
use std::collections::BTreeMap;

/// The template revision the simulated restart rolls out (`kubectl.kubernetes.io/restartedAt`
/// changes the template, so the new pods get a new pod-template-hash).
const RESTARTED: u32 = 1;

/// Simulates the restart of `workload` and judges where it ends.
pub(super) fn restart(
    index: &Index<'_>,
    workload: &Workload,
    wanted: &AuditWorkload,
    request: &AuditRequest,
    drifted: bool,
    of: i64,
) -> Remedy {
    let mut cluster = Cluster::new(index.state);
    let pending = match workload.kind {
        WorkloadKind::StatefulSet => statefulset_restart(&mut cluster, workload),
        _ => deployment_restart(&mut cluster, workload),
    };
    let selects = |pod: &Pod| match &wanted.group {
        Some((_, selector)) => {
            pod.namespace == workload.namespace && selector.iter().all(|(k, v)| pod.labels.get(k) == Some(v))
        }
        None => workload.owns(pod),
    };
    let placed: Vec<&str> = cluster.pods().filter(|(p, _)| selects(p) && is_running(p)).map(|(_, n)| n).collect();
    let key = level_key(wanted.level, request);
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    if let Some(key) = key {
        for (pod, node) in cluster.pods().filter(|(p, _)| workload.owns(p) && is_running(p)) {
            let _ = pod;
            if let Some(value) = index.nodes.get(node).and_then(|n| n.labels.get(key)) {
                *counts.entry(value.clone()).or_insert(0) += 1;
            }
        }
    }
    let template = template_pod(workload);
    let survival = key.map(|key| survival(index, key, &template, placed.iter().copied(), of, wanted.survive));
    let survives = pending == 0 && survival.as_ref().is_none_or(|s| s.survives);
    let kind = match workload.kind {
        WorkloadKind::StatefulSet => "statefulset",
        WorkloadKind::Rollout => "rollout",
        WorkloadKind::Deployment => "deployment",
    };
    let mut commands = Vec::new();
    if !drifted {
        commands.push(format!("kubectl -n {} rollout restart {kind}/{}", workload.namespace, workload.name));
    }
    commands.push(format!("kubectl -n {} rollout status {kind}/{}", workload.namespace, workload.name));
    let mut otherwise = Vec::new();
    if !survives {
        if let Some(key) = key {
            let mut domains: BTreeMap<String, i64> = BTreeMap::new();
            for node in &index.state.nodes {
                if let Some(value) = node.labels.get(key) {
                    domains.entry(value.clone()).or_insert(0);
                }
            }
            for (value, n) in &counts {
                domains.insert(value.clone(), *n);
            }
            let empty: Vec<&str> = domains.iter().filter(|(_, n)| **n == 0).map(|(d, _)| d.as_str()).collect();
            if !empty.is_empty() || domains.len() < 2 {
                otherwise.push(format!(
                    "a node the pods can run on in {} (a domain the rollout left empty or that does not exist): \
                     the model found no room for them there",
                    if empty.is_empty() { format!("a second {key} domain") } else { empty.join(", ") }
                ));
            }
        }
        if pending > 0 {
            otherwise.push(format!(
                "capacity for {pending} pod(s) the simulated rollout left Pending (their nodes are full, tainted or excluded by affinity)"
            ));
        }
        if workload.spec.spread.iter().any(|c| c.max_skew == 1) {
            otherwise.push("a lower maxSkew is impossible: the constraint's maxSkew is already 1".to_string());
        }
        otherwise.push(
            "the descheduler's RemovePodsViolatingTopologySpreadConstraint evicts pods above maxSkew once room exists \
             (it evicts; the scheduler places the replacements)"
                .to_string(),
        );
    }
    Remedy { commands, counts, pending, survival, survives, otherwise }
}

/// The deployment controller's rolling update of a restart; returns the new pods left Pending.
fn deployment_restart(cluster: &mut Cluster, workload: &Workload) -> usize {
    let replicas = workload.replicas;
    let mut old: Vec<(Pod, String)> = cluster
        .pods()
        .filter(|(p, _)| workload.owns(p) && !p.terminating)
        .map(|(p, n)| (p.clone(), n.to_string()))
        .collect();
    let (surge, unavailable) = if workload.recreate {
        (0, replicas)
    } else {
        let surge = workload.max_surge.scaled_value(replicas, true);
        let unavailable = workload.max_unavailable.scaled_value(replicas, false);
        // Validation refuses both 0; `ResolveFenceposts` then makes maxUnavailable 1.
        if surge == 0 && unavailable == 0 { (0, 1) } else { (surge, unavailable) }
    };
    let spec = workload.pod_spec(RESTARTED);
    let mut created = 0i64;
    let mut bound = 0i64;
    let mut waiting: Vec<Pod> = Vec::new();
    // Each step either binds or deletes a pod, so replicas * 2 + 1 steps end any rollout.
    for _ in 0..=(replicas * 2 + 1) {
        let mut progressed = false;
        // The scheduler retries pods left Pending.
        let mut still = Vec::new();
        for pod in waiting.drain(..) {
            match cluster.select(&pod) {
                Some(node) if cluster.bind(pod.clone(), &node).is_ok() => {
                    bound += 1;
                    progressed = true;
                }
                _ => still.push(pod),
            }
        }
        waiting = still;
        while created < replicas && old.len() as i64 + created < replicas + surge {
            let pod = workload.pod(&spec, RESTARTED, created as usize);
            created += 1;
            progressed = true;
            match cluster.select(&pod) {
                Some(node) if cluster.bind(pod.clone(), &node).is_ok() => bound += 1,
                _ => waiting.push(pod),
            }
        }
        // `maxScaledDown = allPodsCount - minAvailable - newRSUnavailablePodCount`: every old pod
        // counts, Ready or not (the not-Ready ones go first in the deletion order).
        let can = (old.len() as i64 + bound - (replicas - unavailable)).clamp(0, old.len() as i64) as usize;
        if can > 0 {
            let related: Vec<(Pod, String)> =
                cluster.pods().filter(|(p, _)| workload.owns(p)).map(|(p, n)| (p.clone(), n.to_string())).collect();
            sort_for_deletion(&mut old, &related);
            for (pod, _) in old.drain(..can) {
                cluster.remove(&pod.namespace, &pod.name);
            }
            progressed = true;
        }
        if (old.is_empty() && created == replicas && waiting.is_empty()) || !progressed {
            break;
        }
    }
    waiting.len()
}

/// A StatefulSet's restart: highest ordinal first, each pod deleted, then recreated and scheduled;
/// a pod left Pending stops the rollout (OrderedReady waits for it). Returns the pods left Pending.
fn statefulset_restart(cluster: &mut Cluster, workload: &Workload) -> usize {
    let spec = workload.pod_spec(RESTARTED);
    for ordinal in (0..workload.replicas.max(0) as usize).rev() {
        let pod = workload.pod(&spec, RESTARTED, ordinal);
        cluster.remove(&pod.namespace, &pod.name);
        match cluster.select(&pod) {
            Some(node) if cluster.bind(pod.clone(), &node).is_ok() => {}
            _ => return 1,
        }
    }
    0
}
