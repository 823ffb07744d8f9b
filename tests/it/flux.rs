//! The Flux layout of docs/flux.md: a kix root in a subdirectory of the repository, its `out/`
//! committed, one Flux Kustomization per cluster pointing at `out/<cluster>/`. What Flux's
//! kustomize-controller needs from kix: each `out/<cluster>/kustomization.yaml` lists exactly the
//! files beside it, and `kix build --check` (CI's gate) passes on a current `out/` and fails on
//! a stale one.

use crate::support::*;

#[test]
fn flux_layout_each_cluster_directory_is_a_complete_kustomization_and_check_guards_it() {
    let t = Test::new().in_subdirectory("deploy").examples();
    t.clone().args(["build", "--quiet"]).run().status(0);
    let out = t.root().join("out");
    let mut clusters = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let dir = entry.unwrap().path();
        clusters += 1;
        let kustomization = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
        let listed: Vec<String> =
            kustomization.lines().filter_map(|l| l.strip_prefix("- ")).map(str::to_string).collect();
        let mut present: Vec<String> = read_tree(&dir).into_keys().map(|p| p.display().to_string()).collect();
        present.retain(|p| p != "kustomization.yaml");
        let mut sorted = listed.clone();
        sorted.sort();
        present.sort();
        assert_eq!(sorted, present, "{}: kustomization.yaml lists every file beside it", dir.display());
    }
    assert_eq!(clusters, 4, "one directory per cluster file");
    t.clone().args(["build", "--check"]).run().status(0);
    std::fs::remove_file(out.join("prod/shop.yaml")).unwrap();
    t.clone().args(["build", "--check"]).run().status(1).stdout_contains("shop.yaml");
}
