//! [`SourceFile`], the text of one input, and [`Location`], a place in it.
//!
//! A location is a file and, when the place is known, a byte span of the file's text; it holds the
//! text itself (a [`SourceFile`] is a shared handle, so that costs a reference count), which is what
//! lets a diagnostic be rendered at print time from the source, wherever it ended up. Line and column
//! are worked out from the span when asked for.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The text of one input file, kept so that diagnostics can point into it. Cloning shares the text.
#[derive(Clone)]
pub struct SourceFile(Arc<Text>);

struct Text {
    /// The path shown in diagnostics (relative to the root where possible).
    display: PathBuf,
    text: String,
    /// Byte offset of the start of every line.
    line_starts: LineStarts,
}

impl fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceFile").field("display", &self.0.display).field("bytes", &self.0.text.len()).finish()
    }
}

impl SourceFile {
    pub fn new(display: impl Into<PathBuf>, text: String) -> SourceFile {
        let line_starts = LineStarts::of(&text);
        SourceFile(Arc::new(Text { display: display.into(), text, line_starts }))
    }

    /// The path shown in diagnostics.
    pub fn path(&self) -> &Path {
        &self.0.display
    }

    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// A location for a byte span of the text. The span is kept to one line (the line it starts on,
    /// without its line break) and to character boundaries, as the caret display shows it.
    pub fn locate(&self, span: Range<usize>) -> Location {
        let start = self.char_boundary(span.start);
        let line = self.line_index(start);
        let line_end = self.line_start(line) + self.line_text(line).len();
        // A span may start past the visible line (on a trailing '\r'): never before `start`.
        let end = self.char_boundary(span.end.min(line_end).max(start));
        Location::spanned(self.clone(), start..end)
    }

    /// A location for a 1-based line and column in characters (as YAML parsers report them): the span
    /// runs to the next whitespace, and is empty on whitespace.
    pub fn locate_line(&self, line: usize, column: usize) -> Location {
        let line = line.saturating_sub(1).min(self.0.line_starts.len() - 1);
        let text = self.line_text(line);
        let start = text.char_indices().nth(column.saturating_sub(1)).map_or(text.len(), |(at, _)| at);
        let end = text[start..].find(char::is_whitespace).map_or(text.len(), |length| start + length);
        let line_start = self.line_start(line);
        Location::spanned(self.clone(), line_start + start..line_start + end)
    }

    /// The nearest character boundary at or before `offset` (spans from parsers may point inside a character).
    fn char_boundary(&self, offset: usize) -> usize {
        let text = &self.0.text;
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// The 0-based line holding byte `offset`.
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        self.0.line_starts.partition_point(offset) - 1
    }

    pub(crate) fn line_start(&self, line_index: usize) -> usize {
        self.0.line_starts.get(line_index).unwrap_or(self.0.text.len())
    }

    /// A line's text without its line break (nor a `\r` before it).
    pub(crate) fn line_text(&self, line_index: usize) -> &str {
        let start = self.line_start(line_index);
        let end = self.0.line_starts.get(line_index + 1).unwrap_or(self.0.text.len());
        self.0.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// The 1-based column, in characters, of byte `offset` (a character boundary) in its line.
    pub(crate) fn column(&self, offset: usize) -> usize {
        let line_start = self.line_start(self.line_index(offset));
        self.0.text[line_start..offset].chars().count() + 1
    }
}

/// Where in an input a diagnostic points: a file, and the span of its text when the place is known.
#[derive(Clone, Debug)]
pub struct Location {
    place: Place,
}

#[derive(Clone, Debug)]
enum Place {
    File(PathBuf),
    /// A byte span of the text, within one line and on character boundaries (see [`SourceFile::locate`]).
    Span {
        source: SourceFile,
        span: Range<usize>,
    },
}

impl Location {
    /// A location naming only a file.
    pub fn file(file: impl Into<PathBuf>) -> Location {
        Location { place: Place::File(file.into()) }
    }

    fn spanned(source: SourceFile, span: Range<usize>) -> Location {
        Location { place: Place::Span { source, span } }
    }

    /// The file, relative to the root when it lies under it.
    pub fn path(&self) -> &Path {
        match &self.place {
            Place::File(file) => file,
            Place::Span { source, .. } => source.path(),
        }
    }

    /// The text and byte span, when the place in the file is known.
    pub(crate) fn span(&self) -> Option<(&SourceFile, Range<usize>)> {
        match &self.place {
            Place::File(_) => None,
            Place::Span { source, span } => Some((source, span.clone())),
        }
    }

    /// 1-based line, when known.
    pub fn line(&self) -> Option<usize> {
        self.span().map(|(source, span)| source.line_index(span.start) + 1)
    }

    /// 1-based column in characters, when known.
    pub fn column(&self) -> Option<usize> {
        self.span().map(|(source, span)| source.column(span.start))
    }

    /// The byte offset the location starts at in its file (`None` for a whole file): ordering by it is
    /// ordering by line, then column.
    pub fn offset(&self) -> Option<usize> {
        self.span().map(|(_, span)| span.start)
    }
}

/// Two locations are equal when they name the same span of the same file.
impl PartialEq for Location {
    fn eq(&self, other: &Location) -> bool {
        self.path() == other.path() && self.span().map(|(_, s)| s) == other.span().map(|(_, s)| s)
    }
}

impl Eq for Location {}

/// `file`, `file:line` or `file:line:column`, as the `-->` line shows it.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path().display())?;
        if let (Some(line), Some(column)) = (self.line(), self.column()) {
            write!(f, ":{line}:{column}")?;
        }
        Ok(())
    }
}

/// Where each line of a text starts: 4 bytes a line for any text under 4 GiB (all kix reads; a lint
/// of a 16 MiB file has half a million lines), 8 beyond; sized exactly, since a lint keeps every
/// file's for the whole run.
enum LineStarts {
    Narrow(Vec<u32>),
    Wide(Vec<usize>),
}

impl LineStarts {
    fn of(text: &str) -> LineStarts {
        LineStarts::narrow_up_to(text, u32::MAX as usize)
    }

    /// Narrow when the text is at most `limit` bytes (`u32::MAX`; a test lowers it to try the wide form).
    fn narrow_up_to(text: &str, limit: usize) -> LineStarts {
        let lines = 1 + text.bytes().filter(|&b| b == b'\n').count();
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
        if text.len() <= limit {
            let mut narrow = Vec::with_capacity(lines);
            narrow.extend(starts.map(|start| start as u32));
            LineStarts::Narrow(narrow)
        } else {
            let mut wide = Vec::with_capacity(lines);
            wide.extend(starts);
            LineStarts::Wide(wide)
        }
    }

    fn len(&self) -> usize {
        match self {
            LineStarts::Narrow(starts) => starts.len(),
            LineStarts::Wide(starts) => starts.len(),
        }
    }

    fn get(&self, line_index: usize) -> Option<usize> {
        match self {
            LineStarts::Narrow(starts) => starts.get(line_index).map(|&start| start as usize),
            LineStarts::Wide(starts) => starts.get(line_index).copied(),
        }
    }

    /// How many lines start at or before `offset`.
    fn partition_point(&self, offset: usize) -> usize {
        match self {
            LineStarts::Narrow(starts) => starts.partition_point(|&s| s as usize <= offset),
            LineStarts::Wide(starts) => starts.partition_point(|&s| s <= offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms of the line index answer alike (the wide one is for texts over 4 GiB, too big to build here).
    #[test]
    fn the_narrow_and_the_wide_line_index_agree() {
        let text = "a: 1\n\nbé: [x,\r\n  y]\n";
        let (narrow, wide) = (LineStarts::narrow_up_to(text, usize::MAX), LineStarts::narrow_up_to(text, 0));
        assert!(matches!(narrow, LineStarts::Narrow(_)) && matches!(wide, LineStarts::Wide(_)));
        assert_eq!(narrow.len(), 5);
        assert_eq!(wide.len(), narrow.len());
        for line in 0..=narrow.len() {
            assert_eq!(narrow.get(line), wide.get(line), "line {line}");
        }
        for offset in 0..=text.len() + 1 {
            assert_eq!(narrow.partition_point(offset), wide.partition_point(offset), "offset {offset}");
        }
        assert_eq!((narrow.get(2), narrow.get(3), narrow.get(5)), (Some(6), Some(16), None));
        assert_eq!((narrow.partition_point(4), narrow.partition_point(5), narrow.partition_point(6)), (1, 2, 3));
    }

    // Regression (fuzz/regressions/*/toml-error-at-lone-carriage-return): a span on a trailing '\r' panicked.
    #[test]
    fn spans_on_a_trailing_carriage_return_stay_on_the_line() {
        let source = SourceFile::new("a.toml", "availability = \"zone\"\r".to_string());
        let location = source.locate(21..22);
        assert_eq!((location.line(), location.column()), (Some(1), Some(22)));
        assert_eq!(location.span().unwrap().1, 21..21);
    }

    #[test]
    fn locate_points_at_line_and_column() {
        let source = SourceFile::new("c.toml", "a = 1\nbb = \"x\"\n".to_string());
        let location = source.locate(11..14);
        assert_eq!((location.line(), location.column()), (Some(2), Some(6)));
        assert_eq!(location.span().unwrap().1, 11..14);
        assert_eq!(location.to_string(), "c.toml:2:6");
        // A span running past its line is cut at the line's end.
        assert_eq!(source.locate(2..9).span().unwrap().1, 2..5);
    }

    #[test]
    fn locate_line_spans_the_word_at_the_column() {
        let source = SourceFile::new("a.yaml", "kind: Déployment x\n\tname: a\n".to_string());
        let location = source.locate_line(1, 7);
        assert_eq!((location.line(), location.column()), (Some(1), Some(7)));
        assert_eq!(&source.text()[location.span().unwrap().1], "Déployment");
        // On whitespace (a tab), the span is empty; past the end of the line, it sits at the end.
        assert_eq!(source.locate_line(2, 1).span().unwrap().1, 20..20);
        assert_eq!(source.locate_line(1, 40).column(), Some(19));
        assert_eq!(Location::file("a.yaml").to_string(), "a.yaml");
    }
}
