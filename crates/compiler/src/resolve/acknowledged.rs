//! What the inputs acknowledge: the warning codes a cluster file (`allow = [...]`, for all its
//! instances) and each instance lists. An acknowledged warning is not printed; it is counted in the
//! summary and kept for `kix explain`.
//!
//! Lookups go by name through hash maps: a fleet acknowledges tens of thousands of warnings, each
//! looked up once. Each cluster's own findings are acknowledged where they are found, on every core
//! ([`Acknowledged::of_cluster`]); the rest at the end ([`Acknowledged::of`]).

use super::Cluster;
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use std::collections::HashMap;
use toml::Spanned;

/// The `allow` lists of some clusters and of their instances, owned (a build drops each resolved cluster
/// once compiled and keeps these for the warnings acknowledged at the end); only the lists that
/// acknowledge something are kept.
#[derive(Debug, Default)]
pub struct Acknowledged {
    clusters: HashMap<String, ClusterAllows>,
}

/// One cluster's own `allow`, and each instance's by name.
#[derive(Debug)]
struct ClusterAllows {
    own: Vec<Code>,
    instances: HashMap<String, Vec<Code>>,
}

impl Acknowledged {
    /// One cluster's.
    pub fn of_cluster(cluster: &Cluster) -> Acknowledged {
        let instances: HashMap<String, Vec<Code>> = (cluster.instances.iter())
            .filter(|instance| !instance.allow.is_empty())
            .map(|instance| (instance.name.clone(), instance.allow.clone()))
            .collect();
        let mut clusters = HashMap::new();
        if !cluster.allow.is_empty() || !instances.is_empty() {
            clusters.insert(cluster.name.clone(), ClusterAllows { own: cluster.allow.clone(), instances });
        }
        Acknowledged { clusters }
    }

    /// Adds other clusters' lists (a cluster name is in one of the two).
    pub fn extend(&mut self, other: Acknowledged) {
        self.clusters.extend(other.clusters);
    }

    /// Whether the inputs acknowledge a warning: its code is in the `allow` of its instance or of its cluster.
    pub fn contains(&self, diagnostic: &Diagnostic) -> bool {
        let subject = &diagnostic.subject;
        let Some(cluster) = subject.cluster.as_deref().and_then(|name| self.clusters.get(name)) else {
            return false;
        };
        let instance = subject.instance.as_deref().and_then(|name| cluster.instances.get(name));
        cluster.own.contains(&diagnostic.code) || instance.is_some_and(|allow| allow.contains(&diagnostic.code))
    }
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
