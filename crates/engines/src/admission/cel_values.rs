//! Kubernetes objects as CEL values, as the API server hands them to a ValidatingAdmissionPolicy: an
//! object's integers are CEL `int` (int64; JSON numbers without a fraction, as apiserver's unstructured
//! conversion reads them), other numbers `double`, mappings `map(string, dyn)`, sequences `list`, and
//! `null` where the field is written null (an absent field is simply absent, so `has()` is false).

use cel::Value as Cel;
use cel::objects::{Key, Map};
use kix_yaml::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// `value` as a CEL value.
pub fn cel(value: &Value) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(_) => match value.as_i64() {
            Some(i) => Cel::Int(i),
            None => Cel::Float(serde_json::to_value(value).ok().and_then(|n| n.as_f64()).unwrap_or_default()),
        },
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Sequence(items) => Cel::List(Arc::new(items.iter().map(cel).collect())),
        Value::Mapping(map) => {
            let mut entries = HashMap::with_capacity(map.len());
            for (key, value) in map.iter() {
                let key = match key {
                    Value::String(s) => s.clone(),
                    other => kix_yaml::emit::to_string(other).trim_end().to_string(),
                };
                entries.insert(Key::String(Arc::new(key)), cel(value));
            }
            Cel::Map(Map { map: Arc::new(entries) })
        }
    }
}

/// A CEL map of string keys.
pub fn map<K: AsRef<str>>(entries: impl IntoIterator<Item = (K, Cel)>) -> Cel {
    let entries: HashMap<Key, Cel> =
        entries.into_iter().map(|(key, value)| (Key::String(Arc::new(key.as_ref().to_string())), value)).collect();
    Cel::Map(Map { map: Arc::new(entries) })
}

/// A CEL string.
pub fn string(text: &str) -> Cel {
    Cel::String(Arc::new(text.to_string()))
}
