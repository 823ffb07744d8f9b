//! `kix audit`: a snapshot's pods judged against the compiled levels.

use super::output::{print_stdout, report, unsupported, usage_error};
use crate::cli::AuditArgs;
use crate::cli::Format;
use kix_engines::audit;
use std::process::ExitCode;

/// `kix audit`: exit 1 when a workload's running placement fails its level.
pub fn audit(args: &AuditArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.select.format, "audit", &[]) {
        return refused;
    }
    let request =
        audit::AuditRunRequest { selection: args.select.selection(), state: args.state.clone(), all: args.all };
    let audited = match audit::run(&request) {
        Ok(audited) => audited,
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let Some(report) = &audited.report {
        match args.select.format {
            Format::Text => print_stdout(&crate::text::audit::render_text(report)),
            _ => print_stdout(&format!(
                "{}\n",
                serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
            )),
        }
    }
    let status = report(&audited.diagnostics, args.select.format, None);
    if audited.report.as_ref().is_some_and(|r| r.failures() > 0) { ExitCode::FAILURE } else { status }
}
