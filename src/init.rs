//! `kix init`: start a kix root from what a team already has.
//!
//! - `kix init package DIR` writes `DIR/kix.toml` for the manifests already in DIR: every Deployment
//!   and StatefulSet listed with its current replicas as the mapping's lowest step, the options shown
//!   as comments.
//! - `kix init cluster NAME [--from-state STATE.yaml]` writes `clusters/NAME.toml`: from a snapshot of
//!   a real cluster's nodes (`kubectl get nodes -o yaml`) the capabilities (multiNode, zones), the
//!   failure-domain keys the nodes carry, and node pools grouped by labels, taints and allocatable;
//!   without a snapshot, a commented template.
//!
//! Both refuse to overwrite a file. The text written is deterministic (sorted, fixed layout) and is
//! read back by kix's own loaders in the tests, so `init` never writes something `build` refuses.

use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use kix_kube::kind::WorkloadKind;
use kix_kube::labels::{HOSTNAME, ZONE};
use kix_kube::workload::WorkloadView;
use kix_sim::objects::Node;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `kix init` writes.
#[derive(Clone, Debug)]
pub enum InitRequest {
    Package { dir: PathBuf },
    Cluster { root: PathBuf, name: String, from_state: Option<PathBuf> },
}

/// Writes the file the request asks for; returns its path.
pub fn init(request: &InitRequest) -> Result<PathBuf, Diagnostics> {
    let (path, text) = match request {
        InitRequest::Package { dir } => (dir.join("kix.toml"), package_manifest(dir)?),
        InitRequest::Cluster { root, name, from_state } => {
            if let Err(why) = kix_kube::names::dns1123_label(name) {
                return Err(one(Diagnostic::new(
                    Code::InvalidName,
                    format!("cluster name `{name}` is not valid: {why}"),
                )
                .at(Location::file(root.join("clusters")))));
            }
            let text = match from_state {
                Some(state) => cluster_from_state(name, state)?,
                None => cluster_template(name),
            };
            (root.join("clusters").join(format!("{name}.toml")), text)
        }
    };
    if path.exists() {
        return Err(one(Diagnostic::new(
            Code::WriteFailed,
            format!("{} exists; kix init never overwrites a file", path.display()),
        )
        .at(Location::file(&path))));
    }
    let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, &text));
    match written {
        Ok(()) => Ok(path),
        Err(e) => Err(one(Diagnostic::new(Code::WriteFailed, format!("cannot write {}: {e}", path.display()))
            .at(Location::file(&path)))),
    }
}

fn one(diagnostic: Diagnostic) -> Diagnostics {
    let mut diagnostics = Diagnostics::default();
    diagnostics.push(diagnostic);
    diagnostics
}

/// kix.toml for the YAML files of a directory: name from the directory, every workload listed.
fn package_manifest(dir: &Path) -> Result<String, Diagnostics> {
    let mut diagnostics = Diagnostics::default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| one(Diagnostic::new(Code::Io, format!("cannot list directory: {e}")).at(Location::file(dir))))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml") && p.is_file())
        .collect();
    files.sort();
    let mut workloads: Vec<(WorkloadKind, String, Option<u32>)> = Vec::new();
    for file in &files {
        let text = match kix_diag::source::read_text(file, kix_diag::source::MAX_PACKAGE_FILE_BYTES) {
            Ok(text) => text,
            Err(error) => {
                diagnostics.push(Diagnostic::new(error.code(), error.to_string()).at(Location::file(file)));
                continue;
            }
        };
        for document in crate::load::documents::parse_documents(SourceFile::new(file, text), &mut diagnostics) {
            if let Some(kind) = WorkloadKind::of(&document.value) {
                let replicas = WorkloadView::read_as(&document.value, kind).ok().and_then(|w| w.manifest_replicas);
                workloads.push((kind, document.name().to_string(), replicas));
            }
        }
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let name = dns_label(
        &dir.canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map_or_else(|| "package".to_string(), |n| n.to_string_lossy().into_owned()),
    );
    let mut text = format!(
        "# Written by `kix init package`: check each workload's mapping, then `kix build`.\n\
         [meta]\nname = \"{name}\"\nversion = \"0.1.0\"\n\
         # namespace = \"...\"                 # the namespace these manifests were written for, if any\n\
         # keepNamespaces = [\"kube-system\"]  # namespaces whose objects stay where they are\n\
         # [meta.availability]\n# max = \"node\"                       # the highest level the whole package can meet\n"
    );
    if workloads.is_empty() {
        text.push_str("\n# No Deployment or StatefulSet was found: kix passes every object through.\n");
    }
    for (kind, workload, replicas) in &workloads {
        let base = replicas.unwrap_or(1);
        let _ = write!(
            text,
            "\n# {} {workload}: {} today.\n[workloads.{}]\n",
            kind.as_str(),
            match replicas {
                Some(n) => format!("spec.replicas is {n}"),
                None => "spec.replicas is not set (1)".to_string(),
            },
            toml_key(workload)
        );
        let _ = writeln!(
            text,
            "replicas = {{ none = {base}, pod = {}, zone = {} }}   # a level not named takes the nearest lower one",
            base.max(2),
            base.max(3)
        );
        text.push_str(
            "# availability = { max = \"none\" }   # if it can run only one pod at a time (a leader without election)\n",
        );
    }
    Ok(text)
}

/// A key as TOML writes it: bare when it can be, quoted otherwise.
fn toml_key(key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// A DNS-1123 label made from any text (lower case, `-` for anything else, trimmed, at most 63).
fn dns_label(text: &str) -> String {
    let mapped: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let trimmed: String = mapped.trim_matches('-').chars().take(63).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() { "pool".to_string() } else { trimmed }
}

fn cluster_template(name: &str) -> String {
    format!(
        "# Written by `kix init cluster {name}`: describe the substrate, then add instances.\n\
         availability = \"node\"                 # none, pod, node or zone: what this cluster's operators need\n\n\
         [capabilities]                        # leave a key out when you do not know it (kix then warns)\n\
         multiNode = true\n\
         # availabilityZones = [\"zone-a\", \"zone-b\", \"zone-c\"]\n\n\
         # [failureDomains]                    # the defaults\n\
         # node = \"kubernetes.io/hostname\"\n\
         # zone = \"topology.kubernetes.io/zone\"\n\
         # extra = []\n\n\
         # [[instances]]\n\
         # name = \"shop\"\n\
         # package = \"web\"\n"
    )
}

/// A cluster file from a snapshot's nodes.
fn cluster_from_state(name: &str, path: &Path) -> Result<String, Diagnostics> {
    let state = kix_sim::read_state(path).map_err(Diagnostics::from)?;
    if state.nodes.is_empty() {
        return Err(one(Diagnostic::new(
            Code::NotAnObject,
            format!("{} holds no Node (`kubectl get nodes -o yaml`)", path.display()),
        )
        .at(Location::file(path))));
    }
    let mut zones: Vec<&str> = state.nodes.iter().filter_map(|n| n.labels.get(ZONE).map(String::as_str)).collect();
    zones.sort_unstable();
    zones.dedup();
    let every_node_zoned = state.nodes.iter().all(|n| n.labels.contains_key(ZONE));
    let multi_node = state.nodes.len() > 1;
    let level = if zones.len() >= 2 && every_node_zoned {
        "zone"
    } else if multi_node {
        "node"
    } else {
        "none"
    };
    let mut text = format!(
        "# Written by `kix init cluster {name} --from-state {}`: {} node{} read.\n\
         availability = \"{level}\"                # the highest level these nodes support; lower it if you need less\n\n\
         [capabilities]\nmultiNode = {multi_node}\n",
        path.display(),
        state.nodes.len(),
        if state.nodes.len() == 1 { "" } else { "s" }
    );
    if every_node_zoned && !zones.is_empty() {
        let listed: Vec<String> = zones.iter().map(|z| format!("{z:?}")).collect();
        let _ = writeln!(text, "availabilityZones = [{}]", listed.join(", "));
    } else if !zones.is_empty() {
        text.push_str("# availabilityZones: some nodes lack topology.kubernetes.io/zone, so zones are left unknown\n");
    }
    for pool in pools(&state.nodes) {
        text.push_str(&pool);
    }
    text.push_str("\n# [[instances]]\n# name = \"shop\"\n# package = \"web\"\n");
    Ok(text)
}

/// Node pools: nodes grouped by their labels (other than hostname and zone), taints and allocatable.
fn pools(nodes: &[Node]) -> Vec<String> {
    type PoolKey = (Vec<(String, String)>, Vec<(String, String, String)>, (i64, i64, i64));
    let mut groups: BTreeMap<PoolKey, Vec<&Node>> = BTreeMap::new();
    for node in nodes {
        let labels: Vec<(String, String)> = node
            .labels
            .iter()
            .filter(|(k, _)| {
                k.as_str() != HOSTNAME
                    && k.as_str() != ZONE
                    && !k.starts_with("beta.kubernetes.io/")
                    && !k.starts_with("failure-domain.beta.kubernetes.io/")
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let taints: Vec<(String, String, String)> = node
            .taints
            .iter()
            .filter(|t| t.key != kix_kube::labels::TAINT_UNSCHEDULABLE)
            .map(|t| (t.key.clone(), t.value.clone(), t.effect.as_str().to_string()))
            .collect();
        let allocatable = (node.allocatable.milli_cpu, node.allocatable.memory, node.allocatable.pods);
        groups.entry((labels, taints, allocatable)).or_default().push(node);
    }
    let mut used: Vec<String> = Vec::new();
    groups
        .into_iter()
        .enumerate()
        .map(|(index, ((labels, taints, (cpu, memory, pods)), members))| {
            let name = pool_name(&labels, index, &used);
            used.push(name.clone());
            let mut zones: BTreeMap<&str, usize> = BTreeMap::new();
            for node in &members {
                *zones.entry(node.labels.get(ZONE).map_or("", String::as_str)).or_default() += 1;
            }
            let zoned: Vec<&str> = zones.keys().copied().filter(|z| !z.is_empty()).collect();
            let per_zone = zones.values().copied().max().unwrap_or(1);
            let mut text = format!("\n[[nodePools]]\nname = \"{name}\"\n");
            if !zoned.is_empty() && zoned.len() == zones.len() {
                let listed: Vec<String> = zoned.iter().map(|z| format!("{z:?}")).collect();
                let _ = writeln!(text, "zones = [{}]", listed.join(", "));
            }
            let _ = writeln!(text, "nodesPerZone = {per_zone}");
            if zones.values().any(|n| *n != per_zone) {
                let counts: Vec<String> = zones.iter().map(|(z, n)| format!("{z}: {n}")).collect();
                let _ = writeln!(
                    text,
                    "# the snapshot's zones hold different counts ({}); kix pools are even",
                    counts.join(", ")
                );
            }
            // The labels every kubelet sets have pool settings of their own; the rest stay labels.
            let mut rest = Vec::new();
            for (key, value) in &labels {
                match POOL_SETTINGS.iter().find(|(label, _)| label == key) {
                    Some((_, setting)) => {
                        let _ = writeln!(text, "{setting} = {value:?}");
                    }
                    None => rest.push(format!("{key:?} = {value:?}")),
                }
            }
            if !rest.is_empty() {
                let _ = writeln!(text, "labels = {{ {} }}", rest.join(", "));
            }
            if !taints.is_empty() {
                let listed: Vec<String> = taints
                    .iter()
                    .map(|(k, v, e)| format!("{{ key = {k:?}, value = {v:?}, effect = {e:?} }}"))
                    .collect();
                let _ = writeln!(text, "taints = [{}]", listed.join(", "));
            }
            let _ = writeln!(
                text,
                "allocatable = {{ cpu = \"{}\", memory = \"{}\", pods = {pods} }}",
                milli(cpu),
                bytes(memory)
            );
            text
        })
        .collect()
}

/// Node labels that have a pool setting of their own (`os = "linux"`), as kix's inventories write them.
const POOL_SETTINGS: &[(&str, &str)] = &[
    ("kubernetes.io/os", "os"),
    ("kubernetes.io/arch", "arch"),
    ("topology.kubernetes.io/region", "region"),
    ("node.kubernetes.io/instance-type", "instanceType"),
];

/// A pool's name: a cloud's node-pool label where the nodes carry one, else `pool-N`.
fn pool_name(labels: &[(String, String)], index: usize, used: &[String]) -> String {
    const POOL_LABELS: &[&str] = &[
        "cloud.google.com/gke-nodepool",
        "eks.amazonaws.com/nodegroup",
        "kubernetes.azure.com/agentpool",
        "agentpool",
        "karpenter.sh/nodepool",
        "node.kubernetes.io/instance-type",
    ];
    let from_label = POOL_LABELS
        .iter()
        .find_map(|key| labels.iter().find(|(k, _)| k == key).map(|(_, v)| dns_label(v)))
        .filter(|name| !used.contains(name));
    from_label.unwrap_or_else(|| format!("pool-{}", index + 1))
}

/// Milli-CPU as a quantity: whole cores when exact (`4`), else millicores (`3500m`).
fn milli(value: i64) -> String {
    if value % 1000 == 0 { (value / 1000).to_string() } else { format!("{value}m") }
}

/// Bytes as a quantity in the largest binary unit that divides them exactly.
fn bytes(value: i64) -> String {
    for (unit, size) in [("Ti", 1i64 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
        if value != 0 && value % size == 0 {
            return format!("{}{unit}", value / size);
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_and_names_are_written_as_people_write_them() {
        let cases = [(4000, "4"), (3500, "3500m"), (250, "250m")];
        for (value, text) in cases {
            assert_eq!(milli(value), text);
        }
        assert_eq!(bytes(16 << 30), "16Gi");
        assert_eq!(bytes(1536 << 20), "1536Mi");
        assert_eq!(bytes(1000), "1000");
        assert_eq!(dns_label("My_App.v2"), "my-app-v2");
        assert_eq!(dns_label("--"), "pool");
        assert_eq!(toml_key("api"), "api");
        assert_eq!(toml_key("api.v2"), "\"api.v2\"");
    }
}
