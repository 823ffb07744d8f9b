//! Derive once per shape: most instances of a package in a cluster derive the
//! same objects but for their namespace and their instance labels, so the
//! copy, patching and validation of a package's documents are done once per
//! shape and the objects of every other instance of that shape are a copy
//! stamped with its own namespace and name (issue 11).
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
//! Stamping writes exactly what `derive` wrote per instance: `metadata.namespace`
//! of the objects placed in the instance's namespace (kept in its place), and the
//! values of `kix.dev/instance` and, where kix added it, `app.kubernetes.io/instance`.

use super::WorkloadPlan;
use super::namespaces::Placement;
use super::patch::{INSTANCE_LABEL, KIX_INSTANCE_LABEL, set_namespace};
use crate::resolve::Instance;
use crate::yaml::Value;
use std::sync::Arc;

/// What an instance's derived objects depend on, besides its namespace and name.
#[derive(Debug, PartialEq, Eq)]
pub struct ShapeKey {
    /// The package version, by identity: the address of the `Arc<Package>` instances of one version share
    /// (the model holds it while the cluster derives).
    package: usize,
    /// Per document: `None` when cluster-scoped, else where it goes.
    placements: Vec<Option<Placement>>,
    workloads: Vec<WorkloadPlan>,
    /// The instance's namespace, for a package with a namespace of its own (see the module comment).
    namespace: Option<String>,
}

impl ShapeKey {
    pub fn of(instance: &Instance, placements: &[Option<Placement>], workloads: &[WorkloadPlan]) -> ShapeKey {
        let package = &instance.package;
        ShapeKey {
            package: Arc::as_ptr(package) as usize,
            placements: placements.to_vec(),
            workloads: workloads.to_vec(),
            namespace: package.namespaces.own.as_ref().map(|_| instance.namespace.clone()),
        }
    }
}

/// One shape's derived objects, as derived for the first instance of that shape.
pub struct Template {
    pub objects: Vec<Value>,
    pub instance_label_added: Vec<bool>,
    /// Index for index with `objects`: whether the object sits in the instance's namespace.
    pub in_instance_namespace: Vec<bool>,
}

impl Template {
    /// The template's objects for another instance of the same shape.
    pub fn stamp(&self, namespace: &str, instance: &str) -> Vec<Value> {
        let mut objects = self.objects.clone();
        for ((object, &namespaced), &instance_label) in
            objects.iter_mut().zip(&self.in_instance_namespace).zip(&self.instance_label_added)
        {
            if namespaced {
                set_namespace(object, namespace);
            }
            let labels = object.get_mut("metadata").and_then(|m| m.get_mut("labels")).and_then(Value::as_mapping_mut);
            if let Some(labels) = labels {
                if labels.contains_key(KIX_INSTANCE_LABEL) {
                    labels.insert(KIX_INSTANCE_LABEL.into(), instance.into());
                }
                if instance_label {
                    labels.insert(INSTANCE_LABEL.into(), instance.into());
                }
            }
        }
        objects
    }
}

/// The shapes of one cluster, in the order they were first derived.
#[derive(Default)]
pub struct Shapes {
    entries: Vec<(ShapeKey, Template)>,
}

impl Shapes {
    pub fn get(&self, key: &ShapeKey) -> Option<&Template> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, template)| template)
    }

    pub fn insert(&mut self, key: ShapeKey, template: Template) {
        self.entries.push((key, template));
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}
