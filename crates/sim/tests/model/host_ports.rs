//! Host ports in the verify scenarios (issue 43): NodePorts keeps a second pod asking for a taken
//! `hostPort` off a node, so a StatefulSet of three such pods cannot all start on one node, and a
//! drain whose replacement finds the port taken on every other node does not finish.

use crate::support::verify_request;
use kix_kube::kind::WorkloadKind::{Deployment, StatefulSet};
use kix_kube::level::Level;
use kix_sim::{State, WorkloadVerdict, verify_workloads};

const REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// Nodes with hostname labels, 4 CPU and 16Gi each.
fn nodes(names: &[&str]) -> State {
    let items: String = names
        .iter()
        .map(|n| {
            format!(
                "- {{kind: Node, metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}}}}}, status: {{allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}}}}}\n"
            )
        })
        .collect();
    State::from_yaml_str(&format!("kind: List\nitems:\n{items}")).unwrap()
}

/// A workload of `kind` in namespace `nats` whose one container takes host port 4222, with a
/// `maxUnavailable: 1` budget.
fn manifest(kind: &str, name: &str, replicas: u32, host_port: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: {name}, namespace: nats}}\nspec:\n  replicas: {replicas}\n  serviceName: {name}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - name: nats\n        resources: {{requests: {{cpu: 100m}}}}\n        ports: [{{name: client, containerPort: 4222, hostPort: {host_port}}}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: nats}}\nspec:\n  maxUnavailable: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n"
    )
}

fn verdict(state: &State, manifest: &str, kind: kix_kube::kind::WorkloadKind, level: Level) -> WorkloadVerdict {
    let objects = kix_yaml::from_str_all(manifest).unwrap();
    let mut verdicts = verify_workloads(state, &objects, &verify_request(kind, "nats", "nats", level, None));
    assert_eq!(verdicts.len(), 1);
    verdicts.remove(0)
}

#[test]
fn three_host_port_replicas_do_not_all_start_on_one_node() {
    let state = nodes(&["n1"]);
    let v = verdict(&state, &manifest("StatefulSet", "nats", 3, 4222), StatefulSet, Level::Pod);
    assert!(!v.meets_level, "{v:#?}");
    // The first pod takes the port; the other two stay Pending with NodePorts' reason.
    assert_eq!(v.placement.keys().collect::<Vec<_>>(), ["nats-0"], "{v:#?}");
    let rollout = v.scenarios.iter().find(|s| s.scenario.as_str() == "rollout").expect("a rollout scenario");
    assert!(!rollout.pass, "{rollout:?}");
    for pod in ["nats-1", "nats-2"] {
        assert!(
            rollout.findings.iter().any(|f| f.message
                == format!("{pod} Pending: 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.")),
            "{rollout:?}"
        );
    }
    // Without the host port the same StatefulSet starts all three pods on the node.
    let v = verdict(&state, &manifest("StatefulSet", "nats", 3, 0), StatefulSet, Level::Pod);
    assert_eq!(v.placement.len(), 3, "{v:#?}");
    assert!(v.scenarios.iter().find(|s| s.scenario.as_str() == "rollout").is_some_and(|s| s.pass), "{v:#?}");
}

#[test]
fn a_drain_whose_replacement_finds_every_port_taken_fails() {
    // Two nodes, two replicas holding 4222 on each: the evicted pod's replacement has nowhere to go.
    let state = nodes(&["n1", "n2"]);
    let v = verdict(&state, &manifest("Deployment", "nats", 2, 4222), Deployment, Level::Pod);
    let drain = v.scenarios.iter().find(|s| s.scenario.as_str() == "drain").expect("a drain scenario");
    assert!(!drain.pass, "{drain:?}");
    assert!(
        drain.findings.iter().any(|f| f.message.contains("stays Pending") && f.message.contains(REASON)),
        "{drain:?}"
    );
    // A third node gives the replacement a free port: the drain finishes.
    let state = nodes(&["n1", "n2", "n3"]);
    let v = verdict(&state, &manifest("Deployment", "nats", 2, 4222), Deployment, Level::Pod);
    let drain = v.scenarios.iter().find(|s| s.scenario.as_str() == "drain").unwrap();
    assert!(drain.pass, "{drain:?}");
}
