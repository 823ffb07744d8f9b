//! Namespaces that must exist when a cluster's output is applied: a namespace has to exist before anything
//! is created in it, so on a fresh cluster `kubectl apply -k out/<cluster>` (and Flux's apply of the same
//! directory) is refused for objects in a namespace nothing in the output creates. Two rules read the one
//! list of what the cluster's output creates ([`Created`]): an instance's own namespace (K0428) and a
//! namespace a package keeps (`meta.keepNamespaces`, K0421). The namespaces every cluster has (`default`,
//! `kube-system`, `kube-public`, `kube-node-lease`) need nothing.
//!
//! What creates a namespace is decided by derive: the `v1 Namespace` objects of each instance's plan as
//! emitted for it (one a package ships, renamed with the package's namespace, or the one `createNamespace`
//! adds) and those written once to `_shared.yaml` for several instances. This module reads them from the
//! plan; it decides nothing about which objects are emitted.

use crate::derive::{ClusterPlan, InstancePlan};
use crate::resolve::{Cluster, Instance};
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_yaml::Value;
use std::collections::BTreeSet;

/// The namespaces a cluster's output creates, by name: made once per cluster, and only when a rule asks.
struct Created<'p> {
    plan: &'p ClusterPlan,
    names: Option<BTreeSet<&'p str>>,
}

impl<'p> Created<'p> {
    fn of(plan: &'p ClusterPlan) -> Created<'p> {
        Created { plan, names: None }
    }

    /// Whether `namespace` exists once the cluster's output is applied: a system namespace, or one a `v1
    /// Namespace` of an instance's plan or of `_shared.yaml` creates.
    fn contains(&mut self, namespace: &str) -> bool {
        if kix_kube::names::is_system_namespace(namespace) {
            return true;
        }
        let plan = self.plan;
        let names = self.names.get_or_insert_with(|| {
            // Kinds and names as emitted (a shipped Namespace renamed for the instance is stamped: `name_of`).
            let emitted = plan.instances.iter().flat_map(|i| {
                i.facts().enumerate().filter(|(_, facts)| facts.is_namespace()).map(move |(index, _)| i.name_of(index))
            });
            let shared = plan.shared.iter().map(|s| &s.object).filter(|o| is_namespace(o)).filter_map(name_of);
            emitted.chain(shared).collect()
        });
        names.contains(namespace)
    }
}

/// Runs both rules over one cluster, on one list of what it creates.
pub fn report(cluster: &Cluster, plan: &ClusterPlan, diagnostics: &mut Diagnostics) {
    let mut created = Created::of(plan);
    instance_namespaces(cluster, plan, &mut created, diagnostics);
    kept_namespaces(cluster, &mut created, diagnostics);
}

/// K0428: warns for each instance whose objects go to its own namespace when nothing in the cluster's
/// output creates that namespace (no `createNamespace = true` on it or on another instance of the
/// namespace, no Namespace shipped by a package). An instance whose objects are all cluster-scoped needs
/// no namespace.
fn instance_namespaces(
    cluster: &Cluster,
    plan: &ClusterPlan,
    created: &mut Created<'_>,
    diagnostics: &mut Diagnostics,
) {
    // The plans are the cluster's resolved instances derived, in the same order.
    for (instance, planned) in cluster.instances.iter().zip(&plan.instances) {
        // `createNamespace` puts the Namespace into the instance's own plan: created without a lookup.
        if instance.create_namespace || !uses_own_namespace(planned) || created.contains(&instance.namespace) {
            continue;
        }
        diagnostics.push(namespace_not_created(cluster, instance));
    }
}

/// Whether any object of the instance goes to the instance's own namespace.
fn uses_own_namespace(plan: &InstancePlan) -> bool {
    (0..plan.facts().len()).any(|index| plan.namespace_of(index) == Some(plan.namespace.as_str()))
}

fn namespace_not_created(cluster: &Cluster, instance: &Instance) -> Diagnostic {
    let (name, namespace) = (&cluster.name, &instance.namespace);
    Diagnostic::new(
        Code::NamespaceNotCreated,
        format!(
            "cluster `{name}` instance `{}`: nothing in the cluster creates namespace `{namespace}`: on a fresh \
             cluster, `kubectl apply -k out/{name}` (and Flux's apply) is refused because the namespace does not exist",
            instance.name
        ),
    )
    .at(instance.location.clone())
    .label(format!("its objects go to namespace `{namespace}`"))
    .about(&instance.subject)
    .help(format!(
        "set `createNamespace = true` on the instance (or ship a Namespace `{namespace}` in the package); where \
         the namespace is created elsewhere (a platform's own manifests, Argo CD's CreateNamespace=true sync \
         option when it is the Application's destination namespace), acknowledge this warning with \
         allow = [\"K0428\"]"
    ))
}

/// K0421: warns for each kept namespace of an instance that nothing in the cluster's output creates. kix
/// creates only the instances' own namespaces, so objects kept in, say, `monitoring` fail to apply on a
/// fresh cluster unless some instance of the same cluster emits that Namespace.
fn kept_namespaces(cluster: &Cluster, created: &mut Created<'_>, diagnostics: &mut Diagnostics) {
    for instance in &cluster.instances {
        for kept in &instance.package.namespaces.keep {
            let namespace = kept.value.as_str();
            if created.contains(namespace) {
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

fn is_namespace(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Namespace")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

fn name_of(object: &Value) -> Option<&str> {
    object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use crate::testing::TestTree;
    use kix_diag::Code;

    /// K0428, case by case: the instances (of cluster `c`, in report order) whose namespace nothing creates.
    #[test]
    fn k0428_names_each_instance_whose_namespace_nothing_creates() {
        let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {}\n";
        let role =
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules: []\n";
        let shipped = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: own\n---\n\
                       apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own-settings\n  namespace: own\ndata: {}\n";
        let entry = |name: &str, package: &str, more: &str| {
            format!("[[instances]]\nname = \"{name}\"\npackage = \"{package}\"\n{more}")
        };
        let cases: Vec<(&str, String, Vec<&str>)> = vec![
            ("nothing creates it", entry("a", "config", ""), vec!["a"]),
            ("createNamespace", entry("a", "config", "createNamespace = true\n"), vec![]),
            ("the package ships it, renamed", entry("a", "shipped", ""), vec![]),
            ("a system namespace", entry("a", "config", "namespace = \"kube-system\"\n"), vec![]),
            ("cluster-scoped objects only", entry("a", "role", ""), vec![]),
            (
                "another instance of the namespace creates it",
                entry("a", "config", "namespace = \"n\"\ncreateNamespace = true\n")
                    + &entry("b", "shipped", "namespace = \"n\"\n"),
                vec![],
            ),
            (
                "another instance's package ships it",
                entry("a", "shipped", "namespace = \"n\"\n") + &entry("b", "config", "namespace = \"n\"\n"),
                vec![],
            ),
            (
                "two in one namespace, neither creating it",
                entry("a", "config", "namespace = \"n\"\n")
                    + &entry("b", "role", "namespace = \"n\"\n")
                    + &entry("c", "shipped", "namespace = \"m\"\n"),
                vec!["a"],
            ),
            ("acknowledged by the instance", entry("a", "config", "allow = [\"K0428\"]\n"), vec![]),
        ];
        for (what, instances, expected) in cases {
            let compiled = TestTree::new()
                .cluster("c", &format!("availability = \"none\"\n{instances}"))
                .package("config", "[meta]\nname = \"config\"\nversion = \"1.0.0\"\n", &[("c.yaml", config)])
                .package("role", "[meta]\nname = \"role\"\nversion = \"1.0.0\"\n", &[("r.yaml", role)])
                .package(
                    "shipped",
                    "[meta]\nname = \"shipped\"\nversion = \"1.0.0\"\nnamespace = \"own\"\n",
                    &[("s.yaml", shipped)],
                )
                .compile();
            let warned: Vec<&str> = (compiled.diagnostics.iter())
                .filter(|d| d.code == Code::NamespaceNotCreated)
                .map(|d| d.subject.instance.as_deref().unwrap())
                .collect();
            assert_eq!(warned, expected, "{what}: {:?}", compiled.messages());
            assert!(!compiled.diagnostics.has_errors(), "{what}: {:?}", compiled.messages());
        }
    }
}
