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
mod error;
pub mod fill;
mod probe;
pub mod served;
mod typed;

pub use crd::CustomKinds;
pub use error::{Problem, Schema, StrictError};

use kix_yaml::Value;

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
        let suggestion =
            if served.is_empty() { error::suggest(kind, served::kinds_of(group).into_iter()) } else { None };
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

#[cfg(test)]
mod tests;
