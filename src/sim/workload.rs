//! Deployments and StatefulSets as the model places them: pods stamped from the template.
//!
//! The controllers' labels matter to spreading (`matchLabelKeys:
//! [pod-template-hash]`), so pods get them as the real controllers set them:
//! Deployment pods carry `pod-template-hash` (from a stable hash of the
//! template and revision), StatefulSet pods `controller-revision-hash`,
//! `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`.
//! The owning ReplicaSet's (or StatefulSet's) selector becomes the pod's
//! default-spread selector, as `helper.DefaultSelector` finds it upstream.

use super::objects::{Effect, Pod, PodSpec, Toleration, at, parse_pod_spec, str_at};
use crate::selector::{Labels, Selector, labels_from_value};
use serde_yaml::Value;
use std::sync::Arc;

/// The controller kinds the model places.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Kind {
    Deployment,
    StatefulSet,
}

/// An int-or-percent field such as `maxSurge`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntOrPercent {
    Int(i64),
    Percent(i64),
}

impl IntOrPercent {
    fn parse(value: Option<&Value>, default: IntOrPercent) -> Result<IntOrPercent, String> {
        match value {
            None => Ok(default),
            Some(v) => {
                if let Some(n) = v.as_i64() {
                    return Ok(IntOrPercent::Int(n));
                }
                let text = v.as_str().ok_or("must be an integer or a percentage")?;
                let n = text.strip_suffix('%').and_then(|n| n.parse::<i64>().ok());
                n.map(IntOrPercent::Percent).ok_or_else(|| format!("`{text}` is not an integer or a percentage"))
            }
        }
    }

    /// Whether the value is zero however it is written (`0` or `0%`).
    pub fn is_zero(&self) -> bool {
        matches!(self, IntOrPercent::Int(0) | IntOrPercent::Percent(0))
    }

    /// The value against a total, rounding a percentage up or down.
    pub fn resolve(&self, total: i64, round_up: bool) -> i64 {
        match *self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) if round_up => (p * total + 99) / 100,
            IntOrPercent::Percent(p) => p * total / 100,
        }
    }
}

/// A Deployment or StatefulSet.
#[derive(Clone, Debug)]
pub struct Workload {
    pub kind: Kind,
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

/// The most replicas of one workload kix places: far above real workloads, low enough that a typo
/// such as `replicas: 2000000000` is refused instead of simulated for hours.
pub const MAX_SIMULATED_REPLICAS: i64 = 10_000;

impl Workload {
    /// Reads a Deployment or StatefulSet; Ok(None) for any other kind.
    pub fn from_object(object: &Value, default_namespace: &str) -> Result<Option<Workload>, String> {
        let kind = match str_at(object, &["kind"]) {
            Some("Deployment") => Kind::Deployment,
            Some("StatefulSet") => Kind::StatefulSet,
            _ => return Ok(None),
        };
        let name = str_at(object, &["metadata", "name"]).ok_or(format!("a {kind:?} has no metadata.name"))?.to_string();
        let ctx = |e: String| format!("{kind:?} `{name}`: {e}");
        let namespace = str_at(object, &["metadata", "namespace"]).unwrap_or(default_namespace).to_string();
        let replicas = match at(object, &["spec", "replicas"]) {
            None => 1,
            Some(v) => v.as_i64().filter(|n| *n >= 0).ok_or_else(|| ctx("spec.replicas must be a count".into()))?,
        };
        if replicas > MAX_SIMULATED_REPLICAS {
            return Err(ctx(format!(
                "spec.replicas is {replicas}; kix simulates at most {MAX_SIMULATED_REPLICAS} replicas per workload"
            )));
        }
        let selector = match at(object, &["spec", "selector"]) {
            Some(s) => Selector::from_value(s).map_err(|e| ctx(format!("spec.selector: {e}")))?,
            None => return Err(ctx("spec.selector is missing".into())),
        };
        let template = at(object, &["spec", "template"]).ok_or_else(|| ctx("spec.template is missing".into()))?;
        let template_labels = labels_from_value(at(template, &["metadata", "labels"])).map_err(ctx)?;
        let spec = match at(template, &["spec"]) {
            Some(s) => parse_pod_spec(s).map_err(ctx)?,
            None => PodSpec::default(),
        };
        let rolling = at(object, &["spec", "strategy", "rollingUpdate"]);
        let field = |f: &str| rolling.and_then(|r| at(r, &[f]));
        let max_surge = IntOrPercent::parse(field("maxSurge"), IntOrPercent::Percent(25))
            .map_err(|e| ctx(format!("maxSurge {e}")))?;
        let max_unavailable = IntOrPercent::parse(field("maxUnavailable"), IntOrPercent::Percent(25))
            .map_err(|e| ctx(format!("maxUnavailable {e}")))?;
        let recreate = str_at(object, &["spec", "strategy", "type"]) == Some("Recreate");
        let template_hash = fnv(serde_yaml::to_string(template).unwrap_or_default().as_bytes(), 0);
        Ok(Some(Workload {
            kind,
            namespace,
            name,
            replicas,
            selector,
            template_labels,
            spec,
            max_surge,
            max_unavailable,
            recreate,
            template_hash,
        }))
    }

    /// The pod-template-hash (Deployment) or revision suffix (StatefulSet) of a template revision.
    pub fn revision_hash(&self, revision: u32) -> String {
        encode(fnv(&self.template_hash.to_le_bytes(), u64::from(revision)), 10)
    }

    /// The shared spec of one revision's pods, with the owner's selector for default spreading.
    pub fn pod_spec(&self, revision: u32) -> Arc<PodSpec> {
        let mut spec = self.spec.clone();
        // The DefaultTolerationSeconds admission plugin adds these to every pod the API server admits.
        for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
            if !spec.tolerations.iter().any(|t| t.key == key && t.effect == Some(Effect::NoExecute)) {
                spec.tolerations.push(Toleration {
                    key: key.to_string(),
                    exists: true,
                    value: String::new(),
                    effect: Some(Effect::NoExecute),
                });
            }
        }
        let mut selector = self.selector.clone();
        if self.kind == Kind::Deployment {
            selector.match_labels.insert("pod-template-hash".into(), self.revision_hash(revision));
        }
        spec.default_selector = Some(selector);
        Arc::new(spec)
    }

    /// The `index`-th pod of a revision (the ordinal for StatefulSets), unbound.
    pub fn pod(&self, spec: &Arc<PodSpec>, revision: u32, index: usize) -> Pod {
        let hash = self.revision_hash(revision);
        let mut labels = self.template_labels.clone();
        let name = match self.kind {
            Kind::Deployment => {
                labels.insert("pod-template-hash".into(), hash.clone());
                let suffix = encode(fnv(format!("{hash}/{index}").as_bytes(), 1), 5);
                format!("{}-{hash}-{suffix}", self.name)
            }
            Kind::StatefulSet => {
                let name = format!("{}-{index}", self.name);
                labels.insert("controller-revision-hash".into(), format!("{}-{hash}", self.name));
                labels.insert("statefulset.kubernetes.io/pod-name".into(), name.clone());
                labels.insert("apps.kubernetes.io/pod-index".into(), index.to_string());
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
            keys = vec![super::objects::HOSTNAME_KEY.to_string(), super::objects::ZONE_KEY.to_string()];
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
        Workload::from_object(&serde_yaml::from_str(yaml).unwrap(), "default").unwrap().unwrap()
    }

    #[test]
    fn deployment_pods_carry_pod_template_hash_and_unique_names() {
        let w = workload(
            "kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c}]}\n",
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
            "kind: StatefulSet\nmetadata: {name: db, namespace: data}\nspec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n",
        );
        let pod = w.pod(&w.pod_spec(0), 0, 1);
        assert_eq!(pod.name, "db-1");
        assert_eq!(pod.labels["statefulset.kubernetes.io/pod-name"], "db-1");
        assert_eq!(pod.namespace, "data");
        assert_eq!(w.replicas, 1);
    }

    #[test]
    fn percentages_round_as_the_deployment_controller() {
        assert_eq!(IntOrPercent::Percent(25).resolve(3, true), 1);
        assert_eq!(IntOrPercent::Percent(25).resolve(3, false), 0);
        assert_eq!(IntOrPercent::Int(2).resolve(3, false), 2);
    }
}
