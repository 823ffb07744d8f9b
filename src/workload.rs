//! Typed, read-only views of the users' Kubernetes objects that kix reasons about.
//!
//! kix reads a Deployment or StatefulSet through [`WorkloadView`] (the fields
//! it needs, with their shape checked) and a shipped PodDisruptionBudget
//! through [`PdbView`], but never rebuilds the object from these views: `emit`
//! patches the original `serde_yaml::Value`, so fields kix does not know (or a
//! newer API adds) survive untouched.

use crate::diag::{Code, Diagnostic};
use crate::load::yaml::Document;
use crate::selector::{Labels, Selector, labels_from_value};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_yaml::Value;

/// The largest replica count the API server accepts (`spec.replicas` is an int32).
pub const MAX_REPLICAS: u32 = i32::MAX as u32;

/// The two controllers kix derives placement for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
}

impl WorkloadKind {
    pub fn of(document: &Document) -> Option<WorkloadKind> {
        match (document.group(), document.kind()) {
            ("apps", "Deployment") => Some(WorkloadKind::Deployment),
            ("apps", "StatefulSet") => Some(WorkloadKind::StatefulSet),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
        }
    }
}

/// What kix reads from a Deployment or StatefulSet.
#[derive(Clone, Debug)]
pub struct WorkloadView {
    pub kind: WorkloadKind,
    pub name: String,
    /// `spec.replicas` as written (`None` when absent: Kubernetes defaults it to 1).
    pub manifest_replicas: Option<u32>,
    pub selector: Selector,
    /// `spec.selector` exactly as written, copied into derived objects.
    pub selector_value: Value,
    pub template_labels: Labels,
    /// Whether the pod template has a `topologySpreadConstraints` key (R11: even an empty list).
    pub explicit_spread: bool,
}

impl WorkloadView {
    /// Reads a workload; `Err` carries every shape problem found, located in the document.
    pub fn read(document: &Document, kind: WorkloadKind) -> Result<WorkloadView, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let name = document.name().to_string();
        let spec = document.value.get("spec");
        let problem =
            |code: Code, path: &[&str], message: String| Diagnostic::new(code, message).at(document.locate(path));

        let manifest_replicas = match spec.and_then(|s| s.get("replicas")) {
            None | Some(Value::Null) => None,
            Some(value) => match value.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n <= MAX_REPLICAS) {
                Some(n) => Some(n),
                None => {
                    problems.push(problem(
                        Code::InvalidWorkload,
                        &["spec", "replicas"],
                        format!("{} {name}: spec.replicas must be an integer from 0 to {MAX_REPLICAS}", kind.as_str()),
                    ));
                    None
                }
            },
        };

        let selector_value = spec.and_then(|s| s.get("selector")).cloned().unwrap_or(Value::Null);
        let selector = if selector_value.is_null() {
            problems.push(problem(
                Code::EmptySelector,
                &["spec"],
                format!("{} {name} has no spec.selector", kind.as_str()),
            ));
            Selector::default()
        } else {
            match Selector::from_value(&selector_value) {
                Ok(selector) if selector.is_empty() => {
                    problems.push(problem(
                        Code::EmptySelector,
                        &["spec", "selector"],
                        format!("{} {name} has an empty spec.selector", kind.as_str()),
                    ));
                    selector
                }
                Ok(selector) => selector,
                Err(why) => {
                    problems.push(problem(
                        Code::InvalidSelector,
                        &["spec", "selector"],
                        format!("{} {name}: spec.selector: {why}", kind.as_str()),
                    ));
                    Selector::default()
                }
            }
        };

        let template = spec.and_then(|s| s.get("template"));
        let template_metadata = template.and_then(|t| t.get("metadata"));
        let template_labels = match template_metadata.map(|m| serde_yaml::from_value::<ObjectMeta>(m.clone())) {
            None | Some(Ok(_)) => match labels_from_value(template_metadata.and_then(|m| m.get("labels"))) {
                Ok(labels) => labels,
                Err(why) => {
                    problems.push(problem(
                        Code::InvalidWorkload,
                        &["spec", "template", "metadata", "labels"],
                        format!("{} {name}: spec.template.metadata.labels: {why}", kind.as_str()),
                    ));
                    Labels::new()
                }
            },
            Some(Err(why)) => {
                problems.push(problem(
                    Code::InvalidWorkload,
                    &["spec", "template", "metadata"],
                    format!("{} {name}: spec.template.metadata: {why}", kind.as_str()),
                ));
                Labels::new()
            }
        };
        let pod_spec = template.and_then(|t| t.get("spec"));
        if !pod_spec.is_some_and(Value::is_mapping) {
            problems.push(problem(
                Code::InvalidWorkload,
                &["spec", "template"],
                format!("{} {name} has no pod template (spec.template.spec)", kind.as_str()),
            ));
        }
        // `topologySpreadConstraints: null` (as templating tools render an unset value) is absent to the API server.
        let explicit_spread = pod_spec
            .and_then(|spec| spec.get("topologySpreadConstraints"))
            .is_some_and(|constraints| !constraints.is_null());

        if problems.is_empty() && !selector.matches(&template_labels) {
            problems.push(
                problem(
                    Code::SelectorMismatch,
                    &["spec", "selector"],
                    format!("the selector of {} {name} does not select its own pod template's labels", kind.as_str()),
                )
                .help("make spec.template.metadata.labels satisfy spec.selector"),
            );
        }
        if problems.is_empty() {
            Ok(WorkloadView {
                kind,
                name,
                manifest_replicas,
                selector,
                selector_value,
                template_labels,
                explicit_spread,
            })
        } else {
            Err(problems)
        }
    }
}

/// What kix reads from a shipped `policy/v1` PodDisruptionBudget.
#[derive(Clone, Debug)]
pub struct PdbView {
    pub name: String,
    /// `None` when the PDB has no selector: it selects no pods.
    pub selector: Option<Selector>,
}

impl PdbView {
    pub fn is_pdb(document: &Document) -> bool {
        document.group() == "policy" && document.kind() == "PodDisruptionBudget"
    }

    pub fn read(document: &Document) -> Result<PdbView, Diagnostic> {
        let name = document.name().to_string();
        let selector = match document.value.get("spec").and_then(|s| s.get("selector")) {
            None | Some(Value::Null) => None,
            Some(value) => Some(Selector::from_value(value).map_err(|why| {
                Diagnostic::new(Code::InvalidSelector, format!("PodDisruptionBudget {name}: spec.selector: {why}"))
                    .at(document.locate(&["spec", "selector"]))
            })?),
        };
        Ok(PdbView { name, selector })
    }

    /// Whether the budget covers pods with these labels (policy/v1: an empty selector covers every pod).
    pub fn selects(&self, labels: &Labels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }
}
