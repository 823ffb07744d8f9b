//! The modelled kube-scheduler plugins: filters and scores, with upstream semantics.
//!
//! Each function mirrors one plugin of the default profile (names as upstream)
//! and is shared by the reference path (every node) and the fast path (one
//! representative per group of interchangeable nodes), so both give the same
//! answer by construction. Reasons use the scheduler's own wording. Sources:
//! kubernetes/kubernetes `pkg/scheduler/framework/plugins/{nodeunschedulable,
//! nodename,tainttoleration,nodeaffinity,noderesources,volumebinding,podtopologyspread}`; InterPodAffinity has its
//! own file, [`super::interpod`].

pub use super::framework::{MAX_SCORE, Rejection};
use super::objects::{Node, Pod, Resources, When};
use kix_kube::labels::{HOSTNAME, ZONE};
use kix_kube::selector::{Labels, Selector};
use kix_kube::taints::{Effect, Taint, tolerations_tolerate};
use std::collections::HashMap;

/// Default-profile score weights.
pub const WEIGHT_TAINT: i64 = 3;
pub const WEIGHT_AFFINITY: i64 = 2;
pub const WEIGHT_SPREAD: i64 = 2;
pub const WEIGHT_FIT: i64 = 1;
pub const WEIGHT_BALANCED: i64 = 1;
/// InterPodAffinity (see [`super::interpod`]).
pub const WEIGHT_INTER_POD: i64 = 2;

/// A node the cluster autoscaler has not added (issue 39): never in a message (see `failure_text`).
pub const REASON_ABSENT: &str = "node(s) not provisioned";
pub const REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
pub const REASON_NODE_NAME: &str = "node(s) didn't match the requested node name";
/// `nodeaffinity.ErrReasonPod` (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go).
pub const REASON_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// VolumeBinding's reason for a node that a bound PersistentVolume's node affinity does not match
/// (pkg/scheduler/framework/plugins/volumebinding/binder.go, `ErrReasonNodeConflict`), in the words
/// FailedScheduling events give it on current releases (older ones: "had volume node affinity conflict").
pub const REASON_VOLUME_AFFINITY: &str = "node(s) didn't match PersistentVolume's node affinity";
pub const REASON_SPREAD: &str = "node(s) didn't match pod topology spread constraints";
pub const REASON_SPREAD_LABEL: &str = "node(s) didn't match pod topology spread constraints (missing required label)";

/// What a node uses: requests of its bound pods (terminating ones included, as upstream).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usage {
    /// Summed requests; `pods` is the number of pods on the node.
    pub requested: Resources,
    /// Summed non-zero requests (scoring defaults for containers without requests).
    pub nonzero: Resources,
}

impl Usage {
    pub fn add(&mut self, pod: &Pod, sign: i64) {
        let r = &pod.spec.requests;
        let n = &pod.spec.nonzero_requests;
        // Saturating: a quantity may saturate at i64::MAX (see `quantity`); it must never wrap.
        let add = |total: &mut i64, value: i64| *total = total.saturating_add(value.saturating_mul(sign));
        add(&mut self.requested.milli_cpu, r.milli_cpu);
        add(&mut self.requested.memory, r.memory);
        add(&mut self.requested.pods, 1);
        add(&mut self.nonzero.milli_cpu, n.milli_cpu);
        add(&mut self.nonzero.memory, n.memory);
    }
}

/// A spread constraint ready for evaluation: defaults applied, matchLabelKeys merged.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub max_skew: i64,
    pub key: String,
    /// None: a nil selector, which matches no pod.
    pub selector: Option<Selector>,
    pub min_domains: i64,
    pub honor_affinity: bool,
    pub honor_taints: bool,
}

impl Constraint {
    pub fn matches(&self, namespace: &str, pod: &Pod) -> bool {
        !pod.terminating && pod.namespace == namespace && self.selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
    }

    /// `matchNodeInclusionPolicies`: whether the node's pods and domain count for this constraint.
    pub fn includes(&self, pod: &Pod, node: &Node) -> bool {
        !node.absent
            && (!self.honor_affinity || pod.spec.matches_node_affinity(&node.name, &node.labels))
            && (!self.honor_taints || untolerated(pod, &node.taints, |e| e != Effect::PreferNoSchedule).is_none())
    }
}

/// The pod's spread constraints for one cycle.
#[derive(Clone, Debug, Default)]
pub struct Spread {
    /// DoNotSchedule constraints (filtering).
    pub hard: Vec<Constraint>,
    /// ScheduleAnyway constraints, or the system defaults (scoring).
    pub soft: Vec<Constraint>,
    /// False only for system-defaulted constraints: then nodes missing a key are still scored.
    pub require_all_keys: bool,
}

impl Spread {
    /// Builds the constraints as upstream `filterTopologySpreadConstraints` and `buildDefaultConstraints` do.
    pub fn of(pod: &Pod) -> Spread {
        let build = |when: When| -> Vec<Constraint> {
            pod.spec
                .spread
                .iter()
                .filter(|c| c.when == when)
                .map(|c| {
                    let mut selector = c.selector.clone();
                    if let Some(selector) = selector.as_mut() {
                        for key in &c.match_label_keys {
                            if let Some(value) = pod.labels.get(key) {
                                selector.match_labels.insert(key.clone(), value.clone());
                            }
                        }
                    }
                    Constraint {
                        max_skew: c.max_skew,
                        key: c.topology_key.clone(),
                        selector,
                        min_domains: c.min_domains,
                        honor_affinity: c.honor_affinity,
                        honor_taints: c.honor_taints,
                    }
                })
                .collect()
        };
        if !pod.spec.spread.is_empty() {
            return Spread {
                hard: build(When::DoNotSchedule),
                soft: build(When::ScheduleAnyway),
                require_all_keys: true,
            };
        }
        // System defaults: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway, with the owner's selector.
        let soft = match &pod.spec.default_selector {
            Some(selector) if !selector.is_empty() => [(HOSTNAME, 3), (ZONE, 5)]
                .into_iter()
                .map(|(key, max_skew)| Constraint {
                    max_skew,
                    key: key.to_string(),
                    selector: Some(selector.clone()),
                    min_domains: 1,
                    honor_affinity: true,
                    honor_taints: false,
                })
                .collect(),
            _ => Vec::new(),
        };
        Spread { hard: Vec::new(), soft, require_all_keys: false }
    }
}

/// Whether the node carries every constraint's key.
pub fn has_all_keys(labels: &Labels, constraints: &[Constraint]) -> bool {
    constraints.iter().all(|c| labels.contains_key(&c.key))
}

/// The first taint (in node order) with an effect `filter` accepts that no toleration tolerates.
pub fn untolerated<'a>(pod: &Pod, taints: &'a [Taint], filter: impl Fn(Effect) -> bool) -> Option<&'a Taint> {
    taints.iter().find(|t| filter(t.effect) && !tolerations_tolerate(&pod.spec.tolerations, t))
}

/// NodeUnschedulable, NodeName, TaintToleration and NodeAffinity: the filters that read only the node.
pub fn filter_node(pod: &Pod, node: &Node) -> Result<(), Rejection> {
    if node.absent {
        return Err(Rejection::one(REASON_ABSENT, true));
    }
    if node.unschedulable && !tolerations_tolerate(&pod.spec.tolerations, &Taint::unschedulable()) {
        return Err(Rejection::one(REASON_UNSCHEDULABLE, true));
    }
    if pod.spec.node_name.as_ref().is_some_and(|n| *n != node.name) {
        return Err(Rejection::one(REASON_NODE_NAME, true));
    }
    if let Some(taint) = untolerated(pod, &node.taints, |e| e != Effect::PreferNoSchedule) {
        return Err(Rejection::one(format!("node(s) had untolerated taint {{{}: {}}}", taint.key, taint.value), true));
    }
    if !pod.spec.matches_node_affinity(&node.name, &node.labels) {
        return Err(Rejection::one(REASON_AFFINITY, true));
    }
    Ok(())
}

/// VolumeBinding's filter on bound claims (`checkBoundClaims`): the node must match the bound volume's
/// node affinity; UnschedulableAndUnresolvable otherwise. It runs after NodeResourcesFit, as in the
/// default profile, so a full node that is also in the wrong zone reports Insufficient first.
pub fn filter_volume(pod: &Pod, node: &Node) -> Result<(), Rejection> {
    match &pod.spec.volume {
        Some(pin) if node.labels.get(&pin.key) != Some(&pin.value) => Err(Rejection::one(REASON_VOLUME_AFFINITY, true)),
        _ => Ok(()),
    }
}

/// NodeResourcesFit's filter: pod count, cpu and memory against allocatable.
pub fn filter_fit(pod: &Pod, allocatable: &Resources, usage: &Usage) -> Result<(), Rejection> {
    let mut reasons = Vec::new();
    if usage.requested.pods.saturating_add(1) > allocatable.pods {
        reasons.push("Too many pods".to_string());
    }
    let r = &pod.spec.requests;
    if r.milli_cpu > 0 && r.milli_cpu > allocatable.milli_cpu.saturating_sub(usage.requested.milli_cpu) {
        reasons.push("Insufficient cpu".to_string());
    }
    if r.memory > 0 && r.memory > allocatable.memory.saturating_sub(usage.requested.memory) {
        reasons.push("Insufficient memory".to_string());
    }
    if reasons.is_empty() { Ok(()) } else { Err(Rejection { reasons, unresolvable: false }) }
}

/// Domain value to matching pods, borrowing the values from node labels.
pub type DomainCounts<'a> = HashMap<&'a str, i64>;

/// One hard constraint's eligible domains and their counts (`TpValueToMatchNum`), with the
/// smallest count kept beside them so that each node's check is O(1).
#[derive(Clone, Debug, Default)]
pub struct Domains<'a> {
    pub counts: DomainCounts<'a>,
    min: i64,
    len: usize,
    /// Every node is its own domain (hostname) and the caller supplies each candidate's own
    /// count: `counts` is then empty and only `min` and `len` are kept.
    per_node: bool,
}

impl<'a> Domains<'a> {
    pub fn new(counts: DomainCounts<'a>) -> Domains<'a> {
        let min = counts.values().copied().min().unwrap_or(0);
        let len = counts.len();
        Domains { counts, min, len, per_node: false }
    }

    /// Per-node domains summarised by their number and their smallest count.
    pub fn per_node(len: usize, min: i64) -> Domains<'a> {
        Domains { counts: HashMap::new(), min, len, per_node: true }
    }

    /// The global minimum, 0 while there are fewer eligible domains than minDomains.
    pub fn global_min(&self, min_domains: i64) -> i64 {
        if (self.len as i64) < min_domains { 0 } else { self.min }
    }
}

/// PodTopologySpread's filter for one node, given each hard constraint's domains.
/// `own_count` is the node's own count for per-node domains (see [`Domains::per_node`]).
pub fn filter_spread(
    pod: &Pod,
    spread: &Spread,
    domains: &[Domains<'_>],
    labels: &Labels,
    own_count: i64,
) -> Result<(), Rejection> {
    for (c, d) in spread.hard.iter().zip(domains) {
        let Some(value) = labels.get(&c.key) else {
            return Err(Rejection::one(REASON_SPREAD_LABEL, true));
        };
        let self_match = i64::from(c.selector.as_ref().is_some_and(|s| s.matches(&pod.labels)));
        let count = if d.per_node { own_count } else { d.counts.get(value.as_str()).copied().unwrap_or(0) };
        if count + self_match - d.global_min(c.min_domains) > c.max_skew {
            return Err(Rejection::one(REASON_SPREAD, false));
        }
    }
    Ok(())
}

/// One candidate to score: a node (or a representative of interchangeable nodes) and its usage.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    pub node: &'a Node,
    pub usage: Usage,
    /// How many nodes this candidate stands for (1 on the reference path).
    pub multiplicity: usize,
}

/// Normalised per-plugin scores of one candidate and their weighted total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Scores {
    pub taint_toleration: i64,
    pub node_affinity: i64,
    pub pod_topology_spread: i64,
    /// Added by the cycle itself (every-node path), after [`score`].
    pub inter_pod_affinity: i64,
    pub least_allocated: i64,
    pub balanced_allocation: i64,
    pub total: i64,
}

/// NodeResourcesFit LeastAllocated (cpu and memory, weight 1 each) on non-zero requests.
pub fn least_allocated(pod: &Pod, allocatable: &Resources, usage: &Usage) -> i64 {
    let pairs = [
        (usage.nonzero.milli_cpu.saturating_add(pod.spec.nonzero_requests.milli_cpu), allocatable.milli_cpu),
        (usage.nonzero.memory.saturating_add(pod.spec.nonzero_requests.memory), allocatable.memory),
    ];
    let (mut sum, mut weights) = (0, 0);
    for (requested, capacity) in pairs {
        if capacity == 0 {
            continue;
        }
        // In 128 bits: a saturated capacity times MAX_SCORE does not fit in 64.
        let score = (i128::from(capacity) - i128::from(requested)) * i128::from(MAX_SCORE) / i128::from(capacity);
        sum += if requested > capacity { 0 } else { score as i64 };
        weights += 1;
    }
    if weights == 0 { 0 } else { sum / weights }
}

/// NodeResourcesBalancedAllocation on real requests; None when skipped (best-effort pod).
pub fn balanced_allocation(pod: &Pod, allocatable: &Resources, usage: &Usage) -> Option<i64> {
    let r = &pod.spec.requests;
    if r.milli_cpu == 0 && r.memory == 0 {
        return None;
    }
    let pairs = [
        (usage.requested.milli_cpu.saturating_add(r.milli_cpu), allocatable.milli_cpu),
        (usage.requested.memory.saturating_add(r.memory), allocatable.memory),
    ];
    let fractions: Vec<f64> =
        pairs.iter().filter(|(_, a)| *a != 0).map(|(q, a)| (*q as f64 / *a as f64).min(1.0)).collect();
    let std = if fractions.len() == 2 { ((fractions[0] - fractions[1]) / 2.0).abs() } else { 0.0 };
    Some(((1.0 - std) * MAX_SCORE as f64) as i64)
}

/// Scores every feasible candidate as the default profile does, with each plugin's normalisation.
///
/// `soft_counts[i]` maps a domain value of soft constraint `i` to its matching pods (PreScore's
/// counts over all nodes); `host_count(candidate, i)` is the per-node count for hostname keys.
pub fn score(
    pod: &Pod,
    spread: &Spread,
    candidates: &[Candidate<'_>],
    soft_counts: &[DomainCounts<'_>],
    host_count: impl Fn(usize, usize) -> i64,
) -> Vec<Scores> {
    let n = candidates.len();
    let mut out = vec![Scores::default(); n];
    // TaintToleration: intolerable PreferNoSchedule taints, reversed normalisation.
    let prefer: Vec<_> =
        pod.spec.tolerations.iter().filter(|t| t.effect.is_none_or(|e| e == Effect::PreferNoSchedule)).collect();
    let taint_raw: Vec<i64> = candidates
        .iter()
        .map(|c| {
            c.node
                .taints
                .iter()
                .filter(|t| t.effect == Effect::PreferNoSchedule && !prefer.iter().any(|tol| tol.tolerates(t)))
                .count() as i64
        })
        .collect();
    let taint_max = taint_raw.iter().copied().max().unwrap_or(0);
    // NodeAffinity preferred terms (skipped when the pod has none).
    let affinity_raw: Vec<i64> = candidates
        .iter()
        .map(|c| {
            pod.spec
                .preferred_terms
                .iter()
                .filter(|(_, t)| t.matches(&c.node.name, &c.node.labels))
                .map(|(w, _)| *w)
                .sum()
        })
        .collect();
    let affinity_max = affinity_raw.iter().copied().max().unwrap_or(0);
    // PodTopologySpread.
    let spread_scores = spread_scores(spread, candidates, soft_counts, host_count);
    for (i, c) in candidates.iter().enumerate() {
        let s = &mut out[i];
        s.taint_toleration = if taint_max == 0 { MAX_SCORE } else { MAX_SCORE - MAX_SCORE * taint_raw[i] / taint_max };
        s.node_affinity = if affinity_max == 0 { 0 } else { MAX_SCORE * affinity_raw[i] / affinity_max };
        s.pod_topology_spread = spread_scores.as_ref().map_or(0, |v| v[i]);
        s.least_allocated = least_allocated(pod, &c.node.allocatable, &c.usage);
        s.balanced_allocation = balanced_allocation(pod, &c.node.allocatable, &c.usage).unwrap_or(0);
        s.total = WEIGHT_TAINT * s.taint_toleration
            + WEIGHT_AFFINITY * s.node_affinity
            + WEIGHT_SPREAD * s.pod_topology_spread
            + WEIGHT_FIT * s.least_allocated
            + WEIGHT_BALANCED * s.balanced_allocation;
    }
    out
}

/// PodTopologySpread's normalised scores, or None when the plugin is skipped (no soft constraints).
fn spread_scores(
    spread: &Spread,
    candidates: &[Candidate<'_>],
    soft_counts: &[DomainCounts<'_>],
    host_count: impl Fn(usize, usize) -> i64,
) -> Option<Vec<i64>> {
    if spread.soft.is_empty() {
        return None;
    }
    let ignored: Vec<bool> =
        candidates.iter().map(|c| spread.require_all_keys && !has_all_keys(&c.node.labels, &spread.soft)).collect();
    // Topology sizes over the scored candidates: distinct values, or nodes for hostname.
    let weights: Vec<f64> = spread
        .soft
        .iter()
        .map(|con| {
            let size = if con.key == HOSTNAME {
                candidates.iter().zip(&ignored).filter(|(_, ig)| !**ig).map(|(c, _)| c.multiplicity).sum::<usize>()
            } else {
                let mut values: Vec<&str> = candidates
                    .iter()
                    .zip(&ignored)
                    .filter(|(_, ig)| !**ig)
                    .map(|(c, _)| c.node.labels.get(&con.key).map_or("", String::as_str))
                    .collect();
                values.sort_unstable();
                values.dedup();
                values.len()
            };
            ((size + 2) as f64).ln()
        })
        .collect();
    let raw: Vec<i64> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if ignored[i] {
                return 0;
            }
            let mut total = 0.0;
            for (ci, con) in spread.soft.iter().enumerate() {
                let Some(value) = c.node.labels.get(&con.key) else { continue };
                let count = if con.key == HOSTNAME {
                    host_count(i, ci)
                } else {
                    soft_counts[ci].get(value.as_str()).copied().unwrap_or(0)
                };
                total += count as f64 * weights[ci] + (con.max_skew - 1) as f64;
            }
            total.round() as i64
        })
        .collect();
    let scored = || raw.iter().zip(&ignored).filter(|(_, ig)| !**ig).map(|(r, _)| *r);
    let min = scored().min().unwrap_or(0);
    let max = scored().max().unwrap_or(0).max(0);
    Some(
        raw.iter()
            .zip(&ignored)
            .map(|(r, ig)| {
                if *ig {
                    0
                } else if max == 0 {
                    MAX_SCORE
                } else {
                    MAX_SCORE * (max + min - r) / max
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_pod;

    fn pod(yaml: &str) -> Pod {
        parse_pod(&kix_yaml::from_str(yaml).unwrap(), "default").unwrap()
    }

    #[test]
    fn global_minimum_is_zero_below_min_domains() {
        let domains = Domains::new([("a", 2), ("b", 3)].into_iter().collect());
        assert_eq!(domains.global_min(1), 2);
        assert_eq!(domains.global_min(2), 2);
        assert_eq!(domains.global_min(3), 0);
        assert_eq!(Domains::new(HashMap::new()).global_min(1), 0);
    }

    #[test]
    fn resource_scores_follow_the_upstream_worked_examples() {
        // least_allocated_test.go: 3000m/5000 requested on 4000m/10000 gives (25 + 50) / 2 = 37.
        let p = pod(
            "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: {cpu: '1', memory: '2000'}}}, {name: b, resources: {requests: {cpu: '2', memory: '3000'}}}]}",
        );
        let node = Resources { milli_cpu: 4000, memory: 10000, pods: 10 };
        assert_eq!(least_allocated(&p, &node, &Usage::default()), 37);
        // balanced_allocation_test.go: fractions 0.75 and 0.5 give (1 - 0.125) * 100 = 87.
        assert_eq!(balanced_allocation(&p, &node, &Usage::default()), Some(87));
        // A best-effort pod skips BalancedAllocation.
        let best_effort = pod("kind: Pod\nmetadata: {name: q}\nspec: {containers: [{name: a}]}");
        assert_eq!(balanced_allocation(&best_effort, &node, &Usage::default()), None);
    }

    #[test]
    fn fit_reports_every_insufficient_resource() {
        let p = pod(
            "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: {cpu: '2', memory: 2Gi}}}]}",
        );
        let node = Resources { milli_cpu: 1000, memory: 1 << 30, pods: 1 };
        let usage = Usage { requested: Resources { pods: 1, ..Resources::default() }, ..Usage::default() };
        let rejection = filter_fit(&p, &node, &usage).unwrap_err();
        assert_eq!(rejection.message(), "Too many pods, Insufficient cpu, Insufficient memory");
        assert!(!rejection.unresolvable);
    }
}
