//! `[kinds."group/Kind"]`: a package's own profiles of custom resources that run pods (issue 18),
//! validated into the [`KindTable`] its documents are read with (each entry overrides kix's built-in
//! profile of its kind, `kix_kube::operators`).
//!
//! An entry's key must be `group/Kind`, its paths dotted field names under `spec`, its pod labels
//! valid label keys and values (K0439). Where the package ships the kind's CustomResourceDefinition,
//! every path must be a field its schema declares in some served version (K0437): a path the schema
//! does not know would be read as absent and written where the API server drops it.

use crate::load::documents::Document;
use crate::load::package::{KindBudget, KindController, RawKind, RawPackage};
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use kix_kube::operators::KindTable;
use kix_kube::profile::{Budget, Controller, FieldPath, Profile, intern};
use kix_kube::value::at;
use kix_yaml::Value;
use toml::Spanned;

/// The package's kind table: its valid `[kinds]` entries (each problem reported), then the built-in ones.
pub fn kind_table(
    raw: &RawPackage,
    documents: &[Document],
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> KindTable {
    let mut declared = Vec::new();
    for (key, entry) in &raw.kinds {
        let before = diagnostics.count(kix_diag::Severity::Error);
        let problem = |diagnostics: &mut Diagnostics, code: Code, at: std::ops::Range<usize>, message: String| {
            diagnostics.push(Diagnostic::new(code, message).at(manifest.locate(at)).about(subject));
        };
        let Some((group, kind)) = key.get_ref().rsplit_once('/').filter(|(g, k)| !g.is_empty() && !k.is_empty()) else {
            problem(
                diagnostics,
                Code::InvalidKind,
                key.span(),
                format!("[kinds.\"{}\"] is not `group/Kind` (e.g. `postgresql.cnpg.io/Cluster`)", key.get_ref()),
            );
            continue;
        };
        let crd = shipped_crd(documents, group, kind);
        let path = |field: &str, text: &Spanned<String>, diagnostics: &mut Diagnostics| -> Option<FieldPath> {
            match FieldPath::parse(text.get_ref()) {
                Err(why) => {
                    let message = format!("[kinds.\"{}\"] {field}: {why}", key.get_ref());
                    problem(diagnostics, Code::InvalidKind, text.span(), message);
                    None
                }
                Ok(path) => {
                    if let Some(crd) = crd {
                        if let Err(known) = declared_in_crd(crd, &path) {
                            let crd_name = kix_kube::value::str_at(crd, &["metadata", "name"]).unwrap_or(kind);
                            diagnostics.push(
                                Diagnostic::new(
                                    Code::KindPathNotInCrd,
                                    format!(
                                        "[kinds.\"{}\"] {field}: `{path}` is not a field of CustomResourceDefinition \
                                         {crd_name}'s schema",
                                        key.get_ref()
                                    ),
                                )
                                .at(manifest.locate(text.span()))
                                .about(subject)
                                .help(known),
                            );
                        }
                    }
                    Some(path)
                }
            }
        };
        let replicas = entry.replicas.as_ref().and_then(|t| path("replicas", t, diagnostics));
        let pod_template = entry.pod_template.as_ref().and_then(|t| path("podTemplate", t, diagnostics));
        let spread = entry.spread.as_ref().and_then(|t| path("topologySpreadConstraints", t, diagnostics));
        let pod_labels = pod_labels(key.get_ref(), entry, manifest, subject, diagnostics);
        if diagnostics.count(kix_diag::Severity::Error) != before {
            continue;
        }
        declared.push(intern(Profile {
            group: group.to_string(),
            kind: kind.to_string(),
            replicas,
            replicas_default: entry.replicas_default.as_ref().map_or(1, |d| *d.get_ref()),
            budget: match entry.budget.as_ref().map(|b| *b.get_ref()) {
                None | Some(KindBudget::Derive) => Budget::Derive,
                Some(KindBudget::Operator) => Budget::Operator { labels: pod_labels.clone() },
            },
            pod_labels,
            extra_labels: None,
            pod_template,
            spread,
            controller: match entry.controller.as_ref().map(|c| *c.get_ref()) {
                None | Some(KindController::Deployment) => Controller::Deployment,
                Some(KindController::StatefulSet) => Controller::StatefulSet,
            },
            builtin: false,
        }));
    }
    KindTable::new(declared)
}

/// `podLabels`: at least one, each key a label key and each value, `{name}` filled in, a label value.
fn pod_labels(
    key: &str,
    entry: &RawKind,
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Vec<(String, String)> {
    let mut problem = |at: std::ops::Range<usize>, message: String| {
        diagnostics.push(Diagnostic::new(Code::InvalidKind, message).at(manifest.locate(at)).about(subject));
    };
    if entry.pod_labels.get_ref().is_empty() {
        problem(
            entry.pod_labels.span(),
            format!("[kinds.\"{key}\"] podLabels is empty: kix selects the operator's pods by these labels"),
        );
    }
    let mut labels = Vec::new();
    for (label, value) in entry.pod_labels.get_ref() {
        if let Err(why) = kix_kube::names::label_key(label) {
            problem(value.span(), format!("[kinds.\"{key}\"] podLabels: `{label}` is not a label key: {why}"));
            continue;
        }
        let text = value.get_ref();
        let whole_label = text.strip_prefix("{label:").and_then(|v| v.strip_suffix('}'));
        let check = match whole_label {
            Some(other) => kix_kube::names::label_key(other),
            None => kix_kube::names::label_value(&text.replace("{name}", "x")),
        };
        if let Err(why) = check {
            problem(value.span(), format!("[kinds.\"{key}\"] podLabels.{label}: `{text}` is not a label value: {why}"));
            continue;
        }
        labels.push((label.clone(), text.clone()));
    }
    labels
}

/// The package's CustomResourceDefinition of a group and kind, if it ships one.
fn shipped_crd<'a>(documents: &'a [Document], group: &str, kind: &str) -> Option<&'a Value> {
    documents
        .iter()
        .filter(|d| d.group() == "apiextensions.k8s.io" && d.kind() == "CustomResourceDefinition")
        .map(|d| &d.value)
        .find(|crd| {
            kix_kube::value::str_at(crd, &["spec", "group"]) == Some(group)
                && kix_kube::value::str_at(crd, &["spec", "names", "kind"]) == Some(kind)
        })
}

/// Whether some served version's schema declares the path: each key a property, or below a schema that
/// keeps unknown fields, or a key of a map (`additionalProperties`). `Err` says what the schema declares
/// where the path leaves it, for the help.
fn declared_in_crd(crd: &Value, path: &FieldPath) -> Result<(), String> {
    let versions = at(crd, &["spec", "versions"]).and_then(Value::as_sequence).map_or(&[][..], Vec::as_slice);
    let mut deepest: Option<(usize, String)> = None;
    for version in versions.iter().filter(|v| at(v, &["served"]).and_then(Value::as_bool) != Some(false)) {
        let Some(mut schema) = at(version, &["schema", "openAPIV3Schema"]) else { continue };
        let mut found = true;
        for (depth, key) in path.0.iter().enumerate() {
            if at(schema, &["x-kubernetes-preserve-unknown-fields"]).and_then(Value::as_bool) == Some(true)
                && at(schema, &["properties", key]).is_none()
            {
                break;
            }
            match at(schema, &["properties", key]).or_else(|| at(schema, &["additionalProperties"])) {
                Some(next) => schema = next,
                None => {
                    let mut known: Vec<&str> = at(schema, &["properties"])
                        .and_then(Value::as_mapping)
                        .map(|m| m.keys().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    known.sort_unstable();
                    let at_path = path.0[..depth].join(".");
                    let help = if known.is_empty() {
                        format!("the schema declares no fields under `{at_path}`")
                    } else {
                        format!("the fields under `{at_path}` are: {}", known.join(", "))
                    };
                    if deepest.as_ref().is_none_or(|(d, _)| depth > *d) {
                        deepest = Some((depth, help));
                    }
                    found = false;
                    break;
                }
            }
        }
        if found {
            return Ok(());
        }
    }
    Err(deepest.map_or_else(|| "the CustomResourceDefinition serves no version with a schema".into(), |(_, h)| h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_against_every_served_version() {
        let crd: Value = kix_yaml::from_str(
            "spec:\n  versions:\n  - name: v1\n    served: true\n    schema:\n      openAPIV3Schema:\n        properties:\n          \
             spec:\n            properties:\n              members: {type: integer}\n              extra: {type: object, \
             x-kubernetes-preserve-unknown-fields: true}\n              byName: {type: object, additionalProperties: \
             {type: object, properties: {size: {type: integer}}}}\n  - name: v2\n    served: false\n    schema:\n      \
             openAPIV3Schema:\n        properties:\n          spec:\n            properties:\n              old: {type: integer}\n",
        )
        .unwrap();
        let check = |text: &str| declared_in_crd(&crd, &FieldPath::parse(text).unwrap());
        assert_eq!(check("spec.members"), Ok(()));
        assert_eq!(check("spec.extra.anything.below"), Ok(()));
        assert_eq!(check("spec.byName.a.size"), Ok(()));
        assert_eq!(check("spec.membres"), Err("the fields under `spec` are: byName, extra, members".into()));
        assert_eq!(check("spec.old"), Err("the fields under `spec` are: byName, extra, members".into()));
        assert_eq!(check("spec.members.x"), Err("the schema declares no fields under `spec.members`".into()));
    }
}
