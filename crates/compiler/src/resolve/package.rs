//! Packages: validate each loaded package directory once (its name, version,
//! workloads, shipped budgets, autoscalers and `[workloads.X]` entries),
//! independently of any cluster, and report versions defined twice (R6 checks, R12, R13).
//!
//! A package that fails is absent from what follows; its name is kept among
//! the failed ones so an instance naming it is not also told it does not exist.

use super::model::{DocumentScope, Package, PackageDocument, Sourced, Workload};
use crate::load::PackageDir;
use crate::load::documents::Document;
use crate::load::package::{EvictionPolicy, RawWorkload, Survive};
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile, Subject};
use kix_kube::autoscaler::AutoscalerView;
use kix_kube::kind::{ControllerKind, WorkloadKind};
use kix_kube::level::Level;
use kix_kube::names;
use kix_kube::operators::KindTable;
use kix_kube::strict::CustomKinds;
use kix_kube::workload::{MAX_REPLICAS, PdbView, WorkloadView};
use kix_yaml::Value;
use semver::Version;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use toml::Spanned;

/// The packages that validated, and the names of those that did not.
#[derive(Debug, Default)]
pub struct Packages {
    pub valid: Vec<Arc<Package>>,
    /// `meta.name` of every failed package (`None` where no usable name could be read: then any
    /// missing package may be that one).
    pub failed: BTreeSet<Option<String>>,
    /// Directories under `packages/` without a kix.toml, by name (`load::Tree::not_packages`).
    pub not_packages: Vec<String>,
}

impl Packages {
    /// Whether a package of this name may have failed (its own error explains the instance's).
    pub fn may_have_failed(&self, name: &str) -> bool {
        self.failed.contains(&None) || self.failed.contains(&Some(name.to_string()))
    }
}

/// Validates every package directory; a package with any error is left out.
pub fn resolve_packages(dirs: Vec<PackageDir>, failed: Vec<Option<String>>, diagnostics: &mut Diagnostics) -> Packages {
    let mut packages = Packages { valid: Vec::new(), failed: failed.into_iter().collect(), not_packages: Vec::new() };
    let mut seen: BTreeMap<(String, Version), FirstDefinition> = BTreeMap::new();
    for dir in dirs {
        let name = dir.raw.meta.name.get_ref().clone();
        let usable_name = names::dns1123_label(&name).is_ok().then(|| name.clone());
        let errors_before = diagnostics.count(kix_diag::Severity::Error);
        let loaded_whole = dir.complete;
        let version_at = located(&dir.manifest, &dir.raw.meta.version);
        let package = validate_package(dir, diagnostics);
        if let Some(package) = &package {
            report_duplicate_version(package, version_at, &mut seen, diagnostics);
        }
        match package {
            Some(package) if loaded_whole && diagnostics.count(kix_diag::Severity::Error) == errors_before => {
                packages.valid.push(Arc::new(package))
            }
            _ => {
                packages.failed.insert(usable_name);
            }
        }
    }
    packages
}

/// Where a package version was first defined.
struct FirstDefinition {
    dir: std::path::PathBuf,
    version: Version,
    at: kix_diag::Location,
}

/// Build metadata does not distinguish versions (semver 2.0, item 10): 1.0.0 and 1.0.0+b5 are one version.
/// Reported at the second definition's version, with the first as a secondary label.
fn report_duplicate_version(
    package: &Package,
    version_at: kix_diag::Location,
    seen: &mut BTreeMap<(String, Version), FirstDefinition>,
    diagnostics: &mut Diagnostics,
) {
    let mut version = package.version.clone();
    version.build = semver::BuildMetadata::EMPTY;
    let key = (package.name.clone(), version.clone());
    match seen.get(&key) {
        Some(first) => {
            let mut diagnostic = Diagnostic::new(
                Code::DuplicatePackageVersion,
                format!(
                    "package `{}` version {} is defined twice: in {} and in {}",
                    package.name,
                    package.version,
                    first.dir.display(),
                    package.dir.display()
                ),
            )
            .at(version_at)
            .label("defined again here")
            .with_label(first.at.clone(), "first defined here")
            .about(&package.subject());
            if first.version != package.version {
                diagnostic = diagnostic.note(format!(
                    "build metadata does not tell versions apart (semver 2.0): {} and {} are both {version}",
                    first.version, package.version
                ));
            }
            diagnostics.push(diagnostic);
        }
        None => {
            seen.insert(
                key,
                FirstDefinition { dir: package.dir.clone(), version: package.version.clone(), at: version_at },
            );
        }
    }
}

fn located<T>(source: &SourceFile, value: &Spanned<T>) -> kix_diag::Location {
    source.locate(value.span())
}

/// Validates one package directory: `None` when its name or version is unusable.
fn validate_package(dir: PackageDir, diagnostics: &mut Diagnostics) -> Option<Package> {
    let PackageDir { dir: path, manifest, raw, documents, complete, kustomization_namespace, content } = dir;
    let meta = &raw.meta;
    let name = meta.name.get_ref().clone();
    let subject = Subject { package: Some(name.clone().into()), ..Subject::default() };
    if let Err(why) = names::dns1123_label(&name) {
        diagnostics.push(
            Diagnostic::new(Code::InvalidName, format!("package name `{name}` is not valid: {why}"))
                .at(located(&manifest, &meta.name)),
        );
        return None;
    }
    let version = match Version::parse(meta.version.get_ref()) {
        Ok(version) => version,
        Err(error) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidVersion,
                    format!("package version `{}` is not semver: {error}", meta.version.get_ref()),
                )
                .at(located(&manifest, &meta.version))
                .about(&subject),
            );
            return None;
        }
    };
    let ceiling = meta
        .availability
        .as_ref()
        .and_then(|a| a.max.as_ref())
        .map(|m| Sourced { value: *m.get_ref(), from: located(&manifest, m) });

    let kinds = super::kinds::kind_table(&raw, &documents, &manifest, &subject, diagnostics);
    let (views, pdbs, unreadable) = read_workloads_and_budgets(&documents, &kinds, &subject, diagnostics);
    report_broad_budgets(&documents, &views, &pdbs, &subject, diagnostics);
    check_strictly(&documents, &views, &pdbs, &subject, diagnostics);
    if complete {
        report_unknown_entries(&raw, &documents, &views, &unreadable, &manifest, &subject, diagnostics);
    }
    let entries = super::entries::entries_by_workload(&raw, &views, &manifest, &subject, diagnostics);

    // Entries whose workload could not be read still get their mapping checked (R6), without the manifest base.
    for (key, settings) in &raw.workloads {
        if !views.iter().any(|(_, view)| &view.name == key.get_ref()) {
            check_steps(key.get_ref(), settings, None, &manifest, &subject, diagnostics);
        }
    }
    let mut autoscalers = super::autoscaler::bind(&documents, &views, &subject, diagnostics);
    let refs = super::custom::template_refs(&documents);
    let mut workloads: Vec<Workload> = views
        .into_iter()
        .enumerate()
        .map(|(position, (index, view))| {
            let autoscaler = autoscalers.remove(&position);
            let settings = entries.get(&position).copied();
            let shipped_pdb = pdbs.iter().any(|(_, pdb): &(usize, PdbView)| pdb.selects(&view.template_labels));
            let operator_budget = view.kind.profile().and_then(|p| p.operator_budget_labels(&documents[index].value));
            let spec_replicas_at = match view.kind.profile() {
                Some(profile) => match &profile.replicas {
                    Some(path) => documents[index].locate(&path.keys()),
                    None => documents[index].locate(&["spec"]),
                },
                None => documents[index].locate(&["spec", "replicas"]),
            };
            let mut workload = resolve_workload(
                index,
                view,
                settings,
                shipped_pdb,
                spec_replicas_at,
                &manifest,
                &subject,
                diagnostics,
            );
            workload.autoscaler = autoscaler;
            workload.template_from = refs.get(&index).map(|(_, deployment)| *deployment);
            workload.operator_budget = operator_budget;
            workload.pod_requests = pod_requests(&workload.view);
            workload
        })
        .collect();
    let groups =
        super::groups::resolve_groups(&raw, &mut workloads, &documents, &pdbs, &manifest, &subject, diagnostics);
    let cluster_scoped_kinds = cluster_scoped_custom_kinds(&documents);
    let placed: BTreeSet<usize> = workloads.iter().map(|w| w.document).collect();
    let mut unmanaged = super::custom::unmanaged_custom(&documents, &placed, unreadable).into_iter().peekable();
    let namespaces = super::namespaces::package_namespaces(meta, &manifest, &subject, diagnostics);
    let mut budgets = pdbs.into_iter().peekable();
    let documents = (documents.into_iter().enumerate())
        .map(|(index, document)| PackageDocument {
            scope: document_scope(&document, &cluster_scoped_kinds),
            budget: budgets.next_if(|(at, _)| *at == index).map(|(_, budget)| budget),
            replicating: ControllerKind::of(&document.value).filter(|kind| kind.replicates()),
            unmanaged: unmanaged.next_if(|custom| custom.document == index),
            document,
        })
        .collect();
    Some(Package {
        name,
        version_text: version.to_string(),
        version,
        dir: path,
        manifest: Arc::new(manifest),
        ceiling,
        documents,
        workloads,
        groups,
        cluster_scoped_kinds,
        namespaces,
        kustomization_namespace,
        namespace_strings: std::sync::OnceLock::new(),
        content,
    })
}

/// The scope of a document, given the custom kinds the package's CRDs declare cluster-scoped.
pub(super) fn document_scope(document: &Document, cluster_scoped_kinds: &BTreeSet<(String, String)>) -> DocumentScope {
    if kix_kube::scope::is_cluster_scoped(document.group(), document.kind(), cluster_scoped_kinds) {
        return DocumentScope::Cluster;
    }
    let written = document.value.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str);
    DocumentScope::Namespaced(written.filter(|ns| !ns.is_empty()).map(str::to_string))
}

/// A view with the index of the document it was read from.
type Indexed<T> = (usize, T);

/// The package's workloads and shipped budgets as read, and the custom resources of a profile's kind
/// that could not be read through it (by document index, with why).
type Read = (Vec<Indexed<WorkloadView>>, Vec<Indexed<PdbView>>, BTreeMap<usize, String>);

/// Typed views of the package's Deployments, StatefulSets, Rollouts, custom resources of a profile's kind
/// and PodDisruptionBudgets, by document index; and the custom resources of a profile's kind that could
/// not be read through it (named with K0435, not errors: the operator may read them still), with why.
fn read_workloads_and_budgets(
    documents: &[Document],
    kinds: &KindTable,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Read {
    let mut views = Vec::new();
    let mut pdbs = Vec::new();
    let mut unreadable = BTreeMap::new();
    let refs = super::custom::template_refs(documents);
    let holders = super::custom::template_holders(documents);
    for (index, document) in documents.iter().enumerate() {
        if holders.contains(&index) {
            continue;
        }
        if let Some(profile) = kinds.profile_of(&document.value) {
            match kix_kube::workload::read_custom(&document.value, profile) {
                Ok(view) => views.push((index, view)),
                Err(problem) => {
                    unreadable.insert(index, problem.reason);
                }
            }
            continue;
        }
        let read = match (WorkloadKind::of(&document.value), refs.get(&index)) {
            (Some(kind), _) => Some(super::views::read_workload(document, kind)),
            (None, Some((combined, _))) => {
                Some(super::views::read_workload_as(document, combined, WorkloadKind::Rollout))
            }
            (None, None) => None,
        };
        if let Some(read) = read {
            match read {
                Ok(view) => views.push((index, view)),
                Err(problems) => {
                    for problem in problems {
                        diagnostics.push(problem.about(subject).workload(document.name()));
                    }
                }
            }
        } else if PdbView::is_pdb(&document.value) {
            match super::views::read_pdb(document) {
                Ok(view) => pdbs.push((index, view)),
                Err(problem) => diagnostics.push(problem.about(subject)),
            }
        }
    }
    (views, pdbs, unreadable)
}

/// Strict validation of every object of the package (`kube::strict`): built-in kinds against
/// Kubernetes 1.33, custom resources against the package's own CRDs. A workload or budget whose
/// reader already reported a problem (K0410-K0413), or an autoscaler kix could not read (K0430), is
/// left out, so one mistake gives one error.
fn check_strictly(
    documents: &[Document],
    views: &[Indexed<WorkloadView>],
    pdbs: &[Indexed<PdbView>],
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    let custom = CustomKinds::from_objects(documents.iter().map(|d| &d.value));
    let holders = super::custom::template_holders(documents);
    for (index, document) in documents.iter().enumerate() {
        let workload = WorkloadKind::of(&document.value).is_some() && !holders.contains(&index);
        let unreadable = (workload && !views.iter().any(|(i, _)| *i == index))
            || (PdbView::is_pdb(&document.value) && !pdbs.iter().any(|(i, _)| *i == index))
            || AutoscalerView::read(&document.value).is_err();
        if !unreadable {
            for problem in super::views::strict_problems(document, &custom) {
                diagnostics.push(problem.about(subject));
            }
        }
    }
}

/// R9: every `[workloads.X]` entry names a Deployment, StatefulSet, Rollout or custom resource of a
/// profile's kind of the package (one that could not be read is named by K0435 instead).
fn report_unknown_entries(
    raw: &crate::load::package::RawPackage,
    documents: &[Document],
    views: &[Indexed<WorkloadView>],
    unreadable: &BTreeMap<usize, String>,
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    for key in raw.workloads.keys() {
        let workload = key.get_ref();
        let refs = super::custom::template_refs(documents);
        let named = documents.iter().enumerate().any(|(index, d)| {
            (WorkloadKind::of(&d.value).is_some()
                || refs.contains_key(&index)
                || unreadable.contains_key(&index)
                || views.iter().any(|(i, _)| *i == index))
                && d.name() == workload
        });
        if named {
            continue;
        }
        let controller = documents.iter().filter(|d| d.name() == workload).find_map(|d| ControllerKind::of(&d.value));
        let (message, help) = match controller {
            Some(kind) => (
                format!(
                    "[workloads.{workload}] names {} {workload} of package `{}`, which kix does not manage: kix \
                     derives replicas, spread and budgets for Deployments and StatefulSets only",
                    kind.as_str(),
                    raw.meta.name.get_ref()
                ),
                format!(
                    "rewrite {workload} as an apps/v1 Deployment (or StatefulSet) to give it a level, or remove the \
                     entry; {}",
                    workload_names_help(documents)
                ),
            ),
            None => (
                format!(
                    "[workloads.{workload}] names no Deployment or StatefulSet of package `{}`",
                    raw.meta.name.get_ref()
                ),
                workload_names_help(documents),
            ),
        };
        diagnostics.push(
            Diagnostic::new(Code::UnknownWorkload, message)
                .at(located(manifest, key))
                .about(subject)
                .workload(workload)
                .help(help),
        );
    }
}

/// R12: a shipped budget shared by several workloads.
fn report_broad_budgets(
    documents: &[Document],
    views: &[(usize, WorkloadView)],
    pdbs: &[(usize, PdbView)],
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    for (index, pdb) in pdbs {
        let covered: Vec<&str> =
            views.iter().filter(|(_, w)| pdb.selects(&w.template_labels)).map(|(_, w)| w.name.as_str()).collect();
        if covered.len() > 1 {
            diagnostics.push(
                Diagnostic::new(
                    Code::BroadPdb,
                    format!(
                        "PodDisruptionBudget {} selects the pods of {} workloads: {}",
                        pdb.name,
                        covered.len(),
                        covered.join(", ")
                    ),
                )
                .at(documents[*index].locate(&["spec", "selector"]))
                .about(subject),
            );
        }
    }
}

/// One workload with its `[workloads.X]` entry: ceiling, validated steps and budget policy.
fn resolve_workload(
    document: usize,
    view: WorkloadView,
    settings: Option<&RawWorkload>,
    shipped_pdb: bool,
    spec_replicas_at: kix_diag::Location,
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Workload {
    let ceiling = settings
        .and_then(|s| s.availability.as_ref())
        .and_then(|a| a.max.as_ref())
        .map(|m| Sourced { value: *m.get_ref(), from: located(manifest, m) });
    let steps = settings
        .map(|s| check_steps(&view.name, s, Some(view.manifest_replicas.unwrap_or(1)), manifest, subject, diagnostics))
        .unwrap_or_default();
    let mapping_at = settings.and_then(|s| s.replicas.as_ref()).map(|m| located(manifest, m));
    let policy = settings.and_then(|s| s.pdb.as_ref()).and_then(|p| p.unhealthy_pod_eviction_policy.as_ref());
    let eviction_policy = policy.map(|p| *p.get_ref()).unwrap_or(if view.kind.deployment_like() {
        EvictionPolicy::AlwaysAllow
    } else {
        EvictionPolicy::IfHealthyBudget
    });
    let eviction_policy_at = policy.map(|p| located(manifest, p));
    Workload {
        document,
        view,
        ceiling,
        steps,
        mapping_at,
        spec_replicas_at,
        eviction_policy,
        eviction_policy_at,
        shipped_pdb,
        autoscaler: None,
        survive: settings.and_then(|s| s.survive.as_ref()).map_or(Survive::One, |s| *s.get_ref()),
        survive_at: settings.and_then(|s| s.survive.as_ref()).map(|s| located(manifest, s)),
        group: None,
        template_from: None,
        operator_budget: None,
        pod_requests: None,
    }
}

/// One pod's requests from the workload's template, once per package (derive copies them into every
/// instance's plan, where capacity reads them).
fn pod_requests(view: &WorkloadView) -> Option<kix_kube::requests::Requests> {
    let empty = kix_yaml::Value::Null;
    kix_kube::requests::pod_requests(view.template.get("spec").unwrap_or(&empty), None).ok()
}

/// R6: a mapping's steps must stay within the Kubernetes maximum and must not decrease, the manifest's
/// own count (used below the lowest step) included. Returns the steps, lowest level first.
fn check_steps(
    workload: &str,
    settings: &RawWorkload,
    manifest_replicas: Option<u32>,
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Vec<(Level, u32, kix_diag::Location)> {
    let Some(replicas) = &settings.replicas else { return Vec::new() };
    let steps = replicas.get_ref().steps();
    for (level, count) in &steps {
        if *count.get_ref() > MAX_REPLICAS {
            diagnostics.push(
                Diagnostic::new(
                    Code::ReplicasOutOfRange,
                    format!(
                        "replicas {} at {level} for workload `{workload}` exceed the Kubernetes maximum {MAX_REPLICAS}",
                        count.get_ref(),
                    ),
                )
                .at(located(manifest, count))
                .about(subject)
                .workload(workload),
            );
        }
    }
    if let (Some(base), Some((lowest, first))) = (manifest_replicas, steps.first()) {
        if *lowest > Level::None && *first.get_ref() < base {
            diagnostics.push(
                Diagnostic::new(
                    Code::DecreasingReplicas,
                    format!(
                        "replicas for workload `{workload}` decrease from {base} (the manifest's spec.replicas, \
                         used below `{lowest}`) to {} at {lowest}",
                        first.get_ref()
                    ),
                )
                .at(located(manifest, first))
                .about(subject)
                .workload(workload)
                .help(format!("name the lower levels too, e.g. replicas = {{ none = {}, ... }}", first.get_ref())),
            );
        }
    }
    for pair in steps.windows(2) {
        let ((low, low_count), (high, high_count)) = (pair[0], pair[1]);
        if high_count.get_ref() < low_count.get_ref() {
            diagnostics.push(
                Diagnostic::new(
                    Code::DecreasingReplicas,
                    format!(
                        "replicas for workload `{workload}` decrease from {} at {low} to {} at {high}",
                        low_count.get_ref(),
                        high_count.get_ref()
                    ),
                )
                .at(located(manifest, high_count))
                .about(subject)
                .workload(workload),
            );
        }
    }
    steps.into_iter().map(|(level, count)| (level, *count.get_ref(), located(manifest, count))).collect()
}

fn workload_names_help(documents: &[Document]) -> String {
    let names: Vec<String> = documents
        .iter()
        .filter_map(|d| WorkloadKind::of(&d.value).map(|k| format!("{} {}", k.as_str(), d.name())))
        .collect();
    if names.is_empty() {
        "the package has no Deployment or StatefulSet".into()
    } else {
        format!("the package's workloads are: {}", names.join(", "))
    }
}

/// Kinds the package's own CustomResourceDefinitions declare cluster-scoped, by (group, kind).
pub fn cluster_scoped_custom_kinds<'a>(
    documents: impl IntoIterator<Item = &'a Document>,
) -> BTreeSet<(String, String)> {
    documents
        .into_iter()
        .filter(|d| d.group() == "apiextensions.k8s.io" && d.kind() == "CustomResourceDefinition")
        .filter_map(|d| {
            let spec = d.value.get("spec")?;
            (spec.get("scope")?.as_str()? == "Cluster").then(|| {
                let text =
                    |value: Option<&kix_yaml::Value>| value.and_then(|v| v.as_str()).unwrap_or_default().to_string();
                (text(spec.get("group")), text(spec.get("names").and_then(|n| n.get("kind"))))
            })
        })
        .collect()
}
