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
use super::set::{Set, Target};
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::labels::ZONE;
use kix_kube::selector::Selector;
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// The deprecated beta zone key, still on many clusters' nodes.
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";

/// One required anti-affinity term.
pub(crate) struct Term {
    pub index: usize,
    pub topology_key: String,
    /// Whether the term selects the workload's own pods (so it caps them at one per domain).
    pub self_matching: bool,
}

impl Term {
    pub fn path(&self) -> String {
        format!(
            "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[{}]",
            self.index
        )
    }
}

/// The terms of a list under `spec.template.spec.affinity.<kind>.<list>` (none when absent).
fn terms<'a>(target: &'a Target, kind: &str, list: &str) -> &'a [Value] {
    target
        .pod_spec()
        .and_then(|spec| at(spec, &["affinity", kind, list]))
        .and_then(Value::as_sequence)
        .map_or(&[], Vec::as_slice)
}

/// The workload's required pod anti-affinity terms.
pub(crate) fn required_anti_affinity(target: &Target) -> Vec<Term> {
    terms(target, "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
        .map(|(index, term)| Term {
            index,
            topology_key: str_at(term, &["topologyKey"]).unwrap_or_default().to_string(),
            self_matching: matches_own_pods(target, term),
        })
        .collect()
}

/// The keys of the workload's required pod affinity terms, with their index.
pub(crate) fn required_affinity_keys(target: &Target) -> Vec<(usize, String)> {
    terms(target, "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
        .map(|(i, term)| (i, str_at(term, &["topologyKey"]).unwrap_or_default().to_string()))
        .collect()
}

/// `PodMatchesTermsNamespaceAndSelector` for the workload's own pods: a non-nil selector that matches
/// them, in the pod's namespace (no `namespaces` and no `namespaceSelector`), a listed namespace, or
/// every namespace (`namespaceSelector: {}`). A non-empty namespaceSelector is not assumed to match.
fn matches_own_pods(target: &Target, term: &Value) -> bool {
    let Some(selector) = at(term, &["labelSelector"]).and_then(|s| Selector::from_value(s).ok()) else {
        return false;
    };
    let namespaces: Vec<&str> = at(term, &["namespaces"])
        .and_then(Value::as_sequence)
        .map_or(Vec::new(), |l| l.iter().filter_map(Value::as_str).collect());
    let namespace_selector = at(term, &["namespaceSelector"]);
    let in_namespace = match namespace_selector {
        Some(ns) if ns.as_mapping().is_some_and(|m| m.is_empty()) => true,
        Some(_) => namespaces.contains(&target.namespace.as_str()),
        None => namespaces.is_empty() || namespaces.contains(&target.namespace.as_str()),
    };
    in_namespace && selector.matches(target.pod_labels())
}

/// Whether a key names zones: the well-known zone keys, or the declared cluster's zone key.
pub(crate) fn is_zone_key(key: &str, facts: Option<&ClusterFacts>) -> bool {
    key == ZONE || key == BETA_ZONE || facts.is_some_and(|f| f.zone_key == key)
}

/// K0715 and K0716 over every workload.
pub fn check(set: &Set, facts: Option<&ClusterFacts>, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        let document = set.document(target.document);
        let anti = required_anti_affinity(target);
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
                .at(document.locate_field(&term.path()))
                .workload(&target.view.name)
                .help("spread with a topologySpreadConstraint on the zone key (maxSkew: 1) instead"),
            );
        }
        let single_node = facts.is_some_and(|f| f.single_node);
        let spreads = !super::spread::constraints(target).is_empty();
        let preferred = !terms(target, "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").is_empty();
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
                .at(document.locate(&["spec", "template", "spec"]))
                .workload(&target.view.name)
                .help("add topologySpreadConstraints over kubernetes.io/hostname (and the zone key) with the workload's selector"),
            );
        }
    }
}
