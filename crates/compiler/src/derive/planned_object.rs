//! [`PlannedObject`]: one object of an instance's output with what derive knows of it: where it came
//! from, where it holds the instance's namespace and name, what the checks read of it that stamping never
//! changes ([`ObjectFacts`]), and its text rendered once for its shape. One record per object, so what is
//! known of an object cannot drift from the object (an instance's plan and a shape's template are lists
//! of them).

use super::patch::{InstanceFields, write_instance_fields};
use super::rendered::RenderedObject;
use kix_kube::selector::Selector;
use kix_yaml::Value;
use std::sync::Arc;

/// One object of an instance's output.
#[derive(Clone, Debug)]
pub struct PlannedObject {
    /// The object as derived for the instance or, in a shape's template, for the first instance of the
    /// shape: another instance's namespace and name may stand in its [`PlannedObject::fields`].
    pub value: Value,
    /// Where the object holds the instance's namespace and name (what stamping writes).
    pub fields: InstanceFields,
    pub origin: Origin,
    /// The object's YAML rendered once for its shape, which `emit` copies instead of rendering the object
    /// (`None`: not pre-rendered, `emit` renders the value).
    pub rendered: Option<Arc<RenderedObject>>,
    /// What the checks read of the object that stamping never changes, read once from `value` (a shape's
    /// objects share it with every instance of the shape).
    pub facts: Arc<ObjectFacts>,
}

impl PlannedObject {
    /// An object derived for the instance, not pre-rendered.
    pub fn new(value: Value, fields: InstanceFields, origin: Origin) -> PlannedObject {
        let facts = Arc::new(ObjectFacts::of(&value));
        PlannedObject { value, fields, origin, rendered: None, facts }
    }

    /// The object for an instance of its shape: a copy with the instance's namespace and name written into
    /// its per-instance fields (the copy shares all but `metadata` with the value).
    pub fn stamped(&self, namespace: &str, instance: &str) -> Value {
        let mut object = self.value.clone();
        write_instance_fields(&mut object, namespace, instance, &self.fields);
        object
    }
}

/// What the checks of every instance read of an object, looked up once per object instead of in every
/// instance's copy (a fleet's rebuild spent a tenth of its time finding `kind` and `metadata.name` in
/// mappings, issue 20). Stamping writes `metadata.namespace`, kix's labels and an object's references
/// to its package's namespace, none of them read here, except the name of a Namespace the package ships
/// under its own namespace's name: [`super::InstancePlan::name_of`] reads that one as stamped.
#[derive(Debug)]
pub struct ObjectFacts {
    /// `apiVersion` as written (empty when absent or not a string, as every reader took it).
    pub api_version: Box<str>,
    pub kind: Box<str>,
    /// `metadata.name` (empty when absent or not a string).
    pub name: Box<str>,
    /// Whether `metadata` has a `namespace` key at all (derive gives one to every namespaced object and
    /// none to cluster-scoped ones).
    pub has_namespace: bool,
    /// For a `policy` PodDisruptionBudget, its selector (`None` inside when absent, null or unreadable:
    /// it selects nothing).
    pub budget: Option<Option<Selector>>,
    /// [`identity_hash`] of its group, kind and name.
    pub identity: u64,
}

/// A hash of an object's group, kind and name, the same in every run (the cross-instance checks look
/// every object of a cluster up by them with its namespace: hashed once per shape instead of per instance).
pub fn identity_hash(group: &str, kind: &str, name: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0).hash_one((group, kind, name))
}

impl ObjectFacts {
    pub fn of(object: &Value) -> ObjectFacts {
        let text = |value: Option<&Value>| Box::<str>::from(value.and_then(Value::as_str).unwrap_or_default());
        let metadata = object.get("metadata");
        let api_version = text(object.get("apiVersion"));
        let kind = text(object.get("kind"));
        let is_budget = &*kind == "PodDisruptionBudget" && kix_kube::kind::api_group(&api_version) == "policy";
        let budget = is_budget.then(|| {
            let selector = object.get("spec").and_then(|s| s.get("selector")).filter(|s| !s.is_null());
            selector.and_then(|s| Selector::from_value(s).ok())
        });
        let name = text(metadata.and_then(|m| m.get("name")));
        ObjectFacts {
            identity: identity_hash(kix_kube::kind::api_group(&api_version), &kind, &name),
            name,
            has_namespace: metadata.and_then(|m| m.get("namespace")).is_some(),
            api_version,
            kind,
            budget,
        }
    }

    /// The API group (`apps` of `apps/v1`, empty for the core group).
    pub fn group(&self) -> &str {
        kix_kube::kind::api_group(&self.api_version)
    }

    /// Whether it is a `v1` Namespace.
    pub fn is_namespace(&self) -> bool {
        &*self.api_version == "v1" && &*self.kind == "Namespace"
    }
}

/// Where a planned object came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The package's document at this index, copied and patched.
    Document(usize),
    /// The budget kix derived (R10) for the package's workload at this index (into the package's workloads).
    Budget(usize),
    /// The budget kix derived for the package's group at this index (into the package's groups).
    GroupBudget(usize),
    /// The instance's own Namespace (`createNamespace`).
    Namespace,
}
