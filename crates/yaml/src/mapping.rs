//! [`Mapping`]: an insertion-ordered map from [`Value`] to [`Value`], with serde_yaml's `Mapping`
//! API where kix used it.
//!
//! Entries live in one `Vec` in the order they were written, so output keeps the user's order.
//! Lookups scan that `Vec` while the mapping is small (as Kubernetes objects' mappings are) and go
//! through a hash index once it reaches [`INDEX_FROM`] entries, so building or probing a big mapping
//! (a large ConfigMap, a generated label set) is never quadratic. `remove` keeps the order of the
//! remaining entries (serde_yaml's swapped the last entry into the hole).
//!
//! Equality and hashing ignore order, as serde_yaml's did: two mappings are equal when they hold
//! the same entries.
//!
//! A mapping's entries are shared, copy-on-write: cloning a mapping (and so a whole object) is one
//! reference count, and changing a clone copies only the mappings on the path to the change. Derive
//! stamps each instance's objects from one template per shape by changing `metadata` alone
//! (issue 11): the rest of every object stays shared with the template. Values behave exactly as
//! owned values: no change is ever seen through another clone.

use super::tree::{Entries, Mapping, Value};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

/// Size from which a mapping keeps a hash index beside its entries.
const INDEX_FROM: usize = 24;

/// Something a mapping can be probed with: a `&str` (the common case, no allocation) or a `&Value`.
pub trait MapKey {
    fn matches(&self, key: &Value) -> bool;
    /// Must equal [`key_hash`] of the `Value` this key matches.
    fn key_hash(&self) -> u64;
}

impl MapKey for str {
    fn matches(&self, key: &Value) -> bool {
        key.as_str() == Some(self)
    }
    fn key_hash(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        Value::hash_str(self, &mut hasher);
        hasher.finish()
    }
}

impl MapKey for String {
    fn matches(&self, key: &Value) -> bool {
        MapKey::matches(self.as_str(), key)
    }
    fn key_hash(&self) -> u64 {
        MapKey::key_hash(self.as_str())
    }
}

impl MapKey for Value {
    fn matches(&self, key: &Value) -> bool {
        self == key
    }
    fn key_hash(&self) -> u64 {
        key_hash(self)
    }
}

impl<T: MapKey + ?Sized> MapKey for &T {
    fn matches(&self, key: &Value) -> bool {
        (**self).matches(key)
    }
    fn key_hash(&self) -> u64 {
        (**self).key_hash()
    }
}

/// The (deterministic) hash a mapping indexes a key by.
pub(crate) fn key_hash(key: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

impl Mapping {
    pub fn new() -> Mapping {
        Mapping::default()
    }

    pub fn with_capacity(capacity: usize) -> Mapping {
        Mapping::from_entries(Entries { entries: Vec::with_capacity(capacity), index: None })
    }

    fn from_entries(entries: Entries) -> Mapping {
        Mapping { inner: Arc::new(entries) }
    }

    /// The entries for a change: this mapping's own, copied first when a clone shares them.
    fn entries_mut(&mut self) -> &mut Entries {
        Arc::make_mut(&mut self.inner)
    }

    /// Builds a mapping from entries known to have distinct keys (the loader checked them).
    pub(crate) fn from_distinct(entries: Vec<(Value, Value)>) -> Mapping {
        let mut inner = Entries { entries, index: None };
        inner.reindex();
        Mapping::from_entries(inner)
    }

    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    fn position<K: MapKey + ?Sized>(&self, key: &K) -> Option<usize> {
        self.inner.position(key)
    }

    pub fn get<K: MapKey + ?Sized>(&self, key: &K) -> Option<&Value> {
        self.position(key).map(|i| &self.inner.entries[i].1)
    }

    /// The value under `key`, to change (copying the entries first if a clone shares them; not when the
    /// key is absent).
    pub fn get_mut<K: MapKey + ?Sized>(&mut self, key: &K) -> Option<&mut Value> {
        let i = self.position(key)?;
        Some(&mut self.entries_mut().entries[i].1)
    }

    pub fn contains_key<K: MapKey + ?Sized>(&self, key: &K) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key` to `value`: in place when the key is present (returning the old value), else
    /// appended at the end.
    pub fn insert(&mut self, key: Value, value: Value) -> Option<Value> {
        if let Some(i) = self.position(&key) {
            return Some(std::mem::replace(&mut self.entries_mut().entries[i].1, value));
        }
        let inner = self.entries_mut();
        let hash = inner.index.as_ref().map(|_| key_hash(&key));
        inner.entries.push((key, value));
        match (&mut inner.index, hash) {
            (Some(index), Some(hash)) => index.entry(hash).or_default().push(inner.entries.len() - 1),
            _ if inner.entries.len() >= INDEX_FROM => inner.reindex(),
            _ => {}
        }
        None
    }

    /// Removes `key`, keeping the order of the other entries.
    pub fn remove<K: MapKey + ?Sized>(&mut self, key: &K) -> Option<Value> {
        self.remove_entry(key).map(|(_, v)| v)
    }

    /// Removes `key` and returns the entry, keeping the order of the other entries.
    pub(crate) fn remove_entry<K: MapKey + ?Sized>(&mut self, key: &K) -> Option<(Value, Value)> {
        let i = self.position(key)?;
        let inner = self.entries_mut();
        let entry = inner.entries.remove(i);
        inner.reindex();
        Some(entry)
    }

    /// Keeps the entries for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Value, &mut Value) -> bool) {
        let inner = self.entries_mut();
        inner.entries.retain_mut(|(k, v)| keep(k, v));
        inner.reindex();
    }
}

impl Entries {
    fn position<K: MapKey + ?Sized>(&self, key: &K) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(&key.key_hash())?.iter().copied().find(|&i| key.matches(&self.entries[i].0)),
            None => self.entries.iter().position(|(k, _)| key.matches(k)),
        }
    }

    fn reindex(&mut self) {
        self.index = (self.entries.len() >= INDEX_FROM).then(|| {
            let mut index: HashMap<u64, Vec<usize>> = HashMap::with_capacity(self.entries.len());
            for (i, (key, _)) in self.entries.iter().enumerate() {
                index.entry(key_hash(key)).or_default().push(i);
            }
            Box::new(index)
        });
    }
}

impl Mapping {
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Value, &Value)> + ExactSizeIterator {
        self.inner.entries.iter().map(|(k, v)| (k, v))
    }

    /// Entries with mutable values (keys stay fixed, so the index stays valid).
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&Value, &mut Value)> + ExactSizeIterator {
        self.entries_mut().entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.inner.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.inner.entries.iter().map(|(_, v)| v)
    }

    #[cfg(test)]
    pub(crate) fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.entries_mut().entries.iter_mut().map(|(_, v)| v)
    }

    /// The entries as written, for code that rebuilds a mapping in another order.
    pub(crate) fn into_entries(self) -> Vec<(Value, Value)> {
        Arc::unwrap_or_clone(self.inner).entries
    }

    /// Whether the two share their entries (so are equal without looking).
    pub(crate) fn shares_entries_with(&self, other: &Mapping) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// As the derived `Debug` of the unshared mapping printed (sharing is not part of a value).
impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping").field("entries", &self.inner.entries).field("index", &self.inner.index).finish()
    }
}

impl PartialEq for Mapping {
    fn eq(&self, other: &Mapping) -> bool {
        self.shares_entries_with(other)
            || (self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v)))
    }
}

impl Eq for Mapping {}

impl Hash for Mapping {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Order-independent, to agree with `eq`.
        let mut sum = 0u64;
        for (k, v) in self.iter() {
            let mut hasher = DefaultHasher::new();
            k.hash(&mut hasher);
            v.hash(&mut hasher);
            sum = sum.wrapping_add(hasher.finish());
        }
        state.write_usize(self.len());
        state.write_u64(sum);
    }
}

impl Ord for Mapping {
    /// Entries compared in key order (as serde_yaml did), so the order agrees with `eq`.
    fn cmp(&self, other: &Mapping) -> Ordering {
        let mut a: Vec<_> = self.iter().collect();
        let mut b: Vec<_> = other.iter().collect();
        a.sort();
        b.sort();
        a.cmp(&b)
    }
}

impl PartialOrd for Mapping {
    fn partial_cmp(&self, other: &Mapping) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Extend<(Value, Value)> for Mapping {
    fn extend<I: IntoIterator<Item = (Value, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(Value, Value)> for Mapping {
    fn from_iter<I: IntoIterator<Item = (Value, Value)>>(iter: I) -> Mapping {
        let mut mapping = Mapping::new();
        mapping.extend(iter);
        mapping
    }
}

impl IntoIterator for Mapping {
    type Item = (Value, Value);
    type IntoIter = std::vec::IntoIter<(Value, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_entries().into_iter()
    }
}

impl<'a> IntoIterator for &'a Mapping {
    type Item = (&'a Value, &'a Value);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (Value, Value)>, fn(&'a (Value, Value)) -> (&'a Value, &'a Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.inner.entries.iter().map(|(k, v)| (k, v))
    }
}

impl<'a> IntoIterator for &'a mut Mapping {
    type Item = (&'a Value, &'a mut Value);
    type IntoIter = std::iter::Map<
        std::slice::IterMut<'a, (Value, Value)>,
        fn(&'a mut (Value, Value)) -> (&'a Value, &'a mut Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries_mut().entries.iter_mut().map(|(k, v)| (&*k, v))
    }
}

/// `mapping["key"]`: the value, or `Null` when absent (as [`Value`]'s index).
impl std::ops::Index<&str> for Mapping {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&super::tree::NULL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(map: &Mapping) -> Vec<String> {
        map.keys().map(|k| k.as_str().unwrap_or("?").to_string()).collect()
    }

    #[test]
    fn insert_replaces_in_place_and_appends_new_keys() {
        let mut map = Mapping::new();
        assert_eq!(map.insert("a".into(), 1.into()), None);
        assert_eq!(map.insert("b".into(), 2.into()), None);
        assert_eq!(map.insert("a".into(), 3.into()), Some(1.into()));
        assert_eq!(keys(&map), ["a", "b"]);
        assert_eq!(map.get("a"), Some(&Value::from(3)));
    }

    #[test]
    fn remove_keeps_order_small_and_indexed() {
        for size in [5, INDEX_FROM + 10] {
            let mut map: Mapping = (0..size).map(|i| (Value::from(format!("k{i}")), Value::from(i))).collect();
            assert_eq!(map.remove("k1"), Some(Value::from(1)));
            assert_eq!(map.len(), size - 1);
            assert_eq!(keys(&map)[..3], ["k0", "k2", "k3"]);
            for i in (0..size).filter(|&i| i != 1) {
                assert_eq!(map.get(format!("k{i}").as_str()), Some(&Value::from(i)), "size {size} key {i}");
            }
            assert!(!map.contains_key("k1"));
        }
    }

    #[test]
    fn non_string_keys_and_order_insensitive_equality() {
        let mut a = Mapping::new();
        a.insert(1.into(), "one".into());
        a.insert(true.into(), "yes".into());
        let mut b = Mapping::new();
        b.insert(true.into(), "yes".into());
        b.insert(1.into(), "one".into());
        assert_eq!(a, b);
        assert_eq!(key_hash(&Value::Mapping(a.clone())), key_hash(&Value::Mapping(b)));
        assert_eq!(a.get(&Value::from(1)), Some(&Value::from("one")));
        assert_eq!(a.get("1"), None);
    }

    /// Clones share their entries until one changes; no change is ever seen through another clone,
    /// through any of the ways to change a mapping, nested or not.
    #[test]
    fn clones_are_independent_values() {
        let original: Mapping = (0..INDEX_FROM + 2).map(|i| (Value::from(format!("k{i}")), Value::from(i))).collect();
        let mut nested = Mapping::new();
        nested.insert("inner".into(), Value::Mapping(original.clone()));
        let changes: [fn(&mut Mapping); 6] = [
            |m| _ = m.insert("k0".into(), "changed".into()),
            |m| _ = m.insert("new".into(), 1.into()),
            |m| _ = m.remove("k1"),
            |m| m.retain(|k, _| k != "k2"),
            |m| m.values_mut().for_each(|v| *v = Value::Null),
            |m| *m.get_mut("k3").unwrap() = Value::Null,
        ];
        for (n, change) in changes.iter().enumerate() {
            let mut copy = original.clone();
            assert!(copy.shares_entries_with(&original));
            change(&mut copy);
            assert!(!copy.shares_entries_with(&original), "change {n}");
            assert_ne!(copy, original, "change {n}");
            assert_eq!(original.get("k0"), Some(&Value::from(0)), "change {n}");
            assert_eq!(original.len(), INDEX_FROM + 2, "change {n}");
            assert!(original.contains_key("k1") && original.contains_key("k2"), "change {n}");

            let mut outer = nested.clone();
            change(outer.get_mut("inner").and_then(Value::as_mapping_mut).unwrap());
            assert_eq!(nested["inner"], Value::Mapping(original.clone()), "nested change {n}");
        }
        // Probing for an absent key to change copies nothing.
        let mut copy = original.clone();
        assert!(copy.get_mut("absent").is_none());
        assert!(copy.shares_entries_with(&original));
    }

    #[test]
    fn big_mappings_insert_in_linear_time() {
        let mut map = Mapping::new();
        for i in 0..50_000u64 {
            map.insert(Value::from(format!("key-{i}")), i.into());
        }
        assert_eq!(map.get("key-49999"), Some(&Value::from(49_999u64)));
        assert_eq!(map.len(), 50_000);
    }
}
