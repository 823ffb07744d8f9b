//! Typed views of a [`Value`]: a `serde::Deserializer` for `&Value`, so k8s-openapi's structs and
//! kix's own `#[derive(Deserialize)]` types read straight from the loaded tree (no detour through
//! serde_json), plus `Deserialize for Value` so such types may hold raw values.
//!
//! A failure names the path where it happened: `spec.template.metadata.labels.app: invalid type:
//! integer `1`, expected a string`. The path is collected while the error travels back up through
//! the mappings and sequences it crossed, so the happy path pays nothing for it.

use super::{Mapping, Value};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use std::fmt;

/// Reads a typed view of `value`.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, DeError> {
    T::deserialize(value)
}

/// Why a value did not fit a type, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct DeError {
    /// Path segments from the failing node up to the root (reversed while unwinding).
    reversed_path: Vec<PathSeg>,
    message: String,
    /// The field, when the error is a required field that is absent (serde's `missing_field`).
    missing: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum PathSeg {
    Key(String),
    Index(usize),
}

impl DeError {
    /// The path of the failing node (`spec.containers[0].image`); empty for the root.
    pub fn path(&self) -> String {
        let mut path = String::new();
        for seg in self.reversed_path.iter().rev() {
            match seg {
                PathSeg::Key(key) if path.is_empty() => path.push_str(key),
                PathSeg::Key(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                PathSeg::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        path
    }

    /// What went wrong, without the path.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The field a type requires and the value lacks, when that is what went wrong (the path is
    /// then the mapping's).
    pub fn missing_field(&self) -> Option<&'static str> {
        self.missing
    }

    fn within(mut self, seg: PathSeg) -> DeError {
        self.reversed_path.push(seg);
        self
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path() {
            path if path.is_empty() => f.write_str(&self.message),
            path => write!(f, "{path}: {}", self.message),
        }
    }
}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(message: T) -> DeError {
        DeError { reversed_path: Vec::new(), message: message.to_string(), missing: None }
    }

    fn missing_field(field: &'static str) -> DeError {
        DeError { missing: Some(field), ..de::Error::custom(format_args!("missing field `{field}`")) }
    }
}

impl Value {
    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => n.unexpected(),
            Value::String(s) => Unexpected::Str(s),
            Value::Sequence(_) => Unexpected::Seq,
            Value::Mapping(_) => Unexpected::Map,
        }
    }

    fn invalid_type(&self, expected: &dyn de::Expected) -> DeError {
        de::Error::invalid_type(self.unexpected(), expected)
    }
}

/// A key as a path segment.
fn key_seg(key: &Value) -> PathSeg {
    PathSeg::Key(match key {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        _ => "(collection key)".into(),
    })
}

impl<'de> Deserializer<'de> for &'de Value {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => n.visit(visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Sequence(items) => {
                let mut access = Items { items: items.iter().enumerate() };
                let value = visitor.visit_seq(&mut access)?;
                match access.items.len() {
                    0 => Ok(value),
                    left => {
                        Err(de::Error::invalid_length(items.len(), &format!("{} items", items.len() - left).as_str()))
                    }
                }
            }
            Value::Mapping(map) => visitor.visit_map(Entries { entries: map.iter(), value: None }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Value::Null => visitor.visit_unit(),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Mapping(map) if map.len() == 1 => {
                let (key, value) = map.iter().next().expect("one entry");
                visitor.visit_enum(Variant { key, value })
            }
            other => Err(other.invalid_type(&"a string or a mapping with one entry")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf seq tuple tuple_struct map struct identifier
    }
}

struct Items<'de> {
    items: std::iter::Enumerate<std::slice::Iter<'de, Value>>,
}

impl<'de> SeqAccess<'de> for &mut Items<'de> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            Some((index, item)) => seed.deserialize(item).map(Some).map_err(|e| e.within(PathSeg::Index(index))),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries<'de, I> {
    entries: I,
    value: Option<(&'de Value, &'de Value)>,
}

impl<'de, I: Iterator<Item = (&'de Value, &'de Value)>> MapAccess<'de> for Entries<'de, I> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, DeError> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        self.value = Some((key, value));
        seed.deserialize(key).map(Some).map_err(|e| e.within(key_seg(key)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (key, value) = self.value.take().ok_or_else(|| de::Error::custom("value asked for before its key"))?;
        seed.deserialize(value).map_err(|e| e.within(key_seg(key)))
    }
}

struct Variant<'de> {
    key: &'de Value,
    value: &'de Value,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = DeError;
    type Variant = &'de Value;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, &'de Value), DeError> {
        Ok((seed.deserialize(self.key)?, self.value))
    }
}

impl<'de> VariantAccess<'de> for &'de Value {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        self.deserialize_unit(de::IgnoredAny).map(|_| ())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_any(visitor)
    }
}

impl<'de> de::Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(i.into())
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(u.into())
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(f.into())
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(s.into())
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(s.into())
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Sequence(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Mapping::new();
        while let Some((key, value)) = access.next_entry()? {
            map.insert(key, value);
        }
        Ok(Value::Mapping(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, parse_stream};
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::Deserialize;

    fn value(text: &str) -> Value {
        parse_stream(text, &Limits::PACKAGE).remove(0).unwrap().value
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web, tier: front}
  annotations:
    note: 'on'
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy:
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ghcr.io/example/web:1.4.0
        ports: [{containerPort: 8080}]
        resources:
          requests: {cpu: 250m, memory: 1Gi}
";

    #[test]
    fn reads_a_k8s_openapi_deployment() {
        let deployment: Deployment = from_value(&value(DEPLOYMENT)).unwrap();
        assert_eq!(deployment.metadata.name.as_deref(), Some("web"));
        assert_eq!(deployment.metadata.annotations.unwrap()["note"], "on");
        let spec = deployment.spec.unwrap();
        assert_eq!(spec.replicas, Some(3));
        let rolling = spec.strategy.unwrap().rolling_update.unwrap();
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        assert_eq!(rolling.max_surge, Some(IntOrString::String("25%".into())));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
        let container = &spec.template.spec.unwrap().containers[0];
        assert_eq!(container.ports.as_ref().unwrap()[0].container_port, 8080);
        assert_eq!(container.resources.as_ref().unwrap().requests.as_ref().unwrap()["cpu"].0, "250m");
        // The same as serde_yaml's reading of the same text.
        let theirs: Deployment = serde_yaml::from_str(DEPLOYMENT).unwrap();
        assert_eq!(from_value::<Deployment>(&value(DEPLOYMENT)).unwrap(), theirs);
    }

    #[test]
    fn reads_object_meta() {
        let meta: ObjectMeta = from_value(&value("name: a\nlabels:\n  x: z\ngeneration: 4\n")).unwrap();
        assert_eq!((meta.name.as_deref(), meta.generation), (Some("a"), Some(4)));
        assert_eq!(meta.labels.unwrap()["x"], "z");
    }

    #[test]
    fn errors_name_the_path() {
        let cases: &[(&str, &str)] = &[
            (
                "spec:\n  template:\n    metadata:\n      labels:\n        app: 1\n",
                "spec.template.metadata.labels.app: invalid type: integer `1`, expected a string",
            ),
            ("spec:\n  replicas: 'three'\n", "spec.replicas: invalid type: string \"three\", expected i32"),
            (
                "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n      - name: [b]\n",
                "spec.template.spec.containers[1].name: invalid type: sequence, expected a string",
            ),
            ("spec: 3\n", "spec: invalid type: integer `3`, expected DeploymentSpec"),
            ("[1]\n", "invalid type: sequence, expected Deployment"),
        ];
        for (text, expected) in cases {
            let error = from_value::<Deployment>(&value(text)).unwrap_err();
            assert_eq!(error.to_string(), *expected, "{text}");
        }
    }

    #[test]
    fn kix_serde_types_enums_and_options() {
        #[derive(Deserialize, Debug, PartialEq)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Raw {
            level: Level,
            max_skew: Option<u32>,
            extra: Option<Value>,
            pair: (String, f64),
        }
        #[derive(Deserialize, Debug, PartialEq)]
        enum Level {
            Zonal,
            Pinned { node: String },
        }
        let raw: Raw = from_value(&value("level: Zonal\nextra: {a: [1]}\npair: [x, 2]\n")).unwrap();
        assert_eq!(raw.level, Level::Zonal);
        assert_eq!((raw.max_skew, raw.pair.1), (None, 2.0));
        assert_eq!(raw.extra.unwrap()["a"][0].as_u64(), Some(1));
        let raw: Raw = from_value(&value("level: {Pinned: {node: n1}}\nmaxSkew: 2\npair: [x, 2.5]\n")).unwrap();
        assert_eq!(raw.level, Level::Pinned { node: "n1".into() });
        let error = from_value::<Raw>(&value("level: Zonal\npair: [x, 1]\nmaxSkwe: 1\n")).unwrap_err();
        assert_eq!(error.path(), "maxSkwe");
        assert!(error.message().starts_with("unknown field `maxSkwe`"), "{error}");
        let error = from_value::<Raw>(&value("level: Zonal\npair: [x, 1, 2]\n")).unwrap_err();
        assert_eq!(error.to_string(), "pair: invalid length 3, expected 2 items");
    }
}
