//! ServiceAccount subjects written without a namespace (issue 43, part 3).
//!
//! A package written for a kustomization that supplies the namespace (`namespace:` in
//! kustomization.yaml, which kix skips: K0112) binds its ServiceAccounts with subjects that name
//! none; kustomize fills them in: its nameReference transformer gives a subject the name and
//! namespace of the ServiceAccount of that name it renders (`api/filters/nameref/nameref.go`,
//! `setMapping`, for the `subjects` field specs of `namereference.go`), and the namespace
//! transformer a kustomization's `namespace:` runs (mode `DefaultSubjectsOnly`) writes it only into
//! subjects named `default` (`api/filters/namespace/namespace.go`, `setSubjectsNamedDefault`). The
//! API server refuses a ClusterRoleBinding's ServiceAccount subject without one
//! (`pkg/apis/rbac/validation/validation.go`, `validateRoleBindingSubject`); a RoleBinding's means
//! the binding's own namespace.
//!
//! kix fills such a subject when it names a ServiceAccount of the package, as kustomize's
//! nameReference does: the namespace is the one that ServiceAccount lands
//! in, the instance's (then the place is a [`Site`], stamped per instance like every reference to
//! the instance's namespace) or the one `meta.keepNamespaces` keeps it in. A RoleBinding's subject
//! is filled only where its ServiceAccount lands outside the binding's namespace: there, unfilled, it
//! would name the binding's namespace's account; where both land together it already means the
//! right one and stays byte for byte as written. A subject that names no ServiceAccount of the
//! package (or one the package ships in more than one namespace) is left as written: in a
//! ClusterRoleBinding the API server's rule then refuses it (K0414, [`help`] says what to write).

use super::namespaces::{Placement, Site};
use crate::resolve::Package;
use kix_yaml::{Mapping, Value};

/// Where a ServiceAccount of the package lands.
fn landing(package: &Package, placements: &[Option<Placement>], name: &str) -> Option<Placement> {
    let mut found: Option<&Placement> = None;
    for (document, placement) in package.documents.iter().zip(placements) {
        if document.group() != "" || document.kind() != "ServiceAccount" || document.name() != name {
            continue;
        }
        match (placement, found) {
            (Some(p @ (Placement::Instance | Placement::Kept(_))), None) => found = Some(p),
            (Some(p), Some(seen)) if p != seen => return None,
            _ => {}
        }
    }
    found.cloned()
}

/// Fills the ServiceAccount subjects of a RoleBinding or ClusterRoleBinding (`group`, `kind`; a
/// RoleBinding lands at `binding`) that name no namespace and a ServiceAccount of the package;
/// returns the places that take the instance's namespace (written when the object's instance fields
/// are).
pub fn fill_subject_namespaces(
    object: &mut Value,
    group: &str,
    kind: &str,
    binding: Option<&Placement>,
    package: &Package,
    placements: &[Option<Placement>],
) -> Vec<Site> {
    let mut sites = Vec::new();
    if group != "rbac.authorization.k8s.io" || !matches!(kind, "RoleBinding" | "ClusterRoleBinding") {
        return sites;
    }
    let Some(subjects) = object.get_mut("subjects").and_then(Value::as_sequence_mut) else { return sites };
    for (index, subject) in subjects.iter_mut().enumerate() {
        let Some(map) = subject.as_mapping_mut() else { continue };
        let text = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        if text("kind") != "ServiceAccount" || !text("namespace").is_empty() {
            continue;
        }
        let landing = landing(package, placements, &text("name"));
        if kind == "RoleBinding" && landing.as_ref() == binding {
            continue;
        }
        let value = match landing {
            Some(Placement::Instance) => {
                sites.push(Site::subject_namespace(index));
                String::new()
            }
            Some(Placement::Kept(namespace)) => namespace,
            _ => continue,
        };
        set_after_name(map, value);
    }
    sites
}

/// Sets `namespace` in a subject, right after its `name` (where people write it).
fn set_after_name(map: &mut Mapping, namespace: String) {
    if map.contains_key("namespace") {
        map.insert("namespace".into(), namespace.into());
        return;
    }
    let old = std::mem::take(map);
    let mut placed = false;
    for (key, value) in old {
        let after = key.as_str() == Some("name");
        map.insert(key, value);
        if after {
            map.insert("namespace".into(), namespace.clone().into());
            placed = true;
        }
    }
    if !placed {
        map.insert("namespace".into(), namespace.into());
    }
}

/// The help of K0414 for a ServiceAccount subject refused for naming no namespace: the subject at
/// `subjects[index]` of `object`, in `package`. None when the first problem is another.
pub fn help(object: &Value, path: &str, package: &Package) -> Option<String> {
    let index: usize = path.strip_prefix("subjects[")?.strip_suffix("].namespace")?.parse().ok()?;
    let subject = object.get("subjects")?.as_sequence()?.get(index)?;
    let name = subject.get("name").and_then(Value::as_str).unwrap_or_default();
    let shipped =
        package.documents.iter().any(|d| d.group().is_empty() && d.kind() == "ServiceAccount" && d.name() == name);
    let mut help = if shipped {
        format!(
            "the package ships ServiceAccount `{name}` in more than one namespace, so kix cannot tell which one the \
             subject means: write its namespace at subjects[{index}].namespace"
        )
    } else {
        format!(
            "the package ships no ServiceAccount `{name}` whose namespace kix could write here: write the namespace \
             that ServiceAccount runs in at subjects[{index}].namespace, or ship the ServiceAccount in the package"
        )
    };
    if let Some(supplied) = &package.kustomization_namespace {
        // kustomize writes its namespace only into a subject named `default` (or one naming a
        // ServiceAccount it renders, which this one does not).
        let kustomize = if name == "default" {
            "which kustomize writes into a subject named `default` and kix skips (K0112)"
        } else {
            "which kix skips (K0112; kustomize would not write it here either: it fills a subject from a \
             ServiceAccount it renders, or one named `default`)"
        };
        help.push_str(&format!(
            "; the package's kustomization sets namespace `{supplied}`, {kustomize}: if the ServiceAccount runs \
             there, write `namespace: {supplied}` in the subject and set meta.namespace = \"{supplied}\" in kix.toml, \
             and kix moves it to each instance's namespace"
        ));
    }
    Some(help)
}
