//! A namespace a package keeps (`meta.keepNamespaces`) must exist when the cluster's output is applied:
//! kix creates only the instances' own namespaces, so objects kept in, say, `monitoring` fail to apply on a
//! fresh cluster unless some instance of the same cluster emits that Namespace. The namespaces every
//! cluster has (`default`, `kube-system`, `kube-public`, `kube-node-lease`) need nothing.

use crate::derive::ClusterPlan;
use crate::resolve::Cluster;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_yaml::Value;
use std::collections::BTreeSet;

/// Warns (K0421) for each kept namespace of an instance that nothing in the cluster's output creates.
pub fn report(cluster: &Cluster, plan: &ClusterPlan, diagnostics: &mut Diagnostics) {
    // Most clusters keep no namespace: then nothing needs the list of what they create.
    if cluster.instances.iter().all(|instance| instance.package.namespaces.keep.is_empty()) {
        return;
    }
    let is_namespace = |object: &Value| {
        object.get("kind").and_then(Value::as_str) == Some("Namespace")
            && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
    };
    fn name_of(object: &Value) -> Option<&str> {
        object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str)
    }
    // Kinds and names as emitted (a shipped Namespace renamed for the instance is stamped: `name_of`).
    let emitted = plan.instances.iter().flat_map(|i| {
        i.facts().enumerate().filter(|(_, facts)| facts.is_namespace()).map(move |(index, _)| i.name_of(index))
    });
    let shared = plan.shared.iter().map(|s| &s.object).filter(|o| is_namespace(o)).filter_map(name_of);
    let created: BTreeSet<&str> = emitted.chain(shared).collect();
    for instance in &cluster.instances {
        for kept in &instance.package.namespaces.keep {
            let namespace = kept.value.as_str();
            if kix_kube::names::is_system_namespace(namespace) || created.contains(namespace) {
                continue;
            }
            diagnostics.push(
                Diagnostic::new(
                    Code::KeptNamespaceNotCreated,
                    format!(
                        "instance `{}` keeps objects in namespace `{namespace}`, which nothing in cluster `{}` creates: \
                         on a fresh cluster they fail to apply",
                        instance.name, cluster.name
                    ),
                )
                .at(kept.from.clone())
                .about(&instance.subject)
                .help(format!(
                    "create `{namespace}` first (an instance of the cluster whose namespace it is, with createNamespace = true), \
                     or acknowledge this warning with allow = [\"K0421\"] where the namespace is managed elsewhere"
                )),
            );
        }
    }
}
