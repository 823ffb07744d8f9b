//! The text forms of the commands' reports, as a terminal shows them: the build summary and what
//! `build --check` found, verify's verdicts, capacity's costs, explain's derivation, audit's findings.

pub mod admission;
pub mod audit;
pub mod build;
pub mod capacity;
pub mod explain;
pub mod verify;
