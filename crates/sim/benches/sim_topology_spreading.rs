//! The scheduler_perf yardstick TopologySpreading/5000Nodes_5000Pods (issue 3).
//!
//! 5000 nodes in 3 zones (4 CPU, 32Gi, 110 pods each, as scheduler_perf's
//! node-default.yaml), 5000 existing pods (one per node, 100m / 500Mi), then
//! 5000 more pods with a hard zone spread (maxSkew 1, DoNotSchedule on
//! topology.kubernetes.io/zone), each scheduled and bound before the next.
//! Criterion reports the throughput in pods per second (elements/s). A second
//! case places 5000 pods with kix's own constraints (hostname ScheduleAnyway
//! plus the zone rule) on the same cluster.
//!
//! Run: `cargo bench --bench sim_topology_spreading`

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kix_sim::{Cluster, State};
use std::fmt::Write as _;

fn state_yaml(nodes: usize, existing: usize) -> String {
    let mut out = String::new();
    for i in 0..nodes {
        let zone = ["zone-a", "zone-b", "zone-c"][i % 3];
        let _ = writeln!(
            out,
            "---\nkind: Node\nmetadata: {{name: node-{i:05}, labels: {{kubernetes.io/hostname: node-{i:05}, topology.kubernetes.io/zone: {zone}}}}}\nstatus: {{allocatable: {{cpu: '4', memory: 32Gi, pods: '110'}}}}"
        );
    }
    for i in 0..existing {
        let _ = writeln!(
            out,
            "---\nkind: Pod\nmetadata: {{name: init-{i:05}, namespace: default}}\nspec: {{nodeName: node-{:05}, containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: 500Mi}}}}}}]}}",
            i % nodes
        );
    }
    out
}

const ZONE_SPREAD: &str = "  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {color: blue}}}\n";
const HOST_SPREAD: &str = "  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {color: blue}}}\n";

fn spread_pods(count: usize, constraints: &str) -> Vec<kix_sim::objects::Pod> {
    let template = format!(
        "kind: Pod\nmetadata: {{name: p, namespace: default, labels: {{color: blue}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: 500Mi}}}}}}]\n  topologySpreadConstraints:\n{constraints}"
    );
    let template = template.as_str();
    let pod = kix_sim::snapshot::parse_pod(&kix_yaml::from_str(template).unwrap(), "default").unwrap();
    (0..count)
        .map(|i| {
            let mut p = pod.clone();
            p.name = format!("spread-{i:05}");
            p
        })
        .collect()
}

/// Places every pod on a fresh copy of the cluster, one at a time, each bound before the next.
fn place_all(b: &mut criterion::Bencher<'_>, base: &Cluster, pods: &[kix_sim::objects::Pod]) {
    b.iter_batched(
        || (base.clone(), pods.to_vec()),
        |(mut cluster, pods)| {
            for pod in pods {
                let node = cluster.select(&pod).expect("every pod places");
                cluster.bind(pod, &node).unwrap();
            }
            cluster
        },
        BatchSize::LargeInput,
    )
}

fn bench(c: &mut Criterion) {
    let state = State::from_yaml_str(&state_yaml(5000, 5000)).unwrap();
    let base = Cluster::new(&state);
    let pods = spread_pods(5000, ZONE_SPREAD);
    let mut group = c.benchmark_group("TopologySpreading");
    group.sample_size(10);
    group.throughput(Throughput::Elements(pods.len() as u64));
    group.bench_function("5000Nodes_5000Pods", |b| place_all(b, &base, &pods));
    // kix's own shape (hostname ScheduleAnyway + zone DoNotSchedule): nodes are grouped by
    // usage and their own hostname count, 5000 pods on the same 5000 nodes.
    let kix_pods = spread_pods(5000, &format!("{HOST_SPREAD}{ZONE_SPREAD}"));
    group.throughput(Throughput::Elements(kix_pods.len() as u64));
    group.bench_function("5000Nodes_5000Pods_hostname_and_zone", |b| place_all(b, &base, &kix_pods));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
