//! What strict validation reports ([`StrictError`]: a field path, the problem and the schema that
//! judged it) and the field paths it speaks of ([`Step`]), shared by the typed, CRD and probe
//! checks and the module root that picks among them.

use kix_yaml::Value;
use std::fmt;

/// One thing the API server would refuse, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictError {
    /// The field path as the API server prints it (`spec.template.spec.containers[0].image`).
    pub path: String,
    pub problem: Problem,
    /// Whose schema says so.
    pub schema: Schema,
}

/// What is wrong at [`StrictError::path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The schema has no such field. `suggestion` is the closest field it has, if any is close;
    /// `suggestion_set` says whether the object sets that field too (a stray duplicate).
    UnknownField { suggestion: Option<String>, suggestion_set: bool },
    /// A field the schema requires is absent (or null).
    MissingField,
    /// The value does not fit the field's type: serde's or the schema's words for why.
    WrongType { reason: String },
    /// Nothing serves this `apiVersion` and `kind`; `served` lists the `apiVersion`s that serve the
    /// kind, and `suggestion` a close kind name when the kind itself is unknown.
    NotServed { api_version: String, kind: String, served: Vec<String>, suggestion: Option<String> },
}

/// The schema an object was checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schema {
    /// Kubernetes 1.33's built-in API.
    Kubernetes,
    /// The package's CustomResourceDefinition of this name.
    Crd(String),
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schema::Kubernetes => f.write_str("Kubernetes 1.33"),
            Schema::Crd(name) => write!(f, "CustomResourceDefinition {name}"),
        }
    }
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { path, schema, .. } = self;
        match &self.problem {
            Problem::UnknownField { .. } => write!(f, "unknown field `{path}` (not in {schema}'s schema)"),
            Problem::MissingField => write!(f, "required field `{path}` is missing ({schema})"),
            Problem::WrongType { reason } if path.is_empty() => write!(f, "{reason}"),
            Problem::WrongType { reason } => write!(f, "`{path}`: {reason}"),
            Problem::NotServed { api_version, kind, .. } => write!(f, "{api_version} {kind} is not served by {schema}"),
        }
    }
}

impl StrictError {
    /// A hint for fixing it, if kix has one.
    pub fn help(&self) -> Option<String> {
        match &self.problem {
            Problem::UnknownField { suggestion: Some(name), suggestion_set: false } => {
                Some(format!("did you mean `{name}`?"))
            }
            Problem::UnknownField { suggestion: Some(name), suggestion_set: true } => {
                Some(format!("did you mean `{name}`? it is set too: remove one of them"))
            }
            Problem::NotServed { served, .. } if !served.is_empty() => Some(format!("use {}", served.join(" or "))),
            Problem::NotServed { suggestion: Some(kind), .. } => Some(format!("did you mean kind `{kind}`?")),
            Problem::NotServed { kind, .. } => Some(format!("no version of {kind} is served any more")),
            _ => None,
        }
    }
}

/// The candidate closest to `unknown`, if one is close enough to be a typo of it: at most one edit
/// (insertion, deletion, substitution or swap of neighbours) per three characters, and at least one.
pub(crate) fn suggest<'a>(unknown: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (unknown.chars().count() / 3).max(1);
    candidates
        .filter(|candidate| *candidate != unknown)
        .map(|candidate| (strsim::osa_distance(&unknown.to_lowercase(), &candidate.to_lowercase()), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.to_string())
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// `spec.containers[0].name`, as the API server prints paths.
pub(super) fn path_text(steps: &[Step]) -> String {
    let mut text = String::new();
    for step in steps {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

/// The value at a path of steps.
pub(super) fn value_at<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    steps.iter().try_fold(value, |value, step| match step {
        Step::Key(key) => value.get(key.as_str()),
        Step::Index(index) => value.as_sequence().and_then(|items| items.get(*index)),
    })
}
