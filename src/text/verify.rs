//! `kix verify`'s text report: one table of verdicts per cluster, then what the scenarios found, each
//! kind in a block of its own and in the order every report of kix keeps (issue 41): the findings of
//! failed scenarios (errors, each with its code), the cluster's warnings, then what fails nothing: the
//! facts behind the failed verdicts (how an update went) and the notes (drains blocked by another
//! workload, which stop the cluster's operators though the workloads pass).

use kix_engines::verify::findings;
use kix_engines::verify::{ClusterReport, NodesFrom};
use kix_sim::{FindingKind, WorkloadVerdict};
use std::fmt::Write as _;

/// Where the findings of failed scenarios are read (issue 41: in a terminal, once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Findings {
    /// Listed in the report (stdout is a file or a pipe: the report is complete on its own).
    Listed,
    /// Only counted, with a pointer: stdout and stderr are one terminal, where the diagnostics below the
    /// report show each finding located at its cause.
    Below,
}

/// The text report: one table per cluster, then every finding of a failed scenario (or, in a terminal,
/// their count: the diagnostics on stderr show them).
pub fn render_text(reports: &[ClusterReport], width: crate::table::Width, shown: Findings) -> String {
    let mut out = String::new();
    for report in reports {
        let _ = match report.nodes_from {
            NodesFrom::None => writeln!(
                out,
                "cluster {}: not verified (no [[nodePools]] in clusters/{}.toml and no --state)\n",
                report.cluster, report.cluster
            ),
            from => writeln!(
                out,
                "cluster {} ({} node{} from {})",
                report.cluster,
                report.nodes,
                kix_diag::words::s(report.nodes),
                from.as_str()
            ),
        };
        if report.nodes_from == NodesFrom::None {
            continue;
        }
        let mut rows = vec![[
            "INSTANCE".to_string(),
            "WORKLOAD".into(),
            "LEVEL".into(),
            "REPLICAS".into(),
            "WORST-CASE RUNNING".into(),
            "REPLACEMENTS".into(),
            "VERDICT".into(),
        ]];
        // Failures of failed scenarios, facts behind them, and blockers of passing ones: never one list.
        let (mut findings, mut facts, mut notes) = (Vec::new(), Vec::new(), Vec::new());
        for instance in &report.instances {
            for w in &instance.workloads {
                rows.push(verdict_row(&instance.instance, w));
                for scenario in &w.scenarios {
                    for finding in &scenario.findings {
                        let at = format!(
                            "  {}/{} {}/{}: {}:",
                            report.cluster, instance.instance, w.kind, w.name, scenario.scenario
                        );
                        match findings::role_in(finding, scenario) {
                            findings::Role::Failure(code) if !scenario.pass => {
                                findings.push(format!("{at} [{}] {finding}", code.id()))
                            }
                            findings::Role::Blocker(code) => notes.push(format!("{at} [{}] {finding}", code.id())),
                            _ if !scenario.pass => facts.push(format!("{at} {finding}")),
                            _ => {}
                        }
                    }
                }
            }
        }
        let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
        out.push_str(&crate::table::render(&rows, width));
        let unverified: Vec<String> = report
            .instances
            .iter()
            .flat_map(|i| {
                i.unverified.iter().map(move |u| format!("  {}/{} {}/{}", report.cluster, i.instance, u.kind, u.name))
            })
            .collect();
        if !unverified.is_empty() {
            let _ = writeln!(
                out,
                "not verified (custom resources whose pods an operator runs; kix does not place them, K0435):"
            );
            for line in unverified {
                let _ = writeln!(out, "{line}");
            }
        }
        let block = |out: &mut String, title: &str, lines: &[String]| {
            if !lines.is_empty() {
                let _ = writeln!(out, "{title}");
                for line in lines {
                    let _ = writeln!(out, "{line}");
                }
            }
        };
        // In a terminal the diagnostics below show each finding, the facts behind it as its notes.
        match shown {
            Findings::Listed => block(&mut out, "findings:", &findings),
            Findings::Below if !findings.is_empty() => {
                let count = kix_diag::words::counted(findings.len(), "finding", "findings");
                let _ = writeln!(out, "{count}: shown below, each where it comes from");
            }
            Findings::Below => {}
        }
        let warnings: Vec<String> =
            report.missing_keys.iter().map(|m| format!("  {}", m.message(&report.cluster))).collect();
        block(&mut out, "warnings:", &warnings);
        if shown == Findings::Listed {
            block(&mut out, "facts behind the failed scenarios:", &facts);
        }
        // No diagnostic says these (they fail nothing): listed in a terminal too.
        block(&mut out, "notes (the workloads pass; these stop the cluster's operators):", &notes);
        out.push('\n');
    }
    let failures: usize = reports.iter().map(ClusterReport::failures).sum();
    let verified: usize = reports.iter().flat_map(|r| &r.instances).map(|i| i.workloads.len()).sum();
    let unverified: usize = reports.iter().flat_map(|r| &r.instances).map(|i| i.unverified.len()).sum();
    let _ = writeln!(
        out,
        "kix verify: {} checked, {}{}{}",
        kix_diag::words::plural(verified, "workload"),
        kix_diag::words::counted(failures, "does not meet its level", "do not meet their level"),
        match (failures, shown) {
            (0, _) => "",
            (_, Findings::Listed) => " (see findings)",
            (_, Findings::Below) => " (see the findings below)",
        },
        if unverified == 0 {
            String::new()
        } else {
            format!(", {} not verified", kix_diag::words::plural(unverified, "custom resource"))
        }
    );
    out
}

/// One row of a cluster's table: instance, workload, level, replicas, worst case, replacements, verdict.
pub fn verdict_row(instance: &str, w: &WorkloadVerdict) -> [String; 7] {
    let losses = w.domain_losses.len();
    let pending: usize = w.domain_losses.iter().map(|l| l.pending.len()).sum();
    [
        instance.to_string(),
        format!("{}/{}", w.kind, w.name),
        w.level.to_string(),
        w.replicas.to_string(),
        w.worst_case_running.map_or("-".into(), |n| {
            let of = w.group_replicas.unwrap_or(w.replicas);
            let group = w.group.as_ref().map_or(String::new(), |g| format!(" (group {g})"));
            match w.majority {
                Some(majority) => format!("{n} of {of}, majority {majority}{group}"),
                None => format!("{n} of {of}{group}"),
            }
        }),
        if losses == 0 { "-".into() } else { replacements_cell(w, pending) },
        if w.meets_level {
            format!("meets {}", w.level)
        } else {
            let failed: Vec<&str> = w.scenarios.iter().filter(|s| !s.pass).map(|s| s.scenario.as_str()).collect();
            format!("FAILS {} ({})", w.level, failed.join(", "))
        },
    ]
}

/// The REPLACEMENTS cell, per domain loss: how many losses, how many replacements each scheduled
/// (`3 losses, 1 each`), after how long (the longest wait for the taint eviction over the losses), and
/// how many stayed Pending or are never replaced, in all.
fn replacements_cell(w: &WorkloadVerdict, pending: usize) -> String {
    // A StatefulSet replaces nothing on a lost node: its pods stay Terminating until force-deleted
    // (the findings and JSON say so per pod); the table says why there is nothing to count.
    let waits = w.scenarios.iter().flat_map(|s| &s.findings).any(|f| f.kind == FindingKind::StaysTerminating);
    if !w.kind.deployment_like() && w.replacements_scheduled == 0 && pending == 0 && waits {
        return "none (force-delete needed)".to_string();
    }
    let losses = w.domain_losses.len();
    let each: Vec<usize> = w.domain_losses.iter().map(|l| l.replacements.len()).collect();
    let (least, most) = (each.iter().min().copied().unwrap_or(0), each.iter().max().copied().unwrap_or(0));
    let mut cell = if losses == 1 {
        format!("1 loss, {most} scheduled")
    } else if least == most {
        format!("{losses} losses, {most} each")
    } else {
        format!("{losses} losses, {least}-{most} each")
    };
    if let Some(gap) = w.domain_losses.iter().filter_map(|l| l.replaced_after_seconds).max().filter(|g| *g > 0) {
        let _ = write!(cell, ", after {gap}s");
    }
    if pending > 0 {
        let _ = write!(cell, ", {pending} pending in all");
    }
    let never: usize = w.domain_losses.iter().map(|l| l.not_replaced.len()).sum();
    if never > 0 {
        let _ = write!(cell, ", {never} never replaced in all");
    }
    cell
}
