//! genfleet: writes synthetic kix roots for the performance figures of docs/performance.md (issue 11).
//!
//! Three shapes, one per kind of figure:
//!
//! * a **fleet** (the default): `--clusters N --instances M --workloads K OUT` writes `OUT/clusters/`
//!   (N cluster files of M instances each) and `OUT/packages/` (eight packages of K workloads each, one of
//!   them in two versions). The mix is what a platform team owns: clusters at `zone` (three zones, some
//!   with an extra failure-domain key), `node` (one zone) and `pod`; instances overriding their level;
//!   packages with a ceiling, a workload capped at `none`, Deployments and StatefulSets (with their
//!   headless Services), a HorizontalPodAutoscaler, a workload bringing its own spread and budget
//!   (explicit placement), a Service per workload and a ConfigMap per package. With `--nodes P` every
//!   cluster also gets an inventory of P nodes (for `kix verify`). With `--kustomize`, the same fleet as
//!   a kustomize tree under `OUT/kustomize/`: one base per package directory and, per cluster, one
//!   overlay per instance with its Namespace, setting its namespace and labels and patching in the replicas, spread
//!   constraints, autoscaler minimum and PodDisruptionBudgets that kix derives (read from kix's own
//!   compile of the fleet, so both sides produce the same placement). With `--zones Z` every cluster
//!   declares Z availability zones (`--clusters 1 --instances 100000 --zones 100000`: issue 19's
//!   benchmark of the duplicate checks).
//! * a **verify** cluster: `--verify-nodes N --replicas R OUT` writes one cluster `big` of N nodes in
//!   three zones and one instance of a Deployment with R replicas at level `zone` (the shape of issue
//!   11's verify figures); with `--verify-workloads W`, W Deployments sharing the R replicas (kix
//!   verifies at most 10,000 replicas per workload: 5,000 nodes and 15,000 replicas are W = 3); with
//!   `--anti-affinity`, every Deployment requires pod anti-affinity on `kubernetes.io/hostname`.
//! * **kube-prometheus** instances: `--kube-prometheus N OUT` copies the real-world corpus package
//!   (`tests/realworld/packages/kube-prometheus`, written for `monitoring`) to `OUT/packages/` and writes
//!   N instances of it, each in a namespace of its own, one per cluster (issue 20's shapes independent of
//!   the namespace); with `--in-one-cluster`, all N in one cluster `kp`, which kix refuses (K0417: every
//!   instance emits the ClusterRoleBindings and the Roles kept in `kube-system` and `default` under the
//!   same names, binding its own ServiceAccounts), a root for `kix check`.
//! * the **scheduler_perf** shape: `--scheduler-perf OUT` writes `OUT/state.yaml` (5,000 nodes in three
//!   zones, 5,000 existing pods, as `kubectl get -o yaml` prints them) and `OUT/spread.yaml` (a
//!   Deployment of 5,000 replicas with a hard zone spread), for `kix simulate --state`.
//!
//! Output is deterministic: the same arguments write the same bytes.
//!
//! Run: `cargo run --release --example genfleet -- --clusters 100 --instances 100 --workloads 3 /tmp/fleet`

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How many package templates the fleet uses (instances pick them round-robin).
const PACKAGES: usize = 8;

/// The command line, parsed (also built directly by benches/build_fleet.rs, which includes this file).
#[derive(Debug, Default)]
pub struct Args {
    pub clusters: usize,
    pub instances: usize,
    pub workloads: usize,
    pub nodes: usize,
    pub kustomize: bool,
    pub verify_nodes: usize,
    pub replicas: usize,
    /// Verify shape: the replicas split over this many Deployments of the one instance (default 1).
    pub verify_workloads: usize,
    /// Verify shape: the cluster's and the replicas' level, `zone` (default) or `node` (issue 20).
    pub verify_level: String,
    pub scheduler_perf: bool,
    /// Verify shape: also write `state.yaml`, the cluster as it runs for `kix audit` (issue 23).
    pub audit_state: bool,
    /// Fleet shape: every cluster declares this many availability zones (`z-00000`, ...) instead of
    /// one to three (issue 19's duplicate checks; 0: the usual mix).
    pub zones: usize,
    /// Verify shape: every Deployment also requires pod anti-affinity on `kubernetes.io/hostname`
    /// against its own pods (issue 20 part 2).
    pub anti_affinity: bool,
    /// kube-prometheus shape: this many instances of the corpus package in one cluster (0: not this shape).
    pub kube_prometheus: usize,
    /// kube-prometheus shape: every instance in one cluster instead of one cluster each.
    pub in_one_cluster: bool,
    pub out: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { clusters: 10, instances: 100, workloads: 3, ..Args::default() };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or_else(|| format!("{name} takes a number"))
        };
        match arg.as_str() {
            "--clusters" => args.clusters = number("--clusters")?,
            "--instances" => args.instances = number("--instances")?,
            "--workloads" => args.workloads = number("--workloads")?.max(1),
            "--nodes" => args.nodes = number("--nodes")?,
            "--verify-nodes" => args.verify_nodes = number("--verify-nodes")?,
            "--replicas" => args.replicas = number("--replicas")?,
            "--verify-workloads" => args.verify_workloads = number("--verify-workloads")?,
            "--zones" => args.zones = number("--zones")?,
            "--kube-prometheus" => args.kube_prometheus = number("--kube-prometheus")?,
            "--in-one-cluster" => args.in_one_cluster = true,
            "--verify-level" => args.verify_level = it.next().ok_or("--verify-level takes zone or node")?,
            "--kustomize" => args.kustomize = true,
            "--scheduler-perf" => args.scheduler_perf = true,
            "--audit-state" => args.audit_state = true,
            "--anti-affinity" => args.anti_affinity = true,
            other if other.starts_with("--") => return Err(format!("unknown flag {other}")),
            other => args.out = Some(PathBuf::from(other)),
        }
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(Args { out: None, .. }) => Err("missing OUT directory".to_string()),
        other => other,
    };
    let args = args.unwrap_or_else(|message| {
        eprintln!(
            "genfleet: {message}\nusage: genfleet [--clusters N] [--instances M] [--workloads K] [--nodes P] \
             [--zones Z] [--kustomize] OUT\n       genfleet --verify-nodes N --replicas R [--verify-workloads W] [--verify-level node] [--anti-affinity] [--audit-state] OUT\n       genfleet --kube-prometheus N [--in-one-cluster] OUT\n       genfleet --scheduler-perf OUT"
        );
        std::process::exit(2)
    });
    let out = args.out.clone().expect("checked above");
    let result = if args.scheduler_perf {
        scheduler_perf(&out)
    } else if args.kube_prometheus > 0 {
        kube_prometheus(&out, args.kube_prometheus, args.in_one_cluster)
    } else if args.verify_nodes > 0 {
        let level = if args.verify_level.is_empty() { "zone" } else { args.verify_level.as_str() };
        verify_cluster(&out, args.verify_nodes, args.replicas.max(1), args.verify_workloads.max(1), level).and_then(
            |()| {
                if args.anti_affinity {
                    anti_affinity(&out)?;
                }
                if args.audit_state {
                    audit_state(&out, args.verify_nodes, args.replicas.max(1), args.verify_workloads.max(1))
                } else {
                    Ok(())
                }
            },
        )
    } else {
        fleet(&out, &args)
    };
    if let Err(error) = result {
        eprintln!("genfleet: {error}");
        std::process::exit(1);
    }
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// A package template: its directory, name, version and what makes it different.
struct Template {
    dir: String,
    name: String,
    version: &'static str,
    index: usize,
}

fn templates() -> Vec<Template> {
    let mut list: Vec<Template> = (0..PACKAGES)
        .map(|index| Template { dir: format!("pkg-{index}"), name: format!("pkg-{index}"), version: "1.1.0", index })
        .collect();
    // An older release of pkg-0, kept for clusters that pin it.
    list.push(Template { dir: "pkg-0-1.0".into(), name: "pkg-0".into(), version: "1.0.0", index: 0 });
    list
}

/// The fleet root (and, with `--kustomize`, its kustomize twin).
pub fn fleet(out: &Path, args: &Args) -> std::io::Result<()> {
    for template in templates() {
        let dir = out.join("packages").join(&template.dir);
        write(&dir.join("kix.toml"), &package_toml(&template, args.workloads))?;
        write(&dir.join("workloads.yaml"), &package_yaml(&template, args.workloads))?;
    }
    for c in 0..args.clusters {
        write(&out.join("clusters").join(format!("{}.toml", cluster_name(c))), &cluster_toml(c, args))?;
    }
    if args.kustomize {
        kustomize(out)?;
    }
    Ok(())
}

fn cluster_name(c: usize) -> String {
    format!("c{c:04}")
}

/// Workload `w` of a package: a StatefulSet every third, else a Deployment.
fn is_stateful(w: usize) -> bool {
    w % 3 == 2
}

fn package_toml(t: &Template, workloads: usize) -> String {
    let mut text = format!("[meta]\nname = \"{}\"\nversion = \"{}\"\n", t.name, t.version);
    if t.index % 4 == 1 {
        text.push_str("[meta.availability]\nmax = \"node\"\n");
    }
    for w in 0..workloads {
        let _ = write!(text, "\n[workloads.app-{w}]\n");
        if t.index % 8 == 5 && w == workloads - 1 && workloads > 1 {
            text.push_str("availability = { max = \"none\" }\n");
        } else if is_stateful(w) {
            text.push_str("replicas = { none = 1, pod = 3 }\n[workloads.app-");
            let _ = writeln!(text, "{w}.pdb]\nunhealthyPodEvictionPolicy = \"AlwaysAllow\"");
        } else {
            text.push_str("replicas = { none = 1, pod = 2, zone = 3 }\n");
        }
    }
    text
}

fn package_yaml(t: &Template, workloads: usize) -> String {
    let (name, version) = (&t.name, t.version);
    let mut text = format!(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-config
  labels:
    app.kubernetes.io/name: {name}
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: \"a,b,c\"
  config.yaml: |
    listen: :8080
    upstream: http://backend.example.com
"
    );
    for w in 0..workloads {
        let app = format!("app-{w}");
        let kind = if is_stateful(w) { "StatefulSet" } else { "Deployment" };
        let service_name = if is_stateful(w) { format!("  serviceName: {app}\n") } else { String::new() };
        let explicit = t.index % 4 == 3 && w == 0;
        let _ = write!(
            text,
            "---
apiVersion: apps/v1
kind: {kind}
metadata:
  name: {app}
  labels:
    app.kubernetes.io/name: {name}
    app.kubernetes.io/component: {app}
spec:
{service_name}  selector:
    matchLabels:
      app.kubernetes.io/name: {name}
      app.kubernetes.io/component: {app}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {name}
        app.kubernetes.io/component: {app}
    spec:
"
        );
        if explicit {
            let _ = write!(
                text,
                "      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              app.kubernetes.io/component: {app}
"
            );
        }
        let _ = write!(
            text,
            "      containers:
        - name: {app}
          image: registry.example.com/{name}/{app}:{version}
          args: [\"--port=8080\", \"--config=/etc/{app}/config.yaml\"]
          envFrom:
            - configMapRef:
                name: {name}-config
          ports:
            - name: http
              containerPort: 8080
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              memory: 256Mi
---
apiVersion: v1
kind: Service
metadata:
  name: {app}
spec:
"
        );
        if is_stateful(w) {
            text.push_str("  clusterIP: None\n");
        }
        let _ = write!(
            text,
            "  selector:
    app.kubernetes.io/name: {name}
    app.kubernetes.io/component: {app}
  ports:
    - name: http
      port: 80
      targetPort: http
"
        );
        if explicit {
            let _ = write!(
                text,
                "---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {app}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/component: {app}
"
            );
        }
        if t.index % 4 == 2 && w == 0 {
            let _ = write!(
                text,
                "---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {app}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {app}
  minReplicas: 1
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 70
"
            );
        }
    }
    text
}

/// Cluster `c`: its level and substrate by `c % 4`, instances picking packages round-robin.
fn cluster_toml(c: usize, args: &Args) -> String {
    let many: Vec<String> = (0..args.zones).map(|z| format!("z-{z:05}")).collect();
    let zones: Vec<&str> = match c % 4 {
        _ if args.zones > 0 => many.iter().map(String::as_str).collect(),
        0 | 2 => vec!["z-a", "z-b", "z-c"],
        1 => vec!["z-a"],
        _ => vec!["z-a", "z-b"],
    };
    let level = ["zone", "node", "zone", "pod"][c % 4];
    let mut text = format!(
        "availability = \"{level}\"\n# Ceilings, single-active workloads and autoscalers raised: by design here.\nallow = \
         [\"K0307\", \"K0308\", \"K0432\"]\n\n[capabilities]\nmultiNode = true\navailabilityZones = [{}]\n",
        zones.iter().map(|z| format!("\"{z}\"")).collect::<Vec<_>>().join(", ")
    );
    if c % 4 == 2 {
        text.push_str("\n[failureDomains]\nextra = [\"example.com/rack\"]\n");
    }
    for i in 0..args.instances {
        let package = (i + c) % PACKAGES;
        // Each instance creates its namespace (K0428 otherwise: a fresh cluster refuses the output).
        let _ =
            write!(text, "\n[[instances]]\nname = \"i{i:04}\"\npackage = \"pkg-{package}\"\ncreateNamespace = true\n");
        if package == 0 && i % 2 == 1 {
            text.push_str("version = \"~1.0\"\n");
        }
        if i % 10 == 3 {
            text.push_str("availability = \"pod\"\n");
        }
        if i % 25 == 7 {
            let _ = writeln!(text, "namespace = \"team-{}\"", i / 25);
        }
    }
    if args.nodes > 0 {
        let per_zone = args.nodes.div_ceil(zones.len());
        let _ = write!(
            text,
            "\n[[nodePools]]\nname = \"general\"\nzones = [{}]\nnodesPerZone = {per_zone}\nlabels = {{ \
             \"example.com/rack\" = \"r1\" }}\nallocatable = {{ cpu = \"16\", memory = \"64Gi\", pods = 110 }}\n",
            zones.iter().map(|z| format!("\"{z}\"")).collect::<Vec<_>>().join(", ")
        );
    }
    text
}

/// The kube-prometheus shape: the corpus package as it is, and `instances` instances `kp-NNNN` of it, each in
/// its own namespace (an instance's namespace is its name), in three-zone clusters `kp-NNNN` of one instance
/// each or (`one_cluster`) all in cluster `kp`. The clusters acknowledge what the corpus's own `prod`
/// instance does (K0308: single-pod workloads by design) and the strings that name `monitoring` (K0209).
pub fn kube_prometheus(out: &Path, instances: usize, one_cluster: bool) -> std::io::Result<()> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/realworld/packages/kube-prometheus");
    copy_dir(&corpus, &out.join("packages").join("kube-prometheus"))?;
    let header = "availability = \"zone\"\nallow = [\"K0308\", \"K0209\"]\n\n[capabilities]\nmultiNode = true\n\
                  availabilityZones = [\"z-a\", \"z-b\", \"z-c\"]\n";
    let entry = |i: usize| format!("\n[[instances]]\nname = \"kp-{i:04}\"\npackage = \"kube-prometheus\"\n");
    if one_cluster {
        let text: String = std::iter::once(header.to_string()).chain((0..instances).map(entry)).collect();
        return write(&out.join("clusters").join("kp.toml"), &text);
    }
    for i in 0..instances {
        write(&out.join("clusters").join(format!("kp-{i:04}.toml")), &format!("{header}{}", entry(i)))?;
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The kustomize twin: bases per package directory, an overlay per instance, a kustomization per cluster.
fn kustomize(out: &Path) -> std::io::Result<()> {
    let root = out.join("kustomize");
    for template in templates() {
        let base = root.join("base").join(&template.dir);
        std::fs::create_dir_all(&base)?;
        std::fs::copy(out.join("packages").join(&template.dir).join("workloads.yaml"), base.join("workloads.yaml"))?;
        write(&base.join("kustomization.yaml"), "resources:\n- workloads.yaml\n")?;
    }
    let compiled = kix::compile::compile(&kix::compile::Selection { root: out.to_path_buf(), ..Default::default() });
    if !compiled.ok() {
        return Err(std::io::Error::other("the generated fleet does not compile"));
    }
    for cluster in &compiled.clusters {
        let dir = root.join("clusters").join(&cluster.name);
        let mut list = String::from("resources:\n");
        for instance in &cluster.instances {
            let _ = writeln!(list, "- {}", instance.name);
            overlay(&dir.join(&instance.name), instance)?;
        }
        write(&dir.join("kustomization.yaml"), &list)?;
    }
    Ok(())
}

/// One instance's overlay: its Namespace, namespace, kix's labels, and a patch per workload.
fn overlay(dir: &Path, instance: &kix::api::InstancePlan) -> std::io::Result<()> {
    let base = if instance.package == "pkg-0" && instance.package_version == "1.0.0" {
        "pkg-0-1.0".to_string()
    } else {
        instance.package.clone()
    };
    let name = &instance.name;
    let mut text = format!(
        "resources:\n- namespace.yaml\n- ../../../base/{base}\n- budgets.yaml\nnamespace: {}\nlabels:\n- pairs:\n    \
         app.kubernetes.io/managed-by: kix\n    app.kubernetes.io/instance: {name}\n    kix.dev/instance: {name}\n\
         patches:\n",
        instance.namespace
    );
    let mut budgets = String::new();
    for workload in &instance.workloads {
        let kind = workload.kind.as_str();
        let app = &workload.name;
        let mut patch = format!(
            "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {app}\n  annotations:\n    \
             kix.dev/availability-requested: {}\n    kix.dev/availability-resolved: {}\n",
            workload.requested.as_str(),
            workload.level.as_str()
        );
        if workload.autoscaler.is_none() {
            let _ = writeln!(patch, "spec:\n  replicas: {}", workload.replicas);
        } else {
            patch.push_str("spec:\n");
        }
        if !workload.spreads.is_empty() {
            patch.push_str("  template:\n    spec:\n      topologySpreadConstraints:\n");
            for spread in &workload.spreads {
                let (key, hard) = (&spread.key, spread.hard);
                let _ = write!(
                    patch,
                    "      - maxSkew: 1\n        topologyKey: {key}\n        whenUnsatisfiable: {}\n        \
                     labelSelector:\n          matchLabels:\n            app.kubernetes.io/name: {}\n            \
                     app.kubernetes.io/component: {app}\n        matchLabelKeys: [pod-template-hash]\n        \
                     nodeTaintsPolicy: Honor\n",
                    if hard { "DoNotSchedule" } else { "ScheduleAnyway" },
                    instance.package
                );
            }
        }
        let file = format!("{}-{app}.yaml", kind.to_lowercase());
        write(&dir.join(&file), &patch)?;
        let _ = writeln!(text, "- path: {file}");
        if let Some(autoscaler) = &workload.autoscaler {
            let hpa = format!(
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: {}\nspec:\n  \
                 minReplicas: {}\n  maxReplicas: {}\n",
                autoscaler.name, autoscaler.min_replicas, autoscaler.max_replicas
            );
            write(&dir.join("hpa.yaml"), &hpa)?;
            text.push_str("- path: hpa.yaml\n");
        }
        if workload.derived_pdb() {
            let _ = write!(
                budgets,
                "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {app}\nspec:\n  \
                 maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: {}\n      \
                 app.kubernetes.io/component: {app}\n",
                instance.package
            );
        }
    }
    write(&dir.join("budgets.yaml"), &budgets)?;
    // The Namespace kix writes for the instance (`createNamespace`).
    write(
        &dir.join("namespace.yaml"),
        &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {}\n", instance.namespace),
    )?;
    write(&dir.join("kustomization.yaml"), &text)
}

/// One cluster of `nodes` nodes in three zones and one instance at `level` (zone or node) of `workloads`
/// Deployments sharing `replicas` replicas (one Deployment is named `api`, several `api-0`, `api-1`, ...).
pub fn verify_cluster(out: &Path, nodes: usize, replicas: usize, workloads: usize, level: &str) -> std::io::Result<()> {
    write(
        &out.join("clusters/big.toml"),
        &format!(
            "availability = \"{level}\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"z-a\", \"z-b\", \
             \"z-c\"]\n[[instances]]\nname = \"web\"\npackage = \"web\"\ncreateNamespace = true\n[[nodePools]]\nname = \"general\"\nzones = \
             [\"z-a\", \"z-b\", \"z-c\"]\nnodesPerZone = {}\nallocatable = {{ cpu = \"64\", memory = \"256Gi\", pods = \
             110 }}\n",
            nodes.div_ceil(3)
        ),
    )?;
    let names: Vec<String> =
        if workloads == 1 { vec!["api".to_string()] } else { (0..workloads).map(|i| format!("api-{i}")).collect() };
    let mut toml = String::from("[meta]\nname = \"web\"\nversion = \"1.0.0\"\n");
    let mut yaml = String::new();
    for (i, name) in names.iter().enumerate() {
        // The first Deployments take the remainder.
        let share = replicas / workloads + usize::from(i < replicas % workloads);
        let _ = write!(toml, "[workloads.{name}]\nreplicas = {{ none = 1, {level} = {share} }}\n");
        if i > 0 {
            yaml.push_str("---\n");
        }
        let _ = write!(
            yaml,
            "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: api
        image: example/api:1
        resources:
          requests: {{cpu: 10m, memory: 16Mi}}
"
        );
    }
    write(&out.join("packages/web/kix.toml"), &toml)?;
    write(&out.join("packages/web/api.yaml"), &yaml)
}

/// Gives every Deployment [`verify_cluster`] wrote a required pod anti-affinity on
/// `kubernetes.io/hostname` against its own pods (`--anti-affinity`).
pub fn anti_affinity(out: &Path) -> std::io::Result<()> {
    let path = out.join("packages/web/api.yaml");
    let text = std::fs::read_to_string(&path)?;
    let documents: Vec<String> = text
        .split("---\n")
        .map(|doc| {
            let name = doc.split("name: ").nth(1).and_then(|rest| rest.lines().next()).unwrap_or_default();
            doc.replacen(
                "    spec:\n      containers:",
                &format!(
                    "    spec:\n      affinity:\n        podAntiAffinity:\n          \
                     requiredDuringSchedulingIgnoredDuringExecution:\n          - labelSelector:\n              \
                     matchLabels: {{app: {name}}}\n            topologyKey: kubernetes.io/hostname\n      containers:"
                ),
                1,
            )
        })
        .collect();
    write(&path, &documents.join("---\n"))
}

/// The verify shape's cluster as it runs (`kix audit --cluster big --state OUT/state.yaml`): `nodes`
/// nodes in the three zones, and every Deployment's pods bound round robin over them (balanced: pod k
/// of the fleet on node k mod nodes), with the spread constraints kix compiles, Ready.
pub fn audit_state(out: &Path, nodes: usize, replicas: usize, workloads: usize) -> std::io::Result<()> {
    let mut state = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..nodes {
        let zone = ["z-a", "z-b", "z-c"][i % 3];
        let _ = write!(
            state,
            "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-{i:05}\n    labels:\n      \
             kubernetes.io/hostname: node-{i:05}\n      topology.kubernetes.io/zone: {zone}\n  status:\n    \
             allocatable: {{cpu: \"64\", memory: 256Gi, pods: \"110\"}}\n"
        );
    }
    let mut k = 0;
    for w in 0..workloads {
        let name = if workloads == 1 { "api".to_string() } else { format!("api-{w}") };
        let share = replicas / workloads + usize::from(w < replicas % workloads);
        for r in 0..share {
            let _ = write!(
                state,
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {name}-5d8f7c9b6a-{r:05}\n    namespace: web\n    \
                 labels: {{app: {name}, pod-template-hash: 5d8f7c9b6a}}\n  spec:\n    nodeName: node-{:05}\n    \
                 containers:\n    - name: api\n      image: example/api:1\n      resources: {{requests: {{cpu: 10m, \
                 memory: 16Mi}}}}\n    topologySpreadConstraints:\n    - {{maxSkew: 1, topologyKey: \
                 kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {{matchLabels: {{app: \
                 {name}}}}}}}\n    - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: \
                 DoNotSchedule, labelSelector: {{matchLabels: {{app: {name}}}}}}}\n  status:\n    phase: Running\n    \
                 conditions:\n    - {{type: Ready, status: \"True\"}}\n",
                k % nodes
            );
            k += 1;
        }
    }
    write(&out.join("state.yaml"), &state)
}

/// scheduler_perf TopologySpreading/5000Nodes_5000Pods as a snapshot and a Deployment to place.
pub fn scheduler_perf(out: &Path) -> std::io::Result<()> {
    let mut state = String::new();
    for i in 0..5000 {
        let zone = ["zone-a", "zone-b", "zone-c"][i % 3];
        let _ = write!(
            state,
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:05}\n  labels:\n    kubernetes.io/hostname: \
             node-{i:05}\n    kubernetes.io/os: linux\n    topology.kubernetes.io/zone: {zone}\nstatus:\n  \
             allocatable:\n    cpu: \"4\"\n    memory: 32Gi\n    pods: \"110\"\n"
        );
    }
    for i in 0..5000 {
        let _ = write!(
            state,
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: init-{i:05}\n  namespace: default\nspec:\n  nodeName: \
             node-{i:05}\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n    resources:\n      \
             requests:\n        cpu: 100m\n        memory: 500Mi\nstatus:\n  phase: Running\n"
        );
    }
    write(&out.join("state.yaml"), &state)?;
    write(
        &out.join("spread.yaml"),
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: spread
  namespace: default
spec:
  replicas: 5000
  selector:
    matchLabels: {color: blue}
  template:
    metadata:
      labels: {color: blue}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {color: blue}}}
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 100m, memory: 500Mi}
",
    )
}
