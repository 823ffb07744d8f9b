//! `kix audit`'s text report: per instance and workload, the pods as bound now against the level,
//! the worst loss and the drift, then the snapshot's other workloads with `--all`.

use kix_engines::audit::AuditReport;
use kix_sim::WorkloadAudit;
use std::fmt::Write as _;

/// The text report: per workload its pods, spreads, survival, drift, budgets and remedy.
pub fn render_text(report: &AuditReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "cluster {} ({} nodes, {} pods in the snapshot)", report.cluster, report.nodes, report.pods);
    let mut audited = 0;
    for instance in &report.instances {
        for w in &instance.workloads {
            let subject = format!("{}/{} {}/{}", report.cluster, instance.instance, w.kind, w.name);
            audited += render_workload(&mut out, &subject, w, "the compiled template");
        }
    }
    if let Some(u) = &report.uncompiled {
        let _ = writeln!(
            out,
            "  not compiled by kix (--all): {}, their own spread constraints at the cluster's level {}",
            kix_diag::words::plural(u.workloads.len(), "workload"),
            u.level
        );
        for w in &u.workloads {
            let subject = format!("{} {}/{}/{}", report.cluster, w.kind, w.namespace, w.name);
            audited += render_workload(&mut out, &subject, w, "its own template");
        }
        for problem in &u.unread {
            let _ = writeln!(out, "  not audited, unreadable: {problem}");
        }
    }
    let failures = report.failures();
    let _ = writeln!(
        out,
        "\nkix audit: {} audited, {} their level as placed now{}",
        kix_diag::words::plural(audited, "workload"),
        kix_diag::words::counted(failures, "fails", "fail"),
        if failures == 0 { "" } else { " (see remedies)" }
    );
    out
}

/// One workload's lines; 1 when it was audited, 0 when it has no pods.
fn render_workload(out: &mut String, subject: &str, w: &WorkloadAudit, template: &str) -> usize {
    if w.absent {
        let _ = writeln!(out, "  {subject}: no pods in the snapshot (not deployed): not audited");
        return 0;
    }
    let verdict = if w.fails { format!("FAILS {}", w.level) } else { format!("meets {}", w.level) };
    let _ = writeln!(out, "  {subject}: level {}, {} replicas: {verdict}", w.level, w.replicas);
    let p = &w.pods;
    let _ = writeln!(
        out,
        "    pods: {} running of {}; {} pending, {} not ready, {} terminating",
        p.running,
        p.total,
        p.pending.len(),
        p.not_ready.len(),
        p.terminating.len()
    );
    for (label, names) in [("pending", &p.pending), ("not ready", &p.not_ready), ("terminating", &p.terminating)] {
        if !names.is_empty() {
            let _ = writeln!(out, "      {label}: {}", names.join(", "));
        }
    }
    for s in &w.spreads {
        let counts: Vec<String> = s.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
        let _ = writeln!(
            out,
            "    spread {} ({}, maxSkew {}): {}; skew {}{}",
            s.topology_key,
            s.when_unsatisfiable,
            s.max_skew,
            if counts.len() > 12 { format!("{} domains", counts.len()) } else { counts.join(" ") },
            s.skew,
            if s.violated { " > maxSkew: VIOLATED" } else { "" }
        );
    }
    if let Some(s) = &w.survival {
        let _ = writeln!(out, "    worst {} loss: {}: {}", s.topology_key, s.worst_domain, survival_words(s));
    }
    if !w.drift.is_empty() {
        let _ = writeln!(
            out,
            "    drift: {} the constraints kix compiles (output not applied, or changed in the cluster): {}",
            kix_diag::words::counted(w.drift.len(), "pod lacks", "pods lack"),
            w.drift.join(", ")
        );
    }
    for budget in &w.blocked_budgets {
        let _ = writeln!(out, "    budget {budget}: disruptionsAllowed 0, a drain stops here");
    }
    if let Some(r) = &w.remedy {
        let counts: Vec<String> = r.counts.iter().map(|(d, n)| format!("{d}={n}")).collect();
        let _ = writeln!(
            out,
            "    remedy (simulated rollout of {template}): ends {}{}; {}",
            if counts.is_empty() { "with no pods running".to_string() } else { counts.join(" ") },
            if r.pending > 0 { format!(", {} pending", r.pending) } else { String::new() },
            match &r.survival {
                Some(s) if r.pending > 0 => format!(
                    "still FAILS: the rollout stalls with {} Pending (as placed, {} loss: {})",
                    kix_diag::words::plural(r.pending, "pod"),
                    s.worst_domain,
                    survival_words(s)
                ),
                Some(s) if r.survives => format!("survives ({} loss: {})", s.worst_domain, survival_words(s)),
                Some(s) => format!("still FAILS ({} loss: {})", s.worst_domain, survival_words(s)),
                None if r.survives => "survives".to_string(),
                None => "still FAILS".to_string(),
            }
        );
        for command in &r.commands {
            let _ = writeln!(out, "      $ {command}");
        }
        for alternative in &r.otherwise {
            let _ = writeln!(out, "      what would: {alternative}");
        }
    }
    1
}

fn survival_words(s: &kix_sim::Survival) -> String {
    let need = if s.required == 1 { "one".to_string() } else { format!("a majority, {}", s.required) };
    format!(
        "{} of {} left running, {} needed: {}",
        s.running_after,
        s.of,
        need,
        if s.survives { "survives" } else { "FAILS" }
    )
}
