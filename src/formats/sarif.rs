//! `--format sarif`: the outcome as one SARIF 2.1.0 log (OASIS, the format GitHub code scanning
//! uploads with `github/codeql-action/upload-sarif`, and kube-linter and conftest write).
//!
//! One run; `tool.driver.rules` is kix's codes table ([`Code::ALL`], so a rule's index never depends
//! on what was found), each rule with its summary as `shortDescription`, its `kix explain` text as
//! `fullDescription` and `help` (no `helpUri` or `informationUri`: kix has no public home to point at, and a
//! placeholder address sent code scanning's readers to a repository that is not kix's, issue 41; the help
//! text is whole, and says `kix explain CODE` prints it). Each cause (diagnostics
//! that differ only by their instance and cluster, `kix_diag::Cause`) is one result, its instances said
//! after its message, at its code's level, with a physical location (a relative `artifactLocation.uri`, a
//! `region` with `startLine` and `startColumn`) where it has one and its secondary labels as related
//! locations; a [`Note`] is a result at level `note`. A location naming a whole file is its first line
//! (GitHub code scanning wants a `startLine`); a diagnostic about no file at all (K0502, warnings denied)
//! is a tool execution notification of the invocation, since a result without a location is refused
//! by code scanning.
//! Spec: <https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html>; the schema the tests
//! validate against is `tests/formats/sarif-schema-2.1.0.json`.

use super::{Note, Outcome};
use kix_diag::{Code, Location, Severity};
use serde_json::{Value, json};

/// The SARIF log, pretty-printed, with a final line break.
pub fn render(outcome: &Outcome<'_>) -> String {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code.id(),
                "shortDescription": { "text": code.summary() },
                "fullDescription": { "text": code.explanation() },
                "help": { "text": format!("{}\n\n`kix explain {}` prints this text.", code.explanation(), code.id()) },
                "defaultConfiguration": { "level": level(code.severity()) },
            })
        })
        .collect();
    let causes = outcome.diagnostics.causes();
    let notifications: Vec<Value> = causes
        .iter()
        .map(kix_diag::Cause::diagnostic)
        .filter(|d| d.location().is_none())
        .map(|d| {
            json!({
                "descriptor": { "id": d.code.id() },
                "level": level(d.severity()),
                "message": { "text": d.message },
            })
        })
        .collect();
    let mut results: Vec<Value> = causes
        .iter()
        .filter(|c| c.diagnostic().location().is_some())
        .map(|cause| {
            let diagnostic = cause.diagnostic();
            let mut text = cause.message();
            if let Some(spread) = cause.spread() {
                text.push_str(&format!("\n{spread}"));
            }
            for note in diagnostic.notes() {
                text.push_str(&format!("\nnote: {note}"));
            }
            if let Some(help) = &diagnostic.help {
                text.push_str(&format!("\nhelp: {help}"));
            }
            let mut result =
                result(outcome, diagnostic.code, level(diagnostic.severity()), text, diagnostic.location());
            let related: Vec<Value> = diagnostic
                .secondary()
                .enumerate()
                .filter_map(|(id, (location, label))| {
                    let mut related = physical(outcome, location)?;
                    related["id"] = json!(id);
                    related["message"] = json!({ "text": label });
                    Some(related)
                })
                .collect();
            if !related.is_empty() {
                result["relatedLocations"] = Value::Array(related);
            }
            result
        })
        .collect();
    results.extend(
        outcome
            .notes
            .iter()
            .map(|Note { code, message, location }| result(outcome, *code, "note", message.clone(), location.as_ref())),
    );
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "kix",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": true,
                "exitCode": i32::from(outcome.fails()),
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).expect("a JSON value prints") + "\n"
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn result(outcome: &Outcome<'_>, code: Code, level: &str, text: String, location: Option<&Location>) -> Value {
    let index = Code::ALL.iter().position(|c| *c == code).expect("every code is in the table");
    let mut result = json!({ "ruleId": code.id(), "ruleIndex": index, "level": level, "message": { "text": text } });
    if let Some(physical) = location.and_then(|location| physical(outcome, location)) {
        result["locations"] = json!([physical]);
    }
    result
}

/// A location as SARIF's `location` object: the file relative to the working directory, and the line and
/// column when the location has them.
fn physical(outcome: &Outcome<'_>, location: &Location) -> Option<Value> {
    let path = outcome.artifact_path(location.path());
    if path.is_empty() {
        return None;
    }
    let region = json!({ "startLine": location.line().unwrap_or(1), "startColumn": location.column().unwrap_or(1) });
    // `kix lint -`: the text came from the standard input, not from a file called `<stdin>` (issue 41:
    // percent-encoded as `%3Cstdin%3E` it read as a broken path); SARIF's artifact location then says so.
    if path == "<stdin>" {
        let artifact = json!({ "uri": "stdin", "description": { "text": "the standard input (kix lint -)" } });
        return Some(json!({ "physicalLocation": { "artifactLocation": artifact, "region": region } }));
    }
    let uri = if path.starts_with('/') { format!("file://{}", encode(&path)) } else { encode(&path) };
    Some(json!({ "physicalLocation": { "artifactLocation": { "uri": uri }, "region": region } }))
}

/// A path as a URI reference: every byte outside RFC 3986's unreserved characters and `/` percent-encoded.
fn encode(path: &str) -> String {
    let mut out = String::new();
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_are_percent_encoded() {
        assert_eq!(super::encode("packages/my app/a#1.yaml"), "packages/my%20app/a%231.yaml");
        assert_eq!(super::encode("ü.yaml"), "%C3%BC.yaml");
    }
}
