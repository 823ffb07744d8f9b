//! Scenario "domain loss" of `kix verify` and its adversarial twin "tie-break": each domain of
//! the level fails in turn (see [`super::scenarios`] for what each promises).

use super::objects::Pod;
use super::plugins::REASON_SPREAD;
use super::quorum::Quorum;
use super::verdict::{
    DomainLoss, Finding, FindingKind, FindingSubject, Scenario, ScenarioRequest, ScenarioResult, Step,
};
use super::world::World;
use kix_kube::level::Level;
use kix_kube::taints::{Taint, no_execute_eviction_seconds};
use std::collections::BTreeMap;

/// When the taint-eviction controller deletes a pod bound to the failed `nodes` (now tainted
/// `unreachable` NoSchedule and NoExecute): after its tolerationSeconds, None for never. A pod lost
/// at level pod (no node fails) is deleted at once.
fn eviction_after(world: &World<'_>, pod: &Pod, nodes: &[String]) -> Option<i64> {
    let cluster = world.cluster();
    let node = cluster.node_of(&pod.namespace, &pod.name).and_then(|n| cluster.node(n));
    match node {
        Some(node) if nodes.contains(&node.name) => no_execute_eviction_seconds(&pod.spec.tolerations, &node.taints),
        _ => Some(0),
    }
}

/// A workload's domain-loss scenario and its losses.
pub(super) type Losses = (ScenarioResult, Vec<DomainLoss>);

/// The failed units, by report label, label value and (for a pod) namespace: the nodes to fail, the
/// pods to delete, and the judged workloads (by index) that lose pods there.
type Units = BTreeMap<(String, String, String), (Vec<String>, Vec<Pod>, Vec<usize>)>;

/// A workload judged by the domain-loss scenario: its index in the world, what must keep running,
/// and its level.
#[derive(Clone, Copy)]
pub(super) struct Judged<'q> {
    pub w: usize,
    pub quorum: &'q Quorum,
    pub level: Level,
}

/// The domain-loss scenario of every judged workload (level pod and up), each failed domain one shared
/// event (issue 38): a zone or node lost takes every workload's pods in it at once, their replacements
/// compete for the surviving room in the order their pods are deleted, and each workload whose pods
/// were in it is judged on that one event. A workload's losses come in the order of its domains'
/// labels, as when each was failed for it alone (the event is the same: every pod on the failed
/// nodes was always deleted and every owner's replacement recreated). Returns, per judged workload in
/// order, its scenario and its losses.
pub(super) fn domain_losses(world: &mut World<'_>, judged: &[Judged<'_>], request: &ScenarioRequest) -> Vec<Losses> {
    // Per judged workload: the pods judged (the workload's, or its group's, see [`Quorum`]).
    let owned: Vec<Vec<(Pod, String)>> = judged
        .iter()
        .map(|j| {
            let mut owned: Vec<(Pod, String)> = j.quorum.members.iter().flat_map(|&m| world.owned(m)).collect();
            owned.sort_by(|a, b| a.0.name.cmp(&b.0.name));
            owned
        })
        .collect();
    // The failed units, by report label and the label value it names: the nodes to fail, the pods to
    // delete, and the judged workloads (by index into `judged`) that lose pods there.
    // A pod's unit is keyed by its namespace too (two instances' pods may share a name).
    let mut units: Units = BTreeMap::new();
    {
        let cluster = world.cluster();
        // The nodes of each domain of each key, in name order, read once per key.
        let mut domains: BTreeMap<&str, BTreeMap<&String, Vec<String>>> = BTreeMap::new();
        for (j, judged) in judged.iter().enumerate() {
            if judged.level == Level::Pod {
                for (pod, _) in &owned[j] {
                    let unit = (format!("pod {}", pod.name), pod.name.clone(), pod.namespace.clone());
                    units.entry(unit).or_insert_with(|| (Vec::new(), vec![pod.clone()], Vec::new())).2.push(j);
                }
                continue;
            }
            let key = if judged.level == Level::Zone { &request.zone_key } else { &request.node_key };
            let of_key = domains.entry(key.as_str()).or_insert_with(|| {
                let mut by_value: BTreeMap<&String, Vec<String>> = BTreeMap::new();
                for n in cluster.nodes() {
                    if let Some(value) = n.labels.get(key) {
                        by_value.entry(value).or_default().push(n.name.clone());
                    }
                }
                by_value
            });
            for (_, node) in &owned[j] {
                let Some(value) = cluster.node(node).and_then(|n| n.labels.get(key)) else { continue };
                let label = if judged.level == Level::Zone { format!("zone {value}") } else { format!("node {value}") };
                let entry = units.entry((label, value.clone(), String::new())).or_insert_with(|| {
                    let nodes = of_key.get(value).cloned().unwrap_or_default();
                    let pods = nodes.iter().flat_map(|n| cluster.pods_on(n)).cloned().collect();
                    (nodes, pods, Vec::new())
                });
                if entry.2.last() != Some(&j) {
                    entry.2.push(j);
                }
            }
        }
    }
    let mut results: Vec<(ScenarioResult, Vec<DomainLoss>)> = judged
        .iter()
        .zip(&owned)
        .map(|(_, owned)| {
            let mut findings = Vec::new();
            let pass = !owned.is_empty();
            if owned.is_empty() {
                let message = "no replica is running, so every domain loss takes them all";
                findings.push(Finding::new(FindingKind::NothingRunning, FindingSubject::Workload, message));
            }
            (ScenarioResult { scenario: Scenario::DomainLoss, pass, findings, steps: Vec::new() }, Vec::new())
        })
        .collect();
    for ((label, value, _), (nodes, pods, losing)) in units {
        let key = if label.starts_with("zone ") { &request.zone_key } else { &request.node_key };
        let mut judging: Vec<Judging<'_>> = losing
            .iter()
            .map(|&j| Judging {
                judged: judged[j],
                owned: owned[j].len() as i64,
                step: Step::new(label.clone(), nodes.clone()),
                findings: Vec::new(),
                pass: true,
                loss: None,
            })
            .collect();
        world.trial(|world| {
            let unit = Unit { label: &label, value: &value, nodes: &nodes, pods: &pods };
            fail(world, key, unit, &mut judging)
        });
        for (&j, judging) in losing.iter().zip(judging) {
            let (result, losses) = &mut results[j];
            result.pass &= judging.pass;
            result.findings.extend(judging.findings);
            result.steps.push(judging.step);
            losses.extend(judging.loss);
        }
    }
    results
}

/// The domain that fails: its report label and label value, its nodes, the pods bound to them.
struct Unit<'u> {
    label: &'u str,
    value: &'u str,
    nodes: &'u [String],
    pods: &'u [Pod],
}

/// What one failed domain does to one judged workload: filled by [`fail`].
struct Judging<'q> {
    judged: Judged<'q>,
    /// Its pods (or its group's) running before the loss.
    owned: i64,
    step: Step,
    findings: Vec<Finding>,
    pass: bool,
    loss: Option<DomainLoss>,
}

/// One domain fails (its `nodes`, or at level pod the one pod in `pods`): the pods on it are lost
/// and the controllers replace what they can; what it does to each judged workload's pods goes into
/// its [`Judging`]. Changes `world`; the caller rolls it back.
fn fail(world: &mut World<'_>, key: &str, unit: Unit<'_>, judging: &mut [Judging<'_>]) {
    let Unit { label, value, nodes, pods } = unit;
    for node in nodes {
        world.taint(node, &Taint::unreachable());
    }
    // The judged workload (by index into `judging`) whose verified workload is `owner`.
    let judged_as = |owner: usize| judging.iter().position(|j| j.judged.w == owner);
    let judged_as: Vec<Option<usize>> = (0..world.workloads.len()).map(judged_as).collect();
    // When each lost pod is deleted (taint eviction); None: it stays bound for the outage.
    let mut timed: Vec<(Option<i64>, usize, Pod)> = Vec::new();
    for pod in pods {
        let after = eviction_after(world, pod, nodes);
        if after.is_some() {
            let node = world.cluster().node_of(&pod.namespace, &pod.name).map(str::to_string);
            if let Some(node) = node {
                for j in judging.iter_mut().filter(|j| world.workloads[j.judged.w].owns(pod)) {
                    j.step.gone.insert(pod.name.clone(), node.clone());
                }
            }
            world.remove(&pod.namespace, &pod.name);
        }
        if let Some(owner) = world.owner_of(pod) {
            timed.push((after, owner, pod.clone()));
        }
    }
    // Every pod of the workload in the failed domain is lost, deleted or not; the rest run.
    for j in judging.iter_mut() {
        let quorum = j.judged.quorum;
        let judged = |p: &&Pod| quorum.members.iter().any(|&m| world.workloads[m].owns(p));
        let running = j.owned - pods.iter().filter(judged).count() as i64;
        j.loss = Some(DomainLoss {
            domain: label.to_string(),
            value: value.to_string(),
            running,
            lost: j.owned - running,
            replacements: BTreeMap::new(),
            pending: BTreeMap::new(),
            replaced_after_seconds: None,
            not_replaced: BTreeMap::new(),
        });
    }
    // Controllers recreate deleted pods in the order they are deleted. A StatefulSet does not:
    // its pods on an unreachable node stay Terminating until someone force-deletes them (at
    // most one pod per identity), so no replacement is created during the outage. A pod that
    // tolerates `unreachable` forever is never deleted, so never replaced.
    timed.sort_by(|a, b| (a.0.is_none(), a.0, a.1, &a.2.name).cmp(&(b.0.is_none(), b.0, b.1, &b.2.name)));
    for (after, owner, pod) in timed {
        let mine = judged_as[owner];
        let Some(after) = after else {
            if let Some(j) = mine.map(|j| &mut judging[j]) {
                let why = "tolerates node.kubernetes.io/unreachable:NoExecute without tolerationSeconds: it stays bound to the unreachable node and is never replaced";
                let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                j.findings.push(Finding::new(
                    FindingKind::NeverReplaced,
                    subject,
                    format!("{label} lost: {} {why}", pod.name),
                ));
                j.loss.as_mut().expect("made above").not_replaced.insert(pod.name.clone(), why.to_string());
            }
            continue;
        };
        if !world.workloads[owner].kind.deployment_like() && !nodes.is_empty() {
            if let Some(j) = mine.map(|j| &mut judging[j]) {
                let why = "stays Terminating on the unreachable node; the StatefulSet creates no replacement until it is force-deleted";
                let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                j.findings.push(Finding::new(
                    FindingKind::StaysTerminating,
                    subject,
                    format!("{label} lost: {} {why}", pod.name),
                ));
                j.loss.as_mut().expect("made above").not_replaced.insert(pod.name.clone(), why.to_string());
            }
            continue;
        }
        if let Some(j) = mine.map(|j| &mut judging[j]) {
            let loss = j.loss.as_mut().expect("made above");
            loss.replaced_after_seconds = Some(loss.replaced_after_seconds.unwrap_or(0).max(after));
        }
        let replacement = world.replacement(owner, &pod);
        let name = replacement.name.clone();
        let probe = replacement.clone();
        let placed = world.schedule(replacement);
        let Some(j) = mine else { continue };
        match placed {
            Ok(node) => {
                let j = &mut judging[j];
                j.step.placed.insert(name.clone(), node.clone());
                j.loss.as_mut().expect("made above").replacements.insert(name, node);
            }
            Err(message) => {
                let bound = world.volume_wait(&probe, &message);
                let room = bound.is_none()
                    && judging[j].judged.level >= Level::Node
                    && world.rejects_only_for(&probe, REASON_SPREAD, nodes);
                let j = &mut judging[j];
                let subject = FindingSubject::pod(&probe.namespace, &name);
                if let Some(bound) = bound {
                    // Issue 39: the replacement can run only where its volume is bound.
                    if j.judged.level == Level::Zone {
                        let text = format!(
                            "{label} lost: replacement {name} waits for {bound}, where its volume is bound: {message}"
                        );
                        j.findings.push(Finding::new(FindingKind::WaitsForVolumeZone, subject, text));
                    } else {
                        j.pass = false;
                        let text = format!(
                            "{label} lost: replacement {name} can run only in {bound}, where its volume is bound, and stays Pending: {message}"
                        );
                        j.findings.push(Finding::new(FindingKind::VolumeBound, subject, text));
                    }
                } else if room {
                    j.pass = false;
                    let text = format!(
                        "{label} lost: replacement {name} stays Pending although surviving nodes have room: {message}{}",
                        hint(&probe, key)
                    );
                    j.findings.push(Finding::new(FindingKind::ReplacementPending, subject, text));
                } else {
                    let text = format!("{label} lost: replacement {name} stays Pending (no room left): {message}");
                    j.findings.push(Finding::new(FindingKind::NoRoomLeft, subject, text));
                }
                j.loss.as_mut().expect("made above").pending.insert(name, message);
            }
        }
    }
    for j in judging.iter_mut() {
        let loss = j.loss.as_ref().expect("made above");
        j.step.pending = loss.pending.clone();
        j.step.replaced_after_seconds = loss.replaced_after_seconds;
        let quorum = j.judged.quorum;
        if loss.running < quorum.required {
            j.pass = false;
            let text = if quorum.is_plain() {
                format!("{label} lost: no replica keeps running ({} lost)", loss.lost)
            } else {
                let whose = quorum.group.as_ref().map_or(String::new(), |g| format!(" of group {g}"));
                format!("{label} lost: {}{whose} ({} lost)", quorum.figures(loss.running), loss.lost)
            };
            j.findings.push(Finding::new(FindingKind::NoReplicaLeft, FindingSubject::Domain(label.to_string()), text));
        }
    }
}

/// Scenario "tie-break": the domain-loss scenario on the adversarial placement. The real scheduler
/// picks at random among the nodes with the best total score (`selectHost`); kix's lowest-name
/// choice is one of those draws. A domain whose loss leaves no replica running under the
/// adversarial draw, while every loss leaves one running under kix's draw, means the verdict
/// would depend on luck: the workload fails.
/// `adversarial_losses` is the domain-loss scenario on the adversarial placement ([`domain_losses`],
/// run once for every workload).
#[allow(clippy::too_many_arguments)]
pub(super) fn tie_break(
    world: &World<'_>,
    adversarial: &World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    request: &ScenarioRequest,
    losses: &[DomainLoss],
    adversarial_losses: Option<Losses>,
) -> ScenarioResult {
    let mut findings = Vec::new();
    let mut pass = true;
    let placed = |world: &World<'_>| -> Vec<String> {
        let mut nodes: Vec<String> = world.owned_unsorted(w).map(|(_, n)| n.to_string()).collect();
        nodes.sort();
        nodes
    };
    let (ours, theirs) = (placed(world), placed(adversarial));
    let mut steps =
        vec![Step::between("ties broken against the level", &world.placement(w), &adversarial.placement(w))];
    // Run (for every workload at once) exactly where every loss on kix's placement keeps it running.
    if let Some((result, adversarial_losses)) =
        adversarial_losses.filter(|_| losses.iter().all(|l| l.running >= quorum.required))
    {
        let key = if level == Level::Zone { &request.zone_key } else { &request.node_key };
        steps.extend(result.steps.into_iter().map(|step| Step { adversarial: true, ..step }));
        for loss in adversarial_losses.iter().filter(|l| l.running < quorum.required) {
            let value = loss.value.as_str();
            let inside: Vec<&str> = theirs
                .iter()
                .filter(|n| {
                    adversarial.cluster().node(n).and_then(|n| n.labels.get(key)).map(String::as_str) == Some(value)
                })
                .map(String::as_str)
                .collect();
            pass = false;
            let text = format!(
                "{} lost: no replica keeps running if the scheduler breaks equal best scores against the level and places the replicas on {} ({} of them in {}); kix's lowest-name choice placed them on {}: the result depends on the scheduler's random choice among equal scores (set a DoNotSchedule spread constraint on {key})",
                loss.domain,
                theirs.join(", "),
                inside.len(),
                loss.domain,
                ours.join(", "),
            );
            let subject = FindingSubject::Domain(loss.domain.clone());
            findings.push(Finding::new(FindingKind::RestsOnTieBreak, subject, text));
        }
    }
    if pass {
        let text = format!(
            "with ties among equal best scores broken against the level, the replicas land on {}: every single {} loss still leaves {}",
            theirs.join(", "),
            if level == Level::Zone { "zone" } else { "node" },
            if quorum.is_plain() { "one running".to_string() } else { format!("{} running", quorum.required) }
        );
        findings.push(Finding::new(FindingKind::SurvivesTieBreak, FindingSubject::Workload, text));
    }
    ScenarioResult { scenario: Scenario::TieBreak, pass, findings, steps }
}

fn hint(pod: &Pod, key: &str) -> String {
    let ignores = pod
        .spec
        .spread
        .iter()
        .any(|c| c.topology_key == key && c.when == super::objects::When::DoNotSchedule && !c.honor_taints);
    if ignores {
        format!(
            " (the DoNotSchedule constraint on {key} has nodeTaintsPolicy Ignore, so the failed domain still counts as an empty domain and holds the global minimum at 0; set nodeTaintsPolicy: Honor)"
        )
    } else {
        String::new()
    }
}
