//! Cluster files: `clusters/<name>.toml`, parsed into raw values that keep their spans.
//!
//! Unknown keys anywhere are refused (`deny_unknown_fields`): a misspelt key
//! must never fall back silently to a default. Semantic checks (names, label
//! keys, level against substrate) happen in `resolve`, which points back into
//! the file through the spans kept here.

use super::toml_file::{self, Shape};
use kix_diag::{Diagnostic, Diagnostics, SourceFile};
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
    /// The level enforced at admission: with it, `kix build` writes ValidatingAdmissionPolicies,
    /// their bindings and params into `out/<cluster>/_admission.yaml`, refusing changes that undo the level.
    #[serde(default)]
    pub admission: Option<RawAdmission>,
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
    /// Whether kix writes `app.kubernetes.io/instance` where an object has none (`add`, the default) or
    /// never (`leave`: for Argo CD's label tracking, which writes that label itself). `kix.dev/instance` is
    /// written either way.
    #[serde(default, rename = "instanceLabel")]
    pub instance_label: InstanceLabel,
    /// The package instances the cluster runs.
    #[serde(default)]
    pub instances: Vec<RawInstance>,
    /// A node inventory `kix verify` simulates on (without one, and without --state, verify skips the cluster,
    /// unless `[verify] requireNodes`).
    #[serde(default, rename = "nodePools")]
    pub node_pools: Vec<RawNodePool>,
    /// What the cluster's persistent volumes are (`[storage]`).
    #[serde(default)]
    pub storage: RawStorage,
    /// How `kix verify` treats the cluster.
    #[serde(default)]
    pub verify: RawVerify,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// The cluster's admission policies (`[admission]`).
pub struct RawAdmission {
    /// What the API server does with a request that undoes the level: refuse it (`deny`), admit it with a
    /// warning to the client (`warn`), or admit it and record it in the audit log (`audit`): the bindings'
    /// `validationActions`. Roll out with `audit`, then `warn`, then `deny`.
    #[schemars(with = "Enforce")]
    pub enforce: Spanned<Enforce>,
    /// User names (as the API server authenticates them: a service account is
    /// `system:serviceaccount:<namespace>:<name>`) allowed to delete or change kix's PodDisruptionBudgets,
    /// such as the GitOps applier that prunes them.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exempt: Vec<Spanned<String>>,
}

/// `[admission] enforce`: the bindings' `validationActions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Enforce {
    /// `validationActions: [Deny]`: the request is refused with the policy's message.
    Deny,
    /// `validationActions: [Warn]`: the request is admitted and the client is shown the message.
    Warn,
    /// `validationActions: [Audit]`: the request is admitted and the message recorded in the audit event.
    Audit,
}

impl Enforce {
    /// The binding's `validationActions` value.
    pub fn action(self) -> &'static str {
        match self {
            Enforce::Deny => "Deny",
            Enforce::Warn => "Warn",
            Enforce::Audit => "Audit",
        }
    }
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// What the cluster's persistent volumes are (`[storage]`, issue 39).
pub struct RawStorage {
    /// Where a volume provisioned for a pod can be used afterwards: `zonal` (the default, a cloud's zonal
    /// disk: its pod returns to the zone it first ran in), `regional` (usable from every zone) or `node`
    /// (a local volume: its pod returns to its node). `kix verify` holds every StatefulSet pod with a
    /// `volumeClaimTemplates` claim, and every pod of a workload sharing a claim, to it.
    #[serde(default)]
    pub topology: kix_kube::volumes::VolumeTopology,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// How `kix verify` treats the cluster (`[verify]`).
pub struct RawVerify {
    /// Fail verify (K0624) when the cluster has neither `[[nodePools]]` nor a `--state` snapshot to simulate
    /// on, instead of reporting it as not verified (as `kix verify --require-nodes` does for every cluster).
    #[serde(rename = "requireNodes")]
    #[schemars(with = "Option<bool>")]
    pub require_nodes: Option<Spanned<bool>>,
}

/// What kix does with `app.kubernetes.io/instance` on a cluster's objects (`instanceLabel`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstanceLabel {
    /// Write `app.kubernetes.io/instance: <instance>` where an object has none (a value the user wrote stays).
    #[default]
    Add,
    /// Never write it: Argo CD's label tracking (`application.resourceTrackingMethod: label`) sets it to the
    /// Application's name and warns about other tools that write it.
    Leave,
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
    /// An availability group across instances: instances of one package with the same `group`, in one
    /// namespace, are spread and budgeted as one service, per workload. kix prefixes their namespaced
    /// objects with the instance's name and labels their pod templates `kix.dev/group` and
    /// `kix.dev/instance` (adopting a group restarts the pods once).
    #[schemars(with = "Option<String>")]
    pub group: Option<Spanned<String>>,
    /// Emit the instance's `v1 Namespace` unless its package ships it.
    #[serde(rename = "createNamespace")]
    #[schemars(with = "Option<bool>")]
    pub create_namespace: Option<Spanned<bool>>,
}

/// A pool's `nodesPerZone`: one count for every zone, or a count per zone (issue 38: a node group of 3,
/// 2 and 2 nodes is seven nodes, not nine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodesPerZone {
    /// The same count in every zone of the pool (or in all, without zones).
    Each(u32),
    /// A count per zone, by zone name.
    ByZone(BTreeMap<String, u32>),
}

impl NodesPerZone {
    /// The nodes the pool has in `zone` (`None`: a pool without zones).
    pub fn in_zone(&self, zone: Option<&str>) -> u32 {
        match (self, zone) {
            (NodesPerZone::Each(n), _) => *n,
            (NodesPerZone::ByZone(counts), Some(zone)) => counts.get(zone).copied().unwrap_or(0),
            (NodesPerZone::ByZone(_), None) => 0,
        }
    }
}

impl<'de> Deserialize<'de> for NodesPerZone {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<NodesPerZone, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = NodesPerZone;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a count of nodes (`nodesPerZone = 2`) or a count per zone (`nodesPerZone = { a = 3, b = 2 }`)",
                )
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<NodesPerZone, E> {
                u32::try_from(n).map(NodesPerZone::Each).map_err(|_| E::custom(format!("{n} is not a count of nodes")))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<NodesPerZone, E> {
                u32::try_from(n).map(NodesPerZone::Each).map_err(|_| E::custom(format!("{n} is not a count of nodes")))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<NodesPerZone, A::Error> {
                let mut counts = BTreeMap::new();
                while let Some((zone, n)) = map.next_entry::<String, i64>()? {
                    let n = u32::try_from(n)
                        .map_err(|_| serde::de::Error::custom(format!("zone `{zone}`: {n} is not a count of nodes")))?;
                    if counts.insert(zone.clone(), n).is_some() {
                        return Err(serde::de::Error::custom(format!("zone `{zone}` is given twice")));
                    }
                }
                Ok(NodesPerZone::ByZone(counts))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// In the cluster file's JSON Schema: a count, or a table of counts by zone.
impl schemars::JsonSchema for NodesPerZone {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NodesPerZone".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Nodes in each zone: one count for every zone of the pool, or a count per zone (`{ a = 3, b = 2, c = 2 }`).",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } }
            ]
        })
    }
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
    /// Nodes in each zone (or in all, without zones): one count for every zone (`nodesPerZone = 2`), or
    /// a count per zone as the node group really holds them (`nodesPerZone = { a = 3, b = 2, c = 2 }`).
    #[serde(rename = "nodesPerZone")]
    #[schemars(with = "NodesPerZone")]
    pub nodes_per_zone: Spanned<NodesPerZone>,
    /// The most nodes the cluster autoscaler may run in each zone (its node group per zone, as the
    /// cluster-autoscaler FAQ advises): `kix verify` adds nodes up to it where pods stay Pending. Absent:
    /// the pool does not autoscale.
    #[serde(rename = "maxNodesPerZone")]
    #[schemars(with = "Option<u32>")]
    pub max_nodes_per_zone: Option<Spanned<u32>>,
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

/// A cluster file read but not yet parsed: a build parses each on the core that compiles it and drops it
/// there, so the fleet's parsed files are never held at once (issue 20: at 1,000 clusters of 100
/// instances they were 45 MB, every page of it fresh memory the kernel had to zero).
#[derive(Debug)]
pub struct ClusterSource {
    /// The file stem: the cluster's name (validated in `resolve`).
    pub name: String,
    pub source: SourceFile,
}

impl ClusterSource {
    /// The cluster file at `path`, as read.
    pub fn new(path: &Path, source: SourceFile) -> ClusterSource {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        ClusterSource { name, source }
    }

    /// Parses it; syntax, shape, type and unknown-key errors become diagnostics.
    pub fn parse(self, diagnostics: &mut Diagnostics) -> Option<ClusterFile> {
        self.read_with(|source| toml_file::parse(source, CLUSTER_SHAPE), diagnostics)
    }

    /// Parses the file with every byte outside the `kept` ranges (whole lines, in order) but line breaks
    /// blanked, its spans the file's, without that text made where the fast reader reads the kept lines (a
    /// rebuild reads only some instances' entries: `crate::reuse::in_part`).
    pub fn parse_regions(self, kept: &[std::ops::Range<usize>], diagnostics: &mut Diagnostics) -> Option<ClusterFile> {
        self.read_with(|source| toml_file::parse_regions(source, kept, CLUSTER_SHAPE), diagnostics)
    }

    /// The file as `read` reads its source, or the problem it found as a diagnostic.
    fn read_with(
        self,
        read: impl FnOnce(&SourceFile) -> Result<RawCluster, Diagnostic>,
        diagnostics: &mut Diagnostics,
    ) -> Option<ClusterFile> {
        let ClusterSource { name, source } = self;
        match read(&source) {
            Ok(raw) => Some(ClusterFile { name, source, raw }),
            Err(problem) => {
                diagnostics.push(problem);
                None
            }
        }
    }

    /// The words of its text a package name may be (without parsing it): each run of the characters a
    /// name may hold (a DNS-1123 label: `a-z`, `0-9`, `-`) that a quote closes and a quote or a line
    /// break opens, as a TOML string holding just that name is written (`"web"`, `'web'`, and a
    /// multi-line string whose first line break is dropped). So every package its instances name is
    /// among them. `None` when the text has a backslash: an escape (`"we\u0062"`) can spell a name that
    /// is not in the text.
    pub fn quoted_words(&self) -> Option<impl Iterator<Item = &str>> {
        let text = self.source.text();
        if text.contains('\\') {
            return None;
        }
        let bytes = text.as_bytes();
        let is_name_byte = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-';
        let quote = |b: u8| b == b'"' || b == b'\'';
        // Every closing quote ends at most one such word: the name bytes before it, opened right before.
        let closing = memchr::memchr2_iter(b'"', b'\'', bytes);
        Some(closing.filter_map(move |end| {
            let start = bytes[..end].iter().rposition(|b| !is_name_byte(*b)).map_or(0, |before| before + 1);
            let opened = start > 0 && (quote(bytes[start - 1]) || matches!(bytes[start - 1], b'\n' | b'\r'));
            (opened && start < end).then(|| &text[start..end])
        }))
    }
}

/// Parses one cluster file; syntax, shape, type and unknown-key errors become diagnostics.
pub fn parse(path: &Path, source: SourceFile, diagnostics: &mut Diagnostics) -> Option<ClusterFile> {
    ClusterSource::new(path, source).parse(diagnostics)
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

#[cfg(test)]
mod tests {
    use super::ClusterSource;
    use kix_diag::SourceFile;
    use std::path::Path;

    fn words(text: &str) -> Option<Vec<String>> {
        let file = SourceFile::new(std::path::PathBuf::from("clusters/c.toml"), text.to_string());
        let source = ClusterSource::new(Path::new("clusters/c.toml"), file);
        source.quoted_words().map(|words| words.map(str::to_string).collect())
    }

    /// Every way a TOML string can hold a package name without an escape gives the name as a word; a
    /// backslash gives no words (the caller then takes every package).
    #[test]
    fn every_string_holding_a_name_is_a_word() {
        let text = "availability = \"zone\"\n[[instances]]\nname = \"shop\"\npackage = \"web-2\"\n\
                    [[instances]]\npackage = 'db'\n[[instances]]\npackage = \"\"\"\nqueue\"\"\"\n\
                    [[instances]]\npackage = '''cache'''\nweb = 1 # \"not closed\n";
        let found = words(text).expect("no backslash");
        for name in ["zone", "shop", "web-2", "db", "queue", "cache"] {
            assert!(found.iter().any(|w| w == name), "{name} in {found:?}");
        }
        assert!(!found.iter().any(|w| w == "web" || w == "2" || w == "not"), "{found:?}");
        assert_eq!(words("package = \"we\\u0062\"\n"), None);
    }
}
