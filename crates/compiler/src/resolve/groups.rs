//! Availability groups of a package (`[groups.X]`, issue 17): several Deployments and StatefulSets
//! that form one service (a DNS zone's primaries, a quorum's members as separate workloads), judged,
//! spread and budgeted as a unit.
//!
//! A group is validated once per package: every `workloads` pattern matches some workload (K0422), a
//! workload belongs to at most one group (K0423), and the group's selector (the labels every member's
//! pod template carries with the same value) is not empty and selects no other pod template of the
//! package (K0424). Other instances' pod templates in the same namespace are checked per cluster
//! (`crosscheck::groups`). Pod templates are never changed: the selector is what the members share.

use super::model::{Group, GroupMember, Sourced, Workload};
use crate::load::documents::Document;
use crate::load::package::{EvictionPolicy, RawPackage, Survive};
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use kix_kube::kind::WorkloadKind;
use kix_kube::selector::Labels;
use kix_kube::workload::PdbView;

/// Whether a `workloads` pattern (a name, or a glob where `*` matches any characters) matches `name`.
pub(super) fn pattern_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The labels every one of `templates` carries with the same value.
pub(super) fn common_labels<'a>(mut templates: impl Iterator<Item = &'a Labels>) -> Labels {
    let Some(first) = templates.next() else { return Labels::new() };
    let mut common = first.clone();
    for labels in templates {
        common.retain(|key, value| labels.get(key) == Some(value));
    }
    common
}

/// `[groups.X]` of one package, validated; sets each member's `group`. Problems are reported (the
/// package then fails as a whole) and the groups returned are only those that validated.
pub(super) fn resolve_groups(
    raw: &RawPackage,
    workloads: &mut [Workload],
    documents: &[Document],
    pdbs: &[(usize, PdbView)],
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Vec<Group> {
    let mut groups = Vec::new();
    // Which group (and pattern) first claimed each workload.
    let mut claimed: Vec<Option<(String, kix_diag::Location)>> = vec![None; workloads.len()];
    for (key, settings) in &raw.groups {
        let name = key.get_ref();
        let at = manifest.locate(key.span());
        let errors_before = diagnostics.count(kix_diag::Severity::Error);
        if let Err(why) = kix_kube::names::dns1123_label(name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidName,
                    format!("group name `{name}` is not valid (it names the group's PodDisruptionBudget): {why}"),
                )
                .at(at.clone())
                .about(subject),
            );
            continue;
        }
        let mut members: Vec<GroupMember> = Vec::new();
        // Workloads this group's patterns match that another group claimed first (K0423, reported once).
        let mut contested: Vec<usize> = Vec::new();
        for pattern in &settings.workloads {
            let pattern_at = manifest.locate(pattern.span());
            let matched: Vec<usize> =
                (0..workloads.len()).filter(|&i| pattern_matches(pattern.get_ref(), workloads[i].name())).collect();
            if matched.is_empty() {
                diagnostics.push(
                    Diagnostic::new(
                        Code::GroupPatternUnmatched,
                        format!(
                            "[groups.{name}] workloads pattern `{}` matches no Deployment or StatefulSet of package `{}`",
                            pattern.get_ref(),
                            raw.meta.name.get_ref()
                        ),
                    )
                    .at(pattern_at.clone())
                    .about(subject)
                    .help(names_help(workloads)),
                );
            }
            for index in matched {
                if members.iter().any(|m| m.workload == index) {
                    continue;
                }
                if let Some((other, first_at)) = &claimed[index] {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::WorkloadInTwoGroups,
                            format!(
                                "workload `{}` is in two groups: [groups.{other}] and [groups.{name}]",
                                workloads[index].name()
                            ),
                        )
                        .at(pattern_at.clone())
                        .label("claimed again here")
                        .with_label(first_at.clone(), "first claimed here")
                        .about(subject)
                        .workload(workloads[index].name())
                        .help("a workload belongs to at most one group: narrow one of the patterns"),
                    );
                    contested.push(index);
                    continue;
                }
                claimed[index] = Some((name.clone(), pattern_at.clone()));
                members.push(GroupMember { workload: index, pattern_at: pattern_at.clone() });
            }
        }
        members.sort_by_key(|m| m.workload);
        let selector = common_labels(members.iter().map(|m| &workloads[m.workload].view.template_labels));
        if !members.is_empty() {
            let checked = Checked { name, at: &at, members: &members, contested: &contested, selector: &selector };
            check_selector(&checked, workloads, documents, subject, diagnostics);
        }
        if diagnostics.count(kix_diag::Severity::Error) > errors_before || members.is_empty() {
            continue;
        }
        // R10 for the group: a shipped budget over any member's pods replaces the group's.
        let shipped_pdb = pdbs
            .iter()
            .any(|(_, pdb)| members.iter().any(|m| pdb.selects(&workloads[m.workload].view.template_labels)));
        let all_deployments = members.iter().all(|m| workloads[m.workload].kind() == WorkloadKind::Deployment);
        let group = groups.len();
        for member in &members {
            workloads[member.workload].group = Some(group);
        }
        groups.push(Group {
            name: name.clone(),
            at,
            members,
            selector,
            ceiling: settings
                .availability
                .as_ref()
                .and_then(|a| a.max.as_ref())
                .map(|m| Sourced { value: *m.get_ref(), from: manifest.locate(m.span()) }),
            survive: settings.survive.as_ref().map_or(Survive::One, |s| *s.get_ref()),
            survive_at: settings.survive.as_ref().map(|s| manifest.locate(s.span())),
            eviction_policy: if all_deployments {
                EvictionPolicy::AlwaysAllow
            } else {
                EvictionPolicy::IfHealthyBudget
            },
            shipped_pdb,
            across: false,
        });
    }
    groups
}

/// A group whose selector is checked: its name and place, members, the workloads another group
/// claimed first, and the selector.
struct Checked<'a> {
    name: &'a str,
    at: &'a kix_diag::Location,
    members: &'a [GroupMember],
    contested: &'a [usize],
    selector: &'a Labels,
}

/// K0424 within the package: the members share some label, and no other workload of the package
/// carries them all (one claimed by another group first is already K0423).
fn check_selector(
    checked: &Checked<'_>,
    workloads: &[Workload],
    documents: &[Document],
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    let Checked { name, at, members, contested, selector } = *checked;
    let member_names: Vec<&str> = members.iter().map(|m| workloads[m.workload].name()).collect();
    if selector.is_empty() {
        diagnostics.push(
            Diagnostic::new(
                Code::GroupSelector,
                format!(
                    "the pod templates of [groups.{name}]'s members ({}) share no label with one value, so no selector \
                     selects the group's pods and only them",
                    member_names.join(", ")
                ),
            )
            .at(at.clone())
            .about(subject)
            .help(format!(
                "give each member's pod template a label they share, e.g. `kix.dev/group: {name}` (changing a pod \
                 template restarts its pods once)"
            )),
        );
        return;
    }
    let selector_text = labels_text(selector);
    for (index, other) in workloads.iter().enumerate() {
        if members.iter().any(|m| m.workload == index) || contested.contains(&index) {
            continue;
        }
        if !selector.iter().all(|(k, v)| other.view.template_labels.get(k) == Some(v)) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::GroupSelector,
                format!(
                    "[groups.{name}]'s selector ({selector_text}: the labels its members share) also selects the pods of \
                     {} {}, which is not a member",
                    other.kind().as_str(),
                    other.name()
                ),
            )
            .at(at.clone())
            .with_label(documents[other.document].locate(&["metadata", "name"]), "also selected")
            .about(subject)
            .help(format!(
                "add {} to the group's workloads, or give the members' pod templates a label {} lacks, e.g. \
                 `kix.dev/group: {name}` (changing a pod template restarts its pods once)",
                other.name(),
                other.name()
            )),
        );
    }
}

/// `app=dns, role=primary`.
pub fn labels_text(labels: &Labels) -> String {
    labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

fn names_help(workloads: &[Workload]) -> String {
    if workloads.is_empty() {
        return "the package has no Deployment or StatefulSet".into();
    }
    let names: Vec<String> = workloads.iter().map(|w| format!("{} {}", w.kind().as_str(), w.name())).collect();
    format!("the package's workloads are: {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_patterns_match_names_and_globs() {
        for (pattern, name, expected) in [
            ("dns-primary-*", "dns-primary-0", true),
            ("dns-primary-*", "dns-secondary-0", false),
            ("dns-primary-0", "dns-primary-0", true),
            ("dns-primary-0", "dns-primary-01", false),
            ("*", "anything", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("*-0", "dns-0", true),
            ("ab*ba", "aba", false),
        ] {
            assert_eq!(pattern_matches(pattern, name), expected, "{pattern} vs {name}");
        }
    }

    #[test]
    fn groups_selector_is_the_labels_members_share() {
        let a: Labels = [("app", "dns"), ("role", "primary"), ("id", "0")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let b: Labels = [("app", "dns"), ("role", "primary"), ("id", "1")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(labels_text(&common_labels([&a, &b].into_iter())), "app=dns, role=primary");
    }
}
