//! The located loader: YAML text to [`ParsedDocument`]s ([`Value`] plus [`Marks`]), built from
//! saphyr-parser's events with an explicit stack (no recursion, so no input can overflow it).
//!
//! Per document, in event order:
//!
//! * A scalar resolves through [`resolve`](super::resolve) (plain scalars as kubectl's go-yaml v2
//!   reads them; quoted and block scalars are strings; core tags honoured, other tags dropped).
//! * A key is made a string as sigs.k8s.io/yaml makes it a JSON key ([`resolve::key`]: `5432:`
//!   is the key `"5432"`, `on:` is `"true"`); a null or collection key is an
//!   [`UnsupportedKey`](YamlErrorKind::UnsupportedKey) error, as it is to kubectl.
//! * A key already present in its mapping is a [`DuplicateKey`](YamlErrorKind::DuplicateKey) error
//!   at the second occurrence, naming the first's line (kubectl keeps the later one silently; kix
//!   refuses rather than drop a value). Detection is a scan for small mappings and a hash set past
//!   [`HASH_KEYS_FROM`] keys, so it stays linear on big mappings.
//! * `&anchor` stores the finished node; `*alias` clones it (value and marks; the clone's root gets
//!   the alias's span). Every node an alias produces counts against
//!   [`Limits::max_alias_nodes`](super::Limits::max_alias_nodes).
//! * A collection opened more than [`Limits::max_depth`](super::Limits::max_depth) levels deep is an
//!   error at its start.
//! * When a mapping closes, its `<<` entries merge as go-yaml v2's decoder merges them
//!   (`decode.go`, `isMerge`, `mapping`, `merge`): a merge key is a plain `<<` (untagged or
//!   `!!merge`; a quoted `'<<'` is an ordinary key), its value a mapping or a sequence of
//!   mappings. Entries are set in document order and a later one replaces an earlier one with the
//!   same key, whether either came from a merge or was written out; a sequence is merged from its
//!   last mapping to its first, so among those the earlier wins. A key keeps the place it was first
//!   set at. Merges apply innermost first, so an anchored mapping that itself merges is merged
//!   before it is reused.
//!
//! A semantic error fails its document and the loader moves on to the next one; a syntax error from
//! the parser ends the stream (it cannot resynchronise).

use super::mapping::key_hash;
use super::marks::{EntryMarks, KeyText, Marks, MarksKind};
use super::resolve::{self, Resolved};
use super::{Limits, Mapping, Mark, Span, Value, YamlError, YamlErrorKind};
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Tag};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// Mapping size from which duplicate keys are found through a hash set rather than a scan.
const HASH_KEYS_FROM: usize = 16;

/// One YAML document of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedDocument {
    pub value: Value,
    pub marks: Marks,
    /// Where the document starts: its `---`, or its first node when it has none.
    pub start: Mark,
}

/// Parses every document of `text`: one entry per document, in order; documents with no content
/// are skipped. After a syntax error the stream ends with that error.
pub fn parse_stream(text: &str, limits: &Limits) -> Vec<Result<ParsedDocument, YamlError>> {
    let mut documents = Vec::new();
    parse_stream_each(text, limits, |document| {
        documents.push(document);
        ControlFlow::Continue(())
    });
    documents
}

/// [`parse_stream`] one document at a time: `each` gets exactly the entries `parse_stream` returns,
/// in order, each as soon as its document is read, so a caller that converts and drops each one
/// never holds the whole stream's tree (a 10,000-object snapshot's tree is many times its text).
/// `each` returns `Break` to stop reading.
pub fn parse_stream_each(
    text: &str,
    limits: &Limits,
    mut each: impl FnMut(Result<ParsedDocument, YamlError>) -> ControlFlow<()>,
) {
    // Marks hold `u32` offsets: nothing past 4 GiB, whatever the limits say.
    let max_bytes = limits.max_bytes.min(u32::MAX as usize);
    if text.len() > max_bytes {
        let message = format!("input is {} bytes, over the limit of {max_bytes} bytes", text.len());
        let _ = each(Err(YamlError::new(YamlErrorKind::SizeLimit, Mark { line: 1, column: 1, offset: 0 }, message)));
        return;
    }
    if let Some(error) = control_character(text) {
        let _ = each(Err(error));
        return;
    }
    let positions = Positions::new(text);
    let mut parser = Parser::new_from_str(text);
    let mut builder: Option<Builder> = None;
    while let Some(next) = parser.next_event() {
        let (event, span) = match next {
            Ok(next) => next,
            Err(error) => {
                let open = builder.as_ref().map(|b| b.open_starts()).unwrap_or_default();
                let _ = each(Err(syntax_error(&error, text, &positions, &open)));
                break;
            }
        };
        match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing => {}
            Event::DocumentStart(_) => builder = Some(Builder::new(positions.mark(span.start), limits)),
            Event::DocumentEnd => {
                if let Some(result) = builder.take().and_then(Builder::finish) {
                    if each(result).is_break() {
                        break;
                    }
                }
            }
            event => {
                if let Some(builder) = builder.as_mut() {
                    builder.event(event, span, &positions);
                }
            }
        }
    }
}

/// A collection being built. Its children wait on the builder's shared scratch stacks (from
/// `first` on) until it closes, then move into one allocation of exactly their number: per-frame
/// vectors would keep their spare capacity in the finished tree, several times its size on the
/// small mappings Kubernetes objects are made of.
enum Frame {
    Sequence { anchor: usize, start: Mark, first: usize },
    Mapping(MappingFrame),
}

struct MappingFrame {
    anchor: usize,
    start: Mark,
    /// Where this mapping's entries start in the builder's `entries` and `entry_marks`.
    first: usize,
    /// The key waiting for its value.
    key: Option<(Value, Span, Option<KeyText>)>,
    /// Key hashes, once the mapping is big enough to need them.
    hashes: Option<HashSet<u64>>,
    /// Which of the entries (counted from `first`) are merge keys.
    merges: Vec<usize>,
}

struct Builder<'l> {
    limits: &'l Limits,
    start: Mark,
    stack: Vec<Frame>,
    /// Items of the open sequences, innermost last (see [`Frame`]).
    items: Vec<Value>,
    item_marks: Vec<Marks>,
    /// Entries of the open mappings, innermost last.
    entries: Vec<(Value, Value)>,
    entry_marks: Vec<EntryMarks>,
    root: Option<(Value, Marks)>,
    /// True when the root is the empty scalar of a document without content.
    empty: bool,
    anchors: HashMap<usize, (Value, Marks, usize)>,
    alias_nodes: usize,
    error: Option<YamlError>,
    /// The scalar being completed is a plain `<<`.
    merge_key: bool,
}

impl<'l> Builder<'l> {
    fn new(start: Mark, limits: &'l Limits) -> Builder<'l> {
        Builder {
            limits,
            start,
            stack: Vec::new(),
            items: Vec::new(),
            item_marks: Vec::new(),
            entries: Vec::new(),
            entry_marks: Vec::new(),
            root: None,
            empty: false,
            anchors: HashMap::new(),
            alias_nodes: 0,
            error: None,
            merge_key: false,
        }
    }

    fn finish(self) -> Option<Result<ParsedDocument, YamlError>> {
        if let Some(error) = self.error {
            return Some(Err(error));
        }
        let (value, marks) = self.root?;
        (!self.empty).then_some(Ok(ParsedDocument { value, marks, start: self.start }))
    }

    fn fail(&mut self, kind: YamlErrorKind, mark: Mark, message: String) {
        self.error = Some(YamlError::new(kind, mark, message));
    }

    fn event(&mut self, event: Event, span: saphyr_parser::Span, positions: &Positions) {
        if self.error.is_some() {
            return;
        }
        let span = positions.span(span);
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                if self.stack.is_empty()
                    && text.is_empty()
                    && style == ScalarStyle::Plain
                    && anchor == 0
                    && tag.is_none()
                {
                    self.empty = true;
                }
                // go-yaml v2 `isMerge`: the value `<<`, implicit (plain, untagged) or tagged !!merge.
                let merge_key = style == ScalarStyle::Plain
                    && text == "<<"
                    && tag.as_deref().is_none_or(|tag| tag.is_yaml_core_schema() && tag.suffix == "merge");
                let value = match scalar(text, style, tag.as_deref()) {
                    Ok(value) => value,
                    Err((kind, message)) => return self.fail(kind, span.start, message),
                };
                self.merge_key = merge_key;
                self.complete(value, Marks::scalar(span), anchor);
                self.merge_key = false;
            }
            Event::SequenceStart(anchor, _) => {
                if self.too_deep(span.start) {
                    return;
                }
                self.stack.push(Frame::Sequence { anchor, start: span.start, first: self.items.len() });
            }
            Event::MappingStart(anchor, _) => {
                if self.too_deep(span.start) {
                    return;
                }
                self.stack.push(Frame::Mapping(MappingFrame {
                    anchor,
                    start: span.start,
                    first: self.entries.len(),
                    key: None,
                    hashes: None,
                    merges: Vec::new(),
                }));
            }
            Event::SequenceEnd => {
                let Some(Frame::Sequence { anchor, start, first }) = self.stack.pop() else { return };
                let items: Vec<Value> = self.items.drain(first..).collect();
                let marks: Vec<Marks> = self.item_marks.drain(first..).collect();
                let end = end_of(span, marks.last().map(|m| m.span.end), start);
                self.complete(
                    Value::Sequence(items),
                    Marks { span: Span { start, end }, kind: MarksKind::Sequence(marks) },
                    anchor,
                );
            }
            Event::MappingEnd => {
                let Some(Frame::Mapping(frame)) = self.stack.pop() else { return };
                let entries: Vec<(Value, Value)> = self.entries.drain(frame.first..).collect();
                let marks: Vec<EntryMarks> = self.entry_marks.drain(frame.first..).collect();
                let end = end_of(span, marks.last().map(|m| m.value.span.end), frame.start);
                let (anchor, start) = (frame.anchor, frame.start);
                match merge(entries, marks, &frame.merges) {
                    Ok((mapping, marks)) => {
                        let marks = Marks { span: Span { start, end }, kind: MarksKind::Mapping(marks) };
                        self.complete(Value::Mapping(mapping), marks, anchor);
                    }
                    Err(error) => self.error = Some(error),
                }
            }
            Event::Alias(id) => {
                let Some((value, marks, nodes)) = self.anchors.get(&id) else {
                    return self.fail(
                        YamlErrorKind::UndefinedAlias,
                        span.start,
                        "alias names no anchor defined before it".into(),
                    );
                };
                self.alias_nodes += nodes;
                if self.alias_nodes > self.limits.max_alias_nodes {
                    let message = format!(
                        "aliases expand to more than {} nodes (a \"billion laughs\" document); refused",
                        self.limits.max_alias_nodes
                    );
                    return self.fail(YamlErrorKind::AliasLimit, span.start, message);
                }
                let (value, mut marks) = (value.clone(), marks.clone());
                marks.span = span;
                self.complete(value, marks, 0);
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) | Event::DocumentEnd | Event::Nothing => {}
        }
    }

    /// Where the collections still open start, outermost first (for unclosed-bracket errors).
    fn open_starts(&self) -> Vec<Mark> {
        self.stack
            .iter()
            .map(|frame| match frame {
                Frame::Sequence { start, .. } => *start,
                Frame::Mapping(frame) => frame.start,
            })
            .collect()
    }

    fn too_deep(&mut self, at: Mark) -> bool {
        if self.stack.len() < self.limits.max_depth {
            return false;
        }
        let message = format!("nested deeper than {} levels; refused", self.limits.max_depth);
        self.fail(YamlErrorKind::DepthLimit, at, message);
        true
    }

    /// Attaches a finished node to its parent (or makes it the root).
    fn complete(&mut self, value: Value, marks: Marks, anchor: usize) {
        if anchor != 0 {
            let nodes = value.node_count();
            self.anchors.insert(anchor, (value.clone(), marks.clone(), nodes));
        }
        match self.stack.last_mut() {
            None => self.root = Some((value, marks)),
            Some(Frame::Sequence { .. }) => {
                self.items.push(value);
                self.item_marks.push(marks);
            }
            Some(Frame::Mapping(frame)) => match frame.key.take() {
                Some((key, key_span, key_text)) => {
                    self.entries.push((key, value));
                    self.entry_marks.push(EntryMarks { key_text, key: key_span, value: marks });
                }
                None if self.merge_key => {
                    frame.merges.push(self.entries.len() - frame.first);
                    frame.key = Some((value, marks.span, None));
                }
                None => {
                    let Some(value) = resolve::key(value) else {
                        let message = "a mapping key must be a string, number or boolean: kubectl cannot read a \
                                       null or collection key (sigs.k8s.io/yaml: \"unsupported map key\")";
                        return self.fail(YamlErrorKind::UnsupportedKey, marks.span.start, message.into());
                    };
                    let (entries, entry_marks) = (&self.entries[frame.first..], &self.entry_marks[frame.first..]);
                    if let Some(first) = frame.duplicate_of(entries, entry_marks, &value) {
                        let message = format!(
                            "duplicate key {} in one mapping (first written at line {first})",
                            describe_key(&value)
                        );
                        return self.fail(YamlErrorKind::DuplicateKey, marks.span.start, message);
                    }
                    let key_text = value.as_str().map(KeyText::new);
                    frame.key = Some((value, marks.span, key_text));
                }
            },
        }
    }
}

impl MappingFrame {
    /// The line of an earlier entry with this key, if any; records the key otherwise.
    /// `entries` and `marks` are this mapping's, so far.
    fn duplicate_of(&mut self, entries: &[(Value, Value)], marks: &[EntryMarks], key: &Value) -> Option<u32> {
        let find = || entries.iter().position(|(k, _)| k == key).map(|i| marks[i].key.start.line);
        if entries.len() < HASH_KEYS_FROM {
            return find();
        }
        let hashes = self.hashes.get_or_insert_with(|| entries.iter().map(|(k, _)| key_hash(k)).collect());
        if hashes.insert(key_hash(key)) { None } else { find() }
    }
}

/// A collection's end: its closing bracket for flow style, else its last child's end.
fn end_of(event: Span, last_child_end: Option<Mark>, start: Mark) -> Mark {
    if event.end.offset > event.start.offset { event.end } else { last_child_end.unwrap_or(start) }
}

fn describe_key(key: &Value) -> String {
    match key {
        Value::String(s) => format!("`{s}`"),
        Value::Number(n) => format!("`{n}`"),
        Value::Bool(b) => format!("`{b}`"),
        Value::Null => "`null`".into(),
        _ => "(a collection)".into(),
    }
}

/// Resolves one scalar event to a value (a string reuses the parser's allocation).
fn scalar(text: Cow<str>, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, (YamlErrorKind, String)> {
    let resolved = match tag {
        Some(tag) if tag.is_yaml_core_schema() => resolve::tagged(&tag.suffix, &text).ok_or_else(|| {
            (YamlErrorKind::InvalidTaggedScalar, format!("`{text}` is not a valid value for the tag !!{}", tag.suffix))
        })?,
        _ if style == ScalarStyle::Plain => match resolve::plain_non_string(&text) {
            Some(resolved) => resolved,
            None => return Ok(Value::String(text.into_owned())),
        },
        _ => return Ok(Value::String(text.into_owned())),
    };
    match resolved {
        Resolved::Value(value) => Ok(value),
        Resolved::OutOfRange => Err((
            YamlErrorKind::IntegerOutOfRange,
            format!("integer {text} is out of range (integers must fit in 64 bits)"),
        )),
    }
}

/// Applies the `<<` entries at `merges`, if any (see the module docs for the order).
fn merge(
    entries: Vec<(Value, Value)>,
    marks: Vec<EntryMarks>,
    merges: &[usize],
) -> Result<(Mapping, Vec<EntryMarks>), YamlError> {
    if merges.is_empty() {
        return Ok((Mapping::from_distinct(entries), marks));
    }
    let mut out: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
    let mut out_marks: Vec<EntryMarks> = Vec::with_capacity(entries.len());
    let mut at: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut set = |key: Value, value: Value, entry_marks: EntryMarks| {
        let slot = at.entry(key_hash(&key)).or_default();
        match slot.iter().find(|&&i| out[i].0 == key) {
            Some(&i) => {
                out[i].1 = value;
                out_marks[i] = entry_marks;
            }
            None => {
                slot.push(out.len());
                out.push((key, value));
                out_marks.push(entry_marks);
            }
        }
    };
    let invalid = |span: Span, what: &str| {
        let message = format!("the value of a merge key `<<` must be a mapping or a list of mappings, not {what}");
        YamlError::new(YamlErrorKind::InvalidMerge, span.start, message)
    };
    for (i, ((key, value), entry_marks)) in entries.into_iter().zip(marks).enumerate() {
        if !merges.contains(&i) {
            set(key, value, entry_marks);
            continue;
        }
        let mut take = |source: Mapping, source_marks: Vec<EntryMarks>| {
            for ((key, value), entry_marks) in source.into_entries().into_iter().zip(source_marks) {
                set(key, value, entry_marks);
            }
        };
        match (value, entry_marks.value.kind) {
            (Value::Mapping(source), MarksKind::Mapping(source_marks)) => take(source, source_marks),
            (Value::Sequence(items), MarksKind::Sequence(item_marks)) => {
                let mut sources = Vec::with_capacity(items.len());
                for (item, item_marks) in items.into_iter().zip(item_marks) {
                    match (item, item_marks.kind) {
                        (Value::Mapping(source), MarksKind::Mapping(source_marks)) => {
                            sources.push((source, source_marks))
                        }
                        (Value::Sequence(_), _) => return Err(invalid(item_marks.span, "a list holding a list")),
                        _ => return Err(invalid(item_marks.span, "a list holding a scalar")),
                    }
                }
                // go-yaml v2 `merge`: "Step backwards as earlier nodes take precedence."
                for (source, source_marks) in sources.into_iter().rev() {
                    take(source, source_marks);
                }
            }
            _ => return Err(invalid(entry_marks.key, "a scalar")),
        }
    }
    Ok((Mapping::from_distinct(out), out_marks))
}

/// The first character YAML does not allow in a stream (outside its printable set: C0 controls
/// other than tab, line feed and carriage return, DEL, C1 controls but NEL, surrogates, U+FFFE and
/// U+FFFF; YAML 1.2 `c-printable`, which go-yaml v2's reader, and so kubectl, enforces as well:
/// "control characters are not allowed"), as a syntax error at its line and column. Without this
/// saphyr reports a NUL byte as a tab in the indentation.
/// Whether `text` holds no character YAML refuses in a stream (see `control_character`): what a reader
/// that hands the loader a file a part at a time checks first, since the loader refuses the whole
/// text for one such character, wherever it is.
pub fn free_of_control_characters(text: &str) -> bool {
    control_character(text).is_none()
}

fn control_character(text: &str) -> Option<YamlError> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
            || c >= '\u{10000}'
    };
    let (offset, c) = text.char_indices().find(|(_, c)| !allowed(*c))?;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let name = match c {
        '\0' => " (NUL)".to_string(),
        _ => String::new(),
    };
    let mark = Mark { line: line as u32, column: column as u32, offset: offset as u32 };
    let message = format!("control character U+{:04X}{name} is not allowed in YAML", c as u32);
    Some(YamlError::new(YamlErrorKind::Syntax, mark, message))
}

/// A plain-English syntax error at the parser's mark; an unclosed flow collection is reported at
/// its opening bracket (`open` holds the starts of the collections still open), where the mistake
/// is, rather than where the parser noticed it.
fn syntax_error(error: &ScanError, text: &str, positions: &Positions, open: &[Mark]) -> YamlError {
    let mark = positions.mark(*error.marker());
    let info = error.info();
    let unclosed = |bracket: char, closer: char, what: &str| {
        let opening = open.iter().rev().find(|m| text[m.offset as usize..].starts_with(bracket))?;
        let message = format!(
            "unclosed flow {what}: `{bracket}` is not closed (expected `,` or `{closer}` at line {} column {})",
            mark.line, mark.column
        );
        Some(YamlError::new(YamlErrorKind::Syntax, *opening, message))
    };
    if info.contains("flow mapping, did not find expected ',' or '}'") {
        if let Some(error) = unclosed('{', '}', "mapping") {
            return error;
        }
    }
    if info.contains("flow sequence, expected ',' or ']'") {
        if let Some(error) = unclosed('[', ']', "sequence") {
            return error;
        }
    }
    let (kind, message) = if info.contains("unknown anchor") {
        let name: String =
            text[mark.offset as usize..].chars().take_while(|c| !c.is_whitespace() && !",]}".contains(*c)).collect();
        (YamlErrorKind::UndefinedAlias, format!("alias {name} names no anchor defined before it"))
    } else if info.contains("tab") {
        (YamlErrorKind::Syntax, "tabs are not allowed for indentation in YAML; use spaces".to_string())
    } else {
        let plain = match info {
            i if i.contains("quoted scalar, found unexpected end of stream")
                || i.contains("indentation in quoted scalar") =>
            {
                "unclosed quoted string (or a continuation line of it not indented)".into()
            }
            i if i.contains("flow mapping, did not find expected ',' or '}'") => {
                "unclosed flow mapping: expected `,` or `}`".into()
            }
            i if i.contains("flow sequence, expected ',' or ']'") => {
                "unclosed flow sequence: expected `,` or `]`".into()
            }
            i if i.contains("mapping values are not allowed") => {
                "a `key: value` is not allowed here (check the indentation, or quote a value that contains \": \")"
                    .into()
            }
            i if i.contains("did not find expected key") => {
                "bad indentation: a key of this mapping should start here".into()
            }
            i if i.contains("did not find expected '-'") => "bad indentation: expected a `-` item of this list".into(),
            other => format!("invalid YAML: {other}"),
        };
        (YamlErrorKind::Syntax, plain)
    };
    YamlError::new(kind, mark, message)
}

/// Turns the parser's marks (character index, 1-based line, 0-based column) into [`Mark`]s with
/// byte offsets. ASCII text maps one to one; otherwise each non-ASCII character is recorded with
/// the extra bytes it and those before it take.
struct Positions {
    /// (character index, extra bytes up to and including that character), ascending.
    wide: Vec<(usize, usize)>,
}

impl Positions {
    fn new(text: &str) -> Positions {
        let mut wide = Vec::new();
        if !text.is_ascii() {
            let mut extra = 0;
            for (index, c) in text.chars().enumerate() {
                if !c.is_ascii() {
                    extra += c.len_utf8() - 1;
                    wide.push((index, extra));
                }
            }
        }
        Positions { wide }
    }

    fn mark(&self, marker: Marker) -> Mark {
        let index = marker.index();
        let before = self.wide.partition_point(|&(at, _)| at < index);
        let extra = if before == 0 { 0 } else { self.wide[before - 1].1 };
        Mark { line: marker.line() as u32, column: marker.col() as u32 + 1, offset: (index + extra) as u32 }
    }

    fn span(&self, span: saphyr_parser::Span) -> Span {
        Span { start: self.mark(span.start), end: self.mark(span.end) }
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
