//! Patches: the edits kix makes to a copy of a user's document, and nothing else.
//!
//! Each edit keeps the document's field order: a key kix sets keeps its place
//! when present, `spec.replicas` goes first when absent, `metadata.namespace`
//! right after `metadata.name`. Under an autoscaler `spec.replicas` is left as
//! written, and the autoscaler's range is raised in place.

use super::namespaces::Site;
use super::workload_plan::{Spread, WorkloadPlan};
use kix_kube::autoscaler::AutoscalerView;
use kix_kube::kix_names::{
    GROUP_ANNOTATION, INSTANCE_LABEL, KIX_INSTANCE_LABEL, MANAGED_BY_LABEL, REQUESTED_ANNOTATION, RESOLVED_ANNOTATION,
};
use kix_kube::workload::WorkloadView;
use kix_yaml::{Mapping, Value};
use std::sync::Arc;

/// Applies a plan to the workload's copied document.
pub fn patch_workload(object: &mut Value, view: &WorkloadView, plan: &WorkloadPlan) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) {
        let annotations = mapping_entry(metadata, "annotations");
        annotations.insert(REQUESTED_ANNOTATION.into(), plan.requested.as_str().into());
        annotations.insert(RESOLVED_ANNOTATION.into(), plan.level.as_str().into());
        if let Some(group) = &plan.group {
            annotations.insert(GROUP_ANNOTATION.into(), group.as_str().into());
        }
    }
    // A custom resource: its count and constraints go where its profile says the operator reads them.
    if let Some(profile) = view.kind.profile() {
        if let Some(path) = profile.replicas.as_ref().filter(|_| plan.autoscaler.is_none()) {
            path.set(object, Value::from(plan.replicas), true);
        }
        if let Some(path) = profile.spread.as_ref().filter(|_| !plan.spreads.is_empty()) {
            let constraints = plan.spreads.iter().map(|spread| spread_constraint(view, plan, spread)).collect();
            path.set(object, Value::Sequence(constraints), false);
        }
        return;
    }
    let Some(spec) = object.get_mut("spec").and_then(Value::as_mapping_mut) else { return };
    // An autoscaler owns spec.replicas: setting it would fight the autoscaler on every sync.
    if plan.autoscaler.is_none() {
        insert_first(spec, "replicas", Value::from(plan.replicas));
    }
    write_spread(object, view, plan);
}

/// Writes the plan's spread constraints into the object's pod template (`spec.template.spec`): the
/// workload's own, or, for a Rollout with `spec.workloadRef`, the Deployment's whose template it runs.
/// Nothing when the plan derives none or the object has no pod template.
pub fn write_spread(object: &mut Value, view: &WorkloadView, plan: &WorkloadPlan) {
    if plan.spreads.is_empty() {
        return;
    }
    let constraints: Vec<Value> = plan.spreads.iter().map(|spread| spread_constraint(view, plan, spread)).collect();
    let template = object.get_mut("spec").and_then(|s| s.get_mut("template"));
    if let Some(pod_spec) = template.and_then(|t| t.get_mut("spec")).and_then(Value::as_mapping_mut) {
        pod_spec.insert("topologySpreadConstraints".into(), Value::Sequence(constraints));
    }
}

/// One derived constraint, fields in the order people write them. A group's member selects the group's
/// pods and has no `matchLabelKeys`: pod-template-hash would narrow the count to its own ReplicaSet.
fn spread_constraint(view: &WorkloadView, plan: &WorkloadPlan, spread: &Spread) -> Value {
    let mut constraint = Mapping::new();
    constraint.insert("maxSkew".into(), 1.into());
    constraint.insert("topologyKey".into(), spread.key.as_str().into());
    constraint.insert("whenUnsatisfiable".into(), if spread.hard { "DoNotSchedule" } else { "ScheduleAnyway" }.into());
    let selector =
        plan.spread_selector.as_ref().map_or_else(|| view.selector_value.clone(), super::budget::match_labels);
    constraint.insert("labelSelector".into(), selector);
    // The label the controller gives each revision's pods (pod-template-hash on a Deployment's,
    // rollouts-pod-template-hash on a Rollout's; none on a StatefulSet's); the API server refuses a key the
    // selector already uses. A group's member has none: the hash would narrow the count to its own revision.
    if let Some(hash) = view
        .kind
        .template_hash_label()
        .filter(|hash| plan.spread_selector.is_none() && !view.selector.keys().any(|k| k == *hash))
    {
        constraint.insert("matchLabelKeys".into(), Value::Sequence(vec![hash.into()]));
    }
    constraint.insert("nodeTaintsPolicy".into(), "Honor".into());
    Value::Mapping(constraint)
}

/// Where an object holds its instance's namespace and name: written by [`set_instance_fields`] when the object
/// is derived, and again by [`write_instance_fields`] when it is stamped for another instance of its shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstanceFields {
    /// The object sits in the instance's namespace: its `metadata.namespace` is the instance's.
    pub in_instance_namespace: bool,
    /// kix added `app.kubernetes.io/instance` (the user had not written it), so its value is the instance's
    /// name and comparing instances' objects leaves it out.
    pub instance_label_added: bool,
    /// Where else the object names the instance's namespace: its references to the package's own
    /// namespace (`meta.namespace`), moved to the instance's (`None`: nowhere; see `namespaces`).
    pub references: Option<Arc<[Site]>>,
}

impl InstanceFields {
    /// Whether stamping writes anything outside `metadata` (a reference to the namespace).
    pub fn has_references(&self) -> bool {
        self.references.is_some()
    }
}

/// Writes an object's per-instance fields for an instance, the first time: it goes into the instance's
/// namespace when `in_instance_namespace`, and is labelled `app.kubernetes.io/managed-by: kix`,
/// `app.kubernetes.io/instance` only where absent (a label the user wrote keeps its value: other objects may
/// select it) and when the cluster's `instanceLabel` is `add` (`add_instance_label`), and `kix.dev/instance`
/// always; the namespace is written at its `references` too. Returns where the object holds them, for stamping.
pub fn set_instance_fields(
    object: &mut Value,
    namespace: &str,
    instance: &str,
    in_instance_namespace: bool,
    add_instance_label: bool,
    references: Vec<Site>,
) -> InstanceFields {
    let metadata = object.get("metadata").and_then(Value::as_mapping);
    let labels = metadata.and_then(|m| m.get("labels")).and_then(Value::as_mapping);
    let instance_label_added =
        add_instance_label && metadata.is_some() && !labels.is_some_and(|l| l.contains_key(INSTANCE_LABEL));
    let references = (!references.is_empty()).then(|| Arc::from(references));
    let fields = InstanceFields { in_instance_namespace, instance_label_added, references };
    write_instance_fields(object, namespace, instance, &fields);
    fields
}

/// Writes an instance's namespace and name into the object's per-instance fields (`fields`): the one place
/// that writes them, both when an object is derived ([`set_instance_fields`]) and when a shape's object is
/// stamped for another instance, so the two cannot differ. Writing them again for the same instance changes
/// nothing.
pub fn write_instance_fields(object: &mut Value, namespace: &str, instance: &str, fields: &InstanceFields) {
    for site in fields.references.iter().flat_map(|sites| sites.iter()) {
        site.write(object, namespace);
    }
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) else { return };
    if fields.in_instance_namespace {
        if metadata.contains_key("namespace") {
            metadata.insert("namespace".into(), namespace.into());
        } else {
            insert_after(metadata, "name", "namespace", namespace.into());
        }
    }
    let labels = mapping_entry(metadata, "labels");
    if !labels.contains_key(MANAGED_BY_LABEL) {
        labels.insert(MANAGED_BY_LABEL.into(), "kix".into());
    }
    if fields.instance_label_added {
        labels.insert(INSTANCE_LABEL.into(), instance.into());
    }
    labels.insert(KIX_INSTANCE_LABEL.into(), instance.into());
}

/// The mapping under `key`, created (at the end) when absent or null.
fn mapping_entry<'m>(map: &'m mut Mapping, key: &str) -> &'m mut Mapping {
    if !map.get(key).is_some_and(Value::is_mapping) {
        map.insert(key.into(), Value::Mapping(Mapping::new()));
    }
    map.get_mut(key).and_then(Value::as_mapping_mut).expect("inserted above")
}

/// Sets `key`, keeping its position when present and putting it first otherwise.
fn insert_first(map: &mut Mapping, key: &str, value: Value) {
    if map.contains_key(key) {
        map.insert(key.into(), value);
        return;
    }
    let old = std::mem::take(map);
    map.insert(key.into(), value);
    map.extend(old);
}

/// Inserts `key` right after `after` (or at the end when `after` is absent).
fn insert_after(map: &mut Mapping, after: &str, key: &str, value: Value) {
    let old = std::mem::take(map);
    let mut placed = false;
    for (k, v) in old {
        let is_anchor = k.as_str() == Some(after);
        map.insert(k, v);
        if is_anchor {
            map.insert(key.into(), value.clone());
            placed = true;
        }
    }
    if !placed {
        map.insert(key.into(), value);
    }
}

/// Raises an autoscaler's minimum and maximum where kix raised them, in place: a field present
/// keeps its position; an absent minimum goes right before the maximum, an absent maximum right
/// after the minimum.
pub fn set_autoscaler_range(object: &mut Value, view: &AutoscalerView, min: u32, max: u32) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_mapping_mut) else { return };
    let (min_field, max_field) = (view.kind.min_field(), view.kind.max_field());
    if min > view.min() {
        if spec.contains_key(min_field) || !spec.contains_key(max_field) {
            spec.insert(min_field.into(), min.into());
        } else {
            insert_before(spec, max_field, min_field, min.into());
        }
    }
    if max > view.max() {
        if spec.contains_key(max_field) {
            spec.insert(max_field.into(), max.into());
        } else {
            insert_after(spec, min_field, max_field, max.into());
        }
    }
}

/// Inserts `key` right before `before` (which must be present).
fn insert_before(map: &mut Mapping, before: &str, key: &str, value: Value) {
    let old = std::mem::take(map);
    for (k, v) in old {
        if k.as_str() == Some(before) {
            map.insert(key.into(), value.clone());
        }
        map.insert(k, v);
    }
}

/// A cluster-scoped object carries no namespace.
pub fn clear_namespace(object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) {
        metadata.remove("namespace");
    }
}

/// An object as instances are compared: without kix's per-instance labels.
pub fn comparable(object: &Value, instance_label_added: bool) -> Value {
    let mut object = object.clone();
    if let Some(labels) = object.get_mut("metadata").and_then(|m| m.get_mut("labels")).and_then(Value::as_mapping_mut) {
        labels.remove(KIX_INSTANCE_LABEL);
        if instance_label_added {
            labels.remove(INSTANCE_LABEL);
        }
    }
    object
}
