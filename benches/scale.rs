//! Issue 20's axes, one benchmark per row of its table that fits criterion's samples (each run under
//! a few seconds on 2 cores), on the roots `examples/genfleet.rs` writes (this file includes it):
//!
//! * `scale/verify_shared_300_nodes_100_instances`, `scale/verify_shared_3000_nodes_1000_instances`
//!   (issue 38): one cluster of the fleet shape with an inventory, every instance verified together
//!   on one world, every scenario;
//! * `scale/verify_10000_nodes_level_node`: `kix verify` at level node, one Deployment of 10,000
//!   replicas on 10,000 nodes in three zones (the 3,000-node and anti-affinity rows are in
//!   `build_fleet`'s `verify` group);
//! * `scale/build_one_cluster_of_100`: `kix build --cluster X` in a 100-cluster fleet whose `out/`
//!   holds every cluster (only X's directory is touched);
//! * `scale/check_30000_instances_one_cluster`: `kix check` on one cluster of 30,000 instances;
//! * `scale/build_200_kube_prometheus`: 200 instances of the corpus's kube-prometheus, each its own
//!   namespace and cluster, built into an empty `out/`;
//! * `scale/stream_all_100_clusters`: `kix build --stdout --all` on the 100-cluster fleet, the stream
//!   written to a sink;
//! * `scale/lint_15mb_file`: `kix lint` of one 15 MB file of 33,000 objects (a helm-template-like
//!   stream: per app a Deployment, a Service, every other app a budget, a ConfigMap), 14,000 findings;
//! * `scale/parse_cluster_file_100_instances`: reading one cluster file of 100 instances (issue 20's
//!   one parse per cluster file).
//!
//! Memory, and the 1,000-cluster rows (seconds per run), are measured by the `--release` commands in
//! docs/performance.md. Run: `cargo bench --bench scale`

#[allow(dead_code)]
#[path = "../examples/genfleet.rs"]
mod genfleet;
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use kix::compile::{BuildRequest, Output, Selection};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use support::scratch;

/// The allocator the `kix` binary runs with (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn selection(root: &Path, clusters: Vec<String>) -> Selection {
    Selection { root: root.to_path_buf(), clusters, ..Default::default() }
}

fn build_into_directory(selection: Selection) {
    let built =
        kix::compile::build(&BuildRequest { selection, output: Output::Directory(None), summary: true }).unwrap();
    assert!(built.written.is_some(), "the fleet builds");
}

fn bench_verify(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    let dir = scratch();
    genfleet::verify_cluster(dir.path(), 10_000, 10_000, 1, "node").unwrap();
    let compiled = kix::compile::compile_clusters(&selection(dir.path(), Vec::new()));
    assert!(compiled.ok());
    group.bench_function("verify_10000_nodes_level_node", |b| b.iter(|| kix::api::verify(&compiled.clusters, None)));
    group.finish();
}

/// Issue 38: one cluster's instances verified together on one world, 300 and 3,000 nodes (100 and 1,000
/// instances of three workloads, about 1,000 and 10,000 pods), every scenario.
fn bench_shared_world(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    for (nodes, instances) in [(300, 100), (3000, 1000)] {
        let dir = scratch();
        let args = genfleet::Args { clusters: 1, instances, workloads: 3, nodes, ..Default::default() };
        genfleet::fleet(dir.path(), &args).unwrap();
        let compiled = kix::compile::compile_clusters(&selection(dir.path(), Vec::new()));
        assert!(compiled.ok());
        group.bench_function(format!("verify_shared_{nodes}_nodes_{instances}_instances"), |b| {
            b.iter(|| kix::api::verify(&compiled.clusters, None))
        });
    }
    group.finish();
}

fn bench_fleet(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    let fleet = scratch();
    let args = genfleet::Args { clusters: 100, instances: 100, workloads: 3, ..Default::default() };
    genfleet::fleet(fleet.path(), &args).unwrap();
    build_into_directory(selection(fleet.path(), Vec::new()));
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(fleet.path().join("clusters")).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    let middle = names[names.len() / 2].file_stem().unwrap().to_string_lossy().into_owned();
    group.bench_function("build_one_cluster_of_100", |b| {
        b.iter(|| build_into_directory(selection(fleet.path(), vec![middle.clone()])))
    });
    group.bench_function("stream_all_100_clusters", |b| {
        b.iter(|| {
            let request = BuildRequest {
                selection: selection(fleet.path(), Vec::new()),
                output: Output::Stream { all: true },
                summary: false,
            };
            let mut stream = kix::compile::build(&request).unwrap().stream.expect("the fleet streams");
            assert!(stream.copy_to(&mut std::io::sink()).unwrap() > 0);
        })
    });
    let cluster = std::fs::read_to_string(&names[0]).unwrap();
    group.bench_function("parse_cluster_file_100_instances", |b| {
        b.iter(|| {
            let mut diagnostics = kix_diag::Diagnostics::default();
            let source = kix_diag::SourceFile::new(names[0].clone(), cluster.clone());
            assert!(kix::api::parse_cluster(&names[0], source, &mut diagnostics).is_some())
        })
    });
    group.finish();
}

fn bench_instances(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    let dir = scratch();
    let args = genfleet::Args { clusters: 1, instances: 30_000, workloads: 1, ..Default::default() };
    genfleet::fleet(dir.path(), &args).unwrap();
    let one_cluster = selection(dir.path(), Vec::new());
    group.bench_function("check_30000_instances_one_cluster", |b| {
        b.iter(|| assert!(kix::compile::compile(&one_cluster).ok()))
    });
    let kube_prometheus = scratch();
    genfleet::kube_prometheus(kube_prometheus.path(), 200, false).unwrap();
    let out = kube_prometheus.path().join("out");
    group.bench_function("build_200_kube_prometheus", |b| {
        b.iter_batched(
            || {
                std::fs::remove_dir_all(&out)
                    .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
                    .unwrap()
            },
            |()| build_into_directory(selection(kube_prometheus.path(), Vec::new())),
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// docs/performance.md's `gen.py`: apps of a Deployment with a zone spread (no pod-template-hash: a
/// warning each), a Service, every other app a budget (without an eviction policy: a warning each)
/// and a ConfigMap of eight values, in 20 namespaces, until the text is `size` bytes.
fn lint_stream(size: usize) -> String {
    let mut text = String::with_capacity(size + 4096);
    let mut i = 0;
    while text.len() < size {
        let ns = format!("team-{}", i % 20);
        let _ = write!(
            text,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  namespace: {ns}\n  labels: {{app: app-{i}, tier: web}}\n\
             spec:\n  replicas: {}\n  selector:\n    matchLabels: {{app: app-{i}}}\n  template:\n    metadata:\n      labels: {{app: app-{i}, tier: web}}\n\
             \x20   spec:\n      topologySpreadConstraints:\n        - maxSkew: 1\n          topologyKey: topology.kubernetes.io/zone\n\
             \x20         whenUnsatisfiable: DoNotSchedule\n          labelSelector: {{matchLabels: {{app: app-{i}}}}}\n      containers:\n\
             \x20       - name: main\n          image: example/app:{}\n          args: [\"--port=8080\", \"--name=app-{i}\"]\n\
             \x20         resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}\n---\n\
             apiVersion: v1\nkind: Service\nmetadata:\n  name: app-{i}\n  namespace: {ns}\nspec:\n  selector: {{app: app-{i}}}\n  ports: [{{port: 80, targetPort: 8080}}]\n---\n",
            2 + i % 3,
            i % 7
        );
        if i % 2 == 0 {
            let _ = write!(
                text,
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: app-{i}\n  namespace: {ns}\n\
                 spec:\n  maxUnavailable: 1\n  selector: {{matchLabels: {{app: app-{i}}}}}\n---\n"
            );
        }
        let _ = write!(
            text,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{i}-config\n  namespace: {ns}\ndata:\n"
        );
        for k in 0..8 {
            let _ = writeln!(text, "  key{k}: value-{i}-{k}-{}", "x".repeat(40));
        }
        text.push_str("---\n");
        i += 1;
    }
    text
}

fn bench_lint(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    let dir = scratch();
    let file = dir.path().join("big.yaml");
    std::fs::write(&file, lint_stream(15_000_000)).unwrap();
    let request = kix::api::LintRequest {
        inputs: vec![kix::api::LintInput::Path(file)],
        cluster: None,
        root: dir.path().to_path_buf(),
        deny_warnings: false,
    };
    let warnings = kix::api::lint(&request).diagnostics.count(kix_diag::Severity::Warning);
    assert!(warnings > 10_000, "the stream is linted ({warnings} warnings)");
    group.bench_function("lint_15mb_file", |b| b.iter(|| kix::api::lint(&request).objects.len()));
    group.finish();
}

criterion_group!(benches, bench_verify, bench_shared_world, bench_fleet, bench_instances, bench_lint);
criterion_main!(benches);
