//! Custom resources checked against the `openAPIV3Schema` of their CustomResourceDefinition,
//! when that CRD is among the objects kix was given (the package's own).
//!
//! What is checked, following the API server's structural schemas
//! (staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema: `pruning` drops, and strict
//! field validation reports, fields a schema does not declare; `validation` checks types and
//! `required`):
//!
//! * the version: it must be one of the CRD's `versions` with `served: true`;
//! * unknown fields: a key of a mapping whose schema lists `properties`, unless the key is among
//!   them, `additionalProperties` admits it, or that mapping's own schema sets
//!   `x-kubernetes-preserve-unknown-fields: true` (the flag holds where it is set: a nested schema
//!   with `properties` of its own is checked again, as pruning does); `apiVersion`, `kind` and
//!   `metadata` are always allowed at the root and in `x-kubernetes-embedded-resource` objects;
//! * types: `object`, `array`, `string`, `integer`, `number`, `boolean`, and
//!   `x-kubernetes-int-or-string`; `null` is absent, as the API server prunes nulls of
//!   non-nullable fields before validating;
//! * `required` properties of every object;
//! * `enum`: a value must be one of the listed values.
//!
//! Left out: `pattern`, `format`, `minimum`/`maximum`, lengths and item counts,
//! `allOf`/`anyOf`/`oneOf`/`not`, `x-kubernetes-validations` (CEL), list and map types
//! (`x-kubernetes-list-type`), defaults, and `metadata` beyond what the object's loader checks.
//! A mapping whose schema has neither `properties` nor `additionalProperties` is not checked for
//! unknown keys (the API server would prune them all; kix does not guess that was meant).

use super::error::{Problem, Schema, Step, StrictError, path_text};
use kix_yaml::Value;
use std::collections::BTreeMap;

/// The custom kinds the given CRDs define, by (group, kind).
#[derive(Debug, Default)]
pub struct CustomKinds<'a> {
    kinds: BTreeMap<(&'a str, &'a str), Definition<'a>>,
}

#[derive(Debug)]
struct Definition<'a> {
    /// The CRD's `metadata.name` (`widgets.example.com`).
    name: &'a str,
    /// Each version's name, whether it is served, and its schema.
    versions: Vec<(&'a str, bool, Option<&'a Value>)>,
}

impl<'a> CustomKinds<'a> {
    /// Collects the `apiextensions.k8s.io/v1` CustomResourceDefinitions among `objects`.
    pub fn from_objects(objects: impl IntoIterator<Item = &'a Value>) -> CustomKinds<'a> {
        let mut kinds = BTreeMap::new();
        for object in objects {
            if str_at(object, &["apiVersion"]) != Some("apiextensions.k8s.io/v1")
                || str_at(object, &["kind"]) != Some("CustomResourceDefinition")
            {
                continue;
            }
            let (Some(group), Some(kind)) =
                (str_at(object, &["spec", "group"]), str_at(object, &["spec", "names", "kind"]))
            else {
                continue;
            };
            let versions = object
                .get("spec")
                .and_then(|spec| spec.get("versions"))
                .and_then(Value::as_sequence)
                .map(|versions| {
                    versions
                        .iter()
                        .filter_map(|version| {
                            let name = str_at(version, &["name"])?;
                            let served = version.get("served").and_then(Value::as_bool).unwrap_or(false);
                            let schema = version.get("schema").and_then(|s| s.get("openAPIV3Schema"));
                            Some((name, served, schema))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let name = str_at(object, &["metadata", "name"]).unwrap_or_default();
            kinds.insert((group, kind), Definition { name, versions });
        }
        CustomKinds { kinds }
    }

    /// The `openAPIV3Schema` of a served version of a kind a CRD given defines (`api_version` is
    /// `group/version`), if it has one.
    pub fn schema(&self, api_version: &str, kind: &str) -> Option<&'a Value> {
        let (group, version) = api_version.rsplit_once('/')?;
        let definition = self.kinds.get(&(group, kind))?;
        definition.versions.iter().find(|(name, served, _)| *name == version && *served).and_then(|(.., s)| *s)
    }

    /// Whether a CRD given defines this (group, kind).
    pub fn defines(&self, group: &str, kind: &str) -> bool {
        self.kinds.contains_key(&(group, kind))
    }

    /// Checks a custom resource against its CRD, if one was given; nothing otherwise.
    pub(super) fn check(&self, object: &Value, group: &str, api_version: &str, kind: &str) -> Vec<StrictError> {
        let Some(definition) = self.kinds.get(&(group, kind)) else { return Vec::new() };
        let schema_of = Schema::Crd(definition.name.to_string());
        let version = api_version.rsplit_once('/').map_or(api_version, |(_, version)| version);
        let Some((_, _, schema)) = definition.versions.iter().find(|(name, served, _)| *name == version && *served)
        else {
            let served =
                definition.versions.iter().filter(|(_, served, _)| *served).map(|(name, ..)| format!("{group}/{name}"));
            return vec![super::not_served(api_version, kind, served.collect(), None, schema_of)];
        };
        let mut walk = Walk { schema: schema_of, errors: Vec::new(), at: Vec::new() };
        if let Some(schema) = schema {
            walk.node(schema, object, true);
        }
        walk.errors
    }
}

fn str_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    crate::value::str_at(value, path)
}

/// A walk of one object along its schema.
struct Walk {
    schema: Schema,
    errors: Vec<StrictError>,
    at: Vec<Step>,
}

impl Walk {
    fn push(&mut self, problem: Problem) {
        self.errors.push(StrictError { path: path_text(&self.at), problem, schema: self.schema.clone() });
    }

    fn node(&mut self, schema: &Value, value: &Value, embedded: bool) {
        if value.is_null() {
            return;
        }
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool).unwrap_or(false);
        if flag("x-kubernetes-int-or-string") {
            if !(value.is_i64() || value.is_u64() || value.is_string()) {
                self.push(Problem::WrongType {
                    reason: format!("must be an integer or a string, not {}", what(value)),
                });
            }
            return;
        }
        let expected = schema.get("type").and_then(Value::as_str);
        let fits = match expected {
            Some("object") => value.is_mapping(),
            Some("array") => value.is_sequence(),
            Some("string") => value.is_string(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("number") => value.is_number(),
            Some("boolean") => value.is_bool(),
            _ => true,
        };
        if !fits {
            let expected = match expected {
                Some("object") => "an object",
                Some("array") => "a list",
                Some("string") => "a string",
                Some("integer") => "an integer",
                Some("number") => "a number",
                _ => "a boolean",
            };
            self.push(Problem::WrongType { reason: format!("must be {expected}, not {}", what(value)) });
            return;
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_sequence)
            && !allowed.iter().any(|v| v == value)
        {
            let listed: Vec<String> = allowed.iter().map(|v| kix_yaml::emit::to_string(v).trim().to_string()).collect();
            let found = kix_yaml::emit::to_string(value).trim().to_string();
            self.push(Problem::WrongType { reason: format!("must be one of {}, found {found}", listed.join(", ")) });
            return;
        }
        if let Some(items) = value.as_sequence() {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_mapping()) {
                for (index, item) in items.iter().enumerate() {
                    self.at.push(Step::Index(index));
                    self.node(item_schema, item, false);
                    self.at.pop();
                }
            }
        } else if value.is_mapping() {
            self.object(schema, value, embedded || flag("x-kubernetes-embedded-resource"));
        }
    }

    /// A mapping: required properties, declared properties, and keys the schema does not declare.
    fn object(&mut self, schema: &Value, value: &Value, embedded: bool) {
        let required = schema.get("required").and_then(Value::as_sequence).into_iter().flatten();
        for name in required.filter_map(Value::as_str) {
            if value.get(name).is_none_or(Value::is_null) {
                self.at.push(Step::Key(name.to_string()));
                self.push(Problem::MissingField);
                self.at.pop();
            }
        }
        let properties = schema.get("properties").and_then(Value::as_mapping);
        let additional = schema.get("additionalProperties");
        let preserve = schema.get("x-kubernetes-preserve-unknown-fields").and_then(Value::as_bool) == Some(true);
        let Some(map) = value.as_mapping() else { return };
        for (key, item) in map {
            let Some(key) = key.as_str() else { continue };
            self.at.push(Step::Key(key.to_string()));
            if let Some(property) = properties.and_then(|p| p.get(key)) {
                self.node(property, item, false);
            } else if embedded && matches!(key, "apiVersion" | "kind" | "metadata") {
            } else if let Some(additional) = additional.filter(|a| a.is_mapping()) {
                self.node(additional, item, false);
            } else if let (Some(properties), false, false) =
                (properties, preserve, additional.and_then(Value::as_bool) == Some(true))
            {
                let suggestion = super::error::suggest(key, properties.keys().filter_map(Value::as_str));
                let suggestion_set = suggestion.as_deref().is_some_and(|s| value.get(s).is_some_and(|v| !v.is_null()));
                self.push(Problem::UnknownField { suggestion, suggestion_set });
            }
            self.at.pop();
        }
    }
}

/// A value's JSON type, for messages.
fn what(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enum_admits_only_its_values() {
        let crd = kix_yaml::from_str(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: dbs.example.com}\n\
             spec:\n  group: example.com\n  names: {kind: Db, plural: dbs}\n  scope: Namespaced\n  versions:\n  - name: v1\n    \
             served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          \
             spec:\n            type: object\n            properties:\n              mode: {type: string, enum: [fast, safe]}\n",
        )
        .unwrap();
        let custom = CustomKinds::from_objects([&crd]);
        let check = |mode: &str| {
            let object = kix_yaml::from_str(&format!(
                "apiVersion: example.com/v1\nkind: Db\nmetadata: {{name: a}}\nspec: {{mode: {mode}}}\n"
            ))
            .unwrap();
            custom
                .check(&object, "example.com", "example.com/v1", "Db")
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(check("safe"), Vec::<String>::new());
        assert_eq!(check("slow"), ["`spec.mode`: must be one of fast, safe, found slow"]);
    }
}
