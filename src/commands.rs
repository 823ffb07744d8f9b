//! The commands: the one place that turns a parsed command line into typed
//! requests for the library, prints what comes back (reports on stdout,
//! diagnostics on stderr) and picks the exit status.
//!
//! Exit status: 0 success (warnings allowed), 1 findings or failure, 2 bad
//! usage (clap's own convention, kept for usage errors kix finds itself).

use crate::build_report::{differences_json, render_differences, summary_json, summary_text};
use crate::cli::{
    AuditArgs, BuildArgs, CapacityArgs, Cli, Command, ExplainArgs, Format, LintArgs, SelectArgs, VerifyArgs,
};
use crate::compile::{self, BuildRequest, Output, Selection};
use crate::formats::{Outcome, github, junit, sarif};
use crate::{audit, explain, lint, verify};
use kix_diag::{Code, Diagnostics, Style};
use kix_sim as sim;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// The conventions every command shares (`-q/--quiet`, `--color`), set once per process by [`run`].
#[derive(Clone, Copy, Debug)]
struct Conventions {
    quiet: bool,
    style: Style,
}

static CONVENTIONS: std::sync::OnceLock<Conventions> = std::sync::OnceLock::new();

fn conventions() -> Conventions {
    *CONVENTIONS.get_or_init(|| Conventions { quiet: false, style: Style::for_stderr() })
}

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
        Command::Build(args) => build(&args),
        Command::Check(args) => check(&args),
        Command::Verify(args) => verify(&args),
        Command::Audit(args) => audit(&args),
        Command::Schedule(args) => {
            if let Some(refused) = unsupported(args.format, "schedule", &[]) {
                return refused;
            }
            let report = sim::schedule(&sim::ScheduleRequest { state: args.state, pod: args.pod });
            let json = args.format == Format::Json;
            // A pod left Pending is a finding: exit 1, as verify does for a workload that misses its level.
            // The report holds the 5,000-node model it was computed on: left to the process exit.
            let report = report.map(exiting);
            let report = report.map(|r| (if json { r.to_json() } else { r.to_text() }, r.selected.is_none()));
            finish_report(report, args.format, "schedule", "no node fits the pod")
        }
        Command::Simulate(args) => {
            if let Some(refused) = unsupported(args.format, "simulate", &[]) {
                return refused;
            }
            let report = sim::simulate(&sim::SimulateRequest { state: args.state, manifests: args.manifests });
            let json = args.format == Format::Json;
            // The report holds the 5,000-node model it was computed on: left to the process exit.
            let report = report.map(exiting);
            let report = report.map(|r| (if json { r.to_json() } else { r.to_text() }, r.pending() > 0));
            finish_report(report, args.format, "simulate", "pods left Pending")
        }
        Command::Lint(args) => lint(&args),
        Command::Capacity(args) => capacity(&args),
        Command::Explain(args) => {
            if let Some(refused) = unsupported(args.format, "explain", &[]) {
                return refused;
            }
            match (&args.cluster, &args.instance) {
                (Some(cluster), Some(instance)) => explain_instance(&args, cluster, instance),
                _ => explain(args.code.as_deref(), args.format),
            }
        }
        Command::Init(command) => {
            let request = match command {
                crate::cli::InitCommand::Package { dir } => crate::init::InitRequest::Package { dir },
                crate::cli::InitCommand::Cluster { name, from_state, root } => crate::init::InitRequest::Cluster {
                    root: root.unwrap_or_else(|| compile::find_root(Path::new("."))),
                    name,
                    from_state,
                },
            };
            match crate::init::init(&request) {
                Ok(paths) => {
                    if !conventions().quiet {
                        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                        let _ = writeln!(std::io::stderr(), "kix: wrote {}", paths.join(", "));
                    }
                    ExitCode::SUCCESS
                }
                Err(diagnostics) => report(&diagnostics, Format::Text, None),
            }
        }
        Command::Schema { file } => {
            use clap::ValueEnum;
            let name = file.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default();
            match crate::formats::output_schema(&name) {
                Some(schema) => print_stdout(schema),
                None => print_stdout(&crate::load::schema(file == crate::cli::SchemaFile::Cluster)),
            }
            ExitCode::SUCCESS
        }
        Command::Man { command, out } => man(&command, out.as_deref()),
        Command::Completions { shell } => {
            print_stdout(&crate::completion::registration(shell));
            ExitCode::SUCCESS
        }
    }
}

/// `kix man [COMMAND...]` prints one page; `kix man --out DIR` writes them all.
fn man(command: &[String], out: Option<&Path>) -> ExitCode {
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

impl SelectArgs {
    /// The library's view of the selection flags.
    pub fn selection(&self) -> Selection {
        let root = self.root.clone().unwrap_or_else(|| compile::find_root(Path::new(".")));
        Selection { root, clusters: self.clusters.clone(), deny_warnings: self.deny_warnings, what_if: None }
    }
}

/// `kix build`.
fn build(args: &BuildArgs) -> ExitCode {
    let format = args.select.format;
    if let Some(refused) = unsupported(format, "build", &[Format::Sarif, Format::Github]) {
        return refused;
    }
    if args.stdout && format != Format::Text {
        return usage_error(&format!("--format {} prints on stdout, where --stdout writes the stream", format.name()));
    }
    let output = if args.stdout {
        Output::Stream { all: args.all }
    } else if args.check {
        Output::Check(args.out.clone())
    } else {
        Output::Directory(args.out.clone())
    };
    // The summary is shown as the JSON report, or as the table after a build into a directory unless -q.
    let summary = format == Format::Json || (!conventions().quiet && matches!(output, Output::Directory(_)));
    let mut built = match compile::build(&BuildRequest { selection: args.select.selection(), output, summary }) {
        Ok(built) => exiting(built),
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let Some(stream) = &mut built.stream {
        let mut stdout = std::io::stdout().lock();
        let _ = stream.copy_to(&mut stdout);
        let _ = stdout.flush();
    }
    let root = args.select.selection().root;
    let mut outcome = outcome("build", &built.compiled.diagnostics, root.clone());
    // Only the JSON document holds the report: a fleet's summary as JSON values is most of a build's
    // memory (issue 20: 0.57 KB a workload) and a third of a 1,000-cluster rebuild's time, so the other
    // forms do not make it.
    if format == Format::Json {
        outcome.report = summary_json(&built.compiled.clusters);
    }
    if let Some(differences) = built.differences.as_ref().filter(|d| !d.is_empty()) {
        if format == Format::Text {
            print_stdout(&render_differences(differences, args.diff, &root));
        }
        let listed = differences_json(differences, args.diff, &root);
        outcome.report.insert("differences".into(), listed);
        // The summary says why the exit status is 1 when no diagnostic does (issue 21).
        let n = differences.len();
        outcome.failed = Some(format!("{n} file{} out of date", if n == 1 { "" } else { "s" }));
        return finish(&outcome, format, None, &[]);
    }
    if built.differences.is_some() {
        outcome.report.insert("differences".into(), serde_json::Value::Array(Vec::new()));
    }
    if built.written.is_some() && !conventions().quiet && format == Format::Text {
        print_stdout(&summary_text(&built.compiled.clusters, stdout_width()));
    }
    let done = built.written.as_ref().map(|written| {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let shared = match written.shared {
            0 => String::new(),
            n => format!(" and {n} object{} shared by instances ({})", plural(n), crate::derive::SHARED_FILE),
        };
        outcome.report.insert(
            "written".into(),
            serde_json::json!({
                "instances": written.instances, "shared": written.shared, "clusters": written.clusters,
                "directory": written.directory.display().to_string(),
            }),
        );
        format!(
            "wrote {} instance{}{shared} for {} cluster{} to {}",
            written.instances,
            plural(written.instances),
            written.clusters,
            plural(written.clusters),
            written.directory.display()
        )
    });
    finish(&outcome, format, done.as_deref(), &[])
}

/// A compiled fleet the command reads until the process exits, never freed: the process ends right after
/// the command, and the kernel takes its pages back at once, where freeing hundreds of thousands of small
/// allocations one by one cost a sixth of a 10,000-instance build (issue 11, docs/performance.md).
/// `commands` is the terminal edge, run once per process; library callers drop what `compile` returns.
fn exiting<T>(value: T) -> std::mem::ManuallyDrop<T> {
    std::mem::ManuallyDrop::new(value)
}

/// `kix check`.
fn check(args: &SelectArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.format, "check", &[Format::Sarif, Format::Github]) {
        return refused;
    }
    let selection = args.selection();
    // The summary only for the JSON document, which holds it (the other forms print diagnostics only).
    let compiled = exiting(compile::check(&selection, args.format == Format::Json));
    let mut outcome = outcome("check", &compiled.diagnostics, selection.root);
    if args.format == Format::Json {
        outcome.report = summary_json(&compiled.clusters);
    }
    finish(&outcome, args.format, None, &[])
}

/// `kix verify`: exit 1 when a workload misses its level.
fn verify(args: &VerifyArgs) -> ExitCode {
    let format = args.select.format;
    if let Some(refused) = unsupported(format, "verify", &[Format::Sarif, Format::Junit, Format::Github]) {
        return refused;
    }
    let request = verify::VerifyRequest {
        selection: args.select.selection(),
        state: args.state.clone(),
        require_nodes: args.require_nodes,
        report: args.report.clone(),
    };
    let verified = match verify::run(&request) {
        Ok(verified) => verified,
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let (Some(reports), Format::Text) = (&verified.reports, format) {
        print_stdout(&verify::render_text(reports, stdout_width()));
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
        outcome.failed = Some(format!("{failures} workload(s) miss their level"));
    }
    finish(&outcome, format, None, &verify::junit(&verified))
}

/// `kix audit`: exit 1 when a workload's running placement fails its level.
fn audit(args: &AuditArgs) -> ExitCode {
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
            Format::Text => print_stdout(&audit::render_text(report)),
            _ => print_stdout(&format!(
                "{}\n",
                serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
            )),
        }
    }
    let status = report(&audited.diagnostics, args.select.format, None);
    if audited.report.as_ref().is_some_and(|r| r.failures() > 0) { ExitCode::FAILURE } else { status }
}

/// `kix capacity`: the report on stdout, the compile's warnings on stderr.
fn capacity(args: &CapacityArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.select.format, "capacity", &[]) {
        return refused;
    }
    use crate::capacity::{CapacityError, CapacityRequest};
    let request = CapacityRequest { selection: args.select.selection(), instance: args.instance.clone() };
    match crate::capacity::capacity(&request) {
        Ok(report) => {
            print_stdout(&match args.select.format {
                Format::Text => crate::capacity::render_text(&report, stdout_width()),
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

/// `kix lint`: exit 1 when a finding is an error (or a warning, with `--deny-warnings`). `-` reads stdin
/// (once, however often it is named).
fn lint(args: &LintArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.format, "lint", &[Format::Sarif, Format::Junit, Format::Github]) {
        return refused;
    }
    // A lint's memory is bounded by twice its largest input (issue 20): each document's tree is freed as
    // soon as its records are taken, and given back to the OS at once rather than after mimalloc's purge
    // delay, which left the trees of the last second resident at the peak (docs/performance.md).
    kix_alloc::free_at_once();
    let mut stdin = None;
    let mut inputs = Vec::new();
    for path in &args.inputs {
        if path.as_os_str() == "-" {
            if stdin.is_none() {
                let mut text = String::new();
                if let Err(error) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    return usage_error(&format!("cannot read stdin: {error}"));
                }
                stdin = Some(());
                inputs.push(lint::Input::Text { name: "<stdin>".into(), text });
            }
        } else {
            inputs.push(lint::Input::Path(path.clone()));
        }
    }
    let root = args.root.clone().unwrap_or_else(|| compile::find_root(Path::new(".")));
    let request = lint::LintRequest { inputs, cluster: args.cluster.clone(), root, deny_warnings: args.deny_warnings };
    let linted = lint::lint(&request);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let done = format!(
        "linted {} ({}, {}) from {}",
        plural(linted.objects.len(), "object"),
        plural(linted.workloads, "workload"),
        plural(linted.budgets, "PodDisruptionBudget"),
        plural(linted.files, "file")
    );
    // Lint's paths are the inputs' own, relative to the working directory.
    let mut outcome = outcome("lint", &linted.diagnostics, ".".into());
    outcome.report.insert(
        "linted".into(),
        serde_json::json!({
            "files": linted.files, "objects": linted.objects.len(), "workloads": linted.workloads,
            "budgets": linted.budgets,
        }),
    );
    // The JUnit cases hold every finding rendered again: built only when asked for.
    let suites = if args.format == Format::Junit { lint::junit(&linted) } else { Vec::new() };
    finish(&outcome, args.format, Some(&done), &suites)
}

/// An outcome with nothing but its diagnostics yet.
fn outcome<'a>(command: &'static str, diagnostics: &'a Diagnostics, base: std::path::PathBuf) -> Outcome<'a> {
    Outcome { command, diagnostics, report: serde_json::Map::new(), failed: None, notes: Vec::new(), base }
}

/// A usage error (exit 2) when `format` is neither text, json nor one of `more`, the command's other forms.
fn unsupported(format: Format, command: &str, more: &[Format]) -> Option<ExitCode> {
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
fn finish(outcome: &Outcome<'_>, format: Format, done: Option<&str>, suites: &[junit::Suite]) -> ExitCode {
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
fn finish_report(
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
fn report(diagnostics: &Diagnostics, format: Format, done: Option<&str>) -> ExitCode {
    if format == Format::Text {
        print_summarised(diagnostics, done, None);
    } else {
        let lines: String = diagnostics.iter().map(|d| d.to_json() + "\n").collect();
        let _ = std::io::stderr().lock().write_all(lines.as_bytes());
    }
    if diagnostics.has_errors() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// A usage error kix finds itself, printed as clap prints its own.
fn usage_error(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(2)
}

/// The width tables are fitted to: `COLUMNS` when it is a positive number, else the width of the terminal
/// stdout is, else no limit.
fn stdout_width() -> crate::table::Width {
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
fn print_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Prints diagnostics to stderr as rustc-style text, then the line saying what was done and the summary
/// line, with what else failed (`2 files out of date`) at its end.
/// Written as rendered, through one buffer: the report of a large lint is megabytes, not held whole.
fn print_summarised(diagnostics: &Diagnostics, done: Option<&str>, failed: Option<&str>) {
    let Conventions { quiet, style } = conventions();
    let mut stderr = std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr().lock());
    let mut write = || -> std::io::Result<()> {
        for diagnostic in diagnostics.iter() {
            stderr.write_all(diagnostic.render(style).as_bytes())?;
            stderr.write_all(b"\n")?;
        }
        if !quiet {
            if let Some(done) = done {
                writeln!(stderr, "kix: {done}")?;
            }
            match failed {
                Some(failed) => writeln!(stderr, "kix: {}, {failed}", diagnostics.summary())?,
                None => writeln!(stderr, "kix: {}", diagnostics.summary())?,
            }
        }
        stderr.flush()
    };
    let _ = write();
}

/// `kix explain --cluster C --instance I [--workload W]`: the derivation, step by step.
fn explain_instance(args: &ExplainArgs, cluster: &str, instance: &str) -> ExitCode {
    let root = args.root.clone().unwrap_or_else(|| compile::find_root(Path::new(".")));
    let request = explain::ExplainRequest {
        selection: Selection { root, ..Selection::default() },
        cluster: cluster.to_string(),
        instance: instance.to_string(),
        workload: args.workload.clone(),
        level: args.level.as_deref().and_then(kix_kube::level::Level::parse),
    };
    match explain::explain(&request) {
        Ok(derivation) if args.format == Format::Text => {
            print_stdout(&explain::render_text(&derivation));
            ExitCode::SUCCESS
        }
        Ok(derivation) => {
            let root = request.selection.root.clone();
            let mut outcome = outcome("explain", &derivation.diagnostics, root);
            if let Ok(serde_json::Value::Object(report)) = serde_json::to_value(&derivation) {
                outcome.report = report;
            }
            finish(&outcome, args.format, None, &[])
        }
        Err(explain::ExplainError::Compile(diagnostics)) => {
            let root = request.selection.root.clone();
            finish(&outcome("explain", &diagnostics, root), args.format, None, &[])
        }
        Err(explain::ExplainError::Unknown(message)) => usage_error(&message),
    }
}

/// `kix explain [CODE]`: one code's meaning, or the table of all (as JSON, `codes`: each with its id,
/// severity, summary and explanation).
fn explain(code: Option<&str>, format: Format) -> ExitCode {
    let codes: Vec<Code> = match code {
        None => Code::ALL.to_vec(),
        Some(wanted) => match Code::ALL.iter().find(|c| c.id().eq_ignore_ascii_case(wanted)) {
            Some(code) => vec![*code],
            None => return usage_error(&format!("unknown code `{wanted}`; `kix explain` lists them all")),
        },
    };
    if format == Format::Json {
        let listed = codes.iter().map(|code| {
            serde_json::json!({
                "code": code.id(), "severity": code.severity(), "summary": code.summary(),
                "explanation": code.explanation(),
            })
        });
        let none = Diagnostics::default();
        let mut outcome = outcome("explain", &none, ".".into());
        outcome.report.insert("codes".into(), listed.collect());
        return finish(&outcome, format, None, &[]);
    }
    let mut text = String::new();
    match (code, codes.as_slice()) {
        (Some(_), [code]) => text.push_str(&format!(
            "{} ({}): {}\n\n{}\n",
            code.id(),
            code.severity().as_str(),
            code.summary(),
            code.explanation()
        )),
        _ => {
            for code in codes {
                text.push_str(&format!("{}  {:<7}  {}\n", code.id(), code.severity().as_str(), code.summary()));
            }
        }
    }
    print_stdout(&text);
    ExitCode::SUCCESS
}
