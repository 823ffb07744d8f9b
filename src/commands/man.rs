//! `kix man`: one man page on stdout, or every page written to a directory.

use super::output::{conventions, print_stdout, usage_error};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `kix man [COMMAND...]` prints one page; `kix man --out DIR` writes them all.
pub fn man(command: &[String], out: Option<&Path>) -> ExitCode {
    let pages = crate::manual::pages(crate::cli::command());
    if let Some(dir) = out {
        for (name, page) in &pages {
            let path = dir.join(name);
            if let Err(error) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, page)) {
                let _ = writeln!(std::io::stderr(), "error: cannot write {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        }
        if !conventions().quiet {
            let _ = writeln!(std::io::stderr(), "kix: wrote {} man pages to {}", pages.len(), dir.display());
        }
        return ExitCode::SUCCESS;
    }
    let wanted = if command.is_empty() { "kix.1".to_string() } else { format!("kix-{}.1", command.join("-")) };
    match pages.iter().find(|(name, _)| *name == wanted) {
        Some((_, page)) => {
            print_stdout(page);
            ExitCode::SUCCESS
        }
        None => usage_error(&format!("no command `{}`; `kix --help` lists them", command.join(" "))),
    }
}
