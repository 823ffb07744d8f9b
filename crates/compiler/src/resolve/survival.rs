//! Survival (issue 17): `survive = "majority"` on a workload or a group asks that more than half of
//! its pods keep running when one domain of its level fails. Spread with maxSkew 1 over D domains,
//! the largest domain holds ceil(N/D) of N pods, so a majority survives exactly when
//! N - ceil(N/D) > N/2. This file is the arithmetic and its diagnostics (K0425, K0426); `kix verify`
//! checks the placement itself.

use crate::load::package::Survive;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use kix_kube::level::Level;

/// Whether N pods spread with maxSkew 1 over `domains` domains keep a majority when the largest fails.
pub fn majority_survives(pods: u32, domains: u32) -> bool {
    if domains == 0 {
        return false;
    }
    let largest = pods.div_ceil(domains);
    2 * (pods - largest.min(pods)) > pods
}

/// The counts up to `limit` that keep a majority over `domains` domains.
fn passing_counts(domains: u32, limit: u32) -> Vec<u32> {
    (1..=limit).filter(|&n| majority_survives(n, domains)).collect()
}

/// What the majority check needs to know of the cluster: its declared zones and inventory nodes.
pub struct Domains {
    pub zones: Option<usize>,
    pub nodes: Option<usize>,
}

/// K0425 / K0426 for one workload or group (`what`: "workload `x`", "group `y`") of `pods` pods at `level`;
/// `level_at`, where that level is decided (the instance's `availability` or the cluster's), when known.
#[allow(clippy::too_many_arguments)] // each is one fact of the check; a struct would only rename them
pub fn check_majority(
    what: &str,
    survive: Survive,
    level: Level,
    pods: u32,
    domains: &Domains,
    at: Location,
    level_at: Option<&Location>,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    if survive != Survive::Majority || level < Level::Pod {
        return;
    }
    let (count, noun) = match level {
        Level::Zone => (domains.zones, "zones"),
        Level::Node => (domains.nodes, "nodes"),
        // At level pod one pod fails at a time: its domain is one pod.
        _ => (Some(pods as usize), "pods"),
    };
    let Some(count) = count else {
        diagnostics.push(
            Diagnostic::new(
                Code::MajorityUnchecked,
                format!(
                    "{what} must keep a majority at level `{level}`, but the cluster file does not say how many {noun} \
                     it spreads over, so kix cannot check that {pods} pods keep one through the loss of a domain"
                ),
            )
            .at(at)
            .about(subject)
            .help(if level == Level::Zone {
                "declare capabilities.availabilityZones, or run kix verify on a snapshot"
            } else {
                "declare the nodes in [[nodePools]], or run kix verify on a snapshot"
            }),
        );
        return;
    };
    let count = u32::try_from(count).unwrap_or(u32::MAX);
    if majority_survives(pods, count) {
        return;
    }
    let largest = pods.div_ceil(count.max(1));
    let passing = passing_counts(count, pods.max(count) + 6);
    let shown: Vec<String> = passing.iter().take(4).map(u32::to_string).collect();
    // The usual fix first (issue 41): the level one below, set on the instance, which keeps a majority
    // through the loss of a smaller domain; then the counts that pass, or more domains when none does
    // (over two zones the larger always holds at least half).
    let lower = match level {
        Level::Zone => Some("node"),
        Level::Node => Some("pod"),
        _ => None,
    };
    let none_passes =
        format!("no count of pods keeps a majority over {count} {noun} (the largest always holds at least half)");
    let help = match (lower, shown.is_empty()) {
        (Some(lower), true) => format!(
            "set availability = \"{lower}\" on the instance in the cluster file; {none_passes}, so the other fix is more {noun}"
        ),
        (Some(lower), false) => format!(
            "set availability = \"{lower}\" on the instance in the cluster file, or run a count that keeps a majority \
             over {count} {noun}: {}, ...",
            shown.join(", ")
        ),
        (None, true) => format!("{none_passes}: declare more {noun}"),
        (None, false) => format!("counts that keep a majority over {count} {noun}: {}, ...", shown.join(", ")),
    };
    let mut diagnostic = Diagnostic::new(
        Code::MajorityUnreachable,
        format!(
            "{what} must keep a majority, but {pods} pod{} over {count} {noun} cannot: the largest {} holds {largest}, \
             and losing it leaves {} of {pods}, not more than half",
            kix_diag::words::s(pods),
            noun.trim_end_matches('s'),
            pods - largest.min(pods)
        ),
    )
    .at(at)
    .about(subject)
    .help(help);
    if let Some(level_at) = level_at {
        diagnostic = diagnostic.with_label(level_at.clone(), format!("level `{level}` is set here"));
    }
    diagnostics.push(diagnostic);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survival_majority_arithmetic_from_the_issue() {
        for (pods, domains, expected) in [
            (3, 2, false),
            (4, 3, false),
            (2, 3, false),
            (2, 2, false),
            (3, 3, true),
            (5, 3, true),
            (6, 3, true),
            (7, 3, true),
            (5, 2, false),
            (1, 3, false),
        ] {
            assert_eq!(majority_survives(pods, domains), expected, "{pods} over {domains}");
        }
        assert_eq!(passing_counts(3, 9), vec![3, 5, 6, 7, 8, 9]);
        assert!(passing_counts(2, 20).is_empty());
    }
}
