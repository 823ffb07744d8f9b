//! K0450: a workload's own required pod anti-affinity against the domains the cluster declares.
//!
//! A required `podAntiAffinity` term whose selector selects the workload's own pods allows one
//! of them per domain of its `topologyKey`, old and new revisions alike (the scheduler's
//! InterPodAffinity filter, pkg/scheduler/framework/plugins/interpodaffinity/filtering.go). When
//! the key is a failure-domain key and the cluster file says how many domains it has, kix checks
//! two things before anything is applied:
//!
//! - more replicas than domains: the extra pods stay Pending;
//! - a Deployment with `RollingUpdate`, as many replicas as domains and maxUnavailable 0 (as the
//!   Deployment controller resolves it, `deploymentutil.ResolveFenceposts`): the surge pod has no
//!   domain and no old pod may stop before a new one is available, so the rollout deadlocks
//!   (argo-cd's HA `argocd-redis-ha-haproxy` on three nodes is the public example).
//!
//! What kix knows from the cluster file: the node key's domains are the `[[nodePools]]`
//! inventory's nodes (distinct values of the key), or one on a confirmed single-node cluster;
//! the zone key's are `capabilities.availabilityZones`. Extra keys and unknown counts are not
//! checked (`kix verify` places the pods for those). A term scoped to the revision
//! (`matchLabelKeys: [pod-template-hash]`) keeps old and new pods apart, so only the first check
//! applies to it; a term with the pod's own key in `mismatchLabelKeys` never selects its own pods.
//! Namespaces follow the scheduler: none named and no `namespaceSelector` means the pod's own; a
//! `namespaceSelector` is matched against `kubernetes.io/metadata.name`, the one label kix knows.

use crate::resolve::{Cluster, Instance, InstanceWorkload, Workload};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::labels::{NAMESPACE_NAME, POD_TEMPLATE_HASH};
use kix_kube::selector::{Labels, Selector};
use kix_kube::value::{at, str_at};
use kix_yaml::Value;
use std::collections::BTreeSet;

/// K0450 for one workload of an instance.
pub fn check_anti_affinity(
    cluster: &Cluster,
    instance: &Instance,
    workload: &Workload,
    resolved: &InstanceWorkload,
    diagnostics: &mut Diagnostics,
) {
    let view = &workload.view;
    let path = ["spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"];
    let Some(terms) = at(&view.template, &path).and_then(Value::as_sequence) else { return };
    let replicas = i64::from(resolved.replicas);
    for (index, term) in terms.iter().enumerate() {
        let Some(key) = str_at(term, &["topologyKey"]) else { continue };
        let Some((domains, what)) = domains(cluster, key) else { continue };
        let Some(revision_scoped) = selects_own_pods(term, &view.template_labels, &instance.namespace) else {
            continue;
        };
        let stuck = if replicas > domains {
            let extra = replicas - domains;
            format!("{extra} of its pods would stay Pending")
        } else if replicas == domains && replicas > 0 && !revision_scoped && view.kind.deployment_like() {
            let Ok(strategy) = view.strategy() else { continue };
            let surge = strategy.max_surge.scaled_value(replicas, true);
            let unavailable = strategy.max_unavailable.scaled_value(replicas, false);
            // ResolveFenceposts: both 0 means maxUnavailable 1.
            if strategy.recreate || unavailable > 0 || surge == 0 {
                continue;
            }
            format!(
                "with maxSurge {surge} and maxUnavailable 0 its rolling update deadlocks (the surge pod has no \
                 domain left and no old pod may stop first), and a drain leaves the evicted pod Pending"
            )
        } else {
            continue;
        };
        let field = format!(
            "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[{index}].topologyKey"
        );
        let document = &instance.package.documents[workload.document];
        diagnostics.push(
            Diagnostic::new(
                Code::AntiAffinityDeadlock,
                format!(
                    "{} `{}` runs {replicas} replicas with required pod anti-affinity against its own pods on `{key}`, \
                     and cluster `{}` declares {what}: {stuck}",
                    view.kind.as_str(),
                    view.name,
                    cluster.name
                ),
            )
            .at(document.locate_field(&field))
            .about(&Subject { workload: Some(view.name.clone().into()), ..instance.subject.clone() })
            .help(if replicas > domains {
                "lower the replicas, add domains, or make the term preferred"
            } else {
                "set strategy.rollingUpdate.maxUnavailable to 1, or add `matchLabelKeys: [pod-template-hash]` to the term"
            }),
        );
    }
}

/// The number of domains of a failure-domain key the cluster file declares, with its wording.
fn domains(cluster: &Cluster, key: &str) -> Option<(i64, String)> {
    if key == cluster.domains.node {
        if !cluster.inventory.is_empty() {
            let values: BTreeSet<&String> = cluster.inventory.iter().filter_map(|n| n.labels.get(key)).collect();
            return Some((values.len() as i64, plural(values.len(), "node", " in its inventory")));
        }
        return cluster.substrate.single_node().then(|| (1, "a single node".to_string()));
    }
    if key == cluster.domains.zone {
        let zones = cluster.substrate.zones.as_ref()?;
        return Some((zones.len() as i64, plural(zones.len(), "availability zone", "")));
    }
    None
}

fn plural(n: usize, noun: &str, rest: &str) -> String {
    format!("{n} {noun}{}{rest}", kix_diag::words::s(n))
}

/// Whether a required anti-affinity term selects the workload's own pods (its template labels, in
/// its namespace); `Some(true)` when it selects only pods of the same revision.
fn selects_own_pods(term: &Value, own: &Labels, namespace: &str) -> Option<bool> {
    let selector = Selector::from_value(at(term, &["labelSelector"]).filter(|v| !v.is_null())?).ok()?;
    let keys = |field: &str| -> Vec<String> {
        at(term, &[field])
            .and_then(Value::as_sequence)
            .map(|l| l.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    };
    // A mismatch key the pod carries excludes the pod's own value: never its own pods.
    if keys("mismatchLabelKeys").iter().any(|k| own.contains_key(k)) || !selector.matches(own) {
        return None;
    }
    let names = keys("namespaces");
    let namespace_selector = at(term, &["namespaceSelector"]).filter(|v| !v.is_null());
    let in_namespace = match namespace_selector {
        None => names.is_empty() || names.iter().any(|n| n == namespace),
        Some(s) => {
            let labels: Labels = [(NAMESPACE_NAME.to_string(), namespace.to_string())].into_iter().collect();
            names.iter().any(|n| n == namespace) || Selector::from_value(s).ok()?.matches(&labels)
        }
    };
    in_namespace.then(|| keys("matchLabelKeys").iter().any(|k| k == POD_TEMPLATE_HASH))
}
