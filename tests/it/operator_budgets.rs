//! Issue 43, part 5: a drain held by a budget an operator makes is said with the budget's name as the
//! cluster will show it (CloudNativePG's `<cluster>`, Strimzi's `<kafka>-kafka`), labelled as the
//! operator's budget, and where verify models two budgets as one (CloudNativePG's over the primary and
//! over the replicas) the finding says so.

use crate::support::*;

/// A single-node cluster at level none running one resource of two pods: draining the node evicts one,
/// whose replacement cannot schedule on the cordoned node, so the operator's budget (all but one) refuses
/// the second eviction.
fn tree(package: &str, kind_yaml: &str) -> Test {
    let cluster = format!(
        "availability = \"none\"\n[capabilities]\nmultiNode = false\n[[nodePools]]\nname = \"general\"\nnodesPerZone = 1\n[[instances]]\nname = \"{package}\"\npackage = \"{package}\"\nnamespace = \"data\"\n"
    );
    let toml = format!("[meta]\nname = \"{package}\"\nversion = \"1.0.0\"\n");
    Test::new().tree([
        ("clusters/prod.toml".to_string(), cluster),
        (format!("packages/{package}/kix.toml"), toml),
        (format!("packages/{package}/resource.yaml"), kind_yaml.to_string()),
    ])
}

#[test]
fn cloudnative_pg_budgets_are_named_as_the_operator_names_them_and_said_to_be_modelled_as_one() {
    let cluster = "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata:\n  name: pg\nspec:\n  instances: 2\n  storage: {size: 1Gi}\n";
    let run = tree("pg", cluster)
        .args(["verify"])
        .run()
        .status(1)
        .stderr_contains("PodDisruptionBudget data/pg allows no disruption")
        .stderr_contains("the replicas the operator's budget protects")
        .stderr_contains(
            "the operator of Cluster pg makes 2 PodDisruptionBudgets, `pg` and `pg-primary`; verify models them as one, `pg`",
        );
    assert!(!run.stderr.contains("kix-operator-budget"), "{}", run.stderr);
    assert!(!run.stderr.contains("the budget kix derived"), "{}", run.stderr);
}

#[test]
fn strimzi_budget_is_named_after_the_kafka_cluster() {
    let pool = "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaNodePool\nmetadata:\n  name: brokers\n  labels: {strimzi.io/cluster: events}\n\
                spec:\n  replicas: 2\n  roles: [broker]\n  storage: {type: ephemeral}\n";
    let run = tree("kafka", pool)
        .args(["verify"])
        .run()
        .status(1)
        .stderr_contains("PodDisruptionBudget data/events-kafka allows no disruption")
        .stderr_contains("the replicas the operator's budget protects");
    // One budget, named as Strimzi names it: no note about budgets modelled as one.
    assert!(!run.stderr.contains("verify models them as one"), "{}", run.stderr);
}
