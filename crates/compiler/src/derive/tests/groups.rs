//! Availability groups (issue 17) through derive: R9 over the group's selector, R10 once per group
//! (its policy, a shipped budget replacing it, explicit placement), and K0415 seeing group budgets.

use super::*;

/// A member `name` of kind `kind` with pod labels `app: dns, role: primary` and its own `server` label.
fn member(kind: &str, name: &str, extra: &str) -> String {
    let service = if kind == "StatefulSet" { "  serviceName: dns\n" } else { "" };
    format!(
        "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{service}  replicas: 1\n  selector:\n    \
         matchLabels: {{server: {name}}}\n  template:\n    metadata:\n      labels: {{app: dns, role: primary, server: \
         {name}}}\n    spec:\n{extra}      containers: [{{name: c, image: example/c:1}}]\n"
    )
}

const GROUP: &str = "[groups.primaries]\nworkloads = [\"p-*\"]\n";

fn budgets(compiled: &crate::compile::Compiled) -> Vec<String> {
    let objects = compiled.instance("c", "app").objects();
    let budgets = objects.iter().filter(|o| o["kind"] == "PodDisruptionBudget");
    budgets.map(|o| o["metadata"]["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn r9_group_members_spread_over_the_group_selector() {
    let yaml = [member("Deployment", "p-0", ""), member("Deployment", "p-1", ""), member("Deployment", "p-2", "")]
        .join("---\n");
    let compiled = compile_one("zone", THREE_ZONES, web(GROUP, &yaml));
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
    for object in compiled.instance("c", "app").objects().iter().filter(|o| o["kind"] == "Deployment") {
        let list = object["spec"]["template"]["spec"]["topologySpreadConstraints"].as_sequence().unwrap();
        assert_eq!(list.len(), 2);
        for constraint in list {
            assert_eq!(constraint["labelSelector"]["matchLabels"]["app"], "dns");
            assert_eq!(constraint["labelSelector"]["matchLabels"]["role"], "primary");
            assert!(constraint["labelSelector"]["matchLabels"].get("server").is_none());
            assert!(constraint.get("matchLabelKeys").is_none());
        }
        assert_eq!(object["metadata"]["annotations"]["kix.dev/availability-group"], "primaries");
    }
}

#[test]
fn r10_one_budget_per_group() {
    let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: mine\nspec:\n  maxUnavailable: 1\n  \
               selector:\n    matchLabels: {server: p-0}\n";
    let own = "      topologySpreadConstraints: []\n";
    let cases: [(&str, String, Vec<&str>, &str); 4] = [
        (
            "deployments",
            [member("Deployment", "p-0", ""), member("Deployment", "p-1", ""), member("Deployment", "p-2", "")]
                .join("---\n"),
            vec!["primaries"],
            "AlwaysAllow",
        ),
        (
            "a statefulset member",
            [member("Deployment", "p-0", ""), member("StatefulSet", "p-1", ""), member("Deployment", "p-2", "")]
                .join("---\n"),
            vec!["primaries"],
            "IfHealthyBudget",
        ),
        (
            "a shipped budget over a member",
            [
                member("Deployment", "p-0", ""),
                member("Deployment", "p-1", ""),
                member("Deployment", "p-2", ""),
                pdb.to_string(),
            ]
            .join("---\n"),
            vec!["mine"],
            "",
        ),
        (
            "the first member's own placement",
            [member("Deployment", "p-0", own), member("Deployment", "p-1", ""), member("Deployment", "p-2", "")]
                .join("---\n"),
            vec!["primaries"],
            "AlwaysAllow",
        ),
    ];
    for (case, yaml, expected, policy) in cases {
        let compiled = compile_one("zone", THREE_ZONES, web(GROUP, &yaml));
        assert!(compiled.diagnostics.is_empty(), "{case}: {:?}", compiled.messages());
        assert_eq!(budgets(&compiled), expected, "{case}");
        let objects = compiled.instance("c", "app").objects();
        if let Some(budget) = objects.iter().find(|o| o["metadata"]["name"] == "primaries") {
            assert_eq!(budget["spec"]["unhealthyPodEvictionPolicy"], policy, "{case}");
            assert_eq!(budget["spec"]["selector"]["matchLabels"]["role"], "primary", "{case}");
        }
    }
}

#[test]
fn r10_group_budgets_count_in_k0415() {
    let yaml = [member("Deployment", "p-0", ""), member("Deployment", "p-1", ""), member("Deployment", "p-2", "")]
        .join("---\n");
    let other = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: theirs\nspec:\n  maxUnavailable: 1\n  \
                 selector:\n    matchLabels: {server: p-1}\n";
    let cluster = format!(
        "{}[[instances]]\nname = \"other\"\npackage = \"budget\"\nnamespace = \"app\"\n",
        cluster_toml("zone", THREE_ZONES, "web")
    );
    let compiled = TestTree::new()
        .cluster("c", &cluster)
        .package("web", &web(GROUP, &yaml).0, &[("w.yaml", &yaml)])
        .package("budget", "[meta]\nname = \"budget\"\nversion = \"1.0.0\"\n", &[("pdb.yaml", other)])
        .compile();
    assert_eq!(compiled.codes(), vec![Code::SharedBudget], "{:?}", compiled.messages());
    assert!(compiled.messages()[0].contains("primaries (instance `app`)"), "{:?}", compiled.messages());
}
