//! Strings that name the namespace a package was written for (issue 19, part 4): kix moves
//! `meta.namespace` and the typed references to it, but never looks inside free text, so a
//! container argument (`--exempt-namespace=gatekeeper-system`, gatekeeper's), an environment value,
//! a ConfigMap's data or a Secret's `stringData` (`prometheus-k8s.monitoring.svc`) keeps naming the old namespace after a
//! move. Each object that does gets one warning (K0209) naming the fields, so the user knows what
//! to check; the strings are left as written.
//!
//! A namespace is taken as named where it stands as a reference would: the whole string, a flag's
//! value (`=NS`), the namespace of a `NS/name` pair, or a DNS name's namespace part (`NAME.NS.svc`).
//! A path segment (`k8s.io/ingress-nginx`) or part of a longer name (`ingress-nginx-controller`)
//! is not a namespace.

use super::model::{Instance, NamespaceInStrings, Package};
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_yaml::Value;

/// K0209 for each object of the instance whose strings name the package's own namespace, when the
/// instance runs elsewhere. Which objects and fields do is the package's (read once per package version).
pub(super) fn report(cluster: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
    let Some(own) = &instance.package.namespaces.own else { return };
    if own.value == instance.namespace {
        return;
    }
    let found = instance.package.namespace_strings.get_or_init(|| naming_documents(&instance.package, &own.value));
    for NamespaceInStrings { document, fields, first_at } in found {
        let document = &instance.package.documents[*document];
        let fields = if fields.len() > 4 {
            format!("{} and {} more", fields[..3].join(", "), fields.len() - 3)
        } else {
            fields.join(", ")
        };
        diagnostics.push(
            Diagnostic::new(
                Code::NamespaceInString,
                format!(
                    "cluster `{cluster}` instance `{}`: {} {} names namespace `{}` (meta.namespace, which kix moves to \
                     `{}`) in {fields}; kix does not rewrite strings",
                    instance.name,
                    document.kind(),
                    document.name(),
                    own.value,
                    instance.namespace
                ),
            )
            .at(first_at.clone())
            .with_label(own.from.clone(), "the namespace the package was written for")
            .about(&instance.subject)
            .help(format!(
                "check whether the string should name `{}`; where it reads the pod's own namespace, the downward \
                 API (`valueFrom.fieldRef.fieldPath: metadata.namespace`) follows every move. Acknowledge with allow = \
                 [\"K0209\"] once checked",
                instance.namespace
            )),
        );
    }
}

/// The documents of the package whose strings name namespace `own`, with the fields that do.
fn naming_documents(package: &Package, own: &str) -> Vec<NamespaceInStrings> {
    let mut documents = Vec::new();
    for (index, document) in package.documents.iter().enumerate() {
        let mut fields: Vec<String> = Vec::new();
        let mut first_at = None;
        for (path, value) in candidate_strings(&document.value) {
            if names_namespace(value, own) {
                // A data key may hold dots (`datasources.yaml`): located by its key, not a field path.
                first_at.get_or_insert_with(|| match path.split_once('.') {
                    Some((field @ ("data" | "stringData"), key)) => document.locate(&[field, key]),
                    _ => document.locate_field(&path),
                });
                fields.push(path);
            }
        }
        if let Some(first_at) = first_at {
            documents.push(NamespaceInStrings { document: index, fields, first_at });
        }
    }
    documents
}

/// The strings kix looks in, with their field paths: pod specs' container `args`, `command` and `env`
/// values, a ConfigMap's `data` and a Secret's `stringData`.
fn candidate_strings(object: &Value) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    let data = match kind {
        "ConfigMap" => Some("data"),
        // A Secret's `data` is base64; `stringData` is text as written.
        "Secret" => Some("stringData"),
        _ => None,
    };
    if let Some(field) = data {
        if let Some(data) = object.get(field).and_then(Value::as_mapping) {
            for (key, value) in data.iter() {
                if let (Some(key), Some(text)) = (key.as_str(), value.as_str()) {
                    out.push((format!("{field}.{key}"), text));
                }
            }
        }
        return out;
    }
    let specs: [&[&str]; 3] =
        [&["spec"], &["spec", "template", "spec"], &["spec", "jobTemplate", "spec", "template", "spec"]];
    for spec_path in specs {
        let Some(spec) = spec_path.iter().try_fold(object, |v, k| v.get(k)) else { continue };
        let prefix = spec_path.join(".");
        for list in ["containers", "initContainers"] {
            let Some(containers) = spec.get(list).and_then(Value::as_sequence) else { continue };
            for (c, container) in containers.iter().enumerate() {
                for field in ["args", "command"] {
                    let Some(items) = container.get(field).and_then(Value::as_sequence) else { continue };
                    for (i, item) in items.iter().enumerate() {
                        if let Some(text) = item.as_str() {
                            out.push((format!("{prefix}.{list}[{c}].{field}[{i}]"), text));
                        }
                    }
                }
                let Some(env) = container.get("env").and_then(Value::as_sequence) else { continue };
                for (e, var) in env.iter().enumerate() {
                    if let Some(text) = var.get("value").and_then(Value::as_str) {
                        out.push((format!("{prefix}.{list}[{c}].env[{e}].value"), text));
                    }
                }
            }
        }
    }
    out
}

/// Whether `text` names `namespace` where a reference to a namespace stands (see the module comment), on
/// a line that is not a comment (`#` or `//`: a configuration file's commented-out sample names nothing).
fn names_namespace(text: &str, namespace: &str) -> bool {
    text.lines()
        .filter(|line| !(line.trim_start().starts_with('#') || line.trim_start().starts_with("//")))
        .any(|line| line_names_namespace(line, namespace))
}

fn line_names_namespace(text: &str, namespace: &str) -> bool {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut from = 0;
    while let Some(at) = text[from..].find(namespace) {
        let start = from + at;
        let end = start + namespace.len();
        from = start + 1;
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        // Part of a longer name: not this namespace.
        if before.is_some_and(is_name_char) || after.is_some_and(is_name_char) {
            continue;
        }
        let rest = &text[end..];
        let dns = rest.starts_with(".svc");
        let opens = before.is_none_or(|c| matches!(c, '=' | ',' | ' ' | '\n' | '\t' | ':' | '"' | '\'' | '[' | '('));
        let closes = after.is_none_or(|c| matches!(c, ',' | ' ' | '\n' | '\t' | '"' | '\'' | ']' | ')' | '/'));
        if dns || (opens && closes && before != Some('/')) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::names_namespace;

    #[test]
    fn namespace_strings_are_found_where_a_namespace_stands() {
        for (text, expected) in [
            ("gatekeeper-system", true),
            ("--exempt-namespace=gatekeeper-system", true),
            ("--publish-service=gatekeeper-system/svc", true),
            ("http://prometheus.gatekeeper-system.svc:9090", true),
            ("prometheus.gatekeeper-system.svc.cluster.local", true),
            ("namespaces: [default, gatekeeper-system]", true),
            ("namespaces:\n  - gatekeeper-system\n", true),
            ("# namespace: gatekeeper-system\nother: x\n", false),
            ("--namespaces=a,gatekeeper-system,b", true),
            // Not a namespace: part of a longer name, a path segment, a domain that is no service.
            ("gatekeeper-system-controller", false),
            ("--controller-class=k8s.io/gatekeeper-system", false),
            ("my-gatekeeper-system", false),
            ("gatekeeper-system.example.com", false),
            ("", false),
        ] {
            assert_eq!(names_namespace(text, "gatekeeper-system"), expected, "{text:?}");
        }
    }
}
