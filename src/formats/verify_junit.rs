//! `kix verify --format junit`: one test suite per cluster; per workload one test case for its level
//! (`shop Deployment/api: level zone`, failed when it misses it) and one per scenario
//! (`shop Deployment/api: zone loss ...`), failed when the scenario fails, with
//! its findings (code and message each) as the failure's text; a cluster with nothing to simulate on is
//! one skipped case (failed under K0624). Error diagnostics that are no scenario's finding (the compile's,
//! a snapshot's, K0624) are failed cases of a suite `kix`, one per cause, so the report fails exactly when verify does.

use crate::formats::junit::{Case, Failure, Suite};
use kix_diag::{Code, Severity};
use kix_engines::verify::{ClusterReport, NodesFrom, Verified, findings};

/// The suites of a verify run.
pub fn junit(verified: &Verified) -> Vec<Suite> {
    let mut suites: Vec<Suite> = verified.reports.iter().flatten().map(cluster_suite).collect();
    let others: Vec<Case> = verified
        .diagnostics
        .causes()
        .into_iter()
        .filter(|c| c.diagnostic().severity() == Severity::Error && !findings::is_scenario_code(c.diagnostic().code))
        .map(|cause| (cause.diagnostic(), cause.message(), cause.render(kix_diag::Style::Plain)))
        .map(|(d, message, text)| Case {
            name: format!("{} {}", d.code.id(), d.location().map(ToString::to_string).unwrap_or_default()),
            classname: "kix".into(),
            failure: Some(Failure { kind: d.code.id().into(), message, text }),
            ..Case::default()
        })
        .collect();
    if !others.is_empty() {
        suites.insert(0, Suite { name: "kix".into(), cases: others });
    }
    suites
}

fn cluster_suite(report: &ClusterReport) -> Suite {
    let classname = format!("kix.verify.{}", report.cluster);
    if report.nodes_from == NodesFrom::None {
        let why = format!("cluster {}: not verified (no [[nodePools]] and no --state)", report.cluster);
        let case = Case { name: "nodes".into(), classname, skipped: Some(why), ..Case::default() };
        return Suite { name: report.cluster.clone(), cases: vec![case] };
    }
    let mut cases = Vec::new();
    for instance in &report.instances {
        for workload in &instance.workloads {
            let failing: Vec<String> =
                workload.scenarios.iter().filter(|s| !s.pass).map(|s| s.scenario.to_string()).collect();
            cases.push(Case {
                name: format!("{} {}/{}: level {}", instance.instance, workload.kind, workload.name, workload.level),
                classname: classname.clone(),
                failure: (!workload.meets_level).then(|| Failure {
                    kind: Code::VerifyScenarioFails.id().into(),
                    message: format!("does not meet level {}", workload.level),
                    text: format!("failing scenarios: {}", failing.join(", ")),
                }),
                ..Case::default()
            });
            for scenario in &workload.scenarios {
                let failed: Vec<(Code, &str)> = scenario
                    .findings
                    .iter()
                    .filter_map(|finding| match findings::role_in(finding, scenario) {
                        findings::Role::Failure(code) if !scenario.pass => Some((code, finding.message.as_str())),
                        _ => None,
                    })
                    .collect();
                let failure = (!scenario.pass).then(|| {
                    let (kind, message) =
                        failed.first().copied().unwrap_or((Code::VerifyScenarioFails, "the scenario fails"));
                    let text: Vec<String> = scenario
                        .findings
                        .iter()
                        .map(|f| match findings::role_in(f, scenario) {
                            findings::Role::Failure(code) | findings::Role::Blocker(code) => {
                                format!("[{}] {f}", code.id())
                            }
                            findings::Role::Fact => format!("[note] {f}"),
                        })
                        .collect();
                    Failure { kind: kind.id().into(), message: message.to_string(), text: text.join("\n") }
                });
                let notes: Vec<String> = scenario
                    .findings
                    .iter()
                    .filter_map(|f| match findings::role_in(f, scenario) {
                        findings::Role::Blocker(code) => Some(format!("[{}] {f}", code.id())),
                        _ => None,
                    })
                    .collect();
                cases.push(Case {
                    name: format!("{} {}/{}: {}", instance.instance, workload.kind, workload.name, scenario.scenario),
                    classname: classname.clone(),
                    failure,
                    skipped: None,
                    output: (!notes.is_empty()).then(|| notes.join("\n")),
                });
            }
        }
    }
    Suite { name: report.cluster.clone(), cases }
}
