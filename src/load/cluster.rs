//! Cluster files: `clusters/<name>.toml`, parsed into raw values that keep their spans.
//!
//! Unknown keys anywhere are refused (`deny_unknown_fields`): a misspelt key
//! must never fall back silently to a default. Semantic checks (names, label
//! keys, level against substrate) happen in `resolve`, which points back into
//! the file through the spans kept here.

use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use kix_kube::level::Level;
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

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// A cluster file (`clusters/<name>.toml`): what the substrate can do, the level its operators need, and
/// the package instances it runs.
#[schemars(title = "kix cluster file")]
pub struct RawCluster {
    /// The level this cluster's operators need: none < pod < node < zone.
    #[schemars(with = "Level")]
    pub availability: Spanned<Level>,
    /// Warning codes (`K0303`) every instance of the cluster acknowledges: not printed, counted as acknowledged.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// What the substrate is known to be able to do; a key left out is unknown (kix then warns).
    #[serde(default)]
    pub capabilities: RawCapabilities,
    /// The node-label keys the levels' failure domains are read from.
    #[serde(default, rename = "failureDomains")]
    pub failure_domains: RawFailureDomains,
    /// The package instances the cluster runs.
    #[serde(default)]
    pub instances: Vec<RawInstance>,
    /// A node inventory `kix verify` simulates on (without one, and without --state, verify skips the cluster).
    #[serde(default, rename = "nodePools")]
    pub node_pools: Vec<RawNodePool>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// What the cluster's substrate can do.
pub struct RawCapabilities {
    /// Whether the cluster has more than one node (false: a confirmed single node, level none only).
    #[serde(rename = "multiNode")]
    #[schemars(with = "Option<bool>")]
    pub multi_node: Option<Spanned<bool>>,
    /// The availability zones the nodes span (two or more support level zone).
    #[serde(rename = "availabilityZones")]
    #[schemars(with = "Option<Vec<String>>")]
    pub availability_zones: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// Node-label keys of the failure domains.
pub struct RawFailureDomains {
    /// The per-node key (default `kubernetes.io/hostname`).
    #[schemars(with = "Option<String>")]
    pub node: Option<Spanned<String>>,
    /// The zone key (default `topology.kubernetes.io/zone`).
    #[schemars(with = "Option<String>")]
    pub zone: Option<Spanned<String>>,
    /// Further keys (racks, capacity type), always spread best-effort.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub extra: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// One package instance.
pub struct RawInstance {
    /// The instance's name (a DNS-1123 label, unique in the cluster): out/<cluster>/<name>.yaml.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The package's meta.name.
    #[schemars(with = "String")]
    pub package: Spanned<String>,
    /// A semver requirement (`^1.2`); default: the highest release.
    #[schemars(with = "Option<String>")]
    pub version: Option<Spanned<String>>,
    /// The namespace the instance runs in (default: the instance's name).
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// This instance's level, instead of the cluster's.
    #[schemars(with = "Option<Level>")]
    pub availability: Option<Spanned<Level>>,
    /// Warning codes this instance acknowledges.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// Emit the instance's `v1 Namespace` unless its package ships it.
    #[serde(rename = "createNamespace")]
    #[schemars(with = "Option<bool>")]
    pub create_namespace: Option<Spanned<bool>>,
}

/// A pool of identical nodes (the node inventory `kix verify` simulates on).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawNodePool {
    /// The pool's name (a DNS-1123 label); nodes are named <pool>-<zone>-<n>.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Zones the pool spans; absent on clusters without zones.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub zones: Vec<Spanned<String>>,
    /// Nodes in each zone (or in all, without zones).
    #[serde(rename = "nodesPerZone")]
    #[schemars(with = "u32")]
    pub nodes_per_zone: Spanned<u32>,
    /// Further labels of every node of the pool.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Taints of every node of the pool.
    #[serde(default)]
    pub taints: Vec<RawTaint>,
    /// What each node can hold.
    #[serde(default)]
    pub allocatable: RawAllocatable,
    /// `kubernetes.io/os` of every node (default `linux`).
    #[schemars(with = "Option<String>")]
    pub os: Option<Spanned<String>>,
    /// `kubernetes.io/arch` of every node (default `amd64`).
    #[schemars(with = "Option<String>")]
    pub arch: Option<Spanned<String>>,
    /// `topology.kubernetes.io/region` of every node (default: no region label).
    #[schemars(with = "Option<String>")]
    pub region: Option<Spanned<String>>,
    /// `node.kubernetes.io/instance-type` of every node (default: the pool's name).
    #[serde(rename = "instanceType")]
    #[schemars(with = "Option<String>")]
    pub instance_type: Option<Spanned<String>>,
    /// `[nodePools.domains]`: an extra failure-domain key -> the values given to the pool's
    /// nodes round-robin within each zone.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<String>>")]
    pub domains: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// A node taint.
pub struct RawTaint {
    /// The taint's key (a label key).
    pub key: String,
    /// The taint's value (may be empty).
    #[serde(default)]
    pub value: String,
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// Allocatable resources of each node.
pub struct RawAllocatable {
    /// CPU, a Kubernetes quantity (`4`, `3500m`).
    #[serde(default = "default_cpu")]
    pub cpu: String,
    /// Memory, a Kubernetes quantity (`16Gi`).
    #[serde(default = "default_memory")]
    pub memory: String,
    /// Pod slots.
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
    if let Some(problem) = shape_problem(&source, CLUSTER_SHAPE) {
        diagnostics.push(problem);
        return None;
    }
    match toml::from_str::<RawCluster>(source.text()) {
        Ok(raw) => Some(ClusterFile { name, source, raw }),
        Err(error) => {
            diagnostics.push(toml_diagnostic(&source, &error));
            None
        }
    }
}

/// Turns a TOML error into one located diagnostic (K0103 for unknown keys, K0102 otherwise).
/// Parser messages about a bare word or a missing value are put in plain words.
pub fn toml_diagnostic(source: &SourceFile, error: &toml::de::Error) -> Diagnostic {
    let message = error.message().trim().to_string();
    let code = if message.starts_with("unknown field") { Code::UnknownKey } else { Code::TomlSyntax };
    let Some(span) = error.span() else {
        return Diagnostic::new(code, message).at(Location::file(source.path()));
    };
    let location = source.locate(span.clone());
    if message == "duplicate key" {
        let key = source.text().get(span).unwrap_or_default().trim();
        return Diagnostic::new(Code::TomlSyntax, format!("duplicate key `{key}`")).at(location);
    }
    if message.starts_with("missing comma between array elements") {
        // The parser notices an unclosed array only at the next line; point at where it opened.
        let before = &source.text()[..span.start.min(source.text().len())];
        let mut lines = Vec::new();
        let mut line_start = 0;
        for line in before.split_inclusive('\n') {
            lines.push((line_start, line));
            line_start += line.len();
        }
        for (line_start, line) in lines.into_iter().rev() {
            let opened = line.matches('[').count() > line.matches(']').count();
            if opened && line.contains('=') {
                let start = line_start + line.find('[').unwrap_or(0);
                return Diagnostic::new(Code::TomlSyntax, "array is not closed (missing `]`)")
                    .at(source.locate(start..start + 1));
            }
        }
    }
    // The value token on the offending line, after its `=`.
    let line_start = source.text()[..span.start.min(source.text().len())].rfind('\n').map_or(0, |i| i + 1);
    let line = source.text()[line_start..].lines().next().unwrap_or("");
    let value = line.split_once('=').map(|(_, v)| v.trim()).unwrap_or("");
    let token: String =
        value.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).collect();
    if message.starts_with("string values must be quoted") && value.is_empty() {
        return Diagnostic::new(Code::TomlSyntax, "missing value after `=`").at(location);
    }
    let bare_word = message.starts_with("string values must be quoted")
        || message.starts_with("invalid float")
        || message.starts_with("invalid integer")
        || message.starts_with("invalid number");
    if bare_word && !token.is_empty() && !matches!(token.as_str(), "true" | "false") {
        return Diagnostic::new(Code::TomlSyntax, format!("`{token}` is not a TOML value: strings must be quoted"))
            .at(location)
            .help(format!("write \"{token}\""));
    }
    Diagnostic::new(code, message).at(location)
}

/// Keys whose value must be a table (`Table`) or an array of tables (`Tables`); `*` matches any key.
/// serde would otherwise fill a struct from an array by position (`capabilities = [true, [...]]`).
pub(crate) enum Shape {
    Table(&'static [&'static str]),
    Tables(&'static [&'static str]),
}

const CLUSTER_SHAPE: &[Shape] = &[
    Shape::Table(&["capabilities"]),
    Shape::Table(&["failureDomains"]),
    Shape::Tables(&["instances"]),
    Shape::Tables(&["nodePools"]),
    Shape::Table(&["nodePools", "*", "allocatable"]),
    Shape::Table(&["nodePools", "*", "labels"]),
    Shape::Table(&["nodePools", "*", "domains"]),
    Shape::Tables(&["nodePools", "*", "taints"]),
];

/// The first key whose value has the wrong shape, located at the key's line.
pub(crate) fn shape_problem(source: &SourceFile, shapes: &[Shape]) -> Option<Diagnostic> {
    let Ok(table) = toml::from_str::<toml::Table>(source.text()) else { return None };
    let root = toml::Value::Table(table);
    for shape in shapes {
        let (path, want_tables) = match shape {
            Shape::Table(path) => (*path, false),
            Shape::Tables(path) => (*path, true),
        };
        let mut found = Vec::new();
        collect(&root, path, &mut found);
        for value in found {
            let ok = if want_tables {
                value.as_array().is_some_and(|items| items.iter().all(toml::Value::is_table))
            } else {
                value.is_table()
            };
            if !ok {
                let key = path.last().copied().unwrap_or_default();
                let wanted = if want_tables { "an array of tables" } else { "a table" };
                let message = format!("`{key}` must be {wanted}, not {}", value.type_str());
                return Some(Diagnostic::new(Code::TomlSyntax, message).at(locate_key(source, key)));
            }
        }
    }
    None
}

fn collect<'v>(value: &'v toml::Value, path: &[&str], found: &mut Vec<&'v toml::Value>) {
    let Some((first, rest)) = path.split_first() else {
        found.push(value);
        return;
    };
    let children: Vec<&toml::Value> = match (value, *first) {
        (toml::Value::Table(table), "*") => table.values().collect(),
        (toml::Value::Array(items), "*") => items.iter().collect(),
        (toml::Value::Table(table), key) => table.get(key).into_iter().collect(),
        _ => Vec::new(),
    };
    for child in children {
        collect(child, rest, found);
    }
}

/// The first line assigning `key` (`key =` or `"key" =`), for a location when serde gives none.
fn locate_key(source: &SourceFile, key: &str) -> Location {
    let mut offset = 0;
    for line in source.text().split_inclusive('\n') {
        let trimmed = line.trim_start();
        let unquoted = trimmed.strip_prefix(key).or_else(|| trimmed.strip_prefix(&format!("\"{key}\"")));
        if unquoted.is_some_and(|rest| rest.trim_start().starts_with('=')) {
            let start = offset + (line.len() - trimmed.len());
            return source.locate(start..start + key.len());
        }
        offset += line.len();
    }
    Location::file(source.path())
}
