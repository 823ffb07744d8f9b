//! `kix admission`: the cluster's compiled admission policies evaluated against a snapshot.

use super::output::{print_stdout, report, unsupported, usage_error};
use crate::cli::{AdmissionArgs, Format};
use kix_engines::admission::dry_run;
use std::process::ExitCode;

/// `kix admission`: exit 1 when the policies would refuse an object of the snapshot (or a kix budget is
/// missing from it), so a pipeline can gate the switch from "warn" to "deny" on it.
pub fn admission(args: &AdmissionArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.select.format, "admission", &[]) {
        return refused;
    }
    let request = dry_run::DryRunRequest { selection: args.select.selection(), state: args.state.clone() };
    let outcome = match dry_run::run(&request) {
        Ok(outcome) => outcome,
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let Some(report) = &outcome.report {
        match args.select.format {
            Format::Text => print_stdout(&crate::text::admission::render_text(report)),
            _ => print_stdout(&format!(
                "{}\n",
                serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
            )),
        }
    }
    let status = report(&outcome.diagnostics, args.select.format, None);
    if outcome.report.as_ref().is_some_and(|r| !r.drifted.is_empty()) { ExitCode::FAILURE } else { status }
}
