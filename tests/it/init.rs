//! `kix init`: what it writes is read back by kix itself, and it never overwrites a file.

use crate::support::{Test, repo_path};

#[test]
fn init_writes_files_that_build_and_never_overwrites() {
    let api = std::fs::read_to_string(repo_path("packages/web/api.yaml")).unwrap();
    let t = Test::new().tree([("packages/shop-web/api.yaml", api.as_str())]);
    let state = repo_path("tests/sim/three-zones.yaml");
    t.clone()
        .args(["init", "package", "packages/shop-web"])
        .run()
        .status(0)
        .stderr_contains("wrote packages/shop-web/kix.toml");
    t.clone()
        .args(["init", "cluster", "real", "--from-state", state.to_str().unwrap()])
        .run()
        .status(0)
        .stderr_contains("clusters/real.toml");
    let manifest = std::fs::read_to_string(t.root().join("packages/shop-web/kix.toml")).unwrap();
    assert!(manifest.contains("name = \"shop-web\"") && manifest.contains("[workloads.api]"), "{manifest}");
    let cluster = std::fs::read_to_string(t.root().join("clusters/real.toml")).unwrap();
    for line in [
        "availability = \"zone\"",
        "multiNode = true",
        "availabilityZones = [\"zone-a\", \"zone-b\", \"zone-c\"]",
        "nodesPerZone = 2",
    ] {
        assert!(cluster.contains(line), "{line} missing from\n{cluster}");
    }
    // Add an instance of the package: the tree builds and verifies at zone on the snapshot's pools.
    let with_instance = cluster.replace(
        "# [[instances]]\n# name = \"shop\"\n# package = \"web\"\n",
        "[[instances]]\nname = \"shop\"\npackage = \"shop-web\"\n",
    );
    std::fs::write(t.root().join("clusters/real.toml"), with_instance).unwrap();
    t.clone()
        .args(["build"])
        .run()
        .status(0)
        .stdout_contains("shop      shop-web 0.1.0  zone   750m cpu, 768Mi memory  api x3 +pdb");
    t.clone().args(["verify"]).run().status(0).stdout_contains("meets zone");
    // Never overwrite.
    t.clone()
        .args(["init", "package", "packages/shop-web"])
        .run()
        .status(1)
        .stderr_contains("exists; kix init never overwrites a file");
    t.args(["init", "cluster", "Bad_Name"]).run().status(1).stderr_contains("error[K0201]");
}

#[test]
fn a_cluster_template_without_a_snapshot_is_a_valid_cluster_file() {
    let t = Test::new();
    t.clone().args(["init", "cluster", "lab"]).run().status(0);
    t.args(["check"]).run().status(0).stderr_contains("kix: 0 errors, 0 warnings");
}
