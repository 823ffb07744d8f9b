//! A fast reader for the plain TOML cluster files are written in (issue 20: toml's parser was a tenth of
//! a 1,000-cluster rebuild): one statement a line, bare keys, `[table]` and `[[array]]` headers of one
//! key, and values that are strings without escapes, booleans, or one-line arrays of such strings. It
//! builds toml's own [`DeTable`] with the spans toml's parser gives (the header's brackets for a table,
//! the first header's for an array of tables, the quotes for a string), so everything after it (shape
//! checks, serde, every located diagnostic) is the same.
//!
//! It gives up (`None`) on anything else: another statement or value form, a key named twice, a table
//! defined twice, a control character anywhere, a carriage return, a backslash anywhere. toml's
//! parser then reads the file, so every error and every other form it accepts is toml's. The tests
//! compare both readers on every cluster file in the repository and on generated variations.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

/// The document as toml's parser would give it, or `None` where this reader does not know the form.
pub(crate) fn parse(text: &str) -> Option<Spanned<DeTable<'_>>> {
    parse_regions(text, std::slice::from_ref(&(0..text.len())))
}

/// [`parse`] of the text `text` would be with every byte outside the `kept` ranges but line breaks made a
/// space (each range whole lines, in order: `crate::reuse::in_part` reads some instances' entries of a
/// cluster file, the spans the file's), without that text made or its blank lines read: such a line is
/// nothing to either reader, and neither is a blanked byte anything this reader refuses.
pub(crate) fn parse_regions<'t>(text: &'t str, kept: &[Range<usize>]) -> Option<Spanned<DeTable<'t>>> {
    // A backslash anywhere (an escape, or one in a comment): toml's (it is rare in a cluster file).
    let refused = |b: u8| (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f || b == b'\\';
    // Each block folded without an early exit, which the compiler turns into vector code: a rebuild reads
    // every cluster file of a fleet again.
    let refused_in = |block: &[u8]| block.iter().fold(false, |refused_one, b| refused_one | refused(*b));
    let bytes_of = |range: &Range<usize>| text.as_bytes().get(range.clone());
    if kept.iter().any(|range| bytes_of(range).is_none_or(|bytes| bytes.chunks(64).any(refused_in))) {
        return None;
    }
    // A byte-order mark is blanked with the rest of a range left out.
    if kept.first().is_some_and(|first| first.start == 0 && !first.is_empty()) && text.starts_with('\u{feff}') {
        return None;
    }
    let mut document = Document { root: DeTable::new(), arrays: HashSet::new(), open: None };
    // The table key-value lines go into: the root's until the first header, then the header's (kept
    // apart until the next header, so a line is not a lookup in the root).
    let mut table = DeTable::new();
    let lines = kept.iter().flat_map(|range| {
        let mut start = range.start;
        std::iter::from_fn(move || {
            (start < range.end).then(|| {
                let line_start = start;
                let length = memchr::memchr(b'\n', &text.as_bytes()[start..range.end]);
                start += length.map_or(range.end - start, |length| length + 1);
                (line_start, line_start + length.unwrap_or(range.end - line_start))
            })
        })
    });
    for (line_start, line_end) in lines {
        let body = text.get(line_start..line_end)?;
        let mut at = Cursor { text: body, at: 0, offset: line_start, key: 0..0 };
        at.skip_blanks();
        match at.peek() {
            None | Some(b'#') => continue,
            Some(b'[') => {
                let header_start = at.absolute();
                let array = body[at.at..].starts_with("[[");
                at.at += if array { 2 } else { 1 };
                at.skip_blanks();
                let key = at.bare_key()?;
                at.skip_blanks();
                let close = if array { "]]" } else { "]" };
                if !body[at.at..].starts_with(close) {
                    return None;
                }
                at.at += close.len();
                let header = header_start..at.absolute();
                at.end_of_line()?;
                document.close(std::mem::take(&mut table))?;
                document.open(Header { name: &text[key.clone()], key, header, array })?;
            }
            Some(_) => {
                let key = at.bare_key()?;
                at.skip_blanks();
                if at.peek() != Some(b'=') {
                    return None;
                }
                at.at += 1;
                at.skip_blanks();
                let value = at.value()?;
                at.end_of_line()?;
                let name = Spanned::new(key, Cow::Borrowed(at.key_text()));
                if table.contains_key(&name) {
                    return None;
                }
                table.insert(name, value);
            }
        }
    }
    document.close(table)?;
    Some(Spanned::new(0..0, document.root))
}

/// A `[name]` or `[[name]]` header: the key's span, the brackets' span.
struct Header<'t> {
    name: &'t str,
    key: Range<usize>,
    header: Range<usize>,
    array: bool,
}

/// The document being read: its root, the arrays of tables its headers made, and the header whose
/// table is being read.
struct Document<'t> {
    root: DeTable<'t>,
    arrays: HashSet<&'t str>,
    open: Option<Header<'t>>,
}

impl<'t> Document<'t> {
    /// A header's table: `None` where toml refuses it (a table defined twice, a key's name taken).
    fn open(&mut self, header: Header<'t>) -> Option<()> {
        let taken = self.root.contains_key(&Spanned::new(0..0, Cow::Borrowed(header.name)));
        if taken && !(header.array && self.arrays.contains(header.name)) {
            return None;
        }
        self.open = Some(header);
        Some(())
    }

    /// Puts the table read under the open header (or the root's keys) into the root.
    fn close(&mut self, table: DeTable<'t>) -> Option<()> {
        let Some(Header { name, key, header, array }) = self.open.take() else {
            // The root's own keys: read before any header, so nothing else is in the root yet.
            self.root = table;
            return Some(());
        };
        let lookup = Spanned::new(0..0, Cow::Borrowed(name));
        let item = Spanned::new(header.clone(), DeValue::Table(table));
        if !array {
            self.root.insert(Spanned::new(key, Cow::Borrowed(name)), item);
        } else if let Some(existing) = self.root.get_mut(&lookup) {
            let DeValue::Array(items) = existing.get_mut() else { return None };
            items.push(item);
        } else {
            let mut items = DeArray::new();
            items.push(item);
            self.root.insert(Spanned::new(key, Cow::Borrowed(name)), Spanned::new(header, DeValue::Array(items)));
            self.arrays.insert(name);
        }
        Some(())
    }
}

/// A position in one line, and the line's offset in the text (spans are the text's).
struct Cursor<'t> {
    text: &'t str,
    at: usize,
    offset: usize,
    /// The last key read, in the line.
    key: Range<usize>,
}

impl<'t> Cursor<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn absolute(&self) -> usize {
        self.offset + self.at
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// A bare key (`A-Z a-z 0-9 _ -`, one or more), as its span in the text.
    fn bare_key(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            self.at += 1;
        }
        self.key = start..self.at;
        (self.at > start).then(|| self.offset + start..self.offset + self.at)
    }

    /// The text of the last key read.
    fn key_text(&self) -> &'t str {
        &self.text[self.key.clone()]
    }

    /// Blanks, then a comment or nothing, to the end of the line.
    fn end_of_line(&mut self) -> Option<()> {
        self.skip_blanks();
        matches!(self.peek(), None | Some(b'#')).then_some(())
    }

    /// A string without escapes (basic or literal, on one line), `true` or `false`, or an array of such
    /// strings on one line.
    fn value(&mut self) -> Option<Spanned<DeValue<'t>>> {
        let start = self.absolute();
        match self.peek()? {
            b'"' | b'\'' => self.string(),
            b'[' => {
                self.at += 1;
                let mut items = DeArray::new();
                loop {
                    self.skip_blanks();
                    match self.peek()? {
                        b']' => break,
                        b'"' | b'\'' => items.push(self.string()?),
                        _ => return None,
                    }
                    self.skip_blanks();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => break,
                        _ => return None,
                    }
                }
                self.at += 1;
                Some(Spanned::new(start..self.absolute(), DeValue::Array(items)))
            }
            _ => {
                let rest = &self.text[self.at..];
                let word_end =
                    rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-').unwrap_or(rest.len());
                let value = match &rest[..word_end] {
                    "true" => true,
                    "false" => false,
                    _ => return None,
                };
                self.at += word_end;
                Some(Spanned::new(start..self.absolute(), DeValue::Boolean(value)))
            }
        }
    }

    /// `"..."` or `'...'`, closed on this line (the text has no backslash, so no escapes); not the
    /// multi-line forms.
    fn string(&mut self) -> Option<Spanned<DeValue<'t>>> {
        let quote = self.peek()?;
        let start = self.at;
        let rest = &self.text[start + 1..];
        if rest.as_bytes().first() == Some(&quote) {
            // `""` (empty) or `"""` (multi-line): only the empty string is read here.
            if rest.as_bytes().get(1) == Some(&quote) {
                return None;
            }
        }
        let length = rest.find(quote as char)?;
        // No escapes: the text holds no backslash (checked by `parse`).
        let content = &rest[..length];
        self.at = start + 1 + length + 1;
        let span = self.offset + start..self.absolute();
        Some(Spanned::new(span, DeValue::String(Cow::Borrowed(content))))
    }
}

#[cfg(test)]
#[path = "toml_fast_tests.rs"]
mod tests;
