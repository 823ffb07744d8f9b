//! Upstream's scheduler unit-test tables, carried over as data (crates/sim/tests/conformance/*.yaml)
//! and run through kix's full model: every filter and score, not one plugin alone. One trial per
//! case, `conformance::<file>::<upstream test>::<case name>`.
//!
//! A case holds nodes (`failed: true` adds an untolerated NoSchedule taint, standing for
//! upstream's "failedNodes" that another filter rejected), Namespace objects (`namespaces`, name
//! and labels, for InterPodAffinity's `namespaceSelector`), existing pods, the incoming pod,
//! and what the scheduler must give: feasible nodes, per-node reasons, PodTopologySpread's
//! normalised scores, InterPodAffinity's (`interpod_scores`), total scores, the selected node. Every
//! case also checks that the fast path selects the reference path's node.

use kix_kube::selector::Selector;
use kix_sim::snapshot::parse_pod;
use kix_sim::{Cluster, Outcome, State};
use kix_yaml::{Mapping, Value};
use libtest_mimic::{Failed, Trial};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn yaml(text: &str) -> Value {
    kix_yaml::from_str(text).unwrap()
}

fn node_object(n: &Value) -> Value {
    let mut taints = get(n, "taints").and_then(Value::as_sequence).cloned().unwrap_or_default();
    if get(n, "failed").and_then(Value::as_bool) == Some(true) {
        taints.push(yaml("{key: conformance.kix.dev/failed, effect: NoSchedule}"));
    }
    let allocatable = get(n, "allocatable").cloned().unwrap_or_else(|| yaml("{cpu: '100', memory: 1Ti, pods: '1000'}"));
    let mut object = Mapping::new();
    object.insert("kind".into(), "Node".into());
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), get(n, "name").unwrap().clone());
    metadata.insert("labels".into(), get(n, "labels").cloned().unwrap_or(Value::Null));
    object.insert("metadata".into(), Value::Mapping(metadata));
    let mut spec = Mapping::new();
    spec.insert("taints".into(), Value::Sequence(taints));
    if let Some(u) = get(n, "unschedulable") {
        spec.insert("unschedulable".into(), u.clone());
    }
    object.insert("spec".into(), Value::Mapping(spec));
    let mut status = Mapping::new();
    status.insert("allocatable".into(), allocatable);
    object.insert("status".into(), Value::Mapping(status));
    Value::Mapping(object)
}

fn pod_object(p: &Value, node: Option<&Value>) -> Value {
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), get(p, "name").cloned().unwrap_or_else(|| "incoming".into()));
    metadata.insert("namespace".into(), get(p, "namespace").cloned().unwrap_or_else(|| "default".into()));
    metadata.insert("labels".into(), get(p, "labels").cloned().unwrap_or(Value::Null));
    if get(p, "terminating").and_then(Value::as_bool) == Some(true) {
        metadata.insert("deletionTimestamp".into(), "2026-01-01T00:00:00Z".into());
    }
    let mut spec = match get(p, "spec") {
        Some(Value::Mapping(m)) => m.clone(),
        _ => Mapping::new(),
    };
    if let Some(node) = node {
        spec.insert("nodeName".into(), node.clone());
    }
    if let Some(requests) = get(p, "requests") {
        spec.insert(
            "containers".into(),
            yaml(&format!("[{{name: c, resources: {{requests: {}}}}}]", serde_json::to_string(requests).unwrap())),
        );
    }
    let mut object = Mapping::new();
    object.insert("kind".into(), "Pod".into());
    object.insert("metadata".into(), Value::Mapping(metadata));
    object.insert("spec".into(), Value::Mapping(spec));
    Value::Mapping(object)
}

fn string_map(v: Option<&Value>) -> Option<BTreeMap<String, Value>> {
    v.and_then(Value::as_mapping).map(|m| m.iter().map(|(k, v)| (k.as_str().unwrap().to_string(), v.clone())).collect())
}

/// Runs one case; returns what did not match.
fn run_case(case: &Value) -> Vec<String> {
    let mut objects: Vec<Value> = Vec::new();
    for n in get(case, "nodes").and_then(Value::as_sequence).unwrap() {
        objects.push(node_object(n));
    }
    for n in get(case, "namespaces").and_then(Value::as_sequence).cloned().unwrap_or_default() {
        let mut metadata = Mapping::new();
        metadata.insert("name".into(), get(&n, "name").unwrap().clone());
        metadata.insert("labels".into(), get(&n, "labels").cloned().unwrap_or(Value::Null));
        let mut object = Mapping::new();
        object.insert("kind".into(), "Namespace".into());
        object.insert("metadata".into(), Value::Mapping(metadata));
        objects.push(Value::Mapping(object));
    }
    for p in get(case, "pods").and_then(Value::as_sequence).cloned().unwrap_or_default() {
        objects.push(pod_object(&p, get(&p, "node")));
    }
    let state = match State::from_objects(objects) {
        Ok(s) => s,
        Err(e) => return vec![format!("state: {e}")],
    };
    let mut pod = match parse_pod(&pod_object(get(case, "pod").unwrap(), None), "default") {
        Ok(p) => p,
        Err(e) => return vec![format!("pod: {e}")],
    };
    if let Some(selector) = get(case, "owner_selector") {
        Arc::make_mut(&mut pod.spec).default_selector = Some(Selector::from_value(selector).unwrap());
    }
    let mut cluster = Cluster::new(&state);
    let cycle = cluster.cycle(&pod);
    let mut problems = Vec::new();
    let feasible: Vec<String> =
        cycle.nodes.iter().filter(|(_, o)| matches!(o, Outcome::Feasible(_))).map(|(n, _)| n.clone()).collect();
    let expect = get(case, "expect").unwrap();
    let mut check_scores = |key: &str, pick: fn(&kix_sim::Scores) -> i64| {
        if let Some(want) = string_map(get(expect, key)) {
            let want: BTreeMap<String, i64> = want.into_iter().map(|(k, v)| (k, v.as_i64().unwrap())).collect();
            let got: BTreeMap<String, i64> = cycle
                .nodes
                .iter()
                .filter_map(|(n, o)| match o {
                    Outcome::Feasible(s) => Some((n.clone(), pick(s))),
                    Outcome::Rejected(_) => None,
                })
                .collect();
            if got != want {
                problems.push(format!("{key}: want {want:?}, got {got:?}"));
            }
        }
    };
    check_scores("spread_scores", |s| s.pod_topology_spread);
    check_scores("total_scores", |s| s.total);
    check_scores("fit_scores", |s| s.least_allocated);
    check_scores("balanced_scores", |s| s.balanced_allocation);
    check_scores("taint_scores", |s| s.taint_toleration);
    check_scores("affinity_scores", |s| s.node_affinity);
    check_scores("interpod_scores", |s| s.inter_pod_affinity);
    if let Some(want) = get(expect, "feasible").and_then(Value::as_sequence) {
        let want: Vec<String> = want.iter().map(|v| v.as_str().unwrap().to_string()).collect();
        if want != feasible {
            problems.push(format!("feasible: want {want:?}, got {feasible:?}"));
        }
    }
    if let Some(want) = string_map(get(expect, "reasons")) {
        for (node, reason) in want {
            let got = match cycle.nodes.get(&node) {
                Some(Outcome::Rejected(r)) => r.message(),
                Some(Outcome::Feasible(_)) => "feasible".into(),
                None => "no such node".into(),
            };
            if got != reason.as_str().unwrap() {
                problems.push(format!("reason on {node}: want {reason:?}, got {got:?}"));
            }
        }
    }
    if let Some(want) = get(expect, "selected")
        && want.as_str() != cycle.selected.as_deref()
    {
        problems.push(format!("selected: want {want:?}, got {:?}", cycle.selected));
    }
    let fast = cluster.select(&pod);
    if fast != cycle.selected {
        problems.push(format!("fast path chose {fast:?}, reference {:?}", cycle.selected));
    }
    problems
}

/// One trial per case of every table, in file order; names are unique.
pub fn trials() -> Vec<Trial> {
    let dir = crate::support::crate_path("tests/conformance");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in &files {
        assert!(file.extension().is_some_and(|e| e == "yaml"), "{} is not a table (*.yaml)", file.display());
    }
    let mut trials = Vec::new();
    let mut names = BTreeSet::new();
    for file in &files {
        let table = file.file_stem().unwrap().to_string_lossy().into_owned();
        let cases: Value = kix_yaml::from_str(&std::fs::read_to_string(file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let Value::Sequence(cases) = cases else { panic!("{} is not a list of cases", file.display()) };
        for case in cases {
            let source = get(&case, "source").and_then(Value::as_str).unwrap_or("");
            let test = source.rsplit(' ').next().unwrap_or("");
            let case_name =
                get(&case, "name").and_then(Value::as_str).unwrap_or_else(|| panic!("{table}: a case without a name"));
            let name = format!("conformance::{table}::{test}::{case_name}");
            assert!(names.insert(name.clone()), "duplicate case name {name}");
            trials.push(Trial::test(name, move || {
                let problems = run_case(&case);
                if problems.is_empty() { Ok(()) } else { Err(Failed::from(problems.join("\n"))) }
            }));
        }
    }
    // Upstream's tables hold 186 cases; a table that stopped parsing must not pass as empty.
    assert!(trials.len() >= 100, "only {} conformance cases", trials.len());
    trials
}
