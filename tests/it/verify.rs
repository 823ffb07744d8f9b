//! `kix verify` end to end: the real binary over the shipped examples and over
//! fixture trees under tests/fixtures/ that must fail, for the right reason.

use crate::support::*;

/// Runs `kix verify --format json` with `extra` arguments and returns the run and its report.
fn verify_json(test: Test, extra: &[&str]) -> (Output, serde_json::Value) {
    let run = test.args(["verify", "--format", "json"].iter().chain(extra).copied()).run();
    let report = run.json();
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
        .stdout_contains("set nodeTaintsPolicy: Honor");
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
    Test::in_dir(root).args(["verify"]).run().stdout_contains("FAILS none (drain)");
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
