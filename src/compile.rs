//! The compiler driver: runs load -> resolve -> derive (-> emit) and turns the
//! outcome into an exit status. This is the one place the stage order is visible.

use crate::cli::{BuildArgs, Format, SelectArgs, VerifyArgs};
use crate::derive::{self, ClusterPlan};
use crate::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::{emit, load, print_diagnostics, print_stdout, resolve, verify};
use std::process::ExitCode;

/// Everything a compile produced: plans (complete only when there are no errors) and findings.
pub struct Compiled {
    pub clusters: Vec<ClusterPlan>,
    pub diagnostics: Diagnostics,
}

impl Compiled {
    /// Whether the result may be used: no errors (`--deny-warnings` adds one, K0502, when there are warnings).
    pub fn ok(&self) -> bool {
        !self.diagnostics.has_errors()
    }
}

/// Runs the pipeline over the selected tree.
pub fn compile(select: &SelectArgs) -> Compiled {
    let mut diagnostics = Diagnostics::default();
    let tree = load::load(&select.root, &select.clusters, &mut diagnostics);
    let resolved = resolve::resolve(&tree, &mut diagnostics);
    let clusters = derive::derive(&resolved, &mut diagnostics);
    if select.deny_warnings && diagnostics.count(Severity::Warning) > 0 {
        diagnostics.push(Diagnostic::new(
            Code::WarningsDenied,
            format!("{} warning(s) denied by --deny-warnings", diagnostics.count(Severity::Warning)),
        ));
    }
    diagnostics.finish();
    Compiled { clusters, diagnostics }
}

/// `kix build`.
pub fn build_command(args: &BuildArgs) -> ExitCode {
    let mut compiled = compile(&args.select);
    if compiled.ok() {
        if args.stdout {
            print_stdout(&emit::render_stream(&compiled.clusters));
        } else {
            let out = args.out.clone().unwrap_or_else(|| args.select.root.join("out"));
            let all_clusters = args.select.clusters.is_empty();
            match emit::check_destination(&args.select.root, &out)
                .and_then(|()| emit::write(&out, &compiled.clusters, all_clusters))
            {
                Ok(()) if args.select.format == Format::Text => {
                    let instances: usize = compiled.clusters.iter().map(|c| c.instances.len()).sum();
                    let plural = |n: usize| if n == 1 { "" } else { "s" };
                    let clusters = compiled.clusters.len();
                    let line = format!(
                        "wrote {instances} instance{} for {clusters} cluster{} to {}",
                        plural(instances),
                        plural(clusters),
                        out.display()
                    );
                    return report_with(&compiled.diagnostics, args.select.format, Some(&line));
                }
                Ok(()) => {}
                Err(diagnostic) => compiled.diagnostics.push(diagnostic),
            }
        }
    }
    report(&compiled.diagnostics, args.select.format)
}

/// `kix check`.
pub fn check_command(args: &SelectArgs) -> ExitCode {
    let compiled = compile(args);
    report(&compiled.diagnostics, args.format)
}

/// `kix verify`: compile, then run the scheduler scenarios; exit 1 when a workload misses its level.
pub fn verify_command(args: &VerifyArgs) -> ExitCode {
    let mut compiled = compile(&args.select);
    if !compiled.ok() {
        return report(&compiled.diagnostics, args.select.format);
    }
    if args.state.is_some() && compiled.clusters.len() != 1 {
        let names: Vec<&str> = compiled.clusters.iter().map(|c| c.name.as_str()).collect();
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "error: --state is a snapshot of one cluster: choose it with --cluster (clusters here: {})\n",
                names.join(", ")
            )
            .as_bytes(),
        );
        return ExitCode::from(2);
    }
    let snapshot = match args.state.as_deref().map(crate::sim::input::read_state).transpose() {
        Ok(snapshot) => snapshot,
        Err(problems) => {
            compiled.diagnostics.extend(problems.into());
            return report(&compiled.diagnostics, args.select.format);
        }
    };
    let reports = verify::verify(&compiled.clusters, snapshot.as_ref(), &mut compiled.diagnostics);
    match args.select.format {
        Format::Text => print_stdout(&verify::render_text(&reports)),
        Format::Json => print_stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&reports).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
        )),
    }
    let status = report(&compiled.diagnostics, args.select.format);
    let failures: usize = reports.iter().map(verify::ClusterReport::failures).sum();
    if failures > 0 { ExitCode::FAILURE } else { status }
}

/// Prints the findings and picks the exit status.
fn report(diagnostics: &Diagnostics, format: Format) -> ExitCode {
    report_with(diagnostics, format, None)
}

/// Like [`report`], with a line saying what was done, printed before the summary.
fn report_with(diagnostics: &Diagnostics, format: Format, done: Option<&str>) -> ExitCode {
    if !diagnostics.is_empty() || format == Format::Text {
        print_diagnostics(diagnostics, format, done);
    }
    if diagnostics.has_errors() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
