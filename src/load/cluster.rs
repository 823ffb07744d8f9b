//! Cluster files: `clusters/<name>.toml`, parsed into raw values that keep their spans.
//!
//! Unknown keys anywhere are refused (`deny_unknown_fields`): a misspelt key
//! must never fall back silently to a default. Semantic checks (names, label
//! keys, level against substrate) happen in `resolve`, which points back into
//! the file through the spans kept here.

use crate::diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use crate::level::Level;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// One cluster file as written.
#[derive(Debug)]
pub struct ClusterFile {
    /// The file stem: the cluster's name (validated in `resolve`).
    pub name: String,
    pub source: SourceFile,
    pub raw: RawCluster,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    pub availability: Spanned<Level>,
    #[serde(default)]
    pub capabilities: RawCapabilities,
    #[serde(default, rename = "failureDomains")]
    pub failure_domains: RawFailureDomains,
    #[serde(default)]
    pub instances: Vec<RawInstance>,
    #[serde(default, rename = "nodePools")]
    pub node_pools: Vec<RawNodePool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCapabilities {
    #[serde(rename = "multiNode")]
    pub multi_node: Option<Spanned<bool>>,
    #[serde(rename = "availabilityZones")]
    pub availability_zones: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFailureDomains {
    pub node: Option<Spanned<String>>,
    pub zone: Option<Spanned<String>>,
    #[serde(default)]
    pub extra: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstance {
    pub name: Spanned<String>,
    pub package: Spanned<String>,
    pub version: Option<Spanned<String>>,
    pub namespace: Option<Spanned<String>>,
    pub availability: Option<Spanned<Level>>,
}

/// A pool of identical nodes (the node inventory `kix verify` simulates on).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNodePool {
    pub name: Spanned<String>,
    /// Zones the pool spans; absent on clusters without zones.
    #[serde(default)]
    pub zones: Vec<Spanned<String>>,
    /// Nodes in each zone (or in all, without zones).
    #[serde(rename = "nodesPerZone")]
    pub nodes_per_zone: Spanned<u32>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub taints: Vec<RawTaint>,
    #[serde(default)]
    pub allocatable: RawAllocatable,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTaint {
    pub key: String,
    #[serde(default)]
    pub value: String,
    pub effect: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAllocatable {
    #[serde(default = "default_cpu")]
    pub cpu: String,
    #[serde(default = "default_memory")]
    pub memory: String,
    #[serde(default = "default_pods")]
    pub pods: u32,
}

fn default_cpu() -> String {
    "4".into()
}
fn default_memory() -> String {
    "16Gi".into()
}
fn default_pods() -> u32 {
    110
}

impl Default for RawAllocatable {
    fn default() -> Self {
        RawAllocatable { cpu: default_cpu(), memory: default_memory(), pods: default_pods() }
    }
}

/// Parses one cluster file; syntax, type and unknown-key errors become diagnostics.
pub fn parse(path: &Path, source: SourceFile, diagnostics: &mut Diagnostics) -> Option<ClusterFile> {
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    match toml::from_str::<RawCluster>(&source.text) {
        Ok(raw) => Some(ClusterFile { name, source, raw }),
        Err(error) => {
            diagnostics.push(toml_diagnostic(&source, &error));
            None
        }
    }
}

/// Turns a TOML error into one located diagnostic (K0103 for unknown keys, K0102 otherwise).
pub fn toml_diagnostic(source: &SourceFile, error: &toml::de::Error) -> Diagnostic {
    let message = error.message().trim().to_string();
    let code = if message.starts_with("unknown field") { Code::UnknownKey } else { Code::TomlSyntax };
    let location = match error.span() {
        Some(span) => source.locate(span),
        None => Location::file(source.path()),
    };
    Diagnostic::new(code, message).at(location)
}
