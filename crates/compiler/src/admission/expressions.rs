//! The CEL of kix's admission policies, written portably: CEL's standard definitions and macros (`has`,
//! `all`, `exists`), `in`, `int()`, `string()`, the conditional and string concatenation, nothing of the
//! optional-field syntax (`?.`, `orValue`) or of Kubernetes' own libraries, so any conforming CEL
//! evaluator runs them, not only the API server's (the tests run them on the `cel` crate).
//!
//! Every expression is total on the objects it can meet: a field is read only behind `has()` of it and of
//! each parent, so a missing field is a value (its API default), never an evaluation error that the
//! policy's `failurePolicy: Fail` would turn into a denial the message does not explain.
//!
//! Cost (the API server's limits: 1,000,000 per expression, 10,000,000 per binding; see
//! docs/admission.md): every expression is a constant number of field reads and params lookups, except
//! the spread check, which visits each topology spread constraint once and, inside it, each label of its
//! selector against the template's labels (a map lookup each): cost grows as constraints x selector terms.

/// Words CEL reserves, which cannot be written as a field selection (`x.namespace`).
const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "false",
    "for",
    "function",
    "if",
    "import",
    "in",
    "let",
    "loop",
    "namespace",
    "null",
    "package",
    "return",
    "true",
    "var",
    "void",
    "while",
];

/// Whether `segment` can be written as `x.segment`.
fn selectable(segment: &str) -> bool {
    let mut chars = segment.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&segment)
}

/// A CEL string literal of `text` (single-quoted; backslashes and quotes escaped).
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The value at `path` under `base`: field selections, or an index where a name is not selectable.
pub fn select(base: &str, path: &[String]) -> String {
    let mut out = base.to_string();
    for segment in path {
        if selectable(segment) {
            out.push('.');
            out.push_str(segment);
        } else {
            out.push('[');
            out.push_str(&literal(segment));
            out.push(']');
        }
    }
    out
}

/// Whether every step of `path` under `base` is present: `has()` of each selection (`in` for a name that
/// is not selectable), parents first, so reading the value after it cannot fail.
pub fn present(base: &str, path: &[String]) -> String {
    let mut tests = Vec::with_capacity(path.len());
    for (depth, segment) in path.iter().enumerate() {
        let parent = select(base, &path[..depth]);
        tests.push(match selectable(segment) {
            true => format!("has({parent}.{segment})"),
            false => format!("{} in {parent}", literal(segment)),
        });
    }
    tests.join(" && ")
}

/// The value at `path`, or `default` (a CEL expression) where any step is absent.
pub fn or_default(base: &str, path: &[String], default: &str) -> String {
    format!("({} ? {} : {default})", present(base, path), select(base, path))
}

/// The params entry named `fact` of the object the request is about (`params.data[prefix + 'floor']`).
pub fn fact(name: &str) -> String {
    format!("params.data[variables.prefix + {}]", literal(name))
}

/// Whether the params hold `fact` for the object the request is about.
pub fn has_fact(name: &str) -> String {
    format!("((variables.prefix + {}) in params.data)", literal(name))
}

/// The match condition that the request's object is one kix compiled: its entry in the namespace's params
/// (match conditions cannot read `variables`, so the prefix is written out).
pub fn compiled(prefix: &str, key: &str) -> String {
    format!("({} + request.name + {}) in params.data", literal(prefix), literal(key))
}

/// Whether a label selector (a LabelSelector value at `selector`) selects the labels held in
/// `variables.labels`, as `metav1.LabelSelectorAsSelector` reads it: every `matchLabels` pair present,
/// every `matchExpressions` requirement met (`In`, `NotIn`, `Exists`, `DoesNotExist`); an empty selector
/// selects everything.
pub fn selects_labels(selector: &str) -> String {
    let labels = "variables.labels";
    format!(
        "(!has({selector}.matchLabels) || {selector}.matchLabels.all(k, k in {labels} && {labels}[k] == {selector}.matchLabels[k])) \
         && (!has({selector}.matchExpressions) || {selector}.matchExpressions.all(e, \
         e.operator == 'In' ? (e.key in {labels} && {labels}[e.key] in e.values) : \
         e.operator == 'NotIn' ? !(e.key in {labels} && {labels}[e.key] in e.values) : \
         e.operator == 'Exists' ? e.key in {labels} : !(e.key in {labels})))"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> Vec<String> {
        text.split('.').map(str::to_string).collect()
    }

    #[test]
    fn reserved_words_and_dashes_are_indexed_not_selected() {
        assert_eq!(select("object", &path("spec.replicas")), "object.spec.replicas");
        assert_eq!(select("object", &path("metadata.namespace")), "object.metadata['namespace']");
        assert_eq!(
            present("object", &path("spec.pod-template.x")),
            "has(object.spec) && 'pod-template' in object.spec && has(object.spec['pod-template'].x)"
        );
    }

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(literal(r"it's a\b"), r"'it\'s a\\b'");
    }
}
