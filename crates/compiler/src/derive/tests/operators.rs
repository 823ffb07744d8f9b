//! Workloads behind operators (issue 18): a Deployment or StatefulSet scaled to zero passes
//! through unchanged, and custom resources that run pods are named (K0435) and listed by verify.

use super::*;

// A Deployment scaled to zero (Argo Rollouts' workloadRef pattern) runs no pods: no spread, no
// budget, no K0403, and the object as written (apart from the instance's namespace and labels).
#[test]
fn issue18_zero_replicas_pass_through_unchanged() {
    for kind in ["Deployment", "StatefulSet"] {
        let compiled = compile_one("zone", THREE_ZONES, web("", &workload_yaml(kind, "w", Some(0), "")));
        assert_eq!(compiled.codes(), Vec::<Code>::new(), "{kind}: {:?}", compiled.messages());
        let plan = compiled.workload("c", "app", "w");
        assert!(plan.scaled_to_zero && plan.spreads.is_empty() && !plan.derived_pdb(), "{kind}: {plan:?}");
        let objects = compiled.instance("c", "app").objects();
        assert_eq!(objects.len(), 1, "{kind}: no budget");
        assert_eq!(objects[0]["spec"]["replicas"], 0);
        assert!(objects[0]["spec"]["template"]["spec"].get("topologySpreadConstraints").is_none());
        assert!(objects[0]["metadata"].get("annotations").is_none(), "{kind}: no availability annotations");
    }
    // A mapping is the user's own count: it still applies, and R8 with it.
    let mapped = web("[workloads.w]\nreplicas = { pod = 2 }\n", &workload_yaml("Deployment", "w", Some(0), ""));
    let compiled = compile_one("zone", THREE_ZONES, mapped);
    // Two over three zones: the sizing warning (K0461, issue 22) and nothing else.
    assert_eq!(compiled.codes(), vec![Code::FewerReplicasThanZones], "{:?}", compiled.messages());
    assert_eq!(compiled.workload("c", "app", "w").replicas, 2);
    assert!(!compiled.workload("c", "app", "w").scaled_to_zero);
    // An absent spec.replicas is 1, not 0: R8 as before.
    let absent = compile_one("zone", THREE_ZONES, web("", &workload_yaml("Deployment", "w", None, "")));
    assert_eq!(absent.codes(), vec![Code::TooFewReplicas]);
}

const ROLLOUT: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: canary\nspec:\n  \
                       replicas: 5\n  selector:\n    matchLabels: {app: canary}\n  template:\n    metadata:\n      \
                       labels: {app: canary}\n    spec:\n      containers:\n      - name: c\n        image: c\n";

/// Argo Rollouts' workloadRef pattern: the Rollout runs the template of a Deployment scaled to zero.
const REF_ROLLOUT: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: ref\nspec:\n  \
                           replicas: 5\n  selector:\n    matchLabels: {app: w}\n  workloadRef:\n    \
                           apiVersion: apps/v1\n    kind: Deployment\n    name: w\n";

const DATABASE_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  \
                            name: databases.example.com\nspec:\n  group: example.com\n  names: {kind: Database, \
                            plural: databases}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    \
                            storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
                            properties:\n          spec:\n            type: object\n            properties:\n              \
                            replicas: {type: integer}\n";

const DATABASE: &str = "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: orders\nspec:\n  replicas: 3\n";

// K0435: from level pod, a well-known operator's kind and an undeclared kind whose shipped CRD has a
// pod count are named; below pod, or a CRD without such a field, nothing.
#[test]
fn issue18_custom_resources_that_run_pods_are_named() {
    let plain_crd = DATABASE_CRD.replace("replicas: {type: integer}", "size: {type: integer}");
    let with_crd = format!("{DATABASE_CRD}---\n{DATABASE}");
    let without_field = format!("{plain_crd}---\n{}", DATABASE.replace("replicas: 3", "size: 3"));
    let cases: &[(&str, &str, &[Code])] = &[
        ("zone", REF_ROLLOUT, &[Code::UnmanagedCustomResource]),
        ("pod", &with_crd, &[Code::UnmanagedCustomResource]),
        ("none", REF_ROLLOUT, &[]),
        ("zone", &without_field, &[]),
        // Without its CRD kix cannot tell that an unknown kind runs pods.
        ("zone", DATABASE, &[]),
    ];
    for (level, yaml, codes) in cases {
        let compiled = compile_one(level, THREE_ZONES, web("", yaml));
        assert_eq!(compiled.codes(), *codes, "{level} {yaml}: {:?}", compiled.messages());
    }
    let compiled = compile_one("zone", THREE_ZONES, web("", &with_crd));
    let message = &compiled.messages()[0];
    assert!(message.contains("custom resource Database orders gets no spread"), "{message}");
    assert!(message.contains("declares spec.replicas"), "{message}");
    let location = compiled.diagnostics.iter().next().unwrap().location().unwrap().line();
    assert_eq!(location, DATABASE_CRD.lines().count().checked_add(3), "at the resource's kind");
    let unplaced = &compiled.instance("c", "app").unplaced;
    assert_eq!(unplaced, &[workload_plan::Unplaced { kind: "Database".into(), name: "orders".into() }]);
    // Acknowledged with allow, like every warning.
    let allowed = TestTree::new()
        .cluster(
            "c",
            &cluster_toml("zone", THREE_ZONES, "web")
                .replace("package = \"web\"", "package = \"web\"\nallow = [\"K0435\"]"),
        )
        .package("web", &web("", REF_ROLLOUT).0, &[("w.yaml", REF_ROLLOUT)])
        .compile();
    assert!(!allowed.codes().contains(&Code::UnmanagedCustomResource), "{:?}", allowed.messages());
}

// A Rollout with its own template is placed like a Deployment: replicas from the mapping, spread at
// spec.template.spec.topologySpreadConstraints (hard on the zone key, matchLabelKeys with the label the
// Rollouts controller sets), a budget over its pods.
#[test]
fn issue18_rollout_is_placed_like_a_deployment() {
    let compiled = compile_one(
        "zone",
        THREE_ZONES,
        web("[workloads.canary]\nreplicas = { none = 1, pod = 2, zone = 6 }\n", ROLLOUT),
    );
    assert_eq!(compiled.codes(), Vec::<Code>::new(), "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "canary");
    assert_eq!((plan.kind, plan.replicas, plan.derived_pdb()), (kix_kube::kind::WorkloadKind::Rollout, 6, true));
    let objects = compiled.instance("c", "app").objects();
    assert_eq!(objects[0]["spec"]["replicas"], 6);
    let spread = objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"].as_sequence().unwrap();
    let zone = spread.iter().find(|c| c["topologyKey"] == "topology.kubernetes.io/zone").unwrap();
    assert_eq!(zone["whenUnsatisfiable"], "DoNotSchedule");
    assert_eq!(zone["matchLabelKeys"][0], "rollouts-pod-template-hash");
    assert_eq!(zone["labelSelector"]["matchLabels"]["app"], "canary");
    assert_eq!(objects[1]["kind"], "PodDisruptionBudget");
    assert_eq!(objects[1]["spec"]["selector"]["matchLabels"]["app"], "canary");
    // And with a workloadRef to a Deployment scaled to zero: the Rollout gets its budget and its spread,
    // written into the template it runs; the Deployment keeps replicas 0 and gets no budget of its own.
    let yaml = format!("{}---\n{REF_ROLLOUT}", workload_yaml("Deployment", "w", Some(0), ""));
    let compiled = compile_one("zone", THREE_ZONES, web("", &yaml));
    // Its own 5 over three zones: the uneven-split sizing warning (K0460, issue 22) and nothing else.
    assert_eq!(compiled.codes(), vec![Code::UnevenZoneSplit], "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "ref");
    assert_eq!((plan.kind, plan.replicas, plan.derived_pdb()), (kix_kube::kind::WorkloadKind::Rollout, 5, true));
    assert_eq!(compiled.instance("c", "app").workloads.len(), 1, "the template's Deployment is no workload");
    let objects = compiled.instance("c", "app").objects();
    let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Deployment", "Rollout", "PodDisruptionBudget"]);
    assert_eq!(objects[0]["spec"]["replicas"], 0);
    assert!(objects[0]["metadata"].get("annotations").is_none());
    let spread = objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"].as_sequence().unwrap();
    assert_eq!(spread[1]["matchLabelKeys"][0], "rollouts-pod-template-hash");
    assert!(objects[1]["spec"].get("template").is_none(), "the Rollout stays a workloadRef");
    assert_eq!(objects[2]["spec"]["selector"]["matchLabels"]["app"], "w");
}
