//! `kix init cluster NAME [--from-state STATE.yaml]`: a cluster file.
//!
//! From a snapshot of a real cluster's nodes (`kubectl get nodes -o yaml`): the capabilities
//! (multiNode, zones), and node pools. Nodes are grouped into pools by the cloud's node-group
//! label where they carry one ([`NODE_GROUP_LABELS`]: an EKS node group, a GKE node pool, an AKS
//! agent pool, a Karpenter NodePool spans zones), else by their labels; in both cases labels that
//! name the node itself or its zone ([`is_per_node_or_zone`]) are left out, so one node group over
//! three zones is one pool over three zones, not three one-zone pools. Within a group, nodes with
//! different taints or allocatable are different pools (a kix pool has one of each). A pool writes
//! the labels all its nodes share.
//!
//! Without a snapshot, a commented template. Both name, in their commented `[[instances]]` entry, a
//! package that exists under the root's `packages/` (or say that there is none yet).

use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use kix_kube::labels::{HOSTNAME, ZONE};
use kix_sim::objects::Node;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The labels clouds put on every node of one node group (the group's name as value), in the
/// order they are looked for: GKE (`cloud.google.com/gke-nodepool`, GKE docs "Node pools"), EKS
/// managed node groups (`eks.amazonaws.com/nodegroup`, EKS docs "Managed node groups"), AKS
/// (`kubernetes.azure.com/agentpool`, and the older `agentpool`, AKS docs "Node pools"), Karpenter
/// (`karpenter.sh/nodepool`, karpenter `pkg/apis/v1/labels.go` `NodePoolLabelKey`).
pub const NODE_GROUP_LABELS: &[&str] = &[
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "karpenter.sh/nodepool",
];

/// Label keys whose value differs per zone, written by the kubelet's cloud provider or a CSI driver's
/// node plugin for its topology (each node of a multi-zone group carries its own zone's).
const PER_ZONE_LABELS: &[&str] = &[
    ZONE,
    "topology.ebs.csi.aws.com/zone",
    "topology.k8s.aws/zone-id",
    "topology.gke.io/zone",
    "topology.pd.csi.storage.gke.io/zone",
    "topology.disk.csi.azure.com/zone",
    "topology.cinder.csi.openstack.org/zone",
];

/// Whether a label names the node itself or its zone, so is no part of what makes a pool: the hostname,
/// the per-zone keys, and the deprecated `failure-domain.beta.kubernetes.io/*` and `beta.kubernetes.io/*`
/// copies the kubelet still writes beside the GA keys.
pub fn is_per_node_or_zone(key: &str) -> bool {
    key == HOSTNAME
        || PER_ZONE_LABELS.contains(&key)
        || key.starts_with("failure-domain.beta.kubernetes.io/")
        || key.starts_with("beta.kubernetes.io/")
}

/// The commented template.
pub(super) fn template(name: &str, schema_line: &str, root: &Path) -> String {
    format!(
        "{schema_line}# Written by `kix init cluster {name}`: describe the substrate, then add instances.\n\
         availability = \"node\"                 # none, pod, node or zone: what this cluster's operators need\n\n\
         [capabilities]                        # leave a key out when you do not know it (kix then warns)\n\
         multiNode = true\n\
         # availabilityZones = [\"zone-a\", \"zone-b\", \"zone-c\"]\n\n\
         # [failureDomains]                    # the defaults\n\
         # node = \"kubernetes.io/hostname\"\n\
         # zone = \"topology.kubernetes.io/zone\"\n\
         # extra = []\n{}",
        instances_comment(root)
    )
}

/// A commented `[[instances]]` entry naming a package of the root, or how to make one; it creates its
/// namespace, which nothing else in a new cluster does (K0428).
fn instances_comment(root: &Path) -> String {
    let packages = package_names(root);
    match packages.first() {
        None => "\n# No package under packages/ yet: `kix init package packages/NAME` writes one, then\n\
                 # [[instances]]\n# name = \"NAME\"\n# package = \"NAME\"\n# createNamespace = true\n"
            .to_string(),
        Some(first) => {
            let mut text =
                format!("\n# [[instances]]\n# name = \"{first}\"\n# package = \"{first}\"\n# createNamespace = true\n");
            if packages.len() > 1 {
                let _ = writeln!(text, "# (packages of this root: {})", packages.join(", "));
            }
            text
        }
    }
}

/// `meta.name` of every package under `root/packages/`, sorted, each once.
fn package_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = kix_compiler::fs::list(&root.join("packages"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|dir| {
            let text = std::fs::read_to_string(dir.join("kix.toml")).ok()?;
            let table: toml::Table = toml::from_str(&text).ok()?;
            table.get("meta")?.get("name")?.as_str().map(str::to_string)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A cluster file from a snapshot's nodes.
/// The cluster file's text from a snapshot's nodes, and what it did with nodes a user may not expect it to
/// (issue 41: cordoned and tainted nodes, said on stderr as well as in the file's comments).
pub(super) fn from_state(
    name: &str,
    path: &Path,
    schema_line: &str,
    root: &Path,
) -> Result<(String, Vec<String>), Diagnostics> {
    let state = kix_sim::read_state(path).map_err(Diagnostics::from)?;
    if state.nodes.is_empty() {
        return Err(super::text::one(
            Diagnostic::new(
                Code::NotAnObject,
                format!("{} holds no Node (`kubectl get nodes -o yaml`)", path.display()),
            )
            .at(Location::file(path)),
        ));
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
        "{schema_line}# Written by `kix init cluster {name} --from-state {}`: {} read.\n\
         availability = \"{level}\"                # the highest level these nodes support; lower it if you need less\n\n\
         [capabilities]\nmultiNode = {multi_node}\n",
        path.display(),
        kix_diag::words::plural(state.nodes.len(), "node"),
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
    text.push_str(&instances_comment(root));
    Ok((text, notes(&state.nodes)))
}

/// What the pools made of cordoned and tainted nodes, one sentence each.
fn notes(nodes: &[Node]) -> Vec<String> {
    let mut notes = Vec::new();
    let cordoned: Vec<&str> = nodes.iter().filter(|n| n.unschedulable).map(|n| n.name.as_str()).collect();
    if !cordoned.is_empty() {
        notes.push(format!(
            "{} cordoned ({}): kept in a pool of {} own with the unschedulable taint, so verify places no pod there; \
             drop the pool if the cordon is temporary",
            kix_diag::words::counted(cordoned.len(), "node is", "nodes are"),
            cordoned.join(", "),
            if cordoned.len() == 1 { "its" } else { "their" },
        ));
    }
    let mut tainted: BTreeMap<String, usize> = BTreeMap::new();
    for node in nodes {
        for taint in node.taints.iter().filter(|t| t.key != kix_kube::labels::TAINT_UNSCHEDULABLE) {
            let text = match taint.value.as_str() {
                "" => format!("{}:{}", taint.key, taint.effect.as_str()),
                value => format!("{}={value}:{}", taint.key, taint.effect.as_str()),
            };
            *tainted.entry(text).or_default() += 1;
        }
    }
    for (taint, count) in tainted {
        notes.push(format!(
            "{} tainted {taint}: kept in pools with the taint, where only pods that tolerate it run (kix's pods \
             tolerate no taint unless their template says so)",
            kix_diag::words::counted(count, "node is", "nodes are")
        ));
    }
    notes
}

/// What makes nodes one pool: their node group (or, without one, their labels), taints and allocatable.
type PoolKey = (Vec<(String, String)>, Vec<(String, String, String)>, (i64, i64, i64));

/// Node pools, each as the cluster file's `[[nodePools]]` text.
fn pools(nodes: &[Node]) -> Vec<String> {
    let mut groups: BTreeMap<PoolKey, Vec<&Node>> = BTreeMap::new();
    for node in nodes {
        let group =
            NODE_GROUP_LABELS.iter().find_map(|key| node.labels.get(*key).map(|v| (key.to_string(), v.clone())));
        let identity: Vec<(String, String)> = match group {
            Some(group) => vec![group],
            None => node
                .labels
                .iter()
                .filter(|(k, _)| !is_per_node_or_zone(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        // Taints as the snapshot has them; a cordoned node (`spec.unschedulable`) carries the unschedulable
        // taint the node lifecycle controller gives it, so it is a pool of its own that takes no new pods.
        let mut taints: Vec<(String, String, String)> =
            node.taints.iter().map(|t| (t.key.clone(), t.value.clone(), t.effect.as_str().to_string())).collect();
        if node.unschedulable && !node.taints.iter().any(|t| t.key == kix_kube::labels::TAINT_UNSCHEDULABLE) {
            taints.push((kix_kube::labels::TAINT_UNSCHEDULABLE.to_string(), String::new(), "NoSchedule".to_string()));
        }
        taints.sort();
        let allocatable = (node.allocatable.milli_cpu, node.allocatable.memory, node.allocatable.pods);
        groups.entry((identity, taints, allocatable)).or_default().push(node);
    }
    let mut used: Vec<String> = Vec::new();
    groups
        .into_iter()
        .enumerate()
        .map(|(index, ((identity, taints, (cpu, memory, pods)), members))| {
            let name = pool_name(&identity, &members, index, &used);
            used.push(name.clone());
            pool_text(&name, &members, &taints, (cpu, memory, pods))
        })
        .collect()
}

/// One pool's `[[nodePools]]` table.
fn pool_text(
    name: &str,
    members: &[&Node],
    taints: &[(String, String, String)],
    allocatable: (i64, i64, i64),
) -> String {
    let (cpu, memory, pods) = allocatable;
    let mut zones: BTreeMap<&str, usize> = BTreeMap::new();
    for node in members {
        *zones.entry(node.labels.get(ZONE).map_or("", String::as_str)).or_default() += 1;
    }
    let zoned: Vec<&str> = zones.keys().copied().filter(|z| !z.is_empty()).collect();
    let mut text = format!("\n[[nodePools]]\nname = \"{name}\"\n");
    let all_zoned = !zoned.is_empty() && zoned.len() == zones.len();
    if all_zoned {
        let listed: Vec<String> = zoned.iter().map(|z| format!("{z:?}")).collect();
        let _ = writeln!(text, "zones = [{}]", listed.join(", "));
    }
    // The snapshot's real counts, never rounded up (issue 38): one count when every zone holds it, else a
    // count per zone. Nodes without a zone label beside zoned ones: the pool lists no zones and counts all.
    let first = zones.values().next().copied().unwrap_or(1);
    if !all_zoned {
        let _ = writeln!(text, "nodesPerZone = {}", members.len());
    } else if zones.values().all(|n| *n == first) {
        let _ = writeln!(text, "nodesPerZone = {first}");
    } else {
        let counts: Vec<String> = zones.iter().map(|(z, n)| format!("{} = {n}", toml_key(z))).collect();
        let _ = writeln!(text, "nodesPerZone = {{ {} }}", counts.join(", "));
    }
    // The node group's maximum is the autoscaler's setting, not in any node (issue 39): left to the user.
    let _ = writeln!(
        text,
        "# maxNodesPerZone = N  # the cluster autoscaler's maximum per zone for this node group (its max size over its zones): fill it in and kix verify adds nodes where pods stay Pending"
    );
    if members.iter().any(|m| m.unschedulable) {
        let _ = writeln!(
            text,
            "# cordoned in the snapshot (spec.unschedulable): kept with the unschedulable taint, so verify puts no pod here"
        );
    }
    // The labels every member carries, less the per-node and per-zone ones; those every kubelet sets have
    // pool settings of their own, the rest stay labels.
    let mut shared: Vec<(&String, &String)> = members[0]
        .labels
        .iter()
        .filter(|(k, v)| !is_per_node_or_zone(k) && members.iter().all(|m| m.labels.get(*k) == Some(*v)))
        .collect();
    shared.sort();
    let mut rest = Vec::new();
    for (key, value) in shared {
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
        let listed: Vec<String> =
            taints.iter().map(|(k, v, e)| format!("{{ key = {k:?}, value = {v:?}, effect = {e:?} }}")).collect();
        let _ = writeln!(text, "taints = [{}]", listed.join(", "));
    }
    let _ =
        writeln!(text, "allocatable = {{ cpu = \"{}\", memory = \"{}\", pods = {pods} }}", milli(cpu), bytes(memory));
    text
}

/// A TOML key: bare where TOML allows it (letters, digits, `-`, `_`), else quoted.
fn toml_key(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// Node labels that have a pool setting of their own (`os = "linux"`), as kix's inventories write them.
const POOL_SETTINGS: &[(&str, &str)] = &[
    ("kubernetes.io/os", "os"),
    ("kubernetes.io/arch", "arch"),
    ("topology.kubernetes.io/region", "region"),
    ("node.kubernetes.io/instance-type", "instanceType"),
];

/// A pool's name: its node group's (or the instance type its nodes share) where that name is free, else
/// `pool-N`.
fn pool_name(identity: &[(String, String)], members: &[&Node], index: usize, used: &[String]) -> String {
    const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
    let group = identity.iter().find(|(k, _)| NODE_GROUP_LABELS.contains(&k.as_str())).map(|(_, v)| v.as_str());
    let instance_type = members[0]
        .labels
        .get(INSTANCE_TYPE)
        .filter(|t| members.iter().all(|m| m.labels.get(INSTANCE_TYPE) == Some(*t)))
        .map(String::as_str);
    group
        .or(instance_type)
        .map(super::text::dns_label)
        .filter(|name| !used.contains(name))
        .unwrap_or_else(|| format!("pool-{}", index + 1))
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
    fn quantities_are_written_as_people_write_them() {
        let cases = [(4000, "4"), (3500, "3500m"), (250, "250m")];
        for (value, text) in cases {
            assert_eq!(milli(value), text);
        }
        assert_eq!(bytes(16 << 30), "16Gi");
        assert_eq!(bytes(1536 << 20), "1536Mi");
        assert_eq!(bytes(1000), "1000");
    }

    #[test]
    fn per_zone_labels_are_no_part_of_a_pool() {
        for key in [HOSTNAME, ZONE, "topology.ebs.csi.aws.com/zone", "topology.k8s.aws/zone-id", "topology.gke.io/zone"]
        {
            assert!(is_per_node_or_zone(key), "{key}");
        }
        assert!(is_per_node_or_zone("failure-domain.beta.kubernetes.io/zone"));
        for key in ["eks.amazonaws.com/nodegroup", "node.kubernetes.io/instance-type", "topology.kubernetes.io/region"]
        {
            assert!(!is_per_node_or_zone(key), "{key}");
        }
    }
}
