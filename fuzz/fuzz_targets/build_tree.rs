//! Fuzzes the whole compiler: the input bytes drive a small generator of a
//! tree (cluster files, package manifests, YAML documents), written to a
//! scratch root and compiled with `kix::compile::compile`.
//!
//! The generator (`generator.rs`, shared with `hostile_tree`) draws from small vocabularies that mix valid and invalid
//! values (bad names, levels, versions, selectors, label keys, replica
//! counts, placements), and now and then splices raw input bytes into a file,
//! so both deep pipeline paths and error paths get exercised. Checks:
//! - compiling never panics, and every diagnostic renders (text and JSON);
//! - when the build succeeds, the output renders, and kix never turns an
//!   object the API server would accept into one it refuses, nor emits an
//!   invalid PodDisruptionBudget of its own.
#![no_main]

use kix_diag::Style;
use kix_kube::validate::validate_object;
use libfuzzer_sys::fuzz_target;

mod generator;
use generator::{Choices, generate};

fuzz_target!(|data: &[u8]| {
    let mut choices = Choices { data };
    let dir = tempfile::tempdir().expect("scratch directory");
    let inputs = generate(&mut choices, dir.path());
    let select = kix::compile::Selection { root: dir.path().to_path_buf(), ..Default::default() };
    let compiled = kix::compile::compile(&select);
    for diagnostic in compiled.diagnostics.iter() {
        let _ = diagnostic.render(Style::Plain);
        let _ = diagnostic.to_json();
    }
    if !compiled.ok() {
        return;
    }
    let _ = kix::api::render_stream(&compiled.clusters, true);
    for cluster in &compiled.clusters {
        for instance in &cluster.instances {
            for object in instance.objects() {
                let kind = object["kind"].as_str().unwrap_or_default();
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                let key = format!("{kind}/{name}");
                // The inputs it may have come from: when every one of them is valid, so must it be
                // (kix derived it when there is none).
                let candidates = inputs.get(&key).map_or(&[][..], Vec::as_slice);
                if candidates.iter().all(|input| validate_object(input).is_empty()) {
                    let problems = validate_object(object);
                    assert!(
                        problems.is_empty(),
                        "kix emitted {key}, which the API server refuses, from valid input: {problems:?}\n{object:?}"
                    );
                }
            }
        }
    }
});
