//! An instance's footprint: a hash of everything the cluster-wide stages read of one instance (issue 42;
//! docs/per-instance-rebuild.md, §9). Two compiles of an instance with equal footprints give the other
//! instances of its cluster, and the cluster's own files, the same inputs, so a rebuild that compiled only
//! the instances whose package changed can keep the rest of the cluster as recorded when each of their
//! footprints is the recorded one.
//!
//! What it covers, by the stage that reads it:
//! - the cross-instance checks (`crosscheck`): the instance's name, namespace and namespace creation, each
//!   of its package's workloads (kind, name, namespace, selector, pod template labels, document), groups
//!   (name, selector, whether across instances), shipped budgets and kept namespaces (K0406, K0424, K0415,
//!   K0421, K0428);
//! - the objects the instance emits before any is shared: each one's namespace, group, kind, name, budget
//!   selector, and for a cluster-scoped one its whole comparable form (`derive::shared`, K0417, K0428);
//! - each workload's plan as the room check adds it up (K0462): kind, name, replicas, autoscaler minimum,
//!   scaled to zero, the pod's requests;
//! - the admission guards of its objects (`_admission.yaml`).
//!
//! It leaves out where things are written (spans, lines): a finding of a cluster-wide check that points
//! into a file of a package that changed is never kept from a record (`crate::compile`), so moving text
//! in such a file cannot leave a finding pointing at the wrong place. An instance in a group across
//! instances (a cluster file's `group`) is never compiled alone, so the group's totals are not here.

use crate::admission::Guard;
use crate::derive::InstancePlan;
use crate::resolve::Instance;
use std::fmt::Write;
use xxhash_rust::xxh3::Xxh3;

/// A hash that text is written into (`write!`), each part closed by a NUL so no two sequences of parts
/// hash alike.
struct Digest(Xxh3);

impl Write for Digest {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0.update(text.as_bytes());
        Ok(())
    }
}

/// The part of an instance's footprint read from its objects as derived, before `derive::shared` moves
/// any to `_shared.yaml`.
pub fn objects(plan: &InstancePlan) -> u128 {
    let mut digest = Digest(Xxh3::new());
    let mut comparable = String::new();
    for (index, facts) in plan.facts().enumerate() {
        let _ = write!(
            digest,
            "object {:?}\0{}\0{}\0{}\0{}\0{:?}\0",
            plan.namespace_of(index),
            facts.group(),
            facts.kind,
            plan.name_of(index),
            facts.has_namespace,
            facts.budget,
        );
        if facts.has_namespace {
            continue;
        }
        // A cluster-scoped object whole: by the digest of the text rendered for its shape (stamped with the
        // namespace and name written above), which is stricter than its comparable form (it holds kix's
        // per-instance labels, made of the instance's name, which the cluster file fixes); else rendered.
        match &plan.planned()[index].rendered {
            Some(rendered) => _ = write!(digest, "{:032x}\0", rendered.digest()),
            None => {
                comparable.clear();
                kix_yaml::emit::write_document(&mut comparable, &plan.comparable(index));
                let _ = write!(digest, "{comparable}\0");
            }
        }
    }
    digest.0.digest128()
}

/// The footprint of a compiled instance: `objects` (its [`objects`] part), what the cross-instance checks
/// read of it and of its package, its workloads' plans and its admission guards (`guards`, in any order).
pub fn footprint(instance: &Instance, objects: u128, plan: &InstancePlan, guards: &[&Guard]) -> u128 {
    let mut digest = Digest(Xxh3::new());
    let _ = write!(
        digest,
        "{}\0{}\0{}\0{:?}\0{:032x}\0",
        instance.name,
        instance.namespace,
        instance.create_namespace,
        instance.across.as_ref().map(|across| &across.name),
        objects,
    );
    let package = &instance.package;
    let _ = write!(digest, "{}\0{}\0", package.name, package.version_text);
    for workload in &package.workloads {
        let view = &workload.view;
        let _ = write!(
            digest,
            "workload {}\0{}\0{:?}\0{}\0{:?}\0{:?}\0",
            view.kind.as_str(),
            view.name,
            view.namespace,
            workload.document,
            view.selector,
            view.template_labels,
        );
    }
    for group in &package.groups {
        let _ = write!(digest, "group {}\0{:?}\0{}\0", group.name, group.selector, group.across);
    }
    for (document, budget) in package.budgets() {
        let _ = write!(digest, "budget {document}\0{budget:?}\0");
    }
    for kept in &package.namespaces.keep {
        let _ = write!(digest, "keep {}\0", kept.value);
    }
    for workload in &plan.workloads {
        let _ = write!(
            digest,
            "plan {}\0{}\0{}\0{}\0{:?}\0{:?}\0",
            workload.kind.as_str(),
            workload.name,
            workload.replicas,
            workload.scaled_to_zero,
            workload.autoscaler.as_ref().map(|autoscaler| autoscaler.min_replicas),
            workload.pod_requests,
        );
    }
    let mut guards: Vec<String> = guards.iter().map(|guard| format!("{guard:?}")).collect();
    guards.sort_unstable();
    for guard in guards {
        let _ = write!(digest, "guard {guard}\0");
    }
    digest.0.digest128()
}
