//! The typed check of a built-in object: deserialize it into its k8s-openapi struct, noting every
//! field the struct ignored, then compare what the struct holds with what the user wrote.
//!
//! Three traps shape it:
//!
//! * k8s-openapi's `Deserialize` impls skip unknown fields silently (they read them as
//!   `IgnoredAny`): `serde_ignored` reports each one with its path, as strict decoding does.
//! * Missing required fields do not fail either: k8s-openapi fills them with their default
//!   (`unwrap_or_default`) and keeps optional ones as `Option`. Its `Serialize` writes every
//!   required field and only the optional ones that are set, so a key the typed value writes
//!   back that the user's object lacks (or holds as null) is a required field that is missing.
//!   Embedded objects of a served kind (a StatefulSet's `volumeClaimTemplates`) may leave out
//!   `apiVersion`, `kind` and `metadata`, which k8s-openapi also always writes.
//! * `status` is left alone by the required check: the API server clears it on create
//!   (each kind's `PrepareForCreate`), so real manifests carry `status: {}` or half a status.
//!
//! Quantities and IntOrString fields take numbers and strings, and `null` is an absent optional
//! field (`metadata.creationTimestamp: null`), exactly as the API server decodes them.

use super::error::{Problem, Schema, Step, StrictError, path_text, value_at};
use super::probe;
use kix_yaml::Value;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Whether an `apiVersion` and `kind` name a kind Kubernetes serves (the table in `served.rs`,
/// handed in so that this file and the table, which names this file's `check`, do not import
/// each other).
pub(super) type IsServed = fn(&str, &str) -> bool;

/// Every problem of one built-in object, checked as `T`.
pub(super) fn check<T: DeserializeOwned + Serialize>(object: &Value, is_served: IsServed) -> Vec<StrictError> {
    let mut ignored: Vec<Vec<Step>> = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| ignored.push(steps(&path));
    let result: Result<T, _> =
        serde_ignored::deserialize(object, &mut record as &mut dyn FnMut(serde_ignored::Path<'_>));
    let mut errors: Vec<StrictError> = ignored.into_iter().map(|steps| unknown_field::<T>(object, steps)).collect();
    match result {
        Ok(typed) => match serde_json::to_value(&typed) {
            Ok(written) => missing(&written, object, is_served, &mut Vec::new(), &mut errors),
            Err(error) => errors.push(wrong_type(String::new(), error.to_string())),
        },
        Err(error) => {
            let path = error.path();
            match error.missing_field() {
                Some(_) if path == "status" || path.starts_with("status.") || path.starts_with("status[") => {}
                Some(field) if path.is_empty() => errors.push(missing_at(field.to_string())),
                Some(field) => errors.push(missing_at(format!("{path}.{field}"))),
                None => errors.push(wrong_type(path, error.message().to_string())),
            }
        }
    }
    errors
}

fn wrong_type(path: String, reason: String) -> StrictError {
    StrictError { path, problem: Problem::WrongType { reason }, schema: Schema::Kubernetes }
}

fn missing_at(path: String) -> StrictError {
    StrictError { path, problem: Problem::MissingField, schema: Schema::Kubernetes }
}

/// An ignored field, with the closest field the struct at its parent knows.
fn unknown_field<T: DeserializeOwned>(object: &Value, steps: Vec<Step>) -> StrictError {
    let (parent, name) = match steps.split_last() {
        Some((Step::Key(name), parent)) => (parent, Some(name.as_str())),
        _ => (&steps[..0], None),
    };
    let suggestion = name.and_then(|name| {
        let fields = probe::fields::<T>(parent)?;
        super::error::suggest(name, fields.iter().copied())
    });
    let suggestion_set = suggestion
        .as_deref()
        .is_some_and(|field| value_at(object, parent).and_then(|p| p.get(field)).is_some_and(|v| !v.is_null()));
    StrictError {
        path: path_text(&steps),
        problem: Problem::UnknownField { suggestion, suggestion_set },
        schema: Schema::Kubernetes,
    }
}

/// The steps of serde_ignored's path (options and newtypes are no steps of the document).
fn steps(path: &serde_ignored::Path<'_>) -> Vec<Step> {
    use serde_ignored::Path;
    let mut steps = Vec::new();
    let mut at = path;
    loop {
        match at {
            Path::Root => break,
            Path::Seq { parent, index } => {
                steps.push(Step::Index(*index));
                at = parent;
            }
            Path::Map { parent, key } => {
                steps.push(Step::Key(key.clone()));
                at = parent;
            }
            Path::Some { parent } | Path::NewtypeStruct { parent } | Path::NewtypeVariant { parent } => at = parent,
        }
    }
    steps.reverse();
    steps
}

/// Required fields the typed value wrote back and the user's object does not hold.
fn missing(
    written: &serde_json::Value,
    user: &Value,
    is_served: IsServed,
    at: &mut Vec<Step>,
    errors: &mut Vec<StrictError>,
) {
    match (written, user) {
        (serde_json::Value::Object(fields), Value::Mapping(_)) => {
            let embedded = at.is_empty() || is_embedded_object(fields, is_served);
            for (key, value) in fields {
                if embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if at.is_empty() && key == "status" {
                    continue;
                }
                at.push(Step::Key(key.clone()));
                match user.get(key) {
                    None | Some(Value::Null) => errors.push(missing_at(path_text(at))),
                    Some(inner) => missing(value, inner, is_served, at, errors),
                }
                at.pop();
            }
        }
        (serde_json::Value::Array(items), Value::Sequence(user_items)) => {
            for (index, (item, user_item)) in items.iter().zip(user_items).enumerate() {
                at.push(Step::Index(index));
                missing(item, user_item, is_served, at, errors);
                at.pop();
            }
        }
        _ => {}
    }
}

/// Whether a written mapping is a whole object of a served kind (k8s-openapi writes its
/// `apiVersion` and `kind` constants), not a reference that merely has a `kind` field.
fn is_embedded_object(fields: &serde_json::Map<String, serde_json::Value>, is_served: IsServed) -> bool {
    let text = |key: &str| fields.get(key).and_then(serde_json::Value::as_str);
    match (text("apiVersion"), text("kind")) {
        (Some(api_version), Some(kind)) => is_served(api_version, kind),
        _ => false,
    }
}
