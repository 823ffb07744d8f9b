//! Which fields a k8s-openapi struct knows at a path, asked of the type itself.
//!
//! Every generated struct deserializes through `deserialize_struct(name, FIELDS, visitor)`. The
//! probe is a deserializer that walks down a path, offering at each level a mapping with just the
//! next key (or a sequence with just one item), and at the end of the path catches `FIELDS` and
//! stops. It runs only when an unknown field needs a suggestion, so the field lists never have to
//! be typed out or kept in step with k8s-openapi.

use super::error::Step;
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::fmt;

/// The fields of the struct `T` holds at `path`, if a struct is there.
pub(super) fn fields<T: DeserializeOwned>(path: &[Step]) -> Option<&'static [&'static str]> {
    let found = Cell::new(None);
    let _ = T::deserialize(Probe { rest: path, found: &found });
    found.get()
}

/// Why a probe stopped (found or not, it always stops with an error).
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probe stopped")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Stop {
        Stop
    }
}

#[derive(Clone, Copy)]
struct Probe<'p> {
    rest: &'p [Step],
    found: &'p Cell<Option<&'static [&'static str]>>,
}

impl<'de, 'p> Deserializer<'de> for Probe<'p> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.rest.split_first() {
            Some((Step::Key(key), rest)) => {
                visitor.visit_map(OneEntry { key: Some(key), value: Probe { rest, found: self.found } })
            }
            Some((Step::Index(_), rest)) => visitor.visit_seq(OneItem(Some(Probe { rest, found: self.found }))),
            None => Err(Stop),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        if self.rest.is_empty() {
            self.found.set(Some(fields));
            return Err(Stop);
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A mapping of one entry: the path's next key, and the probe for the rest as its value.
struct OneEntry<'p> {
    key: Option<&'p str>,
    value: Probe<'p>,
}

impl<'de, 'p> MapAccess<'de> for OneEntry<'p> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Stop> {
        match self.key.take() {
            Some(key) => seed.deserialize(StrDeserializer::<Stop>::new(key)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        seed.deserialize(self.value)
    }
}

/// A sequence of one item: the probe for the rest.
struct OneItem<'p>(Option<Probe<'p>>);

impl<'de, 'p> SeqAccess<'de> for OneItem<'p> {
    type Error = Stop;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Stop> {
        match self.0.take() {
            Some(probe) => seed.deserialize(probe).map(Some),
            None => Ok(None),
        }
    }
}
