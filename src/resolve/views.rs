//! Typed views of users' objects, located: the edge between [`kube`](crate::kube) and
//! [`diag`](crate::diag) on the compiler's side, where the one workload reader's structured errors
//! become diagnostics with their codes and the exact place in the user's file.
//!
//! kube/ knows field paths and reasons; it knows nothing of files, lines or diagnostic
//! codes. The compiler reads users' documents through these two functions.

use crate::diag::{Code, Diagnostic};
use crate::kube::kind::WorkloadKind;
use crate::kube::workload::{PdbView, Workload, WorkloadReason};
use crate::load::documents::Document;

/// Reads a Deployment or StatefulSet; `Err` carries every problem found, located in the document.
pub fn read_workload(document: &Document, kind: WorkloadKind) -> Result<Workload, Vec<Diagnostic>> {
    Workload::read_as(&document.value, kind).map_err(|problems| {
        problems
            .iter()
            .map(|problem| {
                let code = match problem.reason {
                    WorkloadReason::NoSelector | WorkloadReason::EmptySelector => Code::EmptySelector,
                    WorkloadReason::InvalidSelector(_) => Code::InvalidSelector,
                    WorkloadReason::SelectorMismatch => Code::SelectorMismatch,
                    WorkloadReason::Replicas
                    | WorkloadReason::TemplateLabels(_)
                    | WorkloadReason::TemplateMetadata(_)
                    | WorkloadReason::NoPodTemplate
                    | WorkloadReason::Strategy(..) => Code::InvalidWorkload,
                };
                let diagnostic = Diagnostic::new(code, problem.to_string()).at(document.locate(problem.path));
                match problem.reason {
                    WorkloadReason::SelectorMismatch => {
                        diagnostic.help("make spec.template.metadata.labels satisfy spec.selector")
                    }
                    _ => diagnostic,
                }
            })
            .collect()
    })
}

/// Reads a shipped PodDisruptionBudget; a selector that does not parse is located.
pub fn read_pdb(document: &Document) -> Result<PdbView, Diagnostic> {
    PdbView::read(&document.value).map_err(|problem| {
        Diagnostic::new(Code::InvalidSelector, problem.to_string())
            .at(document.locate(crate::kube::workload::PdbError::PATH))
    })
}
