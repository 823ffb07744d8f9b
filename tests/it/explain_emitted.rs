//! Explain states what the build emits (issue 37): for every workload of the shipped examples and the
//! real-world corpus, each spread constraint explain names is one the emitted object carries (and no
//! other kix derived), and each budget it names is one the cluster's output holds; "none" means kix
//! emitted none for it. Explain reads placement's records; this holds the records to the output.

use crate::support::{copy_examples, repo_path};
use kix_compiler::compile::{CompiledCluster, CompiledInstance, Selection, compile_clusters};
use kix_yaml::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// A constraint as emitted: its key and whether it is hard.
type Constraint = (String, bool);

fn constraints(at: Option<&Value>) -> Vec<Constraint> {
    let Some(list) = at.and_then(Value::as_sequence) else { return Vec::new() };
    list.iter()
        .map(|c| {
            let key = c.get("topologyKey").and_then(Value::as_str).unwrap_or_default().to_string();
            (key, c.get("whenUnsatisfiable").and_then(Value::as_str) == Some("DoNotSchedule"))
        })
        .collect()
}

/// Where a workload's constraints are written: its operator's field, or its pod template's (a Rollout
/// with a workloadRef: the Deployment whose template it runs).
fn constraints_of(object: &Value, objects: &[Value], kind: kix_kube::kind::WorkloadKind) -> Vec<Constraint> {
    if let Some(path) = kind.profile().and_then(|p| p.spread.as_ref()) {
        return constraints(path.get(object));
    }
    let combined = kix_kube::workload::with_referenced_template(object, objects).map(|(value, _)| value);
    let object = combined.as_ref().unwrap_or(object);
    let path = ["spec", "template", "spec", "topologySpreadConstraints"];
    constraints(path.iter().try_fold(object, |v, k| v.get(k)))
}

fn text<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    path.iter().try_fold(object, |v, k| v.get(k)).and_then(Value::as_str).unwrap_or_default()
}

/// The names of the budgets kix derived for an instance: its emitted PodDisruptionBudgets the package
/// does not ship.
fn derived_budgets(instance: CompiledInstance<'_>) -> BTreeSet<String> {
    let shipped: BTreeSet<&str> = (instance.resolved.package.documents.iter())
        .filter(|d| d.kind() == "PodDisruptionBudget")
        .map(|d| d.name())
        .collect();
    (instance.plan.objects().iter())
        .filter(|o| text(o, &["kind"]) == "PodDisruptionBudget")
        .map(|o| text(o, &["metadata", "name"]).to_string())
        .filter(|name| !shipped.contains(name.as_str()))
        .collect()
}

/// Checks every workload of every instance of `clusters`; returns how many workloads it checked.
fn check(clusters: &[CompiledCluster], diagnostics: &kix_diag::Diagnostics) -> usize {
    let mut checked = 0;
    for cluster in clusters {
        let in_cluster: BTreeSet<String> = cluster.instances().flat_map(derived_budgets).collect();
        for instance in cluster.instances() {
            let derivation = kix_engines::explain::derivation(cluster, instance, None, diagnostics);
            let objects = instance.plan.objects();
            let own_budgets = derived_budgets(instance);
            assert_eq!(derivation.workloads.len(), instance.plan.workloads.len());
            for (workload, explained) in instance.workloads().zip(&derivation.workloads) {
                let at = format!("{}/{} {}", cluster.plan.name, instance.plan.name, explained.workload);
                let plan = workload.plan;
                let object = (objects.iter())
                    .find(|o| text(o, &["kind"]) == plan.kind.as_str() && text(o, &["metadata", "name"]) == plan.name)
                    .unwrap_or_else(|| panic!("{at}: emitted"));
                let source = &instance.resolved.package.documents[workload.workload.document].value;
                let sources: Vec<Value> = instance.resolved.package.documents.iter().map(|d| d.value.clone()).collect();
                let emitted = constraints_of(object, objects, plan.kind);
                let written = constraints_of(source, &sources, plan.kind);
                let spread: Vec<_> = explained.steps.iter().filter(|s| s.step == "spread").collect();
                if spread.iter().any(|s| s.value == "none") {
                    assert_eq!(spread.len(), 1, "{at}");
                    assert_eq!(emitted, written, "{at}: explain says kix derived no spread");
                } else {
                    let said: Vec<Constraint> = (spread.iter())
                        .map(|s| {
                            let key = s.value.split(' ').next().unwrap().to_string();
                            (key, s.why.ends_with("DoNotSchedule"))
                        })
                        .collect();
                    assert!(written.is_empty(), "{at}: kix derives only where none is written");
                    assert_eq!(emitted, said, "{at}: the constraints explain states");
                }
                let [budget] = explained.steps.iter().filter(|s| s.step == "budget").collect::<Vec<_>>()[..] else {
                    panic!("{at}: one budget step")
                };
                let named =
                    budget.value.strip_prefix("PodDisruptionBudget ").map(|rest| rest.split(' ').next().unwrap());
                match named {
                    Some(group) if budget.value.ends_with("(the group's)") => {
                        assert!(in_cluster.contains(group), "{at}: the group's budget {group} is emitted")
                    }
                    Some(name) => {
                        assert!(own_budgets.contains(name), "{at}: its budget {name} is emitted: {own_budgets:?}");
                        assert!(budget.value.contains("maxUnavailable 1"), "{at}");
                    }
                    None => {
                        assert!(budget.value.starts_with("none"), "{at}: {}", budget.value);
                        assert!(!own_budgets.contains(&plan.name), "{at}: explain says none, kix emitted one");
                        if let Some(group) = &plan.group {
                            assert!(!in_cluster.contains(group), "{at}: explain says none, the group has one");
                        }
                    }
                }
                checked += 1;
            }
        }
    }
    checked
}

fn compile(root: &Path) -> kix_compiler::compile::Compiled<CompiledCluster> {
    let compiled = compile_clusters(&Selection { root: root.to_path_buf(), ..Selection::default() });
    assert!(compiled.ok(), "{:?}", compiled.diagnostics);
    compiled
}

#[test]
fn explain_states_the_spread_and_budgets_the_examples_emit() {
    let scratch = tempfile::tempdir().unwrap();
    copy_examples(scratch.path());
    let compiled = compile(scratch.path());
    assert!(check(&compiled.clusters, &compiled.diagnostics) >= 20);
}

#[test]
fn explain_states_the_spread_and_budgets_the_real_world_corpus_emits() {
    let compiled = compile(&repo_path("tests/realworld"));
    assert!(check(&compiled.clusters, &compiled.diagnostics) >= 50);
}

/// The case the third review found: a group whose pods are fewer than two gets no budget (R10), where
/// explain said "PodDisruptionBudget g (the group's)".
#[test]
fn a_group_of_one_pod_is_explained_without_a_budget() {
    let scratch = tempfile::tempdir().unwrap();
    crate::support::write_tree(
        scratch.path(),
        [
            (
                "clusters/c.toml",
                "availability = \"pod\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"i\"\npackage = \"p\"\n",
            ),
            (
                "packages/p/kix.toml",
                "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n[groups.g]\nworkloads = [\"a\"]\n\
                 [workloads.a]\nreplicas = { none = 1, pod = 1 }\n",
            ),
            (
                "packages/p/a.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  selector: {matchLabels: {app: a}}\n  \
                 template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: a, image: a}]}\n",
            ),
        ],
    );
    let compiled = compile_clusters(&Selection { root: scratch.path().to_path_buf(), ..Selection::default() });
    let cluster = &compiled.clusters[0];
    let instance = cluster.instance(0);
    let derivation = kix_engines::explain::derivation(cluster, instance, None, &compiled.diagnostics);
    let budget = derivation.workloads[0].steps.iter().find(|s| s.step == "budget").unwrap();
    assert_eq!(budget.value, "none", "{budget:?}");
    assert!(budget.why.contains("one pod"), "{budget:?}");
    assert!(derived_budgets(instance).is_empty());
    assert_eq!(check(&compiled.clusters, &compiled.diagnostics), 1);
}
