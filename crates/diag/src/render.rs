//! The text form of a diagnostic, rendered at print time from the source texts its labels hold.
//!
//! annotate-snippets (rustc's renderer) lays out the title, the `-->` line and each file's lines
//! with the labels under them: the primary label's file first (`-->`), every other file after it
//! (`:::`), a file without a known place as a lone `-->`/`:::` line. kix gives it each file's lines
//! as [`Excerpt`]s and puts back what those change (see [`crate::excerpt`]). The footer lines,
//! `= in <subject>`, `= note: ...` and `= help: ...`, are kix's own, written after it with no `|`
//! line before them (annotate-snippets, like rustc, would write one), padded to the width of its
//! line-number gutter (at least one, as for a lone `-->` line, which annotate-snippets writes
//! without indent).

use crate::diagnostic::{Diagnostic, Label};
use crate::excerpt::{Draft, Excerpt, restore_tabs, tab_stand_in, visible_text};
use crate::{Severity, SourceFile};
use annotate_snippets::{AnnotationKind, Element, Group, Level, Origin, Renderer, Snippet};
use std::fmt::Write as _;
use std::ops::Range;

/// Whether rendered text carries ANSI colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Colour,
}

/// When to colour (`--color`): an explicit `always` or `never` wins over the environment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl Style {
    /// Colour only when stderr is a terminal and `NO_COLOR` is unset or empty.
    pub fn for_stderr() -> Style {
        Style::for_stderr_with(ColorChoice::Auto)
    }

    /// `--color`'s choice for stderr: `always` and `never` as said; `auto` is plain under a non-empty
    /// `NO_COLOR` (<https://no-color.org>), colour under a set `CLICOLOR_FORCE` or `FORCE_COLOR` other than
    /// `0` (<https://bixense.com/clicolors/>, <https://force-color.org>), else colour on a terminal.
    pub fn for_stderr_with(choice: ColorChoice) -> Style {
        use std::io::IsTerminal;
        let var = |name: &str| std::env::var_os(name);
        match choice {
            ColorChoice::Always => Style::Colour,
            ColorChoice::Never => Style::Plain,
            ColorChoice::Auto => Style::choose_auto(
                std::io::stderr().is_terminal(),
                var("NO_COLOR").as_deref(),
                var("CLICOLOR_FORCE").as_deref(),
                var("FORCE_COLOR").as_deref(),
            ),
        }
    }

    /// `auto`: `NO_COLOR` first, then either force variable, then the terminal.
    pub(crate) fn choose_auto(
        terminal: bool,
        no_color: Option<&std::ffi::OsStr>,
        clicolor_force: Option<&std::ffi::OsStr>,
        force_color: Option<&std::ffi::OsStr>,
    ) -> Style {
        let forced = |v: Option<&std::ffi::OsStr>| v.is_some_and(|v| !v.is_empty() && v != "0");
        if no_color.is_some_and(|v| !v.is_empty()) {
            Style::Plain
        } else if forced(clicolor_force) || forced(force_color) {
            Style::Colour
        } else {
            Style::choose(terminal, None)
        }
    }

    /// The rule itself (<https://no-color.org>): any non-empty `NO_COLOR` turns colour off.
    pub(crate) fn choose(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> Style {
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        if terminal && !no_color { Style::Colour } else { Style::Plain }
    }

    fn renderer(self) -> Renderer {
        // Lines are cut to kix's windows before annotate-snippets sees them (see `crate::excerpt`): its own
        // trimming to a terminal width is never wanted.
        const UNTRIMMED: usize = 1 << 20;
        match self {
            Style::Plain => Renderer::plain().term_width(UNTRIMMED),
            Style::Colour => Renderer::styled().term_width(UNTRIMMED),
        }
    }

    /// The footer's `=`, in annotate-snippets' colour for the gutter.
    fn equals(self) -> &'static str {
        match self {
            Style::Plain => "=",
            Style::Colour => "\x1b[1m\x1b[94m=\x1b[0m",
        }
    }
}

/// A file's labels: its excerpt and, per label, the label and whether it is the primary one.
struct FileLabels<'d> {
    excerpt: Excerpt,
    labels: Vec<(&'d Label, bool)>,
}

/// What annotate-snippets shows below the title: a file's excerpt, or a file with no known place.
enum Part<'d> {
    File(FileLabels<'d>),
    Origin(&'d Label),
}

impl Diagnostic {
    /// The rustc-style text form, one line per `\n`-terminated line.
    pub fn render(&self, style: Style) -> String {
        self.render_in(style, &self.message.to_string(), self.subject.describe().map(|subject| format!("in {subject}")))
    }

    /// The text form with `message` as its title and `within` as its `= in` line (a cause's: what it says
    /// of every instance, and every instance it applies to).
    pub(crate) fn render_in(&self, style: Style, message: &str, within: Option<String>) -> String {
        let parts = self.parts();
        let elements = parts.parts.iter().map(|part| -> Element<'_> {
            match part {
                Part::File(file) => {
                    let annotations = file.labels.iter().zip(&file.excerpt.spans).map(|((label, primary), span)| {
                        let kind = if *primary { AnnotationKind::Primary } else { AnnotationKind::Context };
                        kind.span(span.clone()).label(label.text.as_deref())
                    });
                    Snippet::source(file.excerpt.text.as_str())
                        .path(file.excerpt.path.as_str())
                        .line_start(file.excerpt.line_start)
                        .annotations(annotations)
                        .into()
                }
                Part::Origin(label) => Origin::path(label.location.path().display().to_string()).into(),
            }
        });
        let level = match self.severity() {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let title = level.primary_title(message).id(self.code.id());
        let report = [Group::with_title(title).elements(elements)];
        let rendered = style.renderer().render(&report);

        let mut lines: Vec<String> = rendered.lines().map(str::to_string).collect();
        let mut gutter = 0;
        for part in &parts.parts {
            if let Part::File(file) = part {
                file.excerpt.restore(&mut lines);
                gutter = gutter.max(file.excerpt.last_line().to_string().len());
            }
        }
        if let Some(tab) = parts.tab {
            restore_tabs(&mut lines, tab);
        }
        if gutter == 0 {
            // Only lone `-->`/`:::` lines, which annotate-snippets writes without indent; kix indents them
            // as under a one-digit gutter.
            for line in &mut lines {
                let visible = visible_text(line);
                if visible.starts_with("-->") || visible.starts_with(":::") {
                    line.insert(0, ' ');
                }
            }
        }
        let mut out = String::new();
        for line in &lines {
            let _ = writeln!(out, "{line}");
        }
        let pad = " ".repeat(gutter.max(1));
        let equals = style.equals();
        let subject = within;
        let notes = self.notes().iter().map(|note| format!("note: {note}"));
        let help = self.help.iter().map(|help| format!("help: {help}"));
        for footer in subject.into_iter().chain(notes).chain(help) {
            let _ = writeln!(out, "{pad} {equals} {footer}");
        }
        out
    }

    /// The labels grouped into what annotate-snippets shows, in order: the primary label's file first,
    /// every other file as its first label comes; and the stand-in for tabs.
    fn parts(&self) -> Parts<'_> {
        let labels = self.primary.iter().map(|l| (l, true)).chain(self.secondary_labels().iter().map(|l| (l, false)));
        let mut files: Vec<Spans<'_>> = Vec::new();
        let mut lone: Vec<(usize, &Label)> = Vec::new();
        for (label, primary) in labels {
            let Some((source, span)) = label.location.span() else {
                lone.push((files.len() + lone.len(), label));
                continue;
            };
            match files.iter_mut().find(|file| file.source.path() == source.path()) {
                Some(file) => file.labels.push((label, primary, span)),
                None => {
                    files.push(Spans { at: files.len() + lone.len(), source, labels: vec![(label, primary, span)] })
                }
            }
        }
        let drafts: Vec<Draft> = files
            .iter()
            .map(|file| {
                Draft::new(file.source, &file.labels.iter().map(|(_, _, span)| span.clone()).collect::<Vec<_>>())
            })
            .collect();
        // The tab's stand-in is found in nothing else annotate-snippets is given.
        let all = || self.primary.iter().chain(self.secondary_labels());
        let others: Vec<String> = std::iter::once(self.message.to_string())
            .chain(all().filter_map(|l| l.text.as_deref().map(str::to_string)))
            .chain(all().map(|l| l.location.path().display().to_string()))
            .collect();
        let tab = tab_stand_in(drafts.iter().flat_map(Draft::texts).chain(others.iter().map(String::as_str)));
        let mut parts: Vec<(usize, Part<'_>)> = files
            .into_iter()
            .zip(drafts)
            .map(|(file, draft)| {
                let labels = file.labels.into_iter().map(|(label, primary, _)| (label, primary)).collect();
                (file.at, Part::File(FileLabels { excerpt: draft.give(tab), labels }))
            })
            .collect();
        parts.extend(lone.into_iter().map(|(at, label)| (at, Part::Origin(label))));
        parts.sort_by_key(|(at, _)| *at);
        Parts { parts: parts.into_iter().map(|(_, part)| part).collect(), tab }
    }
}

/// A file's labels with spans, before its excerpt is made: where it comes among the parts, and per label
/// whether it is the primary one and its span.
struct Spans<'d> {
    at: usize,
    source: &'d SourceFile,
    labels: Vec<(&'d Label, bool, Range<usize>)>,
}

struct Parts<'d> {
    parts: Vec<Part<'d>>,
    tab: Option<char>,
}
