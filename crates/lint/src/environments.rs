//! Environments (issue 41): a tree of manifests often holds one directory per environment
//! (`staging/`, `prod/`), each with the same objects. Two objects of one identity (API group, kind,
//! namespace as written, name) cannot be in one cluster, so two environments that each hold one are two
//! clusters: the cross-object rules judge each on its own. Without such a clash nothing is split (a
//! package's manifests spread over `deploy/` and `pdb/` are one apply). Two objects of one identity in
//! one environment would land in one apply, where the later replaces the earlier without a word: K0725.

use super::Object;
use super::files::LintFile;
use kix_compiler::load::documents::Document;
use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use std::collections::BTreeMap;

/// What makes two objects one in a cluster, and where the object's name is written.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    key: (String, String, String, String),
    at: Location,
}

impl Identity {
    pub(crate) fn of(document: &Document) -> Identity {
        let namespace = kix_kube::value::str_at(&document.value, &["metadata", "namespace"]).unwrap_or_default();
        Identity {
            key: (
                document.group().to_string(),
                document.kind().to_string(),
                namespace.to_string(),
                document.name().to_string(),
            ),
            at: document.locate_field("metadata.name"),
        }
    }
}

/// The files of each environment (positions into `files`), when two environments hold an object of one
/// identity; `None` when every object is in one run. Reports K0725 for each identity held twice within
/// one environment.
pub(crate) fn split(
    files: &[LintFile],
    identities: &[(Identity, usize)],
    objects: &[Object],
    diagnostics: &mut Diagnostics,
) -> Option<Vec<Vec<usize>>> {
    let environments: Vec<String> = files.iter().map(LintFile::environment).collect();
    // Every object of each identity, by index.
    let mut held: BTreeMap<&(String, String, String, String), Vec<usize>> = BTreeMap::new();
    for (index, (identity, _)) in identities.iter().enumerate() {
        if !identity.key.3.is_empty() {
            held.entry(&identity.key).or_default().push(index);
        }
    }
    let mut split = false;
    for (identity, indices) in &held {
        let mut by_environment: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &index in indices {
            by_environment.entry(environments[identities[index].1].as_str()).or_default().push(index);
        }
        split |= by_environment.len() > 1;
        for (environment, twice) in &by_environment {
            let [first, again, ..] = twice.as_slice() else { continue };
            diagnostics.push(
                Diagnostic::new(
                    Code::LintSameObjectTwice,
                    format!(
                        "{} is written twice in {environment}: applied together, the later replaces the earlier",
                        objects[*again].name()
                    ),
                )
                .at(identities[*again].0.at.clone())
                .with_label(identities[*first].0.at.clone(), "first written here")
                .help(format!(
                    "keep one {} {}; environments of their own go in directories of their own",
                    identity.1, identity.3
                )),
            );
        }
    }
    if !split {
        return None;
    }
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (position, environment) in environments.iter().enumerate() {
        groups.entry(environment.as_str()).or_default().push(position);
    }
    Some(groups.into_values().collect())
}
