//! Tests of the located loader: positions, duplicate keys, aliases, merge keys, limits and
//! syntax errors, each asserting the error kind and its exact line:column.

use super::*;
use crate::{Located, Seg};

fn docs(text: &str) -> Vec<Result<ParsedDocument, YamlError>> {
    parse_stream(text, &Limits::PACKAGE)
}

fn one(text: &str) -> ParsedDocument {
    let mut all = docs(text);
    assert_eq!(all.len(), 1, "{text}");
    all.remove(0).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn first_error(text: &str) -> YamlError {
    docs(text).into_iter().find_map(Result::err).unwrap_or_else(|| panic!("no error in {text}"))
}

/// `line:column` of where a path is written, and whether it was found whole.
fn at(marks: &Marks, path: &[Seg]) -> (String, bool) {
    let Located { span, exact } = marks.locate(path);
    (span.start.to_string(), exact)
}

use Seg::{Index as I, Key as K};

#[test]
fn positions_of_keys_and_items() {
    let block = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    ports:\n    - containerPort: 80\n";
    let flow = "a: {b: 1, c: [x, {d: y}]}\n'quoted key': {\"e f\": 2}\n";
    let cases: &[(&str, &[Seg], &str, bool)] = &[
        (block, &[K("kind")], "2:1", true),
        (block, &[K("metadata"), K("name")], "4:3", true),
        (block, &[K("spec"), K("containers"), I(0)], "7:5", true),
        (block, &[K("spec"), K("containers"), I(1), K("name")], "9:5", true),
        (block, &[K("spec"), K("containers"), I(1), K("ports"), I(0), K("containerPort")], "11:7", true),
        (block, &[K("spec"), K("containers"), I(1), K("image")], "9:5", false),
        (block, &[K("spec"), K("nodeName")], "5:1", false),
        (block, &[K("status")], "1:1", false),
        (flow, &[K("a"), K("c")], "1:11", true),
        (flow, &[K("a"), K("c"), I(1)], "1:18", true),
        (flow, &[K("a"), K("c"), I(1), K("d")], "1:19", true),
        (flow, &[K("quoted key")], "2:1", true),
        (flow, &[K("quoted key"), K("e f")], "2:16", true),
    ];
    for (text, path, expected, exact) in cases {
        let doc = one(text);
        assert_eq!(at(&doc.marks, path), (expected.to_string(), *exact), "{path:?} in {text}");
    }
}

#[test]
fn spans_have_ends_and_byte_offsets() {
    let doc = one("name: 'héllo wörld'\nnext: é\n");
    let name = doc.marks.entry("name").unwrap();
    assert_eq!((name.value.span.start.column, name.value.span.start.offset), (7, 6));
    assert_eq!((name.value.span.end.column, name.value.span.end.offset), (20, 21));
    let next = doc.marks.entry("next").unwrap();
    // Columns count characters; offsets count bytes (two accented letters before: +2).
    assert_eq!((next.value.span.start.line, next.value.span.start.column, next.value.span.start.offset), (2, 7, 28));
    let flow = one("x: [a, b]\n");
    let x = &flow.marks.entry("x").unwrap().value.span;
    assert_eq!((x.start.column, x.end.column), (4, 10));
}

#[test]
fn multi_document_streams_and_lists() {
    let text = "# only a comment\n---\n---\napiVersion: v1\nkind: List\nitems:\n- kind: A\n  metadata: {name: a}\n- {kind: B, metadata: {name: b}}\n---\n# nothing\n...\n---\nkind: C\n";
    let all: Vec<ParsedDocument> = docs(text).into_iter().map(Result::unwrap).collect();
    assert_eq!(all.len(), 2);
    assert_eq!((all[0].start.line, all[1].start.line), (3, 13));
    let list = &all[0];
    let second = list.marks.sub(&[K("items"), I(1)]).unwrap();
    assert_eq!(at(second, &[K("metadata"), K("name")]), ("9:24".into(), true));
    assert_eq!(list.value["items"][1]["kind"].as_str(), Some("B"));
    let first = list.marks.sub(&[K("items"), I(0)]).unwrap();
    assert_eq!(at(first, &[K("metadata")]), ("8:3".into(), true));
    assert!(list.marks.sub(&[K("items"), I(2)]).is_none());
    assert_eq!(at(&all[1].marks, &[K("kind")]), ("14:1".into(), true));
    // An explicit null document is a document; an empty one is not.
    assert_eq!(docs("--- ~\n").len(), 1);
    assert_eq!(docs("---\n# c\n---\n").len(), 0);
    assert_eq!(docs("").len(), 0);
}

#[test]
fn duplicate_keys_point_at_the_second_occurrence() {
    let cases = [
        ("a: 1\nb: 2\na: 3\n", "3:1", "`a`", 1),
        ("spec:\n  x: 1\n  y:\n    z: 1\n    z: 2\n", "5:5", "`z`", 4),
        ("m: {k: 1, j: 2, k: 3}\n", "1:17", "`k`", 1),
        ("- name: a\n  name: b\n", "2:3", "`name`", 1),
        // Keys are strings as kubectl makes them: `1` and `'1'` are one key, `on` is `true`.
        ("1: a\n'1': b\n1: c\n", "2:1", "`1`", 1),
        ("true: a\non: b\n", "2:1", "`true`", 1),
    ];
    for (text, mark, key, first) in cases {
        let error = first_error(text);
        assert_eq!(error.kind, YamlErrorKind::DuplicateKey, "{text}");
        assert_eq!(error.mark.to_string(), mark, "{text}");
        assert_eq!(error.message, format!("duplicate key {key} in one mapping (first written at line {first})"));
    }
    // A big mapping goes through the hash set: still found, still the right lines.
    let mut big: String = (0..100).map(|i| format!("k{i}: {i}\n")).collect();
    big.push_str("k42: again\n");
    let error = first_error(&big);
    assert_eq!((error.mark.line, error.message.contains("line 43")), (101, true), "{}", error.message);
    // The documents around a failed one are still read.
    let all = docs("a: 1\n---\nb: 1\nb: 2\n---\nc: 1\n");
    assert!(all[0].is_ok() && all[1].is_err() && all[2].is_ok());
}

#[test]
fn aliases_expand_and_are_bounded() {
    let doc = one("base: &b {x: 1, z: [2]}\ncopy: *b\nscalar: &s hi\nagain: *s\n");
    assert_eq!(doc.value["copy"], doc.value["base"]);
    assert_eq!(doc.value["again"].as_str(), Some("hi"));
    // The alias's own span; its children where the anchor wrote them.
    assert_eq!(at(&doc.marks, &[K("copy")]), ("2:1".into(), true));
    assert_eq!(doc.marks.entry("copy").unwrap().value.span.start.to_string(), "2:7");
    assert_eq!(at(&doc.marks, &[K("copy"), K("z")]), ("1:17".into(), true));

    let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
    let error = first_error(bomb);
    assert_eq!(error.kind, YamlErrorKind::AliasLimit);
    assert_eq!(error.mark.line, 5);

    let error = first_error("a: 1\nb: *nowhere\n");
    assert_eq!((error.kind, error.mark.to_string()), (YamlErrorKind::UndefinedAlias, "2:4".into()));
    assert_eq!(error.message, "alias *nowhere names no anchor defined before it");
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_mapping().unwrap().keys().map(|k| k.as_str().unwrap()).collect()
}

/// Merges as go-yaml v2 decodes them (sigs.k8s.io/yaml `goyaml.v2/decode.go`, `mapping` and
/// `merge`; its `decode_test.go` `mergeTests`: "Override" keys written after the `<<` win, and in
/// a list of merged mappings the earlier wins): entries in document order, the later one wins.
#[test]
fn merge_keys_as_go_yaml_v2() {
    let cases = [
        // (document, obj as JSON, obj's keys in order)
        ("base: &b {a: 1, b: 2}\nobj:\n  <<: *b\n  b: 3\n  c: 4\n", r#"{"a":1,"b":3,"c":4}"#, "a b c"),
        // A key written before the merge is replaced by the merged one.
        ("base: &b {a: 1, b: 2}\nobj:\n  b: 3\n  <<: *b\n  c: 4\n", r#"{"b":2,"a":1,"c":4}"#, "b a c"),
        (
            "x: &x {a: 1, b: 1}\ny: &y {b: 2, c: 2}\nobj:\n  <<: [*x, *y]\n  d: 0\n",
            r#"{"b":1,"c":2,"a":1,"d":0}"#,
            "b c a d",
        ),
        (
            "x: &x {a: 1}\ny: &y {a: 2, z: 2}\nobj: {<<: [*y, *x], q: 1, r: 2}\n",
            r#"{"a":2,"z":2,"q":1,"r":2}"#,
            "a z q r",
        ),
        ("obj: {<<: {inline: true}, k: v}\n", r#"{"inline":true,"k":"v"}"#, "inline k"),
        // Two merge keys: each merges, the later over the earlier.
        ("obj:\n  <<: {a: 1}\n  <<: {a: 2}\n", r#"{"a":2}"#, "a"),
        // Only a plain `<<` merges: quoted, it is an ordinary key.
        ("obj:\n  '<<': {a: 1}\n  b: 2\n", r#"{"<<":{"a":1},"b":2}"#, "<< b"),
        ("obj:\n  \"<<\": {a: 1}\n", r#"{"<<":{"a":1}}"#, "<<"),
        ("obj:\n  !!merge <<: {a: 1}\n", r#"{"a":1}"#, "a"),
    ];
    for (text, json, order) in cases {
        let doc = one(text);
        let want: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_value(&doc.value["obj"]).unwrap(), want, "{text}");
        assert_eq!(keys(&doc.value["obj"]).join(" "), order, "{text}");
    }
    let doc = one(cases[0].0);
    // A merged key points where the anchor wrote it, a written one where it is written.
    assert_eq!(at(&doc.marks, &[K("obj"), K("a")]), ("1:11".into(), true));
    assert_eq!(at(&doc.marks, &[K("obj"), K("b")]), ("4:3".into(), true));
}

#[test]
fn bad_merge_values_are_located() {
    let cases = [
        ("obj:\n  <<: 3\n", "2:3", "not a scalar"),
        ("obj:\n  <<: [{a: 1}, 2]\n", "2:16", "not a list holding a scalar"),
        ("obj:\n  <<: [[a]]\n", "2:8", "not a list holding a list"),
    ];
    for (text, mark, tail) in cases {
        let error = first_error(text);
        assert_eq!((error.kind, error.mark.to_string()), (YamlErrorKind::InvalidMerge, mark.into()), "{text}");
        assert!(error.message.ends_with(tail), "{}", error.message);
    }
}

#[test]
fn depth_and_size_limits() {
    let limits = Limits { max_depth: 3, ..Limits::PACKAGE };
    assert!(parse_stream("a: {b: [1]}\n", &limits)[0].is_ok());
    let error = parse_stream("a: {b: [[1]]}\n", &limits).remove(0).unwrap_err();
    assert_eq!((error.kind, error.mark.to_string()), (YamlErrorKind::DepthLimit, "1:9".into()));
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(error_kind(&deep), YamlErrorKind::DepthLimit);
    let small = Limits { max_bytes: 4, ..Limits::PACKAGE };
    assert_eq!(parse_stream("a: 12\n", &small).remove(0).unwrap_err().kind, YamlErrorKind::SizeLimit);
}

fn error_kind(text: &str) -> YamlErrorKind {
    first_error(text).kind
}

#[test]
fn syntax_errors_are_plain_and_located() {
    let cases = [
        ("a:\n\tb: 1\n", "2:2", "tabs are not allowed for indentation in YAML; use spaces"),
        // A tab on the line after a plain scalar is the tab's line, not the scalar's (issue 41).
        ("a:\n  b: c\n\td: 1\n", "3:1", "tabs are not allowed for indentation in YAML; use spaces"),
        ("a: 1\nb: x\0y\n", "2:5", "control character U+0000 (NUL) is not allowed in YAML"),
        ("a: \u{7}\n", "1:4", "control character U+0007 is not allowed in YAML"),
        ("a: 'unclosed\nb: 2\n", "1:4", "unclosed quoted string (or a continuation line of it not indented)"),
        ("a: 1\nb: \"unclosed", "2:4", "unclosed quoted string (or a continuation line of it not indented)"),
        (
            "a: {b: 1\nc: 2\n",
            "1:4",
            "unclosed flow mapping: `{` is not closed (expected `,` or `}` at line 2 column 2)",
        ),
        ("a: [1, 2\n", "1:4", "unclosed flow sequence: `[` is not closed (expected `,` or `]` at line 2 column 1)"),
        (
            "a:\n  b: [1, {c: 2]\n",
            "2:10",
            "unclosed flow mapping: `{` is not closed (expected `,` or `}` at line 2 column 15)",
        ),
    ];
    for (text, mark, message) in cases {
        let error = first_error(text);
        assert_eq!(
            (error.kind, error.mark.to_string(), error.message.as_str()),
            (YamlErrorKind::Syntax, mark.into(), message),
            "{text}"
        );
    }
    // Documents before a syntax error are returned; the stream stops at it.
    let all = docs("a: 1\n---\nb: [\n---\nc: 1\n");
    assert_eq!(all.len(), 2);
    assert!(all[0].is_ok() && all[1].is_err());
}

#[test]
fn tags_and_non_string_keys() {
    let doc = one("a: !Ref x\nb: !!str 1\nc: !custom {k: 1}\n1: one\ntrue: 'yes'\n0755: mode\n1.5: f\n");
    assert_eq!(doc.value["a"].as_str(), Some("x"));
    assert_eq!(doc.value["b"].as_str(), Some("1"));
    assert_eq!(doc.value["c"]["k"].as_u64(), Some(1));
    // Keys are strings, as sigs.k8s.io/yaml makes them for JSON.
    assert_eq!(keys(&doc.value), ["a", "b", "c", "1", "true", "493", "1.5"]);
    for (text, mark) in [("~: n\n", "1:1"), ("a:\n  null: x\n", "2:3"), ("? [a]\n: x\n", "1:3")] {
        let error = first_error(text);
        assert_eq!((error.kind, error.mark.to_string()), (YamlErrorKind::UnsupportedKey, mark.into()), "{text}");
    }
}

#[test]
fn documents_come_one_at_a_time_until_the_caller_stops() {
    // Nested collections of every size, closed in every order, so the shared scratch stacks are
    // exercised: each collection gets exactly its own children.
    let text = "a: [1, [2, 3], {b: 4}]\nc:\n  d:\n  - e: 5\n    f: [6]\n  - 7\ng: 8\n---\nh: 9\n---\n[\n";
    let mut seen = Vec::new();
    parse_stream_each(text, &Limits::PACKAGE, |document| {
        seen.push(document);
        ControlFlow::Continue(())
    });
    assert_eq!(seen, docs(text));
    assert_eq!(seen[0].as_ref().unwrap().value["c"]["d"][0]["f"][0].as_u64(), Some(6));
    assert_eq!(seen[0].as_ref().unwrap().value["a"][1][1].as_u64(), Some(3));
    assert!(seen[2].is_err());
    let mut first = Vec::new();
    parse_stream_each(text, &Limits::PACKAGE, |document| {
        first.push(document);
        ControlFlow::Break(())
    });
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].as_ref().unwrap().value["g"].as_u64(), Some(8));
}
