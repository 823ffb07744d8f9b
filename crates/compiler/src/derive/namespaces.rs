//! Namespaces: where each of an instance's objects goes, and the references
//! to the package's own namespace that move with it.
//!
//! A namespaced object with no namespace, the instance's, or the one the
//! package was written for (`meta.namespace`) goes to the instance's
//! namespace; one in a namespace the package keeps (`meta.keepNamespaces`)
//! stays there; any other is refused (K0409). Cluster-scoped objects carry no
//! namespace.
//!
//! References to the package's namespace move too, in the fields kustomize's
//! namespace transformer rewrites (kustomize
//! `api/internal/konfig/builtinpluginconsts/namespace.go`, `namespaceFieldSpecs`,
//! and `api/filters/namespace/namespace.go`, `roleBindingHack`), but only where
//! they name the package's own namespace, so references into kept or foreign
//! namespaces stay as written:
//!
//! - `subjects[].namespace` of RoleBindings and ClusterRoleBindings, for
//!   `kind: ServiceAccount` (`Subject`, k8s.io/api `rbac/v1/types.go`);
//! - `webhooks[].clientConfig.service.namespace` of Validating and
//!   MutatingWebhookConfigurations (`ServiceReference`, k8s.io/api
//!   `admissionregistration/v1/types.go`);
//! - `spec.service.namespace` of APIServices (`ServiceReference`,
//!   k8s.io/kube-aggregator `apiregistration/v1/types.go`);
//! - `spec.conversion.webhook.clientConfig.service.namespace` of
//!   CustomResourceDefinitions (`WebhookClientConfig`,
//!   k8s.io/apiextensions-apiserver `apiextensions/v1/types.go`);
//! - `metadata.name` of a shipped `Namespace` (renamed to the instance's).
//!
//! Strings inside containers' arguments or config files (`--namespace=X`,
//! `svc.X.cluster.local`) are the user's and are left alone.

use crate::resolve::{DocumentScope, Instance, Package};
use kix_yaml::{Mapping, Value};

/// Where a namespaced object goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Into the instance's namespace: it had none, the instance's, or the package's own.
    Instance,
    /// It stays in this namespace, which the package keeps.
    Kept(String),
    /// It names this namespace, neither the package's own nor kept (K0409).
    Foreign(String),
}

/// Where a namespaced document goes, given the namespace it names (`None`: unset; an empty namespace is
/// unset, as kubectl treats it, and the package's scopes hold it so).
pub fn placement(written: Option<&str>, instance: &Instance, package: &Package) -> Placement {
    match written {
        None => Placement::Instance,
        Some(ns) if ns == instance.namespace || package.namespaces.is_own(ns) => Placement::Instance,
        Some(ns) if package.namespaces.keeps(ns) => Placement::Kept(ns.to_string()),
        Some(ns) => Placement::Foreign(ns.to_string()),
    }
}

/// The one namespace every namespaced object of the package names, if they all name the same one (objects
/// without a namespace count against it).
pub fn sole_namespace(package: &Package) -> Option<&str> {
    let mut sole = None;
    for document in &package.documents {
        let DocumentScope::Namespaced(written) = &document.scope else { continue };
        match (written.as_deref(), sole) {
            (None, _) => return None,
            (Some(ns), None) => sole = Some(ns),
            (Some(ns), Some(seen)) if ns != seen => return None,
            _ => {}
        }
    }
    sole
}

/// One place an object names the package's own namespace in a field that moves with it: the path to the
/// scalar, by mapping key and sequence index. The places are the document's (where it names the package's
/// namespace as written), the same for every instance, so a shape's objects are stamped there with each
/// instance's namespace ([`super::patch::write_instance_fields`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Site(Vec<Step>);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Step {
    Key(&'static str),
    Index(usize),
}

impl Site {
    /// `subjects[index].namespace` of a RoleBinding or ClusterRoleBinding (see [`super::subjects`]).
    pub fn subject_namespace(index: usize) -> Site {
        Site(vec![Step::Key("subjects"), Step::Index(index), Step::Key("namespace")])
    }

    /// Writes `namespace` at this place (the scalar is there: it was found there).
    pub fn write(&self, object: &mut Value, namespace: &str) {
        let found = self.0.iter().try_fold(object, |value, step| match (step, value) {
            (Step::Key(key), value) => value.get_mut(key),
            (Step::Index(index), Value::Sequence(items)) => items.get_mut(*index),
            _ => None,
        });
        if let Some(value) = found {
            *value = namespace.into();
        }
    }
}

/// Rewrites the references to namespace `from` that move with the package's objects to `to`.
#[cfg(test)]
pub fn rewrite_references(object: &mut Value, group: &str, kind: &str, from: &str, to: &str) {
    for site in reference_sites(object, group, kind, from) {
        site.write(object, to);
    }
}

/// Where `object` (of `group` and `kind`) names namespace `own` in a field that moves with the package's
/// objects (see the module comment), in document order.
pub fn reference_sites(object: &Value, group: &str, kind: &str, own: &str) -> Vec<Site> {
    let mut sites = Vec::new();
    // A reference's `namespace` beside its name: a subject, a service.
    let at = |sites: &mut Vec<Site>, path: &[Step], reference: Option<&Value>| {
        if reference.and_then(|s| s.get("namespace")).and_then(Value::as_str) == Some(own) {
            sites.push(Site(path.iter().copied().chain([Step::Key("namespace")]).collect()));
        }
    };
    match (group, kind) {
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            for (i, subject) in items(object.get("subjects")) {
                if subject.get("kind").and_then(Value::as_str) == Some("ServiceAccount") {
                    at(&mut sites, &[Step::Key("subjects"), Step::Index(i)], Some(subject));
                }
            }
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
            for (i, webhook) in items(object.get("webhooks")) {
                let path = [Step::Key("webhooks"), Step::Index(i)];
                let service = webhook.get("clientConfig").and_then(|c| c.get("service"));
                at(&mut sites, &[path[0], path[1], Step::Key("clientConfig"), Step::Key("service")], service);
                let selector = [path[0], path[1], Step::Key("namespaceSelector")];
                selector_sites(webhook.get("namespaceSelector"), &selector, own, &mut sites);
            }
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding" | "MutatingAdmissionPolicyBinding") => {
            let resources = object.get("spec").and_then(|s| s.get("matchResources"));
            let path = [Step::Key("spec"), Step::Key("matchResources"), Step::Key("namespaceSelector")];
            selector_sites(resources.and_then(|r| r.get("namespaceSelector")), &path, own, &mut sites);
        }
        ("apiregistration.k8s.io", "APIService") => {
            at(
                &mut sites,
                &[Step::Key("spec"), Step::Key("service")],
                object.get("spec").and_then(|s| s.get("service")),
            );
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            let webhook = object.get("spec").and_then(|s| s.get("conversion")).and_then(|c| c.get("webhook"));
            let path = ["spec", "conversion", "webhook", "clientConfig", "service"].map(Step::Key);
            at(&mut sites, &path, webhook.and_then(|w| w.get("clientConfig")).and_then(|c| c.get("service")));
        }
        ("", "Namespace")
            if object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str) == Some(own) =>
        {
            sites.push(Site(vec![Step::Key("metadata"), Step::Key("name")]));
        }
        _ => {}
    }
    sites
}

/// Where a namespace selector names namespace `own` by its name label: every namespace carries
/// `kubernetes.io/metadata.name: <its name>` (set by the API server since 1.21,
/// `pkg/registry/core/namespace/strategy.go`), so a webhook that exempts (`NotIn`) or targets its
/// own namespace through it must name the namespace it moved to, or it would judge its own objects
/// (gatekeeper's webhooks exempt `gatekeeper-system` so).
fn selector_sites(selector: Option<&Value>, path: &[Step], own: &str, sites: &mut Vec<Site>) {
    const NAME_LABEL: &str = "kubernetes.io/metadata.name";
    let Some(selector) = selector else { return };
    let site = |tail: &[Step]| Site(path.iter().chain(tail).copied().collect());
    if selector.get("matchLabels").and_then(|m| m.get(NAME_LABEL)).and_then(Value::as_str) == Some(own) {
        sites.push(site(&[Step::Key("matchLabels"), Step::Key(NAME_LABEL)]));
    }
    for (e, expression) in items(selector.get("matchExpressions")) {
        if expression.get("key").and_then(Value::as_str) != Some(NAME_LABEL) {
            continue;
        }
        for (v, value) in items(expression.get("values")) {
            if value.as_str() == Some(own) {
                sites.push(site(&[Step::Key("matchExpressions"), Step::Index(e), Step::Key("values"), Step::Index(v)]));
            }
        }
    }
}

/// The elements of a sequence with their indexes (none for anything else).
fn items(value: Option<&Value>) -> impl Iterator<Item = (usize, &Value)> {
    value.and_then(Value::as_sequence).map(|items| items.as_slice()).unwrap_or_default().iter().enumerate()
}

/// The instance's own `v1 Namespace` (`createNamespace = true`), unlabelled.
pub fn namespace_object(name: &str) -> Value {
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), name.into());
    let mut namespace = Mapping::new();
    namespace.insert("apiVersion".into(), "v1".into());
    namespace.insert("kind".into(), "Namespace".into());
    namespace.insert("metadata".into(), Value::Mapping(metadata));
    Value::Mapping(namespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        kix_yaml::from_str(text).expect("test YAML")
    }

    /// (group, kind, object, path to the reference, its value after moving `src` to `dst`).
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [&'a str], Option<&'a str>);

    // Each reference kind: rewritten when it names the package's namespace, kept otherwise.
    #[test]
    fn references_to_the_package_namespace_move() {
        let cases: &[Case<'_>] = &[
            (
                "rbac.authorization.k8s.io",
                "ClusterRoleBinding",
                "subjects: [{kind: ServiceAccount, name: a, namespace: src}, {kind: ServiceAccount, name: b, namespace: kube-system}, {kind: Group, name: src, namespace: src}]",
                &["subjects", "0", "namespace"],
                Some("dst"),
            ),
            (
                "rbac.authorization.k8s.io",
                "ClusterRoleBinding",
                "subjects: [{kind: ServiceAccount, name: a, namespace: src}, {kind: ServiceAccount, name: b, namespace: kube-system}]",
                &["subjects", "1", "namespace"],
                Some("kube-system"),
            ),
            (
                "rbac.authorization.k8s.io",
                "RoleBinding",
                "subjects: [{kind: Group, name: g, namespace: src}]",
                &["subjects", "0", "namespace"],
                Some("src"),
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                "webhooks: [{name: a, clientConfig: {url: 'https://x'}}, {name: b, clientConfig: {service: {name: s, namespace: src}}}]",
                &["webhooks", "1", "clientConfig", "service", "namespace"],
                Some("dst"),
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                "webhooks: [{name: a, namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, src]}]}}]",
                &["webhooks", "0", "namespaceSelector", "matchExpressions", "0", "values", "1"],
                Some("dst"),
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                "webhooks: [{name: a, namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, src]}]}}]",
                &["webhooks", "0", "namespaceSelector", "matchExpressions", "0", "values", "0"],
                Some("kube-system"),
            ),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
                "webhooks: [{name: a, namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: src}}}]",
                &["webhooks", "0", "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name"],
                Some("dst"),
            ),
            // Another label's value that happens to equal the namespace's name is not a namespace's name.
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
                "webhooks: [{name: a, namespaceSelector: {matchExpressions: [{key: team, operator: In, values: [src]}]}}]",
                &["webhooks", "0", "namespaceSelector", "matchExpressions", "0", "values", "0"],
                Some("src"),
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingAdmissionPolicyBinding",
                "spec: {matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: src}}}}",
                &["spec", "matchResources", "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name"],
                Some("dst"),
            ),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
                "webhooks: [{name: b, clientConfig: {service: {name: s, namespace: other}}}]",
                &["webhooks", "0", "clientConfig", "service", "namespace"],
                Some("other"),
            ),
            (
                "apiregistration.k8s.io",
                "APIService",
                "spec: {service: {name: s, namespace: src}}",
                &["spec", "service", "namespace"],
                Some("dst"),
            ),
            (
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                "spec: {conversion: {strategy: Webhook, webhook: {clientConfig: {service: {name: s, namespace: src}}}}}",
                &["spec", "conversion", "webhook", "clientConfig", "service", "namespace"],
                Some("dst"),
            ),
            ("", "Namespace", "metadata: {name: src}", &["metadata", "name"], Some("dst")),
            ("", "Namespace", "metadata: {name: elsewhere}", &["metadata", "name"], Some("elsewhere")),
            // Kinds kix does not know are left alone.
            (
                "example.com",
                "Thing",
                "spec: {service: {namespace: src}}",
                &["spec", "service", "namespace"],
                Some("src"),
            ),
        ];
        for (group, kind, text, path, expected) in cases {
            let mut object = yaml(text);
            rewrite_references(&mut object, group, kind, "src", "dst");
            let found = path.iter().try_fold(&object, |value, key| match key.parse::<usize>() {
                Ok(index) => value.as_sequence().and_then(|s| s.get(index)),
                Err(_) => value.get(key),
            });
            assert_eq!(found.and_then(Value::as_str), *expected, "{kind} {text}");
        }
    }

    #[test]
    fn the_same_namespace_changes_nothing() {
        let mut object = yaml("subjects: [{kind: ServiceAccount, name: a, namespace: src}]");
        let before = object.clone();
        rewrite_references(&mut object, "rbac.authorization.k8s.io", "RoleBinding", "src", "src");
        assert_eq!(object, before);
    }
}
