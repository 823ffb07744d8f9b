//! What lint knows of a declared cluster (`kix lint --cluster NAME`): its failure-domain keys,
//! whether it is a single node, and which node-label keys its nodes carry with how many domains.
//! The cluster file is read by the compiler's own load and resolve stages (see [`super::cluster`]
//! for the rules that use these facts).

use kix_diag::{Diagnostics, Severity};
use kix_kube::labels::HOSTNAME;
use kix_kube::selector::Labels;
use std::collections::BTreeSet;
use std::path::Path;

/// Labels every kubelet puts on its node (`pkg/kubelet/kubelet_node_status.go` `initialNode`).
const KUBELET_KEYS: [&str; 3] = [HOSTNAME, "kubernetes.io/os", "kubernetes.io/arch"];

/// What lint needs of a declared cluster.
pub(crate) struct ClusterFacts {
    pub name: String,
    pub zone_key: String,
    pub single_node: bool,
    node_key: String,
    /// The inventory's nodes' labels; empty without an inventory.
    pub(super) nodes: Vec<Labels>,
    /// Without an inventory: the declared zones (`None` when not declared).
    zones: Option<usize>,
    extra: BTreeSet<String>,
    /// The cluster file's `allow`: warnings lint accepts on every object.
    pub allow: Vec<kix_diag::Code>,
    /// Each instance's namespace and `allow`: warnings lint accepts on the objects of that namespace.
    pub instance_allow: Vec<(String, Vec<kix_diag::Code>)>,
}

/// What the cluster says about a node-label key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// The nodes carry it; the number of domains when known.
    Present(Option<usize>),
    /// The nodes do not carry it.
    Absent,
    /// The cluster does not say.
    Unknown,
}

impl ClusterFacts {
    /// Loads and resolves one cluster file under `root`; `Err` carries why it is unusable.
    pub fn load(root: &Path, name: &str) -> Result<ClusterFacts, Diagnostics> {
        let mut diagnostics = Diagnostics::default();
        match kix_compiler::compile::resolve_only(root, name, &mut diagnostics) {
            Some(cluster) => Ok(ClusterFacts::from(&cluster)),
            None => {
                // Only the cluster's own problems: its instances and the packages do not matter to lint.
                let mut own = Diagnostics::default();
                for d in diagnostics.iter().filter(|d| d.severity() == Severity::Error && d.subject.instance.is_none())
                {
                    if d.location().is_none_or(|l| l.path().starts_with("clusters")) {
                        own.push(d.clone());
                    }
                }
                Err(own)
            }
        }
    }

    pub fn from(cluster: &kix_compiler::resolve::Cluster) -> ClusterFacts {
        ClusterFacts {
            name: cluster.name.clone(),
            zone_key: cluster.domains.zone.clone(),
            single_node: cluster.substrate.single_node(),
            node_key: cluster.domains.node.clone(),
            nodes: cluster.inventory.iter().map(|n| n.labels.clone()).collect(),
            zones: cluster.substrate.zones.as_ref().map(Vec::len),
            extra: cluster.domains.extra.iter().cloned().collect(),
            allow: cluster.allow.clone(),
            instance_allow: cluster.instances.iter().map(|i| (i.namespace.clone(), i.allow.clone())).collect(),
        }
    }

    /// Whether the nodes carry a key, and how many domains it has.
    pub fn key(&self, key: &str) -> Key {
        let is_node_key = key == self.node_key || key == HOSTNAME;
        if !self.nodes.is_empty() {
            if is_node_key {
                return Key::Present(Some(self.nodes.len()));
            }
            let values: BTreeSet<&String> = self.nodes.iter().filter_map(|n| n.get(key)).collect();
            return match values.len() {
                0 if KUBELET_KEYS.contains(&key) => Key::Present(None),
                0 => Key::Absent,
                n => Key::Present(Some(n)),
            };
        }
        if is_node_key {
            Key::Present(self.single_node.then_some(1))
        } else if key == self.zone_key {
            match self.zones {
                None => Key::Unknown,
                Some(0) => Key::Absent,
                Some(n) => Key::Present(Some(n)),
            }
        } else if self.extra.contains(key) || KUBELET_KEYS.contains(&key) {
            Key::Present(None)
        } else {
            Key::Absent
        }
    }
}
