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
use std::collections::{BTreeMap, HashMap};

/// Two instances of one cluster must not emit the same object (same namespace, or both
/// cluster-scoped, and the same group, kind and name): applied together, the second silently
/// overwrites the first, and kustomize refuses the pair.
pub fn report(cluster: &Cluster, plans: &[InstancePlan], diagnostics: &mut Diagnostics) {
    // Per object: the instance that emitted it first, and which of its objects it is.
    // Keys borrow from the objects: this runs over every object of the cluster.
    let objects = plans.iter().map(|p| p.facts().len()).sum();
    let mut first_owner: HashMap<ObjectKey<'_>, (&InstancePlan, usize), Fast> =
        HashMap::with_capacity_and_hasher(objects, Fast::default());
    // Instances by name, hashed: a cluster may run 100,000 instances (issue 19; a scan per plan took 50 s).
    let instances: HashMap<&str, _, Fast> = cluster.instances.iter().map(|i| (i.name.as_str(), i)).collect();
    for plan in plans {
        // Per earlier instance: the objects this one emits again (one diagnostic per pair of instances).
        let mut clashes: BTreeMap<&str, Vec<Clash>> = BTreeMap::new();
        // The namespace of the key is read for the instance; group, kind and name are as emitted (`values`).
        for (index, facts) in plan.facts().enumerate() {
            let namespace = plan.namespace_of(index).unwrap_or_default();
            let key = (namespace, facts.group(), &*facts.kind, plan.name_of(index));
            match first_owner.get(&key) {
                Some((owner, _)) if owner.name == plan.name => {}
                Some(&(owner, at)) => {
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
                None => {
                    first_owner.insert(key, (plan, index));
                }
            }
        }
        let instance = instances.get(plan.name.as_str()).copied();
        for (owner, objects) in clashes {
            let mut diagnostic =
                Diagnostic::new(Code::ObjectInTwoInstances, message(cluster, owner, &plan.name, &objects))
                    .at_opt(instance.map(|i| i.location.clone()))
                    .about(instance.map_or(&cluster.subject(), |i| &i.subject));
            diagnostic.help = help(&objects).map(|help| help.to_string().into());
            diagnostics.push(diagnostic);
        }
    }
}

/// An object's (namespace, group, kind, name).
type ObjectKey<'a> = (&'a str, &'a str, &'a str, &'a str);

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
