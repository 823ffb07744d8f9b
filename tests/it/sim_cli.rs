//! `kix schedule` and `kix simulate` through the real binary, over fixtures in tests/sim/.

use crate::support::*;

/// Runs `kix` in the repository root, where the tests/sim/ paths are relative.
fn kix(args: &[&str]) -> Output {
    Test::in_repo().args(args.iter().copied()).run().utf8()
}

#[test]
fn schedule_json_gives_every_node_its_reason_in_the_schedulers_words() {
    let json =
        kix(&["schedule", "--state", "tests/sim/tainted.yaml", "--pod", "tests/sim/web.yaml", "--format", "json"])
            .status(0)
            .json();
    assert_eq!(json["feasible"], serde_json::json!(["n5"]));
    assert_eq!(json["selected"], "n5");
    let reasons = &json["unschedulable"];
    assert_eq!(reasons["n1"], "node(s) had untolerated taint {dedicated: db}");
    assert_eq!(reasons["n2"], "node(s) didn't match pod topology spread constraints (missing required label)");
    assert_eq!(reasons["n3"], "node(s) were unschedulable");
    assert_eq!(reasons["n4"], "Insufficient cpu");
    assert!(json["scores"]["n5"].as_i64().unwrap() > 0);
    assert_eq!(
        json.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["command", "diagnostics", "feasible", "scores", "selected", "summary", "unschedulable"]
    );
}

#[test]
fn schedule_text_is_a_table_with_the_selected_node() {
    kix(&["schedule", "--state", "tests/sim/three-zones.yaml", "--pod", "tests/sim/web.yaml"])
        .status(0)
        .stdout_contains("NODE")
        .stdout_contains("selected: node-a1");
}

#[test]
fn simulate_spreads_replicas_over_zones_and_reports_pending() {
    let json = kix(&[
        "simulate",
        "--state",
        "tests/sim/three-zones.yaml",
        "tests/sim/web.yaml",
        "tests/sim/single.yaml",
        "--format",
        "json",
    ])
    .status(0)
    .json();
    let web = &json["workloads"][0];
    assert_eq!(web["name"], "web");
    assert_eq!(
        web["domains"]["topology.kubernetes.io/zone"],
        serde_json::json!({"zone-a": 1, "zone-b": 1, "zone-c": 1})
    );
    assert_eq!(json["workloads"][1]["placed"].as_object().unwrap().len(), 1);

    // On the tainted state the cordoned n3 carries node.kubernetes.io/unschedulable:NoSchedule (as
    // the node lifecycle controller puts it there), so the Honor zone constraint leaves zone b out,
    // like tainted n1's zone a: zone c is the only domain and n5 (n4 is too small) takes all three.
    kix(&["simulate", "--state", "tests/sim/tainted.yaml", "tests/sim/web.yaml"])
        .status(0)
        .stdout_contains("3 of 3 replicas placed")
        .stdout_contains("zone: a=0 b=0 c=3");
    // If n3 is schedulable but full instead, zone b counts as an empty domain: maxSkew 1 leaves two Pending.
    let full = std::fs::read_to_string(repo_path("tests/sim/tainted.yaml")).unwrap().replace(
        "  spec: {unschedulable: true}\n  status: {allocatable: {cpu: \"4\"",
        "  status: {allocatable: {cpu: \"200m\"",
    );
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), [("full.yaml", full)]);
    let state = dir.path().join("full.yaml");
    // Pods left Pending are a finding: exit status 1.
    kix(&["simulate", "--state", state.to_str().unwrap(), "tests/sim/web.yaml"])
        .status(1)
        .stdout_contains("1 of 3 replicas placed")
        .stdout_contains("Pending")
        .stdout_contains("didn't match pod topology spread constraints");
}

#[test]
fn bad_input_is_a_diagnostic_not_a_panic() {
    kix(&["schedule", "--state", "tests/sim/bad.yaml", "--pod", "tests/sim/web.yaml"])
        .status(1)
        .stderr_contains("K0104");
    kix(&["schedule", "--state", "tests/sim/missing.yaml", "--pod", "tests/sim/web.yaml"])
        .status(1)
        .stderr_contains("K0101");
    // A manifest set without a workload is refused, not an empty report.
    kix(&["simulate", "--state", "tests/sim/three-zones.yaml", "tests/sim/tainted.yaml"])
        .status(1)
        .stdout("")
        .stderr_contains("error[K0115]: tests/sim/tainted.yaml holds no Deployment or StatefulSet to place");
}

#[test]
fn every_unreadable_object_of_a_state_gets_its_own_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        [(
            "state.yaml",
            "kind: Node\nmetadata: {name: a}\nspec: {taints: [{key: k}]}\n---\nkind: Pod\nmetadata: {name: p}\nspec: {topologySpreadConstraints: [{maxSkew: 0, topologyKey: z, whenUnsatisfiable: DoNotSchedule}]}\n",
        )],
    );
    let state = dir.path().join("state.yaml");
    let run = kix(&["schedule", "--state", state.to_str().unwrap(), "--pod", "tests/sim/web.yaml", "--format", "json"])
        .status(1);
    let (json, stderr) = (run.json(), run.stdout.clone());
    let lines: Vec<serde_json::Value> = json["diagnostics"].as_array().unwrap().clone();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines.iter().all(|l| l["code"] == "K0105"), "{stderr}");
    assert!(stderr.contains("node `a`") && stderr.contains("pod `p`"), "{stderr}");
}

#[test]
fn every_valid_quantity_form_is_read_and_huge_ones_saturate_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        [
            (
                "st.yaml",
                "kind: List\nitems:\n- {kind: Node, metadata: {name: big}, status: {allocatable: {cpu: '1E', memory: '1Ei', pods: '9223372036854775807'}}}\n- {kind: Node, metadata: {name: small}, status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}}\n- {kind: Pod, metadata: {name: hog, namespace: default}, spec: {nodeName: big, containers: [{name: c, resources: {requests: {cpu: '9223372036854775807', memory: '8Ei'}}}]}}\n",
            ),
            (
                "pod.yaml",
                "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: '500m', memory: '.5Gi'}}}]}\n",
            ),
        ],
    );
    let (state, pod) = (dir.path().join("st.yaml"), dir.path().join("pod.yaml"));
    let json =
        kix(&["schedule", "--state", state.to_str().unwrap(), "--pod", pod.to_str().unwrap(), "--format", "json"])
            .status(0)
            .json();
    // The hog's saturated requests fill the exa-sized node; the pod goes to the small one.
    assert_eq!(json["selected"], "small", "{json}");
    assert_eq!(json["unschedulable"]["big"], "Insufficient cpu, Insufficient memory", "{json}");
}

/// Runs `kix schedule --format json` and returns its diagnostics (the document's `diagnostics`).
fn diagnostics(state: &str, pod: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), [("st.yaml", state), ("pod.yaml", pod)]);
    let (s, p) = (dir.path().join("st.yaml"), dir.path().join("pod.yaml"));
    kix(&["schedule", "--state", s.to_str().unwrap(), "--pod", p.to_str().unwrap(), "--format", "json"])
        .status(1)
        .diagnostics()
}

const POD: &str = "kind: Pod\nmetadata: {name: p}\n";

#[test]
fn errors_about_one_object_point_at_its_line() {
    // A List in block style: the duplicate node points at its second item, the bad taint effect at the field.
    let state = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: b\n  spec:\n    taints:\n    - key: k\n      effect: NoSchedul\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n";
    let d = diagnostics(state, POD);
    assert_eq!(d.len(), 2, "{d:?}");
    let taint = d.iter().find(|d| d["message"].as_str().unwrap().contains("no valid effect")).unwrap();
    assert_eq!((taint["line"].as_u64(), taint["column"].as_u64()), (Some(15), Some(15)), "{taint}");
    let twice = d.iter().find(|d| d["message"].as_str().unwrap().contains("appears twice")).unwrap();
    assert_eq!((twice["line"].as_u64(), twice["column"].as_u64()), (Some(16), Some(3)), "{twice}");

    // A stream: the node without a name points at its document; a flow-style item list at the item.
    let state = "# nodes\nkind: Node\nmetadata: {name: a}\n---\n\nkind: Node\nmetadata: {labels: {x: y}}\n---\nkind: List\nitems:\n- {kind: Node, metadata: {name: c}}\n- {kind: Node, metadata: {name: d}, spec: {taints: [{key: k, effect: \"Sometimes\"}]}}\n";
    let d = diagnostics(state, POD);
    assert_eq!(d.len(), 2, "{d:?}");
    let unnamed = d.iter().find(|d| d["message"].as_str().unwrap().contains("no metadata.name")).unwrap();
    assert_eq!((unnamed["line"].as_u64(), unnamed["column"].as_u64()), (Some(6), Some(1)), "{unnamed}");
    let taint = d.iter().find(|d| d["message"].as_str().unwrap().contains("no valid effect")).unwrap();
    assert_eq!(taint["line"].as_u64(), Some(12), "{taint}");
    assert_eq!(taint["column"].as_u64(), Some(70), "{taint}");

    // The --pod file: a bad toleration effect points at the field, in a Deployment's template too.
    let state = "kind: Node\nmetadata: {name: a}\n";
    let pod = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec:\n      tolerations:\n      - key: k\n        operator: Exists\n        effect: Never\n";
    let d = diagnostics(state, pod);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]["file"].as_str().unwrap().ends_with("pod.yaml"), "{:?}", d[0]);
    assert_eq!((d[0]["line"].as_u64(), d[0]["column"].as_u64()), (Some(12), Some(17)), "{:?}", d[0]);
}

#[test]
fn object_errors_in_text_show_the_line_and_caret() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), [("st.yaml", "kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: a}\n")]);
    let s = dir.path().join("st.yaml");
    kix(&["schedule", "--state", s.to_str().unwrap(), "--pod", "tests/sim/web.yaml"])
        .status(1)
        .stderr_contains("node `a` appears twice")
        .stderr_contains("st.yaml:4:1")
        .stderr_contains("4 | kind: Node");
}

#[test]
fn a_pod_left_pending_makes_schedule_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  nodeSelector: {disk: ssd}\n  containers: [{name: c, image: x}]\n";
    write_tree(dir.path(), [("pod.yaml", pod)]);
    let pod = dir.path().join("pod.yaml");
    kix(&["schedule", "--state", "tests/sim/three-zones.yaml", "--pod", pod.to_str().unwrap()])
        .status(1)
        .stdout_contains("Pending: 0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector.");
}
