//! Fleet-scale benchmarks (issue 11), on the roots `examples/genfleet.rs` writes (this file includes it).
//!
//! * `build/10x100x3`: compile and write a fleet of 10 clusters x 100 instances x 3 workloads (3,000
//!   workloads, 1,010 files), output directory on tmpfs (`/dev/shm`) when there is one;
//! * `build/100x100x3`: the same at 100 clusters (30,000 workloads, 10,100 files);
//! * `build/rebuild_one_package`: the 100-cluster fleet rebuilt into its existing output after one package
//!   changed (one image tag);
//! * `build/rebuild_unchanged_quiet` and `build/rebuild_one_package_quiet` (issue 42): the 100-cluster fleet
//!   with its `allow` lines removed (every warning unacknowledged), rebuilt as `kix build -q` rebuilds it
//!   (no summary: unchanged clusters are reused from the output manifest's record, not compiled), unchanged,
//!   after one package changed, and unchanged right after that change was undone
//!   (`build/rebuild_after_change_undone_quiet`: the spare still holds the changed files);
//!   `build/rebuild_unchanged_summary`: unchanged, as plain `kix build` rebuilds it (each cluster's summary
//!   replayed from its record);
//! * `check/10x100x3`: compile only (`kix check`);
//! * `verify/300_nodes`, `verify/3000_nodes`: `kix verify` on 300 (3,000) nodes in three zones, one
//!   Deployment of 300 (3,000) replicas;
//! * `simulate/scheduler_perf`: `kix simulate` end to end, loading included, on scheduler_perf's
//!   TopologySpreading/5000Nodes_5000Pods shape (5,000 nodes, 5,000 pods, 5,000 more to place);
//! * `snapshot/load_10k` beside `snapshot/parse_10k` and `snapshot/fast_parse_10k`: the same
//!   10,000-object snapshot loaded into the scheduler model's `State`, and only parsed into kix's
//!   generic YAML tree, by the located loader (values and positions) and by the fast reader (values
//!   only, what loading uses for this text).
//!
//! The larger figures (1,000 clusters, verify at 5,000 nodes) take seconds to minutes
//! per run, too long for criterion's samples: docs/performance.md gives the `--release` commands that
//! measure them. Run: `cargo bench --bench build_fleet`

#[allow(dead_code)]
#[path = "../examples/genfleet.rs"]
mod genfleet;
mod support;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use support::scratch;

/// The allocator the `kix` binary runs with (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use kix::compile::{BuildRequest, Output, Selection};
use std::path::{Path, PathBuf};

fn fleet(dir: &Path, clusters: usize, instances: usize, workloads: usize) {
    let args = genfleet::Args { clusters, instances, workloads, ..Default::default() };
    genfleet::fleet(dir, &args).unwrap();
}

fn build(root: &Path) {
    build_showing(root, true);
}

/// A build into `ROOT/out`, with the summary table's records (`kix build`) or without (`kix build -q`).
fn build_showing(root: &Path, summary: bool) {
    let request = BuildRequest {
        selection: Selection { root: root.to_path_buf(), ..Default::default() },
        output: Output::Directory(None),
        summary,
    };
    let built = kix::compile::build(&request).unwrap();
    assert!(built.written.is_some(), "the fleet builds");
}

fn bench_build(c: &mut Criterion) {
    let dir = scratch();
    let root = dir.path().to_path_buf();
    fleet(&root, 10, 100, 3);
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    group.bench_function("10x100x3", |b| b.iter(|| build(&root)));
    let large = scratch();
    fleet(large.path(), 100, 100, 3);
    group.bench_function("100x100x3", |b| b.iter(|| build(large.path())));
    // One package changed between builds of the 100-cluster fleet: flip one image tag back and forth.
    let package: PathBuf = large.path().join("packages/pkg-1/workloads.yaml");
    let original = std::fs::read_to_string(&package).unwrap();
    let changed = original.replacen(":1.1.0", ":1.1.1", 1);
    let mut flip = false;
    group.bench_function("rebuild_one_package", |b| {
        b.iter_batched(
            || {
                flip = !flip;
                std::fs::write(&package, if flip { &changed } else { &original }).unwrap();
            },
            |()| build(large.path()),
            BatchSize::PerIteration,
        )
    });
    // Issue 42: the same fleet with every warning unacknowledged, rebuilt as `kix build -q` does.
    for entry in std::fs::read_dir(large.path().join("clusters")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: String = text.lines().filter(|l| !l.starts_with("allow = ")).map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, kept).unwrap();
    }
    std::fs::write(&package, &original).unwrap();
    build_showing(large.path(), false);
    group.bench_function("rebuild_unchanged_quiet", |b| b.iter(|| build_showing(large.path(), false)));
    // The same as plain `kix build` rebuilds it: each cluster's summary replayed from its record.
    build_showing(large.path(), true);
    group.bench_function("rebuild_unchanged_summary", |b| b.iter(|| build_showing(large.path(), true)));
    group.bench_function("rebuild_one_package_quiet", |b| {
        b.iter_batched(
            || {
                flip = !flip;
                std::fs::write(&package, if flip { &changed } else { &original }).unwrap();
            },
            |()| build_showing(large.path(), false),
            BatchSize::PerIteration,
        )
    });
    // The first unchanged rebuild after a change was undone: the spare still holds the changed files, which
    // it trades for links to `out/`'s (the row docs/performance.md measures at the 1,000-cluster fleet).
    std::fs::write(&package, &original).unwrap();
    build_showing(large.path(), false);
    group.bench_function("rebuild_after_change_undone_quiet", |b| {
        b.iter_batched(
            || {
                std::fs::write(&package, &changed).unwrap();
                build_showing(large.path(), false);
                std::fs::write(&package, &original).unwrap();
                build_showing(large.path(), false);
            },
            |()| build_showing(large.path(), false),
            BatchSize::PerIteration,
        )
    });
    group.finish();
    drop(large);
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    let selection = Selection { root: root.clone(), ..Default::default() };
    group.bench_function("10x100x3", |b| b.iter(|| assert!(kix::compile::compile(&selection).ok())));
    group.finish();
}

fn bench_verify(c: &mut Criterion) {
    let mut group = c.benchmark_group("verify");
    group.sample_size(10);
    // Level zone on 300 and 3,000 nodes; level node (the tie-break ranks per node, issue 20) on 3,000.
    for (nodes, level, name) in [(300, "zone", ""), (3000, "zone", ""), (3000, "node", "_level_node")] {
        let dir = scratch();
        genfleet::verify_cluster(dir.path(), nodes, nodes, 1, level).unwrap();
        let compiled =
            kix::compile::compile_clusters(&Selection { root: dir.path().to_path_buf(), ..Default::default() });
        assert!(compiled.ok());
        group.bench_function(format!("{nodes}_nodes{name}"), |b| b.iter(|| kix::api::verify(&compiled.clusters, None)));
    }
    // Level node with required pod anti-affinity on the hostname (issue 20 part 2).
    let dir = scratch();
    genfleet::verify_cluster(dir.path(), 3000, 3000, 1, "node").unwrap();
    genfleet::anti_affinity(dir.path()).unwrap();
    let compiled = kix::compile::compile_clusters(&Selection { root: dir.path().to_path_buf(), ..Default::default() });
    assert!(compiled.ok());
    group.bench_function("3000_nodes_level_node_anti_affinity", |b| {
        b.iter(|| kix::api::verify(&compiled.clusters, None))
    });
    group.finish();
}

fn bench_simulate(c: &mut Criterion) {
    let dir = scratch();
    genfleet::scheduler_perf(dir.path()).unwrap();
    let request = kix_sim::SimulateRequest {
        state: dir.path().join("state.yaml"),
        manifests: vec![dir.path().join("spread.yaml")],
    };
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group
        .bench_function("scheduler_perf", |b| b.iter(|| assert_eq!(kix_sim::simulate(&request).unwrap().pending(), 0)));
    group.finish();
    let text = std::fs::read_to_string(dir.path().join("state.yaml")).unwrap();
    let mut group = c.benchmark_group("snapshot");
    group.sample_size(10);
    group.bench_function("parse_10k", |b| b.iter(|| kix_yaml::parse_stream(&text, &kix_yaml::Limits::SNAPSHOT).len()));
    assert!(kix_yaml::fast_stream(&text, &kix_yaml::Limits::SNAPSHOT).is_some(), "the fast reader reads the snapshot");
    group.bench_function("fast_parse_10k", |b| {
        b.iter(|| kix_yaml::fast_stream(&text, &kix_yaml::Limits::SNAPSHOT).map(|documents| documents.len()))
    });
    group.bench_function("load_10k", |b| b.iter(|| kix_sim::State::from_yaml_str(&text).unwrap()));
    group.finish();
}

criterion_group!(benches, bench_build, bench_verify, bench_simulate);
criterion_main!(benches);
