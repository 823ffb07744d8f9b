//! Custom resources kix patches stay valid against their shipped CustomResourceDefinition (issue
//! 43, part 2).
//!
//! kix validates custom resources against the package's CRDs on input (`resolve`, through
//! `kix_kube::strict`); what it emits must pass the same check. Writing a profile's count or
//! spread field creates the mappings on the way when the resource has none (`FieldPath::set`), and
//! a schema may require properties of them: a pod template's `containers`, which the operators'
//! own examples write as `containers: []` for that reason. So, for each mapping kix created, the
//! properties its schema requires are filled with the least valid value
//! ([`kix_kube::strict::fill`]), and the patched resource is checked against the CRD's
//! `openAPIV3Schema` for its served version (required fields, types, enums, unknown fields,
//! `x-kubernetes-preserve-unknown-fields`). A required property kix cannot fill, or any problem the
//! check still finds, is a located error (K0414) naming the field and the profile.

use kix_kube::profile::{FieldPath, Profile};
use kix_kube::strict::{self, CustomKinds, fill};
use kix_yaml::Value;

/// Why a patched custom resource would be refused: the field, and what is wrong with it said whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub path: String,
    pub problem: String,
}

/// Fills what kix's writes at the profile's fields left required and absent, then checks the
/// resource against its CRD. `original` is the resource as the package wrote it. Nothing to do when
/// the package ships no CRD for the kind.
pub fn complete_and_check(
    object: &mut Value,
    original: &Value,
    profile: &Profile,
    custom: &CustomKinds<'_>,
) -> Vec<Refusal> {
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let Some(schema) = custom.schema(&api_version, &profile.kind) else { return Vec::new() };
    let mut refusals = Vec::new();
    for path in [&profile.replicas, &profile.spread].into_iter().flatten() {
        if let Err(field) = fill_created(object, original, path, schema) {
            refusals.push(Refusal {
                problem: format!(
                    "required field `{field}` is missing (the CustomResourceDefinition of {} requires it, and kix has no value to give it)",
                    profile.key()
                ),
                path: field,
            });
        }
    }
    if !refusals.is_empty() {
        return refusals;
    }
    strict::check_object(object, custom)
        .into_iter()
        .map(|error| Refusal { path: error.path.clone(), problem: error.to_string() })
        .collect()
}

/// Fills the required properties of every mapping on `path`'s way that `original` lacks and
/// `object` has (kix created it), shallowest first.
fn fill_created(object: &mut Value, original: &Value, path: &FieldPath, schema: &Value) -> Result<(), String> {
    let keys = path.keys();
    for depth in 1..keys.len() {
        let prefix = &keys[..depth];
        if kix_kube::value::at(original, prefix).is_some() {
            continue;
        }
        let Some(at_schema) = fill::schema_at(schema, prefix) else { continue };
        let Some(map) = mapping_at(object, prefix) else { continue };
        fill::fill_required(at_schema, map, &prefix.join("."))?;
    }
    Ok(())
}

fn mapping_at<'v>(value: &'v mut Value, path: &[&str]) -> Option<&'v mut kix_yaml::Mapping> {
    path.iter().try_fold(value, |value, key| value.get_mut(key))?.as_mapping_mut()
}
