//! The API server's rules for RoleBindings and ClusterRoleBindings (issue 43, part 3), as
//! kubernetes/kubernetes `pkg/apis/rbac/validation/validation.go` writes them:
//!
//! - `ValidateRoleBinding` / `ValidateClusterRoleBinding`: `roleRef.apiGroup` is
//!   `rbac.authorization.k8s.io`; `roleRef.kind` is `Role` or `ClusterRole` (a ClusterRoleBinding's
//!   only `ClusterRole`); `roleRef.name` is required and a path segment (`minimalNameRequirements`).
//! - `validateRoleBindingSubject`, per `subjects[i]`: `name` is required; a `ServiceAccount`'s name
//!   is a DNS-1123 subdomain (`ValidateServiceAccountName`), its `apiGroup` empty, and its
//!   `namespace` required in a ClusterRoleBinding (a RoleBinding's subject without one means the
//!   binding's namespace, which the authorizer fills in); a `User`'s or `Group`'s `apiGroup` is
//!   `rbac.authorization.k8s.io`; any other kind is not supported.
//!
//! The reasons are phrased as the API server's `field.Required` and `field.NotSupported` are.

use super::error::ObjectError;
use super::object_rules::path_segment;
use crate::names::dns1123_subdomain;
use kix_yaml::Value;

/// The RBAC API group (`rbac.GroupName`).
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// Every problem of a RoleBinding (`namespaced`) or ClusterRoleBinding under these rules.
pub fn check_binding(object: &Value, namespaced: bool) -> Vec<ObjectError> {
    let mut problems = Vec::new();
    let mut push = |path: String, reason: String| problems.push(ObjectError { path, reason });
    let role_ref = object.get("roleRef");
    let api_group = text(role_ref, "apiGroup");
    if api_group != GROUP {
        push("roleRef.apiGroup".into(), not_supported(api_group, &[GROUP]));
    }
    let kinds: &[&str] = if namespaced { &["Role", "ClusterRole"] } else { &["ClusterRole"] };
    let kind = text(role_ref, "kind");
    if !kinds.contains(&kind) {
        push("roleRef.kind".into(), not_supported(kind, kinds));
    }
    match text(role_ref, "name") {
        "" => push("roleRef.name".into(), "Required value".into()),
        name => {
            if let Err(why) = path_segment(name) {
                push("roleRef.name".into(), format!("Invalid value: `{name}`: {why}"));
            }
        }
    }
    let subjects = object.get("subjects").and_then(Value::as_sequence).map(Vec::as_slice).unwrap_or_default();
    for (i, subject) in subjects.iter().enumerate() {
        let at = |field: &str| format!("subjects[{i}].{field}");
        let name = text(Some(subject), "name");
        let api_group = text(Some(subject), "apiGroup");
        if name.is_empty() {
            push(at("name"), "Required value".into());
        }
        match text(Some(subject), "kind") {
            "ServiceAccount" => {
                if !name.is_empty()
                    && let Err(why) = dns1123_subdomain(name)
                {
                    push(at("name"), format!("Invalid value: `{name}`: {why}"));
                }
                if !api_group.is_empty() {
                    push(at("apiGroup"), not_supported(api_group, &[""]));
                }
                if !namespaced && text(Some(subject), "namespace").is_empty() {
                    push(at("namespace"), "Required value".into());
                }
            }
            kind @ ("User" | "Group") => {
                if name.is_empty() {
                    push(at("name"), format!("Invalid value: \"\": {} name cannot be empty", kind.to_lowercase()));
                }
                if api_group != GROUP {
                    push(at("apiGroup"), not_supported(api_group, &[GROUP]));
                }
            }
            other => push(at("kind"), not_supported(other, &["ServiceAccount", "User", "Group"])),
        }
    }
    problems
}

/// The string at `key` of a mapping, empty when absent (as Go's zero value reads).
fn text<'a>(value: Option<&'a Value>, key: &str) -> &'a str {
    value.and_then(|v| v.get(key)).and_then(Value::as_str).unwrap_or("")
}

/// `field.NotSupported`'s wording: the value and the values supported.
fn not_supported(value: &str, supported: &[&str]) -> String {
    let quoted: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
    format!("Unsupported value: \"{value}\": supported values: {}", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(kind: &str, body: &str) -> Vec<String> {
        let text = format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {{name: b}}\n{body}");
        let object = kix_yaml::from_str(&text).unwrap();
        check_binding(&object, kind == "RoleBinding").iter().map(ToString::to_string).collect()
    }

    const ROLE_REF: &str = "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n";

    #[test]
    fn bindings_follow_validate_role_binding() {
        // Upstream's TestValidateClusterRoleBinding / TestValidateRoleBinding cases, as fields.
        let ok = format!(
            "{ROLE_REF}subjects:\n- {{kind: ServiceAccount, name: sa, namespace: ns}}\n- {{kind: User, apiGroup: rbac.authorization.k8s.io, name: u}}\n- {{kind: Group, apiGroup: rbac.authorization.k8s.io, name: g}}\n"
        );
        assert_eq!(problems("ClusterRoleBinding", &ok), Vec::<String>::new());
        assert_eq!(problems("RoleBinding", &ok), Vec::<String>::new());
        let table: &[(&str, &str, &str)] = &[
            (
                "ClusterRoleBinding",
                "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}",
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
            ),
            (
                "RoleBinding",
                "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Secret, name: r}",
                "roleRef.kind: Unsupported value: \"Secret\": supported values: \"Role\", \"ClusterRole\"",
            ),
            (
                "RoleBinding",
                "roleRef: {apiGroup: rbac, kind: Role, name: r}",
                "roleRef.apiGroup: Unsupported value: \"rbac\": supported values: \"rbac.authorization.k8s.io\"",
            ),
            (
                "RoleBinding",
                "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role}",
                "roleRef.name: Required value",
            ),
            (
                "RoleBinding",
                "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: a/b}",
                "roleRef.name: Invalid value: `a/b`: may not contain `/`",
            ),
        ];
        for (kind, body, want) in table {
            assert_eq!(problems(kind, body), vec![want.to_string()], "{kind} {body}");
        }
    }

    #[test]
    fn subjects_follow_validate_role_binding_subject() {
        let table: &[(&str, &str, &str)] = &[
            ("ClusterRoleBinding", "{kind: ServiceAccount, name: sa}", "subjects[0].namespace: Required value"),
            (
                "ClusterRoleBinding",
                "{kind: ServiceAccount, name: sa, namespace: ''}",
                "subjects[0].namespace: Required value",
            ),
            (
                "ClusterRoleBinding",
                "{kind: ServiceAccount, name: sa, namespace: ns, apiGroup: rbac.authorization.k8s.io}",
                "subjects[0].apiGroup: Unsupported value: \"rbac.authorization.k8s.io\": supported values: \"\"",
            ),
            (
                "RoleBinding",
                "{kind: ServiceAccount, name: Bad_Name}",
                "subjects[0].name: Invalid value: `Bad_Name`: must consist of lower-case letters, digits, '-' and '.'",
            ),
            (
                "RoleBinding",
                "{kind: User, name: u}",
                "subjects[0].apiGroup: Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\"",
            ),
            (
                "RoleBinding",
                "{kind: Robot, name: r}",
                "subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
            ),
        ];
        for (kind, subject, want) in table {
            assert_eq!(
                problems(kind, &format!("{ROLE_REF}subjects: [{subject}]\n")),
                vec![want.to_string()],
                "{kind} {subject}"
            );
        }
        // An empty group name is two errors upstream: Required, and Invalid with the kind's words.
        assert_eq!(
            problems(
                "RoleBinding",
                &format!("{ROLE_REF}subjects: [{{kind: Group, apiGroup: rbac.authorization.k8s.io}}]\n")
            ),
            ["subjects[0].name: Required value", "subjects[0].name: Invalid value: \"\": group name cannot be empty"]
        );
        // A RoleBinding's ServiceAccount subject may leave its namespace to the binding's.
        assert_eq!(
            problems("RoleBinding", &format!("{ROLE_REF}subjects: [{{kind: ServiceAccount, name: sa}}]\n")),
            Vec::<String>::new()
        );
    }
}
