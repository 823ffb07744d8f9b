//! Node inventories: a cluster file's `[[nodePools]]`, validated against its
//! declared capabilities and expanded into Node objects for the scheduler model.
//!
//! The inventory is what `kix verify` simulates on when no snapshot is given.
//! Nodes are named `<pool>-<zone>-<n>` (or `<pool>-<n>` without zones) and carry
//! the cluster's node key (their name) and zone key (their zone), plus the
//! pool's own labels and taints.

use crate::diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use crate::kube::names;
use crate::kube::quantity;
use crate::kube::taints::Effect;
use crate::load::cluster::RawNodePool;
use crate::resolve::{FailureDomains, Substrate};
use serde_yaml::{Mapping, Value};

/// Checks every pool of a cluster file; true when all are usable.
pub fn validate(
    pools: &[RawNodePool],
    substrate: &Substrate,
    source: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> bool {
    // A Cell, so the checks below can read it while `problem` is still in use.
    let valid = std::cell::Cell::new(true);
    let mut problem = |span: std::ops::Range<usize>, message: String| {
        valid.set(false);
        diagnostics.push(Diagnostic::new(Code::InvalidNodePool, message).at(source.locate(span)).about(subject));
    };
    let mut seen = Vec::new();
    let mut total_nodes: u64 = 0;
    for pool in pools {
        let name = pool.name.get_ref();
        if let Err(why) = names::dns1123_label(name) {
            problem(pool.name.span(), format!("node pool name `{name}` is not valid: {why}"));
        } else if seen.contains(name) {
            problem(pool.name.span(), format!("node pool `{name}` is declared twice"));
        }
        seen.push(name.clone());
        for zone in &pool.zones {
            let declared = substrate.zones.as_ref().is_some_and(|zones| zones.contains(zone.get_ref()));
            if !declared {
                let listed = match &substrate.zones {
                    Some(zones) if !zones.is_empty() => format!("the cluster declares {}", zones.join(", ")),
                    _ => "the cluster declares no capabilities.availabilityZones".to_string(),
                };
                problem(
                    zone.span(),
                    format!("node pool `{name}` uses zone `{}`, which is not declared: {listed}", zone.get_ref()),
                );
            }
        }
        if pool.zones.is_empty() && substrate.zone_count() >= 2 {
            problem(
                pool.name.span(),
                format!("node pool `{name}` lists no zones, but the cluster declares {} zones", substrate.zone_count()),
            );
        }
        if *pool.nodes_per_zone.get_ref() == 0 {
            problem(pool.nodes_per_zone.span(), format!("node pool `{name}` has nodesPerZone = 0"));
        }
        total_nodes += u64::from(*pool.nodes_per_zone.get_ref()) * pool.zones.len().max(1) as u64;
        for (key, value) in &pool.labels {
            if let Err(why) = names::label_key(key).and_then(|()| names::label_value(value)) {
                problem(pool.name.span(), format!("node pool `{name}` label `{key}={value}` is not valid: {why}"));
            }
        }
        for taint in &pool.taints {
            if Effect::parse(&taint.effect).is_none() {
                problem(
                    pool.name.span(),
                    format!(
                        "node pool `{name}` taint `{}` has effect `{}` (NoSchedule, PreferNoSchedule or NoExecute)",
                        taint.key, taint.effect
                    ),
                );
            }
            if let Err(why) = names::label_key(&taint.key) {
                problem(pool.name.span(), format!("node pool `{name}` taint key `{}` is not valid: {why}", taint.key));
            }
        }
        if let Err(why) = quantity::milli(&pool.allocatable.cpu) {
            problem(
                pool.name.span(),
                format!("node pool `{name}` allocatable cpu `{}` is not a quantity: {why}", pool.allocatable.cpu),
            );
        }
        if let Err(why) = quantity::units(&pool.allocatable.memory) {
            problem(
                pool.name.span(),
                format!("node pool `{name}` allocatable memory `{}` is not a quantity: {why}", pool.allocatable.memory),
            );
        }
    }
    // Node names must be unique: zones that differ only in case or punctuation would collide.
    let mut names = std::collections::BTreeSet::new();
    for pool in pools {
        for zone in &pool.zones {
            let name = format!("{}-{}", pool.name.get_ref(), dns_safe(zone.get_ref()));
            if !names.insert(name.clone()) {
                problem(
                    zone.span(),
                    format!("zone `{}` gives node names (`{name}-1`, ...) that another zone gives too", zone.get_ref()),
                );
            }
        }
    }
    // The node count against multiNode, once every pool is well-formed (a bad pool says why itself).
    if let (Some(first), true) = (pools.first(), valid.get()) {
        let nodes = |n: u64| format!("{n} node{}", if n == 1 { "" } else { "s" });
        match substrate.multi_node {
            Some(false) if total_nodes > 1 => problem(
                first.name.span(),
                format!("the cluster is declared single-node, but its node pools hold {}", nodes(total_nodes)),
            ),
            Some(true) if total_nodes < 2 => problem(
                first.name.span(),
                format!("the cluster is declared multi-node, but its node pools hold {}", nodes(total_nodes)),
            ),
            _ => {}
        }
        if total_nodes > 100_000 {
            problem(
                first.name.span(),
                format!("the node pools hold {total_nodes} nodes; kix simulates at most 100000"),
            );
        }
    }
    valid.get()
}

/// The Node objects of a validated inventory, in pool, zone and index order.
pub fn nodes(pools: &[RawNodePool], domains: &FailureDomains) -> Vec<Value> {
    let mut nodes = Vec::new();
    for pool in pools {
        let zones: Vec<Option<&str>> = if pool.zones.is_empty() {
            vec![None]
        } else {
            pool.zones.iter().map(|z| Some(z.get_ref().as_str())).collect()
        };
        for zone in zones {
            for index in 1..=*pool.nodes_per_zone.get_ref() {
                let name = match zone {
                    Some(zone) => format!("{}-{}-{index}", pool.name.get_ref(), dns_safe(zone)),
                    None => format!("{}-{index}", pool.name.get_ref()),
                };
                let mut labels = Mapping::new();
                for (key, value) in &pool.labels {
                    labels.insert(key.as_str().into(), value.as_str().into());
                }
                labels.insert(domains.node.as_str().into(), name.as_str().into());
                if let Some(zone) = zone {
                    labels.insert(domains.zone.as_str().into(), zone.into());
                }
                let mut metadata = Mapping::new();
                metadata.insert("name".into(), name.into());
                metadata.insert("labels".into(), Value::Mapping(labels));
                let mut spec = Mapping::new();
                if !pool.taints.is_empty() {
                    let taints = pool
                        .taints
                        .iter()
                        .map(|t| {
                            let mut taint = Mapping::new();
                            taint.insert("key".into(), t.key.as_str().into());
                            if !t.value.is_empty() {
                                taint.insert("value".into(), t.value.as_str().into());
                            }
                            taint.insert("effect".into(), t.effect.as_str().into());
                            Value::Mapping(taint)
                        })
                        .collect();
                    spec.insert("taints".into(), Value::Sequence(taints));
                }
                let mut allocatable = Mapping::new();
                allocatable.insert("cpu".into(), pool.allocatable.cpu.as_str().into());
                allocatable.insert("memory".into(), pool.allocatable.memory.as_str().into());
                allocatable.insert("pods".into(), pool.allocatable.pods.to_string().into());
                let mut status = Mapping::new();
                status.insert("allocatable".into(), Value::Mapping(allocatable));
                let mut node = Mapping::new();
                node.insert("apiVersion".into(), "v1".into());
                node.insert("kind".into(), "Node".into());
                node.insert("metadata".into(), Value::Mapping(metadata));
                node.insert("spec".into(), Value::Mapping(spec));
                node.insert("status".into(), Value::Mapping(status));
                nodes.push(Value::Mapping(node));
            }
        }
    }
    nodes
}

/// A zone name made safe for a node name (lower-case letters, digits and '-').
fn dns_safe(zone: &str) -> String {
    zone.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}
