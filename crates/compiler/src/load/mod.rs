//! Load: read the tree under the root into raw, located inputs.
//!
//! `clusters/<name>.toml` are read into [`ClusterSource`]s (each parsed into a [`ClusterFile`] by the
//! stage that uses it, [`ClusterSource::parse`]) and every directory under
//! `packages/` with a `kix.toml` becomes a [`PackageDir`] with its YAML
//! documents. Nothing is interpreted here beyond syntax and shape; every value
//! that a later stage may complain about keeps its location. Reading is
//! bounded: files over [`MAX_FILE_BYTES`], non-UTF-8 text and symlinks that
//! leave the package directory are refused with a diagnostic.

pub mod cluster;
pub mod documents;
mod globs;
pub mod kustomization;
pub mod package;
pub mod streamed;
mod toml_fast;
mod toml_file;
mod yaml_error;

pub use cluster::{ClusterFile, ClusterSource};
pub use package::PackageDir;
/// What a cluster file read in part is read as (the reference `reuse::in_part`'s tests compare with).
#[cfg(test)]
pub(crate) use toml_file::blanked;

use crate::fs::Reader;
use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use rayon::prelude::*;
use std::path::Path;

/// Everything read from one root.
#[derive(Debug, Default)]
pub struct Tree {
    /// The cluster files, read, in file order (parsed where they are resolved).
    pub clusters: Vec<ClusterSource>,
    pub packages: Vec<PackageDir>,
    /// Package directories whose kix.toml failed (already reported), by `meta.name` where it could be read.
    pub broken_packages: Vec<Option<String>>,
    /// Directories under `packages/` without a kix.toml (K0107), by name: an instance naming one is told
    /// how to make it a package.
    pub not_packages: Vec<String>,
}

/// Reads the clusters (all, or those named) and every package under `root`.
pub fn load(root: &Path, only_clusters: &[String], diagnostics: &mut Diagnostics) -> Tree {
    let mut tree = Tree::default();
    let reader = Reader::new(root);

    let clusters_dir = root.join("clusters");
    if !clusters_dir.is_dir() {
        diagnostics.push(
            Diagnostic::new(Code::NoClusters, "no clusters/ directory: this is not a kix root")
                .at(Location::file(reader.display(&clusters_dir)))
                .help(
                    "kix looks for clusters/ in the current directory and its parents; run it inside a kix root, \
                     pass --root DIR, or start one with clusters/<name>.toml",
                ),
        );
        return tree;
    }
    let mut cluster_paths = Vec::new();
    match reader.list(&clusters_dir) {
        // Every `*.toml` entry is a cluster file: one that is not a regular file (a directory, a FIFO,
        // a device) is refused when it is read, never skipped (its out/<cluster>/ would be deleted).
        Ok(entries) => {
            let canonical = clusters_dir.canonicalize().unwrap_or_else(|_| clusters_dir.clone());
            for path in entries {
                if path.extension().is_none_or(|e| e != "toml") {
                    continue;
                }
                // Only a symlink can lead out: a file listed in the directory is inside it (a fleet's
                // thousand files were each resolved component by component).
                let escape = if crate::fs::is_symlink(&path) { crate::fs::escape(&path, &canonical) } else { None };
                match escape {
                    None => cluster_paths.push(path),
                    // Refused before it is read, so nothing of what it points at is echoed.
                    Some(why) => diagnostics.push(
                        Diagnostic::new(Code::InputRefused, why.describe("clusters/"))
                            .at(Location::file(reader.display(&path))),
                    ),
                }
            }
        }
        Err(diagnostic) => diagnostics.push(diagnostic),
    }
    for wanted in only_clusters {
        if !cluster_paths.iter().any(|p| p.file_stem().is_some_and(|s| s == wanted.as_str())) {
            // The clusters there are (issue 41: Argo CD's KIX_CLUSTER misspelt named no alternative).
            let mut there: Vec<String> =
                cluster_paths.iter().filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned())).collect();
            there.sort();
            let help = match there.as_slice() {
                [] => "there are no cluster files under clusters/".to_string(),
                names => format!("the clusters there are: {}", names.join(", ")),
            };
            diagnostics.push(
                Diagnostic::new(Code::NoClusters, format!("no cluster file clusters/{wanted}.toml"))
                    .at(Location::file(reader.display(&clusters_dir)))
                    .help(help),
            );
        }
    }
    cluster_paths.retain(|p| {
        only_clusters.is_empty() || only_clusters.iter().any(|w| p.file_stem().is_some_and(|s| s == w.as_str()))
    });
    if cluster_paths.is_empty() && only_clusters.is_empty() && !diagnostics.has_errors() {
        diagnostics.push(
            Diagnostic::new(Code::NoClusters, "no cluster files (clusters/*.toml) under the root")
                .at(Location::file(reader.display(&clusters_dir))),
        );
    }
    // Cluster files are read on every core (a fleet has thousands); findings merge in file order.
    let parsed: Vec<(Option<ClusterSource>, Diagnostics)> = cluster_paths
        .par_iter()
        .map(|path| {
            let mut found = Diagnostics::default();
            let cluster = reader.read(path, &mut found).map(|source| ClusterSource::new(path, source));
            (cluster, found)
        })
        .collect();
    for (cluster, found) in parsed {
        diagnostics.extend(found);
        tree.clusters.extend(cluster);
    }

    let packages_dir = root.join("packages");
    if packages_dir.exists() {
        match reader.list(&packages_dir) {
            Ok(dirs) => {
                for dir in dirs.into_iter().filter(|d| d.is_dir() || d.is_symlink()) {
                    if let Some(why) = package_dir_escape(&dir, &packages_dir) {
                        diagnostics
                            .push(Diagnostic::new(Code::InputRefused, why).at(Location::file(reader.display(&dir))));
                        tree.broken_packages.push(None);
                        continue;
                    }
                    match package::load_dir(&reader, &dir, diagnostics) {
                        package::Loaded::Package(package) => tree.packages.push(*package),
                        package::Loaded::Broken(name) => tree.broken_packages.push(name),
                        package::Loaded::NotAPackage => {
                            tree.not_packages.extend(dir.file_name().map(|n| n.to_string_lossy().into_owned()))
                        }
                    }
                }
            }
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    tree
}

/// The JSON Schema of a cluster file (`cluster`) or of kix.toml, generated from the types the loader
/// reads them into, so the schema cannot drift from what kix accepts. Pretty JSON, newline-terminated.
pub fn schema(cluster: bool) -> String {
    let schema =
        if cluster { schemars::schema_for!(cluster::RawCluster) } else { schemars::schema_for!(package::RawPackage) };
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

/// A package directory that is a symlink resolving outside `packages/` is refused: kix reads only the tree it was given.
fn package_dir_escape(dir: &Path, packages_dir: &Path) -> Option<String> {
    if !crate::fs::is_symlink(dir) {
        return None;
    }
    // A dangling link leads nowhere inside either: both are refused with the same words.
    let inside = packages_dir.canonicalize().is_ok_and(|packages| crate::fs::escape(dir, &packages).is_none());
    (!inside)
        .then(|| "package directory is a symlink that points outside packages/; kix does not follow it".to_string())
}
