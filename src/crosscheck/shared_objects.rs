//! Two instances of one cluster must not emit the same object: applied
//! together, the second silently overwrites the first, and kustomize refuses
//! the pair. Objects are keyed by (namespace, group, kind, name).

use crate::derive::InstancePlan;
use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::resolve::Cluster;
use crate::yaml::Value;
use std::collections::BTreeMap;

/// Two instances of one cluster must not emit the same object (same namespace, or both
/// cluster-scoped, and the same group, kind and name): applied together, the second silently
/// overwrites the first, and kustomize refuses the pair.
pub fn report(cluster: &Cluster, plans: &[InstancePlan], diagnostics: &mut Diagnostics) {
    let mut first_owner: BTreeMap<(String, String, String, String), &str> = BTreeMap::new();
    for plan in plans {
        // Per earlier instance: the objects this one emits again (one diagnostic per pair of instances).
        let mut clashes: BTreeMap<&str, Vec<(String, String, String)>> = BTreeMap::new();
        for object in &plan.objects {
            let text = |path: &[&str]| {
                path.iter().try_fold(object, |v, k| v.get(k)).and_then(Value::as_str).unwrap_or_default().to_string()
            };
            let group = crate::kube::kind::api_group(&text(&["apiVersion"])).to_string();
            let key = (text(&["metadata", "namespace"]), group, text(&["kind"]), text(&["metadata", "name"]));
            match first_owner.get(&key) {
                Some(owner) if *owner != plan.name => {
                    clashes.entry(owner).or_default().push((key.0.clone(), key.2.clone(), key.3.clone()))
                }
                Some(_) => {}
                None => {
                    first_owner.insert(key, plan.name.as_str());
                }
            }
        }
        let instance = cluster.instances.iter().find(|i| i.name == plan.name);
        for (owner, objects) in clashes {
            let (namespace, kind, name) = &objects[0];
            let place =
                if namespace.is_empty() { "cluster-scoped".to_string() } else { format!("in namespace `{namespace}`") };
            let more = match objects.len() {
                1 => String::new(),
                n => format!(" and {} more object{}", n - 1, if n == 2 { "" } else { "s" }),
            };
            diagnostics.push(
                Diagnostic::new(
                    Code::ObjectInTwoInstances,
                    format!(
                        "{kind} {name} ({place}){more} are emitted by both instance `{owner}` and instance `{}` of \
                         cluster `{}`: applied together, one overwrites the other",
                        plan.name, cluster.name
                    ),
                )
                .at_opt(instance.map(|i| i.location.clone()))
                .about(instance.map_or(&cluster.subject(), |i| &i.subject)),
            );
        }
    }
}
