//! Availability groups across instances (issue 17): `group = "NAME"` on several `[[instances]]` of
//! one package in one namespace (Bindy's `Role` scope: nameservers that are instances of their own).
//! Each workload of the package forms one group over the members' copies of it, spread and budgeted
//! over all of their pods.
//!
//! Instances of one package in one namespace would emit the same objects; a member therefore gets
//! its own copy of the package ([`member_package`]), in which:
//! - every namespaced object is named `<instance>-<name>`, and every reference to one follows it
//!   (`kix_kube::references`: pod specs' ConfigMaps, Secrets, ServiceAccounts and claims, a
//!   StatefulSet's Service, autoscaler and Rollout targets, RBAC bindings, Ingress backends,
//!   webhook services); a ClusterRoleBinding that names a member's ServiceAccount is renamed too,
//!   so that members do not emit two different objects of one name (K0417);
//! - each workload's selector and pod template gain `kix.dev/instance: <instance>` (so members'
//!   controllers and Services do not take each other's pods, K0406), and its pod template
//!   `kix.dev/group: NAME`, which the group selects on with the workload's own `matchLabels`
//!   (changing a pod template restarts its pods once); Services and shipped PodDisruptionBudgets
//!   that select a workload's pods gain the instance label, so each stays its instance's;
//! - each workload is the one member of a group named `NAME` (or `NAME-<workload>` when the
//!   package runs several), marked `across`.
//!
//! Once every instance of the cluster resolved, [`settle`] checks the members alike (one namespace,
//! K0418; one package and level, K0419), records the members in name order (the first emits the
//! groups' budgets) and judges R7, R8 and `survive` on each group's total over all members.

use super::model::{Across, DocumentScope, Group, GroupMember, Instance, Package, PackageDocument};
use super::survival::{Domains, check_majority};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::kix_names::GROUP_LABEL;
use kix_kube::level::Level;
use kix_kube::selector::Labels;
use kix_yaml::{Mapping, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The member's own copy of its package, renamed and labelled for `instance` (see the module comment);
/// `None`, with the reason reported, when the package cannot be grouped so.
pub(super) fn member_package(
    package: &Arc<Package>,
    instance: &str,
    across: &Across,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Option<Arc<Package>> {
    if let Some(own) = package.groups.first() {
        diagnostics.push(
            Diagnostic::new(
                Code::GroupAcrossUnlike,
                format!(
                    "instance `{instance}` is in group `{}`, but package `{}` has availability groups of its own \
                     ([groups.{}]); a workload belongs to at most one group",
                    across.name, package.name, own.name
                ),
            )
            .at(across.at.clone())
            .with_label(own.at.clone(), "the package's own group")
            .about(subject)
            .help("remove `group` from the instance, or the package's [groups]"),
        );
        return None;
    }
    let mut copy = (**package).clone();
    let prefix = format!("{instance}-");
    // Where each document goes, as the package's scopes already say.
    let namespaced: Vec<bool> = copy.documents.iter().map(|d| d.scope != DocumentScope::Cluster).collect();
    let moved: BTreeSet<(String, String)> = (copy.documents.iter().zip(&namespaced))
        .filter(|(_, namespaced)| **namespaced)
        .map(|(d, _)| (d.kind().to_string(), d.name().to_string()))
        .collect();
    let rename = |kind: &str, name: &str| {
        moved.contains(&(kind.to_string(), name.to_string())).then(|| format!("{prefix}{name}"))
    };
    for (document, namespaced) in copy.documents.iter_mut().zip(&namespaced) {
        let (group, kind) = (document.group().to_string(), document.kind().to_string());
        let followed = kix_kube::references::rename_references(&mut document.value, &group, &kind, &rename);
        if *namespaced || (kind == "ClusterRoleBinding" && followed > 0) {
            let name = format!("{prefix}{}", document.name());
            if let Some(metadata) = document.value.get_mut("metadata").and_then(Value::as_mapping_mut) {
                metadata.insert("name".into(), name.into());
            }
        }
    }
    label_members(&mut copy, instance, &across.name);
    // Renaming and labelling leave kinds and namespaces alone; read again all the same, from the copy.
    for document in &mut copy.documents {
        document.scope = super::package::document_scope(document, &copy.cluster_scoped_kinds);
    }
    form_groups(&mut copy, &prefix, across, subject, diagnostics).then(|| Arc::new(copy))
}

/// The instance and group labels on each workload's selector and template (and on the view kix read of
/// them), and the instance label on the Services and shipped budgets that select a workload's pods.
fn label_members(package: &mut Package, instance: &str, group: &str) {
    let instance_label = kix_kube::kix_names::KIX_INSTANCE_LABEL;
    let templates: Vec<Labels> = package.workloads.iter().map(|w| w.view.template_labels.clone()).collect();
    let selects_a_template =
        |selector: &Mapping| templates.iter().any(|labels| selector.iter().all(|(k, v)| label_matches(labels, k, v)));
    for workload in &mut package.workloads {
        let value = &mut package.documents[workload.document].value;
        insert_label(value, &["spec", "selector", "matchLabels"], instance_label, instance);
        // A Rollout with a workloadRef runs the referenced Deployment's template.
        let template_document = workload.template_from.unwrap_or(workload.document);
        let template = &mut package.documents[template_document].value;
        insert_label(template, &["spec", "template", "metadata", "labels"], instance_label, instance);
        insert_label(template, &["spec", "template", "metadata", "labels"], GROUP_LABEL, group);
        let view = &mut workload.view;
        view.name = format!("{instance}-{}", view.name);
        view.selector.match_labels.insert(instance_label.into(), instance.into());
        if let Some(selector) = package.documents[workload.document].value.get("spec").and_then(|s| s.get("selector")) {
            view.selector_value = selector.clone();
        }
        view.template_labels.insert(instance_label.into(), instance.into());
        view.template_labels.insert(GROUP_LABEL.into(), group.into());
        insert_label(&mut view.template, &["metadata", "labels"], instance_label, instance);
        insert_label(&mut view.template, &["metadata", "labels"], GROUP_LABEL, group);
        if let Some(autoscaler) = &mut workload.autoscaler {
            autoscaler.view.name = format!("{instance}-{}", autoscaler.view.name);
            autoscaler.view.target.name = format!("{instance}-{}", autoscaler.view.target.name);
        }
    }
    for document in &mut package.documents {
        if document.api_version() != "v1" || document.kind() != "Service" {
            continue;
        }
        let selector = document.value.get("spec").and_then(|s| s.get("selector")).and_then(Value::as_mapping);
        if selector.is_some_and(|s| !s.is_empty() && selects_a_template(s)) {
            insert_label(&mut document.value, &["spec", "selector"], instance_label, instance);
        }
    }
    for document in &mut package.documents {
        let PackageDocument { document, budget, unmanaged, .. } = document;
        if let Some(pdb) = budget {
            pdb.name = format!("{instance}-{}", pdb.name);
            if templates.iter().any(|labels| pdb.selects(labels)) {
                insert_label(&mut document.value, &["spec", "selector", "matchLabels"], instance_label, instance);
                if let Some(selector) = &mut pdb.selector {
                    selector.match_labels.insert(instance_label.into(), instance.into());
                }
            }
        }
        if let Some(custom) = unmanaged {
            custom.name = format!("{instance}-{}", custom.name);
        }
    }
}

fn label_matches(labels: &Labels, key: &Value, value: &Value) -> bool {
    key.as_str().is_some_and(|k| labels.get(k).map(String::as_str) == value.as_str())
}

/// Sets `key: value` in the mapping at `path`, creating the mappings on the way.
fn insert_label(object: &mut Value, path: &[&str], key: &str, value: &str) {
    let mut at = object;
    for step in path {
        let Some(map) = at.as_mapping_mut() else { return };
        if map.get(*step).is_none_or(|v| v.as_mapping().is_none()) {
            map.insert((*step).into(), Value::Mapping(Mapping::new()));
        }
        let Some(next) = map.get_mut(*step) else { return };
        at = next;
    }
    if let Some(map) = at.as_mapping_mut() {
        map.insert(key.into(), value.into());
    }
}

/// One group per workload: named after the cluster file's group (with the workload's name when the
/// package runs several), selecting the workload's `matchLabels` (its template's labels when it has
/// none) and the group label. `false` when a selector would also select another workload (K0424) or a
/// name is not valid.
fn form_groups(
    package: &mut Package,
    prefix: &str,
    across: &Across,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> bool {
    let several = package.workloads.len() > 1;
    let instance_label = kix_kube::kix_names::KIX_INSTANCE_LABEL;
    let mut valid = true;
    for index in 0..package.workloads.len() {
        let workload = &package.workloads[index];
        let own_name = workload.view.name.strip_prefix(prefix).unwrap_or(&workload.view.name).to_string();
        let name = if several { format!("{}-{own_name}", across.name) } else { across.name.clone() };
        if let Err(why) = kix_kube::names::dns1123_subdomain(&name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidName,
                    format!(
                        "group `{}` names the budget of workload `{own_name}` `{name}`, which is not valid: {why}",
                        across.name
                    ),
                )
                .at(across.at.clone())
                .about(subject),
            );
            valid = false;
            continue;
        }
        let mut selector: Labels = workload.view.selector.match_labels.clone();
        selector.remove(instance_label);
        if selector.is_empty() {
            selector = workload.view.template_labels.clone();
            selector.remove(instance_label);
        }
        selector.insert(GROUP_LABEL.into(), across.name.clone());
        let also = (package.workloads.iter().enumerate()).find(|(other, w)| {
            *other != index && selector.iter().all(|(k, v)| w.view.template_labels.get(k) == Some(v))
        });
        if let Some((_, other)) = also {
            diagnostics.push(
                Diagnostic::new(
                    Code::GroupSelector,
                    format!(
                        "group `{}` selects the pods of workload `{own_name}` by {} (its matchLabels and the group \
                         label), which also selects the pods of {} {}",
                        across.name,
                        super::labels_text(&selector),
                        other.kind().as_str(),
                        other.view.name.strip_prefix(prefix).unwrap_or(&other.view.name)
                    ),
                )
                .at(across.at.clone())
                .with_label(package.documents[other.document].locate(&["metadata", "name"]), "also selected")
                .about(subject)
                .help(format!("give {own_name}'s selector (and pod template) a label the other workload lacks")),
            );
            valid = false;
            continue;
        }
        let group = Group {
            name,
            at: across.at.clone(),
            members: vec![GroupMember { workload: index, pattern_at: across.at.clone() }],
            selector,
            ceiling: None,
            survive: workload.survive,
            survive_at: workload.survive_at.clone(),
            eviction_policy: workload.eviction_policy,
            shipped_pdb: workload.shipped_pdb,
            across: true,
        };
        package.workloads[index].group = Some(package.groups.len());
        package.groups.push(group);
    }
    valid
}

/// Checks each group across the cluster's instances, records its members in name order, and judges R7, R8
/// and `survive` on each workload's total over all members (every member's group records that total).
pub(super) fn settle(domains: &Domains, instances: &mut [Instance], diagnostics: &mut Diagnostics) {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, instance) in instances.iter().enumerate() {
        if let Some(across) = &instance.across {
            groups.entry(across.name.clone()).or_default().push(index);
        }
    }
    for (name, mut members) in groups {
        members.sort_by(|&a, &b| instances[a].name.cmp(&instances[b].name));
        let first = &instances[members[0]];
        let mut alike = true;
        for &member in &members[1..] {
            let other = &instances[member];
            let unlike = if other.namespace != first.namespace {
                Some((
                    Code::GroupAcrossNamespaces,
                    format!(
                        "instances `{}` (namespace `{}`) and `{}` (namespace `{}`) of group `{name}` run in different \
                         namespaces; spread constraints and budgets count the pods of their own namespace only",
                        first.name, first.namespace, other.name, other.namespace
                    ),
                    format!("give both instances namespace = \"{}\"", first.namespace),
                ))
            } else if other.package.name != first.package.name {
                Some((
                    Code::GroupAcrossUnlike,
                    format!(
                        "instances `{}` (package `{}`) and `{}` (package `{}`) of group `{name}` run different packages",
                        first.name, first.package.name, other.name, other.package.name
                    ),
                    "a group across instances is formed per workload of one package: use different groups".to_string(),
                ))
            } else if other.level.value != first.level.value {
                Some((
                    Code::GroupAcrossUnlike,
                    format!(
                        "instances `{}` (level `{}`) and `{}` (level `{}`) of group `{name}` run at different levels",
                        first.name, first.level.value, other.name, other.level.value
                    ),
                    "give the group's instances one availability".to_string(),
                ))
            } else {
                None
            };
            let (Some(first_at), Some(other_at)) = (&first.across, &other.across) else { continue };
            if let Some((code, message, help)) = unlike {
                diagnostics.push(
                    Diagnostic::new(code, message)
                        .at(other_at.at.clone())
                        .with_label(first_at.at.clone(), format!("instance `{}` joins here", first.name))
                        .about(&other.subject)
                        .help(help),
                );
                alike = false;
            }
        }
        if !alike {
            continue;
        }
        let names: Vec<String> = members.iter().map(|&m| instances[m].name.clone()).collect();
        for &member in &members {
            if let Some(across) = &mut instances[member].across {
                across.members = names.clone();
            }
        }
        judge_totals(domains, instances, &members, &name, diagnostics);
    }
}

/// R7, R8 and `survive` on each group's total over its members, recorded in every member's group.
fn judge_totals(
    domains: &Domains,
    instances: &mut [Instance],
    members: &[usize],
    name: &str,
    diagnostics: &mut Diagnostics,
) {
    let first = &instances[members[0]];
    let package = Arc::clone(&first.package);
    let subject = first.subject.clone();
    let names = members.iter().map(|&m| instances[m].name.as_str()).collect::<Vec<_>>().join(", ");
    for group in &package.groups {
        let total: u32 = (members.iter())
            .flat_map(|&m| {
                let instance = &instances[m];
                instance.groups.iter().filter(|ig| instance.package.groups[ig.group].name == group.name)
            })
            .map(|ig| ig.replicas)
            .sum();
        for &member in members {
            let instance = &mut instances[member];
            let package = Arc::clone(&instance.package);
            for ig in &mut instance.groups {
                if package.groups[ig.group].name == group.name {
                    ig.replicas = total;
                }
            }
        }
        let workload = &package.workloads[group.members[0].workload];
        let level = instances[members[0]].groups.iter().find(|ig| package.groups[ig.group].name == group.name);
        let Some(level) = level.map(|ig| ig.level.value) else { continue };
        // A workload scaled to zero runs no pods: no level to judge.
        let scaled_to_zero = instances[members[0]].workloads.iter().any(|w| {
            w.workload == group.members[0].workload
                && matches!(w.trail.replicas, super::model::ReplicaSource::ScaledToZero { .. })
        });
        if scaled_to_zero {
            continue;
        }
        let what = format!("group `{}` ({} over instances {names})", group.name, workload.kind().as_str());
        if workload.under_none_ceiling(&package) && total > 1 {
            diagnostics.push(
                Diagnostic::new(
                    Code::CeilingNoneManyReplicas,
                    format!("{what} runs under a `none` ceiling but would run {total} pods at `{level}`"),
                )
                .at(group.at.clone())
                .about(&subject)
                .help("a none ceiling declares the workload can run only one pod at a time; give the group one member"),
            );
        }
        if level >= Level::Pod && total < 2 {
            diagnostics.push(
                Diagnostic::new(
                    Code::TooFewReplicas,
                    format!(
                        "{what} resolves to level `{level}` but runs {total} pod{} in all; one pod cannot survive \
                         losing a pod",
                        kix_diag::words::s(total)
                    ),
                )
                .at(group.at.clone())
                .about(&subject)
                .help(format!("add instances to group `{name}`, or give the workload a mapping such as replicas = {{ none = 1, pod = 2 }}")),
            );
        }
        let at = group.survive_at.clone().unwrap_or_else(|| group.at.clone());
        check_majority(&what, group.survive, level, total, domains, at, None, &subject, diagnostics);
    }
}
