//! The API server's rules for any object, whatever its kind (issue 19, part 5): the shape of
//! `apiVersion`, the object's name and `generateName` by kind, the size limits, and the structural
//! rules of a CustomResourceDefinition. [`super::validate`] runs them on every object kix emits.
//!
//! Upstream, each rule:
//! - `apiVersion`: `schema.ParseGroupVersion` (apimachinery `pkg/runtime/schema/group_version.go`)
//!   refuses more than one `/`, and a version must be given.
//! - Names (`pkg/apis/core/validation/validation.go`, `ValidateObjectMeta` with the kind's name
//!   function; `prefix` for `generateName`, which may end in `-`): a Service's is a DNS-1035 label
//!   (`ValidateServiceName = NameIsDNS1035Label`), a Namespace's a DNS-1123 label
//!   (`ValidateNamespaceName`), RBAC objects' a path segment (`pkg/apis/rbac/validation`,
//!   `ValidateRBACName = path.IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`), a
//!   CustomResourceDefinition's `<spec.names.plural>.<spec.group>` and an APIService's
//!   `<spec.version>.<spec.group>` (`ValidateCustomResourceDefinition`,
//!   `ValidateAPIService`), every other kind's (custom resources too,
//!   `customResourceStrategy.Validate`) a DNS-1123 subdomain.
//! - Sizes: annotations at most 256 KiB in all (`TotalAnnotationSizeLimitB`,
//!   apimachinery `pkg/api/validation/objectmeta.go`); a ConfigMap's or Secret's data at most 1 MiB
//!   (`MaxSecretSize`, `ValidateConfigMap`, `ValidateSecret`); an object at most 1.5 MiB, etcd's
//!   default request limit (`--max-request-bytes`, `embed.DefaultMaxRequestBytes`).
//! - CustomResourceDefinitions (`apiextensions-apiserver/pkg/apis/apiextensions/validation`):
//!   `spec.group` a DNS subdomain with a dot, `spec.scope` Cluster or Namespaced, `spec.names.plural`
//!   and the lower-cased `kind` DNS-1035 labels, versions named by DNS-1035 labels, each once,
//!   exactly one of them the storage version, and every schema `type` one of the six the structural
//!   schema allows.

use super::error::ObjectError;
use crate::names::{dns1123_label, dns1123_subdomain};
use kix_yaml::Value;

/// Annotations' total size limit, keys and values (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_LIMIT: usize = 256 * 1024;
/// A ConfigMap's or Secret's data limit (`MaxSecretSize`).
const DATA_LIMIT: usize = 1024 * 1024;
/// etcd's default request limit: no object larger can be stored.
const OBJECT_LIMIT: usize = 1024 * 1024 * 3 / 2;
/// The schema types a structural schema allows.
const SCHEMA_TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// Every problem of `object` under these rules.
pub fn check(object: &Value) -> Vec<ObjectError> {
    let mut problems = Vec::new();
    let mut push = |path: &str, reason: String| problems.push(ObjectError { path: path.to_string(), reason });
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    if let Err(why) = api_version_shape(api_version) {
        push("apiVersion", why);
    }
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    let metadata = object.get("metadata");
    let name = metadata.and_then(|m| m.get("name")).and_then(Value::as_str);
    if let Some(name) = name {
        if let Err(why) = name_rule(object, group, kind, name, false) {
            push("metadata.name", format!("`{name}` {why}"));
        }
    }
    if let Some(prefix) = metadata.and_then(|m| m.get("generateName")).and_then(Value::as_str) {
        if let Err(why) = name_rule(object, group, kind, prefix, true) {
            push("metadata.generateName", format!("`{prefix}` {why}"));
        }
    }
    if let Some(annotations) = metadata.and_then(|m| m.get("annotations")).and_then(Value::as_mapping) {
        let total: usize =
            annotations.iter().map(|(k, v)| k.as_str().map_or(0, str::len) + v.as_str().map_or(0, str::len)).sum();
        if total > ANNOTATIONS_LIMIT {
            push(
                "metadata.annotations",
                format!("must have at most {ANNOTATIONS_LIMIT} bytes in all (they have {total})"),
            );
        }
    }
    if let Some(size) = data_size(object, group, kind) {
        if size > DATA_LIMIT {
            push("data", format!("must have at most {DATA_LIMIT} bytes in all (it has {size})"));
        }
    }
    let size = json_size(object);
    if size > OBJECT_LIMIT {
        push("", format!("the object is {size} bytes as JSON, above the {OBJECT_LIMIT} bytes etcd stores by default"));
    }
    if group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition" {
        problems.extend(crd_problems(object));
    }
    problems
}

/// `version` or `group/version`.
fn api_version_shape(api_version: &str) -> Result<(), String> {
    if api_version.matches('/').count() > 1 {
        return Err(format!("`{api_version}` is not `version` or `group/version`"));
    }
    match api_version.split_once('/') {
        Some((group, version)) if group.is_empty() || version.is_empty() => {
            Err(format!("`{api_version}` has an empty group or version"))
        }
        _ => Ok(()),
    }
}

/// The kind's name rule (`prefix`: a `generateName`, which may end in `-`).
fn name_rule(object: &Value, group: &str, kind: &str, name: &str, prefix: bool) -> Result<(), String> {
    // A generated name's prefix may end in the dash the random suffix follows.
    let checked = if prefix { name.strip_suffix('-').unwrap_or(name) } else { name };
    let spec =
        |path: &[&str]| path.iter().try_fold(object, |v, k| v.get(k)).and_then(Value::as_str).map(str::to_string);
    match (group, kind) {
        ("", "Service") => {
            dns1035_label(checked).map_err(|why| format!("is not a DNS-1035 label (a Service's name): {why}"))
        }
        ("", "Namespace") => dns1123_label(checked).map_err(|why| format!("is not a DNS-1123 label: {why}")),
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding") => {
            path_segment(name).map_err(|why| format!("is not a valid path segment: {why}"))
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") if !prefix => {
            let expected = format!(
                "{}.{}",
                spec(&["spec", "names", "plural"]).unwrap_or_default(),
                spec(&["spec", "group"]).unwrap_or_default()
            );
            (name == expected)
                .then_some(())
                .ok_or(format!("must be spec.names.plural + \".\" + spec.group (`{expected}`)"))
        }
        ("apiregistration.k8s.io", "APIService") if !prefix => {
            let expected = format!(
                "{}.{}",
                spec(&["spec", "version"]).unwrap_or_default(),
                spec(&["spec", "group"]).unwrap_or_default()
            );
            (name == expected).then_some(()).ok_or(format!("must be spec.version + \".\" + spec.group (`{expected}`)"))
        }
        _ => dns1123_subdomain(checked).map_err(|why| format!("is not a DNS-1123 subdomain: {why}")),
    }
}

/// A DNS-1035 label: a DNS-1123 label that starts with a letter.
fn dns1035_label(name: &str) -> Result<(), String> {
    dns1123_label(name)?;
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err("must start with a lower-case letter".into());
    }
    Ok(())
}

/// `path.IsValidPathSegmentName`.
pub(super) fn path_segment(name: &str) -> Result<(), String> {
    if name == "." || name == ".." {
        return Err(format!("may not be `{name}`"));
    }
    for forbidden in ['/', '%'] {
        if name.contains(forbidden) {
            return Err(format!("may not contain `{forbidden}`"));
        }
    }
    Ok(())
}

/// The bytes a ConfigMap's `data` and `binaryData`, or a Secret's decoded `data` and `stringData`, hold.
fn data_size(object: &Value, group: &str, kind: &str) -> Option<usize> {
    let values = |field: &str| -> Vec<&str> {
        object
            .get(field)
            .and_then(Value::as_mapping)
            .map_or_else(Vec::new, |m| m.iter().filter_map(|(_, v)| v.as_str()).collect())
    };
    let base64_decoded = |text: &str| (text.trim_end_matches('=').len() * 3) / 4;
    match (group, kind) {
        ("", "ConfigMap") => Some(
            values("data").iter().map(|v| v.len()).sum::<usize>()
                + values("binaryData").iter().map(|v| base64_decoded(v)).sum::<usize>(),
        ),
        ("", "Secret") => Some(
            values("data").iter().map(|v| base64_decoded(v)).sum::<usize>()
                + values("stringData").iter().map(|v| v.len()).sum::<usize>(),
        ),
        _ => None,
    }
}

/// The object's size as compact JSON, without building it.
fn json_size(value: &Value) -> usize {
    match value {
        Value::Mapping(map) => 2 + map.iter().map(|(k, v)| json_size(k) + 1 + json_size(v) + 1).sum::<usize>(),
        Value::Sequence(items) => 2 + items.iter().map(|v| json_size(v) + 1).sum::<usize>(),
        Value::String(text) => text.len() + 2,
        Value::Number(number) => number.to_string().len(),
        Value::Bool(_) | Value::Null => 5,
    }
}

/// A CustomResourceDefinition's structural rules.
fn crd_problems(object: &Value) -> Vec<ObjectError> {
    let mut problems = Vec::new();
    let mut push = |path: String, reason: String| problems.push(ObjectError { path, reason });
    let Some(spec) = object.get("spec") else { return problems };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    let group = text(spec.get("group"));
    if dns1123_subdomain(&group).is_err() || !group.contains('.') {
        push("spec.group".into(), format!("`{group}` must be a DNS-1123 subdomain with at least one dot"));
    }
    let scope = text(spec.get("scope"));
    if scope != "Cluster" && scope != "Namespaced" {
        push("spec.scope".into(), format!("`{scope}` must be Cluster or Namespaced"));
    }
    let names = spec.get("names");
    let plural = text(names.and_then(|n| n.get("plural")));
    if let Err(why) = dns1035_label(&plural) {
        push("spec.names.plural".into(), format!("`{plural}` is not a DNS-1035 label: {why}"));
    }
    let kind = text(names.and_then(|n| n.get("kind")));
    if let Err(why) = dns1035_label(&kind.to_ascii_lowercase()) {
        push("spec.names.kind".into(), format!("`{kind}` lower-cased is not a DNS-1035 label: {why}"));
    }
    let versions = spec.get("versions").and_then(Value::as_sequence).map_or(&[][..], Vec::as_slice);
    if versions.is_empty() {
        push("spec.versions".into(), "must have at least one version".into());
    }
    let mut seen: Vec<String> = Vec::new();
    let mut storage = 0;
    for (index, version) in versions.iter().enumerate() {
        let name = text(version.get("name"));
        if let Err(why) = dns1035_label(&name) {
            push(format!("spec.versions[{index}].name"), format!("`{name}` is not a DNS-1035 label: {why}"));
        }
        if seen.contains(&name) {
            push(format!("spec.versions[{index}].name"), format!("`{name}` is declared twice"));
        }
        seen.push(name);
        if version.get("storage").and_then(Value::as_bool) == Some(true) {
            storage += 1;
        }
        if let Some(schema) = version.get("schema").and_then(|s| s.get("openAPIV3Schema")) {
            schema_types(schema, &format!("spec.versions[{index}].schema.openAPIV3Schema"), &mut push);
        }
    }
    if !versions.is_empty() && storage != 1 {
        push(
            "spec.versions".into(),
            format!("must have exactly one version marked as the storage version (it has {storage})"),
        );
    }
    problems
}

/// Every `type` of a schema and its sub-schemas is one the structural schema allows.
fn schema_types(schema: &Value, path: &str, push: &mut impl FnMut(String, String)) {
    if let Some(kind) = schema.get("type") {
        match kind.as_str() {
            Some(name) if SCHEMA_TYPES.contains(&name) => {}
            _ => push(format!("{path}.type"), format!("must be one of {}", SCHEMA_TYPES.join(", "))),
        }
    }
    for field in ["properties", "patternProperties", "definitions"] {
        if let Some(map) = schema.get(field).and_then(Value::as_mapping) {
            for (key, sub) in map.iter() {
                let key = key.as_str().unwrap_or_default();
                schema_types(sub, &format!("{path}.{field}.{key}"), push);
            }
        }
    }
    for field in ["items", "additionalProperties", "not"] {
        if let Some(sub) = schema.get(field).filter(|s| s.is_mapping()) {
            schema_types(sub, &format!("{path}.{field}"), push);
        }
    }
    for field in ["allOf", "anyOf", "oneOf"] {
        for (index, sub) in schema.get(field).and_then(Value::as_sequence).into_iter().flatten().enumerate() {
            schema_types(sub, &format!("{path}.{field}[{index}]"), push);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    fn problems(text: &str) -> Vec<String> {
        let object = kix_yaml::from_str(text).expect("test YAML");
        check(&object).iter().map(ToString::to_string).collect()
    }

    /// (object, the first problem's start, or "" when valid): the API server's own cases (issue 19).
    #[test]
    fn object_rules_follow_the_api_server() {
        let crd = |name: &str, group: &str, versions: &str| {
            format!(
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: {name}}}\nspec: {{group: {group}, scope: Namespaced, names: {{plural: widgets, kind: Widget}}, versions: {versions}}}"
            )
        };
        let version = |name: &str, storage: bool, kind: &str| {
            format!(
                "{{name: {name}, served: true, storage: {storage}, schema: {{openAPIV3Schema: {{type: object, properties: {{spec: {{type: {kind}}}}}}}}}}}"
            )
        };
        let cases: Vec<(String, &str)> = vec![
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}".into(), ""),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: MyConfig}".into(), "metadata.name: `MyConfig` is not a DNS-1123 subdomain"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a/b}".into(), "metadata.name: `a/b` is not a DNS-1123 subdomain"),
            (format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {}}}", "s".repeat(64)), "metadata.name: `sss"),
            ("apiVersion: v1\nkind: Service\nmetadata: {name: my.svc}".into(), "metadata.name: `my.svc` is not a DNS-1035 label"),
            ("apiVersion: v1\nkind: Service\nmetadata: {name: 1st}".into(), "metadata.name: `1st` is not a DNS-1035 label (a Service's name): must start with a lower-case letter"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: my.config}".into(), ""),
            ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: 'system:aggregate-to-view'}".into(), ""),
            ("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: a/b}".into(), "metadata.name: `a/b` is not a valid path segment: may not contain `/`"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {generateName: job-}".into(), ""),
            ("apiVersion: v1\nkind: Pod\nmetadata: {generateName: Job-}".into(), "metadata.generateName: `Job-` is not a DNS-1123 subdomain"),
            ("apiVersion: a/b/c\nkind: Thing\nmetadata: {name: t}".into(), "apiVersion: `a/b/c` is not `version` or `group/version`"),
            ("apiVersion: example.com/\nkind: Thing\nmetadata: {name: t}".into(), "apiVersion: `example.com/` has an empty group or version"),
            (format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, annotations: {{a: {}}}}}", "x".repeat(300 * 1024)), "metadata.annotations: must have at most 262144 bytes in all"),
            (format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata: {{a: {}}}", "x".repeat(1024 * 1024 + 1)), "data: must have at most 1048576 bytes in all"),
            (format!("apiVersion: v1\nkind: Secret\nmetadata: {{name: big}}\nstringData: {{a: {}}}", "x".repeat(1024 * 1024 + 1)), "data: must have at most 1048576 bytes in all"),
            (format!("apiVersion: example.com/v1\nkind: Thing\nmetadata: {{name: big}}\nspec: {{a: {}}}", "x".repeat(1024 * 1024 * 2)), "the object is"),
            (crd("widgets.example.com", "example.com", &format!("[{}]", version("v1", true, "string"))), ""),
            (crd("widget.example.com", "example.com", &format!("[{}]", version("v1", true, "string"))), "metadata.name: `widget.example.com` must be spec.names.plural + \".\" + spec.group (`widgets.example.com`)"),
            (crd("widgets.example.com", "example.com", &format!("[{}]", version("v1", true, "widget"))), "spec.versions[0].schema.openAPIV3Schema.properties.spec.type: must be one of"),
            (crd("widgets.example.com", "example.com", &format!("[{}, {}]", version("v1", true, "string"), version("v2", true, "string"))), "spec.versions: must have exactly one version marked as the storage version (it has 2)"),
            (crd("widgets.example", "example", &format!("[{}]", version("v1", true, "string"))), "spec.group: `example` must be a DNS-1123 subdomain with at least one dot"),
            (crd("widgets.example.com", "example.com", &format!("[{}, {}]", version("v1", true, "string"), version("v1", false, "string"))), "spec.versions[1].name: `v1` is declared twice"),
            ("apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1beta1.metrics.k8s.io}\nspec: {group: metrics.k8s.io, version: v1beta1}".into(), ""),
            ("apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: metrics}\nspec: {group: metrics.k8s.io, version: v1beta1}".into(), "metadata.name: `metrics` must be spec.version"),
        ];
        for (text, expected) in cases {
            let found = problems(&text);
            let shown: String = text.chars().take(120).collect();
            if expected.is_empty() {
                assert!(found.is_empty(), "{shown}: {found:?}");
            } else {
                assert!(found.first().is_some_and(|p| p.starts_with(expected)), "{shown}: {found:?}");
            }
        }
    }
}
