//! `kix verify --report FILE.html`: the verify report as one page a person can look at.
//!
//! The page is self-contained: its CSS and a few lines of script (expand and collapse all, and a
//! legend that highlights one workload's pods) are inline, pods are inline SVG, nothing is fetched.
//! Per cluster it draws the zones as columns and their nodes as boxes with every verified
//! workload's pods where the rollout placed them (one colour per workload; each instance is placed
//! on its own copy of the nodes, drawn together here), the verdict per workload, then per workload
//! each scenario: its coded findings (K06xx, as the diagnostics print them) and each of its steps
//! (a domain lost, a node drained, the update, the placement with ties broken against the level)
//! as the placement before and after, the pods lost, where each replacement went and after how
//! long, and what stayed Pending with the scheduler's reason. The data is the JSON report's
//! (`kix verify --format json`): the page draws `topology`, each workload's `placement` and each
//! step's `before` and `after`, and the browser test reads them back from the page's `data-`
//! attributes.
//!
//! Every string a user wrote (names, labels, messages) goes through [`html::esc`]; the output is a
//! function of the reports alone (no clock, maps in key order), byte for byte.

mod grid;
mod html;

use crate::text::verify::verdict_row;
use grid::{Legend, Mark, NodeState, View};
use html::{Glyph, esc, swatch};
use kix_engines::verify::findings::{Role, role_in};
use kix_engines::verify::{ClusterReport, NodeReport, NodesFrom};
use kix_sim::{Scenario, ScenarioResult, Step, WorkloadVerdict};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

const STYLE: &str = include_str!("report_html/report.css");
const SCRIPT: &str = include_str!("report_html/report.js");

/// The whole page.
pub fn render_html(reports: &[ClusterReport]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let clusters: Vec<&str> = reports.iter().map(|r| r.cluster.as_str()).collect();
    let _ = write!(out, "<title>kix verify: {}</title><style>{STYLE}</style></head><body>", esc(&clusters.join(", ")));
    let failures: usize = reports.iter().map(ClusterReport::failures).sum();
    let checked: usize = reports.iter().flat_map(|r| &r.instances).map(|i| i.workloads.len()).sum();
    let _ = write!(
        out,
        "<header><h1>kix verify</h1><p class=\"summary\" data-checked=\"{checked}\" data-failures=\"{failures}\">{checked} workload(s) checked, {}</p>",
        if failures == 0 {
            "all meet their level".to_string()
        } else {
            format!("<strong class=\"fail\">{failures} do not meet their level</strong>")
        }
    );
    out.push_str(concat!(
        "<p class=\"key\">",
        "<span><svg width=\"16\" height=\"16\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" width=\"14\" height=\"14\" rx=\"3\" fill=\"#666\"/></svg> running</span>",
        "<span><svg width=\"16\" height=\"16\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" width=\"14\" height=\"14\" rx=\"3\" fill=\"#666\"/><circle cx=\"8\" cy=\"8\" r=\"3\" fill=\"#fff\"/></svg> new (replacement or new revision)</span>",
        "<span><svg width=\"16\" height=\"16\" aria-hidden=\"true\"><rect x=\"1.5\" y=\"1.5\" width=\"13\" height=\"13\" rx=\"3\" fill=\"none\" stroke=\"#666\" stroke-dasharray=\"2 2\"/><path d=\"M4 4L12 12M12 4L4 12\" stroke=\"#666\" stroke-width=\"1.5\"/></svg> lost</span>",
        "<span><svg width=\"16\" height=\"16\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" width=\"14\" height=\"14\" rx=\"3\" fill=\"#666\" fill-opacity=\"0.35\" stroke=\"#666\"/><path d=\"M4 12L12 4\" stroke=\"#b00020\" stroke-width=\"2\"/></svg> still bound to a failed node</span>",
        "<span><span class=\"node-key failed\"></span> failed node</span><span><span class=\"node-key drained\"></span> drained node</span>",
        "</p><p class=\"controls\"><button type=\"button\" id=\"expand-all\">Expand all</button> <button type=\"button\" id=\"collapse-all\">Collapse all</button></p></header><main>"
    ));
    for report in reports {
        cluster(&mut out, report);
    }
    let _ = writeln!(out, "</main><script>{SCRIPT}</script></body></html>");
    out
}

/// `instance/Kind/name`: how the page names a workload in `data-workload`.
fn workload_key(instance: &str, w: &WorkloadVerdict) -> String {
    format!("{instance}/{}/{}", w.kind, w.name)
}

fn cluster(out: &mut String, report: &ClusterReport) {
    let name = esc(&report.cluster);
    let _ = write!(
        out,
        "<section class=\"cluster\" data-cluster=\"{name}\" data-nodes-from=\"{}\"><h2>cluster {name}</h2>",
        report.nodes_from.as_str()
    );
    if report.nodes_from == NodesFrom::None {
        let _ = write!(
            out,
            "<p class=\"muted\">not verified: no [[nodePools]] in clusters/{name}.toml and no --state</p></section>"
        );
        return;
    }
    let zones: BTreeSet<&str> = report.topology.iter().filter_map(|n| n.zone.as_deref()).collect();
    let unzoned = report.topology.iter().filter(|n| n.zone.is_none()).count();
    let zoned = match (zones.len(), unzoned) {
        (0, _) => "without a zone label".to_string(),
        (z, 0) => format!("in {z} zone{}", kix_diag::words::s(z)),
        (z, n) => format!("in {z} zone{} ({n} without a zone label)", kix_diag::words::s(z)),
    };
    let _ = write!(
        out,
        "<p class=\"muted\">{} node{} from {} {zoned} (zone key <code>{}</code>, node key <code>{}</code>); every instance is placed on them together, as the cluster runs them.{}</p>",
        report.nodes,
        kix_diag::words::s(report.nodes),
        report.nodes_from.as_str(),
        esc(&report.zone_key),
        esc(&report.node_key),
        // Issue 41: an inventory's node names are kix's, not the cluster's.
        if report.nodes_from == NodesFrom::Inventory {
            " The node names are made up by kix from the pools (<code>pool-zone-n</code>): the cluster's own nodes have names of their own."
        } else {
            ""
        }
    );
    let mut legend = Legend { workloads: Vec::new() };
    for instance in &report.instances {
        for w in &instance.workloads {
            let label = format!("{} {}/{}", instance.instance, w.kind, w.name);
            legend.workloads.push((workload_key(&instance.instance, w), label, html::colour(legend.workloads.len())));
        }
    }
    // The placement every scenario starts from, every instance's pods on the cluster's nodes.
    let mut marks: BTreeMap<&str, Vec<Mark>> = BTreeMap::new();
    let mut index = 0;
    for instance in &report.instances {
        for w in &instance.workloads {
            for (pod, node) in &w.placement {
                marks.entry(node.as_str()).or_default().push(Mark {
                    workload: index,
                    glyph: Glyph::Kept,
                    pod: pod.clone(),
                });
            }
            index += 1;
        }
    }
    out.push_str("<h3>Placement after the rollout</h3>");
    let view =
        View { name: "placement", nodes: report.topology.iter().collect(), marks, states: BTreeMap::new(), hidden: 0 };
    grid::render(out, &view, &legend, &report.node_key);
    out.push_str("<h3>Verdicts</h3>");
    verdicts(out, report, &legend);
    notices(out, report);
    out.push_str("<h3>Scenarios per workload</h3>");
    let nodes: BTreeMap<&str, &NodeReport> = report.topology.iter().map(|n| (n.name.as_str(), n)).collect();
    let mut index = 0;
    for instance in &report.instances {
        for w in &instance.workloads {
            workload(out, &Context { report, legend: &legend, nodes: &nodes }, index, w);
            index += 1;
        }
    }
    out.push_str("</section>");
}

/// The verdict table, one row per workload, the legend's colour beside its name.
fn verdicts(out: &mut String, report: &ClusterReport, legend: &Legend) {
    out.push_str("<table class=\"verdicts\"><thead><tr><th>instance</th><th>workload</th><th>level</th><th>replicas</th><th>worst-case running</th><th>replacements</th><th>verdict</th></tr></thead><tbody>");
    let mut index = 0;
    for instance in &report.instances {
        for w in &instance.workloads {
            let (key, _, colour) = &legend.workloads[index];
            let row = verdict_row(&instance.instance, w);
            let _ = write!(
                out,
                "<tr class=\"legend-entry\" data-workload=\"{}\" data-verdict=\"{}\"><td>{}</td><td>{} {}</td>",
                esc(key),
                if w.meets_level { "meets" } else { "fails" },
                esc(&row[0]),
                swatch(colour),
                esc(&row[1])
            );
            for cell in &row[2..6] {
                let _ = write!(out, "<td>{}</td>", esc(cell));
            }
            let class = if w.meets_level { "pass" } else { "fail" };
            let _ = write!(out, "<td class=\"{class}\">{}</td></tr>", esc(&row[6]));
            index += 1;
        }
    }
    out.push_str("</tbody></table>");
}

/// What was not verified, and the nodes' missing keys (K0610).
fn notices(out: &mut String, report: &ClusterReport) {
    let unverified: Vec<String> = report
        .instances
        .iter()
        .flat_map(|i| i.unverified.iter().map(move |u| format!("{} {}/{}", i.instance, u.kind, u.name)))
        .collect();
    if !unverified.is_empty() {
        out.push_str(
            "<p>Not verified (custom resources whose pods an operator runs; kix does not place them, K0435):</p><ul>",
        );
        for line in unverified {
            let _ = write!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>");
    }
    if !report.missing_keys.is_empty() {
        out.push_str("<ul class=\"warnings\">");
        for missing in &report.missing_keys {
            let _ = write!(out, "<li><code>K0610</code> {}</li>", esc(&missing.message(&report.cluster)));
        }
        out.push_str("</ul>");
    }
}

/// One workload: its rollout's Pending pods, then every scenario with its findings and steps.
/// What every step of a cluster's workloads is drawn with.
struct Context<'a> {
    report: &'a ClusterReport,
    legend: &'a Legend,
    /// The cluster's nodes by name.
    nodes: &'a BTreeMap<&'a str, &'a NodeReport>,
}

/// A placement a step starts from, with its pods by node (read once per workload, not per step).
struct Before<'a> {
    by_node: BTreeMap<&'a str, Vec<&'a str>>,
}

impl<'a> Before<'a> {
    fn of(placement: &'a BTreeMap<String, String>) -> Before<'a> {
        let mut by_node: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (pod, node) in placement {
            by_node.entry(node.as_str()).or_default().push(pod.as_str());
        }
        Before { by_node }
    }

    fn on(&self, node: &str) -> &[&'a str] {
        self.by_node.get(node).map_or(&[], Vec::as_slice)
    }
}

fn workload(out: &mut String, context: &Context<'_>, index: usize, w: &WorkloadVerdict) {
    let (key, label, colour) = &context.legend.workloads[index];
    let verdict = if w.meets_level { format!("meets {}", w.level) } else { format!("FAILS {}", w.level) };
    let _ = write!(
        out,
        "<details class=\"workload\" data-workload=\"{}\"{}><summary>{} <strong>{}</strong> <span class=\"{}\">{}</span></summary>",
        esc(key),
        if w.meets_level { "" } else { " open" },
        swatch(colour),
        esc(label),
        if w.meets_level { "pass" } else { "fail" },
        esc(&verdict)
    );
    if !w.pending.is_empty() {
        out.push_str("<p>The rollout left Pending:</p>");
        pending(out, &w.pending);
    }
    for scenario in &w.scenarios {
        let _ = write!(
            out,
            "<section class=\"scenario\" data-scenario=\"{}\" data-pass=\"{}\"><h4>{} <span class=\"{}\">{}</span></h4>",
            scenario.scenario,
            scenario.pass,
            scenario.scenario,
            if scenario.pass { "pass" } else { "fail" },
            if scenario.pass { "passes" } else { "FAILS" }
        );
        findings(out, scenario);
        // The tie-break's later steps start from its adversarial placement, its first step's outcome.
        let adversarial = scenario.steps.first().filter(|s| !s.adversarial).map(|s| s.apply(&w.placement));
        let (placement, adversarial) = (Before::of(&w.placement), adversarial.as_ref().map(Before::of));
        for (s, step) in scenario.steps.iter().enumerate() {
            let before = match (&adversarial, step.adversarial) {
                (Some(adversarial), true) => adversarial,
                _ => &placement,
            };
            step_view(out, context, index, before, scenario, step, !scenario.pass && s == 0);
        }
        out.push_str("</section>");
    }
    out.push_str("</details>");
}

/// A scenario's findings, each with its code as the diagnostics give it.
fn findings(out: &mut String, scenario: &ScenarioResult) {
    if scenario.findings.is_empty() {
        return;
    }
    out.push_str("<ul class=\"findings\">");
    for finding in &scenario.findings {
        let (class, code) = match role_in(finding, scenario) {
            Role::Failure(code) if !scenario.pass => ("error", Some(code)),
            Role::Failure(_) => ("fact", None),
            Role::Blocker(code) => ("note", Some(code)),
            Role::Fact => ("fact", None),
        };
        let code = code.map_or(String::new(), |c| format!("<code>{}</code> ", c.id()));
        let _ = write!(out, "<li class=\"{class}\">{code}{}</li>", esc(&finding.message));
    }
    out.push_str("</ul>");
}

fn pending(out: &mut String, pods: &BTreeMap<String, String>) {
    out.push_str("<ul class=\"pending\">");
    for (pod, why) in pods {
        let _ = write!(out, "<li data-pod=\"{}\"><code>{}</code> Pending: {}</li>", esc(pod), esc(pod), esc(why));
    }
    out.push_str("</ul>");
}

/// One step: what it did in a sentence, the nodes it touched before and after, what stayed Pending.
#[allow(clippy::too_many_arguments)]
fn step_view(
    out: &mut String,
    context: &Context<'_>,
    index: usize,
    before: &Before<'_>,
    scenario: &ScenarioResult,
    step: &Step,
    open: bool,
) {
    let Context { report, legend, .. } = context;
    let state = match scenario.scenario {
        Scenario::Drain => NodeState::Drained,
        _ => NodeState::Failed,
    };
    // Pods still bound to a failed node (Terminating, or never evicted); a drained node's pods
    // whose eviction was refused just keep running there.
    let failed = |node: &str| state == NodeState::Failed && step.nodes.iter().any(|n| n == node);
    let kept = |node: &str| before.on(node).iter().filter(|pod| !step.gone.contains_key(**pod)).count();
    let stranded: usize = step.nodes.iter().filter(|n| failed(n)).map(|n| kept(n)).sum();
    let (lost_word, new_word) = match scenario.scenario {
        Scenario::Drain => ("evicted", "replacement"),
        Scenario::RollingUpdate => ("replaced", "new revision"),
        Scenario::TieBreak if step.nodes.is_empty() => ("placed elsewhere", "placed instead"),
        _ => ("lost", "replacement"),
    };
    let mut parts = Vec::new();
    if !step.gone.is_empty() {
        let list = names(step.gone.iter().map(|(p, n)| format!("{p} on {n}")));
        parts.push(format!("{} {lost_word} ({list})", step.gone.len()));
    }
    if !step.placed.is_empty() {
        let when = match step.replaced_after_seconds {
            Some(0) => " at once".to_string(),
            Some(s) => format!(" after {s}s"),
            None => String::new(),
        };
        let list = names(step.placed.iter().map(|(p, n)| format!("{p} to {n}")));
        parts.push(format!("{} {new_word}(s){when} ({list})", step.placed.len()));
    }
    if stranded > 0 {
        parts.push(format!("{stranded} still bound to the failed node(s)"));
    }
    if !step.pending.is_empty() {
        parts.push(format!("{} Pending", step.pending.len()));
    }
    if parts.is_empty() {
        parts.push("no pod of the workload moved".to_string());
    }
    let _ = write!(
        out,
        "<details class=\"step\" data-step=\"{}\"{}><summary>{}: {}</summary><div class=\"before-after\">",
        esc(&step.step),
        if open { " open" } else { "" },
        esc(&step.step),
        esc(&parts.join("; "))
    );
    // The nodes the step touched: those it failed or drained, those pods left or landed on.
    let shown: BTreeSet<&str> =
        step.gone.values().chain(step.placed.values()).chain(&step.nodes).map(String::as_str).collect();
    let nodes: Vec<&NodeReport> = shown.iter().filter_map(|n| context.nodes.get(n).copied()).collect();
    let hidden = report.topology.len() - nodes.len();
    let mark = |pod: &str, glyph| Mark { workload: index, glyph, pod: pod.to_string() };
    let mut marks: BTreeMap<&str, Vec<Mark>> = BTreeMap::new();
    for &node in &shown {
        for pod in before.on(node) {
            marks.entry(node).or_default().push(mark(pod, Glyph::Kept));
        }
    }
    out.push_str("<div class=\"side\"><h5>before</h5>");
    let view = View { name: "before", nodes: nodes.clone(), marks, states: BTreeMap::new(), hidden };
    grid::render(out, &view, legend, &report.node_key);
    let mut marks: BTreeMap<&str, Vec<Mark>> = BTreeMap::new();
    for &node in &shown {
        let glyph = if failed(node) { Glyph::Stranded } else { Glyph::Kept };
        for pod in before.on(node).iter().filter(|pod| !step.gone.contains_key(**pod)) {
            marks.entry(node).or_default().push(mark(pod, glyph));
        }
    }
    for (pod, node) in &step.placed {
        let glyph = if failed(node) { Glyph::Stranded } else { Glyph::New };
        marks.entry(node.as_str()).or_default().push(mark(pod, glyph));
    }
    for (pod, node) in &step.gone {
        marks.entry(node.as_str()).or_default().push(mark(pod, Glyph::Lost));
    }
    let states = step.nodes.iter().map(|n| (n.as_str(), state)).collect();
    out.push_str("</div><div class=\"arrow\" aria-hidden=\"true\">&rarr;</div><div class=\"side\"><h5>after</h5>");
    let view = View { name: "after", nodes, marks, states, hidden };
    grid::render(out, &view, legend, &report.node_key);
    out.push_str("</div></div>");
    if !step.pending.is_empty() {
        pending(out, &step.pending);
    }
    out.push_str("</details>");
}

/// Up to six names, then how many more.
fn names(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    let mut text = items.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > 6 {
        let _ = write!(text, " and {} more", items.len() - 6);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use kix_engines::verify::{Allocatable, InstanceReport};
    use kix_kube::kind::WorkloadKind;
    use kix_kube::level::Level;
    use kix_sim::{Finding, FindingKind, FindingSubject};

    /// A cluster of two zones, one workload named `name` with a pod on each node, one domain loss.
    fn report(name: &str, label: &str) -> ClusterReport {
        let node = |n: &str, zone: &str| NodeReport {
            name: n.to_string(),
            zone: Some(zone.to_string()),
            labels: BTreeMap::from([
                ("topology.kubernetes.io/zone".to_string(), zone.to_string()),
                ("team".to_string(), label.to_string()),
            ]),
            taints: Vec::new(),
            unschedulable: false,
            allocatable: Allocatable { milli_cpu: 4000, memory_bytes: 16 << 30, pods: 110 },
        };
        let placement =
            BTreeMap::from([(format!("{name}-0"), "n1".to_string()), (format!("{name}-1"), "n2".to_string())]);
        let step = Step {
            step: "zone a".to_string(),
            nodes: vec!["n1".to_string()],
            adversarial: false,
            gone: BTreeMap::from([(format!("{name}-0"), "n1".to_string())]),
            placed: BTreeMap::from([(format!("{name}-2"), "n2".to_string())]),
            pending: BTreeMap::new(),
            replaced_after_seconds: Some(300),
        };
        let finding = Finding::new(FindingKind::NoReplicaLeft, FindingSubject::Workload, format!("{name} lost <b>"));
        let verdict = WorkloadVerdict {
            request: 0,
            kind: WorkloadKind::Deployment,
            namespace: "ns".to_string(),
            name: name.to_string(),
            level: Level::Zone,
            replicas: 2,
            placement,
            pending: BTreeMap::new(),
            worst_case_running: Some(1),
            replacements_scheduled: 1,
            domain_losses: Vec::new(),
            selector_counts: BTreeMap::new(),
            scenarios: vec![ScenarioResult {
                scenario: Scenario::DomainLoss,
                pass: false,
                findings: vec![finding],
                steps: vec![step],
            }],
            meets_level: false,
            group: None,
            group_replicas: None,
            majority: None,
        };
        ClusterReport {
            cluster: "c".to_string(),
            nodes_from: NodesFrom::Inventory,
            nodes: 2,
            node_key: "kubernetes.io/hostname".to_string(),
            zone_key: "topology.kubernetes.io/zone".to_string(),
            topology: vec![node("n1", "a"), node("n2", "b")],
            instances: vec![InstanceReport {
                index: 0,
                instance: "i".to_string(),
                namespace: "ns".to_string(),
                workloads: vec![kix_engines::verify::VerifiedWorkload { plan: 0, verdict }],
                unverified: Vec::new(),
            }],
            missing_keys: Vec::new(),
        }
    }

    /// Names, labels and messages are text, never markup (kix's own validation keeps `<` out of
    /// Kubernetes names; the page does not rely on it).
    #[test]
    fn user_strings_are_escaped() {
        let html = render_html(&[report("<script>alert(1)</script>", "\"><img onerror=x>")]);
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("lost <b>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("data-workload=\"i/Deployment/&lt;script&gt;alert(1)&lt;/script&gt;\""));
        assert!(html.contains("team=&quot;&gt;&lt;img onerror=x&gt;"));
        // The page's own script is the only one.
        assert_eq!(html.matches("<script>").count(), 1);
    }

    #[test]
    fn the_page_is_the_same_bytes_for_the_same_reports() {
        let reports = [report("api", "web")];
        assert_eq!(render_html(&reports), render_html(&reports));
    }

    /// The step's sentence says what was lost, where the replacement went, and after how long.
    #[test]
    fn a_step_says_what_was_lost_and_where_the_replacement_went() {
        let html = render_html(&[report("api", "web")]);
        assert!(html.contains("zone a: 1 lost (api-0 on n1); 1 replacement(s) after 300s (api-2 to n2)"), "{html}");
        assert!(html.contains("<li class=\"error\"><code>K0609</code> api lost &lt;b&gt;</li>"), "{html}");
    }
}
