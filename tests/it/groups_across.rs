//! Availability groups across instances (issue 17, `group = "NAME"` in a cluster file) end to end: the
//! shipped `nameserver` servers grouped on the three-zone `prod` example, and the errors for members
//! that cannot form one group.

use crate::support::*;

/// The documents of a YAML stream, as JSON values.
fn objects(stdout: &str) -> Vec<serde_json::Value> {
    let documents = kix_yaml::from_str_all(stdout).unwrap();
    documents.iter().map(|d| serde_json::to_value(d).unwrap()).filter(serde_json::Value::is_object).collect()
}

fn name(object: &serde_json::Value) -> &str {
    object["metadata"]["name"].as_str().unwrap()
}

/// Whether a `matchLabels` selector selects a set of labels.
fn selects(selector: &serde_json::Value, labels: &serde_json::Value) -> bool {
    selector["matchLabels"].as_object().unwrap().iter().all(|(k, v)| labels.get(k) == Some(v))
}

#[test]
fn groups_across_instances_spread_and_budget_the_servers_together() {
    let run = Test::new().examples().args(["build", "--stdout", "--cluster", "prod"]).run().status(0);
    let docs = objects(&run.stdout);
    let in_authdns = |kind: &str| -> Vec<&serde_json::Value> {
        docs.iter().filter(|d| d["kind"] == kind && d["metadata"]["namespace"] == "authdns").collect()
    };
    let deployments = in_authdns("Deployment");
    let names: Vec<&str> = deployments.iter().map(|d| name(d)).collect();
    assert_eq!(names, ["ns-a-named", "ns-b-named", "ns-c-named"], "each server's objects take its instance's name");
    let group_selector =
        serde_json::json!({"matchLabels": {"app.kubernetes.io/name": "named", "kix.dev/group": "nameservers"}});
    for deployment in &deployments {
        let template = &deployment["spec"]["template"];
        let constraints = template["spec"]["topologySpreadConstraints"].as_array().unwrap();
        let hard: Vec<_> = constraints.iter().filter(|c| c["whenUnsatisfiable"] == "DoNotSchedule").collect();
        assert_eq!(hard.len(), 1, "{deployment}");
        assert_eq!(hard[0]["topologyKey"], "topology.kubernetes.io/zone");
        assert_eq!(hard[0]["labelSelector"], group_selector);
        assert!(hard[0].get("matchLabelKeys").is_none());
        // The selector takes all three servers' pod templates, and no other pod template of the namespace.
        for other in
            docs.iter().filter(|d| d["metadata"]["namespace"] == "authdns" && d["spec"]["template"].is_object())
        {
            assert!(selects(&group_selector, &other["spec"]["template"]["metadata"]["labels"]), "{}", name(other));
        }
        // Each server's own controller takes only its own pods.
        let own = &deployment["spec"]["selector"];
        let takes: Vec<&str> = (deployments.iter())
            .filter(|d| selects(own, &d["spec"]["template"]["metadata"]["labels"]))
            .map(|d| name(d))
            .collect();
        assert_eq!(takes, [name(deployment)]);
        // References follow the renamed objects.
        let instance = name(deployment).trim_end_matches("-named");
        assert_eq!(template["spec"]["serviceAccountName"], format!("{instance}-named"));
        assert_eq!(template["spec"]["volumes"][0]["configMap"]["name"], format!("{instance}-named-zones"));
    }
    let budgets = in_authdns("PodDisruptionBudget");
    assert_eq!(budgets.len(), 1, "one budget for the group, none per member: {budgets:?}");
    assert_eq!(name(budgets[0]), "nameservers");
    assert_eq!(budgets[0]["spec"]["selector"], group_selector);
    assert_eq!(budgets[0]["spec"]["maxUnavailable"], 1);
    // Each server's Service selects its own server's pods only.
    for service in in_authdns("Service") {
        let selector = serde_json::json!({"matchLabels": service["spec"]["selector"]});
        let takes: Vec<&str> = (deployments.iter())
            .filter(|d| selects(&selector, &d["spec"]["template"]["metadata"]["labels"]))
            .map(|d| name(d))
            .collect();
        assert_eq!(takes, [name(service)]);
    }
    // The group's budget is written once, by the first member by name.
    let files = Test::new().examples().args(["build", "--cluster", "prod"]).run().status(0);
    let first = std::fs::read_to_string(files.root().join("out/prod/ns-a.yaml")).unwrap();
    assert!(first.contains("kind: PodDisruptionBudget"));
    for other in ["ns-b", "ns-c"] {
        let text = std::fs::read_to_string(files.root().join(format!("out/prod/{other}.yaml"))).unwrap();
        assert!(!text.contains("kind: PodDisruptionBudget"), "{other}");
    }
}

#[test]
fn groups_across_instances_meet_zone_with_two_of_three_running() {
    let run = Test::new().examples().args(["verify", "--cluster", "prod"]).run().status(0);
    for instance in ["ns-a", "ns-b", "ns-c"] {
        let row = run.stdout.lines().find(|l| l.contains(&format!("Deployment/{instance}-named"))).unwrap();
        assert!(row.contains("2 of 3, majority 2 (group nameservers)"), "{row}");
        assert!(row.trim_end().ends_with("meets zone"), "{row}");
    }
}

const NAMESERVER: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: named
spec:
  replicas: 1
  selector:
    matchLabels: {app: named}
  template:
    metadata:
      labels: {app: named}
    spec:
      containers: [{name: bind, image: example/bind:1, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
";

/// A three-zone cluster with one instance of `package` per (name, namespace).
fn cluster(members: &[(&str, &str, &str)]) -> String {
    let mut text = String::from(
        "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n",
    );
    for (name, package, namespace) in members {
        text += &format!(
            "[[instances]]\nname = \"{name}\"\npackage = \"{package}\"\nnamespace = \"{namespace}\"\ngroup = \"servers\"\n"
        );
    }
    text + "[[nodePools]]\nname = \"general\"\nzones = [\"a\", \"b\", \"c\"]\nnodesPerZone = 2\nallocatable = { cpu = \"8\", memory = \"32Gi\", pods = 110 }\n"
}

fn tree(members: &[(&str, &str, &str)], survive: &str) -> Test {
    let kix = format!("[meta]\nname = \"named\"\nversion = \"1.0.0\"\n[workloads.named]\nsurvive = \"{survive}\"\n");
    let other = "[meta]\nname = \"other\"\nversion = \"1.0.0\"\n";
    Test::new().tree([
        ("clusters/prod.toml", cluster(members)),
        ("packages/named/kix.toml", kix),
        ("packages/named/named.yaml", NAMESERVER.to_string()),
        ("packages/other/kix.toml", other.to_string()),
        ("packages/other/named.yaml", NAMESERVER.to_string()),
    ])
}

#[test]
fn groups_across_namespaces_are_refused_with_one_located_error() {
    let run = tree(&[("ns-a", "named", "dns"), ("ns-b", "named", "elsewhere")], "one")
        .args(["build"])
        .run()
        .status(1)
        .stderr_contains("error[K0418]: instances `ns-a` (namespace `dns`) and `ns-b` (namespace `elsewhere`) of group `servers` run in different namespaces")
        .stderr_contains("clusters/prod.toml:14:9");
    assert_eq!(run.stderr.matches("error[").count(), 1, "{}", run.stderr);
    assert!(!run.root().join("out").exists(), "nothing is written");
}

#[test]
fn groups_across_packages_or_with_groups_of_their_own_are_refused() {
    tree(&[("ns-a", "named", "dns"), ("ns-b", "other", "dns")], "one")
        .args(["check"])
        .run()
        .status(1)
        .stderr_contains("error[K0419]: instances `ns-a` (package `named`) and `ns-b` (package `other`) of group `servers` run different packages");
    tree(&[("ns-a", "named", "dns"), ("ns-b", "named", "dns")], "one")
        .tree([(
            "packages/named/kix.toml",
            "[meta]\nname = \"named\"\nversion = \"1.0.0\"\n[groups.own]\nworkloads = [\"named\"]\n",
        )])
        .args(["check"])
        .run()
        .status(1)
        .stderr_contains("error[K0419]: instance `ns-a` is in group `servers`, but package `named` has availability groups of its own");
}

#[test]
fn groups_across_instances_are_judged_on_their_total() {
    // One pod per member: three members pass R8 and a majority at zone; two cannot keep a majority;
    // one alone is a group of one pod (K0403).
    tree(&[("ns-a", "named", "dns"), ("ns-b", "named", "dns"), ("ns-c", "named", "dns")], "majority")
        .args(["check"])
        .run()
        .status(0);
    tree(&[("ns-a", "named", "dns"), ("ns-b", "named", "dns")], "majority")
        .args(["check"])
        .run()
        .status(1)
        .stderr_contains("error[K0425]: group `servers` (Deployment over instances ns-a, ns-b) must keep a majority, but 2 pods over 3 zones cannot");
    tree(&[("ns-a", "named", "dns")], "one").args(["check"]).run().status(1).stderr_contains(
        "error[K0403]: group `servers` (Deployment over instances ns-a) resolves to level `zone` but runs 1 pod in all",
    );
}
