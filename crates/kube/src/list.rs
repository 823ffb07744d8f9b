//! Lists: a `kind: List` (what `kubectl get -o yaml` prints) or a typed list
//! (`ConfigMapList`, `RoleBindingList`, ...) stands for its items, as kubectl's
//! resource builder flattens them (k8s.io/cli-runtime/pkg/resource
//! `FlattenListVisitor`, through apimachinery `meta.ExtractList`). Nested lists
//! flatten too; `items: null` is an empty list.
//!
//! Each item keeps its own position tree, so a problem with one item points at
//! that item's lines.

use kix_yaml::{Marks, MarksKind, Span, Value};

/// Why a list cannot be flattened.
#[derive(Debug, thiserror::Error)]
#[error("`items` of a {kind} must be a list")]
pub struct ListError {
    pub kind: String,
    /// Where `items` is written.
    pub at: Span,
}

/// Whether an object is a list: its kind ends in `List` and it has `items`.
pub(crate) fn is_list(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str).is_some_and(|kind| kind.ends_with("List")) && value.get("items").is_some()
}

/// The objects a document stands for, each with its marks: a list's items (flattened), or itself.
pub fn flatten(value: Value, marks: Marks) -> Result<Vec<(Value, Marks)>, ListError> {
    let mut objects = Vec::new();
    let mut pending = vec![(value, marks)];
    while let Some((value, marks)) = pending.pop() {
        if !is_list(&value) {
            objects.push((value, marks));
            continue;
        }
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let Value::Mapping(mut map) = value else { unreachable!("a list has a kind, so it is a mapping") };
        let items_marks = take_entry(marks, "items");
        match map.remove("items") {
            Some(Value::Null) | None => {}
            Some(Value::Sequence(items)) => {
                let item_marks = match items_marks.map(|m| m.kind) {
                    Some(MarksKind::Sequence(item_marks)) => item_marks,
                    _ => Vec::new(),
                };
                // Reversed, so the stack pops the items in their order.
                let mut pairs: Vec<(Value, Marks)> = items.into_iter().zip(item_marks).collect();
                pairs.reverse();
                pending.extend(pairs);
            }
            Some(_) => {
                let at = items_marks.map(|m| m.span).unwrap_or_default();
                return Err(ListError { kind, at });
            }
        }
    }
    Ok(objects)
}

/// [`flatten`] of a document read without positions (the fast reader's): the same objects in
/// the same order, or the same error (its span left empty).
pub fn flatten_values(value: Value) -> Result<Vec<Value>, ListError> {
    let mut objects = Vec::new();
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        if !is_list(&value) {
            objects.push(value);
            continue;
        }
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let Value::Mapping(mut map) = value else { unreachable!("a list has a kind, so it is a mapping") };
        match map.remove("items") {
            Some(Value::Null) | None => {}
            // Reversed, so the stack pops the items in their order.
            Some(Value::Sequence(items)) => pending.extend(items.into_iter().rev()),
            Some(_) => return Err(ListError { kind, at: Span::default() }),
        }
    }
    Ok(objects)
}

/// The marks of a mapping's entry, taken out of the tree.
fn take_entry(marks: Marks, key: &str) -> Option<Marks> {
    match marks.kind {
        MarksKind::Mapping(entries) => entries
            .into_iter()
            .find(|entry| entry.key_text.as_ref().is_some_and(|text| text.as_str() == key))
            .map(|entry| entry.value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kix_yaml::{Limits, parse_stream};

    fn flat(text: &str) -> Result<Vec<(String, u32)>, String> {
        let document = parse_stream(text, &Limits::PACKAGE).remove(0).unwrap();
        flatten(document.value, document.marks)
            .map(|objects| {
                objects
                    .into_iter()
                    .map(|(value, marks)| {
                        (value["metadata"]["name"].as_str().unwrap_or("-").to_string(), marks.span.start.line)
                    })
                    .collect()
            })
            .map_err(|e| format!("{e} at line {}", e.at.start.line))
    }

    #[test]
    fn lists_typed_lists_and_nested_lists_stand_for_their_items() {
        type Expected<'a> = Result<Vec<(&'a str, u32)>, &'a str>;
        let cases: &[(&str, Expected<'_>)] = &[
            ("kind: ConfigMap\nmetadata: {name: a}\n", Ok(vec![("a", 1)])),
            (
                "apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  metadata: {name: a}\n- kind: Secret\n  metadata: {name: b}\n",
                Ok(vec![("a", 4), ("b", 6)]),
            ),
            (
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBindingList\nitems:\n  - kind: RoleBinding\n    metadata: {name: r}\n",
                Ok(vec![("r", 4)]),
            ),
            (
                "kind: List\nitems:\n- kind: List\n  items:\n  - kind: Pod\n    metadata: {name: inner}\n- kind: Pod\n  metadata: {name: outer}\n",
                Ok(vec![("inner", 5), ("outer", 7)]),
            ),
            ("kind: List\nitems: null\n", Ok(vec![])),
            (
                "kind: List\nitems: [{kind: Pod, metadata: {name: p}}, {kind: Pod, metadata: {name: q}}]\n",
                Ok(vec![("p", 2), ("q", 2)]),
            ),
            ("kind: ConfigMapList\nitems: {a: 1}\n", Err("`items` of a ConfigMapList must be a list at line 2")),
            // A kind ending in List without items is an object of its own (a CRD's kind may end so).
            ("kind: WatchList\nmetadata: {name: w}\n", Ok(vec![("w", 1)])),
        ];
        for (text, expected) in cases {
            let expected = expected.clone().map(|v| v.into_iter().map(|(n, l)| (n.to_string(), l)).collect::<Vec<_>>());
            assert_eq!(flat(text), expected.clone().map_err(str::to_string), "{text}");
            // Without positions: the same objects, or the same error.
            let value = parse_stream(text, &Limits::PACKAGE).remove(0).unwrap().value;
            let names = |objects: Vec<Value>| -> Vec<String> {
                objects.iter().map(|o| o["metadata"]["name"].as_str().unwrap_or("-").to_string()).collect()
            };
            let expected = expected.map(|v| v.into_iter().map(|(n, _)| n).collect::<Vec<_>>());
            match (flatten_values(value), expected) {
                (Ok(objects), Ok(expected)) => assert_eq!(names(objects), expected, "{text}"),
                (Err(error), Err(expected)) => assert!(expected.starts_with(&error.to_string()), "{text}"),
                (got, expected) => panic!("{text}: {got:?} against {expected:?}"),
            }
        }
    }
}
