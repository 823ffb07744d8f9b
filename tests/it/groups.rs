//! Availability groups and survival (issue 17) end to end: the shipped Bindy-shaped `dns` package
//! on the three-zone `prod` example, the majority arithmetic at build time, and verify holding
//! majority workloads to a majority.

use crate::support::*;

const ZONES3: &str = r#"availability = "zone"
[capabilities]
multiNode = true
availabilityZones = ["a", "b", "c"]
[[instances]]
name = "db"
package = "store"
[[nodePools]]
name = "general"
zones = ["a", "b", "c"]
nodesPerZone = 2
allocatable = { cpu = "8", memory = "32Gi", pods = 110 }
"#;

/// A StatefulSet-free store: one Deployment `store` with the given extra pod spec lines.
fn store(pod_spec: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: store
spec:
  replicas: 1
  selector:
    matchLabels: {{app: store}}
  template:
    metadata:
      labels: {{app: store}}
    spec:
{pod_spec}      containers: [{{name: store, image: example/store:1, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]
"
    )
}

fn store_package(replicas: u32, pod_spec: &str, extra_yaml: &str) -> Test {
    let kix = format!(
        "[meta]\nname = \"store\"\nversion = \"1.0.0\"\n[workloads.store]\nreplicas = {{ none = 1, pod = {replicas} }}\nsurvive = \"majority\"\n"
    );
    Test::new().tree([
        ("clusters/prod.toml", ZONES3.to_string()),
        ("packages/store/kix.toml", kix),
        ("packages/store/store.yaml", store(pod_spec) + extra_yaml),
    ])
}

/// The documents of a YAML stream, as JSON values.
fn objects(stdout: &str) -> Vec<serde_json::Value> {
    let documents = kix_yaml::from_str_all(stdout).unwrap();
    documents.iter().map(|d| serde_json::to_value(d).unwrap()).filter(serde_json::Value::is_object).collect()
}

#[test]
fn groups_bindy_example_spreads_and_budgets_the_primaries_together() {
    let run = Test::new().examples().args(["build", "--stdout", "--cluster", "prod"]).run().status(0);
    let docs = objects(&run.stdout);
    let of_dns = |kind: &str| -> Vec<&serde_json::Value> {
        docs.iter().filter(|d| d["kind"] == kind && d["metadata"]["namespace"] == "dns").collect()
    };
    let selector = serde_json::json!({"matchLabels": {"app": "dns", "role": "primary"}});
    let deployments = of_dns("Deployment");
    let primaries: Vec<_> =
        deployments.iter().filter(|d| d["metadata"]["name"].as_str().unwrap().starts_with("dns-primary-")).collect();
    assert_eq!(primaries.len(), 3);
    for primary in &primaries {
        let constraints = primary["spec"]["template"]["spec"]["topologySpreadConstraints"].as_array().unwrap();
        let hard: Vec<_> = constraints.iter().filter(|c| c["whenUnsatisfiable"] == "DoNotSchedule").collect();
        assert_eq!(hard.len(), 1, "{primary}");
        assert_eq!(hard[0]["topologyKey"], "topology.kubernetes.io/zone");
        for constraint in constraints {
            assert_eq!(constraint["labelSelector"], selector);
            assert!(constraint.get("matchLabelKeys").is_none(), "{constraint}");
        }
        // The selector takes every primary's template and no other pod template of the namespace.
        for other in &deployments {
            let labels = other["spec"]["template"]["metadata"]["labels"].as_object().unwrap();
            let selected = labels.get("role").and_then(|v| v.as_str()) == Some("primary");
            assert_eq!(selected, other["metadata"]["name"].as_str().unwrap().starts_with("dns-primary-"));
        }
    }
    let budgets = of_dns("PodDisruptionBudget");
    let names: Vec<&str> = budgets.iter().map(|b| b["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["primaries", "dns-secondary"], "one budget for the group, none per primary");
    assert_eq!(budgets[0]["spec"]["selector"], selector);
    assert_eq!(budgets[0]["spec"]["maxUnavailable"], 1);
}

#[test]
fn groups_bindy_example_meets_zone_with_two_of_three_running() {
    let run = Test::new().examples().args(["verify", "--cluster", "prod"]).run().status(0);
    for i in 0..3 {
        let row = run.stdout.lines().find(|l| l.contains(&format!("Deployment/dns-primary-{i}"))).unwrap();
        assert!(row.contains("2 of 3, majority 2 (group primaries)"), "{row}");
        assert!(row.trim_end().ends_with("meets zone"), "{row}");
    }
    let run = Test::new().examples().args(["verify", "--cluster", "prod", "--format", "json"]).run().status(0);
    let report = run.json()["clusters"].clone();
    let dns = report[0]["instances"].as_array().unwrap().iter().find(|i| i["instance"] == "dns").unwrap();
    let primary = &dns["workloads"][0];
    assert_eq!(primary["worst_case_running"], 2);
    assert_eq!(primary["group_replicas"], 3);
    assert_eq!(primary["majority"], 2);
}

#[test]
fn survival_three_and_five_over_three_zones_build_four_does_not() {
    store_package(3, "", "").args(["check"]).run().status(0);
    store_package(5, "", "").args(["check"]).run().status(0);
    store_package(4, "", "")
        .args(["check"])
        .run()
        .status(1)
        .stderr_contains("error[K0425]: workload `store` must keep a majority, but 4 pods over 3 zones cannot")
        .stderr_contains("set availability = \"node\" on the instance in the cluster file, or run a count that keeps a majority over 3 zones: 3, 5, 6, 7");
}

#[test]
fn survival_unknown_zone_count_is_a_warning() {
    let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"db\"\npackage = \"store\"\nallow = [\"K0303\"]\n";
    store_package(3, "", "")
        .tree([("clusters/prod.toml", cluster)])
        .args(["check"])
        .run()
        .status(0)
        .stderr_contains("warning[K0426]: workload `store` must keep a majority at level `zone`");
}

#[test]
fn survival_verify_fails_a_majority_workload_whose_placement_loses_it() {
    // Its own placement (R11) pins the three pods to zones a and b: 2/1, so losing the zone of two
    // leaves 1 of 3. At survive = "one" that would meet zone; at majority it must fail.
    let pinned = "      topologySpreadConstraints: []
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a, b]}]
";
    let pdb = "---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: store
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: store}
";
    let run = store_package(3, pinned, pdb).args(["verify"]).run().status(1);
    let row = run.stdout.lines().find(|l| l.contains("Deployment/store")).unwrap();
    assert!(row.contains("1 of 3, majority 2"), "{row}");
    assert!(row.contains("FAILS zone (domain-loss"), "{row}");
    assert!(run.stdout.contains("lost: 1 of 3 running, majority 2 (2 lost)"), "{}", run.stdout);
}
