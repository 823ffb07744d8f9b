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
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct LabelRecord<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    span: Option<(usize, usize)>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
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
        // As written, read by hand (most of a rebuild's records: a fleet's rebuild reads 71,000), else by
        // serde_json (a string with an escape, a record another writer spaced).
        let record = written_form(line).or_else(|| serde_json::from_str::<DiagnosticRecord<'_>>(line).ok())?;
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

/// The record in the form [`Diagnostic::record`] writes it (serde_json's compact form of
/// [`DiagnosticRecord`]: its fields in order, those left out absent, no blank), each string without an
/// escape (so its bytes between the quotes are its value); `None` for anything else, which serde_json then
/// reads. The same record as serde_json's where it reads one (`tests::the_written_form_is_read_as_serde_reads_it`).
fn written_form(line: &str) -> Option<DiagnosticRecord<'_>> {
    let mut at = Cursor { text: line, at: 0 };
    at.literal("{\"code\":")?;
    let code = at.string()?;
    at.literal(",\"message\":")?;
    let message = at.string()?;
    let primary = match at.literal(",\"primary\":") {
        Some(()) => Some(at.label()?),
        None => None,
    };
    let mut secondary = Vec::new();
    if at.literal(",\"secondary\":[").is_some() {
        loop {
            secondary.push(at.label()?);
            if at.literal(",").is_none() {
                break;
            }
        }
        at.literal("]")?;
    }
    let mut notes = Vec::new();
    if at.literal(",\"notes\":[").is_some() {
        loop {
            notes.push(Cow::Borrowed(at.string()?));
            if at.literal(",").is_none() {
                break;
            }
        }
        at.literal("]")?;
    }
    let help = match at.literal(",\"help\":") {
        Some(()) => Some(Cow::Borrowed(at.string()?)),
        None => None,
    };
    at.literal(",\"subject\":[")?;
    let mut subject: [Option<Cow<'_, str>>; 4] = [None, None, None, None];
    for (index, name) in subject.iter_mut().enumerate() {
        if index > 0 {
            at.literal(",")?;
        }
        *name = match at.literal("null") {
            Some(()) => None,
            None => Some(Cow::Borrowed(at.string()?)),
        };
    }
    at.literal("]}")?;
    (at.at == line.len()).then_some(DiagnosticRecord {
        code: Cow::Borrowed(code),
        message: Cow::Borrowed(message),
        primary,
        secondary,
        notes,
        help,
        subject,
    })
}

/// A place in a record being read by [`written_form`].
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// Steps over `expected` when the text goes on with it.
    fn literal(&mut self, expected: &str) -> Option<()> {
        self.text[self.at..].starts_with(expected).then(|| self.at += expected.len())
    }

    /// A string without an escape: its bytes between the quotes (a quote or a control character inside
    /// one is always escaped, so the first quote after the opening one closes it).
    fn string(&mut self) -> Option<&'a str> {
        self.literal("\"")?;
        let rest = &self.text.as_bytes()[self.at..];
        let length = memchr::memchr2(b'"', b'\\', rest)?;
        // A control character is never written raw (serde_json refuses one): such a line is not a record.
        if rest[length] != b'"' || rest[..length].iter().any(|b| *b < 0x20) {
            return None;
        }
        let value = &self.text[self.at..self.at + length];
        self.at += length + 1;
        Some(value)
    }

    /// A number as serde_json writes a `usize`: decimal digits, no sign, no leading zero but `0`.
    fn number(&mut self) -> Option<usize> {
        let digits = self.text.as_bytes()[self.at..].iter().take_while(|b| b.is_ascii_digit()).count();
        let text = &self.text[self.at..self.at + digits];
        if digits == 0 || (digits > 1 && text.starts_with('0')) {
            return None;
        }
        let value = text.parse().ok()?;
        self.at += digits;
        Some(value)
    }

    /// `{"path":...[,"span":[start,end]][,"text":...]}`.
    fn label(&mut self) -> Option<LabelRecord<'a>> {
        self.literal("{\"path\":")?;
        let path = Cow::Borrowed(self.string()?);
        let span = match self.literal(",\"span\":[") {
            Some(()) => {
                let start = self.number()?;
                self.literal(",")?;
                let end = self.number()?;
                self.literal("]")?;
                Some((start, end))
            }
            None => None,
        };
        let text = match self.literal(",\"text\":") {
            Some(()) => Some(Cow::Borrowed(self.string()?)),
            None => None,
        };
        self.literal("}")?;
        Some(LabelRecord { path, span, text })
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

    /// Records of every part (labels with and without spans and texts, notes, help, names or none), their
    /// strings from text with quotes, backslashes, control characters and other scripts.
    fn any_record() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let text = prop::sample::select(vec![
            "",
            "a",
            "cluster `c0000` instance `i0001`: lowered",
            "é ü ✓",
            "a \"quoted\" word",
            "back\\slash",
            "tab\tand\nline",
            "\u{1}",
            "{\"code\":",
            "],[",
            "null",
        ]);
        let label = (text.clone(), prop::option::of((0usize..400, 0usize..400)), prop::option::of(text.clone()));
        (
            prop::sample::select(vec!["K0101", "K0307", "K0432"]),
            text.clone(),
            prop::option::of(label.clone()),
            prop::collection::vec(label, 0..3),
            prop::collection::vec(text.clone(), 0..3),
            prop::option::of(text.clone()),
            prop::collection::vec(prop::option::of(text), 4),
        )
            .prop_map(|(code, message, primary, secondary, notes, help, subject)| {
                let label = |(path, span, text): (&'static str, Option<(usize, usize)>, Option<&'static str>)| {
                    LabelRecord { path: Cow::Borrowed(path), span, text: text.map(Cow::Borrowed) }
                };
                let record = DiagnosticRecord {
                    code: Cow::Borrowed(code),
                    message: Cow::Borrowed(message),
                    primary: primary.map(label),
                    secondary: secondary.into_iter().map(label).collect(),
                    notes: notes.into_iter().map(Cow::Borrowed).collect(),
                    help: help.map(Cow::Borrowed),
                    subject: [0, 1, 2, 3].map(|index| subject[index].map(Cow::Borrowed)),
                };
                serde_json::to_string(&record).unwrap()
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
        /// Wherever the hand reader reads a record, serde_json reads the same one; it reads every record
        /// whose strings need no escape (the form a rebuild meets), and gives the rest to serde_json.
        #[test]
        fn the_written_form_is_read_as_serde_reads_it(line in any_record()) {
            let serde: DiagnosticRecord<'_> = serde_json::from_str(&line).unwrap();
            match written_form(&line) {
                Some(read) => proptest::prop_assert_eq!(read, serde),
                None => proptest::prop_assert!(line.contains('\\'), "not read by hand: {}", line),
            }
        }
    }

    /// Lines serde_json reads otherwise than they are written (blanks, another field order, a field it
    /// does not know, a number it would refuse) or refuses (a raw control character) are not read by hand.
    #[test]
    fn other_forms_are_left_to_serde() {
        let written =
            r#"{"code":"K0101","message":"m","primary":{"path":"p","span":[0,1]},"subject":["c",null,null,null]}"#;
        assert!(written_form(written).is_some());
        for other in [
            r#"{"code": "K0101","message":"m","subject":[null,null,null,null]}"#,
            r#"{"message":"m","code":"K0101","subject":[null,null,null,null]}"#,
            r#"{"code":"K0101","message":"m","extra":1,"subject":[null,null,null,null]}"#,
            r#"{"code":"K0101","message":"m","primary":{"path":"p","span":[01,1]},"subject":[null,null,null,null]}"#,
            "{\"code\":\"K0101\",\"message\":\"a\tb\",\"subject\":[null,null,null,null]}",
            r#"{"code":"K0101","message":"m","subject":[null,null,null,null]} "#,
            r#"{"code":"K0101","message":"m","subject":[null,null,null]}"#,
        ] {
            assert_eq!(written_form(other), None, "{other}");
        }
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
