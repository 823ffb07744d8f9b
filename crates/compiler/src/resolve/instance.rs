//! Instances: bind each `[[instances]]` entry to a package version and settle
//! its level (R2, R4), then each of its workloads' level and replica count
//! (R5-R8, with an autoscaler's minimum as the count where one scales the
//! workload: see [`super::autoscaler`]), and warn about replicating
//! controllers kix does not manage (K0434) and custom resources that run pods
//! (K0435).
//!
//! R7 and R8 are reported here but do not drop the instance: the replica
//! count is what the user asked for, and derive still shows what it would
//! emit (the build as a whole fails on the error).
//!
//! Each decision is written to the trail as it is taken: who requested the
//! level and its substrate check (R2, R3), each ceiling and what it did (R4,
//! R5), the replica step (R6, with [`super::autoscaler::floor`] under an
//! autoscaler). `kix explain` prints that trail.

use super::model::{
    Across, Ceiling, Instance, InstanceGroup, InstanceWorkload, LevelTrail, Package, ReplicaSource, Request,
    RequestedBy, Sourced, SubstrateCheck, UnmanagedWhy, Workload, WorkloadTrail,
};
use super::package::Packages;
use super::substrate::Substrate;
use super::survival::{Domains, check_majority};
use super::versions::choose_package;
use crate::load::cluster::RawInstance;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile, Subject};
use kix_kube::level::Level;
use kix_kube::names;

/// What an instance is resolved against: its cluster's name, level (with its R3 check) and substrate.
pub struct ClusterContext<'a> {
    pub name: &'a str,
    pub source: &'a SourceFile,
    pub level: &'a Sourced<Level>,
    /// R3 for the cluster's own level: what an instance without its own `availability` inherits.
    pub check: &'a SubstrateCheck,
    pub substrate: &'a Substrate,
    pub subject: &'a Subject,
    /// The inventory's node count, when it declares nodes (the majority check at level node).
    pub nodes: Option<usize>,
    /// `kix explain --level`: the instance asked at another level than its entry says (the files are not
    /// changed), and that level.
    pub what_if: Option<(&'a str, Level)>,
}

/// Resolves one instance entry; `None` (with the reason reported) when it cannot run.
pub fn resolve_instance(
    cluster: &ClusterContext<'_>,
    raw: &RawInstance,
    packages: &Packages,
    diagnostics: &mut Diagnostics,
) -> Option<Instance> {
    let source = cluster.source;
    let name = raw.name.get_ref();
    let location = source.locate(raw.name.span());
    let subject = Subject { instance: Some(name.clone().into()), ..cluster.subject.clone() };
    if let Err(why) = names::dns1123_label(name) {
        diagnostics.push(
            Diagnostic::new(Code::InvalidName, format!("instance name `{name}` is not valid: {why}"))
                .at(location)
                .about(cluster.subject),
        );
        return None;
    }
    let namespace = raw.namespace.as_ref().map_or(name.clone(), |n| n.get_ref().clone());
    if let Some(spanned) = &raw.namespace {
        if let Err(why) = names::dns1123_label(&namespace) {
            diagnostics.push(
                Diagnostic::new(Code::InvalidName, format!("namespace `{namespace}` is not valid: {why}"))
                    .at(source.locate(spanned.span()))
                    .about(&subject),
            );
            return None;
        }
    }
    let (requested, substrate) = requested_level(cluster, raw, &location, &subject, diagnostics);
    let allow = super::acknowledged::allowed_warnings(&raw.allow, source, &subject, diagnostics);
    let package = choose_package(source, raw, packages, &subject, diagnostics)?;
    if substrate.rules_out() {
        return None;
    }
    let subject = Subject { package: Some(package.name.clone().into()), ..subject };
    let across = across_membership(raw, source, &subject, diagnostics).ok()?;
    // A member of a group across instances runs its own copy of the package, renamed and labelled for it.
    let package = match &across {
        Some(across) => super::across::member_package(&package, name, across, &subject, diagnostics)?,
        None => package,
    };
    let namespace_at = raw.namespace.as_ref().map_or_else(|| location.clone(), |n| source.locate(n.span()));
    if !super::namespaces::check_instance_namespace(
        &package.namespaces,
        &namespace,
        namespace_at,
        &subject,
        diagnostics,
    ) {
        return None;
    }
    let (level, package_ceiling) = apply_package_ceiling(&package, &requested.level, &subject, diagnostics);
    let mut instance = Instance {
        name: name.clone(),
        namespace,
        create_namespace: raw.create_namespace.as_ref().is_some_and(|c| *c.get_ref()),
        location,
        subject,
        package: std::sync::Arc::clone(&package),
        version_requirement: raw
            .version
            .as_ref()
            .map(|v| Sourced { value: v.get_ref().clone(), from: source.locate(v.span()) }),
        requested: requested.level.clone(),
        level,
        trail: LevelTrail { requested, substrate, package_ceiling },
        allow,
        workloads: Vec::new(),
        groups: Vec::new(),
        across,
    };
    let groups = group_levels(cluster, &instance, &package, diagnostics);
    for (index, workload) in package.workloads.iter().enumerate() {
        // A second copy of a workload is reported as a duplicate object by derive, and resolved once.
        let first = package.workloads.iter().position(|w| w.kind() == workload.kind() && w.name() == workload.name());
        if first == Some(index) {
            let resolved = resolve_workload(cluster, &instance, &groups, &package, index, workload, diagnostics);
            instance.workloads.push(resolved);
        }
    }
    // Each group with its members' replicas added up, now that they resolved (a group across
    // instances is judged on every member instance's pods: `across` adds them up once all resolved).
    instance.groups = (groups.into_iter())
        .map(|GroupLevel { group, level, ceiling }| {
            let members = instance.workloads.iter().filter(|w| package.workloads[w.workload].group == Some(group));
            InstanceGroup { group, level, ceiling, replicas: members.map(|w| w.replicas).sum() }
        })
        .collect();
    check_groups(cluster, &mut instance, diagnostics);
    super::hazards::check(cluster.name, &instance, diagnostics);
    report_unmanaged_replicas(cluster.name, &instance, diagnostics);
    report_unmanaged_custom(cluster.name, &instance, diagnostics);
    super::namespace_strings::report(cluster.name, &instance, diagnostics);
    Some(instance)
}

/// R2: the level an instance asks for, who asks, and its R3 check: its own `availability` (checked
/// here), else the cluster's (checked with the cluster); a what-if level (`kix explain --level`) takes the
/// place of both, checked as the instance's own.
fn requested_level(
    cluster: &ClusterContext<'_>,
    raw: &RawInstance,
    location: &Location,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> (Request, SubstrateCheck) {
    let name = raw.name.get_ref();
    let source = cluster.source;
    // R2: the instance's own level (checked here, R3), else the cluster's (checked with the cluster).
    // A what-if level (`kix explain --level`) takes the place of both, checked as the instance's own.
    let what_if = cluster.what_if.filter(|(instance, _)| instance == name).map(|(_, level)| level);
    match (what_if, &raw.availability) {
        (Some(what_if), _) => {
            let level = Sourced { value: what_if, from: location.clone() };
            let check = super::support::check_support(cluster.name, cluster.substrate, &level, subject, diagnostics);
            (Request { by: RequestedBy::WhatIf, level }, check)
        }
        (None, Some(own)) => {
            let level = Sourced { value: *own.get_ref(), from: source.locate(own.span()) };
            let check = super::support::check_support(cluster.name, cluster.substrate, &level, subject, diagnostics);
            (Request { by: RequestedBy::Instance, level }, check)
        }
        (None, None) => (Request { by: RequestedBy::Cluster, level: cluster.level.clone() }, cluster.check.clone()),
    }
}

/// `group = "NAME"`: the instance's membership in an availability group across instances (its members
/// filled once the cluster's instances resolved); `Err` when the name is not valid (reported).
fn across_membership(
    raw: &RawInstance,
    source: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Result<Option<Across>, ()> {
    Ok(match &raw.group {
        None => None,
        Some(group) => {
            let at = source.locate(group.span());
            if let Err(why) = names::dns1123_label(group.get_ref()) {
                diagnostics.push(
                    Diagnostic::new(Code::InvalidName, format!("group name `{}` is not valid: {why}", group.get_ref()))
                        .at(at)
                        .about(subject),
                );
                return Err(());
            }
            Some(Across { name: group.get_ref().clone(), at, members: Vec::new() })
        }
    })
}

/// The level a `[groups.X]` runs at in an instance: what its members start from.
struct GroupLevel {
    /// Index into the package's `groups`.
    group: usize,
    level: Sourced<Level>,
    ceiling: Ceiling,
}

/// Each `[groups.X]` of the package at the instance's level, after the group's ceiling (K0427's
/// lowering reported).
fn group_levels(
    cluster: &ClusterContext<'_>,
    instance: &Instance,
    package: &Package,
    diagnostics: &mut Diagnostics,
) -> Vec<GroupLevel> {
    (package.groups.iter().enumerate())
        .map(|(index, group)| {
            let (level, ceiling) = meet_ceiling(group.ceiling.as_ref(), &instance.level);
            if let Ceiling::Lowered { max, from } = &ceiling {
                diagnostics.push(
                    Diagnostic::new(
                        Code::GroupCeiling,
                        format!(
                            "cluster `{}` instance `{}`: group `{}` of package `{}` supports at most `{}`, so its members \
                             run at `{}` instead of `{from}`",
                            cluster.name, instance.name, group.name, package.name, max.value, max.value
                        ),
                    )
                    .at(max.from.clone())
                    .about(&instance.subject),
                );
            }
            GroupLevel { group: index, level, ceiling }
        })
        .collect()
}

/// A ReplicaSet or ReplicationController at level pod or higher: kix manages Deployments and
/// StatefulSets only, so its pods get no spread and no budget (K0434).
fn report_unmanaged_replicas(cluster: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
    if instance.level.value < Level::Pod {
        return;
    }
    for document in &instance.package.documents {
        let Some(kind) = document.replicating else { continue };
        diagnostics.push(
            Diagnostic::new(
                Code::UnmanagedReplicas,
                format!(
                    "cluster `{cluster}` instance `{}` runs at `{}`, but {} {} gets no spread constraints and no \
                     PodDisruptionBudget: kix manages Deployments and StatefulSets only, so its pods may share one node \
                     and one drain may evict them all",
                    instance.name,
                    instance.level.value,
                    kind.as_str(),
                    document.name()
                ),
            )
            .at(document.locate(&["kind"]))
            .about(&instance.subject)
            .help(format!(
                "rewrite {} as an apps/v1 Deployment (its selector under spec.selector.matchLabels, the same pod \
                 template) and kix will place it",
                document.name()
            )),
        );
    }
}

/// A custom resource that runs pods at level pod or higher: an operator places its pods, and kix derives
/// no spread and no budget for them (K0435).
fn report_unmanaged_custom(cluster: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
    if instance.level.value < Level::Pod {
        return;
    }
    for custom in instance.package.unmanaged_custom() {
        let document = &instance.package.documents[custom.document];
        let why = match &custom.why {
            UnmanagedWhy::Operator => "its operator runs its pods".to_string(),
            UnmanagedWhy::Unreadable(why) => format!("kix cannot read it ({why})"),
            UnmanagedWhy::CrdField(field) => {
                format!("its CustomResourceDefinition declares spec.{field}, so an operator runs pods for it")
            }
        };
        diagnostics.push(
            Diagnostic::new(
                Code::UnmanagedCustomResource,
                format!(
                    "cluster `{cluster}` instance `{}` runs at `{}`, but custom resource {} {} gets no spread \
                     constraints and no PodDisruptionBudget from kix: {why}, and kix does not place them",
                    instance.name, instance.level.value, custom.kind, custom.name
                ),
            )
            .at(document.locate(&["kind"]))
            .about(&instance.subject)
            .help(format!(
                "set the spread and budget fields the operator reads for {} {}, and acknowledge this warning with \
                 allow = [\"K0435\"]",
                custom.kind, custom.name
            )),
        );
    }
}

/// R4 and R5: a ceiling met by a level: the level it leaves (the ceiling, with where it is written, when
/// lower) and what it did, for the trail.
fn meet_ceiling(max: Option<&Sourced<Level>>, level: &Sourced<Level>) -> (Sourced<Level>, Ceiling) {
    match max {
        None => (level.clone(), Ceiling::Undeclared),
        Some(max) if max.value < level.value => (max.clone(), Ceiling::Lowered { max: max.clone(), from: level.value }),
        Some(max) => (level.clone(), Ceiling::NotBelow(max.clone())),
    }
}

/// R4: the package ceiling lowers the whole instance.
fn apply_package_ceiling(
    package: &Package,
    requested: &Sourced<Level>,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> (Sourced<Level>, Ceiling) {
    let (level, outcome) = meet_ceiling(package.ceiling.as_ref(), requested);
    if let Ceiling::Lowered { max: ceiling, .. } = &outcome {
        diagnostics.push(
            Diagnostic::new(
                Code::PackageCeiling,
                format!(
                    "package `{}` {} supports at most `{}`, so the requested level `{}` is lowered to `{}`",
                    package.name, package.version, ceiling.value, requested.value, ceiling.value
                ),
            )
            // At the ceiling in the package's kix.toml, the cause, with no cluster or instance in the message
            // (the subject names them): one finding however many instances it lowers (issue 42).
            .at(ceiling.from.clone())
            .about(subject),
        );
    }
    (level, outcome)
}

/// R5-R8 for one workload of an instance.
fn resolve_workload(
    cluster: &ClusterContext<'_>,
    instance: &Instance,
    groups: &[GroupLevel],
    package: &Package,
    index: usize,
    workload: &Workload,
    diagnostics: &mut Diagnostics,
) -> InstanceWorkload {
    let name = workload.name();
    let subject = Subject { workload: Some(name.to_string().into()), ..instance.subject.clone() };
    // A group's member starts from the group's level (the instance's after the group's ceiling).
    let start = workload.group.and_then(|g| groups.iter().find(|ig| ig.group == g)).map(|ig| &ig.level);
    // R5: a workload ceiling lowers this workload only, recorded in its trail (K0308 is said once per
    // package and cluster from the trails, `super::ceilings`).
    let (level, ceiling) = meet_ceiling(workload.ceiling.as_ref(), start.unwrap_or(&instance.level));
    let (replicas, replicas_from, autoscaler) =
        replicas_at(cluster.name, &instance.name, workload, level.value, &subject, diagnostics);
    let replicas_location = match (&replicas_from, &workload.mapping_at) {
        (ReplicaSource::Autoscaler { at }, _) | (_, Some(at)) => at.clone(),
        (_, None) => workload.spec_replicas_at.clone(),
    };
    // A workload scaled to zero runs no pods: no level to hold (R8 does not apply).
    if !matches!(replicas_from, ReplicaSource::ScaledToZero { .. }) {
        check_replicas(package, workload, level.value, replicas, replicas_location.clone(), &subject, diagnostics);
        // Only a majority is checked (the name is formatted for each workload of a fleet otherwise).
        if workload.group.is_none() && workload.survive == crate::load::package::Survive::Majority {
            let what = format!("workload `{name}`");
            let at = workload.survive_at.clone().unwrap_or(replicas_location);
            let domains = Domains { zones: cluster.substrate.zones.as_ref().map(Vec::len), nodes: cluster.nodes };
            check_majority(
                &what,
                workload.survive,
                level.value,
                replicas,
                &domains,
                at,
                Some(&level.from),
                &subject,
                diagnostics,
            );
        }
    }
    InstanceWorkload {
        workload: index,
        level,
        replicas,
        autoscaler,
        trail: WorkloadTrail { ceiling, replicas: replicas_from },
    }
}

/// R6: replicas from the step function, else the manifest's; under an autoscaler, its minimum with the
/// level's count as the floor. [`workload_at`] runs the same steps for a level the instance is not at.
fn replicas_at(
    cluster: &str,
    instance: &str,
    workload: &Workload,
    level: Level,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> (u32, ReplicaSource, Option<super::model::AutoscaledRange>) {
    let (replicas, replicas_from) = match workload.replicas_at(level) {
        (0, ReplicaSource::Manifest { at, defaulted: false }) if workload.autoscaler.is_none() => {
            (0, ReplicaSource::ScaledToZero { at })
        }
        other => other,
    };
    match &workload.autoscaler {
        Some(autoscaler) => {
            let context =
                super::autoscaler::FloorContext { cluster, instance, workload: &workload.view, level, subject };
            let (count, from, range) =
                super::autoscaler::floor(autoscaler, replicas, replicas_from, &context, diagnostics);
            (count, from, Some(range))
        }
        None => (replicas, replicas_from, None),
    }
}

/// What one workload of an instance would run at if the instance requested `requested`: the level after
/// the package's ceiling (R4), its group's and its own (R5), and the replica count (R6 with the autoscaler
/// floor). The same functions resolve decides the instance's own level and count with, so `kix capacity`
/// cannot drift from a build at that level; their findings are not the instance's and are dropped.
pub fn workload_at(cluster: &str, instance: &Instance, workload: &InstanceWorkload, requested: Level) -> (Level, u32) {
    let package = &instance.package;
    let entry = &package.workloads[workload.workload];
    let asked = Sourced { value: requested, from: instance.requested.from.clone() };
    let (level, _) = meet_ceiling(package.ceiling.as_ref(), &asked);
    let group = entry.group.and_then(|g| package.groups.get(g)).and_then(|g| g.ceiling.as_ref());
    let (level, _) = meet_ceiling(group, &level);
    let (level, _) = meet_ceiling(entry.ceiling.as_ref(), &level);
    let mut dropped = Diagnostics::default();
    let (replicas, _, _) = replicas_at(cluster, &instance.name, entry, level.value, &instance.subject, &mut dropped);
    (level.value, replicas)
}

/// R7 (a `none` ceiling runs one pod at a time) and R8 (level pod or more needs two replicas).
fn check_replicas(
    package: &Package,
    workload: &Workload,
    level: Level,
    replicas: u32,
    at: Location,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    let name = workload.name();
    // R7: a none ceiling means one pod at a time.
    if workload.under_none_ceiling(package) && replicas > 1 {
        diagnostics.push(
            Diagnostic::new(
                Code::CeilingNoneManyReplicas,
                format!(
                    "workload `{name}` runs under a `none` ceiling but would run {replicas} replicas at `{}`",
                    level
                ),
            )
            .at(at.clone())
            .about(subject)
            .help("a none ceiling declares the workload can run only one pod at a time; set its replicas to 1"),
        );
    }
    // R8: a level of pod or more needs two replicas (a group's member: the group's total, `check_groups`).
    if level >= Level::Pod && replicas < 2 && workload.group.is_none() {
        diagnostics.push(
            Diagnostic::new(
                Code::TooFewReplicas,
                format!(
                    "workload `{name}` resolves to level `{}` but runs {replicas} replica{}; one replica cannot \
                     survive losing a pod",
                    level,
                    kix_diag::words::s(replicas)
                ),
            )
            .at(at.clone())
            .about(subject)
            .help(r8_help(workload, replicas)),
        );
    }
}

/// R7 and R8 on each group's total, and its survival: the members' replicas added up.
fn check_groups(cluster: &ClusterContext<'_>, instance: &mut Instance, diagnostics: &mut Diagnostics) {
    let package = std::sync::Arc::clone(&instance.package);
    for index in 0..instance.groups.len() {
        let group = &package.groups[instance.groups[index].group];
        let total = instance.groups[index].replicas;
        // A group across instances is judged on all its members' pods, once they all resolved (`across`).
        if group.across {
            continue;
        }
        let level = instance.groups[index].level.value;
        let subject = instance.subject.clone();
        let name = &group.name;
        let under_none = package.ceiling.as_ref().is_some_and(|c| c.value == Level::None)
            || group.ceiling.as_ref().is_some_and(|c| c.value == Level::None);
        if under_none && total > 1 {
            diagnostics.push(
                Diagnostic::new(
                    Code::CeilingNoneManyReplicas,
                    format!(
                        "group `{name}` runs under a `none` ceiling but its members would run {total} pods at `{level}`"
                    ),
                )
                .at(group.at.clone())
                .about(&subject)
                .help("a none ceiling declares the group can run only one pod at a time; give it one pod in all"),
            );
        }
        if level >= Level::Pod && total < 2 {
            diagnostics.push(
                Diagnostic::new(
                    Code::TooFewReplicas,
                    format!(
                        "group `{name}` resolves to level `{level}` but its members run {total} pod{} in all; one pod \
                         cannot survive losing a pod",
                        kix_diag::words::s(total)
                    ),
                )
                .at(group.at.clone())
                .about(&subject)
                .help(format!(
                    "add members to [groups.{name}], give a member a mapping such as replicas = {{ none = 1, pod = 2 }}, \
                     or declare [groups.{name}.availability] max = \"none\""
                )),
            );
        }
        let domains = Domains { zones: cluster.substrate.zones.as_ref().map(Vec::len), nodes: cluster.nodes };
        let at = group.survive_at.clone().unwrap_or_else(|| group.at.clone());
        check_majority(
            &format!("group `{name}`"),
            group.survive,
            level,
            total,
            &domains,
            at,
            Some(&instance.level.from),
            &subject,
            diagnostics,
        );
    }
}

/// How to fix R8: a mapping, or (under an autoscaler) a mapping or a higher minimum.
fn r8_help(workload: &Workload, replicas: u32) -> String {
    let name = workload.name();
    match &workload.autoscaler {
        Some(a) => format!(
            "its {} {} may scale it down to {replicas}: add a mapping such as [workloads.{name}] replicas = \
                     {{ none = 1, pod = 2 }} (kix raises the autoscaler's minimum to it), or raise {}",
            a.view.kind,
            a.view.name,
            a.view.kind.min_field()
        ),
        None => format!(
            "add a mapping such as [workloads.{name}] replicas = {{ none = 1, pod = 2 }}, or, if it can only \
                     run one pod at a time, declare [workloads.{name}] availability = {{ max = \"none\" }}"
        ),
    }
}
