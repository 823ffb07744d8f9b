//! Object kinds, told apart by API group **and** kind, never by kind alone.
//!
//! `extensions/v1beta1` once served a Deployment too, with other defaults; an
//! object is an `apps` Deployment only when its `apiVersion` says group `apps`.
//! Follows `schema.ParseGroupVersion` (staging/src/k8s.io/apimachinery/pkg/runtime/schema):
//! `v1` is the core group (empty), `apps/v1` is group `apps`.

use super::value::str_at;
use kix_yaml::Value;
use std::fmt;

/// The API group of an `apiVersion` (`apps` of `apps/v1`, empty for the core group's `v1`).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The kinds of workload kix derives placement for and the scheduler model stamps pods from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadKind {
    /// `apps/Deployment`.
    Deployment,
    /// `apps/StatefulSet`.
    StatefulSet,
    /// Argo Rollouts' `argoproj.io/Rollout` with its own `spec.template`: Deployment semantics (the
    /// controller runs a ReplicaSet per revision, argoproj/argo-rollouts `rollout/replicaset.go`), its
    /// pods labelled `rollouts-pod-template-hash` instead of `pod-template-hash`.
    Rollout,
    /// A custom resource whose operator runs its pods, read through its profile
    /// ([`super::profile::Profile`]): the profile's controller semantics, no template-hash label (the
    /// operators label their pods' revisions in their own ways).
    Custom(&'static super::profile::Profile),
}

/// A kind serializes as the API spells it (`"Deployment"`, `"Prometheus"`).
impl serde::Serialize for WorkloadKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl WorkloadKind {
    /// The workload kind of an `apiVersion` and `kind`, if it is one.
    pub(crate) fn detect(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        match (api_group(api_version), kind) {
            ("apps", "Deployment") => Some(WorkloadKind::Deployment),
            ("apps", "StatefulSet") => Some(WorkloadKind::StatefulSet),
            ("argoproj.io", "Rollout") => Some(WorkloadKind::Rollout),
            _ => None,
        }
    }

    /// The workload kind of an object, if it is one. A Rollout that takes its pod template from a
    /// Deployment (`spec.workloadRef`, no `spec.template`) is not read as a workload: kix names it as a
    /// custom resource it does not place (`operators`).
    pub fn of(object: &Value) -> Option<WorkloadKind> {
        let kind =
            WorkloadKind::detect(str_at(object, &["apiVersion"]).unwrap_or_default(), str_at(object, &["kind"])?)?;
        let referenced = super::value::at(object, &["spec", "workloadRef"]).is_some()
            && super::value::at(object, &["spec", "template"]).is_none();
        (kind != WorkloadKind::Rollout || !referenced).then_some(kind)
    }

    /// Whether its pods are run as a Deployment runs them: a ReplicaSet per revision, a rolling update by
    /// surge and unavailability, replacements of lost pods at once.
    pub fn deployment_like(self) -> bool {
        match self {
            WorkloadKind::Deployment | WorkloadKind::Rollout => true,
            WorkloadKind::StatefulSet => false,
            WorkloadKind::Custom(profile) => profile.controller == super::profile::Controller::Deployment,
        }
    }

    /// The custom resource's profile, if it is one.
    pub fn profile(self) -> Option<&'static super::profile::Profile> {
        match self {
            WorkloadKind::Custom(profile) => Some(profile),
            _ => None,
        }
    }

    /// The label its controller gives each revision's pods, for `matchLabelKeys` (none for StatefulSets,
    /// whose `controller-revision-hash` names the revision of every pod and is not a template hash).
    pub fn template_hash_label(self) -> Option<&'static str> {
        match self {
            WorkloadKind::Deployment => Some(super::labels::POD_TEMPLATE_HASH),
            WorkloadKind::Rollout => Some(super::labels::ROLLOUTS_POD_TEMPLATE_HASH),
            WorkloadKind::StatefulSet | WorkloadKind::Custom(_) => None,
        }
    }

    /// The kind as the API spells it (`Deployment`, `Prometheus`).
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::Rollout => "Rollout",
            WorkloadKind::Custom(profile) => &profile.kind,
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Pod controllers kix does not manage: it derives no replicas, spread or budget for their pods.
/// kix manages Deployments and StatefulSets ([`WorkloadKind`]); a ReplicaSet or
/// ReplicationController written by hand replicates pods too, so its users expect availability
/// from it, while DaemonSets, Jobs and CronJobs run pods per node or to completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ControllerKind {
    /// `apps/ReplicaSet`.
    ReplicaSet,
    /// Core `v1` ReplicationController.
    ReplicationController,
    /// `apps/DaemonSet`.
    DaemonSet,
    /// `batch/Job`.
    Job,
    /// `batch/CronJob`.
    CronJob,
}

impl ControllerKind {
    /// The unmanaged controller kind of an `apiVersion` and `kind`, if it is one.
    pub(crate) fn detect(api_version: &str, kind: &str) -> Option<ControllerKind> {
        match (api_group(api_version), kind) {
            ("apps", "ReplicaSet") => Some(ControllerKind::ReplicaSet),
            ("", "ReplicationController") => Some(ControllerKind::ReplicationController),
            ("apps", "DaemonSet") => Some(ControllerKind::DaemonSet),
            ("batch", "Job") => Some(ControllerKind::Job),
            ("batch", "CronJob") => Some(ControllerKind::CronJob),
            _ => None,
        }
    }

    /// The unmanaged controller kind of an object, if it is one.
    pub fn of(object: &Value) -> Option<ControllerKind> {
        ControllerKind::detect(str_at(object, &["apiVersion"]).unwrap_or_default(), str_at(object, &["kind"])?)
    }

    /// Whether it keeps a number of identical pods running (ReplicaSet, ReplicationController).
    pub fn replicates(self) -> bool {
        matches!(self, ControllerKind::ReplicaSet | ControllerKind::ReplicationController)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ControllerKind::ReplicaSet => "ReplicaSet",
            ControllerKind::ReplicationController => "ReplicationController",
            ControllerKind::DaemonSet => "DaemonSet",
            ControllerKind::Job => "Job",
            ControllerKind::CronJob => "CronJob",
        }
    }
}

/// The kinds of object kix reads beyond workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    Workload(WorkloadKind),
    /// Core `v1` Pod.
    Pod,
    /// Core `v1` Node.
    Node,
    /// `policy/PodDisruptionBudget`.
    PodDisruptionBudget,
}

impl ObjectKind {
    /// The kind of an `apiVersion` and `kind`, if kix reads it.
    pub(crate) fn detect(api_version: &str, kind: &str) -> Option<ObjectKind> {
        if let Some(workload) = WorkloadKind::detect(api_version, kind) {
            return Some(ObjectKind::Workload(workload));
        }
        match (api_group(api_version), kind) {
            ("", "Pod") => Some(ObjectKind::Pod),
            ("", "Node") => Some(ObjectKind::Node),
            ("policy", "PodDisruptionBudget") => Some(ObjectKind::PodDisruptionBudget),
            _ => None,
        }
    }

    /// The kind of an object, if kix reads it.
    pub fn of(object: &Value) -> Option<ObjectKind> {
        ObjectKind::detect(str_at(object, &["apiVersion"]).unwrap_or_default(), str_at(object, &["kind"])?)
    }

    /// The kind as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Workload(w) => w.as_str(),
            ObjectKind::Pod => "Pod",
            ObjectKind::Node => "Node",
            ObjectKind::PodDisruptionBudget => "PodDisruptionBudget",
        }
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_is_group_aware() {
        let cases = [
            ("apps/v1", "Deployment", Some(ObjectKind::Workload(WorkloadKind::Deployment))),
            ("apps/v1beta2", "StatefulSet", Some(ObjectKind::Workload(WorkloadKind::StatefulSet))),
            ("extensions/v1beta1", "Deployment", None),
            ("example.com/v1", "StatefulSet", None),
            ("argoproj.io/v1alpha1", "Rollout", Some(ObjectKind::Workload(WorkloadKind::Rollout))),
            ("example.com/v1", "Rollout", None),
            ("", "Deployment", None),
            ("v1", "Deployment", None),
            ("v1", "Pod", Some(ObjectKind::Pod)),
            ("apps/v1", "Pod", None),
            ("v1", "Node", Some(ObjectKind::Node)),
            ("policy/v1", "PodDisruptionBudget", Some(ObjectKind::PodDisruptionBudget)),
            ("v1", "PodDisruptionBudget", None),
        ];
        for (api_version, kind, expected) in cases {
            assert_eq!(ObjectKind::detect(api_version, kind), expected, "{api_version} {kind}");
        }
    }

    #[test]
    fn unmanaged_controllers_are_told_apart_by_group() {
        let cases = [
            ("apps/v1", "ReplicaSet", Some(ControllerKind::ReplicaSet), true),
            ("extensions/v1beta1", "ReplicaSet", None, false),
            ("v1", "ReplicationController", Some(ControllerKind::ReplicationController), true),
            ("apps/v1", "ReplicationController", None, false),
            ("apps/v1", "DaemonSet", Some(ControllerKind::DaemonSet), false),
            ("batch/v1", "Job", Some(ControllerKind::Job), false),
            ("batch/v1", "CronJob", Some(ControllerKind::CronJob), false),
            ("apps/v1", "Deployment", None, false),
        ];
        for (api_version, kind, expected, replicates) in cases {
            let detected = ControllerKind::detect(api_version, kind);
            assert_eq!(detected, expected, "{api_version} {kind}");
            assert_eq!(detected.is_some_and(ControllerKind::replicates), replicates, "{api_version} {kind}");
        }
    }

    #[test]
    fn objects_are_read_by_api_version_and_kind() {
        let read = |yaml: &str| WorkloadKind::of(&kix_yaml::from_str(yaml).unwrap());
        assert_eq!(read("{apiVersion: apps/v1, kind: StatefulSet}"), Some(WorkloadKind::StatefulSet));
        assert_eq!(read("{kind: Deployment}"), None);
        let rollout = "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, spec: ";
        assert_eq!(read(&format!("{rollout}{{template: {{}}}}}}")), Some(WorkloadKind::Rollout));
        assert_eq!(read(&format!("{rollout}{{workloadRef: {{kind: Deployment, name: d}}}}}}")), None);
        assert_eq!(read("{apiVersion: apps/v1}"), None);
    }

    #[test]
    fn kinds_display_as_the_api_spells_them() {
        assert_eq!(WorkloadKind::Deployment.to_string(), "Deployment");
        assert_eq!(ObjectKind::PodDisruptionBudget.to_string(), "PodDisruptionBudget");
        assert_eq!(api_group("apps/v1"), "apps");
        assert_eq!(api_group("v1"), "");
    }
}
