//! A cluster compiled in part (issue 42): after a package changed, only the instances that run it are
//! resolved and derived again; the rest of the cluster is kept as the previous build recorded it in parts
//! ([`super::parts`]), when what they share with it is unchanged.
//!
//! An instance reads, besides its cluster file's settings and its own entry, only the versions of the
//! package it names (`crate::resolve`, R13), so an instance whose own key ([`super::Inputs::own_key`]) and
//! cluster file (the frame key) are the recorded ones would compile to what was recorded: its file, its
//! findings, its line of the summary. The instances whose own key changed are compiled alone, against the
//! cluster's settings, and the rest of the record is kept only when all of these hold (else the whole
//! cluster is compiled, as before):
//! - none of them is in a group across instances (whose totals read every member);
//! - each one's footprint (`super::footprint`: what the cross-instance checks, `_shared.yaml`,
//!   `_admission.yaml` and the room check read of it) is the recorded one, so the checks across instances
//!   and the cluster's own files would say what they said;
//! - none of the recorded findings of those checks points into a package that is not one of the unchanged
//!   ones (a changed file's text may have moved under it);
//! - the findings about the cluster file itself come out as recorded (nothing of another instance hides
//!   among them), no instance compiled alone reports anything but about itself, and nothing is an error;
//! - the files of `out/<cluster>` kept are still those recorded (`crate::emit::Staging::stage_in_part`).
//!
//! The compile's output is then the same as a clean build's: the instances compiled alone give what they
//! would give in the whole cluster (their own stages read nothing of another instance), and what the
//! others and the cluster's own parts would give is what the record says, by their unchanged inputs.

use super::Inputs;
use super::footprint;
use super::parts::{self, Writer};
use crate::derive::{self, ClusterPlan, InstancePlan, Shapes};
use crate::load::ClusterSource;
use crate::resolve::{self, Acknowledged, Cluster, Packages};
use kix_diag::{Diagnostic, Diagnostics};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What a cluster compiled in part came to.
pub(crate) struct InPart<K> {
    /// All its findings: the cluster file's and the compiled instances' as found, the rest as recorded.
    pub found: Diagnostics,
    pub kept: K,
    /// Its inputs section for the next build.
    pub section: String,
    /// How staging its directory went.
    pub staged: Result<(), Diagnostic>,
}

/// What compiling in part needs of the build.
pub(crate) struct Context<'a, K> {
    pub inputs: &'a Inputs,
    pub packages: &'a Packages,
    pub shapes: &'a Shapes,
    pub staging: &'a crate::emit::Staging,
    /// What is kept of a cluster from its record (`None`: not what this build keeps).
    pub kept_of: &'a (dyn Fn(String, Option<&str>) -> Option<K> + Sync),
    /// What is kept of the cluster, updated for an instance compiled again.
    pub refresh: &'a (dyn Fn(&mut K, &InstancePlan) + Sync),
    /// What of the kept record the inputs section keeps.
    pub recorded_of: fn(&K) -> Option<String>,
}

/// The index of the instance (of `names`) a finding is about, plus one; 0 for one about no instance of them.
fn part_of(names: &HashMap<&str, usize>, diagnostic: &Diagnostic) -> usize {
    (diagnostic.subject.instance.as_deref()).and_then(|name| names.get(name)).map_or(0, |index| index + 1)
}

/// Sets aside and counts a part's acknowledged warnings.
fn acknowledged(mut found: Diagnostics, allowed: &Acknowledged) -> Diagnostics {
    found.acknowledge(|d| allowed.contains(d));
    found.count_acknowledged();
    found
}

/// What a cluster's whole compile records in parts: the findings of its resolve (`resolved`: the cluster
/// file's and each instance's), of its later stages per instance (`derived`: those about no instance go with
/// the checks across instances) and of the checks across instances (`across`), each part's acknowledged
/// warnings set aside and counted. Returns every finding left, and the record's body.
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    cluster: &Cluster,
    (resolved, derived, across): (Diagnostics, Diagnostics, Diagnostics),
    frame_key: u128,
    own_keys: &[u128],
    footprints: &[u128],
    moved: &[Vec<usize>],
    allowed: &Acknowledged,
) -> (Diagnostics, (String, usize)) {
    let names: HashMap<&str, usize> =
        cluster.instances.iter().enumerate().map(|(index, instance)| (instance.name.as_str(), index)).collect();
    let parts = cluster.instances.len() + 1;
    let mut resolved = resolved.part(parts, |d| part_of(&names, d)).into_iter();
    let mut derived = derived.part(parts, |d| part_of(&names, d)).into_iter();
    let frame = acknowledged(resolved.next().unwrap_or_default(), allowed);
    let mut cross = across;
    cross.extend(derived.next().unwrap_or_default());
    let cross = acknowledged(cross, allowed);
    let mut writer = Writer::default();
    writer.frame(frame_key, frame.acknowledged_count());
    writer.findings(&frame);
    writer.cross(cross.acknowledged_count());
    writer.findings(&cross);
    let mut all = frame;
    all.extend(cross);
    for (index, (own, later)) in resolved.zip(derived).enumerate() {
        let mut own = own;
        own.extend(later);
        let own = acknowledged(own, allowed);
        let instance = &cluster.instances[index];
        writer.instance(&instance.name, own_keys[index], footprints[index], own.acknowledged_count(), &moved[index]);
        writer.findings(&own);
        all.extend(own);
    }
    (all, writer.finish())
}

/// Each instance's footprint from its objects' part (`objects`, taken before any was shared), its plan and
/// its admission guards (`guards`, per instance; empty without `[admission]`).
pub(crate) fn footprints(
    cluster: &Cluster,
    objects: &[u128],
    plans: &[InstancePlan],
    guards: &[Vec<crate::admission::Guard>],
) -> Vec<u128> {
    (cluster.instances.iter().zip(plans).enumerate())
        .map(|(index, (instance, plan))| {
            let guards: Vec<&crate::admission::Guard> = guards.get(index).into_iter().flatten().collect();
            footprint::footprint(instance, objects[index], plan, &guards)
        })
        .collect()
}

/// Compiles `source`'s cluster in part against its recorded `section`, for the inputs `key`; `None` when
/// it cannot be (the module's conditions), and the caller compiles the whole cluster.
pub(crate) fn compile<K>(
    context: &Context<'_, K>,
    source: &ClusterSource,
    section: &str,
    key: u128,
) -> Option<InPart<K>> {
    let (parts, kept_text) = Inputs::recorded_parts(section)?;
    let inputs = context.inputs;
    if inputs.frame_key(source) != parts.frame_key {
        return None;
    }
    let mut found = Diagnostics::default();
    let file = ClusterSource { name: source.name.clone(), source: source.source.clone() }.parse(&mut found)?;
    if found.has_errors() || file.raw.instances.len() != parts.instances.len() {
        return None;
    }
    // Which instances run a package that changed (by their own keys), in the file's order.
    let mut own_keys = Vec::with_capacity(parts.instances.len());
    for (raw, part) in file.raw.instances.iter().zip(&parts.instances) {
        let own_key = inputs.own_key(raw.package.get_ref());
        let changed = own_key != part.own_key;
        if raw.name.get_ref() != part.name || (changed && raw.group.is_some()) {
            return None;
        }
        own_keys.push(changed.then_some(own_key));
    }
    let changed: HashSet<&str> =
        (parts.instances.iter().zip(&own_keys)).filter(|(_, own)| own.is_some()).map(|(part, _)| part.name).collect();
    let changed_packages: HashSet<String> = (file.raw.instances.iter())
        .filter(|raw| changed.contains(raw.name.get_ref().as_str()))
        .map(|raw| raw.package.get_ref().clone())
        .collect();
    let cluster_file = source.source.path().to_path_buf();

    // The changed instances compiled alone, against the cluster's settings.
    let mut across = Diagnostics::default();
    let only = |name: &str| changed.contains(name);
    let cluster =
        resolve::resolve_cluster_in_parts(file, context.packages, None, Some(&only), &mut found, &mut across)?;
    let fresh_names: Vec<&str> = cluster.instances.iter().map(|instance| instance.name.as_str()).collect();
    let expected: Vec<&str> =
        (parts.instances.iter().zip(&own_keys)).filter(|(_, own)| own.is_some()).map(|(part, _)| part.name).collect();
    if found.has_errors() || !across.is_empty() || fresh_names != expected {
        return None;
    }
    let recorded_of_fresh: Vec<&parts::InstancePart<'_>> =
        parts.instances.iter().filter(|part| changed.contains(part.name)).collect();
    let mut derived = Diagnostics::default();
    let mut plans = derive::derive_instances(&cluster, context.shapes, &mut derived);
    let objects: Vec<u128> = plans.iter().map(footprint::objects).collect();
    for (plan, part) in plans.iter_mut().zip(&recorded_of_fresh) {
        if part.moved.iter().any(|&index| index >= plan.planned().len()) {
            return None;
        }
        if !part.moved.is_empty() {
            plan.retain_objects(|index| !part.moved.contains(&index));
        }
    }
    let guards: Vec<Vec<crate::admission::Guard>> = match cluster.admission {
        Some(_) => (cluster.instances.iter().zip(&plans))
            .map(|(instance, plan)| crate::admission::guards_of(&cluster.name, instance, plan, &mut derived))
            .collect(),
        None => Vec::new(),
    };
    let footprints = footprints(&cluster, &objects, &plans, &guards);
    if footprints.iter().zip(&recorded_of_fresh).any(|(now, part)| *now != part.footprint) {
        return None;
    }
    let plan = ClusterPlan::of(&cluster, plans, Vec::new());
    crate::sizing::check_instances(&cluster, &plan, &mut derived);
    if derived.has_errors() {
        return None;
    }

    // The findings: the cluster file's found again (and as recorded), the compiled instances' found, the rest
    // replayed.
    let allowed = Acknowledged::of_cluster(&cluster);
    let names: HashMap<&str, usize> = fresh_names.iter().enumerate().map(|(index, name)| (*name, index)).collect();
    let count = cluster.instances.len() + 1;
    let mut resolved = found.part(count, |d| part_of(&names, d)).into_iter();
    let mut later = derived.part(count, |d| part_of(&names, d)).into_iter();
    if !later.next().unwrap_or_default().is_empty() {
        return None;
    }
    let frame = acknowledged(resolved.next().unwrap_or_default(), &allowed);
    let mut frame_lines: Vec<String> = frame.iter().map(Diagnostic::record).collect();
    let mut recorded_frame: Vec<&str> = parts.frame.findings.clone();
    frame_lines.sort_unstable();
    recorded_frame.sort_unstable();
    if frame_lines != recorded_frame || frame.acknowledged_count() != parts.frame.acknowledged {
        return None;
    }
    let cross = inputs.replay_lines(&parts.cross.findings, parts.cross.acknowledged)?;
    let unchanged_dirs: Vec<&Path> = (context.packages.valid.iter())
        .filter(|package| !changed_packages.contains(&package.name))
        .map(|package| package.dir.as_path())
        .collect();
    let kept_place = |path: &Path| path == cluster_file || unchanged_dirs.iter().any(|dir| path.starts_with(dir));
    let points_into_change = cross.iter().any(|d| {
        let places = d.location().into_iter().chain(d.secondary().map(|(location, _)| location));
        places.map(|location| location.path()).any(|path| !kept_place(path))
    });
    if points_into_change {
        return None;
    }
    let mut fresh_own: Vec<Diagnostics> = resolved
        .zip(later)
        .map(|(mut own, later)| {
            own.extend(later);
            acknowledged(own, &allowed)
        })
        .collect::<Vec<_>>();
    fresh_own.reverse();

    let mut kept = (context.kept_of)(source.name.clone(), kept_text)?;
    for plan in &plan.instances {
        (context.refresh)(&mut kept, plan);
    }
    let mut writer = Writer::default();
    writer.frame(parts.frame_key, frame.acknowledged_count());
    writer.findings(&frame);
    writer.cross(parts.cross.acknowledged);
    writer.lines(&parts.cross.findings);
    let mut all = frame;
    all.extend(cross);
    let mut fresh_index = 0;
    for (part, own_key) in parts.instances.iter().zip(&own_keys) {
        match own_key {
            Some(own_key) => {
                let own = fresh_own.pop()?;
                writer.instance(part.name, *own_key, footprints[fresh_index], own.acknowledged_count(), &part.moved);
                writer.findings(&own);
                all.extend(own);
                fresh_index += 1;
            }
            None => {
                writer.instance(part.name, part.own_key, part.footprint, part.block.acknowledged, &part.moved);
                writer.lines(&part.block.findings);
                all.extend(inputs.replay_lines(&part.block.findings, part.block.acknowledged)?);
            }
        }
    }
    let section = Inputs::section_in_parts(key, writer.finish(), (context.recorded_of)(&kept).as_deref());
    let fresh: Vec<&InstancePlan> = plan.instances.iter().collect();
    let staged = match context.staging.stage_in_part(&source.name, &fresh) {
        Ok(true) => Ok(()),
        Ok(false) => return None,
        Err(failed) => Err(failed),
    };
    Some(InPart { found: all, kept, section, staged })
}
