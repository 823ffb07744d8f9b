//! `kix audit --state` end to end (issue 23): the real binary over the repository's own root
//! (cluster prod, instance shop: Deployment `api`, level zone, 3 replicas, hard zone spread
//! maxSkew 1 and soft hostname spread, both with `matchLabelKeys: [pod-template-hash]`) and the
//! drift snapshots under tests/audit/ (6 nodes, two per zone: zone-a, zone-b, zone-c).
//!
//! Figures follow upstream PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread/
//! filtering.go): every node the template may run on (nodeAffinity/nodeSelector, taints under
//! nodeTaintsPolicy Honor) and that has the key is a domain, seeded at 0; terminating pods are not
//! counted; skew = largest count - smallest count over the eligible domains.

use crate::support::*;

fn audit_json(snapshot: &str) -> (Output, serde_json::Value) {
    let state = repo_path(format!("tests/audit/{snapshot}.yaml"));
    let run = Test::in_repo()
        .args(["audit", "--cluster", "prod", "--format", "json", "--state", state.to_str().unwrap()])
        .run();
    let report = run.json();
    (run, report)
}

fn api(report: &serde_json::Value) -> &serde_json::Value {
    report["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["instance"] == "shop")
        .and_then(|i| i["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "api"))
        .unwrap_or_else(|| panic!("no shop/api in {report}"))
}

fn zone_spread(w: &serde_json::Value) -> &serde_json::Value {
    w["spreads"].as_array().unwrap().iter().find(|s| s["topology_key"] == "topology.kubernetes.io/zone").unwrap()
}

#[test]
fn balanced_snapshot_exits_0() {
    // One pod per zone: counts 1/1/1, skew 0; losing zone-a (first of equals) leaves 2 of 3.
    let (run, report) = audit_json("balanced");
    run.status(0);
    let w = api(&report);
    assert_eq!(w["fails"], false);
    assert_eq!(zone_spread(w)["counts"], serde_json::json!({"zone-a": 1, "zone-b": 1, "zone-c": 1}));
    assert_eq!(zone_spread(w)["skew"], 0);
    assert_eq!(w["survival"]["worst_domain"], "zone-a");
    assert_eq!(w["survival"]["running_after"], 2);
    assert!(w["remedy"].is_null());
    // Workloads of prod with no pods in the snapshot are reported, not failed.
    let absent = report["instances"].as_array().unwrap().iter().flat_map(|i| i["workloads"].as_array().unwrap());
    assert!(absent.filter(|w| w["name"] != "api").all(|w| w["absent"] == true && w["fails"] == false));
}

#[test]
fn after_a_zone_outage_and_recovery() {
    // Zones b and c went down: their nodes left, zone-a was the only domain, so the hard spread
    // admitted all three pods there (skew 0 over one domain). The zones came back empty: now
    // zone-a=3, zone-b=0, zone-c=0, skew 3 > 1; losing zone-a leaves 0 of 3: FAILS zone.
    // The restart's new pods count only each other (matchLabelKeys pod-template-hash), maxSurge 1
    // (25% of 3 rounded up), maxUnavailable 0: each new pod goes to a zone without a new pod, 1/1/1.
    let (run, report) = audit_json("zone-outage");
    run.status(1);
    let w = api(&report);
    assert_eq!(w["fails"], true);
    assert_eq!(zone_spread(w)["counts"], serde_json::json!({"zone-a": 3, "zone-b": 0, "zone-c": 0}));
    assert_eq!(zone_spread(w)["skew"], 3);
    assert_eq!(zone_spread(w)["violated"], true);
    assert_eq!(w["survival"]["worst_domain"], "zone-a");
    assert_eq!(w["survival"]["running_after"], 0);
    assert_eq!(w["survival"]["survives"], false);
    let remedy = &w["remedy"];
    assert_eq!(remedy["counts"], serde_json::json!({"zone-a": 1, "zone-b": 1, "zone-c": 1}));
    assert_eq!(remedy["survives"], true);
    assert_eq!(remedy["survival"]["running_after"], 2);
    assert_eq!(remedy["commands"][0], "kubectl -n shop rollout restart deployment/api");
}

#[test]
fn after_a_scale_down() {
    // 6 -> 3: the ReplicaSet controller deleted the pods on the nodes holding most of its pods
    // (node-b1 and node-c1 held two each), not by zone: zone-a=2, zone-b=0, zone-c=1, skew 2 > 1.
    // Losing zone-a leaves 1 of 3: the level holds, the hard constraint does not: FAILS.
    let (run, report) = audit_json("scale-down");
    run.status(1);
    let w = api(&report);
    assert_eq!(zone_spread(w)["counts"], serde_json::json!({"zone-a": 2, "zone-b": 0, "zone-c": 1}));
    assert_eq!(zone_spread(w)["skew"], 2);
    assert_eq!(w["survival"]["running_after"], 1);
    assert_eq!(w["survival"]["survives"], true);
    assert_eq!(w["fails"], true);
    assert_eq!(w["remedy"]["counts"], serde_json::json!({"zone-a": 1, "zone-b": 1, "zone-c": 1}));
}

#[test]
fn a_lopsided_rollout() {
    // The new ReplicaSet ended 2/1/0; the old pod in zone-c is Terminating, which the spread count
    // leaves out (countPodsMatchSelector skips pods with a deletionTimestamp): skew 2.
    let (run, report) = audit_json("lopsided-rollout");
    run.status(1);
    let w = api(&report);
    assert_eq!(w["pods"]["terminating"], serde_json::json!(["api-5c8d7f9b6a-old"]));
    assert_eq!(w["pods"]["running"], 3);
    assert_eq!(zone_spread(w)["counts"], serde_json::json!({"zone-a": 2, "zone-b": 1, "zone-c": 0}));
    assert_eq!(zone_spread(w)["skew"], 2);
    assert_eq!(w["remedy"]["survives"], true);
}

#[test]
fn a_hard_constraint_violated_by_pods_bound_before_it() {
    // The pods have no topologySpreadConstraints (bound before kix's output was applied): drift.
    // zone-a=2 (one not Ready: still counted by the spread, not by survival), zone-b=1: skew 2.
    // Ready pods: zone-a 1, zone-b 1: the worst loss (zone-a, first of equals) leaves 1.
    // The budget minAvailable 2 with 2 healthy allows 0 disruptions. The remedy applies the output;
    // its rollout deletes the not-Ready old pod first and ends 1/1/1.
    let (run, report) = audit_json("bound-before-constraint");
    run.status(1);
    let w = api(&report);
    assert_eq!(w["drift"].as_array().unwrap().len(), 3);
    assert_eq!(w["pods"]["not_ready"], serde_json::json!(["api-7d9f8c6b5d-a2"]));
    assert_eq!(zone_spread(w)["skew"], 2);
    assert_eq!(w["survival"]["running_after"], 1);
    assert_eq!(w["blocked_budgets"].as_array().unwrap().len(), 1);
    assert_eq!(w["remedy"]["commands"][0], "kubectl apply -f out/prod/shop.yaml");
    assert_eq!(w["remedy"]["counts"], serde_json::json!({"zone-a": 1, "zone-b": 1, "zone-c": 1}));
}

#[test]
fn a_restart_that_cannot_spread_says_so_and_what_would() {
    // zone-outage.yaml's 3/0/0, but zone-c's nodes have 200m CPU allocatable and an api pod requests
    // 250m: NodeResourcesFit (noderesources/fit.go, `fitsRequest`) rejects both. Zone-c still is a
    // spread domain (resources are no node inclusion policy), seeded at 0, so the global minimum
    // for the new ReplicaSet's pods (matchLabelKeys pod-template-hash: they count only each other)
    // stays 0 while zone-c has none. The restart (maxSurge 1, maxUnavailable 0):
    // - new pod 1 goes to zone-a or zone-b (count 0 + 1 - min 0 = 1 <= 1); new pod 2 to the other
    //   one (its zone would be 1 + 1 - 0 = 2 > 1); new pod 3 fits neither (2 > 1) nor zone-c:
    //   Pending;
    // - `maxScaledDown = allPods 6 - minAvailable 3 - newUnavailable 1 = 2` old pods go, then
    //   4 - 3 - 1 = 0: the rollout stalls with 1 old pod in zone-a, new ones in zone-a and zone-b.
    // Ends zone-a=2 zone-b=1 with 1 Pending: the remedy does not hold; a node in zone-c would.
    let (run, report) = audit_json("remedy-blocked");
    run.status(1);
    let w = api(&report);
    assert_eq!(zone_spread(w)["counts"], serde_json::json!({"zone-a": 3, "zone-b": 0, "zone-c": 0}));
    assert_eq!(w["survival"]["running_after"], 0);
    let remedy = &w["remedy"];
    assert_eq!(remedy["counts"], serde_json::json!({"zone-a": 2, "zone-b": 1}));
    assert_eq!(remedy["pending"], 1);
    assert_eq!(remedy["survives"], false);
    let otherwise: Vec<&str> = remedy["otherwise"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(otherwise[0].starts_with("a node the pods can run on in zone-c"), "{otherwise:?}");
    assert!(otherwise.iter().any(|x| x.starts_with("capacity for 1 pod the")), "{otherwise:?}");
    assert!(otherwise.iter().any(|x| x.contains("RemovePodsViolatingTopologySpreadConstraint")), "{otherwise:?}");
    let state = repo_path("tests/audit/remedy-blocked.yaml");
    Test::in_repo()
        .args(["audit", "--cluster", "prod", "--state", state.to_str().unwrap()])
        .run()
        .status(1)
        .stdout_contains("ends zone-a=2 zone-b=1, 1 pending; still FAILS: the rollout stalls with 1 pod Pending")
        .stdout_contains("what would: a node the pods can run on in zone-c");
}

#[test]
fn a_majority_workload_that_keeps_one_but_loses_the_majority() {
    // orders-db/store: StatefulSet, 3 members, survive = "majority" (packages/quorum), level zone.
    // Zone-c is down (its nodes are gone), so the eligible zone domains are zone-a and zone-b:
    // store-0, store-1 in zone-a, store-2 in zone-b is skew 2 - 1 = 1 <= maxSkew 1, not violated.
    // Losing zone-a leaves 1 of 3: one pod survives, but a majority is 3 / 2 + 1 = 2: FAILS.
    // The restart (StatefulSet: store-2 first, each deleted then recreated; no matchLabelKeys, so the
    // other members count): store-2 with a=2 b=0 can only go to zone-b (zone-a: 2 + 1 - 0 > 1);
    // store-1, then store-0, each see 1/1 or 2/0 and go where the filter admits (scoring picks
    // among equals): any end over two zones is 2/1 (the model's: zone-a=2 zone-b=1), which FAILS.
    // Over two zones the most even placement of 3 is 2/1 and losing the 2 leaves 1 < 2; three zones
    // (1/1/1 leaves 2) are needed: one more zone, and the descheduler (which only evicts pods above
    // maxSkew, none here) is not offered.
    let state = repo_path("tests/audit/quorum-two-zones.yaml");
    let run = Test::in_repo()
        .args(["audit", "--cluster", "prod", "--format", "json", "--state", state.to_str().unwrap()])
        .run();
    let report = run.json();
    run.status(1);
    let w = report["instances"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["workloads"].as_array().unwrap())
        .find(|w| w["name"] == "store")
        .unwrap();
    assert_eq!(w["survive"], "majority");
    assert_eq!(w["fails"], true);
    assert_eq!(zone_spread(w)["counts"], serde_json::json!({"zone-a": 2, "zone-b": 1}));
    assert_eq!(zone_spread(w)["skew"], 1);
    assert_eq!(zone_spread(w)["violated"], false);
    let survival = &w["survival"];
    assert_eq!(
        (&survival["worst_domain"], &survival["running_after"], &survival["of"], &survival["required"]),
        (&serde_json::json!("zone-a"), &serde_json::json!(1), &serde_json::json!(3), &serde_json::json!(2))
    );
    assert_eq!(survival["survives"], false);
    let remedy = &w["remedy"];
    assert_eq!(remedy["counts"], serde_json::json!({"zone-a": 2, "zone-b": 1}));
    assert_eq!(remedy["survives"], false);
    assert_eq!(remedy["commands"][0], "kubectl -n orders-db rollout restart statefulset/store");
    let otherwise = remedy["otherwise"].as_array().unwrap();
    assert!(
        otherwise[0]
            .as_str()
            .unwrap()
            .starts_with("nodes the pods can run on in 1 more topology.kubernetes.io/zone domain:")
    );
    assert!(!otherwise.iter().any(|x| x.as_str().unwrap().contains("descheduler")), "{otherwise:?}");
    Test::in_repo()
        .args(["audit", "--cluster", "prod", "--state", state.to_str().unwrap()])
        .run()
        .status(1)
        .stdout_contains(
            "worst topology.kubernetes.io/zone loss: zone-a: 1 of 3 left running, a majority, 2 needed: FAILS",
        );
}

#[test]
fn all_audits_the_snapshots_workloads_kix_did_not_compile() {
    // tests/audit/uncompiled.yaml: the snapshot's Deployments and StatefulSets are shop/api (compiled
    // for prod: audited once, as compiled), shop/legacy, shop/queue and shop/broken; the others are
    // judged with their own spread constraints at prod's `availability = "zone"`.
    // - legacy: 2 pods in zone-a under a hard zone spread maxSkew 1 (no matchLabelKeys): zone-a=2,
    //   zone-b=0, zone-c=0, skew 2 > 1; losing zone-a leaves 0 of 2: FAILS. Its restart (maxSurge
    //   25% of 2 rounded up = 1, maxUnavailable rounded down = 0), old pods counted: new pod 1 can't
    //   go to zone-a (2 + 1 - 0 > 1), goes to zone-b or zone-c; one old pod goes (2 + 1 - 2 = 1);
    //   new pod 2 sees a=1 plus the new zone at 1: only the third zone (0 + 1 - 0) admits it; the
    //   last old pod goes: one pod in each of zone-b and zone-c, survives.
    // - queue: no spread constraints, pods in zone-a and zone-b: losing either leaves 1 of 2: meets.
    // - broken: `replicas: three` is unreadable: reported, not audited.
    let state = repo_path("tests/audit/uncompiled.yaml");
    let run = Test::in_repo()
        .args(["audit", "--cluster", "prod", "--all", "--format", "json", "--state", state.to_str().unwrap()])
        .run();
    let report = run.json();
    run.status(1);
    assert_eq!(api(&report)["fails"], false);
    let uncompiled = &report["uncompiled"];
    assert_eq!(uncompiled["level"], "zone");
    let names: Vec<&str> =
        uncompiled["workloads"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["legacy", "queue"]);
    let legacy = &uncompiled["workloads"][0];
    assert_eq!(legacy["kind"], "Deployment");
    assert_eq!(zone_spread(legacy)["counts"], serde_json::json!({"zone-a": 2, "zone-b": 0, "zone-c": 0}));
    assert_eq!(zone_spread(legacy)["violated"], true);
    assert_eq!(legacy["survival"]["running_after"], 0);
    assert_eq!(legacy["fails"], true);
    assert_eq!(legacy["remedy"]["counts"], serde_json::json!({"zone-b": 1, "zone-c": 1}));
    assert_eq!(legacy["remedy"]["survives"], true);
    assert_eq!(legacy["remedy"]["commands"][0], "kubectl -n shop rollout restart deployment/legacy");
    let queue = &uncompiled["workloads"][1];
    assert_eq!(queue["kind"], "StatefulSet");
    assert_eq!(queue["spreads"], serde_json::json!([]));
    assert_eq!(queue["survival"]["running_after"], 1);
    assert_eq!(queue["fails"], false);
    assert_eq!(uncompiled["unread"].as_array().unwrap().len(), 1);
    assert!(uncompiled["unread"][0].as_str().unwrap().starts_with("Deployment shop/broken: "), "{uncompiled}");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo_path("schemas/audit.schema.json")).unwrap()).unwrap();
    conforms(&report, &schema, &schema, "uncompiled").unwrap();
    // Without --all the same snapshot audits only what kix compiled: api is balanced, exit 0.
    let run = Test::in_repo()
        .args(["audit", "--cluster", "prod", "--format", "json", "--state", state.to_str().unwrap()])
        .run();
    let report = run.json();
    run.status(0);
    assert!(report.get("uncompiled").is_none());
    Test::in_repo()
        .args(["audit", "--cluster", "prod", "--all", "--state", state.to_str().unwrap()])
        .run()
        .status(1)
        .stdout_contains(
            "not compiled by kix (--all): 2 workloads, their own spread constraints at the cluster's level zone",
        )
        .stdout_contains("prod Deployment/shop/legacy: level zone, 2 replicas: FAILS zone")
        .stdout_contains("remedy (simulated rollout of its own template): ends zone-b=1 zone-c=1; survives")
        .stdout_contains("not audited, unreadable: Deployment shop/broken:");
}

#[test]
fn text_report_names_counts_worst_domain_and_remedy() {
    let state = repo_path("tests/audit/zone-outage.yaml");
    Test::in_repo()
        .args(["audit", "--cluster", "prod", "--state", state.to_str().unwrap()])
        .run()
        .status(1)
        .stdout_contains("prod/shop Deployment/api: level zone, 3 replicas: FAILS zone")
        .stdout_contains("spread topology.kubernetes.io/zone (DoNotSchedule, maxSkew 1): zone-a=3 zone-b=0 zone-c=0; skew 3 > maxSkew: VIOLATED")
        .stdout_contains("worst topology.kubernetes.io/zone loss: zone-a: 0 of 3 left running, one needed: FAILS")
        .stdout_contains("ends zone-a=1 zone-b=1 zone-c=1; survives")
        .stdout_contains("$ kubectl -n shop rollout restart deployment/api");
}

#[test]
fn audit_needs_one_cluster() {
    let state = repo_path("tests/audit/balanced.yaml");
    Test::in_repo()
        .args(["audit", "--state", state.to_str().unwrap()])
        .run()
        .status(2)
        .stderr_contains("--state is a snapshot of one cluster");
}

/// Checks `value` against the subset of JSON Schema schemas/audit.schema.json uses (type, enum,
/// properties, required, additionalProperties, items, anyOf, local $ref); returns the first mismatch.
pub(crate) fn conforms(
    value: &serde_json::Value,
    schema: &serde_json::Value,
    root: &serde_json::Value,
    at: &str,
) -> Result<(), String> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/$defs/");
        return conforms(value, &root["$defs"][name], root, at);
    }
    if let Some(any) = schema["anyOf"].as_array() {
        return if any.iter().any(|s| conforms(value, s, root, at).is_ok()) {
            Ok(())
        } else {
            Err(format!("{at}: no anyOf matches {value}"))
        };
    }
    if let Some(options) = schema["enum"].as_array() {
        return if options.contains(value) { Ok(()) } else { Err(format!("{at}: {value} not in {options:?}")) };
    }
    let ok = match schema["type"].as_str() {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("boolean") => value.is_boolean(),
        Some("null") => value.is_null(),
        _ => true,
    };
    if !ok {
        return Err(format!("{at}: {value} is not {}", schema["type"]));
    }
    if let Some(object) = value.as_object() {
        for key in schema["required"].as_array().into_iter().flatten() {
            if !object.contains_key(key.as_str().unwrap()) {
                return Err(format!("{at}: missing {key}"));
            }
        }
        for (key, item) in object {
            match schema["properties"].get(key) {
                Some(property) => conforms(item, property, root, &format!("{at}.{key}"))?,
                None if schema["additionalProperties"] == false => return Err(format!("{at}: unexpected {key}")),
                None if schema["additionalProperties"].is_object() => {
                    conforms(item, &schema["additionalProperties"], root, &format!("{at}.{key}"))?
                }
                None => {}
            }
        }
    }
    if let Some(items) = value.as_array() {
        for (i, item) in items.iter().enumerate() {
            conforms(item, &schema["items"], root, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

#[test]
fn json_report_conforms_to_the_committed_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo_path("schemas/audit.schema.json")).unwrap()).unwrap();
    for snapshot in [
        "balanced",
        "zone-outage",
        "scale-down",
        "lopsided-rollout",
        "bound-before-constraint",
        "remedy-blocked",
        "quorum-two-zones",
    ] {
        let (_, report) = audit_json(snapshot);
        conforms(&report, &schema, &schema, snapshot).unwrap();
    }
    // The checker itself rejects what the schema forbids.
    let (_, mut report) = audit_json("balanced");
    report["instances"][0]["workloads"][0]["fails"] = serde_json::json!("no");
    assert!(conforms(&report, &schema, &schema, "broken").is_err());
}
