//! The machine-readable forms of a command's outcome (issue 21): `--format json` (one document on
//! stdout, with the command's report, its diagnostics and the summary inside), `--format sarif`
//! (SARIF 2.1.0 for code scanning, [`sarif`]), `--format junit` (JUnit XML for CI test dashboards,
//! [`junit`]) and `--format github` (GitHub Actions workflow commands, [`github`]).
//!
//! Every form is built from one [`Outcome`]: what the command found (its diagnostics, the report it
//! hands the JSON document, the notes that stop nobody's build) and the summary whose exit status the
//! command returns, so the `kix: ...` line on stderr, the document's `summary` and the exit status
//! never disagree. Locations are fields everywhere (`file`, `line`, `column`), never `file:line` text.
//! The documents' JSON Schemas are committed under `schemas/` and printed by `kix schema NAME`
//! ([`output_schema`]).

pub mod github;
pub mod junit;
pub mod lint_junit;
pub mod sarif;
pub mod verify_junit;

use kix_diag::{Cause, Diagnostics, Severity};
use serde_json::{Map, Value, json};
use std::path::{Component, Path, PathBuf};

/// A finding that fails nothing but is worth showing where CI shows findings (SARIF level `note`, a
/// GitHub `::notice`): verify's drain blockers of passing scenarios.
pub use kix_engines::verify::Note;

/// What a command found, for every output form.
#[derive(Debug)]
pub struct Outcome<'a> {
    /// The subcommand, as the document's `command` says it (`build`, `lint`, ...).
    pub command: &'static str,
    pub diagnostics: &'a Diagnostics,
    /// The JSON document's other fields: the command's report.
    pub report: Map<String, Value>,
    /// What else failed when no diagnostic says so (`2 files out of date`): the exit status is 1.
    pub failed: Option<String>,
    pub notes: Vec<Note>,
    /// The directory diagnostics' relative paths are relative to (the kix root; `.` for lint's files).
    pub base: PathBuf,
}

impl Outcome<'_> {
    /// Whether the command fails (exit status 1): an error diagnostic, or what else failed.
    pub fn fails(&self) -> bool {
        self.diagnostics.has_errors() || self.failed.is_some()
    }

    /// The closing summary: `1 error, 0 warnings (2 acknowledged)`, then what else failed.
    pub fn summary_text(&self) -> String {
        match &self.failed {
            Some(failed) => format!("{}, {failed}", self.diagnostics.summary()),
            None => self.diagnostics.summary(),
        }
    }

    /// The `summary` of the JSON document: `errors` and `warnings` count causes, `instances` the
    /// diagnostics they stand for.
    pub fn summary(&self) -> Value {
        let (errors, error_instances) = self.diagnostics.count_causes(Severity::Error);
        let (warnings, warning_instances) = self.diagnostics.count_causes(Severity::Warning);
        json!({
            "errors": errors,
            "warnings": warnings,
            "instances": { "errors": error_instances, "warnings": warning_instances },
            "acknowledged": self.diagnostics.acknowledged_count(),
            "failed": self.failed,
            "text": self.summary_text(),
            "exit_status": u8::from(self.fails()),
        })
    }

    /// The one JSON document of `--format json`, pretty-printed, with a final line break.
    pub fn document(&self) -> String {
        let mut document = self.report.clone();
        document.insert("command".into(), Value::from(self.command));
        document.insert(
            "diagnostics".into(),
            Value::Array(self.diagnostics.causes().iter().map(Cause::to_json_value).collect()),
        );
        document.insert("summary".into(), self.summary());
        serde_json::to_string_pretty(&Value::Object(document)).expect("a JSON value prints") + "\n"
    }

    /// A path as CI tools want it: relative to the working directory where it can be, with `/`
    /// between its parts (the kix root joined in front of a root-relative path).
    pub fn artifact_path(&self, path: &Path) -> String {
        artifact_path(&self.base, path)
    }
}

/// See [`Outcome::artifact_path`].
pub fn artifact_path(base: &Path, path: &Path) -> String {
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    let mut clean = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if clean.file_name().is_some() => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    if clean.is_absolute()
        && let Some(relative) =
            std::env::current_dir().ok().and_then(|cwd| clean.strip_prefix(cwd).ok().map(Path::to_path_buf))
    {
        clean = relative;
    }
    let parts: Vec<String> = clean.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    match clean.is_absolute() {
        true => format!("/{}", parts[1..].join("/")),
        false => parts.join("/"),
    }
}

/// The JSON Schemas of the output documents, as committed under `schemas/` (`kix schema NAME`).
pub fn output_schema(name: &str) -> Option<&'static str> {
    Some(match name {
        "build" => include_str!("../../schemas/build.schema.json"),
        "check" => include_str!("../../schemas/check.schema.json"),
        "verify" => include_str!("../../schemas/verify.schema.json"),
        "lint" => include_str!("../../schemas/lint.schema.json"),
        "explain" => include_str!("../../schemas/explain.schema.json"),
        "schedule" => include_str!("../../schemas/schedule.schema.json"),
        "simulate" => include_str!("../../schemas/simulate.schema.json"),
        "capacity" => include_str!("../../schemas/capacity.schema.json"),
        "audit" => include_str!("../../schemas/audit.schema.json"),
        "admission" => include_str!("../../schemas/admission.schema.json"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_paths_are_relative_with_slashes() {
        assert_eq!(artifact_path(Path::new("."), Path::new("clusters/prod.toml")), "clusters/prod.toml");
        assert_eq!(artifact_path(Path::new("deploy"), Path::new("packages/web/a.yaml")), "deploy/packages/web/a.yaml");
        assert_eq!(artifact_path(Path::new("./deploy/"), Path::new("./clusters/x.toml")), "deploy/clusters/x.toml");
        assert_eq!(artifact_path(Path::new("a/.."), Path::new("x.yaml")), "x.yaml");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(artifact_path(&cwd.join("deploy"), Path::new("clusters/x.toml")), "deploy/clusters/x.toml");
        assert_eq!(artifact_path(Path::new("."), Path::new("/elsewhere/x.yaml")), "/elsewhere/x.yaml");
    }
}
