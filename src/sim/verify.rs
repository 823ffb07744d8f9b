//! `kix verify`'s engine: availability scenarios for the workloads of one instance.
//!
//! Every scenario starts from a fresh copy of the state after all workloads of
//! the instance were placed in order, and asks what the level promises:
//! 1. Rollout: every replica places; none Pending.
//! 2. Domain loss: for each domain of the level (each zone, each node, each
//!    pod) that holds a replica, the domain fails: its nodes get the
//!    `node.kubernetes.io/unreachable` NoSchedule and NoExecute taints and
//!    their pods are deleted (one pod at level pod). At least one replica must
//!    keep running; the controllers recreate the deleted pods, and at level
//!    node or zone a replacement left Pending while a surviving node has room
//!    fails the level (the Pending reason is shown). StatefulSet pods on an
//!    unreachable node stay Terminating and get no replacement (the
//!    controller keeps at most one pod per identity); kix says so.
//!    Tie-break (level node and zone): the workloads are placed again with
//!    ties among equal best scores broken against the level (see the
//!    Tie-break section of [`super`]), and the domain losses are run on that
//!    placement too: a loss that leaves no replica running only there fails,
//!    since the outcome would depend on the scheduler's random choice.
//! 3. Rolling update (Deployments): the deployment controller's surge and
//!    unavailability arithmetic replaces every pod with a new
//!    pod-template-hash; it must finish, and at level pod or above never
//!    leave fewer than one available replica.
//! 4. Drain: each node holding a replica is cordoned and drained through the
//!    eviction API, honouring every PodDisruptionBudget as the disruption
//!    controller computes it; evicted pods are recreated and rescheduled
//!    (ready once bound). DaemonSet and mirror pods stay, as with
//!    `kubectl drain --ignore-daemonsets`; other pods of the snapshot are
//!    evicted and not recreated. The drain must finish, and at level pod or
//!    above every evicted replica's replacement must schedule (at level none a
//!    replacement left Pending is reported, not failed). Cordoning adds the
//!    `node.kubernetes.io/unschedulable:NoSchedule` taint, as the node
//!    lifecycle controller does, so constraints with `nodeTaintsPolicy: Honor`
//!    no longer count the drained node as a domain.
//!
//! Pods of the verified workloads already in the snapshot are replaced by the
//! simulated rollout, so a live snapshot does not count them twice.
//!
//! Also, each spread constraint's selector is counted: a selector that counts
//! a set of one pod balances nothing.

use super::cluster::{Cluster, Outcome};
use super::objects::{Pod, State};
use super::plugins::{REASON_SPREAD, Spread};
use super::voluntary::{drain, rolling_update};
use super::workload::Workload;
use crate::kube::int_or_percent::IntOrPercent;
use crate::kube::kind::WorkloadKind;
use crate::kube::selector::Selector;
use crate::kube::taints::Taint;
use crate::kube::workload::PdbView;
use crate::level::Level;
use crate::yaml::Value;
use serde::Serialize;
use std::collections::BTreeMap;

/// One workload to verify and the level it was compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadLevel {
    /// `Deployment` or `StatefulSet`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    /// The minimum of the autoscaler that owns the workload's `spec.replicas`: verified at this
    /// many replicas instead of `spec.replicas` (an HPA or ScaledObject may scale down to it).
    pub min_replicas: Option<u32>,
}

/// What to verify: per-workload levels and the cluster's failure-domain keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyRequest {
    pub workloads: Vec<WorkloadLevel>,
    /// The node failure-domain key (usually `kubernetes.io/hostname`).
    pub node_key: String,
    /// The zone failure-domain key (usually `topology.kubernetes.io/zone`).
    pub zone_key: String,
}

/// The scenarios `kix verify` runs, in the order it runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    Rollout,
    /// Spread constraints whose selector counts one pod.
    Selectors,
    DomainLoss,
    TieBreak,
    RollingUpdate,
    Drain,
}

impl Scenario {
    /// The name reports use (`domain-loss`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::Rollout => "rollout",
            Scenario::Selectors => "selectors",
            Scenario::DomainLoss => "domain-loss",
            Scenario::TieBreak => "tie-break",
            Scenario::RollingUpdate => "rolling-update",
            Scenario::Drain => "drain",
        }
    }
}

impl std::fmt::Display for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one scenario for one workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioResult {
    pub scenario: Scenario,
    pub pass: bool,
    pub findings: Vec<String>,
}

/// One failed domain in scenario 2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DomainLoss {
    /// The zone, node or pod that failed, as reports show it (`zone eu-1a`).
    pub domain: String,
    /// Its label value (the zone or node name; the pod's name at level pod).
    #[serde(skip)]
    pub value: String,
    /// Replicas still running right after the failure.
    pub running: i64,
    /// Replicas the failure took.
    pub lost: i64,
    /// Replacement pod to the node it was scheduled on.
    pub replacements: BTreeMap<String, String>,
    /// Replacement pod to the scheduler's message, for those left Pending.
    pub pending: BTreeMap<String, String>,
}

/// The verdict on one workload (instance-agnostic: the caller adds cluster and instance).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadVerdict {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub level: Level,
    pub replicas: i64,
    /// Fewest replicas left running under the loss of one domain of the level (None below pod).
    pub worst_case_running: Option<i64>,
    /// Replacements scheduled, summed over the domain losses, and per loss where they went.
    pub replacements_scheduled: i64,
    pub domain_losses: Vec<DomainLoss>,
    /// For each spread constraint (by topology key and whenUnsatisfiable), the pods its selector counts.
    pub selector_counts: BTreeMap<String, usize>,
    pub scenarios: Vec<ScenarioResult>,
    pub meets_level: bool,
}

/// A PodDisruptionBudget.
#[derive(Clone, Debug)]
pub(super) struct Budget {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) selector: Selector,
    min_available: Option<IntOrPercent>,
    max_unavailable: Option<IntOrPercent>,
}

/// The budgets among the objects, read by [`PdbView`] (`policy` group only); one with no selector
/// or without a name covers nothing here.
fn read_budgets(objects: &[Value]) -> Vec<Budget> {
    objects
        .iter()
        .filter(|o| PdbView::is_pdb(o))
        .filter_map(|o| {
            let view = PdbView::read(o).ok()?;
            Some(Budget {
                namespace: view.namespace.unwrap_or_else(|| "default".to_string()),
                name: Some(view.name).filter(|n| !n.is_empty())?,
                selector: view.selector?,
                min_available: view.min_available,
                max_unavailable: view.max_unavailable,
            })
        })
        .collect()
}

/// The world a scenario mutates: the cluster, the workloads and who owns which bound pod.
#[derive(Clone)]
pub(super) struct World<'a> {
    pub(super) cluster: Cluster,
    pub(super) workloads: &'a [Workload],
    pub(super) budgets: &'a [Budget],
    /// Replacement counter per workload, for fresh Deployment pod names.
    next_index: Vec<usize>,
}

impl<'a> World<'a> {
    pub(super) fn owned(&self, w: usize) -> Vec<(Pod, String)> {
        let workload = &self.workloads[w];
        let mut pods: Vec<(Pod, String)> =
            self.cluster.pods().filter(|(p, _)| workload.owns(p)).map(|(p, n)| (p.clone(), n.to_string())).collect();
        pods.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        pods
    }

    pub(super) fn owner_of(&self, pod: &Pod) -> Option<usize> {
        self.workloads.iter().position(|w| w.owns(pod))
    }

    /// The controller's replacement for a deleted pod (same revision; StatefulSets keep the name).
    pub(super) fn replacement(&mut self, w: usize, deleted: &Pod) -> Pod {
        let workload = &self.workloads[w];
        let spec = std::sync::Arc::clone(&deleted.spec);
        let mut pod = match workload.kind {
            WorkloadKind::StatefulSet => deleted.clone(),
            WorkloadKind::Deployment => {
                let index = self.next_index[w];
                self.next_index[w] += 1;
                let mut pod = workload.pod(&spec, 0, index);
                pod.labels = deleted.labels.clone();
                pod
            }
        };
        pod.node_name = None;
        pod
    }

    /// Schedules a pod; binds it and returns the node, or the Pending message.
    pub(super) fn schedule(&mut self, pod: Pod) -> Result<String, String> {
        match self.cluster.select(&pod) {
            Some(node) => {
                let _ = self.cluster.bind(pod, &node);
                Ok(node)
            }
            None => Err(self.cluster.cycle(&pod).failure_message()),
        }
    }

    /// Schedules a pod of workload `w` on the reference path (every node, so the set of nodes
    /// with the best total score is exact), breaking ties **against** the level: among the best
    /// nodes, the one whose domain under `key` already holds the most pods of the workload, then
    /// the lowest name. Without a key this is the lowest-name choice. Binds the pod.
    pub(super) fn schedule_against(&mut self, pod: Pod, w: usize, key: Option<&str>) -> Result<String, String> {
        let cycle = self.cluster.cycle(&pod);
        let total = |o: &Outcome| match o {
            Outcome::Feasible(s) => Some(s.total),
            Outcome::Rejected(_) => None,
        };
        let Some(best) = cycle.nodes.values().filter_map(total).max() else { return Err(cycle.failure_message()) };
        let domain = |node: &str| key.and_then(|k| self.cluster.node(node).and_then(|n| n.labels.get(k)));
        let mut held: BTreeMap<&String, usize> = BTreeMap::new();
        for (p, node) in self.cluster.pods() {
            if self.workloads[w].owns(p)
                && let Some(value) = domain(node)
            {
                *held.entry(value).or_insert(0) += 1;
            }
        }
        let mut chosen: Option<(&String, usize)> = None;
        // Nodes in name order: only a strictly larger count displaces the lowest name.
        for (node, outcome) in &cycle.nodes {
            if total(outcome) != Some(best) {
                continue;
            }
            let count = domain(node).and_then(|v| held.get(v)).copied().unwrap_or(0);
            if chosen.is_none_or(|(_, c)| count > c) {
                chosen = Some((node, count));
            }
        }
        let node = chosen.map(|(n, _)| n.clone()).ok_or_else(|| cycle.failure_message())?;
        let _ = self.cluster.bind(pod, &node);
        Ok(node)
    }

    /// disruptionsAllowed of a budget, as the disruption controller computes it.
    pub(super) fn disruptions_allowed(&self, budget: &Budget) -> (i64, String) {
        let covered = |p: &Pod| p.namespace == budget.namespace && budget.selector.matches(&p.labels);
        let healthy = self.cluster.pods().filter(|(p, _)| !p.terminating && covered(p)).count() as i64;
        let expected: i64 = self
            .workloads
            .iter()
            .filter(|w| w.namespace == budget.namespace && budget.selector.matches(&w.template_labels))
            .map(|w| w.replicas)
            .sum();
        let (desired, rule) = match (&budget.max_unavailable, &budget.min_available) {
            (Some(max), _) => (expected - max.scaled_value(expected, true), format!("maxUnavailable {max}")),
            (None, Some(min)) => (min.scaled_value(expected, true), format!("minAvailable {min}")),
            (None, None) => (expected, "no policy".to_string()),
        };
        let allowed = (healthy - desired).max(0);
        (allowed, format!("{rule}: {expected} expected, {healthy} healthy, {desired} desired healthy"))
    }
}

/// Runs every scenario for the workloads of one instance.
///
/// `objects` are the compiled objects of the instance (Deployments, StatefulSets, PDBs, ...)
/// in their namespaces; workloads are placed in object order. Workloads the request does not
/// list are placed but get no verdict.
pub fn verify_workloads(state: &State, objects: &[Value], request: &VerifyRequest) -> Vec<WorkloadVerdict> {
    let mut unreadable: Vec<(String, String, String)> = Vec::new();
    let mut workloads: Vec<Workload> = Vec::new();
    for object in objects {
        match Workload::from_object(object, "default") {
            Ok(Some(mut workload)) => {
                let wanted = request.workloads.iter().find(|x| {
                    x.kind == workload.kind.as_str() && x.namespace == workload.namespace && x.name == workload.name
                });
                if let Some(min) = wanted.and_then(|x| x.min_replicas) {
                    workload.replicas = i64::from(min);
                }
                if workload.replicas > super::workload::MAX_SIMULATED_REPLICAS {
                    let why = format!(
                        "its autoscaler's minimum {} is above the {} replicas kix simulates",
                        workload.replicas,
                        super::workload::MAX_SIMULATED_REPLICAS
                    );
                    unreadable.push((workload.namespace.clone(), workload.name.clone(), why));
                } else {
                    workloads.push(workload);
                }
            }
            Ok(None) => {}
            Err(why) => {
                let field = |path: &[&str]| {
                    path.iter()
                        .try_fold(object, |v, k| v.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                unreadable.push((field(&["metadata", "namespace"]), field(&["metadata", "name"]), why.to_string()));
            }
        }
    }
    let budgets = read_budgets(objects);
    // A snapshot of a live cluster may already hold these workloads' pods: the rollout replaces them.
    let mut state = state.clone();
    state.pods.retain(|p| !workloads.iter().any(|w| w.owns(p)));
    let mut world = World {
        cluster: Cluster::new(&state),
        workloads: &workloads,
        budgets: &budgets,
        next_index: workloads.iter().map(|w| w.replicas.max(0) as usize).collect(),
    };
    // The adversarial placement (see `tie_break`): the same rollout from the same start, each
    // workload's ties broken against its own level's key (node or zone).
    let level_of = |w: &Workload| {
        request
            .workloads
            .iter()
            .find(|x| w.kind.as_str() == x.kind && x.namespace == w.namespace && x.name == w.name)
            .map(|x| x.level)
    };
    let adversarial = request.workloads.iter().any(|x| x.level >= Level::Node).then(|| {
        let mut adversarial = world.clone();
        for (w, workload) in workloads.iter().enumerate() {
            let key = match level_of(workload) {
                Some(Level::Zone) => Some(request.zone_key.as_str()),
                Some(Level::Node) => Some(request.node_key.as_str()),
                _ => None,
            };
            let spec = workload.pod_spec(0);
            for index in 0..workload.replicas.max(0) as usize {
                let _ = adversarial.schedule_against(workload.pod(&spec, 0, index), w, key);
            }
        }
        adversarial
    });
    let mut rollout_pending: Vec<BTreeMap<String, String>> = vec![BTreeMap::new(); workloads.len()];
    for (w, workload) in workloads.iter().enumerate() {
        let spec = workload.pod_spec(0);
        for index in 0..workload.replicas.max(0) as usize {
            let pod = workload.pod(&spec, 0, index);
            let name = pod.name.clone();
            if let Err(message) = world.schedule(pod) {
                rollout_pending[w].insert(name, message);
            }
        }
    }
    let mut verdicts = Vec::new();
    for wanted in &request.workloads {
        let Some(w) = workloads
            .iter()
            .position(|x| x.kind.as_str() == wanted.kind && x.namespace == wanted.namespace && x.name == wanted.name)
        else {
            // A workload the model cannot take (say, too many replicas) fails visibly, never silently.
            if let Some((_, _, why)) =
                unreadable.iter().find(|(ns, name, _)| *ns == wanted.namespace && *name == wanted.name)
            {
                verdicts.push(WorkloadVerdict {
                    kind: wanted.kind.clone(),
                    namespace: wanted.namespace.clone(),
                    name: wanted.name.clone(),
                    level: wanted.level,
                    replicas: 0,
                    worst_case_running: None,
                    replacements_scheduled: 0,
                    domain_losses: Vec::new(),
                    selector_counts: BTreeMap::new(),
                    scenarios: vec![ScenarioResult {
                        scenario: Scenario::Rollout,
                        pass: false,
                        findings: vec![format!("not simulated: {why}")],
                    }],
                    meets_level: false,
                });
            }
            continue;
        };
        verdicts.push(verdict(&world, adversarial.as_ref(), w, wanted.level, request, &rollout_pending[w]));
    }
    verdicts
}

fn verdict(
    world: &World<'_>,
    adversarial: Option<&World<'_>>,
    w: usize,
    level: Level,
    request: &VerifyRequest,
    pending: &BTreeMap<String, String>,
) -> WorkloadVerdict {
    let workload = &world.workloads[w];
    let mut scenarios = Vec::new();
    let rollout_findings: Vec<String> = pending.iter().map(|(p, m)| format!("{p} Pending: {m}")).collect();
    scenarios.push(ScenarioResult {
        scenario: Scenario::Rollout,
        pass: pending.is_empty(),
        findings: rollout_findings,
    });
    let selector_counts = selector_counts(world, w);
    let mut verdict = WorkloadVerdict {
        kind: workload.kind.to_string(),
        namespace: workload.namespace.clone(),
        name: workload.name.clone(),
        level,
        replicas: workload.replicas,
        worst_case_running: None,
        replacements_scheduled: 0,
        domain_losses: Vec::new(),
        selector_counts: selector_counts.clone(),
        scenarios: Vec::new(),
        meets_level: false,
    };
    if level >= Level::Pod {
        let ones: Vec<String> = selector_counts
            .iter()
            .filter(|(_, n)| **n <= 1)
            .map(|(c, n)| format!("the spread constraint {c} counts a set of {n} pod(s): it balances nothing"))
            .collect();
        scenarios.push(ScenarioResult { scenario: Scenario::Selectors, pass: ones.is_empty(), findings: ones });
        let (result, losses) = domain_loss(world, w, level, request);
        verdict.worst_case_running = losses.iter().map(|l| l.running).min();
        verdict.replacements_scheduled = losses.iter().map(|l| l.replacements.len() as i64).sum();
        scenarios.push(result);
        if let Some(adversarial) = adversarial.filter(|_| level >= Level::Node) {
            scenarios.push(tie_break(world, adversarial, w, level, request, &losses));
        }
        verdict.domain_losses = losses;
    }
    // Rolling updates and drains run at every level: below pod downtime is allowed, but an update
    // that deadlocks or a drain that never finishes blocks the cluster's operators, whatever the level.
    if workload.kind == WorkloadKind::Deployment {
        scenarios.push(rolling_update(world, w, level));
    }
    scenarios.push(drain(world, w, level));
    verdict.meets_level = scenarios.iter().all(|s| s.pass);
    verdict.scenarios = scenarios;
    verdict
}

/// For each spread constraint of the template, the bound pods its (merged) selector counts.
fn selector_counts(world: &World<'_>, w: usize) -> BTreeMap<String, usize> {
    let workload = &world.workloads[w];
    let mut out = BTreeMap::new();
    let Some((sample, _)) = world.owned(w).into_iter().next() else { return out };
    let spread = Spread::of(&sample);
    if sample.spec.spread.is_empty() {
        return out;
    }
    for (con, when) in
        spread.hard.iter().map(|c| (c, "DoNotSchedule")).chain(spread.soft.iter().map(|c| (c, "ScheduleAnyway")))
    {
        let n = world.cluster.pods().filter(|(p, _)| con.matches(&workload.namespace, p)).count();
        out.insert(format!("{} ({when})", con.key), n);
    }
    out
}

fn domain_loss(
    world: &World<'_>,
    w: usize,
    level: Level,
    request: &VerifyRequest,
) -> (ScenarioResult, Vec<DomainLoss>) {
    let owned = world.owned(w);
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
            for (_, node) in &owned {
                let Some(value) = world.cluster.node(node).and_then(|n| n.labels.get(key)) else { continue };
                let nodes: Vec<String> = world
                    .cluster
                    .nodes()
                    .iter()
                    .filter(|n| n.labels.get(key) == Some(value))
                    .map(|n| n.name.clone())
                    .collect();
                let pods = nodes.iter().flat_map(|n| world.cluster.pods_on(n)).cloned().collect();
                let label = if level == Level::Zone { format!("zone {value}") } else { format!("node {value}") };
                units.insert((label, value.clone()), (nodes, pods));
            }
        }
    }
    let mut findings = Vec::new();
    let mut losses = Vec::new();
    let mut pass = true;
    if owned.is_empty() {
        findings.push("no replica is running, so every domain loss takes them all".into());
        pass = false;
    }
    for ((label, value), (nodes, pods)) in units {
        let mut world = world.clone();
        for node in &nodes {
            world.cluster.taint(node, &Taint::unreachable());
        }
        for pod in &pods {
            world.cluster.remove(&pod.namespace, &pod.name);
        }
        let running = world.owned(w).len() as i64;
        let mut loss = DomainLoss {
            domain: label.clone(),
            value,
            running,
            lost: owned.len() as i64 - running,
            replacements: BTreeMap::new(),
            pending: BTreeMap::new(),
        };
        // Controllers recreate every deleted pod, workload by workload. A StatefulSet does not:
        // its pods on an unreachable node stay Terminating until someone force-deletes them
        // (at most one pod per identity), so no replacement is created during the outage.
        let mut owned_pods: Vec<(usize, &Pod)> =
            pods.iter().filter_map(|p| world.owner_of(p).map(|o| (o, p))).collect();
        owned_pods.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
        for (owner, pod) in owned_pods {
            if world.workloads[owner].kind == WorkloadKind::StatefulSet && !nodes.is_empty() {
                if owner == w {
                    findings.push(format!(
                        "{label} lost: {} stays Terminating on the unreachable node; the StatefulSet creates no replacement until it is force-deleted",
                        pod.name
                    ));
                }
                continue;
            }
            let replacement = world.replacement(owner, pod);
            let name = replacement.name.clone();
            let probe = replacement.clone();
            match world.schedule(replacement) {
                Ok(node) if owner == w => {
                    loss.replacements.insert(name, node);
                }
                Err(message) if owner == w => {
                    let room = level >= Level::Node && has_room(&world.cluster, &probe, &nodes);
                    if room {
                        pass = false;
                        findings.push(format!(
                            "{label} lost: replacement {name} stays Pending although surviving nodes have room: {message}{}",
                            hint(&probe, key)
                        ));
                    } else {
                        findings
                            .push(format!("{label} lost: replacement {name} stays Pending (no room left): {message}"));
                    }
                    loss.pending.insert(name, message);
                }
                _ => {}
            }
        }
        if running == 0 {
            pass = false;
            findings.push(format!("{label} lost: no replica keeps running ({} lost)", loss.lost));
        }
        losses.push(loss);
    }
    (ScenarioResult { scenario: Scenario::DomainLoss, pass, findings }, losses)
}

/// Scenario "tie-break": the domain-loss scenario on the adversarial placement. The real scheduler
/// picks at random among the nodes with the best total score (`selectHost`); kix's lowest-name
/// choice is one of those draws. A domain whose loss leaves no replica running under the
/// adversarial draw, while every loss leaves one running under kix's draw, means the verdict
/// would depend on luck: the workload fails.
fn tie_break(
    world: &World<'_>,
    adversarial: &World<'_>,
    w: usize,
    level: Level,
    request: &VerifyRequest,
    losses: &[DomainLoss],
) -> ScenarioResult {
    let mut findings = Vec::new();
    let mut pass = true;
    let placed = |world: &World<'_>| -> Vec<String> {
        let mut nodes: Vec<String> = world.owned(w).into_iter().map(|(_, n)| n).collect();
        nodes.sort();
        nodes
    };
    let (ours, theirs) = (placed(world), placed(adversarial));
    if losses.iter().all(|l| l.running > 0) {
        let key = if level == Level::Zone { &request.zone_key } else { &request.node_key };
        let (_, adversarial_losses) = domain_loss(adversarial, w, level, request);
        for loss in adversarial_losses.iter().filter(|l| l.running == 0) {
            let value = loss.value.as_str();
            let inside: Vec<&str> = theirs
                .iter()
                .filter(|n| {
                    adversarial.cluster.node(n).and_then(|n| n.labels.get(key)).map(String::as_str) == Some(value)
                })
                .map(String::as_str)
                .collect();
            pass = false;
            findings.push(format!(
                "{} lost: no replica keeps running if the scheduler breaks equal best scores against the level and places the replicas on {} ({} of them in {}); kix's lowest-name choice placed them on {}: the result depends on the scheduler's random choice among equal scores (set a DoNotSchedule spread constraint on {key})",
                loss.domain,
                theirs.join(", "),
                inside.len(),
                loss.domain,
                ours.join(", "),
            ));
        }
    }
    if pass {
        findings.push(format!(
            "with ties among equal best scores broken against the level, the replicas land on {}: every single {} loss still leaves one running",
            theirs.join(", "),
            if level == Level::Zone { "zone" } else { "node" }
        ));
    }
    ScenarioResult { scenario: Scenario::TieBreak, pass, findings }
}

/// Whether a surviving node (outside `failed`) rejects the pod only for its spread constraints.
fn has_room(cluster: &Cluster, pod: &Pod, failed: &[String]) -> bool {
    cluster.cycle(pod).nodes.iter().any(|(node, outcome)| {
        !failed.contains(node) && matches!(outcome, Outcome::Rejected(r) if r.reasons == [REASON_SPREAD])
    })
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
