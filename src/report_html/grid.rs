//! One placement view of `kix verify --report`: the zones as columns and their nodes as boxes,
//! each box holding the glyphs of the pods bound to it.
//!
//! Readable at thousands of nodes: nodes of one zone that look the same (same labels apart from
//! the node's own name, same allocatable, taints and state, and the same pods per workload) are
//! one box with a count and the list of their names; a zone with more boxes than
//! [`COLLAPSE_ABOVE`] shows them collapsed (`<details>`). Every box names its nodes in
//! `data-nodes` and every glyph its workload in `data-workload`, so a test reads back from the
//! page which pods it shows on which node.

use super::html::{Glyph, cpu, esc, glyph, memory};
use kix_engines::verify::NodeReport;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Zones with more boxes than this start collapsed.
pub const COLLAPSE_ABOVE: usize = 24;

/// The workloads of a cluster: key (`instance/Kind/name`), the label people read, the colour.
pub struct Legend {
    pub workloads: Vec<(String, String, String)>,
}

/// One pod in a view.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mark {
    /// Index into the [`Legend`].
    pub workload: usize,
    pub glyph: Glyph,
    pub pod: String,
}

/// What a step did to a node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeState {
    #[default]
    Up,
    /// Failed (its domain was lost): tainted unreachable.
    Failed,
    /// Cordoned and drained.
    Drained,
}

impl NodeState {
    fn class(self) -> &'static str {
        match self {
            NodeState::Up => "",
            NodeState::Failed => " failed",
            NodeState::Drained => " drained",
        }
    }
}

/// One view: the nodes shown, their pods and states.
pub struct View<'a> {
    /// `data-view`: `placement`, `before`, `after`.
    pub name: &'static str,
    /// The nodes shown, in name order.
    pub nodes: Vec<&'a NodeReport>,
    pub marks: BTreeMap<&'a str, Vec<Mark>>,
    pub states: BTreeMap<&'a str, NodeState>,
    /// Nodes of the cluster left out: the step left them as they were.
    pub hidden: usize,
}

/// What makes two nodes of a zone one box.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Likeness<'a> {
    labels: Vec<(&'a str, &'a str)>,
    taints: &'a [String],
    unschedulable: bool,
    allocatable: &'a kix_engines::verify::Allocatable,
    state: NodeState,
    pods: BTreeMap<(usize, Glyph), usize>,
}

/// Writes the view: one column per zone (nodes without the zone key last), boxes by first node name.
pub fn render(out: &mut String, view: &View<'_>, legend: &Legend, node_key: &str) {
    let mut zones: BTreeMap<(bool, &str), Vec<&NodeReport>> = BTreeMap::new();
    for node in &view.nodes {
        zones.entry((node.zone.is_none(), node.zone.as_deref().unwrap_or(""))).or_default().push(node);
    }
    let _ = write!(out, "<div class=\"view\" data-view=\"{}\"><div class=\"zones\">", view.name);
    for ((_, zone), nodes) in &zones {
        let mut boxes: Vec<(Likeness<'_>, Vec<&NodeReport>)> = Vec::new();
        let mut index: BTreeMap<Likeness<'_>, usize> = BTreeMap::new();
        for node in nodes {
            let likeness = likeness(node, view, node_key);
            match index.get(&likeness) {
                Some(&at) => boxes[at].1.push(node),
                None => {
                    index.insert(likeness.clone(), boxes.len());
                    boxes.push((likeness, vec![node]));
                }
            }
        }
        let title = if zone.is_empty() { "no zone label".to_string() } else { esc(zone) };
        let _ = write!(
            out,
            "<div class=\"zone\" data-zone=\"{}\"><h4>{title} <span class=\"muted\">{} node{}</span></h4>",
            esc(zone),
            nodes.len(),
            kix_diag::words::s(nodes.len())
        );
        let collapsed = boxes.len() > COLLAPSE_ABOVE;
        if collapsed {
            let _ = write!(
                out,
                "<details class=\"many\"><summary>{} boxes of {} nodes</summary>",
                boxes.len(),
                nodes.len()
            );
        }
        for (likeness, members) in &boxes {
            node_box(out, view, legend, likeness, members);
        }
        if collapsed {
            out.push_str("</details>");
        }
        out.push_str("</div>");
    }
    out.push_str("</div>");
    if view.hidden > 0 {
        let _ = write!(
            out,
            "<p class=\"muted\">and {} other node{}, unchanged</p>",
            view.hidden,
            kix_diag::words::s(view.hidden)
        );
    }
    out.push_str("</div>");
}

fn likeness<'a>(node: &'a NodeReport, view: &View<'a>, node_key: &str) -> Likeness<'a> {
    let mut pods = BTreeMap::new();
    for mark in view.marks.get(node.name.as_str()).into_iter().flatten() {
        *pods.entry((mark.workload, mark.glyph)).or_insert(0) += 1;
    }
    Likeness {
        labels: node
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != node_key && k.as_str() != kix_kube::labels::HOSTNAME)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        taints: &node.taints,
        unschedulable: node.unschedulable,
        allocatable: &node.allocatable,
        state: view.states.get(node.name.as_str()).copied().unwrap_or_default(),
        pods,
    }
}

/// One box: a node, or several alike with a count. The pods drawn are the first node's; the others
/// hold as many of each workload's.
fn node_box(out: &mut String, view: &View<'_>, legend: &Legend, likeness: &Likeness<'_>, members: &[&NodeReport]) {
    let first = members[0];
    let count = members.len();
    let names: Vec<&str> = members.iter().map(|n| n.name.as_str()).collect();
    let mut hover = format!(
        "{}\n{}, {}, {} pods",
        first.name,
        cpu(first.allocatable.milli_cpu),
        memory(first.allocatable.memory_bytes),
        first.allocatable.pods
    );
    for (key, value) in &first.labels {
        let _ = write!(hover, "\n{key}={value}");
    }
    for taint in &first.taints {
        let _ = write!(hover, "\ntaint {taint}");
    }
    let state = match likeness.state {
        NodeState::Up if first.unschedulable => " (cordoned)",
        NodeState::Up => "",
        NodeState::Failed => " (failed)",
        NodeState::Drained => " (drained)",
    };
    // A box of several alike nodes is named by what they share (their pool, as its instance-type label
    // names it, and their zone), never by whichever member sorts first (issue 41).
    let shown = if count > 1 {
        let pool = first.labels.get(kix_kube::labels::INSTANCE_TYPE).map_or("alike nodes", String::as_str);
        match &first.zone {
            Some(zone) => format!("{pool} in {zone}"),
            None => pool.to_string(),
        }
    } else {
        first.name.clone()
    };
    let _ = write!(
        out,
        "<div class=\"node{}\" data-nodes=\"{}\" data-count=\"{count}\" title=\"{}\"><div class=\"node-head\"><span class=\"node-name\">{}</span>",
        likeness.state.class(),
        esc(&names.join(" ")),
        esc(&hover),
        esc(&shown)
    );
    if count > 1 {
        let _ = write!(out, " <span class=\"count\">&times;{count}</span>");
    }
    let _ = write!(
        out,
        "{state}</div><div class=\"node-meta\">{} &middot; {} &middot; {} pods</div><div class=\"pods\">",
        cpu(first.allocatable.milli_cpu),
        memory(first.allocatable.memory_bytes),
        first.allocatable.pods
    );
    let mut marks: Vec<&Mark> = view.marks.get(first.name.as_str()).into_iter().flatten().collect();
    marks.sort();
    for mark in &marks {
        let (key, label, colour) = &legend.workloads[mark.workload];
        let title = if count == 1 {
            format!("{} ({label}, {}) on {}", mark.pod, mark.glyph.word(), first.name)
        } else {
            let each = likeness.pods.get(&(mark.workload, mark.glyph)).copied().unwrap_or(0);
            format!(
                "{each} pod(s) of {label} ({}) on each of these {count} nodes; on {}: {}",
                mark.glyph.word(),
                first.name,
                mark.pod
            )
        };
        glyph(out, mark.glyph, key, colour, &title);
    }
    if count > 1 && !marks.is_empty() {
        out.push_str("<span class=\"each\">on each</span>");
    }
    out.push_str("</div>");
    // What the glyphs say, for screen readers.
    let who = if count == 1 { first.name.clone() } else { format!("{count} nodes like {}", first.name) };
    let what: Vec<String> = likeness
        .pods
        .iter()
        .map(|((w, g), n)| format!("{n} {} pod(s) of {}", g.word(), legend.workloads[*w].1))
        .collect();
    let what = if what.is_empty() { "no pods shown".to_string() } else { what.join(", ") };
    let each = if count == 1 { "" } else { " each" };
    let _ = write!(out, "<span class=\"sr-only\">{}{state}: {}{each}.</span>", esc(&who), esc(&what));
    if count > 1 {
        let _ = write!(
            out,
            "<details class=\"names\"><summary>{count} nodes</summary><p>{}</p></details>",
            esc(&names.join(", "))
        );
    }
    out.push_str("</div>");
}
