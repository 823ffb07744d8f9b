//! The `kix` binary's library: the command line, one file per command, and presentation.
//!
//! The engines are crates below this one (ARCHITECTURE.md): `kix-compiler` (load -> resolve ->
//! derive -> checks -> emit), `kix-lint`, `kix-engines` (verify, audit, capacity, explain, init:
//! typed reports) and `kix-sim` (the scheduler model). This crate holds what talks to a user:
//! [`cli`] (clap's definitions), `commands` (a request per command, its report printed, its exit
//! status), `text` and `table` (the text forms), `formats` (JSON, SARIF, JUnit, GitHub), the HTML
//! report, the man pages and shell completion.

pub mod cli;
mod commands;
mod completion;
mod formats;
mod manual;
mod report_html;
mod table;
mod text;

pub use commands::{huge_pages, run};
/// The compile driver, for the integration tests, benches and fuzz targets.
pub use kix_compiler::compile;

/// What the integration tests, benches and fuzz targets reach below the commands: the compiler's
/// typed entry points and the few readers the fuzz targets drive directly.
pub mod api {
    pub use kix_compiler::derive::{BudgetReason, InstancePlan, WorkloadPlan};
    pub use kix_compiler::emit::render_stream;
    pub use kix_compiler::load::cluster::parse as parse_cluster;
    pub use kix_compiler::load::documents::parse_documents;
    pub use kix_compiler::load::package::parse as parse_package;
    pub use kix_engines::verify::verify;
    pub use kix_lint::{Input as LintInput, LintRequest, lint};
}
