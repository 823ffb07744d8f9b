//! The objects of one lint run, read through kix's typed views: the workloads (each with its
//! namespace and the autoscaler that owns its replicas), the PodDisruptionBudgets and the
//! HorizontalPodAutoscalers. Every rule file reads them from here. Only the documents some rule
//! reads are kept ([`needed`]); every other one is dropped as soon as it is parsed.

use crate::load::documents::Document;
use kix_diag::Diagnostics;
use kix_kube::kind::{WorkloadKind, api_group};
use kix_kube::selector::Labels;
use kix_kube::value::{at, str_at};
use kix_kube::workload::{PdbView, WorkloadView};
use kix_yaml::Value;

/// Whether a rule reads the document: a workload (a Rollout's workloadRef and the Deployment it names
/// among them), a custom resource of a built-in profile's kind, a budget, an autoscaler, or a custom
/// resource whose operator runs pods a budget may select. Everything else (ConfigMaps, Services: most
/// of a stream's bytes) is needed only for its [`super::Object`], which is read as it streams past.
pub(super) fn needed(document: &Document, kinds: &kix_kube::operators::KindTable) -> bool {
    let value = &document.value;
    WorkloadKind::of(value).is_some()
        // A Rollout taking its template from a workloadRef is no workload by itself (`WorkloadKind::of`).
        || (document.group() == "argoproj.io" && document.kind() == "Rollout")
        || kinds.profile_of(value).is_some()
        || PdbView::is_pdb(value)
        || (api_group(document.api_version()) == "autoscaling" && document.kind() == "HorizontalPodAutoscaler")
        || kix_kube::operators::operator_pod_labels(document.group(), document.kind(), value).is_some()
}

/// The objects of one lint run, read through kix's typed views.
pub(crate) struct Set {
    /// The documents [`needed`] keeps, in input order.
    pub documents: Vec<Document>,
    pub workloads: Vec<Target>,
    pub budgets: Vec<Budget>,
    pub autoscalers: Vec<Autoscaler>,
}

/// A Deployment or StatefulSet.
pub(crate) struct Target {
    pub document: usize,
    pub view: WorkloadView,
    pub namespace: String,
    /// Index into `Set::autoscalers` of the HPA that scales it.
    pub autoscaler: Option<usize>,
}

/// A PodDisruptionBudget.
pub(crate) struct Budget {
    pub document: usize,
    pub view: PdbView,
    pub namespace: String,
}

impl Set {
    pub(super) fn read(
        documents: Vec<Document>,
        kinds: &kix_kube::operators::KindTable,
        diagnostics: &mut Diagnostics,
    ) -> Set {
        let mut set =
            Set { documents: Vec::new(), workloads: Vec::new(), budgets: Vec::new(), autoscalers: Vec::new() };
        // A Rollout with spec.workloadRef runs the referenced Deployment's template; that Deployment,
        // scaled to zero, holds the template only.
        let refs = crate::resolve::custom::template_refs(&documents);
        let holders = crate::resolve::custom::template_holders(&documents);
        for (index, document) in documents.iter().enumerate() {
            if holders.contains(&index) {
                continue;
            }
            let namespace = document
                .value
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string();
            if let Some(profile) = kinds.profile_of(&document.value) {
                if let Ok(view) = kix_kube::workload::read_custom(&document.value, profile) {
                    set.workloads.push(Target { document: index, view, namespace, autoscaler: None });
                }
                continue;
            }
            let read = match (WorkloadKind::of(&document.value), refs.get(&index)) {
                (Some(kind), _) => Some(crate::resolve::views::read_workload(document, kind)),
                (None, Some((combined, _))) => {
                    Some(crate::resolve::views::read_workload_as(document, combined, WorkloadKind::Rollout))
                }
                (None, None) => None,
            };
            if let Some(read) = read {
                match read {
                    Ok(view) => set.workloads.push(Target { document: index, view, namespace, autoscaler: None }),
                    Err(problems) => problems.into_iter().for_each(|d| diagnostics.push(d)),
                }
            } else if PdbView::is_pdb(&document.value) {
                match crate::resolve::views::read_pdb(document) {
                    Ok(view) => set.budgets.push(Budget { document: index, view, namespace }),
                    Err(problem) => diagnostics.push(problem),
                }
            } else if let Some(hpa) = Autoscaler::read(index, document, namespace) {
                set.autoscalers.push(hpa);
            }
        }
        for (index, hpa) in set.autoscalers.iter().enumerate() {
            if let Some(target) = set.workloads.iter_mut().find(|w| hpa.targets(w)) {
                target.autoscaler = Some(index);
            }
        }
        set.documents = documents;
        set
    }

    pub fn document(&self, index: usize) -> &Document {
        &self.documents[index]
    }

    /// The availability group kix compiled a document's object into (its `kix.dev/availability-group`
    /// annotation), if any.
    pub fn group_of(&self, document: usize) -> Option<&str> {
        let annotations = self.documents[document].value.get("metadata").and_then(|m| m.get("annotations"));
        annotations.and_then(|a| a.get(kix_kube::labels::GROUP_ANNOTATION)).and_then(Value::as_str)
    }

    /// Whether two objects are of one availability group kix compiled (which shares spread and budget on purpose).
    pub fn same_group(&self, one: usize, other: usize) -> bool {
        self.group_of(one).is_some_and(|g| self.group_of(other) == Some(g))
    }

    /// The HPA scaling a workload.
    pub fn autoscaler(&self, target: &Target) -> Option<&Autoscaler> {
        target.autoscaler.map(|i| &self.autoscalers[i])
    }

    /// The count the disruption controller expects at the workload's lowest scale: the HPA's
    /// minReplicas when one scales it, else `spec.replicas` (1 when absent).
    pub fn low_replicas(&self, target: &Target) -> u32 {
        match self.autoscaler(target) {
            Some(hpa) => hpa.min_replicas,
            None => target.view.manifest_replicas.unwrap_or(1),
        }
    }

    /// The most replicas the workload can run: the HPA's maxReplicas, else `spec.replicas`.
    pub fn high_replicas(&self, target: &Target) -> u32 {
        match self.autoscaler(target) {
            Some(hpa) => hpa.max_replicas.max(hpa.min_replicas),
            None => target.view.manifest_replicas.unwrap_or(1),
        }
    }

    /// Other workloads of the namespace.
    pub fn neighbours<'a>(&'a self, target: &'a Target) -> impl Iterator<Item = &'a Target> + 'a {
        self.workloads.iter().filter(move |w| w.namespace == target.namespace && w.document != target.document)
    }
}

impl Target {
    /// `Deployment/web`, as messages name a workload.
    pub fn label(&self) -> String {
        format!("{} `{}`", self.view.kind, self.view.name)
    }

    /// The labels its pods carry (the template's; the controller adds its hash labels).
    pub fn pod_labels(&self) -> &Labels {
        &self.view.template_labels
    }

    /// The pod spec (`spec.template.spec`).
    pub fn pod_spec(&self) -> Option<&kix_yaml::Value> {
        self.view.template.get("spec")
    }
}

impl Budget {
    pub fn label(&self) -> String {
        format!("PodDisruptionBudget `{}`", self.view.name)
    }
}

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
