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
//! edits documents, [`budget`] builds derived PDBs (which kinds are
//! cluster-scoped is `kix_kube::scope`), [`namespaces`] places objects and moves
//! references, [`objects`] checks one instance's objects, [`shared`] writes
//! once what several instances emit identically, [`rollout`] checks a
//! workload's own pod anti-affinity against the declared domains (K0450),
//! [`shape`] reuses one instance's objects for the next instance of the same
//! shape ([`rendered`]: each object's text rendered once for it),
//! [`instance_plan`] holds an instance's output (its objects stamped only when
//! asked for), one [`planned_object`] record per object, [`workload_plan`]
//! what placement decided for each workload and why.

pub mod admission_plan;
mod budget;
mod custom_schema;
mod instance_plan;
mod namespaces;
mod objects;
mod patch;
mod placement;
mod planned_object;
mod rendered;
mod rollout;
mod shape;
mod shared;
mod subjects;
#[cfg(test)]
mod tests;
mod workload_plan;

pub use shared::{SharedObject, first_difference};

use crate::load::documents::Document;
use crate::resolve::inventory::InventoryNode;
use crate::resolve::{Cluster, DocumentScope, FailureDomains, Instance};
pub use instance_plan::InstancePlan;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_yaml::Value;
use namespaces::{Placement, Site};
pub use planned_object::{Origin, PlannedObject};
use shape::Template;
pub use shape::{Shapes, VersionsByName};
pub use workload_plan::{BudgetReason, GroupBudgetReason, MinDomainsReason, SpreadReason, Unplaced, WorkloadPlan};

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
    /// With `[admission]`: the policies that enforce the level in the cluster (`_admission.yaml`), made
    /// from this plan by the admission stage once it is derived.
    pub admission: Option<admission_plan::AdmissionPlan>,
}

/// Each of the cluster's instances derived, nothing shared yet (a rebuild records each instance's objects
/// before any goes to `_shared.yaml`, `crate::reuse::footprint`). Clusters are independent: `compile` runs
/// them in parallel, sharing the `shapes` derived so far.
pub fn derive_instances(cluster: &Cluster, shapes: &Shapes, diagnostics: &mut Diagnostics) -> Vec<InstancePlan> {
    cluster.instances.iter().map(|instance| derive_instance(cluster, instance, shapes, diagnostics)).collect()
}

/// Then the cluster-scoped objects several instances emit identically moved to
/// `_shared.yaml`, and for each instance the indices of those it gave up.
pub fn share(instances: &mut [InstancePlan]) -> (Vec<SharedObject>, Vec<Vec<usize>>) {
    shared::share(instances)
}

impl ClusterPlan {
    /// The plan of `cluster` from its derived instances and what they share.
    pub fn of(cluster: &Cluster, instances: Vec<InstancePlan>, shared: Vec<SharedObject>) -> ClusterPlan {
        ClusterPlan {
            name: cluster.name.clone(),
            instances,
            shared,
            nodes: cluster.inventory.clone(),
            domains: cluster.domains.clone(),
            file: cluster.source.path().to_path_buf(),
            admission: None,
        }
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
    let placements: Vec<Option<Placement>> = (package.documents.iter())
        .map(|document| {
            let DocumentScope::Namespaced(written) = &document.scope else { return None };
            let placement = namespaces::placement(written.as_deref(), instance, package);
            if let Placement::Foreign(theirs) = &placement {
                let sole = namespaces::sole_namespace(package) == Some(theirs.as_str());
                report_foreign_namespace(document, theirs, sole, instance, diagnostics);
            }
            Some(placement)
        })
        .collect();
    let workloads: Vec<WorkloadPlan> = instance
        .workloads
        .iter()
        .enumerate()
        .map(|(index, resolved)| {
            let workload = &package.workloads[resolved.workload];
            rollout::check_anti_affinity(cluster, instance, workload, resolved, diagnostics);
            placement::plan_workload(cluster, instance, index, workload, resolved, diagnostics)
        })
        .collect();

    let mut plan = InstancePlan::new(
        &instance.name,
        &instance.namespace,
        &package.name,
        &package.version_text,
        instance.requested.value,
        instance.level.value,
    );
    let add_instance_label = cluster.instance_label == crate::load::cluster::InstanceLabel::Add;
    let key = shapes.key(instance, &placements, &workloads, add_instance_label);
    // The shape's objects as derived for its first instance: stamped for this one when asked for.
    match shapes.get(&key) {
        Some(template) => plan.set_objects(template.objects.clone(), true),
        None => {
            let mut found = Diagnostics::default();
            let objects = derive_objects(instance, &placements, &workloads, add_instance_label, &mut found);
            // A shape whose objects drew findings is derived again for each instance, which reports its own.
            let foreign = placements.iter().flatten().any(|p| matches!(p, Placement::Foreign(_)));
            let reusable = found.is_empty() && !foreign;
            diagnostics.extend(found);
            if reusable {
                let template = Template::new(objects);
                plan.set_objects(template.objects.clone(), true);
                shapes.insert(key, template);
            } else {
                plan.set_objects(std::sync::Arc::new(objects), false);
            }
        }
    }
    // Valid by construction (a DNS-1123 name, kix's labels), and only when not shipped: after the checks.
    // (The objects as the checks read them say whether it ships the Namespace, renamed or not.)
    if instance.create_namespace && !plan.ships_namespace(&instance.namespace) {
        let mut namespace = namespaces::namespace_object(&instance.namespace);
        let fields = patch::set_instance_fields(
            &mut namespace,
            &instance.namespace,
            &instance.name,
            false,
            add_instance_label,
            vec![],
        );
        let mut planned = PlannedObject::new(namespace, fields, Origin::Namespace);
        planned.rendered = rendered_namespace(add_instance_label);
        plan.insert_first(planned);
    }
    plan.workloads = workloads;
    plan.across = instance.across.as_ref().map(|a| a.name.clone());
    if instance.level.value >= kix_kube::level::Level::Pod {
        plan.unplaced = package
            .unmanaged_custom()
            .map(|custom| workload_plan::Unplaced { kind: custom.kind.clone(), name: custom.name.clone() })
            .collect();
    }
    plan
}

/// The Namespace `createNamespace` adds, rendered once per run for each `instanceLabel` (it is every
/// instance's but for its name, the namespace, and the instance's name in its labels), so an instance that
/// creates its namespace has a file `emit` writes by copying text and knows by its key (`emit::instance_key`:
/// a fleet's rebuild renders no instance file whose key is recorded).
fn rendered_namespace(add_instance_label: bool) -> Option<std::sync::Arc<rendered::RenderedObject>> {
    use rendered::{INSTANCE_STAND_IN, NAMESPACE_STAND_IN, RenderedObject};
    static RENDERED: std::sync::OnceLock<[Option<std::sync::Arc<RenderedObject>>; 2]> = std::sync::OnceLock::new();
    let rendered = RENDERED.get_or_init(|| {
        [false, true].map(|add| {
            let mut object = namespaces::namespace_object(NAMESPACE_STAND_IN);
            let fields =
                patch::set_instance_fields(&mut object, NAMESPACE_STAND_IN, INSTANCE_STAND_IN, false, add, vec![]);
            // The name, kix's instance label, and `app.kubernetes.io/instance` where kix adds it.
            let sites = 2 + usize::from(fields.instance_label_added);
            RenderedObject::cut(&object, sites).map(std::sync::Arc::new)
        })
    });
    rendered[usize::from(add_instance_label)].clone()
}

/// Every document of the package copied and patched for the instance, each workload's budget right after
/// it, then checked (duplicates, API validation).
fn derive_objects(
    instance: &Instance,
    placements: &[Option<Placement>],
    workloads: &[WorkloadPlan],
    add_instance_label: bool,
    diagnostics: &mut Diagnostics,
) -> Vec<PlannedObject> {
    let package = &instance.package;
    let mut objects = Vec::with_capacity(package.documents.len() + instance.workloads.len());
    // The package's CRDs, read the first time a custom resource is patched.
    let mut custom_kinds: Option<kix_kube::strict::CustomKinds<'_>> = None;
    // Autoscalers to patch, by document: their view and the range they are emitted with.
    let autoscalers: Vec<_> = instance
        .workloads
        .iter()
        .filter_map(|w| Some((package.workloads[w.workload].autoscaler.as_ref()?, w.autoscaler?)))
        .collect();

    for (index, (document, placement)) in package.documents.iter().zip(placements).enumerate() {
        let (mut value, references) = place_document(document, placement.as_ref(), placements, instance);
        let in_instance_namespace = placement.as_ref() == Some(&Placement::Instance);
        let fields = patch::set_instance_fields(
            &mut value,
            &instance.namespace,
            &instance.name,
            in_instance_namespace,
            add_instance_label,
            references,
        );
        if let Some((autoscaler, range)) = autoscalers.iter().find(|(a, _)| a.document == index) {
            patch::set_autoscaler_range(&mut value, &autoscaler.view, range.min, range.max);
        }
        // The Deployment whose template a Rollout runs (workloadRef) holds that Rollout's spread.
        let runs_template =
            |w: &&crate::resolve::InstanceWorkload| package.workloads[w.workload].template_from == Some(index);
        if let Some(at) = instance.workloads.iter().position(|w| runs_template(&w)) {
            patch::write_spread(&mut value, &package.workloads[instance.workloads[at].workload].view, &workloads[at]);
        }
        let Some(at) = instance.workloads.iter().position(|w| package.workloads[w.workload].document == index) else {
            objects.push(PlannedObject::new(value, fields, Origin::Document(index)));
            continue;
        };
        let resolved = &instance.workloads[at];
        let workload = &package.workloads[resolved.workload];
        let plan = &workloads[at];
        // A workload scaled to zero runs no pods: it is emitted as written.
        if !plan.scaled_to_zero {
            patch::patch_workload(&mut value, &workload.view, plan);
            if let Some(profile) = workload.view.kind.profile() {
                let custom = custom_kinds.get_or_insert_with(|| {
                    kix_kube::strict::CustomKinds::from_objects(package.documents.iter().map(|d| &d.value))
                });
                for refusal in custom_schema::complete_and_check(&mut value, &document.value, profile, custom) {
                    report_refused_patch(document, profile, &refusal, instance, diagnostics);
                }
            }
        }
        objects.push(PlannedObject::new(value, fields, Origin::Document(index)));
        // A budget kix derives is in the instance's namespace, with kix's labels.
        let budget = |mut pdb: Value, origin: Origin| {
            let fields = patch::set_instance_fields(
                &mut pdb,
                &instance.namespace,
                &instance.name,
                true,
                add_instance_label,
                vec![],
            );
            PlannedObject::new(pdb, fields, origin)
        };
        if plan.derived_pdb() {
            let pdb = budget::derived_pdb(&workload.view, workload.eviction_policy);
            objects.push(budget(pdb, Origin::Budget(resolved.workload)));
        }
        if let Some(group_budget) = &plan.group_budget {
            objects.push(budget(budget::group_pdb(group_budget), Origin::GroupBudget(group_budget.group)));
        }
    }
    objects::report_duplicate_objects(&objects, package, &instance.subject, diagnostics);
    objects::report_invalid_objects(&objects, package, &instance.subject, diagnostics);
    objects
}

/// One user's document copied for the instance: cluster-scoped (`None`) without a namespace, with the places
/// it names the package's own namespace in references that move to the instance's, and its ServiceAccount
/// subjects without a namespace given the one their ServiceAccount lands in ([`subjects`]; `placements` are
/// every document's). (The instance's namespace is written at those places with its `metadata.namespace`
/// and kix's labels, [`patch::set_instance_fields`].)
fn place_document(
    document: &Document,
    placement: Option<&Placement>,
    placements: &[Option<Placement>],
    instance: &Instance,
) -> (Value, Vec<Site>) {
    let package = &instance.package;
    let mut value = document.value.clone();
    if placement.is_none() {
        patch::clear_namespace(&mut value);
    }
    let mut references = match &package.namespaces.own {
        Some(own) => namespaces::reference_sites(&value, document.group(), document.kind(), &own.value),
        None => Vec::new(),
    };
    references.extend(subjects::fill_subject_namespaces(
        &mut value,
        document.group(),
        document.kind(),
        placement,
        package,
        placements,
    ));
    (value, references)
}

/// K0414 for a custom resource that kix's writes at its profile's fields leave invalid against the package's
/// CRD (see [`custom_schema`]), located at the field (or its nearest written ancestor).
fn report_refused_patch(
    document: &Document,
    profile: &kix_kube::profile::Profile,
    refusal: &custom_schema::Refusal,
    instance: &Instance,
    diagnostics: &mut Diagnostics,
) {
    let fields: Vec<String> =
        [&profile.replicas, &profile.spread].into_iter().flatten().map(ToString::to_string).collect();
    diagnostics.push(
        Diagnostic::new(
            Code::InvalidObject,
            format!(
                "{} {} as kix patches it for the profile of {} (writing {}) would be refused by the API server: {}",
                document.kind(),
                document.name(),
                profile.key(),
                fields.join(" and "),
                refusal.problem
            ),
        )
        .at(document.locate_field(&refusal.path))
        .about(&instance.subject)
        .help(format!(
            "write `{}` in the resource yourself (kix keeps what is there), or point the profile's fields where the \
             CustomResourceDefinition needs nothing more",
            refusal.path
        )),
    );
}

/// K0409: a namespaced object in a namespace that is neither the instance's, the package's own
/// (`meta.namespace`) nor kept (`meta.keepNamespaces`). The help offers what fits: a namespace every
/// cluster has (`default`, `kube-system`) is never offered as the package's own, only to keep; when every
/// namespaced object of the package names `theirs` (`sole`), running the instance there is offered first.
fn report_foreign_namespace(
    document: &Document,
    theirs: &str,
    sole: bool,
    instance: &Instance,
    diagnostics: &mut Diagnostics,
) {
    let system = kix_kube::names::is_system_namespace(theirs);
    let help = match (sole, system) {
        (true, false) => format!(
            "every object of the package names `{theirs}`: run the instance there (namespace = \"{theirs}\" in its \
             [[instances]] entry), or set meta.namespace = \"{theirs}\" in kix.toml to move its objects and references \
             to the instance's namespace"
        ),
        (_, true) => format!(
            "`{theirs}` is a namespace every cluster has, never a package's own: if the object must stay there (as \
             RBAC in kube-system does), list it in meta.keepNamespaces; otherwise remove its namespace so it moves \
             to the instance's"
        ),
        (false, false) => format!(
            "if the package is written for `{theirs}`, set meta.namespace = \"{theirs}\" in kix.toml (its objects and \
             references move to the instance's namespace); if the object must stay there, list it in \
             meta.keepNamespaces"
        ),
    };
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
        .help(help),
    );
}
