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
//! Stamping writes exactly what `derive` wrote per instance: `metadata.namespace`
//! of the objects placed in the instance's namespace (kept in its place), and the
//! values of `kix.dev/instance` and, where kix added it, `app.kubernetes.io/instance`.
//!
//! Each object of a shape is also rendered once ([`RenderedObject`]): its YAML
//! with the places where the namespace and the instance's name go, so `emit`
//! writes an instance's file by copying text. It is rendered with stand-in
//! values and cut where they appear; an object in which they appear other than
//! exactly where stamping writes (a user's text containing one) is not
//! pre-rendered, and `emit` renders it from its value as before. Scalars render
//! the same wherever they stand, so the text equals rendering the stamped
//! object.

use super::namespaces::Placement;
use super::patch::{INSTANCE_LABEL, KIX_INSTANCE_LABEL, set_namespace};
use super::plan::WorkloadPlan;
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
    /// Index for index with `objects`: the object rendered once (see the module comment).
    pub rendered: Vec<Option<Arc<RenderedObject>>>,
}

impl Template {
    pub fn new(objects: Vec<Value>, instance_label_added: Vec<bool>, in_instance_namespace: Vec<bool>) -> Template {
        let mut template = Template { objects, instance_label_added, in_instance_namespace, rendered: Vec::new() };
        let stand_ins = template.stamp(NAMESPACE_STAND_IN, INSTANCE_STAND_IN);
        template.rendered = (stand_ins.iter().enumerate())
            .map(|(i, object)| {
                let sites = usize::from(template.in_instance_namespace[i])
                    + usize::from(template.instance_label_added[i])
                    + usize::from(has_kix_label(object));
                RenderedObject::cut(object, sites).map(Arc::new)
            })
            .collect();
        template
    }

    /// The template's objects for another instance of the same shape.
    pub fn stamp(&self, namespace: &str, instance: &str) -> Vec<Value> {
        let mut objects = self.objects.clone();
        for ((object, &namespaced), &instance_label) in
            objects.iter_mut().zip(&self.in_instance_namespace).zip(&self.instance_label_added)
        {
            stamp(object, namespace, instance, namespaced, instance_label);
        }
        objects
    }
}

/// Writes an instance's namespace and name where stamping writes them (see the module comment): the
/// namespace of an object in the instance's namespace, the value of `kix.dev/instance` and, where kix added
/// it, of `app.kubernetes.io/instance`. Stamping an object derived for the same instance changes nothing.
pub fn stamp(object: &mut Value, namespace: &str, instance: &str, in_instance_namespace: bool, label_added: bool) {
    if in_instance_namespace {
        set_namespace(object, namespace);
    }
    let labels = object.get_mut("metadata").and_then(|m| m.get_mut("labels")).and_then(Value::as_mapping_mut);
    if let Some(labels) = labels {
        if labels.contains_key(KIX_INSTANCE_LABEL) {
            labels.insert(KIX_INSTANCE_LABEL.into(), instance.into());
        }
        if label_added {
            labels.insert(INSTANCE_LABEL.into(), instance.into());
        }
    }
}

fn has_kix_label(object: &Value) -> bool {
    let labels = object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_mapping);
    labels.is_some_and(|labels| labels.contains_key(KIX_INSTANCE_LABEL))
}

/// Stand-ins for the namespace and the instance's name while a shape's objects are rendered: plain
/// scalars (no quoting), and text no manifest holds by chance (an object that does is not pre-rendered).
const NAMESPACE_STAND_IN: &str = "kix-stamp-namespace-5b0d7c41";
const INSTANCE_STAND_IN: &str = "kix-stamp-instance-5b0d7c41";

/// One object's YAML, rendered once for its shape, with the places the namespace and the instance's name go.
#[derive(Debug, PartialEq, Eq)]
pub struct RenderedObject {
    pieces: Vec<Piece>,
}

#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Namespace,
    Instance,
}

impl RenderedObject {
    /// The object (stamped with the stand-ins) rendered and cut at them; `None` unless they appear exactly
    /// `sites` times, once per place stamping writes.
    fn cut(object: &Value, sites: usize) -> Option<RenderedObject> {
        let text = kix_yaml::emit::to_string(object);
        let mut pieces = Vec::new();
        let mut rest = text.as_str();
        let mut found = 0;
        loop {
            let next = [(NAMESPACE_STAND_IN, Piece::Namespace), (INSTANCE_STAND_IN, Piece::Instance)]
                .into_iter()
                .filter_map(|(stand_in, piece)| rest.find(stand_in).map(|at| (at, stand_in.len(), piece)))
                .min_by_key(|(at, _, _)| *at);
            let Some((at, length, piece)) = next else { break };
            pieces.push(Piece::Text(rest[..at].to_string()));
            pieces.push(piece);
            rest = &rest[at + length..];
            found += 1;
        }
        pieces.push(Piece::Text(rest.to_string()));
        (found == sites).then_some(RenderedObject { pieces })
    }

    /// The object's YAML for an instance, appended to `out`: what rendering its stamped object writes.
    pub fn write(&self, out: &mut String, namespace: &str, instance: &str) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Namespace => kix_yaml::emit::write_scalar_string(out, namespace),
                Piece::Instance => kix_yaml::emit::write_scalar_string(out, instance),
            }
        }
    }
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
