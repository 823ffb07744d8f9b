//! `kix capacity`'s text report: a table per cluster (one row per workload: its pod, its pods and
//! requests at each level with the resolved one marked, what is left after the worst loss), each
//! instance's total and its cost one level up and down, and the cluster's total against its
//! allocatable.

use kix_compiler::sizing::cost::{cpu, memory};
use kix_engines::capacity::{AfterLoss, Cost, Delta, Report};
use std::fmt::Write as _;

/// The text report.
pub fn render_text(report: &Report, width: crate::table::Width) -> String {
    let mut out = String::new();
    for cluster in &report.clusters {
        let _ = writeln!(out, "cluster {}", cluster.name);
        let mut rows = vec![
            ["INSTANCE", "WORKLOAD", "POD", "NONE", "POD", "NODE", "ZONE", "AFTER WORST LOSS"]
                .map(String::from)
                .to_vec(),
        ];
        for instance in &cluster.instances {
            for w in &instance.workloads {
                let mut row = vec![
                    instance.name.clone(),
                    format!("{}/{}", w.kind, w.name),
                    format!("{} {}", cpu(w.pod.cpu_millicores), memory(w.pod.memory_bytes)),
                ];
                for (level, cost) in &w.levels {
                    let mark = if *level == w.level { "*" } else { "" };
                    row.push(format!("{mark}{}", cost_cell(cost)));
                }
                row.push(w.after_worst_loss.as_ref().map_or("-".into(), loss_cell));
                rows.push(row);
            }
        }
        out.push_str(&crate::table::render(&rows, width));
        for instance in &cluster.instances {
            let step = |d: &Option<Delta>, word: &str| {
                d.map(|d| format!(", {word} to {}: {}", d.level, delta_cell(&d))).unwrap_or_default()
            };
            let _ = writeln!(
                out,
                "  instance {} at {}: {}{}{}",
                instance.name,
                instance.level,
                cost_cell(&instance.requests),
                step(&instance.up, "up"),
                step(&instance.down, "down")
            );
        }
        // Units spelt out: a whole number of cores ("5") reads as a count beside the pod count otherwise.
        let r = &cluster.requests;
        let total = format!("{} pods, {} cpu, {} memory", r.replicas, cpu(r.cpu_millicores), memory(r.memory_bytes));
        match (&cluster.allocatable, &cluster.share) {
            (Some(a), Some(share)) => {
                let _ = writeln!(
                    out,
                    "  total {total} of {} cpu, {} memory allocatable ({:.1}% cpu, {:.1}% memory)",
                    cpu(a.cpu_millicores),
                    memory(a.memory_bytes),
                    share.cpu * 100.0,
                    share.memory * 100.0
                );
            }
            _ => {
                let _ = writeln!(out, "  total {total} (no [[nodePools]] inventory: no allocatable to compare)");
            }
        }
        if let Some(grow) = &cluster.can_grow_to {
            let _ = writeln!(
                out,
                "  can grow to {} cpu, {} memory allocatable with the pools' maxNodesPerZone (the cluster autoscaler's maxima)",
                cpu(grow.cpu_millicores),
                memory(grow.memory_bytes)
            );
        }
        out.push('\n');
    }
    out.push_str(
        "* the resolved level; requests as the scheduler counts them (kix capacity --format json for exact units)\n",
    );
    out
}

fn cost_cell(cost: &Cost) -> String {
    format!("{} ({}, {})", cost.replicas, cpu(cost.cpu_millicores), memory(cost.memory_bytes))
}

fn delta_cell(d: &Delta) -> String {
    let sign = |n: i64| if n > 0 { "+" } else { "" };
    format!(
        "{}{} pods, {}{} cpu, {}{} memory",
        sign(d.replicas),
        d.replicas,
        sign(d.cpu_millicores),
        cpu(d.cpu_millicores),
        sign(d.memory_bytes),
        memory(d.memory_bytes)
    )
}

fn loss_cell(loss: &AfterLoss) -> String {
    let fit = match loss.replacements_fit {
        Some(true) => ", replacements fit".to_string(),
        Some(false) => {
            let short: Vec<String> = loss.nodes_short.iter().map(|(domain, n)| format!("{domain} {n}")).collect();
            format!(", replacements do not fit (nodes short: {})", short.join(", "))
        }
        None => String::new(),
    };
    format!("{} left ({:.3}){fit}", loss.pods_left, loss.surviving_fraction)
}
