//! Resolve: validate names, versions, capabilities and inventories, pick each
//! instance's package version, and settle the level of every instance and
//! workload (R1-R8, R12 for shipped budgets, R13, R14).
//!
//! Packages are validated once (their workloads, replica mappings and
//! selectors do not depend on any cluster), then each cluster file, then each
//! instance is bound to one package version and a level: the requested level
//! (R2) checked against the substrate (R1, R3), lowered to the package ceiling
//! (R4), then per workload to its own ceiling (R5), with its replica count (R6)
//! checked against the level (R7, R8), the floor of an autoscaler's minimum
//! where one scales the workload.
//!
//! The result is an owned [`Model`]: whatever failed is absent from it, with
//! its diagnostic reported; `derive` reads nothing else. Each instance and
//! workload also carries its decision trail ([`model::LevelTrail`],
//! [`model::WorkloadTrail`]), written where each decision is made, which
//! `kix explain` prints instead of deciding again.

mod acknowledged;
pub mod across;
mod autoscaler;
mod ceilings;
mod cluster;
pub mod custom;
mod entries;
mod groups;
mod hazards;
mod instance;
pub mod inventory;
mod kinds;
pub mod model;
mod namespace_strings;
mod namespaces;
mod package;
pub use package::cluster_scoped_custom_kinds;
pub mod substrate;
mod support;
mod survival;
mod versions;
pub mod views;

pub use acknowledged::Acknowledged;
pub use groups::labels_text;
pub use instance::workload_at;
pub use model::{
    Ceiling, Cluster, DocumentScope, Instance, InstanceGroup, InstanceWorkload, Package, ReplicaSource, RequestedBy,
    Workload,
};
pub use substrate::{FailureDomains, Support};

use crate::load::Tree;
use crate::load::cluster::{ClusterFile, ClusterSource};
use kix_diag::Diagnostics;
pub use package::Packages;

/// Validates the tree's packages, handing back its cluster files, each to be
/// resolved against them on its own ([`resolve_cluster`]; a build resolves each on the core that compiles
/// it, so the fleet's model is never held at once).
pub fn resolve_packages(tree: Tree, diagnostics: &mut Diagnostics) -> (Packages, Vec<ClusterSource>) {
    let Tree { clusters, packages, broken_packages, not_packages } = tree;
    let mut resolved = package::resolve_packages(packages, broken_packages, diagnostics);
    resolved.not_packages = not_packages;
    (resolved, clusters)
}

/// One cluster file against the resolved packages (`None` when the file itself is not valid), with one
/// instance asked at another level (`kix explain --level`) when `what_if` names it. The warnings its
/// inputs acknowledge are the caller's to set aside, once, with [`Acknowledged::of_cluster`].
pub fn resolve_cluster(
    file: ClusterFile,
    packages: &Packages,
    what_if: Option<(&str, kix_kube::level::Level)>,
    diagnostics: &mut Diagnostics,
) -> Option<Cluster> {
    cluster::resolve_cluster(file, packages, what_if, diagnostics)
}

pub use cluster::resolve_cluster_in_parts;

#[cfg(test)]
mod tests {
    use crate::testing::{TestTree, workload_yaml};
    use kix_diag::Code;
    use kix_kube::level::Level;

    fn package(name: &str, version: &str, extra: &str) -> (String, String) {
        (
            format!("[meta]\nname = \"{name}\"\nversion = \"{version}\"\n{extra}"),
            workload_yaml("Deployment", "w", None, "").replace("spec:\n  selector", "spec:\n  replicas: 1\n  selector"),
        )
    }

    /// A tree of cluster `c` and packages; the cluster acknowledges K0428 (these trees create no namespace)
    /// on its second line, so its first keeps its place.
    fn tree_with(cluster: &str, packages: &[(&str, (String, String))]) -> TestTree {
        let (first, rest) = cluster.split_once('\n').unwrap_or((cluster, ""));
        let cluster = format!("{first}\n{}{rest}", crate::testing::ALLOW_NAMESPACE);
        let mut tree = TestTree::new().cluster("c", &cluster);
        for (dir, (toml, yaml)) in packages {
            tree = tree.package(dir, toml, &[("w.yaml", yaml)]);
        }
        tree
    }

    // R2: the instance's own level wins over the cluster's.
    #[test]
    fn r2_instance_level_overrides_cluster_level() {
        let cluster = "availability = \"none\"\nallow = [\"K0428\"]\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"a\"\n\
                       package = \"p\"\n[[instances]]\nname = \"b\"\npackage = \"p\"\navailability = \"node\"\n";
        let (toml, _) = package("p", "1.0.0", "[workloads.w]\nreplicas = { none = 1, pod = 2 }\n");
        let compiled = TestTree::new()
            .cluster("c", cluster)
            .package("p", &toml, &[("w.yaml", &workload_yaml("Deployment", "w", None, ""))])
            .compile();
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
        assert_eq!(compiled.instance("c", "a").level, Level::None);
        assert_eq!(compiled.instance("c", "b").level, Level::Node);
        assert_eq!(compiled.workload("c", "b", "w").replicas, 2);
    }

    // R1/R3 end to end: errors point at the level, warnings do not stop the build.
    #[test]
    fn r3_errors_and_warnings_end_to_end() {
        let p = package("p", "1.0.0", "[workloads.w]\nreplicas = { none = 1, pod = 2 }\n");
        let single =
            tree_with("availability = \"pod\"\n[capabilities]\nmultiNode = false\n", &[("p", p.clone())]).compile();
        assert_eq!(single.codes(), vec![Code::LevelAboveSubstrate]);
        let location = single.diagnostics.iter().next().unwrap().location().cloned().unwrap();
        assert_eq!((location.line(), location.column()), (Some(1), Some(16)));

        let unknown =
            tree_with("availability = \"zone\"\n[[instances]]\nname = \"a\"\npackage = \"p\"\n", &[("p", p.clone())])
                .compile();
        assert_eq!(unknown.codes(), vec![Code::LevelUnverified]);
        assert!(unknown.ok());

        let contradictory = tree_with(
            "availability = \"none\"\n[capabilities]\nmultiNode = false\navailabilityZones = [\"a\", \"b\"]\n",
            &[("p", p)],
        )
        .compile();
        assert_eq!(contradictory.codes(), vec![Code::ContradictoryCapabilities]);
    }

    // R4: a package ceiling lowers the whole instance, naming everything.
    #[test]
    fn r4_package_ceiling_lowers_the_instance() {
        let p = package(
            "p",
            "1.0.0",
            "[meta.availability]\nmax = \"node\"\n[workloads.w]\nreplicas = { none = 1, pod = 2 }\n",
        );
        let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                       [[instances]]\nname = \"a\"\npackage = \"p\"\n";
        let compiled = tree_with(cluster, &[("p", p)]).compile();
        assert_eq!(compiled.codes(), vec![Code::PackageCeiling]);
        let message = &compiled.messages()[0];
        for part in ["package `p`", "`zone`", "lowered to `node`"] {
            assert!(message.contains(part), "{message} lacks {part}");
        }
        // At the ceiling, its cause, and about the instance it lowers (the subject, not the message: one
        // cause however many instances it lowers, issue 42).
        let found = compiled.diagnostics.iter().next().unwrap();
        assert!(!message.contains("instance `a`"), "{message}");
        assert_eq!((found.subject.cluster.as_deref(), found.subject.instance.as_deref()), (Some("c"), Some("a")));
        let at = found.location().unwrap();
        assert!(at.path().ends_with("kix.toml"), "{at}");
        assert_eq!(at.line(), Some(5), "{at}");
        assert_eq!(compiled.instance("c", "a").level, Level::Node);
        assert_eq!(compiled.workload("c", "a", "w").hard_key(), Some("kubernetes.io/hostname"));
    }

    // R13: highest matching version; no match lists versions; duplicates refused.
    #[test]
    fn r13_versions() {
        let packages =
            [("p1", package("p", "1.2.0", "")), ("p2", package("p", "1.4.1", "")), ("p3", package("p", "2.0.0", ""))];
        let cluster = |req: &str| {
            format!(
                "availability = \"none\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"a\"\npackage = \"p\"\n{req}"
            )
        };
        let chosen = |req: &str| {
            let compiled = tree_with(&cluster(req), &packages).compile();
            assert!(compiled.ok(), "{:?}", compiled.messages());
            compiled.instance("c", "a").package_version.clone()
        };
        assert_eq!(chosen(""), "2.0.0", "without a requirement the highest version wins");
        assert_eq!(chosen("version = \"^1.2\"\n"), "1.4.1");
        assert_eq!(chosen("version = \"~1.2\"\n"), "1.2.0");
        assert_eq!(chosen("version = \"=1.2.0\"\n"), "1.2.0");
        // A pre-release is chosen only when asked for, or when there is nothing else.
        let with_rc = [("p1", package("p", "1.2.0", "")), ("p2", package("p", "2.0.0-rc.1", ""))];
        let pick = |req: &str, packages: &[(&str, (String, String))]| {
            tree_with(&cluster(req), packages).compile().instance("c", "a").package_version.clone()
        };
        assert_eq!(pick("", &with_rc), "1.2.0");
        assert_eq!(pick("version = \"=2.0.0-rc.1\"\n", &with_rc), "2.0.0-rc.1");
        assert_eq!(pick("", &[("p2", package("p", "2.0.0-rc.1", ""))]), "2.0.0-rc.1");
        let build_twice =
            tree_with(&cluster(""), &[("p1", package("p", "1.0.0", "")), ("p2", package("p", "1.0.0+b5", ""))])
                .compile();
        assert_eq!(build_twice.codes(), vec![Code::DuplicatePackageVersion]);
        // Both definitions are shown, and why two written differently are one version.
        let text = build_twice.diagnostics.iter().next().unwrap().render(kix_diag::Style::Plain);
        assert!(text.contains("defined again here") && text.contains("first defined here"), "{text}");
        let note =
            "= note: build metadata does not tell versions apart (semver 2.0): 1.0.0 and 1.0.0+b5 are both 1.0.0";
        assert!(text.contains(note), "{text}");

        let none = tree_with(&cluster("version = \"^3\"\n"), &packages).compile();
        assert_eq!(none.codes(), vec![Code::NoMatchingVersion]);
        assert!(none.messages()[0].contains("versions there are: 1.2.0, 1.4.1, 2.0.0"), "{}", none.messages()[0]);

        let bad = tree_with(&cluster("version = \"one\"\n"), &packages).compile();
        assert_eq!(bad.codes(), vec![Code::InvalidRequirement]);

        let twice =
            tree_with(&cluster(""), &[("p1", package("p", "1.0.0", "")), ("p2", package("p", "1.0.0", ""))]).compile();
        assert_eq!(twice.codes(), vec![Code::DuplicatePackageVersion]);
        assert!(!twice.diagnostics.iter().next().unwrap().render(kix_diag::Style::Plain).contains("note:"));

        let bad_version = tree_with(&cluster(""), &[("p1", package("p", "1.0", ""))]).compile();
        assert!(bad_version.codes().contains(&Code::InvalidVersion));
    }

    // R14: names and failure-domain keys.
    #[test]
    fn r14_names_and_keys_end_to_end() {
        let p = || [("p", package("p", "1.0.0", ""))];
        let instance = |name: &str| {
            format!(
                "availability = \"none\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"{name}\"\npackage = \"p\"\n"
            )
        };
        assert_eq!(tree_with(&instance("../escape"), &p()).compile().codes(), vec![Code::InvalidName]);
        assert_eq!(tree_with(&instance("Shop"), &p()).compile().codes(), vec![Code::InvalidName]);
        let twice = format!("{}[[instances]]\nname = \"a\"\npackage = \"p\"\n", instance("a"));
        assert_eq!(tree_with(&twice, &p()).compile().codes(), vec![Code::DuplicateInstance]);
        let bad_key = "availability = \"none\"\n[failureDomains]\nextra = [\"bad key\"]\n";
        assert_eq!(tree_with(bad_key, &p()).compile().codes(), vec![Code::InvalidLabelKey]);
        let long_prefix = format!("availability = \"none\"\n[failureDomains]\nzone = \"{}/zone\"\n", "a".repeat(254));
        assert_eq!(tree_with(&long_prefix, &p()).compile().codes(), vec![Code::InvalidLabelKey]);
        let bad_namespace = format!("{}namespace = \"Not_OK\"\n", instance("a"));
        assert_eq!(tree_with(&bad_namespace, &p()).compile().codes(), vec![Code::InvalidName]);
        let bad_cluster = TestTree::new().cluster("Prod_1", "availability = \"none\"\n").compile();
        assert_eq!(bad_cluster.codes(), vec![Code::InvalidName]);
    }
}

#[cfg(test)]
mod trail_tests;
