//! The compiler driver: load -> resolve -> derive -> cross-instance checks
//! (-> emit). This is the one place the stage order is visible.
//!
//! The library takes typed requests ([`Selection`], [`BuildRequest`]) and
//! returns what happened; it prints nothing. `commands` turns the command line
//! into requests and the results into output and an exit status.

use crate::derive::{self, ClusterPlan};
use crate::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::{crosscheck, emit, load, resolve};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Which tree to read and which clusters to compile.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// The directory holding clusters/ and packages/.
    pub root: PathBuf,
    /// Only these clusters; all when empty.
    pub clusters: Vec<String>,
    /// Whether warnings fail the run (K0502).
    pub deny_warnings: bool,
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

/// Everything a compile produced: plans (complete only when there are no errors) and findings.
#[derive(Debug)]
pub struct Compiled {
    pub clusters: Vec<ClusterPlan>,
    pub diagnostics: Diagnostics,
}

impl Compiled {
    /// Whether the result may be used: no errors (`deny_warnings` adds one, K0502, when there are warnings).
    pub fn ok(&self) -> bool {
        !self.diagnostics.has_errors()
    }
}

/// Runs the pipeline over the selected tree.
pub fn compile(selection: &Selection) -> Compiled {
    compile_keeping_model(selection).1
}

/// Like [`compile`], also handing back the resolved model the plans were derived from (for
/// `kix explain --cluster`, which shows where each decision came from).
pub fn compile_keeping_model(selection: &Selection) -> (resolve::Model, Compiled) {
    let mut diagnostics = Diagnostics::default();
    let tree = load::load(&selection.root, &selection.clusters, &mut diagnostics);
    let model = resolve::resolve(tree, &mut diagnostics);
    // Clusters are independent from here on: derive and check them on every core, each with its own
    // findings, then merge in cluster order (`finish` sorts anyway, so the report is the same).
    let derived: Vec<(ClusterPlan, Diagnostics)> = model
        .clusters
        .par_iter()
        .map(|cluster| {
            let mut found = Diagnostics::default();
            let plan = derive::derive_cluster(cluster, &mut found);
            crosscheck::check(cluster, &plan, &mut found);
            (plan, found)
        })
        .collect();
    let mut clusters = Vec::with_capacity(derived.len());
    for (plan, found) in derived {
        diagnostics.extend(found);
        clusters.push(plan);
    }
    diagnostics.finish();
    diagnostics.acknowledge(|d| acknowledged(&model, d));
    if selection.deny_warnings && diagnostics.count(Severity::Warning) > 0 {
        diagnostics.push(Diagnostic::new(
            Code::WarningsDenied,
            format!("{} warning(s) denied by --deny-warnings", diagnostics.count(Severity::Warning)),
        ));
        diagnostics.finish();
    }
    (model, Compiled { clusters, diagnostics })
}

/// Whether the inputs acknowledge a warning: its code is in the `allow` of its instance or of its cluster.
pub fn acknowledged(model: &resolve::Model, diagnostic: &Diagnostic) -> bool {
    let subject = &diagnostic.subject;
    let Some(cluster) = model.clusters.iter().find(|c| Some(&c.name) == subject.cluster.as_ref()) else {
        return false;
    };
    let instance = subject.instance.as_ref().and_then(|name| cluster.instances.iter().find(|i| &i.name == name));
    cluster.allow.contains(&diagnostic.code) || instance.is_some_and(|i| i.allow.contains(&diagnostic.code))
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
}

/// What a build did.
#[derive(Debug)]
pub struct Built {
    pub compiled: Compiled,
    /// The YAML stream, for [`Output::Stream`] when the compile succeeded.
    pub stream: Option<String>,
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
pub fn build(request: &BuildRequest) -> Result<Built, UsageError> {
    let mut compiled = compile(&request.selection);
    let (mut stream, mut written, mut differences) = (None, None, None);
    let root = &request.selection.root;
    let all_clusters = request.selection.clusters.is_empty();
    if compiled.ok() {
        match &request.output {
            Output::Stream { all } => {
                if !all && compiled.clusters.len() > 1 {
                    return Err(UsageError::StreamNeedsOneCluster { clusters: cluster_names(&compiled.clusters) });
                }
                stream = Some(emit::render_stream(&compiled.clusters, *all))
            }
            Output::Check(out) => {
                let directory = out.clone().unwrap_or_else(|| root.join("out"));
                differences = Some(emit::compare(&directory, &compiled.clusters, all_clusters));
            }
            Output::Directory(out) => {
                let directory = out.clone().unwrap_or_else(|| root.join("out"));
                match emit::check_destination(root, &directory)
                    .and_then(|()| emit::write(&directory, &compiled.clusters, all_clusters))
                {
                    Ok(()) => {
                        let instances = compiled.clusters.iter().map(|c| c.instances.len()).sum();
                        let shared = compiled.clusters.iter().map(|c| c.shared.len()).sum();
                        written = Some(Written { directory, clusters: compiled.clusters.len(), instances, shared });
                    }
                    Err(diagnostic) => compiled.diagnostics.push(diagnostic),
                }
            }
        }
    }
    Ok(Built { compiled, stream, written, differences })
}

/// The clusters' names, for usage errors: `prod, staging`.
pub fn cluster_names(clusters: &[ClusterPlan]) -> String {
    clusters.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
}
