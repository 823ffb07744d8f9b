//! [`InstancePlan`]: what derive hands on for one instance, its objects included.
//!
//! An instance of a shape derived before (see [`super::shape`]) holds that shape's objects as they
//! were derived for the shape's first instance: copying them costs a reference count per object,
//! where stamping this instance's namespace and name into a copy of each costs allocations (a
//! fleet's build did that for every instance, issue 11). The objects are stamped the first time
//! they are asked for, [`InstancePlan::objects`]. The checks and writers that run on every
//! instance of a build read what stamping never changes without stamping
//! ([`InstancePlan::values`], [`InstancePlan::namespace_of`], [`InstancePlan::comparable`]): only
//! the few objects that name the namespace beyond `metadata.namespace` (references moved with a
//! package's own namespace) are stamped for them, and `emit` copies each object's text rendered once
//! for its shape. Each object is one
//! [`PlannedObject`]: its value with where it came from, where stamping writes, and its text.

#[cfg(any(test, feature = "testing"))]
use super::patch::InstanceFields;
#[cfg(any(test, feature = "testing"))]
use super::planned_object::Origin;
use super::planned_object::{ObjectFacts, PlannedObject};
use super::workload_plan::{Unplaced, WorkloadPlan};
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
    /// shape: read through the methods, which stamp them for this one. Shared with the shape's template
    /// (and so with every instance of the shape) until the plan changes them (copied then).
    planned: Arc<Vec<PlannedObject>>,
    /// Whether `planned` holds another instance's namespace and name where stamping writes them.
    from_shape: bool,
    /// The objects for this instance (stamped when `from_shape`), made the first time they are asked for
    /// together.
    stamped: OnceLock<Vec<Value>>,
    /// Per object, when `from_shape`: stamped when it names the namespace outside `metadata.namespace`
    /// (see [`InstancePlan::values`]), made the first time the checks read them (empty when none does).
    referencing: OnceLock<Vec<Option<Value>>>,
    pub workloads: Vec<WorkloadPlan>,
    /// Custom resources that run pods kix does not place (K0435), at level pod or higher.
    pub unplaced: Vec<Unplaced>,
    /// The availability group across instances it is a member of (`group = "NAME"`): verify simulates
    /// the members together.
    pub across: Option<String>,
}

impl InstancePlan {
    /// A plan with no objects yet.
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
            planned: Arc::default(),
            from_shape: false,
            stamped: OnceLock::new(),
            referencing: OnceLock::new(),
            workloads: Vec::new(),
            unplaced: Vec::new(),
            across: None,
        }
    }

    /// Sets the objects: derived for this instance, or (`from_shape`) for the first instance of its shape.
    pub(super) fn set_objects(&mut self, planned: Arc<Vec<PlannedObject>>, from_shape: bool) {
        self.planned = planned;
        self.from_shape = from_shape;
        self.forget_stamped();
    }

    /// The objects changed: what was stamped from them is made again when asked for.
    fn forget_stamped(&mut self) {
        self.stamped = OnceLock::new();
        self.referencing = OnceLock::new();
    }

    /// Appends a user's object as derived for this instance (tests of the stages that read plans).
    #[cfg(any(test, feature = "testing"))]
    pub fn push_object(&mut self, object: Value, instance_label_added: bool) {
        self.forget_stamped();
        let fields = InstanceFields { in_instance_namespace: false, instance_label_added, references: None };
        Arc::make_mut(&mut self.planned).push(PlannedObject::new(object, fields, Origin::Document(0)));
    }

    /// Puts an object derived for this instance first (the Namespace of `createNamespace`).
    pub(super) fn insert_first(&mut self, planned: PlannedObject) {
        self.forget_stamped();
        Arc::make_mut(&mut self.planned).insert(0, planned);
    }

    /// The instance's objects, in emit order.
    pub fn objects(&self) -> &[Value] {
        self.stamped.get_or_init(|| (0..self.planned.len()).map(|i| self.object(i).into_owned()).collect())
    }

    /// One of the instance's objects (stamped for it when it comes from its shape).
    pub fn object(&self, index: usize) -> Cow<'_, Value> {
        let planned = &self.planned[index];
        if !self.from_shape {
            return Cow::Borrowed(&planned.value);
        }
        if let Some(stamped) = self.stamped.get() {
            return Cow::Borrowed(&stamped[index]);
        }
        Cow::Owned(planned.stamped(&self.namespace, &self.name))
    }

    /// The objects as planned, without stamping: every field of their values is this instance's but
    /// `metadata.namespace` (read it with [`InstancePlan::namespace_of`]), the values of kix's instance
    /// labels and the references to the namespace ([`InstanceFields::references`]), which may be another
    /// instance's of the same shape.
    pub fn planned(&self) -> &[PlannedObject] {
        &self.planned
    }

    /// The objects as the checks read them: every field is this instance's but `metadata.namespace`
    /// (read it with [`InstancePlan::namespace_of`]) and the values of kix's instance labels. Objects
    /// that name the namespace elsewhere (a moved reference, a shipped Namespace's name: a few per
    /// package with `meta.namespace`) are stamped for it; the others are read as planned.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        (0..self.planned.len()).map(|index| self.value(index))
    }

    /// One object as the checks read it (see [`InstancePlan::values`]).
    pub fn value(&self, index: usize) -> &Value {
        let planned = &self.planned[index];
        if !self.from_shape || !planned.fields.has_references() {
            return &planned.value;
        }
        let referencing = self.referencing.get_or_init(|| {
            let stamp = |planned: &PlannedObject| {
                planned.fields.has_references().then(|| planned.stamped(&self.namespace, &self.name))
            };
            self.planned.iter().map(stamp).collect()
        });
        referencing[index].as_ref().unwrap_or(&planned.value)
    }

    /// What the checks read of each object, in order (see [`ObjectFacts`]: the same for every instance of
    /// a shape but for `metadata.namespace`, [`InstancePlan::namespace_of`], and a stamped name,
    /// [`InstancePlan::name_of`]).
    pub fn facts(&self) -> impl ExactSizeIterator<Item = &ObjectFacts> {
        self.planned.iter().map(|planned| &*planned.facts)
    }

    /// What the checks read of one object (see [`InstancePlan::facts`]).
    pub fn facts_of(&self, index: usize) -> &ObjectFacts {
        &self.planned[index].facts
    }

    /// The `metadata.name` of an object as emitted for this instance (empty when it has none): the
    /// object's facts, or where stamping may rename it (a Namespace named as the package's own namespace),
    /// the object as the checks read it.
    pub fn name_of(&self, index: usize) -> &str {
        let planned = &self.planned[index];
        if !self.from_shape || !planned.fields.has_references() {
            return &planned.facts.name;
        }
        let object = self.value(index);
        object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default()
    }

    /// [`super::planned_object::identity_hash`] of an object's group, kind and name as emitted for this instance.
    pub fn identity_of(&self, index: usize) -> u64 {
        let planned = &self.planned[index];
        if !self.from_shape || !planned.fields.has_references() {
            return planned.facts.identity;
        }
        super::planned_object::identity_hash(planned.facts.group(), &planned.facts.kind, self.name_of(index))
    }

    /// Whether the objects already hold the core `Namespace` named `name` (shipped, perhaps renamed).
    pub fn ships_namespace(&self, name: &str) -> bool {
        self.facts().enumerate().any(|(index, facts)| facts.is_namespace() && self.name_of(index) == name)
    }

    /// The `metadata.namespace` of an object for this instance (`None` when it has none: cluster-scoped).
    pub fn namespace_of(&self, index: usize) -> Option<&str> {
        let planned = &self.planned[index];
        if planned.fields.in_instance_namespace {
            return Some(&self.namespace);
        }
        planned.value.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str)
    }

    /// An object as instances are compared ([`super::patch::comparable`]: without kix's per-instance labels).
    /// Those labels are all stamping writes outside the instance's namespace but its references, so such an
    /// object is compared as the checks read it.
    pub fn comparable(&self, index: usize) -> Value {
        let fields = &self.planned[index].fields;
        match fields.in_instance_namespace {
            true => super::patch::comparable(&self.object(index), fields.instance_label_added),
            false => super::patch::comparable(self.value(index), fields.instance_label_added),
        }
    }

    /// Forgets the objects' pre-rendered text, so that `emit` renders each from its value (tests comparing the two).
    #[cfg(test)]
    pub(super) fn forget_rendered(&mut self) {
        for planned in Arc::make_mut(&mut self.planned) {
            planned.rendered = None;
        }
    }

    /// Keeps the objects at the positions for which `keep` is true, in order.
    pub(crate) fn retain_objects(&mut self, keep: impl Fn(usize) -> bool) {
        let mut index = 0..;
        Arc::make_mut(&mut self.planned).retain(|_| keep(index.next().unwrap_or_default()));
        self.forget_stamped();
    }
}
