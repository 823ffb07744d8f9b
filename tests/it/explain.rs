//! `kix explain --cluster --instance`: the derivation of an instance, step by step, with the file and
//! line behind each step, over the shipped examples (goldens under tests/fixtures/examples/expected/).

use crate::support::{EXAMPLES, Test};

#[test]
fn an_instance_lowered_by_its_package_ceiling_says_where_each_step_came_from() {
    Test::new()
        .examples()
        .args(["explain", "--cluster", "prod", "--instance", "sessions"])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/explain-prod-sessions.txt"));
}

#[test]
fn a_group_shows_its_selector_members_and_where_each_came_from() {
    Test::new()
        .examples()
        .args(["explain", "--cluster", "prod", "--instance", "dns"])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/explain-prod-dns.txt"));
}

#[test]
fn one_workload_under_a_none_ceiling_and_the_json_shape() {
    let t = Test::new().examples();
    t.clone()
        .args(["explain", "--cluster", "staging", "--instance", "operator", "--workload", "controller"])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/explain-staging-operator-controller.txt"));
    let json =
        t.args(["explain", "--cluster", "prod", "--instance", "shop", "--format", "json"]).run().status(0).json();
    assert_eq!(json["package"], "web");
    assert_eq!(json["version"], "1.4.0");
    let api = &json["workloads"][0];
    assert_eq!(api["workload"], "Deployment/api");
    let step = |name: &str| api["steps"].as_array().unwrap().iter().find(|s| s["step"] == name).cloned().unwrap();
    assert_eq!(step("replicas")["value"], "3");
    // Locations are fields, as in diagnostics (issue 21).
    assert_eq!(step("replicas")["from"]["file"], "packages/web/kix.toml", "{api}");
    assert!(step("replicas")["from"]["line"].is_u64(), "{api}");
    let spread: Vec<_> = api["steps"].as_array().unwrap().iter().filter(|s| s["step"] == "spread").collect();
    assert_eq!(spread.len(), 2);
    assert!(spread[1]["why"].as_str().unwrap().ends_with("DoNotSchedule"), "{spread:?}");
}

#[test]
fn unknown_names_are_usage_errors_that_list_what_there_is() {
    let t = Test::new().examples();
    t.clone().args(["explain", "--cluster", "prod", "--instance", "nope"]).run().status(2).stderr_contains(
        "cluster `prod` has no instance `nope`; its instances: shop, orders-db, operator, sessions, edge",
    );
    t.clone()
        .args(["explain", "--cluster", "prod", "--instance", "shop", "--workload", "nope"])
        .run()
        .status(2)
        .stderr_contains("its workloads: api");
    // A code and an instance at once is refused by the command line itself.
    t.args(["explain", "K0302", "--cluster", "prod", "--instance", "shop"]).run().status(2);
}

/// Issue 18: a workload scaled to zero is explained as passed through, not as one replica.
#[test]
fn issue18_a_workload_scaled_to_zero_is_explained_as_passed_through() {
    let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                   [[instances]]\nname = \"app\"\npackage = \"p\"\ncreateNamespace = true\n";
    let workload = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 0\n  \
                    selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    \
                    spec: {containers: [{name: c, image: i}]}\n";
    Test::new()
        .tree([
            ("clusters/c.toml", cluster),
            ("packages/p/kix.toml", "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n"),
            ("packages/p/w.yaml", workload),
        ])
        .args(["explain", "--cluster", "c", "--instance", "app"])
        .run()
        .status(0)
        .stdout_contains("replicas          0: the manifest's spec.replicas: scaled to zero")
        .stdout_contains("spread            none: scaled to zero, it runs no pods to spread")
        .stdout_contains("budget            none: scaled to zero, it runs no pods to protect")
        .stdout_contains("no diagnostics");
}

/// An operator's resource is explained as placed at its operator's fields (issue 18): the count from the
/// mapping, the constraints, and no budget because the operator makes one; a declared kind without a
/// spread field says kix cannot place it.
#[test]
fn issue18_operators_resources_are_explained() {
    let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                   [[instances]]\nname = \"app\"\npackage = \"p\"\n";
    let pool = "apiVersion: kafka.strimzi.io/v1\nkind: KafkaNodePool\nmetadata:\n  name: broker\n  labels: \
                {strimzi.io/cluster: k}\nspec:\n  replicas: 1\n---\napiVersion: example.com/v1\nkind: Database\n\
                metadata: {name: orders}\nspec: {members: 1}\n";
    let toml = "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n[kinds.\"example.com/Database\"]\nreplicas = \"spec.members\"\n\
                podLabels = { db = \"{name}\" }\n[workloads.broker]\nreplicas = { pod = 3 }\n[workloads.orders]\n\
                replicas = { pod = 3 }\nkind = \"Database\"\n";
    Test::new()
        .tree([("clusters/c.toml", cluster), ("packages/p/kix.toml", toml), ("packages/p/w.yaml", pool)])
        .args(["explain", "--cluster", "c", "--instance", "app"])
        .run()
        .status(0)
        .stdout_contains("workload KafkaNodePool/broker")
        .stdout_contains("replicas          3: the mapping's `pod` step")
        .stdout_contains(
            "spread            topology.kubernetes.io/zone maxSkew 1: the zone key, the key level `zone` names",
        )
        .stdout_contains("budget            none: its operator makes its own PodDisruptionBudget")
        .stdout_contains("workload Database/orders")
        .stdout_contains("spread            none: its kind names no field where its operator takes spread constraints")
        .stdout_contains("budget            PodDisruptionBudget orders maxUnavailable 1")
        .stdout_contains("[K0436]");
}

/// The build of a copy of the shipped examples whose `prod` entry for `instance` requests `level`, and
/// `kix explain` of that entry: what `explain --level` must equal.
fn built_at(instance: &str, level: &str) -> (Test, serde_json::Value) {
    let t = Test::new().examples();
    let path = t.root().join("clusters/prod.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let entry = format!("name = \"{instance}\"\n");
    assert!(text.contains(&entry) && !text.contains(&format!("{entry}availability")), "{text}");
    std::fs::write(&path, text.replace(&entry, &format!("{entry}availability = \"{level}\"\n"))).unwrap();
    t.clone().args(["build"]).run().status(0);
    let json = t.clone().args(["explain", "--cluster", "prod", "--instance", instance, "--format", "json"]).run();
    (t, json.status(0).json())
}

/// The values of the steps named `name` of one explained workload.
fn steps(workload: &serde_json::Value, name: &str) -> Vec<String> {
    let all = workload["steps"].as_array().unwrap();
    all.iter().filter(|s| s["step"] == name).map(|s| s["value"].as_str().unwrap().to_string()).collect()
}

/// Issue 22: `explain --level L` is the compiler's own answer at L: its replicas, spread, budget and
/// requests equal a real build (and explain) of a cluster file whose instance asks L, at several levels.
#[test]
fn issue22_explain_level_matches_a_build_at_that_level() {
    for (instance, level) in [("shop", "none"), ("shop", "pod"), ("shop", "node"), ("dns", "node"), ("edge", "pod")] {
        let asked = Test::new()
            .examples()
            .args(["explain", "--cluster", "prod", "--instance", instance, "--level", level, "--format", "json"])
            .run()
            .status(0)
            .json();
        let (built, real) = built_at(instance, level);
        let note = asked["what_if"].as_str().unwrap();
        assert!(note.starts_with(&format!("what-if at level `{level}`")), "{note}");
        assert!(real.get("what_if").is_none(), "{real}");
        let what_if_workloads = asked["workloads"].as_array().unwrap();
        assert_eq!(what_if_workloads.len(), real["workloads"].as_array().unwrap().len());
        let yaml = std::fs::read_to_string(built.root().join(format!("out/prod/{instance}.yaml"))).unwrap();
        let objects: Vec<serde_json::Value> =
            kix_yaml::from_str_all(&yaml).unwrap().into_iter().map(|o| kix_yaml::from_value(&o).unwrap()).collect();
        for (workload, real) in what_if_workloads.iter().zip(real["workloads"].as_array().unwrap()) {
            let at = format!("{instance} at {level}, {}", workload["workload"]);
            for name in ["level", "replicas", "spread", "budget", "requests"] {
                assert_eq!(steps(workload, name), steps(real, name), "{at}: {name}");
            }
            // And the manifests that build wrote agree with what the what-if says.
            let (kind, name) = workload["workload"].as_str().unwrap().split_once('/').unwrap();
            let object = objects.iter().find(|o| o["kind"] == kind && o["metadata"]["name"] == name).unwrap();
            let replicas = object["spec"]["replicas"].as_u64().unwrap();
            assert_eq!(steps(workload, "replicas"), [replicas.to_string()], "{at}");
            let spread = object["spec"]["template"]["spec"]["topologySpreadConstraints"].as_array();
            let built_spread: Vec<(String, String)> = spread
                .into_iter()
                .flatten()
                .map(|c| (c["topologyKey"].as_str().unwrap().into(), c["whenUnsatisfiable"].as_str().unwrap().into()))
                .collect();
            let spread_steps: Vec<&serde_json::Value> =
                workload["steps"].as_array().unwrap().iter().filter(|s| s["step"] == "spread").collect();
            let explained: Vec<(String, String)> = spread_steps
                .iter()
                .filter(|s| s["value"] != "none")
                .map(|s| {
                    let key = s["value"].as_str().unwrap().split(' ').next().unwrap().to_string();
                    (key, s["why"].as_str().unwrap().rsplit(' ').next().unwrap().to_string())
                })
                .collect();
            // A pod template with its own constraints keeps them (R11): kix derives none.
            let own = spread_steps.iter().any(|s| s["why"].as_str().unwrap().contains("its own"));
            if !own {
                assert_eq!(explained, built_spread, "{at}");
            }
            let budgets: Vec<&str> = objects
                .iter()
                .filter(|o| o["kind"] == "PodDisruptionBudget")
                .map(|o| o["metadata"]["name"].as_str().unwrap())
                .collect();
            let budget = &steps(workload, "budget")[0];
            if let Some(rest) = budget.strip_prefix("PodDisruptionBudget ") {
                let derived = rest.split(' ').next().unwrap();
                assert!(budgets.contains(&derived), "{at}: {budget} not built: {budgets:?}");
            } else if budget == "none" {
                assert!(!budgets.contains(&name), "{at}: no budget explained, one built");
            }
        }
    }
}

/// Issue 22: a level above a ceiling is asked but capped, and the output says so; a bad level is a
/// usage error naming the valid ones.
#[test]
fn issue22_explain_level_says_it_is_a_what_if_and_where_a_ceiling_caps_it() {
    let t = Test::new().examples();
    t.clone()
        .args(["explain", "--cluster", "prod", "--instance", "sessions", "--level", "zone"])
        .run()
        .status(0)
        .stdout_contains(
            "  what-if at level `zone`: what the instance would get if its entry in clusters/prod.toml requested \
             `zone` (no file is changed); the package ceiling caps `zone` at `node`\n",
        )
        .stdout_contains("requested level   zone: asked with --level, in place of the files' level: a what-if (R2)");
    t.clone()
        .args(["explain", "--cluster", "prod", "--instance", "operator", "--level", "zone"])
        .run()
        .status(0)
        .stdout_contains("(no file is changed); workload ceilings cap controller at `none`\n");
    t.clone()
        .args(["explain", "--cluster", "prod", "--instance", "shop", "--level", "region"])
        .run()
        .status(2)
        .stderr_contains("[possible values: none, pod, node, zone]");
    Test::in_repo()
        .args(["explain", "--help"])
        .run()
        .status(0)
        .stdout_contains("--level <LEVEL>")
        .stdout_contains("What the instance would get at this level instead (a what-if");
    // Nothing was written: the cluster file is the shipped one.
    assert_eq!(
        std::fs::read(t.root().join("clusters/prod.toml")).unwrap(),
        std::fs::read(crate::support::repo_path("clusters/prod.toml")).unwrap()
    );
}

/// Issue 39: why a workload's hard zone spread has no minDomains, as placement recorded it, on a cluster
/// whose zone a runs no node yet (its pool may add two) and on one where every zone has nodes.
#[test]
fn explain_says_why_a_hard_spread_has_no_min_domains() {
    let package =
        "[meta]\nname = \"api\"\nversion = \"1.0.0\"\n[workloads.api]\nreplicas = { none = 1, pod = 2, zone = 3 }\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: example/api:1\n";
    for (counts, expected) in [
        (
            "{ a = 0, b = 2, c = 2 }",
            "minDomains        none: zone a has no node yet and its pools may add some: minDomains 3 would hold a pod for it until the autoscaler adds a node there (KEP-3022)",
        ),
        (
            "2",
            "minDomains        none: while every domain has nodes it changes nothing, and during a loss below it the scheduler counts the global minimum as 0",
        ),
    ] {
        let cluster = format!(
            "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
             [[instances]]\nname = \"shop\"\npackage = \"api\"\n\
             [[nodePools]]\nname = \"general\"\nzones = [\"a\", \"b\", \"c\"]\nnodesPerZone = {counts}\nmaxNodesPerZone = 2\n"
        );
        let out = Test::new()
            .tree([
                ("clusters/c.toml", cluster),
                ("packages/api/kix.toml", package.to_string()),
                ("packages/api/api.yaml", deployment.to_string()),
            ])
            .args(["explain", "--cluster", "c", "--instance", "shop"])
            .run()
            .status(0);
        assert!(out.stdout.contains(expected), "{}", out.stdout);
    }
}
