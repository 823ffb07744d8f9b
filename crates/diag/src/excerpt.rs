//! What annotate-snippets is given for one file's labels, and what kix puts back in its output.
//!
//! An [`Excerpt`] is the run of lines from a file's first label to its last, as kix shows them:
//! - a line longer than [`MAX_SNIPPET_CHARS`] is cut to a window of that many characters around
//!   its first label (`...` where text was cut), as kix always did; annotate-snippets' own trimming
//!   (`term_width`) cuts elsewhere and is switched off. The first label's underline keeps its
//!   width (at most [`MAX_SNIPPET_CHARS`]) even past the window's end, so the line is given padded
//!   with spaces and the padding is taken off the rendered line again ([`Excerpt::restore`]);
//!   annotate-snippets reports the column within the window on the `-->` line, which is put back
//!   to the column in the file.
//! - a tab stays a tab: annotate-snippets shows a tab as four spaces (rustc's choice), kix shows the
//!   line as written and puts a tab under a tab in the padding before an underline, so the caret
//!   lines up however the terminal sets its tab stops. Tabs are given as a private-use character
//!   found nowhere else in the diagnostic, one column wide, and turned back into tabs afterwards.

use std::ops::Range;
use unicode_width::UnicodeWidthChar;

use crate::source_file::SourceFile;

/// The widest line shown; longer lines are cut to a window around the first label on them.
pub(crate) const MAX_SNIPPET_CHARS: usize = 120;

/// One file's lines as annotate-snippets is given them, with its labels' spans in that text.
#[derive(Debug)]
pub(crate) struct Excerpt {
    /// The path, as the `-->` line shows it.
    pub path: String,
    /// The 1-based number of the excerpt's first line.
    pub line_start: usize,
    pub text: String,
    /// Byte spans in `text`, one per span given to [`Draft::new`], in that order.
    pub spans: Vec<Range<usize>>,
    /// The lines cut to a window, by 1-based number.
    cuts: Vec<(usize, Cut)>,
}

/// A line cut to a window.
#[derive(Debug)]
struct Cut {
    /// Characters cut off the left.
    start: usize,
    /// Characters of `...` written before the window.
    prefix: usize,
    /// The line as given (with the padding for the first label's underline) and as shown, when padded.
    padded: Option<(String, String)>,
}

/// A line of the excerpt before tabs are replaced: its text and its labels' character columns.
struct Line {
    text: String,
    /// (label index, 0-based start column, end column) in `text`.
    labels: Vec<(usize, usize, usize)>,
    cut: Option<Cut>,
}

/// An excerpt's lines, cut to windows, before its tabs are given a stand-in ([`Draft::give`]).
pub(crate) struct Draft {
    path: String,
    /// The 0-based index of the first line.
    first: usize,
    lines: Vec<Line>,
    labels: usize,
}

impl Draft {
    /// The lines of `source` from its first span's to its last span's (byte spans of its text, each within
    /// one line), each with the spans on it as character columns, long lines cut to a window.
    pub(crate) fn new(source: &SourceFile, spans: &[Range<usize>]) -> Draft {
        let path = source.path().display().to_string();
        let starts = || spans.iter().map(|s| s.start);
        let (Some(first), Some(last)) = (starts().min(), starts().max()) else {
            return Draft { path, first: 0, lines: Vec::new(), labels: 0 };
        };
        let (first, last) = (source.line_index(first), source.line_index(last));
        let mut lines: Vec<Line> = (first..=last)
            .map(|index| Line { text: source.line_text(index).to_string(), labels: Vec::new(), cut: None })
            .collect();
        for (label, span) in spans.iter().enumerate() {
            let index = source.line_index(span.start);
            let line_start = source.line_start(index);
            let text = &lines[index - first].text;
            let clamp = |offset: usize| {
                let mut at = offset.saturating_sub(line_start).min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                at
            };
            let (start, end) = (clamp(span.start), clamp(span.end.max(span.start)));
            let column = text[..start].chars().count();
            let width = text[start..end].chars().count();
            lines[index - first].labels.push((label, column, column + width));
        }
        for line in &mut lines {
            cut_to_window(line);
        }
        Draft { path, first, lines, labels: spans.len() }
    }

    /// The lines' texts, which a tab's stand-in must not be found in.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &str> + Clone {
        self.lines.iter().map(|line| line.text.as_str())
    }

    /// The excerpt as annotate-snippets is given it, tabs as `tab` (see [`tab_stand_in`]).
    pub(crate) fn give(self, tab: Option<char>) -> Excerpt {
        let mut text = String::new();
        let mut spans = vec![0..0; self.labels];
        let mut cuts = Vec::new();
        for (number, line) in (self.first + 1..).zip(self.lines) {
            let given: String = match tab {
                Some(tab) => line.text.chars().map(|c| if c == '\t' { tab } else { c }).collect(),
                None => line.text,
            };
            let offset = |column: usize| given.char_indices().nth(column).map_or(given.len(), |(at, _)| at);
            for &(index, start, end) in &line.labels {
                spans[index] = text.len() + offset(start)..text.len() + offset(end);
            }
            if let Some(mut cut) = line.cut {
                if cut.padded.is_some() {
                    cut.padded = Some((given.clone(), given.trim_end_matches(' ').to_string()));
                }
                cuts.push((number, cut));
            }
            text.push_str(&given);
            text.push('\n');
        }
        Excerpt { path: self.path, line_start: self.first + 1, text, spans, cuts }
    }
}

impl Excerpt {
    /// The number of the excerpt's last line, which sets the width of the line-number gutter.
    pub(crate) fn last_line(&self) -> usize {
        self.line_start + self.text.matches('\n').count().saturating_sub(1)
    }

    /// Puts back in rendered lines what the excerpt changed: the column in the file on the `-->` or `:::`
    /// line of a cut line, and the rendered line without its padding.
    pub(crate) fn restore(&self, lines: &mut [String]) {
        for line in lines.iter_mut() {
            if let Some((cut, column, at)) = self.header(line).and_then(|(n, c, at)| Some((self.cut(n)?, c, at))) {
                let real = (column - 1).saturating_sub(cut.prefix) + cut.start + 1;
                line.replace_range(at.., &real.to_string());
            }
            for (_, cut) in &self.cuts {
                if let Some((padded, shown)) = &cut.padded {
                    let padded = annotate_snippets::normalize_untrusted_str(padded);
                    if let Some(kept) = line.strip_suffix(padded.as_str()) {
                        *line = format!("{kept}{}", annotate_snippets::normalize_untrusted_str(shown));
                    }
                }
            }
        }
    }

    fn cut(&self, number: usize) -> Option<&Cut> {
        self.cuts.iter().find(|(n, _)| *n == number).map(|(_, cut)| cut)
    }

    /// A `--> path:line:column` or `::: path:line:column` line of this excerpt's file: the line, the
    /// column and the byte offset of the column's digits.
    fn header(&self, line: &str) -> Option<(usize, usize, usize)> {
        let visible = visible_text(line);
        let rest = visible.trim_start().strip_prefix("--> ").or_else(|| visible.trim_start().strip_prefix("::: "))?;
        let (number, column) = rest.strip_prefix(self.path.as_str())?.strip_prefix(':')?.split_once(':')?;
        let (number, column): (usize, usize) = (number.parse().ok()?, column.parse().ok()?);
        let at = line.rfind(':')? + 1;
        Some((number, column, at))
    }
}

/// Cuts a line longer than [`MAX_SNIPPET_CHARS`] to a window around its first label (or its start).
fn cut_to_window(line: &mut Line) {
    let length = line.text.chars().count();
    if length <= MAX_SNIPPET_CHARS {
        return;
    }
    let column = line.labels.first().map_or(1, |&(_, start, _)| start + 1);
    let start = column.saturating_sub(MAX_SNIPPET_CHARS / 2).min(length.saturating_sub(MAX_SNIPPET_CHARS));
    let end = (start + MAX_SNIPPET_CHARS).min(length);
    let prefix = if start > 0 { 3 } else { 0 };
    let mut text: String = line.text.chars().skip(start).take(end - start).collect();
    if start > 0 {
        text.insert_str(0, "...");
    }
    if end < length {
        text.push_str("...");
    }
    let shown = |column: usize| column.clamp(start, end) - start + prefix;
    let mut padded = None;
    for (i, (_, from, to)) in line.labels.iter_mut().enumerate() {
        let width = *to - *from;
        (*from, *to) = (shown(*from), shown(*to));
        if i == 0 {
            // The first label keeps its width, up to the window's, even past the window's end.
            *to = *from + width.min(MAX_SNIPPET_CHARS);
            let given = text.chars().count();
            if *to > given {
                text.push_str(&" ".repeat(*to - given));
                // Filled in by `Draft::give`, with the text as given.
                padded = Some((String::new(), String::new()));
            }
        }
    }
    line.text = text;
    line.cut = Some(Cut { start, prefix, padded });
}

/// A character to give annotate-snippets for a tab: one column wide, kept as it is, and found in none of
/// `texts` (so every one in the output was a tab). `None` when no tab is given or every candidate is taken.
pub(crate) fn tab_stand_in<'a>(texts: impl IntoIterator<Item = &'a str> + Clone) -> Option<char> {
    if !texts.clone().into_iter().any(|t| t.contains('\t')) {
        return None;
    }
    ('\u{E000}'..='\u{F8FF}').find(|c| texts.clone().into_iter().all(|t| !t.contains(*c)))
}

/// Turns the stand-in back into tabs in rendered lines, and puts a tab under each tab in the padding
/// before the underlines of the lines below it.
pub(crate) fn restore_tabs(lines: &mut [String], tab: char) {
    let mut columns: Vec<usize> = Vec::new();
    for line in lines.iter_mut() {
        if line.contains(tab) {
            columns = visible_columns(line).filter(|&(_, c, _)| c == tab).map(|(column, _, _)| column).collect();
            *line = line.replace(tab, "\t");
        } else if is_annotation_line(line) && !columns.is_empty() {
            *line = tabs_under_tabs(line, &columns);
        } else {
            columns.clear();
        }
    }
}

/// A line of underlines and labels: the gutter is blank up to its `|`.
fn is_annotation_line(line: &str) -> bool {
    visible_text(line).trim_start().starts_with('|')
}

/// The padding after the gutter (`| `) and before the first underline, with a tab at `columns`.
fn tabs_under_tabs(line: &str, columns: &[usize]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut content = None;
    let mut padding = true;
    let mut last = 0;
    for (column, c, at) in visible_columns(line) {
        out.push_str(&line[last..at]);
        last = at + c.len_utf8();
        match content {
            None if c == '|' => content = Some(column + 2),
            Some(start) if column >= start && c != ' ' => padding = false,
            _ => {}
        }
        let under_tab = content.is_some_and(|start| column >= start) && padding && columns.contains(&column);
        out.push(if under_tab && c == ' ' { '\t' } else { c });
    }
    out.push_str(&line[last..]);
    out
}

/// The visible characters of a rendered line (ANSI escape sequences skipped), each with its display
/// column, as annotate-snippets counts it, and its byte offset.
fn visible_columns(line: &str) -> impl Iterator<Item = (usize, char, usize)> + '_ {
    let mut column = 0;
    let mut escape = false;
    line.char_indices().filter_map(move |(at, c)| {
        if escape {
            escape = !c.is_ascii_alphabetic();
            return None;
        }
        if c == '\x1b' {
            escape = true;
            return None;
        }
        let here = column;
        column += c.width().unwrap_or(1);
        Some((here, c, at))
    })
}

/// A rendered line without its ANSI escape sequences.
pub(crate) fn visible_text(line: &str) -> String {
    visible_columns(line).map(|(_, c, _)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_around_the_first_label() {
        let line = format!("x = {}", "[".repeat(1000));
        let source = SourceFile::new("a.toml", line);
        let excerpt = Draft::new(&source, std::slice::from_ref(&(500..501))).give(None);
        let text = excerpt.text.trim_end();
        assert!(text.len() < 140 && text.starts_with("...") && text.ends_with("..."), "{text}");
        assert_eq!(&excerpt.text[excerpt.spans[0].clone()], "[");
        assert_eq!(excerpt.spans[0].start, 3 + 59);
        let mut rendered = vec![" --> a.toml:1:63".to_string()];
        excerpt.restore(&mut rendered);
        assert_eq!(rendered, [" --> a.toml:1:501"]);
    }

    #[test]
    fn an_excerpt_runs_from_the_first_label_to_the_last_with_tabs_stood_in() {
        let source = SourceFile::new("a.yaml", "a: 1\n\tb: 2\nc: 3\nd: 4\n".to_string());
        let excerpt = Draft::new(&source, &[16..17, 6..7]).give(Some('\u{E000}'));
        assert_eq!(excerpt.line_start, 2);
        assert_eq!(excerpt.last_line(), 4);
        assert_eq!(excerpt.text, "\u{E000}b: 2\nc: 3\nd: 4\n");
        assert_eq!(&excerpt.text[excerpt.spans[0].clone()], "d");
        assert_eq!(&excerpt.text[excerpt.spans[1].clone()], "b");
    }

    #[test]
    fn tabs_come_back_in_the_line_and_under_it() {
        let tab = '\u{E000}';
        let mut lines = vec![
            format!("4 | {tab}a:{tab}b"),
            "  |     ^ here".to_string(),
            "  |".to_string(),
            "  = help: x y".to_string(),
        ];
        restore_tabs(&mut lines, tab);
        assert_eq!(lines, ["4 | \ta:\tb", "  | \t  \t^ here", "  |", "  = help: x y"]);
        assert_eq!(tab_stand_in(["a\tb", "\u{E000}"]), Some('\u{E001}'));
        assert_eq!(tab_stand_in(["ab"]), None);
    }
}
