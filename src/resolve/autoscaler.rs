//! Autoscalers: a HorizontalPodAutoscaler or KEDA ScaledObject of the package that scales one of
//! its workloads owns that workload's `spec.replicas`, so the level has to hold at the
//! autoscaler's minimum.
//!
//! Once per package, each autoscaler is read ([`crate::kube::autoscaler`]) and bound to the
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
use crate::diag::{Code, Diagnostic, Diagnostics, Subject};
use crate::kube::autoscaler::Autoscaler as AutoscalerView;
use crate::kube::workload::Workload as WorkloadView;
use crate::level::Level;
use crate::load::documents::Document;
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

/// The level's replica count as the floor of the autoscaler's range: the count, its source and
/// the range the autoscaler is emitted with.
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
    let prefix = format!("cluster `{}` instance `{}`", context.cluster, context.instance);
    let target = format!("{} `{}`", context.workload.kind, context.workload.name);
    if min > view.min() {
        diagnostics.push(
            Diagnostic::new(
                Code::AutoscalerMinRaised,
                format!(
                    "{prefix}: {} `{}` may scale {target} down to {} replica{}, below the {min} its level `{}` needs; \
                     kix raises {} to {min} and leaves spec.replicas to the autoscaler",
                    view.kind,
                    view.name,
                    view.min(),
                    if view.min() == 1 { "" } else { "s" },
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
    (min, source, AutoscaledRange { min, max })
}
