//! kix: an availability-level policy compiler for Kubernetes.
//!
//! The pipeline reads top to bottom: [`load`] reads cluster files and packages
//! (raw types that remember where they came from), [`resolve`] picks package
//! versions and availability levels, [`derive`] turns levels into replicas,
//! spread constraints and PodDisruptionBudgets, and [`emit`] patches the
//! users' own documents and writes the output directory. [`diag`] is the one
//! diagnostics type every stage reports through; [`sim`] is the scheduler model
//! that `kix verify` uses to prove the result.

pub mod cli;
pub mod compile;
pub mod derive;
pub mod diag;
pub mod emit;
pub mod inventory;
pub mod level;
pub mod load;
pub mod names;
pub mod resolve;
pub mod selector;
pub mod sim;
#[cfg(test)]
pub mod testing;
pub mod validate;
pub mod verify;
pub mod workload;
pub mod yaml;
pub mod yaml_out;

use cli::{Cli, Command, Format};
use diag::{Diagnostics, Style};
use std::io::Write;
use std::process::ExitCode;

/// Runs one command line and returns the process exit status
/// (0 success, 1 findings or failure; clap itself exits 2 on bad usage).
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Build(args) => compile::build_command(&args),
        Command::Check(args) => compile::check_command(&args),
        Command::Verify(args) => compile::verify_command(&args),
        Command::Schedule(args) => {
            let format = args.format;
            finish_report(sim::schedule_command(&args), format)
        }
        Command::Simulate(args) => {
            let format = args.format;
            finish_report(sim::simulate_command(&args), format)
        }
        Command::Explain { code } => explain(code.as_deref()),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "kix", &mut script);
            print_stdout(&String::from_utf8_lossy(&script));
            ExitCode::SUCCESS
        }
    }
}

/// Prints a command's report, or its diagnostics when it failed.
fn finish_report(result: Result<String, Diagnostics>, format: Format) -> ExitCode {
    match result {
        Ok(report) => {
            print_stdout(&report);
            ExitCode::SUCCESS
        }
        Err(diagnostics) => {
            print_diagnostics(&diagnostics, format, None);
            ExitCode::FAILURE
        }
    }
}

/// Writes to stdout, ignoring a closed pipe (`kix build --stdout | head`).
pub(crate) fn print_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Prints diagnostics to stderr: rustc-style text with a summary line, or one JSON object per line.
pub(crate) fn print_diagnostics(diagnostics: &Diagnostics, format: Format, done: Option<&str>) {
    let mut text = String::new();
    match format {
        Format::Text => {
            let style = Style::for_stderr();
            for diagnostic in diagnostics.iter() {
                text.push_str(&diagnostic.render(style));
                text.push('\n');
            }
            if let Some(done) = done {
                text.push_str(&format!("kix: {done}\n"));
            }
            text.push_str(&format!("kix: {}\n", diagnostics.summary()));
        }
        Format::Json => {
            for diagnostic in diagnostics.iter() {
                text.push_str(&diagnostic.to_json().to_string());
                text.push('\n');
            }
        }
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn explain(code: Option<&str>) -> ExitCode {
    use diag::Code;
    match code {
        None => {
            let mut text = String::new();
            for code in Code::ALL {
                text.push_str(&format!(
                    "{}  {:<7}  {}\n",
                    code.id(),
                    format!("{:?}", code.severity()).to_lowercase(),
                    code.summary()
                ));
            }
            print_stdout(&text);
            ExitCode::SUCCESS
        }
        Some(wanted) => match Code::ALL.iter().find(|c| c.id().eq_ignore_ascii_case(wanted)) {
            Some(code) => {
                print_stdout(&format!(
                    "{} ({:?}): {}\n\n{}\n",
                    code.id(),
                    code.severity(),
                    code.summary(),
                    code.explanation()
                ));
                ExitCode::SUCCESS
            }
            None => {
                let _ = writeln!(std::io::stderr(), "error: unknown code `{wanted}`; `kix explain` lists them all");
                ExitCode::from(2)
            }
        },
    }
}
