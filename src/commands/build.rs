//! `kix build` and `kix check`: the compile, its summary table or JSON, and what `--check` found.

use super::output::{
    conventions, exiting, finish, outcome, print_stdout, print_stdout_parts, stdout_width, unsupported, usage_error,
};
use crate::cli::Format;
use crate::cli::{BuildArgs, SelectArgs};
use crate::text::build::{differences_json, render_differences, summary_json, summary_text};
use kix_compiler::compile::{self, BuildRequest, Output};
use std::io::Write;
use std::process::ExitCode;

/// `kix build`.
pub fn build(args: &BuildArgs) -> ExitCode {
    if !args.root_of.is_empty() {
        return check_roots_of(args);
    }
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
    // `--check` in a machine format: each stale file is also a diagnostic at the file (issue 41), so a CI
    // annotation or SARIF result points at it; the text form lists them on stdout instead (once).
    let stale = built.differences.as_ref().filter(|d| !d.is_empty() && format != Format::Text).map(|differences| {
        let mut diagnostics = built.compiled.diagnostics.clone();
        for difference in differences {
            diagnostics.push(stale_file(difference));
        }
        diagnostics
    });
    let diagnostics = stale.as_ref().unwrap_or(&built.compiled.diagnostics);
    let mut outcome = outcome("build", diagnostics, root.clone());
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
        outcome.failed = Some(format!("{n} file{} out of date", kix_diag::words::s(n)));
        return finish(&outcome, format, None, &[]);
    }
    if built.differences.is_some() {
        outcome.report.insert("differences".into(), serde_json::Value::Array(Vec::new()));
    }
    if built.written.is_some() && !conventions().quiet && format == Format::Text {
        print_stdout_parts(&summary_text(&built.compiled.clusters, stdout_width()));
    }
    let done = built.written.as_ref().map(|written| {
        let plural = kix_diag::words::s::<usize>;
        let shared = match written.shared {
            0 => String::new(),
            n => format!(" and {n} object{} shared by instances ({})", plural(n), kix_kube::kix_names::SHARED_FILE),
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

/// `build --check --root-of PATH...`: the check of each distinct kix root the paths are in, in order; the
/// status is the worst of them (issue 41: a pre-commit hook is handed the changed files, and the root may
/// be `deploy/`, not the repository's top).
fn check_roots_of(args: &BuildArgs) -> ExitCode {
    let mut roots: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    for path in &args.root_of {
        let start = if path.is_dir() {
            path.clone()
        } else {
            path.parent().map(std::path::Path::to_path_buf).unwrap_or_default()
        };
        let start = if start.as_os_str().is_empty() { std::path::PathBuf::from(".") } else { start };
        let root = compile::find_root(&start);
        if !root.join("clusters").is_dir() {
            continue;
        }
        let Ok(identity) = root.canonicalize() else { continue };
        if !roots.iter().any(|(_, seen)| *seen == identity) {
            roots.push((root, identity));
        }
    }
    if roots.is_empty() {
        if !conventions().quiet {
            eprintln!(
                "kix: none of the {} paths is in a kix root (a directory holding clusters/): nothing to check",
                args.root_of.len()
            );
        }
        return ExitCode::SUCCESS;
    }
    let mut status = ExitCode::SUCCESS;
    for (root, _) in roots {
        let mut one = args.clone();
        one.root_of.clear();
        one.select.root = Some(root);
        let checked = build(&one);
        if checked != ExitCode::SUCCESS {
            status = checked;
        }
    }
    status
}

/// The diagnostic for one file of the output directory that differs from what a build would write.
fn stale_file(difference: &kix_compiler::emit::Difference) -> kix_diag::Diagnostic {
    use kix_compiler::emit::Difference;
    let path = difference.path();
    let message = match difference {
        Difference::Missing { .. } => format!("{} is missing: `kix build` would write it", path.display()),
        Difference::Changed { .. } => format!("{} differs from what `kix build` would write", path.display()),
        Difference::Extra { .. } => format!("{} is not a file `kix build` writes: a build removes it", path.display()),
    };
    kix_diag::Diagnostic::new(kix_diag::Code::OutputStale, message)
        .at(kix_diag::Location::file(path))
        .help("run `kix build` and commit the result")
}

/// `kix check`.
pub fn check(args: &SelectArgs) -> ExitCode {
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
