//! Fuzzes the package parsers: any bytes as a `kix.toml` manifest and as a
//! package YAML file.
//!
//! Both must turn any UTF-8 text into values or located diagnostics, never a
//! panic; every diagnostic must render, and every document that parsed must
//! answer the questions later stages ask of it (kind, name, key locations).
#![no_main]

use kix_diag::{Diagnostics, SourceFile, Style};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut diagnostics = Diagnostics::default();

    let manifest = SourceFile::new("packages/fuzz/kix.toml", text.to_string());
    if let Err(problem) = kix::api::parse_package(&manifest) {
        diagnostics.push(problem);
    }

    let yaml = SourceFile::new("packages/fuzz/fuzz.yaml", text.to_string());
    for document in kix::api::parse_documents(yaml, &mut diagnostics) {
        let _ = (document.kind(), document.name(), document.group());
        for path in
            [&["spec", "selector"][..], &["spec", "template", "spec", "topologySpreadConstraints"], &["metadata"]]
        {
            let _ = document.locate(path);
            let _ = document.locate_field("spec.template.spec.containers[0].image");
        }
        let _ = kix_kube::validate::validate_object(&document.value);
    }
    for diagnostic in diagnostics.iter() {
        let _ = diagnostic.render(Style::Plain);
        let _ = diagnostic.to_json();
    }
});
