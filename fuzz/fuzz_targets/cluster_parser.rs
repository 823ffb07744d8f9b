//! Fuzzes the cluster-file parser: any bytes as `clusters/fuzz.toml`.
//!
//! The loader refuses non-UTF-8 text before parsing, so only UTF-8 reaches
//! `cluster::parse`. Whatever it returns, every diagnostic must render (text
//! and JSON): spans from the TOML parser point into arbitrary text, and
//! rendering slices lines by them.
#![no_main]

use kix_diag::{Diagnostics, SourceFile, Style};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut diagnostics = Diagnostics::default();
    let source = SourceFile::new("clusters/fuzz.toml", text.to_string());
    let _ = kix::api::parse_cluster(Path::new("clusters/fuzz.toml"), source, &mut diagnostics);
    for diagnostic in diagnostics.iter() {
        let _ = diagnostic.render(Style::Plain);
        let _ = diagnostic.render(Style::Colour);
        let _ = diagnostic.to_json();
    }
});
