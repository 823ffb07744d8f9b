//! Derive once per shape (issue 11): instances stamped from an earlier instance's shape, in one
//! cluster or from other clusters', equal what deriving each alone gives, in objects and in
//! emitted text.

use super::*;

/// Objects naming namespace `ns` in every reference kix moves with a package's own namespace (issue 20):
/// a shipped Namespace, webhooks' services and namespace selectors (by expression and by label), an
/// APIService's service and a CRD's conversion service, beside `package_in`'s RBAC subjects.
fn moved_references(ns: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n---\n\
         apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: guard\n\
         webhooks:\n- name: guard.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  \
         clientConfig: {{service: {{name: guard, namespace: {ns}, path: /validate}}}}\n  \
         namespaceSelector: {{matchExpressions: [{{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, {ns}]}}]}}\n---\n\
         apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: mutate\n\
         webhooks:\n- name: mutate.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  \
         clientConfig: {{service: {{name: guard, namespace: {ns}}}}}\n  \
         namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {ns}}}}}\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1beta1.metrics.example.com\n\
         spec: {{group: metrics.example.com, version: v1beta1, groupPriorityMinimum: 100, versionPriority: 100, \
         service: {{name: adapter, namespace: {ns}}}}}\n---\n\
         apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n\
         spec:\n  group: example.com\n  names: {{kind: Thing, plural: things}}\n  scope: Namespaced\n  \
         versions: [{{name: v1, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object}}}}}}]\n  \
         conversion: {{strategy: Webhook, webhook: {{conversionReviewVersions: [v1], \
         clientConfig: {{service: {{name: convert, namespace: {ns}}}}}}}}}\n"
    )
}

// Derive once per shape (issues 11 and 20): every instance's objects, stamped from an earlier instance of the
// same shape, equal what deriving that instance alone gives: namespaces (placed, kept, moved references),
// kix's labels (added or the user's), derived budgets, createNamespace, with and without `meta.namespace`.
#[test]
fn stamped_instances_equal_instances_derived_alone() {
    let user_label = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  \
                      labels: {app.kubernetes.io/instance: mine}\ndata: {}\n---\n";
    // A string naming `apps-x` (no reference kix moves): an instance in `apps-x` gets a shape of its own.
    let peer = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peer\ndata: {peer: apps-x}\n---\n";
    let workload = workload_yaml("Deployment", "api", None, "");
    let yaml = format!("{user_label}{peer}{workload}---\n{}", package_in("src"));
    let workloads = "[workloads.api]\nreplicas = { none = 2 }\n";
    // With a namespace of its own, instances in different namespaces share one shape, its references to the
    // namespace stamped for each, but for `d`, which runs in the package's own namespace, and `x`, whose
    // namespace the package names (`b` also creates its namespace, which the package ships); without one,
    // instances in different namespaces share one shape too (names YAML would read as a boolean or a number
    // are quoted where they are stamped).
    let own: &[(&str, &str, bool)] = &[
        ("a", "apps-a", false),
        ("b", "apps-b", true),
        ("c", "apps-c", false),
        ("d", "src", true),
        ("on", "123", false),
        ("x", "apps-x", false),
    ];
    let kept: &[(&str, &str, bool)] = &[
        ("a", "apps-a", false),
        ("b", "apps-b", true),
        ("c", "apps-c", false),
        ("e", "apps-a", false),
        ("on", "123", false),
    ];
    let with_references = format!("{yaml}---\n{}", moved_references("src"));
    for (meta, instances, yaml, expected) in [
        ("namespace = \"src\"\nkeepNamespaces = [\"kube-system\"]\n", own, &with_references, 3),
        ("keepNamespaces = [\"kube-system\", \"src\"]\n", kept, &yaml, 1),
    ] {
        let tree = TestTree::new().cluster("c", &cluster_of(instances)).package(
            "web",
            &web(&format!("{meta}{workloads}"), yaml).0,
            &[("w.yaml", yaml)],
        );
        let selection = crate::compile::Selection { root: tree.root().to_path_buf(), ..Default::default() };
        // (The cluster draws cross-instance findings, K0417 and K0421: every instance emits the kept
        // objects. Derive's own findings are what this test checks, below.)
        let compiled = crate::compile::compile_clusters(&selection);
        let cluster = &compiled.clusters[0].resolved;
        assert_eq!(cluster.instances.len(), instances.len(), "{meta}");
        let shared = Shapes::default();
        let mut shapes_used = 0;
        for instance in &cluster.instances {
            let mut found = Diagnostics::default();
            let stamped = derive_instance(cluster, instance, &shared, &mut found);
            let alone = derive_instance(cluster, instance, &Shapes::default(), &mut found);
            assert!(found.is_empty(), "{meta}: {:?}", found);
            assert_eq!(stamped.objects(), alone.objects(), "{meta}: instance {}", instance.name);
            let fields = |plan: &InstancePlan| plan.planned().iter().map(|p| p.fields.clone()).collect::<Vec<_>>();
            assert_eq!(fields(&stamped), fields(&alone), "{meta}: instance {}", instance.name);
            // What the checks read without stamping is what stamping gives.
            for (i, object) in stamped.objects().iter().enumerate() {
                let at = format!("{meta}: instance {} object {i}", instance.name);
                assert_eq!(stamped.namespace_of(i), object["metadata"]["namespace"].as_str(), "{at}");
                assert_eq!(
                    stamped.comparable(i),
                    comparable(object, stamped.planned()[i].fields.instance_label_added),
                    "{at}"
                );
                let without_stamped_fields = |object: &Value| {
                    let mut object = object.clone();
                    let metadata = object.get_mut("metadata").and_then(Value::as_mapping_mut).unwrap();
                    metadata.remove("namespace");
                    metadata.remove("labels");
                    object
                };
                assert_eq!(without_stamped_fields(stamped.value(i)), without_stamped_fields(object), "{at}");
            }
            // Every moved reference names the instance's namespace, however its objects were made.
            if std::ptr::eq(yaml, &with_references) {
                let text = kix_yaml::emit::to_string(&Value::Sequence(stamped.objects().to_vec()));
                let mut scalar = String::new();
                kix_yaml::emit::write_scalar_string(&mut scalar, &instance.namespace);
                let named = text.matches(&format!(" {scalar}\n")).count();
                assert!(named >= 10, "{meta}: instance {} names its namespace {named} times:\n{text}", instance.name);
                assert!(
                    instance.namespace == "src" || !text.contains(" src\n"),
                    "{meta}: {} still names src:\n{text}",
                    instance.name
                );
            }
            // The text copied from the shape's rendering is the text of the instance's own objects.
            let mut rendered_now = alone;
            rendered_now.forget_rendered();
            // Every object is pre-rendered, the Namespace createNamespace adds too: the file has a key.
            assert!(stamped.planned().iter().all(|p| p.rendered.is_some()), "{meta}: {}", instance.name);
            assert!(crate::emit::instance_key("c", &stamped).is_some(), "{meta}: {}", instance.name);
            assert_eq!(
                crate::emit::render_instance("c", &stamped),
                crate::emit::render_instance("c", &rendered_now),
                "{meta}: instance {}",
                instance.name
            );
            shapes_used = shared.count();
        }
        assert_eq!(shapes_used, expected, "{meta}");
    }
}

// The Namespace createNamespace adds is pre-rendered, so its instance's file has a key (issue 20: a rebuild
// renders no file whose key is recorded), and its text is what rendering its value gives, with
// `app.kubernetes.io/instance` added or left alone (`instanceLabel`), for a name YAML would read as a number.
#[test]
fn a_created_namespace_is_rendered_as_its_value() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata: {}\n";
    for label in ["", "instanceLabel = \"leave\"\n"] {
        let cluster = format!("{label}{}", cluster_of(&[("on", "123", true), ("b", "apps-b", true)]));
        let compiled =
            TestTree::new().cluster("c", &cluster).package("web", &web("", yaml).0, &[("w.yaml", yaml)]).compile();
        for name in ["on", "b"] {
            let plan = compiled.instance("c", name);
            assert_eq!(plan.planned()[0].origin, Origin::Namespace, "{label}{name}");
            assert!(crate::emit::instance_key("c", plan).is_some(), "{label}{name}");
            let mut from_values = plan.clone();
            from_values.forget_rendered();
            let text = crate::emit::render_instance("c", plan);
            assert_eq!(text, crate::emit::render_instance("c", &from_values), "{label}{name}");
            assert_eq!(text.contains("app.kubernetes.io/instance"), label.is_empty(), "{text}");
        }
    }
}

// An object whose own text holds a stand-in of derive::shape is not pre-rendered (and renders as ever).
#[test]
fn objects_holding_a_stand_in_are_rendered_from_their_value() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\ndata: {a: kix-stamp-instance-5b0d7c41}\n---\n\
                apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata: {}\n";
    let compiled = compile_cluster(&[("a", "apps-a", false), ("b", "apps-b", false)], "", yaml);
    for name in ["a", "b"] {
        let plan = compiled.instance("c", name);
        assert_eq!(plan.planned().iter().map(|p| p.rendered.is_some()).collect::<Vec<_>>(), [false, true]);
        let text = crate::emit::render_instance("c", plan);
        assert!(
            text.contains("a: kix-stamp-instance-5b0d7c41\n") && text.contains(&format!("kix.dev/instance: {name}\n"))
        );
    }
}

// Shapes are shared by every cluster of a compile (issues 11 and 20): each instance of a fleet, compiled with
// the shapes its clusters derived on every core, equals what deriving it alone gives, in clusters at the same
// level (one shape for the fleet) and at another (a shape of its own), for a package with a namespace of its
// own (its references stamped for each instance's namespace) and without.
#[test]
fn instances_stamped_from_other_clusters_shapes_equal_instances_derived_alone() {
    let workload = workload_yaml("Deployment", "api", None, "");
    let plain = format!("{workload}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {{}}\n");
    let own = format!("{plain}---\n{}---\n{}", package_in("src"), moved_references("src"));
    let own_meta =
        "[meta]\nname = \"web\"\nversion = \"1.0.0\"\nnamespace = \"src\"\nkeepNamespaces = [\"kube-system\"]\n";
    // Two instances of a package with a namespace of its own clash in one cluster (their ClusterRoleBindings
    // differ only in the namespace they bind, K0417): one each, in clusters of their own.
    let two = [&[("a", "apps-a", false), ("b", "apps-b", true)][..], &[("c", "apps-c", false), ("on", "123", false)]];
    let one =
        [&[("a", "apps-a", false)][..], &[("b", "apps-b", true)], &[("c", "apps-c", false)], &[("on", "123", false)]];
    for (yaml, meta, clusters) in [(&plain, "", &two[..]), (&own, own_meta, &one[..])] {
        let mut package = web("[workloads.api]\nreplicas = { none = 2, node = 3 }\n", yaml).0;
        if !meta.is_empty() {
            package = package.replace("[meta]\nname = \"web\"\nversion = \"1.0.0\"\n", meta);
        }
        let at_node = |instances: &[(&str, &str, bool)]| {
            cluster_of(instances).replace("availability = \"none\"", "availability = \"node\"")
        };
        let mut tree = TestTree::new().package("web", &package, &[("w.yaml", yaml)]);
        for (index, instances) in clusters.iter().enumerate() {
            tree = tree.cluster(&format!("c{index}"), &cluster_of(instances));
        }
        tree = tree.cluster("north", &at_node(&[("d", "apps-d", false)]));
        let selection = crate::compile::Selection { root: tree.root().to_path_buf(), ..Default::default() };
        let compiled = crate::compile::compile_clusters(&selection);
        assert!(!compiled.diagnostics.has_errors(), "{:?}", compiled.diagnostics);
        let mut keys = std::collections::HashSet::new();
        for compiled_cluster in &compiled.clusters {
            let cluster = &compiled_cluster.resolved;
            for joined in compiled_cluster.instances() {
                let (instance, stamped) = (joined.resolved, joined.plan);
                let mut found = Diagnostics::default();
                let alone = derive_instance(cluster, instance, &Shapes::default(), &mut found);
                assert_eq!(stamped.objects(), alone.objects(), "{}/{}", cluster.name, instance.name);
                let mut alone = alone;
                alone.forget_rendered();
                assert_eq!(
                    crate::emit::render_instance(&cluster.name, stamped),
                    crate::emit::render_instance(&cluster.name, &alone),
                    "{}/{}",
                    cluster.name,
                    instance.name
                );
                // The instance's objects are its shape's: their text rendered with stand-ins, the same for every
                // instance of a shape whichever derived it (two cores may each derive one shape once).
                let shaped = stamped.planned().iter().filter(|p| p.origin != Origin::Namespace);
                let rendered: Vec<_> = shaped.filter_map(|p| p.rendered.as_ref()).collect();
                keys.insert(format!("{rendered:?}"));
            }
        }
        assert_eq!(keys.len(), 2, "{meta}: one shape per level");
        let replicas = |cluster: &str, instance: &str| {
            let cluster = compiled.clusters.iter().find(|c| c.plan.name == cluster).unwrap();
            let instance = cluster.instances().find(|i| i.plan.name == instance).unwrap();
            instance.plan.objects()[0]["spec"]["replicas"].clone()
        };
        assert_eq!((replicas("c0", "a"), replicas("north", "d")), (2.into(), 3.into()));
    }
}
