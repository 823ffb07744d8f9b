//! Reading the commands' input files into objects, with diagnostics that point at the file.
//!
//! A missing file is `K0101`, malformed YAML `K0104` (with line and column),
//! a document that is not an object (or an object kix cannot read) `K0105`.
//!
//! A problem with one object (a node without a name, a node listed twice, a
//! taint or toleration effect that is not valid, a value kix cannot read)
//! points at that object: at the offending field where kix can find it in
//! the text (the `effect` of a taint or toleration), else at the line where the
//! object's document, or its item in a `v1 List`, starts. The YAML parser keeps
//! no positions, so kix finds them in the text: documents split at `---`
//! markers, items at the `- ` lines of the top-level `items:` sequence. When
//! the text does not line up with the parsed objects (flow-style lists
//! spanning lines, say), the diagnostic falls back to the document, or to the
//! file.

use super::objects::{State, flatten_lists, parse_node, parse_pod};
use crate::diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use crate::kube::taints::Effect;
use crate::kube::value::{at, str_at};
use serde_yaml::Value;
use std::ops::Range;
use std::path::Path;

/// What the model could not read, each problem located in its file: the one place sim builds
/// [`crate::diag`] diagnostics (the shared diagnostics type), so that nothing else of sim needs to.
/// The caller converts it with `Diagnostics::from` and prints it.
#[derive(Clone, Debug, Default)]
pub struct InputError(Diagnostics);

impl InputError {
    /// Adds a problem about object `index` of `file` (see [`LocatedObjects::not_an_object`]).
    pub fn object(&mut self, file: &LocatedObjects, index: usize, message: impl Into<String>) {
        self.0.push(file.not_an_object(index, message));
    }

    /// Adds a problem about a whole file.
    pub fn file(&mut self, path: &Path, message: impl Into<String>) {
        self.0.push(not_an_object(path, message));
    }

    pub fn extend(&mut self, other: InputError) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<InputError> for Diagnostics {
    fn from(error: InputError) -> Diagnostics {
        error.0
    }
}

fn single(diagnostic: Diagnostic) -> InputError {
    let mut d = Diagnostics::default();
    d.push(diagnostic);
    InputError(d)
}

/// The largest state or manifest file the commands read (256 MiB): a snapshot of a
/// 5000-node cluster with its pods fits; anything larger is refused rather than risking memory.
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a YAML stream; `v1 List`s are expanded into their items.
pub fn read_objects(path: &Path) -> Result<Vec<Value>, InputError> {
    Ok(read_located(path)?.objects.into_iter().map(|o| o.value).collect())
}

/// One object of an input file and the byte range of its text (None when kix cannot tell).
#[derive(Clone, Debug)]
pub struct Located {
    pub value: Value,
    pub span: Option<Range<usize>>,
}

/// An input file's objects (`v1 List`s expanded) with the text to point into.
#[derive(Clone, Debug)]
pub struct LocatedObjects {
    pub source: SourceFile,
    pub objects: Vec<Located>,
}

impl LocatedObjects {
    /// A `K0105` diagnostic about object `index`: at the field [`bad_field`] finds, else at the
    /// line where the object starts, else at the file.
    pub fn not_an_object(&self, index: usize, message: impl Into<String>) -> Diagnostic {
        let Some(object) = self.objects.get(index) else {
            return not_an_object(self.source.path(), message);
        };
        let Some(span) = object.span.clone() else {
            return not_an_object(self.source.path(), message);
        };
        let text = &self.source.text[span.clone()];
        let field = bad_field(&object.value).and_then(|(key, value)| find_field(text, key, &value));
        let location = match field {
            Some(field) => self.source.locate(span.start + field.start..span.start + field.end),
            None => {
                // The object's first line of content, past a list item's `- `.
                let mut first = 0;
                for line in text.split_inclusive('\n') {
                    let t = line.trim_start();
                    if !(t.is_empty() || t.starts_with('#')) {
                        first += line.len() - line.trim_start_matches([' ', '\t', '-']).len();
                        break;
                    }
                    first += line.len();
                }
                let start = span.start + first.min(text.len());
                let end = self.source.text[start..].find('\n').map_or(self.source.text.len(), |e| start + e);
                self.source.locate(start..end)
            }
        };
        Diagnostic::new(Code::NotAnObject, message).at(location)
    }
}

/// Reads a YAML stream (bounded, UTF-8) into objects with their places in the text.
pub fn read_located(path: &Path) -> Result<LocatedObjects, InputError> {
    use std::io::Read;
    let cannot = |e: String| {
        single(Diagnostic::new(Code::Io, format!("cannot read {}: {e}", path.display())).at(Location::file(path)))
    };
    let file = std::fs::File::open(path).map_err(|e| cannot(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| cannot(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(single(
            Diagnostic::new(
                Code::InputRefused,
                format!(
                    "{} is larger than kix's limit of {} MiB for state files",
                    path.display(),
                    MAX_INPUT_BYTES >> 20
                ),
            )
            .at(Location::file(path)),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        single(
            Diagnostic::new(Code::InputRefused, format!("{} is not UTF-8 text: {e}", path.display()))
                .at(Location::file(path)),
        )
    })?;
    let source = SourceFile::new(path, text);
    let mut documents = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&source.text) {
        match <Value as serde::Deserialize>::deserialize(document) {
            Ok(Value::Null) => {}
            Ok(value) => documents.push(value),
            Err(e) => {
                let location = match e.location() {
                    Some(l) => source.locate_line(l.line(), l.column()),
                    None => Location::file(path),
                };
                return Err(single(Diagnostic::new(Code::YamlSyntax, e.to_string()).at(location)));
            }
        }
    }
    // Pair the parsed documents with the text's documents; without a match, no positions.
    let chunks: Vec<Range<usize>> =
        split(&source.text).into_iter().filter(|r| has_content(&source.text[r.clone()])).collect();
    let chunks: Vec<Option<Range<usize>>> = if chunks.len() == documents.len() {
        chunks.into_iter().map(Some).collect()
    } else {
        vec![None; documents.len()]
    };
    let mut objects = Vec::new();
    for (value, chunk) in documents.into_iter().zip(chunks) {
        if !value.is_mapping() {
            return Err(single(not_an_object(path, "a document is not a mapping (a Kubernetes object)")));
        }
        let is_list = str_at(&value, &["kind"]).is_some_and(|k| k == "List" || k.ends_with("List"));
        if !is_list {
            objects.push(Located { value, span: chunk });
            continue;
        }
        let items = flatten_lists(vec![value.clone()]).map_err(|e| single(not_an_object(path, e)))?;
        let direct = value.get("items").and_then(Value::as_sequence).map_or(0, Vec::len);
        let spans: Vec<Range<usize>> = chunk.as_ref().map(|c| item_spans(&source.text, c.clone())).unwrap_or_default();
        let spans_fit = spans.len() == direct && direct == items.len();
        for (i, item) in items.into_iter().enumerate() {
            let span = if spans_fit { Some(spans[i].clone()) } else { chunk.clone() };
            objects.push(Located { value: item, span });
        }
    }
    Ok(LocatedObjects { source, objects })
}

/// The documents of a YAML stream as byte ranges, split at `---` and `...` lines.
fn split(text: &str) -> Vec<Range<usize>> {
    let mut documents = Vec::new();
    let (mut start, mut offset) = (0, 0);
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let is_start = bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t");
        let is_end = bare == "..." || bare.starts_with("... ");
        if is_start || is_end {
            documents.push(start..offset);
            // A marker line with content (`--- {kind: Node}`) belongs to the next document.
            let content = is_start && bare.len() > 4 && !bare[4..].trim_start().starts_with('#');
            start = if content { offset + 4 } else { offset + line.len() };
        }
        offset += line.len();
    }
    documents.push(start..text.len());
    documents
}

/// Whether a document's text holds more than blank lines, comments and directives.
fn has_content(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim();
        !(t.is_empty() || t.starts_with('#') || t.starts_with('%'))
    })
}

/// The byte ranges of the items of a document's top-level block sequence `items:`, one per
/// `- ` line at the sequence's indentation (empty when there is no such block sequence).
fn item_spans(text: &str, chunk: Range<usize>) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut offset = chunk.start;
    let mut in_items = false;
    let mut indent: Option<usize> = None;
    for line in text[chunk.clone()].split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let trimmed = bare.trim_start_matches(' ');
        let column = bare.len() - trimmed.len();
        let here = offset;
        offset += line.len();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let is_item = trimmed == "-" || trimmed.starts_with("- ");
        if !in_items {
            let value = trimmed.strip_prefix("items:").map(str::trim);
            in_items = column == 0 && value.is_some_and(|v| v.is_empty() || v.starts_with('#'));
            continue;
        }
        if is_item && indent.is_none_or(|i| i == column) {
            indent = Some(column);
            if let Some(last) = spans.last_mut() {
                last.end = here;
            }
            spans.push(here + column..chunk.end);
        } else if column == 0 && !is_item {
            // A top-level key after the sequence ends it.
            if let Some(last) = spans.last_mut() {
                last.end = here;
            }
            break;
        }
    }
    spans
}

/// The field of an object that kix's readers refuse, when it is one kix can point at: a taint
/// effect (Nodes) or a toleration effect (Pods, workload templates) that is not valid.
fn bad_field(object: &Value) -> Option<(&'static str, String)> {
    let valid = |e: &str| Effect::parse(e).is_some();
    let lists: [&[&str]; 3] =
        [&["spec", "taints"], &["spec", "tolerations"], &["spec", "template", "spec", "tolerations"]];
    for path in lists {
        let tolerations = path.last() == Some(&"tolerations");
        for entry in at(object, path).and_then(Value::as_sequence).into_iter().flatten() {
            match entry.get("effect") {
                Some(Value::String(e)) if !(valid(e) || (tolerations && e.is_empty())) => {
                    return Some(("effect", e.clone()));
                }
                Some(Value::String(_)) => {}
                None | Some(Value::Null) if tolerations => {}
                None | Some(Value::Null) => {
                    if let Some(key) = str_at(entry, &["key"]) {
                        return Some(("key", key.to_string()));
                    }
                }
                Some(other) => {
                    let text = serde_yaml::to_string(other).unwrap_or_default();
                    return Some(("effect", text.trim().to_string()));
                }
            }
        }
    }
    None
}

/// The byte range of `value` written as `key: value` (plain or quoted) in `text`.
fn find_field(text: &str, key: &str, value: &str) -> Option<Range<usize>> {
    let mut from = 0;
    while let Some(found) = text[from..].find(key) {
        let at = from + found;
        from = at + key.len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '/') {
            continue;
        }
        let rest = &text[from..];
        let Some(after_colon) = rest.trim_start_matches([' ', '"', '\'']).strip_prefix(':') else { continue };
        let skipped = rest.len() - after_colon.len();
        let trimmed = after_colon.trim_start_matches([' ', '\t']);
        let quote = trimmed.chars().next().filter(|c| *c == '"' || *c == '\'');
        let body = if quote.is_some() { &trimmed[1..] } else { trimmed };
        if body.starts_with(value) {
            let start = from + skipped + (after_colon.len() - trimmed.len());
            let end = start + value.len() + if quote.is_some() { 2 } else { 0 };
            return Some(start..end.min(text.len()));
        }
    }
    None
}

/// A `K0105` diagnostic at a file.
pub fn not_an_object(path: &Path, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::NotAnObject, message).at(Location::file(path))
}

/// Reads a state snapshot file; every object kix cannot read gets its own located diagnostic.
pub fn read_state(path: &Path) -> Result<State, InputError> {
    let file = read_located(path)?;
    let mut state = State::default();
    let mut errors = InputError::default();
    // Node name to the index of its first object, for duplicates.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, object) in file.objects.iter().enumerate() {
        let value = &object.value;
        let result = match str_at(value, &["kind"]) {
            Some("Node") => parse_node(value).and_then(|node| match seen.get(&node.name) {
                Some(_) => Err(format!("node `{}` appears twice", node.name)),
                None => {
                    seen.insert(node.name.clone(), index);
                    state.nodes.push(node);
                    Ok(())
                }
            }),
            Some("Pod") => parse_pod(value, "default").map(|p| state.pods.push(p)),
            Some(_) => Ok(()),
            None => Err("a document has no `kind`".to_string()),
        };
        if let Err(e) = result {
            errors.object(&file, index, e);
        }
    }
    state.nodes.sort_by(|a, b| a.name.cmp(&b.name));
    if errors.is_empty() { Ok(state) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(text: &str) -> LocatedObjects {
        let dir = std::env::temp_dir().join(format!("kix-input-{}-{}", std::process::id(), text.len()));
        std::fs::write(&dir, text).unwrap();
        let out = read_located(&dir).unwrap();
        let _ = std::fs::remove_file(&dir);
        out
    }

    fn line(file: &LocatedObjects, index: usize) -> Option<usize> {
        file.not_an_object(index, "x").location.and_then(|l| l.line)
    }

    #[test]
    fn objects_start_where_their_document_or_item_starts() {
        let file = located(
            "---\n# a\nkind: Node\n---\nkind: List\nitems:\n  - kind: Pod\n  - kind: Pod\n    x: |\n      - not an item\nother: 1\n",
        );
        assert_eq!(file.objects.len(), 3);
        assert_eq!((line(&file, 0), line(&file, 1), line(&file, 2)), (Some(3), Some(7), Some(8)));
    }

    #[test]
    fn a_list_whose_items_cannot_be_told_apart_falls_back_to_its_document() {
        let file = located("kind: Node\n---\nkind: List\nitems: [{kind: Pod},\n  {kind: Pod}]\n");
        assert_eq!(file.objects.len(), 3);
        assert_eq!((line(&file, 1), line(&file, 2)), (Some(3), Some(3)));
    }
}
