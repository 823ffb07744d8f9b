//! `kix schedule` and `kix simulate`: the scheduler model run on a snapshot.

use super::output::finish_report;
use super::output::{exiting, unsupported};
use crate::cli::Format;
use crate::cli::{ScheduleArgs, SimulateArgs};
use kix_sim as sim;
use std::process::ExitCode;

/// `kix schedule`: where one pod would go, and why.
pub fn schedule(args: ScheduleArgs) -> ExitCode {
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

/// `kix simulate`: manifests applied to a snapshot, every pod scheduled.
pub fn simulate(args: SimulateArgs) -> ExitCode {
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
