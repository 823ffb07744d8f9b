//! The invariants of one compile, checked against the tree it came from, and its canonical form
//! (for comparing compiles of the same inputs listed in another order).

use super::model::*;
use super::tree::*;
use kix::api::{InstancePlan, WorkloadPlan};
use kix::compile::Compiled;
use kix_kube::level::Level;
use kix_kube::selector::{Labels, Selector};
use kix_kube::validate::validate_object;
use kix_yaml::Value;
use std::collections::BTreeMap;

/// Everything a compile produced, independent of input order: sorted codes, and per
/// (cluster, instance) the sorted objects and workload plans.
pub type Canonical = (Vec<String>, BTreeMap<(String, String), (Vec<String>, Vec<String>)>);

pub fn messages(compiled: &Compiled) -> Vec<String> {
    compiled.diagnostics.iter().map(|d| format!("{:?}: {}", d.code, d.message)).collect()
}

pub fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

pub fn selects(pdb: &Value, labels: &Labels) -> bool {
    let selector = &pdb["spec"]["selector"];
    !selector.is_null() && Selector::from_value(selector).expect("emitted PDB selector parses").matches(labels)
}

/// Checks every invariant of one successful compile against the tree it came from.
pub fn check_invariants(tree: &TreeModel, compiled: &Compiled) {
    let context = || format!("diagnostics: {:#?}", messages(compiled));
    assert_eq!(compiled.clusters.len(), tree.clusters.len(), "{}", context());
    for (c, cluster) in tree.clusters.iter().enumerate() {
        let plan = compiled.clusters.iter().find(|p| p.name == format!("c{c}")).expect("cluster plan");
        assert_eq!(plan.instances.len(), cluster.instances.len(), "{}", context());
        for (i, instance) in cluster.instances.iter().enumerate() {
            let instance_plan = plan.instances.iter().find(|p| p.name == instance_name(i)).expect("instance plan");
            let version = tree.packages[instance.package].choose(instance.requirement);
            check_instance(cluster, instance, version, i, instance_plan);
        }
    }
}

pub fn check_instance(
    cluster: &ClusterModel,
    instance: &InstanceModel,
    version: &VersionModel,
    index: usize,
    plan: &InstancePlan,
) {
    let at = format!("instance {} of {} on {cluster:?}", plan.name, version.version);
    // R2, R4.
    let requested = instance.level.unwrap_or(cluster.level);
    assert_eq!(plan.requested, requested, "{at}");
    assert_eq!(plan.level, version.ceiling.map_or(requested, |c| c.min(requested)), "{at}");
    assert_eq!(plan.namespace, instance_namespace(index, instance), "{at}");

    // Every emitted object is valid, namespaced to the instance and labelled.
    for object in plan.objects() {
        let problems = validate_object(object);
        assert!(problems.is_empty(), "{at}: kix emitted an object the API server refuses: {problems:?}\n{object:?}");
        assert_eq!(object["metadata"]["namespace"].as_str(), Some(plan.namespace.as_str()), "{at}");
        assert_eq!(object["metadata"]["labels"]["app.kubernetes.io/instance"].as_str(), Some(plan.name.as_str()));
        assert_eq!(object["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str(), Some("kix"));
        assert_eq!(object["metadata"]["labels"]["kix.dev/instance"].as_str(), Some(plan.name.as_str()));
    }
    let input_count: usize = documents(version).iter().map(Vec::len).sum();
    let derived_pdbs = plan.workloads.iter().filter(|w| w.derived_pdb()).count();
    assert_eq!(plan.objects().len(), input_count + derived_pdbs, "{at}: objects are the inputs plus derived PDBs");
    assert_eq!(plan.workloads.len(), version.workloads.len(), "{at}");

    let pdbs: Vec<&Value> = plan.objects().iter().filter(|o| o["kind"] == "PodDisruptionBudget").collect();
    for (w, workload) in version.workloads.iter().enumerate() {
        let name = workload_name(w);
        let workload_plan = plan.workloads.iter().find(|p| p.name == name).expect("workload plan");
        let at = format!("{at}, workload {name} {workload:?}");
        check_workload(cluster, plan, version, w, workload, workload_plan, &pdbs, &at);
    }
}

pub fn check_workload(
    cluster: &ClusterModel,
    plan: &InstancePlan,
    version: &VersionModel,
    index: usize,
    workload: &WorkloadModel,
    workload_plan: &WorkloadPlan,
    pdbs: &[&Value],
    at: &str,
) {
    let name = workload_name(index);
    // Levels: never above the package ceiling, the workload ceiling or the declared substrate (R3-R5).
    let level = workload_plan.level;
    assert!(version.ceiling.is_none_or(|c| level <= c), "{at}: level {level} above the package ceiling");
    assert!(workload.ceiling.is_none_or(|c| level <= c), "{at}: level {level} above the workload ceiling");
    assert!(level <= cluster.substrate_cap(), "{at}: level {level} above the declared substrate");
    assert_eq!(level, workload.ceiling.map_or(plan.level, |c| c.min(plan.level)), "{at}");
    // R6.
    let replicas = workload.replicas_at(level);
    assert_eq!(workload_plan.replicas, replicas, "{at}");

    let object = plan
        .objects()
        .iter()
        .find(|o| name_of(o) == name && o["kind"] != "PodDisruptionBudget")
        .unwrap_or_else(|| panic!("{at}: workload missing from the output"));
    assert_eq!(object["spec"]["replicas"].as_u64(), Some(u64::from(replicas)), "{at}");
    let spread = object["spec"]["template"]["spec"].get("topologySpreadConstraints");
    let labels = template_labels(&name);
    let selecting: Vec<&&Value> = pdbs.iter().filter(|p| selects(p, &labels)).collect();
    let derived_pdb = pdbs.iter().find(|p| name_of(p) == name);
    assert_eq!(derived_pdb.is_some(), workload_plan.derived_pdb(), "{at}");

    // R11: explicit placement is never touched and gets no derived PDB.
    if let Some(explicit) = explicit_constraints(&name, workload) {
        assert!(workload_plan.explicit_placement, "{at}");
        assert_eq!(spread, Some(&explicit), "{at}: explicit placement was changed");
        assert!(derived_pdb.is_none(), "{at}: PDB derived for explicit placement");
        return;
    }
    // No placement on a one-replica workload, or on a confirmed single node.
    if replicas < 2 || cluster.single_node() {
        assert_eq!(spread, None, "{at}: spread on a workload that must have none");
        assert!(derived_pdb.is_none(), "{at}: PDB derived for a workload that must have none");
        assert!(workload_plan.spreads.is_empty(), "{at}");
        return;
    }

    // R10: exactly one budget selects its pods, and it selects no other workload's pods.
    assert_eq!(selecting.len(), 1, "{at}: {} PDBs select the workload's pods", selecting.len());
    let budget = selecting[0];
    for other in 0..version.workloads.len() {
        if other != index {
            assert!(!selects(budget, &template_labels(&workload_name(other))), "{at}: its PDB selects w{other}");
        }
    }
    assert_eq!(workload.shipped_pdb.is_none(), workload_plan.derived_pdb(), "{at}");
    if workload_plan.derived_pdb() {
        assert_eq!(budget["spec"]["maxUnavailable"].as_u64(), Some(1), "{at}");
        assert_eq!(budget["spec"]["selector"], object["spec"]["selector"], "{at}");
        let policy = workload.policy.unwrap_or(match workload.kind {
            Kind::Deployment => "AlwaysAllow",
            Kind::StatefulSet => "IfHealthyBudget",
        });
        assert_eq!(budget["spec"]["unhealthyPodEvictionPolicy"].as_str(), Some(policy), "{at}");
    }

    // R9: one constraint per key the cluster has, the level's key the only hard one.
    let constraints = spread.and_then(Value::as_sequence).unwrap_or_else(|| panic!("{at}: no derived spread"));
    let keys: Vec<&str> = constraints.iter().map(|c| c["topologyKey"].as_str().unwrap()).collect();
    let cluster_keys = cluster.keys(level);
    for key in &keys {
        assert!(cluster_keys.contains(key), "{at}: constraint on `{key}`, which the cluster does not have");
    }
    assert_eq!(keys, cluster_keys, "{at}");
    let hard: Vec<&str> = constraints
        .iter()
        .filter(|c| c["whenUnsatisfiable"] == "DoNotSchedule")
        .map(|c| c["topologyKey"].as_str().unwrap())
        .collect();
    assert!(hard.len() <= 1, "{at}: {} DoNotSchedule constraints", hard.len());
    let expected_hard = match level {
        Level::Node => Some(cluster.node_key()),
        Level::Zone => Some(cluster.zone_key()),
        Level::None | Level::Pod => None,
    };
    assert_eq!(hard.first().copied(), expected_hard, "{at}: hard key for level {level}");
    assert_eq!(workload_plan.hard_key(), expected_hard, "{at}");
    let uses_hash = workload.selector_style == 3;
    for constraint in constraints {
        assert_eq!(constraint["maxSkew"].as_u64(), Some(1), "{at}");
        assert_eq!(constraint["labelSelector"], object["spec"]["selector"], "{at}");
        assert!(constraint.get("minDomains").is_none(), "{at}");
        let hash = constraint.get("matchLabelKeys").is_some();
        assert_eq!(hash, workload.kind == Kind::Deployment && !uses_hash, "{at}: matchLabelKeys");
    }
}

/// Everything a compile produced, in a form that does not depend on the order kix documents
/// (files in name order, documents in file order, instances in cluster-file order).
pub fn canonical(compiled: &Compiled) -> Canonical {
    let mut codes: Vec<String> = compiled.diagnostics.iter().map(|d| format!("{:?}", d.code)).collect();
    codes.sort();
    let mut instances = BTreeMap::new();
    for cluster in &compiled.clusters {
        for instance in &cluster.instances {
            let mut objects: Vec<String> = instance.objects().iter().map(kix_yaml::emit::to_string).collect();
            objects.sort();
            // A plan's indices (into the resolved workloads, into the shipped budgets) follow the input's document order; everything
            // else it records must not.
            let unindexed = |w: &kix::api::WorkloadPlan| {
                let budget = match w.budget {
                    kix::api::BudgetReason::Shipped { .. } => kix::api::BudgetReason::Shipped { document: 0 },
                    budget => budget,
                };
                format!("{:?}", kix::api::WorkloadPlan { resolved: 0, budget, ..w.clone() })
            };
            let mut workloads: Vec<String> = instance.workloads.iter().map(unindexed).collect();
            workloads.sort();
            let header =
                format!("{} {} {} {}", instance.namespace, instance.package, instance.requested, instance.level);
            objects.push(header);
            instances.insert((cluster.name.clone(), instance.name.clone()), (objects, workloads));
        }
    }
    (codes, instances)
}
