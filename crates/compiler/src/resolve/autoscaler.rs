//! Autoscalers: a HorizontalPodAutoscaler or KEDA ScaledObject of the package that scales one of
//! its workloads owns that workload's `spec.replicas`, so the level has to hold at the
//! autoscaler's minimum.
//!
//! Once per package, each autoscaler is read ([`kix_kube::autoscaler`]) and bound to the
//! Deployment or StatefulSet its `scaleTargetRef` names (group `apps`, kind and name); one that
//! cannot be read is K0430, two on one workload K0431. An autoscaler naming anything else passes
//! through untouched.
//!
//! Per instance ([`floor`]), the level's replica count from the workload's mapping (R6) is the
//! floor of the autoscaler's minimum: a lower minimum is raised to it (K0432), never lowered, and
//! a maximum below the raised minimum is raised too (K0433, the API server refuses max < min).
//! Without a mapping step for the level, the manifest's `spec.replicas` says nothing under an
//! autoscaler (it overwrites the field within seconds), so the minimum as written is the count.
//! R7 and R8 then read that minimum.

use super::model::{AutoscaledRange, Autoscaler, ReplicaSource};
use crate::load::documents::Document;
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::autoscaler::AutoscalerView;
use kix_kube::level::Level;
use kix_kube::workload::WorkloadView;
use std::collections::BTreeMap;

/// Reads the package's autoscalers and binds each to the workload it scales, by index into
/// `views`; problems reported.
pub fn bind(
    documents: &[Document],
    views: &[(usize, WorkloadView)],
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> BTreeMap<usize, Autoscaler> {
    let mut bound: BTreeMap<usize, Autoscaler> = BTreeMap::new();
    for (index, document) in documents.iter().enumerate() {
        let view = match AutoscalerView::read(&document.value) {
            Ok(Some(view)) => view,
            Ok(None) => continue,
            Err(problems) => {
                for problem in problems {
                    diagnostics.push(
                        Diagnostic::new(Code::InvalidAutoscaler, problem.to_string())
                            .at(document.locate(&problem.path))
                            .about(subject),
                    );
                }
                continue;
            }
        };
        let Some(workload) = views.iter().position(|(_, w)| view.targets(w.kind, &w.name)) else { continue };
        let (min_field, max_field) = (view.kind.min_field(), view.kind.max_field());
        let autoscaler = Autoscaler {
            document: index,
            min_at: document.locate(&["spec", min_field]),
            max_at: document.locate(&["spec", max_field]),
            view,
        };
        match bound.get(&workload) {
            Some(first) => {
                let target = &views[workload].1;
                diagnostics.push(
                    Diagnostic::new(
                        Code::TwoAutoscalers,
                        format!(
                            "{} {} and {} {} both scale {} {}",
                            first.view.kind,
                            first.view.name,
                            autoscaler.view.kind,
                            autoscaler.view.name,
                            target.kind,
                            target.name
                        ),
                    )
                    .at(document.locate(&["spec", "scaleTargetRef"]))
                    .about(subject)
                    .workload(&target.name)
                    .help("keep one autoscaler per workload: two would fight over its spec.replicas"),
                );
            }
            None => {
                bound.insert(workload, autoscaler);
            }
        }
    }
    bound
}

/// Who a floor is decided for, for the warnings.
pub struct FloorContext<'a> {
    pub cluster: &'a str,
    pub instance: &'a str,
    pub workload: &'a WorkloadView,
    pub level: Level,
    pub subject: &'a Subject,
}

/// The level's replica count as the floor of the autoscaler's range: the count, its source (the
/// mapping's step when that is the minimum, else the autoscaler's minimum, for the trail) and the
/// range the autoscaler is emitted with (marked raised when kix raised either bound).
pub fn floor(
    autoscaler: &Autoscaler,
    replicas: u32,
    replicas_from: ReplicaSource,
    context: &FloorContext<'_>,
    diagnostics: &mut Diagnostics,
) -> (u32, ReplicaSource, AutoscaledRange) {
    let view = &autoscaler.view;
    let needed = match replicas_from {
        ReplicaSource::Mapping { .. } => replicas,
        _ => 0,
    };
    let min = view.min().max(needed);
    // Only a raised bound says them (a fleet resolves every autoscaler of every instance).
    let prefix = || format!("cluster `{}` instance `{}`", context.cluster, context.instance);
    if min > view.min() {
        let (prefix, target) = (prefix(), format!("{} `{}`", context.workload.kind, context.workload.name));
        diagnostics.push(
            Diagnostic::new(
                Code::AutoscalerMinRaised,
                format!(
                    "{prefix}: {} `{}` may scale {target} down to {} replica{}, below the {min} its level `{}` needs; \
                     kix raises {} to {min} and leaves spec.replicas to the autoscaler",
                    view.kind,
                    view.name,
                    view.min(),
                    kix_diag::words::s(view.min()),
                    context.level,
                    view.kind.min_field(),
                ),
            )
            .at(autoscaler.min_at.clone())
            .about(context.subject)
            .help(format!(
                "write {}: {min} in {} {} to silence this warning",
                view.kind.min_field(),
                view.kind,
                view.name
            )),
        );
    }
    let max = view.max().max(min);
    if max > view.max() {
        let prefix = prefix();
        diagnostics.push(
            Diagnostic::new(
                Code::AutoscalerMaxRaised,
                format!(
                    "{prefix}: {} `{}` has {} {}, below its raised minimum {min}; kix raises {} to {min}",
                    view.kind,
                    view.name,
                    view.kind.max_field(),
                    view.max(),
                    view.kind.max_field(),
                ),
            )
            .at(autoscaler.max_at.clone())
            .about(context.subject)
            .help(format!(
                "raise {} in {} {} to give the autoscaler room above the level's floor",
                view.kind.max_field(),
                view.kind,
                view.name
            )),
        );
    }
    let source = if needed > 0 && min == needed {
        replicas_from
    } else {
        ReplicaSource::Autoscaler { at: autoscaler.min_at.clone() }
    };
    (min, source, AutoscaledRange { min, max, raised: min > view.min() || max > view.max() })
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestTree, cluster_toml, workload_yaml};
    use kix_diag::Code;
    use kix_yaml::Value;

    const THREE_ZONES: &str = "multiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]";

    fn hpa(bounds: &str) -> String {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    \
             apiVersion: apps/v1\n    kind: Deployment\n    name: web\n{bounds}  metrics: []\n"
        )
    }

    fn compile(level: &str, workloads: &str, autoscalers: &str) -> crate::compile::Compiled {
        let toml = format!("[meta]\nname = \"web\"\nversion = \"1.0.0\"\n{workloads}");
        TestTree::new()
            .cluster("c", &cluster_toml(level, THREE_ZONES, "web"))
            .package(
                "web",
                &toml,
                &[("a.yaml", &workload_yaml("Deployment", "web", None, "")), ("b.yaml", autoscalers)],
            )
            .compile()
    }

    /// Level, kix.toml mapping, autoscaler YAML, replicas verified, emitted spec fields, codes.
    type FloorCase<'a> = (&'a str, &'a str, &'a str, u32, &'a str, &'a [Code]);

    const MAPPING: &str = "[workloads.web]\nreplicas = { none = 1, pod = 2, zone = 3 }\n";

    // The level's count is the floor of the autoscaler's minimum: raised, never lowered; the
    // maximum follows; spec.replicas is never written.
    #[test]
    fn autoscaler_minimum_is_floored_at_the_levels_count() {
        let keda = "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    name: web\n  triggers: []\n";
        let cases: &[FloorCase<'_>] = &[
            (
                "zone",
                MAPPING,
                &hpa("  minReplicas: 1\n  maxReplicas: 10\n"),
                3,
                "scaleTargetRef,minReplicas=3,maxReplicas=10,metrics",
                &[Code::AutoscalerMinRaised],
            ),
            (
                "zone",
                MAPPING,
                &hpa("  minReplicas: 1\n  maxReplicas: 2\n"),
                3,
                "scaleTargetRef,minReplicas=3,maxReplicas=3,metrics",
                &[Code::AutoscalerMinRaised, Code::AutoscalerMaxRaised],
            ),
            (
                "zone",
                MAPPING,
                &hpa("  minReplicas: 6\n  maxReplicas: 10\n"),
                6,
                "scaleTargetRef,minReplicas=6,maxReplicas=10,metrics",
                &[],
            ),
            (
                "zone",
                MAPPING,
                &hpa("  maxReplicas: 10\n"),
                3,
                "scaleTargetRef,minReplicas=3,maxReplicas=10,metrics",
                &[Code::AutoscalerMinRaised],
            ),
            ("none", MAPPING, &hpa("  maxReplicas: 10\n"), 1, "scaleTargetRef,maxReplicas=10,metrics", &[]),
            (
                "none",
                "",
                &hpa("  minReplicas: 2\n  maxReplicas: 4\n"),
                2,
                "scaleTargetRef,minReplicas=2,maxReplicas=4,metrics",
                &[],
            ),
            ("pod", MAPPING, keda, 2, "scaleTargetRef,triggers,minReplicaCount=2", &[Code::AutoscalerMinRaised]),
        ];
        for (level, mapping, autoscaler, replicas, spec, codes) in cases {
            let compiled = compile(level, mapping, autoscaler);
            assert_eq!(compiled.codes(), *codes, "{level} {autoscaler}: {:?}", compiled.messages());
            let plan = compiled.workload("c", "app", "web");
            assert_eq!(plan.replicas, *replicas, "{level} {autoscaler}");
            assert_eq!(plan.autoscaler.as_ref().map(|a| a.min_replicas), Some(*replicas));
            let objects = &compiled.instance("c", "app").objects();
            let workload = objects.iter().find(|o| o["kind"] == "Deployment").unwrap();
            assert!(workload["spec"].get("replicas").is_none(), "spec.replicas is left to the autoscaler");
            let scaler =
                objects.iter().find(|o| o["kind"] != "Deployment" && o["kind"] != "PodDisruptionBudget").unwrap();
            let fields: Vec<String> = scaler["spec"]
                .as_mapping()
                .unwrap()
                .iter()
                .map(|(k, v)| match v {
                    Value::Number(n) => format!("{}={n}", k.as_str().unwrap()),
                    _ => k.as_str().unwrap().to_string(),
                })
                .collect();
            assert_eq!(fields.join(","), *spec, "{level} {autoscaler}");
        }
    }

    #[test]
    fn autoscaler_warnings_name_the_object_and_the_level() {
        let compiled = compile("zone", MAPPING, &hpa("  minReplicas: 1\n  maxReplicas: 2\n"));
        let messages = compiled.messages();
        assert_eq!(
            messages[0],
            "cluster `c` instance `app`: HorizontalPodAutoscaler `web` may scale Deployment `web` down to 1 replica, \
             below the 3 its level `zone` needs; kix raises minReplicas to 3 and leaves spec.replicas to the autoscaler"
        );
        assert_eq!(
            messages[1],
            "cluster `c` instance `app`: HorizontalPodAutoscaler `web` has maxReplicas 2, below its raised minimum 3; \
             kix raises maxReplicas to 3"
        );
        let lines: Vec<Option<usize>> =
            compiled.diagnostics.iter().map(|d| d.location().and_then(|l| l.line())).collect();
        assert_eq!(lines, [Some(10), Some(11)], "at minReplicas and maxReplicas");
    }

    // R8 reads the autoscaler's minimum: without a mapping it is the count.
    #[test]
    fn r8_reads_the_autoscalers_minimum() {
        let compiled = compile("zone", "", &hpa("  minReplicas: 1\n  maxReplicas: 10\n"));
        assert_eq!(compiled.codes(), [Code::TooFewReplicas]);
        let diagnostic = compiled.diagnostics.iter().next().unwrap();
        assert_eq!(diagnostic.location().unwrap().line(), Some(10), "at minReplicas");
        assert!(diagnostic.help.as_deref().unwrap().contains("HorizontalPodAutoscaler web may scale it down to 1"));
    }

    #[test]
    fn autoscaler_problems_are_errors() {
        let other = hpa("  minReplicas: 2\n  maxReplicas: 4\n")
            .replace("name: web\n  minReplicas", "name: other\n  minReplicas");
        let two = format!(
            "{}---\n{}",
            hpa("  maxReplicas: 4\n"),
            hpa("  maxReplicas: 5\n").replace("name: web\nspec", "name: web2\nspec")
        );
        let cases: &[(&str, &[Code])] = &[
            (&hpa("  minReplicas: 0\n  maxReplicas: 4\n"), &[Code::InvalidAutoscaler]),
            (&hpa("  minReplicas: 3\n"), &[Code::InvalidAutoscaler]),
            (&two, &[Code::TwoAutoscalers]),
            // An autoscaler of something else passes through: kix derives replicas as usual.
            (&other, &[]),
        ];
        for (autoscalers, codes) in cases {
            let compiled = compile("zone", MAPPING, autoscalers);
            assert_eq!(compiled.codes(), *codes, "{autoscalers}: {:?}", compiled.messages());
        }
        let compiled = compile("zone", MAPPING, &other);
        assert!(compiled.workload("c", "app", "web").autoscaler.is_none());
        let objects = &compiled.instance("c", "app").objects();
        assert_eq!(objects[0]["spec"]["replicas"], 3);
    }

    // Kinds kix does not manage: ReplicaSets and ReplicationControllers are warned about from level
    // pod; DaemonSets, Jobs and CronJobs pass; a [workloads.X] entry on one says what X is.
    #[test]
    fn unmanaged_replicating_controllers_are_warned_about() {
        let rc = "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: redis\nspec:\n  replicas: 1\n  selector:\n    app: redis\n  template:\n    metadata:\n      labels:\n        app: redis\n    spec:\n      containers:\n      - name: r\n        image: r\n";
        let rs = workload_yaml("ReplicaSet", "rs", Some(2), "");
        let ds = workload_yaml("DaemonSet", "ds", None, "");
        let cases: &[(&str, &str, &[Code])] = &[
            ("node", rc, &[Code::UnmanagedReplicas]),
            ("pod", &rs, &[Code::UnmanagedReplicas]),
            ("none", rc, &[]),
            ("zone", &ds, &[]),
        ];
        for (level, yaml, codes) in cases {
            let toml = format!("[meta]\nname = \"web\"\nversion = \"1.0.0\"\n{MAPPING}");
            let compiled = TestTree::new()
                .cluster("c", &cluster_toml(level, THREE_ZONES, "web"))
                .package("web", &toml, &[("a.yaml", &workload_yaml("Deployment", "web", None, "")), ("b.yaml", yaml)])
                .compile();
            assert_eq!(compiled.codes(), *codes, "{level} {yaml}: {:?}", compiled.messages());
        }
        let toml = "[meta]\nname = \"web\"\nversion = \"1.0.0\"\n[workloads.redis]\nreplicas = { pod = 2 }\n";
        let compiled = TestTree::new()
            .cluster("c", &cluster_toml("none", THREE_ZONES, "web"))
            .package("web", toml, &[("b.yaml", rc)])
            .compile();
        assert_eq!(compiled.codes(), [Code::UnknownWorkload]);
        assert!(
            compiled.messages()[0]
                .contains("names ReplicationController redis of package `web`, which kix does not manage")
        );
    }
}
