//! Profiles of custom resources that run pods (issue 18): where an operator reads a resource's pod
//! count and spread constraints, how it labels the pods, whether it makes its own
//! PodDisruptionBudget, and which controller's semantics its pods follow.
//!
//! A profile turns a custom resource into the shape of a Deployment or StatefulSet that the one
//! workload reader ([`super::workload::WorkloadView`]) reads: `spec.replicas` from the profile's
//! count field, `spec.selector` from the pod labels, `spec.template` from the profile's pod template
//! (or an empty pod spec) carrying the pod labels and the constraints at the profile's spread field
//! ([`Profile::workload_object`]). That shape is only read, never emitted: the compiler patches the
//! resource's own document at the profile's fields.
//!
//! Profiles are interned ([`intern`]): a [`WorkloadKind::Custom`](super::kind::WorkloadKind) holds a
//! `&'static Profile`, so workload kinds stay `Copy` and compare by value. A run reads a handful of
//! kinds (the built-in ones and those its packages declare); each distinct profile is allocated once
//! for the life of the process.

use super::selector::{Labels, labels_from_value};
use super::value::{at, str_at};
use kix_yaml::{Mapping, Value};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// The largest pod count kix reads: operators' count fields are int32, as `spec.replicas` is
/// ([`super::workload`]'s `MAX_REPLICAS`, which this file cannot import: the workload reader imports it).
const MAX_REPLICAS: u32 = i32::MAX as u32;

/// A dotted field path (`spec.template.pod.topologySpreadConstraints`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath(pub Vec<String>);

impl FieldPath {
    /// Parses a dotted path of mapping keys under `spec` (no list indices: kix writes mappings only).
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let segments: Vec<String> = text.split('.').map(str::to_string).collect();
        if segments.iter().any(|s| s.is_empty() || s.contains(['[', ']', ' '])) {
            return Err(format!("`{text}` is not a dotted path of field names (e.g. `spec.replicas`)"));
        }
        if segments.len() < 2 || segments[0] != "spec" {
            return Err(format!("`{text}` is not under `spec` (e.g. `spec.replicas`)"));
        }
        Ok(FieldPath(segments))
    }

    /// The path's keys, as [`at`] takes them.
    pub fn keys(&self) -> Vec<&str> {
        self.0.iter().map(String::as_str).collect()
    }

    /// The value at the path, if present and not null.
    pub fn get<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        at(object, &self.keys())
    }

    /// Sets the value at the path, creating the mappings on the way. A key present keeps its place; a
    /// new last key goes first when `first` (as kix puts `spec.replicas` first), else last.
    pub fn set(&self, object: &mut Value, value: Value, first: bool) {
        let Some((last, parents)) = self.0.split_last() else { return };
        let mut current = object;
        for key in parents {
            let Some(map) = current.as_mapping_mut() else { return };
            if !map.get(key.as_str()).is_some_and(Value::is_mapping) {
                map.insert(key.as_str().into(), Value::Mapping(Mapping::new()));
            }
            current = map.get_mut(key.as_str()).expect("inserted above");
        }
        let Some(map) = current.as_mapping_mut() else { return };
        if map.contains_key(last.as_str()) || !first {
            map.insert(last.as_str().into(), value);
        } else {
            let old = std::mem::take(map);
            map.insert(last.as_str().into(), value);
            map.extend(old);
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// Whether kix derives a PodDisruptionBudget for the pods or the operator makes its own.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Budget {
    /// kix derives one over the pod labels (R10), unless a shipped budget selects them.
    Derive,
    /// The operator makes its own over these labels (each value as in [`Profile::pod_labels`]): kix
    /// derives none, and verify simulates one that allows one pod down at a time.
    Operator { labels: Vec<(String, String)> },
    /// As `Operator`, unless the boolean at this path is `false` (CloudNativePG's `spec.enablePDB`):
    /// then kix derives one.
    OperatorUnlessFalse { labels: Vec<(String, String)>, switch: FieldPath },
}

/// The semantics of the controller that runs the pods, for verify: how lost pods are replaced and how
/// an update rolls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Controller {
    /// Replacements at once anywhere; a rolling update surges and retires pods.
    Deployment,
    /// Pods with identities: one on a lost node stays until it is deleted; updates go one pod at a time.
    StatefulSet,
}

/// How an operator runs the pods of one kind of custom resource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Profile {
    /// API group and kind of the resource.
    pub group: String,
    pub kind: String,
    /// The pod count's field; `None`: the count is always `replicas_default` (kix writes none).
    pub replicas: Option<FieldPath>,
    /// The pod count when that field is absent.
    pub replicas_default: u32,
    /// The labels the operator gives every pod (the selector of derived spread and budgets), by key. A
    /// value may hold `{name}` (the resource's name), or be `{label:KEY}` (the resource's own label KEY).
    pub pod_labels: Vec<(String, String)>,
    /// A mapping of labels the operator also copies onto the pods (not selected on), e.g.
    /// prometheus-operator's `spec.podMetadata.labels`.
    pub extra_labels: Option<FieldPath>,
    /// A pod template (`metadata`, `spec`) whose spec verify simulates.
    pub pod_template: Option<FieldPath>,
    /// Where the operator takes topology spread constraints; `None`: kix cannot place the pods.
    pub spread: Option<FieldPath>,
    pub budget: Budget,
    pub controller: Controller,
    /// Whether kix knows the kind from its operator's source (`operators`) rather than a package's
    /// `[kinds]`.
    pub builtin: bool,
}

/// Why a custom resource cannot be read through its profile: the field and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    pub path: Vec<String>,
    pub reason: String,
}

impl Profile {
    /// `group/Kind`, as kix.toml's `[kinds]` spells it.
    pub fn key(&self) -> String {
        format!("{}/{}", self.group, self.kind)
    }

    /// Whether the profile is for this API group and kind.
    pub fn is_for(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }

    /// The resource's pod labels, `{name}` and `{label:KEY}` filled in.
    pub fn pod_labels_of(&self, object: &Value) -> Result<Labels, ProfileError> {
        fill(&self.pod_labels, object)
    }

    /// Whether the operator makes the resource's budget (kix derives none).
    pub fn operator_budget(&self, object: &Value) -> bool {
        match &self.budget {
            Budget::Derive => false,
            Budget::Operator { .. } => true,
            Budget::OperatorUnlessFalse { switch, .. } => switch.get(object).and_then(Value::as_bool) != Some(false),
        }
    }

    /// The labels the operator's own budget selects, when it makes one.
    pub fn operator_budget_labels(&self, object: &Value) -> Option<Labels> {
        match &self.budget {
            Budget::Operator { labels } | Budget::OperatorUnlessFalse { labels, .. } => {
                self.operator_budget(object).then(|| fill(labels, object).ok()).flatten()
            }
            Budget::Derive => None,
        }
    }

    /// The resource as the workload reader reads a Deployment or StatefulSet (module documentation).
    pub fn workload_object(&self, object: &Value) -> Result<Value, ProfileError> {
        let error = |path: &FieldPath, reason: String| ProfileError { path: path.0.clone(), reason };
        let replicas = match self.replicas.as_ref().and_then(|path| Some((path, path.get(object)?))) {
            None => self.replicas_default,
            Some((path, value)) => value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n <= MAX_REPLICAS)
                .ok_or_else(|| error(path, format!("{path} must be an integer from 0 to {MAX_REPLICAS}")))?,
        };
        let pod_labels = self.pod_labels_of(object)?;
        let template = self.pod_template.as_ref().and_then(|path| path.get(object).map(|t| (path, t)));
        let mut labels = Labels::new();
        if let Some(path) = &self.extra_labels {
            labels.extend(labels_from_value(path.get(object)).map_err(|why| error(path, format!("{path}: {why}")))?);
        }
        if let Some((path, template)) = template {
            labels.extend(
                labels_from_value(at(template, &["metadata", "labels"]))
                    .map_err(|why| error(path, format!("{path}.metadata.labels: {why}")))?,
            );
        }
        labels.extend(pod_labels.clone());
        let mut pod_spec = match template.and_then(|(_, t)| at(t, &["spec"])) {
            Some(Value::Mapping(spec)) => spec.clone(),
            Some(_) => {
                let path = self.pod_template.as_ref().expect("a template was read");
                return Err(error(path, format!("{path}.spec must be a pod spec (a mapping)")));
            }
            None => Mapping::new(),
        };
        pod_spec.remove("topologySpreadConstraints");
        if let Some(constraints) = self.spread.as_ref().and_then(|path| path.get(object)) {
            pod_spec.insert("topologySpreadConstraints".into(), constraints.clone());
        }
        let to_mapping = |labels: &Labels| {
            Value::Mapping(labels.iter().map(|(k, v)| (k.as_str().into(), v.as_str().into())).collect())
        };
        let mut metadata = Mapping::new();
        metadata.insert("name".into(), str_at(object, &["metadata", "name"]).unwrap_or_default().into());
        if let Some(namespace) = str_at(object, &["metadata", "namespace"]) {
            metadata.insert("namespace".into(), namespace.into());
        }
        let mut selector = Mapping::new();
        selector.insert("matchLabels".into(), to_mapping(&pod_labels));
        let mut template_metadata = Mapping::new();
        template_metadata.insert("labels".into(), to_mapping(&labels));
        let mut template = Mapping::new();
        template.insert("metadata".into(), Value::Mapping(template_metadata));
        template.insert("spec".into(), Value::Mapping(pod_spec));
        let mut spec = Mapping::new();
        spec.insert("replicas".into(), replicas.into());
        spec.insert("selector".into(), Value::Mapping(selector));
        spec.insert("template".into(), Value::Mapping(template));
        let mut shaped = Mapping::new();
        shaped.insert("apiVersion".into(), str_at(object, &["apiVersion"]).unwrap_or_default().into());
        shaped.insert("kind".into(), self.kind.as_str().into());
        shaped.insert("metadata".into(), Value::Mapping(metadata));
        shaped.insert("spec".into(), Value::Mapping(spec));
        Ok(Value::Mapping(shaped))
    }
}

/// Label values with `{name}` and `{label:KEY}` filled in from the resource.
fn fill(labels: &[(String, String)], object: &Value) -> Result<Labels, ProfileError> {
    let name = str_at(object, &["metadata", "name"]).unwrap_or_default();
    labels
        .iter()
        .map(|(key, value)| {
            let filled = match value.strip_prefix("{label:").and_then(|v| v.strip_suffix('}')) {
                Some(label) => {
                    str_at(object, &["metadata", "labels", label]).map(str::to_string).ok_or_else(|| ProfileError {
                        path: vec!["metadata".into(), "labels".into()],
                        reason: format!("it has no label `{label}`, which its operator puts on its pods"),
                    })?
                }
                None => value.replace("{name}", name),
            };
            Ok((key.clone(), filled))
        })
        .collect()
}

/// The one allocation of each distinct profile (module documentation).
pub fn intern(profile: Profile) -> &'static Profile {
    static PROFILES: OnceLock<Mutex<BTreeSet<&'static Profile>>> = OnceLock::new();
    let mut profiles = PROFILES.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(existing) = profiles.get(&profile) {
        return existing;
    }
    let leaked: &'static Profile = Box::leak(Box::new(profile));
    profiles.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile {
            group: "example.com".into(),
            kind: "Database".into(),
            replicas: Some(FieldPath::parse("spec.members").unwrap()),
            replicas_default: 1,
            pod_labels: vec![("example.com/cluster".into(), "{name}".into()), ("tier".into(), "{label:tier}".into())],
            extra_labels: None,
            pod_template: Some(FieldPath::parse("spec.podTemplate").unwrap()),
            spread: Some(FieldPath::parse("spec.spread").unwrap()),
            budget: Budget::Derive,
            controller: Controller::StatefulSet,
            builtin: false,
        }
    }

    #[test]
    fn paths_are_dotted_field_names_under_spec() {
        assert_eq!(FieldPath::parse("spec.a.b").unwrap().to_string(), "spec.a.b");
        for bad in ["spec", "status.replicas", "spec..a", "spec.a[0]", ""] {
            assert!(FieldPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_resource_reads_as_a_workload_shape() {
        let db: Value = kix_yaml::from_str(
            "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: main, namespace: shop, labels: {tier: gold}}\n\
             spec:\n  members: 3\n  spread: [{maxSkew: 1}]\n  podTemplate:\n    metadata: {labels: {extra: x}}\n    \
             spec: {nodeSelector: {a: b}, topologySpreadConstraints: [{ignored: true}]}\n",
        )
        .unwrap();
        let shaped = profile().workload_object(&db).unwrap();
        let expected = "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: main\n  namespace: shop\nspec:\n  \
                        replicas: 3\n  selector:\n    matchLabels:\n      example.com/cluster: main\n      tier: gold\n  \
                        template:\n    metadata:\n      labels:\n        example.com/cluster: main\n        extra: x\n        \
                        tier: gold\n    spec:\n      nodeSelector:\n        a: b\n      topologySpreadConstraints:\n      \
                        - maxSkew: 1\n";
        assert_eq!(kix_yaml::emit::to_string(&shaped), expected);
    }

    #[test]
    fn problems_name_the_field() {
        let read = |yaml: &str| profile().workload_object(&kix_yaml::from_str(yaml).unwrap()).unwrap_err();
        let e = read("metadata: {name: m, labels: {tier: t}}\nspec: {members: many}\n");
        assert_eq!(
            (e.path.join(".").as_str(), e.reason.as_str()),
            ("spec.members", "spec.members must be an integer from 0 to 2147483647")
        );
        let e = read("metadata: {name: m}\nspec: {members: 1}\n");
        assert_eq!(e.reason, "it has no label `tier`, which its operator puts on its pods");
    }

    #[test]
    fn set_creates_the_way_and_keeps_places() {
        let mut object: Value = kix_yaml::from_str("spec: {a: 1}\n").unwrap();
        FieldPath::parse("spec.members").unwrap().set(&mut object, 3.into(), true);
        FieldPath::parse("spec.template.pod.spread").unwrap().set(&mut object, 1.into(), false);
        FieldPath::parse("spec.a").unwrap().set(&mut object, 2.into(), true);
        let text = kix_yaml::emit::to_string(&object);
        assert_eq!(text, "spec:\n  members: 3\n  a: 2\n  template:\n    pod:\n      spread: 1\n");
    }

    #[test]
    fn interned_profiles_are_shared() {
        assert!(std::ptr::eq(intern(profile()), intern(profile())));
        let mut other = profile();
        other.kind = "Other".into();
        assert!(!std::ptr::eq(intern(profile()), intern(other)));
    }
}
