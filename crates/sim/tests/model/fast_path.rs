//! The fast path (node classes and usage buckets) must choose exactly the node the
//! reference path (every plugin on every node) chooses. Varied states come from a seeded
//! generator: zones with and without labels, taints (tolerated or not, NoSchedule and
//! PreferNoSchedule), cordons, unequal allocatable, pods in two namespaces, terminating
//! pods, hard and soft spread with both node policies and minDomains, node affinity, and the
//! system default constraints of controller-owned pods. With inter-pod affinity (pods with
//! required or preferred pod affinity and anti-affinity, existing pods with required
//! anti-affinity, Namespace objects for `namespaceSelector`, `matchLabelKeys`, terms on two keys),
//! `select` reads InterPodAffinity from counts kept as pods bind and leave (on the grouped path
//! where it applies): the second test checks that it still agrees with the reference cycle (which
//! scans every bound pod), that the failure message and the rejections counted from node groups
//! are the reference's, and that the grouped path resumes once the last pod with terms is gone.

use kix_sim::snapshot::parse_pod;
use kix_sim::{Cluster, State};
use std::fmt::Write as _;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

fn state(rng: &mut Rng, affinity: bool) -> String {
    let mut out = String::new();
    if affinity {
        out.push_str("---\nkind: Namespace\nmetadata: {name: other, labels: {team: a}}\n");
    }
    let nodes = 2 + rng.below(9);
    for i in 0..nodes {
        let mut labels = format!("kubernetes.io/hostname: n{i}");
        if rng.below(8) != 0 {
            let _ = write!(labels, ", topology.kubernetes.io/zone: {}", rng.pick(&["a", "b", "c"]));
        }
        if rng.below(2) == 0 {
            let _ = write!(labels, ", rack: {}", rng.pick(&["r1", "r2"]));
        }
        let taints = match rng.below(6) {
            0 => "[{key: dedicated, value: db, effect: NoSchedule}]",
            1 => "[{key: soft, value: x, effect: PreferNoSchedule}]",
            2 => "[{key: node.kubernetes.io/unreachable, effect: NoSchedule}]",
            _ => "[]",
        };
        let cpu = rng.pick(&["2", "4"]);
        let pods = rng.pick(&["3", "110"]);
        let cordon = rng.below(10) == 0;
        let _ = writeln!(
            out,
            "---\nkind: Node\nmetadata: {{name: n{i}, labels: {{{labels}}}}}\nspec: {{unschedulable: {cordon}, taints: {taints}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '{pods}'}}}}"
        );
    }
    for p in 0..rng.below(12) {
        let node = rng.below(nodes);
        let ns = rng.pick(&["default", "other"]);
        let app = rng.pick(&["web", "db"]);
        let deleting = if rng.below(6) == 0 { "deletionTimestamp: '2026-01-01T00:00:00Z', " } else { "" };
        let cpu = rng.pick(&["0", "250m", "1"]);
        let terms = if affinity {
            let terms = pod_terms(rng);
            if terms.is_empty() { terms } else { format!(", affinity: {{{terms}}}") }
        } else {
            String::new()
        };
        let rev = rng.pick(&["r1", "r2"]);
        let _ = writeln!(
            out,
            "---\nkind: Pod\nmetadata: {{name: e{p}, namespace: {ns}, {deleting}labels: {{app: {app}, rev: {rev}}}}}\nspec: {{nodeName: n{node}, containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]{terms}}}"
        );
    }
    out
}

/// Pod affinity terms for a generated pod: a `podAffinity`/`podAntiAffinity` entry, or nothing.
fn pod_terms(rng: &mut Rng) -> String {
    let key = rng.pick(&["kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack"]);
    let app = rng.pick(&["web", "db"]);
    let term = format!("{{labelSelector: {{matchLabels: {{app: {app}}}}}, topologyKey: {key}}}");
    let everywhere = format!(
        "{{labelSelector: {{matchLabels: {{app: {app}}}}}, namespaceSelector: {{matchLabels: {{team: a}}}}, topologyKey: {key}}}"
    );
    let all_namespaces = format!("{{labelSelector: {{}}, namespaceSelector: {{}}, topologyKey: {key}}}");
    let listed = format!(
        "{{labelSelector: {{matchLabels: {{app: {app}}}}}, namespaces: [other], matchLabelKeys: [rev], topologyKey: {key}}}"
    );
    match rng.below(11) {
        4 => format!("podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{listed}]}}"),
        5 => format!(
            "podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}, {{labelSelector: {{matchLabels: {{app: {app}}}}}, topologyKey: kubernetes.io/hostname}}]}}"
        ),
        6 => format!(
            "podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{everywhere}], preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 9, podAffinityTerm: {all_namespaces}}}]}}"
        ),
        7 => format!("podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{listed}]}}"),
        0 => format!("podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}]}}"),
        1 => format!("podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}]}}"),
        2 => format!(
            "podAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 7, podAffinityTerm: {everywhere}}}]}}"
        ),
        3 => format!(
            "podAntiAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 3, podAffinityTerm: {term}}}]}}"
        ),
        _ => String::new(),
    }
}

fn incoming(rng: &mut Rng, name: &str, with_terms: bool) -> String {
    let mut spec = String::new();
    let requests = rng.pick(&["{}", "{cpu: 500m, memory: 1Gi}", "{cpu: '1'}"]);
    let _ = writeln!(spec, "  containers: [{{name: c, resources: {{requests: {requests}}}}}]");
    if rng.below(3) == 0 {
        spec.push_str("  tolerations: [{key: dedicated, operator: Exists}]\n");
    }
    let mut affinity = Vec::new();
    if rng.below(4) == 0 {
        affinity.push("requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: NotIn, values: [c]}]}]}");
    }
    if rng.below(4) == 0 {
        affinity.push("preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: {matchExpressions: [{key: rack, operator: In, values: [r1]}]}}]");
    }
    let mut sections = Vec::new();
    if !affinity.is_empty() {
        sections.push(format!("nodeAffinity: {{{}}}", affinity.join(", ")));
    }
    if with_terms {
        sections.push(pod_terms(rng));
    }
    sections.retain(|s| !s.is_empty());
    if !sections.is_empty() {
        let _ = writeln!(spec, "  affinity: {{{}}}", sections.join(", "));
    }
    let constraints = rng.below(3);
    if constraints > 0 {
        spec.push_str("  topologySpreadConstraints:\n");
    }
    let mut keys = vec!["topology.kubernetes.io/zone", "rack", "kubernetes.io/hostname"];
    for _ in 0..constraints {
        let key = keys.remove(rng.below(keys.len() as u64) as usize);
        let when = rng.pick(&["DoNotSchedule", "ScheduleAnyway"]);
        let skew = 1 + rng.below(2);
        let mut extra = String::new();
        if rng.below(2) == 0 {
            extra.push_str(", nodeTaintsPolicy: Honor");
        }
        if rng.below(4) == 0 {
            extra.push_str(", nodeAffinityPolicy: Ignore");
        }
        if when == "DoNotSchedule" && rng.below(3) == 0 {
            extra.push_str(", minDomains: 3");
        }
        // Mostly one selector; sometimes another one, or none (a nil selector counts nothing).
        let selector = match rng.below(8) {
            0 => "",
            1 => ", labelSelector: {matchLabels: {app: db}}",
            _ => ", labelSelector: {matchLabels: {app: web}}",
        };
        let _ =
            writeln!(spec, "  - {{maxSkew: {skew}, topologyKey: {key}, whenUnsatisfiable: {when}{selector}{extra}}}");
    }
    let rev = rng.pick(&["r1", "r2"]);
    format!(
        "kind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: web, rev: {rev}}}}}\nspec:\n{spec}"
    )
}

#[test]
fn fast_path_chooses_the_reference_node_on_varied_states() {
    let mut decided = 0;
    for seed in 1..=400u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let text = state(&mut rng, false);
        let state = State::from_yaml_str(&text).unwrap();
        let mut cluster = Cluster::new(&state);
        // Place a few pods in sequence, comparing both paths at every step.
        for step in 0..4 {
            let yaml = incoming(&mut rng, &format!("p{step}"), false);
            let mut pod = parse_pod(&kix_yaml::from_str(&yaml).unwrap(), "default").unwrap();
            if pod.spec.spread.is_empty() && rng.below(2) == 0 {
                // Owned by a controller: the system default constraints apply.
                let selector =
                    kix_kube::selector::Selector::from_value(&kix_yaml::from_str("matchLabels: {app: web}").unwrap());
                std::sync::Arc::make_mut(&mut pod.spec).default_selector = Some(selector.unwrap());
            }
            let reference = cluster.cycle(&pod).selected;
            let fast = cluster.select(&pod);
            assert_eq!(fast, reference, "seed {seed} step {step}\n{text}\n---\n{yaml}");
            if let Some(node) = reference {
                decided += 1;
                cluster.bind(pod, &node).unwrap();
            }
        }
    }
    // The generator must exercise placements, not only Pending pods.
    assert!(decided > 400, "only {decided} placements");
}

#[test]
fn fast_path_agrees_with_inter_pod_affinity_and_resumes_without_it() {
    let mut decided = 0;
    let mut refused = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let text = state(&mut rng, true);
        let state = State::from_yaml_str(&text).unwrap();
        let mut cluster = Cluster::new(&state);
        for step in 0..5 {
            let yaml = incoming(&mut rng, &format!("p{step}"), true);
            let pod = parse_pod(&kix_yaml::from_str(&yaml).unwrap(), "default").unwrap();
            let cycle = cluster.cycle(&pod);
            let fast = cluster.select(&pod);
            assert_eq!(fast, cycle.selected, "seed {seed} step {step}\n{text}\n---\n{yaml}");
            assert_eq!(
                cluster.failure_message(&pod),
                cycle.failure_message(),
                "seed {seed} step {step}\n{yaml}\n{:?}",
                cycle.nodes
            );
            for reason in cycle.reasons().keys() {
                let outside: Vec<String> = cycle.nodes.keys().take(rng.below(3) as usize).cloned().collect();
                let want = cycle.nodes.iter().any(|(n, o)| {
                    !outside.contains(n) && matches!(o, kix_sim::Outcome::Rejected(r) if r.reasons == [reason.as_str()])
                });
                assert_eq!(cluster.rejects_only_for(&pod, reason, &outside), want, "seed {seed} step {step} {reason}");
            }
            refused += cycle.reasons().keys().filter(|r| r.contains("affinity")).count();
            if let Some(node) = cycle.selected {
                decided += 1;
                cluster.bind(pod, &node).unwrap();
            }
        }
        // Without any pod that has terms, both paths still agree (the grouped path is back in use).
        let with_terms: Vec<(String, String)> = cluster
            .pods()
            .filter(|(p, _)| !p.spec.pod_affinity.is_empty())
            .map(|(p, _)| (p.namespace.clone(), p.name.clone()))
            .collect();
        for (namespace, name) in with_terms {
            cluster.remove(&namespace, &name);
        }
        let plain = parse_pod(&kix_yaml::from_str(&incoming(&mut rng, "q", false)).unwrap(), "default").unwrap();
        assert_eq!(cluster.select(&plain), cluster.cycle(&plain).selected, "seed {seed} after removal\n{text}");
    }
    assert!(decided > 400, "only {decided} placements");
    // The generator must also produce pods that inter-pod affinity refuses somewhere.
    assert!(refused > 50, "only {refused} affinity refusals");
}
