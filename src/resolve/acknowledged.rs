//! What the inputs acknowledge: the warning codes a cluster file (`allow = [...]`, for all its
//! instances) and each instance lists. An acknowledged warning is not printed; it is counted in the
//! summary and kept for `kix explain`.
//!
//! Lookups go by name through hash maps: a fleet acknowledges tens of thousands of warnings, each
//! looked up once. Each cluster's own findings are acknowledged where they are found, on every core
//! ([`Acknowledged::of_cluster`]); the rest at the end ([`Acknowledged::of`]).

use super::{Cluster, Model};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use std::collections::HashMap;
use toml::Spanned;

/// The `allow` lists of some clusters and of their instances.
pub struct Acknowledged<'a> {
    /// Per cluster: its own `allow`, and each instance's by name.
    clusters: HashMap<&'a str, (Allowed<'a>, HashMap<&'a str, Allowed<'a>>)>,
}

type Allowed<'a> = &'a [Code];

impl<'a> Acknowledged<'a> {
    /// Every cluster's of the model.
    pub fn of(model: &'a Model) -> Acknowledged<'a> {
        Acknowledged { clusters: model.clusters.iter().map(entry).collect() }
    }

    /// One cluster's.
    pub fn of_cluster(cluster: &'a Cluster) -> Acknowledged<'a> {
        Acknowledged { clusters: [entry(cluster)].into_iter().collect() }
    }

    /// Whether the inputs acknowledge a warning: its code is in the `allow` of its instance or of its cluster.
    pub fn contains(&self, diagnostic: &Diagnostic) -> bool {
        let subject = &diagnostic.subject;
        let Some((cluster, instances)) = subject.cluster.as_deref().and_then(|name| self.clusters.get(name)) else {
            return false;
        };
        let instance = subject.instance.as_deref().and_then(|name| instances.get(name));
        cluster.contains(&diagnostic.code) || instance.is_some_and(|allow| allow.contains(&diagnostic.code))
    }
}

fn entry(cluster: &Cluster) -> (&str, (Allowed<'_>, HashMap<&str, Allowed<'_>>)) {
    let instances = cluster.instances.iter().map(|i| (i.name.as_str(), i.allow.as_slice())).collect();
    (cluster.name.as_str(), (cluster.allow.as_slice(), instances))
}

/// `allow = [...]`: the warning codes acknowledged; an entry that is not a warning's code is an error.
pub(super) fn allowed_warnings(
    entries: &[Spanned<String>],
    source: &kix_diag::SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Vec<Code> {
    let mut codes = Vec::new();
    for entry in entries {
        let wanted = entry.get_ref();
        match Code::ALL.iter().find(|c| c.id().eq_ignore_ascii_case(wanted)) {
            Some(code) if code.severity() == kix_diag::Severity::Warning => codes.push(*code),
            found => {
                let why = match found {
                    Some(code) => {
                        format!("`{}` is an error ({}); errors cannot be acknowledged", code.id(), code.summary())
                    }
                    None => format!("`{wanted}` is not a diagnostic code"),
                };
                diagnostics.push(
                    Diagnostic::new(Code::UnknownAllow, format!("allow: {why}"))
                        .at(source.locate(entry.span()))
                        .about(subject)
                        .help("`kix explain` lists every code with its severity"),
                );
            }
        }
    }
    codes
}
