//! The data model's two types, [`Value`] (one YAML node) and [`Mapping`] (an insertion-ordered,
//! copy-on-write map of values). Each contains the other, so they are defined together here;
//! what they do lives in `value.rs` and `mapping.rs`, which both use this file and not each other.

use super::Number;
use std::collections::HashMap;
use std::sync::Arc;

/// A YAML value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Sequence(Vec<Value>),
    Mapping(Mapping),
}

pub(crate) static NULL: Value = Value::Null;

/// An insertion-ordered YAML mapping.
#[derive(Clone, Default)]
pub struct Mapping {
    pub(crate) inner: Arc<Entries>,
}

/// A mapping's entries and index, shared by its clones until one of them changes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Entries {
    pub(crate) entries: Vec<(Value, Value)>,
    /// Key hash to entry positions; present once the mapping has `INDEX_FROM` entries. Boxed so
    /// that small mappings (and so every `Value`) stay small: 8 bytes here instead of 48.
    #[allow(clippy::box_collection)]
    pub(crate) index: Option<Box<HashMap<u64, Vec<usize>>>>,
}
