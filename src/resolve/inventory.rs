//! Node inventories: a cluster file's `[[nodePools]]`, validated against its
//! declared capabilities and expanded into typed nodes for the scheduler model.
//!
//! The inventory is what `kix verify` simulates on when no snapshot is given.
//! Nodes are named `<pool>-<zone>-<n>` (or `<pool>-<n>` without zones) and carry
//! the cluster's node key (their name) and zone key (their zone), plus the
//! pool's own labels and taints.

use super::substrate::{FailureDomains, Substrate};
use crate::diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use crate::kube::names;
use crate::kube::quantity;
use crate::kube::selector::Labels;
use crate::kube::taints::{Effect, Taint};
use crate::load::cluster::RawNodePool;

/// A problem with a pool: where in the cluster file, and what.
type Problem = (std::ops::Range<usize>, String);

/// Checks every pool of a cluster file; true when all are usable.
pub fn validate(
    pools: &[RawNodePool],
    substrate: &Substrate,
    source: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> bool {
    let mut problems: Vec<Problem> = Vec::new();
    let mut seen = Vec::new();
    for pool in pools {
        let name = pool.name.get_ref();
        if let Err(why) = names::dns1123_label(name) {
            problems.push((pool.name.span(), format!("node pool name `{name}` is not valid: {why}")));
        } else if seen.contains(name) {
            problems.push((pool.name.span(), format!("node pool `{name}` is declared twice")));
        }
        seen.push(name.clone());
        problems.extend(zone_problems(pool, substrate));
        problems.extend(node_problems(pool));
    }
    problems.extend(node_name_collisions(pools));
    // The node count against multiNode, once every pool is well-formed (a bad pool says why itself).
    if problems.is_empty() {
        problems.extend(node_count_problems(pools, substrate));
    }
    for (span, message) in &problems {
        diagnostics.push(
            Diagnostic::new(Code::InvalidNodePool, message.clone()).at(source.locate(span.clone())).about(subject),
        );
    }
    problems.is_empty()
}

/// The pool's zones must be declared ones, and a cluster with zones needs them named.
fn zone_problems(pool: &RawNodePool, substrate: &Substrate) -> Vec<Problem> {
    let name = pool.name.get_ref();
    let mut problems = Vec::new();
    for zone in &pool.zones {
        let declared = substrate.zones.as_ref().is_some_and(|zones| zones.contains(zone.get_ref()));
        if !declared {
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
    if *pool.nodes_per_zone.get_ref() == 0 {
        problems.push((pool.nodes_per_zone.span(), format!("node pool `{name}` has nodesPerZone = 0")));
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
    if let Err(why) = quantity::milli(&allocatable.cpu) {
        let message = format!("node pool `{name}` allocatable cpu `{}` is not a quantity: {why}", allocatable.cpu);
        problems.push((at.clone(), message));
    }
    if let Err(why) = quantity::units(&allocatable.memory) {
        let message =
            format!("node pool `{name}` allocatable memory `{}` is not a quantity: {why}", allocatable.memory);
        problems.push((at, message));
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

/// The number of nodes against `multiNode` and kix's simulation limit.
fn node_count_problems(pools: &[RawNodePool], substrate: &Substrate) -> Vec<Problem> {
    let Some(first) = pools.first() else { return Vec::new() };
    let total: u64 = pools.iter().map(|p| u64::from(*p.nodes_per_zone.get_ref()) * p.zones.len().max(1) as u64).sum();
    let nodes = |n: u64| format!("{n} node{}", if n == 1 { "" } else { "s" });
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

/// The nodes of a validated inventory, in pool, zone and index order.
pub fn expand(pools: &[RawNodePool], domains: &FailureDomains) -> Vec<InventoryNode> {
    let mut nodes = Vec::new();
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
            for index in 1..=*pool.nodes_per_zone.get_ref() {
                let name = match zone {
                    Some(zone) => format!("{}-{}-{index}", pool.name.get_ref(), dns_safe(zone)),
                    None => format!("{}-{index}", pool.name.get_ref()),
                };
                let mut labels = pool.labels.clone();
                labels.insert(domains.node.clone(), name.clone());
                if let Some(zone) = zone {
                    labels.insert(domains.zone.clone(), zone.to_string());
                }
                nodes.push(InventoryNode {
                    name,
                    labels,
                    taints: taints.clone(),
                    milli_cpu,
                    memory,
                    pods: i64::from(pool.allocatable.pods),
                });
            }
        }
    }
    nodes
}

/// A zone name made safe for a node name (lower-case letters, digits and '-').
fn dns_safe(zone: &str) -> String {
    zone.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}
