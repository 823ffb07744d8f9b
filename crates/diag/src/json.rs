//! The JSON form of a diagnostic (the `diagnostics` of a `--format json` document), serialized with serde from
//! the diagnostic's own values. Keys are in alphabetical order. These are always there, `null` when
//! empty, so tools can rely on the shape: `cluster`, `code`, `column`, `file`, `help`, `instance`,
//! `line`, `message`, `package`, `severity`, `workload`; the secondary labels (`labels`: `column`,
//! `file`, `label`, `line` each) and the notes (`notes`) are there only when there are some.

use crate::Severity;
use crate::diagnostic::{Diagnostic, Label};
use serde::Serialize;

#[derive(Serialize)]
struct Json<'d> {
    cluster: Option<&'d str>,
    code: &'static str,
    column: Option<usize>,
    file: Option<String>,
    help: Option<&'d str>,
    instance: Option<&'d str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    labels: Vec<JsonLabel<'d>>,
    line: Option<usize>,
    message: &'d crate::Message,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'d [String],
    package: Option<&'d str>,
    severity: Severity,
    workload: Option<&'d str>,
}

#[derive(Serialize)]
struct JsonLabel<'d> {
    column: Option<usize>,
    file: String,
    label: Option<&'d str>,
    line: Option<usize>,
}

impl<'d> From<&'d Label> for JsonLabel<'d> {
    fn from(label: &'d Label) -> JsonLabel<'d> {
        let location = &label.location;
        JsonLabel {
            column: location.column(),
            file: location.path().display().to_string(),
            label: label.text.as_deref(),
            line: location.line(),
        }
    }
}

impl Diagnostic {
    /// The JSON form, one line without its line break (`kix schedule`'s and `simulate`'s input errors).
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.to_json_value()).expect("a diagnostic serializes: its keys are strings")
    }

    /// The JSON form as a value: what `--format json` documents list under `diagnostics`.
    pub fn to_json_value(&self) -> serde_json::Value {
        let location = self.location();
        let json = Json {
            cluster: self.subject.cluster.as_deref(),
            code: self.code.id(),
            column: location.and_then(|l| l.column()),
            file: location.map(|l| l.path().display().to_string()),
            help: self.help.as_deref(),
            instance: self.subject.instance.as_deref(),
            labels: self.secondary_labels().iter().map(JsonLabel::from).collect(),
            line: location.and_then(|l| l.line()),
            message: &self.message,
            notes: self.notes(),
            package: self.subject.package.as_deref(),
            severity: self.severity(),
            workload: self.subject.workload.as_deref(),
        };
        serde_json::to_value(&json).expect("a diagnostic serializes: its keys are strings")
    }
}
