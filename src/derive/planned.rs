//! [`PlannedObject`]: one object of an instance's output with what derive knows of it: where it came
//! from, where it holds the instance's namespace and name, and its text rendered once for its shape. One
//! record per object, so what is known of an object cannot drift from the object (an instance's plan and a
//! shape's template are lists of them).

use super::patch::{InstanceFields, write_instance_fields};
use super::rendered::RenderedObject;
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
}

impl PlannedObject {
    /// An object derived for the instance, not pre-rendered.
    pub fn new(value: Value, fields: InstanceFields, origin: Origin) -> PlannedObject {
        PlannedObject { value, fields, origin, rendered: None }
    }

    /// The object for an instance of its shape: a copy with the instance's namespace and name written into
    /// its per-instance fields (the copy shares all but `metadata` with the value).
    pub fn stamped(&self, namespace: &str, instance: &str) -> Value {
        let mut object = self.value.clone();
        write_instance_fields(&mut object, namespace, instance, &self.fields);
        object
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
