//! The commands: the one place that turns a parsed command line into typed
//! requests for the library, prints what comes back (reports on stdout,
//! diagnostics on stderr) and picks the exit status.
//!
//! Exit status: 0 success (warnings allowed), 1 findings or failure, 2 bad
//! usage (clap's own convention, kept for usage errors kix finds itself).

use crate::cli::{
    AuditArgs, BuildArgs, CapacityArgs, Cli, Command, ExplainArgs, Format, LintArgs, SelectArgs, VerifyArgs,
};
use crate::compile::{self, BuildRequest, Output, Selection};
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
    match cli.command {
        Command::Build(args) => build(&args),
        Command::Check(args) => check(&args),
        Command::Verify(args) => verify(&args),
        Command::Audit(args) => audit(&args),
        Command::Schedule(args) => {
            let report = sim::schedule(&sim::ScheduleRequest { state: args.state, pod: args.pod });
            let json = args.format == Format::Json;
            // A pod left Pending is a finding: exit 1, as verify does for a workload that misses its level.
            // The report holds the 5,000-node model it was computed on: left to the process exit.
            let report = report.map(exiting);
            let report = report.map(|r| (if json { r.to_json() } else { r.to_text() }, r.selected.is_none()));
            finish_report(report, args.format)
        }
        Command::Simulate(args) => {
            let report = sim::simulate(&sim::SimulateRequest { state: args.state, manifests: args.manifests });
            let json = args.format == Format::Json;
            // The report holds the 5,000-node model it was computed on: left to the process exit.
            let report = report.map(exiting);
            let report = report.map(|r| (if json { r.to_json() } else { r.to_text() }, r.pending() > 0));
            finish_report(report, args.format)
        }
        Command::Lint(args) => lint(&args),
        Command::Capacity(args) => capacity(&args),
        Command::Explain(args) => match (&args.cluster, &args.instance) {
            (Some(cluster), Some(instance)) => explain_instance(&args, cluster, instance),
            _ => explain(args.code.as_deref()),
        },
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
            print_stdout(&crate::load::schema(file == crate::cli::SchemaFile::Cluster));
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
    let output = if args.stdout {
        Output::Stream { all: args.all }
    } else if args.check {
        Output::Check(args.out.clone())
    } else {
        Output::Directory(args.out.clone())
    };
    let mut built = match compile::build(&BuildRequest { selection: args.select.selection(), output }) {
        Ok(built) => exiting(built),
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let Some(stream) = &mut built.stream {
        let mut stdout = std::io::stdout().lock();
        let _ = stream.copy_to(&mut stdout);
        let _ = stdout.flush();
    }
    if let Some(differences) = &built.differences {
        if differences.is_empty() {
            return report(&built.compiled.diagnostics, args.select.format, None);
        }
        let root = args.select.selection().root;
        print_stdout(&render_differences(differences, args.diff, &root));
        // The summary says why the exit status is 1 when no diagnostic does (issue 21).
        let n = differences.len();
        let stale = format!("{n} file{} out of date", if n == 1 { "" } else { "s" });
        print_summarised(&built.compiled.diagnostics, args.select.format, None, Some(&stale));
        return ExitCode::FAILURE;
    }
    if built.written.is_some() && !conventions().quiet {
        print_stdout(&match args.select.format {
            Format::Text => summary_text(&built.compiled.clusters, stdout_width()),
            Format::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(&summary_json(&built.compiled.clusters)).unwrap_or_default()
            ),
        });
    }
    let done = built.written.as_ref().filter(|_| args.select.format == Format::Text).map(|written| {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let shared = match written.shared {
            0 => String::new(),
            n => format!(" and {n} object{} shared by instances ({})", plural(n), crate::derive::SHARED_FILE),
        };
        format!(
            "wrote {} instance{}{shared} for {} cluster{} to {}",
            written.instances,
            plural(written.instances),
            written.clusters,
            plural(written.clusters),
            written.directory.display()
        )
    });
    report(&built.compiled.diagnostics, args.select.format, done.as_deref())
}

/// A compiled fleet the command reads until the process exits, never freed: the process ends right after
/// the command, and the kernel takes its pages back at once, where freeing hundreds of thousands of small
/// allocations one by one cost a sixth of a 10,000-instance build (issue 11, docs/performance.md).
/// `commands` is the terminal edge, run once per process; library callers drop what `compile` returns.
fn exiting<T>(value: T) -> std::mem::ManuallyDrop<T> {
    std::mem::ManuallyDrop::new(value)
}

/// The build summary: per cluster, each instance's package version, requested -> resolved level, the
/// requests its pods take at that level (`kix capacity` has the other levels), and each workload's replicas and whether kix derived a budget for it.
fn summary_text(clusters: &[crate::derive::ClusterPlan], width: crate::table::Width) -> String {
    let mut out = String::new();
    for cluster in clusters {
        out.push_str(&format!("cluster {}\n", cluster.name));
        let mut rows =
            vec![vec!["INSTANCE".to_string(), "PACKAGE".into(), "LEVEL".into(), "REQUESTS".into(), "WORKLOADS".into()]];
        let mut instances: Vec<_> = cluster.instances.iter().collect();
        instances.sort_by(|a, b| a.name.cmp(&b.name));
        for instance in instances {
            let level = if instance.requested == instance.level {
                instance.level.to_string()
            } else {
                format!("{} -> {}", instance.requested, instance.level)
            };
            let workloads: Vec<String> = instance
                .workloads
                .iter()
                .map(|w| {
                    let budget = match &w.group_budget {
                        Some(group) => format!(" +pdb {}", group.name),
                        None if w.derived_pdb => " +pdb".to_string(),
                        None => String::new(),
                    };
                    format!("{} x{}{budget}", w.name, w.replicas)
                })
                .collect();
            rows.push(vec![
                instance.name.clone(),
                format!("{} {}", instance.package, instance.package_version),
                level,
                crate::capacity::requests_text(&crate::capacity::instance_requests(instance)),
                if workloads.is_empty() { "-".into() } else { workloads.join(", ") },
            ]);
        }
        out.push_str(&crate::table::render(&rows, width));
        for shared in &cluster.shared {
            out.push_str(&format!(
                "  shared ({}): {} (instances {})\n",
                crate::derive::SHARED_FILE,
                object_name(&shared.object),
                shared.instances.join(", ")
            ));
        }
    }
    out
}

/// `Kind name` of an emitted object.
fn object_name(object: &kix_yaml::Value) -> String {
    let text = |value: Option<&kix_yaml::Value>| value.and_then(|v| v.as_str()).unwrap_or_default().to_string();
    format!("{} {}", text(object.get("kind")), text(object.get("metadata").and_then(|m| m.get("name"))))
}

/// The build summary as JSON: `{"clusters": [{"cluster", "instances": [{..., "workloads": [...]}]}]}`.
fn summary_json(clusters: &[crate::derive::ClusterPlan]) -> serde_json::Value {
    let cluster = |c: &crate::derive::ClusterPlan| {
        // By name, as the text summary and every report list instances.
        let mut sorted: Vec<&crate::derive::InstancePlan> = c.instances.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let instances: Vec<serde_json::Value> = sorted
            .into_iter()
            .map(|i| {
                let workloads: Vec<serde_json::Value> = i
                    .workloads
                    .iter()
                    .map(|w| {
                        let spread: Vec<&str> = w.spreads.iter().map(|s| s.key.as_str()).collect();
                        serde_json::json!({
                            "kind": w.kind.as_str(), "name": w.name, "level": w.level.as_str(),
                            "replicas": w.replicas, "pdb": w.derived_pdb, "spread": spread,
                            "hard": w.hard_key(), "explicit_placement": w.explicit_placement,
                            "requests": crate::capacity::workload_requests(w),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "instance": i.name, "namespace": i.namespace, "package": i.package,
                    "version": i.package_version, "requested": i.requested.as_str(), "level": i.level.as_str(),
                    "requests": crate::capacity::instance_requests(i), "workloads": workloads,
                })
            })
            .collect();
        let shared: Vec<serde_json::Value> = c
            .shared
            .iter()
            .map(|s| serde_json::json!({ "object": object_name(&s.object), "instances": s.instances }))
            .collect();
        serde_json::json!({ "cluster": c.name, "instances": instances, "shared": shared })
    };
    serde_json::json!({ "clusters": clusters.iter().map(cluster).collect::<Vec<_>>() })
}

/// `kix build --check`'s report: one line per file that differs, and with `diff` a unified diff of each change.
fn render_differences(differences: &[crate::emit::Difference], diff: bool, root: &Path) -> String {
    use crate::emit::Difference;
    let mut out = String::new();
    for difference in differences {
        let path = difference.path().display();
        match difference {
            Difference::Missing { .. } => out.push_str(&format!("missing  {path}\n")),
            Difference::Extra { .. } => out.push_str(&format!("extra    {path} (a build removes it)\n")),
            Difference::Changed { found, written, .. } => {
                out.push_str(&format!("changed  {path}\n"));
                if diff {
                    let text = similar::TextDiff::from_lines(found.as_str(), written.as_str());
                    let path = patch_path(difference.path(), root);
                    let header = (format!("a/{path}"), format!("b/{path}"));
                    out.push_str(&text.unified_diff().context_radius(3).header(&header.0, &header.1).to_string());
                }
            }
        }
    }
    out.push_str(&format!(
        "kix: {} file{} differ from what `kix build` would write; run `kix build` and commit the result\n",
        differences.len(),
        if differences.len() == 1 { "" } else { "s" }
    ));
    out
}

/// A changed file's path in `--diff` headers as `git apply` (run in the kix root) accepts it: relative to
/// the root when the output directory is under it, without `.` components (git refuses `a/./out/...`).
fn patch_path(path: &Path, root: &Path) -> String {
    let clean = |p: &Path| -> std::path::PathBuf {
        p.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
    };
    let path = clean(path);
    let relative = path.strip_prefix(clean(root)).map(Path::to_path_buf).unwrap_or(path);
    relative.display().to_string()
}

/// `kix check`.
fn check(args: &SelectArgs) -> ExitCode {
    let compiled = exiting(compile::compile(&args.selection()));
    report(&compiled.diagnostics, args.format, None)
}

/// `kix verify`: exit 1 when a workload misses its level.
fn verify(args: &VerifyArgs) -> ExitCode {
    let request = verify::VerifyRequest { selection: args.select.selection(), state: args.state.clone() };
    let verified = match verify::run(&request) {
        Ok(verified) => verified,
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let Some(reports) = &verified.reports {
        match args.select.format {
            Format::Text => print_stdout(&verify::render_text(reports, stdout_width())),
            Format::Json => print_stdout(&format!(
                "{}\n",
                serde_json::to_string_pretty(reports).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
            )),
        }
    }
    let status = report(&verified.diagnostics, args.select.format, None);
    if verified.failures() > 0 { ExitCode::FAILURE } else { status }
}

/// `kix audit`: exit 1 when a workload's running placement fails its level.
fn audit(args: &AuditArgs) -> ExitCode {
    let request =
        audit::AuditRunRequest { selection: args.select.selection(), state: args.state.clone(), all: args.all };
    let audited = match audit::run(&request) {
        Ok(audited) => audited,
        Err(usage) => return usage_error(&usage.to_string()),
    };
    if let Some(report) = &audited.report {
        match args.select.format {
            Format::Text => print_stdout(&audit::render_text(report)),
            Format::Json => print_stdout(&format!(
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
    use crate::capacity::{CapacityError, CapacityRequest};
    let request = CapacityRequest { selection: args.select.selection(), instance: args.instance.clone() };
    match crate::capacity::capacity(&request) {
        Ok(report) => {
            print_stdout(&match args.select.format {
                Format::Text => crate::capacity::render_text(&report, stdout_width()),
                Format::Json => format!(
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

/// `kix lint`: exit 1 when a finding is an error. `-` reads stdin (once, however often it is named).
fn lint(args: &LintArgs) -> ExitCode {
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
    let request = lint::LintRequest { inputs, cluster: args.cluster.clone(), root };
    let linted = lint::lint(&request);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let done = format!(
        "linted {} ({}, {}) from {}",
        plural(linted.objects, "object"),
        plural(linted.workloads, "workload"),
        plural(linted.budgets, "PodDisruptionBudget"),
        plural(linted.files, "file")
    );
    report(&linted.diagnostics, args.format, Some(&done))
}

/// Prints a command's report (exit 1 when it says something failed), or its diagnostics when it could not run.
fn finish_report(result: Result<(String, bool), sim::InputError>, format: Format) -> ExitCode {
    match result {
        Ok((report, failed)) => {
            print_stdout(&report);
            if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
        }
        Err(error) => {
            print_diagnostics(&Diagnostics::from(error), format, None);
            ExitCode::FAILURE
        }
    }
}

/// Prints the findings (with a line saying what was done, before the summary) and picks the exit status.
fn report(diagnostics: &Diagnostics, format: Format, done: Option<&str>) -> ExitCode {
    if !diagnostics.is_empty() || format == Format::Text {
        print_diagnostics(diagnostics, format, done);
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

/// Prints diagnostics to stderr: rustc-style text with a summary line, or one JSON object per line.
fn print_diagnostics(diagnostics: &Diagnostics, format: Format, done: Option<&str>) {
    print_summarised(diagnostics, format, done, None);
}

/// [`print_diagnostics`], with what else failed (`2 files out of date`) at the end of the summary line.
fn print_summarised(diagnostics: &Diagnostics, format: Format, done: Option<&str>, failed: Option<&str>) {
    let mut text = String::new();
    match format {
        Format::Text => {
            let Conventions { quiet, style } = conventions();
            for diagnostic in diagnostics.iter() {
                text.push_str(&diagnostic.render(style));
                text.push('\n');
            }
            if !quiet {
                if let Some(done) = done {
                    text.push_str(&format!("kix: {done}\n"));
                }
                match failed {
                    Some(failed) => text.push_str(&format!("kix: {}, {failed}\n", diagnostics.summary())),
                    None => text.push_str(&format!("kix: {}\n", diagnostics.summary())),
                }
            }
        }
        Format::Json => {
            for diagnostic in diagnostics.iter() {
                text.push_str(&diagnostic.to_json());
                text.push('\n');
            }
        }
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
        Ok(derivation) => {
            match args.format {
                Format::Text => print_stdout(&explain::render_text(&derivation)),
                Format::Json => print_stdout(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&derivation).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
                )),
            }
            ExitCode::SUCCESS
        }
        Err(explain::ExplainError::Compile(diagnostics)) => report(&diagnostics, args.format, None),
        Err(explain::ExplainError::Unknown(message)) => usage_error(&message),
    }
}

/// `kix explain [CODE]`: one code's meaning, or the table of all.
fn explain(code: Option<&str>) -> ExitCode {
    match code {
        None => {
            let mut text = String::new();
            for code in Code::ALL {
                text.push_str(&format!("{}  {:<7}  {}\n", code.id(), code.severity().as_str(), code.summary()));
            }
            print_stdout(&text);
            ExitCode::SUCCESS
        }
        Some(wanted) => match Code::ALL.iter().find(|c| c.id().eq_ignore_ascii_case(wanted)) {
            Some(code) => {
                print_stdout(&format!(
                    "{} ({}): {}\n\n{}\n",
                    code.id(),
                    code.severity().as_str(),
                    code.summary(),
                    code.explanation()
                ));
                ExitCode::SUCCESS
            }
            None => usage_error(&format!("unknown code `{wanted}`; `kix explain` lists them all")),
        },
    }
}
