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
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::labels::ZONE;

/// The deprecated beta zone key, still on many clusters' nodes.
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";

/// Whether a key names zones: the well-known zone keys, or the declared cluster's zone key.
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
