//! What `kix build` prints beside its files: the summary table (instances, levels, requests and
//! workloads per cluster, then the objects written once for several instances) and its JSON, and what
//! `build --check` found (the files that differ, with `--diff` a patch `git apply` accepts).

use kix_compiler::summary::{ClusterSummary, WorkloadSummary};
use std::fmt::Write as _;
use std::path::Path;

/// The build summary: per cluster, each instance's package version, requested -> resolved level, the
/// requests its pods take at that level (`kix capacity` has the other levels), and each workload's replicas and whether kix derived a budget for it.
/// One text per cluster, in cluster order, to be written one after the other.
pub fn summary_text(clusters: &[ClusterSummary], width: crate::table::Width) -> Vec<String> {
    use rayon::prelude::*;
    // Each cluster's table is fitted to its own rows: made on every core (a fleet's table is 100,000 rows, and
    // an unchanged rebuild does little else, issue 42), and not joined: copying a fleet's 10 MB into one
    // string took a package change's rebuild 30 ms on one core.
    clusters.par_iter().map(|cluster| cluster_text(cluster, width)).collect()
}

/// One cluster's part of the summary: `cluster NAME`, its table, then its shared objects.
fn cluster_text(cluster: &ClusterSummary, width: crate::table::Width) -> String {
    // By address, with foldhash (std's SipHash was a tenth of a fleet's table).
    type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
    let mut out = String::new();
    out.push_str(&format!("cluster {}\n", cluster.name));
    // The cells a cluster's instances repeat, each made once: the requests by their value, the package by
    // its shared name and version, the workloads by their shared list (a summary read back from its record,
    // issue 42, shares one list among the instances of a package version at a level).
    let mut requests: Vec<((i64, i64), String)> = Vec::new();
    let mut packages: HashMap<(usize, usize), String> = HashMap::default();
    let mut workload_cells: HashMap<usize, String> = HashMap::default();
    let address = |text: &std::sync::Arc<str>| std::sync::Arc::as_ptr(text).cast::<u8>() as usize;
    for instance in &cluster.instances {
        let cost = (instance.requests.cpu_millicores, instance.requests.memory_bytes);
        if !requests.iter().any(|(known, _)| *known == cost) {
            requests.push((cost, kix_engines::capacity::requests_text(&instance.requests)));
        }
        let package = (address(&instance.package), address(&instance.package_version));
        packages.entry(package).or_insert_with(|| format!("{} {}", instance.package, instance.package_version));
        let list = std::sync::Arc::as_ptr(&instance.workloads).cast::<WorkloadSummary>() as usize;
        workload_cells.entry(list).or_insert_with(|| workloads_cell(&instance.workloads));
    }
    // Rows of five cells each, no vector apiece (a fleet's table is 100,000 rows).
    let mut rows: Vec<[&str; 5]> = Vec::with_capacity(cluster.instances.len() + 1);
    rows.push(["INSTANCE", "PACKAGE", "LEVEL", "REQUESTS", "WORKLOADS"]);
    let levels: Vec<String> = (cluster.instances.iter())
        .filter(|instance| instance.requested != instance.level)
        .map(|instance| format!("{} -> {}", instance.requested, instance.level))
        .collect();
    let mut lowered = levels.iter();
    for instance in &cluster.instances {
        let level = if instance.requested == instance.level {
            instance.level.as_str()
        } else {
            lowered.next().map_or("", String::as_str)
        };
        let cost = (instance.requests.cpu_millicores, instance.requests.memory_bytes);
        let requests_text = requests.iter().find(|(known, _)| *known == cost).map_or("", |(_, text)| text.as_str());
        let package = (address(&instance.package), address(&instance.package_version));
        let list = std::sync::Arc::as_ptr(&instance.workloads).cast::<WorkloadSummary>() as usize;
        rows.push([
            instance.name.as_str(),
            packages.get(&package).map_or("", String::as_str),
            level,
            requests_text,
            workload_cells.get(&list).map_or("", String::as_str),
        ]);
    }
    out.push_str(&crate::table::render(&rows, width));
    for shared in &cluster.shared {
        let line = format!(
            "  shared ({}): {} (instances {})",
            kix_kube::kix_names::SHARED_FILE,
            shared.object,
            shared.instances.join(", ")
        );
        out.push_str(&wrapped(&line, width));
    }
    out
}

/// An instance's `WORKLOADS` cell: `name xN` per workload, `+pdb` where kix derived a budget (`+pdb group`
/// for a group's); `-` without workloads.
fn workloads_cell(workloads: &[WorkloadSummary]) -> String {
    if workloads.is_empty() {
        return "-".into();
    }
    let mut cell = String::new();
    for (index, w) in workloads.iter().enumerate() {
        if index > 0 {
            cell.push_str(", ");
        }
        cell.push_str(&w.name);
        let _ = write!(cell, " x{}", w.replicas);
        match &w.group_budget {
            Some(group) => {
                cell.push_str(" +pdb ");
                cell.push_str(group);
            }
            None if w.derived_pdb => cell.push_str(" +pdb"),
            None => {}
        }
    }
    cell
}

/// The build summary as JSON: `{"clusters": [{"cluster", "instances": [{..., "workloads": [...]}]}]}`.
pub fn summary_json(clusters: &[ClusterSummary]) -> serde_json::Map<String, serde_json::Value> {
    let cluster = |c: &ClusterSummary| {
        // By name, as the text summary and every report list instances (the summary keeps them so).
        let instances: Vec<serde_json::Value> = c
            .instances
            .iter()
            .map(|i| {
                let workloads: Vec<serde_json::Value> = i
                    .workloads
                    .iter()
                    .map(|w| {
                        let spread: Vec<&str> = w.spreads.keys.iter().map(|key| &**key).collect();
                        serde_json::json!({
                            "kind": &*w.kind, "name": &*w.name, "level": w.level.as_str(),
                            "replicas": w.replicas, "pdb": w.derived_pdb, "spread": spread,
                            "hard": w.spreads.hard_key(), "explicit_placement": w.explicit_placement,
                            "requests": w.requests,
                        })
                    })
                    .collect();
                serde_json::json!({
                    "instance": i.name, "namespace": i.namespace, "package": &*i.package,
                    "version": &*i.package_version, "requested": i.requested.as_str(), "level": i.level.as_str(),
                    "requests": i.requests, "workloads": workloads,
                })
            })
            .collect();
        let shared: Vec<serde_json::Value> =
            c.shared.iter().map(|s| serde_json::json!({ "object": s.object, "instances": s.instances })).collect();
        serde_json::json!({ "cluster": c.name, "instances": instances, "shared": shared })
    };
    let mut report = serde_json::Map::new();
    report.insert("clusters".into(), clusters.iter().map(cluster).collect());
    report
}

/// `kix build --check --format json`'s `differences`: each file that differs, how, and with `--diff` its diff.
pub fn differences_json(differences: &[kix_compiler::emit::Difference], diff: bool, root: &Path) -> serde_json::Value {
    use kix_compiler::emit::Difference;
    let listed = differences.iter().map(|difference| {
        let (change, text) = match difference {
            Difference::Missing { .. } => ("missing", None),
            Difference::Extra { .. } => ("extra", None),
            Difference::Changed { found, written, .. } => {
                let path = patch_path(difference.path(), root);
                let text = similar::TextDiff::from_lines(found.as_str(), written.as_str());
                let header = (format!("a/{path}"), format!("b/{path}"));
                (
                    "changed",
                    diff.then(|| text.unified_diff().context_radius(3).header(&header.0, &header.1).to_string()),
                )
            }
        };
        let mut entry = serde_json::json!({ "change": change, "file": difference.path().display().to_string() });
        if let Some(text) = text {
            entry["diff"] = serde_json::Value::from(text);
        }
        entry
    });
    listed.collect()
}

/// `kix build --check`'s report: one line per file that differs, and with `diff` a unified diff of each change.
pub fn render_differences(differences: &[kix_compiler::emit::Difference], diff: bool, root: &Path) -> String {
    use kix_compiler::emit::Difference;
    let mut out = String::new();
    for difference in differences {
        let path = difference.path().display();
        match difference {
            Difference::Missing { .. } => out.push_str(&format!("missing  {path}\n")),
            Difference::Extra { .. } => out.push_str(&format!("extra    {path} (a build removes it)\n")),
            Difference::Changed { found, written, .. } => {
                out.push_str(&format!("changed  {path}\n"));
                if diff {
                    let text = similar::TextDiff::from_lines(found.as_str(), written.as_str());
                    let path = patch_path(difference.path(), root);
                    let header = (format!("a/{path}"), format!("b/{path}"));
                    out.push_str(&text.unified_diff().context_radius(3).header(&header.0, &header.1).to_string());
                }
            }
        }
    }
    out.push_str(&format!(
        "kix: {} from what `kix build` would write; run `kix build` and commit the result\n",
        kix_diag::words::counted(differences.len(), "file differs", "files differ")
    ));
    out
}

/// A changed file's path in `--diff` headers as `git apply` (run in the kix root) accepts it: relative to
/// the root when the output directory is under it, without `.` components (git refuses `a/./out/...`).
fn patch_path(path: &Path, root: &Path) -> String {
    let clean = |p: &Path| -> std::path::PathBuf {
        p.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
    };
    let path = clean(path);
    let relative = path.strip_prefix(clean(root)).map(Path::to_path_buf).unwrap_or(path);
    relative.display().to_string()
}

/// A line broken at spaces to fit `width`, the lines after the first indented 4 (as the table's last
/// column continues).
fn wrapped(line: &str, width: crate::table::Width) -> String {
    let Some(width) = width.0 else { return format!("{line}\n") };
    let mut out = String::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let indent = if out.is_empty() { "" } else { "    " };
        if !current.trim().is_empty() && indent.len() + current.len() + 1 + word.len() > width {
            out.push_str(indent);
            out.push_str(current.trim_end());
            out.push('\n');
            current.clear();
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !out.is_empty() {
        out.push_str("    ");
    }
    out.push_str(&current);
    out.push('\n');
    out
}
