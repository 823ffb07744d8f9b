//! Packages: `packages/<dir>/kix.toml` plus the Kubernetes YAML files beside it.
//!
//! The manifest is parsed into raw values with spans; every `*.yaml`/`*.yml`
//! file is split into documents (see [`super::yaml`]) and kept as
//! `serde_yaml::Value`s so that `emit` can patch the user's own document and
//! keep its fields and their order.

use super::Reader;
use super::cluster::toml_diagnostic;
use super::yaml::{self, Document};
use crate::diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use crate::level::Level;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// One package directory.
#[derive(Debug)]
pub struct PackageDir {
    /// The directory, relative to the root.
    pub dir: PathBuf,
    pub manifest: SourceFile,
    pub raw: RawPackage,
    /// Every document of every YAML file, files in name order, documents in file order.
    pub documents: Vec<Document>,
    /// False when one of its files could not be read or parsed (already reported):
    /// later stages skip the package's own checks so one mistake is reported once.
    pub complete: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPackage {
    pub meta: RawMeta,
    #[serde(default)]
    pub workloads: BTreeMap<Spanned<String>, RawWorkload>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeta {
    pub name: Spanned<String>,
    pub version: Spanned<String>,
    pub availability: Option<RawCeiling>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCeiling {
    pub max: Option<Spanned<Level>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub replicas: Option<Spanned<RawReplicas>>,
    pub pdb: Option<RawPdb>,
    pub availability: Option<RawCeiling>,
}

/// `replicas = { none = 1, pod = 2, zone = 3 }`: a step function over levels.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReplicas {
    pub none: Option<Spanned<u32>>,
    pub pod: Option<Spanned<u32>>,
    pub node: Option<Spanned<u32>>,
    pub zone: Option<Spanned<u32>>,
}

impl RawReplicas {
    /// The named steps, lowest level first.
    pub fn steps(&self) -> Vec<(Level, &Spanned<u32>)> {
        [(Level::None, &self.none), (Level::Pod, &self.pod), (Level::Node, &self.node), (Level::Zone, &self.zone)]
            .into_iter()
            .filter_map(|(level, count)| count.as_ref().map(|count| (level, count)))
            .collect()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPdb {
    #[serde(rename = "unhealthyPodEvictionPolicy")]
    pub unhealthy_pod_eviction_policy: Option<Spanned<EvictionPolicy>>,
}

/// `PodDisruptionBudget.spec.unhealthyPodEvictionPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum EvictionPolicy {
    IfHealthyBudget,
    AlwaysAllow,
}

impl EvictionPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            EvictionPolicy::IfHealthyBudget => "IfHealthyBudget",
            EvictionPolicy::AlwaysAllow => "AlwaysAllow",
        }
    }
}

/// Loads one directory under `packages/`; `None` when it is not a package or cannot be read.
pub(crate) fn load_dir(reader: &Reader<'_>, dir: &Path, diagnostics: &mut Diagnostics) -> Option<PackageDir> {
    let manifest_path = dir.join("kix.toml");
    if !manifest_path.is_file() {
        diagnostics.push(
            Diagnostic::new(Code::NotAPackage, "directory under packages/ has no kix.toml; skipped")
                .at(Location::file(reader.display(dir))),
        );
        return None;
    }
    let canonical_dir = match dir.canonicalize() {
        Ok(path) => path,
        Err(e) => {
            diagnostics.push(
                Diagnostic::new(Code::Io, format!("cannot resolve directory: {e}"))
                    .at(Location::file(reader.display(dir))),
            );
            return None;
        }
    };
    let errors_before = diagnostics.count(crate::diag::Severity::Error);
    let entries = match reader.list(dir) {
        Ok(entries) => entries,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return None;
        }
    };
    let mut manifest = None;
    let mut documents = Vec::new();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let is_yaml = name.ends_with(".yaml") || name.ends_with(".yml");
        if name != "kix.toml" && !is_yaml {
            continue;
        }
        if !stays_inside(&path, &canonical_dir) {
            diagnostics.push(
                Diagnostic::new(
                    Code::InputRefused,
                    "symlink points outside the package directory; kix does not follow it",
                )
                .at(Location::file(reader.display(&path))),
            );
            continue;
        }
        if !path.is_file() {
            continue;
        }
        let Some(source) = reader.read(&path, diagnostics) else { continue };
        if name == "kix.toml" {
            match toml::from_str::<RawPackage>(&source.text) {
                Ok(raw) => manifest = Some((source, raw)),
                Err(error) => diagnostics.push(toml_diagnostic(&source, &error)),
            }
        } else {
            documents.extend(yaml::parse_documents(source, diagnostics));
        }
    }
    let complete = diagnostics.count(crate::diag::Severity::Error) == errors_before;
    let (manifest, raw) = manifest?;
    Some(PackageDir { dir: reader.display(dir), manifest, raw, documents, complete })
}

/// Whether a path (possibly a symlink) resolves to somewhere inside `dir`.
fn stays_inside(path: &Path, canonical_dir: &Path) -> bool {
    match path.canonicalize() {
        Ok(target) => target.starts_with(canonical_dir),
        // A dangling symlink: refuse rather than guess.
        Err(_) => false,
    }
}
