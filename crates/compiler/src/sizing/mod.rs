//! Sizing findings at build, from the arithmetic `kix capacity` shows (issue 22): at level zone, a
//! replica count that is not a multiple of the declared zone count (K0460: the uneven split and the loss
//! it costs) and fewer replicas than zones under a hard zone spread (K0461: a zone holds none).
//!
//! R replicas spread evenly over Z zones (maxSkew 1) put ceil(R/Z) pods in the heaviest zones; losing one
//! of those leaves R - ceil(R/Z), the worst single zone loss. An availability group is judged once, by its
//! members' total, as its spread and budget count them.
//!
//! Workloads and groups that must keep a majority (`survive = "majority"`) are left out: K0425 does their
//! arithmetic, and its advice (odd counts, e.g. 5 over 3 zones) is what a quorum needs, where "a multiple
//! of the zone count" (6) would be the wrong advice.

pub mod cost;
pub mod room;
pub mod split;

use crate::derive::ClusterPlan;
use crate::load::package::Survive;
use crate::resolve::{Cluster, Instance};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use kix_kube::level::Level;
use split::{even_split, worst_zone_loss};

/// One workload or group judged at level zone.
struct Judged<'a> {
    what: String,
    replicas: u32,
    hard_zone_spread: bool,
    at: Location,
    subject: &'a Subject,
}

/// K0460 and K0461 (K0462, the room, is `room::check`): each instance's own (its group's totals across instances settled in resolve), so a
/// rebuild that compiles some instances of a cluster judges only those (issue 42).
pub fn check_instances(cluster: &Cluster, plan: &ClusterPlan, diagnostics: &mut Diagnostics) {
    let Some(zones) = cluster.substrate.zones.as_ref().map(Vec::len).filter(|z| *z >= 2) else { return };
    // The plan's instances are the resolved ones derived, in the same order.
    for (instance, instance_plan) in cluster.instances.iter().zip(&plan.instances) {
        // Whether any of the package's workloads `members` (by index) got a hard zone spread.
        let hard = |members: &[usize]| {
            instance_plan
                .workloads
                .iter()
                .filter(|w| members.contains(&instance.workloads[w.resolved].workload))
                .any(|w| w.spreads.iter().any(|s| s.hard && s.key == cluster.domains.zone))
        };
        for judged in judged(instance, zones, &hard) {
            report(&cluster.name, &instance.name, zones, &judged, diagnostics);
        }
    }
}

/// The workloads (outside groups) and groups of an instance that run pods at level zone in a count that
/// does not split evenly over `zones` (an even split has nothing to say: most of a fleet's workloads).
fn judged<'a>(instance: &'a Instance, zones: usize, hard: &dyn Fn(&[usize]) -> bool) -> Vec<Judged<'a>> {
    let uneven = |replicas: u32| replicas as usize % zones != 0;
    let package = &instance.package;
    let mut out = Vec::new();
    for resolved in &instance.workloads {
        let workload = &package.workloads[resolved.workload];
        if workload.group.is_some()
            || workload.survive == Survive::Majority
            || resolved.level.value != Level::Zone
            || resolved.replicas == 0
            || !uneven(resolved.replicas)
        {
            continue;
        }
        out.push(Judged {
            what: format!("workload `{}`", workload.name()),
            replicas: resolved.replicas,
            hard_zone_spread: hard(&[resolved.workload]),
            at: workload.mapping_at.clone().unwrap_or_else(|| workload.spec_replicas_at.clone()),
            subject: &instance.subject,
        });
    }
    for group in &instance.groups {
        let declared = &package.groups[group.group];
        let judged = group.level.value == Level::Zone && group.replicas > 0 && uneven(group.replicas);
        if declared.survive == Survive::Majority || !judged {
            continue;
        }
        let members: Vec<usize> = declared.members.iter().map(|m| m.workload).collect();
        out.push(Judged {
            what: format!("group `{}`", declared.name),
            replicas: group.replicas,
            hard_zone_spread: hard(&members),
            at: declared.at.clone(),
            subject: &instance.subject,
        });
    }
    out
}

fn report(cluster: &str, instance: &str, zones: usize, judged: &Judged<'_>, diagnostics: &mut Diagnostics) {
    let replicas = judged.replicas as usize;
    let split = even_split(replicas, zones).iter().map(usize::to_string).collect::<Vec<_>>().join("+");
    let lost = worst_zone_loss(replicas, zones);
    let prefix = format!("cluster `{cluster}` instance `{instance}`: {}", judged.what);
    let percent = |part: usize, of: usize| (part * 100 + of / 2) / of;
    if replicas < zones && judged.hard_zone_spread {
        diagnostics.push(
            Diagnostic::new(
                Code::FewerReplicasThanZones,
                format!(
                    "{prefix} runs {replicas} replica{} over {zones} zones under a hard zone spread: the split is \
                     {split}, a zone holds none, and losing a zone that holds one takes 1 of {replicas} ({}%)",
                    kix_diag::words::s(replicas),
                    percent(1, replicas)
                ),
            )
            .at(judged.at.clone())
            .about(judged.subject)
            .help(format!(
                "run {zones} replicas (or a multiple of {zones}): each zone then holds its share and a zone loss takes \
                 1/{zones}"
            )),
        );
    } else if replicas % zones != 0 && replicas >= zones {
        let below = replicas / zones * zones;
        let above = below + zones;
        let left = replicas - lost;
        diagnostics.push(
            Diagnostic::new(
                Code::UnevenZoneSplit,
                format!(
                    "{prefix} runs {replicas} replicas over {zones} zones: the split is {split}, so losing a zone \
                     with {lost} takes {lost} of {replicas} ({}%) where an even split loses 1/{zones}; {left} {} left",
                    percent(lost, replicas),
                    if left == 1 { "is" } else { "are" }
                ),
            )
            .at(judged.at.clone())
            .about(judged.subject)
            .help(format!(
                "run {below} replicas ({} left after a zone loss) or {above} ({} left): a multiple of {zones} \
                 splits evenly",
                below - below / zones,
                above - above / zones
            )),
        );
    }
}
