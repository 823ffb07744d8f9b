//! Scenario tests for the verify engine (issue 3), through `kix_sim::verify_workloads`: the
//! shipped three-zone shape meets zone, a hard zone rule without `nodeTaintsPolicy: Honor` fails
//! domain loss, a single-replica PDB blocks a drain.

use crate::support::{verify_request, workspace_file};
use kix_kube::kind::WorkloadKind::{self, Deployment, StatefulSet};
use kix_kube::level::Level;
use kix_sim::{FindingKind, FindingSubject, ScenarioRequest, State, WorkloadVerdict, verify_workloads};

// The states and workloads of the workspace's tests/sim/, which the command line's tests use too.
const THREE_ZONES: &str = include_str!("../../../../tests/sim/three-zones.yaml");
const WEB: &str = include_str!("../../../../tests/sim/web.yaml");
const WEB_NO_HONOR: &str = include_str!("../../../../tests/sim/web-no-honor.yaml");
const SINGLE: &str = include_str!("../../../../tests/sim/single.yaml");
const DB: &str = include_str!("../../../../tests/sim/db.yaml");

fn objects(text: &str) -> Vec<kix_yaml::Value> {
    kix_yaml::from_str_all(text).unwrap()
}

fn run(manifest: &str, name: &str, level: Level) -> WorkloadVerdict {
    run_at(manifest, name, level, None)
}

/// Like `run`, with an autoscaler's minimum as the replica count to verify at.
fn run_at(manifest: &str, name: &str, level: Level, min_replicas: Option<u32>) -> WorkloadVerdict {
    verdict_of(Deployment, manifest, name, level, min_replicas)
}

/// The verdict on one workload of `kind` in namespace `shop` on the three-zone snapshot.
fn verdict_of(
    kind: WorkloadKind,
    manifest: &str,
    name: &str,
    level: Level,
    min_replicas: Option<u32>,
) -> WorkloadVerdict {
    let state = State::from_yaml_str(THREE_ZONES).unwrap();
    let request = verify_request(kind, "shop", name, level, min_replicas);
    let mut verdicts = verify_workloads(&state, &objects(manifest), &request);
    assert_eq!(verdicts.len(), 1);
    verdicts.remove(0)
}

fn scenario<'a>(v: &'a WorkloadVerdict, name: &str) -> &'a kix_sim::ScenarioResult {
    v.scenarios.iter().find(|s| s.scenario.as_str() == name).unwrap_or_else(|| panic!("no scenario {name}: {v:#?}"))
}

// Issue 9 item 5: a workload under an autoscaler is verified at the autoscaler's minimum, not at
// spec.replicas (the HPA may scale it down to that).
#[test]
fn an_autoscalers_minimum_is_verified_instead_of_spec_replicas() {
    let web = WEB;
    let at_one = run_at(web, "web", Level::Zone, Some(1));
    assert_eq!(at_one.replicas, 1);
    assert!(!at_one.meets_level, "one replica cannot survive a zone loss: {at_one:#?}");
    assert_eq!(at_one.worst_case_running, Some(0));
    let at_six = run_at(web, "web", Level::Zone, Some(6));
    assert_eq!(at_six.replicas, 6);
    assert!(at_six.meets_level, "{at_six:#?}");
    assert_eq!(at_six.worst_case_running, Some(4));
    assert_eq!(run(web, "web", Level::Zone).replicas, 3, "without an autoscaler spec.replicas counts");
}

#[test]
fn three_zone_deployment_with_honor_meets_zone() {
    let v = run(WEB, "web", Level::Zone);
    assert!(v.meets_level, "{v:#?}");
    assert_eq!(v.worst_case_running, Some(2));
    // Three zones lost in turn, one replacement each, never in the failed zone.
    assert_eq!(v.domain_losses.len(), 3);
    assert_eq!(v.replacements_scheduled, 3);
    for loss in &v.domain_losses {
        let zone = loss.domain.trim_start_matches("zone zone-");
        assert!(loss.replacements.values().all(|node| !node.starts_with(&format!("node-{zone}"))), "{loss:?}");
    }
    for s in ["rollout", "selectors", "domain-loss", "rolling-update", "drain"] {
        assert!(scenario(&v, s).pass, "{s}: {v:#?}");
    }
    assert_eq!(v.selector_counts.get("topology.kubernetes.io/zone (DoNotSchedule)"), Some(&3));
}

#[test]
fn hard_zone_rule_without_taints_policy_honor_leaves_replacements_pending() {
    let v = run(WEB_NO_HONOR, "web", Level::Zone);
    assert!(!v.meets_level);
    let loss = scenario(&v, "domain-loss");
    assert!(!loss.pass);
    assert_eq!(v.replacements_scheduled, 0, "{v:#?}");
    let finding = &loss.findings[0];
    assert_eq!(finding.kind, FindingKind::ReplacementPending, "{finding}");
    assert!(finding.message.contains("stays Pending although surviving nodes have room"), "{finding}");
    assert!(finding.message.contains("didn't match pod topology spread constraints"), "{finding}");
    assert!(finding.message.contains("nodeTaintsPolicy"), "{finding}");
    // The replicas themselves survive: two of three keep running.
    assert_eq!(v.worst_case_running, Some(2));
}

#[test]
fn single_replica_with_zero_budget_blocks_drain() {
    let v = run(SINGLE, "solo", Level::Pod);
    assert!(!v.meets_level);
    let drain = scenario(&v, "drain");
    assert!(!drain.pass);
    assert!(
        drain.findings.iter().any(|f| f.message.contains("is blocked")
            && f.message.contains("PodDisruptionBudget shop/solo allows no disruption")),
        "{drain:?}"
    );
    // And a single replica cannot survive losing it.
    assert_eq!(v.worst_case_running, Some(0));
    assert!(!scenario(&v, "domain-loss").pass);
}

#[test]
fn level_none_skips_domain_loss_but_still_needs_drains_to_finish() {
    // Below pod, downtime is allowed, so there is no domain loss to survive; a drain that can never
    // finish (a budget over the only replica) still blocks the cluster's operators and fails.
    let v = run(SINGLE, "solo", Level::None);
    let names: Vec<&str> = v.scenarios.iter().map(|s| s.scenario.as_str()).collect();
    assert_eq!(names, ["rollout", "rolling-update", "drain"]);
    assert!(scenario(&v, "rollout").pass && scenario(&v, "rolling-update").pass, "{v:#?}");
    assert!(!scenario(&v, "drain").pass);
    assert!(!v.meets_level);
    assert_eq!(v.worst_case_running, None);
}

#[test]
fn verdicts_serialize_to_json() {
    let v = run(WEB_NO_HONOR, "web", Level::Zone);
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["level"], "zone");
    assert_eq!(json["meets_level"], false);
    assert!(json["domain_losses"][0]["pending"].as_object().is_some_and(|m| m.len() == 1), "{json}");
}

#[test]
fn statefulset_pods_on_a_lost_zone_stay_terminating_without_replacements() {
    let v = verdict_of(StatefulSet, DB, "db", Level::Zone, None);
    assert!(v.meets_level, "{v:#?}");
    assert_eq!(v.worst_case_running, Some(2));
    assert_eq!(v.replacements_scheduled, 0);
    let loss = scenario(&v, "domain-loss");
    assert_eq!(loss.findings.len(), 3, "{loss:?}");
    assert!(loss.findings.iter().all(|f| f.message.contains("stays Terminating")), "{loss:?}");
    let pods: Vec<&FindingSubject> = loss.findings.iter().map(|f| &f.subject).collect();
    assert!(pods.iter().all(|p| matches!(p, FindingSubject::Pod { namespace, .. } if namespace == "shop")), "{pods:?}");
    assert!(loss.findings.iter().all(|f| f.kind == FindingKind::StaysTerminating), "{loss:?}");
    // The StatefulSet's rolling update (stateful_set_control.go: highest ordinal first, one at a
    // time) keeps two of three running; the drain honours the budget.
    let update = scenario(&v, "rolling-update");
    assert!(update.pass, "{update:?}");
    assert!(update.findings[0].message.contains("partition 0: 3 updated highest ordinal first, one at a time (db-2, db-1, db-0); fewest available during the update: 2"), "{update:?}");
    assert!(scenario(&v, "drain").pass);
}

#[test]
fn pods_of_the_workload_already_in_the_snapshot_are_replaced_not_doubled() {
    let mut text = THREE_ZONES.to_string();
    text.push_str(
        "---\nkind: Pod\nmetadata: {name: web-old-1, namespace: shop, labels: {app: web}}\nspec: {nodeName: node-a1}\n",
    );
    let state = State::from_yaml_str(&text).unwrap();
    let request = verify_request(Deployment, "shop", "web", Level::Zone, None);
    let v = verify_workloads(&state, &objects(WEB), &request).remove(0);
    assert!(v.meets_level, "{v:#?}");
    assert_eq!(v.domain_losses.iter().map(|l| l.running + l.lost).max(), Some(3));
}

fn deployment(name: &str, replicas: u32, cpu: &str, strategy: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: {replicas}\n  strategy: {strategy}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n"
    )
}

#[test]
fn rolling_update_without_room_and_without_unavailability_deadlocks() {
    // Six 4-CPU nodes, six 4-CPU replicas: no room for a surge pod, and none may go first.
    let manifest = deployment("full", 6, "4", "{rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}");
    let v = run(&manifest, "full", Level::Pod);
    let update = scenario(&v, "rolling-update");
    assert!(!update.pass, "{update:?}");
    assert!(
        update.findings.iter().any(|f| f.message.contains("deadlocks") && f.message.contains("Insufficient cpu")),
        "{update:?}"
    );
    // With one pod allowed to go first, the same update finishes.
    let manifest = deployment("full", 6, "4", "{rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}");
    let v = run(&manifest, "full", Level::Pod);
    assert!(scenario(&v, "rolling-update").pass, "{v:#?}");
}

#[test]
fn rolling_update_strategies_that_drop_every_replica_fail_level_pod() {
    let v = run(&deployment("re", 3, "100m", "{type: Recreate}"), "re", Level::Pod);
    let update = scenario(&v, "rolling-update");
    assert!(!update.pass && update.findings[0].message.contains("Recreate"), "{update:?}");
    let v =
        run(&deployment("zero", 3, "100m", "{rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}"), "zero", Level::Pod);
    assert!(scenario(&v, "rolling-update").findings[0].message.contains("both 0"));
    // 25% of 2 rounds down to 0 unavailable and up to 1 surge: the default strategy keeps both running.
    let v = run(&deployment("two", 2, "100m", "{}"), "two", Level::Pod);
    let update = scenario(&v, "rolling-update");
    assert!(update.pass, "{update:?}");
    assert!(
        update.findings[0].message.contains("maxSurge 1, maxUnavailable 0; fewest available during the rollout: 2"),
        "{update:?}"
    );
}

fn pdb(name: &str, app: &str, policy: &str) -> String {
    format!(
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  {policy}\n  selector: {{matchLabels: {{app: {app}}}}}\n"
    )
}

#[test]
fn budgets_block_drains_as_the_disruption_controller_computes_them() {
    // minAvailable 1 over one replica: no disruption allowed.
    let manifest = deployment("one", 1, "100m", "{}") + &pdb("one", "one", "minAvailable: 1");
    let drain = run(&manifest, "one", Level::Pod)
        .scenarios
        .into_iter()
        .find(|s| s.scenario == kix_sim::Scenario::Drain)
        .unwrap();
    assert!(
        !drain.pass && drain.findings[0].message.contains("minAvailable 1: 1 expected, 1 healthy, 1 desired healthy"),
        "{drain:?}"
    );
    // 50% of 3 as maxUnavailable rounds up to 2: two may go, the drain finishes.
    let manifest = deployment("three", 3, "100m", "{}") + &pdb("three", "three", "maxUnavailable: 50%");
    assert!(scenario(&run(&manifest, "three", Level::Pod), "drain").pass);
    // A pod covered by two budgets cannot be evicted at all.
    let manifest = deployment("twice", 3, "100m", "{}")
        + &pdb("a", "twice", "maxUnavailable: 1")
        + &pdb("b", "twice", "maxUnavailable: 1");
    let v = run(&manifest, "twice", Level::Pod);
    let drain = scenario(&v, "drain");
    assert!(
        !drain.pass && drain.findings.iter().any(|f| f.message.contains("covered by 2 PodDisruptionBudgets")),
        "{drain:?}"
    );
}

/// A verify request for one Deployment of namespace `shop`.
fn request(name: &str, level: Level) -> ScenarioRequest {
    verify_request(Deployment, "shop", name, level, None)
}

/// Nodes `(name, zone)` with hostname and zone labels and 4 CPU / 16Gi each.
fn nodes(list: &[(&str, &str)]) -> State {
    let items: String = list
        .iter()
        .map(|(n, z)| {
            format!(
                "- {{kind: Node, metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, topology.kubernetes.io/zone: {z}}}}}, status: {{allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}}}}}\n"
            )
        })
        .collect();
    State::from_yaml_str(&format!("kind: List\nitems:\n{items}")).unwrap()
}

/// What kix compiles for a 2-replica Deployment at level node: hard hostname spread with
/// `nodeTaintsPolicy: Honor`, and a `maxUnavailable: 1` PDB.
fn kix_node_level_deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]\n      topologySpreadConstraints:\n      - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Honor, labelSelector: {{matchLabels: {{app: {name}}}}}, matchLabelKeys: [pod-template-hash]}}\n"
    ) + &pdb(name, name, "maxUnavailable: 1")
}

#[test]
fn a_cordoned_node_is_tainted_so_honor_drops_it_from_the_spread_domains() {
    // Two nodes, one zone, level node: draining one node evicts its replica, and the
    // replacement must schedule on the other node, as it does on a real cluster (the node
    // lifecycle controller taints cordoned nodes node.kubernetes.io/unschedulable:NoSchedule).
    let state = nodes(&[("n1", "a"), ("n2", "a")]);
    let v =
        verify_workloads(&state, &objects(&kix_node_level_deployment("api")), &request("api", Level::Node)).remove(0);
    let drain = scenario(&v, "drain");
    assert!(drain.pass, "{drain:?}");
    assert!(drain.findings.iter().all(|f| !f.message.contains("stays Pending")), "{drain:?}");
    assert!(v.meets_level, "{v:#?}");
}

#[test]
fn a_replacement_left_pending_by_a_drain_fails_level_pod_but_not_level_none() {
    // The only other node is full: the evicted replica's replacement cannot go anywhere.
    let state = State::from_yaml_str(
        "kind: List\nitems:\n- {kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}, status: {allocatable: {cpu: '1', memory: 16Gi, pods: '110'}}}\n- {kind: Node, metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}, status: {allocatable: {cpu: '1', memory: 16Gi, pods: '110'}}}\n",
    )
    .unwrap();
    let manifest = deployment("big", 2, "600m", "{}") + &pdb("big", "big", "maxUnavailable: 1");
    let at = |level| verify_workloads(&state, &objects(&manifest), &request("big", level)).remove(0);
    let v = at(Level::Pod);
    let drain = scenario(&v, "drain");
    assert!(!drain.pass, "{drain:?}");
    assert!(
        drain.findings.iter().any(|f| f.message.contains("stays Pending") && f.message.contains("Insufficient cpu")),
        "{drain:?}"
    );
    assert!(!v.meets_level);
    let v = at(Level::None);
    let drain = scenario(&v, "drain");
    assert!(drain.pass, "{drain:?}");
    assert!(drain.findings.iter().any(|f| f.message.contains("stays Pending")), "{drain:?}");
}

#[test]
fn snapshot_nodes_marked_unschedulable_get_the_unschedulable_taint() {
    let state = State::from_yaml_str(
        "kind: Node\nmetadata: {name: n1}\nspec: {unschedulable: true}\n---\nkind: Node\nmetadata: {name: n2}\nspec:\n  unschedulable: true\n  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]\n",
    )
    .unwrap();
    for node in &state.nodes {
        let taints: Vec<_> = node.taints.iter().filter(|t| t.key == "node.kubernetes.io/unschedulable").collect();
        assert_eq!(taints.len(), 1, "{node:?}");
        assert_eq!(taints[0].effect, kix_kube::taints::Effect::NoSchedule);
    }
}

/// A 2-replica Deployment with only a hostname ScheduleAnyway spread (its own placement) and a PDB.
fn hostname_only_deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]\n      topologySpreadConstraints:\n      - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {{matchLabels: {{app: {name}}}}}}}\n"
    ) + &pdb(name, name, "maxUnavailable: 1")
}

#[test]
fn a_zone_verdict_that_rests_on_the_lowest_name_tie_break_fails() {
    // n1 and n3 in zone a, n2 and n4 in zone b. kix's lowest-name choice puts the second replica
    // on n2, but n2, n3 and n4 score alike: the real scheduler picks n3 one time in three, and
    // losing zone a then takes both replicas.
    let state = nodes(&[("n1", "a"), ("n2", "b"), ("n3", "a"), ("n4", "b")]);
    let v = verify_workloads(&state, &objects(&hostname_only_deployment("gw")), &request("gw", Level::Zone)).remove(0);
    // The lowest-name placement alone survives every zone loss.
    assert!(scenario(&v, "domain-loss").pass, "{v:#?}");
    assert_eq!(v.worst_case_running, Some(1));
    let ties = scenario(&v, "tie-break");
    assert!(!ties.pass, "{ties:?}");
    let finding = ties.findings.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("\n");
    assert!(finding.contains("random choice among equal scores"), "{finding}");
    assert!(finding.contains("zone a") && finding.contains("n1") && finding.contains("n3"), "{finding}");
    assert!(!v.meets_level);
}

#[test]
fn kix_derived_hard_spread_on_the_levels_key_passes_the_tie_break_check() {
    // The same cluster with kix's own constraints (hard zone spread, Honor): ties cannot
    // concentrate replicas in one zone.
    let state = nodes(&[("n1", "a"), ("n2", "b"), ("n3", "a"), ("n4", "b")]);
    let manifest = kix_node_level_deployment("api").replace(
        "topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule",
        "topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule",
    );
    let v = verify_workloads(&state, &objects(&manifest), &request("api", Level::Zone)).remove(0);
    assert!(scenario(&v, "tie-break").pass, "{v:#?}");
    assert!(v.meets_level, "{v:#?}");
    // At level node, hostname-only soft spread cannot stack two replicas on one node by a tie
    // either (the node already holding one scores lower), so the check passes there too.
    let v = verify_workloads(&state, &objects(&hostname_only_deployment("gw")), &request("gw", Level::Node)).remove(0);
    assert!(scenario(&v, "tie-break").pass, "{v:#?}");
}

#[test]
fn a_strategy_that_takes_every_replica_down_fails_level_pod() {
    // maxUnavailable 100% with no surge: the controller scales the old ReplicaSet to zero in one
    // sync, before any new pod is ready.
    let manifest = WEB.replace(
        "spec:\n  replicas: 3\n",
        "spec:\n  replicas: 3\n  strategy:\n    rollingUpdate: {maxUnavailable: 100%, maxSurge: 0}\n",
    );
    assert!(manifest.contains("maxUnavailable: 100%"), "fixture changed shape");
    let v = run(&manifest, "web", Level::Zone);
    let update = scenario(&v, "rolling-update");
    assert!(!update.pass, "{update:?}");
    assert!(update.findings[0].message.contains("fewest available during the rollout: 0"), "{update:?}");
    assert!(!v.meets_level);
    // The default strategy (25%/25%: surge 1, unavailable 0) keeps all three available.
    let default = run(WEB, "web", Level::Zone);
    let update = scenario(&default, "rolling-update");
    assert!(update.pass && update.findings[0].message.contains("fewest available during the rollout: 3"), "{update:?}");
}

/// `n` schedulable nodes in one zone, each with its own hostname label.
fn one_zone_nodes(n: usize) -> State {
    let text: String = (1..=n)
        .map(|i| {
            format!(
                "---\nkind: Node\nmetadata: {{name: node-{i}, labels: {{kubernetes.io/hostname: node-{i}, topology.kubernetes.io/zone: a}}}}\nstatus: {{allocatable: {{cpu: '8', memory: 32Gi, pods: '110'}}}}\n"
            )
        })
        .collect();
    State::from_yaml_str(&text).unwrap()
}

/// argo-cd's HA install (tests/realworld/packages/argo-cd-ha, upstream manifests/ha/install.yaml, read as it
/// is): `argocd-redis-ha-haproxy` runs 3 replicas with required pod anti-affinity on
/// `kubernetes.io/hostname` and the default strategy (25%/25%: maxSurge 1, maxUnavailable 0 at 3
/// replicas). On 3 nodes the surge pod has no node (each holds an old pod it must avoid) and no old
/// pod may go first: the rolling update deadlocks, and a drain leaves the evicted pod Pending. On 4
/// nodes both finish.
#[test]
fn argo_cd_ha_haproxy_anti_affinity_deadlocks_its_rollout_on_three_nodes() {
    let corpus = workspace_file("tests/realworld/packages/argo-cd-ha/install.yaml");
    let haproxy: Vec<kix_yaml::Value> = objects(&corpus)
        .into_iter()
        .filter(|o| {
            kix_kube::value::str_at(o, &["kind"]) == Some("Deployment")
                && kix_kube::value::str_at(o, &["metadata", "name"]) == Some("argocd-redis-ha-haproxy")
        })
        .collect();
    assert_eq!(haproxy.len(), 1);
    let request = verify_request(Deployment, "default", "argocd-redis-ha-haproxy", Level::Node, None);
    let three = verify_workloads(&one_zone_nodes(3), &haproxy, &request).remove(0);
    assert!(scenario(&three, "rollout").pass, "{three:#?}");
    assert!(!three.meets_level);
    let update = scenario(&three, "rolling-update");
    assert!(!update.pass, "{update:?}");
    let deadlock = update.findings.iter().find(|f| f.message.contains("deadlocks")).expect("a deadlock finding");
    // Issue 41: the message says which limit blocks, with the values.
    assert!(
        deadlock.message.contains(
            "maxUnavailable 0 lets no old pod stop until a new one runs, and the maxSurge 1 new pods find no node"
        ),
        "{deadlock}"
    );
    assert!(deadlock.message.contains("3 node(s) didn't match pod anti-affinity rules"), "{deadlock}");
    let drain = scenario(&three, "drain");
    assert!(!drain.pass);
    assert!(
        drain.findings.iter().all(|f| f.message.contains("stays Pending") && f.message.contains("anti-affinity")),
        "{drain:?}"
    );
    let four = verify_workloads(&one_zone_nodes(4), &haproxy, &request).remove(0);
    for s in ["rollout", "rolling-update", "drain"] {
        assert!(scenario(&four, s).pass, "{s}: {four:#?}");
    }
}

/// StatefulSet updates (pkg/controller/statefulset/stateful_set_control.go, `updateStatefulSet`): only
/// ordinals at or above `partition` are replaced, highest first; `OnDelete` replaces nothing.
#[test]
fn a_statefulset_update_respects_partition_and_on_delete() {
    let verdict = |strategy: &str| {
        let manifest = DB.replacen("  serviceName: db\n", &format!("  serviceName: db\n{strategy}"), 1);
        verdict_of(StatefulSet, &manifest, "db", Level::Zone, None)
    };
    let partitioned = verdict("  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {partition: 2}\n");
    let update = scenario(&partitioned, "rolling-update");
    assert!(update.pass, "{update:?}");
    assert!(
        update.findings[0].message.starts_with("partition 2: 1 updated highest ordinal first, one at a time (db-2)"),
        "{update:?}"
    );
    let on_delete = verdict("  updateStrategy: {type: OnDelete}\n");
    let update = scenario(&on_delete, "rolling-update");
    assert!(update.pass && update.findings[0].message.contains("OnDelete"), "{update:?}");
}

// Issue 21: each step records what it did to the workload's pods, as the report draws them. A zone
// loss: the pods in the failed zone are gone, the replacements placed where the domain loss says,
// nothing else moves. A drain: the drained node's pods are gone and placed elsewhere. The rolling
// update: every old pod gone, as many new ones placed. The tie-break: its later steps start from
// its adversarial placement.
#[test]
fn steps_record_what_each_scenario_does_to_the_placement() {
    let v = run(WEB, "web", Level::Zone);
    assert_eq!(v.placement.len(), 3, "{v:#?}");
    let losses = &scenario(&v, "domain-loss").steps;
    assert_eq!(losses.len(), 3);
    for (step, loss) in losses.iter().zip(&v.domain_losses) {
        assert_eq!(step.step, loss.domain);
        assert_eq!(step.nodes.len(), 2, "both nodes of the zone fail: {step:?}");
        assert_eq!(step.replaced_after_seconds, Some(300));
        let in_zone: Vec<(&String, &String)> = v.placement.iter().filter(|(_, n)| step.nodes.contains(n)).collect();
        assert_eq!(step.gone.iter().collect::<Vec<_>>(), in_zone, "{step:?}");
        assert_eq!(step.placed, loss.replacements, "{step:?}");
        assert_eq!(step.apply(&v.placement).len(), 3, "{step:?}");
    }
    let drains = &scenario(&v, "drain").steps;
    assert_eq!(drains.len(), 3);
    for step in drains {
        assert_eq!(step.gone.len(), 1, "{step:?}");
        assert!(step.gone.values().all(|node| step.nodes.contains(node)), "{step:?}");
        assert_eq!(step.placed.len(), 1, "{step:?}");
        assert!(step.placed.values().all(|node| !step.nodes.contains(node)), "{step:?}");
    }
    let update = &scenario(&v, "rolling-update").steps;
    assert_eq!(update.len(), 1);
    assert_eq!(update[0].gone, v.placement);
    assert_eq!(update[0].placed.len(), 3);
    let tie_break = &scenario(&v, "tie-break").steps;
    assert!(!tie_break[0].adversarial, "the adversarial placement starts from kix's");
    assert_eq!(tie_break[0].apply(&v.placement).len(), 3);
    assert!(tie_break.len() > 1 && tie_break[1..].iter().all(|s| s.adversarial), "{tie_break:?}");
}

// Issue 39, part 1: a StatefulSet under an autoscaler scales down from the highest ordinal
// (pkg/controller/statefulset/stateful_set_control.go deletes the condemned pods in descending
// ordinal order), with no draw to break: from 5 back to 2, db-4, db-3 and db-2 go and db-0 and db-1,
// placed first in two zones by the hard zone spread, stay.
#[test]
fn a_statefulset_scales_down_from_its_highest_ordinal() {
    let state = State::from_yaml_str(THREE_ZONES).unwrap();
    let mut request = verify_request(StatefulSet, "shop", "db", Level::Zone, Some(2));
    request.workloads[0].max_replicas = Some(5);
    let verdict = verify_workloads(&state, &objects(DB), &request).remove(0);
    let down = scenario(&verdict, "scale-down");
    assert!(down.pass, "{down:#?}");
    let text = &down.findings[0].message;
    assert!(
        text.starts_with("scaled from 5 to 2, the StatefulSet controller deletes the highest ordinals first (4, 3, 2)"),
        "{text}"
    );
    let left: Vec<String> = down.steps[0].apply(&verdict.placement).into_keys().collect();
    assert_eq!(left, ["db-0", "db-1"]);
    // Without a maximum above the minimum there is no scale-down to run.
    request.workloads[0].max_replicas = Some(2);
    let verdict = verify_workloads(&state, &objects(DB), &request).remove(0);
    assert!(verdict.scenarios.iter().all(|s| s.scenario.as_str() != "scale-down"), "{verdict:#?}");
}

// Issue 39, part 3: a node group's next node is added for a Pending pod, never in the zone the
// scenario lost, and nodes not yet added are no nodes of the cluster. Three zones of one 600m node
// each hold web's three 500m pods; each zone's group may add one node (`<zone>2`, absent until added).
// A zone's loss leaves its replacement Pending on the full survivors: the hard zone spread
// (nodeTaintsPolicy Honor drops the lost zone) admits either other zone, and the first group that is
// not the lost zone's adds a node there.
#[test]
fn the_autoscaler_adds_a_node_where_the_replacement_fits_never_in_the_lost_zone() {
    let mut state = tiny_nodes(&[("a1", "a"), ("b1", "b"), ("c1", "c"), ("a2", "a"), ("b2", "b"), ("c2", "c")]);
    for node in state.nodes.iter_mut().filter(|n| n.name.ends_with('2')) {
        node.absent = true;
    }
    let mut request = request("web", Level::Zone);
    request.node_groups = ["a", "b", "c"]
        .iter()
        .map(|z| kix_sim::NodeGroup { pool: "pool".into(), zone: Some(z.to_string()), nodes: vec![format!("{z}2")] })
        .collect();
    let v = verify_workloads(&state, &objects(WEB), &request).remove(0);
    assert!(v.meets_level, "{v:#?}");
    // The rollout fits the three present nodes: nothing added.
    assert!(scenario(&v, "rollout").findings.is_empty(), "{v:#?}");
    for loss in &v.domain_losses {
        let lost = loss.domain.trim_start_matches("zone ");
        let placed: Vec<&String> = loss.replacements.values().collect();
        assert_eq!(placed.len(), 1, "{loss:?}");
        assert!(placed[0].ends_with('2') && !placed[0].starts_with(lost), "{loss:?}");
    }
    let facts: Vec<&str> = scenario(&v, "domain-loss").findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(facts.len(), 3, "{facts:?}");
    assert!(facts.iter().all(|f| f.contains("the cluster autoscaler adds") && f.ends_with("which waits 120 s for it")));
    // Without the groups the same replacements find no room, and the message counts three nodes, not six.
    request.node_groups.clear();
    let v = verify_workloads(&state, &objects(WEB), &request).remove(0);
    let pending: Vec<&String> = v.domain_losses.iter().flat_map(|l| l.pending.values()).collect();
    assert_eq!(pending.len(), 3, "{v:#?}");
    assert!(pending.iter().all(|m| m.starts_with("0/3 nodes are available")), "{pending:?}");
}

/// Nodes `(name, zone)` with hostname and zone labels and room for one 500m pod each.
fn tiny_nodes(list: &[(&str, &str)]) -> State {
    let items: String = list
        .iter()
        .map(|(n, z)| {
            format!(
                "- {{kind: Node, metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, topology.kubernetes.io/zone: {z}}}}}, status: {{allocatable: {{cpu: 600m, memory: 16Gi, pods: '110'}}}}}}\n"
            )
        })
        .collect();
    State::from_yaml_str(&format!("kind: List\nitems:\n{items}")).unwrap()
}

// Issue 39, R9's minDomains decision, proved: the shipped three-zone Deployment with `minDomains: 3` on
// its hard zone spread strands every zone loss's replacement. Below minDomains eligible domains
// (the lost zone's nodes, tainted unreachable, are none under nodeTaintsPolicy Honor) filtering.go
// counts the global minimum as 0, so zone b and c, holding one pod each, give skew 1 + 1 - 0 = 2 > 1.
#[test]
fn min_domains_strands_the_replacements_of_a_zone_loss() {
    let with = WEB.replacen(
        "topologyKey: topology.kubernetes.io/zone\n        whenUnsatisfiable: DoNotSchedule\n",
        "topologyKey: topology.kubernetes.io/zone\n        whenUnsatisfiable: DoNotSchedule\n        minDomains: 3\n",
        1,
    );
    assert_ne!(with, WEB);
    let v = run(&with, "web", Level::Zone);
    let losses = scenario(&v, "domain-loss");
    assert!(!losses.pass, "{losses:#?}");
    assert_eq!(losses.findings.iter().filter(|f| f.kind == FindingKind::ReplacementPending).count(), 3, "{losses:#?}");
    assert!(run(WEB, "web", Level::Zone).meets_level);
}
