//! Derive: turn each resolved instance into its output objects: the package's
//! own documents patched for the instance, spread constraints and
//! PodDisruptionBudgets for its workloads (R9-R11), and every object checked
//! as the API server would check it.
//!
//! Derive reads only the resolved model (levels and replica counts are
//! settled there). The patches touch exactly the fields kix owns
//! (`metadata.namespace` and the references to the package's own namespace,
//! kix's labels where absent, two annotations, `spec.replicas`, the pod
//! template's `topologySpreadConstraints`, and an autoscaler's minimum and
//! maximum where kix raised them; under an autoscaler `spec.replicas` is left
//! as written) and leave every other field, and the order of fields, as the
//! user wrote them.
//!
//! Files: [`placement`] decides spread and budgets per workload, [`patch`]
//! edits documents, [`budget`] builds derived PDBs, [`scope`] knows which
//! kinds are cluster-scoped, [`namespaces`] places objects and moves
//! references, [`objects`] checks one instance's objects, [`shared`] writes
//! once what several instances emit identically, [`rollout`] checks a
//! workload's own pod anti-affinity against the declared domains (K0450),
//! [`shape`] reuses one instance's objects for the next instance of the same
//! shape, [`instance_plan`] holds an instance's output (its objects stamped only
//! when asked for).

mod budget;
mod instance_plan;
mod namespaces;
mod objects;
mod patch;
mod placement;
mod plan;
mod rollout;
mod scope;
mod shape;
mod shared;
#[cfg(test)]
mod tests;

pub use shared::{SHARED_FILE, SharedObject, first_difference};

use crate::load::documents::Document;
use crate::resolve::inventory::InventoryNode;
use crate::resolve::{Cluster, FailureDomains, Instance};
pub use instance_plan::InstancePlan;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_yaml::Value;
use namespaces::Placement;
use objects::Origin;
pub use plan::WorkloadPlan;
pub use shape::Shapes;
use shape::{ShapeKey, Template};

/// The compiled output of one cluster.
#[derive(Clone, Debug)]
pub struct ClusterPlan {
    pub name: String,
    pub instances: Vec<InstancePlan>,
    /// Cluster-scoped objects that several instances emit identically, written once (`_shared.yaml`), in the
    /// order they first appear (instances in name order).
    pub shared: Vec<SharedObject>,
    /// The nodes of the cluster's `[[nodePools]]` (empty without an inventory).
    pub nodes: Vec<InventoryNode>,
    pub domains: FailureDomains,
    /// The cluster file, as diagnostics name it (for findings about its nodes).
    pub file: std::path::PathBuf,
}

impl ClusterPlan {
    /// Drops the instances' objects once they were emitted, keeping what the build summary shows.
    pub fn drop_objects(&mut self) {
        for instance in &mut self.instances {
            instance.drop_objects();
        }
    }
}

/// Derives one cluster's instances, then writes once the cluster-scoped objects that several of them emit
/// identically. Clusters are independent: `compile` runs them in parallel, sharing the `shapes` derived so far.
pub fn derive_cluster(cluster: &Cluster, shapes: &Shapes, diagnostics: &mut Diagnostics) -> ClusterPlan {
    let mut instances: Vec<InstancePlan> =
        cluster.instances.iter().map(|instance| derive_instance(cluster, instance, shapes, diagnostics)).collect();
    let shared = shared::share(&mut instances);
    ClusterPlan {
        name: cluster.name.clone(),
        instances,
        shared,
        nodes: cluster.inventory.clone(),
        domains: cluster.domains.clone(),
        file: cluster.source.path().to_path_buf(),
    }
}

/// One instance: where each document goes and each workload's plan (with their findings), then its objects:
/// those of an earlier instance of the same shape, stamped for this one, or every document copied and patched,
/// each workload's budget right after it; then the instance's Namespace first when it asks for one the
/// package does not ship.
fn derive_instance(
    cluster: &Cluster,
    instance: &Instance,
    shapes: &Shapes,
    diagnostics: &mut Diagnostics,
) -> InstancePlan {
    let package = &instance.package;
    let placements: Vec<Option<Placement>> = package
        .documents
        .iter()
        .map(|document| {
            if scope::is_cluster_scoped(document, &package.cluster_scoped_kinds) {
                return None;
            }
            let placement = namespaces::placement(document, instance, package);
            if let Placement::Foreign(theirs) = &placement {
                report_foreign_namespace(document, theirs, instance, diagnostics);
            }
            Some(placement)
        })
        .collect();
    let workloads: Vec<WorkloadPlan> = instance
        .workloads
        .iter()
        .map(|resolved| {
            let workload = &package.workloads[resolved.workload];
            rollout::check_anti_affinity(cluster, instance, workload, resolved, diagnostics);
            placement::plan_workload(cluster, instance, workload, resolved, diagnostics)
        })
        .collect();

    let mut plan = InstancePlan::new(
        &instance.name,
        &instance.namespace,
        &package.name,
        &package.version.to_string(),
        instance.requested.value,
        instance.level.value,
    );
    let key = ShapeKey::of(instance, &placements, &workloads);
    // The shape's objects as derived for its first instance: stamped for this one when asked for.
    let from_template = |plan: &mut InstancePlan, template: &Template| {
        let (objects, in_namespace) = (template.objects.clone(), template.in_instance_namespace.clone());
        plan.set_objects(objects, in_namespace, template.instance_label_added.clone(), true);
        plan.rendered = template.rendered.clone();
    };
    match shapes.get(&key) {
        Some(template) => from_template(&mut plan, &template),
        None => {
            let mut found = Diagnostics::default();
            let (objects, label_added, in_namespace) = derive_objects(instance, &placements, &workloads, &mut found);
            // A shape whose objects drew findings is derived again for each instance, which reports its own.
            let foreign = placements.iter().flatten().any(|p| matches!(p, Placement::Foreign(_)));
            let reusable = found.is_empty() && !foreign;
            diagnostics.extend(found);
            if reusable {
                let template = Template::new(objects, label_added, in_namespace);
                from_template(&mut plan, &template);
                shapes.insert(key, template);
            } else {
                plan.set_objects(objects, in_namespace, label_added, false);
            }
        }
    }
    // Valid by construction (a DNS-1123 name, kix's labels), and only when not shipped: after the checks.
    // (The package's objects say whether it ships the Namespace, so stamping is not needed to look.)
    if instance.create_namespace && !namespaces::ships_namespace(plan.unstamped(), &instance.namespace) {
        let mut namespace = namespaces::namespace_object(&instance.namespace);
        let label_added = patch::set_labels(&mut namespace, &instance.name);
        plan.insert_first(namespace, label_added);
    }
    plan.workloads = workloads;
    plan
}

/// Every document of the package copied and patched for the instance, each workload's budget right after
/// it, then checked (duplicates, API validation).
fn derive_objects(
    instance: &Instance,
    placements: &[Option<Placement>],
    workloads: &[WorkloadPlan],
    diagnostics: &mut Diagnostics,
) -> (Vec<Value>, Vec<bool>, Vec<bool>) {
    let package = &instance.package;
    let capacity = package.documents.len() + instance.workloads.len();
    let mut objects = Vec::with_capacity(capacity);
    let mut instance_label_added = Vec::with_capacity(capacity);
    let mut in_instance_namespace = Vec::with_capacity(capacity);
    // Where each object came from, index for index with `objects`.
    let mut origins: Vec<Origin> = Vec::with_capacity(capacity);
    // Autoscalers to patch, by document: their view and the range they are emitted with.
    let autoscalers: Vec<_> = instance
        .workloads
        .iter()
        .filter_map(|w| Some((package.workloads[w.workload].autoscaler.as_ref()?, w.autoscaler?)))
        .collect();

    for (index, (document, placement)) in package.documents.iter().zip(placements).enumerate() {
        let mut value = place_document(document, placement.as_ref(), instance);
        instance_label_added.push(patch::set_labels(&mut value, &instance.name));
        in_instance_namespace.push(placement.as_ref() == Some(&Placement::Instance));
        if let Some((autoscaler, range)) = autoscalers.iter().find(|(a, _)| a.document == index) {
            patch::set_autoscaler_range(&mut value, &autoscaler.view, range.min, range.max);
        }
        objects.push(value);
        origins.push(Origin { document: index, derived_for: None });

        let Some(at) = instance.workloads.iter().position(|w| package.workloads[w.workload].document == index) else {
            continue;
        };
        let workload = &package.workloads[instance.workloads[at].workload];
        let plan = &workloads[at];
        patch::patch_workload(objects.last_mut().expect("pushed above"), &workload.view, plan);
        if plan.derived_pdb {
            objects.push(budget::derived_pdb(
                &workload.view,
                &instance.namespace,
                &instance.name,
                workload.eviction_policy,
            ));
            instance_label_added.push(true);
            in_instance_namespace.push(true);
            origins.push(Origin {
                document: index,
                derived_for: Some(format!("{} {}", workload.kind().as_str(), workload.name())),
            });
        }
    }
    objects::report_duplicate_objects(&objects, &origins, package, &instance.subject, diagnostics);
    objects::report_invalid_objects(&objects, &origins, package, &instance.subject, diagnostics);
    (objects, instance_label_added, in_instance_namespace)
}

/// One user's document copied for the instance: cluster-scoped (`None`) without a namespace, namespaced
/// where it belongs, references to the package's own namespace moved to the instance's.
fn place_document(document: &Document, placement: Option<&Placement>, instance: &Instance) -> Value {
    let package = &instance.package;
    let mut value = document.value.clone();
    match placement {
        None => patch::clear_namespace(&mut value),
        Some(placement) => namespaces::place(&mut value, placement, instance),
    }
    if let Some(own) = &package.namespaces.own {
        namespaces::rewrite_references(&mut value, document.group(), document.kind(), &own.value, &instance.namespace);
    }
    value
}

/// K0409: a namespaced object in a namespace that is neither the instance's, the package's own
/// (`meta.namespace`) nor kept (`meta.keepNamespaces`).
fn report_foreign_namespace(document: &Document, theirs: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
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
        .about(&instance.subject)
        .help(format!(
            "if the package is written for `{theirs}`, set meta.namespace = \"{theirs}\" in kix.toml (its objects and \
             references move to the instance's namespace); if the object must stay there (as RBAC in kube-system \
             does), list it in meta.keepNamespaces"
        )),
    );
}
