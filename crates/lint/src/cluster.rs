//! `kix lint --cluster NAME` (K0720-K0722): what only a declared cluster can tell. The cluster
//! file is read by the compiler's own load and resolve stages, so the substrate, failure-domain
//! keys and node inventory are exactly those `kix build` and `kix verify` use.
//!
//! The nodes are the inventory's when the file has `[[nodePools]]`; otherwise they are described
//! by the keys kix puts on inventory nodes (the node key, the zone key when zones are declared,
//! the `extra` keys), plus the labels every kubelet sets (`kubernetes.io/hostname`, `/os`,
//! `/arch`). A zone key on a cluster that does not declare `availabilityZones` is unknown, not
//! missing.
//!
//! What a hard rule can place, by upstream semantics:
//! - **DoNotSchedule spread** (`podtopologyspread/filtering.go`): a node without the key is
//!   unschedulable (missing required label). Otherwise skew = count + 1 - global minimum, and the
//!   global minimum is the smallest count over the eligible domains, **or 0 while there are fewer
//!   eligible domains than `minDomains`**. With `minDomains` at most the domain count the minimum
//!   rises as pods fill every domain, so any replica count places (maxSkew 1 on three zones
//!   places 100 pods 34/33/33); with `minDomains` above it, each domain takes at most `maxSkew`
//!   pods: the cap is `domains * maxSkew`.
//! - **Required pod anti-affinity** matching the workload's own pods
//!   (`interpodaffinity/filtering.go` `satisfiesPodsAffinityAntiAffinity`): one pod per domain of
//!   its key; the cap is the domain count. On a node without the key no term matches
//!   (`nodeMatchesAnyTopologyTerm`), so the rule separates nothing there.
//! - **Required pod affinity**: a node without the key fails it (`nodeMatchesAllTopologyTerms`).
//! - **A host port** (`nodeports/node_ports.go`): a pod does not fit a node where another pod holds
//!   the same `hostPort` (protocol and host IP), so a workload's pods are one per node; the cap is
//!   the node count.
//!
//! Domain counts are over all the cluster's nodes (a nodeSelector could narrow them further, so
//! a cap found here is an upper bound: what it reports is certain to stay Pending).

use super::facts::{ClusterFacts, Key};
use super::set::{Set, Target};
use kix_diag::{Code, Diagnostic, Diagnostics, Location};

/// K0720-K0722 over every workload.
pub fn check(set: &Set, facts: &ClusterFacts, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        missing_keys(target, facts, diagnostics);
        caps(set, target, facts, diagnostics);
    }
}

fn finding(target: &Target, facts: &ClusterFacts, code: Code, at: &Location, message: String) -> Diagnostic {
    let mut diagnostic = Diagnostic::new(code, message).at(at.clone()).workload(&target.name);
    diagnostic.subject.cluster = Some(facts.name.clone().into());
    diagnostic
}

/// K0720 (a hard spread or required affinity on a key the nodes lack), K0721 (required anti-affinity on one).
fn missing_keys(target: &Target, facts: &ClusterFacts, diagnostics: &mut Diagnostics) {
    let who = target.label();
    let lacks = |key: &str| facts.key(key) == Key::Absent;
    let help = "use a key the nodes carry, or declare it (failureDomains, or a node pool's labels)";
    for c in target.constraints.iter().filter(|c| c.hard() && lacks(&c.topology_key)) {
        let message = format!(
            "{} of {who} needs the node label `{}`, which {}: every pod stays Pending",
            c.describe(),
            c.topology_key,
            absent_from(facts)
        );
        diagnostics.push(finding(target, facts, Code::LintHardRuleOnMissingKey, &c.at, message).help(help));
    }
    for term in target.affinity.iter().filter(|t| lacks(&t.topology_key)) {
        let key = &term.topology_key;
        let message = format!(
            "the required pod affinity of {who} on `{key}` needs that node label, which {}: its pods stay Pending",
            absent_from(facts)
        );
        diagnostics.push(finding(target, facts, Code::LintHardRuleOnMissingKey, &term.at, message).help(help));
    }
    for term in target.anti_affinity.iter().filter(|t| lacks(&t.topology_key)) {
        let message = format!(
            "the required pod anti-affinity of {who} on `{}` uses that node label, which {}: it separates nothing",
            term.topology_key,
            absent_from(facts)
        );
        diagnostics.push(finding(target, facts, Code::LintAntiAffinityOnMissingKey, &term.at, message).help(help));
    }
}

/// Why a key counts as missing: "no node of cluster `prod`'s inventory (6 nodes) carries" or "cluster `prod` does
/// not declare (...)".
fn absent_from(facts: &ClusterFacts) -> String {
    if facts.nodes.is_empty() {
        format!(
            "cluster `{}` does not declare (it has no node inventory, and the key is none of its failure-domain keys)",
            facts.name
        )
    } else {
        format!("no node of cluster `{}`'s inventory ({} nodes) carries", facts.name, facts.nodes.len())
    }
}

/// K0722: replicas beyond what a hard rule can place on the declared domains.
fn caps(set: &Set, target: &Target, facts: &ClusterFacts, diagnostics: &mut Diagnostics) {
    let replicas = u64::from(set.high_replicas(target));
    let who = target.label();
    for c in target.constraints.iter().filter(|c| c.hard()) {
        let (Key::Present(Some(domains)), Some(min_domains)) = (facts.key(&c.topology_key), c.min_domains) else {
            continue;
        };
        let cap = domains as u64 * c.max_skew.max(1) as u64;
        if (min_domains as u64) > domains as u64 && replicas > cap {
            let message = format!(
                "{} of {who} has minDomains {min_domains} but `{}` has {} in cluster `{}`: the \
                 scheduler takes the global minimum as 0, so each domain holds at most {} (maxSkew) and at most \
                 {cap} of its {replicas} replicas place",
                c.describe(),
                c.topology_key,
                kix_diag::words::plural(domains, "domain"),
                facts.name,
                kix_diag::words::plural(usize::try_from(c.max_skew).unwrap_or(0), "pod")
            );
            diagnostics.push(
                finding(target, facts, Code::LintTooManyReplicas, &c.at_min_domains, message)
                    .help(format!("lower minDomains to {domains} or less, or run at most {cap} replicas")),
            );
        }
    }
    if let (Some((port, at)), Key::Present(Some(nodes))) = (&target.host_port, facts.key(kix_kube::labels::HOSTNAME)) {
        if replicas > nodes as u64 {
            let message = format!(
                "the pods of {who} take host port {port} on their node, so each node holds one of them, and cluster \
                 `{}` has {}: {} of its {replicas} replicas stay Pending (node(s) didn't have free ports for the \
                 requested pod ports)",
                facts.name,
                kix_diag::words::plural(nodes, "node"),
                replicas - nodes as u64
            );
            diagnostics.push(finding(target, facts, Code::LintTooManyReplicas, at, message).help(format!(
                "run at most {nodes} replicas, or drop the hostPort and reach the pods through a Service"
            )));
        }
    }
    for term in target.anti_affinity.iter().filter(|t| t.self_matching) {
        let Key::Present(Some(domains)) = facts.key(&term.topology_key) else { continue };
        if replicas > domains as u64 {
            let message = format!(
                "the required pod anti-affinity of {who} on `{}` allows one of its pods per domain, and cluster `{}` \
                 has {domains}: {} of its {replicas} replicas stay Pending",
                term.topology_key,
                facts.name,
                replicas - domains as u64
            );
            diagnostics.push(finding(target, facts, Code::LintTooManyReplicas, &term.at, message).help(format!(
                "run at most {domains} replicas, or spread with a DoNotSchedule topologySpreadConstraint instead"
            )));
        }
    }
}
