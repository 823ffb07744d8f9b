//! YAML loading throughput: serde_yaml (kix's loader until issue 7) against kix's own `yaml::parse_stream`
//! (value plus the position tree), on two inputs:
//!
//! * `packages`: every `packages/**/*.yaml` file shipped with kix, concatenated as one stream
//!   (read at bench time, so the figure follows the examples);
//! * `snapshot`: a generated 10,000-object cluster snapshot (5,000 Nodes and 5,000 Pods, about 60
//!   lines each, as `kubectl get nodes,pods -A -o yaml` prints them, as a `---` stream).
//!
//! serde_yaml reads each document into a `serde_yaml::Value` with `Deserializer::from_str`, as
//! kix's loaders did before. `snapshot_10k/saphyr_events_only` is the located loader's floor:
//! saphyr-parser's events with no tree built. `snapshot_10k/kix_fast` is the fast reader
//! (`kix_yaml::fast_stream`: values without positions, for the block YAML kubectl writes), which
//! snapshot reads try first.
//!
//! Run: `cargo bench --bench yaml_parse`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kix_yaml::{Limits, fast_stream, parse_stream};
use serde::Deserialize;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;

fn package_yaml() -> String {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, files);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packages"), &mut files);
    files.sort();
    files.iter().map(|f| format!("---\n{}\n", std::fs::read_to_string(f).unwrap())).collect()
}

fn snapshot_yaml(objects: usize) -> String {
    let mut out = String::new();
    for i in 0..objects / 2 {
        let zone = ["zone-a", "zone-b", "zone-c"][i % 3];
        let _ = write!(
            out,
            "---
apiVersion: v1
kind: Node
metadata:
  annotations:
    node.alpha.kubernetes.io/ttl: \"0\"
    volumes.kubernetes.io/controller-managed-attach-detach: \"true\"
  creationTimestamp: \"2026-01-01T00:00:00Z\"
  labels:
    beta.kubernetes.io/arch: amd64
    beta.kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: node-{i:05}
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: m5.xlarge
    topology.kubernetes.io/region: eu-west-1
    topology.kubernetes.io/zone: {zone}
  name: node-{i:05}
  resourceVersion: \"{rv}\"
  uid: 6f1c2a4e-{i:04x}-4c1e-9a7e-0d2f5b8c{i:04x}
spec:
  podCIDR: 10.{a}.{b}.0/24
  podCIDRs:
  - 10.{a}.{b}.0/24
  providerID: aws:///eu-west-1a/i-0{i:016x}
  taints:
  - effect: NoSchedule
    key: dedicated
    value: batch
status:
  addresses:
  - address: 10.0.{a}.{b}
    type: InternalIP
  - address: node-{i:05}.internal
    type: Hostname
  allocatable:
    cpu: 3920m
    ephemeral-storage: \"95491281146\"
    hugepages-1Gi: \"0\"
    hugepages-2Mi: \"0\"
    memory: 15186712Ki
    pods: \"110\"
  capacity:
    cpu: \"4\"
    ephemeral-storage: 104845292Ki
    hugepages-1Gi: \"0\"
    hugepages-2Mi: \"0\"
    memory: 16009944Ki
    pods: \"110\"
  conditions:
  - lastHeartbeatTime: \"2026-01-01T00:00:00Z\"
    lastTransitionTime: \"2026-01-01T00:00:00Z\"
    message: kubelet is posting ready status
    reason: KubeletReady
    status: \"True\"
    type: Ready
  nodeInfo:
    architecture: amd64
    containerRuntimeVersion: containerd://1.7.20
    kernelVersion: 6.1.0-18-cloud-amd64
    kubeletVersion: v1.33.1
    operatingSystem: linux
",
            rv = 1000 + i,
            a = i / 256,
            b = i % 256,
        );
        let _ = write!(
            out,
            "---
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: \"2026-01-01T00:00:00Z\"
  generateName: web-7d4b9c-
  labels:
    app: web
    pod-template-hash: 7d4b9c
    tier: front
  name: web-7d4b9c-{i:05}
  namespace: shop
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-7d4b9c
    uid: 0b7e2f1a-1111-4c1e-9a7e-0d2f5b8c0000
  resourceVersion: \"{rv}\"
  uid: 9a1c2a4e-{i:04x}-4c1e-9a7e-0d2f5b8c{i:04x}
spec:
  containers:
  - args: [--port=8080, --log-level=info]
    image: ghcr.io/example/web-api:1.4.0
    imagePullPolicy: IfNotPresent
    name: web
    ports:
    - containerPort: 8080
      name: http
      protocol: TCP
    readinessProbe:
      httpGet: {{path: /healthz, port: 8080, scheme: HTTP}}
      periodSeconds: 10
    resources:
      limits: {{memory: 512Mi}}
      requests: {{cpu: 250m, memory: 256Mi}}
  dnsPolicy: ClusterFirst
  nodeName: node-{i:05}
  restartPolicy: Always
  schedulerName: default-scheduler
  terminationGracePeriodSeconds: 30
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  topologySpreadConstraints:
  - labelSelector:
      matchLabels: {{app: web}}
    maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
status:
  hostIP: 10.0.{a}.{b}
  phase: Running
  podIP: 10.{a}.{b}.7
  qosClass: Burstable
  startTime: \"2026-01-01T00:00:00Z\"
",
            rv = 900_000 + i,
            a = i / 256,
            b = i % 256,
        );
    }
    out
}

fn serde_yaml_documents(text: &str) -> usize {
    serde_yaml::Deserializer::from_str(text)
        .map(|document| serde_yaml::Value::deserialize(document).expect("valid YAML"))
        .filter(|value| !value.is_null())
        .count()
}

fn kix_documents(text: &str, limits: &Limits) -> usize {
    let documents = parse_stream(text, limits);
    assert!(documents.iter().all(Result::is_ok), "valid YAML");
    documents.len()
}

fn bench(c: &mut Criterion) {
    let packages = package_yaml();
    let snapshot = snapshot_yaml(10_000);
    assert_eq!(serde_yaml_documents(&packages), kix_documents(&packages, &Limits::PACKAGE));
    assert_eq!(kix_documents(&snapshot, &Limits::SNAPSHOT), 10_000);
    assert_eq!(fast_stream(&snapshot, &Limits::SNAPSHOT).map(|documents| documents.len()), Some(10_000));

    let mut group = c.benchmark_group("packages");
    group.throughput(Throughput::Bytes(packages.len() as u64));
    group.bench_function("serde_yaml", |b| b.iter(|| serde_yaml_documents(black_box(&packages))));
    group.bench_function("kix_yaml", |b| b.iter(|| kix_documents(black_box(&packages), &Limits::PACKAGE)));
    group.finish();

    let mut group = c.benchmark_group("snapshot_10k");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(snapshot.len() as u64));
    group.bench_function("serde_yaml", |b| b.iter(|| serde_yaml_documents(black_box(&snapshot))));
    group.bench_function("kix_yaml", |b| b.iter(|| kix_documents(black_box(&snapshot), &Limits::SNAPSHOT)));
    group.bench_function("kix_fast", |b| {
        b.iter(|| fast_stream(black_box(&snapshot), &Limits::SNAPSHOT).map(|documents| documents.len()))
    });
    group.bench_function("saphyr_events_only", |b| {
        b.iter(|| {
            let mut parser = saphyr_parser::Parser::new_from_str(black_box(&snapshot));
            let mut n = 0usize;
            while let Some(Ok(_)) = parser.next_event() {
                n += 1;
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
