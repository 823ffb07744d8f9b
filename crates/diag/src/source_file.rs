//! [`SourceFile`], the text of one input, and [`Location`], a place in it.
//!
//! A location is a file and, when the place is known, a byte span of the file's text; it holds the
//! file itself (a [`SourceFile`] is a shared handle, so that costs a reference count), which is what
//! lets a diagnostic be rendered at print time from the source, wherever it ended up. Line and column
//! are worked out from the span when asked for.
//!
//! A file is held in one of two ways. Most inputs are read whole and their text is kept
//! ([`SourceFile::new`]). A file that is read a part at a time (`kix lint`'s inputs, which may be far
//! larger than what a lint keeps of them) is [`SourceFile::on_disk`]: its text is never held, each
//! part is a [`SourceFile::window`] whose locations name the file at their offsets in it, and the
//! lines a diagnostic shows are read from the file again when it is rendered (its line index too,
//! found by reading the file once, the first time a line is asked for).

use std::borrow::Cow;
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The text of one input file, kept so that diagnostics can point into it. Cloning shares the text.
#[derive(Clone)]
pub struct SourceFile(Arc<Text>);

struct Text {
    /// The path shown in diagnostics (relative to the root where possible).
    display: PathBuf,
    body: Body,
}

enum Body {
    /// The whole text, read once and held, with the byte offset of the start of every line (found the first
    /// time a line is asked for: most files a fleet's build reads are parsed by offset and never shown).
    Held { text: String, lines: OnceLock<LineStarts> },
    /// One part of a file read a part at a time: its text, where that text starts in the file, and
    /// the file, which every location made in the part names (at its offset in the file).
    Window { text: String, lines: OnceLock<LineStarts>, offset: usize, file: SourceFile },
    /// A file whose text is not held.
    OnDisk(OnDisk),
}

/// What is kept of a file whose text is not: where to read it again.
struct OnDisk {
    /// The path to open (the displayed one may be relative to another directory).
    read_from: PathBuf,
    /// Every line's start and the file's length, read the first time a line is asked for.
    lines: OnceLock<(LineStarts, usize)>,
    /// The last line read, by index: a diagnostic asks for the same line several times.
    last_line: Mutex<Option<(usize, Arc<str>)>>,
}

impl fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceFile").field("display", &self.0.display).field("bytes", &self.text().len()).finish()
    }
}

impl SourceFile {
    pub fn new(display: impl Into<PathBuf>, text: String) -> SourceFile {
        let body = Body::Held { text, lines: OnceLock::new() };
        SourceFile(Arc::new(Text { display: display.into(), body }))
    }

    /// A file shown as `display` whose text is not held: it is read a part at a time into
    /// [`SourceFile::window`]s, and read again from `read_from` when a diagnostic in it is rendered. A
    /// file changed on disk in between shows its new lines; one that cannot be read again shows none.
    pub fn on_disk(display: impl Into<PathBuf>, read_from: impl Into<PathBuf>) -> SourceFile {
        let on_disk = OnDisk { read_from: read_from.into(), lines: OnceLock::new(), last_line: Mutex::new(None) };
        SourceFile(Arc::new(Text { display: display.into(), body: Body::OnDisk(on_disk) }))
    }

    /// The part of this file (one made by [`SourceFile::on_disk`]) that starts at byte `offset` and holds
    /// `text`: parsed like a file of its own, with every location made in it naming this file at the
    /// offset in the file. A window of a held file names the held file the same way.
    pub fn window(&self, text: String, offset: usize) -> SourceFile {
        let body = Body::Window { text, lines: OnceLock::new(), offset, file: self.clone() };
        SourceFile(Arc::new(Text { display: self.0.display.clone(), body }))
    }

    /// The path shown in diagnostics.
    pub fn path(&self) -> &Path {
        &self.0.display
    }

    /// The text held: the whole file's, or a window's own; empty for a file on disk.
    pub fn text(&self) -> &str {
        match &self.0.body {
            Body::Held { text, .. } | Body::Window { text, .. } => text,
            Body::OnDisk(_) => "",
        }
    }

    /// Where this text starts in its file: a window's offset, else 0.
    pub fn offset_in_file(&self) -> usize {
        self.home().1
    }

    /// Where locations made in this text point: the file and the offset of this text in it.
    fn home(&self) -> (&SourceFile, usize) {
        match &self.0.body {
            Body::Window { file, offset, .. } => (file, *offset),
            Body::Held { .. } | Body::OnDisk(_) => (self, 0),
        }
    }

    /// A location for a byte span of the text. The span is kept to one line (the line it starts on,
    /// without its line break) and to character boundaries, as the caret display shows it.
    pub fn locate(&self, span: Range<usize>) -> Location {
        let start = self.char_boundary(span.start);
        let line = self.line_index(start);
        let line_end = self.line_start(line) + self.line_text(line).len();
        // A span may start past the visible line (on a trailing '\r'): never before `start`.
        let end = self.char_boundary(span.end.min(line_end).max(start));
        let (file, offset) = self.home();
        Location::spanned(file.clone(), offset + start..offset + end)
    }

    /// A location for a 1-based line and column in characters (as YAML parsers report them): the span
    /// runs to the next whitespace, and is empty on whitespace.
    pub fn locate_line(&self, line: usize, column: usize) -> Location {
        let line = line.saturating_sub(1).min(self.line_count() - 1);
        let text = self.line_text(line);
        let start = text.char_indices().nth(column.saturating_sub(1)).map_or(text.len(), |(at, _)| at);
        let end = text[start..].find(char::is_whitespace).map_or(text.len(), |length| start + length);
        let line_start = self.line_start(line);
        let (file, offset) = self.home();
        Location::spanned(file.clone(), offset + line_start + start..offset + line_start + end)
    }

    /// The nearest character boundary at or before `offset` (spans from parsers may point inside a character).
    fn char_boundary(&self, offset: usize) -> usize {
        let text = self.text();
        if let Body::OnDisk(_) = self.0.body {
            return offset;
        }
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// The line index and the length of the text it indexes (read from the file for one on disk).
    fn lines(&self) -> (&LineStarts, usize) {
        match &self.0.body {
            Body::Held { text, lines } | Body::Window { text, lines, .. } => {
                (lines.get_or_init(|| LineStarts::of(text)), text.len())
            }
            Body::OnDisk(on_disk) => {
                let (lines, length) = on_disk.lines.get_or_init(|| on_disk.read_line_starts());
                (lines, *length)
            }
        }
    }

    fn line_count(&self) -> usize {
        self.lines().0.len()
    }

    /// The 0-based line holding byte `offset`.
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        self.lines().0.partition_point(offset) - 1
    }

    pub(crate) fn line_start(&self, line_index: usize) -> usize {
        let (lines, length) = self.lines();
        lines.get(line_index).unwrap_or(length)
    }

    /// A line's text without its line break (nor a `\r` before it).
    pub(crate) fn line_text(&self, line_index: usize) -> Cow<'_, str> {
        let start = self.line_start(line_index);
        let end = self.lines().0.get(line_index + 1).unwrap_or(self.lines().1);
        match &self.0.body {
            Body::Held { text, .. } | Body::Window { text, .. } => {
                Cow::Borrowed(text[start..end].trim_end_matches(['\n', '\r']))
            }
            Body::OnDisk(on_disk) => Cow::Owned(on_disk.line(line_index, start..end).to_string()),
        }
    }

    /// The 1-based column, in characters, of byte `offset` (a character boundary) in its line.
    pub(crate) fn column(&self, offset: usize) -> usize {
        let line = self.line_index(offset);
        let (line_start, text) = (self.line_start(line), self.line_text(line));
        let within = offset.saturating_sub(line_start).min(text.len());
        // Past the visible line (on its line break) the break's bytes count as characters, as they do in
        // the held text.
        let beyond = offset.saturating_sub(line_start) - within;
        text.get(..within).map_or(within, |before| before.chars().count()) + beyond + 1
    }
}

impl OnDisk {
    /// Every line's start and the file's length, read through twice (the lines counted, then their starts
    /// written into an index of exactly that size: it is kept for the rest of the run); nothing when it
    /// cannot be read.
    fn read_line_starts(&self) -> (LineStarts, usize) {
        let scan = |each: &mut dyn FnMut(usize)| -> std::io::Result<usize> {
            let mut file = std::fs::File::open(&self.read_from)?;
            let mut block = vec![0u8; 64 * 1024];
            let mut length = 0usize;
            loop {
                let read = match file.read(&mut block) {
                    Ok(0) => return Ok(length),
                    Ok(read) => read,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(error) => return Err(error),
                };
                block[..read].iter().enumerate().filter(|(_, b)| **b == b'\n').for_each(|(i, _)| each(length + i + 1));
                length += read;
            }
        };
        let mut lines = 1usize;
        let Ok(length) = scan(&mut |_| lines += 1) else { return (LineStarts::Narrow(vec![0]), 0) };
        let mut starts = LineStarts::with_capacity(lines, length);
        match scan(&mut |start| starts.push(start)) {
            // The file changed in between: what the second read found.
            Ok(again) => (starts, again),
            Err(_) => (LineStarts::Narrow(vec![0]), 0),
        }
    }

    /// The text of line `index` (the bytes `range` of the file, its line break trimmed), read again.
    fn line(&self, index: usize, range: Range<usize>) -> Arc<str> {
        let mut last = self.last_line.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, text)) = &*last {
            if *at == index {
                return Arc::clone(text);
            }
        }
        let mut bytes = vec![0u8; range.len()];
        let read = std::fs::File::open(&self.read_from).and_then(|mut file| {
            file.seek(SeekFrom::Start(range.start as u64))?;
            file.read_exact(&mut bytes)
        });
        let text: Arc<str> = match read {
            Ok(()) => String::from_utf8_lossy(&bytes).trim_end_matches(['\n', '\r']).into(),
            Err(_) => "".into(),
        };
        *last = Some((index, Arc::clone(&text)));
        text
    }
}

/// Where in an input a diagnostic points: a file, and the span of its text when the place is known.
#[derive(Clone, Debug)]
pub struct Location {
    place: Place,
}

/// 24 bytes, not 32: a lint keeps several locations per workload and budget (the places a finding may
/// point at) and one per finding, tens of thousands on a large stream.
#[derive(Clone, Debug)]
enum Place {
    File(Box<Path>),
    /// A byte span of the text, within one line and on character boundaries (see [`SourceFile::locate`]),
    /// in a text under 4 GiB (every text kix reads; the line index is 4 bytes a line there too).
    Span {
        source: SourceFile,
        start: u32,
        end: u32,
    },
    /// A span beyond 4 GiB.
    Wide(Box<(SourceFile, Range<usize>)>),
}

impl Location {
    /// A location naming only a file.
    pub fn file(file: impl Into<PathBuf>) -> Location {
        Location { place: Place::File(file.into().into_boxed_path()) }
    }

    /// A location for a byte span of `source` as a location recorded it (`record.rs`): `None` when the span
    /// is not one of the held text's (out of it, or not on character boundaries).
    pub(crate) fn in_file(source: SourceFile, span: Range<usize>) -> Option<Location> {
        let within = match &source.0.body {
            Body::Held { text, .. } => span.start <= span.end && text.get(span.clone()).is_some(),
            Body::Window { .. } | Body::OnDisk(_) => span.start <= span.end,
        };
        within.then(|| Location::spanned(source, span))
    }

    fn spanned(source: SourceFile, span: Range<usize>) -> Location {
        let place = match (u32::try_from(span.start), u32::try_from(span.end)) {
            (Ok(start), Ok(end)) => Place::Span { source, start, end },
            _ => Place::Wide(Box::new((source, span))),
        };
        Location { place }
    }

    /// The file, relative to the root when it lies under it.
    pub fn path(&self) -> &Path {
        match &self.place {
            Place::File(file) => file,
            Place::Span { source, .. } => source.path(),
            Place::Wide(wide) => wide.0.path(),
        }
    }

    /// The text and byte span, when the place in the file is known.
    pub(crate) fn span(&self) -> Option<(&SourceFile, Range<usize>)> {
        match &self.place {
            Place::File(_) => None,
            Place::Span { source, start, end } => Some((source, *start as usize..*end as usize)),
            Place::Wide(wide) => Some((&wide.0, wide.1.clone())),
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
        // memchr's iterator, not `match_indices` (whose searcher's setup per match cost more than the bytes of
        // a fleet's million short lines) nor a byte loop (12 ms of a package change's rebuild of 1,000 clusters).
        let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1);
        let starts = std::iter::once(0).chain(breaks);
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

    /// An index of the first line's start, with room for `lines` starts of a text of `length` bytes.
    fn with_capacity(lines: usize, length: usize) -> LineStarts {
        let mut starts = if length <= u32::MAX as usize {
            LineStarts::Narrow(Vec::with_capacity(lines))
        } else {
            LineStarts::Wide(Vec::with_capacity(lines))
        };
        starts.push(0);
        starts
    }

    /// Adds the start of the next line.
    fn push(&mut self, start: usize) {
        match self {
            // A start past 4 GiB only comes from a file grown since it was measured: kept at the limit.
            LineStarts::Narrow(starts) => starts.push(u32::try_from(start).unwrap_or(u32::MAX)),
            LineStarts::Wide(starts) => starts.push(start),
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

    /// A location is 24 bytes; a span that fits in 32 bits and one that does not (a text over 4 GiB, too
    /// big to build here: only its span is asked for) give back the span they were made with.
    #[test]
    fn a_location_is_small_and_keeps_its_span() {
        assert_eq!(std::mem::size_of::<Location>(), 24);
        let source = SourceFile::new("m.yaml", "a: 1\n".to_string());
        let narrow = source.locate(3..4);
        assert!(matches!(narrow.place, Place::Span { .. }));
        assert_eq!(narrow.span().map(|(_, span)| span), Some(3..4));
        assert_eq!((narrow.line(), narrow.column(), narrow.offset()), (Some(1), Some(4), Some(3)));
        let beyond = u32::MAX as usize + 7;
        let wide = Location::spanned(source.clone(), beyond..beyond + 2);
        assert!(matches!(wide.place, Place::Wide(_)));
        assert_eq!(wide.span().map(|(_, span)| span), Some(beyond..beyond + 2));
        assert_eq!(wide.path(), Path::new("m.yaml"));
        assert_ne!(wide, narrow);
        let file = Location::file("m.yaml");
        assert_eq!((file.path(), file.offset()), (Path::new("m.yaml"), None));
    }

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

    /// A file on disk read as windows locates and shows what the held file does: the same spans, lines,
    /// columns (characters, not bytes) and line texts, read again from the file.
    #[test]
    fn windows_of_a_file_on_disk_locate_as_the_held_file_does() {
        let text = "a: 1\r\n---\nbé: [x,\n  y]\n---\nlast: ünïcode tail";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.yaml");
        std::fs::write(&path, text).unwrap();
        let held = SourceFile::new("w.yaml", text.to_string());
        let on_disk = SourceFile::on_disk("w.yaml", &path);
        assert_eq!(on_disk.text(), "");
        for (start, end) in [(0, 6), (6, 24), (24, text.len())] {
            let window = on_disk.window(text[start..end].to_string(), start);
            assert_eq!(window.offset_in_file(), start);
            for offset in (0..end - start).filter(|&o| window.text().is_char_boundary(o)) {
                let (mine, theirs) =
                    (window.locate(offset..offset + 2), held.locate(start + offset..start + offset + 2));
                assert_eq!(mine, theirs, "offset {}", start + offset);
                assert_eq!((mine.line(), mine.column()), (theirs.line(), theirs.column()), "offset {}", start + offset);
            }
            let lines = window.text().lines().count();
            for line in 1..=lines {
                for column in 1..4 {
                    let held_line = held.line_index(start) + line;
                    assert_eq!(window.locate_line(line, column), held.locate_line(held_line, column));
                }
            }
        }
        for line in 0..held.line_count() + 1 {
            assert_eq!(on_disk.line_text(line), held.line_text(line), "line {line}");
        }
        // Gone from disk: an empty line, never a panic.
        std::fs::remove_file(&path).unwrap();
        let gone = SourceFile::on_disk("w.yaml", &path);
        assert_eq!((gone.line_index(10), gone.line_text(0).as_ref(), gone.column(3)), (0, "", 4));
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
