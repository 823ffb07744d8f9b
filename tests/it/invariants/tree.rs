//! Writing a generated tree as a kix root (cluster files, package manifests, YAML streams) and
//! compiling it through the library (`kix::compile::compile`).

use super::model::*;
use kix::compile::{Compiled, Selection, compile};
use kix_kube::level::Level;
use kix_kube::selector::Labels;
use kix_yaml::Value;
use std::path::Path;

pub fn yaml(text: &str) -> Value {
    kix_yaml::from_str(text).unwrap_or_else(|e| panic!("generator YAML does not parse ({e}):\n{text}"))
}

pub fn workload_name(index: usize) -> String {
    format!("w{index}")
}

/// The labels every generated pod template carries.
pub fn template_labels(name: &str) -> Labels {
    [("app".to_string(), name.to_string()), ("tier".to_string(), "backend".to_string())].into_iter().collect()
}

pub fn selector_value(name: &str, style: u8) -> Value {
    yaml(&match style {
        0 => format!("{{matchLabels: {{app: {name}}}}}"),
        1 => format!("{{matchExpressions: [{{key: app, operator: In, values: [{name}]}}]}}"),
        2 => format!("{{matchLabels: {{app: {name}}}, matchExpressions: [{{key: tier, operator: Exists}}]}}"),
        _ => format!(
            "{{matchLabels: {{app: {name}}}, matchExpressions: [{{key: pod-template-hash, operator: DoesNotExist}}]}}"
        ),
    })
}

/// The explicit constraints a workload brings, exactly as written.
pub fn explicit_constraints(name: &str, workload: &WorkloadModel) -> Option<Value> {
    let constraints = workload.explicit.as_ref()?;
    let keys = [NODE_KEY, ZONE_KEY, "example.com/rack"];
    let mut seen = Vec::new();
    let mut list = Vec::new();
    for &(key, hard, skew, with_selector, min_domains) in constraints {
        if seen.contains(&(key, hard)) {
            continue; // (topologyKey, whenUnsatisfiable) must be unique
        }
        seen.push((key, hard));
        let mut text = format!(
            "{{maxSkew: {skew}, topologyKey: {}, whenUnsatisfiable: {}",
            keys[key],
            if hard { "DoNotSchedule" } else { "ScheduleAnyway" }
        );
        if with_selector {
            text.push_str(&format!(", labelSelector: {{matchLabels: {{app: {name}}}}}"));
        }
        if let (true, Some(min)) = (hard, min_domains) {
            text.push_str(&format!(", minDomains: {min}"));
        }
        text.push('}');
        list.push(yaml(&text));
    }
    Some(Value::Sequence(list))
}

pub fn workload_document(index: usize, workload: &WorkloadModel) -> Value {
    let name = workload_name(index);
    let kind = match workload.kind {
        Kind::Deployment => "Deployment",
        Kind::StatefulSet => "StatefulSet",
    };
    let replicas = workload.manifest_replicas.map(|r| format!("  replicas: {r}\n")).unwrap_or_default();
    let service_name = if workload.kind == Kind::StatefulSet { "  serviceName: svc\n" } else { "" };
    let mut document = yaml(&format!(
        "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n  labels: {{team: t1}}\nspec:\n{replicas}\
         {service_name}  selector: null\n  template:\n    metadata:\n      labels: {{app: {name}, tier: backend}}\n    \
         spec:\n      containers: [{{name: main, image: example/{name}:1}}]\n"
    ));
    document["spec"]["selector"] = selector_value(&name, workload.selector_style);
    if let Some(constraints) = explicit_constraints(&name, workload) {
        document["spec"]["template"]["spec"]
            .as_mapping_mut()
            .unwrap()
            .insert("topologySpreadConstraints".into(), constraints);
    }
    document
}

pub fn shipped_pdb_document(index: usize, workload: &WorkloadModel) -> Option<Value> {
    let max_unavailable = workload.shipped_pdb?;
    let name = workload_name(index);
    let budget = if max_unavailable { "maxUnavailable: 1" } else { "minAvailable: 50%" };
    let mut document = yaml(&format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {name}-budget\nspec:\n  {budget}\n  \
         selector: null\n"
    ));
    document["spec"]["selector"] = selector_value(&name, workload.selector_style);
    Some(document)
}

/// The YAML files of one version: (file index, documents), documents in file order.
pub fn documents(version: &VersionModel) -> [Vec<Value>; 2] {
    let mut files: [Vec<Value>; 2] = [Vec::new(), Vec::new()];
    if version.service {
        files[0].push(yaml(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  selector: {app: w0}\n  ports: [{port: 80}]\n",
        ));
    }
    for (index, workload) in version.workloads.iter().enumerate() {
        files[workload.file].push(workload_document(index, workload));
        files[workload.file].extend(shipped_pdb_document(index, workload));
    }
    files
}

pub fn manifest(name: &str, version: &VersionModel) -> String {
    let mut text = format!("[meta]\nname = \"{name}\"\nversion = \"{}\"\n", version.version);
    if let Some(ceiling) = version.ceiling {
        text.push_str(&format!("availability = {{ max = \"{ceiling}\" }}\n"));
    }
    for (index, workload) in version.workloads.iter().enumerate() {
        text.push_str(&format!("\n[workloads.{}]\n", workload_name(index)));
        if let Some(steps) = &workload.mapping {
            let named: Vec<String> = Level::ALL
                .iter()
                .zip(steps)
                .filter_map(|(level, count)| count.map(|c| format!("{level} = {c}")))
                .collect();
            text.push_str(&format!("replicas = {{ {} }}\n", named.join(", ")));
        }
        if let Some(ceiling) = workload.ceiling {
            text.push_str(&format!("availability = {{ max = \"{ceiling}\" }}\n"));
        }
        if let Some(policy) = workload.policy {
            text.push_str(&format!("pdb = {{ unhealthyPodEvictionPolicy = \"{policy}\" }}\n"));
        }
    }
    text
}

pub fn package_name(index: usize) -> String {
    format!("p{index}")
}

pub fn instance_name(index: usize) -> String {
    format!("i{index}")
}

pub fn instance_namespace(index: usize, instance: &InstanceModel) -> String {
    if instance.own_namespace { format!("ns-{}", instance_name(index)) } else { instance_name(index) }
}

pub fn cluster_file(cluster: &ClusterModel, packages: &[PackageModel], reverse_instances: bool) -> String {
    let mut text = format!("availability = \"{}\"\n[capabilities]\n", cluster.level);
    if let Some(multi) = cluster.multi_node {
        text.push_str(&format!("multiNode = {multi}\n"));
    }
    if let Some(zones) = cluster.zones {
        let names: Vec<String> = (0..zones).map(|z| format!("\"z{z}\"")).collect();
        text.push_str(&format!("availabilityZones = [{}]\n", names.join(", ")));
    }
    text.push_str("[failureDomains]\n");
    if let Some(key) = cluster.node_key {
        text.push_str(&format!("node = \"{key}\"\n"));
    }
    if let Some(key) = cluster.zone_key {
        text.push_str(&format!("zone = \"{key}\"\n"));
    }
    let extra: Vec<String> = cluster.extra.iter().map(|k| format!("\"{k}\"")).collect();
    text.push_str(&format!("extra = [{}]\n", extra.join(", ")));
    let mut order: Vec<usize> = (0..cluster.instances.len()).collect();
    if reverse_instances {
        order.reverse();
    }
    for index in order {
        let instance = &cluster.instances[index];
        let package = &packages[instance.package];
        text.push_str(&format!(
            "\n[[instances]]\nname = \"{}\"\npackage = \"{}\"\n",
            instance_name(index),
            package_name(instance.package)
        ));
        match instance.requirement {
            Requirement::Any => {}
            Requirement::Exact(i) => {
                text.push_str(&format!("version = \"={}\"\n", package.versions[i % package.versions.len()].version))
            }
            Requirement::Major(i) => text.push_str(&format!(
                "version = \"^{}\"\n",
                package.versions[i % package.versions.len()].version.split('.').next().unwrap()
            )),
        }
        if instance.own_namespace {
            text.push_str(&format!("namespace = \"{}\"\n", instance_namespace(index, instance)));
        }
        if let Some(level) = instance.level {
            text.push_str(&format!("availability = \"{level}\"\n"));
        }
    }
    text
}

pub fn render_stream(documents: &[Value]) -> String {
    documents.iter().map(|d| format!("---\n{}", kix_yaml::emit::to_string(d))).collect()
}

/// Writes the tree under `root`. `permuted` lists every input in another order: package
/// directories renamed so they sort the other way round, the two YAML files swapped, documents
/// in each file reversed, instances in each cluster file reversed.
pub fn write_model(tree: &TreeModel, root: &Path, permuted: bool) {
    let mut files: Vec<(String, String)> = Vec::new();
    for (index, cluster) in tree.clusters.iter().enumerate() {
        files.push((format!("clusters/c{index}.toml"), cluster_file(cluster, &tree.packages, permuted)));
    }
    let directories: Vec<(usize, usize)> = tree
        .packages
        .iter()
        .enumerate()
        .flat_map(|(p, package)| (0..package.versions.len()).map(move |v| (p, v)))
        .collect();
    for (position, &(p, v)) in directories.iter().enumerate() {
        let version = &tree.packages[p].versions[v];
        let rank = if permuted { directories.len() - 1 - position } else { position };
        let dir = format!("packages/d{rank:02}-{}", package_name(p));
        files.push((format!("{dir}/kix.toml"), manifest(&package_name(p), version)));
        let names = if permuted { ["b.yml", "a.yaml"] } else { ["a.yaml", "b.yml"] };
        for (file, mut documents) in documents(version).into_iter().enumerate() {
            if permuted {
                documents.reverse();
            }
            if !documents.is_empty() {
                files.push((format!("{dir}/{}", names[file]), render_stream(&documents)));
            }
        }
    }
    crate::support::write_tree(root, files);
}

pub fn compile_tree(tree: &TreeModel, permuted: bool) -> Compiled {
    let dir = tempfile::tempdir().unwrap();
    write_model(tree, dir.path(), permuted);
    compile(&Selection { root: dir.path().to_path_buf(), ..Selection::default() })
}

/// What a full build of the root into `out` (under the root) reported and wrote: each finding rendered,
/// whether it wrote, and the files of `out` when it did.
pub type BuildResult = (Vec<String>, bool, std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>);

/// Builds `root` into `root/out` as `kix build -q` does (a full build, reusing what the previous build into
/// the same directory recorded).
pub fn build_into(root: &Path, out: &str) -> BuildResult {
    use kix::compile::{BuildRequest, Output, build};
    let request = BuildRequest {
        selection: Selection { root: root.to_path_buf(), ..Selection::default() },
        output: Output::Directory(Some(root.join(out))),
        summary: false,
    };
    let built = build(&request).expect("a full build into a directory is a valid request");
    let rendered = built.compiled.diagnostics.iter().map(|d| d.render(kix_diag::Style::Plain)).collect();
    let written = built.written.is_some();
    let files = if written { crate::support::read_tree(&root.join(out)) } else { Default::default() };
    (rendered, written, files)
}

/// Moves the output manifest's mtime past every time it records, so the next build trusts its entries (a
/// build right after another may share its clock tick: git's racy case). None after a build that failed.
pub fn trust_manifest(root: &Path, out: &str) {
    let manifest = root.join(format!(".kix/.{out}.kix-manifest"));
    if let Ok(file) = std::fs::File::options().append(true).open(manifest) {
        file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(3600)).unwrap();
    }
}
