//! `kix verify`: prove each compiled workload meets its resolved level by
//! running the scheduler model's scenarios on the cluster's nodes.
//!
//! For every cluster, the nodes come from `--state` (a snapshot, with its
//! existing pods) or from the cluster file's `[[nodePools]]`; a cluster with
//! neither is reported as not verified (it is not a failure: there is nothing
//! to simulate on). Every instance is checked on a fresh copy of those nodes.

use crate::derive::{ClusterPlan, InstancePlan};
use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::sim::{State, VerifyRequest, WorkloadLevel, WorkloadVerdict, verify_workloads};
use serde::Serialize;
use std::fmt::Write as _;

/// The verdicts for one cluster.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterReport {
    pub cluster: String,
    /// Where the nodes came from: `inventory`, `state`, or `none` (not verified).
    pub nodes_from: String,
    pub nodes: usize,
    pub instances: Vec<InstanceReport>,
}

#[derive(Clone, Debug, Serialize)]
pub struct InstanceReport {
    pub instance: String,
    pub namespace: String,
    pub workloads: Vec<WorkloadVerdict>,
}

impl ClusterReport {
    pub fn failures(&self) -> usize {
        self.instances.iter().flat_map(|i| &i.workloads).filter(|w| !w.meets_level).count()
    }
}

/// Verifies every instance of every cluster.
pub fn verify(clusters: &[ClusterPlan], snapshot: Option<&State>, diagnostics: &mut Diagnostics) -> Vec<ClusterReport> {
    let mut reports = Vec::new();
    for cluster in clusters {
        let (state, nodes_from) = match snapshot {
            Some(state) => (Some(state.clone()), "state"),
            None if cluster.nodes.is_empty() => (None, "none"),
            None => match State::from_objects(cluster.nodes.clone()) {
                Ok(state) => (Some(state), "inventory"),
                Err(why) => {
                    diagnostics.push(Diagnostic::new(
                        Code::InvalidNodePool,
                        format!("cluster `{}`: its node inventory cannot be simulated: {why}", cluster.name),
                    ));
                    (None, "none")
                }
            },
        };
        let nodes = state.as_ref().map_or(0, |s| s.nodes.len());
        let instances = match &state {
            None => Vec::new(),
            Some(state) => cluster.instances.iter().map(|instance| verify_instance(cluster, instance, state)).collect(),
        };
        reports.push(ClusterReport { cluster: cluster.name.clone(), nodes_from: nodes_from.into(), nodes, instances });
    }
    reports
}

fn verify_instance(cluster: &ClusterPlan, instance: &InstancePlan, state: &State) -> InstanceReport {
    let request = VerifyRequest {
        workloads: instance
            .workloads
            .iter()
            .map(|w| WorkloadLevel {
                kind: w.kind.as_str().to_string(),
                namespace: instance.namespace.clone(),
                name: w.name.clone(),
                level: w.level,
            })
            .collect(),
        node_key: cluster.domains.node.clone(),
        zone_key: cluster.domains.zone.clone(),
    };
    InstanceReport {
        instance: instance.name.clone(),
        namespace: instance.namespace.clone(),
        workloads: verify_workloads(state, &instance.objects, &request),
    }
}

/// The text report: one table per cluster, then every finding of a failed scenario.
pub fn render_text(reports: &[ClusterReport]) -> String {
    let mut out = String::new();
    for report in reports {
        let _ = match report.nodes_from.as_str() {
            "none" => writeln!(
                out,
                "cluster {}: not verified (no [[nodePools]] in clusters/{}.toml and no --state)\n",
                report.cluster, report.cluster
            ),
            from => writeln!(
                out,
                "cluster {} ({} node{} from {from})",
                report.cluster,
                report.nodes,
                if report.nodes == 1 { "" } else { "s" }
            ),
        };
        if report.nodes_from == "none" {
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
        let mut findings = Vec::new();
        for instance in &report.instances {
            for w in &instance.workloads {
                let losses = w.domain_losses.len();
                let pending: usize = w.domain_losses.iter().map(|l| l.pending.len()).sum();
                rows.push([
                    instance.instance.clone(),
                    format!("{}/{}", w.kind, w.name),
                    w.level.to_string(),
                    w.replicas.to_string(),
                    w.worst_case_running.map_or("-".into(), |n| format!("{n} of {}", w.replicas)),
                    if losses == 0 {
                        "-".into()
                    } else if pending == 0 {
                        format!("{} scheduled", w.replacements_scheduled)
                    } else {
                        format!("{} scheduled, {pending} pending", w.replacements_scheduled)
                    },
                    if w.meets_level {
                        format!("meets {}", w.level)
                    } else {
                        let failed: Vec<&str> =
                            w.scenarios.iter().filter(|s| !s.pass).map(|s| s.scenario.as_str()).collect();
                        format!("FAILS {} ({})", w.level, failed.join(", "))
                    },
                ]);
                for scenario in w.scenarios.iter().filter(|s| !s.pass) {
                    for finding in &scenario.findings {
                        findings.push(format!(
                            "  {}/{} {}/{}: {}: {finding}",
                            report.cluster, instance.instance, w.kind, w.name, scenario.scenario
                        ));
                    }
                }
            }
        }
        let widths: Vec<usize> = (0..7).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
        for row in &rows {
            let line: Vec<String> = row.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
            let _ = writeln!(out, "  {}", line.join("  ").trim_end());
        }
        if !findings.is_empty() {
            let _ = writeln!(out, "findings:");
            for finding in findings {
                let _ = writeln!(out, "{finding}");
            }
        }
        out.push('\n');
    }
    let failures: usize = reports.iter().map(ClusterReport::failures).sum();
    let verified: usize = reports.iter().flat_map(|r| &r.instances).map(|i| i.workloads.len()).sum();
    let _ = writeln!(
        out,
        "kix verify: {verified} workload(s) checked, {failures} do not meet their level{}",
        if failures == 0 { "" } else { " (see findings)" }
    );
    out
}
