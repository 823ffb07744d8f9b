//! `kix audit` (issue 23): the pods of compiled workloads as they are bound now, judged against
//! each workload's level, and `kubectl rollout restart` simulated as the remedy.
//!
//! Spread constraints are evaluated only when a pod is scheduled; nothing re-checks a bound pod.
//! This module counts today's pods per domain of each spread key of the compiled template and
//! computes the skew as upstream PodTopologySpread's filter does (kubernetes/kubernetes v1.33
//! pkg/scheduler/framework/plugins/podtopologyspread/filtering.go, `calPreFilterState` and
//! `Filter`):
//! - only nodes that pass the constraint's node inclusion policies are domains
//!   (`matchNodeInclusionPolicies`: the pod's nodeSelector and required node affinity under
//!   `nodeAffinityPolicy: Honor`, the default; its tolerations of the node's taints under
//!   `nodeTaintsPolicy: Honor`), and only nodes carrying every hard constraint's topology key
//!   (`nodeLabelsMatchSpreadConstraints`);
//! - every such node's domain exists with count 0 (`TpValueToMatchNum` is seeded per eligible node),
//!   pods are counted by the constraint's selector in the pod's namespace, terminating pods left out
//!   (`countPodsMatchSelector` skips a pod with a deletionTimestamp);
//! - the global minimum is the smallest count over eligible domains, or 0 while there are fewer
//!   eligible domains than `minDomains` (`minMatchNum`); the filter admits a pod where
//!   `count + selfMatch - min <= maxSkew`, so pods bound under the constraint never leave
//!   `max - min` above maxSkew. `max - min` above maxSkew on a DoNotSchedule constraint is a placement
//!   the scheduler would not have made (pods bound before the constraint, or domains that came back).
//!
//! `matchLabelKeys` is not merged here: the audit asks about the workload's pods as a whole,
//! every revision together (the scheduler merges it per incoming pod, [`super::plugins::Spread::of`]).
//!
//! Survival uses the pods where they are (no rescheduling): for each domain of the level's key
//! (zone key at zone, node key at node), the Ready, not terminating pods outside it. The remedy
//! simulates a rollout of the compiled template on today's cluster (below, "The remedy").

use super::audit_report::Remedy;
use super::audit_report::{AuditRequest, AuditWorkload, PodStates, SpreadAudit, Survival, WorkloadAudit};
use super::budget::Budget;
use super::cluster::Cluster;
use super::objects::{Node, Pod, SpreadConstraint, When};
use super::plugins::untolerated;
use super::snapshot::State;
use super::verdict::Survive;
use super::voluntary::sort_for_deletion;
use super::workload::Workload;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_kube::selector::Labels;
use kix_kube::taints::Effect;
use kix_yaml::Value;
use std::collections::{BTreeMap, HashMap};

/// Today's state indexed for audits: nodes by name, pods by namespace.
pub(super) struct Index<'s> {
    pub state: &'s State,
    pub nodes: HashMap<&'s str, &'s Node>,
    by_namespace: HashMap<&'s str, Vec<&'s Pod>>,
}

impl<'s> Index<'s> {
    fn new(state: &'s State) -> Index<'s> {
        let nodes = state.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
        let mut by_namespace: HashMap<&str, Vec<&Pod>> = HashMap::new();
        for pod in &state.pods {
            by_namespace.entry(pod.namespace.as_str()).or_default().push(pod);
        }
        Index { state, nodes, by_namespace }
    }

    fn pods_in(&self, namespace: &str) -> &[&'s Pod] {
        self.by_namespace.get(namespace).map_or(&[], Vec::as_slice)
    }
}

/// Whether a pod counts as running through a failure: bound, not terminating, Ready.
pub(super) fn is_running(pod: &Pod) -> bool {
    pod.node_name.is_some() && !pod.terminating && pod.ready
}

/// Audits every requested workload of the compiled `objects` (one instance's) on today's state.
pub fn audit_workloads(state: &State, objects: &[Value], request: &AuditRequest) -> Vec<WorkloadAudit> {
    let index = Index::new(state);
    let mut audits = Vec::new();
    for object in objects {
        let combined = kix_kube::workload::with_referenced_template(object, objects).map(|(value, _)| value);
        let Ok(Some(workload)) = Workload::from_object(combined.as_ref().unwrap_or(object), "default") else {
            continue;
        };
        let Some(wanted) = request
            .workloads
            .iter()
            .find(|x| x.kind == workload.kind && x.namespace == workload.namespace && x.name == workload.name)
        else {
            continue;
        };
        audits.push(audit_one(&index, &workload, wanted, request, objects));
    }
    audits
}

/// The level's topology key, or None at levels no domain loss tests (none, pod).
pub(super) fn level_key(level: Level, request: &AuditRequest) -> Option<&str> {
    match level {
        Level::Zone => Some(&request.zone_key),
        Level::Node => Some(&request.node_key),
        _ => None,
    }
}

fn audit_one(
    index: &Index<'_>,
    workload: &Workload,
    wanted: &AuditWorkload,
    request: &AuditRequest,
    objects: &[Value],
) -> WorkloadAudit {
    let own: Vec<&Pod> = index.pods_in(&workload.namespace).iter().copied().filter(|p| workload.owns(p)).collect();
    let pods = pod_states(&own);
    let spreads = workload.spec.spread.iter().map(|c| spread_audit(index, workload, c)).collect::<Vec<_>>();
    // The quorum: the group's pods and replicas, or the workload's own.
    let (quorum_pods, of): (Vec<&Pod>, i64) = match &wanted.group {
        Some((_, selector)) => {
            let members = index
                .pods_in(&workload.namespace)
                .iter()
                .copied()
                .filter(|p| selector.iter().all(|(k, v)| p.labels.get(k) == Some(v)))
                .collect();
            (members, group_replicas(objects, &workload.namespace, selector))
        }
        None => (own.clone(), workload.replicas),
    };
    let survival = level_key(wanted.level, request).map(|key| {
        let placed = quorum_pods.iter().filter(|p| is_running(p)).filter_map(|p| p.node_name.as_deref());
        survival(index, key, &template_pod(workload), placed, of, wanted.survive)
    });
    let drift = own
        .iter()
        .filter(|p| !p.terminating && lacks_constraints(p, &workload.spec.spread))
        .map(|p| p.name.clone())
        .collect();
    let blocked_budgets = blocked_budgets(index, &own);
    let absent = own.is_empty();
    let fails = !absent && (spreads.iter().any(|s| s.violated) || survival.as_ref().is_some_and(|s| !s.survives));
    let remedy = fails.then(|| restart(index, workload, wanted, request, !drift_is_empty(&own, workload), of));
    WorkloadAudit {
        kind: workload.kind,
        namespace: workload.namespace.clone(),
        name: workload.name.clone(),
        level: wanted.level,
        survive: wanted.survive,
        group: wanted.group.as_ref().map(|(name, _)| name.clone()),
        replicas: workload.replicas,
        absent,
        pods,
        spreads,
        survival,
        drift,
        blocked_budgets,
        fails,
        remedy,
    }
}

fn drift_is_empty(own: &[&Pod], workload: &Workload) -> bool {
    own.iter().all(|p| p.terminating || !lacks_constraints(p, &workload.spec.spread))
}

/// The replicas of the compiled workloads a group's selector selects (their templates' labels).
fn group_replicas(objects: &[Value], namespace: &str, selector: &Labels) -> i64 {
    objects
        .iter()
        .filter_map(|o| Workload::from_object(o, "default").ok().flatten())
        .filter(|w| w.namespace == namespace && selector.iter().all(|(k, v)| w.template_labels.get(k) == Some(v)))
        .map(|w| w.replicas)
        .sum()
}

fn pod_states(own: &[&Pod]) -> PodStates {
    let mut states = PodStates { total: own.len(), ..PodStates::default() };
    for pod in own {
        if pod.terminating {
            states.terminating.push(pod.name.clone());
        } else if pod.node_name.is_none() {
            states.pending.push(pod.name.clone());
        } else if !pod.ready {
            states.not_ready.push(pod.name.clone());
        } else {
            states.running += 1;
        }
    }
    for list in [&mut states.terminating, &mut states.pending, &mut states.not_ready] {
        list.sort();
    }
    states
}

/// A pod of the compiled template: what `matchNodeInclusionPolicies` reads.
pub(super) fn template_pod(workload: &Workload) -> Pod {
    workload.pod(&workload.pod_spec(0), 0, 0)
}

/// Whether a node is one of a constraint's domains (`matchNodeInclusionPolicies` and the key).
fn eligible(template: &Pod, node: &Node, key: &str, honor_affinity: bool, honor_taints: bool) -> bool {
    node.labels.contains_key(key)
        && (!honor_affinity || template.spec.matches_node_affinity(&node.name, &node.labels))
        && (!honor_taints || untolerated(template, &node.taints, |e| e != Effect::PreferNoSchedule).is_none())
}

/// Counts per eligible domain of one constraint, and its skew (see the module doc).
fn spread_audit(index: &Index<'_>, workload: &Workload, c: &SpreadConstraint) -> SpreadAudit {
    let template = template_pod(workload);
    // Hard constraints also leave out nodes missing any hard constraint's key
    // (`nodeLabelsMatchSpreadConstraints` over the pod's DoNotSchedule constraints).
    let hard_keys: Vec<&str> = workload
        .spec
        .spread
        .iter()
        .filter(|x| x.when == When::DoNotSchedule)
        .map(|x| x.topology_key.as_str())
        .collect();
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for node in &index.state.nodes {
        let all_keys = c.when == When::ScheduleAnyway || hard_keys.iter().all(|k| node.labels.contains_key(*k));
        if all_keys && eligible(&template, node, &c.topology_key, c.honor_affinity, c.honor_taints) {
            counts.entry(node.labels[&c.topology_key].clone()).or_insert(0);
        }
    }
    for pod in index.pods_in(&workload.namespace) {
        let matches = !pod.terminating && c.selector.as_ref().is_some_and(|s| s.matches(&pod.labels));
        let Some(node) = pod.node_name.as_deref().and_then(|n| index.nodes.get(n)).filter(|_| matches) else {
            continue;
        };
        if let Some(count) = node.labels.get(&c.topology_key).and_then(|v| counts.get_mut(v)) {
            *count += 1;
        }
    }
    let max = counts.values().copied().max().unwrap_or(0);
    let min = if (counts.len() as i64) < c.min_domains { 0 } else { counts.values().copied().min().unwrap_or(0) };
    let skew = max - min;
    SpreadAudit {
        topology_key: c.topology_key.clone(),
        when_unsatisfiable: match c.when {
            When::DoNotSchedule => "DoNotSchedule",
            When::ScheduleAnyway => "ScheduleAnyway",
        }
        .to_string(),
        max_skew: c.max_skew,
        counts,
        skew,
        violated: c.when == When::DoNotSchedule && skew > c.max_skew,
    }
}

/// The worst single loss of a domain of `key`: running pods (given by their nodes) outside it.
/// Domains are the values of `key` on nodes the template may run on.
pub(super) fn survival<'n>(
    index: &Index<'_>,
    key: &str,
    template: &Pod,
    placed: impl Iterator<Item = &'n str>,
    of: i64,
    survive: Survive,
) -> Survival {
    let mut per_domain: BTreeMap<String, i64> = BTreeMap::new();
    for node in &index.state.nodes {
        if let Some(value) =
            node.labels.get(key).filter(|_| template.spec.matches_node_affinity(&node.name, &node.labels))
        {
            per_domain.entry(value.clone()).or_insert(0);
        }
    }
    let mut running = 0;
    for node in placed {
        running += 1;
        if let Some(value) = index.nodes.get(node).and_then(|n| n.labels.get(key)) {
            *per_domain.entry(value.clone()).or_insert(0) += 1;
        }
    }
    // The worst domain holds the most running pods; the first by name among equals.
    let (worst_domain, lost) = per_domain
        .iter()
        .fold((String::new(), -1), |(d, l), (value, &n)| if n > l { (value.clone(), n) } else { (d, l) });
    let running_after = running - lost.max(0);
    let required = match survive {
        Survive::One => 1,
        Survive::Majority => of / 2 + 1,
    };
    Survival {
        topology_key: key.to_string(),
        worst_domain,
        running_after,
        of,
        required,
        survives: running_after >= required,
    }
}

/// Whether a pod's spec lacks one of the compiled constraints (by topology key and
/// whenUnsatisfiable): the compiled output was never applied, or was changed in the cluster.
fn lacks_constraints(pod: &Pod, compiled: &[SpreadConstraint]) -> bool {
    compiled.iter().any(|c| !pod.spec.spread.iter().any(|p| p.topology_key == c.topology_key && p.when == c.when))
}

/// Budgets covering any of the pods whose disruptionsAllowed is 0 now, as `namespace/name (rule)`.
fn blocked_budgets(index: &Index<'_>, own: &[&Pod]) -> Vec<String> {
    let mut out = Vec::new();
    for budget in &index.state.budgets {
        if !own.iter().any(|p| budget.covers(p)) {
            continue;
        }
        let status = budget_status(index, budget);
        if status.allowed == 0 {
            out.push(format!(
                "{}/{} ({}, {} healthy of {} desired)",
                budget.namespace, budget.name, status.rule, status.healthy, status.desired
            ));
        }
    }
    out.sort();
    out
}

/// A budget's status from today's pods; the scale of a controller is the number of pods it owns
/// here (the snapshot's Deployments' spec.replicas are not read by the model).
fn budget_status(index: &Index<'_>, budget: &Budget) -> super::budget::BudgetStatus {
    let pods = index.pods_in(&budget.namespace);
    let covered: Vec<&&Pod> = pods.iter().filter(|p| budget.covers(p)).collect();
    let healthy = covered.iter().filter(|p| !p.terminating && p.ready).count() as i64;
    budget.status_from(covered.len() as i64, healthy, || covered.len() as i64)
}

// The remedy: `kubectl rollout restart` simulated.
// The remedy `kix audit` proves (issue 23): `kubectl rollout restart` of a failing workload,
// simulated on today's cluster with the compiled template, and whether the placement it ends
// in survives the level's worst domain loss.
//
// A Deployment's rollout follows the deployment controller (kubernetes/kubernetes
// pkg/controller/deployment/rolling.go, `reconcileNewReplicaSet` and `reconcileOldReplicaSets`):
// the new ReplicaSet grows while all pods stay within `replicas + maxSurge` (maxSurge rounded up,
// maxUnavailable down, `ResolveFenceposts`), and old pods are deleted while
// `old + new available - (replicas - maxUnavailable)` is above 0, in the ReplicaSet controller's
// deletion order ([`super::voluntary::sort_for_deletion`]). The old pods stay bound while the new
// ones are scheduled: they hold capacity, and a constraint without `matchLabelKeys:
// [pod-template-hash]` counts them, which is how a rollout can end lopsided. Pods the model cannot
// place stay Pending and are retried each step, as the scheduler's queue retries them when pods
// leave. `strategy.type: Recreate` deletes every old pod first. A StatefulSet's restart replaces
// pods one at a time from the highest ordinal down (stateful_set_control.go), each deleted before
// it is recreated.

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
    let pending = if workload.kind.deployment_like() {
        deployment_restart(&mut cluster, workload)
    } else {
        statefulset_restart(&mut cluster, workload)
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
    // kubectl's resource names; a custom resource's is its kind in lower case (its operator decides
    // whether `rollout restart` means anything to it).
    let kind = match workload.kind {
        WorkloadKind::StatefulSet => "statefulset".to_string(),
        WorkloadKind::Rollout => "rollout".to_string(),
        WorkloadKind::Deployment => "deployment".to_string(),
        WorkloadKind::Custom(profile) => profile.kind.to_lowercase(),
    };
    let mut commands = Vec::new();
    if !drifted {
        commands.push(format!("kubectl -n {} rollout restart {kind}/{}", workload.namespace, workload.name));
    }
    commands.push(format!("kubectl -n {} rollout status {kind}/{}", workload.namespace, workload.name));
    let mut otherwise = Vec::new();
    let mut too_few = false;
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
            // Too few domains for any placement: the most even one puts ceil(of / d) pods in the
            // largest of d domains, and losing it must leave `required`.
            if let Some(needed) = survival.as_ref().map(|s| domains_needed(of, s.required)) {
                if needed.is_none_or(|d| d > domains.len() as i64) {
                    too_few = true;
                    otherwise.push(match needed {
                        Some(d) => format!(
                            "nodes the pods can run on in {} more {key} {}: over {} even the most even \
                             placement loses too many with its largest domain ({d} domains are needed for {of} pods)",
                            d - domains.len() as i64,
                            if d - domains.len() as i64 == 1 { "domain" } else { "domains" },
                            domains.len()
                        ),
                        None => {
                            format!("more replicas: no spread of {of} pods over {key} domains survives the loss of one")
                        }
                    });
                }
            }
            if !too_few && (!empty.is_empty() || domains.len() < 2) {
                otherwise.push(format!(
                    "a node the pods can run on in {} (a domain the rollout left empty or that does not exist): \
                     the model found no room for them there",
                    if empty.is_empty() { format!("a second {key} domain") } else { empty.join(", ") }
                ));
            }
        }
        if pending > 0 {
            otherwise.push(format!(
                "capacity for {pending} {} the simulated rollout left Pending (their nodes are full, tainted or excluded by affinity)",
                if pending == 1 { "pod" } else { "pods" }
            ));
        }
        if workload.spec.spread.iter().any(|c| c.max_skew == 1) {
            otherwise.push("a lower maxSkew is impossible: the constraint's maxSkew is already 1".to_string());
        }
        // The descheduler moves pods above maxSkew; it cannot add the domains missing.
        if !too_few {
            otherwise.push(
            "the descheduler's RemovePodsViolatingTopologySpreadConstraint evicts pods above maxSkew once room exists \
             (it evicts; the scheduler places the replacements)"
                .to_string(),
        );
        }
    }
    Remedy { commands, counts, pending, survival, survives, otherwise }
}

/// The fewest domains over which `of` pods, placed as evenly as possible, keep `required` running
/// through the loss of the largest domain; `None` when no number of domains does (`of < required + 1`
/// with one pod per domain).
fn domains_needed(of: i64, required: i64) -> Option<i64> {
    (1..=of.max(1)).find(|d| of - (of + d - 1) / d >= required)
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

#[cfg(test)]
mod tests {
    use super::domains_needed;

    #[test]
    fn domains_needed_for_a_majority_or_one() {
        // (pods, required, domains): 3 for a majority of 3 (1/1/1 loses 1, leaves 2); 2 for one of 3
        // (2/1 leaves 1); 5 members need 3 domains (2/2/1 leaves 3); 1 pod never survives a loss.
        for (of, required, expected) in [(3, 2, Some(3)), (3, 1, Some(2)), (5, 3, Some(3)), (2, 2, None), (1, 1, None)]
        {
            assert_eq!(domains_needed(of, required), expected, "{of} pods, {required} required");
        }
    }
}
