//! R9-R11: which spread constraints and which budget one workload gets.
//!
//! A workload with two or more replicas and no `topologySpreadConstraints` key
//! gets one constraint per failure-domain key (hard on the key its level
//! names) and, unless a shipped budget covers it, a PodDisruptionBudget. One
//! that brings its own placement keeps it (R11) and is warned about when no
//! budget of its instance selects its pods.

use super::plan::{AutoscalerPlan, Spread, WorkloadPlan};
use crate::resolve::{Cluster, Instance, InstanceWorkload, ReplicaSource, Workload};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::level::Level;

/// R9-R11 for one workload of an instance.
pub fn plan_workload(
    cluster: &Cluster,
    instance: &Instance,
    workload: &Workload,
    resolved: &InstanceWorkload,
    diagnostics: &mut Diagnostics,
) -> WorkloadPlan {
    let view = &workload.view;
    let replicas = resolved.replicas;
    let derives = replicas >= 2 && !view.explicit_spread && !cluster.substrate.single_node();
    let spreads = if derives { spread_keys(cluster, resolved.level.value) } else { Vec::new() };
    if view.explicit_spread && replicas >= 2 && !workload.shipped_pdb {
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
            .at(document.locate(&["spec", "template", "spec", "topologySpreadConstraints"]))
            .about(&Subject { workload: Some(view.name.clone()), ..instance.subject.clone() })
            .help("ship a PodDisruptionBudget (maxUnavailable: 1) with the package"),
        );
    }
    WorkloadPlan {
        kind: view.kind,
        name: view.name.clone(),
        requested: instance.requested.value,
        level: resolved.level.value,
        replicas,
        spreads,
        derived_pdb: derives && !workload.shipped_pdb,
        explicit_placement: view.explicit_spread,
        scaled_to_zero: matches!(resolved.trail.replicas, ReplicaSource::ScaledToZero { .. }),
        autoscaler: workload.autoscaler.as_ref().zip(resolved.autoscaler).map(|(autoscaler, range)| AutoscalerPlan {
            kind: autoscaler.view.kind,
            name: autoscaler.view.name.clone(),
            min_replicas: range.min,
            max_replicas: range.max,
        }),
    }
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
