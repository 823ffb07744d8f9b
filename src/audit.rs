//! `kix audit --state SNAPSHOT` (issue 23): the cluster as it runs, judged against each compiled
//! workload's level, with the remedy proven on the scheduler model.
//!
//! `kix verify --state` replaces the verified workloads' pods with a fresh simulated rollout: it
//! proves what a new placement would do. Audit keeps the pods where they are bound now (a
//! snapshot as `kubectl get nodes,pods,pdb,deploy,sts,rs -A -o yaml` prints it, read by the
//! model's one snapshot reader, as verify reads it) and asks whether today's placement survives
//! the level's worst domain loss; the judging is `kix_sim::audit_workloads`. This file is the edge:
//! plans to audit requests, the report and its text.

use crate::compile::{Compiled, Selection, UsageError, cluster_names, compile_keeping_model};
use crate::derive::{ClusterPlan, InstancePlan};
use crate::load::package::Survive;
use crate::resolve::Acknowledged;
use kix_diag::Diagnostics;
use kix_sim::{AuditRequest, AuditWorkload, State, WorkloadAudit, audit_workloads};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `kix audit`: what to compile and the snapshot to audit.
#[derive(Clone, Debug)]
pub struct AuditRunRequest {
    pub selection: Selection,
    pub state: PathBuf,
}

/// What an audit found: the compile's diagnostics, and the report when it got that far.
#[derive(Debug)]
pub struct Audited {
    pub diagnostics: Diagnostics,
    /// `None` when the compile or the snapshot failed (see the diagnostics).
    pub report: Option<AuditReport>,
}

/// The audit of one cluster (the JSON of `kix audit --format json`, schemas/audit.schema.json).
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    pub cluster: String,
    pub nodes: usize,
    pub pods: usize,
    pub instances: Vec<InstanceAudit>,
}

#[derive(Clone, Debug, Serialize)]
pub struct InstanceAudit {
    pub instance: String,
    pub namespace: String,
    pub workloads: Vec<WorkloadAudit>,
}

impl AuditReport {
    /// Workloads whose running placement fails their level.
    pub fn failures(&self) -> usize {
        self.instances.iter().flat_map(|i| &i.workloads).filter(|w| w.fails).count()
    }
}

/// Compiles the selection (one cluster), reads the snapshot and audits every compiled workload.
pub fn run(request: &AuditRunRequest) -> Result<Audited, UsageError> {
    let (model, Compiled { clusters, mut diagnostics }) = compile_keeping_model(&request.selection);
    if diagnostics.has_errors() {
        return Ok(Audited { diagnostics, report: None });
    }
    if clusters.len() != 1 {
        return Err(UsageError::StateNeedsOneCluster { clusters: cluster_names(&clusters) });
    }
    let state = match kix_sim::read_state(&request.state) {
        Ok(state) => state,
        Err(problems) => {
            diagnostics.extend(Diagnostics::from(problems));
            return Ok(Audited { diagnostics, report: None });
        }
    };
    let report = audit(&clusters[0], &state);
    let acknowledged = Acknowledged::of(&model);
    diagnostics.settle(|d| acknowledged.contains(d), request.selection.deny_warnings);
    Ok(Audited { diagnostics, report: Some(report) })
}

/// Audits every instance of a cluster on the snapshot.
pub fn audit(cluster: &ClusterPlan, state: &State) -> AuditReport {
    let instances = cluster.instances.iter().map(|instance| audit_instance(cluster, instance, state)).collect();
    AuditReport { cluster: cluster.name.clone(), nodes: state.nodes.len(), pods: state.pods.len(), instances }
}

fn audit_instance(cluster: &ClusterPlan, instance: &InstancePlan, state: &State) -> InstanceAudit {
    let request = AuditRequest {
        workloads: instance
            .workloads
            .iter()
            .filter(|w| !w.scaled_to_zero)
            .map(|w| AuditWorkload {
                kind: w.kind,
                namespace: instance.namespace.clone(),
                name: w.name.clone(),
                level: w.level,
                survive: match w.survive {
                    Survive::One => kix_sim::Survive::One,
                    Survive::Majority => kix_sim::Survive::Majority,
                },
                group: w.group.clone().zip(w.spread_selector.clone()),
            })
            .collect(),
        node_key: cluster.domains.node.clone(),
        zone_key: cluster.domains.zone.clone(),
    };
    let mut workloads = audit_workloads(state, instance.objects(), &request);
    // Drifted pods run a template without kix's constraints: the remedy is applying the output,
    // which rolls the workload out with the compiled template (what the model simulated).
    for w in &mut workloads {
        if let (Some(remedy), false) = (w.remedy.as_mut(), w.drift.is_empty()) {
            remedy.commands.insert(0, format!("kubectl apply -f out/{}/{}.yaml", cluster.name, instance.name));
        }
    }
    InstanceAudit { instance: instance.name.clone(), namespace: instance.namespace.clone(), workloads }
}

/// The text report: per workload its pods, spreads, survival, drift, budgets and remedy.
pub fn render_text(report: &AuditReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "cluster {} ({} nodes, {} pods in the snapshot)", report.cluster, report.nodes, report.pods);
    let mut audited = 0;
    for instance in &report.instances {
        for w in &instance.workloads {
            let subject = format!("{}/{} {}/{}", report.cluster, instance.instance, w.kind, w.name);
            if w.absent {
                let _ = writeln!(out, "  {subject}: no pods in the snapshot (not deployed): not audited");
                continue;
            }
            audited += 1;
            let verdict = if w.fails { format!("FAILS {}", w.level) } else { format!("meets {}", w.level) };
            let _ = writeln!(out, "  {subject}: level {}, {} replicas: {verdict}", w.level, w.replicas);
            let p = &w.pods;
            let _ = writeln!(
                out,
                "    pods: {} running of {}; {} pending, {} not ready, {} terminating",
                p.running,
                p.total,
                p.pending.len(),
                p.not_ready.len(),
                p.terminating.len()
            );
            for (label, names) in
                [("pending", &p.pending), ("not ready", &p.not_ready), ("terminating", &p.terminating)]
            {
                if !names.is_empty() {
                    let _ = writeln!(out, "      {label}: {}", names.join(", "));
                }
            }
            for s in &w.spreads {
                let counts: Vec<String> = s.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
                let _ = writeln!(
                    out,
                    "    spread {} ({}, maxSkew {}): {}; skew {}{}",
                    s.topology_key,
                    s.when_unsatisfiable,
                    s.max_skew,
                    if counts.len() > 12 { format!("{} domains", counts.len()) } else { counts.join(" ") },
                    s.skew,
                    if s.violated { " > maxSkew: VIOLATED" } else { "" }
                );
            }
            if let Some(s) = &w.survival {
                let _ = writeln!(out, "    worst {} loss: {}: {}", s.topology_key, s.worst_domain, survival_words(s));
            }
            if !w.drift.is_empty() {
                let _ = writeln!(
                    out,
                    "    drift: {} pod(s) lack the constraints kix compiles (output not applied, or changed in the cluster): {}",
                    w.drift.len(),
                    w.drift.join(", ")
                );
            }
            for budget in &w.blocked_budgets {
                let _ = writeln!(out, "    budget {budget}: disruptionsAllowed 0, a drain stops here");
            }
            if let Some(r) = &w.remedy {
                let counts: Vec<String> = r.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
                let _ = writeln!(
                    out,
                    "    remedy (simulated rollout of the compiled template): ends {}{}; {}",
                    if counts.is_empty() { "with no pods running".to_string() } else { counts.join(" ") },
                    if r.pending > 0 { format!(", {} pending", r.pending) } else { String::new() },
                    match &r.survival {
                        Some(s) if r.pending > 0 => format!(
                            "still FAILS: the rollout stalls with {} pod(s) Pending (as placed, {} loss: {})",
                            r.pending,
                            s.worst_domain,
                            survival_words(s)
                        ),
                        Some(s) if r.survives => format!("survives ({} loss: {})", s.worst_domain, survival_words(s)),
                        Some(s) => format!("still FAILS ({} loss: {})", s.worst_domain, survival_words(s)),
                        None if r.survives => "survives".to_string(),
                        None => "still FAILS".to_string(),
                    }
                );
                for command in &r.commands {
                    let _ = writeln!(out, "      $ {command}");
                }
                for alternative in &r.otherwise {
                    let _ = writeln!(out, "      what would: {alternative}");
                }
            }
        }
    }
    let failures = report.failures();
    let _ = writeln!(
        out,
        "\nkix audit: {audited} workload(s) audited, {failures} fail their level as placed now{}",
        if failures == 0 { "" } else { " (see remedies)" }
    );
    out
}

fn survival_words(s: &kix_sim::Survival) -> String {
    let need = if s.required == 1 { "one".to_string() } else { format!("a majority, {}", s.required) };
    format!(
        "{} of {} left running, {} needed: {}",
        s.running_after,
        s.of,
        need,
        if s.survives { "survives" } else { "FAILS" }
    )
}
