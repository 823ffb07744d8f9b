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

pub(super) fn domain_loss(
    world: &mut World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    request: &ScenarioRequest,
) -> (ScenarioResult, Vec<DomainLoss>) {
    // The pods judged: the workload's, or its group's (see [`Quorum`]).
    let mut owned: Vec<(Pod, String)> = quorum.members.iter().flat_map(|&m| world.owned(m)).collect();
    owned.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let key = if level == Level::Zone { &request.zone_key } else { &request.node_key };
    // The failed units: (label, nodes to fail, pods to delete).
    // By report label, then the label value it names.
    let mut units: BTreeMap<(String, String), (Vec<String>, Vec<Pod>)> = BTreeMap::new();
    match level {
        Level::Pod => {
            for (pod, _) in &owned {
                units.insert((format!("pod {}", pod.name), pod.name.clone()), (Vec::new(), vec![pod.clone()]));
            }
        }
        _ => {
            let cluster = world.cluster();
            // The nodes of each domain, in name order, read once.
            let mut domains: BTreeMap<&String, Vec<String>> = BTreeMap::new();
            for n in cluster.nodes() {
                if let Some(value) = n.labels.get(key) {
                    domains.entry(value).or_default().push(n.name.clone());
                }
            }
            for (_, node) in &owned {
                let Some(value) = cluster.node(node).and_then(|n| n.labels.get(key)) else { continue };
                let label = if level == Level::Zone { format!("zone {value}") } else { format!("node {value}") };
                let unit = (label, value.clone());
                if units.contains_key(&unit) {
                    continue;
                }
                let nodes = domains.get(value).cloned().unwrap_or_default();
                let pods = nodes.iter().flat_map(|n| cluster.pods_on(n)).cloned().collect();
                units.insert(unit, (nodes, pods));
            }
        }
    }
    let mut findings = Vec::new();
    let mut losses = Vec::new();
    let mut steps = Vec::new();
    let mut pass = true;
    if owned.is_empty() {
        let message = "no replica is running, so every domain loss takes them all";
        findings.push(Finding::new(FindingKind::NothingRunning, FindingSubject::Workload, message));
        pass = false;
    }
    for ((label, value), (nodes, pods)) in units {
        let owned = owned.len() as i64;
        let mut step = Step::new(label.clone(), nodes.clone());
        let loss = world.trial(|world| {
            let unit = Unit { label: &label, value, nodes: &nodes, pods: &pods };
            fail(world, w, quorum, level, key, unit, owned, &mut pass, &mut findings, &mut step)
        });
        losses.push(loss);
        steps.push(step);
    }
    (ScenarioResult { scenario: Scenario::DomainLoss, pass, findings, steps }, losses)
}

/// The domain that fails: its report label and label value, its nodes, the pods bound to them.
struct Unit<'u> {
    label: &'u str,
    value: String,
    nodes: &'u [String],
    pods: &'u [Pod],
}

/// One domain fails (its `nodes`, or at level pod the one pod in `pods`): the pods on it are lost
/// and the controllers replace what they can; what it does to the workload's pods goes into `step`.
/// Changes `world`; the caller rolls it back.
#[allow(clippy::too_many_arguments)]
fn fail(
    world: &mut World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    key: &str,
    unit: Unit<'_>,
    owned: i64,
    pass: &mut bool,
    findings: &mut Vec<Finding>,
    step: &mut Step,
) -> DomainLoss {
    let Unit { label, value, nodes, pods } = unit;
    for node in nodes {
        world.taint(node, &Taint::unreachable());
    }
    // When each lost pod is deleted (taint eviction); None: it stays bound for the outage.
    let mut timed: Vec<(Option<i64>, usize, Pod)> = Vec::new();
    for pod in pods {
        let after = eviction_after(world, pod, nodes);
        if after.is_some() {
            let node = world.cluster().node_of(&pod.namespace, &pod.name).map(str::to_string);
            if let Some(node) = node.filter(|_| world.workloads[w].owns(pod)) {
                step.gone.insert(pod.name.clone(), node);
            }
            world.remove(&pod.namespace, &pod.name);
        }
        if let Some(owner) = world.owner_of(pod) {
            timed.push((after, owner, pod.clone()));
        }
    }
    // Every pod of the workload in the failed domain is lost, deleted or not; the rest run.
    let judged = |p: &&Pod| quorum.members.iter().any(|&m| world.workloads[m].owns(p));
    let running = owned - pods.iter().filter(judged).count() as i64;
    {
        let mut loss = DomainLoss {
            domain: label.to_string(),
            value,
            running,
            lost: owned - running,
            replacements: BTreeMap::new(),
            pending: BTreeMap::new(),
            replaced_after_seconds: None,
            not_replaced: BTreeMap::new(),
        };
        // Controllers recreate deleted pods in the order they are deleted. A StatefulSet does not:
        // its pods on an unreachable node stay Terminating until someone force-deletes them (at
        // most one pod per identity), so no replacement is created during the outage. A pod that
        // tolerates `unreachable` forever is never deleted, so never replaced.
        timed.sort_by(|a, b| (a.0.is_none(), a.0, a.1, &a.2.name).cmp(&(b.0.is_none(), b.0, b.1, &b.2.name)));
        for (after, owner, pod) in timed {
            let Some(after) = after else {
                if owner == w {
                    let why = "tolerates node.kubernetes.io/unreachable:NoExecute without tolerationSeconds: it stays bound to the unreachable node and is never replaced";
                    let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                    findings.push(Finding::new(
                        FindingKind::NeverReplaced,
                        subject,
                        format!("{label} lost: {} {why}", pod.name),
                    ));
                    loss.not_replaced.insert(pod.name.clone(), why.to_string());
                }
                continue;
            };
            if !world.workloads[owner].kind.deployment_like() && !nodes.is_empty() {
                if owner == w {
                    let why = "stays Terminating on the unreachable node; the StatefulSet creates no replacement until it is force-deleted";
                    let subject = FindingSubject::pod(&pod.namespace, &pod.name);
                    findings.push(Finding::new(
                        FindingKind::StaysTerminating,
                        subject,
                        format!("{label} lost: {} {why}", pod.name),
                    ));
                    loss.not_replaced.insert(pod.name.clone(), why.to_string());
                }
                continue;
            }
            if owner == w {
                loss.replaced_after_seconds = Some(loss.replaced_after_seconds.unwrap_or(0).max(after));
            }
            let pod = &pod;
            let replacement = world.replacement(owner, pod);
            let name = replacement.name.clone();
            let probe = replacement.clone();
            match world.schedule(replacement) {
                Ok(node) if owner == w => {
                    step.placed.insert(name.clone(), node.clone());
                    loss.replacements.insert(name, node);
                }
                Err(message) if owner == w => {
                    let room = level >= Level::Node && world.rejects_only_for(&probe, REASON_SPREAD, nodes);
                    let subject = FindingSubject::pod(&probe.namespace, &name);
                    if room {
                        *pass = false;
                        let text = format!(
                            "{label} lost: replacement {name} stays Pending although surviving nodes have room: {message}{}",
                            hint(&probe, key)
                        );
                        findings.push(Finding::new(FindingKind::ReplacementPending, subject, text));
                    } else {
                        let text = format!("{label} lost: replacement {name} stays Pending (no room left): {message}");
                        findings.push(Finding::new(FindingKind::NoRoomLeft, subject, text));
                    }
                    loss.pending.insert(name, message);
                }
                _ => {}
            }
        }
        step.pending = loss.pending.clone();
        step.replaced_after_seconds = loss.replaced_after_seconds;
        if running < quorum.required {
            *pass = false;
            let text = if quorum.is_plain() {
                format!("{label} lost: no replica keeps running ({} lost)", loss.lost)
            } else {
                let whose = quorum.group.as_ref().map_or(String::new(), |g| format!(" of group {g}"));
                format!("{label} lost: {}{whose} ({} lost)", quorum.figures(running), loss.lost)
            };
            findings.push(Finding::new(FindingKind::NoReplicaLeft, FindingSubject::Domain(label.to_string()), text));
        }
        loss
    }
}

/// Scenario "tie-break": the domain-loss scenario on the adversarial placement. The real scheduler
/// picks at random among the nodes with the best total score (`selectHost`); kix's lowest-name
/// choice is one of those draws. A domain whose loss leaves no replica running under the
/// adversarial draw, while every loss leaves one running under kix's draw, means the verdict
/// would depend on luck: the workload fails.
pub(super) fn tie_break(
    world: &World<'_>,
    adversarial: &mut World<'_>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    request: &ScenarioRequest,
    losses: &[DomainLoss],
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
    if losses.iter().all(|l| l.running >= quorum.required) {
        let key = if level == Level::Zone { &request.zone_key } else { &request.node_key };
        let (result, adversarial_losses) = domain_loss(adversarial, w, quorum, level, request);
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
