//! The engines behind kix's commands: each takes a typed request, runs the compiler (and, for
//! verify, audit and capacity, the scheduler model `kix-sim`) and returns a typed report. Nothing
//! here prints or formats for a terminal: the binary renders every report as text, JSON, SARIF,
//! JUnit or HTML.
//!
//! [`verify`] is the bridge from compiled clusters to the model's scenarios; [`audit`] judges a
//! snapshot's pods against the compiled levels; [`capacity`] adds up what each level costs and what
//! survives the worst loss; [`explain`] reads the decisions resolve and derive recorded for one
//! instance; [`init`] writes a kix.toml or a cluster file from manifests or a snapshot.

pub mod admission;
pub mod audit;
pub mod capacity;
pub mod explain;
pub mod init;
pub mod verify;
