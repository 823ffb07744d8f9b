//! Two instances of one cluster must not emit the same object: applied
//! together, the second silently overwrites the first, and kustomize refuses
//! the pair. Objects are keyed by (namespace, group, kind, name).
//!
//! Cluster-scoped objects that instances emit identically were already
//! written once for the cluster by `derive` (its `shared` module); what is
//! left here of them differs, and the diagnostic names the first field that
//! does (compared without kix's per-instance labels).

use crate::derive::{InstancePlan, first_difference};
use crate::resolve::Cluster;
use foldhash::fast::RandomState as Fast;
use kix_diag::{Code, Diagnostic, Diagnostics};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// Two instances of one cluster must not emit the same object (same namespace, or both
/// cluster-scoped, and the same group, kind and name): applied together, the second silently
/// overwrites the first, and kustomize refuses the pair.
pub fn report(cluster: &Cluster, plans: &[InstancePlan], diagnostics: &mut Diagnostics) {
    // Per object, by the hash of its key: the instance that emitted it first, and which of its objects it
    // is. The hash is the object's identity (group, kind and name, hashed once per shape) with its
    // namespace's: this runs over every object of the cluster. Keys whose hashes collide with another
    // key's go by the key itself.
    let objects = plans.iter().map(|p| p.facts().len()).sum();
    let mut first_owner = FirstSeen::with_capacity(objects);
    let mix = foldhash::fast::FixedState::with_seed(0);
    // The plans are the cluster's resolved instances derived, in the same order.
    for (position, (plan, instance)) in plans.iter().zip(&cluster.instances).enumerate() {
        // Per earlier instance: the objects this one emits again (one diagnostic per pair of instances).
        let mut clashes: BTreeMap<&str, Vec<Clash>> = BTreeMap::new();
        let own_namespace = mix.hash_one(plan.namespace.as_str());
        // The namespace of the key is read for the instance; group, kind and name are as emitted (`values`).
        for index in 0..plan.facts().len() {
            let key = key_of(plan, index);
            let namespace = if key.0 == plan.namespace { own_namespace } else { mix.hash_one(key.0) };
            let hash = mix.hash_one((plan.identity_of(index), namespace));
            let here = (position as u32, index as u32);
            let first =
                first_owner.first(hash, key, here, |(plan, index)| key_of(&plans[plan as usize], index as usize));
            if first == here {
                continue;
            }
            if first.0 == here.0 {
                continue;
            }
            let (owner, at) = (&plans[first.0 as usize], first.1 as usize);
            let differs_at = first_difference(&owner.comparable(at), &plan.comparable(index));
            // Identical and cluster-scoped: left unshared only because a third instance differs (reported
            // on its own).
            if key.0.is_empty() && differs_at.is_none() {
                continue;
            }
            clashes.entry(&owner.name).or_default().push(Clash {
                namespace: key.0.to_string(),
                kind: key.2.to_string(),
                name: key.3.to_string(),
                differs_at,
            });
        }
        for (owner, objects) in clashes {
            let mut diagnostic =
                Diagnostic::new(Code::ObjectInTwoInstances, message(cluster, owner, &plan.name, &objects))
                    .at(instance.location.clone())
                    .about(&instance.subject);
            diagnostic.help = help(&objects).map(Into::into);
            diagnostics.push(diagnostic);
        }
    }
}

/// An object's (namespace, group, kind, name).
type ObjectKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The key of an object of an instance: its namespace as the instance reads it, the rest as emitted.
fn key_of(plan: &InstancePlan, index: usize) -> ObjectKey<'_> {
    let facts = plan.facts_of(index);
    (plan.namespace_of(index).unwrap_or_default(), facts.group(), &*facts.kind, plan.name_of(index))
}

/// An object's place: the position of its instance's plan and its index in the plan.
type Place = (u32, u32);

/// The first place each key was seen, looked up by a hash computed ahead (from hashes made once per
/// shape, where hashing the key's four strings per object was a twentieth of a fleet's rebuild); keys
/// whose hashes collide with another key's are kept apart by the key itself.
struct FirstSeen<'a> {
    by_hash: HashMap<u64, Place, PassThrough>,
    colliding: HashMap<ObjectKey<'a>, Place, Fast>,
}

impl<'a> FirstSeen<'a> {
    fn with_capacity(objects: usize) -> FirstSeen<'a> {
        FirstSeen { by_hash: HashMap::with_capacity_and_hasher(objects, PassThrough), colliding: HashMap::default() }
    }

    /// The first place `key` (whose hash is `hash`) was seen, `here` when this is the first; `key_at`
    /// gives the key of a place seen before.
    fn first(&mut self, hash: u64, key: ObjectKey<'a>, here: Place, key_at: impl Fn(Place) -> ObjectKey<'a>) -> Place {
        let first = match self.by_hash.entry(hash) {
            Entry::Vacant(vacant) => return *vacant.insert(here),
            Entry::Occupied(occupied) => *occupied.get(),
        };
        if key_at(first) == key { first } else { *self.colliding.entry(key).or_insert(here) }
    }
}

/// A hasher for keys that are hashes already (the table's keys are foldhash's, well spread).
#[derive(Clone, Copy, Default)]
struct PassThrough;

impl std::hash::BuildHasher for PassThrough {
    type Hasher = PassThroughHasher;

    fn build_hasher(&self) -> PassThroughHasher {
        PassThroughHasher(0)
    }
}

struct PassThroughHasher(u64);

impl std::hash::Hasher for PassThroughHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed with it; any other input still hashes (by folding its bytes in).
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// One object an instance emits again.
struct Clash {
    namespace: String,
    kind: String,
    name: String,
    /// The first field at which the two differ (without kix's per-instance labels), if they do.
    differs_at: Option<String>,
}

fn message(cluster: &Cluster, owner: &str, instance: &str, objects: &[Clash]) -> String {
    let first = &objects[0];
    let place = if first.namespace.is_empty() {
        "cluster-scoped".to_string()
    } else {
        format!("in namespace `{}`", first.namespace)
    };
    let more = match objects.len() {
        1 => String::new(),
        n => format!(" and {} more object{}", n - 1, if n == 2 { "" } else { "s" }),
    };
    let differs = match (&first.differs_at, objects.len()) {
        (None, _) => String::new(),
        (Some(path), 1) => format!(", differing at `{path}`"),
        (Some(path), _) => format!(", the first differing at `{path}`"),
    };
    let verb = if objects.len() == 1 { "is" } else { "are" };
    format!(
        "{} {} ({place}){more} {verb} emitted by both instance `{owner}` and instance `{instance}` of cluster `{}`\
         {differs}: applied together, one overwrites the other",
        first.kind, first.name, cluster.name
    )
}

/// Help for a clash: what kix would have done with identical cluster-scoped objects.
fn help(objects: &[Clash]) -> Option<&'static str> {
    objects[0].namespace.is_empty().then_some(
        "kix writes a cluster-scoped object once (to _shared.yaml) when every instance emitting it emits it \
         identically, apart from kix's per-instance labels",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key's first place is found when all hashes collide (the keys tell them apart) and when none
    /// does; a key seen again finds its first place, never another key's.
    #[test]
    fn first_places_are_found_whatever_the_hashes() {
        let keys: [ObjectKey<'_>; 4] = [
            ("a", "", "ConfigMap", "x"),
            ("b", "", "ConfigMap", "x"),
            ("a", "apps", "Deployment", "x"),
            ("", "", "Namespace", "a"),
        ];
        // Place (0, i) holds keys[i]; place (1, i) holds keys[i] again.
        let key_at = |(_, index): Place| keys[index as usize];
        for hash_of in [|_: usize| 7u64, |i: usize| i as u64 * 1000] {
            let mut seen = FirstSeen::with_capacity(8);
            for (i, key) in keys.iter().enumerate() {
                assert_eq!(seen.first(hash_of(i), *key, (0, i as u32), key_at), (0, i as u32), "{key:?} is new");
            }
            for (i, key) in keys.iter().enumerate() {
                assert_eq!(seen.first(hash_of(i), *key, (1, i as u32), key_at), (0, i as u32), "{key:?} seen before");
            }
        }
    }
}
