//! `kix capacity`: what each level costs and what is left after the worst loss.

use super::output::{print_stdout, report, stdout_width, unsupported, usage_error};
use crate::cli::CapacityArgs;
use crate::cli::Format;
use std::process::ExitCode;

/// `kix capacity`: the report on stdout, the compile's warnings on stderr.
pub fn capacity(args: &CapacityArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.select.format, "capacity", &[]) {
        return refused;
    }
    use kix_engines::capacity::{CapacityError, CapacityRequest};
    let request = CapacityRequest { selection: args.select.selection(), instance: args.instance.clone() };
    match kix_engines::capacity::capacity(&request) {
        Ok(report) => {
            print_stdout(&match args.select.format {
                Format::Text => crate::text::capacity::render_text(&report, stdout_width()),
                _ => format!(
                    "{}\n",
                    serde_json::to_string_pretty(&report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
                ),
            });
            ExitCode::SUCCESS
        }
        Err(CapacityError::Compile(diagnostics)) => report(&diagnostics, args.select.format, None),
        Err(CapacityError::Unknown(message)) => usage_error(&message),
    }
}
