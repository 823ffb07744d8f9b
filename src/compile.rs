//! The compiler driver: load -> resolve -> derive -> cross-instance checks
//! (-> emit). This is the one place the stage order is visible.
//!
//! The library takes typed requests ([`Selection`], [`BuildRequest`]) and
//! returns what happened; it prints nothing. `commands` turns the command line
//! into requests and the results into output and an exit status.

use crate::derive::{self, ClusterPlan};
use crate::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::{crosscheck, emit, load, resolve};
use std::path::PathBuf;

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
    let mut diagnostics = Diagnostics::default();
    let tree = load::load(&selection.root, &selection.clusters, &mut diagnostics);
    let model = resolve::resolve(tree, &mut diagnostics);
    let clusters = derive::derive(&model, &mut diagnostics);
    for (cluster, plan) in model.clusters.iter().zip(&clusters) {
        crosscheck::check(cluster, &plan.instances, &mut diagnostics);
    }
    if selection.deny_warnings && diagnostics.count(Severity::Warning) > 0 {
        diagnostics.push(Diagnostic::new(
            Code::WarningsDenied,
            format!("{} warning(s) denied by --deny-warnings", diagnostics.count(Severity::Warning)),
        ));
    }
    diagnostics.finish();
    Compiled { clusters, diagnostics }
}

/// Where a build's manifests go.
#[derive(Clone, Debug)]
pub enum Output {
    /// Written under this directory (`ROOT/out` when `None`), swapped in atomically.
    Directory(Option<PathBuf>),
    /// Rendered as one YAML stream.
    Stream,
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
pub fn build(request: &BuildRequest) -> Built {
    let mut compiled = compile(&request.selection);
    let (mut stream, mut written) = (None, None);
    if compiled.ok() {
        match &request.output {
            Output::Stream => stream = Some(emit::render_stream(&compiled.clusters)),
            Output::Directory(out) => {
                let root = &request.selection.root;
                let directory = out.clone().unwrap_or_else(|| root.join("out"));
                let all_clusters = request.selection.clusters.is_empty();
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
    Built { compiled, stream, written }
}
