//! Strict validation of one object against Kubernetes 1.33, as `kubectl apply` (whose field
//! validation is `Strict` by default since 1.27) and the API server would hold it: an unknown
//! field, a required field that is missing, a value of the wrong type, or an `apiVersion` and
//! `kind` the server does not serve is a [`StrictError`], with the field path it is about.
//!
//! Built-in kinds are checked through k8s-openapi's typed structs ([`typed`]), picked from the
//! table of every type k8s-openapi generates for 1.33 ([`served`]). Custom resources whose
//! CustomResourceDefinition is among the objects given are checked against that CRD's
//! `openAPIV3Schema` ([`crd`]); any other kind is nobody's to judge here and passes.
//!
//! The user's object is only read: the typed value built to check it is thrown away, so nothing
//! the user wrote (field order, comments' neighbours, quoting) changes because of this check.
//!
//! Upstream: the decoding side is `k8s.io/apimachinery/pkg/runtime/serializer/json` with
//! `sigs.k8s.io/json`'s strict mode (unknown and duplicate fields), the served versions are
//! `pkg/controlplane/apiserver` (`DefaultAPIResourceConfigSource`) as the 1.33 OpenAPI document
//! lists them, and the required lists come from the same document (`required` of each definition),
//! which is what k8s-openapi is generated from.

pub mod crd;
mod probe;
pub mod served;
mod typed;

pub use crd::CustomKinds;

use kix_yaml::Value;
use std::fmt;

/// One thing the API server would refuse, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictError {
    /// The field path as the API server prints it (`spec.template.spec.containers[0].image`).
    pub path: String,
    pub problem: Problem,
    /// Whose schema says so.
    pub schema: Schema,
}

/// What is wrong at [`StrictError::path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The schema has no such field. `suggestion` is the closest field it has, if any is close;
    /// `suggestion_set` says whether the object sets that field too (a stray duplicate).
    UnknownField { suggestion: Option<String>, suggestion_set: bool },
    /// A field the schema requires is absent (or null).
    MissingField,
    /// The value does not fit the field's type: serde's or the schema's words for why.
    WrongType { reason: String },
    /// Nothing serves this `apiVersion` and `kind`; `served` lists the `apiVersion`s that serve the
    /// kind, and `suggestion` a close kind name when the kind itself is unknown.
    NotServed { api_version: String, kind: String, served: Vec<String>, suggestion: Option<String> },
}

/// The schema an object was checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schema {
    /// Kubernetes 1.33's built-in API.
    Kubernetes,
    /// The package's CustomResourceDefinition of this name.
    Crd(String),
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schema::Kubernetes => f.write_str("Kubernetes 1.33"),
            Schema::Crd(name) => write!(f, "CustomResourceDefinition {name}"),
        }
    }
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { path, schema, .. } = self;
        match &self.problem {
            Problem::UnknownField { .. } => write!(f, "unknown field `{path}` (not in {schema}'s schema)"),
            Problem::MissingField => write!(f, "required field `{path}` is missing ({schema})"),
            Problem::WrongType { reason } if path.is_empty() => write!(f, "{reason}"),
            Problem::WrongType { reason } => write!(f, "`{path}`: {reason}"),
            Problem::NotServed { api_version, kind, .. } => write!(f, "{api_version} {kind} is not served by {schema}"),
        }
    }
}

impl StrictError {
    /// A hint for fixing it, if kix has one.
    pub fn help(&self) -> Option<String> {
        match &self.problem {
            Problem::UnknownField { suggestion: Some(name), suggestion_set: false } => {
                Some(format!("did you mean `{name}`?"))
            }
            Problem::UnknownField { suggestion: Some(name), suggestion_set: true } => {
                Some(format!("did you mean `{name}`? it is set too: remove one of them"))
            }
            Problem::NotServed { served, .. } if !served.is_empty() => Some(format!("use {}", served.join(" or "))),
            Problem::NotServed { suggestion: Some(kind), .. } => Some(format!("did you mean kind `{kind}`?")),
            Problem::NotServed { kind, .. } => Some(format!("no version of {kind} is served any more")),
            _ => None,
        }
    }
}

/// Checks one object: every problem found (empty when it is valid or its kind is nobody's to judge).
pub fn check_object(object: &Value, custom: &CustomKinds<'_>) -> Vec<StrictError> {
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else { return Vec::new() };
    if let Some(errors) = served::typed_check(api_version, kind, object) {
        return one_error_per_typo(errors);
    }
    let group = super::kind::api_group(api_version);
    if served::is_builtin_group(group) {
        if served::is_list_kind(kind) {
            return Vec::new();
        }
        let served = served::serving(kind);
        let suggestion = if served.is_empty() { suggest(kind, served::kinds_of(group).into_iter()) } else { None };
        return vec![not_served(api_version, kind, served, suggestion, Schema::Kubernetes)];
    }
    one_error_per_typo(custom.check(object, group, api_version, kind))
}

/// A misspelt required field is one mistake: the unknown field is reported (with its suggestion),
/// the required field it was meant to be is not reported missing as well.
fn one_error_per_typo(errors: Vec<StrictError>) -> Vec<StrictError> {
    let meant: Vec<String> = errors
        .iter()
        .filter_map(|error| match &error.problem {
            Problem::UnknownField { suggestion: Some(field), .. } => Some(match error.path.rsplit_once('.') {
                Some((parent, _)) => format!("{parent}.{field}"),
                None => field.clone(),
            }),
            _ => None,
        })
        .collect();
    errors
        .into_iter()
        .filter(|error| !(error.problem == Problem::MissingField && meant.contains(&error.path)))
        .collect()
}

fn not_served(
    api_version: &str,
    kind: &str,
    served: Vec<String>,
    suggestion: Option<String>,
    schema: Schema,
) -> StrictError {
    StrictError {
        path: "apiVersion".into(),
        problem: Problem::NotServed { api_version: api_version.into(), kind: kind.into(), served, suggestion },
        schema,
    }
}

/// The candidate closest to `unknown`, if one is close enough to be a typo of it: at most one edit
/// (insertion, deletion, substitution or swap of neighbours) per three characters, and at least one.
pub fn suggest<'a>(unknown: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (unknown.chars().count() / 3).max(1);
    candidates
        .filter(|candidate| *candidate != unknown)
        .map(|candidate| (strsim::osa_distance(&unknown.to_lowercase(), &candidate.to_lowercase()), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.to_string())
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `spec.containers[0].name`, as the API server prints paths.
fn path_text(steps: &[Step]) -> String {
    let mut text = String::new();
    for step in steps {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

/// The value at a path of steps.
fn value_at<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    steps.iter().try_fold(value, |value, step| match step {
        Step::Key(key) => value.get(key.as_str()),
        Step::Index(index) => value.as_sequence().and_then(|items| items.get(*index)),
    })
}

#[cfg(test)]
mod tests;
