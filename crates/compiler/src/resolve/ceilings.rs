//! K0308 (R5), said once per package and cluster: the workloads a package caps below the level its
//! instances run at.
//!
//! A workload's `availability.max` is the package author's decision, the same for every instance,
//! so repeating it per workload, instance and cluster (18 warnings for sock-shop) said one thing many
//! times. It is still said once: the cluster's operator asked for a level and part of the package
//! does not get it, which `kix verify` and `kix explain` show only when asked. One warning per
//! package and cluster names every capped workload with its ceiling and the instances concerned, at
//! the first workload's ceiling, the others as secondary labels. Instances that acknowledge K0308
//! (`allow`) are said apart, in one warning of their own, which their `allow` acknowledges (so it is
//! counted, not printed); the cluster's own `allow` acknowledges both as it acknowledges any.

use super::model::{Ceiling, Instance};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use std::collections::BTreeMap;

/// One K0308 per package of the cluster whose workload ceilings lowered a workload's level.
pub fn report(cluster: &str, instances: &[Instance], diagnostics: &mut Diagnostics) {
    // Package name -> (instances, in name order; workload -> (ceiling, its location, the level it lowered)).
    type Capped = (Vec<String>, BTreeMap<String, (String, Location, String)>);
    let mut packages: BTreeMap<(&str, bool), Capped> = BTreeMap::new();
    for instance in instances {
        let acknowledges = instance.allow.contains(&Code::WorkloadCeiling);
        for resolved in &instance.workloads {
            let Ceiling::Lowered { max, from } = &resolved.trail.ceiling else { continue };
            let workload = instance.package.workloads[resolved.workload].name().to_string();
            let (names, workloads) = packages.entry((instance.package.name.as_str(), acknowledges)).or_default();
            if !names.contains(&instance.name) {
                names.push(instance.name.clone());
            }
            workloads.entry(workload).or_insert_with(|| (max.value.to_string(), max.from.clone(), from.to_string()));
        }
    }
    for ((package, _), (mut names, workloads)) in packages {
        names.sort();
        // By ceiling: `a` and `b` at `none`; the level they were lowered from said once when it is one.
        let mut by_ceiling: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for (name, (max, _, from)) in &workloads {
            by_ceiling.entry((max.as_str(), from.as_str())).or_default().push(format!("`{name}`"));
        }
        let froms: std::collections::BTreeSet<&str> = by_ceiling.keys().map(|(_, from)| *from).collect();
        let one_from = froms.iter().next().filter(|_| froms.len() == 1).copied();
        let listed: Vec<String> = by_ceiling
            .iter()
            .map(|((max, from), names)| match one_from {
                Some(_) => format!("{} at `{max}`", join_and(names)),
                None => format!("{} at `{max}` (not `{from}`)", join_and(names)),
            })
            .collect();
        let below =
            one_from.map_or_else(|| "below their instance's level".to_string(), |from| format!("below `{from}`"));
        let instances = match names.as_slice() {
            [one] => format!("instance `{one}`"),
            many => format!("instances {}", many.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
        };
        let count = workloads.len();
        let mut entries = workloads.into_values();
        let Some((_, first, _)) = entries.next() else { continue };
        let subject = Subject {
            cluster: Some(cluster.to_string().into()),
            instance: names.first().map(|name| name.as_str().into()),
            package: Some(package.to_string().into()),
            workload: None,
        };
        let mut diagnostic = Diagnostic::new(
            Code::WorkloadCeiling,
            format!(
                "cluster `{cluster}` {instances}: package `{package}` caps {} {below}: {}",
                if count == 1 { "1 workload".to_string() } else { format!("{count} workloads") },
                listed.join("; ")
            ),
        )
        .at(first)
        .about(&subject);
        for (_, location, _) in entries {
            diagnostic = diagnostic.with_label(location, "capped here too");
        }
        diagnostics.push(diagnostic.help(
            "the package declares these ceilings (availability.max); acknowledge them with allow = [\"K0308\"] on the \
             instance or the cluster",
        ));
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
