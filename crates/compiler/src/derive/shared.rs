//! Cluster-scoped objects shared by instances: a CRD, StorageClass,
//! IngressClass, ClusterRole or Namespace that several instances of one
//! cluster emit identically is written once per cluster (`_shared.yaml`)
//! instead of once per instance, where kustomize would refuse the duplicates
//! and `kubectl apply` would let the last one win.
//!
//! "Identically" means equal once kix's per-instance labels are left out:
//! `kix.dev/instance`, and `app.kubernetes.io/instance` where kix added it
//! (one the user wrote is theirs and compared like any other field). Mappings
//! compare without regard to key order, as the API server stores them. The
//! shared copy is the first instance's (in name order) without those labels:
//! the user's labels and `app.kubernetes.io/managed-by` stay, so pruning one
//! instance (`-l kix.dev/instance=NAME`) never deletes an object another
//! instance still uses. Objects of one kind and name that differ stay with
//! their instances and are refused across instances (K0417, in
//! `crosscheck::shared_objects`, naming the first field that differs).

use super::instance_plan::InstancePlan;
use super::planned_object::ObjectFacts;

use kix_yaml::Value;
use std::collections::{BTreeSet, HashMap};

/// One object written once for several instances.
#[derive(Clone, Debug)]
pub struct SharedObject {
    pub object: Value,
    /// The instances that emit it, in name order.
    pub instances: Vec<String>,
}

/// (group, kind, name) of a cluster-scoped object, borrowed from its instance's plan.
type Identity<'p> = (&'p str, &'p str, &'p str);

/// (group, kind, name) of a cluster-scoped object of an instance, as emitted; `None` for a namespaced
/// one (derive gives every namespaced object a namespace and none to cluster-scoped ones).
fn cluster_scoped_identity<'p>(plan: &'p InstancePlan, index: usize, facts: &'p ObjectFacts) -> Option<Identity<'p>> {
    if facts.has_namespace {
        return None;
    }
    Some((facts.group(), &facts.kind, plan.name_of(index)))
}

/// Moves every cluster-scoped object that two or more instances emit identically (each once) out of
/// the instances and returns them, in the order they first appear with instances in name order, with the
/// indices each instance gave up (in its objects before the move).
pub fn share(instances: &mut [InstancePlan]) -> (Vec<SharedObject>, Vec<Vec<usize>>) {
    let mut order: Vec<usize> = (0..instances.len()).collect();
    order.sort_by(|&a, &b| instances[a].name.cmp(&instances[b].name));
    // By identity, borrowed from the plans and hashed (a fleet's every instance creates its Namespace: a
    // tree of owned keys was a tenth of a rebuild, issue 42); `first_seen` keeps the order.
    let mut groups: HashMap<Identity<'_>, Vec<(usize, usize)>, foldhash::fast::RandomState> = HashMap::default();
    let mut first_seen = Vec::new();
    for &i in &order {
        // Whether an object is cluster-scoped, and its group, kind and name, as emitted (`values`).
        for (j, facts) in instances[i].facts().enumerate() {
            let Some(key) = cluster_scoped_identity(&instances[i], j, facts) else { continue };
            let entries = groups.entry(key).or_default();
            if entries.is_empty() {
                first_seen.push(key);
            }
            entries.push((i, j));
        }
    }
    let mut moved: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); instances.len()];
    let mut shared = Vec::new();
    for key in first_seen {
        let entries = &groups[&key];
        let owners: BTreeSet<usize> = entries.iter().map(|&(i, _)| i).collect();
        // One instance only, or twice in one instance (K0412 reports that): nothing to share.
        if owners.len() < 2 || owners.len() != entries.len() {
            continue;
        }
        let form = |&(i, j): &(usize, usize)| instances[i].comparable(j);
        let first = form(&entries[0]);
        if entries[1..].iter().any(|entry| form(entry) != first) {
            continue;
        }
        for &(i, j) in entries {
            moved[i].insert(j);
        }
        shared.push(SharedObject {
            object: first,
            instances: entries.iter().map(|&(i, _)| instances[i].name.clone()).collect(),
        });
    }
    for (plan, moved) in instances.iter_mut().zip(&moved) {
        if !moved.is_empty() {
            plan.retain_objects(|index| !moved.contains(&index));
        }
    }
    (shared, moved.into_iter().map(|moved| moved.into_iter().collect()).collect())
}

/// The first field path at which two objects differ (`subjects[0].namespace`,
/// `metadata.labels[app.kubernetes.io/name]`), keys in the first object's order; `None` when equal.
pub fn first_difference(a: &Value, b: &Value) -> Option<String> {
    difference(a, b, "")
}

fn difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    let whole = || if path.is_empty() { "(the whole object)".to_string() } else { path.to_string() };
    match (a, b) {
        (Value::Mapping(x), Value::Mapping(y)) => {
            for (key, value) in x.iter() {
                let here = join(path, key);
                match y.get(key) {
                    Some(other) => {
                        if let Some(found) = difference(value, other, &here) {
                            return Some(found);
                        }
                    }
                    None => return Some(here),
                }
            }
            y.keys().find(|key| !x.contains_key(*key)).map(|key| join(path, key))
        }
        (Value::Sequence(x), Value::Sequence(y)) => {
            for index in 0..x.len().max(y.len()) {
                let here = format!("{path}[{index}]");
                match (x.get(index), y.get(index)) {
                    (Some(one), Some(other)) => {
                        if let Some(found) = difference(one, other, &here) {
                            return Some(found);
                        }
                    }
                    _ => return Some(here),
                }
            }
            None
        }
        _ => (a != b).then(whole),
    }
}

/// `path.key`, or `path[key]` for a key that is not a plain word (label keys, `.`-separated names).
fn join(path: &str, key: &Value) -> String {
    let key = key.as_str().map_or_else(|| format!("{key:?}"), str::to_string);
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key,
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::patch::comparable;

    fn yaml(text: &str) -> Value {
        kix_yaml::from_str(text).expect("test YAML")
    }

    #[test]
    fn first_difference_names_the_path() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("{a: 1, b: {c: [1, 2]}}", "{b: {c: [1, 2]}, a: 1}", None),
            ("{a: 1, b: {c: [1, 2]}}", "{a: 1, b: {c: [1, 3]}}", Some("b.c[1]")),
            ("{a: 1, b: {c: [1, 2]}}", "{a: 1, b: {c: [1]}}", Some("b.c[1]")),
            ("{a: 1}", "{a: 1, z: 2}", Some("z")),
            ("{a: 1, z: 2}", "{a: 1}", Some("z")),
            (
                "{metadata: {labels: {app.kubernetes.io/name: x}}}",
                "{metadata: {labels: {app.kubernetes.io/name: y}}}",
                Some("metadata.labels[app.kubernetes.io/name]"),
            ),
            (
                "{subjects: [{kind: ServiceAccount, namespace: a}]}",
                "{subjects: [{kind: ServiceAccount, namespace: b}]}",
                Some("subjects[0].namespace"),
            ),
            ("1", "2", Some("(the whole object)")),
        ];
        for (a, b, expected) in cases {
            assert_eq!(first_difference(&yaml(a), &yaml(b)).as_deref(), *expected, "{a} vs {b}");
        }
    }

    #[test]
    fn comparable_leaves_out_only_kix_per_instance_labels() {
        let object = yaml(
            "metadata: {name: x, labels: {app.kubernetes.io/managed-by: kix, app.kubernetes.io/instance: a, kix.dev/instance: a, team: t}}",
        );
        let added = comparable(&object, true);
        assert_eq!(
            added["metadata"]["labels"],
            yaml("{app.kubernetes.io/managed-by: kix, team: t}"),
            "kix added the instance label"
        );
        let users = comparable(&object, false);
        assert_eq!(
            users["metadata"]["labels"],
            yaml("{app.kubernetes.io/managed-by: kix, app.kubernetes.io/instance: a, team: t}"),
            "the user wrote the instance label"
        );
    }
}
