//! The commands: the one place that turns a parsed command line into typed requests for the
//! engines, prints what comes back (reports on stdout, diagnostics on stderr) and picks the exit
//! status. One file per command; this one dispatches and holds what every command shares (the
//! output forms, the summary line, the exit status).
//!
//! Exit status: 0 success (warnings allowed), 1 findings or failure, 2 bad usage (clap's own
//! convention, kept for usage errors kix finds itself).

mod admission;
mod audit;
mod build;
mod capacity;
mod explain;
mod init;
mod lint;
mod man;
mod output;
mod schedule;
mod verify;

use crate::cli::{Cli, Command, SelectArgs};
use kix_compiler::compile::{self, Selection};
use kix_diag::Style;
use std::path::Path;
use std::process::ExitCode;

pub use output::huge_pages;
use output::{CONVENTIONS, Conventions, print_stdout};

/// Runs one command line and returns the process exit status.
pub fn run(cli: Cli) -> ExitCode {
    let choice = match cli.color {
        crate::cli::ColorWhen::Auto => kix_diag::ColorChoice::Auto,
        crate::cli::ColorWhen::Always => kix_diag::ColorChoice::Always,
        crate::cli::ColorWhen::Never => kix_diag::ColorChoice::Never,
    };
    let _ = CONVENTIONS.set(Conventions { quiet: cli.quiet, style: Style::for_stderr_with(choice) });
    // Huge pages stay off for a lint only (`huge_pages`).
    huge_pages(!matches!(cli.command, Command::Lint(_)));
    match cli.command {
        Command::Build(args) => build::build(&args),
        Command::Check(args) => build::check(&args),
        Command::Verify(args) => verify::verify(&args),
        Command::Audit(args) => audit::audit(&args),
        Command::Admission(args) => admission::admission(&args),
        Command::Schedule(args) => schedule::schedule(args),
        Command::Simulate(args) => schedule::simulate(args),
        Command::Lint(args) => lint::lint(&args),
        Command::Capacity(args) => capacity::capacity(&args),
        Command::Explain(args) => explain::explain(&args),
        Command::Init(command) => init::init(command),
        Command::Schema { file } => {
            use clap::ValueEnum;
            let name = file.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default();
            match crate::formats::output_schema(&name) {
                Some(schema) => print_stdout(schema),
                None => print_stdout(&kix_compiler::load::schema(file == crate::cli::SchemaFile::Cluster)),
            }
            ExitCode::SUCCESS
        }
        Command::Man { command, out } => man::man(&command, out.as_deref()),
        Command::Completions { shell } => {
            print_stdout(&crate::completion::registration(shell));
            ExitCode::SUCCESS
        }
    }
}

impl SelectArgs {
    /// The library's view of the selection flags.
    pub fn selection(&self) -> Selection {
        let root = self.root.clone().unwrap_or_else(|| compile::find_root(Path::new(".")));
        Selection { root, clusters: self.clusters.clone(), deny_warnings: self.deny_warnings, what_if: None }
    }
}
