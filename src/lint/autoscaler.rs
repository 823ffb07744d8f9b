//! HorizontalPodAutoscalers (K0717). An HPA (`autoscaling/v1`, `v2`) owns `spec.replicas` of its
//! `scaleTargetRef` between `minReplicas` (default 1, `pkg/apis/autoscaling/v2/defaults.go`) and
//! `maxReplicas`; the disruption controller reads the target's current scale
//! (`getExpectedPodCount`), so a budget over a workload the HPA may shrink to one pod either
//! blocks every drain (minAvailable) or protects nothing at that scale.

use super::{Set, Target};
use crate::load::documents::Document;
use kix_diag::{Code, Diagnostic, Diagnostics};
use kix_kube::kind::api_group;
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// What lint reads of an HPA.
pub(crate) struct Autoscaler {
    pub document: usize,
    pub name: String,
    pub namespace: String,
    /// `scaleTargetRef.kind` and `.name`.
    pub target_kind: String,
    pub target_name: String,
    pub min_replicas: u32,
    /// Whether `minReplicas` is written (else the default 1 applies).
    pub min_written: bool,
    pub max_replicas: u32,
}

impl Autoscaler {
    /// Reads an `autoscaling` HorizontalPodAutoscaler (`None` for anything else).
    pub fn read(document: usize, object: &Document, namespace: String) -> Option<Autoscaler> {
        let value = &object.value;
        if api_group(object.api_version()) != "autoscaling" || object.kind() != "HorizontalPodAutoscaler" {
            return None;
        }
        let count = |field: &str| {
            at(value, &["spec", field]).and_then(Value::as_u64).map(|n| n.min(u64::from(u32::MAX)) as u32)
        };
        Some(Autoscaler {
            document,
            name: object.name().to_string(),
            namespace,
            target_kind: str_at(value, &["spec", "scaleTargetRef", "kind"]).unwrap_or_default().to_string(),
            target_name: str_at(value, &["spec", "scaleTargetRef", "name"]).unwrap_or_default().to_string(),
            min_replicas: count("minReplicas").unwrap_or(1),
            min_written: count("minReplicas").is_some(),
            max_replicas: count("maxReplicas").unwrap_or(1),
        })
    }

    /// Whether it scales this workload (same namespace, kind and name).
    pub fn targets(&self, target: &Target) -> bool {
        self.namespace == target.namespace
            && self.target_kind == target.view.kind.as_str()
            && self.target_name == target.view.name
    }
}

/// K0717: an HPA whose minReplicas is below 2 over a workload that a budget selects.
pub fn check(set: &Set, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        let Some(hpa) = set.autoscaler(target) else { continue };
        if hpa.min_replicas >= 2 {
            continue;
        }
        let budgets: Vec<String> = set
            .budgets
            .iter()
            .filter(|b| b.namespace == target.namespace && b.view.selects(target.pod_labels()))
            .map(|b| b.label())
            .collect();
        if budgets.is_empty() {
            continue;
        }
        let written = if hpa.min_written { "" } else { " (the default)" };
        let document = set.document(hpa.document);
        let at = if hpa.min_written { document.locate(&["spec", "minReplicas"]) } else { document.locate(&["spec"]) };
        diagnostics.push(
            Diagnostic::new(
                Code::LintAutoscalerBelowTwo,
                format!(
                    "HorizontalPodAutoscaler `{}` has minReplicas {}{written} over {}, which {} covers: at one \
                     replica the budget blocks every drain or protects nothing",
                    hpa.name,
                    hpa.min_replicas,
                    target.label(),
                    super::and_list(&budgets)
                ),
            )
            .at(at)
            .workload(&target.view.name)
            .help("set minReplicas to 2 or more"),
        );
    }
}
