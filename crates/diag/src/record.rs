//! A diagnostic as one line of text and back: what a build keeps of a cluster's findings in its own state
//! (`.kix/`), so that a rebuild that finds the cluster's inputs unchanged reports the same findings without
//! compiling the cluster again (issue 42).
//!
//! The record is a JSON object holding everything a [`Diagnostic`] is: code, message, subject, help, notes
//! and each label as its file's path and byte span. A location's text is not recorded: the file it points
//! into is an input whose bytes the record's key vouches for, so the reader is handed a [`SourceFile`] per
//! path (read again from disk when a diagnostic in it is rendered) and the spans point into it as before.
//! A record that does not read back (a damaged or foreign state file) is `None`: the caller compiles.

use crate::diagnostic::{Diagnostic, Label};
use crate::source_file::{Location, SourceFile};
use crate::{Code, Message};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// A label: the file, the byte span when the place is known, and the label's text.
#[derive(Serialize, Deserialize)]
struct LabelRecord<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    span: Option<(usize, usize)>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize)]
struct DiagnosticRecord<'a> {
    code: Cow<'a, str>,
    #[serde(borrow)]
    message: Cow<'a, str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    primary: Option<LabelRecord<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Vec::is_empty")]
    secondary: Vec<LabelRecord<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Vec::is_empty")]
    notes: Vec<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    help: Option<Cow<'a, str>>,
    /// cluster, instance, package, workload.
    #[serde(borrow)]
    subject: [Option<Cow<'a, str>>; 4],
}

impl Diagnostic {
    /// The diagnostic as one line of JSON (no line break in it), read back by [`Diagnostic::from_record`].
    pub fn record(&self) -> String {
        fn label(label: &Label) -> LabelRecord<'_> {
            LabelRecord {
                path: label.location.path().to_string_lossy(),
                span: label.location.span().map(|(_, span)| (span.start, span.end)),
                text: label.text.as_deref().map(Cow::Borrowed),
            }
        }
        fn name(name: &Option<Arc<str>>) -> Option<Cow<'_, str>> {
            name.as_deref().map(Cow::Borrowed)
        }
        let subject = &self.subject;
        let record = DiagnosticRecord {
            code: Cow::Borrowed(self.code.id()),
            message: Cow::Owned(self.message.to_string()),
            primary: self.primary.as_ref().map(label),
            secondary: self.secondary_labels().iter().map(label).collect(),
            notes: self.notes().iter().map(|note| Cow::Borrowed(note.as_str())).collect(),
            help: self.help.as_deref().map(Cow::Borrowed),
            subject: [name(&subject.cluster), name(&subject.instance), name(&subject.package), name(&subject.workload)],
        };
        serde_json::to_string(&record).unwrap_or_default()
    }

    /// The diagnostic [`Diagnostic::record`] wrote, its locations in the files `source` gives for each path;
    /// `None` when the line is not such a record or a span lies outside its file.
    pub fn from_record(line: &str, source: &mut dyn FnMut(&Path) -> Option<SourceFile>) -> Option<Diagnostic> {
        Diagnostic::from_record_sharing(line, source, &mut SubjectNames::default())
    }

    /// [`Diagnostic::from_record`], the names of its subject shared with the records read before it through
    /// `names` (a cluster's findings name one cluster and a few packages and workloads: a rebuild reads tens
    /// of thousands).
    pub fn from_record_sharing(
        line: &str,
        source: &mut dyn FnMut(&Path) -> Option<SourceFile>,
        names: &mut SubjectNames,
    ) -> Option<Diagnostic> {
        let record: DiagnosticRecord<'_> = serde_json::from_str(line).ok()?;
        let code = Code::from_id(&record.code)?;
        let mut location = |label: &LabelRecord<'_>| -> Option<Location> {
            let path = Path::new(label.path.as_ref());
            match label.span {
                None => Some(Location::file(path)),
                Some((start, end)) => Location::in_file(source(path)?, start..end),
            }
        };
        let mut diagnostic = Diagnostic::new(code, Message::new(&record.message));
        if let Some(primary) = &record.primary {
            diagnostic = diagnostic.at(location(primary)?);
            if let Some(text) = &primary.text {
                diagnostic = diagnostic.label(text.as_ref());
            }
        }
        for secondary in &record.secondary {
            diagnostic = diagnostic.with_label(location(secondary)?, secondary.text.as_deref().unwrap_or_default());
        }
        for note in record.notes {
            diagnostic = diagnostic.note(note);
        }
        if let Some(help) = record.help {
            diagnostic = diagnostic.help(help.into_owned());
        }
        let [cluster, instance, package, workload] = record.subject;
        let mut named = |field: usize, name: Option<Cow<'_, str>>| name.map(|name| names.get(field, &name));
        let (cluster, instance) = (named(0, cluster), named(1, instance));
        let (package, workload) = (named(2, package), named(3, workload));
        diagnostic.subject = crate::Subject { cluster, instance, package, workload };
        Some(diagnostic)
    }
}

/// The names recent records' subjects held, each shared by the records that name it again
/// ([`Diagnostic::from_record_sharing`]); the last few are kept, looked up in order.
#[derive(Debug, Default)]
pub struct SubjectNames {
    recent: Vec<Arc<str>>,
    /// The name each field of a subject (cluster, instance, package, workload) held last: asked first, as
    /// records in a row mostly name one cluster, and a package's findings one package and workload.
    last: [Option<Arc<str>>; 4],
}

impl SubjectNames {
    /// How many names are kept: more than a cluster's findings name but instances.
    const KEPT: usize = 16;

    fn get(&mut self, field: usize, name: &str) -> Arc<str> {
        if let Some(last) = self.last[field].as_ref().filter(|last| ***last == *name) {
            return Arc::clone(last);
        }
        let shared = self.shared(name);
        self.last[field] = Some(Arc::clone(&shared));
        shared
    }

    fn shared(&mut self, name: &str) -> Arc<str> {
        if let Some(known) = self.recent.iter().find(|known| ***known == *name) {
            return Arc::clone(known);
        }
        let made: Arc<str> = Arc::from(name);
        if self.recent.len() == Self::KEPT {
            self.recent.remove(0);
        }
        self.recent.push(Arc::clone(&made));
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code reads back from its identifier, and nothing else names a code.
    #[test]
    fn every_code_is_found_by_its_identifier() {
        for code in Code::ALL {
            assert_eq!(Code::from_id(code.id()), Some(*code));
        }
        for other in ["", "K", "k0301", "K030", "K03011", " K0301", "K9999"] {
            assert_eq!(Code::from_id(other), None, "{other}");
        }
    }

    #[test]
    fn a_diagnostic_reads_back_as_it_was_written() {
        let source = SourceFile::new("clusters/prod.toml", "availability = \"zone\"\nname = \"a\"\n".to_string());
        let subject = crate::Subject {
            cluster: Some("prod".into()),
            instance: Some("a".into()),
            package: Some("web".into()),
            workload: None,
        };
        let written = Diagnostic::new(Code::ALL[0], "cluster `prod` instance `a`: a \"quoted\"\nmessage")
            .at(source.locate(22..26))
            .label("here")
            .with_label(Location::file("packages/web/kix.toml"), "and there")
            .with_label(source.locate(0..12), "")
            .note("a note")
            .help("some help")
            .about(&subject);
        let line = written.record();
        assert!(!line.contains('\n'), "{line}");
        let read = Diagnostic::from_record(&line, &mut |path| (path == source.path()).then(|| source.clone()));
        let read = read.expect("reads back");
        assert_eq!(read, written);
        assert_eq!(read.render(crate::Style::Plain), written.render(crate::Style::Plain));
        assert_eq!(read.location().and_then(Location::line), Some(2));
    }

    /// Records read one after the other through one `SubjectNames` read back as each does alone, a name
    /// they repeat shared (one allocation), past as many distinct names as it keeps.
    #[test]
    fn records_read_in_a_row_share_their_names() {
        let line = |cluster: &str, instance: &str| {
            let mut diagnostic = Diagnostic::new(Code::ALL[1], format!("{cluster}/{instance}"));
            diagnostic.subject.cluster = Some(Arc::from(cluster));
            diagnostic.subject.instance = Some(Arc::from(instance));
            diagnostic.record()
        };
        let lines: Vec<String> = (0..40).map(|i| line(["a", "b"][i % 2], &format!("i{}", i % 23))).collect();
        let mut names = SubjectNames::default();
        let mut source = |_: &Path| None;
        let shared: Vec<Diagnostic> =
            lines.iter().map(|l| Diagnostic::from_record_sharing(l, &mut source, &mut names).unwrap()).collect();
        let alone: Vec<Diagnostic> = lines.iter().map(|l| Diagnostic::from_record(l, &mut source).unwrap()).collect();
        assert_eq!(shared, alone);
        let cluster = |d: &Diagnostic| d.subject.cluster.clone().unwrap();
        assert!(Arc::ptr_eq(&cluster(&shared[0]), &cluster(&shared[2])), "a repeated name is shared");
    }

    #[test]
    fn a_record_that_does_not_read_back_is_none() {
        let source = |_: &Path| None;
        for line in ["", "{}", "not json", r#"{"code":"K9999","message":"m","subject":[null,null,null,null]}"#] {
            assert!(Diagnostic::from_record(line, &mut { source }).is_none(), "{line}");
        }
        // A span in a file the reader cannot give.
        let line =
            r#"{"code":"K0101","message":"m","primary":{"path":"gone","span":[0,1]},"subject":[null,null,null,null]}"#;
        assert!(Diagnostic::from_record(line, &mut { source }).is_none());
    }
}
