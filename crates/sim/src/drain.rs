//! Scenario "drain" of `kix verify`: each node holding a replica is cordoned and drained as
//! `kubectl drain --ignore-daemonsets --delete-emptydir-data` drains it.
//!
//! - Which pods go (k8s.io/kubectl/pkg/drain/filters.go, `makeFilters`): pods whose controller is
//!   a DaemonSet stay (`daemonSetFilter` with --ignore-daemonsets), mirror pods stay
//!   (`mirrorPodFilter`), pods with emptyDir volumes go (`localStorageFilter` with
//!   --delete-emptydir-data), and a pod that declares no controller stops the drain of the node
//!   before anything is evicted (`unreplicatedFilter` without --force: "cannot delete Pods that
//!   declare no controller (use --force to override)"). Terminal pods are not in the model (see
//!   [`super::snapshot::is_terminal`]).
//! - Evictions (k8s.io/kubectl/pkg/drain/drain.go, `evictPods`): every pod is evicted through the
//!   eviction API ([`super::budget::evict`]); a 429 TooManyRequests is retried (kubectl waits 5 s
//!   and tries again, without end by default), any other error gives up on that pod and fails the
//!   drain. kix retries in rounds while some eviction succeeds; a round in which only 429s come
//!   back can never change, so the drain is stuck there.
//! - Evicted pods of a controller are recreated and rescheduled (Ready once bound); other pods of
//!   the snapshot are gone.
//!
//! The verdict is the workload's: the scenario fails when the drain of one of its nodes is stuck
//! on, or refused for, one of its own pods, or when at level pod and up a replacement of one of its
//! evicted pods stays Pending. A drain stopped by another pod (one with no controller, or under
//! another workload's budget) is reported, not held against the workload: its replicas are not
//! disrupted by a drain that does not happen.

use super::budget::Eviction;
use super::objects::Pod;
use super::quorum::Quorum;
use super::verdict::{Finding, FindingKind, FindingSubject, Scenario, ScenarioResult, Step};
use super::world::World;
use kix_kube::level::Level;

/// kubectl's reason for a pod without a controller (filters.go, `unmanagedFatal`).
pub const UNMANAGED_FATAL: &str = "cannot delete Pods that declare no controller (use --force to override)";

pub(super) fn drain(world: &mut World<'_>, w: usize, quorum: &Quorum, level: Level) -> ScenarioResult {
    let mut nodes: Vec<String> = world.owned_unsorted(w).map(|(_, n)| n.to_string()).collect();
    nodes.sort();
    nodes.dedup();
    let mut findings = Vec::new();
    let mut pass = true;
    let mut steps = Vec::new();
    for node in nodes {
        let mut step = Step::new(format!("drain of {node}"), vec![node.clone()]);
        world.trial(|world| drain_node(world, w, quorum, level, &node, &mut pass, &mut findings, &mut step));
        steps.push(step);
    }
    ScenarioResult { scenario: Scenario::Drain, pass, findings, steps }
}

/// Cordons and drains one node; what it does to the workload's pods goes into `step`.
/// Changes `world`; the caller rolls it back.
#[allow(clippy::too_many_arguments)]
fn drain_node(
    world: &mut World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    node: &str,
    pass: &mut bool,
    findings: &mut Vec<Finding>,
    step: &mut Step,
) {
    {
        world.cordon(node);
        let mut pods: Vec<Pod> =
            world.cluster().pods_on(node).into_iter().filter(|p| !p.drain_skips).cloned().collect();
        pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        let unmanaged: Vec<String> = pods
            .iter()
            .filter(|p| p.controller.is_none() && world.owner_of(p).is_none())
            .map(|p| format!("{}/{}", p.namespace, p.name))
            .collect();
        if !unmanaged.is_empty() {
            let text = format!(
                "drain of {node} stops before evicting anything: {UNMANAGED_FATAL}: {} (not pods of this workload; its replicas there stay)",
                unmanaged.join(", ")
            );
            findings.push(Finding::new(FindingKind::DrainUnmanaged, FindingSubject::Node(node.to_string()), text));
            return;
        }
        loop {
            let mut progress = false;
            let mut refused = Vec::new();
            for pod in std::mem::take(&mut pods) {
                match world.evict(&pod) {
                    Eviction::Evicted => {
                        progress = true;
                        if world.owner_of(&pod) == Some(w) {
                            step.gone.insert(pod.name.clone(), node.to_string());
                        }
                        // A group's or a majority workload's pods must keep the quorum while one is evicted.
                        let judged = world.owner_of(&pod).is_some_and(|o| quorum.counts(o));
                        let running = quorum.running(world) - 1;
                        if judged && !quorum.is_plain() && level >= Level::Pod && running < quorum.required {
                            *pass = false;
                            let text =
                                format!("drain of {node}: evicting {} leaves {}", pod.name, quorum.figures(running));
                            let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                            findings.push(Finding::new(FindingKind::DrainBlocked, subject, text));
                        }
                        evicted(world, w, level, node, &pod, pass, findings, step);
                    }
                    Eviction::TooManyRequests(why) => refused.push((pod, why)),
                    Eviction::InternalError(why) => {
                        // kubectl gives up on this pod: the drain fails.
                        let own = world.owner_of(&pod) == Some(w);
                        *pass &= !own;
                        let text = format!(
                            "drain of {node} fails: evicting {}{} fails: {why}",
                            pod.name,
                            if own { "" } else { " (not a pod of this workload)" }
                        );
                        let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                        findings.push(Finding::new(FindingKind::EvictionFailed, subject, text));
                    }
                }
            }
            if refused.is_empty() {
                break;
            }
            if !progress {
                for (pod, why) in refused {
                    let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                    if world.owner_of(&pod) == Some(w) {
                        *pass = false;
                        let text = format!("drain of {node} is blocked: evicting {} fails: {why}", pod.name);
                        findings.push(Finding::new(FindingKind::DrainBlocked, subject, text));
                    } else {
                        let text = format!(
                            "drain of {node} never finishes: evicting {}/{} (not a pod of this workload) fails: {why}",
                            pod.namespace, pod.name
                        );
                        findings.push(Finding::new(FindingKind::DrainNeverFinishes, subject, text));
                    }
                }
                break;
            }
            pods = refused.into_iter().map(|(p, _)| p).collect();
        }
    }
}

/// A pod was evicted: its controller recreates it and the scheduler places the replacement.
#[allow(clippy::too_many_arguments)]
fn evicted(
    world: &mut World<'_>,
    w: usize,
    level: Level,
    node: &str,
    pod: &Pod,
    pass: &mut bool,
    findings: &mut Vec<Finding>,
    step: &mut Step,
) {
    world.remove(&pod.namespace, &pod.name);
    let Some(owner) = world.owner_of(pod) else { return };
    let replacement = world.replacement(owner, pod);
    let scheduled = world.schedule(replacement.clone());
    if owner != w {
        return;
    }
    match scheduled {
        Ok(node) => {
            step.placed.insert(replacement.name.clone(), node);
        }
        Err(message) => match world.volume_wait(&replacement, &message) {
            Some(bound) => volume_pending(level, node, pod, &replacement, &bound, message, pass, findings, step),
            None => evicted_pending(level, node, pod, &replacement, message, pass, findings, step),
        },
    }
}

/// The replacement of an evicted pod can run only where its volume is bound (`bound`: `zone a`) and
/// stays Pending there (issue 39): a failure at level pod and node; at level zone the member of that
/// zone waits for it, which the level allows.
#[allow(clippy::too_many_arguments)]
fn volume_pending(
    level: Level,
    node: &str,
    pod: &Pod,
    replacement: &Pod,
    bound: &str,
    message: String,
    pass: &mut bool,
    findings: &mut Vec<Finding>,
    step: &mut Step,
) {
    let subject = FindingSubject::pod(&replacement.namespace, &replacement.name);
    let name = &replacement.name;
    if level == Level::Zone {
        let text = format!(
            "drain of {node}: replacement {name} of evicted {} waits for {bound}, where its volume is bound (the zone's member is down until a node there takes it): {message}",
            pod.name
        );
        findings.push(Finding::new(FindingKind::WaitsForVolumeZone, subject, text));
    } else {
        if level >= Level::Pod {
            *pass = false;
        }
        let text = format!(
            "drain of {node}: replacement {name} of evicted {} can run only in {bound}, where its volume is bound, and stays Pending: {message}",
            pod.name
        );
        findings.push(Finding::new(FindingKind::VolumeBound, subject, text));
    }
    step.pending.insert(replacement.name.clone(), message);
}

/// The replacement of an evicted pod of the workload stays Pending.
#[allow(clippy::too_many_arguments)]
fn evicted_pending(
    level: Level,
    node: &str,
    pod: &Pod,
    replacement: &Pod,
    message: String,
    pass: &mut bool,
    findings: &mut Vec<Finding>,
    step: &mut Step,
) {
    // Evicted pods must reschedule from level pod up; below, it is downtime allowed.
    if level >= Level::Pod {
        *pass = false;
    }
    let text =
        format!("drain of {node}: replacement {} of evicted {} stays Pending: {message}", replacement.name, pod.name);
    let subject = FindingSubject::pod(&replacement.namespace, &replacement.name);
    findings.push(Finding::new(FindingKind::EvictedReplacementPending, subject, text));
    step.pending.insert(replacement.name.clone(), message);
}
