//! Verify's findings as diagnostics (issue 21): each kind of finding the scheduler model reports
//! (`kix_sim::FindingKind`) has a code (K0601-K0623, K0625, K0626), and a finding of a failed scenario is an error
//! located at what causes it in the user's manifest where kix knows it: the `strategy` line for an
//! update, the budget's file for a blocked drain, the workload's `spec.replicas` for a domain loss.
//! Findings that block the cluster's operators without failing the workload (a drain stopped by
//! another workload's pod or budget) are notes of the text report; facts behind a verdict (how an
//! update went) are notes of the diagnostics of their scenario.

use kix_compiler::resolve::model::{Cluster, Instance, Workload};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use kix_kube::kind::WorkloadKind;
use kix_sim::{Finding, FindingKind, ScenarioResult, WorkloadVerdict};

/// A finding that fails nothing but is worth showing where CI shows findings: a drain blocker of a
/// passing scenario.
#[derive(Clone, Debug)]
pub struct Note {
    pub code: Code,
    pub message: String,
    pub location: Option<Location>,
}

/// What a finding is, for reporting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A reason the scenario fails: an error when its scenario fails.
    Failure(Code),
    /// Something that stops the cluster's operators (a drain) without failing this workload.
    Blocker(Code),
    /// A fact behind the verdict (how an update went, that ties broken against the level still hold).
    Fact,
}

/// The role and code of each kind of finding.
pub fn role(kind: FindingKind) -> Role {
    use FindingKind as K;
    use Role::{Blocker, Fact, Failure};
    match kind {
        K::NotSimulated => Failure(Code::VerifyNotSimulated),
        K::Pending => Failure(Code::VerifyPending),
        K::LoneSelector => Failure(Code::VerifyLoneSelector),
        K::NothingRunning => Failure(Code::VerifyNothingRunning),
        K::NeverReplaced => Failure(Code::VerifyNeverReplaced),
        K::StaysTerminating => Failure(Code::VerifyStaysTerminating),
        K::ReplacementPending => Failure(Code::VerifyReplacementPending),
        K::NoRoomLeft => Failure(Code::VerifyNoRoomLeft),
        K::NoReplicaLeft => Failure(Code::VerifyNoReplicaLeft),
        K::RestsOnTieBreak => Failure(Code::VerifyRestsOnTieBreak),
        K::DrainBlocked => Failure(Code::VerifyDrainBlocked),
        K::EvictionFailed => Failure(Code::VerifyEvictionFailed),
        K::EvictedReplacementPending => Failure(Code::VerifyEvictedReplacementPending),
        K::StrategyRefused => Failure(Code::VerifyStrategyRefused),
        K::UpdateDeadlocks => Failure(Code::VerifyUpdateDeadlocks),
        K::UpdateDoesNotConverge => Failure(Code::VerifyUpdateDoesNotConverge),
        K::UpdateDropsAvailability => Failure(Code::VerifyUpdateDropsAvailability),
        K::Recreate => Failure(Code::VerifyRecreate),
        K::UpdateStops => Failure(Code::VerifyUpdateStops),
        K::ScaleDownUnmet => Failure(Code::VerifyScaleDownUnmet),
        K::VolumeBound => Failure(Code::VerifyVolumeBound),
        K::DrainUnmanaged => Blocker(Code::VerifyDrainUnmanaged),
        K::DrainNeverFinishes => Blocker(Code::VerifyDrainNeverFinishes),
        K::UpdateProgress
        | K::SurvivesTieBreak
        | K::OnDelete
        | K::ScaleDownHolds
        | K::ScaleUpPending
        | K::WaitsForVolumeZone
        | K::ScaledUp
        | K::NotADomain => Fact,
    }
}

/// The role of one finding in its scenario: an eviction that fails for another workload's pod does
/// not fail this one (the scenario passes), so there it blocks the operators.
pub fn role_in(finding: &Finding, scenario: &ScenarioResult) -> Role {
    match role(finding.kind) {
        Role::Failure(Code::VerifyEvictionFailed) if scenario.pass => Role::Blocker(Code::VerifyEvictionFailed),
        // Say, a StatefulSet's pod staying Terminating at a level its other replicas hold.
        Role::Failure(_) if scenario.pass => Role::Fact,
        role => role,
    }
}

/// The error diagnostics of one workload's failed scenarios. Every failed scenario yields at least one
/// (K0623 when none of its findings says why), so the summary's error count is never 0 when a
/// workload misses its level.
pub fn diagnostics(
    cluster: &Cluster,
    instance: &Instance,
    workload: &Workload,
    verdict: &WorkloadVerdict,
    out: &mut Diagnostics,
) {
    let subject = Subject {
        cluster: Some(cluster.name.clone().into()),
        instance: Some(instance.name.clone().into()),
        package: None,
        workload: Some(format!("{}/{}", verdict.kind, verdict.name).into()),
    };
    for scenario in verdict.scenarios.iter().filter(|s| !s.pass) {
        let facts: Vec<&Finding> = scenario.findings.iter().filter(|f| role(f.kind) == Role::Fact).collect();
        let mut any = false;
        for finding in &scenario.findings {
            let Role::Failure(code) = role_in(finding, scenario) else { continue };
            any = true;
            let message = format!("{} {}: {}: {}", verdict.kind, verdict.name, scenario.scenario, finding.message);
            let mut diagnostic = Diagnostic::new(code, message).about(&subject);
            let (location, label) = cause(instance, workload, finding.kind);
            diagnostic = diagnostic.at(location).label(label);
            if let Some(note) = modelled_as_one(workload, finding.kind) {
                diagnostic = diagnostic.note(note);
            }
            for fact in &facts {
                diagnostic = diagnostic.note(fact.message.clone());
            }
            out.push(diagnostic.help(help(finding.kind)));
        }
        if !any {
            let text: Vec<&str> = scenario.findings.iter().map(|f| f.message.as_str()).collect();
            let message =
                format!("{} {}: {} fails: {}", verdict.kind, verdict.name, scenario.scenario, text.join("; "));
            let at = instance.package.documents[workload.document].location();
            out.push(Diagnostic::new(Code::VerifyScenarioFails, message).about(&subject).at(at));
        }
    }
}

/// The findings that block the cluster's operators without failing the workload (a drain stopped by
/// another workload's pod or budget), as notes for the CI forms (SARIF level `note`, `::notice`), located
/// as the text report's notes are said.
pub fn notes(
    cluster: &Cluster,
    instance: &Instance,
    workload: &Workload,
    verdict: &WorkloadVerdict,
    out: &mut Vec<Note>,
) {
    for scenario in &verdict.scenarios {
        for finding in &scenario.findings {
            let Role::Blocker(code) = role_in(finding, scenario) else { continue };
            out.push(Note {
                code,
                message: format!(
                    "{}/{} {} {}: {}: {}",
                    cluster.name, instance.name, verdict.kind, verdict.name, scenario.scenario, finding.message
                ),
                location: Some(cause(instance, workload, finding.kind).0),
            });
        }
    }
}

/// Whether a code is one [`diagnostics`] gives a failed scenario's finding (the JUnit report shows those
/// as its scenarios' failures, not again as diagnostics).
pub fn is_scenario_code(code: Code) -> bool {
    code == Code::VerifyScenarioFails
        || FINDING_KINDS.iter().any(|kind| matches!(role(*kind), Role::Failure(c) if c == code))
}

/// Every kind of finding.
const FINDING_KINDS: [FindingKind; 31] = {
    use FindingKind as K;
    [
        K::NotSimulated,
        K::Pending,
        K::LoneSelector,
        K::NothingRunning,
        K::NeverReplaced,
        K::StaysTerminating,
        K::ReplacementPending,
        K::NoRoomLeft,
        K::NoReplicaLeft,
        K::RestsOnTieBreak,
        K::SurvivesTieBreak,
        K::DrainUnmanaged,
        K::EvictionFailed,
        K::DrainBlocked,
        K::DrainNeverFinishes,
        K::EvictedReplacementPending,
        K::UpdateProgress,
        K::StrategyRefused,
        K::UpdateDeadlocks,
        K::UpdateDoesNotConverge,
        K::UpdateDropsAvailability,
        K::Recreate,
        K::OnDelete,
        K::UpdateStops,
        K::ScaleDownUnmet,
        K::ScaleDownHolds,
        K::ScaleUpPending,
        K::VolumeBound,
        K::WaitsForVolumeZone,
        K::ScaledUp,
        K::NotADomain,
    ]
};

/// Where the cause of a finding is written, with the label shown under it.
fn cause(instance: &Instance, workload: &Workload, kind: FindingKind) -> (Location, &'static str) {
    use FindingKind as K;
    let document = &instance.package.documents[workload.document];
    let strategy = if workload.view.kind == WorkloadKind::StatefulSet { "updateStrategy" } else { "strategy" };
    // A custom resource's constraints are where its profile says its operator reads them.
    let template_spread = ["spec", "template", "spec", "topologySpreadConstraints"];
    let spread_keys = match workload.view.kind.profile().and_then(|p| p.spread.as_ref()) {
        Some(path) => path.keys(),
        None => template_spread.to_vec(),
    };
    match kind {
        K::Recreate => (document.locate(&["spec", strategy, "type"]), "every old pod stops before the new ones start"),
        K::StrategyRefused
        | K::UpdateDeadlocks
        | K::UpdateDoesNotConverge
        | K::UpdateDropsAvailability
        | K::UpdateStops => (document.locate(&["spec", strategy]), "the update strategy"),
        K::LoneSelector => (document.locate(&spread_keys), "the spread constraints"),
        K::NeverReplaced => (document.locate(&["spec", "template", "spec", "tolerations"]), "the tolerations"),
        K::DrainBlocked | K::EvictionFailed => match budget_of(instance, workload) {
            Some(location) => (location, "the budget that refuses the eviction"),
            None if workload.operator_budget.is_some() => {
                (workload.spec_replicas_at.clone(), "the replicas the operator's budget protects")
            }
            None => (workload.spec_replicas_at.clone(), "the replicas the budget kix derived protects"),
        },
        K::ReplacementPending => {
            (document.locate(&spread_keys), "a hard rule keeps the replacement off the nodes with room")
        }
        K::Pending | K::NoRoomLeft | K::EvictedReplacementPending | K::NotSimulated => {
            (workload.spec_replicas_at.clone(), "the replicas the nodes must hold")
        }
        K::ScaleDownUnmet => {
            (workload.spec_replicas_at.clone(), "the replicas a scale-down leaves to the domain losses")
        }
        K::VolumeBound if workload.view.kind == WorkloadKind::StatefulSet => {
            (document.locate(&["spec", "volumeClaimTemplates"]), "each pod's claim, bound where the pod first ran")
        }
        K::VolumeBound => (document.location(), "the workload whose pods share a claim"),
        K::NothingRunning | K::NoReplicaLeft | K::RestsOnTieBreak | K::StaysTerminating => {
            (workload.spec_replicas_at.clone(), "the replicas a domain loss must leave running")
        }
        K::DrainUnmanaged
        | K::DrainNeverFinishes
        | K::UpdateProgress
        | K::SurvivesTieBreak
        | K::OnDelete
        | K::ScaleDownHolds
        | K::ScaleUpPending
        | K::WaitsForVolumeZone
        | K::ScaledUp
        | K::NotADomain => (document.location(), "the workload"),
    }
}

/// For a drain held by the budgets an operator makes, when verify models several as one (CloudNativePG's
/// over the primary and over the replicas): which budgets the cluster will show, and that verify took
/// them as one.
fn modelled_as_one(workload: &Workload, kind: FindingKind) -> Option<String> {
    if !matches!(kind, FindingKind::DrainBlocked | FindingKind::EvictionFailed) {
        return None;
    }
    let labels = workload.operator_budget.as_ref()?;
    let profile = workload.view.kind.profile()?;
    let names = kix_kube::operators::operator_budget_names(profile, workload.name(), labels);
    let [first, rest @ ..] = names.as_slice() else { return None };
    if rest.is_empty() {
        return None;
    }
    Some(format!(
        "the operator of {} {} makes {} PodDisruptionBudgets, {}; verify models them as one, `{first}`, over all \
         of its pods, that lets one pod go at a time",
        profile.kind,
        workload.name(),
        names.len(),
        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" and ")
    ))
}

/// The package's own PodDisruptionBudget over the workload's pods, where its selector is written.
fn budget_of(instance: &Instance, workload: &Workload) -> Option<Location> {
    instance.package.budgets().find_map(|(document, pdb)| {
        let selects = pdb.selector.as_ref().is_some_and(|s| s.matches(&workload.view.template_labels));
        selects.then(|| instance.package.documents[document].locate(&["spec"]))
    })
}

/// What to do about a finding (the explanation says why).
fn help(kind: FindingKind) -> String {
    let code = match role(kind) {
        Role::Failure(code) | Role::Blocker(code) => code,
        Role::Fact => Code::VerifyScenarioFails,
    };
    format!("`kix explain {}` says what the scenario simulated and how to fix it", code.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A code means one thing: no two kinds of finding share one, and every code is a verify code.
    #[test]
    fn each_kind_of_finding_has_its_own_verify_code() {
        let kinds = FINDING_KINDS;
        let mut seen = std::collections::BTreeSet::new();
        for kind in kinds {
            match role(kind) {
                Role::Failure(code) | Role::Blocker(code) => {
                    assert!(code.id().starts_with("K06"), "{kind:?}");
                    assert!(seen.insert(code), "{kind:?} shares {}", code.id());
                }
                Role::Fact => {}
            }
        }
        assert_eq!(seen.len(), 23);
        assert!(!seen.contains(&Code::VerifyScenarioFails), "K0623 is the fallback of a scenario without a cause");
    }
}
