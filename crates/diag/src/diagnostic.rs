//! [`Diagnostic`], one finding: a code and a message, a primary label where it is, secondary
//! labels for the other places it is about, notes and help.

use crate::message::Message;
use crate::source_file::Location;
use crate::{Code, Severity};
use std::borrow::Cow;

/// A place a diagnostic points at, and what to write under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Label {
    pub location: Location,
    /// Written beside the underline; a primary label may go without (the message says it), a secondary
    /// label always has one.
    pub text: Option<Box<str>>,
}

/// What a diagnostic is about, beyond the file. Names as shared text (two words each, not a `String`'s
/// three, and a clone copies no text: resolve makes one for every workload of every instance, 400,000 in
/// a 1,000-cluster fleet): every finding holds one.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subject {
    pub cluster: Option<std::sync::Arc<str>>,
    pub instance: Option<std::sync::Arc<str>>,
    pub package: Option<std::sync::Arc<str>>,
    pub workload: Option<std::sync::Arc<str>>,
}

impl Subject {
    /// `cluster c, instance i, ...`, as the `= in` line shows it (`None` when nothing is named).
    pub(crate) fn describe(&self) -> Option<String> {
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

/// What few findings have: secondary labels and notes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Extra {
    /// The other places the finding is about, in the order they were added.
    secondary: Vec<Label>,
    /// More to know, one `= note:` line each.
    notes: Vec<String>,
}

/// One finding.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub code: Code,
    /// Kept compactly ([`Message`]): a lint holds tens of thousands until they are printed.
    pub message: Message,
    /// Where the finding is, when it is anywhere.
    pub(crate) primary: Option<Label>,
    /// The other places the finding is about and the notes, boxed and made only when there are some: most
    /// findings have neither, and a lint holds tens of thousands of findings until they are printed.
    extra: Option<Box<Extra>>,
    pub subject: Subject,
    /// How to fix it, when there is more to say than the message: most are the program's own text,
    /// borrowed, not copied into every finding.
    pub help: Option<Cow<'static, str>>,
}

/// Every field equal, the subject compared first: a sorted report's neighbours are mostly one finding
/// about two instances, and the report drops exact repeats by comparing neighbours (a fleet's rebuild,
/// 71,000 findings, each message compared whole when the subject was compared last).
impl PartialEq for Diagnostic {
    fn eq(&self, other: &Diagnostic) -> bool {
        // Destructured, so that a field added is a field compared.
        let Diagnostic { code, message, primary, extra, subject, help } = self;
        *subject == other.subject
            && *code == other.code
            && *primary == other.primary
            && *message == other.message
            && *extra == other.extra
            && *help == other.help
    }
}

impl Eq for Diagnostic {}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<Message>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            primary: None,
            extra: None,
            subject: Subject::default(),
            help: None,
        }
    }

    /// Puts the primary label at `location`.
    pub fn at(self, location: Location) -> Diagnostic {
        self.at_opt(Some(location))
    }

    pub fn at_opt(mut self, location: Option<Location>) -> Diagnostic {
        self.primary = location.map(|location| Label { location, text: None });
        self
    }

    /// Text for the primary label, written beside its underline.
    pub fn label(mut self, text: impl Into<String>) -> Diagnostic {
        if let Some(primary) = &mut self.primary {
            primary.text = Some(text.into().into());
        }
        self
    }

    /// A secondary label: another place the finding is about, and what it is.
    pub fn with_label(mut self, location: Location, text: impl Into<String>) -> Diagnostic {
        self.extra.get_or_insert_default().secondary.push(Label { location, text: Some(text.into().into()) });
        self
    }

    pub fn about(mut self, subject: &Subject) -> Diagnostic {
        self.subject = subject.clone();
        self
    }

    pub fn workload(mut self, workload: &str) -> Diagnostic {
        self.subject.workload = Some(workload.into());
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.extra.get_or_insert_default().notes.push(note.into());
        self
    }

    pub fn help(mut self, help: impl Into<Cow<'static, str>>) -> Diagnostic {
        self.help = Some(exact(help.into()));
        self
    }

    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// Where the finding is: its primary label's place.
    pub fn location(&self) -> Option<&Location> {
        self.primary.as_ref().map(|label| &label.location)
    }

    /// The other places the finding is about, each with its label (SARIF's related locations).
    pub fn secondary(&self) -> impl Iterator<Item = (&Location, &str)> {
        self.secondary_labels().iter().map(|label| (&label.location, label.text.as_deref().unwrap_or_default()))
    }

    /// The `= note:` lines.
    pub fn notes(&self) -> &[String] {
        self.extra.as_ref().map_or(&[], |extra| &extra.notes)
    }

    /// Whether `other` says the same as this one at the same place, for at most another cluster and
    /// instance (the message compared without the `cluster `c` instance `i`: ` it may open with): one
    /// cause ([`crate::Cause`]).
    pub(crate) fn same_cause(&self, other: &Diagnostic) -> bool {
        self.code == other.code
            && self.primary == other.primary
            && self.unqualified() == other.unqualified()
            && self.extra == other.extra
            && self.help == other.help
            && self.subject.package == other.subject.package
            && self.subject.workload == other.subject.workload
    }

    /// The message without the `cluster `c`: `, `cluster `c` instance `i`: ` or `cluster `c` instances `i`,
    /// `j`: ` it opens with, when that names the diagnostic's own cluster: what it says of any instance.
    pub(crate) fn unqualified(&self) -> Cow<'_, str> {
        // Borrowed from a message written whole: every cause grouping asks it of every finding (a fleet's
        // rebuild, tens of thousands of times a pass).
        match self.message.as_one_part() {
            Some(text) => Cow::Borrowed(self.without_own_cluster(text)),
            None => {
                let text = self.message.to_string();
                Cow::Owned(self.without_own_cluster(&text).to_string())
            }
        }
    }

    /// `text` after the opening that names this diagnostic's own cluster (and instances), if it has one.
    fn without_own_cluster<'t>(&self, text: &'t str) -> &'t str {
        let Some(cluster) = self.subject.cluster.as_deref() else { return text };
        let Some(rest) = (text.strip_prefix("cluster `"))
            .and_then(|rest| rest.strip_prefix(cluster))
            .and_then(|rest| rest.strip_prefix('`'))
        else {
            return text;
        };
        if let Some(rest) = rest.strip_prefix(": ") {
            rest
        } else if rest.starts_with(" instance `") || rest.starts_with(" instances `") {
            rest.find("`: ").map_or(text, |end| &rest[end + 3..])
        } else {
            text
        }
    }

    /// The secondary labels, in the order they were added.
    pub(crate) fn secondary_labels(&self) -> &[Label] {
        self.extra.as_ref().map_or(&[], |extra| &extra.secondary)
    }
}

/// `text` in an allocation of its length when it is owned (a `format!` buffer may be twice that).
fn exact(text: Cow<'static, str>) -> Cow<'static, str> {
    match text {
        Cow::Owned(owned) if owned.capacity() > owned.len() => Cow::Owned(owned.as_str().to_string()),
        text => text,
    }
}
