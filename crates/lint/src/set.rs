//! The objects of one lint run, as compact records: the workloads (each with its namespace, its pod
//! labels, its spread constraints and anti-affinity terms, and the autoscaler that owns its replicas),
//! the PodDisruptionBudgets, the HorizontalPodAutoscalers and the pod labels of operators' custom
//! resources. Every rule file reads them from here.
//!
//! A record is made from its document while the document streams past ([`Collector::take`]), with
//! the places a finding may point at already located, and the document (its tree and its marks,
//! about ten times its text) is dropped at once: a lint holds the files' text and these records,
//! never the files' trees. The one exception is Argo Rollouts' workloadRef, which ties two documents
//! together: a Rollout without a template and a Deployment scaled to zero (which may hold a Rollout's
//! template) are kept until every document is read, and a Deployment a Rollout names that was not kept
//! is parsed again from its file ([`Collector::finish`]).

use super::pod_spec::{AffinityTerm, Constraint, PodTerm, Term};
use kix_compiler::load::documents::Document;
use kix_diag::{Diagnostics, Location};
use kix_kube::int_or_percent::IntOrPercent;
use kix_kube::kind::{WorkloadKind, api_group};
use kix_kube::selector::{CompactLabels, CompactSelector};
use kix_kube::value::{at, str_at};
use kix_kube::workload::{PdbView, WorkloadView};
use kix_yaml::Value;
use std::collections::BTreeMap;

/// Whether a rule reads the document: a workload (a Rollout's workloadRef and the Deployment it names
/// among them), a custom resource of a built-in profile's kind, a budget, an autoscaler, or a custom
/// resource whose operator runs pods a budget may select. Everything else (ConfigMaps, Services: most
/// of a stream's bytes) is needed only for its [`super::Object`], which is read as it streams past.
fn needed(document: &Document, kinds: &kix_kube::operators::KindTable) -> bool {
    let value = &document.value;
    WorkloadKind::of(value).is_some()
        // A Rollout taking its template from a workloadRef is no workload by itself (`WorkloadKind::of`).
        || is_rollout_without_template(document)
        || kinds.profile_of(value).is_some()
        || PdbView::is_pdb(value)
        || is_autoscaler(document)
        || kix_kube::operators::operator_pod_labels(document.group(), document.kind(), value).is_some()
}

fn is_rollout_without_template(document: &Document) -> bool {
    document.group() == "argoproj.io" && document.kind() == "Rollout" && WorkloadKind::of(&document.value).is_none()
}

/// A Deployment at `spec.replicas: 0`: perhaps only the holder of a Rollout's template.
fn is_scaled_to_zero_deployment(document: &Document) -> bool {
    WorkloadKind::of(&document.value) == Some(WorkloadKind::Deployment)
        && at(&document.value, &["spec", "replicas"]).and_then(Value::as_u64) == Some(0)
}

fn is_autoscaler(document: &Document) -> bool {
    api_group(document.api_version()) == "autoscaling" && document.kind() == "HorizontalPodAutoscaler"
}

/// `metadata.namespace` as written (empty when absent).
fn namespace_of(value: &Value) -> String {
    str_at(value, &["metadata", "namespace"]).unwrap_or_default().to_string()
}

/// The availability group kix compiled an object into (its `kix.dev/availability-group` annotation), if any.
fn group_of(value: &Value) -> Option<String> {
    let annotations = value.get("metadata").and_then(|m| m.get("annotations"));
    annotations.and_then(|a| a.get(kix_kube::kix_names::GROUP_ANNOTATION)).and_then(Value::as_str).map(str::to_string)
}

/// The objects of one lint run, as the rules read them.
pub(crate) struct Set {
    /// In input order.
    pub workloads: Vec<Target>,
    pub budgets: Vec<Budget>,
    pub autoscalers: Vec<Autoscaler>,
    /// The namespace and pod labels of each operator's custom resource a budget may select.
    pub operator_pods: Vec<(String, CompactLabels)>,
    /// Indices into `workloads` and `budgets` by namespace, in input order: rules across objects
    /// look at one namespace, never at the whole run.
    workloads_by_namespace: BTreeMap<String, Vec<usize>>,
    budgets_by_namespace: BTreeMap<String, Vec<usize>>,
}

/// A workload: a Deployment, StatefulSet, Rollout or a custom resource of a built-in profile.
pub(crate) struct Target {
    /// Its index among the run's objects (input order).
    pub object: usize,
    pub kind: WorkloadKind,
    pub name: String,
    pub namespace: String,
    /// `spec.replicas` as written.
    pub manifest_replicas: Option<u32>,
    /// The labels its pods carry (the template's; the controller adds its hash labels).
    pub pod_labels: CompactLabels,
    pub group: Option<String>,
    /// Index into `Set::autoscalers` of the HPA that scales it.
    pub autoscaler: Option<usize>,
    /// `topologySpreadConstraints` entries that are mappings.
    pub constraints: Vec<Constraint>,
    /// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub anti_affinity: Vec<Term>,
    /// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub affinity: Vec<AffinityTerm>,
    /// Whether it has any preferred pod anti-affinity term.
    pub preferred_anti_affinity: bool,
    /// Every pod affinity and anti-affinity term, required and preferred (K0724).
    pub pod_terms: Vec<PodTerm>,
    /// The first host port its pods take (`port/protocol`) and where it is written (K0722).
    pub host_port: Option<(String, Location)>,
    /// Where `spec.selector`, `spec.template.metadata.labels` and `spec.template.spec` are written.
    pub at_selector: Location,
    pub at_pod_labels: Location,
    pub at_pod_spec: Location,
}

impl Target {
    fn read(object: usize, document: &Document, view: WorkloadView) -> Target {
        let namespace = namespace_of(&document.value);
        let pod_spec = view.template.get("spec");
        let anti_affinity =
            super::pod_spec::required_anti_affinity(pod_spec, &view.template_labels, &namespace, document);
        Target {
            object,
            constraints: super::pod_spec::constraints(pod_spec, document),
            affinity: super::pod_spec::required_affinity(pod_spec, document),
            preferred_anti_affinity: super::pod_spec::has_preferred_anti_affinity(pod_spec),
            pod_terms: super::pod_spec::pod_terms(pod_spec, document),
            host_port: super::pod_spec::first_host_port(pod_spec, document),
            anti_affinity,
            kind: view.kind,
            name: view.name,
            manifest_replicas: view.manifest_replicas,
            pod_labels: view.template_labels.into(),
            group: group_of(&document.value),
            autoscaler: None,
            at_selector: document.locate(&["spec", "selector"]),
            at_pod_labels: document.locate(&["spec", "template", "metadata", "labels"]),
            at_pod_spec: document.locate(&["spec", "template", "spec"]),
            namespace,
        }
    }

    /// `Deployment/web`, as messages name a workload.
    pub fn label(&self) -> String {
        format!("{} `{}`", self.kind, self.name)
    }

    pub fn pod_labels(&self) -> &CompactLabels {
        &self.pod_labels
    }

    /// Its pods' labels and its kind: whose pods a spread constraint of its own counts (`Constraint::counts`).
    pub fn owner(&self) -> (&CompactLabels, WorkloadKind) {
        (&self.pod_labels, self.kind)
    }
}

/// A PodDisruptionBudget.
pub(crate) struct Budget {
    pub name: String,
    /// `None` when it has no selector: it selects no pods.
    pub selector: Option<CompactSelector>,
    pub min_available: Option<IntOrPercent>,
    pub max_unavailable: Option<IntOrPercent>,
    pub namespace: String,
    pub group: Option<String>,
    /// Whether `spec.unhealthyPodEvictionPolicy` is written.
    pub eviction_policy: bool,
    /// Where `spec`, `spec.selector`, `spec.maxUnavailable` and `spec.minAvailable` are written (or
    /// the nearest ancestor that is).
    pub at_spec: Location,
    pub at_selector: Location,
    pub at_max_unavailable: Location,
    pub at_min_available: Location,
}

impl Budget {
    pub fn label(&self) -> String {
        format!("PodDisruptionBudget `{}`", self.name)
    }

    /// Whether it covers pods with these labels ([`PdbView::selects`]).
    pub fn selects(&self, labels: &CompactLabels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }
}

/// What lint reads of an HPA.
pub(crate) struct Autoscaler {
    pub name: String,
    pub namespace: String,
    /// `scaleTargetRef.kind` and `.name`.
    pub target_kind: String,
    pub target_name: String,
    pub min_replicas: u32,
    /// Whether `minReplicas` is written (else the default 1 applies).
    pub min_written: bool,
    pub max_replicas: u32,
    /// `spec.minReplicas` where written, else `spec`.
    pub at_min_replicas: Location,
}

impl Autoscaler {
    /// Reads an `autoscaling` HorizontalPodAutoscaler.
    fn read(document: &Document) -> Autoscaler {
        let value = &document.value;
        let count = |field: &str| {
            at(value, &["spec", field]).and_then(Value::as_u64).map(|n| n.min(u64::from(u32::MAX)) as u32)
        };
        let min_written = count("minReplicas").is_some();
        Autoscaler {
            name: document.name().to_string(),
            namespace: namespace_of(value),
            target_kind: str_at(value, &["spec", "scaleTargetRef", "kind"]).unwrap_or_default().to_string(),
            target_name: str_at(value, &["spec", "scaleTargetRef", "name"]).unwrap_or_default().to_string(),
            min_replicas: count("minReplicas").unwrap_or(1),
            min_written,
            max_replicas: count("maxReplicas").unwrap_or(1),
            at_min_replicas: if min_written {
                document.locate(&["spec", "minReplicas"])
            } else {
                document.locate(&["spec"])
            },
        }
    }
}

/// Makes the [`Set`] as documents stream past.
pub(super) struct Collector<'k> {
    kinds: &'k kix_kube::operators::KindTable,
    set: Set,
    /// Rollouts without a template and Deployments scaled to zero, with their object's index: what a
    /// workloadRef ties together, read once every document is.
    deferred: Vec<(usize, Document)>,
}

impl<'k> Collector<'k> {
    pub fn new(kinds: &'k kix_kube::operators::KindTable) -> Collector<'k> {
        let set = Set {
            workloads: Vec::new(),
            budgets: Vec::new(),
            autoscalers: Vec::new(),
            operator_pods: Vec::new(),
            workloads_by_namespace: BTreeMap::new(),
            budgets_by_namespace: BTreeMap::new(),
        };
        Collector { kinds, set, deferred: Vec::new() }
    }

    /// Takes what the rules read of the run's `object`-th object; the document is dropped unless a
    /// workloadRef may tie it to another.
    pub fn take(&mut self, object: usize, document: Document, diagnostics: &mut Diagnostics) {
        if !needed(&document, self.kinds) {
            return;
        }
        if let Some(labels) =
            kix_kube::operators::operator_pod_labels(document.group(), document.kind(), &document.value)
        {
            self.set.operator_pods.push((namespace_of(&document.value), labels.into()));
        }
        if is_rollout_without_template(&document) || is_scaled_to_zero_deployment(&document) {
            self.deferred.push((object, document));
            return;
        }
        self.read(object, &document, None, diagnostics);
    }

    /// One document's record; `combined` is a Rollout with its workloadRef's template.
    fn read(&mut self, object: usize, document: &Document, combined: Option<&Value>, diagnostics: &mut Diagnostics) {
        if let Some(profile) = self.kinds.profile_of(&document.value) {
            if let Ok(view) = kix_kube::workload::read_custom(&document.value, profile) {
                self.set.workloads.push(Target::read(object, document, view));
            }
            return;
        }
        let read = match (WorkloadKind::of(&document.value), combined) {
            (Some(kind), _) => Some(kix_compiler::resolve::views::read_workload(document, kind)),
            (None, Some(combined)) => {
                Some(kix_compiler::resolve::views::read_workload_as(document, combined, WorkloadKind::Rollout))
            }
            (None, None) => None,
        };
        if let Some(read) = read {
            match read {
                Ok(view) => self.set.workloads.push(Target::read(object, document, view)),
                Err(problems) => problems.into_iter().for_each(|d| diagnostics.push(d)),
            }
        } else if PdbView::is_pdb(&document.value) {
            match kix_compiler::resolve::views::read_pdb(document) {
                Ok(view) => self.set.budgets.push(Budget {
                    name: view.name,
                    selector: view.selector.map(CompactSelector::from),
                    min_available: view.min_available,
                    max_unavailable: view.max_unavailable,
                    namespace: namespace_of(&document.value),
                    group: group_of(&document.value),
                    eviction_policy: at(&document.value, &["spec", "unhealthyPodEvictionPolicy"]).is_some(),
                    at_spec: document.locate(&["spec"]),
                    at_selector: document.locate(&["spec", "selector"]),
                    at_max_unavailable: document.locate(&["spec", "maxUnavailable"]),
                    at_min_available: document.locate(&["spec", "minAvailable"]),
                }),
                Err(problem) => diagnostics.push(problem),
            }
        } else if is_autoscaler(document) {
            self.set.autoscalers.push(Autoscaler::read(document));
        }
    }

    /// The set, once every document was taken: the deferred Rollouts read with the template their
    /// workloadRef names (found among the deferred Deployments, or parsed again from the file of the
    /// Deployment `objects` says has that name), the Deployments that only hold a template left out,
    /// the autoscalers bound to their workloads.
    pub fn finish(
        mut self,
        objects: &[super::Object],
        files: &[super::files::LintFile],
        diagnostics: &mut Diagnostics,
    ) -> Set {
        let mut documents = std::mem::take(&mut self.deferred);
        let kept: std::collections::BTreeSet<usize> = documents.iter().map(|(object, _)| *object).collect();
        let wanted: std::collections::BTreeSet<usize> = documents
            .iter()
            .filter(|(_, document)| is_rollout_without_template(document))
            .flat_map(|(_, rollout)| {
                let name = str_at(&rollout.value, &["spec", "workloadRef", "name"]).unwrap_or_default();
                let namespace = namespace_of(&rollout.value);
                let place = if namespace.is_empty() { String::new() } else { format!("{namespace}/") };
                let written = format!("Deployment {place}{name}");
                objects.iter().enumerate().filter(move |(_, o)| o.is_named(&written)).map(|(index, _)| index)
            })
            .filter(|index| !kept.contains(index))
            .collect();
        let reread = reread(&wanted, objects, files);
        let reread_objects: std::collections::BTreeSet<usize> = reread.iter().map(|(object, _)| *object).collect();
        documents.extend(reread);
        documents.sort_by_key(|(object, _)| *object);
        let (indices, documents): (Vec<usize>, Vec<Document>) = documents.into_iter().unzip();
        let refs = kix_compiler::resolve::custom::template_refs(&documents);
        let holders = kix_compiler::resolve::custom::template_holders(&documents);
        for (index, (object, document)) in indices.iter().zip(&documents).enumerate() {
            // Re-read Deployments were read as they streamed past; they are here only as templates.
            if holders.contains(&index) || reread_objects.contains(object) {
                continue;
            }
            self.read(*object, document, refs.get(&index).map(|(combined, _)| combined), diagnostics);
        }
        drop(documents);
        let mut set = self.set;
        // Each object is one workload at most: the keys are distinct, so an unstable sort is as deterministic
        // and needs no scratch copy of the records.
        set.workloads.sort_unstable_by_key(|w| w.object);
        // Each autoscaler scales the first workload (in input order) of its namespace and its target's kind and
        // name (the last autoscaler naming a workload wins), found
        // through an index rather than a scan of every workload per autoscaler.
        let mut by_name: std::collections::HashMap<(&str, &str, &str), usize> = std::collections::HashMap::new();
        for (position, w) in set.workloads.iter().enumerate() {
            by_name.entry((w.namespace.as_str(), w.kind.as_str(), w.name.as_str())).or_insert(position);
        }
        let bound: Vec<(usize, usize)> = (set.autoscalers.iter().enumerate())
            .filter_map(|(index, hpa)| {
                let key = (hpa.namespace.as_str(), hpa.target_kind.as_str(), hpa.target_name.as_str());
                by_name.get(&key).map(|&position| (position, index))
            })
            .collect();
        drop(by_name);
        for (position, index) in bound {
            set.workloads[position].autoscaler = Some(index);
        }
        for (index, workload) in set.workloads.iter().enumerate() {
            set.workloads_by_namespace.entry(workload.namespace.clone()).or_default().push(index);
        }
        for (index, budget) in set.budgets.iter().enumerate() {
            set.budgets_by_namespace.entry(budget.namespace.clone()).or_default().push(index);
        }
        set
    }
}

/// The documents of the `wanted` objects, parsed again from their files (their problems were reported
/// the first time).
fn reread(
    wanted: &std::collections::BTreeSet<usize>,
    objects: &[super::Object],
    files: &[super::files::LintFile],
) -> Vec<(usize, Document)> {
    let mut found = Vec::new();
    let paths: std::collections::BTreeSet<&std::path::Path> =
        wanted.iter().map(|&index| &*objects[index].file).collect();
    for file in files.iter().filter(|file| paths.contains(file.path())) {
        let mut already_reported = Diagnostics::default();
        file.each_document(&mut already_reported, |document| {
            let range = document.byte_range();
            let object = wanted
                .iter()
                .copied()
                .find(|&index| *objects[index].file == *file.path() && objects[index].range == range);
            if let Some(object) = object {
                found.push((object, document));
            }
        });
    }
    found
}

impl Set {
    /// Whether two objects are of one availability group kix compiled (which shares spread and budget on purpose).
    pub fn same_group(one: &Option<String>, other: &Option<String>) -> bool {
        one.is_some() && one == other
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
            None => target.manifest_replicas.unwrap_or(1),
        }
    }

    /// The most replicas the workload can run: the HPA's maxReplicas, else `spec.replicas`.
    pub fn high_replicas(&self, target: &Target) -> u32 {
        match self.autoscaler(target) {
            Some(hpa) => hpa.max_replicas.max(hpa.min_replicas),
            None => target.manifest_replicas.unwrap_or(1),
        }
    }

    /// The workloads of a namespace, in input order.
    pub fn in_namespace<'a>(&'a self, namespace: &str) -> impl Iterator<Item = &'a Target> + 'a {
        let indices = self.workloads_by_namespace.get(namespace).map_or(&[][..], Vec::as_slice);
        indices.iter().map(|&i| &self.workloads[i])
    }

    /// The budgets of a namespace, in input order.
    pub fn budgets_in<'a>(&'a self, namespace: &str) -> impl Iterator<Item = &'a Budget> + 'a {
        let indices = self.budgets_by_namespace.get(namespace).map_or(&[][..], Vec::as_slice);
        indices.iter().map(|&i| &self.budgets[i])
    }

    /// The workloads indexed by namespace and pod label, positions into `workloads`: what a selector may
    /// select, without matching it against every workload of its namespace.
    pub fn label_index(&self) -> kix_compiler::crosscheck::index::LabelIndex<'_> {
        kix_compiler::crosscheck::index::LabelIndex::of_pairs(
            self.workloads.iter().map(|w| (w.namespace.as_str(), w.pod_labels.iter())),
        )
    }

    /// The other workloads of the target's namespace that `selector` may select (a superset: the caller
    /// matches each), in input order.
    pub fn candidates<'a>(
        &'a self,
        index: &'a kix_compiler::crosscheck::index::LabelIndex<'a>,
        target: &'a Target,
        selector: &CompactSelector,
    ) -> impl Iterator<Item = &'a Target> + 'a {
        let positions = index.candidates_for(&target.namespace, selector.match_labels.iter());
        positions.iter().map(|&i| &self.workloads[i]).filter(move |w| w.object != target.object)
    }

    /// Other workloads of the namespace.
    pub fn neighbours<'a>(&'a self, target: &'a Target) -> impl Iterator<Item = &'a Target> + 'a {
        self.in_namespace(&target.namespace).filter(move |w| w.object != target.object)
    }
}
