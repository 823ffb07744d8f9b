//! `kix explain --cluster NAME --instance NAME [--workload NAME] [--level L]`:
//! why an instance got its level, replicas, spread constraints, budget and
//! requests, step by step, each step with the file and line it came from.
//! With `--level`, what it would get at level L: the compile runs with the
//! instance's request handed to resolve in place of its entry's
//! ([`kix_compiler::compile::WhatIf`]), so resolve and derive decide it as a build
//! of a cluster file asking L would, and nothing is written.
//!
//! It reads the resolved model and the derived plans, never re-deciding
//! anything: the level and replica steps are the decision trail resolve
//! recorded as it decided (`resolve::model::LevelTrail`, `WorkloadTrail`:
//! who requested the level, the substrate check, each ceiling, the replica
//! step), so what it prints is what `kix build` did. Every diagnostic about
//! the instance (or the workload) is listed with it.

use kix_compiler::compile::{CompiledCluster, CompiledInstance, Selection, WhatIf, compile_clusters};
use kix_compiler::derive::{BudgetReason, GroupBudgetReason, MinDomainsReason, SpreadReason, WorkloadPlan};
use kix_compiler::resolve::{
    Ceiling, Cluster, Instance, InstanceGroup, InstanceWorkload, ReplicaSource, RequestedBy, Support, Workload,
};
use kix_diag::{Diagnostic, Diagnostics, Location};
use kix_kube::level::Level;
use serde::Serialize;

/// What to explain.
#[derive(Clone, Debug)]
pub struct ExplainRequest {
    pub selection: Selection,
    pub cluster: String,
    pub instance: String,
    /// Only this workload (by `metadata.name`); all of them when `None`.
    pub workload: Option<String>,
    /// What the instance would get if it requested this level (the files are not changed).
    pub level: Option<Level>,
}

/// One decision: what was decided, why, and where that came from.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub step: &'static str,
    pub value: String,
    pub why: String,
    /// Where the setting behind it is written, when one is (`file:line:column` in the text).
    pub from: Option<Place>,
}

/// A place in a file, as fields (the JSON of every location kix prints): `line` and `column` are absent
/// when the place is a whole file.
#[derive(Clone, Debug, Serialize)]
pub struct Place {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, ":{line}:{column}"),
            _ => Ok(()),
        }
    }
}

/// The derivation of one instance.
#[derive(Clone, Debug, Serialize)]
pub struct Derivation {
    pub cluster: String,
    pub instance: String,
    pub namespace: String,
    pub package: String,
    pub version: String,
    /// With `--level`: that this is a what-if at that level, and whether a ceiling caps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_if: Option<String>,
    pub steps: Vec<Step>,
    pub workloads: Vec<WorkloadDerivation>,
    /// The diagnostics about the instance (or the chosen workload), with the acknowledged ones set aside
    /// (the text shows both, the JSON document lists them as `diagnostics`).
    #[serde(skip)]
    pub diagnostics: Diagnostics,
}

/// The derivation of one workload of the instance.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadDerivation {
    pub workload: String,
    pub steps: Vec<Step>,
}

/// Why `explain` could not run: the compile failed, or the names do not exist.
#[derive(Debug)]
pub enum ExplainError {
    /// The tree does not compile; its diagnostics say why.
    Compile(Diagnostics),
    /// No such cluster, instance or workload; the message lists what there is.
    Unknown(String),
}

/// Compiles the selection and explains one instance of it.
pub fn explain(request: &ExplainRequest) -> Result<Derivation, ExplainError> {
    let what_if = request.level.map(|level| WhatIf {
        cluster: request.cluster.clone(),
        instance: request.instance.clone(),
        level,
    });
    let selection = Selection { clusters: vec![request.cluster.clone()], what_if, ..request.selection.clone() };
    let compiled = compile_clusters(&selection);
    // The names the user asked for, found once; from there everything is joined by index.
    let find = || -> Result<(&CompiledCluster, CompiledInstance<'_>), String> {
        let names = |list: Vec<&str>| if list.is_empty() { "none".to_string() } else { list.join(", ") };
        let cluster =
            compiled.clusters.iter().find(|c| c.resolved.name == request.cluster).ok_or_else(|| {
                format!("no cluster `{}` compiled (clusters/{}.toml)", request.cluster, request.cluster)
            })?;
        let instance = cluster.instances().find(|i| i.resolved.name == request.instance).ok_or_else(|| {
            let there: Vec<&str> = cluster.instances().map(|i| i.resolved.name.as_str()).collect();
            format!(
                "cluster `{}` has no instance `{}`; its instances: {}",
                cluster.resolved.name,
                request.instance,
                names(there)
            )
        })?;
        Ok((cluster, instance))
    };
    let (cluster, instance) = match find() {
        Ok(found) => found,
        Err(_) if compiled.diagnostics.has_errors() => return Err(ExplainError::Compile(compiled.diagnostics)),
        Err(message) => return Err(ExplainError::Unknown(message)),
    };
    // `--workload`, as the user typed it.
    if let Some(wanted) = &request.workload
        && !instance.plan.workloads.iter().any(|w| &w.name == wanted)
    {
        let there: Vec<&str> = instance.plan.workloads.iter().map(|w| w.name.as_str()).collect();
        return Err(ExplainError::Unknown(format!(
            "instance `{}` has no Deployment or StatefulSet `{wanted}`; its workloads: {}",
            instance.resolved.name,
            if there.is_empty() { "none".to_string() } else { there.join(", ") }
        )));
    }
    let mut derivation = derivation(cluster, instance, request.workload.as_deref(), &compiled.diagnostics);
    derivation.what_if = request.level.map(|level| what_if_note(&cluster.resolved, instance.resolved, level));
    Ok(derivation)
}

/// The what-if banner: the level asked, and each ceiling that caps it (the package's, a workload's).
fn what_if_note(cluster: &Cluster, instance: &Instance, asked: Level) -> String {
    let mut note = format!(
        "what-if at level `{asked}`: what the instance would get if its entry in clusters/{}.toml requested \
         `{asked}` (no file is changed)",
        cluster.name
    );
    if instance.level.value < asked {
        note.push_str(&format!("; the package ceiling caps `{asked}` at `{}`", instance.level.value));
    }
    let package = &instance.package;
    let capped: Vec<String> = instance
        .workloads
        .iter()
        .filter(|w| w.level.value < instance.level.value)
        .map(|w| format!("{} at `{}`", package.workloads[w.workload].name(), w.level.value))
        .collect();
    if !capped.is_empty() {
        note.push_str(&format!("; workload ceilings cap {}", capped.join(", ")));
    }
    note
}

fn at(location: &Location) -> Place {
    Place { file: location.path().display().to_string(), line: location.line(), column: location.column() }
}

fn step(step: &'static str, value: impl Into<String>, why: impl Into<String>, from: Option<&Location>) -> Step {
    Step { step, value: value.into(), why: why.into(), from: from.map(at) }
}

/// The derivation of one compiled instance (its workload named `only`, when one is), with the findings about
/// it among `diagnostics`: every step read from what resolve and derive recorded.
pub fn derivation(
    compiled: &CompiledCluster,
    compiled_instance: CompiledInstance<'_>,
    only: Option<&str>,
    diagnostics: &Diagnostics,
) -> Derivation {
    let (cluster, instance, plan) = (&compiled.resolved, compiled_instance.resolved, compiled_instance.plan);
    let package = &instance.package;
    let trail = &instance.trail;
    let mut steps = Vec::new();
    steps.push(step(
        "requested level",
        trail.requested.level.value.as_str(),
        match trail.requested.by {
            RequestedBy::Instance => "the instance's own availability (R2)",
            RequestedBy::Cluster => "the cluster's availability (R2)",
            RequestedBy::WhatIf => "asked with --level, in place of the files' level: a what-if (R2)",
        },
        Some(&trail.requested.level.from),
    ));
    steps.extend(substrate_steps(cluster, instance));
    steps.push(step(
        "package",
        format!("{} {} ({})", package.name, package.version, package.dir.display()),
        match &instance.version_requirement {
            Some(requirement) => format!("the highest version matching `{}` (R13)", requirement.value),
            None => "the highest release, no version requirement (R13)".to_string(),
        },
        instance.version_requirement.as_ref().map(|r| &r.from),
    ));
    steps.push(match &trail.package_ceiling {
        Ceiling::Lowered { max, from } => step(
            "package ceiling",
            max.value.as_str(),
            format!("meta.availability.max is below `{from}`: the instance is lowered (R4)"),
            Some(&max.from),
        ),
        Ceiling::NotBelow(max) => {
            step("package ceiling", max.value.as_str(), "not below the requested level (R4)", Some(&max.from))
        }
        Ceiling::Undeclared => {
            step("package ceiling", "no ceiling", "the package declares no meta.availability.max (R4)", None)
        }
    });
    steps.push(step("resolved level", instance.level.value.as_str(), "", Some(&instance.level.from)));
    steps.push(step("namespace", instance.namespace.as_str(), "", None));
    steps.push(step(
        "requests",
        crate::capacity::requests_text(&crate::capacity::instance_requests(plan)),
        "every workload's pods at its level, as the scheduler counts them",
        None,
    ));
    steps.extend(instance.groups.iter().flat_map(|resolved| group_steps(instance, resolved)));

    let workloads = compiled_instance
        .workloads()
        // `--workload`, as the user typed it.
        .filter(|w| only.is_none_or(|name| w.plan.name == name))
        .map(|w| workload_derivation(cluster, instance, w.workload, w.resolved, w.plan))
        .collect();
    let acknowledged = diagnostics.acknowledged().iter().filter(|d| about(d, cluster, instance, only));
    let mut own = Diagnostics::default();
    diagnostics
        .iter()
        .chain(acknowledged.clone())
        .filter(|d| about(d, cluster, instance, only))
        .for_each(|d| own.push(d.clone()));
    own.acknowledge(|d| acknowledged.clone().any(|a| a == d));
    Derivation {
        cluster: cluster.name.clone(),
        instance: instance.name.clone(),
        namespace: instance.namespace.clone(),
        package: package.name.clone(),
        version: package.version.to_string(),
        what_if: None,
        steps,
        workloads,
        diagnostics: own,
    }
}

/// A `[groups.X]` of the instance: its selector, level, pods and survival, and each member with the
/// pattern that made it one.
fn group_steps(instance: &Instance, resolved: &InstanceGroup) -> Vec<Step> {
    let package = &instance.package;
    let group = &package.groups[resolved.group];
    let selector = kix_compiler::resolve::labels_text(&group.selector);
    let mut steps = vec![match (&instance.across, group.across) {
        (Some(across), true) => step(
            "group",
            group.name.as_str(),
            format!(
                "across instances {} (the cluster file's group `{}`; {} emits its budget), selector {selector}: the \
                 workload's matchLabels and the group label kix gives each member's pod template",
                across.members.join(", "),
                across.name,
                across.members.first().map_or("none", String::as_str)
            ),
            Some(&across.at),
        ),
        _ => step(
            "group",
            group.name.as_str(),
            format!("selector {selector}: the labels every member's pod template carries with the same value"),
            Some(&group.at),
        ),
    }];
    steps.push(match &resolved.ceiling {
        Ceiling::Lowered { max, from } => step(
            "group level",
            max.value.as_str(),
            format!("the group's availability.max is below `{from}`: every member is lowered"),
            Some(&max.from),
        ),
        _ => step("group level", resolved.level.value.as_str(), "the instance's level", None),
    });
    steps.push(step(
        "group pods",
        resolved.replicas.to_string(),
        format!("the members' replicas added up, which R7, R8 and survive = \"{}\" judge", group.survive.as_str()),
        group.survive_at.as_ref(),
    ));
    for member in &group.members {
        let workload = &package.workloads[member.workload];
        let replicas = instance.workloads.iter().find(|w| w.workload == member.workload).map_or(0, |w| w.replicas);
        let why = if group.across {
            "this instance's copy of the workload, named after the instance; the other members run theirs"
        } else {
            "matched by the group's workloads pattern"
        };
        steps.push(step(
            "member",
            format!("{} {} x{replicas}", workload.kind().as_str(), workload.name()),
            why,
            Some(&member.pattern_at),
        ));
    }
    steps
}

/// Whether a diagnostic is about this instance (and workload, when one is chosen). Diagnostics carry the
/// names of what they are about (their `Subject`), so this is the one comparison of names explain makes
/// beside the names the user asked for.
fn about(diagnostic: &Diagnostic, cluster: &Cluster, instance: &Instance, only: Option<&str>) -> bool {
    let subject = &diagnostic.subject;
    let cluster_matches = subject.cluster.as_deref() == Some(cluster.name.as_str());
    let instance_matches = subject.instance.as_deref().is_none_or(|i| i == instance.name);
    let workload_matches = only.is_none_or(|w| subject.workload.as_deref().is_none_or(|sw| sw == w));
    cluster_matches && instance_matches && workload_matches
}

/// R1 and R3: the declared capabilities, what they confirm, and whether that carries the requested level, as
/// resolve checked it.
fn substrate_steps(cluster: &Cluster, instance: &Instance) -> Vec<Step> {
    let substrate = &cluster.substrate;
    let check = &instance.trail.substrate;
    let multi_node = match substrate.multi_node {
        Some(true) => "multiNode = true".to_string(),
        Some(false) => "multiNode = false".to_string(),
        None => "multiNode not declared".to_string(),
    };
    let zones = match &substrate.zones {
        Some(zones) => format!("availabilityZones = [{}]", zones.join(", ")),
        None => "availabilityZones not declared".to_string(),
    };
    let confirms = match check.confirmed {
        Some(level) => format!("confirms up to `{level}` (R1)"),
        None => "confirms nothing above `none`, rules nothing out (R1)".to_string(),
    };
    let requested = check.level;
    let support = match &check.support {
        Support::Supported => format!("`{requested}` is supported (R3)"),
        Support::Unsupported(why) => format!("`{requested}` is not supported: {why} (R3)"),
        Support::Unverified(what) => format!("`{requested}` cannot be verified: {what} (R3, a warning)"),
    };
    vec![
        step("multiNode", multi_node, confirms, cluster.multi_node_at.as_ref()),
        step("zones", zones, support, cluster.zones_at.as_ref()),
    ]
}

fn workload_derivation(
    cluster: &Cluster,
    instance: &Instance,
    workload: &Workload,
    resolved: &InstanceWorkload,
    plan: &WorkloadPlan,
) -> WorkloadDerivation {
    let mut steps = Vec::new();
    steps.push(match &resolved.trail.ceiling {
        Ceiling::Lowered { max, from } => step(
            "workload ceiling",
            max.value.as_str(),
            format!("availability.max is below `{from}`: this workload alone is lowered (R5)"),
            Some(&max.from),
        ),
        Ceiling::NotBelow(max) => {
            step("workload ceiling", max.value.as_str(), "not below the instance's level (R5)", Some(&max.from))
        }
        Ceiling::Undeclared => {
            step("workload ceiling", "no ceiling", "the workload declares no availability.max (R5)", None)
        }
    });
    steps.push(step("level", resolved.level.value.as_str(), "", Some(&resolved.level.from)));
    steps.push(match &resolved.trail.replicas {
        ReplicaSource::Mapping { step: level, at } => step(
            "replicas",
            resolved.replicas.to_string(),
            format!("the mapping's `{level}` step, the nearest at or below `{}` (R6)", resolved.level.value),
            Some(at),
        ),
        ReplicaSource::Manifest { at, defaulted } => step(
            "replicas",
            resolved.replicas.to_string(),
            if *defaulted {
                "1, the default of an absent spec.replicas: no mapping step at or below the level (R6)"
            } else {
                "the manifest's spec.replicas: no mapping step at or below the level (R6)"
            },
            Some(at),
        ),
        ReplicaSource::Autoscaler { at } => step(
            "replicas",
            resolved.replicas.to_string(),
            "the minimum of the workload's autoscaler, which owns spec.replicas: no mapping step above it",
            Some(at),
        ),
        ReplicaSource::ScaledToZero { at } => step(
            "replicas",
            "0",
            "the manifest's spec.replicas: scaled to zero, it runs no pods, so kix passes it through unchanged \
             (no spread, no budget)",
            Some(at),
        ),
    });
    if let (Some(autoscaler), Some(range)) = (&workload.autoscaler, resolved.autoscaler) {
        let view = &autoscaler.view;
        steps.push(step(
            "autoscaler",
            format!("{} {}: {} {}..{}", view.kind, view.name, view.kind.min_field(), range.min, range.max),
            if range.raised {
                "raised to the level's replica count; spec.replicas is left to the autoscaler"
            } else {
                "as written; spec.replicas is left to the autoscaler"
            },
            Some(&autoscaler.min_at),
        ));
    }
    if let Some(group) = &plan.group {
        steps.push(step(
            "group",
            group.as_str(),
            "a member: spread over and budgeted with the group's pods, judged on their total",
            None,
        ));
    }
    steps.extend(spread_steps(cluster, workload, plan));
    steps.push(budget_step(instance, workload, plan));
    let cost = crate::capacity::workload_requests(plan);
    steps.push(step(
        "requests",
        crate::capacity::requests_text(&cost),
        format!("{} pod{}", cost.replicas, kix_diag::words::s(cost.replicas)),
        None,
    ));
    WorkloadDerivation { workload: format!("{}/{}", workload.kind().as_str(), workload.name()), steps }
}

/// R9 and R11: each derived constraint and why it is hard or soft, or why there are none, as placement
/// recorded it.
fn spread_steps(cluster: &Cluster, workload: &Workload, plan: &WorkloadPlan) -> Vec<Step> {
    let none = |why: &str| vec![step("spread", "none", why, None)];
    match plan.spread_reason {
        SpreadReason::ScaledToZero => return none("scaled to zero, it runs no pods to spread"),
        SpreadReason::Explicit { custom: true } => {
            return none("the resource sets its operator's spread constraints field: kix leaves placement alone (R11)");
        }
        SpreadReason::Explicit { custom: false } => {
            return none("the pod template has its own topologySpreadConstraints: kix leaves placement alone (R11)");
        }
        SpreadReason::Unplaceable => {
            return none(
                "its kind names no field where its operator takes spread constraints: kix cannot place it (K0436)",
            );
        }
        SpreadReason::FewerThanTwoPods => return none("one replica has nothing to spread (R9)"),
        SpreadReason::SingleNode => return none("the cluster is declared single-node (R9)"),
        SpreadReason::Derived => {}
    }
    let domains = &cluster.domains;
    plan.spreads
        .iter()
        .map(|spread| {
            let key = &spread.key;
            let role = if *key == domains.node {
                "the node key"
            } else if *key == domains.zone {
                "the zone key"
            } else {
                "an extra failure-domain key"
            };
            let why = if spread.hard {
                format!("{role}, the key level `{}` names: DoNotSchedule", plan.level)
            } else {
                format!("{role}, spread best-effort at level `{}`: ScheduleAnyway", plan.level)
            };
            let extra = match &plan.group {
                Some(group) => format!(", selecting the pods of group {group}"),
                None => workload
                    .kind()
                    .template_hash_label()
                    .map(|key| format!(", matchLabelKeys [{key}]"))
                    .unwrap_or_default(),
            };
            step("spread", format!("{key} maxSkew 1{extra}"), why, None)
        })
        .chain(plan.min_domains.as_ref().map(|reason| min_domains_step(cluster, reason)))
        .collect()
}

/// R9 (issue 39): why the hard spread has no minDomains, as placement recorded it.
fn min_domains_step(cluster: &Cluster, reason: &MinDomainsReason) -> Step {
    let strands = "during a loss below it the scheduler counts the global minimum as 0 and holds the replacements Pending (podtopologyspread/filtering.go), which the domain-loss scenario fails";
    let why = match reason {
        MinDomainsReason::EveryDomainHasNodes => {
            format!("while every domain has nodes it changes nothing, and {strands} (R9)")
        }
        MinDomainsReason::ZonesAtZero { zones } => format!(
            "zone{} {} {} no node yet and {} pools may add some: minDomains {} would hold a pod for {} until the autoscaler adds a node there (KEP-3022), but {strands} (R9)",
            kix_diag::words::s(zones.len()),
            zones.join(", "),
            if zones.len() == 1 { "has" } else { "have" },
            if zones.len() == 1 { "its" } else { "their" },
            cluster.substrate.zone_count(),
            if zones.len() == 1 { "it" } else { "them" },
        ),
    };
    step("minDomains", "none", why, None)
}

/// R10: the budget kix derives, or why there is none, as placement recorded it.
fn budget_step(instance: &Instance, workload: &Workload, plan: &WorkloadPlan) -> Step {
    let package = &instance.package;
    let why = match plan.budget {
        BudgetReason::Group(reason) => {
            let group = &package.groups[workload.group.expect("a group's member")];
            let (value, why) = match reason {
                GroupBudgetReason::Shipped => (
                    "none derived".to_string(),
                    "a PodDisruptionBudget shipped in the package selects the group's pods (R10)".to_string(),
                ),
                GroupBudgetReason::Derived => (
                    format!("PodDisruptionBudget {} (the group's)", group.name),
                    "derived for the group (R10), emitted with its first member; unhealthyPodEvictionPolicy "
                        .to_string()
                        + group.eviction_policy.as_str(),
                ),
                GroupBudgetReason::EmittedByAnother => (
                    format!("PodDisruptionBudget {} (the group's)", group.name),
                    "the group's budget covers its pods; a member gets none of its own".to_string(),
                ),
                GroupBudgetReason::FewerThanTwoPods => {
                    ("none".to_string(), "the group runs one pod: a budget would block every drain (R10)".to_string())
                }
                GroupBudgetReason::SingleNode => (
                    "none".to_string(),
                    "the cluster is declared single-node: a budget would block the drain of its only node".to_string(),
                ),
                GroupBudgetReason::NoPlacedMember => (
                    "none".to_string(),
                    "every member brings its own placement: kix derives no budget for the group (R11)".to_string(),
                ),
            };
            return step("budget", value, why, Some(&group.at));
        }
        BudgetReason::Derived => {
            let policy = workload.eviction_policy.as_str();
            let why = match &workload.eviction_policy_at {
                Some(_) => "set in [workloads.X.pdb]".to_string(),
                None => format!("the default for a {}", workload.kind().as_str()),
            };
            return step(
                "budget",
                format!(
                    "PodDisruptionBudget {} maxUnavailable 1, unhealthyPodEvictionPolicy {policy}",
                    workload.name()
                ),
                format!("derived (R10); the policy is {why}"),
                workload.eviction_policy_at.as_ref(),
            );
        }
        BudgetReason::Shipped { document } => {
            let document = &package.documents[document];
            let (from, pdb) = (document.location(), document.budget.as_ref().expect("a shipped budget"));
            return step(
                "budget",
                "none derived",
                format!("PodDisruptionBudget {} shipped in the package selects its pods (R10)", pdb.name),
                Some(&from),
            );
        }
        BudgetReason::ScaledToZero => "scaled to zero, it runs no pods to protect",
        BudgetReason::Operator => "its operator makes its own PodDisruptionBudget (its kind's profile, R10)",
        BudgetReason::Explicit => "the workload brings its own placement (R11)",
        BudgetReason::FewerThanTwoPods => "one replica: a budget would block every drain (R10)",
        BudgetReason::SingleNode => {
            "the cluster is declared single-node: a budget would block the drain of its only node"
        }
    };
    step("budget", "none", why, None)
}
