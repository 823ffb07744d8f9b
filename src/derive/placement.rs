//! R9-R11: which spread constraints and which budget one workload gets.
//!
//! A workload with two or more replicas and no `topologySpreadConstraints` key
//! gets one constraint per failure-domain key (hard on the key its level
//! names) and, unless a shipped budget covers it, a PodDisruptionBudget. One
//! that brings its own placement keeps it (R11) and is warned about when no
//! budget of its instance selects its pods.

use super::plan::{AutoscalerPlan, WorkloadPlan};
use crate::resolve::{Cluster, Instance, InstanceWorkload, Workload};
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
    let (spread_keys, hard_key) = if derives { spread_keys(cluster, resolved.level.value) } else { (Vec::new(), None) };
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
        spread_keys,
        hard_key,
        derived_pdb: derives && !workload.shipped_pdb,
        explicit_placement: view.explicit_spread,
        autoscaler: workload.autoscaler.as_ref().zip(resolved.autoscaler).map(|(autoscaler, range)| AutoscalerPlan {
            kind: autoscaler.view.kind,
            name: autoscaler.view.name.clone(),
            min_replicas: range.min,
            max_replicas: range.max,
        }),
    }
}

/// R9: the topology keys to spread over and the one that is hard. The node key always; the zone key where
/// two or more zones are declared, or at level zone with zones unknown; every extra key.
pub fn spread_keys(cluster: &Cluster, level: Level) -> (Vec<String>, Option<String>) {
    let domains = &cluster.domains;
    let mut keys = vec![domains.node.clone()];
    let zones_declared = cluster.substrate.zone_count() >= 2;
    let zones_unknown = cluster.substrate.zones.is_none();
    if zones_declared || (level == Level::Zone && zones_unknown) {
        keys.push(domains.zone.clone());
    }
    keys.extend(domains.extra.iter().cloned());
    let hard = match level {
        Level::Node => Some(domains.node.clone()),
        Level::Zone => Some(domains.zone.clone()),
        Level::None | Level::Pod => None,
    };
    (keys, hard)
}
