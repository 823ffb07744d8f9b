//! kix-sim's ordinary tests (crates/sim/README.md), through the crate's public API only: the fast
//! path against the reference path on generated states (`fast_path`), and the verify scenarios
//! on small clusters (`scenarios`). The table-driven corpora are one trial per case in `sim_corpus`.

#[path = "../support/mod.rs"]
mod support;

mod fast_path;
mod host_ports;
mod scenarios;
