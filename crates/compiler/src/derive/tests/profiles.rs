//! Custom resources placed through profiles (issue 18): the built-in ones (prometheus-operator,
//! CloudNativePG, Strimzi) and a package's `[kinds]`, with the rules of Deployments and StatefulSets:
//! replicas from the mapping at the operator's count field, spread at its spread field selecting its
//! pod labels, a budget exactly when neither the operator nor the package makes one.

use super::*;

const PROMETHEUS: &str = "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata:\n  name: k8s\nspec:\n  \
                          replicas: 2\n  podMetadata:\n    labels: {team: obs}\n";

const CNPG: &str = "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata:\n  name: pg\nspec:\n  instances: 3\n  \
                    storage: {size: 1Gi}\n";

const POOL: &str = "apiVersion: kafka.strimzi.io/v1\nkind: KafkaNodePool\nmetadata:\n  name: broker\n  labels:\n    \
                    strimzi.io/cluster: my-cluster\nspec:\n  replicas: 3\n  roles: [broker]\n";

const DATABASE: &str = "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: orders\nspec:\n  members: 2\n";

const DATABASE_KIND: &str = "[kinds.\"example.com/Database\"]\nreplicas = \"spec.members\"\npodLabels = { \
                             \"example.com/cluster\" = \"{name}\", \"app.kubernetes.io/name\" = \"database\" }\n\
                             topologySpreadConstraints = \"spec.spread\"\ncontroller = \"StatefulSet\"\n";

/// The zone constraint written at `path` of the instance's first object.
fn zone_constraint(compiled: &crate::compile::Compiled, path: &[&str]) -> Value {
    let object = &compiled.instance("c", "app").objects()[0];
    let constraints = path.iter().fold(object, |v, k| &v[*k]).as_sequence().expect("constraints written");
    constraints.iter().find(|c| c["topologyKey"] == "topology.kubernetes.io/zone").unwrap().clone()
}

#[test]
fn issue18_prometheus_is_placed_at_its_operators_fields() {
    let compiled =
        compile_one("zone", THREE_ZONES, web("[workloads.k8s]\nreplicas = { pod = 2, zone = 3 }\n", PROMETHEUS));
    assert_eq!(compiled.codes(), Vec::<Code>::new(), "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "k8s");
    assert_eq!((plan.kind.as_str(), plan.replicas, plan.derived_pdb()), ("Prometheus", 3, true));
    let objects = compiled.instance("c", "app").objects();
    assert_eq!(objects[0]["spec"]["replicas"], 3);
    let zone = zone_constraint(&compiled, &["spec", "topologySpreadConstraints"]);
    assert_eq!(zone["whenUnsatisfiable"], "DoNotSchedule");
    assert!(zone.get("matchLabelKeys").is_none(), "the operator sets no template-hash label kix knows");
    let labels = &zone["labelSelector"]["matchLabels"];
    assert_eq!(
        (labels["prometheus"].as_str(), labels["app.kubernetes.io/name"].as_str()),
        (Some("k8s"), Some("prometheus"))
    );
    assert!(labels.get("team").is_none(), "podMetadata labels are not the operator's selector");
    // prometheus-operator makes no budget: kix derives one over the operator's labels.
    assert_eq!(objects[1]["kind"], "PodDisruptionBudget");
    assert_eq!(objects[1]["spec"]["selector"], zone["labelSelector"]);
    // A shipped budget over the podMetadata labels covers the pods: none derived (R10).
    let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  maxUnavailable: 1\n  \
               selector: {matchLabels: {team: obs}}\n";
    let shipped = compile_one(
        "zone",
        THREE_ZONES,
        web("[workloads.k8s]\nreplicas = { zone = 3 }\n", &format!("{PROMETHEUS}---\n{pdb}")),
    );
    assert!(!shipped.workload("c", "app", "k8s").derived_pdb());
    // Explicit placement at the operator's field is kept (R11), and named when no budget covers it.
    let explicit = PROMETHEUS.replace("  replicas: 2\n", "  replicas: 2\n  topologySpreadConstraints: []\n");
    let kept = compile_one("zone", THREE_ZONES, web("", &explicit));
    assert_eq!(kept.codes(), vec![Code::ExplicitPlacementWithoutPdb], "{:?}", kept.messages());
    assert_eq!(kept.instance("c", "app").objects()[0]["spec"]["topologySpreadConstraints"], Value::Sequence(vec![]));
}

#[test]
fn issue18_operators_that_make_their_own_budgets_get_none() {
    let compiled = compile_one("zone", THREE_ZONES, web("", CNPG));
    assert_eq!(compiled.codes(), Vec::<Code>::new(), "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "pg");
    assert_eq!((plan.replicas, plan.derived_pdb()), (3, false));
    assert_eq!(compiled.instance("c", "app").objects().len(), 1, "CloudNativePG makes the budgets");
    let zone = zone_constraint(&compiled, &["spec", "topologySpreadConstraints"]);
    assert_eq!(zone["labelSelector"]["matchLabels"]["cnpg.io/cluster"], "pg");
    // spec.enablePDB: false: the operator makes none, so kix does.
    let disabled = compile_one(
        "zone",
        THREE_ZONES,
        web("", &CNPG.replace("  instances: 3\n", "  instances: 3\n  enablePDB: false\n")),
    );
    assert!(disabled.workload("c", "app", "pg").derived_pdb());

    let compiled = compile_one("zone", THREE_ZONES, web("[workloads.broker]\nreplicas = { none = 3 }\n", POOL));
    assert_eq!(compiled.codes(), Vec::<Code>::new(), "{:?}", compiled.messages());
    assert!(!compiled.workload("c", "app", "broker").derived_pdb(), "Strimzi makes one budget per Kafka cluster");
    let zone = zone_constraint(&compiled, &["spec", "template", "pod", "topologySpreadConstraints"]);
    let labels = &zone["labelSelector"]["matchLabels"];
    assert_eq!(
        (labels["strimzi.io/cluster"].as_str(), labels["strimzi.io/pool-name"].as_str()),
        (Some("my-cluster"), Some("broker"))
    );
    // A pool without its cluster label cannot be read: named (K0435) with why, not placed.
    let unlabelled = POOL.replace("  labels:\n    strimzi.io/cluster: my-cluster\n", "");
    let compiled = compile_one("zone", THREE_ZONES, web("", &unlabelled));
    assert_eq!(compiled.codes(), vec![Code::UnmanagedCustomResource], "{:?}", compiled.messages());
    assert!(compiled.messages()[0].contains("no label `strimzi.io/cluster`"), "{:?}", compiled.messages());
}

#[test]
fn issue18_declared_kinds_are_placed_like_statefulsets() {
    let toml = format!("{DATABASE_KIND}[workloads.orders]\nreplicas = {{ none = 1, zone = 3 }}\n");
    let compiled = compile_one("zone", THREE_ZONES, web(&toml, DATABASE));
    assert_eq!(compiled.codes(), Vec::<Code>::new(), "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "orders");
    assert_eq!((plan.kind.as_str(), plan.replicas, plan.derived_pdb()), ("Database", 3, true));
    let objects = compiled.instance("c", "app").objects();
    assert_eq!(objects[0]["spec"]["members"], 3);
    assert!(objects[0]["spec"].get("replicas").is_none());
    let zone = zone_constraint(&compiled, &["spec", "spread"]);
    assert_eq!(zone["labelSelector"]["matchLabels"]["example.com/cluster"], "orders");
    assert_eq!(objects[1]["spec"]["unhealthyPodEvictionPolicy"], "IfHealthyBudget", "StatefulSet semantics");
    // budget = "operator": none derived.
    let operator = compile_one(
        "zone",
        THREE_ZONES,
        web(&toml.replace("controller", "budget = \"operator\"\ncontroller"), DATABASE),
    );
    assert!(!operator.workload("c", "app", "orders").derived_pdb());
    // No spread field: replicas and a budget, and K0436.
    let unplaced = toml.replace("topologySpreadConstraints = \"spec.spread\"\n", "");
    let compiled = compile_one("zone", THREE_ZONES, web(&unplaced, DATABASE));
    assert_eq!(compiled.codes(), vec![Code::UnplaceableCustomResource], "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "orders");
    assert!(plan.spreads.is_empty() && plan.derived_pdb() && plan.replicas == 3, "{plan:?}");
    // A package's entry overrides a built-in profile: here Prometheus's budget is the operator's.
    let kind = "[kinds.\"monitoring.coreos.com/Prometheus\"]\nreplicas = \"spec.replicas\"\npodLabels = { prometheus = \
                \"{name}\" }\ntopologySpreadConstraints = \"spec.topologySpreadConstraints\"\nbudget = \"operator\"\n";
    let overridden = compile_one("zone", THREE_ZONES, web(kind, PROMETHEUS));
    assert!(!overridden.workload("c", "app", "k8s").derived_pdb());
    let zone = zone_constraint(&overridden, &["spec", "topologySpreadConstraints"]);
    assert_eq!(zone["labelSelector"]["matchLabels"].as_mapping().map(|m| m.len()), Some(1));
}

#[test]
fn issue18_declared_kinds_are_checked() {
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: \
               databases.example.com\nspec:\n  group: example.com\n  names: {kind: Database, plural: databases}\n  \
               scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      \
               openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            \
               properties:\n              members: {type: integer}\n              spread: {type: array, items: {type: object, \
               x-kubernetes-preserve-unknown-fields: true}}\n---\n";
    let yaml = format!("{crd}{DATABASE}");
    let cases: &[(String, Code, &str)] = &[
        (
            DATABASE_KIND.replace("spec.spread", "spec.sprad"),
            Code::KindPathNotInCrd,
            "the fields under `spec` are: members, spread",
        ),
        (DATABASE_KIND.replace("example.com/Database", "Database"), Code::InvalidKind, "is not `group/Kind`"),
        (DATABASE_KIND.replace("spec.members", "status.members"), Code::InvalidKind, "is not under `spec`"),
        (DATABASE_KIND.replace("\"{name}\"", "\"a b\""), Code::InvalidKind, "is not a label value"),
    ];
    for (toml, code, says) in cases {
        let compiled = compile_one("zone", THREE_ZONES, web(toml, &yaml));
        assert_eq!(compiled.codes(), vec![*code], "{toml}: {:?}", compiled.messages());
        let all = format!("{:?}", compiled.diagnostics.iter().map(|d| (&d.message, &d.help)).collect::<Vec<_>>());
        assert!(all.contains(says), "{toml}: {all}");
    }
    // A mapping for a kind whose count kix cannot write.
    let countless = format!(
        "{}[workloads.orders]\nreplicas = {{ zone = 3 }}\n",
        DATABASE_KIND.replace("replicas = \"spec.members\"\n", "")
    );
    let compiled = compile_one("zone", THREE_ZONES, web(&countless, &yaml));
    assert_eq!(compiled.codes(), vec![Code::InvalidKind], "{:?}", compiled.messages());
    assert!(compiled.messages()[0].contains("names no replicas field"), "{:?}", compiled.messages());
    // A name shared by a Deployment and a declared kind's resource needs `kind`.
    let both = format!("{yaml}---\n{}", workload_yaml("Deployment", "orders", Some(2), ""));
    let entry = "[workloads.orders]\nreplicas = { zone = 3 }\n";
    let ambiguous = compile_one("zone", THREE_ZONES, web(&format!("{DATABASE_KIND}{entry}"), &both));
    assert_eq!(ambiguous.codes(), vec![Code::AmbiguousWorkload], "{:?}", ambiguous.messages());
    let chosen = compile_one("zone", THREE_ZONES, web(&format!("{DATABASE_KIND}{entry}kind = \"Database\"\n"), &both));
    let replicas: Vec<(String, u32)> =
        chosen.instance("c", "app").workloads.iter().map(|w| (w.kind.as_str().to_string(), w.replicas)).collect();
    assert_eq!(replicas, [("Database".to_string(), 3), ("Deployment".to_string(), 2)], "{:?}", chosen.messages());
}

#[test]
fn issue18_an_autoscaler_owns_a_custom_resources_count() {
    let hpa = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n  \
               scaleTargetRef: {apiVersion: monitoring.coreos.com/v1, kind: Prometheus, name: k8s}\n  minReplicas: 3\n  \
               maxReplicas: 5\n";
    let compiled = compile_one("zone", THREE_ZONES, web("", &format!("{PROMETHEUS}---\n{hpa}")));
    assert_eq!(compiled.codes(), Vec::<Code>::new(), "{:?}", compiled.messages());
    let plan = compiled.workload("c", "app", "k8s");
    assert_eq!((plan.autoscaler.as_ref().map(|a| a.min_replicas), plan.replicas), (Some(3), 3));
    assert_eq!(compiled.instance("c", "app").objects()[0]["spec"]["replicas"], 2, "the autoscaler's field, as written");
    // One of another group scales something else.
    let other = hpa.replace("monitoring.coreos.com/v1", "example.com/v1");
    let compiled = compile_one(
        "zone",
        THREE_ZONES,
        web("[workloads.k8s]\nreplicas = { zone = 3 }\n", &format!("{PROMETHEUS}---\n{other}")),
    );
    assert!(compiled.workload("c", "app", "k8s").autoscaler.is_none());
}

// R12 with the pod labels as the selector: a Deployment whose selector also counts the Prometheus's
// pods is refused (K0406), as two Deployments would be.
#[test]
fn issue18_selector_hygiene_uses_the_pod_labels() {
    let deployment = workload_yaml("Deployment", "scraper", Some(2), "").replace("app: scraper", "prometheus: k8s");
    let yaml = format!("{PROMETHEUS}---\n{deployment}");
    let compiled = compile_one("zone", THREE_ZONES, web("", &yaml));
    assert!(compiled.codes().contains(&Code::OverlappingSelectors), "{yaml}\n{:?}", compiled.messages());
}
