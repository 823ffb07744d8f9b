//! The one reader of Deployments, StatefulSets, Argo Rollouts (with their own template) and PodDisruptionBudgets.
//!
//! The compiler and the scheduler model both read a workload through
//! [`WorkloadView::read`]: the fields either needs, with their shape checked as the
//! API server checks them (`pkg/apis/apps/validation` `ValidateDeploymentSpec` /
//! `ValidateStatefulSetSpec`: replicas an int32 >= 0, a non-empty selector that
//! selects the template's labels, a pod template). Problems come back as
//! [`WorkloadError`]s (field path, reason); the caller locates and renders them.
//! Nothing is rebuilt from these views: `emit` patches the original document, so
//! fields kix does not know survive untouched. The rolling-update strategy is
//! read on demand ([`WorkloadView::strategy`]) with the Deployment controller's
//! defaults (`pkg/apis/apps/v1/defaults.go`: 25% / 25%).

use super::int_or_percent::{IntOrPercent, IntOrPercentError};
use super::kind::{ObjectKind, WorkloadKind};
use super::profile::{Profile, ProfileError};
use super::selector::{Labels, Selector, labels_from_value};
use super::value::{at, str_at};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kix_yaml::Value;
use std::fmt;

/// The largest replica count the API server accepts (`spec.replicas` is an int32).
pub const MAX_REPLICAS: u32 = i32::MAX as u32;

/// What kix reads from a Deployment or StatefulSet.
#[derive(Clone, Debug)]
pub struct WorkloadView {
    pub kind: WorkloadKind,
    pub name: String,
    /// `metadata.namespace` as written.
    pub namespace: Option<String>,
    /// `spec.replicas` as written (`None` when absent: Kubernetes defaults it to 1).
    pub manifest_replicas: Option<u32>,
    pub selector: Selector,
    /// `spec.selector` exactly as written, copied into derived objects.
    pub selector_value: Value,
    pub template_labels: Labels,
    /// Whether the pod template has a `topologySpreadConstraints` key (R11: even an empty list).
    pub explicit_spread: bool,
    /// `spec.template` as written (the pod spec is read by whoever needs it).
    pub template: Value,
    /// `spec.strategy` as written (Deployments).
    strategy: Option<Value>,
}

/// Why a workload cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadReason {
    /// `spec.replicas` is not an integer from 0 to [`MAX_REPLICAS`].
    Replicas,
    /// `spec.selector` is absent.
    NoSelector,
    /// `spec.selector` selects everything.
    EmptySelector,
    InvalidSelector(String),
    TemplateLabels(String),
    TemplateMetadata(String),
    /// `spec.template.spec` is absent or not a mapping.
    NoPodTemplate,
    /// The selector does not select the template's own labels.
    SelectorMismatch,
    /// `spec.strategy.rollingUpdate.<field>` is not an int or percentage.
    Strategy(&'static str, IntOrPercentError),
}

/// One problem of one workload: the field path and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    pub kind: WorkloadKind,
    pub name: String,
    pub path: &'static [&'static str],
    pub reason: WorkloadReason,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, name) = (self.kind, &self.name);
        match &self.reason {
            WorkloadReason::Replicas => {
                write!(f, "{kind} {name}: spec.replicas must be an integer from 0 to {MAX_REPLICAS}")
            }
            WorkloadReason::NoSelector => write!(f, "{kind} {name} has no spec.selector"),
            WorkloadReason::EmptySelector => write!(f, "{kind} {name} has an empty spec.selector"),
            WorkloadReason::InvalidSelector(why) => write!(f, "{kind} {name}: spec.selector: {why}"),
            WorkloadReason::TemplateLabels(why) => write!(f, "{kind} {name}: spec.template.metadata.labels: {why}"),
            WorkloadReason::TemplateMetadata(why) => write!(f, "{kind} {name}: spec.template.metadata: {why}"),
            WorkloadReason::NoPodTemplate => write!(f, "{kind} {name} has no pod template (spec.template.spec)"),
            WorkloadReason::SelectorMismatch => {
                write!(f, "the selector of {kind} {name} does not select its own pod template's labels")
            }
            WorkloadReason::Strategy(field, why) => {
                write!(f, "{kind} {name}: spec.strategy.rollingUpdate.{field}: {why}")
            }
        }
    }
}

impl std::error::Error for WorkloadError {}

/// A Deployment's update strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strategy {
    pub max_surge: IntOrPercent,
    pub max_unavailable: IntOrPercent,
    /// `type: Recreate`: every old pod stops before new ones start.
    pub recreate: bool,
}

impl WorkloadView {
    /// Reads an `apps` Deployment or StatefulSet (`Ok(None)` for any other object); `Err` carries
    /// every problem found.
    pub fn read(object: &Value) -> Result<Option<WorkloadView>, Vec<WorkloadError>> {
        match WorkloadKind::of(object) {
            Some(kind) => WorkloadView::read_as(object, kind).map(Some),
            None => Ok(None),
        }
    }

    /// Reads a workload of a known kind; `Err` carries every problem found.
    pub fn read_as(object: &Value, kind: WorkloadKind) -> Result<WorkloadView, Vec<WorkloadError>> {
        let name = str_at(object, &["metadata", "name"]).unwrap_or_default().to_string();
        let mut problems = Vec::new();
        let problem = |path: &'static [&'static str], reason| WorkloadError { kind, name: name.clone(), path, reason };

        let manifest_replicas = match at(object, &["spec", "replicas"]) {
            None => None,
            Some(value) => match value.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n <= MAX_REPLICAS) {
                Some(n) => Some(n),
                None => {
                    problems.push(problem(&["spec", "replicas"], WorkloadReason::Replicas));
                    None
                }
            },
        };

        let selector_value = object.get("spec").and_then(|s| s.get("selector")).cloned().unwrap_or(Value::Null);
        let selector = if selector_value.is_null() {
            problems.push(problem(&["spec"], WorkloadReason::NoSelector));
            Selector::default()
        } else {
            match Selector::from_value(&selector_value) {
                Ok(selector) if selector.is_empty() => {
                    problems.push(problem(&["spec", "selector"], WorkloadReason::EmptySelector));
                    selector
                }
                Ok(selector) => selector,
                Err(why) => {
                    problems.push(problem(&["spec", "selector"], WorkloadReason::InvalidSelector(why)));
                    Selector::default()
                }
            }
        };

        let template = object.get("spec").and_then(|s| s.get("template"));
        let template_metadata = template.and_then(|t| t.get("metadata"));
        let template_labels = match template_metadata.map(kix_yaml::from_value::<ObjectMeta>) {
            None | Some(Ok(_)) => match labels_from_value(template_metadata.and_then(|m| m.get("labels"))) {
                Ok(labels) => labels,
                Err(why) => {
                    problems.push(problem(
                        &["spec", "template", "metadata", "labels"],
                        WorkloadReason::TemplateLabels(why),
                    ));
                    Labels::new()
                }
            },
            Some(Err(why)) => {
                problems.push(problem(
                    &["spec", "template", "metadata"],
                    WorkloadReason::TemplateMetadata(why.to_string()),
                ));
                Labels::new()
            }
        };
        let pod_spec = template.and_then(|t| t.get("spec"));
        if !pod_spec.is_some_and(Value::is_mapping) {
            problems.push(problem(&["spec", "template"], WorkloadReason::NoPodTemplate));
        }
        // `topologySpreadConstraints: null` (as templating tools render an unset value) is absent to the API server.
        let explicit_spread = pod_spec
            .and_then(|spec| spec.get("topologySpreadConstraints"))
            .is_some_and(|constraints| !constraints.is_null());

        if problems.is_empty() && !selector.matches(&template_labels) {
            problems.push(problem(&["spec", "selector"], WorkloadReason::SelectorMismatch));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(WorkloadView {
            kind,
            namespace: str_at(object, &["metadata", "namespace"]).map(str::to_string),
            name,
            manifest_replicas,
            selector,
            selector_value,
            template_labels,
            explicit_spread,
            template: template.cloned().unwrap_or(Value::Null),
            strategy: at(object, &["spec", "strategy"]).cloned(),
        })
    }

    /// A Deployment's `spec.strategy`, defaults filled in (`RollingUpdate`, 25% / 25%). A Rollout's
    /// canary steps surge and retire pods as `spec.strategy.canary.maxSurge` and `maxUnavailable` say
    /// (25% / 25% by default: argoproj/argo-rollouts `utils/defaults/defaults.go`); blueGreen brings up
    /// the whole new revision before the old one goes (surge 100%, unavailable 0).
    pub fn strategy(&self) -> Result<Strategy, WorkloadError> {
        let strategy = self.strategy.as_ref();
        if self.kind == WorkloadKind::Rollout && strategy.and_then(|s| at(s, &["blueGreen"])).is_some() {
            let (max_surge, max_unavailable) = (IntOrPercent::Percent(100), IntOrPercent::Int(0));
            return Ok(Strategy { max_surge, max_unavailable, recreate: false });
        }
        let rolling_key = if self.kind == WorkloadKind::Rollout { "canary" } else { "rollingUpdate" };
        let rolling = strategy.and_then(|s| at(s, &[rolling_key]));
        let field = |field: &'static str| match rolling.and_then(|r| at(r, &[field])) {
            None => Ok(IntOrPercent::Percent(25)),
            Some(value) => IntOrPercent::read(value).map_err(|why| WorkloadError {
                kind: self.kind,
                name: self.name.clone(),
                path: match (rolling_key, field) {
                    ("canary", "maxSurge") => &["spec", "strategy", "canary", "maxSurge"],
                    ("canary", _) => &["spec", "strategy", "canary", "maxUnavailable"],
                    (_, "maxSurge") => &["spec", "strategy", "rollingUpdate", "maxSurge"],
                    _ => &["spec", "strategy", "rollingUpdate", "maxUnavailable"],
                },
                reason: WorkloadReason::Strategy(field, why),
            }),
        };
        Ok(Strategy {
            max_surge: field("maxSurge")?,
            max_unavailable: field("maxUnavailable")?,
            recreate: strategy.and_then(|s| str_at(s, &["type"])) == Some("Recreate"),
        })
    }
}

/// Reads a custom resource through its profile ([`Profile::workload_object`]) as a
/// [`WorkloadKind::Custom`]: replicas from the profile's count field, the pod labels as selector and
/// template labels, the template's spec with the constraints at the profile's spread field.
pub fn read_custom(object: &Value, profile: &'static Profile) -> Result<WorkloadView, ProfileError> {
    let shaped = profile.workload_object(object)?;
    WorkloadView::read_as(&shaped, WorkloadKind::Custom(profile)).map_err(|problems| ProfileError {
        path: Vec::new(),
        reason: problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
    })
}

/// A Rollout that takes its pod template from a Deployment (`spec.workloadRef`, argoproj/argo-rollouts
/// `pkg/apis/rollouts/v1alpha1/types.go` `ObjectRef`; the controller runs the referenced Deployment's
/// `spec.template`, `rollout/templateref.go`), resolved among `objects`: the Rollout with that template
/// (and the Deployment's selector where the Rollout names none), to read as a [`WorkloadKind::Rollout`],
/// and the index of the Deployment among `objects`. `None` for any other object, or when no `apps`
/// Deployment of that name is in the Rollout's namespace.
pub fn with_referenced_template<'a>(
    object: &Value,
    objects: impl IntoIterator<Item = &'a Value>,
) -> Option<(Value, usize)> {
    if WorkloadKind::detect(str_at(object, &["apiVersion"]).unwrap_or_default(), str_at(object, &["kind"])?)
        != Some(WorkloadKind::Rollout)
        || at(object, &["spec", "template"]).is_some()
    {
        return None;
    }
    let reference = at(object, &["spec", "workloadRef"])?;
    let name = str_at(reference, &["name"])?;
    let namespace = str_at(object, &["metadata", "namespace"]);
    let (index, deployment) = objects.into_iter().enumerate().find(|(_, other)| {
        WorkloadKind::of(other) == Some(WorkloadKind::Deployment)
            && str_at(reference, &["kind"]) == Some("Deployment")
            && str_at(other, &["metadata", "name"]) == Some(name)
            && str_at(other, &["metadata", "namespace"]) == namespace
    })?;
    let mut combined = object.clone();
    let spec = combined.get_mut("spec")?.as_mapping_mut()?;
    spec.insert("template".into(), at(deployment, &["spec", "template"])?.clone());
    if at(object, &["spec", "selector"]).is_none() {
        spec.insert("selector".into(), at(deployment, &["spec", "selector"])?.clone());
    }
    Some((combined, index))
}

/// What kix reads from a `policy` PodDisruptionBudget.
#[derive(Clone, Debug, Hash)]
pub struct PdbView {
    pub name: String,
    /// `metadata.namespace` as written.
    pub namespace: Option<String>,
    /// `None` when the PDB has no selector: it selects no pods.
    pub selector: Option<Selector>,
    pub min_available: Option<IntOrPercent>,
    pub max_unavailable: Option<IntOrPercent>,
}

/// A PodDisruptionBudget's selector that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PodDisruptionBudget {name}: spec.selector: {why}")]
pub struct PdbError {
    pub name: String,
    pub why: String,
}

impl PdbError {
    /// Where the problem is.
    pub const PATH: &'static [&'static str] = &["spec", "selector"];
}

impl PdbView {
    /// Whether an object is a `policy` PodDisruptionBudget.
    pub fn is_pdb(object: &Value) -> bool {
        ObjectKind::of(object) == Some(ObjectKind::PodDisruptionBudget)
    }

    /// Reads a budget; minAvailable and maxUnavailable as the disruption controller reads them
    /// (a value it cannot read is absent here; the API server's checks are [`super::validate`]'s).
    pub fn read(object: &Value) -> Result<PdbView, PdbError> {
        let name = str_at(object, &["metadata", "name"]).unwrap_or_default().to_string();
        let selector = match at(object, &["spec", "selector"]) {
            None => None,
            Some(value) => Some(Selector::from_value(value).map_err(|why| PdbError { name: name.clone(), why })?),
        };
        let budget = |field: &str| at(object, &["spec", field]).and_then(|v| IntOrPercent::read(v).ok());
        Ok(PdbView {
            namespace: str_at(object, &["metadata", "namespace"]).map(str::to_string),
            min_available: budget("minAvailable"),
            max_unavailable: budget("maxUnavailable"),
            name,
            selector,
        })
    }

    /// Whether the budget covers pods with these labels (policy/v1: an empty selector covers every pod).
    pub fn selects(&self, labels: &Labels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Result<Option<WorkloadView>, Vec<String>> {
        WorkloadView::read(&kix_yaml::from_str(yaml).unwrap()).map_err(|e| e.iter().map(ToString::to_string).collect())
    }

    const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  \
                       replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    \
                       spec: {containers: [{name: c}]}\n";

    #[test]
    fn reads_an_apps_deployment() {
        let w = read(WEB).unwrap().unwrap();
        assert_eq!((w.kind, w.name.as_str(), w.namespace.as_deref()), (WorkloadKind::Deployment, "web", Some("shop")));
        assert_eq!(w.manifest_replicas, Some(3));
        assert!(!w.explicit_spread);
        let strategy = w.strategy().unwrap();
        assert_eq!((strategy.max_surge, strategy.recreate), (IntOrPercent::Percent(25), false));
    }

    #[test]
    fn other_groups_and_kinds_are_not_workloads() {
        assert!(read(&WEB.replace("apps/v1", "extensions/v1beta1")).unwrap().is_none());
        assert!(read(&WEB.replace("kind: Deployment", "kind: ReplicaSet")).unwrap().is_none());
    }

    #[test]
    fn problems_name_the_workload_and_field() {
        let cases = [
            ("replicas: 3", "replicas: -1", "Deployment web: spec.replicas must be an integer from 0 to 2147483647"),
            ("selector: {matchLabels: {app: web}}", "selector: {}", "Deployment web has an empty spec.selector"),
            ("  selector: {matchLabels: {app: web}}\n", "", "Deployment web has no spec.selector"),
            ("{labels: {app: web}}", "{labels: {app: api}}", "the selector of Deployment web does not select"),
            ("spec: {containers: [{name: c}]}", "other: 1", "Deployment web has no pod template"),
        ];
        for (from, to, says) in cases {
            let problems = read(&WEB.replace(from, to)).unwrap_err();
            assert!(problems.iter().any(|p| p.starts_with(says)), "{to}: {problems:?}");
        }
    }

    #[test]
    fn strategy_problems_are_read_on_demand() {
        let w = read(&WEB.replace("replicas: 3", "strategy: {rollingUpdate: {maxSurge: x}}")).unwrap().unwrap();
        let e = w.strategy().unwrap_err();
        assert_eq!(e.path.last(), Some(&"maxSurge"));
        assert!(e.to_string().ends_with("maxSurge: `x` must be an integer or percentage (e.g '5%')"), "{e}");
    }

    #[test]
    fn a_workload_ref_rollout_runs_the_deployments_template() {
        let deployment: Value = kix_yaml::from_str(&WEB.replace("replicas: 3", "replicas: 0")).unwrap();
        let rollout = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r, namespace: shop}\n\
                       spec:\n  replicas: 5\n  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n";
        let rollout: Value = kix_yaml::from_str(rollout).unwrap();
        assert_eq!(WorkloadKind::of(&rollout), None);
        let (combined, index) = with_referenced_template(&rollout, [&rollout, &deployment]).unwrap();
        assert_eq!(index, 1);
        let view = WorkloadView::read_as(&combined, WorkloadKind::Rollout).unwrap();
        assert_eq!((view.name.as_str(), view.manifest_replicas), ("r", Some(5)));
        assert!(view.selector.matches(&view.template_labels));
        let elsewhere = kix_yaml::from_str(&WEB.replace("namespace: shop", "namespace: other")).unwrap();
        assert!(with_referenced_template(&rollout, [&elsewhere]).is_none());
        assert!(with_referenced_template(&deployment, [&deployment]).is_none());
    }

    #[test]
    fn a_rollouts_strategy_is_its_canary_or_blue_green() {
        let rollout = WEB.replace("apps/v1", "argoproj.io/v1alpha1").replace("kind: Deployment", "kind: Rollout");
        let strategy = |extra: &str| {
            read(&rollout.replace("replicas: 3", &format!("replicas: 3\n  strategy: {extra}")))
                .unwrap()
                .unwrap()
                .strategy()
                .unwrap()
        };
        let canary = strategy("{canary: {maxSurge: 1, maxUnavailable: 0}}");
        assert_eq!((canary.max_surge, canary.max_unavailable), (IntOrPercent::Int(1), IntOrPercent::Int(0)));
        assert_eq!(strategy("{canary: {}}").max_surge, IntOrPercent::Percent(25));
        let blue_green = strategy("{blueGreen: {activeService: a}}");
        assert_eq!(
            (blue_green.max_surge, blue_green.max_unavailable),
            (IntOrPercent::Percent(100), IntOrPercent::Int(0))
        );
    }

    #[test]
    fn budgets_are_read_by_group() {
        let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  \
                   minAvailable: 50%\n  selector: {matchLabels: {app: web}}\n";
        let value: Value = kix_yaml::from_str(pdb).unwrap();
        assert!(PdbView::is_pdb(&value));
        let view = PdbView::read(&value).unwrap();
        assert_eq!(view.min_available, Some(IntOrPercent::Percent(50)));
        assert!(view.selects(&Labels::from([("app".to_string(), "web".to_string())])));
        assert!(!PdbView::is_pdb(&kix_yaml::from_str(&pdb.replace("policy/v1", "v1")).unwrap()));
    }
}
