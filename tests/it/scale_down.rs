//! What the scheduler never re-checks (issue 39), part 1: the scale-down of an autoscaled workload.
//!
//! The first Done-when case: a Deployment at level zone under an HPA (min 2, max 6) on 3
//! zones, zone a with one node and zones b and c with two each. Figures by hand, from upstream:
//! - At 6 the hard zone spread (maxSkew 1, `podtopologyspread/filtering.go`) holds 2 pods per zone;
//!   zone a's 2 share its one node, zones b and c have one pod per node (the soft hostname spread).
//! - The ReplicaSet controller (`pkg/controller/replicaset/replica_set.go`, `getPodsToDelete`, with
//!   `ActivePodsWithRanks.Less` of `pkg/controller/controller_utils.go`) ranks each pod by the set's
//!   pods on its node: a's two rank 2, the four others 1; higher rank goes first, so a's two are the
//!   first victims. The four left tie on every key kix knows (ready times in one logarithmic bucket
//!   compare by UID, at random), and two of them may both be zone b's: `0/0/2`, and losing zone c
//!   leaves nothing running.
//! - At a minimum of 3 (the mapping's `zone = 3` raises the HPA's 2), the same order deletes a's two
//!   and one more: at worst `0/1/2`, and every zone loss leaves one pod.

use crate::support::Test;
use serde_json::Value;

const PACKAGE: &str = "resources = [\"api.yaml\", \"hpa.yaml\"]\n[meta]\nname = \"api\"\nversion = \"1.0.0\"\n\
    [workloads.api]\nreplicas = { none = 1, pod = 2, zone = 2 }\n";

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    \
    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      \
    - name: api\n        image: example/api:1\n        resources:\n          requests: {cpu: 100m, memory: 100Mi}\n";

const HPA: &str = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: api\nspec:\n  \
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  minReplicas: 2\n  maxReplicas: 6\n";

/// The cluster: zone a with `a_nodes` nodes, zones b and c with two each.
fn cluster(a_nodes: u32) -> String {
    format!(
        "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
         [[instances]]\nname = \"shop\"\npackage = \"api\"\n\
         [[nodePools]]\nname = \"small\"\nzones = [\"a\"]\nnodesPerZone = {a_nodes}\n\
         allocatable = {{ cpu = \"4\", memory = \"16Gi\", pods = 110 }}\n\
         [[nodePools]]\nname = \"general\"\nzones = [\"b\", \"c\"]\nnodesPerZone = 2\n\
         allocatable = {{ cpu = \"4\", memory = \"16Gi\", pods = 110 }}\n"
    )
}

fn tree(a_nodes: u32) -> Test {
    tree_with(a_nodes, PACKAGE)
}

fn tree_with(a_nodes: u32, package: &str) -> Test {
    Test::new().tree([
        ("clusters/c.toml", cluster(a_nodes)),
        ("packages/api/kix.toml", package.to_string()),
        ("packages/api/api.yaml", DEPLOYMENT.to_string()),
        ("packages/api/hpa.yaml", HPA.to_string()),
    ])
}

fn workload(json: &Value) -> &Value {
    &json["clusters"][0]["instances"][0]["workloads"][0]
}

fn scenario<'a>(workload: &'a Value, name: &str) -> &'a Value {
    let scenarios = workload["scenarios"].as_array().unwrap();
    scenarios.iter().find(|s| s["scenario"] == name).unwrap_or_else(|| panic!("no {name} scenario: {workload}"))
}

#[test]
fn a_zone_spread_deployment_scaled_from_six_to_two_can_leave_both_pods_in_one_zone() {
    let out = tree(1).args(["verify", "--format", "json"]).run().status(1);
    let json = out.json();
    let api = workload(&json);
    assert_eq!(api["replicas"], 2, "verified at the HPA's minimum: {api}");
    // Placed fresh at 2, every zone loss leaves one: only the scale-down fails.
    assert_eq!(scenario(api, "domain-loss")["pass"], true, "{api}");
    let down = scenario(api, "scale-down");
    assert_eq!(down["pass"], false, "{down}");
    let findings: Vec<&str> = down["findings"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let failing: Vec<&&str> = findings.iter().filter(|f| f.contains("zone c lost")).collect();
    assert_eq!(failing.len(), 1, "{findings:?}");
    let text = failing[0];
    assert!(text.starts_with("scaled from 6 to 2"), "{text}");
    // Zone a's single node holds 2 of the 6 pods: they rank 2 and go first.
    assert!(text.contains("deletes the 2 pods on small-a-1 (rank 2: the set's pods on their node)"), "{text}");
    // Then 2 of the 4 tied at rank 1, taken against the level: both of zone b.
    assert!(text.contains("then 2 pods the controller picks at random among pods of equal rank 1"), "{text}");
    assert!(text.contains("left 0/0/2 over zones a/b/c"), "{text}");
    assert!(text.contains("no replica keeps running (2 lost)"), "{text}");
    assert!(text.contains("kubectl rollout restart deployment/api"), "{text}");
    assert!(text.contains("RemovePodsViolatingTopologySpreadConstraint"), "{text}");
    // The steps: the scale-down as one change, then the losses on what it left.
    let steps = down["steps"].as_array().unwrap();
    assert_eq!(steps[0]["step"], "scaled to 6 and back to 2", "{steps:?}");
    let survivors = api["placement"].as_object().unwrap().len() - steps[0]["gone"].as_object().unwrap().len()
        + steps[0]["placed"].as_object().unwrap().len();
    assert_eq!(survivors, 2, "{steps:?}");
    assert!(steps[1..].iter().all(|s| s["adversarial"] == true), "{steps:?}");
    // The diagnostic has its own code.
    let codes: Vec<String> =
        out.diagnostics().iter().map(|d| d["code"].as_str().unwrap_or_default().to_string()).collect();
    assert!(codes.iter().any(|c| c == "K0625"), "{codes:?}");
}

#[test]
fn a_workload_without_an_autoscaler_gets_no_scale_down() {
    let out = Test::new()
        .tree([
            ("clusters/c.toml", cluster(1)),
            ("packages/api/kix.toml", PACKAGE.replace("\"api.yaml\", \"hpa.yaml\"", "\"api.yaml\"")),
            ("packages/api/api.yaml", DEPLOYMENT.to_string()),
        ])
        .args(["verify", "--format", "json"])
        .run();
    let json = out.json();
    let api = workload(&json);
    let names: Vec<&str> = api["scenarios"].as_array().unwrap().iter().filter_map(|s| s["scenario"].as_str()).collect();
    assert!(!names.contains(&"scale-down"), "{names:?}");
}

#[test]
fn a_minimum_of_three_survives_the_same_scale_down() {
    let package = PACKAGE.replace("zone = 2", "zone = 3");
    let out = tree_with(1, &package).args(["verify", "--format", "json"]).run().status(0);
    let json = out.json();
    let api = workload(&json);
    assert_eq!(api["replicas"], 3, "the mapping raises the HPA's minimum: {api}");
    let down = scenario(api, "scale-down");
    assert_eq!(down["pass"], true, "{down}");
    let text = down["findings"][0].as_str().unwrap();
    assert!(
        text.starts_with("scaled from 6 to 3, the ReplicaSet controller deletes the 2 pods on small-a-1"),
        "{text}"
    );
    assert!(text.contains("left 0/1/2 over zones a/b/c; every single zone loss still leaves one running"), "{text}");
}
