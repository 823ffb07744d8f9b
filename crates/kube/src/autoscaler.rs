//! Autoscalers: HorizontalPodAutoscalers and KEDA ScaledObjects, read as typed views.
//!
//! An autoscaler owns its target's `spec.replicas` between a minimum and a maximum, so what a
//! level promises has to hold at the minimum. kix reads the target and the range, group-aware:
//!
//! - `autoscaling/v2` and `autoscaling/v1` HorizontalPodAutoscaler: `spec.scaleTargetRef`
//!   (`apiVersion`, `kind` and `name`; kind and name required), `spec.minReplicas` (defaulted to 1,
//!   `pkg/apis/autoscaling/v2/defaults.go` `SetDefaults_HorizontalPodAutoscaler`) and
//!   `spec.maxReplicas` (required). The API server's checks kix applies follow
//!   `pkg/apis/autoscaling/validation/validation.go` `validateHorizontalPodAutoscalerSpec`:
//!   minReplicas at least 1 (0 only behind the alpha `HPAScaleToZero` gate), maxReplicas at least
//!   1 and at least minReplicas, a target kind and name.
//! - `keda.sh/v1alpha1` ScaledObject (kedacore/keda `apis/keda/v1alpha1/scaledobject_types.go`):
//!   `spec.scaleTargetRef.name` (required), `.kind` (default `Deployment`) and `.apiVersion`
//!   (default `apps/v1`), `spec.minReplicaCount` (default 0: KEDA scales an idle target to zero)
//!   and `spec.maxReplicaCount` (default 100).
//!
//! The HPA controller finds its target through the REST mapper by group and kind
//! (`pkg/controller/podautoscaler/horizontal.go`, `schema.ParseGroupVersion` of the reference's
//! apiVersion), so a reference without the `apps` group does not name an apps Deployment.

use super::kind::{WorkloadKind, api_group};
use super::value::{at, str_at};
use kix_yaml::Value;
use std::fmt;

/// The kinds of autoscaler kix reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum AutoscalerKind {
    /// `autoscaling/HorizontalPodAutoscaler` (v1 or v2).
    HorizontalPodAutoscaler,
    /// `keda.sh/ScaledObject`.
    ScaledObject,
}

impl AutoscalerKind {
    /// The autoscaler kind of an object, if it is one.
    pub fn of(object: &Value) -> Option<AutoscalerKind> {
        let group = api_group(str_at(object, &["apiVersion"]).unwrap_or_default());
        match (group, str_at(object, &["kind"])?) {
            ("autoscaling", "HorizontalPodAutoscaler") => Some(AutoscalerKind::HorizontalPodAutoscaler),
            ("keda.sh", "ScaledObject") => Some(AutoscalerKind::ScaledObject),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AutoscalerKind::HorizontalPodAutoscaler => "HorizontalPodAutoscaler",
            AutoscalerKind::ScaledObject => "ScaledObject",
        }
    }

    /// The `spec` field holding the minimum (`minReplicas`, `minReplicaCount`).
    pub fn min_field(self) -> &'static str {
        match self {
            AutoscalerKind::HorizontalPodAutoscaler => "minReplicas",
            AutoscalerKind::ScaledObject => "minReplicaCount",
        }
    }

    /// The `spec` field holding the maximum (`maxReplicas`, `maxReplicaCount`).
    pub fn max_field(self) -> &'static str {
        match self {
            AutoscalerKind::HorizontalPodAutoscaler => "maxReplicas",
            AutoscalerKind::ScaledObject => "maxReplicaCount",
        }
    }

    /// The minimum when the field is absent.
    pub(crate) fn default_min(self) -> u32 {
        match self {
            AutoscalerKind::HorizontalPodAutoscaler => 1,
            AutoscalerKind::ScaledObject => 0,
        }
    }

    /// The smallest minimum the API accepts.
    fn lowest_min(self) -> u32 {
        match self {
            AutoscalerKind::HorizontalPodAutoscaler => 1,
            AutoscalerKind::ScaledObject => 0,
        }
    }
}

impl fmt::Display for AutoscalerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an autoscaler scales: `spec.scaleTargetRef` with the defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleTarget {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

impl ScaleTarget {
    /// The apps workload kind the reference names (group `apps`, kind Deployment or StatefulSet).
    pub(crate) fn workload_kind(&self) -> Option<WorkloadKind> {
        WorkloadKind::detect(&self.api_version, &self.kind)
    }
}

/// What kix reads from an autoscaler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoscalerView {
    pub kind: AutoscalerKind,
    pub name: String,
    pub target: ScaleTarget,
    /// The minimum as written (`None` when absent: see [`AutoscalerKind::default_min`]).
    pub min_written: Option<u32>,
    /// The maximum as written (`None` only on a ScaledObject, whose default is 100).
    pub max_written: Option<u32>,
}

/// Why an autoscaler cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoscalerReason {
    /// A replica bound is not an integer from 0 to 2147483647.
    NotACount(&'static str),
    /// The minimum is below what the API accepts.
    MinTooLow(&'static str, u32),
    /// `maxReplicas` is absent (HPA) or 0.
    NoMax(&'static str),
    /// The maximum is below the minimum as written.
    MaxBelowMin { min: u32, max: u32 },
    /// `spec.scaleTargetRef` lacks a field that has no default.
    NoTarget(&'static str),
}

/// One problem of one autoscaler: the field path (below `spec`) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoscalerError {
    pub kind: AutoscalerKind,
    pub name: String,
    pub path: Vec<&'static str>,
    pub reason: AutoscalerReason,
}

impl fmt::Display for AutoscalerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, name) = (self.kind, &self.name);
        match &self.reason {
            AutoscalerReason::NotACount(field) => {
                write!(f, "{kind} {name}: spec.{field} must be an integer from 0 to {}", i32::MAX)
            }
            AutoscalerReason::MinTooLow(field, lowest) => {
                write!(f, "{kind} {name}: spec.{field} must be at least {lowest}")
            }
            AutoscalerReason::NoMax(field) => write!(f, "{kind} {name}: spec.{field} must be set and at least 1"),
            AutoscalerReason::MaxBelowMin { min, max } => write!(
                f,
                "{kind} {name}: spec.{} ({max}) must be greater than or equal to spec.{} ({min})",
                kind.max_field(),
                kind.min_field()
            ),
            AutoscalerReason::NoTarget(field) => write!(f, "{kind} {name}: spec.scaleTargetRef.{field} is required"),
        }
    }
}

impl std::error::Error for AutoscalerError {}

impl AutoscalerView {
    /// Reads an autoscaler (`Ok(None)` for any other object); `Err` carries every problem found.
    pub fn read(object: &Value) -> Result<Option<AutoscalerView>, Vec<AutoscalerError>> {
        let Some(kind) = AutoscalerKind::of(object) else { return Ok(None) };
        let name = str_at(object, &["metadata", "name"]).unwrap_or_default().to_string();
        let mut problems = Vec::new();
        let mut problem =
            |path: Vec<&'static str>, reason| problems.push(AutoscalerError { kind, name: name.clone(), path, reason });
        let count = |field: &'static str, problem: &mut dyn FnMut(Vec<&'static str>, AutoscalerReason)| match at(
            object,
            &["spec", field],
        ) {
            None => None,
            Some(value) => match value.as_u64().filter(|n| *n <= i32::MAX as u64) {
                Some(n) => Some(n as u32),
                None => {
                    problem(vec!["spec", field], AutoscalerReason::NotACount(field));
                    None
                }
            },
        };
        let (min_field, max_field) = (kind.min_field(), kind.max_field());
        let min_written = count(min_field, &mut problem);
        let max_written = count(max_field, &mut problem);
        if min_written.is_some_and(|m| m < kind.lowest_min()) {
            problem(vec!["spec", min_field], AutoscalerReason::MinTooLow(min_field, kind.lowest_min()));
        }
        let max_missing = match kind {
            AutoscalerKind::HorizontalPodAutoscaler => {
                at(object, &["spec", max_field]).is_none() || max_written == Some(0)
            }
            AutoscalerKind::ScaledObject => max_written == Some(0),
        };
        if max_missing {
            let path = if at(object, &["spec", max_field]).is_some() { vec!["spec", max_field] } else { vec!["spec"] };
            problem(path, AutoscalerReason::NoMax(max_field));
        }
        if let (Some(min), Some(max)) = (min_written, max_written)
            && max >= 1
            && max < min
        {
            problem(vec!["spec", max_field], AutoscalerReason::MaxBelowMin { min, max });
        }
        let reference = |field: &str| str_at(object, &["spec", "scaleTargetRef", field]).filter(|s| !s.is_empty());
        let target_kind = match (kind, reference("kind")) {
            (_, Some(k)) => k.to_string(),
            (AutoscalerKind::ScaledObject, None) => "Deployment".to_string(),
            (AutoscalerKind::HorizontalPodAutoscaler, None) => {
                problem(vec!["spec", "scaleTargetRef"], AutoscalerReason::NoTarget("kind"));
                String::new()
            }
        };
        let target_name = reference("name").unwrap_or_default().to_string();
        if target_name.is_empty() {
            problem(vec!["spec", "scaleTargetRef"], AutoscalerReason::NoTarget("name"));
        }
        let api_version = match (kind, reference("apiVersion")) {
            (_, Some(v)) => v.to_string(),
            (AutoscalerKind::ScaledObject, None) => "apps/v1".to_string(),
            (AutoscalerKind::HorizontalPodAutoscaler, None) => String::new(),
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let target = ScaleTarget { api_version, kind: target_kind, name: target_name };
        Ok(Some(AutoscalerView { kind, name, target, min_written, max_written }))
    }

    /// The minimum the autoscaler may scale its target down to.
    pub fn min(&self) -> u32 {
        self.min_written.unwrap_or(self.kind.default_min())
    }

    /// The maximum it may scale its target up to (a ScaledObject's default is 100).
    pub fn max(&self) -> u32 {
        self.max_written.unwrap_or(100)
    }

    /// Whether it scales this apps workload.
    pub fn targets(&self, kind: WorkloadKind, name: &str) -> bool {
        let kind_matches = match kind.profile() {
            // A custom resource is scaled through its scale subresource: the reference names its group and kind.
            Some(profile) => profile.is_for(super::kind::api_group(&self.target.api_version), &self.target.kind),
            None => self.target.workload_kind() == Some(kind),
        };
        kind_matches && self.target.name == name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Result<Option<AutoscalerView>, Vec<String>> {
        AutoscalerView::read(&kix_yaml::from_str(yaml).unwrap())
            .map_err(|e| e.iter().map(ToString::to_string).collect())
    }

    const HPA: &str = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n  \
                       scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n";
    const KEDA: &str = "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: k}\nspec:\n  \
                        scaleTargetRef: {name: web}\n  triggers: []\n";

    #[test]
    fn reads_hpas_and_scaled_objects_with_their_defaults() {
        let hpa = read(HPA).unwrap().unwrap();
        assert_eq!((hpa.kind, hpa.min(), hpa.max()), (AutoscalerKind::HorizontalPodAutoscaler, 2, 5));
        assert!(hpa.targets(WorkloadKind::Deployment, "web"));
        assert!(!hpa.targets(WorkloadKind::StatefulSet, "web"));
        let v1 = read(&HPA.replace("autoscaling/v2", "autoscaling/v1").replace("  minReplicas: 2\n", "")).unwrap();
        assert_eq!(v1.unwrap().min(), 1, "minReplicas defaults to 1");
        let keda = read(KEDA).unwrap().unwrap();
        assert_eq!((keda.kind, keda.min(), keda.max()), (AutoscalerKind::ScaledObject, 0, 100));
        assert!(keda.targets(WorkloadKind::Deployment, "web"), "KEDA defaults to an apps/v1 Deployment");
        let sts = read(&KEDA.replace("{name: web}", "{name: db, kind: StatefulSet}")).unwrap().unwrap();
        assert!(sts.targets(WorkloadKind::StatefulSet, "db"));
    }

    #[test]
    fn detection_and_targets_are_group_aware() {
        let cases = [
            ("apiVersion: autoscaling/v2", "apiVersion: example.com/v1", false),
            ("apiVersion: autoscaling/v2", "apiVersion: autoscaling/v1", true),
            ("kind: HorizontalPodAutoscaler", "kind: ScaledObject", false),
        ];
        for (from, to, is) in cases {
            assert_eq!(read(&HPA.replace(from, to)).unwrap().is_some(), is, "{to}");
        }
        // Without the apps group the reference names no apps workload (the HPA controller maps group and kind).
        let no_group = read(&HPA.replace("apiVersion: apps/v1, ", "")).unwrap().unwrap();
        assert!(!no_group.targets(WorkloadKind::Deployment, "web"));
        let extensions = read(&HPA.replace("apps/v1", "extensions/v1beta1")).unwrap().unwrap();
        assert!(!extensions.targets(WorkloadKind::Deployment, "web"));
    }

    #[test]
    fn problems_name_the_field() {
        let cases = [
            ("minReplicas: 2", "minReplicas: two", "HorizontalPodAutoscaler h: spec.minReplicas must be an integer"),
            ("minReplicas: 2", "minReplicas: 0", "HorizontalPodAutoscaler h: spec.minReplicas must be at least 1"),
            ("  maxReplicas: 5\n", "", "HorizontalPodAutoscaler h: spec.maxReplicas must be set"),
            (
                "maxReplicas: 5",
                "maxReplicas: 1",
                "spec.maxReplicas (1) must be greater than or equal to spec.minReplicas (2)",
            ),
            ("name: web}", "name: ''}", "spec.scaleTargetRef.name is required"),
            ("kind: Deployment, ", "", "spec.scaleTargetRef.kind is required"),
        ];
        for (from, to, says) in cases {
            let problems = read(&HPA.replace(from, to)).unwrap_err();
            assert!(problems.iter().any(|p| p.contains(says)), "{to}: {problems:?}");
        }
        let keda = read(&KEDA.replace("triggers: []", "minReplicaCount: -1")).unwrap_err();
        assert!(keda[0].contains("ScaledObject k: spec.minReplicaCount must be an integer"), "{keda:?}");
        assert!(read(&KEDA.replace("triggers: []", "minReplicaCount: 0")).is_ok(), "KEDA scales to zero");
    }
}
