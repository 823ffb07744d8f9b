//! Diagnostics: the one type every stage reports through.
//!
//! Stages collect problems instead of stopping at the first one (cargo-deny style). Every
//! [`Diagnostic`] has a stable code (`K0301`, [`Code`]), a severity, a message, the
//! cluster/instance/package/workload it is about ([`Subject`]), and labels: a primary label where
//! the finding is, when it is anywhere, and secondary labels for the other places it is about
//! (the first definition of a duplicate, the other workload of an overlap), each a [`Location`]
//! with an optional text; then notes and help.
//!
//! A location is a file and a byte span of its text, not a copy of a line: the text is rendered
//! at print time from the source ([`Diagnostic::render`], with annotate-snippets, rustc's
//! renderer). So that a diagnostic renders wherever it ends up, a location holds the file's text
//! itself: a [`SourceFile`] is a shared handle to the text read once by the loader, which the
//! model and the documents already keep, so a location costs a reference count, and no table of
//! files has to be registered and carried beside the diagnostics, in step across stages and the
//! clusters compiled in parallel. Line and column are worked out from the span. (A file too large to
//! hold, `kix lint`'s input, is a [`SourceFile::on_disk`]: its locations hold the file, not its text,
//! and its lines are read again when a diagnostic in it is rendered.)
//!
//! Output is rustc-like text for people (colour only on a terminal and never under `NO_COLOR`,
//! [`Style`]) or one JSON object per line for tools ([`Diagnostic::to_json`]), both from the same
//! values. [`Diagnostics`] is a run's collection: [`Diagnostics::settle`] is the one policy for
//! acknowledged warnings and `--deny-warnings`, [`Diagnostics::finish`] the one stable order.
//!
//! Files: `diagnostic.rs` (the type and its labels), `cause.rs` (diagnostics that differ only by their
//! instance and cluster, shown as one), `message.rs` (its message, kept compactly), `diagnostics.rs` (the collection),
//! `source_file.rs` (texts and locations), `render.rs` and `excerpt.rs` (the text form: what
//! annotate-snippets is given, and what kix puts back), `json.rs`, `record.rs` (a diagnostic as a line of kix's own state, read back by a rebuild), `codes.rs`, and `source.rs`
//! (bounded reading of the files diagnostics point into).

use serde::Serialize;

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

mod cause;
mod codes;
mod diagnostic;
mod diagnostics;
mod excerpt;
mod json;
mod message;
mod record;
mod render;
pub mod source;
mod source_file;
pub mod words;

pub use cause::Cause;
pub use codes::Code;
pub use diagnostic::{Diagnostic, Subject};
pub use diagnostics::Diagnostics;
pub use message::Message;
pub use record::SubjectNames;
pub use render::{ColorChoice, Style};
pub use source_file::{Location, SourceFile};

#[cfg(test)]
mod render_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A lint holds every finding until it is printed (tens of thousands on a large stream): a finding
    /// fits mimalloc's 192-byte size class (it was 256 before secondary labels and notes were boxed
    /// together, the subject's names boxed text and the message a `Message`).
    #[test]
    fn a_finding_is_small() {
        assert!(std::mem::size_of::<Diagnostic>() <= 192, "{}", std::mem::size_of::<Diagnostic>());
        assert_eq!(std::mem::size_of::<Subject>(), 64);
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
}
