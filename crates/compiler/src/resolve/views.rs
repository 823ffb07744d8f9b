//! Typed views of users' objects, located: the edge between [`kube`](kix_kube) and
//! [`diag`](kix_diag) on the compiler's side, where the one workload reader's structured errors
//! become diagnostics with their codes and the exact place in the user's file.
//!
//! kube/ knows field paths and reasons; it knows nothing of files, lines or diagnostic
//! codes. The compiler reads users' documents through these two functions.

use crate::load::documents::Document;
use kix_diag::{Code, Diagnostic};
use kix_kube::kind::WorkloadKind;
use kix_kube::strict::{self, CustomKinds, Problem};
use kix_kube::workload::{PdbView, WorkloadReason, WorkloadView};

/// Reads a Deployment or StatefulSet; `Err` carries every problem found, located in the document.
pub fn read_workload(document: &Document, kind: WorkloadKind) -> Result<WorkloadView, Vec<Diagnostic>> {
    read_workload_as(document, &document.value, kind)
}

/// Reads `value` (the document, or a Rollout with its workloadRef's template) as a workload, its
/// problems located in the document.
pub fn read_workload_as(
    document: &Document,
    value: &kix_yaml::Value,
    kind: WorkloadKind,
) -> Result<WorkloadView, Vec<Diagnostic>> {
    WorkloadView::read_as(value, kind).map_err(|problems| {
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
            .at(document.locate(kix_kube::workload::PdbError::PATH))
    })
}

/// Strict validation of one object (`kube::strict`): each problem becomes a diagnostic with its
/// code, at the exact key (or, for a missing field, at the deepest part of its path that exists;
/// for an unserved kind, at `apiVersion`).
pub fn strict_problems(document: &Document, custom: &CustomKinds<'_>) -> Vec<Diagnostic> {
    strict::check_object(&document.value, custom)
        .into_iter()
        .map(|error| {
            let code = match error.problem {
                Problem::UnknownField { .. } => Code::UnknownField,
                Problem::MissingField => Code::MissingField,
                Problem::WrongType { .. } => Code::WrongFieldType,
                Problem::NotServed { .. } => Code::NotServed,
            };
            // serde's words (`expected u32`) said as kix says them (issue 41).
            let said = match &error.problem {
                Problem::WrongType { reason } => {
                    error.to_string().replace(reason, &kix_diag::words::serde_message(reason))
                }
                _ => error.to_string(),
            };
            let message = format!("{} {}: {said}", document.kind(), document.name());
            let diagnostic = Diagnostic::new(code, message).at(document.locate_field(&error.path));
            match error.help() {
                Some(help) => diagnostic.help(help),
                None => diagnostic,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::documents::parse_documents;
    use kix_diag::{Diagnostics, SourceFile};

    const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  creationTimestamp: null
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy:
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
        ports: [{containerPort: 8080, name: http}]
        resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1.5}}
        readinessProbe: {httpGet: {port: http}}
status: {}
";

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer}
              port: {x-kubernetes-int-or-string: true}
              labels: {type: object, additionalProperties: {type: string}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1beta1
    served: false
    storage: false
---
";

    /// (code, line, column, message, help) of one diagnostic.
    type Found<C, M> = (C, usize, usize, M, Option<String>);

    /// Every strict problem of the documents in `text`.
    fn problems(text: &str) -> Vec<Found<&'static str, String>> {
        let mut diagnostics = Diagnostics::default();
        let documents = parse_documents(SourceFile::new("p/a.yaml", text.to_string()), &mut diagnostics);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let custom = CustomKinds::from_objects(documents.iter().map(|d| &d.value));
        documents
            .iter()
            .flat_map(|document| strict_problems(document, &custom))
            .map(|d| {
                let location = d.location().cloned().unwrap();
                (
                    d.code.id(),
                    location.line().unwrap(),
                    location.column().unwrap(),
                    d.message.to_string(),
                    d.help.map(std::borrow::Cow::into_owned),
                )
            })
            .collect()
    }

    #[test]
    fn strict_validation_accepts_valid_objects() {
        assert_eq!(problems(DEPLOYMENT), []);
        let others = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80, targetPort: http}, {port: 81, targetPort: 8081}]\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: db}]}\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3, port: http, labels: {a: b}, extra: {anything: [1]}}\n---\napiVersion: other.io/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {whatever: true}\n";
        assert_eq!(problems(&format!("{CRD}{others}")), []);
    }

    #[test]
    fn strict_validation_table() {
        let did_you_mean = |field: &str| Some(format!("did you mean `{field}`?"));
        #[rustfmt::skip]
        let cases: Vec<(String, Found<&str, &str>)> = vec![
            (DEPLOYMENT.replace("      containers:", "      containres:"),
             ("K0440", 16, 7, "Deployment web: unknown field `spec.template.spec.containres` (not in Kubernetes 1.33's schema)", did_you_mean("containers"))),
            (DEPLOYMENT.replace("  replicas: 3\n", "  replicas: 3\n  replica: 5\n"),
             ("K0440", 8, 3, "Deployment web: unknown field `spec.replica` (not in Kubernetes 1.33's schema)",
              Some("did you mean `replicas`? it is set too: remove one of them".into()))),
            (DEPLOYMENT.replace("apps/v1", "extensions/v1beta1"),
             ("K0443", 1, 1, "Deployment web: extensions/v1beta1 Deployment is not served by Kubernetes 1.33", Some("use apps/v1".into()))),
            (DEPLOYMENT.replace("apps/v1", "apps/v1beta1").replace("kind: Deployment", "kind: StatefulSet"),
             ("K0443", 1, 1, "StatefulSet web: apps/v1beta1 StatefulSet is not served by Kubernetes 1.33", Some("use apps/v1".into()))),
            (DEPLOYMENT.replace("kind: Deployment", "kind: Deploymnet"),
             ("K0443", 1, 1, "Deploymnet web: apps/v1 Deploymnet is not served by Kubernetes 1.33", Some("did you mean kind `Deployment`?".into()))),
            (DEPLOYMENT.replace("containerPort: 8080", "containerPort: eighty"),
             ("K0442", 19, 18, "Deployment web: `spec.template.spec.containers[0].ports[0].containerPort`: the text \"eighty\" is not valid here: it takes a whole number", None)),
            (DEPLOYMENT.replace("      - name: web\n        image", "      - image"),
             ("K0441", 17, 9, "Deployment web: required field `spec.template.spec.containers[0].name` is missing (Kubernetes 1.33)", None)),
            (DEPLOYMENT.replace("  creationTimestamp: null", "  creationTimestamp: yesterday"),
             ("K0442", 5, 3, "Deployment web: `metadata.creationTimestamp`: failed to parse four digit integer as year: invalid digit, expected 0-9 but got y", None)),
            ("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 1}\n".into(),
             ("K0443", 1, 1, "PodDisruptionBudget b: policy/v1beta1 PodDisruptionBudget is not served by Kubernetes 1.33", Some("use policy/v1".into()))),
            (format!("{CRD}apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: w}}\nspec:\n  size: 3\n  sise: 4\n"),
             ("K0440", 33, 3, "Widget w: unknown field `spec.sise` (not in CustomResourceDefinition widgets.example.com's schema)",
              Some("did you mean `size`? it is set too: remove one of them".into()))),
            (format!("{CRD}apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: w}}\nspec:\n  size: three\n"),
             ("K0442", 32, 3, "Widget w: `spec.size`: must be an integer, not a string", None)),
            (format!("{CRD}apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: w}}\nspec:\n  port: 8080\n"),
             ("K0441", 31, 1, "Widget w: required field `spec.size` is missing (CustomResourceDefinition widgets.example.com)", None)),
            (format!("{CRD}apiVersion: example.com/v1beta1\nkind: Widget\nmetadata: {{name: w}}\nspec: {{size: 1}}\n"),
             ("K0443", 28, 1, "Widget w: example.com/v1beta1 Widget is not served by CustomResourceDefinition widgets.example.com", Some("use example.com/v1".into()))),
        ];
        for (text, (code, line, column, message, help)) in cases {
            let found = problems(&text);
            assert_eq!(found, [(code, line, column, message.to_string(), help)], "{text}");
        }
    }
}
