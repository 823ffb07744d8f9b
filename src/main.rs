//! The `kix` binary: parse the command line, run it, exit with its status.

use clap::Parser;

fn main() -> std::process::ExitCode {
    kix::run(kix::cli::Cli::parse())
}
