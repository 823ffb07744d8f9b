//! Checks over one instance's objects: every one must pass the API server's
//! validation, and no two may share group, kind and name.

use crate::resolve::Package;
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_yaml::Value;
use std::collections::BTreeMap;

/// Where an emitted object came from: a user's document, or derived for the workload in that document.
pub struct Origin {
    /// Index into the package's documents.
    pub document: usize,
    pub derived_for: Option<String>,
}

/// Every emitted object must pass kix's own Kubernetes validation: a manifest the API server
/// refuses fails the GitOps sync long after `kix build` said it was fine. Users' objects get one
/// error each (located at the first bad field); a derived object that fails is a kix bug.
pub fn report_invalid_objects(
    objects: &[Value],
    origins: &[Origin],
    package: &Package,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    for (object, origin) in objects.iter().zip(origins) {
        let problems = kix_kube::validate::validate_object(object);
        let Some(first) = problems.first() else { continue };
        let joined = problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
        let document = &package.documents[origin.document];
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
        let (message, location) = match &origin.derived_for {
            Some(workload) => (
                format!("kix derived an invalid {kind} {name} for {workload} (a kix bug; please report it): {joined}"),
                document.location(),
            ),
            None => (
                format!("{kind} {name} would be refused by the API server: {joined}"),
                document.locate_field(&first.path),
            ),
        };
        diagnostics.push(Diagnostic::new(Code::InvalidObject, message).at(location).about(subject));
    }
}

/// Two objects of one instance with the same group, kind, namespace and name would overwrite each
/// other on apply. The namespace is the one each object is emitted in (after `derive::namespaces`
/// placed it): kube-prometheus ships a Role `prometheus-k8s` in each of `default`, `kube-system` and
/// `monitoring`, three objects, and cluster-scoped objects have none.
pub fn report_duplicate_objects(
    objects: &[Value],
    origins: &[Origin],
    package: &Package,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    let identity = |object: &Value| {
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let group = kix_kube::kind::api_group(api_version).to_string();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let metadata = object.get("metadata");
        let namespace = metadata.and_then(|m| m.get("namespace")).and_then(Value::as_str).unwrap_or_default();
        let name = metadata.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
        (group, kind, namespace.to_string(), name.to_string())
    };
    let mut first_seen: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
    for (index, object) in objects.iter().enumerate() {
        let key = identity(object);
        let Some(&first) = first_seen.get(&key) else {
            first_seen.insert(key, index);
            continue;
        };
        let (_, kind, namespace, name) = &key;
        let describe = |origin: &Origin| match &origin.derived_for {
            Some(workload) => format!("the one kix derives for {workload}"),
            None => {
                let at = &package.documents[origin.document].location();
                format!("{}{}", at.path().display(), at.line().map_or(String::new(), |l| format!(":{l}")))
            }
        };
        // Point at a user's document: the second one when both are, else whichever is.
        let (here, other) = if origins[index].derived_for.is_none() {
            (&origins[index], &origins[first])
        } else {
            (&origins[first], &origins[index])
        };
        diagnostics.push(
            Diagnostic::new(
                Code::DuplicateObject,
                match namespace.as_str() {
                    "" => format!("{kind} {name} is defined twice: here and {}", describe(other)),
                    _ => format!(
                        "{kind} {name} is defined twice in namespace `{namespace}`: here and {}",
                        describe(other)
                    ),
                },
            )
            .at(package.documents[here.document].location())
            .about(subject),
        );
    }
}
