//! Tests of reading Nodes, Pods and snapshots into the scheduler's view.

use super::*;

fn spec(yaml: &str) -> PodSpec {
    parse_pod_spec(&kix_yaml::from_str(yaml).unwrap()).unwrap()
}

#[test]
fn requests_follow_the_init_container_max_rule() {
    let s = spec(
        "containers: [{name: a, resources: {requests: {cpu: 100m, memory: 1Gi}}}, {name: b, resources: {requests: {cpu: 200m}}}]\n\
         initContainers: [{name: i, resources: {requests: {cpu: '1', memory: 10Mi}}}]",
    );
    assert_eq!(s.requests.milli_cpu, 1000);
    assert_eq!(s.requests.memory, 1 << 30);
    // b has no memory request: the scoring default 200Mi is added for it.
    assert_eq!(s.nonzero_requests.memory, (1 << 30) + DEFAULT_MEMORY_REQUEST);
}

#[test]
fn list_and_stream_read_the_same() {
    let stream = "kind: Node\nmetadata: {name: b}\n---\nkind: Node\nmetadata: {name: a}\n";
    let list = "kind: List\nitems:\n- {kind: Node, metadata: {name: a}}\n- {kind: Node, metadata: {name: b}}\n";
    let a = State::from_yaml_str(stream).unwrap();
    assert_eq!(a, State::from_yaml_str(list).unwrap());
    assert_eq!(a.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    // Outside the fast reader's subset (an anchor and alias, a block scalar): read by the located
    // loader, to the same state; and its errors are the loader's.
    let located = "kind: Node\nmetadata: &m {name: b}\n---\nkind: ConfigMap\ndata:\n  x: |\n    text\n---\nkind: Node\nmetadata: {name: a}\n";
    assert!(kix_yaml::fast_stream(located, &kix_yaml::Limits::SNAPSHOT).is_none());
    assert_eq!(State::from_yaml_str(located).unwrap(), a);
    assert_eq!(
        State::from_yaml_str("kind: Node\n---\nkind: List\nitems: 3\n"),
        Err("`items` of a List must be a list".into())
    );
    assert!(State::from_yaml_str("kind: Node\nmetadata: {name: a}\n---\na: *x\n").unwrap_err().contains("alias"));
}

#[test]
fn daemonset_and_mirror_pods_are_left_by_drains() {
    let read =
        |meta: &str| parse_pod(&kix_yaml::from_str(&format!("kind: Pod\nmetadata: {meta}\n")).unwrap(), "ns").unwrap();
    assert!(read("{name: a, ownerReferences: [{kind: DaemonSet, name: d, controller: true}]}").drain_skips);
    // Only the controller reference counts (filters.go, metav1.GetControllerOf).
    assert!(!read("{name: d, ownerReferences: [{kind: DaemonSet, name: d}]}").drain_skips);
    assert!(read("{name: b, annotations: {kubernetes.io/config.mirror: x}}").drain_skips);
    let plain = read("{name: c, ownerReferences: [{kind: ReplicaSet, name: r, controller: true}]}");
    assert!(!plain.drain_skips);
    assert_eq!(plain.controller, Some(Controller { kind: "ReplicaSet".into(), name: "r".into() }));
    assert!(!plain.ready);
    assert_eq!(plain.namespace, "ns");
}

#[test]
fn bad_objects_are_errors_not_panics() {
    for text in [
        "kind: Node\n",
        "- 1\n",
        "kind: Node\nmetadata: {name: a}\nspec: {taints: 3}\n",
        "kind: Pod\nmetadata: {name: p}\nspec: {topologySpreadConstraints: [{maxSkew: 0, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]}\n",
    ] {
        assert!(State::from_yaml_str(text).is_err(), "{text}");
    }
}
