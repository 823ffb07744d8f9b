//! R5-R12: workload ceilings, the replica step function, a none ceiling, too few replicas, the
//! spread keys and the exact derived constraint, derived budgets, explicit placement, selector
//! hygiene.

use super::*;

// R5: a workload ceiling lowers that workload only, with a warning.
#[test]
fn r5_workload_ceiling_lowers_one_workload() {
    let yaml = format!(
        "{}---\n{}",
        workload_yaml("Deployment", "leader", None, ""),
        workload_yaml("Deployment", "api", None, "")
    );
    let package = web(
        "[workloads.leader]\navailability = { max = \"none\" }\n[workloads.api]\nreplicas = { none = 1, pod = 2, zone = 3 }\n",
        &yaml,
    );
    let compiled = compile_one("zone", THREE_ZONES, package);
    assert_eq!(compiled.codes(), vec![Code::WorkloadCeiling]);
    assert_eq!(compiled.workload("c", "app", "leader").level, Level::None);
    assert_eq!(compiled.workload("c", "app", "leader").replicas, 1);
    assert_eq!(compiled.workload("c", "app", "api").level, Level::Zone);
    assert_eq!(compiled.workload("c", "app", "api").replicas, 3);
}

// R6: the step function, its monotonicity, and the manifest fallback.
#[test]
fn r6_replicas_step_function() {
    let package =
        |map: &str| web(&format!("[workloads.w]\nreplicas = {map}\n"), &workload_yaml("Deployment", "w", Some(1), ""));
    let cases = [
        ("{ none = 1, pod = 2, zone = 3 }", "node", 2),
        ("{ none = 1, pod = 2, zone = 3 }", "zone", 3),
        ("{ none = 1, pod = 2, zone = 3 }", "pod", 2),
        ("{ pod = 2 }", "none", 1),
        ("{ pod = 2 }", "zone", 2),
        ("{ none = 2, node = 4 }", "pod", 2),
    ];
    for (map, level, expected) in cases {
        let compiled = compile_one(level, THREE_ZONES, package(map));
        assert_eq!(
            compiled.workload("c", "app", "w").replicas,
            expected,
            "{map} at {level}: {:?}",
            compiled.messages()
        );
        assert_eq!(compiled.instance("c", "app").objects()[0]["spec"]["replicas"].as_u64(), Some(expected as u64));
    }
}

#[test]
fn r6_decreasing_mapping_is_an_error() {
    let compiled = compile_one(
        "zone",
        THREE_ZONES,
        web("[workloads.w]\nreplicas = { none = 3, zone = 2 }\n", &workload_yaml("Deployment", "w", None, "")),
    );
    assert_eq!(compiled.codes(), vec![Code::DecreasingReplicas]);
    assert!(compiled.messages()[0].contains("decrease from 3 at none to 2 at zone"));
}

#[test]
fn r6_the_manifest_base_counts_as_a_step() {
    // spec.replicas 5 applies below `pod`; 2 at pod would be a decrease.
    let compiled = compile_one(
        "pod",
        THREE_ZONES,
        web("[workloads.w]\nreplicas = { pod = 2 }\n", &workload_yaml("Deployment", "w", Some(5), "")),
    );
    assert_eq!(compiled.codes(), vec![Code::DecreasingReplicas]);
    assert!(
        compiled.messages()[0].contains("decrease from 5 (the manifest's spec.replicas"),
        "{:?}",
        compiled.messages()
    );
}

#[test]
fn r11_a_null_constraint_list_is_absent() {
    let yaml = workload_yaml("Deployment", "d", Some(2), "      topologySpreadConstraints: null\n");
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    assert!(compiled.workload("c", "app", "d").derived_pdb());
    assert_eq!(constraints(&compiled), vec![("kubernetes.io/hostname".to_string(), "DoNotSchedule".to_string())]);
}

#[test]
fn r6_no_mapping_keeps_manifest_replicas() {
    for (replicas, expected) in [(Some(4), 4), (None, 1)] {
        let compiled = compile_one("none", MULTI_NODE, web("", &workload_yaml("Deployment", "w", replicas, "")));
        assert_eq!(compiled.workload("c", "app", "w").replicas, expected);
    }
}

// R7: a none ceiling refuses more than one replica.
#[test]
fn r7_none_ceiling_refuses_many_replicas() {
    let workload_ceiling =
        web("[workloads.w]\navailability = { max = \"none\" }\n", &workload_yaml("Deployment", "w", Some(2), ""));
    assert_eq!(
        compile_one("node", MULTI_NODE, workload_ceiling).codes(),
        // Errors first, then warnings (issue 41).
        vec![Code::CeilingNoneManyReplicas, Code::WorkloadCeiling]
    );
    let package_ceiling = (
        "[meta]\nname = \"web\"\nversion = \"1.0.0\"\navailability = { max = \"none\" }\n".to_string(),
        workload_yaml("Deployment", "w", Some(3), ""),
    );
    let codes = compile_one("none", MULTI_NODE, package_ceiling).codes();
    assert_eq!(codes, vec![Code::CeilingNoneManyReplicas]);
}

// R8: pod or higher needs two replicas, and the message says how to fix it.
#[test]
fn r8_too_few_replicas_explains_the_fix() {
    let compiled = compile_one("pod", MULTI_NODE, web("", &workload_yaml("Deployment", "w", None, "")));
    assert_eq!(compiled.codes(), vec![Code::TooFewReplicas]);
    let help = compiled.diagnostics.iter().next().unwrap().help.clone().unwrap();
    assert!(help.contains("replicas = { none = 1, pod = 2 }") && help.contains("max = \"none\""), "{help}");
}

// R9: which keys, which is hard, and the exact shape of a derived constraint.
#[test]
fn r9_spread_keys_table() {
    let mapping = "[workloads.w]\nreplicas = { none = 2 }\n";
    let yaml = workload_yaml("Deployment", "w", None, "");
    let dns = "DoNotSchedule";
    let soft = "ScheduleAnyway";
    let host = "kubernetes.io/hostname";
    let zone = "topology.kubernetes.io/zone";
    let s = |pairs: &[(&str, &str)]| pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    type Case<'a> = (&'a str, &'a str, Vec<(String, String)>);
    let cases: Vec<Case> = vec![
        ("zone", THREE_ZONES, s(&[(host, soft), (zone, dns)])),
        ("node", THREE_ZONES, s(&[(host, dns), (zone, soft)])),
        ("pod", THREE_ZONES, s(&[(host, soft), (zone, soft)])),
        ("none", THREE_ZONES, s(&[(host, soft), (zone, soft)])),
        ("node", ONE_ZONE, s(&[(host, dns)])),
        ("node", MULTI_NODE, s(&[(host, dns)])),
        // Zones unknown at level zone: the zone key is used (R3 warned).
        ("zone", MULTI_NODE, s(&[(host, soft), (zone, dns)])),
        ("none", SINGLE_NODE, vec![]),
    ];
    for (level, capabilities, expected) in cases {
        let compiled = compile_one(level, capabilities, web(mapping, &yaml));
        assert_eq!(constraints(&compiled), expected, "{level} on {capabilities}");
    }
}

#[test]
fn r9_extra_keys_and_exact_constraint_fields() {
    let cluster = "availability = \"zone\"\nallow = [\"K0428\"]\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\"]\n\
                       [failureDomains]\nextra = [\"example.com/rack\"]\n[[instances]]\nname = \"app\"\npackage = \"web\"\n";
    let (toml, yaml) = web("[workloads.w]\nreplicas = { none = 2 }\n", &workload_yaml("StatefulSet", "w", None, ""));
    let compiled = TestTree::new().cluster("c", cluster).package("web", &toml, &[("w.yaml", &yaml)]).compile();
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    let keys: Vec<String> = constraints(&compiled).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "example.com/rack"]);
    let constraint =
        &compiled.instance("c", "app").objects()[0]["spec"]["template"]["spec"]["topologySpreadConstraints"][1];
    let expected: Value = kix_yaml::from_str(
        "maxSkew: 1\ntopologyKey: topology.kubernetes.io/zone\nwhenUnsatisfiable: DoNotSchedule\n\
             labelSelector:\n  matchLabels:\n    app: w\nnodeTaintsPolicy: Honor\n",
    )
    .unwrap();
    // A StatefulSet gets no matchLabelKeys (it has no pod-template-hash).
    assert_eq!(constraint, &expected);
}

#[test]
fn r9_deployments_get_pod_template_hash_and_other_kinds_pass_through() {
    let yaml = format!(
        "{}---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector: {{matchLabels: {{app: agent}}}}\n  template:\n    metadata: {{labels: {{app: agent}}}}\n    spec: {{containers: [{{name: a, image: a}}]}}\n",
        workload_yaml("Deployment", "w", Some(2), "")
    );
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    let objects = &compiled.instance("c", "app").objects();
    let constraint = &objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"][0];
    assert_eq!(constraint["matchLabelKeys"], kix_yaml::from_str("[pod-template-hash]").unwrap());
    let daemonset = objects.iter().find(|o| o["kind"] == "DaemonSet").unwrap();
    assert!(daemonset["spec"]["template"]["spec"].get("topologySpreadConstraints").is_none());
    assert_eq!(daemonset["spec"].get("replicas"), None);
}

#[test]
fn r9_workload_entry_without_workload_is_an_error() {
    let compiled = compile_one(
        "none",
        MULTI_NODE,
        web("[workloads.ghost]\nreplicas = { none = 1 }\n", &workload_yaml("Deployment", "w", None, "")),
    );
    assert_eq!(compiled.codes(), vec![Code::UnknownWorkload]);
    assert!(compiled.diagnostics.iter().next().unwrap().help.as_deref().unwrap().contains("Deployment w"));
}

// R10: one PDB per derived workload, with the kind's eviction policy, unless one is shipped.
#[test]
fn r10_derived_pdb_shape_and_policy() {
    let yaml = format!(
        "{}---\n{}",
        workload_yaml("Deployment", "d", Some(2), ""),
        workload_yaml("StatefulSet", "s", Some(3), "")
    );
    let compiled = compile_one(
        "node",
        MULTI_NODE,
        web("[workloads.s.pdb]\nunhealthyPodEvictionPolicy = \"AlwaysAllow\"\n", &yaml),
    );
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    let objects = &compiled.instance("c", "app").objects();
    let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Deployment", "PodDisruptionBudget", "StatefulSet", "PodDisruptionBudget"]);
    let expected: Value = kix_yaml::from_str(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: d\n  namespace: app\n  labels:\n    \
             app.kubernetes.io/managed-by: kix\n    app.kubernetes.io/instance: app\n    kix.dev/instance: app\nspec:\n  maxUnavailable: 1\n  \
             selector:\n    matchLabels:\n      app: d\n  unhealthyPodEvictionPolicy: AlwaysAllow\n",
    )
    .unwrap();
    assert_eq!(objects[1], expected);
    assert_eq!(objects[3]["spec"]["unhealthyPodEvictionPolicy"], "AlwaysAllow");

    let default_policy = compile_one("node", MULTI_NODE, web("", &workload_yaml("StatefulSet", "s", Some(3), "")));
    assert_eq!(
        default_policy.instance("c", "app").objects()[1]["spec"]["unhealthyPodEvictionPolicy"],
        "IfHealthyBudget"
    );
}

#[test]
fn r10_shipped_pdb_suppresses_the_derived_one() {
    let yaml = format!(
        "{}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: mine\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels: {{app: d}}\n",
        workload_yaml("Deployment", "d", Some(2), "")
    );
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    let objects = &compiled.instance("c", "app").objects();
    assert_eq!(objects.iter().filter(|o| o["kind"] == "PodDisruptionBudget").count(), 1);
    assert!(!compiled.workload("c", "app", "d").derived_pdb());
    // Spread is still derived.
    assert!(objects[0]["spec"]["template"]["spec"].get("topologySpreadConstraints").is_some());
}

#[test]
fn r10_one_replica_gets_neither_spread_nor_pdb() {
    let compiled = compile_one("none", THREE_ZONES, web("", &workload_yaml("Deployment", "d", Some(1), "")));
    let objects = &compiled.instance("c", "app").objects();
    assert_eq!(objects.len(), 1);
    assert!(objects[0]["spec"]["template"]["spec"].get("topologySpreadConstraints").is_none());
}

// R11: explicit placement (even an empty list) takes ownership.
#[test]
fn r11_explicit_placement_is_left_alone() {
    let yaml = workload_yaml("Deployment", "d", None, "      topologySpreadConstraints: []\n");
    let compiled = compile_one("node", MULTI_NODE, web("[workloads.d]\nreplicas = { none = 1, pod = 2 }\n", &yaml));
    assert_eq!(compiled.codes(), vec![Code::ExplicitPlacementWithoutPdb]);
    let objects = &compiled.instance("c", "app").objects();
    assert_eq!(objects.len(), 1, "no PDB derived");
    assert_eq!(objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"], Value::Sequence(vec![]));
    assert_eq!(objects[0]["spec"]["replicas"], 2, "replicas are still derived");
}

// R12: selector hygiene.
#[test]
fn r12_selector_must_select_own_template() {
    let yaml = workload_yaml("Deployment", "d", Some(2), "")
        .replace("      labels:\n        app: d", "      labels:\n        app: other");
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    assert_eq!(compiled.codes(), vec![Code::SelectorMismatch]);
}

#[test]
fn r12_overlapping_workloads_in_one_namespace() {
    // `broad` selects tier=web, which both templates carry.
    let broad = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: broad\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {tier: web}\n  template:\n    metadata:\n      labels: {tier: web, app: broad}\n    spec:\n      containers: [{name: a, image: a}]\n";
    let narrow = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: narrow\nspec:\n  replicas: 2\n  selector:\n    matchExpressions: [{key: app, operator: In, values: [narrow]}]\n  template:\n    metadata:\n      labels: {tier: web, app: narrow}\n    spec:\n      containers: [{name: a, image: a}]\n";
    let compiled = compile_one("node", MULTI_NODE, web("", &format!("{broad}---\n{narrow}")));
    assert_eq!(compiled.codes(), vec![Code::OverlappingSelectors]);
    assert!(
        compiled.messages()[0]
            .contains("the selector of Deployment broad (instance `app`) also selects the pods of Deployment narrow")
    );
}

#[test]
fn r12_overlap_across_instances_only_in_the_same_namespace() {
    // Two workloads of different names whose pods carry the same labels.
    let pkg = |name: &str| {
        let yaml = workload_yaml("Deployment", "same", Some(2), "")
            .replace("metadata:\n  name: same", &format!("metadata:\n  name: {name}"));
        (format!("[meta]\nname = \"{name}\"\nversion = \"1.0.0\"\n"), yaml)
    };
    let (a, ay) = pkg("a");
    let (b, by) = pkg("b");
    let cluster = |ns: &str| {
        format!(
            "availability = \"node\"\nallow = [\"K0428\"]\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"one\"\npackage = \"a\"\nnamespace = \"shared\"\n[[instances]]\nname = \"two\"\npackage = \"b\"\nnamespace = \"{ns}\"\n"
        )
    };
    let tree = |ns: &str| {
        TestTree::new().cluster("c", &cluster(ns)).package("a", &a, &[("w.yaml", &ay)]).package(
            "b",
            &b,
            &[("w.yaml", &by)],
        )
    };
    assert_eq!(tree("shared").compile().codes(), vec![Code::OverlappingSelectors]);
    assert!(tree("apart").compile().diagnostics.is_empty());
}

#[test]
fn a_budget_of_another_instance_over_the_same_pods_is_an_error() {
    let api = workload_yaml("Deployment", "api", Some(2), "")
        .replace("        app: api\n", "        app: api\n        tier: web\n");
    let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels: {tier: web}\n";
    let cluster = "availability = \"node\"\nallow = [\"K0428\"]\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"i\"\npackage = \"p\"\nnamespace = \"shared\"\n[[instances]]\nname = \"j\"\npackage = \"q\"\nnamespace = \"shared\"\n";
    let tree = TestTree::new()
        .cluster("c", cluster)
        .package("p", "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n", &[("a.yaml", &api)])
        .package("q", "[meta]\nname = \"q\"\nversion = \"1.0.0\"\n", &[("pdb.yaml", pdb)]);
    let compiled = tree.compile();
    assert_eq!(compiled.codes(), vec![Code::SharedBudget]);
    assert!(compiled.messages()[0].contains("api (instance `i`), web (instance `j`)"), "{:?}", compiled.messages());
}

#[test]
fn r12_shipped_pdb_over_two_workloads_warns() {
    let yaml = format!(
        "{}---\n{}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: all\nspec:\n  maxUnavailable: 1\n  selector:\n    matchExpressions: [{{key: app, operator: Exists}}]\n",
        workload_yaml("Deployment", "d", Some(2), ""),
        workload_yaml("Deployment", "e", Some(2), "")
    );
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    assert_eq!(compiled.codes(), vec![Code::BroadPdb]);
}
