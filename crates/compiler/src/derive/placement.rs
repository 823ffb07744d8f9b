//! R9-R11: which spread constraints and which budget one workload gets.
//!
//! A workload with two or more replicas and no `topologySpreadConstraints` key
//! gets one constraint per failure-domain key (hard on the key its level
//! names) and, unless a shipped budget covers it, a PodDisruptionBudget. One
//! that brings its own placement keeps it (R11) and is warned about when no
//! budget of its instance selects its pods.

use super::workload_plan::{
    AutoscalerPlan, BudgetReason, GroupBudget, GroupBudgetReason, MinDomainsReason, Spread, SpreadReason, WorkloadPlan,
};
use crate::resolve::{Cluster, Instance, InstanceWorkload, ReplicaSource, Workload};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::level::Level;

/// R9-R11 for one workload of an instance (the `index`th of its resolved workloads), each decision
/// recorded with its reason as it is taken ([`SpreadReason`], [`BudgetReason`]).
pub fn plan_workload(
    cluster: &Cluster,
    instance: &Instance,
    index: usize,
    workload: &Workload,
    resolved: &InstanceWorkload,
    diagnostics: &mut Diagnostics,
) -> WorkloadPlan {
    let view = &workload.view;
    let replicas = resolved.replicas;
    let package = &instance.package;
    // A group's member is spread over the group's pods: the group's total decides (issue 17).
    let group = workload.group.map(|g| (&package.groups[g], instance.groups.iter().find(|ig| ig.group == g)));
    let pods = group.and_then(|(_, ig)| ig).map_or(replicas, |ig| ig.replicas);
    let scaled_to_zero = matches!(resolved.trail.replicas, ReplicaSource::ScaledToZero { .. });
    let single_node = cluster.substrate.single_node();
    let derives = pods >= 2 && !view.explicit_spread && !single_node;
    // A custom resource whose profile names no spread field: kix cannot place its pods (K0436).
    let placeable = view.kind.profile().is_none_or(|profile| profile.spread.is_some());
    if derives && !placeable {
        report_unplaceable(instance, workload, diagnostics);
    }
    let spread_reason = if scaled_to_zero {
        SpreadReason::ScaledToZero
    } else if view.explicit_spread {
        SpreadReason::Explicit { custom: view.kind.profile().is_some() }
    } else if !placeable {
        SpreadReason::Unplaceable
    } else if pods < 2 {
        SpreadReason::FewerThanTwoPods
    } else if single_node {
        SpreadReason::SingleNode
    } else {
        SpreadReason::Derived
    };
    let spreads =
        if spread_reason == SpreadReason::Derived { spread_keys(cluster, resolved.level.value) } else { Vec::new() };
    let min_domains = spreads.iter().find(|s| s.hard).map(|hard| min_domains(cluster, &hard.key));
    // A group's member is covered by a shipped budget over the group, or by the group's own, which some
    // member whose placement is kix's emits.
    let covered = match workload.group {
        Some(index) => {
            package.groups[index].shipped_pdb
                || (instance.workloads.iter().map(|w| &package.workloads[w.workload]))
                    .any(|w| w.group == Some(index) && !w.view.explicit_spread)
        }
        None => workload.shipped_pdb || workload.operator_budget.is_some(),
    };
    if view.explicit_spread && pods >= 2 && !covered {
        let document = &instance.package.documents[workload.document];
        diagnostics.push(
            Diagnostic::new(
                Code::ExplicitPlacementWithoutPdb,
                format!(
                    "workload `{}` brings its own topologySpreadConstraints, so kix derives no spread and no PDB for \
                     it, and no PodDisruptionBudget of instance `{}` selects its pods",
                    view.name, instance.name
                ),
            )
            .at(document.locate(&spread_path(workload)))
            .about(&Subject { workload: Some(view.name.clone().into()), ..instance.subject.clone() })
            .help("ship a PodDisruptionBudget (maxUnavailable: 1) with the package"),
        );
    }
    let group_budget = group_budget(cluster, instance, workload, pods);
    let budget = match group {
        Some((g, _)) => BudgetReason::Group(if g.shipped_pdb {
            GroupBudgetReason::Shipped
        } else if group_budget.is_some() {
            GroupBudgetReason::Derived
        } else if pods < 2 {
            GroupBudgetReason::FewerThanTwoPods
        } else if single_node {
            GroupBudgetReason::SingleNode
        } else if !covered {
            GroupBudgetReason::NoPlacedMember
        } else {
            GroupBudgetReason::EmittedByAnother
        }),
        None if derives && !workload.shipped_pdb && workload.operator_budget.is_none() => BudgetReason::Derived,
        None => match package.budgets().find(|(_, pdb)| pdb.selects(&view.template_labels)) {
            Some((document, _)) => BudgetReason::Shipped { document },
            None if scaled_to_zero => BudgetReason::ScaledToZero,
            None if workload.operator_budget.is_some() => BudgetReason::Operator,
            None if view.explicit_spread => BudgetReason::Explicit,
            None if replicas < 2 => BudgetReason::FewerThanTwoPods,
            None => BudgetReason::SingleNode,
        },
    };
    WorkloadPlan {
        kind: view.kind,
        name: view.name.clone(),
        requested: instance.requested.value,
        level: resolved.level.value,
        replicas,
        resolved: index,
        spreads,
        spread_reason,
        min_domains,
        explicit_placement: view.explicit_spread,
        budget,
        operator_budget: workload.operator_budget.clone(),
        scaled_to_zero,
        autoscaler: workload.autoscaler.as_ref().zip(resolved.autoscaler).map(|(autoscaler, range)| AutoscalerPlan {
            kind: autoscaler.view.kind,
            name: autoscaler.view.name.clone(),
            min_replicas: range.min,
            max_replicas: range.max,
        }),
        group: group.map(|(g, _)| g.name.clone()),
        spread_selector: group.map(|(g, _)| g.selector.clone()),
        group_budget,
        survive: group.map_or(workload.survive, |(g, _)| g.survive),
        pod_requests: workload.pod_requests,
    }
}

/// Where a workload's spread constraints are written: its pod template's, or its profile's field.
fn spread_path(workload: &Workload) -> Vec<&str> {
    match workload.view.kind.profile().and_then(|profile| profile.spread.as_ref()) {
        Some(path) => path.keys(),
        None => vec!["spec", "template", "spec", "topologySpreadConstraints"],
    }
}

/// K0436: a custom resource whose profile names no spread field gets replicas and a budget, but kix
/// cannot place its pods.
fn report_unplaceable(instance: &Instance, workload: &Workload, diagnostics: &mut Diagnostics) {
    let document = &instance.package.documents[workload.document];
    let view = &workload.view;
    diagnostics.push(
        Diagnostic::new(
            Code::UnplaceableCustomResource,
            format!(
                "instance `{}` runs {} {} at `{}`, but kix cannot place its pods: its kind names no field where \
                 its operator takes topology spread constraints, so they may share a node or zone",
                instance.name, view.kind, view.name, instance.level.value
            ),
        )
        .at(document.locate(&["kind"]))
        .about(&Subject { workload: Some(view.name.clone().into()), ..instance.subject.clone() })
        .help(format!(
            "name the operator's field with topologySpreadConstraints = \"spec....\" in [kinds.\"{}\"], or \
             acknowledge this warning with allow = [\"K0436\"]",
            view.kind.profile().map(|p| p.key()).unwrap_or_default()
        )),
    );
}

/// R10 for a group: one budget, emitted with its first member (in document order; across instances, by
/// the first member instance by name) whose placement kix derives, unless a shipped budget covers the group's pods, the group runs fewer than two pods,
/// or the cluster is single-node. `None` for every other member.
fn group_budget(cluster: &Cluster, instance: &Instance, workload: &Workload, pods: u32) -> Option<GroupBudget> {
    let package = &instance.package;
    let index = workload.group?;
    let group = &package.groups[index];
    if pods < 2 || group.shipped_pdb || cluster.substrate.single_node() {
        return None;
    }
    // A group across instances: the first member instance by name emits it, once.
    if group.across && !instance.across.as_ref().is_some_and(|a| a.emits_budget(&instance.name)) {
        return None;
    }
    let first = (instance.workloads.iter())
        .map(|w| &package.workloads[w.workload])
        .find(|w| w.group == Some(index) && !w.view.explicit_spread)?;
    std::ptr::eq(first, workload).then(|| GroupBudget {
        name: group.name.clone(),
        selector: group.selector.clone(),
        policy: group.eviction_policy,
        group: index,
    })
}

/// R9: why the hard spread on `key` gets no minDomains (see [`MinDomainsReason`]): the zones whose pools
/// run no node there but may add some, when `key` is the zone key.
fn min_domains(cluster: &Cluster, key: &str) -> MinDomainsReason {
    let mut zones: Vec<String> = Vec::new();
    if key == cluster.domains.zone {
        for group in &cluster.node_groups {
            let Some(zone) = &group.zone else { continue };
            let runs = cluster.inventory.iter().any(|n| n.labels.get(key) == Some(zone));
            if !runs && !zones.contains(zone) {
                zones.push(zone.clone());
            }
        }
    }
    zones.sort();
    if zones.is_empty() { MinDomainsReason::EveryDomainHasNodes } else { MinDomainsReason::ZonesAtZero { zones } }
}

/// R9: the topology keys to spread over, the one the level names hard. The node key always (hard at level
/// node); the zone key (hard at level zone) where two or more zones are declared, or at level zone with zones
/// unknown; every extra key, soft. (R3 refuses level zone where fewer than two zones are declared, and R14 a
/// key used twice, so the level's key is always among them, once.)
pub fn spread_keys(cluster: &Cluster, level: Level) -> Vec<Spread> {
    let domains = &cluster.domains;
    let mut spreads = vec![Spread { key: domains.node.clone(), hard: level == Level::Node }];
    let zones_declared = cluster.substrate.zone_count() >= 2;
    let zones_unknown = cluster.substrate.zones.is_none();
    if zones_declared || (level == Level::Zone && zones_unknown) {
        spreads.push(Spread { key: domains.zone.clone(), hard: level == Level::Zone });
    }
    spreads.extend(domains.extra.iter().map(|key| Spread { key: key.clone(), hard: false }));
    spreads
}
