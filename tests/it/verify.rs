//! `kix verify` end to end: the real binary over the shipped examples and over
//! fixture trees under tests/fixtures/ that must fail, for the right reason.

use crate::support::*;

/// Runs `kix verify --format json` with `extra` arguments and returns the run and its report.
fn verify_json(test: Test, extra: &[&str]) -> (Output, serde_json::Value) {
    let run = test.args(["verify", "--format", "json"].iter().chain(extra).copied()).run();
    let report = run.json()["clusters"].clone();
    (run, report)
}

fn workload<'a>(report: &'a serde_json::Value, cluster: &str, instance: &str, name: &str) -> &'a serde_json::Value {
    report
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cluster"] == cluster)
        .and_then(|c| c["instances"].as_array().unwrap().iter().find(|i| i["instance"] == instance))
        .and_then(|i| i["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name))
        .unwrap_or_else(|| panic!("no {cluster}/{instance}/{name} in {report}"))
}

#[test]
fn shipped_examples_meet_their_levels() {
    let (run, report) = verify_json(Test::new().examples(), &[]);
    run.status(0);
    let api = workload(&report, "prod", "shop", "api");
    assert_eq!(api["level"], "zone");
    assert_eq!(api["meets_level"], true);
    assert_eq!(api["replicas"], 3);
    // Three replicas spread one per zone: losing any zone leaves two running, and the replacement schedules.
    assert_eq!(api["worst_case_running"], 2);
    assert_eq!(api["domain_losses"].as_array().unwrap().len(), 3);
    for loss in api["domain_losses"].as_array().unwrap() {
        assert_eq!(loss["pending"].as_object().unwrap().len(), 0, "{loss}");
        assert_eq!(loss["replacements"].as_object().unwrap().len(), 1, "{loss}");
    }
    let store = workload(&report, "staging", "orders-db", "store");
    assert_eq!(store["level"], "node");
    assert_eq!(store["worst_case_running"], 2);
    // The edge cluster has no inventory: reported, not failed.
    let edge = report.as_array().unwrap().iter().find(|c| c["cluster"] == "edge").unwrap();
    assert_eq!(edge["nodes_from"], "none");
}

#[test]
fn text_report_is_a_table_per_cluster() {
    Test::new()
        .examples()
        .args(["verify"])
        .run()
        .status(0)
        .stdout_contains("cluster prod (6 nodes from inventory)")
        .stdout_contains("INSTANCE   WORKLOAD               LEVEL  REPLICAS  WORST-CASE RUNNING  REPLACEMENTS  VERDICT")
        .stdout_contains("cluster edge: not verified")
        .stdout_ends_with("0 do not meet their level\n");
}

#[test]
fn hard_zone_rule_without_honor_fails_domain_loss_and_says_why() {
    let root = "tests/fixtures/no-honor";
    let (run, report) = verify_json(Test::in_dir(root), &[]);
    run.status(1);
    let api = workload(&report, "prod", "shop", "api");
    assert_eq!(api["meets_level"], false);
    let losses = api["domain_losses"].as_array().unwrap();
    assert_eq!(losses.len(), 3);
    for loss in losses {
        assert_eq!(loss["running"], 2, "{loss}");
        let pending = loss["pending"].as_object().unwrap();
        assert_eq!(pending.len(), 1, "{loss}");
        let reason = pending.values().next().unwrap().as_str().unwrap();
        assert!(reason.contains("didn't match pod topology spread constraints"), "{reason}");
    }
    Test::in_dir(root)
        .args(["verify"])
        .run()
        .status(1)
        .stdout_contains("FAILS zone (domain-loss)")
        .stdout_contains("set nodeTaintsPolicy: Honor")
        // issue 21: each finding is a coded, located error, and the summary counts them.
        .stderr_contains("error[K0607]: Deployment api: domain-loss: zone a lost: replacement")
        .stderr_contains("--> packages/web/api.yaml:")
        .stderr_contains("a hard rule keeps the replacement off the nodes with room")
        .stderr_contains("= help: `kix explain K0607`")
        .stderr_ends_with("kix: 3 errors, 0 warnings\n");
}

#[test]
fn the_same_tree_compiled_by_kix_meets_zone() {
    // The fix kix itself applies: drop the hand-written constraints and the PDB, let kix derive them.
    let t = Test::new().fixture("tests/fixtures/no-honor");
    let yaml = t.root().join("packages/web/api.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let start = text.find("      topologySpreadConstraints:").unwrap();
    let end = text.find("      containers:").unwrap();
    let fixed = format!("{}{}", &text[..start], &text[end..]);
    let fixed = fixed.split("---\napiVersion: policy/v1").next().unwrap().to_string();
    std::fs::write(&yaml, fixed).unwrap();
    let (run, report) = verify_json(t, &[]);
    run.status(0);
    assert_eq!(workload(&report, "prod", "shop", "api")["worst_case_running"], 2);
}

/// The scheduler model's snapshot corpus (crates/sim/tests/snapshots/) through the binary: `kix
/// verify --state` with a snapshot full of finished Job pods places the shipped examples as on empty
/// nodes.
#[test]
fn kix_verify_state_ignores_finished_pods() {
    let state = repo_path("crates/sim/tests/snapshots/terminal-pods.yaml");
    Test::in_repo()
        .args(["verify", "--cluster", "prod", "--state", state.to_str().unwrap()])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/verify-prod-terminal-pods.txt"));
}

#[test]
fn a_state_snapshot_replaces_the_inventory() {
    let state = repo_path("tests/sim/three-zones.yaml");
    let state = state.to_str().unwrap();
    let (run, report) = verify_json(Test::new().examples(), &["--cluster", "prod", "--state", state]);
    run.status(0);
    let prod = &report.as_array().unwrap()[0];
    assert_eq!(prod["nodes_from"], "state");
    assert_eq!(prod["nodes"], 6);

    // One snapshot describes one cluster.
    Test::new()
        .examples()
        .args(["verify", "--state", state])
        .run()
        .status(2)
        .stderr_contains("--state is a snapshot of one cluster");

    Test::new()
        .examples()
        .args(["verify", "--cluster", "prod", "--state", "no/such/state.yaml"])
        .run()
        .status(1)
        .stderr_contains("error[K0101]")
        .stderr_contains("no/such/state.yaml");
}

#[test]
fn a_single_replica_budget_blocks_the_drain_and_kix_shows_it() {
    let root = "tests/fixtures/single-replica-pdb";
    let (run, report) = verify_json(Test::in_dir(root), &[]);
    run.status(1);
    let reports = workload(&report, "staging", "reports", "reports");
    assert_eq!(reports["level"], "none");
    assert_eq!(reports["meets_level"], false);
    let drain = reports["scenarios"].as_array().unwrap().iter().find(|s| s["scenario"] == "drain").unwrap();
    assert_eq!(drain["pass"], false);
    let finding = drain["findings"][0].as_str().unwrap();
    assert!(
        finding.contains("is blocked") && finding.contains("PodDisruptionBudget reports/reports allows no disruption"),
        "{finding}"
    );
    Test::in_dir(root)
        .args(["verify"])
        .run()
        .status(1)
        .stdout_contains("FAILS none (drain)")
        .stdout_contains("[K0612] drain of general-a-1 is blocked")
        // issue 21: located at the package's budget, counted in the summary.
        .stderr_contains("error[K0612]: Deployment reports: drain: drain of general-a-1 is blocked")
        .stderr_contains("--> packages/reports/reports.yaml:23:1")
        .stderr_contains("the budget that refuses the eviction")
        // issue 24: the build already warns about the same budget (K0471), and verify counts it.
        .stderr_contains("warning[K0471]")
        .stderr_ends_with("kix: 1 error, 1 warning\n");
}

#[test]
fn absurd_replica_counts_are_refused_not_simulated_for_hours() {
    let t = Test::new().examples();
    let toml = t.root().join("packages/web/kix.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace("zone = 3", "zone = 2000000000");
    std::fs::write(&toml, text).unwrap();
    let (run, report) = verify_json(t, &["--cluster", "prod"]);
    run.status(1);
    let api = workload(&report, "prod", "shop", "api");
    assert_eq!(api["meets_level"], false);
    let finding = api["scenarios"][0]["findings"][0].as_str().unwrap();
    assert!(finding.contains("kix simulates at most 10000 replicas"), "{finding}");
}

/// What K0450 warns about at build time, verify shows on the inventory: the proxy's rolling update
/// deadlocks on its required hostname anti-affinity; the revision-scoped and the maxUnavailable 1
/// variants update; the store's second replica has no zone.
#[test]
fn own_anti_affinity_deadlocks_the_rollout_that_k0450_warned_about() {
    let root = "tests/fixtures/anti-affinity-rollout";
    let (run, report) = verify_json(Test::in_dir(root), &[]);
    run.status(1);
    let scenario = |name: &str, scenario: &str| {
        let w = workload(&report, "edge", "ha", name);
        w["scenarios"].as_array().unwrap().iter().find(|s| s["scenario"] == scenario).unwrap().clone()
    };
    let update = scenario("proxy", "rolling-update");
    assert_eq!(update["pass"], false);
    let findings = update["findings"].to_string();
    assert!(findings.contains("deadlocks") && findings.contains("didn't match pod anti-affinity rules"), "{findings}");
    for name in ["scoped", "tolerant"] {
        assert_eq!(scenario(name, "rolling-update")["pass"], true, "{name}");
    }
    assert_eq!(scenario("store", "rollout")["pass"], false);
}

// Issue 9 item 5: a Deployment under an HPA is verified at the HPA's minimum. The upstream
// php-apache HPA says minReplicas 1; at level zone kix raises it to the mapping's 3 and leaves the
// Deployment's spec.replicas (absent, so 1) to the autoscaler: verify places 3, not 1.
#[test]
fn a_workload_under_an_autoscaler_is_verified_at_its_raised_minimum() {
    let (run, report) = verify_json(Test::in_dir("tests/fixtures/hpa-resources"), &[]);
    run.status(0);
    let php = workload(&report, "prod", "shop", "php-apache");
    assert_eq!(php["replicas"], 3, "{php}");
    assert_eq!(php["meets_level"], true, "{php}");
    assert_eq!(php["worst_case_running"], 2, "{php}");
}

/// A real package's controller (`nodeSelector: kubernetes.io/os: linux`) schedules on an inventory:
/// its nodes carry the labels every kubelet sets (issue 9: every such workload was Pending).
#[test]
fn ingress_nginx_controller_selecting_linux_verifies_on_an_inventory() {
    let root = "tests/fixtures/ingress-nginx-linux";
    // The fixture is the real-world corpus's file, byte for byte.
    let fixture = std::fs::read(repo_path(root).join("packages/ingress-nginx/deploy.yaml")).unwrap();
    let upstream = std::fs::read(repo_path("tests/realworld/packages/ingress-nginx/deploy.yaml")).unwrap();
    assert!(
        fixture == upstream,
        "the fixture's deploy.yaml differs from tests/realworld/packages/ingress-nginx/deploy.yaml"
    );
    assert!(String::from_utf8_lossy(&fixture).contains("nodeSelector:\n        kubernetes.io/os: linux"));

    let (run, report) = verify_json(Test::in_dir(root), &[]);
    let run = run.status(0);
    let controller = workload(&report, "prod", "ingress", "ingress-nginx-controller");
    assert_eq!(controller["meets_level"], true, "{controller}");
    assert_eq!(controller["replicas"], 3);
    assert_eq!(controller["worst_case_running"], 2);
    assert_eq!(report[0]["missing_keys"], serde_json::json!([]));
    assert!(!run.stderr.contains("K0610"), "{}", run.stderr);

    // The same nodes as Windows nodes: the selector matches none, and verify says so in the scheduler's words.
    let t = Test::new().fixture(root);
    let cluster = t.root().join("clusters/prod.toml");
    let text = std::fs::read_to_string(&cluster).unwrap();
    std::fs::write(&cluster, text.replace("region = \"eu-1\"", "region = \"eu-1\"\nos = \"windows\"")).unwrap();
    let (run, report) = verify_json(t, &[]);
    run.status(1);
    let controller = workload(&report, "prod", "ingress", "ingress-nginx-controller");
    assert_eq!(controller["meets_level"], false);
    assert!(controller.to_string().contains("node affinity/selector"), "{controller}");
}

/// The one diagnostic with `code` among the `diagnostics` of the `--format json` document `stdout`.
fn json_diagnostic(stdout: &str, code: &str) -> serde_json::Value {
    let document: serde_json::Value = serde_json::from_str(stdout).unwrap();
    let found: Vec<serde_json::Value> =
        document["diagnostics"].as_array().unwrap().iter().filter(|d| d["code"] == code).cloned().collect();
    assert_eq!(found.len(), 1, "one {code} expected in {stdout}");
    found.into_iter().next().unwrap()
}

/// The shipped `edge` cluster declares an `example.com/rack` key; with an inventory that gives no
/// node a rack, build (K0313) and verify (K0610) say so, and what it does to spreading.
fn edge_with_inventory(pool_extra: &str) -> Test {
    let t = Test::new().examples();
    let edge = t.root().join("clusters/edge.toml");
    let text = std::fs::read_to_string(&edge).unwrap();
    let inventory = format!(
        "\n[capabilities]\nmultiNode = true\navailabilityZones = [\"eu-1a\", \"eu-1b\", \"eu-1c\"]\n\n\
         [[nodePools]]\nname = \"general\"\nzones = [\"eu-1a\", \"eu-1b\", \"eu-1c\"]\nnodesPerZone = 2\n{pool_extra}"
    );
    std::fs::write(&edge, format!("{text}{inventory}")).unwrap();
    t
}

#[test]
fn an_extra_key_no_inventory_node_carries_is_warned_about_by_build_and_verify() {
    edge_with_inventory("")
        .args(["build", "--cluster", "edge"])
        .run()
        .status(0)
        .stderr_contains("warning[K0313]: failure-domain key `example.com/rack` is declared, but no node of the inventory carries it")
        .stderr_contains("--> clusters/edge.toml:")
        .stderr_contains("| extra = [\"example.com/rack\"]");

    let (run, report) = verify_json(edge_with_inventory(""), &["--cluster", "edge"]);
    let run = run.status(0);
    let missing = report[0]["missing_keys"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    let rack = &missing[0];
    assert_eq!(rack["key"], "example.com/rack");
    assert_eq!(rack["role"], "extra");
    assert_eq!((rack["lacking"].as_u64(), rack["nodes"].as_u64()), (Some(6), Some(6)));
    assert_eq!(rack["soft"], serde_json::json!(["shop/Deployment/api"]));
    assert_eq!(rack["hard"], serde_json::json!([]));
    assert!(rack["effect"].as_str().unwrap().contains("soft spreading does nothing"), "{rack}");
    let k0610 = json_diagnostic(&run.stdout, "K0610");
    assert_eq!(k0610["severity"], "warning");
    assert_eq!(k0610["cluster"], "edge");
    assert_eq!(k0610["file"], "clusters/edge.toml");
    let message = k0610["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "cluster `edge`: failure-domain key `example.com/rack` (extra key) is missing from 6 of 6 nodes"
        ),
        "{message}"
    );

    // The text report lists it under warnings.
    edge_with_inventory("")
        .args(["verify", "--cluster", "edge"])
        .run()
        .status(0)
        .stdout_contains("warnings:\n  cluster `edge`: failure-domain key `example.com/rack` (extra key) is missing from 6 of 6 nodes (general-eu-1a-1, general-eu-1a-2, general-eu-1b-1, ...)");

    // Racks dealt to the pool's nodes: neither warns.
    let racked = "[nodePools.domains]\n\"example.com/rack\" = [\"r1\", \"r2\"]\n";
    let run = edge_with_inventory(racked).args(["build", "--cluster", "edge"]).run().status(0);
    assert!(!run.stderr.clone().contains("K0313"));
    let (run, report) = verify_json(edge_with_inventory(racked), &["--cluster", "edge"]);
    let run = run.status(0);
    assert_eq!(report[0]["missing_keys"], serde_json::json!([]));
    assert!(!run.stderr.clone().contains("K0610"));
}

#[test]
fn a_snapshot_without_the_extra_key_is_warned_about() {
    let state = repo_path("tests/sim/three-zones.yaml");
    let state = state.to_str().unwrap();
    let (run, report) = verify_json(Test::in_repo(), &["--cluster", "edge", "--state", state]);
    let run = run.status(0);
    assert_eq!(report[0]["nodes_from"], "state");
    let missing = report[0]["missing_keys"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0]["key"], "example.com/rack");
    assert_eq!(missing[0]["lacking"], 6);
    let k0610 = json_diagnostic(&run.stdout, "K0610");
    assert!(k0610["file"].as_str().unwrap().ends_with("tests/sim/three-zones.yaml"), "{k0610}");
    let message = k0610["message"].as_str().unwrap();
    assert!(message.contains("missing from 6 of 6 nodes (node-a1, node-a2, node-b1, ...)"), "{message}");

    // The same snapshot for prod, whose keys every node carries: nothing to say.
    let (run, report) = verify_json(Test::in_repo(), &["--cluster", "prod", "--state", state]);
    let run = run.status(0);
    assert_eq!(report[0]["missing_keys"], serde_json::json!([]));
    assert!(!run.stderr.contains("K0610"), "{}", run.stderr);
}

/// K0610 is found by verify, after the compile, and still follows `allow` and `--deny-warnings`.
#[test]
fn verify_warnings_are_acknowledged_and_denied_like_any_warning() {
    let t = Test::new().examples();
    let edge = t.root().join("clusters/edge.toml");
    let text = std::fs::read_to_string(&edge).unwrap();
    // An inventory without the declared rack key: K0313 at build, K0610 in verify.
    let with_pool = format!("{text}\n[[nodePools]]\nname = \"general\"\nnodesPerZone = 3\n");
    std::fs::write(&edge, &with_pool).unwrap();
    t.clone().args(["verify", "--cluster", "edge"]).run().stderr_contains("warning[K0610]");
    t.clone().args(["verify", "--cluster", "edge", "--deny-warnings"]).run().status(1).stderr_contains("error[K0502]");
    std::fs::write(&edge, with_pool.replace("allow = [\"K0303\"]", "allow = [\"K0303\", \"K0313\", \"K0610\"]"))
        .unwrap();
    let run = t.clone().args(["verify", "--cluster", "edge", "--deny-warnings"]).run().status(0);
    assert!(!run.stderr.contains("K0610"), "{}", run.stderr);
    run.stderr_contains("acknowledged)");
}

/// Issue 18: a Rollout is verified like a Deployment (its revisions told apart by
/// rollouts-pod-template-hash), with its own template or the template of the Deployment its workloadRef
/// names; that Deployment, scaled to zero, runs no pods and is not checked.
#[test]
fn issue18_rollouts_are_verified_like_deployments() {
    let root = "tests/fixtures/argo-rollouts";
    let (run, report) = verify_json(Test::in_dir(root), &[]);
    run.status(0);
    for name in ["canary", "web"] {
        let rollout = workload(&report, "prod", "shop", name);
        assert_eq!((rollout["kind"].as_str(), rollout["replicas"].as_i64()), (Some("Rollout"), Some(5)));
        assert_eq!(rollout["meets_level"], true, "{rollout}");
    }
    let shop = &report[0]["instances"][0];
    assert_eq!(shop["workloads"].as_array().unwrap().len(), 2, "the Deployment scaled to zero is not checked");
    assert!(shop.get("unverified").is_none());
    Test::in_dir(root).args(["verify"]).run().stdout_ends_with("2 workloads checked, 0 do not meet their level\n");
}

/// Issue 18: a custom resource whose CRD declares spec.replicas is named and listed as not verified.
#[test]
fn issue18_an_undeclared_custom_resource_is_listed_as_not_verified() {
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: databases.example.com\n\
               spec:\n  group: example.com\n  names: {kind: Database, plural: databases}\n  scope: Namespaced\n  versions:\n  \
               - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
               properties:\n          spec:\n            type: object\n            properties:\n              replicas: {type: integer}\n\
               ---\napiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: orders\nspec:\n  replicas: 3\n";
    let cluster = std::fs::read_to_string("tests/fixtures/argo-rollouts/clusters/prod.toml").unwrap();
    let test = Test::new().tree([
        ("clusters/prod.toml", cluster),
        ("packages/shop/kix.toml", "[meta]\nname = \"shop\"\nversion = \"1.0.0\"\n".to_string()),
        ("packages/shop/db.yaml", crd.to_string()),
    ]);
    let (run, report) = verify_json(test.clone(), &[]);
    let run = run.status(0);
    let k0435 = json_diagnostic(&run.stdout, "K0435");
    assert!(k0435["message"].as_str().unwrap().contains("custom resource Database orders"), "{k0435}");
    assert_eq!(report[0]["instances"][0]["unverified"], serde_json::json!([{"kind": "Database", "name": "orders"}]));
    test.args(["verify"])
        .run()
        .stdout_contains("  prod/shop Database/orders\n")
        .stdout_ends_with("0 workloads checked, 0 do not meet their level, 1 custom resource not verified\n");
}

/// A custom resource of a package's `[kinds]` is simulated from its profile (issue 18): pods with its pod
/// labels and its pod template's requests, judged at its level. The template's requests are what make
/// the second tree fail: a pod that fits no node stays Pending.
#[test]
fn issue18_declared_kinds_are_verified_from_their_pod_template() {
    let tree = |cpu: &str| {
        let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                       [[nodePools]]\nname = \"general\"\nzones = [\"a\", \"b\", \"c\"]\nnodesPerZone = 1\n\
                       allocatable = { cpu = \"2\", memory = \"8Gi\", pods = 110 }\n[[instances]]\nname = \"db\"\npackage = \"db\"\n";
        let toml = "[meta]\nname = \"db\"\nversion = \"1.0.0\"\n[kinds.\"example.com/Database\"]\nreplicas = \"spec.members\"\n\
                    podLabels = { \"example.com/cluster\" = \"{name}\" }\npodTemplate = \"spec.pod\"\n\
                    topologySpreadConstraints = \"spec.pod.spec.topologySpreadConstraints\"\ncontroller = \"StatefulSet\"\n\
                    [workloads.orders]\nreplicas = { none = 1, zone = 3 }\n";
        let yaml = format!(
            "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: orders\nspec:\n  members: 1\n  pod:\n    \
             spec:\n      containers:\n      - name: db\n        resources: {{requests: {{cpu: \"{cpu}\"}}}}\n"
        );
        vec![
            ("clusters/prod.toml".to_string(), cluster.to_string()),
            ("packages/db/kix.toml".to_string(), toml.to_string()),
            ("packages/db/db.yaml".to_string(), yaml),
        ]
    };
    let (run, report) = verify_json(Test::new().tree(tree("1")), &[]);
    run.status(0);
    let orders = workload(&report, "prod", "db", "orders");
    assert_eq!((orders["kind"].as_str(), orders["replicas"].as_i64()), (Some("Database"), Some(3)), "{orders}");
    assert_eq!((orders["meets_level"].as_bool(), orders["worst_case_running"].as_i64()), (Some(true), Some(2)));
    // Three cpus a pod on nodes of two: nothing places.
    let (run, report) = verify_json(Test::new().tree(tree("3")), &[]);
    run.status(1);
    let orders = workload(&report, "prod", "db", "orders");
    assert_eq!(orders["meets_level"], false, "{orders}");
    assert!(orders.to_string().contains("Insufficient cpu"), "{orders}");
}
