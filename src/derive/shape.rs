//! Derive once per shape: most instances of a package in a fleet derive the
//! same objects but for their namespace and their instance labels, so the
//! copy, patching and validation of a package's documents are done once per
//! shape (for the whole compile: [`Shapes`] is shared by the clusters) and the
//! objects of every other instance of that shape are a copy stamped with its
//! own namespace and name (issue 11). The copy shares all but `metadata` with
//! the template (mappings are copy-on-write, [`kix_yaml::Mapping`]).
//!
//! A shape is what the objects depend on besides those two values: the
//! package version, where each document goes ([`Placement`]), every
//! workload's plan (replicas, spread, budget, autoscaler range, the
//! annotations' levels), and, for a package written for a namespace of its own
//! (`meta.namespace`), the instance's namespace itself, since references to it
//! move into the instance's namespace at places only the package's documents
//! know. Checks run once per shape too: a shape whose objects drew any
//! finding is not reused, so every instance of it is derived and reported on
//! its own, as before.
//!
//! Stamping writes exactly what `derive` wrote per instance, by the same function
//! ([`super::patch::write_instance_fields`]): `metadata.namespace` of the objects
//! placed in the instance's namespace (kept in its place), and the values of
//! `kix.dev/instance` and, where kix added it, `app.kubernetes.io/instance`.
//!
//! Each object of a shape is also rendered once ([`RenderedObject`]): its YAML
//! with the places where the namespace and the instance's name go, so `emit`
//! writes an instance's file by copying text.

use super::namespaces::Placement;
use super::patch::KIX_INSTANCE_LABEL;
use super::plan::WorkloadPlan;
use super::planned::PlannedObject;
use super::rendered::{INSTANCE_STAND_IN, NAMESPACE_STAND_IN, RenderedObject};
use crate::resolve::Instance;
use kix_yaml::Value;
use std::sync::Arc;

/// What an instance's derived objects depend on, besides its namespace and name.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ShapeKey {
    /// The package version, by identity: the address of the `Arc<Package>` instances of one version share
    /// (the model holds it while the cluster derives).
    package: usize,
    /// Per document: `None` when cluster-scoped, else where it goes.
    placements: Vec<Option<Placement>>,
    workloads: Vec<WorkloadPlan>,
    /// The instance's namespace, for a package with a namespace of its own (see the module comment).
    namespace: Option<String>,
    /// The cluster's `instanceLabel` is `add`: shapes are shared by the clusters of a compile, and on a
    /// cluster that leaves `app.kubernetes.io/instance` alone the objects differ.
    add_instance_label: bool,
}

impl ShapeKey {
    pub fn of(
        instance: &Instance,
        placements: &[Option<Placement>],
        workloads: &[WorkloadPlan],
        add_instance_label: bool,
    ) -> ShapeKey {
        let package = &instance.package;
        ShapeKey {
            package: Arc::as_ptr(package) as usize,
            placements: placements.to_vec(),
            workloads: workloads.to_vec(),
            namespace: package.namespaces.own.as_ref().map(|_| instance.namespace.clone()),
            add_instance_label,
        }
    }
}

/// One shape's derived objects, as derived for the first instance of that shape, each rendered once where it
/// can be (see [`RenderedObject`]).
pub struct Template {
    pub objects: Vec<PlannedObject>,
}

impl Template {
    pub fn new(mut objects: Vec<PlannedObject>) -> Template {
        for planned in &mut objects {
            let object = planned.stamped(NAMESPACE_STAND_IN, INSTANCE_STAND_IN);
            let sites = usize::from(planned.fields.in_instance_namespace)
                + usize::from(planned.fields.instance_label_added)
                + usize::from(has_kix_label(&object));
            planned.rendered = RenderedObject::cut(&object, sites).map(Arc::new);
        }
        Template { objects }
    }
}

fn has_kix_label(object: &Value) -> bool {
    let labels = object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_mapping);
    labels.is_some_and(|labels| labels.contains_key(KIX_INSTANCE_LABEL))
}

/// The shapes derived so far in one compile, shared by the clusters deriving on every core: clusters of
/// one fleet run the same packages at the same levels, so a shape is mostly derived and rendered once for
/// the fleet. Which instance derived a shape first does not matter: stamping writes every per-instance
/// value (`stamped_instances_equal_instances_derived_alone`), so the output is the same in any order.
#[derive(Default)]
pub struct Shapes {
    entries: std::sync::Mutex<std::collections::HashMap<ShapeKey, Arc<Template>>>,
}

impl Shapes {
    pub fn get(&self, key: &ShapeKey) -> Option<Arc<Template>> {
        self.lock().get(key).cloned()
    }

    /// Keeps the first template of a shape (another core may have derived the same shape meanwhile).
    pub fn insert(&self, key: ShapeKey, template: Template) {
        self.lock().entry(key).or_insert_with(|| Arc::new(template));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<ShapeKey, Arc<Template>>> {
        // A panic while holding the lock can only leave a complete entry or none: the map is sound.
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.lock().len()
    }
}
