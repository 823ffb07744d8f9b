//! Admission: the level enforced in the cluster (issue 40). From a cluster's plan, with `[admission]` in its
//! file, the ValidatingAdmissionPolicies (`admissionregistration.k8s.io/v1`, GA since 1.30), their bindings
//! and their params that refuse, between two builds, what would undo the level: a workload scaled below
//! its floor (by create, update or the `/scale` subresource), an autoscaler's minimum lowered below it, the
//! level's hard spread constraint dropped or softened, one of kix's budgets deleted or weakened.
//!
//! This module decides *what* is guarded ([`Guard`], one per object kix compiled, with its floor, key and
//! level); [`policies`] writes the objects. Both run after derive, from the plan and the resolved
//! cluster, joined by index (the workload's document, its autoscaler's, its budget's origin).
//!
//! What admission can check is what one request shows: the object, the old object, the request and the
//! params. It cannot see whether a budget exists for a workload, nor where pods run: that stays
//! `kix verify`'s (before) and `kix audit`'s (after).

mod expressions;
pub mod policies;

use crate::derive::Origin;
pub use crate::derive::admission_plan::{AdmissionPlan, Check, Guard, Resource, SpreadAt};
use crate::derive::{InstancePlan, SpreadReason, WorkloadPlan};
use crate::resolve::{self, Cluster};
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_yaml::Value;

/// The guards of one instance's objects (with its findings, K0480), in the order found: what [`plan_of`] makes
/// the cluster's policies of, taken per instance by a rebuild that records each instance's
/// (`crate::reuse::footprint`).
pub fn guards_of(
    cluster: &str,
    resolved: &resolve::Instance,
    instance: &InstancePlan,
    diagnostics: &mut Diagnostics,
) -> Vec<Guard> {
    let mut guards = Vec::new();
    guard_instance(cluster, resolved, instance, &mut guards, diagnostics);
    guards
}

/// The cluster's admission plan from every instance's guards (`None` without `[admission]`).
pub fn plan_of(cluster: &Cluster, mut guards: Vec<Guard>) -> Option<AdmissionPlan> {
    let admission = cluster.admission.as_ref()?;
    guards.sort_by(|a, b| {
        (&a.resource, &a.check, &a.namespace, &a.name).cmp(&(&b.resource, &b.check, &b.namespace, &b.name))
    });
    let documents = policies::documents(&cluster.name, admission, &guards);
    Some(AdmissionPlan { guards, documents })
}

fn guard_instance(
    cluster: &str,
    resolved: &resolve::Instance,
    instance: &InstancePlan,
    guards: &mut Vec<Guard>,
    diagnostics: &mut Diagnostics,
) {
    let package = &resolved.package;
    let object_of = |origin: Origin| instance.planned().iter().position(|planned| planned.origin == origin);
    let named = |index: usize| {
        (instance.namespace_of(index).unwrap_or(&instance.namespace).to_string(), instance.name_of(index).to_string())
    };
    for workload in &instance.workloads {
        let at_instance = &resolved.workloads[workload.resolved];
        let package_workload = &package.workloads[at_instance.workload];
        if workload.scaled_to_zero || workload.level < Level::Pod {
            continue;
        }
        let Some(index) = object_of(Origin::Document(package_workload.document)) else { continue };
        let (namespace, name) = named(index);
        let explain =
            format!("kix explain --cluster {cluster} --instance {} --workload {}", instance.name, workload.name);
        let described = format!("{} {namespace}/{name}", workload.kind);
        let guard = |resource: &Resource, check: Check, namespace: &str, name: &str| Guard {
            resource: resource.clone(),
            check,
            namespace: namespace.to_string(),
            name: name.to_string(),
            workload: described.clone(),
            level: workload.level,
            floor: Some(workload.replicas),
            spread_key: None,
            explain: explain.clone(),
        };
        let Some((resource, count, default, scale)) = workload_resource(workload, package) else {
            diagnostics.push(
                Diagnostic::new(
                    Code::AdmissionUnguarded,
                    format!(
                        "{described} cannot be guarded at admission: kix does not know the plural name of its \
                         resource (no CustomResourceDefinition in package {} declares {} in group {})",
                        package.name,
                        workload.kind,
                        workload.kind.profile().map_or("", |p| p.group.as_str())
                    ),
                )
                .at(resolved.location.clone())
                .about(&resolved.subject)
                .help("ship the resource's CustomResourceDefinition in the package, or acknowledge with allow = [\"K0480\"]"),
            );
            continue;
        };
        // A Rollout that runs a Deployment's template (`spec.workloadRef`) has its spread written there.
        let spread = spread_at(workload).filter(|_| package_workload.template_from.is_none()).zip(workload.hard_key());
        let mut own = guard(
            &resource,
            Check::Workload {
                count: if workload.autoscaler.is_some() { Vec::new() } else { count.unwrap_or_default() },
                default,
                spread: spread.as_ref().map(|(at, _)| at.clone()),
            },
            &namespace,
            &name,
        );
        own.spread_key = spread.map(|(_, key)| key.to_string());
        if let Check::Workload { count, spread: None, .. } = &own.check
            && count.is_empty()
        {
            // Nothing of the object itself to check (an autoscaler owns its count, kix derived no spread).
        } else {
            guards.push(own);
        }
        if scale && workload.autoscaler.is_none() {
            guards.push(guard(&resource, Check::Scale, &namespace, &name));
        }
        if let Some(autoscaler) = &workload.autoscaler
            && let Some(view) = &package_workload.autoscaler
            && let Some(index) = object_of(Origin::Document(view.document))
        {
            let (namespace, name) = named(index);
            let resource = match autoscaler.kind {
                kix_kube::autoscaler::AutoscalerKind::HorizontalPodAutoscaler => {
                    Resource::of("autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
                }
                kix_kube::autoscaler::AutoscalerKind::ScaledObject => {
                    Resource::of("keda.sh", "scaledobjects", "ScaledObject")
                }
            };
            let default = if autoscaler.kind == kix_kube::autoscaler::AutoscalerKind::ScaledObject { 0 } else { 1 };
            let check = Check::Autoscaler { min: autoscaler.kind.min_field(), default };
            guards.push(guard(&resource, check, &namespace, &name));
        }
    }
    // Every budget kix derived: a workload's (R10) and a group's.
    for (index, planned) in instance.planned().iter().enumerate() {
        let served = match planned.origin {
            Origin::Budget(workload) => instance
                .workloads
                .iter()
                .find(|plan| resolved.workloads[plan.resolved].workload == workload)
                .map(|plan| (format!("{} {}/{}", plan.kind, instance.namespace, plan.name), plan.level, &plan.name)),
            Origin::GroupBudget(group) => package.groups.get(group).and_then(|g| {
                let level = instance
                    .workloads
                    .iter()
                    .filter(|p| p.group.as_deref() == Some(g.name.as_str()))
                    .map(|p| p.level)
                    .max()?;
                Some((format!("the pods of group {}", g.name), level, &g.name))
            }),
            Origin::Document(_) | Origin::Namespace => None,
        };
        let Some((workload, level, explained)) = served else { continue };
        let (namespace, name) = named(index);
        guards.push(Guard {
            resource: Resource::of("policy", "poddisruptionbudgets", "PodDisruptionBudget"),
            check: Check::Budget,
            namespace,
            name,
            workload,
            level,
            floor: None,
            spread_key: None,
            explain: format!("kix explain --cluster {cluster} --instance {} --workload {explained}", instance.name),
        });
    }
}

/// A workload's resource, its count field (`None`: the count is fixed, kix writes none), the count when
/// the field is absent, and whether the resource serves `/scale`. `None` for a custom resource whose
/// plural name kix does not know.
fn workload_resource(
    workload: &WorkloadPlan,
    package: &resolve::Package,
) -> Option<(Resource, Option<Vec<String>>, u32, bool)> {
    let replicas = || Some(vec!["spec".to_string(), "replicas".to_string()]);
    match workload.kind {
        WorkloadKind::Deployment => Some((Resource::of("apps", "deployments", "Deployment"), replicas(), 1, true)),
        WorkloadKind::StatefulSet => Some((Resource::of("apps", "statefulsets", "StatefulSet"), replicas(), 1, true)),
        WorkloadKind::Rollout => Some((Resource::of("argoproj.io", "rollouts", "Rollout"), replicas(), 1, true)),
        WorkloadKind::Custom(profile) => {
            let count = profile.replicas.as_ref().map(|path| path.0.clone());
            let (plural, scale) = custom_resource(package, &profile.group, &profile.kind, count.as_deref())
                .or_else(|| known_plural(&profile.group, &profile.kind).map(|plural| (plural.to_string(), false)))?;
            Some((Resource::of(&profile.group, &plural, &profile.kind), count, profile.replicas_default, scale))
        }
    }
}

/// The plural of a kind from the package's CustomResourceDefinition for it, and whether its `/scale`
/// subresource sets the count kix guards (its `specReplicasPath` is the profile's count field: a
/// Prometheus's `/scale` sets `.spec.shards`, not its replicas, and is left alone).
fn custom_resource(
    package: &resolve::Package,
    group: &str,
    kind: &str,
    count: Option<&[String]>,
) -> Option<(String, bool)> {
    let count_path = count.map(|path| format!(".{}", path.join(".")));
    package.documents.iter().find_map(|document| {
        let value: &Value = &document.value;
        let text = |keys: &[&str]| kix_kube::value::str_at(value, keys);
        let is_crd = text(&["kind"]) == Some("CustomResourceDefinition")
            && text(&["apiVersion"]).is_some_and(|v| v.starts_with("apiextensions.k8s.io/"));
        if !is_crd || text(&["spec", "group"]) != Some(group) || text(&["spec", "names", "kind"]) != Some(kind) {
            return None;
        }
        let plural = text(&["spec", "names", "plural"])?.to_string();
        let versions = kix_kube::value::at(value, &["spec", "versions"]).and_then(Value::as_sequence);
        let scale = versions.is_some_and(|versions| {
            versions.iter().any(|version| {
                kix_kube::value::at(version, &["served"]).and_then(Value::as_bool) == Some(true)
                    && count_path.is_some()
                    && kix_kube::value::str_at(version, &["subresources", "scale", "specReplicasPath"])
                        == count_path.as_deref()
            })
        });
        Some((plural, scale))
    })
}

/// The plural names of the operators' kinds kix profiles itself (`kix_kube::operators`), from their CRDs
/// (prometheus-operator `monitoringv1`, CloudNativePG `postgresql.cnpg.io_clusters.yaml`, Strimzi
/// `kafkanodepools`): their `/scale` is left unguarded unless the package ships the CRD that declares it.
fn known_plural(group: &str, kind: &str) -> Option<&'static str> {
    match (group, kind) {
        ("monitoring.coreos.com", "Prometheus") => Some("prometheuses"),
        ("monitoring.coreos.com", "Alertmanager") => Some("alertmanagers"),
        ("postgresql.cnpg.io", "Cluster") => Some("clusters"),
        ("kafka.strimzi.io", "KafkaNodePool") => Some("kafkanodepools"),
        _ => None,
    }
}

/// Where the workload's hard constraint must stay, when kix derived it (R9; R11's own placement keeps its
/// own constraints, and only its count is checked).
fn spread_at(workload: &WorkloadPlan) -> Option<SpreadAt> {
    if workload.spread_reason != SpreadReason::Derived || workload.explicit_placement {
        return None;
    }
    let path = |text: &str| text.split('.').map(str::to_string).collect::<Vec<_>>();
    match workload.kind {
        WorkloadKind::Deployment | WorkloadKind::StatefulSet | WorkloadKind::Rollout => Some(SpreadAt {
            constraints: path("spec.template.spec.topologySpreadConstraints"),
            labels: Some(path("spec.template.metadata.labels")),
        }),
        WorkloadKind::Custom(profile) => {
            profile.spread.as_ref().map(|spread| SpreadAt { constraints: spread.0.clone(), labels: None })
        }
    }
}
