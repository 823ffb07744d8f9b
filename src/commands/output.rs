//! What every command shares at the terminal: the conventions set once per process (`-q`,
//! `--color`), the output forms (a command's outcome as text, JSON, SARIF, JUnit or GitHub
//! annotations), the summary line, the exit status, and stdout written through a closed pipe.

use crate::cli::Format;
use crate::formats::{Outcome, github, junit, sarif};
use kix_diag::{Diagnostics, Style};
use kix_sim as sim;
use std::io::Write;
use std::process::ExitCode;

/// The conventions every command shares (`-q/--quiet`, `--color`), set once per process by [`run`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conventions {
    pub(super) quiet: bool,
    pub(super) style: Style,
}

pub(super) static CONVENTIONS: std::sync::OnceLock<Conventions> = std::sync::OnceLock::new();

pub(crate) fn conventions() -> Conventions {
    *CONVENTIONS.get_or_init(|| Conventions { quiet: false, style: Style::for_stderr() })
}

/// A compiled fleet the command reads until the process exits, never freed: the process ends right after
/// the command, and the kernel takes its pages back at once, where freeing hundreds of thousands of small
/// allocations one by one cost a sixth of a 10,000-instance build (issue 11, docs/performance.md).
/// `commands` is the terminal edge, run once per process; library callers drop what `compile` returns.
pub(crate) fn exiting<T>(value: T) -> std::mem::ManuallyDrop<T> {
    std::mem::ManuallyDrop::new(value)
}

/// Transparent huge pages on or off for the rest of the run (what mimalloc's `MIMALLOC_ALLOW_THP=0`
/// does, process-wide): mimalloc asks for huge pages on its arenas, so every touched 2 MiB is resident
/// whole. The binary turns them off before its first allocation (else the pages the command line is
/// parsed in are huge already: 4 MB of a lint's 10 MB before it reads anything) and back on for every
/// command but `lint`, whose memory is held to the size of its input (issue 20): a build keeps them
/// (`check` on 30,000 instances pays 0.07 s of page faults without them; docs/performance.md, "Lint's
/// memory, second step"). Refused (an old kernel) is harmless.
pub fn huge_pages(on: bool) {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(!on);
    #[cfg(not(target_os = "linux"))]
    let _ = on;
}

/// An outcome with nothing but its diagnostics yet.
pub(crate) fn outcome<'a>(
    command: &'static str,
    diagnostics: &'a Diagnostics,
    base: std::path::PathBuf,
) -> Outcome<'a> {
    Outcome { command, diagnostics, report: serde_json::Map::new(), failed: None, notes: Vec::new(), base }
}

/// A usage error (exit 2) when `format` is neither text, json nor one of `more`, the command's other forms.
pub(crate) fn unsupported(format: Format, command: &str, more: &[Format]) -> Option<ExitCode> {
    let fine = matches!(format, Format::Text | Format::Json) || more.contains(&format);
    (!fine).then(|| {
        let mut takes: Vec<&str> = ["text", "json"].into();
        takes.extend(more.iter().map(|f| f.name()));
        usage_error(&format!("`kix {command}` has no --format {}; it takes {}", format.name(), takes.join(", ")))
    })
}

/// Prints a command's outcome in the chosen form and returns its exit status: the report and diagnostics
/// (text on stderr, or one document on stdout), then on stderr the line saying what was done and the
/// summary, which agrees with the exit status in every form.
pub(crate) fn finish(outcome: &Outcome<'_>, format: Format, done: Option<&str>, suites: &[junit::Suite]) -> ExitCode {
    match format {
        Format::Text => print_summarised(outcome.diagnostics, done, outcome.failed.as_deref()),
        machine => {
            print_stdout(&match machine {
                Format::Sarif => sarif::render(outcome),
                Format::Github => github::render(outcome),
                Format::Junit => junit::render(&format!("kix {}", outcome.command), suites),
                _ => outcome.document(),
            });
            if !conventions().quiet {
                let done = done.map(|done| format!("kix: {done}\n")).unwrap_or_default();
                let _ = writeln!(std::io::stderr().lock(), "{done}kix: {}", outcome.summary_text());
            }
        }
    }
    if outcome.fails() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// Prints `schedule`'s or `simulate`'s report (exit 1 when it says something failed: `failed` says what), or its
/// diagnostics when it could not run.
pub(crate) fn finish_report(
    result: Result<(String, bool), sim::InputError>,
    format: Format,
    command: &'static str,
    failed: &str,
) -> ExitCode {
    let (text, diagnostics, report_failed) = match result {
        Ok((report, report_failed)) => (Some(report), Diagnostics::default(), report_failed),
        Err(error) => (None, Diagnostics::from(error), false),
    };
    if format == Format::Text {
        return match text {
            Some(report) => {
                print_stdout(&report);
                if report_failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
            }
            None => {
                print_summarised(&diagnostics, None, None);
                ExitCode::FAILURE
            }
        };
    }
    let mut outcome = outcome(command, &diagnostics, ".".into());
    if let Some(serde_json::Value::Object(report)) = text.as_deref().and_then(|t| serde_json::from_str(t).ok()) {
        outcome.report = report;
    }
    outcome.failed = report_failed.then(|| failed.to_string());
    finish(&outcome, format, None, &[])
}

/// Prints the findings and picks the exit status (`init`, and `capacity` and `audit`, whose JSON reports
/// keep their committed shape: their diagnostics go to stderr, one JSON object per line).
pub(crate) fn report(diagnostics: &Diagnostics, format: Format, done: Option<&str>) -> ExitCode {
    if format == Format::Text {
        print_summarised(diagnostics, done, None);
    } else {
        let lines: String = diagnostics.causes().iter().map(|c| c.to_json_value().to_string() + "\n").collect();
        let _ = std::io::stderr().lock().write_all(lines.as_bytes());
    }
    if diagnostics.has_errors() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// A usage error kix finds itself, printed as clap prints its own.
pub(crate) fn usage_error(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(2)
}

/// The width tables are fitted to: `COLUMNS` when it is a positive number, else the width of the terminal
/// stdout is, else no limit.
pub(crate) fn stdout_width() -> crate::table::Width {
    use crate::table::Width;
    if let Some(columns) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()) {
        if columns > 0 {
            return Width(Some(columns));
        }
    }
    use std::io::IsTerminal;
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return Width::UNLIMITED;
    }
    match rustix::termios::tcgetwinsize(&stdout) {
        Ok(size) if size.ws_col > 0 => Width(Some(usize::from(size.ws_col))),
        _ => Width::UNLIMITED,
    }
}

/// Writes to stdout, ignoring a closed pipe (`kix build --stdout | head`).
pub(crate) fn print_stdout(text: &str) {
    print_stdout_parts(&[text]);
}

/// Prints texts one after the other on stdout, as one text would print.
pub(crate) fn print_stdout_parts(parts: &[impl AsRef<str>]) {
    let mut stdout = std::io::stdout().lock();
    for part in parts {
        if stdout.write_all(part.as_ref().as_bytes()).is_err() {
            break;
        }
    }
    let _ = stdout.flush();
}

/// Prints diagnostics to stderr as rustc-style text, one per cause, then the line saying what was done and the summary
/// line, with what else failed (`2 files out of date`) at its end.
/// Written as rendered, through one buffer: the report of a large lint is megabytes, not held whole.
pub(crate) fn print_summarised(diagnostics: &Diagnostics, done: Option<&str>, failed: Option<&str>) {
    let Conventions { quiet, style } = conventions();
    let mut stderr = std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr().lock());
    let mut write = || -> std::io::Result<()> {
        // One per cause: what differs only by its instance and cluster is said once (issue 42).
        let causes = diagnostics.causes();
        for cause in &causes {
            stderr.write_all(cause.render(style).as_bytes())?;
            stderr.write_all(b"\n")?;
        }
        if !quiet {
            if let Some(done) = done {
                writeln!(stderr, "kix: {done}")?;
            }
            match failed {
                Some(failed) => writeln!(stderr, "kix: {}, {failed}", diagnostics.summary_of(&causes))?,
                None => writeln!(stderr, "kix: {}", diagnostics.summary_of(&causes))?,
            }
        }
        stderr.flush()
    };
    let _ = write();
}
