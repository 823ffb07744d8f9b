//! `kix audit --state SNAPSHOT` (issue 23): the cluster as it runs, judged against each compiled
//! workload's level, with the remedy proven on the scheduler model.
//!
//! `kix verify --state` replaces the verified workloads' pods with a fresh simulated rollout: it
//! proves what a new placement would do. Audit keeps the pods where they are bound now (a
//! snapshot as `kubectl get nodes,pods,pdb,deploy,sts,rs -A -o yaml` prints it, read by the
//! model's one snapshot reader, as verify reads it) and asks whether today's placement survives
//! the level's worst domain loss; the judging is `kix_sim::audit_workloads`. This file is the edge:
//! plans to audit requests, and the report (its text is the binary's, `src/text/audit.rs`).

use kix_compiler::compile::{Compiled, Selection, UsageError, cluster_names, compile_clusters};
use kix_compiler::derive::{ClusterPlan, InstancePlan};
use kix_diag::Diagnostics;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_kube::value::str_at;
use kix_sim::{AuditRequest, AuditWorkload, State, WorkloadAudit, audit_workloads};
use serde::Serialize;
use std::path::PathBuf;

/// `kix audit`: what to compile and the snapshot to audit.
#[derive(Clone, Debug)]
pub struct AuditRunRequest {
    pub selection: Selection,
    pub state: PathBuf,
    /// Also audit the snapshot's Deployments and StatefulSets kix did not compile (`--all`).
    pub all: bool,
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
    /// With `--all`: the snapshot's workloads kix did not compile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncompiled: Option<UncompiledAudit>,
}

/// The snapshot's Deployments and StatefulSets that no instance of the cluster compiles, each judged
/// with its own spread constraints as written and at the cluster's level (`availability` in the
/// cluster file: the level its operators need; kix resolved no level of its own for them).
#[derive(Clone, Debug, Serialize)]
pub struct UncompiledAudit {
    pub level: Level,
    pub workloads: Vec<WorkloadAudit>,
    /// `Kind namespace/name: reason` for the ones the workload view cannot read.
    pub unread: Vec<String>,
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
        let uncompiled = self.uncompiled.iter().flat_map(|u| &u.workloads);
        self.instances.iter().flat_map(|i| &i.workloads).chain(uncompiled).filter(|w| w.fails).count()
    }
}

/// Compiles the selection (one cluster), reads the snapshot and audits every compiled workload.
pub fn run(request: &AuditRunRequest) -> Result<Audited, UsageError> {
    let Compiled { clusters, mut diagnostics, acknowledged } = compile_clusters(&request.selection);
    if diagnostics.has_errors() {
        return Ok(Audited { diagnostics, report: None });
    }
    if clusters.len() != 1 {
        return Err(UsageError::StateNeedsOneCluster { clusters: cluster_names(clusters.iter().map(|c| &c.plan)) });
    }
    let state = match kix_sim::read_state(&request.state) {
        Ok(state) => state,
        Err(problems) => {
            diagnostics.extend(Diagnostics::from(problems));
            return Ok(Audited { diagnostics, report: None });
        }
    };
    let cluster = &clusters[0];
    let mut report = audit(&cluster.plan, &state);
    if request.all {
        report.uncompiled = Some(audit_uncompiled(&cluster.plan, &state, cluster.resolved.level.value));
    }
    diagnostics.settle(|d| acknowledged.contains(d), request.selection.deny_warnings);
    Ok(Audited { diagnostics, report: Some(report) })
}

/// Audits every instance of a cluster on the snapshot.
pub fn audit(cluster: &ClusterPlan, state: &State) -> AuditReport {
    let mut instances: Vec<InstanceAudit> =
        cluster.instances.iter().map(|instance| audit_instance(cluster, instance, state)).collect();
    // By name, as every report lists instances.
    instances.sort_by(|a, b| a.instance.cmp(&b.instance));
    AuditReport {
        cluster: cluster.name.clone(),
        nodes: state.nodes.len(),
        pods: state.pods.len(),
        instances,
        uncompiled: None,
    }
}

/// `--all`: every Deployment and StatefulSet of the snapshot that no instance compiles (by kind,
/// namespace and name), audited with its own template at `level`, one pod running through the loss.
fn audit_uncompiled(cluster: &ClusterPlan, state: &State, level: Level) -> UncompiledAudit {
    let compiled = |kind: WorkloadKind, namespace: &str, name: &str| {
        cluster
            .instances
            .iter()
            .any(|i| i.namespace == namespace && i.workloads.iter().any(|w| w.kind == kind && w.name == name))
    };
    let mut workloads = Vec::new();
    let mut unread = Vec::new();
    for object in &state.workloads {
        match kix_sim::Workload::from_object(object, "default") {
            Ok(Some(w)) if !compiled(w.kind, &w.namespace, &w.name) => workloads.push(AuditWorkload {
                kind: w.kind,
                namespace: w.namespace,
                name: w.name,
                level,
                survive: kix_kube::level::Survive::One,
                group: None,
            }),
            Ok(_) => {}
            Err(e) => unread.push(format!(
                "{} {}/{}: {e}",
                str_at(object, &["kind"]).unwrap_or_default(),
                str_at(object, &["metadata", "namespace"]).unwrap_or("default"),
                str_at(object, &["metadata", "name"]).unwrap_or_default()
            )),
        }
    }
    let request =
        AuditRequest { workloads, node_key: cluster.domains.node.clone(), zone_key: cluster.domains.zone.clone() };
    let mut workloads = audit_workloads(state, &state.workloads, &request);
    // Pods without their own template's constraints are an older revision: a restart rolls them
    // out with the template as written (the model's remedy leaves the restart out for drift, which
    // for compiled workloads is `kubectl apply` of kix's output).
    for w in &mut workloads {
        if let (Some(remedy), false) = (w.remedy.as_mut(), w.drift.is_empty()) {
            remedy
                .commands
                .insert(0, format!("kubectl -n {} rollout restart {}/{}", w.namespace, lower(w.kind), w.name));
        }
    }
    workloads.sort_by(|a, b| (&a.namespace, &a.name, lower(a.kind)).cmp(&(&b.namespace, &b.name, lower(b.kind))));
    unread.sort();
    UncompiledAudit { level, workloads, unread }
}

fn lower(kind: WorkloadKind) -> &'static str {
    match kind {
        WorkloadKind::StatefulSet => "statefulset",
        WorkloadKind::Rollout => "rollout",
        WorkloadKind::Deployment => "deployment",
        // kubectl reads a kind's name in any case.
        WorkloadKind::Custom(profile) => &profile.kind,
    }
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
                survive: w.survive,
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
