//! Diagnostics: the one type every stage reports through.
//!
//! Stages collect problems instead of stopping at the first one (cargo-deny
//! style). Every diagnostic has a stable code (`K0301`), a severity, a message,
//! the file/line/column it concerns where there is one, and the
//! cluster/instance/package/workload it is about. Rendering is rustc-like text
//! for people (colour only on a terminal and never under `NO_COLOR`) or one
//! JSON object per line for tools.

use serde::Serialize;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    /// `error` or `warning`, as diagnostics, `kix explain` and the README spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

mod codes;
pub mod source;

pub use codes::Code;

/// Where in an input a diagnostic points.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file, relative to the root when it lies under it.
    pub file: PathBuf,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column in characters, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// The text of the line, for the caret display.
    #[serde(skip)]
    pub snippet: Option<String>,
    /// How many characters the caret underlines.
    #[serde(skip)]
    pub width: usize,
    /// 1-based column of the caret within `snippet` (differs from `column` when a long line is cut).
    #[serde(skip)]
    pub snippet_column: usize,
}

impl Location {
    /// A location naming only a file.
    pub fn file(file: impl Into<PathBuf>) -> Location {
        Location { file: file.into(), line: None, column: None, snippet: None, width: 0, snippet_column: 0 }
    }
}

/// What a diagnostic is about, beyond the file.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Subject {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
}

impl Subject {
    fn describe(&self) -> Option<String> {
        let parts: Vec<String> = [
            ("cluster", &self.cluster),
            ("instance", &self.instance),
            ("package", &self.package),
            ("workload", &self.workload),
        ]
        .into_iter()
        .filter_map(|(what, name)| name.as_ref().map(|name| format!("{what} {name}")))
        .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    pub location: Option<Location>,
    pub subject: Subject,
    /// How to fix it, when there is more to say than the message.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic { code, message: message.into(), location: None, subject: Subject::default(), help: None }
    }

    pub fn at(mut self, location: Location) -> Diagnostic {
        self.location = Some(location);
        self
    }

    pub fn at_opt(mut self, location: Option<Location>) -> Diagnostic {
        self.location = location;
        self
    }

    pub fn about(mut self, subject: &Subject) -> Diagnostic {
        self.subject = subject.clone();
        self
    }

    pub fn workload(mut self, workload: &str) -> Diagnostic {
        self.subject.workload = Some(workload.to_string());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// The JSON form printed by `--format json`.
    pub fn to_json(&self) -> serde_json::Value {
        let location = self.location.as_ref();
        serde_json::json!({
            "code": self.code.id(),
            "severity": self.severity(),
            "message": self.message,
            "file": location.map(|l| l.file.display().to_string()),
            "line": location.and_then(|l| l.line),
            "column": location.and_then(|l| l.column),
            "cluster": self.subject.cluster,
            "instance": self.subject.instance,
            "package": self.subject.package,
            "workload": self.subject.workload,
            "help": self.help,
        })
    }

    /// The rustc-style text form.
    pub fn render(&self, style: Style) -> String {
        let mut out = String::new();
        let (label, colour) = match self.severity() {
            Severity::Error => ("error", "\x1b[1;31m"),
            Severity::Warning => ("warning", "\x1b[1;33m"),
        };
        let _ = writeln!(
            out,
            "{}{label}[{}]{}{}: {}{}",
            style.paint(colour),
            self.code.id(),
            style.reset(),
            style.paint("\x1b[1m"),
            self.message,
            style.reset()
        );
        let blue = style.paint("\x1b[1;34m");
        let reset = style.reset();
        let mut pad = " ".to_string();
        if let Some(location) = &self.location {
            let mut position = location.file.display().to_string();
            if let Some(line) = location.line {
                let _ = write!(position, ":{line}");
                if let Some(column) = location.column {
                    let _ = write!(position, ":{column}");
                }
            }
            if let (Some(line), Some(snippet)) = (location.line, &location.snippet) {
                pad = " ".repeat(line.to_string().len());
                let column = location.snippet_column.max(1);
                let _ = writeln!(out, "{pad}{blue}-->{reset} {position}");
                let _ = writeln!(out, "{pad} {blue}|{reset}");
                let _ = writeln!(out, "{blue}{line} |{reset} {snippet}");
                let caret_pad: String = snippet
                    .chars()
                    .take(column.saturating_sub(1))
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                let _ = writeln!(
                    out,
                    "{pad} {blue}|{reset} {caret_pad}{}{}{reset}",
                    style.paint(colour),
                    "^".repeat(location.width.max(1))
                );
            } else {
                let _ = writeln!(out, "{pad}{blue}-->{reset} {position}");
            }
        }
        if let Some(subject) = self.subject.describe() {
            let _ = writeln!(out, "{pad} {blue}={reset} in {subject}");
        }
        if let Some(help) = &self.help {
            let _ = writeln!(out, "{pad} {blue}={reset} help: {help}");
        }
        out
    }
}

/// Whether rendered text carries ANSI colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Colour,
}

impl Style {
    /// Colour only when stderr is a terminal and `NO_COLOR` is unset or empty.
    pub fn for_stderr() -> Style {
        use std::io::IsTerminal;
        Style::choose(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref())
    }

    /// The rule itself (<https://no-color.org>): any non-empty `NO_COLOR` turns colour off.
    pub fn choose(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> Style {
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        if terminal && !no_color { Style::Colour } else { Style::Plain }
    }

    fn paint(self, code: &'static str) -> &'static str {
        match self {
            Style::Plain => "",
            Style::Colour => code,
        }
    }

    fn reset(self) -> &'static str {
        self.paint("\x1b[0m")
    }
}

/// The findings of one run, in the order stages reported them.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    /// Warnings the inputs acknowledge (`allow = [...]`): not printed, counted in the summary, kept for
    /// `kix explain`.
    acknowledged: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
        self.acknowledged.extend(other.acknowledged);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity() == Severity::Error)
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|d| d.severity() == severity).count()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Moves the warnings `allowed` says the inputs acknowledge out of the report; errors always stay.
    pub fn acknowledge(&mut self, allowed: impl Fn(&Diagnostic) -> bool) {
        let (moved, kept): (Vec<Diagnostic>, Vec<Diagnostic>) =
            std::mem::take(&mut self.items).into_iter().partition(|d| d.severity() == Severity::Warning && allowed(d));
        self.items = kept;
        self.acknowledged.extend(moved);
    }

    /// The acknowledged warnings, in report order (once [`Diagnostics::finish`] ran).
    pub fn acknowledged(&self) -> &[Diagnostic] {
        &self.acknowledged
    }

    /// Sorts into a stable order (file, line, column, code, message) and drops exact repeats,
    /// so the same inputs always print the same report; the acknowledged warnings too (they may have
    /// been acknowledged cluster by cluster, as they were found).
    pub fn finish(&mut self) {
        type Place<'a> = Option<(&'a PathBuf, Option<usize>, Option<usize>)>;
        fn key(d: &Diagnostic) -> (Place<'_>, Code, &Subject, &String) {
            (d.location.as_ref().map(|l| (&l.file, l.line, l.column)), d.code, &d.subject, &d.message)
        }
        for list in [&mut self.items, &mut self.acknowledged] {
            list.sort_by(|a, b| key(a).cmp(&key(b)));
            list.dedup();
        }
    }

    /// The closing summary line, e.g. `kix: 2 errors, 1 warning` or `0 errors, 0 warnings (4 acknowledged)`.
    pub fn summary(&self) -> String {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let acknowledged = match self.acknowledged.len() {
            0 => String::new(),
            n => format!(" ({n} acknowledged)"),
        };
        format!(
            "{}, {}{acknowledged}",
            plural(self.count(Severity::Error), "error"),
            plural(self.count(Severity::Warning), "warning")
        )
    }
}

/// The text of one input file, kept so that diagnostics can point into it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path shown in diagnostics (relative to the root where possible).
    pub display: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(display: impl Into<PathBuf>, text: String) -> SourceFile {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { display: display.into(), text, line_starts }
    }

    pub fn path(&self) -> &Path {
        &self.display
    }

    /// A location for a byte span of the text.
    pub fn locate(&self, span: Range<usize>) -> Location {
        let start = self.char_boundary(span.start);
        let line_index = self.line_starts.partition_point(|&s| s <= start) - 1;
        let line_start = self.line_starts[line_index];
        let line_text = self.line_text(line_index);
        let column = self.text[line_start..start].chars().count() + 1;
        // A span may start past the visible line (on a trailing '\r'): never before `start`.
        let end = self.char_boundary(span.end.min(line_start + line_text.len()).max(start));
        let width = self.text[start..end].chars().count().max(1);
        let (snippet, snippet_column, width) = window(line_text, column, width);
        Location {
            file: self.display.clone(),
            line: Some(line_index + 1),
            column: Some(column),
            snippet: Some(snippet),
            width,
            snippet_column,
        }
    }

    /// A location for a 1-based line and column (as YAML parsers report them).
    pub fn locate_line(&self, line: usize, column: usize) -> Location {
        let line_index = line.saturating_sub(1).min(self.line_starts.len() - 1);
        let line_text = self.line_text(line_index);
        let width = line_text.chars().skip(column.saturating_sub(1)).take_while(|c| !c.is_whitespace()).count();
        let (snippet, snippet_column, width) = window(line_text, column.max(1), width.max(1));
        Location {
            file: self.display.clone(),
            line: Some(line_index + 1),
            column: Some(column.max(1)),
            snippet: Some(snippet),
            width,
            snippet_column,
        }
    }

    /// The nearest character boundary at or before `offset` (spans from parsers may point inside a character).
    fn char_boundary(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    fn line_text(&self, line_index: usize) -> &str {
        let start = self.line_starts[line_index];
        let end = self.line_starts.get(line_index + 1).copied().unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }
}

/// The widest snippet shown; longer lines are cut to a window around the caret.
const MAX_SNIPPET_CHARS: usize = 120;

/// Cuts a long line to a window around `column`, returning the snippet, the caret's column in it and its width.
fn window(line: &str, column: usize, width: usize) -> (String, usize, usize) {
    let length = line.chars().count();
    if length <= MAX_SNIPPET_CHARS {
        return (line.to_string(), column, width);
    }
    let start = column.saturating_sub(MAX_SNIPPET_CHARS / 2).min(length.saturating_sub(MAX_SNIPPET_CHARS));
    let end = (start + MAX_SNIPPET_CHARS).min(length);
    let mut snippet: String = line.chars().skip(start).take(end - start).collect();
    let mut caret = column - start;
    if start > 0 {
        snippet.insert_str(0, "...");
        caret += 3;
    }
    if end < length {
        snippet.push_str("...");
    }
    (snippet, caret, width.min(MAX_SNIPPET_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    // Regression (fuzz/regressions/*/toml-error-at-lone-carriage-return): a span on a trailing '\r' panicked.
    #[test]
    fn spans_on_a_trailing_carriage_return_do_not_panic() {
        let source = SourceFile::new("a.toml", "availability = \"zone\"\r".to_string());
        let location = source.locate(21..22);
        assert_eq!(location.line, Some(1));
        assert_eq!(location.width, 1);
    }

    #[test]
    fn long_lines_are_cut_around_the_caret() {
        let line = format!("x = {}", "[".repeat(1000));
        let source = SourceFile::new("a.toml", line);
        let location = source.locate(500..501);
        let snippet = location.snippet.unwrap();
        assert!(snippet.len() < 140 && snippet.starts_with("...") && snippet.ends_with("..."), "{snippet}");
        assert_eq!(location.column, Some(501));
        assert_eq!(snippet.chars().nth(location.snippet_column - 1), Some('['));
    }

    #[test]
    fn colour_only_on_a_terminal_and_never_under_no_color() {
        use std::ffi::OsStr;
        assert_eq!(Style::choose(true, None), Style::Colour);
        assert_eq!(Style::choose(false, None), Style::Plain);
        assert_eq!(Style::choose(true, Some(OsStr::new("1"))), Style::Plain);
        assert_eq!(Style::choose(true, Some(OsStr::new(""))), Style::Colour);
        let diagnostic = Diagnostic::new(Code::Io, "x");
        assert!(diagnostic.render(Style::Colour).contains("\x1b["));
        assert!(!diagnostic.render(Style::Plain).contains('\x1b'));
    }

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = BTreeSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.id()), "duplicate code {}", code.id());
            assert!(code.id().len() == 5 && code.id().starts_with('K'), "{}", code.id());
            assert!(!code.explanation().is_empty());
        }
    }

    #[test]
    fn locate_points_at_line_and_column() {
        let source = SourceFile::new("c.toml", "a = 1\nbb = \"x\"\n".to_string());
        let location = source.locate(11..14);
        assert_eq!((location.line, location.column, location.width), (Some(2), Some(6), 3));
        assert_eq!(location.snippet.as_deref(), Some("bb = \"x\""));
    }

    #[test]
    fn render_plain_has_caret_and_subject() {
        let source = SourceFile::new("clusters/dev.toml", "availability = \"zone\"\n".to_string());
        let diagnostic = Diagnostic::new(Code::LevelAboveSubstrate, "too high")
            .at(source.locate(15..21))
            .about(&Subject { cluster: Some("dev".into()), ..Subject::default() });
        let text = diagnostic.render(Style::Plain);
        assert_eq!(
            text,
            "error[K0302]: too high\n --> clusters/dev.toml:1:16\n  |\n1 | availability = \"zone\"\n  |                ^^^^^^\n  = in cluster dev\n"
        );
    }

    /// Warnings acknowledged cluster by cluster, as they were found, end in the same order and without the
    /// same repeats as when the merged report is acknowledged at once.
    #[test]
    fn acknowledging_per_part_equals_acknowledging_the_whole() {
        let warning = |file: &str, line: usize, cluster: &str| {
            let mut diagnostic =
                Diagnostic::new(Code::ALL.iter().copied().find(|c| c.severity() == Severity::Warning).unwrap(), "w")
                    .about(&Subject { cluster: Some(cluster.into()), ..Subject::default() });
            diagnostic.location = Some(Location { line: Some(line), ..Location::file(file) });
            diagnostic
        };
        let parts = [
            vec![
                warning("packages/p/a.yaml", 9, "one"),
                warning("clusters/one.toml", 2, "one"),
                warning("clusters/one.toml", 2, "one"),
            ],
            vec![warning("packages/p/a.yaml", 3, "two"), warning("clusters/two.toml", 1, "two")],
        ];
        let allowed = |d: &Diagnostic| {
            d.subject.cluster.as_deref() != Some("two") || d.location.as_ref().unwrap().line == Some(3)
        };
        let mut whole = Diagnostics::default();
        parts.iter().flatten().cloned().for_each(|d| whole.push(d));
        whole.finish();
        whole.acknowledge(allowed);
        let mut merged = Diagnostics::default();
        for part in &parts {
            let mut found = Diagnostics::default();
            part.iter().cloned().for_each(|d| found.push(d));
            found.acknowledge(allowed);
            merged.extend(found);
        }
        merged.finish();
        assert_eq!(merged.acknowledged(), whole.acknowledged());
        assert_eq!(merged.acknowledged().len(), 3, "the repeat counted once");
        assert_eq!(merged.iter().collect::<Vec<_>>(), whole.iter().collect::<Vec<_>>());
    }
}
