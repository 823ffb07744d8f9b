//! The model of a generated tree: clusters (capabilities, failure-domain keys, levels, instances)
//! and packages (versions, ceilings, workloads with replica mappings, explicit placement and shipped
//! budgets), with what the rules say the model compiles to (R3, R6, R13) and the repairs that turn a
//! user error into a valid setting.

use kix_kube::level::Level;

pub const NODE_KEY: &str = "kubernetes.io/hostname";
pub const ZONE_KEY: &str = "topology.kubernetes.io/zone";
pub const CUSTOM_NODE_KEY: &str = "example.com/host";
pub const CUSTOM_ZONE_KEY: &str = "example.com/zone";
pub const EXTRA_KEYS: [&str; 2] = ["example.com/rack", "node.kubernetes.io/capacity-type"];
pub const VERSIONS: [&str; 3] = ["1.0.0", "1.1.0", "2.0.0"];

// ---------------------------------------------------------------------------
// The model of a generated tree.

#[derive(Clone, Debug)]
pub struct TreeModel {
    pub clusters: Vec<ClusterModel>,
    pub packages: Vec<PackageModel>,
}

#[derive(Clone, Debug)]
pub struct ClusterModel {
    pub multi_node: Option<bool>,
    pub zones: Option<usize>,
    pub node_key: Option<&'static str>,
    pub zone_key: Option<&'static str>,
    pub extra: Vec<&'static str>,
    pub level: Level,
    pub instances: Vec<InstanceModel>,
    /// Left as generated: its levels may be above what its substrate allows.
    pub unrepaired: bool,
}

#[derive(Clone, Debug)]
pub struct InstanceModel {
    pub package: usize,
    pub requirement: Requirement,
    pub own_namespace: bool,
    pub level: Option<Level>,
}

#[derive(Clone, Copy, Debug)]
pub enum Requirement {
    Any,
    /// `=V` for the package's version at this index.
    Exact(usize),
    /// `^MAJOR` of the package's version at this index.
    Major(usize),
}

#[derive(Clone, Debug)]
pub struct PackageModel {
    pub versions: Vec<VersionModel>,
}

#[derive(Clone, Debug)]
pub struct VersionModel {
    pub version: &'static str,
    pub ceiling: Option<Level>,
    pub service: bool,
    pub workloads: Vec<WorkloadModel>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Deployment,
    StatefulSet,
}

/// One explicit constraint: (key index, hard, maxSkew, with a labelSelector, minDomains when hard).
pub type ExplicitConstraint = (usize, bool, u32, bool, Option<u32>);

#[derive(Clone, Debug)]
pub struct WorkloadModel {
    pub kind: Kind,
    pub manifest_replicas: Option<u32>,
    /// Steps for none, pod, node, zone.
    pub mapping: Option<[Option<u32>; 4]>,
    pub ceiling: Option<Level>,
    /// Explicit `topologySpreadConstraints` (R11).
    pub explicit: Option<Vec<ExplicitConstraint>>,
    /// A shipped budget over the workload's pods: maxUnavailable 1 or minAvailable 50%.
    pub shipped_pdb: Option<bool>,
    pub policy: Option<&'static str>,
    pub selector_style: u8,
    /// Which YAML file (0 or 1) holds it.
    pub file: usize,
    /// Left as generated: its mapping may decrease, its replicas break R7 or R8.
    pub unrepaired: bool,
}

impl ClusterModel {
    pub fn zone_count(&self) -> usize {
        self.zones.unwrap_or(0)
    }
    pub fn node_key(&self) -> &'static str {
        self.node_key.unwrap_or(NODE_KEY)
    }
    pub fn zone_key(&self) -> &'static str {
        self.zone_key.unwrap_or(ZONE_KEY)
    }
    pub fn single_node(&self) -> bool {
        self.multi_node == Some(false)
    }
    /// The highest level the declared capabilities leave possible.
    pub fn substrate_cap(&self) -> Level {
        if self.single_node() {
            Level::None
        } else if self.zones.is_some_and(|n| n < 2) {
            Level::Node
        } else {
            Level::Zone
        }
    }
    /// R3: whether a level is possible (supported, or unverified because a capability is unknown).
    pub fn allows(&self, level: Level) -> bool {
        match level {
            Level::None => true,
            _ if self.single_node() => false,
            Level::Zone => self.zones.is_none_or(|n| n >= 2),
            Level::Pod | Level::Node => true,
        }
    }
    /// Every node-label key the cluster is known or assumed to have.
    pub fn keys(&self, level: Level) -> Vec<&'static str> {
        let mut keys = vec![self.node_key()];
        if self.zone_count() >= 2 || (self.zones.is_none() && level == Level::Zone) {
            keys.push(self.zone_key());
        }
        keys.extend(self.extra.iter().copied());
        keys
    }
}

impl PackageModel {
    /// R13: the version an instance gets.
    pub fn choose(&self, requirement: Requirement) -> &VersionModel {
        let major = |v: &str| v.split('.').next().unwrap().to_string();
        let candidates: Vec<&VersionModel> = match requirement {
            Requirement::Any => self.versions.iter().collect(),
            Requirement::Exact(i) => vec![&self.versions[i % self.versions.len()]],
            Requirement::Major(i) => {
                let wanted = major(self.versions[i % self.versions.len()].version);
                self.versions.iter().filter(|v| major(v.version) == wanted).collect()
            }
        };
        candidates.into_iter().max_by_key(|v| semver::Version::parse(v.version).unwrap()).unwrap()
    }
}

impl WorkloadModel {
    /// R6: the step function.
    pub fn replicas_at(&self, level: Level) -> u32 {
        let manifest = self.manifest_replicas.unwrap_or(1);
        match &self.mapping {
            None => manifest,
            Some(steps) => Level::ALL
                .iter()
                .zip(steps)
                .rfind(|(step, count)| **step <= level && count.is_some())
                .map_or(manifest, |(_, count)| count.unwrap()),
        }
    }

    /// Turns what would be a user error into a valid setting: a monotone mapping,
    /// one replica at most under a none ceiling, two or more from pod up.
    pub fn repair(&mut self, package_ceiling: Option<Level>) {
        if let Some(steps) = &mut self.mapping {
            make_monotone(steps);
        }
        let none_ceiling = package_ceiling == Some(Level::None) || self.ceiling == Some(Level::None);
        match &mut self.mapping {
            Some(steps) if none_ceiling => {
                if let Some(none) = &mut steps[0] {
                    *none = (*none).min(1);
                } else {
                    self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).min(1));
                }
            }
            None if none_ceiling => self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).min(1)),
            Some(steps) => {
                steps[1] = Some(steps[1].unwrap_or(0).max(steps[0].unwrap_or(0)).max(2));
                make_monotone(steps);
            }
            None => self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).max(2)),
        }
        // R6: below the lowest named level the manifest's replicas apply, so they are a step too.
        if let Some(steps) = &self.mapping {
            if let (None, Some(first)) = (steps[0], steps.iter().flatten().next()) {
                self.manifest_replicas = Some(self.manifest_replicas.unwrap_or(1).min(*first));
            }
        }
    }
}

pub fn make_monotone(steps: &mut [Option<u32>; 4]) {
    let mut floor = 0;
    for count in steps.iter_mut().flatten() {
        *count = (*count).max(floor);
        floor = *count;
    }
}
