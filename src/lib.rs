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

pub mod cli;
pub mod commands;
pub mod compile;
pub mod completion;
pub mod crosscheck;
pub mod derive;
pub mod emit;
pub mod explain;
mod fs;
pub mod init;
pub mod lint;
pub mod load;
pub mod resolve;
#[cfg(test)]
pub mod testing;
pub mod verify;

pub use commands::run;
