//! What the level and replica count kix chose for an instance's workloads do to the package's own
//! update strategy and budgets, found at build time instead of only by `kix lint` or `kix verify`
//! (issue 24):
//!
//! - K0470: a Deployment with `spec.strategy.type: Recreate` resolved above level none. The
//!   Deployment controller's Recreate strategy scales the old ReplicaSet to zero before it creates
//!   the new one (pkg/controller/deployment/recreate.go, `rolloutRecreate`), so every rollout stops
//!   all pods whatever the level's replicas, spread and budget.
//! - K0471: a PodDisruptionBudget shipped in the package (R10: kix derives none for the pods it
//!   selects) whose `minAvailable` is at least the replica count kix chose, summed over the
//!   instance's workloads it selects: the disruption controller then allows no disruption
//!   (`disruptionsAllowed = currentHealthy - desiredHealthy`, pkg/controller/disruption/disruption.go,
//!   with a percentage rounded up as `getExpectedPodCount` does), so no drain of their nodes ends.
//!   `kix lint` finds the same budget as K0711 over the manifests' replica counts; here the count is
//!   the one the cluster's level gave.

use super::model::{Instance, ReplicaSource};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::int_or_percent::IntOrPercent;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;

/// K0470 and K0471 for one resolved instance.
pub fn check(cluster: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
    recreate_above_none(cluster, instance, diagnostics);
    shipped_budgets_block(cluster, instance, diagnostics);
}

/// K0470: a Recreate Deployment at level pod or higher (one scaled to zero runs no pods).
fn recreate_above_none(cluster: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
    let package = &instance.package;
    for resolved in &instance.workloads {
        let workload = &package.workloads[resolved.workload];
        let recreate = workload.view.kind == WorkloadKind::Deployment
            && workload.view.strategy().is_ok_and(|strategy| strategy.recreate);
        if !recreate || resolved.level.value <= Level::None || resolved.replicas == 0 {
            continue;
        }
        let name = workload.name();
        let subject = Subject { workload: Some(name.to_string().into()), ..instance.subject.clone() };
        let at = package.documents[workload.document].locate(&["spec", "strategy", "type"]);
        diagnostics.push(
            Diagnostic::new(
                Code::RecreateAboveNone,
                format!(
                    "cluster `{cluster}` instance `{}`: Deployment `{name}` runs at level `{}` with the Recreate \
                     strategy, which stops all {} of its pods before starting new ones on every rollout",
                    instance.name, resolved.level.value, resolved.replicas
                ),
            )
            .at(at)
            .with_label(resolved.level.from.clone(), format!("level `{}` from here", resolved.level.value))
            .help(format!(
                "use `type: RollingUpdate`, or cap it with `availability = {{ max = \"none\" }}` in [workloads.{name}]"
            ))
            .about(&subject),
        );
    }
}

/// K0471: a shipped budget whose minAvailable leaves no disruption over the replicas kix chose.
fn shipped_budgets_block(cluster: &str, instance: &Instance, diagnostics: &mut Diagnostics) {
    let package = &instance.package;
    for (document, pdb) in package.budgets() {
        // One the API server refuses (a negative count, over 100%) is K0414's, found when it is derived.
        let Some(min) = pdb.min_available.filter(|min| match *min {
            IntOrPercent::Int(n) => n >= 0,
            IntOrPercent::Percent(p) => (0..=100).contains(&p),
        }) else {
            continue;
        };
        let selected: Vec<_> = instance
            .workloads
            .iter()
            .filter(|resolved| resolved.replicas > 0)
            .filter(|resolved| pdb.selects(&package.workloads[resolved.workload].view.template_labels))
            .collect();
        if selected.is_empty() {
            continue;
        }
        let expected: i64 = selected.iter().map(|resolved| i64::from(resolved.replicas)).sum();
        if expected - min.scaled_value(expected, true) > 0 {
            continue;
        }
        let names: Vec<String> =
            selected.iter().map(|r| format!("`{}`", package.workloads[r.workload].name())).collect();
        let replicas = if expected == 1 { "1 replica".to_string() } else { format!("{expected} replicas") };
        let mut diagnostic = Diagnostic::new(
            Code::ShippedBudgetBlocksDrain,
            format!(
                "cluster `{cluster}` instance `{}`: PodDisruptionBudget `{}` has minAvailable: {min} over the \
                 {replicas} kix chose for {}, so it allows no disruption and every drain of their nodes waits forever",
                instance.name,
                pdb.name,
                names.join(" and ")
            ),
        )
        .at(package.documents[document].locate(&["spec", "minAvailable"]));
        for resolved in &selected {
            let name = package.workloads[resolved.workload].name();
            if let Some(at) = replicas_written_at(&resolved.trail.replicas) {
                let count = match resolved.replicas {
                    1 => "1 replica".to_string(),
                    n => format!("{n} replicas"),
                };
                diagnostic = diagnostic.with_label(at, format!("{count} of `{name}` from here"));
            }
        }
        let subject = Subject {
            workload: (selected.len() == 1).then(|| package.workloads[selected[0].workload].name().into()),
            ..instance.subject.clone()
        };
        diagnostics.push(
            diagnostic
                .help("use `maxUnavailable: 1` in the budget, or a minAvailable below the replica count")
                .about(&subject),
        );
    }
}

/// Where a replica count was written (the mapping's step, the manifest, the autoscaler's minimum).
fn replicas_written_at(source: &ReplicaSource) -> Option<kix_diag::Location> {
    match source {
        ReplicaSource::Mapping { at, .. }
        | ReplicaSource::Manifest { at, .. }
        | ReplicaSource::Autoscaler { at }
        | ReplicaSource::ScaledToZero { at } => Some(at.clone()),
    }
}
