//! kix: an availability-level policy compiler for Kubernetes.
//!
//! The pipeline reads top to bottom (see ARCHITECTURE.md): [`load`] reads
//! cluster files and packages (raw types that remember where they came from),
//! [`resolve`] validates them into an owned model (package versions, levels,
//! replica counts), [`derive`] turns that model into patched documents with
//! spread constraints and PodDisruptionBudgets, [`crosscheck`] checks what
//! instances of one cluster do to each other, and [`emit`] writes the output
//! directory. [`compile`] runs the stages in order; [`commands`] is the one
//! place that talks to the terminal. [`diag`] is the one diagnostics type every
//! stage reports through; [`sim`] is the scheduler model that [`verify`] uses
//! to prove the result; [`lint`] checks manifests kix did not write for the
//! placement mistakes kix never makes.

mod audit;
mod build_report;
mod capacity;
pub mod cli;
mod commands;
pub mod compile;
mod completion;
mod crosscheck;
mod derive;
mod emit;
mod explain;
mod formats;
mod fs;
mod init;
mod lint;
mod load;
mod manual;
mod outdir;
mod output_manifest;
mod resolve;
mod spare;
mod stream;
mod summary;
mod table;
#[cfg(test)]
pub mod testing;
mod verify;
mod words;

pub use commands::{huge_pages, run};

/// What the integration tests, benches and fuzz targets reach below the commands: the compiler's
/// typed entry points and the few readers the fuzz targets drive directly. Everything else is
/// private to the crate, so rustc reports what nothing uses.
pub mod api {
    pub use crate::derive::{InstancePlan, WorkloadPlan};
    pub use crate::emit::render_stream;
    pub use crate::lint::{Input as LintInput, LintRequest, lint};
    pub use crate::load::cluster::parse as parse_cluster;
    pub use crate::load::documents::parse_documents;
    pub use crate::load::package::parse as parse_package;
    pub use crate::verify::verify;
}
