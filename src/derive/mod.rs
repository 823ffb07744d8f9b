//! Derive: turn each resolved instance into its output objects: the package's
//! own documents patched for the instance, spread constraints and
//! PodDisruptionBudgets for its workloads (R9-R11), and every object checked
//! as the API server would check it.
//!
//! Derive reads only the resolved model (levels and replica counts are
//! settled there). The patches touch exactly the fields kix owns
//! (`metadata.namespace`, two labels, two annotations, `spec.replicas`, the
//! pod template's `topologySpreadConstraints`) and leave every other field,
//! and the order of fields, as the user wrote them.
//!
//! Files: [`placement`] decides spread and budgets per workload, [`patch`]
//! edits documents, [`budget`] builds derived PDBs, [`scope`] knows which
//! kinds are cluster-scoped, [`objects`] checks one instance's objects.

mod budget;
mod objects;
mod patch;
mod placement;
mod scope;
#[cfg(test)]
mod tests;

pub use patch::{INSTANCE_LABEL, MANAGED_BY_LABEL, REQUESTED_ANNOTATION, RESOLVED_ANNOTATION};
pub use placement::spread_keys;

use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::kube::kind::WorkloadKind;
use crate::level::Level;
use crate::resolve::inventory::InventoryNode;
use crate::resolve::{Cluster, FailureDomains, Instance, Model};
use crate::yaml::Value;
use objects::Origin;

/// The compiled output of one cluster.
#[derive(Clone, Debug)]
pub struct ClusterPlan {
    pub name: String,
    pub instances: Vec<InstancePlan>,
    /// The nodes of the cluster's `[[nodePools]]` (empty without an inventory).
    pub nodes: Vec<InventoryNode>,
    pub domains: FailureDomains,
    /// The cluster file, as diagnostics name it (for findings about its nodes).
    pub file: std::path::PathBuf,
}

/// The compiled output of one instance: its objects in emit order.
#[derive(Clone, Debug)]
pub struct InstancePlan {
    pub name: String,
    pub namespace: String,
    pub package: String,
    /// The package version chosen for the instance (R13).
    pub package_version: String,
    pub requested: Level,
    pub level: Level,
    pub objects: Vec<Value>,
    pub workloads: Vec<WorkloadPlan>,
}

/// What kix decided for one workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadPlan {
    pub kind: WorkloadKind,
    pub name: String,
    pub requested: Level,
    pub level: Level,
    pub replicas: u32,
    /// The topology keys of the derived constraints (empty when none were derived).
    pub spread_keys: Vec<String>,
    /// The key of the one `DoNotSchedule` constraint, if any.
    pub hard_key: Option<String>,
    pub derived_pdb: bool,
    /// R11: the workload brings its own topologySpreadConstraints.
    pub explicit_placement: bool,
}

/// Derives every instance of every resolved cluster.
pub fn derive(model: &Model, diagnostics: &mut Diagnostics) -> Vec<ClusterPlan> {
    model
        .clusters
        .iter()
        .map(|cluster| ClusterPlan {
            name: cluster.name.clone(),
            instances: cluster
                .instances
                .iter()
                .map(|instance| derive_instance(cluster, instance, diagnostics))
                .collect(),
            nodes: cluster.inventory.clone(),
            domains: cluster.domains.clone(),
            file: cluster.source.path().to_path_buf(),
        })
        .collect()
}

/// One instance: every document copied and patched, each workload's budget right after it.
fn derive_instance(cluster: &Cluster, instance: &Instance, diagnostics: &mut Diagnostics) -> InstancePlan {
    let package = &instance.package;
    let mut objects = Vec::with_capacity(package.documents.len() + instance.workloads.len());
    let mut workloads = Vec::with_capacity(instance.workloads.len());
    // Where each object came from, index for index with `objects`.
    let mut origins: Vec<Origin> = Vec::with_capacity(objects.capacity());

    for (index, document) in package.documents.iter().enumerate() {
        let mut value = document.value.clone();
        if scope::is_cluster_scoped(document, &package.cluster_scoped_kinds) {
            patch::clear_namespace(&mut value);
        } else {
            report_foreign_namespace(document, instance, diagnostics);
            patch::set_namespace(&mut value, &instance.namespace);
        }
        patch::set_labels(&mut value, &instance.name);
        objects.push(value);
        origins.push(Origin { document: index, derived_for: None });

        let Some(resolved) = instance.workloads.iter().find(|w| package.workloads[w.workload].document == index) else {
            continue;
        };
        let workload = &package.workloads[resolved.workload];
        let plan = placement::plan_workload(cluster, instance, workload, resolved, diagnostics);
        patch::patch_workload(objects.last_mut().expect("pushed above"), &workload.view, &plan);
        if plan.derived_pdb {
            objects.push(budget::derived_pdb(
                &workload.view,
                &instance.namespace,
                &instance.name,
                workload.eviction_policy,
            ));
            origins.push(Origin {
                document: index,
                derived_for: Some(format!("{} {}", workload.kind().as_str(), workload.name())),
            });
        }
        workloads.push(plan);
    }
    objects::report_duplicate_objects(&objects, &origins, package, &instance.namespace, &instance.subject, diagnostics);
    objects::report_invalid_objects(&objects, &origins, package, &instance.subject, diagnostics);

    InstancePlan {
        name: instance.name.clone(),
        namespace: instance.namespace.clone(),
        package: package.name.clone(),
        package_version: package.version.to_string(),
        requested: instance.requested.value,
        level: instance.level.value,
        objects,
        workloads,
    }
}

/// A namespaced object that names another namespace than its instance's (an empty one is unset, as kubectl
/// treats it).
fn report_foreign_namespace(
    document: &crate::load::documents::Document,
    instance: &Instance,
    diagnostics: &mut Diagnostics,
) {
    let theirs = document.value.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str);
    if let Some(theirs) = theirs.filter(|ns| !ns.is_empty() && *ns != instance.namespace) {
        diagnostics.push(
            Diagnostic::new(
                Code::ForeignNamespace,
                format!(
                    "{} {} names namespace `{theirs}`, but instance `{}` runs in `{}`",
                    document.kind(),
                    document.name(),
                    instance.name,
                    instance.namespace
                ),
            )
            .at(document.locate(&["metadata", "namespace"]))
            .about(&instance.subject),
        );
    }
}
