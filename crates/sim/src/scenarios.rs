//! `kix verify`'s engine: availability scenarios for the workloads of one cluster, placed together.
//!
//! Every scenario starts from the state after all workloads of the cluster were
//! placed in order (`kix verify` asks about every instance at once, issue 38), and
//! asks what the level promises. A failed domain is one event for every workload
//! that loses pods in it ([`super::domain_loss::domain_losses`]). Each failed domain, drained
//! node and update is applied to that state as changes and undone afterwards
//! (see [`super::world`]): a scenario costs what it changes, not a copy of the
//! cluster.
//! 1. Rollout: every replica places; none Pending.
//! 2. Domain loss: for each domain of the level (each zone, each node, each
//!    pod) that holds a replica, the domain fails: its nodes get the
//!    `node.kubernetes.io/unreachable` NoSchedule and NoExecute taints; their
//!    pods stay bound for their unreachable tolerationSeconds, then are
//!    deleted (one pod at level pod, at once); pods tolerating it forever stay
//!    (see [`super::domain_loss`]). At least one replica must keep running;
//!    the controllers recreate the deleted pods, and at level node or zone a
//!    replacement left Pending while a surviving node has room fails the level
//!    (the Pending reason is shown). StatefulSet pods on an unreachable node
//!    stay Terminating and get no replacement (the controller keeps at most
//!    one pod per identity); kix says so.
//!    Tie-break (level node and zone): the workloads are placed again with
//!    ties among equal best scores broken against the level (see the
//!    Tie-break section of [`super`]), and the domain losses are run on that
//!    placement too: a loss that leaves no replica running only there fails,
//!    since the outcome would depend on the scheduler's random choice.
//!    Scale-down (level pod and up, under an autoscaler): from the autoscaler's
//!    maximum back to its minimum, victims in the ReplicaSet controller's order
//!    (StatefulSets from the highest ordinal), ties broken against the level;
//!    then the domain losses on what is left (see [`super::scale_down`]).
//! 3. Rolling update: Deployments by the deployment controller's surge and
//!    unavailability arithmetic (old pods in the ReplicaSet controller's
//!    order), StatefulSets one ordinal at a time down to the partition (see
//!    [`super::voluntary`]); it must finish, and at level pod or above never
//!    leave fewer than one available replica.
//! 4. Drain: each node holding a replica is cordoned and drained as `kubectl
//!    drain --ignore-daemonsets --delete-emptydir-data` drains it, through the
//!    eviction API, honouring every PodDisruptionBudget (the compiled ones and
//!    the snapshot's) as the disruption controller computes it (see
//!    [`super::drain`] and [`super::budget`]); evicted pods are recreated and
//!    rescheduled (ready once bound). The drain must finish, and at level pod
//!    or above every evicted replica's replacement must schedule (at level none
//!    a replacement left Pending is reported, not failed). Cordoning adds the
//!    `node.kubernetes.io/unschedulable:NoSchedule` taint, as the node
//!    lifecycle controller does, so constraints with `nodeTaintsPolicy: Honor`
//!    no longer count the drained node as a domain.
//!
//! Pods of the verified workloads already in the snapshot are replaced by the
//! simulated rollout, so a live snapshot does not count them twice.
//!
//! Also, each spread constraint's selector is counted: a selector that counts
//! a set of one pod balances nothing.

use super::budget::Budget;
use super::cluster::Cluster;
use super::domain_loss::{Judged, Losses, domain_losses, tie_break};
use super::drain::drain;
use super::objects::Controller;
use super::plugins::Spread;
use super::quorum::Quorum;
use super::scale_down::scale_down;
use super::snapshot::State;
use super::verdict::{
    Finding, FindingKind, FindingSubject, Scenario, ScenarioRequest, ScenarioResult, Survive, WorkloadLevel,
    WorkloadVerdict,
};
use super::voluntary::{rolling_update, statefulset_update};
use super::workload::Workload;
use super::world::World;
use kix_kube::level::Level;
use kix_yaml::Value;
use std::collections::BTreeMap;

/// Every budget in force: the compiled ones and the snapshot's (all namespaces, foreign budgets
/// included, as the eviction API lists them). A snapshot budget with the namespace and name of a
/// compiled one is that budget as deployed before: the compiled one replaces it.
fn budgets(state: &State, objects: &[Value]) -> Vec<Budget> {
    let mut budgets: Vec<Budget> = objects.iter().filter_map(|o| Budget::read(o).ok().flatten()).collect();
    for budget in &state.budgets {
        if !budgets.iter().any(|b| b.namespace == budget.namespace && b.name == budget.name) {
            budgets.push(budget.clone());
        }
    }
    budgets
}

/// Runs every scenario for the workloads of one instance.
///
/// `objects` are the compiled objects of the instance (Deployments, StatefulSets, PDBs, ...)
/// in their namespaces; workloads are placed in object order. Workloads the request does not
/// list are placed but get no verdict.
pub fn verify_workloads(state: &State, objects: &[Value], request: &ScenarioRequest) -> Vec<WorkloadVerdict> {
    run(state, objects, request, false)
}

/// [`verify_workloads`]; `reference` (tests) runs every scenario on a copy, as the engine did
/// before the journal (see [`super::world`]).
pub(super) fn run(
    state: &State,
    objects: &[Value],
    request: &ScenarioRequest,
    reference: bool,
) -> Vec<WorkloadVerdict> {
    let mut unreadable: Vec<(String, String, String)> = Vec::new();
    let mut workloads: Vec<Workload> = Vec::new();
    for object in objects {
        // A Rollout with spec.workloadRef runs the referenced Deployment's template; a custom resource of
        // a profile's kind runs the pods its profile describes.
        let combined = kix_kube::workload::with_referenced_template(object, objects).map(|(value, _)| value);
        let read = match request.kinds.profile_of(object) {
            Some(profile) => Workload::from_custom(object, profile, "default"),
            None => Workload::from_object(combined.as_ref().unwrap_or(object), "default"),
        };
        match read {
            Ok(Some(mut workload)) => {
                let wanted = request
                    .workloads
                    .iter()
                    .find(|x| x.kind == workload.kind && x.namespace == workload.namespace && x.name == workload.name);
                // A workload scaled to zero that verify does not ask about (the Deployment whose template a
                // Rollout runs) has no pods: it owns none of the Rollout's.
                if wanted.is_none() && workload.replicas == 0 {
                    continue;
                }
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
    let budgets = budgets(state, objects);
    let mut scales: BTreeMap<(String, Controller), i64> = BTreeMap::new();
    for pod in &state.pods {
        if let Some(c) = &pod.controller {
            *scales.entry((pod.namespace.clone(), c.clone())).or_insert(0) += 1;
        }
    }
    // A snapshot of a live cluster may already hold these workloads' pods: the rollout replaces them.
    let mut state = state.clone();
    state.pods.retain(|p| !workloads.iter().any(|w| w.owns(p)));
    let mut world = World::new(Cluster::new(&state), &workloads, &budgets, &scales);
    world.follow_volumes(request.volumes, &request.zone_key);
    world.autoscale(&request.node_groups, &request.zone_key);
    #[cfg(test)]
    {
        world.reference = reference;
    }
    #[cfg(not(test))]
    let _ = reference;
    // The adversarial placement (see `tie_break`): the same rollout from the same start, each
    // workload's ties broken against its own level's key (node or zone).
    let level_of = |w: &Workload| {
        request
            .workloads
            .iter()
            .find(|x| w.kind == x.kind && x.namespace == w.namespace && x.name == w.name)
            .map(|x| x.level)
    };
    let mut adversarial = request.workloads.iter().any(|x| x.level >= Level::Node).then(|| {
        let mut adversarial = world.clone();
        for (w, workload) in workloads.iter().enumerate() {
            let key = match level_of(workload) {
                Some(Level::Zone) => Some(request.zone_key.as_str()),
                Some(Level::Node) => Some(request.node_key.as_str()),
                _ => None,
            };
            let spec = workload.pod_spec(0);
            let mut held = adversarial.held(w, key);
            for index in 0..workload.replicas.max(0) as usize {
                let _ = adversarial.schedule_against(workload.pod(&spec, 0, index), w, key, &mut held);
            }
        }
        adversarial
    });
    let rollout_from = world.added_len();
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
    let rollout_range = (rollout_from, world.added_len());
    // Each asked workload the model placed, with what must keep running for it.
    let placed: Vec<Option<(usize, Quorum)>> = request
        .workloads
        .iter()
        .map(|wanted| {
            let w = workloads
                .iter()
                .position(|x| x.kind == wanted.kind && x.namespace == wanted.namespace && x.name == wanted.name)?;
            Some((w, quorum_of(&workloads, w, wanted, request)))
        })
        .collect();
    // The domain losses, each failed domain one event for every workload of its level (issue 38), on
    // kix's placement and, for the workloads every such loss leaves running, on the adversarial one.
    let judged: Vec<(usize, Judged<'_>)> = (placed.iter().zip(&request.workloads).enumerate())
        .filter_map(|(asked, (placed, wanted))| {
            let (w, quorum) = placed.as_ref()?;
            (wanted.level >= Level::Pod).then_some((asked, Judged { w: *w, quorum, level: wanted.level }))
        })
        .collect();
    let only: Vec<Judged<'_>> = judged.iter().map(|(_, j)| *j).collect();
    let losses_from = world.added_len();
    let mut losses: BTreeMap<usize, Losses> =
        judged.iter().map(|(asked, _)| *asked).zip(domain_losses(&mut world, &only, request)).collect();
    let losses_range = (losses_from, world.added_len());
    for (asked, j) in &judged {
        let facts = scaled_up(&world, losses_range, &j.quorum.members, "a domain loss");
        if let Some((result, _)) = losses.get_mut(asked) {
            result.findings.extend(facts);
        }
    }
    let mut adversarial_losses: BTreeMap<usize, Losses> = BTreeMap::new();
    if let Some(adversarial) = adversarial.as_mut() {
        let tied: Vec<&(usize, Judged<'_>)> = (judged.iter())
            .filter(|(asked, j)| {
                j.level >= Level::Node && losses[asked].1.iter().all(|l| l.running >= j.quorum.required)
            })
            .collect();
        let only: Vec<Judged<'_>> = tied.iter().map(|(_, j)| *j).collect();
        adversarial_losses =
            tied.iter().map(|(asked, _)| *asked).zip(domain_losses(adversarial, &only, request)).collect();
    }
    let mut verdicts = Vec::new();
    for (asked, (wanted, placed)) in request.workloads.iter().zip(&placed).enumerate() {
        let Some((w, quorum)) = placed else {
            // A workload the model cannot take (say, too many replicas) fails visibly, never silently.
            if let Some((_, _, why)) =
                unreadable.iter().find(|(ns, name, _)| *ns == wanted.namespace && *name == wanted.name)
            {
                verdicts.push(WorkloadVerdict {
                    request: asked,
                    kind: wanted.kind,
                    namespace: wanted.namespace.clone(),
                    name: wanted.name.clone(),
                    level: wanted.level,
                    replicas: 0,
                    worst_case_running: None,
                    replacements_scheduled: 0,
                    domain_losses: Vec::new(),
                    selector_counts: BTreeMap::new(),
                    placement: BTreeMap::new(),
                    pending: BTreeMap::new(),
                    scenarios: vec![ScenarioResult::new(
                        Scenario::Rollout,
                        false,
                        vec![Finding::new(
                            FindingKind::NotSimulated,
                            FindingSubject::Workload,
                            format!("not simulated: {why}"),
                        )],
                    )],
                    meets_level: false,
                    group: wanted.group.clone(),
                    group_replicas: None,
                    majority: None,
                });
            }
            continue;
        };
        let losses = losses.remove(&asked);
        let tie = adversarial.as_ref().map(|world| (world, adversarial_losses.remove(&asked)));
        let mut verdict =
            verdict(asked, &mut world, tie, *w, quorum, wanted.level, request, &rollout_pending[*w], losses);
        verdict.scenarios[0].findings.extend(scaled_up(&world, rollout_range, &[*w], "rollout"));
        verdict.scenarios[0].findings.extend(not_domains(&world, &workloads[*w], &request.zone_key));
        verdicts.push(verdict);
    }
    verdicts
}

/// What must keep running for the verified workload: its pods, or with the other members of its group
/// (the request's workloads of the same group and namespace that the model placed).
fn quorum_of(workloads: &[Workload], w: usize, wanted: &WorkloadLevel, request: &ScenarioRequest) -> Quorum {
    let mut members = vec![w];
    if let Some(group) = &wanted.group {
        for other in request.workloads.iter().filter(|x| {
            x.group.as_ref() == Some(group) && x.namespace == wanted.namespace && x.group_scope == wanted.group_scope
        }) {
            let found = workloads
                .iter()
                .position(|x| x.kind == other.kind && x.namespace == other.namespace && x.name == other.name);
            if let Some(m) = found.filter(|m| !members.contains(m)) {
                members.push(m);
            }
        }
    }
    let total = members.iter().map(|&m| workloads[m].replicas.max(0)).sum();
    Quorum::new(members, total, wanted.survive, wanted.group.clone())
}

#[allow(clippy::too_many_arguments)]
/// One workload's verdict. `losses` is its domain-loss scenario (level pod and up), `tie` the
/// adversarial placement with its domain losses there (level node and zone, when every loss on kix's
/// placement keeps it running), both run once for every workload ([`domain_losses`]).
fn verdict(
    asked: usize,
    world: &mut World<'_>,
    tie: Option<(&World<'_>, Option<Losses>)>,
    w: usize,
    quorum: &Quorum,
    level: Level,
    request: &ScenarioRequest,
    pending: &BTreeMap<String, String>,
    losses: Option<Losses>,
) -> WorkloadVerdict {
    let workloads = world.workloads;
    let workload = &workloads[w];
    let mut scenarios = Vec::new();
    let rollout_findings: Vec<Finding> = pending
        .iter()
        .map(|(p, m)| {
            Finding::new(FindingKind::Pending, FindingSubject::pod(&workload.namespace, p), format!("{p} Pending: {m}"))
        })
        .collect();
    scenarios.push(ScenarioResult::new(Scenario::Rollout, pending.is_empty(), rollout_findings));
    let selector_counts = selector_counts(world, w);
    let mut verdict = WorkloadVerdict {
        request: asked,
        kind: workload.kind,
        namespace: workload.namespace.clone(),
        name: workload.name.clone(),
        level,
        replicas: workload.replicas,
        placement: world.placement(w),
        pending: pending.clone(),
        worst_case_running: None,
        replacements_scheduled: 0,
        domain_losses: Vec::new(),
        selector_counts: selector_counts.clone(),
        scenarios: Vec::new(),
        meets_level: false,
        group: quorum.group.clone(),
        group_replicas: quorum.group.as_ref().map(|_| quorum.total),
        majority: (quorum.survive == Survive::Majority).then_some(quorum.required),
    };
    if level >= Level::Pod {
        let ones: Vec<Finding> = selector_counts
            .iter()
            .filter(|(_, n)| **n <= 1)
            .map(|(c, n)| {
                Finding::new(
                    FindingKind::LoneSelector,
                    FindingSubject::Constraint(c.clone()),
                    format!(
                        "the spread constraint {c} counts a set of {n} {}: it balances nothing",
                        if *n == 1 { "pod" } else { "pods" }
                    ),
                )
            })
            .collect();
        scenarios.push(ScenarioResult::new(Scenario::Selectors, ones.is_empty(), ones));
        let (result, losses) = losses.expect("every workload of level pod and up is judged");
        verdict.worst_case_running = losses.iter().map(|l| l.running).min();
        verdict.replacements_scheduled = losses.iter().map(|l| l.replacements.len() as i64).sum();
        scenarios.push(result);
        if level >= Level::Node
            && let Some((adversarial, tie_losses)) = tie
        {
            scenarios.push(tie_break(world, adversarial, w, quorum, level, request, &losses, tie_losses));
        }
        verdict.domain_losses = losses;
        // Under an autoscaler whose maximum is above the minimum the workload is placed at: from the
        // maximum back down, victims in the controller's order (issue 39).
        if let Some(max) = request.workloads[asked].max_replicas.map(i64::from).filter(|&max| max > workload.replicas) {
            let from = world.added_len();
            let mut down = scale_down(world, w, quorum, level, max, request);
            down.findings.extend(scaled_up(world, (from, world.added_len()), &quorum.members, "the scale-down"));
            scenarios.push(down);
        }
    }
    // Rolling updates and drains run at every level: below pod downtime is allowed, but an update
    // that deadlocks or a drain that never finishes blocks the cluster's operators, whatever the level.
    let from = world.added_len();
    let mut update = if workload.kind.deployment_like() {
        rolling_update(world, w, quorum, level)
    } else {
        statefulset_update(world, w, quorum, level)
    };
    update.findings.extend(scaled_up(world, (from, world.added_len()), &quorum.members, "the update"));
    scenarios.push(update);
    let from = world.added_len();
    let mut drained = drain(world, w, quorum, level);
    drained.findings.extend(scaled_up(world, (from, world.added_len()), &quorum.members, "a drain"));
    scenarios.push(drained);
    verdict.meets_level = scenarios.iter().all(|s| s.pass);
    verdict.scenarios = scenarios;
    verdict
}

/// Facts for the nodes the cluster autoscaler added (issue 39) between records `from` and `to`, for pods of
/// `members`, during a scenario (`during`: `a drain`).
fn scaled_up(world: &World<'_>, (from, to): (usize, usize), members: &[usize], during: &str) -> Vec<Finding> {
    (world.added(from, to).iter())
        .filter(|a| a.owner.is_some_and(|o| members.contains(&o)))
        .map(|a| Finding::new(FindingKind::ScaledUp, FindingSubject::Node(a.node.clone()), a.sentence(during)))
        .collect()
}

/// The zones whose node groups hold no node yet but may add some (issue 39: a pool at 0 nodes in a zone,
/// with `maxNodesPerZone` above 0), for a workload with a DoNotSchedule spread on the zone key: no
/// domain of that spread until a node joins (PodTopologySpread counts the domains of the nodes there
/// are; KEP-3022, the reason minDomains exists), so the scheduler balances over the other zones and
/// never holds a pod for the empty one, and the autoscaler is never asked for a node there.
fn not_domains(world: &World<'_>, workload: &Workload, zone_key: &str) -> Vec<Finding> {
    let hard = workload
        .spec
        .spread
        .iter()
        .find(|c| c.topology_key == zone_key && c.when == super::objects::When::DoNotSchedule);
    let Some(constraint) = hard else { return Vec::new() };
    let nodes = world.cluster().nodes();
    let present: std::collections::BTreeSet<&String> =
        nodes.iter().filter(|n| !n.absent).filter_map(|n| n.labels.get(zone_key)).collect();
    let mut empty: BTreeMap<&String, usize> = BTreeMap::new();
    for node in nodes.iter().filter(|n| n.absent) {
        if let Some(zone) = node.labels.get(zone_key).filter(|z| !present.contains(z)) {
            *empty.entry(zone).or_insert(0) += 1;
        }
    }
    let domains: Vec<&str> = present.iter().map(|z| z.as_str()).collect();
    empty
        .into_iter()
        .map(|(zone, may_add)| {
            let min = if constraint.min_domains > 1 {
                format!(
                    "; its minDomains {} makes the scheduler count the global minimum as 0 while fewer zones have nodes, so a pod can wait for the autoscaler to add one there",
                    constraint.min_domains
                )
            } else {
                String::new()
            };
            let text = format!(
                "zone {zone} has no node yet (its node groups may add {may_add}): it is no domain of the DoNotSchedule spread on {zone_key} until a node joins, so the replicas spread over {} only and no pod waits for a node there{min}",
                domains.join(", ")
            );
            Finding::new(FindingKind::NotADomain, FindingSubject::Domain(format!("zone {zone}")), text)
        })
        .collect()
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
        let n = world.cluster().pods().filter(|(p, _)| con.matches(&workload.namespace, p)).count();
        out.insert(format!("{} ({when})", con.key), n);
    }
    out
}
