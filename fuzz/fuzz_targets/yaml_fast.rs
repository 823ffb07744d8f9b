//! Fuzzes the fast YAML reader (`kix_yaml::fast_stream`) against the located loader
//! (`kix_yaml::parse_stream`): for any UTF-8 text, the fast reader either gives up or reads
//! exactly the loader's documents (same values, same key order), and it never accepts a text the
//! loader reports an error for.
#![no_main]

use kix_yaml::{Limits, check_against_loader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Small limits as well as the snapshot ones, so the depth and size refusals are reached.
    for limits in [Limits::SNAPSHOT, Limits { max_depth: 4, max_bytes: 256, ..Limits::PACKAGE }] {
        if let Err(problem) = check_against_loader(text, &limits) {
            panic!("the fast reader disagrees with the loader: {problem}\n{text:?}");
        }
    }
});
