//! Table tests of the decision trail resolve records for `kix explain` (`model::LevelTrail`,
//! `model::WorkloadTrail`): each entry's kind, level and the place it points at.

use super::model::{Ceiling, Cluster, Instance, ReplicaSource, RequestedBy};
use super::substrate::Support;
use crate::testing::{TestTree, cluster_toml, workload_yaml};
use kix_diag::{Diagnostics, Location};
use kix_kube::level::Level;

/// `file:line:column`, as explain prints it.
fn at(location: &Location) -> String {
    format!("{}:{}:{}", location.path().display(), location.line().unwrap_or(0), location.column().unwrap_or(0))
}

/// Loads and resolves a tree's cluster `c` (no derive), and what was reported.
fn resolve(tree: &TestTree) -> (Option<Cluster>, Diagnostics) {
    let mut diagnostics = Diagnostics::default();
    let cluster = crate::compile::resolve_only(tree.root(), "c", &mut diagnostics);
    (cluster, diagnostics)
}

/// The one instance of cluster `c`, resolved without errors.
fn only_instance<'m>(cluster: &'m Option<Cluster>, diagnostics: &Diagnostics) -> &'m Instance {
    assert!(!diagnostics.has_errors(), "{:?}", diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>());
    let cluster = cluster.as_ref().expect("cluster c");
    let [instance] = cluster.instances.as_slice() else { panic!("one instance") };
    instance
}

/// A ceiling as the tables write it: its level and where it is written, and the level it lowered.
#[derive(Debug, PartialEq, Eq)]
enum Cap {
    Undeclared,
    NotBelow(Level, String),
    Lowered(Level, String, Level),
}

fn cap(ceiling: &Ceiling) -> Cap {
    match ceiling {
        Ceiling::Undeclared => Cap::Undeclared,
        Ceiling::NotBelow(max) => Cap::NotBelow(max.value, at(&max.from)),
        Ceiling::Lowered { max, from } => Cap::Lowered(max.value, at(&max.from), *from),
    }
}

/// R3's verdict as the tables write it: supported, or unverified with a part of what.
#[derive(Debug)]
enum Verdict {
    Supported,
    Unverified(&'static str),
}

const PACKAGE: &str = "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n";
const NODE_CEILING: &str = "availability = { max = \"node\" }\n";

struct LevelCase {
    name: &'static str,
    /// The cluster file: one instance `a` of package `p`.
    cluster: String,
    /// Lines added to kix.toml's `[meta]`.
    meta: &'static str,
    by: RequestedBy,
    requested: (Level, &'static str),
    /// R1's confirmed level and R3's verdict.
    substrate: (Option<Level>, Verdict),
    ceiling: Cap,
    level: (Level, &'static str),
}

// R2-R4: who requested the level, the substrate check of it and the package ceiling, each with its place.
#[test]
fn r2_r4_trail_of_an_instances_level() {
    const MULTI_NODE: &str = "[capabilities]\nmultiNode = true\n[[instances]]\nname = \"a\"\npackage = \"p\"\n";
    const ZONES: &str = "[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                         [[instances]]\nname = \"a\"\npackage = \"p\"\n";
    const CEILING_AT: &str = "packages/p/kix.toml:4:24";
    let cases = [
        LevelCase {
            name: "the cluster's level",
            cluster: format!("availability = \"node\"\n{MULTI_NODE}"),
            meta: "",
            by: RequestedBy::Cluster,
            requested: (Level::Node, "clusters/c.toml:1:16"),
            substrate: (Some(Level::Node), Verdict::Supported),
            ceiling: Cap::Undeclared,
            level: (Level::Node, "clusters/c.toml:1:16"),
        },
        LevelCase {
            name: "the instance's override",
            cluster: format!("availability = \"none\"\n{MULTI_NODE}availability = \"pod\"\n"),
            meta: "",
            by: RequestedBy::Instance,
            requested: (Level::Pod, "clusters/c.toml:7:16"),
            substrate: (Some(Level::Node), Verdict::Supported),
            ceiling: Cap::Undeclared,
            level: (Level::Pod, "clusters/c.toml:7:16"),
        },
        LevelCase {
            name: "a package ceiling lowers the level",
            cluster: format!("availability = \"zone\"\n{ZONES}"),
            meta: NODE_CEILING,
            by: RequestedBy::Cluster,
            requested: (Level::Zone, "clusters/c.toml:1:16"),
            substrate: (Some(Level::Zone), Verdict::Supported),
            ceiling: Cap::Lowered(Level::Node, CEILING_AT.into(), Level::Zone),
            level: (Level::Node, CEILING_AT),
        },
        LevelCase {
            name: "a package ceiling not below the level",
            cluster: format!("availability = \"pod\"\n{MULTI_NODE}"),
            meta: NODE_CEILING,
            by: RequestedBy::Cluster,
            requested: (Level::Pod, "clusters/c.toml:1:16"),
            substrate: (Some(Level::Node), Verdict::Supported),
            ceiling: Cap::NotBelow(Level::Node, CEILING_AT.into()),
            level: (Level::Pod, "clusters/c.toml:1:16"),
        },
        LevelCase {
            name: "the cluster's level, unverified",
            cluster: "availability = \"zone\"\n[[instances]]\nname = \"a\"\npackage = \"p\"\n".into(),
            meta: "",
            by: RequestedBy::Cluster,
            requested: (Level::Zone, "clusters/c.toml:1:16"),
            substrate: (None, Verdict::Unverified("capabilities.availabilityZones is not declared")),
            ceiling: Cap::Undeclared,
            level: (Level::Zone, "clusters/c.toml:1:16"),
        },
        LevelCase {
            name: "the instance's override, unverified where the cluster's level is not",
            cluster: "availability = \"none\"\n[[instances]]\nname = \"a\"\npackage = \"p\"\navailability = \"node\"\n"
                .into(),
            meta: "",
            by: RequestedBy::Instance,
            requested: (Level::Node, "clusters/c.toml:5:16"),
            substrate: (None, Verdict::Unverified("capabilities.multiNode is not declared")),
            ceiling: Cap::Undeclared,
            level: (Level::Node, "clusters/c.toml:5:16"),
        },
    ];
    for case in cases {
        let name = case.name;
        let tree = TestTree::new().cluster("c", &case.cluster).package(
            "p",
            &format!("{PACKAGE}{}", case.meta),
            &[("w.yaml", &workload_yaml("Deployment", "w", Some(2), ""))],
        );
        let (model, diagnostics) = resolve(&tree);
        let instance = only_instance(&model, &diagnostics);
        let trail = &instance.trail;
        assert_eq!(trail.requested.by, case.by, "{name}");
        assert_eq!(trail.requested.level.value, case.requested.0, "{name}");
        assert_eq!(at(&trail.requested.level.from), case.requested.1, "{name}");
        assert_eq!(trail.requested.level, instance.requested, "{name}: the trail's request is the one derive reads");
        assert_eq!(trail.substrate.level, case.requested.0, "{name}: the requested level is the one checked");
        assert_eq!(trail.substrate.confirmed, case.substrate.0, "{name}");
        match (&trail.substrate.support, &case.substrate.1) {
            (Support::Supported, Verdict::Supported) => {}
            (Support::Unverified(what), Verdict::Unverified(part)) => assert!(what.contains(part), "{name}: {what}"),
            (support, verdict) => panic!("{name}: {support:?}, expected {verdict:?}"),
        }
        assert_eq!(cap(&trail.package_ceiling), case.ceiling, "{name}");
        assert_eq!(instance.level.value, case.level.0, "{name}");
        assert_eq!(at(&instance.level.from), case.level.1, "{name}");
    }
}

/// A replica step as the tables write it, with where it points.
#[derive(Debug, PartialEq, Eq)]
enum Rep {
    Mapping(Level, String),
    Manifest(String, bool),
    Autoscaler(String),
    ScaledToZero(String),
}

fn rep(source: &ReplicaSource) -> Rep {
    match source {
        ReplicaSource::Mapping { step, at: from } => Rep::Mapping(*step, at(from)),
        ReplicaSource::Manifest { at: from, defaulted } => Rep::Manifest(at(from), *defaulted),
        ReplicaSource::Autoscaler { at: from } => Rep::Autoscaler(at(from)),
        ReplicaSource::ScaledToZero { at: from } => Rep::ScaledToZero(at(from)),
    }
}

fn hpa(min: &str) -> String {
    format!(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: w\nspec:\n  scaleTargetRef:\n    \
         apiVersion: apps/v1\n    kind: Deployment\n    name: w\n{min}  maxReplicas: 10\n  metrics: []\n"
    )
}

struct WorkloadCase {
    name: &'static str,
    level: &'static str,
    /// The `[workloads.w]` entry's lines.
    entry: String,
    /// The manifest's `spec.replicas`.
    manifest: Option<u32>,
    /// The `minReplicas` line of an autoscaler of the workload, when one scales it.
    autoscaler: Option<&'static str>,
    ceiling: Cap,
    /// The workload's level and where it comes from.
    level_from: (Level, &'static str),
    replicas: u32,
    step: Rep,
    /// Whether kix raised the autoscaler's range, when one scales the workload.
    raised: Option<bool>,
}

// R5 and R6: the workload's ceiling and the replica step chosen, under an autoscaler too.
#[test]
fn r5_r6_trail_of_a_workload() {
    const MAPPING: &str = "replicas = { none = 1, pod = 2 }\n";
    let cases = [
        WorkloadCase {
            name: "a count from the mapping",
            level: "node",
            entry: MAPPING.into(),
            manifest: None,
            autoscaler: None,
            ceiling: Cap::Undeclared,
            level_from: (Level::Node, "clusters/c.toml:1:16"),
            replicas: 2,
            step: Rep::Mapping(Level::Pod, "packages/p/kix.toml:5:30".into()),
            raised: None,
        },
        WorkloadCase {
            name: "a workload ceiling lowers the level",
            level: "node",
            entry: "availability = { max = \"none\" }\n".into(),
            manifest: None,
            autoscaler: None,
            ceiling: Cap::Lowered(Level::None, "packages/p/kix.toml:5:24".into(), Level::Node),
            level_from: (Level::None, "packages/p/kix.toml:5:24"),
            replicas: 1,
            step: Rep::Manifest("packages/p/a.yaml:5:1".into(), true),
            raised: None,
        },
        WorkloadCase {
            name: "a workload ceiling not below the level",
            level: "pod",
            entry: format!("availability = {{ max = \"zone\" }}\n{MAPPING}"),
            manifest: None,
            autoscaler: None,
            ceiling: Cap::NotBelow(Level::Zone, "packages/p/kix.toml:5:24".into()),
            level_from: (Level::Pod, "clusters/c.toml:1:16"),
            replicas: 2,
            step: Rep::Mapping(Level::Pod, "packages/p/kix.toml:6:30".into()),
            raised: None,
        },
        WorkloadCase {
            name: "the manifest's count below the lowest step",
            level: "none",
            entry: "replicas = { pod = 4 }\n".into(),
            manifest: Some(3),
            autoscaler: None,
            ceiling: Cap::Undeclared,
            level_from: (Level::None, "clusters/c.toml:1:16"),
            replicas: 3,
            step: Rep::Manifest("packages/p/a.yaml:6:3".into(), false),
            raised: None,
        },
        WorkloadCase {
            name: "the mapping's count raises an autoscaler's minimum",
            level: "zone",
            entry: MAPPING.into(),
            manifest: None,
            autoscaler: Some("  minReplicas: 1\n"),
            ceiling: Cap::Undeclared,
            level_from: (Level::Zone, "clusters/c.toml:1:16"),
            replicas: 2,
            step: Rep::Mapping(Level::Pod, "packages/p/kix.toml:5:30".into()),
            raised: Some(true),
        },
        WorkloadCase {
            name: "an autoscaler's minimum above the mapping's count",
            level: "zone",
            entry: MAPPING.into(),
            manifest: None,
            autoscaler: Some("  minReplicas: 5\n"),
            ceiling: Cap::Undeclared,
            level_from: (Level::Zone, "clusters/c.toml:1:16"),
            replicas: 5,
            step: Rep::Autoscaler("packages/p/b.yaml:10:3".into()),
            raised: Some(false),
        },
        WorkloadCase {
            name: "an autoscaler's minimum without a mapping",
            level: "pod",
            entry: String::new(),
            manifest: Some(1),
            autoscaler: Some("  minReplicas: 2\n"),
            ceiling: Cap::Undeclared,
            level_from: (Level::Pod, "clusters/c.toml:1:16"),
            replicas: 2,
            step: Rep::Autoscaler("packages/p/b.yaml:10:3".into()),
            raised: Some(false),
        },
    ];
    let capabilities = "multiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]";
    for case in cases {
        let name = case.name;
        let toml = format!("{PACKAGE}[workloads.w]\n{}", case.entry);
        let manifest = workload_yaml("Deployment", "w", case.manifest, "");
        let autoscaler = case.autoscaler.map(hpa);
        let mut files = vec![("a.yaml", manifest.as_str())];
        files.extend(autoscaler.as_deref().map(|a| ("b.yaml", a)));
        let tree =
            TestTree::new().cluster("c", &cluster_toml(case.level, capabilities, "p")).package("p", &toml, &files);
        let (model, diagnostics) = resolve(&tree);
        let instance = only_instance(&model, &diagnostics);
        let [workload] = instance.workloads.as_slice() else { panic!("{name}: one workload") };
        assert_eq!(cap(&workload.trail.ceiling), case.ceiling, "{name}");
        assert_eq!(workload.level.value, case.level_from.0, "{name}");
        assert_eq!(at(&workload.level.from), case.level_from.1, "{name}");
        assert_eq!(workload.replicas, case.replicas, "{name}");
        assert_eq!(rep(&workload.trail.replicas), case.step, "{name}");
        assert_eq!(workload.autoscaler.map(|range| range.raised), case.raised, "{name}");
    }
}
