//! Support shared by kix-sim's test targets (`sim_corpus`, `sim_model`; crates/sim/README.md):
//! paths, goldens that `KIX_BLESS=1` rewrites, and the verify request the scenarios use. The
//! model's tests run no binary: everything goes through `kix_sim`'s public API.

// Each test target uses part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `path` under this crate (crates/sim/): its corpora, `tests/conformance/` and `tests/snapshots/`.
pub fn crate_path(path: impl AsRef<Path>) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `path` under the workspace root: the inputs the model's tests share with the command line's
/// (`tests/sim/`: states and workload manifests) and the real-world corpus (`tests/realworld/`).
pub fn workspace_path(path: impl AsRef<Path>) -> PathBuf {
    crate_path("../..").join(path)
}

/// The text of a file under the workspace root.
pub fn workspace_file(path: &str) -> String {
    std::fs::read_to_string(workspace_path(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// True when `KIX_BLESS=1`: goldens are rewritten instead of compared.
pub fn blessing() -> bool {
    std::env::var_os("KIX_BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the golden file at `path` (under this crate), or writes it when
/// blessing; `Err` says how they differ.
pub fn check_golden(path: impl AsRef<Path>, actual: &str) -> Result<(), String> {
    let path = crate_path(path);
    if blessing() {
        std::fs::write(&path, actual).map_err(|e| format!("write {}: {e}", path.display()))?;
        return Ok(());
    }
    match std::fs::read_to_string(&path) {
        Ok(expected) if expected == actual => Ok(()),
        Ok(expected) => Err(format!(
            "{} differs from the golden file (run with KIX_BLESS=1 to accept)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(e) => Err(format!("missing golden file {} ({e}); run with KIX_BLESS=1 to create it", path.display())),
    }
}

/// A verify request for one workload, with the default hostname and zone keys.
pub fn verify_request(
    kind: kix_kube::kind::WorkloadKind,
    namespace: &str,
    name: &str,
    level: kix_kube::level::Level,
    min_replicas: Option<u32>,
) -> kix_sim::ScenarioRequest {
    kix_sim::ScenarioRequest {
        workloads: vec![kix_sim::WorkloadLevel {
            kind,
            namespace: namespace.into(),
            name: name.into(),
            level,
            min_replicas,
            max_replicas: None,
            group: None,
            group_scope: 0,
            survive: Default::default(),
        }],
        node_key: "kubernetes.io/hostname".into(),
        zone_key: "topology.kubernetes.io/zone".into(),
        kinds: Default::default(),
        volumes: Default::default(),
        node_groups: Vec::new(),
    }
}
