//! Derive once per shape (issue 11): instances stamped from an earlier instance's shape, in one
//! cluster or from other clusters', equal what deriving each alone gives, in objects and in
//! emitted text.

use super::*;

// Derive once per shape (issue 11): every instance's objects, stamped from an earlier instance of the same
// shape, equal what deriving that instance alone gives: namespaces (placed, kept, moved references),
// kix's labels (added or the user's), derived budgets, createNamespace, with and without `meta.namespace`.
#[test]
fn stamped_instances_equal_instances_derived_alone() {
    let user_label = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  \
                      labels: {app.kubernetes.io/instance: mine}\ndata: {}\n---\n";
    let workload = workload_yaml("Deployment", "api", None, "");
    let yaml = format!("{user_label}{workload}---\n{}", package_in("src"));
    let workloads = "[workloads.api]\nreplicas = { none = 2 }\n";
    // With a namespace of its own, each namespace is a shape of its own (`d` runs in the package's own
    // namespace); without one, instances in different namespaces share one shape (names YAML would read
    // as a boolean or a number are quoted where they are stamped).
    let own: &[(&str, &str, bool)] =
        &[("a", "apps-a", false), ("b", "apps-b", true), ("c", "apps-c", false), ("d", "src", true)];
    let kept: &[(&str, &str, bool)] = &[
        ("a", "apps-a", false),
        ("b", "apps-b", true),
        ("c", "apps-c", false),
        ("e", "apps-a", false),
        ("on", "123", false),
    ];
    for (meta, instances, expected) in [
        ("namespace = \"src\"\nkeepNamespaces = [\"kube-system\"]\n", own, 4),
        ("keepNamespaces = [\"kube-system\", \"src\"]\n", kept, 1),
    ] {
        let tree = TestTree::new().cluster("c", &cluster_of(instances)).package(
            "web",
            &web(&format!("{meta}{workloads}"), &yaml).0,
            &[("w.yaml", &yaml)],
        );
        let selection = crate::compile::Selection { root: tree.root().to_path_buf(), ..Default::default() };
        // (The cluster draws cross-instance findings, K0417 and K0421: every instance emits the kept
        // objects. Derive's own findings are what this test checks, below.)
        let (model, _) = crate::compile::compile_keeping_model(&selection);
        let cluster = &model.clusters[0];
        assert_eq!(cluster.instances.len(), instances.len(), "{meta}");
        let shared = Shapes::default();
        let mut shapes_used = 0;
        for instance in &cluster.instances {
            let mut found = Diagnostics::default();
            let stamped = derive_instance(cluster, instance, &shared, &mut found);
            let alone = derive_instance(cluster, instance, &Shapes::default(), &mut found);
            assert!(found.is_empty(), "{meta}: {:?}", found);
            assert_eq!(stamped.objects(), alone.objects(), "{meta}: instance {}", instance.name);
            let fields = |plan: &InstancePlan| plan.planned().iter().map(|p| p.fields).collect::<Vec<_>>();
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
                assert_eq!(without_stamped_fields(&stamped.planned()[i].value), without_stamped_fields(object), "{at}");
            }
            // The text copied from the shape's rendering is the text of the instance's own objects.
            let mut rendered_now = alone;
            rendered_now.forget_rendered();
            // Every object but the Namespace createNamespace adds is pre-rendered.
            let created = usize::from(stamped.objects()[0]["kind"] == "Namespace");
            assert!(stamped.planned()[created..].iter().all(|p| p.rendered.is_some()), "{meta}: {}", instance.name);
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

// Shapes are shared by every cluster of a compile (issue 11): each instance of a fleet, compiled with the
// shapes its clusters derived on every core, equals what deriving it alone gives, in clusters at the same
// level (one shape for the fleet) and at another (a shape of its own).
#[test]
fn instances_stamped_from_other_clusters_shapes_equal_instances_derived_alone() {
    let workload = workload_yaml("Deployment", "api", None, "");
    let yaml = format!("{workload}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {{}}\n");
    let package = web("[workloads.api]\nreplicas = { none = 2, node = 3 }\n", &yaml).0;
    let at_node = |instances: &[(&str, &str, bool)]| {
        cluster_of(instances).replace("availability = \"none\"", "availability = \"node\"")
    };
    let mut tree = TestTree::new().package("web", &package, &[("w.yaml", &yaml)]);
    for (cluster, text) in [
        ("east", cluster_of(&[("a", "apps-a", false), ("b", "apps-b", true)])),
        ("west", cluster_of(&[("c", "apps-c", false), ("on", "123", false)])),
        ("north", at_node(&[("d", "apps-d", false)])),
    ] {
        tree = tree.cluster(cluster, &text);
    }
    let selection = crate::compile::Selection { root: tree.root().to_path_buf(), ..Default::default() };
    let (model, compiled) = crate::compile::compile_keeping_model(&selection);
    assert!(!compiled.diagnostics.has_errors(), "{:?}", compiled.messages());
    for cluster in &model.clusters {
        let plan = compiled.clusters.iter().find(|p| p.name == cluster.name).unwrap();
        for instance in &cluster.instances {
            let mut found = Diagnostics::default();
            let alone = derive_instance(cluster, instance, &Shapes::default(), &mut found);
            let stamped = plan.instances.iter().find(|i| i.name == instance.name).unwrap();
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
        }
    }
    let replicas =
        |cluster: &str, instance: &str| compiled.instance(cluster, instance).objects()[0]["spec"]["replicas"].clone();
    assert_eq!((replicas("east", "a"), replicas("north", "d")), (2.into(), 3.into()));
}
