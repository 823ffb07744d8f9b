//! Which workload each `[workloads.X]` entry configures (R9, issue 18): the workloads of that
//! `metadata.name`, or of that name and `kind` where the entry says one. A name shared by a custom
//! resource read through `[kinds]` (or a built-in profile) and another workload needs `kind` (K0438);
//! a `kind` that no workload of that name has, and a mapping for a kind with no count field, are K0439. (An entry naming no workload at all is R9's
//! K0404, `package`.)

use crate::load::package::{RawPackage, RawWorkload};
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use kix_kube::workload::WorkloadView;
use std::collections::{BTreeMap, BTreeSet};

/// Each workload's entry, by the workload's position among `views`.
pub fn entries_by_workload<'a>(
    raw: &'a RawPackage,
    views: &[(usize, WorkloadView)],
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> BTreeMap<usize, &'a RawWorkload> {
    let mut entries = BTreeMap::new();
    for (key, settings) in &raw.workloads {
        let name = key.get_ref();
        let named: Vec<usize> = (0..views.len()).filter(|p| &views[*p].1.name == name).collect();
        let chosen: Vec<usize> = match &settings.kind {
            Some(kind) => {
                let chosen: Vec<usize> =
                    named.iter().copied().filter(|p| views[*p].1.kind.as_str() == kind.get_ref()).collect();
                if chosen.is_empty() && !named.is_empty() {
                    let kinds: BTreeSet<&str> = named.iter().map(|p| views[*p].1.kind.as_str()).collect();
                    diagnostics.push(
                        Diagnostic::new(
                            Code::InvalidKind,
                            format!(
                                "[workloads.{name}] kind `{}` names no workload `{name}` of the package",
                                kind.get_ref()
                            ),
                        )
                        .at(manifest.locate(kind.span()))
                        .about(subject)
                        .workload(name)
                        .help(format!(
                            "the workloads named `{name}` are of kind {}",
                            kinds.into_iter().collect::<Vec<_>>().join(", ")
                        )),
                    );
                }
                chosen
            }
            None => {
                let kinds: BTreeSet<&str> = named.iter().map(|p| views[*p].1.kind.as_str()).collect();
                let custom = named.iter().any(|p| views[*p].1.kind.profile().is_some());
                if kinds.len() > 1 && custom {
                    let list: Vec<String> = named.iter().map(|p| format!("{} {name}", views[*p].1.kind)).collect();
                    diagnostics.push(
                        Diagnostic::new(
                            Code::AmbiguousWorkload,
                            format!("[workloads.{name}] names {} workloads: {}", named.len(), list.join(", ")),
                        )
                        .at(manifest.locate(key.span()))
                        .about(subject)
                        .workload(name)
                        .help(format!(
                            "say which with kind = \"{}\" (or another of them)",
                            kinds.into_iter().next().unwrap_or_default()
                        )),
                    );
                    continue;
                }
                named
            }
        };
        for position in chosen {
            // A kind whose count kix cannot write has no use for a mapping: the operator would run its default.
            let view = &views[position].1;
            if let (Some(profile), Some(mapping)) = (view.kind.profile(), &settings.replicas) {
                if profile.replicas.is_none() {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::InvalidKind,
                            format!(
                                "[workloads.{name}] maps replicas for {} {name}, but [kinds.\"{}\"] names no replicas \
                                 field for kix to write them to",
                                view.kind,
                                profile.key()
                            ),
                        )
                        .at(manifest.locate(mapping.span()))
                        .about(subject)
                        .workload(name)
                        .help("name the operator's count field with replicas = \"spec....\" in the [kinds] entry"),
                    );
                    continue;
                }
            }
            entries.insert(position, settings);
        }
    }
    entries
}
