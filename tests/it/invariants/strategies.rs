//! The proptest strategies that generate a [`TreeModel`]; `raw` is the probability that a cluster or
//! workload is left unrepaired (and may hold a user error).

use super::model::*;
use kix_kube::level::Level;
use proptest::prelude::*;
use proptest::sample::Index;

pub fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(Level::ALL.to_vec())
}

pub fn workload(raw: f64) -> impl Strategy<Value = WorkloadModel> {
    let explicit =
        prop::collection::vec((0usize..3, any::<bool>(), 1u32..3, any::<bool>(), prop::option::of(1u32..4)), 0..3);
    let replicas =
        (any::<bool>(), prop::option::of(0u32..5), prop::option::of(prop::array::uniform4(prop::option::of(0u32..5))));
    let settings = (
        prop::option::weighted(0.3, level()),
        prop::option::weighted(0.2, explicit),
        prop::option::weighted(0.3, any::<bool>()),
        prop::option::of(prop::sample::select(vec!["AlwaysAllow", "IfHealthyBudget"])),
    );
    (replicas, settings, 0u8..4, 0usize..2, prop::bool::weighted(raw)).prop_map(
        |(
            (deployment, manifest_replicas, mapping),
            (ceiling, explicit, shipped_pdb, policy),
            selector_style,
            file,
            unrepaired,
        )| {
            WorkloadModel {
                kind: if deployment { Kind::Deployment } else { Kind::StatefulSet },
                manifest_replicas,
                mapping,
                ceiling,
                explicit,
                shipped_pdb,
                policy,
                selector_style,
                file,
                unrepaired,
            }
        },
    )
}

pub fn version_model(raw: f64) -> impl Strategy<Value = VersionModel> {
    (prop::option::weighted(0.3, level()), any::<bool>(), prop::collection::vec(workload(raw), 1..4))
        .prop_map(|(ceiling, service, workloads)| VersionModel { version: VERSIONS[0], ceiling, service, workloads })
}

pub fn package(raw: f64) -> impl Strategy<Value = PackageModel> {
    (prop::sample::subsequence(VERSIONS.to_vec(), 1..=2), prop::collection::vec(version_model(raw), 2)).prop_map(
        |(versions, models)| PackageModel {
            versions: versions
                .into_iter()
                .zip(models)
                .map(|(version, model)| VersionModel { version, ..model })
                .collect(),
        },
    )
}

pub fn instance() -> impl Strategy<Value = InstanceModel> {
    (any::<Index>(), 0u8..3, any::<Index>(), any::<bool>(), prop::option::of(level())).prop_map(
        |(package, kind, version, own_namespace, level)| InstanceModel {
            package: package.index(usize::MAX),
            requirement: match kind {
                0 => Requirement::Any,
                1 => Requirement::Exact(version.index(usize::MAX)),
                _ => Requirement::Major(version.index(usize::MAX)),
            },
            own_namespace,
            level,
        },
    )
}

pub fn cluster(raw: f64) -> impl Strategy<Value = ClusterModel> {
    (
        (prop::option::of(any::<bool>()), prop::option::of(0usize..5)),
        (prop::option::weighted(0.2, Just(CUSTOM_NODE_KEY)), prop::option::weighted(0.2, Just(CUSTOM_ZONE_KEY))),
        prop::sample::subsequence(EXTRA_KEYS.to_vec(), 0..=2),
        level(),
        prop::collection::vec(instance(), 1..4),
        prop::bool::weighted(raw),
    )
        .prop_map(|((multi_node, zones), (node_key, zone_key), extra, level, instances, unrepaired)| {
            ClusterModel { multi_node, zones, node_key, zone_key, extra, level, instances, unrepaired }
        })
}

/// Lowers a level until the cluster's declared substrate allows it (R3).
pub fn allowed(cluster: &ClusterModel, mut level: Level) -> Level {
    while !cluster.allows(level) {
        level = Level::ALL[Level::ALL.iter().position(|l| *l == level).unwrap() - 1];
    }
    level
}

/// A tree in which each cluster and each workload is left unrepaired with probability `raw`;
/// with `raw` 0 it must compile without errors.
pub fn tree(raw: f64) -> impl Strategy<Value = TreeModel> {
    (prop::collection::vec(cluster(raw), 1..3), prop::collection::vec(package(raw), 1..4)).prop_map(
        |(mut clusters, mut packages)| {
            for cluster in &mut clusters {
                for instance in &mut cluster.instances {
                    instance.package %= packages.len();
                }
            }
            for cluster in clusters.iter_mut().filter(|c| !c.unrepaired) {
                // K0301: single-node with two or more zones.
                if cluster.single_node() && cluster.zone_count() >= 2 {
                    cluster.zones = Some(1);
                }
                // K0302: levels the declared substrate rules out.
                cluster.level = allowed(cluster, cluster.level);
                let own: Vec<Option<Level>> =
                    cluster.instances.iter().map(|i| i.level.map(|l| allowed(cluster, l))).collect();
                for (instance, level) in cluster.instances.iter_mut().zip(own) {
                    instance.level = level;
                }
            }
            for package in &mut packages {
                for version in &mut package.versions {
                    let ceiling = version.ceiling;
                    for workload in version.workloads.iter_mut().filter(|w| !w.unrepaired) {
                        workload.repair(ceiling);
                    }
                }
            }
            TreeModel { clusters, packages }
        },
    )
}
