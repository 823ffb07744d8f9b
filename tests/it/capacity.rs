//! `kix capacity` and the sizing findings (issue 22), through the real binary: a hand-checked pod
//! (init containers, a restartable init container, overhead) over three zones, a cluster whose
//! survivors cannot hold the replacements, the sizing warnings on 4 and 2 replicas over 3 zones and
//! not on 3 or 6, and the JSON against the committed schema.

use crate::support::*;
use serde_json::Value;

/// A pod hand-checked against upstream PodRequests (component-helpers/resource/helpers.go):
/// containers 500m+100m cpu, 256Mi+64Mi memory; the restartable init container `proxy` (200m, 128Mi)
/// adds to that sum: 800m, 448Mi; the init peaks are `migrate` 2 cpu, 128Mi and `warm` 300m + the
/// proxy started before it 200m = 500m, 1Gi + 128Mi = 1152Mi; per resource the larger: 2 cpu,
/// 1152Mi; plus overhead 50m, 32Mi: 2050m and 1184Mi.
const POD_MILLI: i64 = 2050;
const POD_BYTES: i64 = 1184 << 20;

const APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      overhead: {cpu: 50m, memory: 32Mi}
      initContainers:
      - {name: migrate, image: example/api:1, resources: {requests: {cpu: '2', memory: 128Mi}}}
      - {name: proxy, image: example/proxy:1, restartPolicy: Always, resources: {requests: {cpu: 200m, memory: 128Mi}}}
      - {name: warm, image: example/api:1, resources: {requests: {cpu: 300m, memory: 1Gi}}}
      containers:
      - {name: api, image: example/api:1, resources: {requests: {cpu: 500m, memory: 256Mi}}}
      - {name: log, image: example/log:1, resources: {requests: {cpu: 100m, memory: 64Mi}}}
";

const APP_KIX: &str = "[meta]\nname = \"app\"\nversion = \"1.0.0\"\n[workloads.api]\nreplicas = { none = 1, pod = 2, node = 3, zone = 6 }\n";

/// A three-zone cluster at level zone with one pool of `per_zone` nodes of `cpu` per zone.
fn cluster(per_zone: u32, cpu: &str) -> String {
    format!(
        "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
         [[instances]]\nname = \"shop\"\npackage = \"app\"\ncreateNamespace = true\n\
         [[nodePools]]\nname = \"general\"\nzones = [\"a\", \"b\", \"c\"]\nnodesPerZone = {per_zone}\n\
         allocatable = {{ cpu = \"{cpu}\", memory = \"64Gi\", pods = 110 }}\n"
    )
}

fn capacity(cluster_file: String) -> Value {
    Test::new()
        .tree([
            ("clusters/prod.toml", cluster_file),
            ("packages/app/kix.toml", APP_KIX.to_string()),
            ("packages/app/api.yaml", APP.to_string()),
        ])
        .args(["capacity", "--format", "json"])
        .run()
        .status(0)
        .json()
}

fn workload(report: &Value) -> &Value {
    let cluster = &report["clusters"][0];
    assert_eq!(cluster["name"], "prod");
    assert_eq!(cluster["instances"][0]["name"], "shop");
    &cluster["instances"][0]["workloads"][0]
}

#[test]
fn capacity_counts_requests_per_level_as_the_scheduler_does_and_six_over_three_zones_leave_four() {
    let report = capacity(cluster(2, "16"));
    check_schema(&report);
    let api = workload(&report);
    assert_eq!(
        (api["kind"].as_str(), api["name"].as_str(), api["level"].as_str()),
        (Some("Deployment"), Some("api"), Some("zone"))
    );
    assert_eq!(api["pod"], serde_json::json!({"cpu_millicores": POD_MILLI, "memory_bytes": POD_BYTES}));
    for (level, replicas) in [("none", 1), ("pod", 2), ("node", 3), ("zone", 6)] {
        assert_eq!(
            api["levels"][level],
            serde_json::json!({"replicas": replicas, "cpu_millicores": POD_MILLI * replicas, "memory_bytes": POD_BYTES * replicas}),
            "{level}"
        );
    }
    let loss = &api["after_worst_loss"];
    assert_eq!(loss["pods_left"], 4);
    assert_eq!(loss["surviving_fraction"], 0.667);
    assert_eq!(loss["replacements_fit"], true);
    assert!(loss.get("nodes_short").is_none(), "{loss}");
    // maxSurge 25% of 6, rounded up: 2 pods.
    assert_eq!(api["surge"]["replicas"], 2);
    let instance = &report["clusters"][0]["instances"][0];
    assert_eq!(instance["requests"]["cpu_millicores"], POD_MILLI * 6);
    assert!(instance.get("up").is_none());
    assert_eq!(
        instance["down"],
        serde_json::json!({"level": "node", "replicas": -3, "cpu_millicores": -POD_MILLI * 3, "memory_bytes": -POD_BYTES * 3})
    );
    let cluster = &report["clusters"][0];
    assert_eq!(cluster["allocatable"]["cpu_millicores"], 6 * 16_000);
    assert_eq!(cluster["share"]["cpu"], 0.128, "12300m of 96 cpu");
}

#[test]
fn capacity_says_when_the_survivors_cannot_hold_the_replacements_and_the_nodes_short() {
    // One node of 4.5 cpu per zone holds two 2050m pods; a zone loss leaves two replacements with
    // 400m free on each survivor: Pending, one node short whichever zone is lost.
    let report = capacity(cluster(1, "4500m"));
    check_schema(&report);
    let loss = &workload(&report)["after_worst_loss"];
    assert_eq!(loss["pods_left"], 4);
    assert_eq!(loss["replacements_fit"], false);
    assert_eq!(loss["nodes_short"], serde_json::json!({"a": 1, "b": 1, "c": 1}));
    let text = Test::new()
        .tree([
            ("clusters/prod.toml", cluster(1, "4500m")),
            ("packages/app/kix.toml", APP_KIX.to_string()),
            ("packages/app/api.yaml", APP.to_string()),
        ])
        .args(["capacity"])
        .run()
        .status(0);
    let row = text.stdout.lines().find(|l| l.contains("Deployment/api")).unwrap();
    assert!(row.contains("*6 (12300m, 7104Mi)"), "{row}");
    assert!(row.contains("4 left (0.667), replacements do not fit (nodes short: a 1, b 1, c 1)"), "{row}");
}

#[test]
fn capacity_shipped_examples_match_the_schema_and_the_build() {
    let report = Test::new().examples().args(["capacity", "--format", "json"]).run().status(0).json();
    check_schema(&report);
    let build = Test::new().examples().args(["build", "--format", "json", "--out", "out"]).run().status(0).json();
    // Every workload's resolved-level cost is what the build summary says it takes.
    for (cluster, built) in report["clusters"].as_array().unwrap().iter().zip(build["clusters"].as_array().unwrap()) {
        for instance in cluster["instances"].as_array().unwrap() {
            let summary =
                built["instances"].as_array().unwrap().iter().find(|i| i["instance"] == instance["name"]).unwrap();
            assert_eq!(summary["level"], instance["level"]);
            assert_eq!(summary["requests"], instance["requests"], "{}", instance["name"]);
            for w in instance["workloads"].as_array().unwrap() {
                let s = summary["workloads"].as_array().unwrap().iter().find(|s| s["name"] == w["name"]).unwrap();
                assert_eq!(s["replicas"], w["levels"][w["level"].as_str().unwrap()]["replicas"], "{}", w["name"]);
            }
        }
    }
}

#[test]
fn capacity_unknown_instance_is_a_usage_error() {
    Test::new()
        .examples()
        .args(["capacity", "--instance", "nope"])
        .run()
        .status(2)
        .stderr_contains("no instance `nope`");
}

/// Four workloads at level zone over three zones, with 4, 2, 3 and 6 replicas.
fn sizing_tree() -> Test {
    let mut kix = String::from("[meta]\nname = \"app\"\nversion = \"1.0.0\"\n");
    let mut yaml = String::new();
    for n in [4, 2, 3, 6] {
        kix.push_str(&format!("[workloads.w{n}]\nreplicas = {{ none = 1, zone = {n} }}\n"));
        yaml.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: w{n}}}\nspec:\n  selector: {{matchLabels: {{app: w{n}}}}}\n  \
             template:\n    metadata: {{labels: {{app: w{n}}}}}\n    spec:\n      containers: [{{name: c, image: example/c:1}}]\n"
        ));
    }
    Test::new().tree([
        ("clusters/prod.toml", cluster(2, "16")),
        ("packages/app/kix.toml", kix),
        ("packages/app/app.yaml", yaml),
    ])
}

#[test]
fn sizing_warnings_fire_on_four_and_two_over_three_zones_not_on_three_or_six() {
    let run = sizing_tree().args(["check", "--format", "json"]).run().status(0);
    let findings: Vec<Value> = run.diagnostics();
    let mut got: Vec<(String, String)> = findings
        .iter()
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().to_string()))
        .collect();
    got.sort();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "K0460");
    assert!(
        got[0].1.contains(
            "workload `w4` runs 4 replicas over 3 zones: the split is 2+1+1, so losing a zone with 2 takes 2 of 4 (50%)"
        ),
        "{}",
        got[0].1
    );
    assert_eq!(got[1].0, "K0461");
    assert!(
        got[1].1.contains("workload `w2` runs 2 replicas over 3 zones under a hard zone spread: the split is 1+1+0"),
        "{}",
        got[1].1
    );
    let text = sizing_tree().args(["check"]).run().status(0);
    assert!(text.stderr.contains("help: run 3 replicas (2 left after a zone loss) or 6 (4 left)"), "{}", text.stderr);
    assert!(!text.stderr.contains("`w3`") && !text.stderr.contains("`w6`"), "{}", text.stderr);
    // Explained, with the counts that do better.
    Test::new().args(["explain", "K0460"]).run().status(0).stdout_contains("ceil(C x Z / (Z - 1))");
}

/// Checks `value` against schemas/capacity.schema.json: the subset the schema uses (type, enum,
/// required, properties, additionalProperties, items, minimum, $ref into $defs).
fn check_schema(value: &Value) {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo_path("schemas/capacity.schema.json")).unwrap()).unwrap();
    let mut problems = Vec::new();
    check(&schema, &schema, value, "$", &mut problems);
    assert!(problems.is_empty(), "{problems:#?}");
}

fn check(root: &Value, schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.strip_prefix("#/$defs/").unwrap();
        return check(root, &root["$defs"][name], value, at, problems);
    }
    let fits = match schema["type"].as_str() {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        _ => true,
    };
    if !fits {
        return problems.push(format!("{at}: {value} is not a {}", schema["type"]));
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            problems.push(format!("{at}: {value} is not one of {allowed:?}"));
        }
    }
    if let Some(minimum) = schema["minimum"].as_i64() {
        if value.as_i64().is_some_and(|v| v < minimum) {
            problems.push(format!("{at}: {value} < {minimum}"));
        }
    }
    if let Some(object) = value.as_object() {
        for required in schema["required"].as_array().into_iter().flatten() {
            if !object.contains_key(required.as_str().unwrap()) {
                problems.push(format!("{at}: `{required}` is missing"));
            }
        }
        for (key, field) in object {
            match (schema["properties"].get(key), &schema["additionalProperties"]) {
                (Some(property), _) => check(root, property, field, &format!("{at}.{key}"), problems),
                (None, Value::Bool(false)) => problems.push(format!("{at}: `{key}` is not in the schema")),
                (None, extra) if extra.is_object() => check(root, extra, field, &format!("{at}.{key}"), problems),
                _ => {}
            }
        }
    }
    if let Some(items) = value.as_array() {
        for (i, item) in items.iter().enumerate() {
            check(root, &schema["items"], item, &format!("{at}[{i}]"), problems);
        }
    }
}
