//! `kix verify` end to end: the real binary over the shipped examples and over
//! fixture trees under tests/verify/ that must fail, for the right reason.

mod support;

use support::*;

fn verify_json(root: &std::path::Path, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let mut args = vec!["verify", "--format", "json"];
    args.extend_from_slice(extra);
    let run = kix(root, &args);
    let report = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    (run.status, report, run.stderr)
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
    let (status, report, stderr) = verify_json(&repo_root(), &[]);
    assert_eq!(status, 0, "{report:#}\n{stderr}");
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
    let run = kix(&repo_root(), &["verify"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("cluster prod (6 nodes from inventory)"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("INSTANCE   WORKLOAD               LEVEL  REPLICAS  WORST-CASE RUNNING  REPLACEMENTS  VERDICT"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("cluster edge: not verified"), "{}", run.stdout);
    assert!(run.stdout.ends_with("0 do not meet their level\n"), "{}", run.stdout);
}

#[test]
fn hard_zone_rule_without_honor_fails_domain_loss_and_says_why() {
    let root = repo_root().join("tests/verify/no-honor");
    let (status, report, _) = verify_json(&root, &[]);
    assert_eq!(status, 1);
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
    let text = kix(&root, &["verify"]);
    assert_eq!(text.status, 1);
    assert!(text.stdout.contains("FAILS zone (domain-loss)"), "{}", text.stdout);
    assert!(text.stdout.contains("set nodeTaintsPolicy: Honor"), "{}", text.stdout);
}

#[test]
fn the_same_tree_compiled_by_kix_meets_zone() {
    // The fix kix itself applies: drop the hand-written constraints and the PDB, let kix derive them.
    let scratch = tempfile::tempdir().unwrap();
    copy_tree(&repo_root().join("tests/verify/no-honor"), scratch.path());
    let yaml = scratch.path().join("packages/web/api.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let start = text.find("      topologySpreadConstraints:").unwrap();
    let end = text.find("      containers:").unwrap();
    let fixed = format!("{}{}", &text[..start], &text[end..]);
    let fixed = fixed.split("---\napiVersion: policy/v1").next().unwrap().to_string();
    std::fs::write(&yaml, fixed).unwrap();
    let (status, report, stderr) = verify_json(scratch.path(), &[]);
    assert_eq!(status, 0, "{report:#}\n{stderr}");
    assert_eq!(workload(&report, "prod", "shop", "api")["worst_case_running"], 2);
}

#[test]
fn a_state_snapshot_replaces_the_inventory() {
    let state = repo_root().join("tests/sim/three-zones.yaml");
    let state = state.to_str().unwrap();
    let (status, report, stderr) = verify_json(&repo_root(), &["--cluster", "prod", "--state", state]);
    assert_eq!(status, 0, "{report:#}\n{stderr}");
    let prod = &report.as_array().unwrap()[0];
    assert_eq!(prod["nodes_from"], "state");
    assert_eq!(prod["nodes"], 6);

    // One snapshot describes one cluster.
    let ambiguous = kix(&repo_root(), &["verify", "--state", state]);
    assert_eq!(ambiguous.status, 2);
    assert!(ambiguous.stderr.contains("--state is a snapshot of one cluster"), "{}", ambiguous.stderr);

    let missing = kix(&repo_root(), &["verify", "--cluster", "prod", "--state", "no/such/state.yaml"]);
    assert_eq!(missing.status, 1);
    assert!(
        missing.stderr.contains("error[K0101]") && missing.stderr.contains("no/such/state.yaml"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_single_replica_budget_blocks_the_drain_and_kix_shows_it() {
    let root = repo_root().join("tests/verify/single-replica-pdb");
    let (status, report, _) = verify_json(&root, &[]);
    assert_eq!(status, 1);
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
    let text = kix(&root, &["verify"]);
    assert!(text.stdout.contains("FAILS none (drain)"), "{}", text.stdout);
}

#[test]
fn absurd_replica_counts_are_refused_not_simulated_for_hours() {
    let scratch = tempfile::tempdir().unwrap();
    for dir in ["clusters", "packages"] {
        copy_tree(&repo_root().join(dir), &scratch.path().join(dir));
    }
    let toml = scratch.path().join("packages/web/kix.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace("zone = 3", "zone = 2000000000");
    std::fs::write(&toml, text).unwrap();
    let (status, report, _) = verify_json(scratch.path(), &["--cluster", "prod"]);
    assert_eq!(status, 1);
    let api = workload(&report, "prod", "shop", "api");
    assert_eq!(api["meets_level"], false);
    let finding = api["scenarios"][0]["findings"][0].as_str().unwrap();
    assert!(finding.contains("kix simulates at most 10000 replicas"), "{finding}");
}
