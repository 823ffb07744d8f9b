//! Metadata: namespaces (placed, moved with their references, kept, created), labels and
//! annotations, fields kix does not read, and cluster-scoped objects several instances share.

use super::*;

#[test]
fn namespaces_labels_and_annotations() {
    let yaml = format!(
        "{}---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n  namespace: stray\nrules: []\n",
        workload_yaml("Deployment", "d", Some(2), "")
    );
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    let objects = &compiled.instance("c", "app").objects();
    let metadata = objects[0]["metadata"].as_mapping().unwrap();
    let keys: Vec<&str> = metadata.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(keys, ["name", "namespace", "labels", "annotations"]);
    assert_eq!(objects[0]["metadata"]["annotations"][RESOLVED_ANNOTATION], "node");
    let role = objects.iter().find(|o| o["kind"] == "ClusterRole").unwrap();
    assert!(role["metadata"].get("namespace").is_none(), "cluster-scoped objects keep no namespace");
    assert_eq!(role["metadata"]["labels"][INSTANCE_LABEL], "app");

    let foreign =
        workload_yaml("Deployment", "d", Some(2), "").replace("  name: d\n", "  name: d\n  namespace: elsewhere\n");
    assert_eq!(compile_one("node", MULTI_NODE, web("", &foreign)).codes(), vec![Code::ForeignNamespace]);
}

#[test]
fn fields_kix_does_not_read_survive_in_their_order() {
    // Fields Kubernetes knows and kix never reads (unknown ones are K0440 since strict validation).
    let yaml = workload_yaml("Deployment", "d", Some(2), "      hostAliases: [{ip: 10.0.0.1, hostnames: [x]}]\n")
        .replace("spec:\n  replicas", "spec:\n  minReadySeconds: 5\n  replicas");
    let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
    let spec = compiled.instance("c", "app").objects()[0]["spec"].as_mapping().unwrap().clone();
    let keys: Vec<&str> = spec.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(keys, ["minReadySeconds", "replicas", "selector", "template"]);
    assert_eq!(spec["template"]["spec"]["hostAliases"][0]["hostnames"][0], "x");
}

// Labels: a value the user wrote is kept; kix's tracking label is always set.
#[test]
fn labels_keep_the_users_values() {
    let cases: &[(&str, [&str; 3])] = &[
        ("", ["kix", "app", "app"]),
        ("app.kubernetes.io/instance: main\n", ["kix", "main", "app"]),
        ("app.kubernetes.io/managed-by: Helm\n", ["Helm", "app", "app"]),
        ("kix.dev/instance: stale\n", ["kix", "app", "app"]),
    ];
    for (labels, [managed_by, instance, tracking]) in cases {
        let labels = if labels.is_empty() { String::new() } else { format!("  labels:\n    {labels}") };
        let yaml = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n{labels}data: {{}}\n");
        let compiled = compile_one("none", MULTI_NODE, web("", &yaml));
        let plan = compiled.instance("c", "app");
        let got = &plan.objects()[0]["metadata"]["labels"];
        assert_eq!(got[MANAGED_BY_LABEL], *managed_by, "{labels}");
        assert_eq!(got[INSTANCE_LABEL], *instance, "{labels}");
        assert_eq!(got[KIX_INSTANCE_LABEL], *tracking, "{labels}");
        assert_eq!(
            plan.planned()[0].fields.instance_label_added,
            labels.is_empty() || !labels.contains(INSTANCE_LABEL),
            "{labels}"
        );
    }
}

// meta.namespace moves objects and the references to them; keepNamespaces keeps objects where they are.
#[test]
fn namespaces_move_with_references_and_kept_ones_stay() {
    let meta = "namespace = \"src\"\nkeepNamespaces = [\"kube-system\"]\n";
    let compiled = compile_one("none", MULTI_NODE, web(meta, &package_in("src")));
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    let objects = &compiled.instance("c", "app").objects();
    let namespaces: Vec<Option<&str>> = objects.iter().map(|o| o["metadata"]["namespace"].as_str()).collect();
    assert_eq!(namespaces, [Some("app"), Some("app"), Some("kube-system"), None]);
    assert_eq!(objects[2]["subjects"][0]["namespace"], "app", "a kept RoleBinding's subject moves with its account");
    assert_eq!(objects[2]["metadata"]["labels"][KIX_INSTANCE_LABEL], "app", "kept objects still mark the instance");
    assert_eq!(objects[3]["subjects"][0]["namespace"], "app");

    // Without meta.namespace the same package is refused, with help naming both keys.
    let refused = compile_one("none", MULTI_NODE, web("keepNamespaces = [\"kube-system\"]\n", &package_in("src")));
    assert_eq!(refused.codes(), vec![Code::ForeignNamespace]);
    let help = refused.diagnostics.iter().next().unwrap().help.clone().unwrap();
    assert!(help.contains("meta.namespace") && help.contains("meta.keepNamespaces"), "{help}");
    let not_kept = compile_one("none", MULTI_NODE, web("namespace = \"src\"\n", &package_in("src")));
    assert_eq!(not_kept.codes(), vec![Code::ForeignNamespace], "kube-system is not kept");
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n\
                   spec:\n  group: example.com\n  names: {kind: Thing, plural: things}\n  scope: Namespaced\n  \
                   versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n";

// createNamespace: the Namespace first, labelled; not when the package ships it (renamed from meta.namespace).
#[test]
fn create_namespace_emits_it_unless_shipped() {
    let compiled = compile_cluster(&[("a", "apps", true)], "", CRD);
    let objects = &compiled.instance("c", "a").objects();
    assert_eq!(objects[0]["kind"], "Namespace");
    assert_eq!(objects[0]["metadata"]["name"], "apps");
    assert_eq!(objects[0]["metadata"]["labels"][KIX_INSTANCE_LABEL], "a");

    let shipped = format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: src\n  labels: {{team: t}}\n---\n{CRD}");
    let compiled = compile_cluster(&[("a", "apps", true)], "namespace = \"src\"\n", &shipped);
    let objects = &compiled.instance("c", "a").objects();
    let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Namespace", "CustomResourceDefinition"], "the shipped Namespace, renamed, and no other");
    assert_eq!(objects[0]["metadata"]["name"], "apps");
    assert_eq!(objects[0]["metadata"]["labels"]["team"], "t");
}

// Identical cluster-scoped objects of several instances are written once; the rest stay with their instance.
#[test]
fn identical_cluster_scoped_objects_are_shared() {
    let compiled = compile_cluster(&[("b", "apps", true), ("a", "apps", true), ("c", "other", false)], "", CRD);
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    let cluster = &compiled.clusters[0];
    let shared: Vec<(&str, Vec<&str>)> = cluster
        .shared
        .iter()
        .map(|s| (s.object["kind"].as_str().unwrap(), s.instances.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(shared, [("Namespace", vec!["a", "b"]), ("CustomResourceDefinition", vec!["a", "b", "c"])]);
    for object in cluster.shared.iter().map(|s| &s.object) {
        let labels = object["metadata"]["labels"].as_mapping().unwrap();
        let keys: Vec<&str> = labels.keys().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, [MANAGED_BY_LABEL], "no per-instance label on a shared object");
    }
    for plan in &cluster.instances {
        assert!(plan.objects().is_empty(), "{}: {:?}", plan.name, plan.objects());
        assert!(plan.planned().is_empty());
    }
}

// Cluster-scoped objects of one kind and name that differ are refused, naming the first field that differs.
#[test]
fn differing_cluster_scoped_objects_name_the_difference() {
    let meta = "namespace = \"src\"\nkeepNamespaces = [\"kube-system\"]\n";
    let compiled = compile_cluster(&[("a", "one", false), ("b", "two", false)], meta, &package_in("src"));
    assert_eq!(compiled.codes(), vec![Code::ObjectInTwoInstances]);
    let message = &compiled.messages()[0];
    assert!(message.contains("differing at `subjects[0].namespace`"), "{message}");
    assert!(message.contains("RoleBinding auth-reader (in namespace `kube-system`)"), "{message}");
}

// K0412 compares objects in the namespace each is emitted in: a Role per namespace (kube-prometheus's
// RoleList of `prometheus-k8s` in default, kube-system and monitoring) is three objects, one moved and
// two kept; the same Role twice in one namespace is still a duplicate.
#[test]
fn duplicates_are_per_emitted_namespace() {
    let role = |namespace: &str| {
        format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: {namespace}\n\
             rules: []\n"
        )
    };
    let meta = "namespace = \"src\"\nkeepNamespaces = [\"kube-system\", \"default\"]\n";
    let yaml = format!("{}---\n{}---\n{}", role("src"), role("kube-system"), role("default"));
    let compiled = compile_one("none", MULTI_NODE, web(meta, &yaml));
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    let namespaces: Vec<&str> =
        compiled.instance("c", "app").objects().iter().map(|o| o["metadata"]["namespace"].as_str().unwrap()).collect();
    assert_eq!(namespaces, ["app", "kube-system", "default"]);

    // `src` moves to the instance's namespace, where the one written for it already is.
    let yaml = format!("{}---\n{}", role("src"), role("app"));
    let compiled = compile_one("none", MULTI_NODE, web(meta, &yaml));
    assert_eq!(compiled.codes(), vec![Code::DuplicateObject]);
    assert!(
        compiled.messages()[0].contains("Role reader is defined twice in namespace `app`"),
        "{:?}",
        compiled.messages()
    );
}
