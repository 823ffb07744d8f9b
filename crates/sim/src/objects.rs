//! The scheduler's view of Nodes, Pods and Namespaces: the model types the plugins, the
//! cycle and the scenarios read. Only what the modelled plugins read is kept: labels, taints,
//! allocatable and `spec.unschedulable` of nodes; namespace, labels, binding, termination,
//! requests, tolerations, node affinity, pod affinity, spread constraints and host ports of pods.
//!
//! How real objects become these types is [`super::snapshot`]'s business; this file only
//! describes them, so every other file of the model can use them without depending on the reader.

use kix_kube::labels::HOSTNAME;
use kix_kube::selector::{Labels, Selector};
use kix_kube::taints::{Taint, Toleration};
use std::sync::Arc;

/// Upstream's non-zero default CPU request for scoring (`DefaultMilliCPURequest`).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// Upstream's non-zero default memory request for scoring (`DefaultMemoryRequest`, 200Mi).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// Resources the model tracks: milli-CPU, memory bytes and pod count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Resources {
    pub milli_cpu: i64,
    pub memory: i64,
    pub pods: i64,
}

/// A Node as the scheduler sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub labels: Labels,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    pub allocatable: Resources,
    /// A node the cluster autoscaler may add and has not (issue 39: a pool's node group below its
    /// `maxNodesPerZone`): not in the cluster until provisioned, so every filter rejects it, no spread
    /// domain counts it and no FailedScheduling message counts it.
    pub absent: bool,
}

/// A node-selector operator (`NodeSelectorRequirement.operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeOp {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

/// One node-selector requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRequirement {
    pub key: String,
    pub op: NodeOp,
    pub values: Vec<String>,
}

impl NodeRequirement {
    fn matches_value(&self, value: Option<&str>) -> bool {
        match self.op {
            NodeOp::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            NodeOp::NotIn => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            NodeOp::Exists => value.is_some(),
            NodeOp::DoesNotExist => value.is_none(),
            NodeOp::Gt | NodeOp::Lt => {
                let (Some(v), [bound]) = (value, self.values.as_slice()) else { return false };
                let (Ok(v), Ok(bound)) = (v.parse::<i64>(), bound.parse::<i64>()) else { return false };
                if self.op == NodeOp::Gt { v > bound } else { v < bound }
            }
        }
    }
}

/// A `NodeSelectorTerm`: its expressions and fields are ANDed; an empty term matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSelectorTerm {
    pub expressions: Vec<NodeRequirement>,
    /// `matchFields`; only `metadata.name` exists upstream (other keys match nothing).
    pub fields: Vec<NodeRequirement>,
    /// A requirement does not parse as upstream's label or field selector (an invalid key or
    /// value, a wrong number of values): the term then matches no node, as upstream.
    pub invalid: bool,
}

impl NodeSelectorTerm {
    pub fn matches(&self, name: &str, labels: &Labels) -> bool {
        if self.invalid || (self.expressions.is_empty() && self.fields.is_empty()) {
            return false;
        }
        self.expressions.iter().all(|r| r.matches_value(labels.get(&r.key).map(String::as_str)))
            && self.fields.iter().all(|r| {
                r.key == "metadata.name" && matches!(r.op, NodeOp::In | NodeOp::NotIn) && r.matches_value(Some(name))
            })
    }

    /// Whether the term looks at a node's name or hostname (then nodes are not interchangeable).
    pub fn mentions_node_identity(&self) -> bool {
        !self.fields.is_empty() || self.expressions.iter().any(|r| r.key == HOSTNAME)
    }
}

/// `whenUnsatisfiable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    DoNotSchedule,
    ScheduleAnyway,
}

/// A pod's `topologySpreadConstraints` entry, as written (selector not yet merged with matchLabelKeys).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpreadConstraint {
    pub max_skew: i64,
    pub topology_key: String,
    pub when: When,
    /// None is a nil selector, which matches nothing.
    pub selector: Option<Selector>,
    pub match_label_keys: Vec<String>,
    pub min_domains: i64,
    /// `nodeAffinityPolicy: Honor` (the default).
    pub honor_affinity: bool,
    /// `nodeTaintsPolicy: Honor` (default Ignore).
    pub honor_taints: bool,
}

/// The parts of a pod spec the modelled plugins read; shared between the replicas of a workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSpec {
    /// Requests summed as upstream (`max(sum(containers) + sidecars, init peaks)` + overhead).
    pub requests: Resources,
    /// The same with 100m CPU / 200Mi memory for each container that requests none (scoring only).
    pub nonzero_requests: Resources,
    pub tolerations: Vec<Toleration>,
    pub node_selector: Labels,
    /// `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms` (ORed); None when absent.
    pub required_terms: Option<Vec<NodeSelectorTerm>>,
    /// Preferred terms with their weights.
    pub preferred_terms: Vec<(i64, NodeSelectorTerm)>,
    pub spread: Vec<SpreadConstraint>,
    /// `spec.nodeName` of a pod that asks for one node.
    pub node_name: Option<String>,
    /// The selector the system default spread constraints use (the owning ReplicaSet's or
    /// StatefulSet's selector); None for pods no controller owns.
    pub default_selector: Option<Selector>,
    /// `affinity.podAffinity` and `affinity.podAntiAffinity` (see [`super::interpod`]).
    pub pod_affinity: PodAffinity,
    /// The host ports its containers and sidecars take (see [`super::node_ports`]).
    pub host_ports: Vec<HostPort>,
    /// Where the pod's bound persistent volumes can be used (issue 39), set by the model once the pod's
    /// claim is provisioned: VolumeBinding's check of the bound PersistentVolume's node affinity.
    pub volume: Option<VolumePin>,
}

/// A bound PersistentVolume's node affinity as the model keeps it: the node label (the zone key for a
/// zonal disk, `kubernetes.io/hostname` for a local volume) and the one value a node must carry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VolumePin {
    pub key: String,
    pub value: String,
}

impl PodSpec {
    /// Whether the pod satisfies its nodeSelector and required node affinity on this node.
    pub fn matches_node_affinity(&self, name: &str, labels: &Labels) -> bool {
        self.node_selector.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.required_terms.as_ref().is_none_or(|terms| terms.iter().any(|t| t.matches(name, labels)))
    }
}

/// Upstream's `DefaultBindAllHostIP`: a port on it takes that port on every address of the node.
pub const BIND_ALL_HOST_IP: &str = "0.0.0.0";

/// One `hostPort` a pod takes on its node, as upstream's `HostPortInfo` files it
/// (`pkg/scheduler/framework/types.go`, `sanitize`): an empty `hostIP` is [`BIND_ALL_HOST_IP`], an
/// empty protocol `TCP`. Only ports above 0 are kept (`Add` and `CheckConflict` ignore the rest).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    pub protocol: String,
    pub ip: String,
    pub port: i64,
}

impl HostPort {
    /// `HostPortInfo.CheckConflict`: the same protocol and port on the same address, or on
    /// [`BIND_ALL_HOST_IP`] on either side.
    pub fn conflicts(&self, used: &HostPort) -> bool {
        self.protocol == used.protocol
            && self.port == used.port
            && (self.ip == used.ip || self.ip == BIND_ALL_HOST_IP || used.ip == BIND_ALL_HOST_IP)
    }
}

/// A Pod: identity, labels, binding and a shared spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    pub name: String,
    pub namespace: String,
    pub labels: Labels,
    /// The node the pod is bound to (`spec.nodeName`).
    pub node_name: Option<String>,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `kubectl drain` leaves it in place: a DaemonSet's pod or a static (mirror) pod.
    pub drain_skips: bool,
    pub spec: Arc<PodSpec>,
    /// `status.phase`; None when the object has none (a hand-written pod). Pods in a terminal
    /// phase never get here: the scheduler does not see them (see [`is_terminal`]).
    pub phase: Option<Phase>,
    /// The `Ready` condition is `True` (`podutil.IsPodReady`): what the disruption controller counts
    /// as healthy. Pods the model creates are Ready once bound.
    pub ready: bool,
    /// The owner reference with `controller: true` (`metav1.GetControllerOf`); None for a pod no
    /// controller manages, which `kubectl drain` refuses to delete without `--force`.
    pub controller: Option<Controller>,
}

/// A pod's `status.phase` (terminal phases are dropped on reading).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Pending,
    Running,
    Unknown,
}

/// A pod's controller: the kind and name of its `controller: true` owner reference.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Controller {
    pub kind: String,
    pub name: String,
}

/// A Namespace: only its name and labels matter (to `namespaceSelector` of pod affinity terms).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    pub name: String,
    /// Always holds `kubernetes.io/metadata.name: <name>`, which the API server sets on every namespace.
    pub labels: Labels,
}

/// A `PodAffinityTerm` as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AffinityTerm {
    /// None: a nil selector, which selects no pod.
    pub selector: Option<Selector>,
    pub namespaces: Vec<String>,
    /// None: absent (no namespace beyond `namespaces`); `Some(empty)`: every namespace.
    pub namespace_selector: Option<Selector>,
    pub topology_key: String,
    pub match_label_keys: Vec<String>,
    pub mismatch_label_keys: Vec<String>,
}

/// A pod's `affinity.podAffinity` and `affinity.podAntiAffinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodAffinity {
    pub required: Vec<AffinityTerm>,
    pub required_anti: Vec<AffinityTerm>,
    /// Preferred terms with their weights.
    pub preferred: Vec<(i64, AffinityTerm)>,
    pub preferred_anti: Vec<(i64, AffinityTerm)>,
}

impl PodAffinity {
    /// No term at all (the pod is not in upstream's `PodsWithAffinity`).
    pub fn is_empty(&self) -> bool {
        self.required.is_empty()
            && self.required_anti.is_empty()
            && self.preferred.is_empty()
            && self.preferred_anti.is_empty()
    }
}
