//! Deployments and StatefulSets as the model places them: pods stamped from the template.
//!
//! The controllers' labels matter to spreading (`matchLabelKeys:
//! [pod-template-hash]`), so pods get them as the real controllers set them:
//! Deployment pods carry `pod-template-hash` (from a stable hash of the
//! template and revision), StatefulSet pods `controller-revision-hash`,
//! `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`.
//! The owning ReplicaSet's (or StatefulSet's) selector becomes the pod's
//! default-spread selector, as `helper.DefaultSelector` finds it upstream.

use super::objects::{Pod, PodSpec};
use super::snapshot::parse_pod_spec;
use kix_kube::int_or_percent::IntOrPercent;
use kix_kube::kind::WorkloadKind;
use kix_kube::labels::{
    CONTROLLER_REVISION_HASH, HOSTNAME, POD_INDEX, POD_TEMPLATE_HASH, STATEFULSET_POD_NAME, TAINT_NOT_READY,
    TAINT_UNREACHABLE, ZONE,
};
use kix_kube::selector::{Labels, Selector};
use kix_kube::taints::{Effect, Toleration};
use kix_kube::value::{at, str_at};
use kix_kube::workload::{WorkloadError, WorkloadView};
use kix_yaml::Value;
use std::sync::Arc;

/// `--default-unreachable-toleration-seconds` and `--default-not-ready-toleration-seconds` of the
/// API server (DefaultTolerationSeconds admission plugin), 300 by default.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// A Deployment or StatefulSet, read by [`kix_kube::workload`], ready to stamp pods.
#[derive(Clone, Debug)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub replicas: i64,
    pub selector: Selector,
    pub template_labels: Labels,
    /// The template's spec (default selector not yet set).
    pub spec: PodSpec,
    /// Deployment `strategy.rollingUpdate` (defaults 25%/25%).
    pub max_surge: IntOrPercent,
    pub max_unavailable: IntOrPercent,
    /// Deployment `strategy.type: Recreate`: every old pod stops before new ones start.
    pub recreate: bool,
    /// StatefulSet `updateStrategy`: RollingUpdate with this `partition` (default 0), or None
    /// for `OnDelete` (the controller replaces no pod by itself).
    pub partition: Option<i64>,
    /// StatefulSet `podManagementPolicy: Parallel` (default OrderedReady).
    pub parallel: bool,
    /// Its persistent volume claims (issue 39): a StatefulSet's `volumeClaimTemplates` (one claim per
    /// pod), or a claim the template's pods share.
    pub claims: kix_kube::volumes::Claims,
    /// A stable hash of the template, the base of pod-template-hash.
    template_hash: u64,
}

const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn fnv(bytes: &[u8], seed: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn encode(mut n: u64, len: usize) -> String {
    (0..len)
        .map(|_| {
            let c = SAFE[(n % SAFE.len() as u64) as usize] as char;
            n /= SAFE.len() as u64;
            c
        })
        .collect()
}

/// Why the model cannot place a workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The one reader's problems (every one, joined).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    WorkloadView(Vec<WorkloadError>),
    #[error(transparent)]
    Strategy(WorkloadError),
    #[error(
        "{kind} `{name}`: spec.replicas is {replicas}; kix simulates at most {MAX_SIMULATED_REPLICAS} replicas per workload"
    )]
    TooManyReplicas { kind: WorkloadKind, name: String, replicas: i64 },
    /// A custom resource its profile cannot read.
    #[error("{kind} `{name}`: {reason}")]
    Custom { kind: String, name: String, reason: String },
    /// The template's pod spec has a field the model cannot read.
    #[error("{kind} `{name}`: {reason}")]
    PodSpec { kind: WorkloadKind, name: String, reason: String },
}

/// The most replicas of one workload kix places: far above real workloads, low enough that a typo
/// such as `replicas: 2000000000` is refused instead of simulated for hours.
pub const MAX_SIMULATED_REPLICAS: i64 = 10_000;

impl Workload {
    /// Reads an `apps` Deployment or StatefulSet through [`kix_kube::workload`]; Ok(None) for
    /// any other object.
    pub fn from_object(object: &Value, default_namespace: &str) -> Result<Option<Workload>, ReadError> {
        let Some(view) = WorkloadView::read(object).map_err(ReadError::WorkloadView)? else { return Ok(None) };
        Workload::from_view(object, view, default_namespace).map(Some)
    }

    /// Reads a custom resource through its profile (`kix_kube::workload::read_custom`): pods with the
    /// profile's labels and its template's spec (none: a pod with no requests), the profile's
    /// controller semantics, the default rolling update.
    pub fn from_custom(
        object: &Value,
        profile: &'static kix_kube::profile::Profile,
        default_namespace: &str,
    ) -> Result<Option<Workload>, ReadError> {
        let view = kix_kube::workload::read_custom(object, profile).map_err(|problem| ReadError::Custom {
            kind: profile.kind.clone(),
            name: str_at(object, &["metadata", "name"]).unwrap_or_default().to_string(),
            reason: problem.reason,
        })?;
        // The operator's own update strategy is not the shaped object's: the defaults apply.
        let shaped = Value::Mapping(kix_yaml::Mapping::new());
        Workload::from_view(&shaped, view, default_namespace).map(Some)
    }

    fn from_view(raw: &Value, object: WorkloadView, default_namespace: &str) -> Result<Workload, ReadError> {
        let partition = match str_at(raw, &["spec", "updateStrategy", "type"]) {
            Some("OnDelete") => None,
            _ => Some(
                at(raw, &["spec", "updateStrategy", "rollingUpdate", "partition"]).and_then(Value::as_i64).unwrap_or(0),
            ),
        };
        let parallel = str_at(raw, &["spec", "podManagementPolicy"]) == Some("Parallel");
        let strategy = object.strategy().map_err(ReadError::Strategy)?;
        let WorkloadView { kind, name, namespace, manifest_replicas, selector, template_labels, template, .. } = object;
        let replicas = i64::from(manifest_replicas.unwrap_or(1));
        if replicas > MAX_SIMULATED_REPLICAS {
            return Err(ReadError::TooManyReplicas { kind, name, replicas });
        }
        let spec = match at(&template, &["spec"]) {
            Some(s) => parse_pod_spec(s).map_err(|reason| ReadError::PodSpec { kind, name: name.clone(), reason })?,
            None => PodSpec::default(),
        };
        let template_hash = fnv(kix_yaml::emit::to_string(&template).as_bytes(), 0);
        Ok(Workload {
            kind,
            namespace: namespace.unwrap_or_else(|| default_namespace.to_string()),
            name,
            replicas,
            selector,
            template_labels,
            spec,
            max_surge: strategy.max_surge,
            max_unavailable: strategy.max_unavailable,
            recreate: strategy.recreate,
            partition,
            parallel,
            claims: kix_kube::volumes::Claims::of(raw),
            template_hash,
        })
    }

    /// The pod-template-hash (Deployment) or revision suffix (StatefulSet) of a template revision.
    pub fn revision_hash(&self, revision: u32) -> String {
        encode(fnv(&self.template_hash.to_le_bytes(), u64::from(revision)), 10)
    }

    /// The shared spec of one revision's pods, with the owner's selector for default spreading.
    pub fn pod_spec(&self, revision: u32) -> Arc<PodSpec> {
        let mut spec = self.spec.clone();
        // The DefaultTolerationSeconds admission plugin (plugin/pkg/admission/defaulttolerationseconds/
        // admission.go, `Admit`) adds a 300 s NoExecute toleration for each of these taints to every
        // pod without a toleration of it (one whose key is the taint's or empty and whose effect is
        // NoExecute or empty).
        for key in [TAINT_NOT_READY, TAINT_UNREACHABLE] {
            let tolerates =
                |t: &Toleration| (t.key == key || t.key.is_empty()) && t.effect.is_none_or(|e| e == Effect::NoExecute);
            if !spec.tolerations.iter().any(tolerates) {
                spec.tolerations.push(Toleration {
                    key: key.to_string(),
                    exists: true,
                    value: String::new(),
                    effect: Some(Effect::NoExecute),
                    seconds: Some(DEFAULT_TOLERATION_SECONDS),
                });
            }
        }
        let mut selector = self.selector.clone();
        if let Some(hash) = self.kind.template_hash_label() {
            selector.match_labels.insert(hash.into(), self.revision_hash(revision));
        }
        spec.default_selector = Some(selector);
        Arc::new(spec)
    }

    /// The `index`-th pod of a revision (the ordinal for StatefulSets), unbound.
    pub fn pod(&self, spec: &Arc<PodSpec>, revision: u32, index: usize) -> Pod {
        let hash = self.revision_hash(revision);
        let mut labels = self.template_labels.clone();
        let name = match self.kind {
            WorkloadKind::Deployment | WorkloadKind::Rollout => {
                let key = self.kind.template_hash_label().unwrap_or(POD_TEMPLATE_HASH);
                labels.insert(key.into(), hash.clone());
                let suffix = encode(fnv(format!("{hash}/{index}").as_bytes(), 1), 5);
                format!("{}-{hash}-{suffix}", self.name)
            }
            // An operator's pods with identities (CloudNativePG instances, Strimzi's StrimziPodSets,
            // prometheus-operator's StatefulSet): named by ordinal, with no StatefulSet labels of their own
            // beyond what the profile's labels say (the model's pods carry the template's labels).
            WorkloadKind::Custom(profile) if profile.controller == kix_kube::profile::Controller::StatefulSet => {
                format!("{}-{index}", self.name)
            }
            WorkloadKind::Custom(_) => {
                let suffix = encode(fnv(format!("{hash}/{index}").as_bytes(), 1), 5);
                format!("{}-{hash}-{suffix}", self.name)
            }
            WorkloadKind::StatefulSet => {
                let name = format!("{}-{index}", self.name);
                labels.insert(CONTROLLER_REVISION_HASH.into(), format!("{}-{hash}", self.name));
                labels.insert(STATEFULSET_POD_NAME.into(), name.clone());
                labels.insert(POD_INDEX.into(), index.to_string());
                name
            }
        };
        Pod {
            name,
            namespace: self.namespace.clone(),
            labels,
            node_name: None,
            terminating: false,
            drain_skips: false,
            spec: Arc::clone(spec),
            phase: Some(super::objects::Phase::Running),
            ready: true,
            controller: Some(super::objects::Controller {
                kind: self.kind.as_str().to_string(),
                name: self.name.clone(),
            }),
        }
    }

    /// Whether a pod belongs to this workload (namespace and selector).
    pub fn owns(&self, pod: &Pod) -> bool {
        pod.namespace == self.namespace && self.selector.matches(&pod.labels)
    }

    /// The topology keys of the template's spread constraints, or the default keys.
    pub fn topology_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.spec.spread.iter().map(|c| c.topology_key.clone()).collect();
        if keys.is_empty() {
            keys = vec![HOSTNAME.to_string(), ZONE.to_string()];
        }
        keys.sort();
        keys.dedup();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(yaml: &str) -> Workload {
        Workload::from_object(&kix_yaml::from_str(yaml).unwrap(), "default").unwrap().unwrap()
    }

    #[test]
    fn deployment_pods_carry_pod_template_hash_and_unique_names() {
        let w = workload(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c}]}\n",
        );
        let spec = w.pod_spec(0);
        let pods: Vec<Pod> = (0..3).map(|i| w.pod(&spec, 0, i)).collect();
        assert!(pods.iter().all(|p| p.labels["pod-template-hash"] == w.revision_hash(0) && w.owns(p)));
        assert_ne!(w.revision_hash(0), w.revision_hash(1));
        let mut names: Vec<_> = pods.iter().map(|p| p.name.clone()).collect();
        names.dedup();
        assert_eq!(names.len(), 3);
        assert_eq!(pods[0].namespace, "default");
    }

    #[test]
    fn statefulset_pods_are_ordinal() {
        let w = workload(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: data}\nspec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c}]}\n",
        );
        let pod = w.pod(&w.pod_spec(0), 0, 1);
        assert_eq!(pod.name, "db-1");
        assert_eq!(pod.labels["statefulset.kubernetes.io/pod-name"], "db-1");
        assert_eq!(pod.namespace, "data");
        assert_eq!(w.replicas, 1);
    }

    #[test]
    fn only_apps_workloads_are_placed() {
        let yaml = "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: old}\nspec:\n  selector: {matchLabels: {app: old}}\n  template:\n    metadata: {labels: {app: old}}\n    spec: {containers: [{name: c}]}\n";
        assert!(Workload::from_object(&kix_yaml::from_str(yaml).unwrap(), "default").unwrap().is_none());
        let huge = yaml
            .replace("extensions/v1beta1", "apps/v1")
            .replace("spec:\n  selector", "spec:\n  replicas: 20000\n  selector");
        let e = Workload::from_object(&kix_yaml::from_str(&huge).unwrap(), "default").unwrap_err();
        assert!(matches!(e, ReadError::TooManyReplicas { replicas: 20000, .. }), "{e}");
    }
}
