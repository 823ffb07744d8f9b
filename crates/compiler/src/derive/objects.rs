//! Checks over one instance's objects: every one must pass the API server's
//! validation, and no two may share group, kind and name.

use super::planned_object::{Origin, PlannedObject};
use super::subjects;
use crate::load::documents::Document;
use crate::resolve::Package;
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_yaml::Value;
use std::collections::BTreeMap;

/// The user's document an object came from and, for an object kix derived, what it was derived for
/// (`Deployment api`). `None` for the instance's own Namespace, which no document wrote: it is valid by
/// construction and added after these checks (see `derive_instance`).
fn source(origin: Origin, package: &Package) -> Option<(&Document, Option<String>)> {
    match origin {
        Origin::Document(document) => Some((&package.documents[document], None)),
        Origin::Budget(workload) => {
            let workload = &package.workloads[workload];
            let derived_for = format!("{} {}", workload.kind().as_str(), workload.name());
            Some((&package.documents[workload.document], Some(derived_for)))
        }
        Origin::GroupBudget(group) => {
            let group = &package.groups[group];
            let first = &package.workloads[group.members.first()?.workload];
            Some((&package.documents[first.document], Some(format!("group {}", group.name))))
        }
        Origin::Namespace => None,
    }
}

/// Every emitted object must pass kix's own Kubernetes validation: a manifest the API server
/// refuses fails the GitOps sync long after `kix build` said it was fine. Users' objects get one
/// error each (located at the first bad field); a derived object that fails is a kix bug.
pub fn report_invalid_objects(
    objects: &[PlannedObject],
    package: &Package,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    for PlannedObject { value: object, origin, .. } in objects {
        let Some((document, derived_for)) = source(*origin, package) else { continue };
        let problems = kix_kube::validate::validate_object(object);
        let Some(first) = problems.first() else { continue };
        let joined = problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
        let (message, location) = match derived_for {
            Some(workload) => (
                format!("kix derived an invalid {kind} {name} for {workload} (a kix bug; please report it): {joined}"),
                document.location(),
            ),
            None => (
                format!("{kind} {name} would be refused by the API server: {joined}"),
                document.locate_field(&first.path),
            ),
        };
        let mut diagnostic = Diagnostic::new(Code::InvalidObject, message).at(location).about(subject);
        if first.reason == "Required value"
            && let Some(help) = subjects::help(object, &first.path, package)
        {
            diagnostic = diagnostic.help(help);
        }
        diagnostics.push(diagnostic);
    }
}
/// Two objects of one instance with the same group, kind, namespace and name would overwrite each
/// other on apply. The namespace is the one each object is emitted in (after `derive::namespaces`
/// placed it): kube-prometheus ships a Role `prometheus-k8s` in each of `default`, `kube-system` and
/// `monitoring`, three objects, and cluster-scoped objects have none.
pub fn report_duplicate_objects(
    objects: &[PlannedObject],
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
    for (index, planned) in objects.iter().enumerate() {
        let key = identity(&planned.value);
        let Some(&first) = first_seen.get(&key) else {
            first_seen.insert(key, index);
            continue;
        };
        let (Some(this), Some(that)) = (source(objects[index].origin, package), source(objects[first].origin, package))
        else {
            continue;
        };
        let (_, kind, namespace, name) = &key;
        let describe = |(document, derived_for): &(&Document, Option<String>)| match derived_for {
            Some(workload) => format!("the one kix derives for {workload}"),
            None => {
                let at = document.location();
                format!("{}{}", at.path().display(), at.line().map_or(String::new(), |l| format!(":{l}")))
            }
        };
        // Point at a user's document: the second one when both are, else whichever is.
        let (here, other) = if this.1.is_none() { (&this, &that) } else { (&that, &this) };
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
            .at(here.0.location())
            .about(subject),
        );
    }
}
