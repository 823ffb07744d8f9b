//! `build --check`: where an output directory differs from what the build would write (files missing,
//! changed or extra, and cluster directories kix wrote that no cluster builds any more).

use super::files::{generated_by_kix, read_regular};
use super::render::render_cluster;
use crate::derive::ClusterPlan;
use std::path::{Path, PathBuf};

/// How a file of the output directory differs from what a build would write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// A build would write it; it is not there.
    Missing { path: PathBuf },
    /// It is there with other bytes (`written` is what a build would write).
    Changed { path: PathBuf, found: String, written: String },
    /// A build would remove it: a file of a rebuilt cluster's directory, or a cluster directory kix
    /// generated for a cluster that is gone (full builds only).
    Extra { path: PathBuf },
}

impl Difference {
    pub fn path(&self) -> &Path {
        match self {
            Difference::Missing { path } | Difference::Changed { path, .. } | Difference::Extra { path } => path,
        }
    }
}

/// How one cluster's directory under `out` differs from its build.
pub fn compare_cluster(out: &Path, cluster: &ClusterPlan) -> Vec<Difference> {
    let mut differences = Vec::new();
    let dir = out.join(&cluster.name);
    let files = render_cluster(cluster);
    for (name, written) in &files {
        let path = dir.join(name);
        match read_regular(&path) {
            Err(_) => differences.push(Difference::Missing { path }),
            Ok(found) if found != written.as_bytes() => differences.push(Difference::Changed {
                path,
                found: String::from_utf8_lossy(&found).into_owned(),
                written: written.clone(),
            }),
            Ok(_) => {}
        }
    }
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !files.iter().any(|(file, _)| *file == name) {
            differences.push(Difference::Extra { path: entry.path() });
        }
    }
    differences
}

/// On a full build (`all_clusters`), the directories of `out` that kix generated for clusters not among
/// `built`: a build removes them.
pub fn compare_removed(out: &Path, built: &[&str], all_clusters: bool) -> Vec<Difference> {
    if !all_clusters {
        return Vec::new();
    }
    let mut differences = Vec::new();
    let built: std::collections::HashSet<&str> = built.iter().copied().collect();
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let kept = name.to_str().is_some_and(|name| built.contains(name));
        if !kept && generated_by_kix(&entry.path()) {
            differences.push(Difference::Extra { path: entry.path() });
        }
    }
    differences
}
