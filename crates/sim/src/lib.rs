//! The scheduler model: a faithful, in-memory kube-scheduler for the default profile.
//!
//! `kix schedule`, `kix simulate` and `kix verify` run on it. Input is real
//! Kubernetes objects (`kubectl get nodes,pods,pdb -A -o yaml`, a YAML stream or a
//! `v1 List`): pods with `spec.nodeName` are bound, pods with
//! `metadata.deletionTimestamp` are terminating, pods in phase Succeeded or
//! Failed are left out (the scheduler never sees them), PodDisruptionBudgets
//! are kept for `kix verify` ([`budget`]).
//!
//! # What is modelled (upstream semantics, kubernetes/kubernetes v1.33)
//! - Filters, in the default profile's order: NodeUnschedulable, NodeName,
//!   TaintToleration (NoSchedule, NoExecute), NodeAffinity (nodeSelector,
//!   required terms with In/NotIn/Exists/DoesNotExist/Gt/Lt and
//!   `matchFields: metadata.name`), NodeResourcesFit (cpu, memory, pod count;
//!   init containers by the max rule, sidecars and overhead added),
//!   VolumeBinding on bound claims (issue 39: a pod whose claim was provisioned
//!   only where its volume's node affinity allows, [`world`] keeping the claims) and
//!   PodTopologySpread (domains, nodeAffinityPolicy/nodeTaintsPolicy,
//!   namespace, terminating pods, matchLabelKeys, minDomains, missing labels
//!   UnschedulableAndUnresolvable) and InterPodAffinity ([`interpod`]:
//!   required affinity and anti-affinity, existing pods' anti-affinity,
//!   namespaces and `namespaceSelector`, `matchLabelKeys`/`mismatchLabelKeys`).
//!   The first failing filter gives a node's reason, in the scheduler's words.
//! - Scores with default weights: InterPodAffinity 2 (preferred terms both
//!   ways, existing pods' required affinity at weight 1), TaintToleration 3 (PreferNoSchedule),
//!   NodeAffinity 2 (preferred terms), PodTopologySpread 2 (ln(domains + 2)
//!   weights and upstream normalisation; system defaults hostname maxSkew 3
//!   and zone maxSkew 5 for controller-owned pods without constraints),
//!   NodeResourcesFit LeastAllocated 1 (on non-zero requests: 100m / 200Mi per
//!   container without requests), NodeResourcesBalancedAllocation 1 (skipped
//!   for best-effort pods).
//! - Every node is evaluated (no percentageOfNodesToScore sampling).
//!
//! # Tie-break
//! Where the real scheduler picks at random among the nodes with the best
//! total score (`selectHost`), kix picks the **lowest node name**, so every
//! run is reproducible.
//!
//! That choice is one draw among several, so `kix verify` does not let its
//! proof rest on it. For workloads at level node or zone it places the
//! instance's workloads a second time, on the reference path
//! ([`cluster::Cluster::cycle`], every node, so the set of tied nodes is
//! exact), with ties broken **against** the level: among the nodes with the
//! best total score, the node whose level domain (the zone key's value at
//! zone, the node key's at node) already holds the most pods of the workload,
//! then the lowest name. It then runs the domain-loss scenario on that
//! placement (scenario "tie-break"). If a domain loss leaves no replica
//! running there while every loss leaves one running on the lowest-name
//! placement, the workload fails with a finding that names the domain and the
//! nodes of both placements: the result depends on the scheduler's random
//! choice among equal scores. A hard (DoNotSchedule) spread on the level's key,
//! as kix derives it, keeps ties from concentrating replicas, so derived
//! placements pass; a placement resting only on soft spreading or on the
//! scoring of the moment may not.
//!
//! # What the model leaves out
//! Volume attach limits, access modes, CSI topology keys other than the zone,
//! storage capacity, images (ImageLocality), extended and ephemeral-storage
//! resources, dynamic resource allocation, pod-level resources, preemption,
//! priorities and queueing order, scheduling gates, Services as owners for
//! the default spread selector (the owning ReplicaSet's or StatefulSet's
//! selector is used), and nodes sharing one hostname label value (counted per
//! value, not per node). An empty `labelSelector: {}` matches every pod here.
//!
//! # Scenarios (`kix verify`)
//! [`scenarios::verify_workloads`] places an instance's workloads, then checks
//! rollout, the loss of each domain of the resolved level, the same loss on a
//! placement with ties broken against the level (above), the scale-down of
//! an autoscaled workload from its maximum ([`scale_down`]), the rolling update
//! and a drain of each node through the eviction API (see [`scenarios`]).
//!
//! # Performance
//! `cargo bench --bench sim_topology_spreading` runs upstream scheduler_perf's
//! TopologySpreading/5000Nodes_5000Pods shape (5000 nodes in 3 zones, 5000
//! existing pods, 5000 pods with a hard zone spread), and the same with kix's
//! own hostname + zone constraints. Scheduling groups interchangeable nodes
//! (see [`cluster`]) and keeps per-domain counts incrementally; it falls back
//! to evaluating every node for pods that single out nodes by name and for
//! inter-pod affinity (a pod with terms, or any pod while bound pods have them).
//!
//! # Layout
//! [`objects`] reads Nodes, Pods and Namespaces (quantities, taints, selectors and labels
//! come from [`kix_kube`], which is all of the compiler-side code sim uses),
//! [`plugins`] holds the filters and scores, [`interpod`] InterPodAffinity, [`cluster`] the mutable cluster
//! with the reference path ([`cluster::Cluster::cycle`], every node) and the
//! fast path ([`cluster::Cluster::select`], node classes and usage buckets,
//! same answer; changes journalled and undone in place, see [`cluster::Checkpoint`]),
//! [`workload`] stamps pods from Deployments and StatefulSets,
//! [`schedule`] answers typed `schedule`/`simulate` requests with reports, [`scenarios`] runs the
//! availability scenarios `kix verify` reports ([`world`] the state they change and roll back,
//! with per-workload and per-budget counters; [`domain_loss`] the domain losses and the
//! tie-break, [`scale_down`] the scale-down, [`voluntary`] the rolling update, [`drain`] the drain); [`audit`] judges pods as they
//! are bound now (`kix audit`, results in [`audit_report`]) and simulates the restart it proposes.

mod audit;
mod audit_report;
mod autoscale;
mod budget;
mod cluster;
mod domain_loss;
mod drain;
mod framework;
mod input;
mod interpod;
mod node_ports;
pub mod objects;
mod plugins;
mod quorum;
mod scale_down;
mod scenarios;
mod schedule;
pub mod snapshot;
#[cfg(test)]
mod test_rng;
mod verdict;
mod voluntary;
mod workload;
mod world;

pub use audit::audit_workloads;
pub use audit_report::{AuditRequest, AuditWorkload, PodStates, Remedy, SpreadAudit, Survival, WorkloadAudit};
pub use cluster::{Cluster, Cycle, Outcome};
pub use scenarios::verify_workloads;
pub use snapshot::State;
pub use verdict::{
    DomainLoss, Finding, FindingKind, FindingSubject, NodeGroup, Scenario, ScenarioRequest, ScenarioResult, Step,
    Survive, WorkloadLevel, WorkloadVerdict,
};

pub use input::{InputError, LocatedObjects, read_located, read_state};
pub use plugins::Scores;
pub use schedule::{ScheduleReport, ScheduleRequest, SimulateReport, SimulateRequest, schedule, simulate};
pub use workload::Workload;
