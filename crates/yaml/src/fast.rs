//! The fast reader: the block YAML that `kubectl get -o yaml` and kix's own snapshots are written
//! in, read straight from the text into [`Value`]s, without saphyr-parser's token and event
//! machinery or a position tree. A 5,000-node snapshot is read several times faster this way
//! (issue 11: `kix simulate` spent three quarters of its time in the located loader).
//!
//! It is a fast path, never a second dialect. It reads a strict subset of YAML and gives up on the
//! whole text ([`FastRead::Refused`]) at the first thing outside it, so the caller reads the text
//! again with [`parse_stream`](super::parse_stream), which reports every error with its location
//! exactly as without this path. For text it accepts it produces exactly the documents
//! `parse_stream` produces, in order (documents without content skipped), with the same values and
//! the same key order. The subset:
//!
//! * a stream of documents: `---` and `...` lines (a comment may follow them, content may not; after
//!   `...` only `---` or the end); the text is ASCII or printable Unicode with `\n` or `\r\n` line
//!   ends, no tabs, no byte order mark, within [`Limits::max_bytes`];
//! * block mappings and block sequences indented with spaces, including a sequence at its key's own
//!   indentation (`key:` then `- item`), `- key: value` and `- - item` written on the item's line,
//!   and a node on the line after `key:` or `-`;
//! * single-line scalars: plain ones resolve through [`resolve`](super::resolve), so null, booleans,
//!   numbers and strings are typed exactly as by the loader; single-quoted ones (`''` for a quote)
//!   and double-quoted ones with YAML's escapes are strings; keys are such scalars, unique in their
//!   mapping, and at most [`MAX_KEY_BYTES`] long;
//! * single-line flow collections of such scalars (`{}`, `[]`, `{a: 1, b: [x, y]}`), without
//!   trailing commas, empty entries, flow keys or `key:value` without a space;
//! * comments and blank lines anywhere.
//!
//! Refused, among others: anchors, aliases, tags, merge keys (`<<`), block scalars (`|`, `>`),
//! multi-line plain, quoted or flow scalars, complex keys (`?`), directives (`%`), duplicate keys,
//! integers wider than 64 bits, nesting deeper than [`Limits::max_depth`], content on a `---` line,
//! and indentation the subset does not know (a line indented between a sequence's dashes and its
//! item's keys, a scalar followed by a more indented line).
//!
//! The tests hold it to this: every YAML file of the repository, generated snapshots and random
//! documents read the same here as through `parse_stream`, or are refused; every construct above
//! is refused; and no text `parse_stream` reports an error for is accepted (fuzz target
//! `yaml_fast`). Collections nest through recursion bounded by `max_depth`.

use super::mapping::key_hash;
use super::resolve::{self, Resolved};
use super::{Limits, Mapping, Value};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// Mapping size from which duplicate keys are found through a hash set (as the loader does).
const HASH_KEYS_FROM: usize = 16;
/// Longest implicit key read, in bytes from its first character to its `:`. YAML bounds implicit
/// keys at 1024 characters (saphyr-parser counts from the key to the `:`); a byte is at most a
/// character, so staying below this keeps well inside that bound.
pub(crate) const MAX_KEY_BYTES: usize = 1000;

/// How [`fast_stream_each`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastRead {
    /// Every document of the text was read and handed on.
    Read,
    /// The callback returned `Break`; the documents handed on so far are the loader's.
    Stopped,
    /// The text is outside the subset: whatever the callback received must be dropped and the
    /// text read with [`parse_stream`](super::parse_stream).
    Refused,
}

/// The documents of `text` (those without content skipped), or `None` when the fast reader gives
/// up on it.
pub fn fast_stream(text: &str, limits: &Limits) -> Option<Vec<Value>> {
    let mut values = Vec::new();
    let read = fast_stream_each(text, limits, |value| {
        values.push(value);
        ControlFlow::Continue(())
    });
    (read == FastRead::Read).then_some(values)
}

/// [`fast_stream`] one document at a time: `each` gets each document as soon as it is read. On
/// [`FastRead::Refused`] the documents `each` already received are to be thrown away (the refusal
/// may come at the last line).
pub fn fast_stream_each(text: &str, limits: &Limits, mut each: impl FnMut(Value) -> ControlFlow<()>) -> FastRead {
    if text.len() > limits.max_bytes.min(u32::MAX as usize) || !plain_text(text) {
        return FastRead::Refused;
    }
    let mut reader = Reader {
        text,
        b: text.as_bytes(),
        max_depth: limits.max_depth,
        depth: 0,
        start: 0,
        end: 0,
        next: 0,
        indent: 0,
        line: Line::Eof,
        items: Vec::new(),
        entries: Vec::new(),
    };
    match reader.stream(&mut each) {
        Ok(ControlFlow::Continue(())) => FastRead::Read,
        Ok(ControlFlow::Break(())) => FastRead::Stopped,
        Err(Refused) => FastRead::Refused,
    }
}

/// Holds the fast reader to its contract on one text (for the tests and the fuzz target):
/// `Ok(true)` when it read the text into exactly the loader's documents, `Ok(false)` when it gave
/// up, `Err` naming the disagreement (other documents, or text the loader reports an error for).
pub fn check_against_loader(text: &str, limits: &Limits) -> Result<bool, String> {
    let Some(fast) = fast_stream(text, limits) else { return Ok(false) };
    let mut loaded = Vec::new();
    for document in super::parse_stream(text, limits) {
        match document {
            Ok(document) => loaded.push(document.value),
            Err(error) => return Err(format!("accepted a text the loader refuses ({error})")),
        }
    }
    if fast.len() != loaded.len() {
        return Err(format!("read {} documents, the loader {}", fast.len(), loaded.len()));
    }
    match fast.iter().zip(&loaded).position(|(fast, loaded)| !fast.eq_in_order(loaded)) {
        Some(i) => Err(format!("document {i} reads {:?}, the loader's {:?}", fast[i], loaded[i])),
        None => Ok(true),
    }
}

/// Whether every character may appear in the subset: printable ASCII, `\n`, `\r` before `\n`,
/// and printable non-ASCII characters other than the byte order mark and Unicode's line and
/// paragraph separators (no tabs, no control characters).
fn plain_text(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            0x20..=0x7e | b'\n' => i += 1,
            b'\r' if b.get(i + 1) == Some(&b'\n') => i += 2,
            0x80.. => {
                let c = text[i..].chars().next().unwrap_or('\0');
                let printable = matches!(c, '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
                    && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}');
                if !printable {
                    return false;
                }
                i += c.len_utf8();
            }
            _ => return false,
        }
    }
    true
}

/// The text is outside the subset.
struct Refused;

type Fast<T> = Result<T, Refused>;

/// What the current line is, once blank and comment lines are skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    Content,
    /// `---`
    Start,
    /// `...`
    End,
    Eof,
}

struct Reader<'t> {
    text: &'t str,
    b: &'t [u8],
    max_depth: usize,
    /// Collections open.
    depth: usize,
    /// The current line: its first byte, the end of its content (before `\r\n` or `\n`), and
    /// where the next line starts.
    start: usize,
    end: usize,
    next: usize,
    /// Spaces before the current line's content.
    indent: usize,
    line: Line,
    /// Items and entries of the open collections, innermost last: each collection takes its own
    /// off the end when it closes, into a vector of exactly their number (as the loader does).
    items: Vec<Value>,
    entries: Vec<(Value, Value)>,
}

impl Reader<'_> {
    fn stream(&mut self, each: &mut impl FnMut(Value) -> ControlFlow<()>) -> Fast<ControlFlow<()>> {
        self.load(0)?;
        // Whether a document is open (so a `...` may close it).
        let mut open = false;
        loop {
            match self.line {
                Line::Eof => return Ok(ControlFlow::Continue(())),
                Line::Start => {
                    open = true;
                    self.advance()?;
                }
                Line::End => {
                    if !open {
                        return Err(Refused);
                    }
                    open = false;
                    self.advance()?;
                    if !matches!(self.line, Line::Start | Line::Eof) {
                        return Err(Refused);
                    }
                }
                Line::Content => {
                    let value = self.node(self.start + self.indent, -1)?;
                    if self.line == Line::Content {
                        return Err(Refused);
                    }
                    open = true;
                    if each(value).is_break() {
                        return Ok(ControlFlow::Break(()));
                    }
                }
            }
        }
    }

    /// Moves to the next line with content (or a document marker, or the end).
    fn advance(&mut self) -> Fast<()> {
        self.load(self.next)
    }

    /// Makes the first line from `at` on that is not blank or a comment the current line.
    fn load(&mut self, mut at: usize) -> Fast<()> {
        let b = self.b;
        loop {
            if at >= b.len() {
                (self.start, self.end, self.next, self.indent, self.line) = (b.len(), b.len(), b.len(), 0, Line::Eof);
                return Ok(());
            }
            let newline = self.text[at..].find('\n').map_or(b.len(), |i| at + i);
            let end = if newline > at && b[newline - 1] == b'\r' { newline - 1 } else { newline };
            (self.start, self.end, self.next) = (at, end, newline + 1);
            let first = self.skip_spaces(at);
            self.indent = first - at;
            if first == end || b[first] == b'#' {
                at = self.next;
                continue;
            }
            let marker = &b[at..end.min(at + 3)];
            if first == at && (marker == b"---" || marker == b"...") {
                if !self.rest_blank(at + 3) {
                    // `---x` is a scalar, `--- x` a document on its marker's line: not in the subset.
                    return Err(Refused);
                }
                self.line = if marker == b"---" { Line::Start } else { Line::End };
            } else {
                self.line = Line::Content;
            }
            return Ok(());
        }
    }

    fn skip_spaces(&self, mut p: usize) -> usize {
        while p < self.end && self.b[p] == b' ' {
            p += 1;
        }
        p
    }

    /// Whether the current line holds nothing from `p` on but spaces and a comment after them.
    fn rest_blank(&self, p: usize) -> bool {
        if p >= self.end {
            return true;
        }
        let q = self.skip_spaces(p);
        q > p && (q == self.end || self.b[q] == b'#')
    }

    /// Whether a block sequence item (`-` then a space or the line's end) starts at `at`.
    fn dash_item(&self, at: usize) -> bool {
        self.b[at] == b'-' && (at + 1 == self.end || self.b[at + 1] == b' ')
    }

    fn enter(&mut self) -> Fast<()> {
        if self.depth >= self.max_depth {
            return Err(Refused);
        }
        self.depth += 1;
        Ok(())
    }

    /// The block node starting at byte `at` of the current line, in a collection indented `parent`
    /// spaces (-1 for a document's root). Leaves the reader on the first line after the node.
    fn node(&mut self, at: usize, parent: isize) -> Fast<Value> {
        let column = at - self.start;
        if self.dash_item(at) {
            return self.sequence(at, column, false);
        }
        let (value, key) = self.token(at)?;
        if let Some(after) = key {
            return self.mapping(column, value, after);
        }
        self.advance()?;
        // A more indented line would continue the scalar over several lines.
        if self.line == Line::Content && self.indent as isize > parent {
            return Err(Refused);
        }
        Ok(value)
    }

    /// A block mapping whose keys stand at `column`; its first key is read, `after` is just past
    /// that key's `:`.
    fn mapping(&mut self, column: usize, mut key: Value, mut after: usize) -> Fast<Value> {
        self.enter()?;
        let first = self.entries.len();
        let mut hashes: Option<HashSet<u64>> = None;
        loop {
            let checked = self.check_key(first, &mut hashes, std::mem::replace(&mut key, Value::Null))?;
            let value = self.value(after, column)?;
            self.entries.push((checked, value));
            if self.line != Line::Content || self.indent < column {
                break;
            }
            let at = self.start + column;
            if self.indent > column || self.dash_item(at) {
                return Err(Refused);
            }
            match self.token(at)? {
                (next, Some(next_after)) => (key, after) = (next, next_after),
                (_, None) => return Err(Refused),
            }
        }
        self.depth -= 1;
        let entries: Vec<(Value, Value)> = self.entries.drain(first..).collect();
        Ok(Value::Mapping(Mapping::from_distinct(entries)))
    }

    /// The key as a string, as the loader makes it ([`resolve::key`]); refuses a merge key, a null
    /// key and a key already in the mapping whose entries start at `first`, found as the loader
    /// finds duplicates.
    fn check_key(&self, first: usize, hashes: &mut Option<HashSet<u64>>, key: Value) -> Fast<Value> {
        let key = resolve::key(key).ok_or(Refused)?;
        if key.as_str() == Some("<<") {
            return Err(Refused);
        }
        let entries = &self.entries[first..];
        let duplicate = if entries.len() < HASH_KEYS_FROM {
            entries.iter().any(|(k, _)| *k == key)
        } else {
            let hashes = hashes.get_or_insert_with(|| entries.iter().map(|(k, _)| key_hash(k)).collect());
            !hashes.insert(key_hash(&key)) && entries.iter().any(|(k, _)| *k == key)
        };
        if duplicate { Err(Refused) } else { Ok(key) }
    }

    /// The value of a key of a mapping at `column`, from just past the key's `:`.
    fn value(&mut self, after: usize, column: usize) -> Fast<Value> {
        let p = self.skip_spaces(after);
        if p == self.end || self.b[p] == b'#' {
            self.advance()?;
            if self.line != Line::Content {
                return Ok(Value::Null);
            }
            let at = self.start + self.indent;
            if self.indent > column {
                return self.node(at, column as isize);
            }
            if self.indent == column && self.dash_item(at) {
                return self.sequence(at, column, true);
            }
            return Ok(Value::Null);
        }
        if self.dash_item(p) {
            return Err(Refused);
        }
        let (value, key) = self.token(p)?;
        if key.is_some() {
            return Err(Refused);
        }
        self.advance()?;
        if self.line == Line::Content && self.indent > column {
            return Err(Refused);
        }
        Ok(value)
    }

    /// A block sequence whose dashes stand at `column`, the first at `at`. An `indentless`
    /// sequence (a key's value at the key's own column) ends at the mapping's next key.
    fn sequence(&mut self, mut at: usize, column: usize, indentless: bool) -> Fast<Value> {
        self.enter()?;
        let first = self.items.len();
        loop {
            let p = self.skip_spaces(at + 1);
            let item = if p == self.end || self.b[p] == b'#' {
                self.advance()?;
                if self.line == Line::Content && self.indent > column {
                    self.node(self.start + self.indent, column as isize)?
                } else {
                    Value::Null
                }
            } else {
                self.node(p, column as isize)?
            };
            self.items.push(item);
            if self.line != Line::Content || self.indent < column {
                break;
            }
            at = self.start + column;
            if self.indent == column && self.dash_item(at) {
                continue;
            }
            if self.indent == column && indentless {
                break;
            }
            return Err(Refused);
        }
        self.depth -= 1;
        Ok(Value::Sequence(self.items.drain(first..).collect()))
    }

    /// The scalar or flow collection at `at` and what follows it: `Some(just past its colon)` when
    /// it is a key, `None` when the rest of the line is blank or a comment.
    fn token(&mut self, at: usize) -> Fast<(Value, Option<usize>)> {
        let (value, end) = match self.b[at] {
            b'\'' => self.single(at)?,
            b'"' => self.double(at)?,
            b'[' | b'{' => {
                let (value, end) = self.flow(at)?;
                return if self.rest_blank(end) { Ok((value, None)) } else { Err(Refused) };
            }
            _ => return self.plain(at),
        };
        let p = self.skip_spaces(end);
        if p == self.end || (p > end && self.b[p] == b'#') {
            return Ok((value, None));
        }
        if self.b[p] == b':' && (p + 1 == self.end || self.b[p + 1] == b' ') && p - at <= MAX_KEY_BYTES {
            return Ok((value, Some(p + 1)));
        }
        Err(Refused)
    }

    /// A plain scalar in block context: it ends at `: ` (a key), at ` #` or at the line's end.
    fn plain(&self, at: usize) -> Fast<(Value, Option<usize>)> {
        let b = self.b;
        if is_indicator(b[at]) {
            return Err(Refused);
        }
        let mut last = at;
        for i in at..self.end {
            match b[i] {
                b':' if i + 1 == self.end || b[i + 1] == b' ' => {
                    if i - at > MAX_KEY_BYTES {
                        return Err(Refused);
                    }
                    return Ok((self.resolve(at, last)?, Some(i + 1)));
                }
                b' ' if i + 1 < self.end && b[i + 1] == b'#' => break,
                b' ' => {}
                _ => last = i + 1,
            }
        }
        Ok((self.resolve(at, last)?, None))
    }

    /// The plain scalar `text[from..to]`, resolved as the loader resolves it.
    fn resolve(&self, from: usize, to: usize) -> Fast<Value> {
        let text = &self.text[from..to];
        match resolve::plain_non_string(text) {
            None => Ok(Value::String(text.to_string())),
            Some(Resolved::Value(value)) => Ok(value),
            Some(Resolved::OutOfRange) => Err(Refused),
        }
    }

    /// A single-quoted scalar closed on its line, and the position just past its closing quote.
    fn single(&self, at: usize) -> Fast<(Value, usize)> {
        let b = self.b;
        let mut text = String::new();
        let mut from = at + 1;
        loop {
            let quote = from + b[from..self.end].iter().position(|&c| c == b'\'').ok_or(Refused)?;
            text.push_str(&self.text[from..quote]);
            if quote + 1 < self.end && b[quote + 1] == b'\'' {
                text.push('\'');
                from = quote + 2;
            } else {
                return Ok((Value::String(text), quote + 1));
            }
        }
    }

    /// A double-quoted scalar closed on its line (escapes as YAML 1.2 defines them), and the
    /// position just past its closing quote.
    fn double(&self, at: usize) -> Fast<(Value, usize)> {
        let b = self.b;
        let mut text = String::new();
        let (mut from, mut i) = (at + 1, at + 1);
        loop {
            match b.get(i).filter(|_| i < self.end).ok_or(Refused)? {
                b'"' => {
                    text.push_str(&self.text[from..i]);
                    return Ok((Value::String(text), i + 1));
                }
                b'\\' => {
                    text.push_str(&self.text[from..i]);
                    let escape = *b.get(i + 1).filter(|_| i + 1 < self.end).ok_or(Refused)?;
                    let digits = match escape {
                        b'x' => 2,
                        b'u' => 4,
                        b'U' => 8,
                        _ => 0,
                    };
                    let c = if digits > 0 {
                        let hex = self.text.get(i + 2..i + 2 + digits).filter(|_| i + 2 + digits <= self.end);
                        let hex = hex.filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit())).ok_or(Refused)?;
                        u32::from_str_radix(hex, 16).ok().and_then(char::from_u32).ok_or(Refused)?
                    } else {
                        match escape {
                            b'0' => '\0',
                            b'a' => '\x07',
                            b'b' => '\x08',
                            b't' => '\t',
                            b'n' => '\n',
                            b'v' => '\x0b',
                            b'f' => '\x0c',
                            b'r' => '\r',
                            b'e' => '\x1b',
                            b' ' => ' ',
                            b'"' => '"',
                            b'/' => '/',
                            b'\\' => '\\',
                            b'N' => '\u{85}',
                            b'_' => '\u{a0}',
                            b'L' => '\u{2028}',
                            b'P' => '\u{2029}',
                            _ => return Err(Refused),
                        }
                    };
                    text.push(c);
                    i += 2 + digits;
                    from = i;
                }
                _ => i += 1,
            }
        }
    }

    /// A flow collection (`[` or `{` at `at`) closed on its line, and the position just past it.
    fn flow(&mut self, at: usize) -> Fast<(Value, usize)> {
        self.enter()?;
        let b = self.b;
        let sequence = b[at] == b'[';
        let close = if sequence { b']' } else { b'}' };
        let (first_item, first_entry) = (self.items.len(), self.entries.len());
        let mut hashes: Option<HashSet<u64>> = None;
        let mut p = self.skip_spaces(at + 1);
        if p < self.end && b[p] == close {
            p += 1;
        } else {
            loop {
                if sequence {
                    let (item, end) = self.flow_node(p)?;
                    self.items.push(item);
                    p = end;
                } else {
                    let (key, end) = match b.get(p).filter(|_| p < self.end).ok_or(Refused)? {
                        b'\'' => self.single(p)?,
                        b'"' => self.double(p)?,
                        _ => match self.flow_plain(p)? {
                            (key, end, true) => (key, end),
                            (_, _, false) => return Err(Refused),
                        },
                    };
                    let colon = self.skip_spaces(end);
                    if colon + 1 >= self.end || b[colon] != b':' || b[colon + 1] != b' ' || colon - p > MAX_KEY_BYTES {
                        return Err(Refused);
                    }
                    let key = self.check_key(first_entry, &mut hashes, key)?;
                    let (value, end) = self.flow_node(self.skip_spaces(colon + 1))?;
                    self.entries.push((key, value));
                    p = end;
                }
                p = self.skip_spaces(p);
                match b.get(p).filter(|_| p < self.end) {
                    Some(&c) if c == close => {
                        p += 1;
                        break;
                    }
                    Some(b',') => p = self.skip_spaces(p + 1),
                    _ => return Err(Refused),
                }
            }
        }
        self.depth -= 1;
        let value = if sequence {
            Value::Sequence(self.items.drain(first_item..).collect())
        } else {
            Value::Mapping(Mapping::from_distinct(self.entries.drain(first_entry..).collect()))
        };
        Ok((value, p))
    }

    /// An entry of a flow collection, and the position just past it.
    fn flow_node(&mut self, p: usize) -> Fast<(Value, usize)> {
        match self.b.get(p).filter(|_| p < self.end).ok_or(Refused)? {
            b'[' | b'{' => self.flow(p),
            b'\'' => self.single(p),
            b'"' => self.double(p),
            _ => match self.flow_plain(p)? {
                (value, end, false) => Ok((value, end)),
                (_, _, true) => Err(Refused),
            },
        }
    }

    /// A plain scalar in flow context, and where it ends: at `,`, `]` or `}` (`false`), or at the
    /// `:` of `: ` (`true`, just past the scalar). A `:` before a line end or a flow indicator, a
    /// comment or a line end before the collection closes is refused.
    fn flow_plain(&self, at: usize) -> Fast<(Value, usize, bool)> {
        let b = self.b;
        // `-` starts a scalar when a scalar character follows it (saphyr-parser refuses `-,` and the like).
        let dash =
            b[at] == b'-' && (at + 1 == self.end || matches!(b[at + 1], b' ' | b',' | b'[' | b']' | b'{' | b'}'));
        if is_indicator(b[at]) || dash {
            return Err(Refused);
        }
        let mut last = at;
        for i in at..self.end {
            match b[i] {
                b',' | b'[' | b']' | b'{' | b'}' => return Ok((self.resolve(at, last)?, i, false)),
                b':' if i + 1 < self.end && b[i + 1] == b' ' => return Ok((self.resolve(at, last)?, i, true)),
                b':' if i + 1 == self.end || matches!(b[i + 1], b',' | b'[' | b']' | b'{' | b'}') => {
                    return Err(Refused);
                }
                // A comment, or (refused by saphyr-parser) a `-` then a flow indicator after a space.
                b' ' if i + 1 < self.end && b[i + 1] == b'#' => return Err(Refused),
                b' ' if b[i + 1..self.end].starts_with(b"-")
                    && i + 2 < self.end
                    && matches!(b[i + 2], b',' | b'[' | b']' | b'{' | b'}') =>
                {
                    return Err(Refused);
                }
                b' ' => {}
                _ => last = i + 1,
            }
        }
        Err(Refused)
    }
}

/// A character that cannot start a plain scalar in the subset: YAML's indicators, and `-`, `?`
/// and `:` (`-` is let through by the callers where it is followed by a scalar character).
fn is_indicator(c: u8) -> bool {
    matches!(
        c,
        b'?' | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
