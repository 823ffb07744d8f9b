//! Pod affinity and anti-affinity rules (K0715, K0716, K0724), read as kube-scheduler's InterPodAffinity plugin reads
//! them (`pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`): a required
//! anti-affinity term whose selector matches the pod's own labels (in the pod's namespace, or the
//! namespaces it lists) lets no second such pod into a domain of its `topologyKey`
//! (`satisfiesPodsAffinityAntiAffinity`), so it caps the workload at one pod per domain.
//!
//! A workload with two or more replicas and neither spread constraints nor anti-affinity gets only
//! the scheduler's soft system defaults (`podtopologyspread/plugin.go`
//! `systemDefaultConstraints`: ScheduleAnyway over hostname and zone), which a busy node
//! outweighs; kube-score, kube-linter (`no-anti-affinity`) and Polaris flag it too. Pods that take a
//! `hostPort` are not flagged: NodePorts already lets one of them on a node.
//!
//! A term whose selector takes in none of the workload's own pods and no pod of another workload
//! of the manifests (nor the pods an operator of the manifests runs) selects nothing the manifests
//! run (K0724, issue 43): a required or preferred anti-affinity term then keeps the pods apart from
//! nothing, a preferred affinity term prefers nothing, and a required affinity term is met only by a
//! pod the cluster runs beside them (`satisfyPodAffinity`: the first pod may pass its own term only
//! if it matches it). A nil selector selects no pod (`labels.Nothing()`). ZooKeeper's docs write
//! `app In [zk]` over pods labelled `app.kubernetes.io/name: zk`: every replica may share one node.

use super::facts::ClusterFacts;
use super::pod_spec::{PodTerm, TermList};
use super::set::{Set, Target};
use super::spread::show_labels;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::labels::ZONE;

/// The deprecated beta zone key, still on many clusters' nodes.
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";

/// Whether a key names zones: the well-known zone keys, or the declared cluster's zone key.
pub(crate) fn is_zone_key(key: &str, facts: Option<&ClusterFacts>) -> bool {
    key == ZONE || key == BETA_ZONE || facts.is_some_and(|f| f.zone_key == key)
}

/// K0715, K0716 and K0724 over every workload.
pub fn check(set: &Set, facts: Option<&ClusterFacts>, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        for term in target.pod_terms.iter().filter(|t| !t.invalid && !selects_any(set, target, t)) {
            diagnostics.push(selects_nothing(target, term));
        }
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
        // A host port keeps its pods one per node (NodePorts), as required anti-affinity on the hostname would.
        let one_per_node = target.host_port.is_some();
        if replicas >= 2 && !spreads && anti.is_empty() && !preferred && !single_node && !one_per_node {
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

/// Whether a term's selector takes in a pod the manifests run: the workload's own, another workload's
/// in the term's namespaces, or one an operator of the manifests runs there.
fn selects_any(set: &Set, target: &Target, term: &PodTerm) -> bool {
    let Some(selector) = &term.selector else { return false };
    let takes = |namespace: &str| term.takes_namespace(&target.namespace, namespace);
    set.workloads.iter().any(|w| takes(&w.namespace) && selector.matches(w.pod_labels()))
        || set.operator_pods.iter().any(|(namespace, labels)| takes(namespace) && selector.matches(labels))
}

/// K0724 for one term: what it does (nothing), and the labels that select the workload's own pods.
fn selects_nothing(target: &Target, term: &PodTerm) -> Diagnostic {
    let key = &term.topology_key;
    let whom = match &term.selector {
        None => "has no labelSelector, so it selects no pod".to_string(),
        Some(_) => format!(
            "selects none of the workload's own pods (labels {}) and no other pod of these manifests",
            show_labels(target.pod_labels())
        ),
    };
    let does = match term.list {
        TermList::RequiredAnti => {
            format!("it keeps the pods apart from nothing, so every replica may share one `{key}` domain")
        }
        TermList::PreferredAnti => "it spreads nothing: no node scores lower for it".to_string(),
        TermList::Preferred => "it draws the pods to nothing: no node scores higher for it".to_string(),
        TermList::Required => format!(
            "it is met only where the cluster already runs a pod it selects in the same `{key}` domain; without \
             one, every pod stays Pending"
        ),
    };
    let purpose = match term.list {
        TermList::RequiredAnti | TermList::PreferredAnti => "keep the workload's own pods apart",
        TermList::Required | TermList::Preferred => "keep the workload's own pods together",
    };
    Diagnostic::new(
        Code::LintAffinitySelectsNothing,
        format!("the {} term on `{key}` of {} {whom}: {does}", term.list.describe(), target.label()),
    )
    .at(term.at_selector.clone())
    .workload(&target.name)
    .help(format!(
        "to {purpose}, select their labels in labelSelector (matchLabels: {}); a term over pods these manifests do \
         not hold is accepted with kix.dev/allow: \"K0724\" on the workload",
        show_labels(target.pod_labels())
    ))
}
