//! [`Value`]: one YAML node, with the accessors kix used from `serde_yaml::Value` so that moving
//! to it is an import change.
//!
//! There is no `Tagged` variant: tags are resolved while loading (see the module docs of
//! [`crate`]). Indexing (`value["spec"]`, `value[0]`) never panics: a missing key, an index
//! past the end or a value of the wrong kind yields `&Value::Null`, as with serde_yaml.

use super::Number;
use super::tree::{Mapping, NULL, Value};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Index;

impl Value {
    /// The value under a string key of a mapping; `None` for other kinds or a missing key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_mapping()?.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_mapping_mut()?.get_mut(key)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    pub(crate) fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_sequence(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Sequence(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_sequence_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Sequence(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_mapping(&self) -> Option<&Mapping> {
        match self {
            Value::Mapping(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_mapping_mut(&mut self) -> Option<&mut Mapping> {
        match self {
            Value::Mapping(map) => Some(map),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_bool(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_sequence(&self) -> bool {
        matches!(self, Value::Sequence(_))
    }

    pub fn is_mapping(&self) -> bool {
        matches!(self, Value::Mapping(_))
    }

    pub fn is_i64(&self) -> bool {
        self.as_number().is_some_and(Number::is_i64)
    }

    pub fn is_u64(&self) -> bool {
        self.as_number().is_some_and(Number::is_u64)
    }

    pub fn is_f64(&self) -> bool {
        self.as_number().is_some_and(Number::is_f64)
    }

    /// `==` that also requires every mapping to hold its keys in the same order (`==` ignores
    /// order, as serde_yaml's did): what "read the same" means for two readers of one text.
    pub(crate) fn eq_in_order(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Sequence(a), Value::Sequence(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.eq_in_order(b))
            }
            (Value::Mapping(a), Value::Mapping(b)) => {
                a.len() == b.len()
                    && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| ka.eq_in_order(kb) && va.eq_in_order(vb))
            }
            (Value::Sequence(_) | Value::Mapping(_), _) | (_, Value::Sequence(_) | Value::Mapping(_)) => false,
            _ => self == other,
        }
    }

    /// How many nodes this value holds (itself included): what an alias to it expands into.
    pub(crate) fn node_count(&self) -> usize {
        let mut count = 0;
        let mut stack = vec![self];
        while let Some(value) = stack.pop() {
            count += 1;
            match value {
                Value::Sequence(items) => stack.extend(items),
                Value::Mapping(map) => {
                    count += map.len();
                    stack.extend(map.values());
                }
                _ => {}
            }
        }
        count
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Sequence(_) => 4,
            Value::Mapping(_) => 5,
        }
    }

    /// Hashes a string exactly as `Value::String` of it hashes, so `&str` keys find their entry.
    pub(crate) fn hash_str<H: Hasher>(text: &str, state: &mut H) {
        state.write_u8(3);
        text.hash(state);
    }
}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Value::String(s) => Value::hash_str(s, state),
            other => {
                state.write_u8(other.rank());
                match other {
                    Value::Bool(b) => b.hash(state),
                    Value::Number(n) => n.hash(state),
                    Value::Sequence(items) => items.hash(state),
                    Value::Mapping(map) => map.hash(state),
                    Value::Null | Value::String(_) => {}
                }
            }
        }
    }
}

impl Ord for Value {
    /// By kind (null, bool, number, string, sequence, mapping), then by content.
    fn cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Number(a), Value::Number(b)) => a.cmp(b),
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::Sequence(a), Value::Sequence(b)) => a.cmp(b),
            (Value::Mapping(a), Value::Mapping(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Index<&str> for Value {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl Index<usize> for Value {
    type Output = Value;
    fn index(&self, index: usize) -> &Value {
        self.as_sequence().and_then(|items| items.get(index)).unwrap_or(&NULL)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

macro_rules! from_integer {
    ($($signed:ty),* ; $($unsigned:ty),*) => {
        $(impl From<$signed> for Value {
            fn from(n: $signed) -> Value {
                Value::Number(Number::from(i64::from(n)))
            }
        })*
        $(impl From<$unsigned> for Value {
            fn from(n: $unsigned) -> Value {
                Value::Number(Number::from(u64::from(n)))
            }
        })*
    };
}

from_integer!(i8, i16, i32, i64; u8, u16, u32, u64);

impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::Number(Number::from(n as u64))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Number(Number::from(f))
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Sequence(items)
    }
}

impl From<Mapping> for Value {
    fn from(map: Mapping) -> Value {
        Value::Mapping(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        let mut metadata = Mapping::new();
        metadata.insert("name".into(), "web".into());
        let mut root = Mapping::new();
        root.insert("metadata".into(), metadata.into());
        root.insert("ports".into(), vec![Value::from(80), Value::from(443u16)].into());
        root.insert("ratio".into(), 0.5.into());
        root.into()
    }

    #[test]
    fn accessors_and_indexing() {
        let value = sample();
        assert_eq!(value["metadata"]["name"].as_str(), Some("web"));
        assert_eq!(value["ports"][1].as_u64(), Some(443));
        assert_eq!(value["ports"][1].as_i64(), Some(443));
        assert_eq!(value["ratio"].as_number().and_then(|n| n.as_f64()), Some(0.5));
        for absent in [&value["missing"], &value["ports"][9], &value["ratio"]["x"], &value[0]] {
            assert!(absent.is_null());
        }
        assert!(value.is_mapping() && value["ports"].is_sequence() && value["ratio"].is_number());
        assert_eq!(Value::from(-3i32).as_u64(), None);
        assert_eq!(Value::from(-3i32).as_i64(), Some(-3));
    }

    #[test]
    fn get_mut_edits_in_place() {
        let mut value = sample();
        *value.get_mut("ratio").unwrap() = true.into();
        value.as_mapping_mut().unwrap().get_mut("metadata").unwrap().as_mapping_mut().unwrap().remove("name");
        assert_eq!(value["ratio"].as_bool(), Some(true));
        assert!(value["metadata"]["name"].is_null());
    }

    #[test]
    fn order_is_by_kind_then_content() {
        let mut values = vec![Value::from("b"), Value::from(2), Value::Null, Value::from("a"), Value::from(true)];
        values.sort();
        assert_eq!(values, [Value::Null, true.into(), 2.into(), "a".into(), "b".into()]);
    }
}

/// Comparisons with plain Rust values, as tests and readers write them (`value["kind"] == "Pod"`).
impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

macro_rules! eq_integer {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.as_i64() == i64::try_from(*other).ok() && self.as_i64().is_some()
                    || self.as_u64().is_some() && self.as_u64() == u64::try_from(*other).ok()
            }
        }
    )*};
}
eq_integer!(i32, i64, u32, u64, usize);

/// `value["key"] = ...`, as serde_yaml allowed: a `Null` becomes a mapping, and a missing key is
/// inserted (as `Null`, at the end) before it is returned. Indexing anything else mutably panics, as
/// serde_yaml's did: that is a programming error, not a user's.
impl std::ops::IndexMut<&str> for Value {
    fn index_mut(&mut self, key: &str) -> &mut Value {
        if self.is_null() {
            *self = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(map) = self else { panic!("cannot index into a non-mapping YAML value with `{key}`") };
        if !map.contains_key(key) {
            map.insert(Value::from(key), Value::Null);
        }
        map.get_mut(key).expect("inserted above")
    }
}
