//! `kix schedule` and `kix simulate`: typed requests in, typed reports out.
//!
//! The caller (the CLI) builds a request from its arguments and renders the
//! report as text ([`ScheduleReport::to_text`]) or JSON (`to_json`). Files and
//! objects that cannot be read come back as an [`InputError`] (located problems).

use super::cluster::{Cluster, Cycle, Outcome};
use super::input::{InputError, read_located, read_state};
use super::objects::Pod;
use super::snapshot::parse_pod;
use super::workload::Workload;
use kix_kube::kind::WorkloadKind;
use kix_kube::value::str_at;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `kix schedule`: one pod against a state snapshot.
#[derive(Clone, Debug)]
pub struct ScheduleRequest {
    /// Nodes and Pods, as a YAML stream or a v1 List.
    pub state: PathBuf,
    /// A Pod, or a Deployment/StatefulSet whose template is used.
    pub pod: PathBuf,
}

/// `kix simulate`: every workload of the manifests placed in order.
#[derive(Clone, Debug)]
pub struct SimulateRequest {
    pub state: PathBuf,
    pub manifests: Vec<PathBuf>,
}

/// `kix schedule`'s report; its JSON shape is the serialized fields.
#[derive(Debug, Serialize)]
pub struct ScheduleReport {
    pub feasible: Vec<String>,
    pub unschedulable: BTreeMap<String, String>,
    pub scores: BTreeMap<String, i64>,
    pub selected: Option<String>,
    /// `namespace/name` of the pod scheduled.
    #[serde(skip)]
    pub pod: String,
    /// The reference cycle behind the report.
    #[serde(skip)]
    pub cycle: Cycle,
    /// The cluster the report was computed on: see [`SimulateReport`]'s `model`.
    #[serde(skip)]
    model: Option<Box<Cluster>>,
}

/// `kix schedule`: one reference cycle for one pod.
pub fn schedule(request: &ScheduleRequest) -> Result<ScheduleReport, InputError> {
    let state = read_state(&request.state)?;
    let file = read_located(&request.pod)?;
    let objects: Vec<kix_yaml::Value> = file.objects.iter().map(|o| o.value.clone()).collect();
    let err = |(index, m): (Option<usize>, String)| {
        let mut errors = InputError::default();
        match index {
            Some(index) => errors.object(&file, index, m),
            None => errors.file(&request.pod, m),
        }
        errors
    };
    let pod = first_pod(&objects).map_err(err)?;
    let cluster = Cluster::from_state(state);
    let cycle = cluster.cycle(&pod);
    let mut report = ScheduleReport {
        feasible: Vec::new(),
        unschedulable: BTreeMap::new(),
        scores: BTreeMap::new(),
        selected: cycle.selected.clone(),
        pod: format!("{}/{}", pod.namespace, pod.name),
        cycle: Cycle { nodes: BTreeMap::new(), selected: None },
        model: None,
    };
    for (node, outcome) in &cycle.nodes {
        match outcome {
            Outcome::Feasible(s) => {
                report.feasible.push(node.clone());
                report.scores.insert(node.clone(), s.total);
            }
            Outcome::Rejected(r) => {
                report.unschedulable.insert(node.clone(), r.message());
            }
        }
    }
    report.cycle = cycle;
    report.model = Some(Box::new(cluster));
    Ok(report)
}

impl ScheduleReport {
    /// The report as pretty JSON, newline-terminated.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The report as a table of nodes and scores.
    pub fn to_text(&self) -> String {
        let cycle = &self.cycle;
        let mut out = format!("pod {}\n", self.pod);
        let width = cycle.nodes.keys().map(String::len).max().unwrap_or(4).max(4);
        let _ = writeln!(
            out,
            "{:<width$}  {:>5}  {:>6}  {:>8}  {:>6}  {:>4}  {:>8}  result",
            "NODE", "TOTAL", "TAINT", "AFFINITY", "SPREAD", "FIT", "BALANCED"
        );
        for (node, outcome) in &cycle.nodes {
            match outcome {
                Outcome::Feasible(s) => {
                    let mark = if cycle.selected.as_ref() == Some(node) { "selected" } else { "feasible" };
                    let _ = writeln!(
                        out,
                        "{node:<width$}  {:>5}  {:>6}  {:>8}  {:>6}  {:>4}  {:>8}  {mark}",
                        s.total,
                        s.taint_toleration,
                        s.node_affinity,
                        s.pod_topology_spread,
                        s.least_allocated,
                        s.balanced_allocation
                    );
                }
                Outcome::Rejected(r) => {
                    let _ = writeln!(
                        out,
                        "{node:<width$}  {:>5}  {:>6}  {:>8}  {:>6}  {:>4}  {:>8}  {}",
                        "-",
                        "-",
                        "-",
                        "-",
                        "-",
                        "-",
                        r.message()
                    );
                }
            }
        }
        match &cycle.selected {
            Some(node) => {
                let _ = writeln!(out, "selected: {node}");
            }
            None => {
                let _ = writeln!(out, "Pending: {}", cycle.failure_message());
            }
        }
        out
    }
}

/// The first Pod, or a pod of the first `apps` Deployment/StatefulSet; an error names the object's index.
fn first_pod(objects: &[kix_yaml::Value]) -> Result<Pod, (Option<usize>, String)> {
    for (index, object) in objects.iter().enumerate() {
        let at = |e: String| (Some(index), e);
        // A Pod by kind alone, as in state snapshots (hand-written ones often omit `apiVersion: v1`);
        // a workload by group and kind.
        if str_at(object, &["kind"]) == Some("Pod") {
            return parse_pod(object, "default").map_err(at);
        }
        if WorkloadKind::of(object).is_some() {
            let w = Workload::from_object(object, "default")
                .map_err(|e| at(e.to_string()))?
                .ok_or((Some(index), "not a workload".into()))?;
            return Ok(w.pod(&w.pod_spec(0), 0, 0));
        }
    }
    Err((None, "the file holds no Pod, Deployment or StatefulSet".into()))
}

/// One workload's placement in `kix simulate`.
#[derive(Debug, Serialize)]
pub struct Placement {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub replicas: i64,
    /// Pod name to node, for the pods that were bound.
    pub placed: BTreeMap<String, String>,
    /// Per topology key: domain value to the number of the workload's pods there.
    pub domains: BTreeMap<String, BTreeMap<String, usize>>,
    /// Pod name to the scheduler's FailedScheduling message.
    pub pending: BTreeMap<String, String>,
}

/// Places every replica of `workload`, in order, each bound before the next is scheduled.
pub fn place(cluster: &mut Cluster, workload: &Workload) -> Placement {
    let spec = workload.pod_spec(0);
    let mut placement = Placement {
        kind: workload.kind,
        namespace: workload.namespace.clone(),
        name: workload.name.clone(),
        replicas: workload.replicas,
        placed: BTreeMap::new(),
        domains: BTreeMap::new(),
        pending: BTreeMap::new(),
    };
    for index in 0..workload.replicas.max(0) as usize {
        let pod = workload.pod(&spec, 0, index);
        match cluster.select(&pod) {
            Some(node) => {
                placement.placed.insert(pod.name.clone(), node.clone());
                let _ = cluster.bind(pod, &node);
            }
            None => {
                placement.pending.insert(pod.name.clone(), cluster.cycle(&pod).failure_message());
            }
        }
    }
    for key in workload.topology_keys() {
        let mut per_domain = BTreeMap::new();
        for node in cluster.nodes() {
            if let Some(value) = node.labels.get(&key) {
                per_domain.entry(value.clone()).or_insert(0);
            }
        }
        for node in placement.placed.values() {
            let value = cluster.node(node).and_then(|n| n.labels.get(&key)).cloned().unwrap_or_else(|| "(none)".into());
            *per_domain.entry(value).or_insert(0) += 1;
        }
        placement.domains.insert(key, per_domain);
    }
    placement
}

/// `kix simulate`'s report: each workload's placement, in manifest order.
#[derive(Debug)]
pub struct SimulateReport {
    pub workloads: Vec<Placement>,
    /// The cluster (the snapshot's nodes and pods) after every placement, kept with the report so that the command
    /// line can leave them to the process exit (`exiting` in src/commands/output.rs) rather than free a
    /// 5,000-node model piece by piece just before exiting; library callers drop them with the report.
    #[expect(dead_code, reason = "held until the report is dropped, never read")]
    model: Option<Box<Cluster>>,
}

/// `kix simulate`: places every workload of the manifests in order.
pub fn simulate(request: &SimulateRequest) -> Result<SimulateReport, InputError> {
    let state = read_state(&request.state)?;
    let mut workloads = Vec::new();
    let mut errors = InputError::default();
    for path in &request.manifests {
        match read_located(path) {
            Ok(file) => {
                for (index, object) in file.objects.iter().enumerate() {
                    match Workload::from_object(&object.value, "default") {
                        Ok(Some(w)) => workloads.push(w),
                        Ok(None) => {}
                        Err(e) => errors.object(&file, index, e.to_string()),
                    }
                }
            }
            Err(e) => errors.extend(e),
        }
    }
    if workloads.is_empty() && errors.is_empty() {
        errors.no_workloads(&request.manifests);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut cluster = Cluster::from_state(state);
    let workloads = workloads.iter().map(|w| place(&mut cluster, w)).collect();
    Ok(SimulateReport { workloads, model: Some(Box::new(cluster)) })
}

impl SimulateReport {
    /// Pods left Pending, over every workload (the command exits 1 when there are any).
    pub fn pending(&self) -> usize {
        self.workloads.iter().map(|w| w.pending.len()).sum()
    }

    /// The report as pretty JSON (`{"workloads": [...]}`), newline-terminated.
    pub fn to_json(&self) -> String {
        let json = serde_json::json!({ "workloads": self.workloads });
        serde_json::to_string_pretty(&json).unwrap_or_default() + "\n"
    }

    /// One line per workload, then its domains, bound pods and pending pods.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for p in &self.workloads {
            let _ = writeln!(
                out,
                "{} {}/{}: {} of {} replicas placed",
                p.kind,
                p.namespace,
                p.name,
                p.placed.len(),
                p.replicas
            );
            for (key, domains) in &p.domains {
                let parts: Vec<String> = domains.iter().map(|(d, n)| format!("{d}={n}")).collect();
                let _ = writeln!(out, "  {key}: {}", parts.join(" "));
            }
            for (pod, node) in &p.placed {
                let _ = writeln!(out, "  {pod} -> {node}");
            }
            for (pod, reason) in &p.pending {
                let _ = writeln!(out, "  Pending {pod}: {reason}");
            }
        }
        out
    }
}
