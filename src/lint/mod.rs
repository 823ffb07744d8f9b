//! `kix lint`: the placement mistakes kix never makes, found in manifests kix did not write
//! (`helm template` output, a directory of YAML, a stream on stdin).
//!
//! Files are read with the package loader's bounds and parsed by
//! [`load::documents::parse_documents`] (lists flattened by [`kix_kube::list`], every object
//! with the YAML loader's marks), so every finding has a file, line and column. Directories are
//! walked for `*.yaml`/`*.yml` in path order (kustomize's `kustomization.yaml` is not a manifest
//! and is skipped). Workloads (Deployments, StatefulSets) and budgets are read through the one
//! reader in [`kix_kube::workload`], HorizontalPodAutoscalers by [`autoscaler`].
//!
//! Rules come in families, one file each: [`spread`] (topologySpreadConstraints),
//! [`budgets`] (PodDisruptionBudgets), [`affinity`] (pod anti-affinity and the lack of any
//! spreading), [`autoscaler`] (HPAs over budgeted workloads) and, with `--cluster`, [`cluster`]
//! (what only a declared cluster can tell: keys its nodes lack, replicas beyond its domains).
//! Each rule has its own code in the K07xx group; findings that the API server or the scheduler
//! turn into a stuck rollout or drain are errors, findings that weaken placement without
//! blocking anything are warnings (`kix explain K07xx` says which).
//!
//! Objects are grouped by `metadata.namespace` as written; objects without one share the
//! namespace they will be applied to, so they are grouped together.

mod affinity;
mod autoscaler;
mod budgets;
mod cluster;
mod facts;
mod spread;

use crate::load::documents::{Document, parse_documents};
use kix_diag::source::MAX_PACKAGE_FILE_BYTES;
use kix_diag::{Diagnostics, SourceFile};
use kix_kube::kind::WorkloadKind;
use kix_kube::selector::Labels;
use kix_kube::workload::{PdbView, Workload};
use std::path::{Path, PathBuf};

/// Where manifests come from.
#[derive(Clone, Debug)]
pub enum Input {
    /// A file, or a directory walked for `*.yaml`/`*.yml`.
    Path(PathBuf),
    /// Text already read (stdin), shown under `name`.
    Text { name: String, text: String },
}

/// `kix lint`: the manifests to lint and, optionally, the declared cluster to lint them for.
#[derive(Clone, Debug)]
pub struct LintRequest {
    pub inputs: Vec<Input>,
    /// `--cluster`: a cluster file under `root` whose substrate, keys and inventory the cluster rules use.
    pub cluster: Option<String>,
    /// The kix root holding `clusters/` (for `--cluster`).
    pub root: PathBuf,
}

/// What a lint found, and how much it read.
#[derive(Debug)]
pub struct Linted {
    pub diagnostics: Diagnostics,
    pub files: usize,
    pub objects: usize,
    pub workloads: usize,
    pub budgets: usize,
}

/// Lints every object of the inputs; diagnostics come back sorted.
pub fn lint(request: &LintRequest) -> Linted {
    let mut diagnostics = Diagnostics::default();
    let facts = match &request.cluster {
        Some(name) => match facts::ClusterFacts::load(&request.root, name) {
            Ok(facts) => Some(facts),
            Err(why) => {
                diagnostics.extend(why);
                diagnostics.finish();
                return Linted { diagnostics, files: 0, objects: 0, workloads: 0, budgets: 0 };
            }
        },
        None => None,
    };
    let sources = read_inputs(&request.inputs, &mut diagnostics);
    let files = sources.len();
    let documents: Vec<Document> =
        sources.into_iter().flat_map(|source| parse_documents(source, &mut diagnostics)).collect();
    let set = Set::read(documents, &mut diagnostics);
    spread::check(&set, &mut diagnostics);
    budgets::check(&set, &mut diagnostics);
    affinity::check(&set, facts.as_ref(), &mut diagnostics);
    autoscaler::check(&set, &mut diagnostics);
    if let Some(facts) = &facts {
        cluster::check(&set, facts, &mut diagnostics);
    }
    diagnostics.finish();
    Linted {
        diagnostics,
        files,
        objects: set.documents.len(),
        workloads: set.workloads.len(),
        budgets: set.budgets.len(),
    }
}

/// Reads every input: files as given, directories walked in path order.
fn read_inputs(inputs: &[Input], diagnostics: &mut Diagnostics) -> Vec<SourceFile> {
    let mut sources = Vec::new();
    for input in inputs {
        match input {
            Input::Text { name, text } => sources.push(SourceFile::new(name, text.clone())),
            Input::Path(path) if path.is_dir() => {
                // `*.yaml`/`*.yml`, but not kustomize's own file.
                let (files, problems) = crate::fs::walk(path, |path| {
                    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
                        && path.file_stem().is_none_or(|s| s != "kustomization")
                });
                problems.into_iter().for_each(|d| diagnostics.push(d));
                sources.extend(files.iter().filter_map(|file| read_file(file, diagnostics)));
            }
            Input::Path(path) => sources.extend(read_file(path, diagnostics)),
        }
    }
    sources
}

fn read_file(path: &Path, diagnostics: &mut Diagnostics) -> Option<SourceFile> {
    crate::fs::read_source(path, path.to_path_buf(), MAX_PACKAGE_FILE_BYTES).map_err(|d| diagnostics.push(d)).ok()
}

/// The objects of one lint run, read through kix's typed views.
pub(crate) struct Set {
    pub documents: Vec<Document>,
    pub workloads: Vec<Target>,
    pub budgets: Vec<Budget>,
    pub autoscalers: Vec<autoscaler::Autoscaler>,
}

/// A Deployment or StatefulSet.
pub(crate) struct Target {
    pub document: usize,
    pub view: Workload,
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
    fn read(documents: Vec<Document>, diagnostics: &mut Diagnostics) -> Set {
        let mut set =
            Set { documents: Vec::new(), workloads: Vec::new(), budgets: Vec::new(), autoscalers: Vec::new() };
        for (index, document) in documents.iter().enumerate() {
            let namespace = document
                .value
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string();
            if let Some(kind) = WorkloadKind::of(&document.value) {
                match crate::resolve::views::read_workload(document, kind) {
                    Ok(view) => set.workloads.push(Target { document: index, view, namespace, autoscaler: None }),
                    Err(problems) => problems.into_iter().for_each(|d| diagnostics.push(d)),
                }
            } else if PdbView::is_pdb(&document.value) {
                match crate::resolve::views::read_pdb(document) {
                    Ok(view) => set.budgets.push(Budget { document: index, view, namespace }),
                    Err(problem) => diagnostics.push(problem),
                }
            } else if let Some(hpa) = autoscaler::Autoscaler::read(index, document, namespace) {
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

    /// The HPA scaling a workload.
    pub fn autoscaler(&self, target: &Target) -> Option<&autoscaler::Autoscaler> {
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

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests;
