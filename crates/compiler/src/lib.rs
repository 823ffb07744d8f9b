//! kix's compiler: cluster files and packages in, each cluster's patched manifests out.
//!
//! The stages read top to bottom (ARCHITECTURE.md): [`load`] reads cluster files and packages (raw
//! types that remember where they came from), [`resolve`] validates them into an owned model
//! (package versions, levels, replica counts, each decision's trail), [`derive`] turns that model into
//! patched documents with spread constraints and PodDisruptionBudgets (each placement decision
//! recorded with its reason), [`crosscheck`] and [`sizing`] check what a cluster's instances do to each
//! other and what their replica counts cost, and [`emit`] writes the output directory or a stream.
//! [`compile`] is the driver: the one place the stage order is visible. Nothing here prints; every
//! stage reports through `kix_diag::Diagnostics` and carries on.

pub mod admission;
pub mod compile;
pub mod crosscheck;
pub mod derive;
pub mod emit;
pub mod fs;
pub mod load;
pub(crate) mod records;
pub mod resolve;
pub mod reuse;
pub mod sizing;
pub mod summary;
/// The throw-away trees rule tests compile; for this crate's tests and, through the `testing`
/// feature, the tests of the crates above it.
#[cfg(any(test, feature = "testing"))]
pub mod testing;
