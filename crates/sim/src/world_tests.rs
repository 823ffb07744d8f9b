//! The journalled scenarios against the reference engine: random clusters (zones, taints,
//! cordons, full nodes, snapshot pods with and without controllers, snapshot budgets) and random
//! Deployments and StatefulSets (spread constraints with both taint policies, unreachable
//! tolerations, surge and unavailability, partitions, budgets, required and preferred pod affinity
//! and anti-affinity on the hostname and the zone), verified at every level twice:
//! once with every scenario rolled back through the journal and the counters, once on a copy per
//! scenario with node classes rebuilt, pods counted by scanning and every pod scheduled by the
//! reference cycle (InterPodAffinity from every bound pod). The verdicts must be equal.

use crate::scenarios::run;
use crate::snapshot::State;
use crate::verdict::{ScenarioRequest, WorkloadLevel};
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use std::fmt::Write as _;

use crate::test_rng::Rng;

fn state(rng: &mut Rng) -> String {
    let mut out = String::new();
    let nodes = 3 + rng.below(12);
    for i in 0..nodes {
        let zone = rng.pick(&["a", "b", "c"]);
        let taints = match rng.below(8) {
            0 => "[{key: dedicated, effect: NoSchedule}]",
            1 => "[{key: soft, effect: PreferNoSchedule}]",
            _ => "[]",
        };
        let cordon = rng.below(12) == 0;
        let cpu = rng.pick(&["1", "4", "4", "4"]);
        let pods = rng.pick(&["3", "5", "110"]);
        let _ = writeln!(
            out,
            "---\nkind: Node\nmetadata: {{name: n{i:02}, labels: {{kubernetes.io/hostname: n{i:02}, topology.kubernetes.io/zone: {zone}}}}}\nspec: {{unschedulable: {cordon}, taints: {taints}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '{pods}'}}}}"
        );
    }
    for p in 0..rng.below(10) {
        let owner = match rng.below(4) {
            0 => "",
            1 => ", ownerReferences: [{kind: DaemonSet, name: ds, controller: true}]",
            _ => ", ownerReferences: [{kind: ReplicaSet, name: cache-1, controller: true}]",
        };
        let app = rng.pick(&["cache", "cache", "web"]);
        let _ = writeln!(
            out,
            "---\nkind: Pod\nmetadata: {{name: s{p}, namespace: shop, labels: {{app: {app}}}{owner}}}\nspec: {{nodeName: n{:02}, containers: [{{name: c, resources: {{requests: {{cpu: 250m}}}}}}]}}\nstatus: {{phase: Running, conditions: [{{type: Ready, status: 'True'}}]}}",
            rng.below(nodes)
        );
    }
    if rng.below(2) == 0 {
        out.push_str("---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: cache, namespace: shop}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: cache}}}\n");
    }
    out
}

fn spread(rng: &mut Rng, app: &str) -> String {
    let mut out = String::new();
    if rng.below(2) != 0 {
        let policy = rng.pick(&["Honor", "Ignore"]);
        let _ = write!(
            out,
            "\n      - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: {policy}, labelSelector: {{matchLabels: {{app: {app}}}}}}}"
        );
    }
    if rng.below(3) != 0 {
        let when = rng.pick(&["DoNotSchedule", "ScheduleAnyway"]);
        let _ = write!(
            out,
            "\n      - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: {app}}}}}}}"
        );
    }
    if out.is_empty() { String::new() } else { format!("\n      topologySpreadConstraints:{out}") }
}

fn workloads(rng: &mut Rng) -> String {
    let tolerations = match rng.below(4) {
        0 => "\n      tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}]",
        1 => {
            "\n      tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 60}]"
        }
        _ => "",
    };
    let strategy = match rng.below(4) {
        0 => "{type: Recreate}",
        1 => "{rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}",
        2 => "{rollingUpdate: {maxSurge: 2, maxUnavailable: 0}}",
        _ => "{rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}",
    };
    let cpu = rng.pick(&["100m", "500m", "1"]);
    // Pod affinity terms: required and preferred, affinity and anti-affinity, hostname and zone,
    // own namespace or every namespace (the snapshot's cache pods count for `{app: cache}`).
    let affinity = match rng.below(7) {
        0 => {
            "\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}}"
        }
        1 => {
            "\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: topology.kubernetes.io/zone}]}}"
        }
        2 => {
            "\n      affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}}]}}"
        }
        3 => {
            "\n      affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: cache}}, namespaceSelector: {}, topologyKey: topology.kubernetes.io/zone}]}}"
        }
        _ => "",
    };
    let mut out = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\nspec:\n  replicas: {}\n  strategy: {strategy}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers: [{{name: web, resources: {{requests: {{cpu: {cpu}}}}}}}]{tolerations}{affinity}{}\n",
        1 + rng.below(8),
        spread(rng, "web")
    );
    let budget = rng.pick(&["maxUnavailable: 1", "minAvailable: 50%", "minAvailable: 2", ""]);
    if !budget.is_empty() {
        let _ = write!(
            out,
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web, namespace: shop}}\nspec: {{{budget}, selector: {{matchLabels: {{app: web}}}}}}\n"
        );
    }
    let _ = write!(
        out,
        "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db, namespace: shop}}\nspec:\n  replicas: {}\n  serviceName: db\n  updateStrategy: {{rollingUpdate: {{partition: {}}}}}\n  selector: {{matchLabels: {{app: db}}}}\n  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers: [{{name: db, resources: {{requests: {{cpu: 250m}}}}}}]{}\n",
        1 + rng.below(4),
        rng.below(2),
        spread(rng, "db")
    );
    out
}

#[test]
fn journalled_scenarios_give_the_reference_engines_verdicts() {
    let levels = [Level::None, Level::Pod, Level::Node, Level::Zone, Level::Zone, Level::Node];
    let mut failing = 0;
    for seed in 1..=120u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let state = State::from_yaml_str(&state(&mut rng)).unwrap();
        let objects = kix_yaml::from_str_all(&workloads(&mut rng)).unwrap();
        let level = |rng: &mut Rng| levels[rng.below(levels.len() as u64) as usize];
        let request = ScenarioRequest {
            workloads: vec![
                WorkloadLevel {
                    kind: WorkloadKind::Deployment,
                    namespace: "shop".into(),
                    name: "web".into(),
                    level: level(&mut rng),
                    min_replicas: None,
                    max_replicas: None,
                    group: None,
                    group_scope: 0,
                    survive: Default::default(),
                },
                WorkloadLevel {
                    kind: WorkloadKind::StatefulSet,
                    namespace: "shop".into(),
                    name: "db".into(),
                    level: level(&mut rng),
                    min_replicas: None,
                    max_replicas: None,
                    group: None,
                    group_scope: 0,
                    survive: Default::default(),
                },
            ],
            node_key: "kubernetes.io/hostname".into(),
            zone_key: "topology.kubernetes.io/zone".into(),
            kinds: Default::default(),
            volumes: Default::default(),
            node_groups: Vec::new(),
        };
        let journalled = run(&state, &objects, &request, false);
        let reference = run(&state, &objects, &request, true);
        assert_eq!(journalled.len(), 2, "seed {seed}");
        assert_eq!(journalled, reference, "seed {seed}");
        failing += journalled.iter().filter(|v| !v.meets_level).count();
    }
    // The generator reaches both verdicts.
    assert!(failing > 10 && failing < 150, "{failing} failing verdicts");
}

/// The adversarial tie-break placement on the grouped path against the reference cycle, at level
/// node (the hostname key: per-node counts of the workload's pods join the group key) and at
/// level zone: every replica lands on the node the reference ranking picks. The snapshot keeps
/// pods the workloads own (some terminating, which the tie-break counts too) and some nodes
/// without a hostname label (their domain holds nothing).
#[test]
fn tie_break_on_the_grouped_path_places_as_the_reference_cycle() {
    use crate::budget::Budget;
    use crate::cluster::Cluster;
    use crate::objects::Controller;
    use crate::workload::Workload;
    use std::collections::BTreeMap;
    let mut grouped_hostname = 0;
    for seed in 1..=150u64 {
        let mut rng = Rng(seed.wrapping_mul(0xA076_1D64_78BD_642F));
        let mut text = state(&mut rng);
        for p in 0..rng.below(6) {
            let deleting = if rng.below(2) == 0 { ", deletionTimestamp: '2026-01-01T00:00:00Z'" } else { "" };
            let _ = writeln!(
                text,
                "---\nkind: Pod\nmetadata: {{name: own{p}, namespace: shop, labels: {{app: {}}}{deleting}}}\nspec: {{nodeName: n{:02}, containers: [{{name: c}}]}}",
                rng.pick(&["web", "db"]),
                rng.below(3)
            );
        }
        if rng.below(3) == 0 {
            text.push_str("---\nkind: Node\nmetadata: {name: x-bare, labels: {topology.kubernetes.io/zone: a}}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n");
        }
        let state = State::from_yaml_str(&text).unwrap();
        let objects = kix_yaml::from_str_all(&workloads(&mut rng)).unwrap();
        let workloads: Vec<Workload> =
            objects.iter().filter_map(|o| Workload::from_object(o, "default").ok().flatten()).collect();
        let budgets: Vec<Budget> = Vec::new();
        let scales: BTreeMap<(String, Controller), i64> = BTreeMap::new();
        let key = rng.pick(&["kubernetes.io/hostname", "kubernetes.io/hostname", "topology.kubernetes.io/zone"]);
        let mut fast = super::World::new(Cluster::new(&state), &workloads, &budgets, &scales);
        let mut reference = fast.clone();
        reference.reference = true;
        for (w, workload) in workloads.iter().enumerate() {
            let spec = workload.pod_spec(0);
            let (mut held_fast, mut held_reference) = (fast.held(w, Some(key)), reference.held(w, Some(key)));
            for index in 0..workload.replicas.max(0) as usize + 2 {
                let pod = workload.pod(&spec, 0, index);
                if key == "kubernetes.io/hostname"
                    && fast.cluster().clone().select_ranked(&pod, &crate::cluster::Rank::None).is_some()
                {
                    grouped_hostname += 1;
                }
                let a = fast.schedule_against(pod.clone(), w, Some(key), &mut held_fast);
                let b = reference.schedule_against(pod, w, Some(key), &mut held_reference);
                assert_eq!(a, b, "seed {seed} workload {w} replica {index} key {key}");
            }
        }
    }
    // The grouped path was taken under the hostname key, not only the reference fallback.
    assert!(grouped_hostname > 200, "{grouped_hostname} grouped hostname placements");
}
