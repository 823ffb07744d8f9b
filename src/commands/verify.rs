//! `kix verify`: the compiled clusters proven on the scheduler model; the verdict tables, the
//! findings, the JUnit suites and the HTML report.

use super::output::{finish, outcome, print_stdout, stdout_width, unsupported, usage_error};
use crate::cli::Format;
use crate::cli::VerifyArgs;
use kix_diag::{Code, Diagnostic, Location};
use kix_engines::verify;
use std::process::ExitCode;

/// `kix verify`: exit 1 when a workload misses its level.
pub fn verify(args: &VerifyArgs) -> ExitCode {
    let format = args.select.format;
    if let Some(refused) = unsupported(format, "verify", &[Format::Sarif, Format::Junit, Format::Github]) {
        return refused;
    }
    let request = verify::VerifyRequest {
        selection: args.select.selection(),
        state: args.state.clone(),
        require_nodes: args.require_nodes,
    };
    let mut verified = match verify::run(&request) {
        Ok(verified) => verified,
        Err(usage) => return usage_error(&usage.to_string()),
    };
    // `--report`: the HTML page, when the verify got as far as reports.
    if let (Some(path), Some(reports)) = (&args.report, &verified.reports)
        && let Err(error) = write_report(path, &crate::report_html::render_html(reports))
    {
        verified.diagnostics.push(
            Diagnostic::new(Code::WriteFailed, format!("cannot write the report {}: {error}", path.display()))
                .at(Location::file(path.clone())),
        );
    }
    // In a terminal (stdout and stderr one screen) each finding is shown once: the diagnostics on stderr
    // locate it at its cause, and the report counts them. Redirected, stdout holds the whole report
    // (findings and notes) and stderr the located diagnostics, so a pipeline reading either gets all of it.
    if let (Some(reports), Format::Text) = (&verified.reports, format) {
        use std::io::IsTerminal;
        let shown = match std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
            true => crate::text::verify::Findings::Below,
            false => crate::text::verify::Findings::Listed,
        };
        print_stdout(&crate::text::verify::render_text(reports, stdout_width(), shown));
    }
    let mut outcome = outcome("verify", &verified.diagnostics, request.selection.root.clone());
    // Only `--format json` prints the report's JSON (`Outcome::document`); building it for the other forms
    // cost most of a 10,000-node verify's fresh memory pages (docs/performance.md, issue 20).
    if format == Format::Json {
        outcome.report.insert("clusters".into(), serde_json::to_value(&verified.reports).unwrap_or_default());
    }
    outcome.notes = verified.notes.clone();
    // Every workload that misses its level has an error diagnostic (K0623 at least); said again in case.
    let failures = verified.failures();
    if failures > 0 && !verified.diagnostics.has_errors() {
        outcome.failed =
            Some(format!("{} their level", kix_diag::words::counted(failures, "workload misses", "workloads miss")));
    }
    finish(&outcome, format, None, &crate::formats::verify_junit::junit(&verified))
}

/// Writes the report beside its place and renames it there, so a reader never sees half a page.
fn write_report(path: &std::path::Path, html: &str) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut staged = std::ffi::OsString::from(".");
    staged.push(name);
    staged.push(".kix-tmp");
    let staged = path.with_file_name(staged);
    std::fs::write(&staged, html)?;
    std::fs::rename(&staged, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&staged);
    })
}
