//! The compiler driver: load -> resolve -> derive -> cross-instance checks
//! (-> emit). This is the one place the stage order is visible.
//!
//! The library takes typed requests ([`Selection`], [`BuildRequest`]) and
//! returns what happened; it prints nothing. `commands` turns the command line
//! into requests and the results into output and an exit status.

use crate::derive::{self, ClusterPlan};
use crate::derive::{InstancePlan, WorkloadPlan};
use crate::resolve::Acknowledged;
use crate::summary::{self, ClusterSummary};
use crate::{crosscheck, emit, load, resolve, sizing};
use kix_diag::Diagnostics;
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use crate::emit::stream::Stream;

/// Which tree to read and which clusters to compile.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// The directory holding clusters/ and packages/.
    pub root: PathBuf,
    /// Only these clusters; all when empty.
    pub clusters: Vec<String>,
    /// Whether warnings fail the run (K0502).
    pub deny_warnings: bool,
    /// One instance asked at another level than its files say (`kix explain --level`); the files are not
    /// changed.
    pub what_if: Option<WhatIf>,
}

/// `kix explain --level`: compile as if one instance's entry requested `level`. It is handed to resolve
/// with the instance's cluster file (`resolve::resolve_cluster`), which decides it with its own rules (R2-R8), so what it shows is what a build of a cluster
/// file with `availability = level` on the instance gives.
#[derive(Clone, Debug)]
pub struct WhatIf {
    pub cluster: String,
    pub instance: String,
    pub level: kix_kube::level::Level,
}

/// The kix root for a run started in `start`: `start` itself when it holds `clusters/`, else the nearest
/// parent that does (written relative, `..` per level, so diagnostics keep short paths), else `start`
/// (and loading says how to point at a root).
pub fn find_root(start: &Path) -> PathBuf {
    let Ok(absolute) = start.canonicalize() else { return start.to_path_buf() };
    let mut relative = start.to_path_buf();
    for dir in absolute.ancestors() {
        if dir.join("clusters").is_dir() {
            return relative;
        }
        relative = if relative == Path::new(".") { PathBuf::from("..") } else { relative.join("..") };
    }
    start.to_path_buf()
}

/// Everything a compile produced: per cluster what was kept of it (a [`CompiledCluster`], or for a build
/// and `kix check` what the summary shows: [`ClusterSummary`]), complete only when there are no errors,
/// and findings.
#[derive(Debug)]
pub struct Compiled<C = ClusterPlan> {
    pub clusters: Vec<C>,
    pub diagnostics: Diagnostics,
    /// The warnings the compiled cluster files and their instances acknowledge (`allow`), read once per
    /// cluster as it compiled: the commands that add findings of their own (verify, audit) settle them
    /// with it.
    pub acknowledged: Acknowledged,
}

impl<C> Compiled<C> {
    /// Whether the result may be used: no errors (`deny_warnings` adds one, K0502, when there are warnings).
    pub fn ok(&self) -> bool {
        !self.diagnostics.has_errors()
    }
}

/// One cluster as compiled: its resolved model and its plan side by side. `plan.instances[i]` is
/// `resolved.instances[i]` derived, and each of its workloads' plans names the resolved workload it was
/// derived from by index ([`WorkloadPlan::resolved`]): every consumer (verify, capacity, audit, explain)
/// walks them with [`CompiledCluster::instances`] and [`CompiledInstance::workloads`], never by name.
#[derive(Debug)]
pub struct CompiledCluster {
    pub resolved: resolve::Cluster,
    pub plan: ClusterPlan,
}

impl CompiledCluster {
    /// Each instance, resolved and planned, in the cluster file's order.
    pub fn instances(&self) -> impl Iterator<Item = CompiledInstance<'_>> {
        (self.resolved.instances.iter().zip(&self.plan.instances).enumerate())
            .map(|(index, (resolved, plan))| CompiledInstance { index, resolved, plan })
    }

    /// The instance at `index` of [`CompiledCluster::instances`].
    pub fn instance(&self, index: usize) -> CompiledInstance<'_> {
        CompiledInstance { index, resolved: &self.resolved.instances[index], plan: &self.plan.instances[index] }
    }
}

/// One instance of a [`CompiledCluster`]: what resolve decided for it and what derive made of it.
#[derive(Clone, Copy, Debug)]
pub struct CompiledInstance<'a> {
    /// Its index among the cluster's instances.
    pub index: usize,
    pub resolved: &'a resolve::Instance,
    pub plan: &'a InstancePlan,
}

impl<'a> CompiledInstance<'a> {
    /// Each workload's plan with the resolved workload (and the package's workload) it was derived from.
    pub fn workloads(self) -> impl Iterator<Item = CompiledWorkload<'a>> {
        self.plan.workloads.iter().map(move |plan| self.workload(plan))
    }

    /// The resolved side of one of this instance's workload plans.
    pub fn workload(self, plan: &'a WorkloadPlan) -> CompiledWorkload<'a> {
        let resolved = &self.resolved.workloads[plan.resolved];
        CompiledWorkload { resolved, workload: &self.resolved.package.workloads[resolved.workload], plan }
    }
}

/// One workload of a [`CompiledInstance`]: its level and count as resolved, the package's workload, its plan.
#[derive(Clone, Copy, Debug)]
pub struct CompiledWorkload<'a> {
    pub resolved: &'a resolve::InstanceWorkload,
    pub workload: &'a resolve::Workload,
    pub plan: &'a WorkloadPlan,
}

/// Runs the pipeline over the selected tree, keeping each cluster's plan.
pub fn compile(selection: &Selection) -> Compiled {
    compile_each(selection, Keep::Everything, |_, plan| plan, |_, _| None::<()>, None).0
}

/// Runs the pipeline over the selected tree, keeping each cluster as resolved and planned (`kix explain`,
/// `verify`, `capacity`, `audit`: the commands that show where each decision came from or prove it).
pub fn compile_clusters(selection: &Selection) -> Compiled<CompiledCluster> {
    compile_each(
        selection,
        Keep::Everything,
        |resolved, plan| CompiledCluster { resolved, plan },
        |_, _| None::<()>,
        None,
    )
    .0
}

/// One cluster file resolved against the tree's packages, nothing derived (`kix lint --cluster` reads its
/// substrate, keys and inventory): the compile's own stages, stopped after resolve. `None` when the file
/// or the tree does not resolve (the reasons in `diagnostics`).
pub fn resolve_only(root: &Path, name: &str, diagnostics: &mut Diagnostics) -> Option<resolve::Cluster> {
    let tree = load::load(root, &[name.to_string()], diagnostics);
    let (packages, files) = resolve::resolve_packages(tree, diagnostics);
    let file = files.into_iter().next()?.parse(diagnostics)?;
    resolve::resolve_cluster(file, &packages, None, diagnostics).filter(|cluster| cluster.name == name)
}

/// `kix check`: the pipeline with each cluster's plan and resolved cluster dropped as soon as it is checked
/// (as a build does), keeping what the summary shows of it when `summarize` (else only its name).
pub fn check(selection: &Selection, summarize: bool) -> Compiled<ClusterSummary> {
    let interner = summary::Interner::default();
    let keep = |_, plan: ClusterPlan| ClusterSummary::kept(&plan, summarize, &interner);
    compile_each(selection, Keep::Summary, keep, |_, _| None::<()>, None).0
}

/// What a compile keeps of each cluster once it was derived, checked and handed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keep {
    /// Whatever `keep` makes of the resolved cluster and its plan, and every acknowledged warning
    /// (`explain`, `verify`, `capacity`, `audit`, the library's callers).
    Everything,
    /// What `keep` makes of the plan; the acknowledged warnings are counted, not kept, so a build holds one
    /// cluster per core, not the fleet's (issue 20).
    Summary,
}

/// What one cluster file came to, filled by the core that compiled it.
struct Slot<K, T> {
    /// What was kept of it (`None` when its file did not resolve).
    kept: Option<K>,
    found: Diagnostics,
    allowed: Acknowledged,
    /// What `each` made of it.
    handed: Option<T>,
}

/// The pipeline, handing each cluster's plan to `each` (with the index of its file) as soon as it is
/// derived and checked, while no error has been found so far in the inputs (the packages) or in that
/// cluster (`None` for the others, and for a cluster file that does not resolve), then keeping what
/// `keep` makes of the resolved cluster and its plan. Clusters are independent once the packages are
/// resolved: each is resolved, derived, checked and handed over on one core, with its own findings, merged
/// in cluster order (`finish` sorts anyway, so the report is the same), and dropped there unless it is
/// kept: the fleet's resolved model is never held at once by a build (issue 20). A cluster handed over
/// while another cluster's inputs fail is not wasted output: every caller writes or prints only once the
/// whole compile is clean. Each core takes the next cluster in order (not a half of the fleet each, as
/// rayon's splitting would), so what `each` hands on arrives nearly in order: the stream holds about one
/// cluster per core waiting for the one before it (issue 20).
///
/// With `reuse` (a full build into a directory), a cluster whose inputs are those the previous build
/// recorded is not compiled: its recorded findings (and summary) are reported and its directory staged as
/// that build wrote it (`crate::reuse`); every cluster compiled records its inputs and findings for the next
/// build. Every record is replayed before any cluster compiles, so a build whose every cluster is reused
/// over an `out/` that is file for file as recorded knows it changes nothing, and stages nothing
/// ([`emit::Staging::leave_in_place`]).
fn compile_each<K: Send, T: Send>(
    selection: &Selection,
    what: Keep,
    keep: impl Fn(resolve::Cluster, ClusterPlan) -> K + Sync,
    each: impl Fn(usize, Option<&ClusterPlan>) -> Option<T> + Sync,
    reuse: Option<Reuse<'_, K, T>>,
) -> (Compiled<K>, Vec<Option<T>>) {
    let mut diagnostics = Diagnostics::default();
    let tree = load::load(&selection.root, &selection.clusters, &mut diagnostics);
    let (packages, files) = resolve::resolve_packages(tree, &mut diagnostics);
    // The inputs every cluster reads (the packages; a cluster file that cannot be read): a cluster file
    // that does not parse is that cluster's own finding, as one that does not resolve.
    let clean_inputs = !diagnostics.has_errors();
    // The package versions each cluster file may run (every version of each package it may name), counted
    // before any cluster resolves, so each version's shapes go once the last of those clusters is derived.
    let by_name = derive::VersionsByName::new(&packages);
    let versions: Vec<HashSet<usize>> =
        files.par_iter().map(|file| derive::Shapes::versions_named(&by_name, file)).collect();
    let shapes = derive::Shapes::counting(&versions);
    // Reused only where nothing failed before any cluster compiled (a build that fails writes nothing).
    let reuse = reuse.filter(|_| clean_inputs).and_then(|reuse| {
        let inputs = crate::reuse::Inputs::new(&selection.root, &packages)?;
        Some((reuse, inputs))
    });
    // Each reused cluster's record, replayed on every core before any cluster compiles: a cluster whose
    // recorded key is its inputs' is reported from its record and kept as its record says (`crate::reuse`).
    let (keys, replayed): (Vec<Option<u128>>, Vec<ReplaySlot<K>>) = files
        .par_iter()
        .enumerate()
        .map(|(index, file)| {
            let Some((reuse, inputs)) = reuse.as_ref() else { return (None, Mutex::new(None)) };
            let key = inputs.key(file, &versions[index]);
            (Some(key), Mutex::new(reuse.replayed(inputs, &file.name, key).transpose()))
        })
        .unzip();
    // When every cluster is reused and `out/` is file for file what the previous build left, the build
    // changes nothing: no cluster is staged, and `out/`, the spare and the manifest are left as they are.
    let in_place = reuse.as_ref().is_some_and(|(reuse, _)| {
        let names: Vec<&str> = files.iter().map(|file| file.name.as_str()).collect();
        replayed.iter().all(|slot| matches!(*locked(slot), Some(Ok(_))))
            && reuse.staging.out_holds_only(&names)
            && names.par_iter().all(|name| reuse.staging.unchanged_in_place(name).unwrap_or(false))
    });
    if let (true, Some((reuse, _))) = (in_place, &reuse) {
        reuse.staging.leave_in_place();
    }
    // Each cluster file is taken and compiled by one core, which fills its slot.
    let files: Vec<Mutex<Option<load::cluster::ClusterSource>>> =
        files.into_iter().map(|file| Mutex::new(Some(file))).collect();
    let slots: Vec<Mutex<Option<Slot<K, T>>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let what_if = selection.what_if.as_ref();
    let next = std::sync::atomic::AtomicUsize::new(0);
    rayon::broadcast(|_| {
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(file) = files.get(index) else { break };
            let Some(file) = locked(file).take() else { continue };
            let mut found = Diagnostics::default();
            let key = keys[index];
            let recorded = locked(&replayed[index]).take();
            if let (Some((reuse, _)), Some(Err(refused))) = (&reuse, &recorded) {
                // The output directory cannot be staged (its lock, kix's state directory): reported as it is,
                // the cluster not compiled.
                shapes.cluster_derived(&versions[index]);
                let handed = Some((reuse.handed)(Err(refused.clone())));
                let kept = (reuse.kept)(file.name, None);
                *locked(&slots[index]) = Some(Slot { kept, found, allowed: Acknowledged::default(), handed });
                continue;
            }
            if let (Some((reuse, _)), Some(Ok((replayed, kept)))) = (&reuse, recorded) {
                // Staged as the record says (or, in place, not at all); compiled when it cannot be.
                let staged = if in_place { Ok(true) } else { reuse.staging.stage_recorded(&file.name) };
                let handed = match staged {
                    Ok(true) => Some(Ok(())),
                    Ok(false) => None,
                    Err(failed) => Some(Err(failed)),
                };
                if let Some(handed) = handed {
                    shapes.cluster_derived(&versions[index]);
                    let handed = Some((reuse.handed)(handed));
                    *locked(&slots[index]) =
                        Some(Slot { kept: Some(kept), found: replayed, allowed: Acknowledged::default(), handed });
                    continue;
                }
            }
            // A cluster whose record is in parts, after a package changed: only the instances that run it are
            // compiled, when the rest of the cluster can be kept as recorded (`crate::reuse::in_part`).
            if let (Some((reuse, inputs)), Some(key)) = (&reuse, key) {
                let section = reuse.staging.recorded_inputs(&file.name).ok().flatten();
                let context = crate::reuse::in_part::Context {
                    inputs,
                    packages: &packages,
                    shapes: &shapes,
                    staging: reuse.staging,
                    kept_of: reuse.kept,
                    refresh: reuse.refresh,
                    recorded_of: reuse.recorded,
                };
                if let Some(done) =
                    section.as_deref().and_then(|section| crate::reuse::in_part::compile(&context, &file, section, key))
                {
                    shapes.cluster_derived(&versions[index]);
                    reuse.staging.keep_inputs(&file.name, done.section);
                    let handed = Some((reuse.handed)(done.staged));
                    let found = done.found;
                    *locked(&slots[index]) =
                        Some(Slot { kept: Some(done.kept), found, allowed: Acknowledged::default(), handed });
                    continue;
                }
            }
            // Recorded in parts for the next build: the key of the cluster file, and each instance's own.
            let recording = reuse.as_ref().zip(key).map(|((_, inputs), _)| (inputs, inputs.frame_key(&file)));
            let mut across = Diagnostics::default();
            let resolved_cluster = file.parse(&mut found).and_then(|file| {
                let asked = what_if.filter(|w| w.cluster == file.name).map(|w| (w.instance.as_str(), w.level));
                resolve::resolve_cluster_in_parts(file, &packages, asked, None, &mut found, &mut across)
            });
            let Some(cluster) = resolved_cluster else {
                found.extend(across);
                shapes.cluster_derived(&versions[index]);
                let handed = each(index, None);
                *locked(&slots[index]) = Some(Slot { kept: None, found, allowed: Acknowledged::default(), handed });
                continue;
            };
            // Errors anywhere so far (the inputs, this cluster); another cluster's are its own: nothing is
            // written or printed unless the whole compile is clean.
            let clean = clean_inputs && !found.has_errors() && !across.has_errors();
            // The findings of the stages after resolve, apart (each instance's, recorded with it).
            let mut derived = Diagnostics::default();
            let mut instances = derive::derive_instances(&cluster, &shapes, &mut derived);
            let objects: Vec<u128> = match recording {
                Some(_) => instances.iter().map(crate::reuse::footprint::objects).collect(),
                None => Vec::new(),
            };
            let (shared, moved) = derive::share(&mut instances);
            let mut plan = ClusterPlan::of(&cluster, instances, shared);
            let guards: Vec<Vec<crate::admission::Guard>> = match cluster.admission {
                Some(_) => (cluster.instances.iter().zip(&plan.instances))
                    .map(|(instance, planned)| {
                        crate::admission::guards_of(&cluster.name, instance, planned, &mut derived)
                    })
                    .collect(),
                None => Vec::new(),
            };
            let footprints =
                recording.map(|_| crate::reuse::in_part::footprints(&cluster, &objects, &plan.instances, &guards));
            plan.admission = crate::admission::plan_of(&cluster, guards.into_iter().flatten().collect());
            shapes.cluster_derived(&versions[index]);
            crosscheck::check(&cluster, &plan, &mut across);
            sizing::room::check(&cluster, &plan, &mut across);
            sizing::check_instances(&cluster, &plan, &mut derived);
            let allowed = Acknowledged::of_cluster(&cluster);
            let body = match (recording, footprints) {
                (Some((inputs, frame_key)), Some(footprints)) if what == Keep::Summary => {
                    let own_keys: Vec<u128> =
                        cluster.instances.iter().map(|instance| inputs.own_key(&instance.package.name)).collect();
                    let sinks = (std::mem::take(&mut found), derived, across);
                    let (all, body) = crate::reuse::in_part::record(
                        &cluster,
                        sinks,
                        frame_key,
                        &own_keys,
                        &footprints,
                        &moved,
                        &allowed,
                    );
                    found = all;
                    Some(body)
                }
                _ => {
                    found.extend(derived);
                    found.extend(across);
                    found.acknowledge(|d| allowed.contains(d));
                    if what == Keep::Summary {
                        found.count_acknowledged();
                    }
                    None
                }
            };
            let handed = each(index, (clean && !found.has_errors()).then_some(&plan));
            let name = (reuse.is_some()).then(|| plan.name.clone());
            let kept = keep(cluster, plan);
            if let (Some((reuse, _)), Some(key), Some(name), Some(body)) = (&reuse, key, name, body) {
                let section = crate::reuse::Inputs::section_in_parts(key, body, (reuse.recorded)(&kept).as_deref());
                reuse.staging.keep_inputs(&name, section);
            }
            let kept = Some(kept);
            *locked(&slots[index]) = Some(Slot { kept, found, allowed, handed });
        }
    });
    let mut clusters = Vec::with_capacity(slots.len());
    let mut handed = Vec::with_capacity(slots.len());
    let mut acknowledged = Acknowledged::default();
    for slot in slots {
        let Some(slot) = slot.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()) else { continue };
        diagnostics.extend(slot.found);
        acknowledged.extend(slot.allowed);
        clusters.extend(slot.kept);
        handed.push(slot.handed);
    }
    diagnostics.settle(|d| acknowledged.contains(d), selection.deny_warnings);
    if what == Keep::Summary {
        acknowledged = Acknowledged::default();
    }
    (Compiled { clusters, diagnostics, acknowledged }, handed)
}

/// A cluster's record replayed before the compile: its findings and what is kept of it, or why the output
/// directory cannot be staged at all ([`Reuse::replayed`]).
type Replayed<K> = Result<(Diagnostics, K), kix_diag::Diagnostic>;

/// A cluster's replayed record, taken by the core that takes the cluster (`None`: no record to replay).
type ReplaySlot<K> = Mutex<Option<Replayed<K>>>;

/// How a full build into a directory reuses the previous build's record of each cluster (`crate::reuse`).
struct Reuse<'a, K, T> {
    staging: &'a emit::Staging,
    /// What is kept of a reused cluster, from its name and what its inputs section kept beyond its findings
    /// (`crate::summary`'s record of the summary a build printed); `None` when that is not what this build
    /// keeps (the record kept less, or does not read back), and the cluster is compiled.
    kept: &'a (dyn Fn(String, Option<&str>) -> Option<K> + Sync),
    /// What of a compiled cluster's kept record its inputs section keeps beyond its findings (`None`: nothing).
    recorded: fn(&K) -> Option<String>,
    /// What is kept of a cluster compiled in part, updated for one of its instances compiled again
    /// (`crate::reuse::in_part`): whether that changed it (`None`: nothing is kept to update).
    refresh: &'a (dyn Fn(&mut K, &InstancePlan) -> Option<bool> + Sync),
    /// What is handed on for it: how its staging went.
    handed: fn(Result<(), kix_diag::Diagnostic>) -> T,
}

impl<K, T> Reuse<'_, K, T> {
    /// When the previous build recorded `key` for the cluster and kept what this build keeps of it: the
    /// recorded findings and what is kept; `None`, and the cluster is compiled, when it did not; the error
    /// when the output directory cannot be staged at all (its lock is held, kix's state directory cannot be
    /// made), which is reported without compiling the cluster.
    fn replayed(
        &self,
        inputs: &crate::reuse::Inputs,
        cluster: &str,
        key: u128,
    ) -> Result<Option<(Diagnostics, K)>, kix_diag::Diagnostic> {
        let Some(section) = self.staging.recorded_inputs(cluster)? else { return Ok(None) };
        let Some((replayed, recorded)) = inputs.replay(&section, key) else { return Ok(None) };
        Ok((self.kept)(cluster.to_string(), recorded).map(|kept| (replayed, kept)))
    }
}

/// A lock that a panic on another core does not poison for this one (the panic is reported anyway).
fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where a build's manifests go.
#[derive(Clone, Debug)]
pub enum Output {
    /// Written under this directory (`ROOT/out` when `None`), swapped in atomically.
    Directory(Option<PathBuf>),
    /// Rendered as one YAML stream. A stream is applied to one cluster, so it holds one cluster unless
    /// `all` asks for every selected cluster (each then preceded by a comment naming it).
    Stream { all: bool },
    /// Nothing written: what the build would change in this directory (`ROOT/out` when `None`).
    Check(Option<PathBuf>),
}

/// A request that cannot be carried out as asked (exit status 2, as clap's own usage errors).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error(
        "--stdout writes one cluster's manifests (piped into `kubectl apply -f -` it applies them to one \
         cluster): choose it with --cluster, or pass --all for every cluster's (clusters here: {clusters})"
    )]
    StreamNeedsOneCluster { clusters: String },
    #[error("--state is a snapshot of one cluster: choose it with --cluster (clusters here: {clusters})")]
    StateNeedsOneCluster { clusters: String },
}

/// `kix build`: what to compile and where the result goes.
#[derive(Clone, Debug)]
pub struct BuildRequest {
    pub selection: Selection,
    pub output: Output,
    /// Keep what the summary shows of each cluster ([`ClusterSummary::of`]): the table a build prints and
    /// the JSON report. `false` keeps only the clusters' names, for a caller that shows neither (`-q` in
    /// text: a tenth of a 1,000-cluster rebuild's user time went into records nobody printed).
    pub summary: bool,
}

/// What a build did.
#[derive(Debug)]
pub struct Built {
    /// What the summary shows of each cluster (only the clusters' names for [`Output::Stream`], which prints
    /// no summary, and when [`BuildRequest::summary`] is `false`), and the findings.
    pub compiled: Compiled<ClusterSummary>,
    /// The YAML stream, for [`Output::Stream`] when the compile succeeded.
    pub stream: Option<Stream>,
    /// What was written, for [`Output::Directory`] when the compile and the write succeeded.
    pub written: Option<Written>,
    /// For [`Output::Check`] when the compile succeeded: where the output directory differs from the build.
    pub differences: Option<Vec<emit::Difference>>,
}

/// A summary of a written output directory.
#[derive(Debug)]
pub struct Written {
    pub directory: PathBuf,
    pub clusters: usize,
    pub instances: usize,
    /// Cluster-scoped objects written once for several instances (`_shared.yaml`), over all clusters.
    pub shared: usize,
}

/// Compiles, then writes the output directory or renders the stream; nothing is written on any error.
/// Each cluster is rendered (and staged, or compared) as soon as it is compiled, then its plan and its
/// resolved cluster are dropped (what the summary shows kept), so a build's memory is bounded by its
/// largest clusters, not by the fleet (issues 11 and 20).
pub fn build(request: &BuildRequest) -> Result<Built, UsageError> {
    let root = &request.selection.root;
    let all_clusters = request.selection.clusters.is_empty();
    let selection = &request.selection;
    let (mut stream, mut written, mut differences) = (None, None, None);
    let interner = summary::Interner::default();
    let summarize = |_, plan: ClusterPlan| ClusterSummary::kept(&plan, request.summary, &interner);
    let compiled = match &request.output {
        Output::Stream { all } => {
            let spool = crate::emit::stream::Spool::new();
            let named = |_, plan: ClusterPlan| ClusterSummary::named(&plan);
            let (mut compiled, written) = compile_each(
                selection,
                Keep::Summary,
                named,
                |index, cluster| {
                    let spool = spool.as_ref().ok()?;
                    spool.part(index, cluster.map(|cluster| emit::render_stream_part(cluster, *all))).err()
                },
                None,
            );
            if compiled.ok() {
                if !all && compiled.clusters.len() > 1 {
                    let names: Vec<&str> = compiled.clusters.iter().map(|c| c.name.as_str()).collect();
                    return Err(UsageError::StreamNeedsOneCluster { clusters: names.join(", ") });
                }
                // The first failure in cluster order is the one reported.
                match written
                    .into_iter()
                    .flatten()
                    .next()
                    .map_or(spool, Err)
                    .and_then(crate::emit::stream::Spool::finish)
                {
                    Ok(finished) => stream = Some(finished),
                    Err(diagnostic) => compiled.diagnostics.push(diagnostic),
                }
            }
            compiled
        }
        Output::Check(out) => {
            let directory = out.clone().unwrap_or_else(|| root.join("out"));
            let (compiled, found) = compile_each(
                selection,
                Keep::Summary,
                summarize,
                |_, cluster| cluster.map(|c| emit::compare_cluster(&directory, c)),
                None,
            );
            if compiled.ok() {
                let mut all: Vec<emit::Difference> = found.into_iter().flatten().flatten().collect();
                let names: Vec<&str> = compiled.clusters.iter().map(|c| c.name.as_str()).collect();
                all.extend(emit::compare_removed(&directory, &names, all_clusters));
                all.sort_by(|a, b| a.path().cmp(b.path()));
                differences = Some(all);
            }
            compiled
        }
        Output::Directory(out) => {
            let directory = out.clone().unwrap_or_else(|| root.join("out"));
            let only: Vec<&str> = request.selection.clusters.iter().map(String::as_str).collect();
            let only = (!all_clusters).then_some(only.as_slice());
            let destination = emit::check_destination(root, &directory, only);
            let staging = emit::Staging::new(&directory, (!all_clusters).then(|| request.selection.clusters.clone()));
            // A full build reuses what the previous one recorded of each cluster whose inputs are unchanged
            // (crate::reuse): its findings and, for a build that shows the summary table or the JSON report,
            // the summary the build that compiled it kept (a cluster recorded by a build that kept only names
            // is compiled then).
            let kept_of_record = |name: String, recorded: Option<&str>| {
                if request.summary {
                    ClusterSummary::from_record(name, recorded?, &interner)
                } else {
                    Some(ClusterSummary::of_name(name))
                }
            };
            let recorded =
                if request.summary { |kept: &ClusterSummary| Some(kept.record()) } else { |_: &ClusterSummary| None };
            let refresh = |kept: &mut ClusterSummary, instance: &InstancePlan| {
                request.summary.then(|| kept.refresh(instance, &interner))
            };
            let reuse = (all_clusters && destination.is_ok() && selection.what_if.is_none()).then_some(Reuse {
                staging: &staging,
                kept: &kept_of_record,
                recorded,
                refresh: &refresh,
                handed: std::convert::identity,
            });
            if reuse.is_some() {
                // Each staged cluster's inputs are recorded with it: its sections of the next manifest are
                // written once both are known.
                staging.record_inputs();
            }
            let (mut compiled, staged) = compile_each(
                selection,
                Keep::Summary,
                summarize,
                |_, cluster| {
                    let cluster = cluster?;
                    Some(match &destination {
                        Ok(()) => staging.stage(cluster),
                        Err(refused) => Err(refused.clone()),
                    })
                },
                reuse,
            );
            if compiled.ok() {
                // The first failure in cluster order is the one reported, whatever the scheduling.
                let names: Vec<&str> = compiled.clusters.iter().map(|c| c.name.as_str()).collect();
                let done = destination
                    .and_then(|()| staged.into_iter().flatten().collect::<Result<Vec<()>, _>>())
                    .and_then(|_| staging.finish(&names, all_clusters));
                match done {
                    Ok(()) => {
                        let instances = compiled.clusters.iter().map(|c| c.instances.len()).sum();
                        let shared = compiled.clusters.iter().map(|c| c.shared.len()).sum();
                        written = Some(Written { directory, clusters: compiled.clusters.len(), instances, shared });
                    }
                    Err(diagnostic) => compiled.diagnostics.push(diagnostic),
                }
            }
            compiled
        }
    };
    Ok(Built { compiled, stream, written, differences })
}

/// The clusters' names, for usage errors: `prod, staging`.
pub fn cluster_names<'a>(clusters: impl IntoIterator<Item = &'a ClusterPlan>) -> String {
    clusters.into_iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
}
