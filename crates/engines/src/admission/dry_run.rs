//! `kix admission --state`: the cluster's compiled policies (with their compiled params) evaluated against
//! the objects of a snapshot, each as if it were applied again unchanged (an UPDATE whose object and old
//! object are the snapshot's), so the result lists exactly the guarded objects that have drifted below
//! what the level needs: the requests the policies would refuse once `enforce = "deny"`. A kix budget
//! missing from the snapshot is listed too: admission cannot see an absent object, but it would have
//! refused the delete, and from now on refuses it.

use super::evaluate::{PolicySet, Request};
use kix_compiler::admission::{Check, Guard};
use kix_compiler::compile::CompiledCluster;
use kix_kube::kind::api_group;
use kix_kube::selector::Labels;
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// The user the dry run's requests come from: no exempt name, so a budget's weakening is judged.
pub const DRY_RUN_USER: &str = "kix:admission-dry-run";

/// What the dry run found for one cluster.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DryRun {
    pub cluster: String,
    /// `[admission] enforce`.
    pub enforce: String,
    /// The objects the policies guard (a workload and its `/scale` count once).
    pub guarded: usize,
    /// Of them, those the snapshot holds.
    pub found: usize,
    /// The guarded objects the policies would refuse, and kix's budgets that are missing, in the order of
    /// the guards (resource, namespace, name).
    pub drifted: Vec<Drift>,
    /// Guarded objects the snapshot does not hold (not applied yet, or, for budgets, a snapshot without
    /// any PodDisruptionBudget: taken without `pdb`), as `Kind ns/name`.
    pub absent: Vec<String>,
}

/// One drifted object.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Drift {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Each refusal's message; for a missing budget, what that means.
    pub messages: Vec<String>,
    /// A kix budget the snapshot does not hold.
    pub missing: bool,
}

/// Evaluates `cluster`'s policies against `objects` (a snapshot's, Lists already flattened).
pub fn dry_run(cluster: &CompiledCluster, objects: &[Value]) -> Result<DryRun, String> {
    let (Some(plan), Some(admission)) = (&cluster.plan.admission, &cluster.resolved.admission) else {
        return Err(format!(
            "cluster {} has no [admission]: add `[admission] enforce = \"audit\"` to {} to compile its policies",
            cluster.resolved.name,
            cluster.resolved.source.path().display()
        ));
    };
    let policies = PolicySet::from_documents(&plan.documents)?;
    let namespace_labels = |namespace: &str| -> Labels {
        objects
            .iter()
            .find(|o| str_at(o, &["kind"]) == Some("Namespace") && str_at(o, &["metadata", "name"]) == Some(namespace))
            .and_then(|o| at(o, &["metadata", "labels"]))
            .and_then(Value::as_mapping)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string()))).collect())
            .unwrap_or_default()
    };
    let mut seen: Vec<(&str, &str, &str, &str)> = Vec::new();
    let mut report = DryRun {
        cluster: cluster.resolved.name.clone(),
        enforce: admission.enforce.action().to_lowercase(),
        guarded: 0,
        found: 0,
        drifted: Vec::new(),
        absent: Vec::new(),
    };
    let budgets_listed = objects.iter().any(|o| {
        str_at(o, &["kind"]) == Some("PodDisruptionBudget")
            && api_group(str_at(o, &["apiVersion"]).unwrap_or_default()) == "policy"
    });
    for guard in plan.guards.iter().filter(|g| g.check != Check::Scale) {
        let identity = (
            guard.resource.group.as_str(),
            guard.resource.kind.as_str(),
            guard.namespace.as_str(),
            guard.name.as_str(),
        );
        if seen.contains(&identity) {
            continue;
        }
        seen.push(identity);
        report.guarded += 1;
        let Some(object) = objects.iter().find(|object| is_guarded(object, guard)) else {
            // A snapshot without any budget was taken without `pdb`: its budgets are unknown, not missing.
            if guard.check == Check::Budget && budgets_listed {
                report.drifted.push(Drift {
                    kind: guard.resource.kind.clone(),
                    namespace: guard.namespace.clone(),
                    name: guard.name.clone(),
                    messages: vec![format!(
                        "missing: kix's budget for {} is not in the snapshot (deleted, or never applied); the policies refuse its deletion from now on",
                        guard.workload
                    )],
                    missing: true,
                });
            } else {
                report.absent.push(format!("{} {}/{}", guard.resource.kind, guard.namespace, guard.name));
            }
            continue;
        };
        report.found += 1;
        let api_version = str_at(object, &["apiVersion"]).unwrap_or_default();
        let request = Request {
            operation: "UPDATE".into(),
            group: guard.resource.group.clone(),
            version: api_version.rsplit('/').next().unwrap_or_default().to_string(),
            resource: guard.resource.plural.clone(),
            subresource: String::new(),
            kind: guard.resource.kind.clone(),
            namespace: guard.namespace.clone(),
            name: guard.name.clone(),
            object: Some(object.clone()),
            old_object: Some(object.clone()),
            user: DRY_RUN_USER.into(),
            namespace_labels: namespace_labels(&guard.namespace),
        };
        let decision = policies.evaluate(&request);
        if !decision.violations.is_empty() {
            report.drifted.push(Drift {
                kind: guard.resource.kind.clone(),
                namespace: guard.namespace.clone(),
                name: guard.name.clone(),
                messages: decision.violations.into_iter().map(|v| v.message).collect(),
                missing: false,
            });
        }
    }
    Ok(report)
}

/// Whether `object` is the one `guard` names (group, kind, namespace and name).
fn is_guarded(object: &Value, guard: &Guard) -> bool {
    str_at(object, &["kind"]) == Some(guard.resource.kind.as_str())
        && api_group(str_at(object, &["apiVersion"]).unwrap_or_default()) == guard.resource.group
        && str_at(object, &["metadata", "name"]) == Some(guard.name.as_str())
        && str_at(object, &["metadata", "namespace"]) == Some(guard.namespace.as_str())
}

/// `kix admission`'s inputs: the selection (one cluster) and the snapshot.
#[derive(Clone, Debug)]
pub struct DryRunRequest {
    pub selection: kix_compiler::compile::Selection,
    pub state: std::path::PathBuf,
}

/// What `kix admission` found: the compile's diagnostics, and the dry run when it got that far.
#[derive(Debug)]
pub struct DryRunOutcome {
    pub diagnostics: kix_diag::Diagnostics,
    pub report: Option<DryRun>,
}

/// Compiles the selection (one cluster), reads the snapshot and runs [`dry_run`].
pub fn run(request: &DryRunRequest) -> Result<DryRunOutcome, kix_compiler::compile::UsageError> {
    use kix_compiler::compile::{Compiled, UsageError, cluster_names, compile_clusters};
    let Compiled { clusters, mut diagnostics, acknowledged } = compile_clusters(&request.selection);
    if diagnostics.has_errors() {
        return Ok(DryRunOutcome { diagnostics, report: None });
    }
    if clusters.len() != 1 {
        return Err(UsageError::StateNeedsOneCluster { clusters: cluster_names(clusters.iter().map(|c| &c.plan)) });
    }
    let objects = match kix_sim::read_located(&request.state) {
        Ok(file) => file.objects.into_iter().map(|located| located.value).collect::<Vec<_>>(),
        Err(problems) => {
            diagnostics.extend(kix_diag::Diagnostics::from(problems));
            return Ok(DryRunOutcome { diagnostics, report: None });
        }
    };
    diagnostics.settle(|d| acknowledged.contains(d), request.selection.deny_warnings);
    match dry_run(&clusters[0], &objects) {
        Ok(report) => Ok(DryRunOutcome { diagnostics, report: Some(report) }),
        Err(message) => {
            diagnostics.push(
                kix_diag::Diagnostic::new(kix_diag::Code::AdmissionMissing, message)
                    .at(kix_diag::Location::file(clusters[0].resolved.source.path())),
            );
            Ok(DryRunOutcome { diagnostics, report: None })
        }
    }
}
