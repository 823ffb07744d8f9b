//! `kix admission`'s text report: each drifted object with what the policies would say to it.

use kix_diag::words::counted;
use kix_engines::admission::DryRun;

/// The report: a headline, then each drifted object and its messages, then what the snapshot lacks.
pub fn render_text(report: &DryRun) -> String {
    let mut text = format!(
        "cluster {} ([admission] enforce = \"{}\"): {} of {} would be refused today\n",
        report.cluster,
        report.enforce,
        report.drifted.len(),
        counted(report.guarded, "guarded object", "guarded objects"),
    );
    for drift in &report.drifted {
        text.push_str(&format!("\n  {} {}/{}\n", drift.kind, drift.namespace, drift.name));
        for message in &drift.messages {
            text.push_str(&format!("    {message}\n"));
        }
    }
    if !report.absent.is_empty() {
        text.push_str(&format!(
            "\n{} not in the snapshot (not applied yet, or the snapshot lacks their kinds): {}\n",
            counted(report.absent.len(), "guarded object", "guarded objects"),
            report.absent.join(", ")
        ));
    }
    text
}
