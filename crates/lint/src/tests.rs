//! Unit tests of the lint rules, table-driven over small manifests run through [`super::lint`].

use super::{Input, LintRequest, lint};
use kix_compiler::testing::TestTree;

/// A Deployment `name` in namespace `shop` with labels `{app: name}` plus `labels`, and `placement`
/// (indented under the pod spec).
fn deployment(name: &str, replicas: u32, labels: &str, placement: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: {replicas}\n  \
         selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}{labels}}}}}\n    \
         spec:\n      containers: [{{name: c, image: i}}]\n{placement}"
    )
}

/// A hard zone spread over `selector`, with `extra` lines in the constraint.
fn zone_spread(selector: &str, extra: &str) -> String {
    format!(
        "      topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: topology.kubernetes.io/zone\n        \
         whenUnsatisfiable: DoNotSchedule\n        labelSelector: {{matchLabels: {selector}}}\n{extra}"
    )
}

fn pdb(name: &str, budget: &str, selector: &str) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  {budget}\n  \
         selector: {{matchLabels: {selector}}}\n  unhealthyPodEvictionPolicy: AlwaysAllow\n"
    )
}

const HASH: &str = "        matchLabelKeys: [pod-template-hash]\n";

fn codes(documents: &[String], cluster: Option<(&TestTree, &str)>) -> Vec<String> {
    let request = LintRequest {
        inputs: vec![Input::Text { name: "m.yaml".into(), text: documents.join("---\n") }],
        cluster: cluster.map(|(_, name)| name.to_string()),
        root: cluster.map_or_else(Default::default, |(tree, _)| tree.root().to_path_buf()),
        deny_warnings: false,
    };
    lint(&request).diagnostics.iter().map(|d| d.code.id().to_string()).collect()
}

#[test]
fn spread_selectors_count_what_the_scheduler_counts() {
    let web = |labels: &str, placement: &str| deployment("web", 3, labels, placement);
    let api = deployment("api", 3, ", part: shop", &zone_spread("{app: api}", HASH));
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        ("own selector", vec![web("", &zone_spread("{app: web}", HASH))], vec![]),
        ("misses its pods", vec![web("", &zone_spread("{app: other}", HASH))], vec!["K0701"]),
        (
            "shared label counts the other workload",
            vec![web(", part: shop", &zone_spread("{part: shop}", "")), api.clone()],
            vec!["K0706", "K0703"],
        ),
        // pod-template-hash differs between Deployments: only the workload's own pods are counted.
        (
            "pod-template-hash isolates",
            vec![web(", part: shop", &zone_spread("{part: shop}", HASH)), api.clone()],
            vec![],
        ),
        // A matchLabelKeys key the pod carries is ANDed with its own value.
        (
            "matchLabelKeys on an own label isolates",
            vec![
                web(
                    ", part: shop, tier: a",
                    &zone_spread("{part: shop}", "        matchLabelKeys: [pod-template-hash, tier]\n"),
                ),
                api.clone(),
            ],
            vec![],
        ),
        (
            "other namespaces do not count",
            vec![
                web(", part: shop", &zone_spread("{part: shop}", HASH)),
                api.replace("namespace: shop", "namespace: b"),
            ],
            vec![],
        ),
        ("empty selector", vec![web("", &zone_spread("{}", HASH).replace("{matchLabels: {}}", "{}"))], vec!["K0705"]),
        (
            "null selector is missing",
            vec![web(
                "",
                &zone_spread("{app: web}", HASH)
                    .replace("labelSelector: {matchLabels: {app: web}}", "labelSelector: null"),
            )],
            vec!["K0705"],
        ),
        (
            "StatefulSets need no pod-template-hash",
            vec![web("", &zone_spread("{app: web}", "")).replace("Deployment", "StatefulSet")],
            vec![],
        ),
    ];
    for (what, documents, expected) in cases {
        assert_eq!(codes(&documents, None), expected, "{what}");
    }
}

#[test]
fn budgets_follow_the_disruption_controller() {
    let web = |replicas: u32| deployment("web", replicas, "", &zone_spread("{app: web}", HASH));
    let cases: Vec<(&str, u32, &str, Vec<&str>)> = vec![
        ("maxUnavailable 1", 3, "maxUnavailable: 1", vec![]),
        ("maxUnavailable 0%", 3, "maxUnavailable: 0%", vec!["K0710"]),
        ("minAvailable 2 of 3", 3, "minAvailable: 2", vec![]),
        ("minAvailable 3 of 3", 3, "minAvailable: 3", vec!["K0711"]),
        // Percentages round up: 67% of 3 is 2.01, so 3 must stay.
        ("minAvailable 67% of 3", 3, "minAvailable: 67%", vec!["K0711"]),
        ("minAvailable 66% of 3", 3, "minAvailable: 66%", vec![]),
        ("minAvailable 100%", 5, "minAvailable: 100%", vec!["K0711"]),
        ("minAvailable 1 of 1", 1, "minAvailable: 1", vec!["K0711"]),
        ("maxUnavailable 1 of 1", 1, "maxUnavailable: 1", vec!["K0712"]),
    ];
    for (what, replicas, budget, expected) in cases {
        assert_eq!(codes(&[web(replicas), pdb("web", budget, "{app: web}")], None), expected, "{what}");
    }
}

/// A budget beside a Prometheus or Alertmanager selects the pods prometheus-operator runs for it (issue 21):
/// not K0702; a budget over neither, or over another namespace's, still is.
#[test]
fn budgets_over_an_operators_pods_select_something() {
    let prometheus = |namespace: &str| {
        format!(
            "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {{name: k8s, namespace: {namespace}}}\n\
             spec:\n  replicas: 2\n  podMetadata:\n    labels: {{part: shop}}\n"
        )
    };
    let budget = |selector: &str| pdb("prometheus-k8s", "minAvailable: 1", selector);
    let cases: Vec<(&str, String, &str, Vec<&str>)> = vec![
        ("podMetadata and operator labels", prometheus("shop"), "{part: shop, prometheus: k8s}", vec![]),
        ("the operator's instance label", prometheus("shop"), "{app.kubernetes.io/instance: k8s}", vec![]),
        ("another Prometheus", prometheus("shop"), "{prometheus: other}", vec!["K0702"]),
        ("another namespace", prometheus("monitoring"), "{prometheus: k8s}", vec!["K0702"]),
    ];
    for (what, object, selector, expected) in cases {
        // Only the budget's finding is under test (the Prometheus's missing spread is K0715's, issue 18).
        let found: Vec<String> =
            codes(&[object, budget(selector)], None).into_iter().filter(|c| c == "K0702").collect();
        assert_eq!(found, expected, "{what}");
    }
}

#[test]
fn autoscalers_set_the_scale_budgets_are_read_at() {
    let web = deployment("web", 1, "", &zone_spread("{app: web}", HASH));
    let hpa = |min: &str| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web, namespace: shop}}\nspec:\n  \
             scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n{min}  maxReplicas: 5\n"
        )
    };
    let budget = pdb("web", "maxUnavailable: 1", "{app: web}");
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        // Under an HPA the manifest's one replica is not what runs: K0717 speaks for the low end.
        ("default minReplicas", vec![web.clone(), budget.clone(), hpa("")], vec!["K0717"]),
        ("minReplicas 2", vec![web.clone(), budget.clone(), hpa("  minReplicas: 2\n")], vec![]),
        ("no budget", vec![web.clone(), hpa("")], vec![]),
        (
            "minAvailable 2 at minReplicas 2",
            vec![web.clone(), pdb("web", "minAvailable: 2", "{app: web}"), hpa("  minReplicas: 2\n")],
            vec!["K0711"],
        ),
    ];
    for (what, documents, expected) in cases {
        assert_eq!(codes(&documents, None), expected, "{what}");
    }
    // maxReplicas makes a one-replica manifest multi-replica.
    let bare = deployment("web", 1, "", "");
    assert_eq!(codes(&[bare, hpa("  minReplicas: 2\n")], None), vec!["K0715"]);
}

#[test]
fn anti_affinity_caps_only_the_pods_it_matches() {
    let anti = |key: &str, selector: &str, namespaces: &str| {
        format!(
            "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          \
             - topologyKey: {key}\n            labelSelector: {{matchLabels: {selector}}}\n{namespaces}"
        )
    };
    let cases = [
        (anti("topology.kubernetes.io/zone", "{app: web}", ""), vec!["K0716"]),
        (anti("failure-domain.beta.kubernetes.io/zone", "{app: web}", ""), vec!["K0716"]),
        (anti("kubernetes.io/hostname", "{app: web}", ""), vec![]),
        // Anti-affinity against another app's pods does not cap this one (no such pods in these
        // manifests: the term selects nothing they run, K0724).
        (anti("topology.kubernetes.io/zone", "{app: db}", ""), vec!["K0724"]),
        (anti("topology.kubernetes.io/zone", "{app: web}", "            namespaces: [other]\n"), vec!["K0724"]),
        (anti("topology.kubernetes.io/zone", "{app: web}", "            namespaceSelector: {}\n"), vec!["K0716"]),
    ];
    for (placement, expected) in cases {
        assert_eq!(codes(&[deployment("web", 3, "", &placement)], None), expected, "{placement}");
    }
}

#[test]
fn a_declared_cluster_tells_keys_and_caps() {
    let zones = "[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n";
    let pools = "[[nodePools]]\nname = \"p\"\nzones = [\"a\", \"b\", \"c\"]\nnodesPerZone = 2\nlabels = { \"example.com/rack\" = \"r1\" }\n";
    let declared = TestTree::new().cluster("c", &format!("availability = \"zone\"\n{zones}"));
    let inventory = TestTree::new().cluster("c", &format!("availability = \"zone\"\n{zones}{pools}"));
    let unknown = TestTree::new().cluster("c", "availability = \"node\"\n[capabilities]\nmultiNode = true\n");
    let spread = |key: &str, replicas: u32, extra: &str| {
        deployment(
            "web",
            replicas,
            "",
            &zone_spread("{app: web}", &format!("{HASH}{extra}")).replace("topology.kubernetes.io/zone", key),
        )
    };
    let anti = |key: &str, replicas: u32| {
        deployment(
            "web",
            replicas,
            "",
            &format!(
                "{}      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          \
                 - topologyKey: {key}\n            labelSelector: {{matchLabels: {{app: web}}}}\n",
                zone_spread("{app: web}", HASH)
            ),
        )
    };
    let zone = "topology.kubernetes.io/zone";
    let host = "kubernetes.io/hostname";
    let cases: Vec<(&str, &TestTree, String, Vec<&str>)> = vec![
        // maxSkew 1 on three zones places any count.
        ("hard zone spread, 100 replicas", &declared, spread(zone, 100, ""), vec![]),
        ("minDomains at the zone count", &declared, spread(zone, 100, "        minDomains: 3\n"), vec![]),
        ("minDomains above it caps at 3", &declared, spread(zone, 4, "        minDomains: 4\n"), vec!["K0722"]),
        ("minDomains above it, within the cap", &declared, spread(zone, 3, "        minDomains: 4\n"), vec![]),
        ("hostname from the inventory", &inventory, anti(host, 7), vec!["K0722"]),
        ("hostname within six nodes", &inventory, anti(host, 6), vec![]),
        ("hostname without an inventory is unknown", &declared, anti(host, 7), vec![]),
        // The error (K0722) first, then the warning (K0716): the report's one order.
        ("zone anti-affinity over the zone count", &declared, anti(zone, 4), vec!["K0722", "K0716"]),
        ("an undeclared key", &declared, spread("example.com/rack", 3, ""), vec!["K0720"]),
        ("a key from the inventory's labels", &inventory, spread("example.com/rack", 3, ""), vec![]),
        ("a kubelet key", &declared, spread("kubernetes.io/os", 3, ""), vec![]),
        ("zones not declared: unknown, not missing", &unknown, spread(zone, 3, ""), vec![]),
        ("anti-affinity on a missing key", &declared, anti("example.com/rack", 3), vec!["K0721"]),
    ];
    for (what, tree, manifest, expected) in cases {
        assert_eq!(codes(&[manifest], Some((tree, "c"))), expected, "{what}");
    }
}

#[test]
fn single_node_clusters_need_no_spreading() {
    let dev = TestTree::new().cluster("dev", "availability = \"none\"\n[capabilities]\nmultiNode = false\n");
    let bare = deployment("web", 2, "", "");
    assert_eq!(codes(std::slice::from_ref(&bare), None), vec!["K0715"]);
    assert_eq!(codes(&[bare], Some((&dev, "dev"))), Vec::<&str>::new());
}

/// `affinity:` under the pod spec with one term of `kind` (podAffinity, podAntiAffinity) in `list`.
fn affinity_term(kind: &str, list: &str, term: &str) -> String {
    let preferred = list.starts_with("preferred");
    let item = if preferred { format!("{{weight: 100, podAffinityTerm: {term}}}") } else { term.to_string() };
    format!(
        "      affinity:\n        {kind}:\n          {list}DuringSchedulingIgnoredDuringExecution:\n          - {item}\n"
    )
}

#[test]
fn k0724_affinity_terms_that_select_no_pod_of_the_manifests() {
    const HOST: &str = "topologyKey: kubernetes.io/hostname";
    let term = |selector: &str| format!("{{labelSelector: {selector}, {HOST}}}");
    // Spread on the hostname with the workload's selector, so no other rule speaks.
    let spread = "      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}\n";
    let web = |kind: &str, list: &str, term: &str| {
        deployment("web", 1, "", &format!("{}{spread}", affinity_term(kind, list, term)))
    };
    let other = deployment("cache", 1, "", "");
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "anti-affinity over its own pods",
            vec![web("podAntiAffinity", "required", &term("{matchLabels: {app: web}}"))],
            vec![],
        ),
        (
            "anti-affinity over labels its pods lack",
            vec![web(
                "podAntiAffinity",
                "required",
                &term("{matchExpressions: [{key: name, operator: In, values: [web]}]}"),
            )],
            vec!["K0724"],
        ),
        (
            "preferred anti-affinity over nothing",
            vec![web("podAntiAffinity", "preferred", &term("{matchLabels: {app: nope}}"))],
            vec!["K0724"],
        ),
        (
            "preferred affinity over nothing",
            vec![web("podAffinity", "preferred", &term("{matchLabels: {app: nope}}"))],
            vec!["K0724"],
        ),
        (
            "required affinity over nothing",
            vec![web("podAffinity", "required", &term("{matchLabels: {app: nope}}"))],
            vec!["K0724"],
        ),
        (
            "no labelSelector selects no pod",
            vec![web("podAntiAffinity", "required", &format!("{{{HOST}}}"))],
            vec!["K0724"],
        ),
        // Another workload of the manifests: the term does something (keeps web near or away from it).
        (
            "affinity to another workload",
            vec![web("podAffinity", "required", &term("{matchLabels: {app: cache}}")), other.clone()],
            vec![],
        ),
        // In another namespace only when the term names it.
        (
            "another namespace's workload is not taken in",
            vec![
                web("podAffinity", "required", &term("{matchLabels: {app: cache}}")),
                other.replace("namespace: shop", "namespace: data"),
            ],
            vec!["K0724"],
        ),
        (
            "a namespace the term lists",
            vec![
                web(
                    "podAffinity",
                    "required",
                    &format!("{{labelSelector: {{matchLabels: {{app: cache}}}}, namespaces: [data], {HOST}}}"),
                ),
                other.replace("namespace: shop", "namespace: data"),
            ],
            vec![],
        ),
        // A malformed selector is the API server's (K0411 elsewhere), not this rule's.
        (
            "a malformed selector is not this rule's",
            vec![web("podAntiAffinity", "required", &term("{matchLabels: 3}"))],
            vec![],
        ),
    ];
    for (name, documents, want) in cases {
        let got = codes(&documents, None);
        assert_eq!(
            got.iter().filter(|c| *c == "K0724").collect::<Vec<_>>(),
            want.iter().collect::<Vec<_>>(),
            "{name}: {got:?}"
        );
    }
}

#[test]
fn a_host_port_keeps_pods_one_per_node_so_no_k0715() {
    let ports = |host_port: u32| {
        deployment("web", 3, "", "").replace(
            "containers: [{name: c, image: i}]",
            &format!("containers: [{{name: c, image: i, ports: [{{containerPort: 80, hostPort: {host_port}}}]}}]"),
        )
    };
    assert_eq!(codes(&[ports(80)], None), Vec::<String>::new());
    // hostPort 0 takes no port on the node: the pods may share one, as without ports.
    assert_eq!(codes(&[ports(0)], None), vec!["K0715"]);
}
