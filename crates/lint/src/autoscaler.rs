//! HorizontalPodAutoscalers (K0717). An HPA (`autoscaling/v1`, `v2`) owns `spec.replicas` of its
//! `scaleTargetRef` between `minReplicas` (default 1, `pkg/apis/autoscaling/v2/defaults.go`) and
//! `maxReplicas`; the disruption controller reads the target's current scale
//! (`getExpectedPodCount`), so a budget over a workload the HPA may shrink to one pod either
//! blocks every drain (minAvailable) or protects nothing at that scale.

use super::set::Set;
use kix_diag::{Code, Diagnostic, Diagnostics};

/// K0717: an HPA whose minReplicas is below 2 over a workload that a budget selects.
pub fn check(set: &Set, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        let Some(hpa) = set.autoscaler(target) else { continue };
        if hpa.min_replicas >= 2 {
            continue;
        }
        let budgets: Vec<String> =
            set.budgets_in(&target.namespace).filter(|b| b.selects(target.pod_labels())).map(|b| b.label()).collect();
        if budgets.is_empty() {
            continue;
        }
        let written = if hpa.min_written { "" } else { " (the default)" };
        diagnostics.push(
            Diagnostic::new(
                Code::LintAutoscalerBelowTwo,
                format!(
                    "HorizontalPodAutoscaler `{}` has minReplicas {}{written} over {}, which {} covers: at one \
                     replica the budget blocks every drain or protects nothing",
                    hpa.name,
                    hpa.min_replicas,
                    target.label(),
                    super::text::and_list(&budgets)
                ),
            )
            .at(hpa.at_min_replicas.clone())
            .workload(&target.name)
            .help("set minReplicas to 2 or more"),
        );
    }
}
