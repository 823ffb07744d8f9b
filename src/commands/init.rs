//! `kix init`: a kix.toml from existing manifests, or a cluster file from a snapshot or a template.

use super::output::{conventions, report};
use crate::cli::Format;
use crate::cli::InitCommand;
use kix_compiler::compile;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `kix init package|cluster`: a kix.toml or a cluster file written, and their paths said.
pub fn init(command: InitCommand) -> ExitCode {
    let request = match command {
        crate::cli::InitCommand::Package { dir } => kix_engines::init::InitRequest::Package { dir },
        crate::cli::InitCommand::Cluster { name, from_state, root } => kix_engines::init::InitRequest::Cluster {
            root: root.unwrap_or_else(|| compile::find_root(Path::new("."))),
            name,
            from_state,
        },
    };
    match kix_engines::init::init(&request) {
        Ok(initialized) => {
            if !conventions().quiet {
                let paths: Vec<String> = initialized.written.iter().map(|p| p.display().to_string()).collect();
                let _ = writeln!(std::io::stderr(), "kix: wrote {}", paths.join(", "));
                for note in &initialized.notes {
                    let _ = writeln!(std::io::stderr(), "kix: {note}");
                }
            }
            ExitCode::SUCCESS
        }
        Err(diagnostics) => report(&diagnostics, Format::Text, None),
    }
}
