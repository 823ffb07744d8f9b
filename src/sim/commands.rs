//! `kix schedule` and `kix simulate`: reports built from the model, returned as strings.

use super::cluster::{Cluster, Outcome};
use super::input::{not_an_object, read_located, read_state};
use super::objects::{Pod, parse_pod};
use super::workload::Workload;
use crate::cli::{Format, ScheduleArgs, SimulateArgs};
use crate::diag::Diagnostics;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `kix schedule`'s JSON shape.
#[derive(Debug, Serialize)]
pub struct ScheduleReport {
    pub feasible: Vec<String>,
    pub unschedulable: BTreeMap<String, String>,
    pub scores: BTreeMap<String, i64>,
    pub selected: Option<String>,
}

/// `kix schedule`: one reference cycle for one pod.
pub fn schedule(args: &ScheduleArgs) -> Result<String, Diagnostics> {
    let state = read_state(&args.state)?;
    let file = read_located(&args.pod)?;
    let objects: Vec<serde_yaml::Value> = file.objects.iter().map(|o| o.value.clone()).collect();
    let err = |(index, m): (Option<usize>, String)| {
        let mut d = Diagnostics::default();
        d.push(match index {
            Some(index) => file.not_an_object(index, m),
            None => not_an_object(&args.pod, m),
        });
        d
    };
    let pod = first_pod(&objects).map_err(err)?;
    let cluster = Cluster::new(&state);
    let cycle = cluster.cycle(&pod);
    let mut report = ScheduleReport {
        feasible: Vec::new(),
        unschedulable: BTreeMap::new(),
        scores: BTreeMap::new(),
        selected: cycle.selected.clone(),
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
    if args.format == Format::Json {
        return Ok(serde_json::to_string_pretty(&report).unwrap_or_default() + "\n");
    }
    let mut out = format!("pod {}/{}\n", pod.namespace, pod.name);
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
    Ok(out)
}

/// The pod to schedule: a Pod, or the first replica of a Deployment/StatefulSet.
/// The first Pod, or a pod of the first Deployment/StatefulSet; an error names the object's index.
fn first_pod(objects: &[serde_yaml::Value]) -> Result<Pod, (Option<usize>, String)> {
    for (index, object) in objects.iter().enumerate() {
        let at = |e: String| (Some(index), e);
        match super::objects::str_at(object, &["kind"]) {
            Some("Pod") => return parse_pod(object, "default").map_err(at),
            Some("Deployment" | "StatefulSet") => {
                let w = Workload::from_object(object, "default")
                    .map_err(at)?
                    .ok_or((Some(index), "not a workload".into()))?;
                return Ok(w.pod(&w.pod_spec(0), 0, 0));
            }
            _ => {}
        }
    }
    Err((None, "the file holds no Pod, Deployment or StatefulSet".into()))
}

/// One workload's placement in `kix simulate`.
#[derive(Debug, Serialize)]
pub struct Placement {
    pub kind: super::workload::Kind,
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

/// `kix simulate`: places every workload of the manifests in order.
pub fn simulate(args: &SimulateArgs) -> Result<String, Diagnostics> {
    let state = read_state(&args.state)?;
    let mut workloads = Vec::new();
    let mut diagnostics = Diagnostics::default();
    for path in &args.manifests {
        match read_located(path) {
            Ok(file) => {
                for (index, object) in file.objects.iter().enumerate() {
                    match Workload::from_object(&object.value, "default") {
                        Ok(Some(w)) => workloads.push(w),
                        Ok(None) => {}
                        Err(e) => diagnostics.push(file.not_an_object(index, e)),
                    }
                }
            }
            Err(d) => diagnostics.extend(d),
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let mut cluster = Cluster::new(&state);
    let placements: Vec<Placement> = workloads.iter().map(|w| place(&mut cluster, w)).collect();
    if args.format == Format::Json {
        let json = serde_json::json!({ "workloads": placements });
        return Ok(serde_json::to_string_pretty(&json).unwrap_or_default() + "\n");
    }
    let mut out = String::new();
    for p in &placements {
        let _ = writeln!(
            out,
            "{:?} {}/{}: {} of {} replicas placed",
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
    Ok(out)
}
