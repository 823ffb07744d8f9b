//! The one TOML reader, for cluster files and kix.toml: the text is parsed once into toml's
//! spanned document ([`DeTable`]; the plain form of a fleet's cluster files by `toml_fast`), its shape checked (a table or an array of tables where kix
//! wants one, located at the key the parser saw), then deserialized into the raw type.
//!
//! toml's errors carry a message and a span, no kind, so an error is classified by the stage it
//! came from and by what the input says at its span, never by the message's wording:
//! - parsing the document fails only on syntax (K0102). kix puts some of those in plain words,
//!   from the text at the error: a key named twice (the span is a key where keys are written),
//!   an array left open (the error is at a new statement, a `key =` or a `[table]` line, inside an
//!   array opened on an earlier line: pointed at where it opened), a missing value (`key =` and
//!   nothing after), a bare word where a value goes (`level = node`: strings must be quoted);
//! - deserializing the parsed document fails on the data: a key serde does not know (K0103) is
//!   the error whose span is one of the document's keys; the rest (types, missing fields, kix's
//!   own value checks) is K0102, in toml's words.

use kix_diag::{Code, Diagnostic, Location, SourceFile};
use serde::de::DeserializeOwned;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// Keys whose value must be a table (`Table`) or an array of tables (`Tables`); `*` matches any key.
/// serde would otherwise fill a struct from an array by position (`capabilities = [true, [...]]`).
pub(crate) enum Shape {
    Table(&'static [&'static str]),
    Tables(&'static [&'static str]),
}

/// Reads `source` as a `T`; the first problem as one located diagnostic.
pub(crate) fn parse<T: DeserializeOwned>(source: &SourceFile, shapes: &[Shape]) -> Result<T, Diagnostic> {
    parse_text(source, source.text(), shapes)
}

/// [`parse`] of `text`, a text with `source`'s spans (the file with some of its bytes blanked), located in
/// `source`.
pub(crate) fn parse_text<T: DeserializeOwned>(
    source: &SourceFile,
    text: &str,
    shapes: &[Shape],
) -> Result<T, Diagnostic> {
    // The plain form cluster files are written in is read by kix's fast reader, the rest by toml's parser
    // (the two give the same document where the fast one reads it: super::toml_fast).
    let document = match super::toml_fast::parse(text) {
        Some(document) => document,
        None => DeTable::parse(text).map_err(|error| syntax_diagnostic(source, &error))?,
    };
    from_document(source, document, shapes)
}

/// [`parse`] of `source` with every byte outside the `kept` ranges (whole lines, in order) but line breaks
/// made a space: the kept lines read where they are by the fast reader, the text so blanked made only for
/// toml's parser when the fast one does not read them (`crate::reuse::in_part`, a cluster file's wanted
/// entries).
pub(crate) fn parse_regions<T: DeserializeOwned>(
    source: &SourceFile,
    kept: &[Range<usize>],
    shapes: &[Shape],
) -> Result<T, Diagnostic> {
    match super::toml_fast::parse_regions(source.text(), kept) {
        Some(document) => from_document(source, document, shapes),
        None => parse_text(source, &blanked(source.text(), kept), shapes),
    }
}

/// `text` with every byte outside the `kept` ranges but line breaks made a space, so every span still
/// points where it did.
pub(crate) fn blanked(text: &str, kept: &[Range<usize>]) -> String {
    let mut bytes: Vec<u8> = text.bytes().map(|b| if b == b'\n' { b'\n' } else { b' ' }).collect();
    for range in kept {
        if let (Some(to), Some(from)) = (bytes.get_mut(range.clone()), text.as_bytes().get(range.clone())) {
            to.copy_from_slice(from);
        }
    }
    // Whole characters are kept or blanked when the ranges are at line starts; anything else is read as
    // it comes out (lossily), and toml's parser says what is wrong with it.
    String::from_utf8(bytes).unwrap_or_else(|bytes| String::from_utf8_lossy(bytes.as_bytes()).into_owned())
}

/// The parsed `document` of `source` checked for its shape and deserialized.
fn from_document<T: DeserializeOwned>(
    source: &SourceFile,
    document: toml::Spanned<DeTable<'_>>,
    shapes: &[Shape],
) -> Result<T, Diagnostic> {
    if let Some(problem) = shape_problem(source, document.get_ref(), shapes) {
        return Err(problem);
    }
    let mut keys = Vec::new();
    key_spans(document.get_ref(), &mut keys);
    T::deserialize(toml::de::Deserializer::from(document)).map_err(|error| {
        let message = kix_diag::words::serde_message(error.message().trim());
        let code =
            if error.span().is_some_and(|span| keys.contains(&span)) { Code::UnknownKey } else { Code::TomlSyntax };
        Diagnostic::new(code, message).at(located(source, error.span()))
    })
}

fn located(source: &SourceFile, span: Option<Range<usize>>) -> Location {
    span.map_or_else(|| Location::file(source.path()), |span| source.locate(span))
}

/// The span of every key of the document, at any depth.
fn key_spans(table: &DeTable<'_>, out: &mut Vec<Range<usize>>) {
    for (key, value) in table {
        out.push(key.span());
        value_key_spans(value.get_ref(), out);
    }
}

fn value_key_spans(value: &DeValue<'_>, out: &mut Vec<Range<usize>>) {
    match value {
        DeValue::Table(table) => key_spans(table, out),
        DeValue::Array(items) => items.iter().for_each(|item| value_key_spans(item.get_ref(), out)),
        _ => {}
    }
}

/// One located diagnostic for a syntax error, in plain words where the text at it says what is wrong.
fn syntax_diagnostic(source: &SourceFile, error: &toml::de::Error) -> Diagnostic {
    let message = error.message().trim().to_string();
    let Some(span) = error.span() else {
        return Diagnostic::new(Code::TomlSyntax, message).at(Location::file(source.path()));
    };
    let text = source.text();
    let at = span.start.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let before = &text[line_start..at];
    if before.trim().is_empty() && starts_a_statement(&line[before.len()..]) {
        if let Some(opened) = open_array(text, line_start) {
            return Diagnostic::new(Code::TomlSyntax, "array is not closed (missing `]`)")
                .at(source.locate(opened..opened + 1));
        }
    }
    let location = source.locate(span.clone());
    if let Some(key) = key_at(text, span.clone()) {
        return Diagnostic::new(Code::TomlSyntax, format!("duplicate key `{key}`")).at(location);
    }
    // The value on the error's line, after its `=`.
    if let Some((assignment, value)) = line.split_once('=') {
        let value_start = line_start + assignment.len() + 1;
        let trimmed = value.trim_start();
        if trimmed.trim().is_empty() && at >= value_start - 1 {
            return Diagnostic::new(Code::TomlSyntax, "missing value after `=`").at(location);
        }
        let token_start = value_start + value.len() - trimmed.len();
        let token = bare_word(trimmed);
        let within = (token_start..=token_start + token.len()).contains(&at);
        if within && !token.is_empty() && !matches!(token, "true" | "false") {
            return Diagnostic::new(Code::TomlSyntax, format!("`{token}` is not a TOML value: strings must be quoted"))
                .at(location)
                .help(format!("write \"{token}\""));
        }
    }
    Diagnostic::new(Code::TomlSyntax, message).at(location)
}

/// Whether a line's text (from its first non-blank character) is where a TOML statement starts: a
/// `[table]` header or a `key =`.
fn starts_a_statement(rest: &str) -> bool {
    rest.starts_with('[') || rest.split_once('=').is_some_and(|(key, _)| is_key(key.trim()))
}

/// The offset of the `[` of a `key = [` on a line before `line_start` whose array is still open there.
fn open_array(text: &str, line_start: usize) -> Option<usize> {
    let mut depth: i64 = 0;
    let mut end = line_start;
    for line in text[..line_start].split_inclusive('\n').collect::<Vec<_>>().into_iter().rev() {
        let start = end - line.len();
        end = start;
        depth += line.matches(']').count() as i64 - line.matches('[').count() as i64;
        if depth < 0 && line.contains('=') {
            return line.find('[').map(|i| start + i);
        }
    }
    None
}

/// The key at `span`, when the span is exactly a key where keys are written: after a line's start,
/// `[`, `.`, `{` or `,`, and before `=`, `.` or `]`. Only a key named twice is a syntax error there.
fn key_at(text: &str, span: Range<usize>) -> Option<&str> {
    let key = text.get(span.clone())?;
    if !is_key(key) {
        return None;
    }
    let before = text[..span.start].trim_end_matches([' ', '\t']);
    let after = text[span.end..].trim_start_matches([' ', '\t']);
    let opens = before.is_empty() || before.ends_with(['\n', '[', '.', '{', ',']);
    let closes = after.starts_with(['=', '.', ']']);
    (opens && closes).then_some(key)
}

/// A bare key, or a quoted one.
fn is_key(key: &str) -> bool {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    let quoted = key.len() >= 2
        && ((key.starts_with('"') && key.ends_with('"')) || (key.starts_with('\'') && key.ends_with('\'')));
    bare || quoted
}

/// The bare word a value starts with (letters, digits, `-`, `_`, `.`), when that is the whole value
/// token (what follows it ends a value); empty otherwise.
fn bare_word(value: &str) -> &str {
    let length =
        value.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))).unwrap_or(value.len());
    let ends = value[length..].chars().next().is_none_or(|c| c.is_whitespace() || matches!(c, ',' | ']' | '}' | '#'));
    if ends { &value[..length] } else { "" }
}

/// The first key whose value has the wrong shape, located at the key.
fn shape_problem(source: &SourceFile, document: &DeTable<'_>, shapes: &[Shape]) -> Option<Diagnostic> {
    for shape in shapes {
        let (path, want_tables) = match shape {
            Shape::Table(path) => (*path, false),
            Shape::Tables(path) => (*path, true),
        };
        let mut found = Vec::new();
        collect(document, path, &mut found);
        for (key, value) in found {
            let ok = match value {
                DeValue::Array(items) if want_tables => items.iter().all(|item| item.get_ref().is_table()),
                value => !want_tables && value.is_table(),
            };
            if !ok {
                let name = path.last().copied().unwrap_or_default();
                let wanted = if want_tables { "an array of tables" } else { "a table" };
                let message = format!("`{name}` must be {wanted}, not {}", value.type_str());
                return Some(Diagnostic::new(Code::TomlSyntax, message).at(key_location(source, key)));
            }
        }
    }
    None
}

/// Where a shape problem is shown: at the key, whether it is assigned (`key = ...`) or written in a
/// `[table]` or `[[table]]` header (issue 19: `[instances]` and `[[capabilities]]` were reported on
/// the file alone). A span that holds no key on one line (toml gives none for a table it implies)
/// falls back to the file.
fn key_location(source: &SourceFile, key: Range<usize>) -> Location {
    let written = source.text().get(key.clone()).is_some_and(|text| !text.trim().is_empty() && !text.contains('\n'));
    if written { source.locate(key) } else { Location::file(source.path()) }
}

/// The values at `path` (`*` for any key or item), each with the span of the key that names it.
fn collect<'v>(table: &'v DeTable<'_>, path: &[&str], found: &mut Vec<(Range<usize>, &'v DeValue<'v>)>) {
    let Some((first, rest)) = path.split_first() else { return };
    for (key, value) in table {
        if *first != "*" && key.get_ref().as_ref() != *first {
            continue;
        }
        let value = value.get_ref();
        if rest.is_empty() {
            found.push((key.span(), value));
            continue;
        }
        match value {
            DeValue::Table(child) => collect(child, rest, found),
            DeValue::Array(items) if rest.first() == Some(&"*") => {
                for item in items {
                    if let DeValue::Table(child) = item.get_ref() {
                        collect(child, &rest[1..], found);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use kix_diag::{Diagnostics, SourceFile};
    use std::path::Path;

    /// What a cluster file's first problem is: code, message and where (`file:line:column`).
    fn problem(text: &str) -> (&'static str, String, String) {
        let mut diagnostics = Diagnostics::default();
        let source = SourceFile::new("c.toml", text.to_string());
        assert!(super::super::cluster::parse(Path::new("c.toml"), source, &mut diagnostics).is_none(), "{text}");
        let diagnostic = diagnostics.iter().next().expect("a problem");
        (diagnostic.code.id(), diagnostic.message.to_string(), diagnostic.location().unwrap().to_string())
    }

    /// Each error is classified by its stage and by the text at its span, whatever toml's message says.
    #[test]
    fn errors_are_classified_by_stage_and_position() {
        let zone = "availability = \"zone\"\n";
        let cases: &[(&str, &str, &str, &str)] = &[
            ("a = 1\na = 2\n", "K0102", "duplicate key `a`", "c.toml:2:1"),
            ("[capabilities]\n[capabilities]\n", "K0102", "duplicate key `capabilities`", "c.toml:2:2"),
            ("x = { a = 1, a = 2 }\n", "K0102", "duplicate key `a`", "c.toml:1:14"),
            ("zones = [\"a\"\n\n[[instances]]\n", "K0102", "array is not closed (missing `]`)", "c.toml:1:9"),
            ("zones = [\"a\"\nmultiNode = true\n", "K0102", "array is not closed (missing `]`)", "c.toml:1:9"),
            // A closed array before the error, or a value inside an open one, is not an unclosed array.
            ("x = [\n  1,\n]\nx = 2\n", "K0102", "duplicate key `x`", "c.toml:4:1"),
            ("availability = \"zone\"\nmultiNode =\n", "K0102", "missing value after `=`", "c.toml:2:12"),
            ("availability = node\n", "K0102", "`node` is not a TOML value: strings must be quoted", "c.toml:1:16"),
            (
                "availability = \"zone\"\n[capabilities]\nmultiNode = \"true\"\n",
                "K0102",
                "the text \"true\" is not valid here: it takes `true` or `false`",
                "c.toml:3:13",
            ),
            (
                "availability = \"zone\"\n[capabilities]\nmultinode = true\n",
                "K0103",
                "unknown field `multinode`, expected `multiNode` or `availabilityZones`",
                "c.toml:3:1",
            ),
            (
                "availability = \"zone\"\ncapabilities = [true]\n",
                "K0102",
                "`capabilities` must be a table, not array",
                "c.toml:2:1",
            ),
            (
                "availability = \"zone\"\n[instances]\n",
                "K0102",
                "`instances` must be an array of tables, not table",
                "c.toml:2:2",
            ),
            // A header key is located too (issue 19), in `[[...]]` as in `[...]`.
            (
                "availability = \"zone\"\n[[capabilities]]\n",
                "K0102",
                "`capabilities` must be a table, not array",
                "c.toml:2:3",
            ),
        ];
        for (text, code, message, at) in cases {
            assert_eq!(problem(text), (*code, message.to_string(), at.to_string()), "{text}");
        }
        // A bare word inside an open multi-line array is toml's own finding.
        let (code, message, at) = problem(&format!("{zone}[capabilities]\navailabilityZones = [\n  a,\n]\n"));
        assert_eq!((code, at.as_str()), ("K0102", "c.toml:4:3"));
        assert!(!message.contains("not closed") && !message.contains("not a TOML value"), "{message}");
        // Text that only looks like a bare word at the start is not one (`1979-05-27T25:00:00`).
        let (_, message, _) = problem("availability = 1979-05-27T25:00:00\n");
        assert!(!message.contains("not a TOML value"), "{message}");
    }
}
