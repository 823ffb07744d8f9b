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
use std::hash::{Hash, Hasher};

/// A 128-bit hash that values are fed to through [`Hash`]: each string is closed by a `0xff` byte and each
/// sequence carries its length, so no two sequences of parts hash alike. It is not stable across builds of
/// kix (a derived `Hash` may feed its fields otherwise), and need not be: the binary is part of every
/// record's frame key ([`super::Inputs::frame_key`]), so a footprint is only ever compared with one the
/// same binary recorded. Fed by `Hash`, not by formatting with `Debug` as it was (a tenth of a package
/// change's rebuild went into formatting selectors and labels, issue 42). The bytes fed are gathered and
/// hashed at once (XXH3 of the whole, as a streaming XXH3 fed piece by piece gives it): an instance feeds
/// hundreds of a few bytes each, where each streaming update cost more than its bytes.
struct Digest(Vec<u8>);

impl Digest {
    fn new() -> Digest {
        Digest(Vec::with_capacity(1024))
    }

    fn feed(&mut self, value: impl Hash) -> &mut Digest {
        value.hash(self);
        self
    }

    fn finish128(&self) -> u128 {
        xxhash_rust::xxh3::xxh3_128(&self.0)
    }
}

impl Hasher for Digest {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    fn finish(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&self.0)
    }
}

/// The part of an instance's footprint read from its objects as derived, before `derive::shared` moves
/// any to `_shared.yaml`.
pub fn objects(plan: &InstancePlan) -> u128 {
    let mut digest = Digest::new();
    let mut comparable = String::new();
    for (index, facts) in plan.facts().enumerate() {
        digest.feed("object").feed(plan.namespace_of(index)).feed(facts.group()).feed(&*facts.kind);
        digest.feed(plan.name_of(index)).feed(facts.has_namespace).feed(&facts.budget);
        if facts.has_namespace {
            continue;
        }
        // A cluster-scoped object whole: by the digest of the text rendered for its shape (stamped with the
        // namespace and name fed above), which is stricter than its comparable form (it holds kix's
        // per-instance labels, made of the instance's name, which the cluster file fixes); else rendered.
        match &plan.planned()[index].rendered {
            Some(rendered) => _ = digest.feed(rendered.digest()),
            None => {
                comparable.clear();
                kix_yaml::emit::write_document(&mut comparable, &plan.comparable(index));
                digest.feed(comparable.as_str());
            }
        }
    }
    digest.finish128()
}

/// The footprint of a compiled instance: `objects` (its [`objects`] part), what the cross-instance checks
/// read of it and of its package, its workloads' plans and its admission guards (`guards`, in any order).
pub fn footprint(instance: &Instance, objects: u128, plan: &InstancePlan, guards: &[&Guard]) -> u128 {
    let mut digest = Digest::new();
    digest.feed(&instance.name).feed(&instance.namespace).feed(instance.create_namespace);
    digest.feed(instance.across.as_ref().map(|across| &across.name)).feed(objects);
    let package = &instance.package;
    digest.feed(&package.name).feed(&package.version_text);
    for workload in &package.workloads {
        let view = &workload.view;
        digest.feed("workload").feed(view.kind.as_str()).feed(&view.name).feed(&view.namespace);
        digest.feed(workload.document).feed(&view.selector).feed(&view.template_labels);
    }
    for group in &package.groups {
        digest.feed("group").feed(&group.name).feed(&group.selector).feed(group.across);
    }
    for (document, budget) in package.budgets() {
        digest.feed("budget").feed(document).feed(budget);
    }
    for kept in &package.namespaces.keep {
        digest.feed("keep").feed(&kept.value);
    }
    for workload in &plan.workloads {
        digest.feed("plan").feed(workload.kind.as_str()).feed(&workload.name).feed(workload.replicas);
        digest
            .feed(workload.scaled_to_zero)
            .feed(workload.autoscaler.as_ref().map(|autoscaler| autoscaler.min_replicas));
        digest.feed(workload.pod_requests);
    }
    // In any order: each guard by its own hash, the hashes sorted.
    let mut guards: Vec<u128> = guards.iter().map(|guard| Digest::new().feed(guard).finish128()).collect();
    guards.sort_unstable();
    digest.feed("guards").feed(guards);
    digest.finish128()
}
