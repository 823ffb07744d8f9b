//! Label selectors: parsing from a user's document and matching against labels (R12).
//!
//! Implements `matchLabels` and the four `matchExpressions` operators with the
//! apimachinery semantics: all requirements are ANDed; `NotIn` and
//! `DoesNotExist` match labels that lack the key. An empty selector matches
//! everything; kix refuses to copy one (see `Selector::is_empty`). Follows
//! staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go
//! (`LabelSelectorAsSelector`) and pkg/labels/selector.go (`Requirement.Matches`).

use kix_yaml::Value;
use std::collections::BTreeMap;

/// Labels of a pod or object: key to value.
pub type Labels = BTreeMap<String, String>;

/// Labels looked up by key: what a selector is matched against, [`Labels`] or [`CompactLabels`].
pub trait LabelLookup {
    fn label(&self, key: &str) -> Option<&str>;
}

impl<T: LabelLookup + ?Sized> LabelLookup for &T {
    fn label(&self, key: &str) -> Option<&str> {
        (**self).label(key)
    }
}

impl LabelLookup for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// Labels in one allocation, sorted by key as [`Labels`] iterates them: for records kept for a whole
/// run (`kix lint` keeps one per workload of its input), where a `BTreeMap`'s first node costs 544
/// bytes however few labels it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactLabels(Box<[(Box<str>, Box<str>)]>);

impl CompactLabels {
    /// The value of `key`, if the labels have it.
    pub fn get(&self, key: &str) -> Option<&str> {
        let found = self.0.binary_search_by(|(k, _)| (**k).cmp(key)).ok()?;
        Some(&self.0[found].1)
    }

    /// Key and value, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + Clone {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Labels> for CompactLabels {
    fn from(labels: Labels) -> CompactLabels {
        // A BTreeMap iterates by key: the pairs come sorted.
        CompactLabels(labels.into_iter().map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str())).collect())
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for CompactLabels {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> CompactLabels {
        let mut pairs: Vec<(Box<str>, Box<str>)> = pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        pairs.sort_by(|(a, _), (b, _)| a.cmp(b));
        pairs.dedup_by(|(a, _), (b, _)| a == b);
        CompactLabels(pairs.into_boxed_slice())
    }
}

impl LabelLookup for CompactLabels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

/// A [`Selector`] in one allocation per part ([`CompactLabels`] for its `matchLabels`), for records kept
/// for a whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactSelector {
    pub match_labels: CompactLabels,
    pub requirements: Box<[Requirement]>,
}

impl From<Selector> for CompactSelector {
    fn from(selector: Selector) -> CompactSelector {
        CompactSelector {
            match_labels: selector.match_labels.into(),
            requirements: selector.requirements.into_boxed_slice(),
        }
    }
}

impl CompactSelector {
    /// [`Selector::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.requirements.is_empty()
    }

    /// [`Selector::keys`].
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.match_labels.iter().map(|(k, _)| k).chain(self.requirements.iter().map(|r| r.key.as_str()))
    }

    /// [`Selector::matches`].
    pub fn matches(&self, labels: &(impl LabelLookup + ?Sized)) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.label(k) == Some(v))
            && self.requirements.iter().all(|r| r.matches(labels))
    }
}

/// One `matchExpressions` operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: &(impl LabelLookup + ?Sized)) -> bool {
        let value = labels.label(&self.key);
        let listed = |v: &str| self.values.iter().any(|listed| listed == v);
        match self.operator {
            Operator::In => value.is_some_and(listed),
            Operator::NotIn => value.is_none_or(|v| !listed(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

/// A parsed `metav1.LabelSelector`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Selector {
    pub match_labels: Labels,
    pub requirements: Vec<Requirement>,
}

impl Selector {
    /// Parses a selector from a user's document, validating operators, values and label syntax.
    pub fn from_value(value: &Value) -> Result<Selector, String> {
        let map = value.as_mapping().ok_or("a selector must be a mapping")?;
        let mut selector = Selector::default();
        for (key, field) in map {
            match key.as_str() {
                Some("matchLabels") => {
                    if field.is_null() {
                        continue;
                    }
                    let labels = field.as_mapping().ok_or("matchLabels must be a mapping of strings")?;
                    for (k, v) in labels {
                        let (Some(k), Some(v)) = (k.as_str(), scalar_string(v)) else {
                            return Err("matchLabels must map label keys to string values".into());
                        };
                        crate::names::label_key(k)
                            .map_err(|why| format!("matchLabels key `{k}` is not a valid label key: {why}"))?;
                        crate::names::label_value(&v).map_err(|why| {
                            format!("matchLabels value `{v}` of `{k}` is not a valid label value: {why}")
                        })?;
                        selector.match_labels.insert(k.to_string(), v);
                    }
                }
                Some("matchExpressions") => {
                    if field.is_null() {
                        continue;
                    }
                    let list = field.as_sequence().ok_or("matchExpressions must be a list")?;
                    for item in list {
                        selector.requirements.push(parse_requirement(item)?);
                    }
                }
                Some(other) => return Err(format!("unknown selector field `{other}`")),
                None => return Err("selector keys must be strings".into()),
            }
        }
        Ok(selector)
    }

    /// True when the selector has no requirement at all (it would select every pod).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.requirements.is_empty()
    }

    /// Whether a set of labels satisfies every requirement.
    pub fn matches(&self, labels: &(impl LabelLookup + ?Sized)) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.label(k) == Some(v.as_str()))
            && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Keys the selector constrains (for `matchLabelKeys` validation).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.match_labels.keys().map(String::as_str).chain(self.requirements.iter().map(|r| r.key.as_str()))
    }
}

fn parse_requirement(item: &Value) -> Result<Requirement, String> {
    let map = item.as_mapping().ok_or("each matchExpressions entry must be a mapping")?;
    let mut key = None;
    let mut operator = None;
    let mut values = Vec::new();
    for (field, value) in map {
        match field.as_str() {
            Some("key") => key = value.as_str().map(str::to_string),
            Some("operator") => {
                operator = Some(match value.as_str() {
                    Some("In") => Operator::In,
                    Some("NotIn") => Operator::NotIn,
                    Some("Exists") => Operator::Exists,
                    Some("DoesNotExist") => Operator::DoesNotExist,
                    _ => {
                        return Err(format!(
                            "operator `{}` is not In, NotIn, Exists or DoesNotExist",
                            display_scalar(value)
                        ));
                    }
                })
            }
            Some("values") => {
                if value.is_null() {
                    continue;
                }
                let list = value.as_sequence().ok_or("values must be a list of strings")?;
                for v in list {
                    values.push(scalar_string(v).ok_or("values must be a list of strings")?);
                }
            }
            Some(other) => return Err(format!("unknown matchExpressions field `{other}`")),
            None => return Err("matchExpressions keys must be strings".into()),
        }
    }
    let key = key.ok_or("a matchExpressions entry needs a key")?;
    crate::names::label_key(&key)
        .map_err(|why| format!("matchExpressions key `{key}` is not a valid label key: {why}"))?;
    let operator = operator.ok_or_else(|| format!("the matchExpressions entry for `{key}` needs an operator"))?;
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => {
            return Err(format!("operator {operator:?} on `{key}` needs at least one value"));
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            return Err(format!("operator {operator:?} on `{key}` takes no values"));
        }
        _ => {}
    }
    for v in &values {
        crate::names::label_value(v)
            .map_err(|why| format!("value `{v}` of `{key}` is not a valid label value: {why}"))?;
    }
    Ok(Requirement { key, operator, values })
}

/// A scalar as the string Kubernetes would see (YAML `true` or `1` as label values are strings to the API server
/// only when quoted; kix accepts only real strings).
fn scalar_string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

fn display_scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => kix_yaml::emit::to_string(other).trim().to_string(),
    }
}

/// Reads a `labels` mapping (metadata.labels); non-string values are refused.
pub fn labels_from_value(value: Option<&Value>) -> Result<Labels, String> {
    let Some(value) = value else { return Ok(Labels::new()) };
    if value.is_null() {
        return Ok(Labels::new());
    }
    let map = value.as_mapping().ok_or("labels must be a mapping")?;
    let mut labels = Labels::new();
    for (k, v) in map {
        let (Some(k), Some(v)) = (k.as_str(), v.as_str()) else {
            return Err("labels must map keys to string values (quote numbers and booleans)".into());
        };
        labels.insert(k.to_string(), v.to_string());
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(yaml: &str) -> Selector {
        Selector::from_value(&kix_yaml::from_str(yaml).unwrap()).unwrap()
    }

    /// The compact forms answer as the selector and the labels they came from: every selector against every
    /// label set, lookups by key present and absent, and the order of the pairs.
    #[test]
    fn compact_labels_and_selectors_match_as_the_originals() {
        let selectors = [
            "{}",
            "{matchLabels: {app: web}}",
            "{matchLabels: {app: web, tier: api}}",
            "{matchExpressions: [{key: tier, operator: In, values: [api, db]}]}",
            "{matchExpressions: [{key: tier, operator: NotIn, values: [api]}]}",
            "{matchExpressions: [{key: app, operator: Exists}, {key: canary, operator: DoesNotExist}]}",
            "{matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [api]}]}",
        ];
        let label_sets: Vec<Labels> = [
            vec![],
            vec![("app", "web")],
            vec![("tier", "api"), ("app", "web")],
            vec![("app", "web"), ("tier", "db"), ("canary", "yes")],
            vec![("tier", "api")],
        ]
        .into_iter()
        .map(|pairs| pairs.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
        .collect();
        for yaml in selectors {
            let original = selector(yaml);
            let compact = CompactSelector::from(original.clone());
            assert_eq!(compact.is_empty(), original.is_empty(), "{yaml}");
            assert_eq!(compact.keys().collect::<Vec<_>>(), original.keys().collect::<Vec<_>>(), "{yaml}");
            for labels in &label_sets {
                let compact_labels = CompactLabels::from(labels.clone());
                let expected = original.matches(labels);
                assert_eq!(compact.matches(labels), expected, "{yaml} on {labels:?}");
                assert_eq!(compact.matches(&compact_labels), expected, "{yaml} on {labels:?}");
                assert_eq!(original.matches(&compact_labels), expected, "{yaml} on {labels:?}");
            }
        }
        for labels in &label_sets {
            let compact = CompactLabels::from(labels.clone());
            let pairs: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(compact.iter().collect::<Vec<_>>(), pairs);
            assert_eq!(pairs.iter().copied().rev().collect::<CompactLabels>(), compact);
            for key in ["app", "tier", "canary", "zzz", ""] {
                assert_eq!(compact.get(key), labels.get(key).map(String::as_str), "{key} in {labels:?}");
            }
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    // R12: matchLabels and all four operators, as a table.
    #[test]
    fn r12_selector_matching_table() {
        let pod = labels(&[("app", "web"), ("tier", "api")]);
        let cases = [
            ("matchLabels: {app: web}", true),
            ("matchLabels: {app: db}", false),
            ("matchLabels: {app: web, tier: api}", true),
            ("matchExpressions: [{key: app, operator: In, values: [web, db]}]", true),
            ("matchExpressions: [{key: app, operator: In, values: [db]}]", false),
            ("matchExpressions: [{key: app, operator: NotIn, values: [db]}]", true),
            ("matchExpressions: [{key: app, operator: NotIn, values: [web]}]", false),
            ("matchExpressions: [{key: zone, operator: NotIn, values: [a]}]", true),
            ("matchExpressions: [{key: tier, operator: Exists}]", true),
            ("matchExpressions: [{key: zone, operator: Exists}]", false),
            ("matchExpressions: [{key: zone, operator: DoesNotExist}]", true),
            ("matchExpressions: [{key: app, operator: DoesNotExist}]", false),
            ("{matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [db]}]}", false),
            ("{}", true),
        ];
        for (yaml, expected) in cases {
            assert_eq!(selector(yaml).matches(&pod), expected, "{yaml}");
        }
    }

    #[test]
    fn r12_malformed_selectors_are_refused() {
        for yaml in [
            "matchExpressions: [{key: app, operator: In}]",
            "matchExpressions: [{key: app, operator: Exists, values: [a]}]",
            "matchExpressions: [{key: app, operator: Equals, values: [a]}]",
            "matchExpressions: [{operator: Exists}]",
            "matchLabels: {'-bad': x}",
            "matchLabels: {app: 3}",
            "matchLabel: {app: web}",
        ] {
            assert!(Selector::from_value(&kix_yaml::from_str(yaml).unwrap()).is_err(), "{yaml}");
        }
    }
}
