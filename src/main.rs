//! The `kix` binary: parse the command line, run it, exit with its status.

use clap::{CommandFactory, Parser};

fn main() -> std::process::ExitCode {
    // `COMPLETE=<shell> kix ...`: the shell asking for completions (see `kix completions`).
    clap_complete::CompleteEnv::with_factory(kix::cli::Cli::command).complete();
    kix::run(kix::cli::Cli::parse())
}
