//! `kix explain --cluster --instance`'s text: one line per step of the derivation, then each
//! workload's steps, then the findings about the instance.

use kix_engines::explain::{Derivation, Step};
use std::fmt::Write as _;

/// The derivation as text: one line per step, then each workload's, then the findings.
pub fn render_text(derivation: &Derivation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cluster {}, instance {} (package {} {}, namespace {})",
        derivation.cluster, derivation.instance, derivation.package, derivation.version, derivation.namespace
    );
    if let Some(note) = &derivation.what_if {
        let _ = writeln!(out, "  {note}");
    }
    let line = |out: &mut String, indent: &str, step: &Step| {
        let mut text = format!("{indent}{:<17} {}", step.step, step.value);
        if !step.why.is_empty() {
            let _ = write!(text, ": {}", step.why);
        }
        if let Some(from) = &step.from {
            let _ = write!(text, "  [{from}]");
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    for step in &derivation.steps {
        line(&mut out, "  ", step);
    }
    for workload in &derivation.workloads {
        let _ = writeln!(out, "  workload {}", workload.workload);
        for step in &workload.steps {
            line(&mut out, "    ", step);
        }
    }
    // Every diagnostic about the instance (or the chosen workload), rendered without colour; acknowledged
    // warnings last, marked so.
    let plain = |d: &kix_diag::Diagnostic| d.render(kix_diag::Style::Plain);
    let found = derivation.diagnostics.iter().map(plain);
    let acknowledged =
        derivation.diagnostics.acknowledged().iter().map(|d| format!("(acknowledged by allow) {}", plain(d)));
    let findings: Vec<String> = found.chain(acknowledged).collect();
    if findings.is_empty() {
        let _ = writeln!(out, "  no diagnostics");
    } else {
        let _ = writeln!(out, "  diagnostics:");
        for finding in &findings {
            for text in finding.lines() {
                let _ = writeln!(out, "    {text}");
            }
        }
    }
    out
}
