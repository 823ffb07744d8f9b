//! Custom resources that run pods: the kinds of well-known operators, and how to tell from a
//! CustomResourceDefinition's schema that a kind of custom resource probably runs pods.
//!
//! kix places the pods of these kinds through a built-in [`Profile`] each ([`builtin_profiles`];
//! Argo Rollouts' `Rollout` is read as a workload of its own, [`super::kind::WorkloadKind::Rollout`]);
//! a package's `[kinds]` entry overrides a profile ([`KindTable`]). A custom resource of a profile's
//! kind that kix cannot read, or of a kind whose shipped CRD says it runs pods ([`crd_pod_field`]),
//! is named at level pod or higher, so that none is left unprotected in silence. The kinds and the
//! field each operator reads its pod count from, as their API types declare them:
//!
//! * Argo Rollouts `argoproj.io/Rollout`, `spec.replicas`
//!   (argoproj/argo-rollouts `pkg/apis/rollouts/v1alpha1/types.go`, `RolloutSpec`);
//! * prometheus-operator `monitoring.coreos.com/Prometheus` and `Alertmanager`, `spec.replicas`
//!   (prometheus-operator/prometheus-operator `pkg/apis/monitoring/v1/prometheus_types.go`,
//!   `alertmanager_types.go`);
//! * CloudNativePG `postgresql.cnpg.io/Cluster`, `spec.instances`
//!   (cloudnative-pg/cloudnative-pg `api/v1/cluster_types.go`, `ClusterSpec`);
//! * Strimzi `kafka.strimzi.io/KafkaNodePool`, `spec.replicas`
//!   (strimzi/strimzi-kafka-operator `api/src/main/java/io/strimzi/api/kafka/model/nodepool/KafkaNodePoolSpec.java`).
//!
//! What each operator does with the pods, read at the commits named (the facts each built-in profile
//! below encodes; lint also reads prometheus-operator's pod labels for K0702, [`operator_pod_labels`]):
//!
//! * prometheus-operator (`6adcebc5076c`): a Prometheus's StatefulSet selects, and labels its pods,
//!   `app.kubernetes.io/name: prometheus`, `app.kubernetes.io/managed-by: prometheus-operator`,
//!   `app.kubernetes.io/instance: <name>`, `operator.prometheus.io/name: <name>`, `prometheus: <name>`
//!   and `operator.prometheus.io/shard: "<n>"` (`pkg/prometheus/server/operator.go`,
//!   `makeSelectorLabels`; `statefulset.go`); an Alertmanager's `app.kubernetes.io/name:
//!   alertmanager`, `app.kubernetes.io/managed-by: prometheus-operator`, `app.kubernetes.io/instance:
//!   <name>` and `alertmanager: <name>` (`pkg/alertmanager/operator.go`, `makeSelectorLabels`). The
//!   pods also carry `spec.podMetadata.labels`. Both take spread constraints from
//!   `spec.topologySpreadConstraints`, run the pods as a StatefulSet and create no
//!   PodDisruptionBudget (nothing under `pkg/` outside the client builds one).
//! * CloudNativePG (`a95a534dbe08`): `spec.topologySpreadConstraints` (`api/v1/cluster_types.go`);
//!   pods labelled `cnpg.io/cluster: <name>` and `cnpg.io/instanceRole: primary|replica`
//!   (`pkg/utils/labels_annotations.go`), and `spec.inheritedMetadata.labels`; the operator creates
//!   the pods itself (no StatefulSet: an instance keeps its name and its volume, so kix gives it
//!   StatefulSet semantics) and makes two PodDisruptionBudgets, one over the primary (minAvailable 1)
//!   and one over the replicas (all but one), unless `spec.enablePDB` is false
//!   (`pkg/specs/poddisruptionbudget.go`). verify simulates them as one budget over the cluster's
//!   pods allowing one down at a time (it does not model the switchover the operator runs before the
//!   primary's pod may go).
//! * Strimzi (`8541da1e336b`): a KafkaNodePool takes spread constraints from
//!   `spec.template.pod.topologySpreadConstraints` (`api/.../common/template/PodTemplate.java`); its
//!   pods carry `strimzi.io/cluster: <Kafka name>` and `strimzi.io/pool-name: <pool name>`
//!   (`api/src/main/java/io/strimzi/api/ResourceLabels.java`,
//!   `operator-common/.../model/Labels.java`), and `spec.template.pod.metadata.labels`; its pods are
//!   run by StrimziPodSets, named and with volumes of their own (StatefulSet semantics); the operator
//!   makes one PodDisruptionBudget per Kafka cluster over the pods of all its pools, minAvailable all
//!   but one (`cluster-operator/.../model/KafkaCluster.java`,
//!   `PodDisruptionBudgetUtils.createCustomControllerPodDisruptionBudget`).
//!
//! The budgets as the cluster shows them ([`operator_budget_names`]): CloudNativePG names the
//! replicas' budget after the Cluster and the primary's `<cluster>-primary`
//! (`BuildReplicasPodDisruptionBudget`, `BuildPrimaryPodDisruptionBudget`); Strimzi names its budget
//! after the Kafka cluster's component, `<kafka>-kafka` (`KafkaResources.kafkaComponentName`).

use super::profile::{Budget, Controller, FieldPath, Profile, intern};
use super::selector::Labels;
use super::value::at;
use kix_yaml::Value;
use std::sync::OnceLock;

/// An operator's kind that runs pods: its API group, kind and the field of its pod count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperatorKind {
    pub group: &'static str,
    pub kind: &'static str,
    /// The field under `spec` the operator reads the number of pods from.
    pub replicas: &'static str,
}

/// The well-known operator kinds (see the module documentation for the upstream source of each).
pub const OPERATOR_KINDS: &[OperatorKind] = &[
    OperatorKind { group: "argoproj.io", kind: "Rollout", replicas: "replicas" },
    OperatorKind { group: "monitoring.coreos.com", kind: "Prometheus", replicas: "replicas" },
    OperatorKind { group: "monitoring.coreos.com", kind: "Alertmanager", replicas: "replicas" },
    OperatorKind { group: "postgresql.cnpg.io", kind: "Cluster", replicas: "instances" },
    OperatorKind { group: "kafka.strimzi.io", kind: "KafkaNodePool", replicas: "replicas" },
];

/// The well-known operator kind of a (group, kind), if it is one.
pub fn operator_kind(group: &str, kind: &str) -> Option<&'static OperatorKind> {
    OPERATOR_KINDS.iter().find(|k| k.group == group && k.kind == kind)
}

/// The built-in profiles (the module documentation cites the operator source of each fact).
pub fn builtin_profiles() -> &'static [&'static Profile] {
    builtin()
}

/// The PodDisruptionBudgets the operator of a resource `name` of `profile` makes for its pods (whose
/// labels `pod_labels` the profile filled in), named as the cluster will show them, the one verify's
/// simulated budget stands for first; more than one when the operator makes several that verify models
/// as one (CloudNativePG's). A `[kinds]` profile's operator is unknown to kix: its budget is called
/// after the resource.
pub fn operator_budget_names(profile: &Profile, name: &str, pod_labels: &Labels) -> Vec<String> {
    match (profile.builtin, profile.group.as_str(), profile.kind.as_str()) {
        (true, "postgresql.cnpg.io", "Cluster") => vec![name.to_string(), format!("{name}-primary")],
        (true, "kafka.strimzi.io", "KafkaNodePool") => match pod_labels.get("strimzi.io/cluster") {
            Some(cluster) => vec![format!("{cluster}-kafka")],
            None => vec![name.to_string()],
        },
        _ => vec![name.to_string()],
    }
}

fn builtin() -> &'static [&'static Profile] {
    static PROFILES: OnceLock<Vec<&'static Profile>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        let path = |text: &str| FieldPath::parse(text).expect("a built-in path");
        let labels = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            let mut labels: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            labels.sort();
            labels
        };
        let prometheus_operator = |kind: &str, name: &str, own: &[(&str, &str)]| {
            let mut pod_labels = vec![
                ("app.kubernetes.io/name", name),
                ("app.kubernetes.io/managed-by", "prometheus-operator"),
                ("app.kubernetes.io/instance", "{name}"),
            ];
            pod_labels.extend_from_slice(own);
            Profile {
                group: "monitoring.coreos.com".into(),
                kind: kind.into(),
                replicas: Some(path("spec.replicas")),
                replicas_default: 1,
                pod_labels: labels(&pod_labels),
                extra_labels: Some(path("spec.podMetadata.labels")),
                pod_template: None,
                spread: Some(path("spec.topologySpreadConstraints")),
                budget: Budget::Derive,
                controller: Controller::StatefulSet,
                builtin: true,
            }
        };
        vec![
            intern(prometheus_operator(
                "Prometheus",
                "prometheus",
                &[("operator.prometheus.io/name", "{name}"), ("prometheus", "{name}")],
            )),
            intern(prometheus_operator("Alertmanager", "alertmanager", &[("alertmanager", "{name}")])),
            intern(Profile {
                group: "postgresql.cnpg.io".into(),
                kind: "Cluster".into(),
                replicas: Some(path("spec.instances")),
                replicas_default: 1,
                pod_labels: labels(&[("cnpg.io/cluster", "{name}")]),
                extra_labels: Some(path("spec.inheritedMetadata.labels")),
                pod_template: None,
                spread: Some(path("spec.topologySpreadConstraints")),
                budget: Budget::OperatorUnlessFalse {
                    labels: labels(&[("cnpg.io/cluster", "{name}")]),
                    switch: path("spec.enablePDB"),
                },
                controller: Controller::StatefulSet,
                builtin: true,
            }),
            intern(Profile {
                group: "kafka.strimzi.io".into(),
                kind: "KafkaNodePool".into(),
                replicas: Some(path("spec.replicas")),
                replicas_default: 1,
                pod_labels: labels(&[
                    ("strimzi.io/cluster", "{label:strimzi.io/cluster}"),
                    ("strimzi.io/pool-name", "{name}"),
                ]),
                extra_labels: Some(path("spec.template.pod.metadata.labels")),
                pod_template: None,
                spread: Some(path("spec.template.pod.topologySpreadConstraints")),
                budget: Budget::Operator { labels: labels(&[("strimzi.io/cluster", "{label:strimzi.io/cluster}")]) },
                controller: Controller::StatefulSet,
                builtin: true,
            }),
        ]
    })
}

/// The profiles custom resources are read with: a package's own `[kinds]`, then the built-in ones
/// ([`KindTable::new`]), or exactly some profiles ([`KindTable::exactly`]; the default holds none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindTable {
    declared: Vec<&'static Profile>,
    builtin: bool,
}

impl KindTable {
    /// A package's table: its declared profiles, each overriding the built-in one of its kind.
    pub fn new(declared: Vec<&'static Profile>) -> KindTable {
        KindTable { declared, builtin: true }
    }

    /// Exactly these profiles (verify's: the kinds of the workloads it was given).
    pub fn exactly(profiles: Vec<&'static Profile>) -> KindTable {
        KindTable { declared: profiles, builtin: false }
    }

    /// The profile of an API group and kind, if any: the package's own first.
    pub fn profile(&self, group: &str, kind: &str) -> Option<&'static Profile> {
        let builtin = if self.builtin { builtin_profiles() } else { &[] };
        self.declared.iter().chain(builtin).copied().find(|p| p.is_for(group, kind))
    }

    /// The profile an object is read with, if any (by its `apiVersion`'s group and its `kind`).
    pub fn profile_of(&self, object: &Value) -> Option<&'static Profile> {
        let api_version = super::value::str_at(object, &["apiVersion"]).unwrap_or_default();
        self.profile(super::kind::api_group(api_version), super::value::str_at(object, &["kind"])?)
    }
}

/// The fields of a custom resource's `spec` that say it runs pods: a pod count (`replicas`,
/// `instances`) or a pod template (`template`).
pub const POD_FIELDS: &[&str] = &["replicas", "instances", "template"];

/// The first of [`POD_FIELDS`] that any version of a CustomResourceDefinition declares under
/// `spec` (`spec.versions[].schema.openAPIV3Schema.properties.spec.properties`), if any.
pub fn crd_pod_field(crd: &Value) -> Option<&'static str> {
    let versions = at(crd, &["spec", "versions"]).and_then(Value::as_sequence)?;
    let declared = |field: &str| {
        versions.iter().any(|version| {
            at(version, &["schema", "openAPIV3Schema", "properties", "spec", "properties", field]).is_some()
        })
    };
    POD_FIELDS.iter().copied().find(|field| declared(field))
}

/// The labels prometheus-operator puts on the pods of a `monitoring.coreos.com` Prometheus or
/// Alertmanager (`group`, `kind`, the object), so that a budget shipped beside the resource can be
/// matched against pods that are in no manifest: the resource's `spec.podMetadata.labels`, then the
/// operator's selector labels written over them (`pkg/prometheus/server/statefulset.go`
/// `makeStatefulSetSpec` at `018eadd749e6`: `BuildPodMetadata`, then each of `podSelectorLabels` set in
/// `podLabels`; `pkg/alertmanager/statefulset.go` does the same with its own, listed above). A
/// Prometheus's pods are those of shard 0 (a budget over a sharded Prometheus selects what the shards
/// share). `None` for every other kind: kix does not know what labels their operators write.
pub fn operator_pod_labels(group: &str, kind: &str, object: &Value) -> Option<Labels> {
    if group != "monitoring.coreos.com" {
        return None;
    }
    let name = at(object, &["metadata", "name"]).and_then(Value::as_str)?.to_string();
    let mut labels: Labels = at(object, &["spec", "podMetadata", "labels"])
        .and_then(Value::as_mapping)
        .map(|written| {
            written
                .iter()
                .filter_map(|(key, value)| Some((key.as_str()?.to_string(), value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let app = match kind {
        "Prometheus" => "prometheus",
        "Alertmanager" => "alertmanager",
        _ => return None,
    };
    let operator = [
        ("app.kubernetes.io/name", app.to_string()),
        ("app.kubernetes.io/managed-by", "prometheus-operator".to_string()),
        ("app.kubernetes.io/instance", name.clone()),
        (app, name.clone()),
    ];
    labels.extend(operator.into_iter().map(|(key, value)| (key.to_string(), value)));
    if kind == "Prometheus" {
        labels.insert("operator.prometheus.io/name".into(), name);
        labels.insert("operator.prometheus.io/shard".into(), "0".into());
    }
    Some(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube-prometheus's Prometheus `k8s` (tests/realworld): its podMetadata labels, the operator's over them.
    #[test]
    fn prometheus_pods_carry_pod_metadata_then_the_operators_labels() {
        let prometheus = kix_yaml::from_str(
            "metadata: {name: k8s}\nspec:\n  podMetadata:\n    labels: {app.kubernetes.io/instance: other, \
             app.kubernetes.io/part-of: kube-prometheus}\n",
        )
        .unwrap();
        let labels = operator_pod_labels("monitoring.coreos.com", "Prometheus", &prometheus).unwrap();
        assert_eq!(labels["app.kubernetes.io/instance"], "k8s", "the operator's label wins");
        assert_eq!(labels["app.kubernetes.io/part-of"], "kube-prometheus");
        assert_eq!(labels["prometheus"], "k8s");
        assert_eq!(labels["operator.prometheus.io/shard"], "0");
        let alertmanager = operator_pod_labels("monitoring.coreos.com", "Alertmanager", &prometheus).unwrap();
        assert_eq!(alertmanager["alertmanager"], "k8s");
        assert!(!alertmanager.contains_key("prometheus"));
        assert_eq!(operator_pod_labels("monitoring.coreos.com", "ServiceMonitor", &prometheus), None);
        assert_eq!(operator_pod_labels("postgresql.cnpg.io", "Cluster", &prometheus), None);
    }

    #[test]
    fn operator_kinds_are_told_apart_by_group() {
        assert_eq!(operator_kind("argoproj.io", "Rollout").map(|k| k.replicas), Some("replicas"));
        assert_eq!(operator_kind("postgresql.cnpg.io", "Cluster").map(|k| k.replicas), Some("instances"));
        assert_eq!(operator_kind("example.com", "Cluster"), None);
        assert_eq!(operator_kind("monitoring.coreos.com", "ServiceMonitor"), None);
    }

    #[test]
    fn a_crd_runs_pods_when_its_spec_declares_a_count_or_template() {
        let crd = |properties: &str| {
            kix_yaml::from_str(&format!(
                "spec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          \
                 spec:\n            properties: {properties}\n"
            ))
            .unwrap()
        };
        assert_eq!(crd_pod_field(&crd("{members: {type: integer}, replicas: {type: integer}}")), Some("replicas"));
        assert_eq!(crd_pod_field(&crd("{instances: {type: integer}}")), Some("instances"));
        assert_eq!(crd_pod_field(&crd("{template: {type: object}}")), Some("template"));
        assert_eq!(crd_pod_field(&crd("{size: {type: integer}}")), None);
        assert_eq!(crd_pod_field(&kix_yaml::from_str("spec: {}").unwrap()), None);
    }
}
