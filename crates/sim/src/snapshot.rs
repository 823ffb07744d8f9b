//! Reading a snapshot: real Kubernetes objects into the scheduler's view ([`super::objects`]).
//!
//! `kubectl get nodes,pods -A -o yaml` prints a `v1 List`; users also keep
//! YAML streams. Both are read through `kix_yaml::Value` so that a field of
//! the wrong shape becomes a message naming the object, never a panic.
//!
//! A node with `spec.unschedulable: true` but without the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint gets the taint: on a real
//! cluster the node lifecycle controller adds it to every cordoned node, so a
//! live snapshot has it and only a hand-written one can lack it. It matters to
//! spread constraints with `nodeTaintsPolicy: Honor`, which then leave the
//! cordoned node out of their domains.

use super::budget::Budget;
use super::objects::*;
use kix_kube::labels::CONFIG_MIRROR;
use kix_kube::quantity;
use kix_kube::requests::{self, Requests};
use kix_kube::selector::{Selector, labels_from_value};
use kix_kube::taints::{Effect, Taint, Toleration};
use kix_kube::value::{at, str_at};
use kix_yaml::Value;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Whether an object is a Pod in phase Succeeded or Failed. The scheduler never sees these: its
/// pod informer lists with the field selector `status.phase!=Succeeded,status.phase!=Failed`
/// (kubernetes/kubernetes pkg/scheduler/scheduler.go, `newPodInformer`), so they take no pod slot,
/// CPU or memory and no spreading counts them; `kubectl drain` deletes them without a second look
/// (filters.go, "any finished pod can be removed") and the eviction API ignores budgets for them
/// (eviction.go). kix drops them when it reads a snapshot.
pub fn is_terminal(object: &Value) -> bool {
    str_at(object, &["kind"]) == Some("Pod")
        && matches!(str_at(object, &["status", "phase"]), Some("Succeeded" | "Failed"))
}

/// Nodes, pods and namespaces: a snapshot of a cluster.
///
/// A namespace a pod is in but no Namespace object describes is known by its name alone: it
/// carries only `kubernetes.io/metadata.name` (see [`super::interpod::NamespaceIndex`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    pub nodes: Vec<Node>,
    pub pods: Vec<Pod>,
    pub namespaces: Vec<Namespace>,
    /// The snapshot's PodDisruptionBudgets (`kubectl get nodes,pods,pdb -A -o yaml`).
    pub budgets: Vec<Budget>,
    /// The snapshot's Deployments and StatefulSets (`deploy,sts`) as written, for `kix audit --all`.
    /// Kept whole: the audit reads each through the typed workload view
    /// ([`kix_kube::workload::WorkloadView`], via [`super::workload::Workload::from_object`]) and
    /// reports the ones it cannot read; the scheduler model and `verify --state` do not look at them.
    pub workloads: Vec<Value>,
}

impl State {
    /// An empty state with room for the nodes and pods `text` appears to hold: the lines
    /// `kind: Node` and `kind: Pod` counted (a hint, never a limit; vectors still grow past it).
    /// Growing 5,000 nodes and pods by doubling touched several megabytes of fresh memory, which
    /// cost more than reading the objects (issue 11: memory first touched costs about 1 ms per MB).
    pub fn sized_for(text: &str) -> State {
        let (mut nodes, mut pods) = (0, 0);
        for (at, _) in text.match_indices("kind: ") {
            let rest = &text.as_bytes()[at + "kind: ".len()..];
            let kind_is = |kind: &[u8]| rest.starts_with(kind) && matches!(rest.get(kind.len()), Some(b'\n' | b'\r'));
            if kind_is(b"Node") {
                nodes += 1;
            } else if kind_is(b"Pod") {
                pods += 1;
            }
        }
        State { nodes: Vec::with_capacity(nodes), pods: Vec::with_capacity(pods), ..State::default() }
    }

    /// Reads a YAML stream of objects (lists expanded, see [`kix_kube::list`]) into a state; other kinds
    /// are skipped. Read as [`read_clean`] reads a snapshot; at the first problem the text is read
    /// again with the located loader and every problem is reported, joined with `; ` (the first YAML
    /// or list error alone, as the stream cannot be trusted past it).
    pub fn from_yaml_str(text: &str) -> Result<State, String> {
        if let Some(state) = read_clean(text) {
            return Ok(state);
        }
        let mut reader = StateReader::default();
        let mut errors = Vec::new();
        for document in kix_yaml::parse_stream(text, &kix_yaml::Limits::SNAPSHOT) {
            let value = document.map_err(|e| e.to_string())?.value;
            if value.is_null() {
                continue;
            }
            for object in kix_kube::list::flatten_values(value).map_err(|e| e.to_string())? {
                if let Err(e) = reader.add(&object) {
                    errors.push(e);
                }
            }
        }
        if errors.is_empty() { Ok(reader.finish()) } else { Err(errors.join("; ")) }
    }

    /// Builds a state from parsed objects: Nodes and Pods; other kinds are skipped.
    pub fn from_objects(objects: Vec<Value>) -> Result<State, String> {
        let mut reader = StateReader::default();
        let errors: Vec<String> = objects.iter().filter_map(|object| reader.add(object).err()).collect();
        if errors.is_empty() { Ok(reader.finish()) } else { Err(errors.join("; ")) }
    }
}

/// The state of a snapshot in which every document is an object kix can read (lists expanded),
/// read document by document, each converted and dropped at once so the stream's generic tree
/// never exists whole; `None` at the first problem (the callers then read it again to report
/// every problem, [`State::from_yaml_str`] as text, `kix`'s file reader with positions).
///
/// The fast reader ([`kix_yaml::fast_stream_each`]) reads the block YAML kubectl and kix write
/// several times faster than the located loader; on anything else it gives up and the loader
/// reads the text from the start, into a fresh state.
pub(crate) fn read_clean(text: &str) -> Option<State> {
    let mut reader = StateReader::sized_for(text);
    let read = kix_yaml::fast_stream_each(text, &kix_yaml::Limits::SNAPSHOT, |value| {
        if reader.document(value) { ControlFlow::Continue(()) } else { ControlFlow::Break(()) }
    });
    match read {
        kix_yaml::FastRead::Read => return Some(reader.finish()),
        kix_yaml::FastRead::Stopped => return None,
        kix_yaml::FastRead::Refused => reader = StateReader::sized_for(text),
    }
    let mut clean = true;
    kix_yaml::parse_stream_each(text, &kix_yaml::Limits::SNAPSHOT, |document| {
        let readable = document.is_ok_and(|document| reader.document(document.value));
        clean &= readable;
        if readable { ControlFlow::Continue(()) } else { ControlFlow::Break(()) }
    });
    clean.then(|| reader.finish())
}

/// A state being read object by object, in file order: the one reader of snapshot objects, for
/// text ([`State::from_yaml_str`]), parsed objects ([`State::from_objects`]) and files with
/// positions (`input::read_state`).
#[derive(Default)]
pub(crate) struct StateReader {
    state: State,
    /// Names of the nodes read so far, for duplicates.
    seen: HashSet<String>,
}

impl StateReader {
    fn sized_for(text: &str) -> StateReader {
        StateReader { state: State::sized_for(text), seen: HashSet::new() }
    }

    /// Adds one object; an object kix cannot read (not a mapping, no kind, a field of the wrong
    /// shape, a node named twice) is an error and adds nothing. Kinds the model does not read
    /// are skipped.
    pub(crate) fn add(&mut self, value: &Value) -> Result<(), String> {
        if !value.is_mapping() {
            return Err("a document is not a mapping (a Kubernetes object)".to_string());
        }
        let state = &mut self.state;
        match str_at(value, &["kind"]) {
            Some("Node") => parse_node(value).and_then(|node| {
                if !self.seen.insert(node.name.clone()) {
                    return Err(format!("node `{}` appears twice", node.name));
                }
                state.nodes.push(node);
                Ok(())
            }),
            // Terminal pods: the scheduler never sees them (see `is_terminal`).
            Some("Pod") if is_terminal(value) => Ok(()),
            Some("Pod") => parse_pod(value, "default").map(|p| state.pods.push(p)),
            Some("Namespace") => parse_namespace(value).map(|n| state.namespaces.push(n)),
            Some("Deployment" | "StatefulSet") if str_at(value, &["apiVersion"]) == Some("apps/v1") => {
                state.workloads.push(value.clone());
                Ok(())
            }
            Some(_) => Budget::read(value).map(|b| state.budgets.extend(b)),
            None => Err("a document has no `kind`".to_string()),
        }
    }

    /// Adds one document: whether it was readable (null, or a mapping whose objects, lists
    /// expanded, all read).
    fn document(&mut self, value: Value) -> bool {
        value.is_null()
            || (value.is_mapping()
                && kix_kube::list::flatten_values(value)
                    .is_ok_and(|flat| flat.iter().all(|value| self.add(value).is_ok())))
    }

    /// The state once every object is added: nodes sorted by name.
    pub(crate) fn finish(mut self) -> State {
        self.state.nodes.sort_by(|a, b| a.name.cmp(&b.name));
        self.state
    }
}

fn seq<'a>(value: Option<&'a Value>, what: &str) -> Result<&'a [Value], String> {
    match value {
        None => Ok(&[]),
        Some(Value::Sequence(items)) => Ok(items),
        Some(_) => Err(format!("{what} must be a list")),
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn object_name(object: &Value, kind: &str) -> Result<String, String> {
    str_at(object, &["metadata", "name"]).map(str::to_string).ok_or_else(|| format!("a {kind} has no metadata.name"))
}

/// Reads a Node.
pub fn parse_node(object: &Value) -> Result<Node, String> {
    let name = object_name(object, "Node")?;
    let ctx = |e: String| format!("node `{name}`: {e}");
    let labels = labels_from_value(at(object, &["metadata", "labels"])).map_err(ctx)?;
    let mut taints = Vec::new();
    for taint in seq(at(object, &["spec", "taints"]), "spec.taints").map_err(ctx)? {
        let key = str_at(taint, &["key"]).ok_or_else(|| ctx("a taint has no key".into()))?.to_string();
        let value = str_at(taint, &["value"]).unwrap_or("").to_string();
        let effect = str_at(taint, &["effect"])
            .and_then(Effect::parse)
            .ok_or_else(|| ctx(format!("taint `{key}` has no valid effect")))?;
        taints.push(Taint { key, value, effect });
    }
    let unschedulable = at(object, &["spec", "unschedulable"]).and_then(Value::as_bool).unwrap_or(false);
    // The node lifecycle controller taints every cordoned node (doNoScheduleTaintingPass); a
    // hand-written snapshot may lack the taint, a real one has it.
    if unschedulable {
        let taint = Taint::unschedulable();
        if !taints.contains(&taint) {
            taints.push(taint);
        }
    }
    // Allocatable falls back to capacity; a node with neither has no room at all (as upstream).
    let resources = at(object, &["status", "allocatable"]).or_else(|| at(object, &["status", "capacity"]));
    let mut allocatable = Resources::default();
    if let Some(resources) = resources {
        let get = |key: &str| resources.get(key).and_then(scalar_text);
        if let Some(cpu) = get("cpu") {
            allocatable.milli_cpu = quantity::milli(&cpu).map_err(|e| ctx(e.to_string()))?;
        }
        if let Some(memory) = get("memory") {
            allocatable.memory = quantity::units(&memory).map_err(|e| ctx(e.to_string()))?;
        }
        if let Some(pods) = get("pods") {
            allocatable.pods = quantity::units(&pods).map_err(|e| ctx(e.to_string()))?;
        }
    }
    Ok(Node { name, labels, taints, unschedulable, allocatable, absent: false })
}

/// Reads a Namespace, adding the `kubernetes.io/metadata.name` label the API server sets on every
/// namespace (pkg/registry/core/namespace/strategy.go, `PrepareForCreate`/`PrepareForUpdate`).
pub fn parse_namespace(object: &Value) -> Result<Namespace, String> {
    let name = object_name(object, "Namespace")?;
    let mut labels =
        labels_from_value(at(object, &["metadata", "labels"])).map_err(|e| format!("namespace `{name}`: {e}"))?;
    labels.insert(kix_kube::labels::NAMESPACE_NAME.to_string(), name.clone());
    Ok(Namespace { name, labels })
}

/// Reads a Pod; `default_namespace` applies when metadata.namespace is unset.
pub fn parse_pod(object: &Value, default_namespace: &str) -> Result<Pod, String> {
    let name = object_name(object, "Pod")?;
    let ctx = |e: String| format!("pod `{name}`: {e}");
    let namespace = str_at(object, &["metadata", "namespace"]).unwrap_or(default_namespace).to_string();
    let labels = labels_from_value(at(object, &["metadata", "labels"])).map_err(ctx)?;
    let terminating = at(object, &["metadata", "deletionTimestamp"]).is_some();
    let spec = match at(object, &["spec"]) {
        Some(spec) => parse_pod_spec(spec).map_err(ctx)?,
        None => PodSpec::default(),
    };
    let node_name = spec.node_name.clone();
    let controller = seq(at(object, &["metadata", "ownerReferences"]), "metadata.ownerReferences")
        .map_err(ctx)?
        .iter()
        .find(|r| at(r, &["controller"]).and_then(Value::as_bool) == Some(true))
        .map(|r| Controller {
            kind: str_at(r, &["kind"]).unwrap_or_default().to_string(),
            name: str_at(r, &["name"]).unwrap_or_default().to_string(),
        });
    // kubectl's daemonSetFilter and mirrorPodFilter (k8s.io/kubectl/pkg/drain/filters.go): a pod
    // whose controller is a DaemonSet, or with the mirror annotation, stays.
    let daemon = controller.as_ref().is_some_and(|c| c.kind == "DaemonSet");
    let mirror = at(object, &["metadata", "annotations", CONFIG_MIRROR]).is_some();
    let phase = match str_at(object, &["status", "phase"]) {
        Some("Pending") => Some(Phase::Pending),
        Some("Running") => Some(Phase::Running),
        Some(_) => Some(Phase::Unknown),
        None => None,
    };
    // podutil.IsPodReady: a condition of type Ready with status True.
    let ready = seq(at(object, &["status", "conditions"]), "status.conditions")
        .map_err(ctx)?
        .iter()
        .any(|c| str_at(c, &["type"]) == Some("Ready") && str_at(c, &["status"]) == Some("True"));
    Ok(Pod {
        name,
        namespace,
        labels,
        node_name,
        terminating,
        drain_skips: daemon || mirror,
        spec: Arc::new(spec),
        phase,
        ready,
        controller,
    })
}

/// Reads the parts of a `PodSpec` the model uses.
pub fn parse_pod_spec(spec: &Value) -> Result<PodSpec, String> {
    let mut out = PodSpec {
        node_name: str_at(spec, &["nodeName"]).filter(|s| !s.is_empty()).map(str::to_string),
        ..PodSpec::default()
    };
    let (requests, nonzero) = pod_requests(spec)?;
    out.requests = requests;
    out.nonzero_requests = nonzero;
    for t in seq(at(spec, &["tolerations"]), "tolerations")? {
        let operator = str_at(t, &["operator"]).unwrap_or("Equal");
        let effect = match str_at(t, &["effect"]) {
            None | Some("") => None,
            Some(e) => Some(Effect::parse(e).ok_or_else(|| format!("toleration effect `{e}` is not valid"))?),
        };
        out.tolerations.push(Toleration {
            key: str_at(t, &["key"]).unwrap_or("").to_string(),
            exists: match operator {
                "Exists" => true,
                "Equal" | "" => false,
                other => return Err(format!("toleration operator `{other}` is not Exists or Equal")),
            },
            value: str_at(t, &["value"]).unwrap_or("").to_string(),
            effect,
            seconds: at(t, &["tolerationSeconds"]).and_then(Value::as_i64),
        });
    }
    out.node_selector = labels_from_value(at(spec, &["nodeSelector"])).map_err(|e| format!("nodeSelector: {e}"))?;
    if let Some(required) = at(spec, &["affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"]) {
        let mut terms = Vec::new();
        for term in seq(required.get("nodeSelectorTerms"), "nodeSelectorTerms")? {
            terms.push(parse_term(term)?);
        }
        out.required_terms = Some(terms);
    }
    let preferred = at(spec, &["affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"]);
    for item in seq(preferred, "preferredDuringSchedulingIgnoredDuringExecution")? {
        let weight = at(item, &["weight"]).and_then(Value::as_i64).ok_or("a preferred term needs a weight")?;
        let term = match at(item, &["preference"]) {
            Some(p) => parse_term(p)?,
            None => NodeSelectorTerm::default(),
        };
        out.preferred_terms.push((weight, term));
    }
    for c in seq(at(spec, &["topologySpreadConstraints"]), "topologySpreadConstraints")? {
        out.spread.push(parse_spread(c)?);
    }
    out.pod_affinity = parse_pod_affinity(at(spec, &["affinity"]))?;
    out.host_ports = super::node_ports::read_host_ports(spec)?;
    Ok(out)
}

fn parse_term(term: &Value) -> Result<NodeSelectorTerm, String> {
    let mut out = NodeSelectorTerm::default();
    for (field, list) in [("matchExpressions", &mut out.expressions), ("matchFields", &mut out.fields)] {
        for r in seq(term.get(field).filter(|v| !v.is_null()), field)? {
            let key = str_at(r, &["key"]).ok_or_else(|| format!("a {field} entry has no key"))?.to_string();
            let op = match str_at(r, &["operator"]) {
                Some("In") => NodeOp::In,
                Some("NotIn") => NodeOp::NotIn,
                Some("Exists") => NodeOp::Exists,
                Some("DoesNotExist") => NodeOp::DoesNotExist,
                Some("Gt") => NodeOp::Gt,
                Some("Lt") => NodeOp::Lt,
                other => return Err(format!("node selector operator `{}` is not valid", other.unwrap_or(""))),
            };
            let mut values = Vec::new();
            for v in seq(r.get("values").filter(|v| !v.is_null()), "values")? {
                values.push(scalar_text(v).ok_or("node selector values must be strings")?);
            }
            let requirement = NodeRequirement { key, op, values };
            out.invalid |=
                if field == "matchFields" { !valid_field(&requirement) } else { !valid_expression(&requirement) };
            list.push(requirement);
        }
    }
    Ok(out)
}

/// Whether a node-selector expression parses as a label requirement (`labels.NewRequirement`).
fn valid_expression(r: &NodeRequirement) -> bool {
    if kix_kube::names::label_key(&r.key).is_err() {
        return false;
    }
    match r.op {
        NodeOp::In | NodeOp::NotIn => {
            !r.values.is_empty() && r.values.iter().all(|v| kix_kube::names::label_value(v).is_ok())
        }
        NodeOp::Exists | NodeOp::DoesNotExist => r.values.is_empty(),
        NodeOp::Gt | NodeOp::Lt => r.values.len() == 1 && r.values[0].parse::<i64>().is_ok(),
    }
}

/// Whether a `matchFields` requirement parses as a field selector: `metadata.name`, In or NotIn, one value.
fn valid_field(r: &NodeRequirement) -> bool {
    r.key == "metadata.name" && matches!(r.op, NodeOp::In | NodeOp::NotIn) && r.values.len() == 1
}

fn parse_spread(c: &Value) -> Result<SpreadConstraint, String> {
    let topology_key = str_at(c, &["topologyKey"]).ok_or("a topologySpreadConstraint has no topologyKey")?.to_string();
    let max_skew = at(c, &["maxSkew"]).and_then(Value::as_i64).ok_or("a topologySpreadConstraint needs maxSkew")?;
    if max_skew < 1 {
        return Err(format!("maxSkew {max_skew} on `{topology_key}` must be at least 1"));
    }
    let when = match str_at(c, &["whenUnsatisfiable"]) {
        Some("DoNotSchedule") => When::DoNotSchedule,
        Some("ScheduleAnyway") => When::ScheduleAnyway,
        other => {
            return Err(format!("whenUnsatisfiable `{}` is not DoNotSchedule or ScheduleAnyway", other.unwrap_or("")));
        }
    };
    let selector = match at(c, &["labelSelector"]) {
        Some(s) => Some(Selector::from_value(s).map_err(|e| format!("labelSelector: {e}"))?),
        None => None,
    };
    let mut match_label_keys = Vec::new();
    for k in seq(at(c, &["matchLabelKeys"]), "matchLabelKeys")? {
        match_label_keys.push(k.as_str().ok_or("matchLabelKeys must be strings")?.to_string());
    }
    let min_domains = match at(c, &["minDomains"]) {
        Some(v) => v.as_i64().filter(|n| *n >= 1).ok_or("minDomains must be a positive integer")?,
        None => 1,
    };
    let policy = |field: &str, default: bool| match str_at(c, &[field]) {
        None => Ok(default),
        Some("Honor") => Ok(true),
        Some("Ignore") => Ok(false),
        Some(other) => Err(format!("{field} `{other}` is not Honor or Ignore")),
    };
    Ok(SpreadConstraint {
        max_skew,
        topology_key,
        when,
        selector,
        match_label_keys,
        min_domains,
        honor_affinity: policy("nodeAffinityPolicy", true)?,
        honor_taints: policy("nodeTaintsPolicy", false)?,
    })
}

/// Upstream `PodRequests`, read by `kix_kube::requests` (helpers.go), twice: as the fit filter counts
/// (a missing request is 0) and as scoring counts (a missing request is the non-zero default).
/// Returns (requests, non-zero requests).
fn pod_requests(spec: &Value) -> Result<(Resources, Resources), String> {
    let defaults = Requests { milli_cpu: DEFAULT_MILLI_CPU_REQUEST, memory: DEFAULT_MEMORY_REQUEST };
    let model = |r: Requests| Resources { milli_cpu: r.milli_cpu, memory: r.memory, pods: 0 };
    Ok((model(requests::pod_requests(spec, None)?), model(requests::pod_requests(spec, Some(defaults))?)))
}

/// Reads `spec.affinity` (its `podAffinity` and `podAntiAffinity`; node affinity is read elsewhere).
pub fn parse_pod_affinity(affinity: Option<&Value>) -> Result<PodAffinity, String> {
    let mut out = PodAffinity::default();
    let Some(affinity) = affinity.filter(|v| !v.is_null()) else { return Ok(out) };
    for (field, required, preferred) in [
        ("podAffinity", &mut out.required, &mut out.preferred),
        ("podAntiAffinity", &mut out.required_anti, &mut out.preferred_anti),
    ] {
        let Some(section) = at(affinity, &[field]).filter(|v| !v.is_null()) else { continue };
        for term in terms(section.get("requiredDuringSchedulingIgnoredDuringExecution"), field)? {
            required.push(parse_affinity_term(term).map_err(|e| format!("{field}: {e}"))?);
        }
        for item in terms(section.get("preferredDuringSchedulingIgnoredDuringExecution"), field)? {
            let weight = at(item, &["weight"])
                .and_then(Value::as_i64)
                .ok_or_else(|| format!("{field}: a preferred term needs a weight"))?;
            let term = at(item, &["podAffinityTerm"])
                .ok_or_else(|| format!("{field}: a preferred term needs a podAffinityTerm"))?;
            preferred.push((weight, parse_affinity_term(term).map_err(|e| format!("{field}: {e}"))?));
        }
    }
    Ok(out)
}

fn terms<'a>(value: Option<&'a Value>, what: &str) -> Result<&'a [Value], String> {
    match value {
        None | Some(Value::Null) => Ok(&[]),
        Some(v) => v.as_sequence().map(Vec::as_slice).ok_or_else(|| format!("{what} terms must be a list")),
    }
}

fn strings(value: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    terms(value, what)?
        .iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(|| format!("{what} must be strings")))
        .collect()
}

fn parse_affinity_term(term: &Value) -> Result<AffinityTerm, String> {
    let selector = |field: &str| match at(term, &[field]).filter(|v| !v.is_null()) {
        Some(s) => Selector::from_value(s).map(Some).map_err(|e| format!("{field}: {e}")),
        None => Ok(None),
    };
    Ok(AffinityTerm {
        selector: selector("labelSelector")?,
        namespaces: strings(term.get("namespaces"), "namespaces")?,
        namespace_selector: selector("namespaceSelector")?,
        topology_key: str_at(term, &["topologyKey"]).ok_or("a pod affinity term has no topologyKey")?.to_string(),
        match_label_keys: strings(term.get("matchLabelKeys"), "matchLabelKeys")?,
        mismatch_label_keys: strings(term.get("mismatchLabelKeys"), "mismatchLabelKeys")?,
    })
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
