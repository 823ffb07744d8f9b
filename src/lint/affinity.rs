//! Pod anti-affinity rules (K0715, K0716), read as kube-scheduler's InterPodAffinity plugin reads
//! them (`pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`): a required
//! anti-affinity term whose selector matches the pod's own labels (in the pod's namespace, or the
//! namespaces it lists) lets no second such pod into a domain of its `topologyKey`
//! (`satisfiesPodsAffinityAntiAffinity`), so it caps the workload at one pod per domain.
//!
//! A workload with two or more replicas and neither spread constraints nor anti-affinity gets only
//! the scheduler's soft system defaults (`podtopologyspread/plugin.go`
//! `systemDefaultConstraints`: ScheduleAnyway over hostname and zone), which a busy node
//! outweighs; kube-score, kube-linter (`no-anti-affinity`) and Polaris flag it too.

use super::facts::ClusterFacts;
use super::set::Set;
use crate::load::documents::Document;
use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use kix_kube::labels::ZONE;
use kix_kube::selector::{Labels, Selector};
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// The deprecated beta zone key, still on many clusters' nodes.
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";

/// One required anti-affinity term.
pub(crate) struct Term {
    pub topology_key: String,
    /// Whether its selector (and namespaces) take in the workload's own pods.
    pub self_matching: bool,
    /// Where the term is written.
    pub at: Location,
}

/// A required pod affinity term.
pub(crate) struct AffinityTerm {
    pub topology_key: String,
    pub at: Location,
}

fn terms<'a>(pod_spec: Option<&'a Value>, kind: &str, list: &str) -> &'a [Value] {
    pod_spec
        .and_then(|spec| at(spec, &["affinity", kind, list]))
        .and_then(Value::as_sequence)
        .map_or(&[], Vec::as_slice)
}

/// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution` of a pod spec whose pods carry
/// `labels` in `namespace`, located in the workload's document.
pub(crate) fn required_anti_affinity(
    pod_spec: Option<&Value>,
    labels: &Labels,
    namespace: &str,
    document: &Document,
) -> Vec<Term> {
    terms(pod_spec, "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
        .map(|(index, term)| Term {
            topology_key: str_at(term, &["topologyKey"]).unwrap_or_default().to_string(),
            self_matching: matches_own_pods(labels, namespace, term),
            at: document.locate_field(&format!(
                "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
            )),
        })
        .collect()
}

/// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`, located in the workload's document.
pub(crate) fn required_affinity(pod_spec: Option<&Value>, document: &Document) -> Vec<AffinityTerm> {
    terms(pod_spec, "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
        .map(|(index, term)| AffinityTerm {
            topology_key: str_at(term, &["topologyKey"]).unwrap_or_default().to_string(),
            at: document.locate_field(&format!(
                "spec.template.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
            )),
        })
        .collect()
}

/// Whether the pod spec has any preferred pod anti-affinity term.
pub(crate) fn has_preferred_anti_affinity(pod_spec: Option<&Value>) -> bool {
    !terms(pod_spec, "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").is_empty()
}

/// Whether a term's selector and namespaces take in pods with `labels` in `namespace` (the workload's own).
fn matches_own_pods(labels: &Labels, namespace: &str, term: &Value) -> bool {
    let Some(selector) = at(term, &["labelSelector"]).and_then(|s| Selector::from_value(s).ok()) else {
        return false;
    };
    let namespaces: Vec<&str> = at(term, &["namespaces"])
        .and_then(Value::as_sequence)
        .map_or(Vec::new(), |l| l.iter().filter_map(Value::as_str).collect());
    let namespace_selector = at(term, &["namespaceSelector"]);
    let in_namespace = match namespace_selector {
        Some(ns) if ns.as_mapping().is_some_and(|m| m.is_empty()) => true,
        Some(_) => namespaces.contains(&namespace),
        None => namespaces.is_empty() || namespaces.contains(&namespace),
    };
    in_namespace && selector.matches(labels)
}

pub(crate) fn is_zone_key(key: &str, facts: Option<&ClusterFacts>) -> bool {
    key == ZONE || key == BETA_ZONE || facts.is_some_and(|f| f.zone_key == key)
}

/// K0715 and K0716 over every workload.
pub fn check(set: &Set, facts: Option<&ClusterFacts>, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        let anti = &target.anti_affinity;
        for term in anti.iter().filter(|t| t.self_matching && is_zone_key(&t.topology_key, facts)) {
            diagnostics.push(
                Diagnostic::new(
                    Code::LintZoneAntiAffinity,
                    format!(
                        "{} requires pod anti-affinity against its own pods on `{}`: at most one pod per zone, so \
                         replicas beyond the number of zones (and surge pods in a rolling update) stay Pending",
                        target.label(),
                        term.topology_key
                    ),
                )
                .at(term.at.clone())
                .workload(&target.name)
                .help("spread with a topologySpreadConstraint on the zone key (maxSkew: 1) instead"),
            );
        }
        let single_node = facts.is_some_and(|f| f.single_node);
        let spreads = !target.constraints.is_empty();
        let preferred = target.preferred_anti_affinity;
        let replicas = set.high_replicas(target);
        if replicas >= 2 && !spreads && anti.is_empty() && !preferred && !single_node {
            diagnostics.push(
                Diagnostic::new(
                    Code::LintNoSpreadNoAntiAffinity,
                    format!(
                        "{} runs up to {replicas} replicas with neither topologySpreadConstraints nor pod \
                         anti-affinity, so they may all land on one node",
                        target.label()
                    ),
                )
                .at(target.at_pod_spec.clone())
                .workload(&target.name)
                .help("add topologySpreadConstraints over kubernetes.io/hostname (and the zone key) with the workload's selector"),
            );
        }
    }
}
