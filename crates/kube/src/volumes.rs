//! Where a pod's persistent volumes can be used (issue 39): what a cluster file's `[storage] topology`
//! says of its storage, and which of a workload's pods own a claim.
//!
//! A claim made with `volumeBindingMode: WaitForFirstConsumer` (the default StorageClass of every
//! major cloud) is provisioned where its first pod is scheduled: the PersistentVolume gets a
//! `nodeAffinity` on the zone for a zonal disk (EBS, PD, Azure Disk), on the node for a local volume,
//! and none for regional storage. From then on the scheduler's VolumeBinding filter
//! (pkg/scheduler/framework/plugins/volumebinding/binder.go, `checkBoundClaims`: a bound PV's node
//! affinity must match the node, else `ErrReasonNodeConflict`) admits only nodes the volume's
//! affinity matches, so a pod with such a claim comes back to its zone (or node) or stays Pending.

use crate::value::at;
use kix_yaml::Value;

/// What a cluster's volumes are bound to once provisioned (`[storage] topology`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum VolumeTopology {
    /// A zonal disk: its PersistentVolume's node affinity names the zone it was made in (the default:
    /// every major cloud's default StorageClass).
    #[default]
    Zonal,
    /// Regional or networked storage usable from every zone: no binding to follow.
    Regional,
    /// A local volume: its node affinity names the node it was made on.
    Node,
}

impl VolumeTopology {
    pub fn as_str(self) -> &'static str {
        match self {
            VolumeTopology::Zonal => "zonal",
            VolumeTopology::Regional => "regional",
            VolumeTopology::Node => "node",
        }
    }
}

/// Which of a workload's pods hold a persistent volume claim of their own or share one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Claims {
    /// No persistent volume claim.
    #[default]
    None,
    /// A StatefulSet's `volumeClaimTemplates`: each pod its own claim (`<template>-<pod>`), kept
    /// across the pod's replacements.
    PerPod,
    /// A `persistentVolumeClaim` volume of the pod template: one claim all the pods share.
    Shared,
}

impl Claims {
    /// A StatefulSet's (or any workload's) claims as its object says: non-empty
    /// `spec.volumeClaimTemplates` first, then a `persistentVolumeClaim` volume of the template.
    pub fn of(object: &Value) -> Claims {
        let templates = at(object, &["spec", "volumeClaimTemplates"]).and_then(Value::as_sequence);
        if templates.is_some_and(|t| !t.is_empty()) {
            return Claims::PerPod;
        }
        let volumes = at(object, &["spec", "template", "spec", "volumes"]).and_then(Value::as_sequence);
        if volumes.is_some_and(|v| v.iter().any(|v| v.get("persistentVolumeClaim").is_some())) {
            return Claims::Shared;
        }
        Claims::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_read_from_templates_then_volumes() {
        let read = |yaml: &str| Claims::of(&kix_yaml::from_str(yaml).unwrap());
        assert_eq!(read("spec: {volumeClaimTemplates: [{metadata: {name: data}}]}"), Claims::PerPod);
        assert_eq!(read("spec: {volumeClaimTemplates: []}"), Claims::None);
        assert_eq!(
            read("spec: {template: {spec: {volumes: [{name: d, persistentVolumeClaim: {claimName: d}}]}}}"),
            Claims::Shared
        );
        assert_eq!(read("spec: {template: {spec: {volumes: [{name: d, emptyDir: {}}]}}}"), Claims::None);
    }
}
