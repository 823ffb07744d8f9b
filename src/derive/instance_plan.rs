//! [`InstancePlan`]: what derive hands on for one instance, its objects included.
//!
//! An instance of a shape derived before (see [`super::shape`]) holds that shape's objects as they
//! were derived for the shape's first instance: copying them costs a reference count per object,
//! where stamping this instance's namespace and name into a copy of each costs allocations (a
//! fleet's build did that for every instance, issue 11). The objects are stamped the first time
//! they are asked for, [`InstancePlan::objects`]. The checks and writers that run on every
//! instance of a build read what stamping never changes without stamping
//! ([`InstancePlan::unstamped`], [`InstancePlan::namespace_of`], [`InstancePlan::comparable`]),
//! and `emit` copies each object's text rendered once for its shape.

use super::plan::WorkloadPlan;
use super::shape::{RenderedObject, stamp};
use kix_kube::level::Level;
use kix_yaml::Value;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

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
    /// The objects, as derived for this instance or, when `from_shape`, for the first instance of its
    /// shape: read through the methods, which stamp them for this one.
    derived: Vec<Value>,
    /// Index for index with `derived`: whether the object sits in the instance's namespace.
    in_instance_namespace: Vec<bool>,
    /// Whether `derived` holds another instance's namespace and name where stamping writes them.
    from_shape: bool,
    /// `derived` stamped for this instance, made the first time the objects are asked for.
    stamped: OnceLock<Vec<Value>>,
    /// Index for index with the objects: whether kix added `app.kubernetes.io/instance` (the user had not
    /// written it), so that comparing instances' objects can leave out kix's per-instance labels.
    pub instance_label_added: Vec<bool>,
    /// Index for index with the objects (where present): the object's YAML rendered once for its shape,
    /// which `emit` copies instead of rendering the object (see [`super::shape`]).
    pub rendered: Vec<Option<Arc<RenderedObject>>>,
    pub workloads: Vec<WorkloadPlan>,
}

impl InstancePlan {
    /// A plan with no objects yet (objects come with [`InstancePlan::push_object`]).
    pub fn new(
        name: &str,
        namespace: &str,
        package: &str,
        package_version: &str,
        requested: Level,
        level: Level,
    ) -> Self {
        InstancePlan {
            name: name.to_string(),
            namespace: namespace.to_string(),
            package: package.to_string(),
            package_version: package_version.to_string(),
            requested,
            level,
            derived: Vec::new(),
            in_instance_namespace: Vec::new(),
            from_shape: false,
            stamped: OnceLock::new(),
            instance_label_added: Vec::new(),
            rendered: Vec::new(),
            workloads: Vec::new(),
        }
    }

    /// Sets the objects: derived for this instance, or (`from_shape`) for the first instance of its shape.
    pub(super) fn set_objects(
        &mut self,
        derived: Vec<Value>,
        in_instance_namespace: Vec<bool>,
        instance_label_added: Vec<bool>,
        from_shape: bool,
    ) {
        self.derived = derived;
        self.in_instance_namespace = in_instance_namespace;
        self.instance_label_added = instance_label_added;
        self.from_shape = from_shape;
        self.stamped = OnceLock::new();
    }

    /// Appends an object derived for this instance (not sitting in its namespace by derive's placement).
    pub fn push_object(&mut self, object: Value, instance_label_added: bool) {
        self.stamped = OnceLock::new();
        self.derived.push(object);
        self.in_instance_namespace.push(false);
        self.instance_label_added.push(instance_label_added);
        if !self.rendered.is_empty() {
            self.rendered.push(None);
        }
    }

    /// Puts an object derived for this instance first (the Namespace of `createNamespace`).
    pub(super) fn insert_first(&mut self, object: Value, instance_label_added: bool) {
        self.stamped = OnceLock::new();
        self.derived.insert(0, object);
        self.in_instance_namespace.insert(0, false);
        self.instance_label_added.insert(0, instance_label_added);
        if !self.rendered.is_empty() {
            self.rendered.insert(0, None);
        }
    }

    /// The instance's objects, in emit order.
    pub fn objects(&self) -> &[Value] {
        if !self.from_shape {
            return &self.derived;
        }
        self.stamped.get_or_init(|| (0..self.derived.len()).map(|i| self.object(i).into_owned()).collect())
    }

    /// One of the instance's objects (stamped for it when it comes from its shape).
    pub fn object(&self, index: usize) -> Cow<'_, Value> {
        let derived = &self.derived[index];
        if !self.from_shape {
            return Cow::Borrowed(derived);
        }
        if let Some(stamped) = self.stamped.get() {
            return Cow::Borrowed(&stamped[index]);
        }
        let mut object = derived.clone();
        let (namespaced, label_added) = (self.in_instance_namespace[index], self.instance_label_added[index]);
        stamp(&mut object, &self.namespace, &self.name, namespaced, label_added);
        Cow::Owned(object)
    }

    /// The objects without stamping: every field is this instance's but `metadata.namespace` (read it with
    /// [`InstancePlan::namespace_of`]) and the values of kix's instance labels, which may be another
    /// instance's of the same shape.
    pub fn unstamped(&self) -> &[Value] {
        &self.derived
    }

    /// The `metadata.namespace` of an object for this instance (`None` when it has none: cluster-scoped).
    pub fn namespace_of(&self, index: usize) -> Option<&str> {
        if self.in_instance_namespace[index] {
            return Some(&self.namespace);
        }
        self.derived[index].get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str)
    }

    /// An object as instances are compared ([`super::patch::comparable`]: without kix's per-instance labels).
    /// Those labels are all stamping writes outside the instance's namespace, so such an object is
    /// compared without stamping.
    pub fn comparable(&self, index: usize) -> Value {
        let label_added = self.instance_label_added[index];
        match self.in_instance_namespace[index] {
            true => super::patch::comparable(&self.object(index), label_added),
            false => super::patch::comparable(&self.derived[index], label_added),
        }
    }

    /// Keeps the objects at the positions for which `keep` is true, in order.
    pub(super) fn retain_objects(&mut self, keep: impl Fn(usize) -> bool) {
        fn retain<T>(items: &mut Vec<T>, keep: &impl Fn(usize) -> bool) {
            let mut index = 0..;
            items.retain(|_| keep(index.next().unwrap_or_default()));
        }
        retain(&mut self.derived, &keep);
        retain(&mut self.in_instance_namespace, &keep);
        retain(&mut self.instance_label_added, &keep);
        retain(&mut self.rendered, &keep);
        self.stamped = OnceLock::new();
    }

    /// Drops the objects once they were emitted, keeping what the build summary shows.
    pub(super) fn drop_objects(&mut self) {
        self.set_objects(Vec::new(), Vec::new(), Vec::new(), false);
        self.rendered = Vec::new();
    }
}
