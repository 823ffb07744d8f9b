//! Tests of the fast reader against the located loader: hand-written edge cases it must read as
//! the loader does, one case per construct it must give up on, every YAML file of the repository,
//! and generated documents (proptest), intact and with a character inserted or removed.

use super::*;
use crate::parse_stream;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// Asserts the contract on `text` and returns whether the fast reader read it.
fn check(text: &str, limits: &Limits) -> bool {
    check_against_loader(text, limits).unwrap_or_else(|problem| panic!("{text:?}: {problem}"))
}

#[test]
fn reads_the_subset_as_the_loader_does() {
    let cases: &[(&str, usize)] = &[
        ("", 0),
        ("# only a comment\n\n   \n", 0),
        ("---\n---\n# nothing\n...\n", 0),
        ("a: 1\n---\n\n---\nb: 2\n...\n---\nc: 3\n", 3),
        ("--- # a comment on the marker\na: 1\n... # and on the end\n", 1),
        ("key:\nother: ~\nnothing: null\n", 1),
        ("0644: octal key\n", 1),
        ("yaml11: on\nhex: 0x1F\nunderscored: 1_000\noctal: 0o17\nzero: 017\nfloat: 1e3\ninf: -.inf\n", 1),
        ("quoted: \"123\"\nsingle: 'it''s'\nempty: ''\nnothing: \"\"\nspace: ' a '\n", 1),
        ("trailing: value   \ncomment: value # not this\nhash: a#b\ncolon: a:b\nurl: http://x:80/y\n", 1),
        ("dash: -1\ndashes: --x\nwords: a b  c\nbrackets: a[0] {x}\nquote: it's \"so\"\n", 1),
        ("crlf: 1\r\nlist:\r\n- a\r\n- b # c\r\n", 1),
        ("k:\n- a\n- b\nj: 1\nk2:\n-\n- - x\n  - y\n", 1),
        ("- - a\n  - b\n- - - c\n-\n  - d\n", 1),
        ("- name: a\n  image: b\n-   name: c\n    ports:\n    - 80\n    - containerPort: 81\n      protocol: TCP\n", 1),
        ("- a:\n  - x\n  b: 1\n- a:\n- c\n", 1),
        ("'a b': 1\n\"c\": 2\n\"d\" : 3\n'e''f': 4\n1: int\ntrue: bool\n1.5: float\n", 1),
        ("a: {}\nb: []\nc: {x: 1, y: [a, 'b', \"c\", -1, ~]}\nd: [ ]\ne: [[], {}, [a b]]\n", 1),
        ("---\nhello\n---\n'quoted root'\n--- \n~\n---\n[a, b]\n", 4),
        ("unicode: héllo wörld ✓ 𝄞\n'ключ': значение\n", 1),
        ("esc: \"a\\tb\\n\\u00e9\\x41\\U0001D11E\\\\\\\"\\/\\ \\0\\e\\N\\_\\L\\P\"\n", 1),
        ("a:\n  b:\n    c: d\n    # between\n\n  e: f\n      # deeper comment\ng:\n    h\n", 1),
        ("  indented: root\n  second: 2\n", 1),
        ("- a :1\n- b: x :y\n", 1),
        ("-\n  a: 1\n- \n-  # comment\n", 1),
        ("long: 18446744073709551615\nnegative: -9223372036854775808\n", 1),
        ("kind: List\nitems:\n- kind: Node\n  metadata:\n    labels: {a: b}\n", 1),
    ];
    for (text, documents) in cases {
        assert!(check(text, &Limits::PACKAGE), "refused: {text:?}");
        assert_eq!(fast_stream(text, &Limits::PACKAGE).map(|d| d.len()), Some(*documents), "{text:?}");
    }
}

#[test]
fn gives_up_on_everything_outside_the_subset() {
    let deep = |n: usize| {
        format!("{}{}x\n", (0..n).map(|i| format!("{}k:\n", " ".repeat(i))).collect::<String>(), " ".repeat(n))
    };
    let nested_flow = |n: usize| format!("{}{}\n", "[".repeat(n), "]".repeat(n));
    let long_key = format!("{}: 1\n", "k".repeat(MAX_KEY_BYTES + 1));
    let cases: Vec<(&str, String)> = vec![
        ("anchor", "a: &x 1\nb: 2\n".into()),
        ("alias", "a: 1\nb: *x\n".into()),
        ("anchor on a collection", "a: &x\n  b: 1\n".into()),
        ("core tag", "a: !!str 1\n".into()),
        ("local tag", "a: !Ref x\n".into()),
        ("merge key", "a: 1\n<<: {b: 2}\n".into()),
        ("quoted merge key", "a: 1\n'<<': {b: 2}\n".into()),
        ("literal block scalar", "a: |\n  x\n".into()),
        ("folded block scalar", "a: >-\n  x\n".into()),
        ("multi-line plain scalar", "a: x\n  y\n".into()),
        ("multi-line plain item", "- x\n  y\n".into()),
        ("multi-line plain root", "x\ny\n".into()),
        ("multi-line single-quoted scalar", "a: 'x\n  y'\n".into()),
        ("multi-line double-quoted scalar", "a: \"x\\\n  y\"\n".into()),
        ("multi-line flow", "a: [x,\n  y]\n".into()),
        ("tab indentation", "a:\n\tb: 1\n".into()),
        ("tab separation", "a:\tb\n".into()),
        ("duplicate key", "a: 1\nb: 2\na: 3\n".into()),
        ("duplicate flow key", "a: {x: 1, x: 2}\n".into()),
        ("complex key", "? a\n: b\n".into()),
        ("directive", "%YAML 1.2\n---\na: 1\n".into()),
        ("content on the marker line", "--- a: 1\n".into()),
        ("document after ... without ---", "a: 1\n...\nb: 2\n".into()),
        ("integer over 64 bits", "a: 0x1FFFFFFFFFFFFFFFF\n".into()),
        ("null key", "~: a\n".into()),
        ("byte order mark", "\u{feff}a: 1\n".into()),
        ("lone carriage return", "a: 1\rb: 2\n".into()),
        ("control character", "a: x\u{1}y\n".into()),
        ("unknown escape", "a: \"\\q\"\n".into()),
        ("flow pair in a sequence", "a: [x: 1]\n".into()),
        ("flow trailing comma", "a: [x, y, ]\n".into()),
        ("flow key", "{a: 1}: b\n".into()),
        ("json-like key", "a: {\"x\":1}\n".into()),
        ("sequence as an inline value", "a: - b\n".into()),
        ("key: value: value", "a: b: c\n".into()),
        ("between dash and key", "- a: 1\n b: 2\n".into()),
        ("key after a sequence", "- a\nb: 1\n".into()),
        ("item after a mapping entry", "a: 1\n- b\n".into()),
        ("over-indented key", "a: 1\n  b: 2\n".into()),
        ("key too long", long_key),
    ];
    for (what, text) in &cases {
        assert!(!check(text, &Limits::PACKAGE), "{what}: accepted {text:?}");
    }
    // Limits: exactly `max_depth` collections deep is read, one more is not; nor is text past max_bytes.
    let limits = Limits::PACKAGE;
    assert!(check(&deep(limits.max_depth), &limits));
    assert!(!check(&deep(limits.max_depth + 1), &limits));
    assert!(check(&nested_flow(limits.max_depth), &limits));
    assert!(!check(&nested_flow(limits.max_depth + 1), &limits));
    let small = Limits { max_bytes: 8, ..Limits::PACKAGE };
    assert!(check("a: 1234\n", &small));
    assert!(!check("a: 12345\n", &small));
}

/// Every `.yaml` and `.yml` file under `dir`, `target/` and hidden directories left out.
fn yaml_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                yaml_files(&path, files);
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            files.push(path);
        }
    }
}

#[test]
fn every_yaml_file_of_the_repository_reads_as_the_loader_reads_it_or_is_refused() {
    let mut files = Vec::new();
    yaml_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."), &mut files);
    files.sort();
    let (mut read, mut refused_with_errors) = (0, 0);
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        if check(&text, &Limits::SNAPSHOT) {
            read += 1;
        } else if parse_stream(&text, &Limits::SNAPSHOT).iter().any(Result::is_err) {
            refused_with_errors += 1;
        }
    }
    // Most of the repository's YAML is in the subset; the bad-input corpus is all refused.
    assert!(files.len() > 300, "{} files", files.len());
    assert!(read * 5 > files.len() * 4, "read {read} of {} files", files.len());
    assert!(refused_with_errors >= 10, "{refused_with_errors} files with errors");
}

/// A generated snapshot in the shape `genfleet --scheduler-perf` writes, and as kubectl lists it.
#[test]
fn generated_snapshots_are_read() {
    let mut stream = String::new();
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..50 {
        let node = format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:05}\n  labels:\n    kubernetes.io/hostname: node-{i:05}\n    topology.kubernetes.io/zone: zone-{}\nspec:\n  taints:\n  - effect: NoSchedule\n    key: dedicated\n    value: \"true\"\nstatus:\n  allocatable:\n    cpu: \"4\"\n    memory: 32Gi\n    pods: \"110\"\n",
            ["a", "b", "c"][i % 3]
        );
        let pod = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: init-{i:05}\n  namespace: default\n  annotations: {{}}\nspec:\n  nodeName: node-{i:05}\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n    resources:\n      requests:\n        cpu: 100m\n        memory: 500Mi\n  tolerations: []\nstatus:\n  phase: Running\n"
        );
        stream.push_str(&format!("---\n{node}---\n{pod}"));
        for object in [node, pod] {
            list.push_str(&format!("- {}", object.trim_end().replace('\n', "\n  ")));
            list.push('\n');
        }
    }
    assert!(check(&stream, &Limits::SNAPSHOT));
    assert_eq!(fast_stream(&stream, &Limits::SNAPSHOT).unwrap().len(), 100);
    assert!(check(&list, &Limits::SNAPSHOT));
    assert!(check(&list.replace('\n', "\r\n"), &Limits::SNAPSHOT));
}

/// A generated document: scalars are written as they appear in the text.
#[derive(Clone, Debug)]
enum Node {
    Scalar(&'static str),
    Map(Vec<(&'static str, Node)>),
    Seq(Vec<Node>),
}

const SCALARS: &[&str] = &[
    "a",
    "web",
    "v1",
    "on",
    "yes",
    "0x1F",
    "1_000",
    "~",
    "null",
    "true",
    "False",
    "12",
    "-3",
    "1.5",
    ".inf",
    "017",
    "1e3",
    "2026-01-01",
    "250m",
    "16Gi",
    "héllo",
    "a b c",
    "http://x:80/y",
    "a#b",
    "-x",
    "--",
    "a:b",
    "it's",
    "'it''s'",
    "\"123\"",
    "\"a\\tb\\u00e9\"",
    "''",
    "\"\"",
    "'# not a comment'",
    "\"\\x41 \\\"q\\\"\"",
    "' padded '",
    "[x]",
];
const KEYS: &[&str] =
    &["a", "name", "kind", "metadata", "labels", "1", "true", "0755", "'quoted key'", "\"k\"", "a b", "x.y/z", "-k"];

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop::sample::select(SCALARS).prop_map(Node::Scalar);
    leaf.prop_recursive(6, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec((prop::sample::select(KEYS), inner.clone()), 0..4).prop_map(|mut entries| {
                let mut seen = std::collections::HashSet::new();
                entries.retain(|(key, _)| seen.insert(*key));
                Node::Map(entries)
            }),
            prop::collection::vec(inner, 0..4).prop_map(Node::Seq),
        ]
    })
}

/// How a document is written: indentation step, where sequences and items go, comments.
#[derive(Clone, Debug)]
struct Style {
    step: usize,
    indentless: bool,
    compact: bool,
    flow: bool,
    comments: bool,
    crlf: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (1..=4usize, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(step, indentless, compact, flow, comments, crlf)| Style { step, indentless, compact, flow, comments, crlf },
    )
}

/// A scalar that flow context reads as block context does.
fn flow_safe(text: &str) -> bool {
    text.starts_with(['\'', '"'])
        || !(text.contains([',', '[', ']', '{', '}'])
            || text.contains(" #")
            || text.contains(": ")
            || text.ends_with(':'))
}

/// `node` in flow style when it is a collection of flow-safe scalars (or empty).
fn flow(node: &Node, style: &Style) -> Option<String> {
    match node {
        Node::Map(entries) if entries.is_empty() => Some("{}".into()),
        Node::Seq(items) if items.is_empty() => Some("[]".into()),
        Node::Map(entries)
            if style.flow && entries.iter().all(|(_, v)| matches!(v, Node::Scalar(s) if flow_safe(s))) =>
        {
            let inner: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {}", flow(v, style).unwrap())).collect();
            Some(format!("{{{}}}", inner.join(", ")))
        }
        Node::Seq(items) if style.flow && items.iter().all(|v| matches!(v, Node::Scalar(s) if flow_safe(s))) => {
            let inner: Vec<String> = items.iter().map(|v| flow(v, style).unwrap()).collect();
            Some(format!("[{}]", inner.join(", ")))
        }
        Node::Scalar(text) => Some(text.to_string()),
        _ => None,
    }
}

/// Writes `node`, a collection that cannot be written in flow style, with its lines at `column`.
fn block(node: &Node, column: usize, style: &Style, out: &mut String) {
    let pad = " ".repeat(column);
    let comment = if style.comments { " # c" } else { "" };
    match node {
        Node::Map(entries) => {
            for (key, value) in entries {
                match flow(value, style) {
                    Some(text) => out.push_str(&format!("{pad}{key}: {text}{comment}\n")),
                    None => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        if style.comments {
                            out.push_str(&format!("{pad} # between\n\n"));
                        }
                        let indentless = style.indentless && matches!(value, Node::Seq(_));
                        block(value, if indentless { column } else { column + style.step }, style, out);
                    }
                }
            }
        }
        Node::Seq(items) => {
            for item in items {
                match flow(item, style) {
                    Some(text) => out.push_str(&format!("{pad}- {text}{comment}\n")),
                    None if style.compact => {
                        let mut inner = String::new();
                        block(item, column + 2, style, &mut inner);
                        out.push_str(&format!("{pad}- {}", &inner[column + 2..]));
                    }
                    None => {
                        out.push_str(&format!("{pad}-\n"));
                        block(item, column + style.step, style, out);
                    }
                }
            }
        }
        Node::Scalar(_) => unreachable!("scalars are written in flow"),
    }
}

fn document(node: &Node, style: &Style) -> String {
    let mut out = String::new();
    match flow(node, style) {
        Some(text) => out.push_str(&format!("{text}\n")),
        None => block(node, 0, style, &mut out),
    }
    out
}

fn stream(documents: &[(Node, Style)], explicit_end: bool) -> String {
    let mut out = String::new();
    for (node, style) in documents {
        let text = document(node, style);
        out.push_str(&format!("---\n{text}{}", if explicit_end { "...\n" } else { "" }));
    }
    if documents.first().is_some_and(|(_, style)| style.crlf) { out.replace('\n', "\r\n") } else { out }
}

/// Characters that change what YAML means, for corrupting generated text.
const EDITS: &[&str] = &[
    ":", " ", "-", "#", "'", "\"", "[", "]", "{", "}", ",", "&", "*", "!", "|", ">", "%", "?", "\t", "\r", "\n", "\\",
    "  ", "- ", ": ", "---\n", "...", "é", "\n  ", "0x",
];

/// Pieces of YAML lines, for text assembled at random.
const PIECES: &[&str] = &[
    "- ", "-", "a", "b: ", "k:", "'q'", "'q''s'", "\"d\"", "\"e\\n\"", "[", "]", "{", "}", ", ", ": ", ":", " #c", "#",
    "---", "...", " ", "  ", "~", "1", "0x1F", "x:y", "a b", "?", "&a", "*a", "!t", "|", ">", "<<", "%", "é",
];

proptest! {
    // 512 cases unless PROPTEST_CASES asks for more (a longer hunt for disagreements).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    /// Generated documents in the subset are read, exactly as the loader reads them.
    #[test]
    fn generated_documents_read_as_the_loader_reads_them(
        documents in prop::collection::vec((node(), style()), 1..4),
        explicit_end in any::<bool>(),
    ) {
        let text = stream(&documents, explicit_end);
        prop_assert!(check(&text, &Limits::PACKAGE), "refused {:?}", text);
    }

    /// Corrupted, they are read as the loader reads them or refused; never accepted when the
    /// loader reports an error.
    #[test]
    fn edited_documents_read_as_the_loader_reads_them_or_are_refused(
        documents in prop::collection::vec((node(), style()), 1..3),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(EDITS), any::<bool>()), 1..3),
    ) {
        let mut text = stream(&documents, false);
        for (at, edit, delete) in edits {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if delete && at < text.len() {
                let end = (at + 1..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap();
                text.replace_range(at..end, "");
            } else {
                text.insert_str(at, edit);
            }
        }
        check(&text, &Limits::PACKAGE);
    }

    /// Lines of random indentation and pieces: read as the loader reads them, or refused.
    #[test]
    fn random_lines_read_as_the_loader_reads_them_or_are_refused(
        lines in prop::collection::vec((0..6usize, prop::collection::vec(prop::sample::select(PIECES), 0..5)), 0..8),
        crlf in any::<bool>(),
    ) {
        let newline = if crlf { "\r\n" } else { "\n" };
        let text: String = lines.iter().map(|(indent, pieces)| format!("{}{}{newline}", " ".repeat(*indent), pieces.concat())).collect();
        check(&text, &Limits::PACKAGE);
    }
}
