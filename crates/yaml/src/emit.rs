//! A YAML emitter for manifests that every Kubernetes reader reads back exactly.
//!
//! serde_yaml writes YAML 1.2, where `on`, `yes`, `1_000`, `1:20` and
//! `2026-01-01` are plain strings; but the readers kix's output meets (kubectl
//! and kustomize through sigs.k8s.io/yaml, PyYAML) resolve them as YAML 1.1
//! booleans, integers and timestamps, so a ConfigMap value `"on"` would come
//! back as `true`. This emitter writes block-style YAML in serde_yaml's layout
//! (indentless sequences, two-space indent) and quotes every string that any
//! YAML 1.1 or 1.2 resolver would read as something other than that string.
//!
//! This is `src/yaml_out.rs` ported to kix's own [`Value`]; the old file stays until the crate is
//! switched over, and both must write the same bytes for the same document.

use super::{Mapping, Value};
use std::fmt::Write as _;

/// One document, ending in a newline.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_document(&mut out, value);
    out
}

/// One document, ending in a newline, appended to `out`: a file's documents are written into one
/// buffer, with no string allocated per node (issue 11: the writer near its floor).
pub fn write_document(out: &mut String, value: &Value) {
    match value {
        Value::Mapping(map) if !map.is_empty() => write_mapping(out, map, 0, false),
        Value::Sequence(items) if !items.is_empty() => write_sequence(out, items, 0, false),
        other => {
            write_inline(out, other, 0);
            out.push('\n');
        }
    }
}

fn indent_to(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A block mapping at `indent`; with `after_dash`, its first line continues the line of a `- `
/// (the first key is not indented).
fn write_mapping(out: &mut String, map: &Mapping, indent: usize, after_dash: bool) {
    for (i, (key, value)) in map.into_iter().enumerate() {
        if i > 0 || !after_dash {
            indent_to(out, indent);
        }
        write_inline(out, key, indent);
        out.push(':');
        write_child(out, value, indent, false);
    }
}

/// A block sequence at `indent`; `after_dash` as for [`write_mapping`].
fn write_sequence(out: &mut String, items: &[Value], indent: usize, after_dash: bool) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !after_dash {
            indent_to(out, indent);
        }
        out.push('-');
        write_child(out, item, indent, true);
    }
}

/// Writes what follows `key:` or `-`: a scalar on the same line, or a nested block.
fn write_child(out: &mut String, value: &Value, indent: usize, in_sequence: bool) {
    match value {
        Value::Mapping(map) if !map.is_empty() => {
            if in_sequence {
                // `- first: x` then the rest of the mapping two columns in.
                out.push(' ');
                write_mapping(out, map, indent + 2, true);
            } else {
                out.push('\n');
                write_mapping(out, map, indent + 2, false);
            }
        }
        Value::Sequence(items) if !items.is_empty() => {
            if in_sequence {
                out.push(' ');
                write_sequence(out, items, indent + 2, true);
            } else {
                // Indentless, as serde_yaml and kubectl write sequences under a key.
                out.push('\n');
                write_sequence(out, items, indent, false);
            }
        }
        Value::String(text) if text.contains('\n') && block_literal_fits(text) => {
            write_block_literal(out, text, indent + 2);
        }
        scalar => {
            out.push(' ');
            write_inline(out, scalar, indent);
            out.push('\n');
        }
    }
}

/// A scalar (or an empty collection) on one line.
fn write_inline(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_scalar_string(out, s),
        Value::Sequence(items) if items.is_empty() => out.push_str("[]"),
        Value::Mapping(map) if map.is_empty() => out.push_str("{}"),
        // A collection used as a mapping key: rare; flow style keeps it on one line.
        other => out.push_str(
            &serde_json::to_string(&serde_json::to_value(other).unwrap_or_default())
                .unwrap_or_default()
                .replace('\n', &format!("\n{}", " ".repeat(indent))),
        ),
    }
}

/// A string as a plain scalar when that reads back as the same string everywhere, else quoted.
pub fn scalar_string(text: &str) -> String {
    let mut out = String::new();
    write_scalar_string(&mut out, text);
    out
}

/// A string scalar as [`scalar_string`] writes it, appended to `out`.
pub fn write_scalar_string(out: &mut String, text: &str) {
    if plain_is_safe(text) {
        out.push_str(text);
    } else if text.chars().all(|c| !c.is_control()) {
        out.push('\'');
        for (i, part) in text.split('\'').enumerate() {
            if i > 0 {
                out.push_str("''");
            }
            out.push_str(part);
        }
        out.push('\'');
    } else {
        double_quoted(out, text);
    }
}

fn double_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Words YAML 1.1 resolves as booleans or null (and 1.2's null and special floats). A `match`, which
/// compiles to a switch on length and a few comparisons, where a list scanned with `contains` was the
/// writer's hottest spot (issue 11).
fn is_reserved(text: &str) -> bool {
    matches!(
        text,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | "null"
            | "Null"
            | "NULL"
            | "~"
            | "<<"
            | "="
            | ".inf"
            | ".Inf"
            | ".INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    )
}

fn plain_is_safe(text: &str) -> bool {
    let Some(first) = text.chars().next() else { return false };
    if is_reserved(text) || looks_numeric(text) || super::resolve::plain_non_string(text).is_some() {
        return false;
    }
    if first.is_whitespace() || text.chars().next_back().is_some_and(char::is_whitespace) || text.ends_with(':') {
        return false;
    }
    // `--flag` is plain everywhere (a dash then a non-space); `?x` and `:x` are quoted to be safe.
    let dash_word = first == '-' && text.chars().nth(1).is_some_and(|c| !c.is_whitespace());
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) && !dash_word {
        return false;
    }
    // One pass for the rest: `: ` and ` #` (which end a plain scalar), control characters and the BOM;
    // over bytes when the text is ASCII (nearly always), where the only control characters are below
    // 0x20 and DEL.
    if text.is_ascii() {
        let mut previous = 0u8;
        for &b in text.as_bytes() {
            if (previous == b':' && b == b' ') || (previous == b' ' && b == b'#') || b < 0x20 || b == 0x7f {
                return false;
            }
            previous = b;
        }
        return true;
    }
    let mut previous = '\0';
    for c in text.chars() {
        if (previous == ':' && c == ' ') || (previous == ' ' && c == '#') || c.is_control() || c == '\u{feff}' {
            return false;
        }
        previous = c;
    }
    true
}

/// Anything a YAML 1.1 or 1.2 resolver could take for a number or a timestamp: an optional
/// sign, then a digit or a dot, and only characters of numbers (digits, hex, `_`, `.`, `:`,
/// exponents, `-` of dates, the `x`/`o`/`b` of radix prefixes).
fn looks_numeric(text: &str) -> bool {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let Some(first) = body.chars().next() else { return false };
    (first.is_ascii_digit() || (first == '.' && body.len() > 1))
        && body.chars().all(|c| {
            c.is_ascii_hexdigit()
                || matches!(c, '_' | '.' | ':' | '-' | '+' | 'x' | 'X' | 'o' | 'O' | 'T' | 't' | 'Z' | 'z' | ' ')
        })
}

/// A literal block (`|`) can carry a multi-line string exactly unless it holds characters
/// a block cannot (control characters other than tab) or lines that start with spaces
/// before any non-space line (which would need an indentation indicator).
fn block_literal_fits(text: &str) -> bool {
    !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && !text.starts_with(' ')
        && !text.starts_with('\n')
        && !text.lines().any(|l| l.ends_with(' ') || l.ends_with('\t'))
}

fn write_block_literal(out: &mut String, text: &str, indent: usize) {
    let trailing = text.len() - text.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let _ = writeln!(out, " |{chomp}");
    let body = if trailing == 0 { text } else { &text[..text.len() - 1] };
    for line in body.split('\n') {
        if line.is_empty() {
            out.push('\n');
        } else {
            indent_to(out, indent);
            out.push_str(line);
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{Limits, parse_stream};

    fn parse(text: &str) -> Value {
        parse_stream(text, &Limits::PACKAGE).remove(0).unwrap().value
    }

    /// parse, emit, parse again: the same value, and emitting that gives the same bytes.
    fn round_trip(text: &str) {
        let value = parse(text);
        let written = to_string(&value);
        assert_eq!(parse(&written), value, "{written}");
        assert_eq!(to_string(&parse(&written)), written);
    }

    #[test]
    fn strings_that_yaml_1_1_would_retype_are_quoted() {
        for word in [
            "-",
            "- x",
            "on",
            "yes",
            "y",
            "No",
            "off",
            "1_000",
            "2026-01-01",
            "1:20",
            "0x1F",
            "017",
            "1e3",
            ".5",
            "8080",
            "~",
            "null",
            "<<",
            ".inf",
            "-1",
            "+2",
            "1.4.0",
            "2026-01-01T00:00:00Z",
        ] {
            let written = scalar_string(word);
            assert!(written.starts_with('\'') || written.starts_with('"'), "{word} written as {written}");
        }
        for plain in [
            "--leader-elect=false",
            "-v",
            "250m",
            "16Gi",
            "ghcr.io/example/web-api:1.4.0",
            "kubernetes.io/hostname",
            "web",
            "a b",
            "http://x:80/y",
            "v1",
        ] {
            assert_eq!(scalar_string(plain), plain);
        }
    }

    #[test]
    fn values_read_back_unchanged() {
        round_trip(
            "a: 'on'\nb: 'yes'\nc: '1_000'\nd: '2026-01-01'\ne: '1:20'\nf: \"it's\"\ng: ''\nh: ' lead'\ni: 'x: y'\nj: '# c'\n",
        );
        round_trip(
            "script: |\n  #!/bin/sh\n  echo hi\n\n  exit 0\nnochomp: |-\n  a\n  b\nkeep: \"a\\n\\n\\n\"\nctl: \"a\\u0001b\"\nspaces: \"  x\\ny\"\n",
        );
        round_trip(
            "list:\n- name: a\n  ports:\n  - 1\n  - 2\n- - nested\n  - seq\n- {}\n- []\nempty: {}\nnone: []\nn: null\nf: 1.5\nt: true\n",
        );
    }

    #[test]
    fn layout_matches_kubectl_style() {
        let value = parse("spec:\n  containers:\n  - name: a\n    args: [x, z]\n");
        assert_eq!(to_string(&value), "spec:\n  containers:\n  - name: a\n    args:\n    - x\n    - z\n");
    }
}
