//! The least object a CRD's schema accepts where kix creates one (issue 43, part 2).
//!
//! kix writes a profile's count and spread fields into a custom resource, creating the mappings on
//! the way (`spec.template.pod` of a KafkaNodePool). A schema may require properties of such a
//! mapping (a pod template's `containers`): the API server then refuses the object. [`fill_required`]
//! gives each required property that is absent the least value its schema accepts, as upstream
//! examples write it: an empty list for an array, an empty object (itself filled) for an object. A
//! required property of any other type has no value kix could choose (a string, a number, an enum):
//! that is the error, with the property's path, for the caller to report.

use kix_yaml::{Mapping, Value};

/// The schema of property `key` of an object schema: its `properties` entry, else the mapping of
/// `additionalProperties`.
pub fn property<'v>(schema: &'v Value, key: &str) -> Option<&'v Value> {
    schema
        .get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_mapping()))
}

/// The schema at a path of keys below `schema`.
pub fn schema_at<'v>(schema: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(schema, |schema, key| property(schema, key))
}

/// Fills the required properties `map` lacks, as its `schema` says (see the module comment).
/// `at` is the mapping's field path; the error is the path of a required property kix cannot fill.
pub fn fill_required(schema: &Value, map: &mut Mapping, at: &str) -> Result<(), String> {
    let required = schema.get("required").and_then(Value::as_sequence).into_iter().flatten();
    for name in required.filter_map(Value::as_str) {
        if map.get(name).is_some_and(|v| !v.is_null()) {
            continue;
        }
        let path = if at.is_empty() { name.to_string() } else { format!("{at}.{name}") };
        let Some(property) = property(schema, name) else { return Err(path) };
        map.insert(name.into(), least_value(property, &path)?);
    }
    Ok(())
}

/// The least value a schema accepts: `[]` for an array, a filled `{}` for an object.
fn least_value(schema: &Value, at: &str) -> Result<Value, String> {
    let has_enum = schema.get("enum").is_some();
    match schema.get("type").and_then(Value::as_str) {
        Some("array") if !has_enum && schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) == 0 => {
            Ok(Value::Sequence(Vec::new()))
        }
        Some("object") if !has_enum => {
            let mut map = Mapping::new();
            fill_required(schema, &mut map, at)?;
            Ok(Value::Mapping(map))
        }
        _ => Err(at.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(schema: &str) -> Result<String, String> {
        let schema = kix_yaml::from_str(schema).unwrap();
        let mut map = Mapping::new();
        fill_required(&schema, &mut map, "spec.template.spec").map(|()| kix_yaml::emit::to_string(&Value::Mapping(map)))
    }

    #[test]
    fn required_lists_and_objects_get_their_least_values() {
        // A pod template's spec requires containers: an empty list, as upstream examples write.
        let pod_spec = "type: object\nrequired: [containers]\nproperties:\n  containers: {type: array, items: {type: object}}\n  topologySpreadConstraints: {type: array}\n";
        assert_eq!(filled(pod_spec).unwrap().trim(), "containers: []");
        let nested = "type: object\nrequired: [a]\nproperties:\n  a: {type: object, required: [b], properties: {b: {type: array}}}\n";
        assert_eq!(filled(nested).unwrap().trim(), "a:\n  b: []");
        assert_eq!(filled("type: object\nproperties: {a: {type: string}}\n").unwrap().trim(), "{}");
    }

    #[test]
    fn a_required_scalar_has_no_least_value() {
        let schema = "type: object\nrequired: [image]\nproperties: {image: {type: string}}\n";
        assert_eq!(filled(schema).unwrap_err(), "spec.template.spec.image");
        let listed = "type: object\nrequired: [ports]\nproperties: {ports: {type: array, minItems: 1}}\n";
        assert_eq!(filled(listed).unwrap_err(), "spec.template.spec.ports");
        let unknown = "type: object\nrequired: [x]\n";
        assert_eq!(filled(unknown).unwrap_err(), "spec.template.spec.x");
    }
}
