//! Node inventories: a cluster file's `[[nodePools]]`, validated against its
//! declared capabilities and failure-domain keys, and expanded into typed nodes
//! for the scheduler model.
//!
//! The inventory is what `kix verify` simulates on when no snapshot is given.
//! Nodes are named `<pool>-<zone>-<n>` (or `<pool>-<n>` without zones) and are
//! labelled as real nodes are ([`node_labels`]): what every kubelet sets
//! (`kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`; upstream
//! `initialNode` in pkg/kubelet/kubelet_node_status.go), what a cloud provider
//! sets (`topology.kubernetes.io/zone` and `region`,
//! `node.kubernetes.io/instance-type`, each with its deprecated beta twin), the
//! cluster's own node and zone keys, the values of the pool's
//! `[nodePools.domains]` (round-robin within each zone), then the pool's own
//! labels and taints.

use super::substrate::{FailureDomains, Substrate};
use crate::load::cluster::{NodesPerZone, RawNodePool};
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use kix_kube::labels as well_known;
use kix_kube::names;
use kix_kube::quantity;
use kix_kube::selector::Labels;
use kix_kube::taints::{Effect, Taint};
use toml::Spanned;

/// A problem with a pool: where in the cluster file, and what.
type Problem = (std::ops::Range<usize>, String);

/// `kubernetes.io/os` when a pool says nothing: the kubelet's `GOOS` on the nodes real packages target.
pub const DEFAULT_OS: &str = "linux";
/// `kubernetes.io/arch` when a pool says nothing.
pub const DEFAULT_ARCH: &str = "amd64";

/// Checks every pool of a cluster file; true when all are usable.
pub fn validate(
    pools: &[RawNodePool],
    substrate: &Substrate,
    domains: &FailureDomains,
    source: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> bool {
    let mut problems: Vec<(Code, std::ops::Range<usize>, String)> = Vec::new();
    let coded = |code: Code, found: Vec<Problem>| found.into_iter().map(move |(span, message)| (code, span, message));
    // Duplicates and declared zones by hashing: a cluster may declare 100,000 zones (issue 19).
    let mut seen = std::collections::HashSet::new();
    let declared: Option<std::collections::HashSet<&str>> =
        substrate.zones.as_ref().map(|zones| zones.iter().map(String::as_str).collect());
    for pool in pools {
        let name = pool.name.get_ref();
        if let Err(why) = names::dns1123_label(name) {
            let message = format!("node pool name `{name}` is not valid: {why}");
            problems.push((Code::InvalidNodePool, pool.name.span(), message));
        } else if !seen.insert(name.as_str()) {
            problems.push((Code::InvalidNodePool, pool.name.span(), format!("node pool `{name}` is declared twice")));
        }
        problems.extend(coded(Code::InvalidNodePool, zone_problems(pool, substrate, declared.as_ref())));
        problems.extend(coded(Code::InvalidNodePool, node_problems(pool)));
        problems.extend(coded(Code::InvalidNodeSetting, setting_problems(pool)));
        problems.extend(coded(Code::InvalidPoolDomains, domain_problems(pool, domains)));
        problems.extend(coded(Code::PoolLabelConflict, label_conflicts(pool, domains)));
    }
    problems.extend(coded(Code::InvalidNodePool, node_name_collisions(pools)));
    // The node count against multiNode, once every pool is well-formed (a bad pool says why itself).
    if problems.is_empty() {
        problems.extend(coded(Code::InvalidNodePool, node_count_problems(pools, substrate)));
    }
    for (code, span, message) in &problems {
        diagnostics.push(Diagnostic::new(*code, message.clone()).at(source.locate(span.clone())).about(subject));
    }
    problems.is_empty()
}

/// The pool's zones must be declared ones (`declared`: the cluster's zones, when it lists them), and a
/// cluster with zones needs them named.
fn zone_problems(
    pool: &RawNodePool,
    substrate: &Substrate,
    declared: Option<&std::collections::HashSet<&str>>,
) -> Vec<Problem> {
    let name = pool.name.get_ref();
    let mut problems = Vec::new();
    for zone in &pool.zones {
        if !declared.is_some_and(|zones| zones.contains(zone.get_ref().as_str())) {
            let listed = match &substrate.zones {
                Some(zones) if !zones.is_empty() => format!("the cluster declares {}", zones.join(", ")),
                _ => "the cluster declares no capabilities.availabilityZones".to_string(),
            };
            problems.push((
                zone.span(),
                format!("node pool `{name}` uses zone `{}`, which is not declared: {listed}", zone.get_ref()),
            ));
        }
    }
    if pool.zones.is_empty() && substrate.zone_count() >= 2 {
        problems.push((
            pool.name.span(),
            format!("node pool `{name}` lists no zones, but the cluster declares {} zones", substrate.zone_count()),
        ));
    }
    problems
}

/// What each node of the pool carries: a count, labels, taints and allocatable quantities.
fn node_problems(pool: &RawNodePool) -> Vec<Problem> {
    let name = pool.name.get_ref();
    let at = pool.name.span();
    let mut problems = Vec::new();
    let at_count = pool.nodes_per_zone.span();
    match pool.nodes_per_zone.get_ref() {
        NodesPerZone::Each(0) => problems.push((at_count, format!("node pool `{name}` has nodesPerZone = 0"))),
        NodesPerZone::Each(_) => {}
        NodesPerZone::ByZone(_) if pool.zones.is_empty() => problems.push((
            at_count,
            format!("node pool `{name}` lists no zones, so nodesPerZone is one count (`nodesPerZone = 2`)"),
        )),
        NodesPerZone::ByZone(counts) => {
            let zones: Vec<&str> = pool.zones.iter().map(|z| z.get_ref().as_str()).collect();
            for zone in counts.keys().filter(|z| !zones.contains(&z.as_str())) {
                problems.push((
                    at_count.clone(),
                    format!(
                        "node pool `{name}` counts nodes in zone `{zone}`, which is not one of its zones ({})",
                        zones.join(", ")
                    ),
                ));
            }
            for zone in zones.iter().filter(|z| !counts.contains_key(**z)) {
                problems.push((
                    at_count.clone(),
                    format!("node pool `{name}` gives no count for its zone `{zone}` (write `{zone} = 0` for none)"),
                ));
            }
            if counts.values().all(|n| *n == 0) {
                problems.push((at_count, format!("node pool `{name}` has no node in any zone")));
            }
        }
    }
    if let Some(max) = &pool.max_nodes_per_zone {
        let zones: Vec<Option<&str>> = if pool.zones.is_empty() {
            vec![None]
        } else {
            pool.zones.iter().map(|z| Some(z.get_ref().as_str())).collect()
        };
        let most = zones.iter().map(|z| pool.nodes_per_zone.get_ref().in_zone(*z)).max().unwrap_or(0);
        if *max.get_ref() < most {
            problems.push((
                max.span(),
                format!(
                    "node pool `{name}` has maxNodesPerZone = {} below the {most} nodes it runs in a zone",
                    max.get_ref()
                ),
            ));
        }
    }
    for (key, value) in &pool.labels {
        if let Err(why) = names::label_key(key).and_then(|()| names::label_value(value)) {
            problems.push((at.clone(), format!("node pool `{name}` label `{key}={value}` is not valid: {why}")));
        }
    }
    for taint in &pool.taints {
        if Effect::parse(&taint.effect).is_none() {
            problems.push((
                at.clone(),
                format!(
                    "node pool `{name}` taint `{}` has effect `{}` (NoSchedule, PreferNoSchedule or NoExecute)",
                    taint.key, taint.effect
                ),
            ));
        }
        if let Err(why) = names::label_key(&taint.key) {
            problems.push((at.clone(), format!("node pool `{name}` taint key `{}` is not valid: {why}", taint.key)));
        }
    }
    let allocatable = &pool.allocatable;
    // A node's allocatable is never negative (`ValidateNonnegativeQuantity` on node status,
    // pkg/apis/core/validation/validation.go).
    let negative = "a node's allocatable cannot be negative";
    match quantity::milli(&allocatable.cpu) {
        Err(why) => {
            let message = format!("node pool `{name}` allocatable cpu `{}` is not a quantity: {why}", allocatable.cpu);
            problems.push((at.clone(), message));
        }
        Ok(value) if value < 0 => {
            problems
                .push((at.clone(), format!("node pool `{name}` allocatable cpu `{}`: {negative}", allocatable.cpu)));
        }
        Ok(_) => {}
    }
    match quantity::units(&allocatable.memory) {
        Err(why) => {
            let message =
                format!("node pool `{name}` allocatable memory `{}` is not a quantity: {why}", allocatable.memory);
            problems.push((at, message));
        }
        Ok(value) if value < 0 => {
            problems.push((at, format!("node pool `{name}` allocatable memory `{}`: {negative}", allocatable.memory)));
        }
        Ok(_) => {}
    }
    problems
}

/// Node names must be unique: zones that differ only in case or punctuation would collide.
fn node_name_collisions(pools: &[RawNodePool]) -> Vec<Problem> {
    let mut names = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    for pool in pools {
        for zone in &pool.zones {
            let name = format!("{}-{}", pool.name.get_ref(), dns_safe(zone.get_ref()));
            if !names.insert(name.clone()) {
                problems.push((
                    zone.span(),
                    format!("zone `{}` gives node names (`{name}-1`, ...) that another zone gives too", zone.get_ref()),
                ));
            }
        }
    }
    problems
}

/// The nodes a pool holds, over its zones.
fn pool_size(pool: &RawNodePool) -> u64 {
    let zones: Vec<Option<&str>> = if pool.zones.is_empty() {
        vec![None]
    } else {
        pool.zones.iter().map(|z| Some(z.get_ref().as_str())).collect()
    };
    zones.into_iter().map(|zone| u64::from(pool.nodes_per_zone.get_ref().in_zone(zone))).sum()
}

/// The number of nodes against `multiNode` and kix's simulation limit.
fn node_count_problems(pools: &[RawNodePool], substrate: &Substrate) -> Vec<Problem> {
    let Some(first) = pools.first() else { return Vec::new() };
    let total: u64 = pools.iter().map(pool_size).sum();
    let nodes = |n: u64| format!("{n} node{}", kix_diag::words::s(n));
    let mut problems = Vec::new();
    match substrate.multi_node {
        Some(false) if total > 1 => problems.push((
            first.name.span(),
            format!("the cluster is declared single-node, but its node pools hold {}", nodes(total)),
        )),
        Some(true) if total < 2 => problems.push((
            first.name.span(),
            format!("the cluster is declared multi-node, but its node pools hold {}", nodes(total)),
        )),
        _ => {}
    }
    if total > 100_000 {
        problems.push((first.name.span(), format!("the node pools hold {total} nodes; kix simulates at most 100000")));
    }
    problems
}

/// The pool's settings that become node labels, each with the key it sets.
fn settings(pool: &RawNodePool) -> [(&'static str, &'static str, Option<&Spanned<String>>); 4] {
    [
        ("os", well_known::OS, pool.os.as_ref()),
        ("arch", well_known::ARCH, pool.arch.as_ref()),
        ("region", well_known::REGION, pool.region.as_ref()),
        ("instanceType", well_known::INSTANCE_TYPE, pool.instance_type.as_ref()),
    ]
}

/// `os`, `arch`, `region` and `instanceType` are label values, never empty.
fn setting_problems(pool: &RawNodePool) -> Vec<Problem> {
    let name = pool.name.get_ref();
    let mut problems = Vec::new();
    for (setting, key, value) in settings(pool) {
        let Some(value) = value else { continue };
        let why = match names::label_value(value.get_ref()) {
            Err(why) => why,
            Ok(()) if value.get_ref().is_empty() => "must not be empty".to_string(),
            Ok(()) => continue,
        };
        problems.push((
            value.span(),
            format!(
                "node pool `{name}` {setting} `{}` (the value of `{key}`) is not a valid label value: {why}",
                value.get_ref()
            ),
        ));
    }
    problems
}

/// `[nodePools.domains]`: keys among the cluster's extra keys, each with a list of distinct label values.
fn domain_problems(pool: &RawNodePool, domains: &FailureDomains) -> Vec<Problem> {
    let name = pool.name.get_ref();
    let mut problems = Vec::new();
    for (key, values) in &pool.domains {
        if !domains.extra.contains(key.get_ref()) {
            let declared = if domains.extra.is_empty() {
                "the cluster declares no failureDomains.extra keys".to_string()
            } else {
                format!("the cluster's failureDomains.extra keys are {}", domains.extra.join(", "))
            };
            let role = if key.get_ref() == &domains.node {
                " (it is the node key: kix sets it to each node's name)"
            } else if key.get_ref() == &domains.zone {
                " (it is the zone key: kix sets it from zones)"
            } else {
                ""
            };
            problems.push((
                key.span(),
                format!("node pool `{name}` spreads its nodes over `{}`, which is not an extra failure-domain key{role}: {declared}", key.get_ref()),
            ));
            continue;
        }
        if values.is_empty() {
            problems.push((key.span(), format!("node pool `{name}` lists no values for `{}`", key.get_ref())));
        }
        let mut listed = std::collections::HashSet::new();
        for value in values {
            let why = match names::label_value(value.get_ref()) {
                Err(why) => format!("is not a valid label value: {why}"),
                Ok(()) if value.get_ref().is_empty() => "is not a valid label value: must not be empty".to_string(),
                Ok(()) if !listed.insert(value.get_ref().as_str()) => "is listed twice".to_string(),
                Ok(()) => continue,
            };
            problems.push((
                value.span(),
                format!("node pool `{name}` value `{}` of `{}` {why}", value.get_ref(), key.get_ref()),
            ));
        }
    }
    problems
}

/// A pool's `labels` may not set what kix sets from the node's name, its zone, the pool's
/// domains or one of its settings: one label, one way to say it.
fn label_conflicts(pool: &RawNodePool, domains: &FailureDomains) -> Vec<Problem> {
    let name = pool.name.get_ref();
    let mut problems = Vec::new();
    for key in pool.labels.keys() {
        let why = if key == &domains.node || key == well_known::HOSTNAME {
            "kix sets it to each node's name".to_string()
        } else if !pool.zones.is_empty() && (key == &domains.zone || key == well_known::ZONE) {
            "kix sets it to each node's zone from `zones`".to_string()
        } else if pool.domains.keys().any(|k| k.get_ref() == key) {
            "[nodePools.domains] sets it too".to_string()
        } else if let Some((setting, _, _)) = settings(pool).into_iter().find(|(_, k, v)| k == key && v.is_some()) {
            format!("the pool's `{setting}` sets it too")
        } else {
            continue;
        };
        problems.push((pool.name.span(), format!("node pool `{name}` label `{key}` conflicts: {why}")));
    }
    problems
}

/// K0313: each extra failure-domain key that the nodes of some or all pools lack (their
/// `labels` and `domains` do not give it). Only with an inventory: without one kix knows nothing
/// of the nodes.
pub fn missing_extra_keys(pools: &[RawNodePool], extra: &[Spanned<String>]) -> Vec<Problem> {
    if pools.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for key in extra {
        let lacking: Vec<&str> = pools
            .iter()
            .filter(|p| {
                !p.labels.contains_key(key.get_ref()) && !p.domains.keys().any(|k| k.get_ref() == key.get_ref())
            })
            .map(|p| p.name.get_ref().as_str())
            .collect();
        if lacking.is_empty() {
            continue;
        }
        let (which, effect) = if lacking.len() == pools.len() {
            (
                "no node of the inventory carries it".to_string(),
                "kix's soft spreading (the zone at level node, the hostname at level zone) does nothing on this cluster",
            )
        } else {
            (
                format!(
                    "the nodes of node pool{} `{}` lack it",
                    kix_diag::words::s(lacking.len()),
                    lacking.join("`, `")
                ),
                "kix's soft spreading steers replicas away from those nodes whatever they hold",
            )
        };
        problems.push((
            key.span(),
            format!(
                "failure-domain key `{}` is declared, but {which}: the scheduler's spread scoring skips a node lacking \
                 any key of a pod's ScheduleAnyway constraints and gives it 0 for all of them, so {effect}",
                key.get_ref()
            ),
        ));
    }
    problems
}

/// One node of an inventory, as `kix verify` simulates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InventoryNode {
    pub name: String,
    pub labels: Labels,
    pub taints: Vec<Taint>,
    /// Allocatable milli-CPU, memory bytes and pod slots.
    pub milli_cpu: i64,
    pub memory: i64,
    pub pods: i64,
}

/// One pool's node group in one zone that the cluster autoscaler may grow (issue 39): the nodes it may
/// add, named and labelled as the pool's next nodes there, in the order it would add them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGroup {
    pub pool: String,
    pub zone: Option<String>,
    pub nodes: Vec<InventoryNode>,
}

/// The nodes of a validated inventory, in pool, zone and index order.
pub fn expand(pools: &[RawNodePool], domains: &FailureDomains) -> Vec<InventoryNode> {
    expand_range(pools, domains, |pool, zone| 1..=pool.nodes_per_zone.get_ref().in_zone(zone))
        .into_iter()
        .flat_map(|g| g.nodes)
        .collect()
}

/// The node groups of the pools with `maxNodesPerZone`: per pool and zone, the nodes above
/// `nodesPerZone` up to the maximum (groups with none left are not listed).
pub fn node_groups(pools: &[RawNodePool], domains: &FailureDomains) -> Vec<NodeGroup> {
    let groups = expand_range(pools, domains, |pool, zone| {
        let runs = pool.nodes_per_zone.get_ref().in_zone(zone);
        // Without a maximum the group holds what runs: nothing to add.
        let max = pool.max_nodes_per_zone.as_ref().map_or(runs, |max| *max.get_ref());
        runs + 1..=max
    });
    groups.into_iter().filter(|g| !g.nodes.is_empty()).collect()
}

/// Per pool and zone, the nodes whose indices `range` gives.
fn expand_range(
    pools: &[RawNodePool],
    domains: &FailureDomains,
    range: impl Fn(&RawNodePool, Option<&str>) -> std::ops::RangeInclusive<u32>,
) -> Vec<NodeGroup> {
    let mut groups = Vec::new();
    for pool in pools {
        let zones: Vec<Option<&str>> = if pool.zones.is_empty() {
            vec![None]
        } else {
            pool.zones.iter().map(|z| Some(z.get_ref().as_str())).collect()
        };
        // Validated above: every effect and quantity parses.
        let taints: Vec<Taint> = pool
            .taints
            .iter()
            .filter_map(|t| {
                Some(Taint { key: t.key.clone(), value: t.value.clone(), effect: Effect::parse(&t.effect)? })
            })
            .collect();
        let milli_cpu = quantity::milli(&pool.allocatable.cpu).unwrap_or_default();
        let memory = quantity::units(&pool.allocatable.memory).unwrap_or_default();
        for zone in zones {
            let mut nodes = Vec::new();
            for index in range(pool, zone) {
                let name = match zone {
                    Some(zone) => format!("{}-{}-{index}", pool.name.get_ref(), dns_safe(zone)),
                    None => format!("{}-{index}", pool.name.get_ref()),
                };
                let labels = node_labels(pool, domains, &name, zone, index);
                nodes.push(InventoryNode {
                    name,
                    labels,
                    taints: taints.clone(),
                    milli_cpu,
                    memory,
                    pods: i64::from(pool.allocatable.pods),
                });
            }
            groups.push(NodeGroup { pool: pool.name.get_ref().clone(), zone: zone.map(str::to_string), nodes });
        }
    }
    groups
}

/// The labels of the `index`-th node (from 1) of a pool in a zone, as a real node carries them.
///
/// - The kubelet's own (`initialNode`, pkg/kubelet/kubelet_node_status.go): `kubernetes.io/hostname`
///   (the node's name), `kubernetes.io/os` and `kubernetes.io/arch` (the pool's `os` and `arch`,
///   default linux and amd64) and their `beta.kubernetes.io/` twins.
/// - The cloud provider's, which it sets only for what it reports (same function, and the
///   cloud-controller-manager's node controller): `node.kubernetes.io/instance-type` (the pool's
///   `instanceType`, default the pool's name: a pool is one instance type, as on managed clouds),
///   `topology.kubernetes.io/zone` (the node's zone, when the pool lists zones) and
///   `topology.kubernetes.io/region` (the pool's `region`; absent by default, as on a node no cloud
///   provider labels), each with its beta twin.
/// - The pool's `labels`, which override the defaults above as the kubelet's `--node-labels` do
///   (validation refuses those that would contradict a setting, the name or the zone).
/// - The cluster's node key (the name) and zone key (the zone), and each `[nodePools.domains]` key
///   with its values dealt round-robin within the zone: node `index` gets value `(index - 1) % n`.
fn node_labels(pool: &RawNodePool, domains: &FailureDomains, name: &str, zone: Option<&str>, index: u32) -> Labels {
    let setting = |value: &Option<Spanned<String>>, key: &str| -> Option<String> {
        value.as_ref().map(|v| v.get_ref().clone()).or_else(|| pool.labels.get(key).cloned())
    };
    let os = setting(&pool.os, well_known::OS).unwrap_or_else(|| DEFAULT_OS.to_string());
    let arch = setting(&pool.arch, well_known::ARCH).unwrap_or_else(|| DEFAULT_ARCH.to_string());
    let instance_type =
        setting(&pool.instance_type, well_known::INSTANCE_TYPE).unwrap_or_else(|| pool.name.get_ref().clone());
    let region = setting(&pool.region, well_known::REGION);
    let mut labels = Labels::new();
    labels.insert(well_known::HOSTNAME.into(), name.to_string());
    let mut twins = |stable: &str, beta: &str, value: String| {
        labels.insert(stable.to_string(), value.clone());
        labels.insert(beta.to_string(), value);
    };
    twins(well_known::OS, well_known::BETA_OS, os);
    twins(well_known::ARCH, well_known::BETA_ARCH, arch);
    twins(well_known::INSTANCE_TYPE, well_known::BETA_INSTANCE_TYPE, instance_type);
    if let Some(zone) = zone {
        twins(well_known::ZONE, well_known::BETA_ZONE, zone.to_string());
    }
    if let Some(region) = region {
        twins(well_known::REGION, well_known::BETA_REGION, region);
    }
    labels.extend(pool.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    labels.insert(domains.node.clone(), name.to_string());
    if let Some(zone) = zone {
        labels.insert(domains.zone.clone(), zone.to_string());
    }
    for (key, values) in &pool.domains {
        if let Some(value) = values.get((index as usize - 1) % values.len().max(1)) {
            labels.insert(key.get_ref().clone(), value.get_ref().clone());
        }
    }
    labels
}

/// A zone name made safe for a node name (lower-case letters, digits and '-').
fn dns_safe(zone: &str) -> String {
    zone.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

#[cfg(test)]
#[path = "inventory_tests.rs"]
mod tests;
