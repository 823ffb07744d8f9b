//! `kix lint`: the placement mistakes kix never makes, found in manifests kix did not write
//! (`helm template` output, a directory of YAML, a stream on stdin).
//!
//! Files are read with the package loader's bounds, a window of whole documents at a time, and
//! parsed one document at a time ([`kix_compiler::load::streamed`]; lists flattened by [`kix_kube::list`],
//! every object with the YAML loader's marks), so every finding has a file, line and column. Each
//! document's object record ([`Object`]: where it is, what its `kix.dev/allow` accepts) is taken as
//! it streams past, with a compact record of what the rules read of it ([`set`]: workloads, budgets,
//! autoscalers, operators' custom resources, the places a finding may point at located as it is
//! read), and the document's tree is dropped: a lint holds those records and its findings, never a
//! file's text (a finding's lines are read from its file again when it is printed) nor its trees.
//! Stdin is held whole. Directories are walked for `*.yaml`/`*.yml` in path order (kustomize's `kustomization.yaml` is not a manifest
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
//! Warnings can be accepted ([`accepted`]): on one object by its `kix.dev/allow` annotation, with
//! `--cluster` by the cluster's and its instances' `allow`; `--deny-warnings` fails on the rest.
//!
//! Objects are grouped by `metadata.namespace` as written; objects without one share the
//! namespace they will be applied to, so they are grouped together.
//!
//! **Environments** (issue 41): two objects of one identity (API group, kind, namespace, name) cannot be in
//! one cluster, so when two environments ([`files`]: the first directory below a directory argument, a
//! named file's own directory, stdin) each hold one, each environment is linted on its own: its
//! cross-object findings (budgets over pods, selectors across workloads) are judged within it, never
//! across (`staging/` and `prod/` each with Deployment and PodDisruptionBudget `web`). Without such a
//! clash every object is in one run, as a `kubectl apply` of them all would be. Two objects of one
//! identity in one environment would land in one apply, where the later silently replaces the earlier:
//! that is its own finding (K0725).

mod accepted;
mod affinity;
mod autoscaler;
mod budgets;
mod cluster;
mod environments;
mod facts;
mod files;
mod pod_spec;
mod set;
mod siblings;
mod spread;
mod text;

pub use accepted::{ByFile, Object};
pub use files::Input;
use kix_diag::Diagnostics;
use std::path::{Path, PathBuf};

/// `kix lint`: the manifests to lint and, optionally, the declared cluster to lint them for.
#[derive(Clone, Debug)]
pub struct LintRequest {
    pub inputs: Vec<Input>,
    /// `--cluster`: a cluster file under `root` whose substrate, keys and inventory the cluster rules use.
    pub cluster: Option<String>,
    /// The kix root holding `clusters/` (for `--cluster`).
    pub root: PathBuf,
    /// `--deny-warnings`: a warning left after what is accepted fails the run (K0502).
    pub deny_warnings: bool,
}

/// What a lint found, and how much it read.
#[derive(Debug)]
pub struct Linted {
    pub diagnostics: Diagnostics,
    pub files: usize,
    /// Every object read, in input order, with where it is written.
    pub objects: Vec<Object>,
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
                return Linted { diagnostics, files: 0, objects: Vec::new(), workloads: 0, budgets: 0 };
            }
        },
        None => None,
    };
    let inputs = files::list(&request.inputs, &mut diagnostics);
    // Custom resources of a built-in profile's kind run pods as their operator says (issue 18); one
    // the profile cannot read is left to the build's K0435.
    let kinds = kix_kube::operators::KindTable::new(Vec::new());
    // Each document as it is parsed: its object record (and K0730, reported after the rules' findings),
    // and what the rules read of it; the document itself is dropped (see `set`), and a file's text is
    // never held whole (`load::streamed`).
    let mut objects: Vec<Object> = Vec::new();
    let mut names = accepted::ObjectNames::default();
    let mut allow_problems = Diagnostics::default();
    let mut collector = set::Collector::new(&kinds);
    let mut read_problems = Diagnostics::default();
    let mut files = 0;
    // Each object's identity and where it is (its environment, its file's first object), for the
    // environments' rule.
    let mut identities: Vec<(environments::Identity, usize)> = Vec::new();
    let mut first_object: Vec<usize> = Vec::with_capacity(inputs.len());
    for (position, input) in inputs.iter().enumerate() {
        let file: std::sync::Arc<Path> = input.path().into();
        first_object.push(objects.len());
        let read = input.each_document(&mut diagnostics, |document| {
            identities.push((environments::Identity::of(&document), position));
            objects.push(accepted::object(&document, &file, &mut names, &mut allow_problems));
            collector.take(objects.len() - 1, document, &mut read_problems);
        });
        files += usize::from(read);
    }
    diagnostics.extend(read_problems);
    let split = environments::split(&inputs, &identities, &objects, &mut diagnostics);
    let set = collector.finish(&objects, &inputs, &mut diagnostics);
    let (mut workloads, mut budgets) = (set.workloads.len(), set.budgets.len());
    match split {
        None => check_set(set, facts.as_ref(), &mut diagnostics),
        Some(groups) => {
            // Each environment on its own: its files read again into a set of their own (the first pass's
            // set joined them; what they read wrong was reported by it).
            drop(set);
            (workloads, budgets) = (0, 0);
            for group in groups {
                let mut collector = set::Collector::new(&kinds);
                let (mut ignored, mut ignored_reading) = (Diagnostics::default(), Diagnostics::default());
                for &position in &group {
                    let mut index = first_object[position];
                    inputs[position].each_document(&mut ignored_reading, |document| {
                        collector.take(index, document, &mut ignored);
                        index += 1;
                    });
                }
                let set = collector.finish(&objects, &inputs, &mut ignored);
                workloads += set.workloads.len();
                budgets += set.budgets.len();
                check_set(set, facts.as_ref(), &mut diagnostics);
            }
        }
    }
    diagnostics.extend(allow_problems);
    accepted::settle(&objects, facts.as_ref(), request.deny_warnings, &mut diagnostics);
    Linted { diagnostics, files, objects, workloads, budgets }
}

/// Every rule over one set of objects (the run's, or one environment's). The records and their index are
/// let go before the findings are settled and sorted, whose lookup by object and permutation would
/// otherwise come on top of them at the run's peak.
fn check_set(set: set::Set, facts: Option<&facts::ClusterFacts>, diagnostics: &mut Diagnostics) {
    let index = set.label_index();
    spread::check(&set, &index, diagnostics);
    siblings::check(&set, &index, diagnostics);
    budgets::check(&set, &index, diagnostics);
    affinity::check(&set, facts, diagnostics);
    autoscaler::check(&set, diagnostics);
    if let Some(facts) = facts {
        cluster::check(&set, facts, diagnostics);
    }
}

#[cfg(test)]
mod index_tests;
#[cfg(test)]
mod tests;
