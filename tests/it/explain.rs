//! `kix explain --cluster --instance`: the derivation of an instance, step by step, with the file and
//! line behind each step, over the shipped examples (goldens under tests/fixtures/examples/expected/).

use crate::support::{EXAMPLES, Test};

#[test]
fn an_instance_lowered_by_its_package_ceiling_says_where_each_step_came_from() {
    Test::new()
        .examples()
        .args(["explain", "--cluster", "prod", "--instance", "sessions"])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/explain-prod-sessions.txt"));
}

#[test]
fn a_group_shows_its_selector_members_and_where_each_came_from() {
    Test::new()
        .examples()
        .args(["explain", "--cluster", "prod", "--instance", "dns"])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/explain-prod-dns.txt"));
}

#[test]
fn one_workload_under_a_none_ceiling_and_the_json_shape() {
    let t = Test::new().examples();
    t.clone()
        .args(["explain", "--cluster", "staging", "--instance", "operator", "--workload", "controller"])
        .run()
        .status(0)
        .stdout_golden(format!("{EXAMPLES}/expected/explain-staging-operator-controller.txt"));
    let json =
        t.args(["explain", "--cluster", "prod", "--instance", "shop", "--format", "json"]).run().status(0).json();
    assert_eq!(json["package"], "web");
    assert_eq!(json["version"], "1.4.0");
    let api = &json["workloads"][0];
    assert_eq!(api["workload"], "Deployment/api");
    let step = |name: &str| api["steps"].as_array().unwrap().iter().find(|s| s["step"] == name).cloned().unwrap();
    assert_eq!(step("replicas")["value"], "3");
    assert!(step("replicas")["from"].as_str().unwrap().starts_with("packages/web/kix.toml:"), "{api}");
    let spread: Vec<_> = api["steps"].as_array().unwrap().iter().filter(|s| s["step"] == "spread").collect();
    assert_eq!(spread.len(), 2);
    assert!(spread[1]["why"].as_str().unwrap().ends_with("DoNotSchedule"), "{spread:?}");
}

#[test]
fn unknown_names_are_usage_errors_that_list_what_there_is() {
    let t = Test::new().examples();
    t.clone().args(["explain", "--cluster", "prod", "--instance", "nope"]).run().status(2).stderr_contains(
        "cluster `prod` has no instance `nope`; its instances: shop, orders-db, operator, sessions, edge",
    );
    t.clone()
        .args(["explain", "--cluster", "prod", "--instance", "shop", "--workload", "nope"])
        .run()
        .status(2)
        .stderr_contains("its workloads: api");
    // A code and an instance at once is refused by the command line itself.
    t.args(["explain", "K0302", "--cluster", "prod", "--instance", "shop"]).run().status(2);
}

/// Issue 18: a workload scaled to zero is explained as passed through, not as one replica.
#[test]
fn issue18_a_workload_scaled_to_zero_is_explained_as_passed_through() {
    let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                   [[instances]]\nname = \"app\"\npackage = \"p\"\n";
    let workload = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 0\n  \
                    selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    \
                    spec: {containers: [{name: c, image: i}]}\n";
    Test::new()
        .tree([
            ("clusters/c.toml", cluster),
            ("packages/p/kix.toml", "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n"),
            ("packages/p/w.yaml", workload),
        ])
        .args(["explain", "--cluster", "c", "--instance", "app"])
        .run()
        .status(0)
        .stdout_contains("replicas          0: the manifest's spec.replicas: scaled to zero")
        .stdout_contains("spread            none: scaled to zero, it runs no pods to spread")
        .stdout_contains("budget            none: scaled to zero, it runs no pods to protect")
        .stdout_contains("no diagnostics");
}
