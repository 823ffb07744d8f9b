//! `kix verify --report FILE.html` in a real browser: headless Chromium loads the report of the
//! shipped examples and of the real-world corpus, no console message may appear, and what the page
//! shows (the nodes of each zone; the pods of each workload on each node, after the rollout and
//! before and after every scenario step) must equal the JSON report of the same run. A screenshot
//! of each page is saved under `target/kix-report/` for a person to look at.
//!
//! Chromium comes from Debian (`apt-get install -y chromium`): `.ci/run` installs it and sets
//! `KIX_REQUIRE_BROWSER=1`, so CI fails rather than skips when it is missing; elsewhere the
//! browser tests are skipped with a visible message. The page is read with `--dump-dom` (the DOM
//! after the page's script ran) and console messages with `--enable-logging=stderr`, which
//! [`a_broken_page_is_caught`] proves catches them.

use crate::support::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Chromium to drive: `KIX_CHROMIUM`, else the first of Debian's and others' names that runs.
fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("KIX_CHROMIUM").map(PathBuf::from);
    let candidates = named.into_iter().chain(["chromium", "chromium-browser", "google-chrome"].map(PathBuf::from));
    let found =
        candidates.into_iter().find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()));
    if found.is_none() {
        if std::env::var_os("KIX_REQUIRE_BROWSER").is_some_and(|v| v == "1") {
            panic!("Chromium is required (KIX_REQUIRE_BROWSER=1) but not installed: apt-get install -y chromium");
        }
        eprintln!(
            "skipped: Chromium is not installed (apt-get install -y chromium; .ci/run sets KIX_REQUIRE_BROWSER=1)"
        );
    }
    found
}

/// Where the screenshots go: `target/kix-report/`.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().join("kix-report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What Chromium made of a page: the DOM after its script ran, and every console message.
struct Loaded {
    dom: String,
    console: Vec<String>,
}

/// Runs headless Chromium on `page` with a fresh profile and no network; `mode` is `--dump-dom`
/// or `--screenshot=PATH`.
fn run_chromium(chromium: &Path, page: &Path, mode: &str) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1400,1800",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(mode)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "chromium {mode} {} failed:\n{stderr}", page.display());
    Loaded {
        dom: String::from_utf8_lossy(&output.stdout).into_owned(),
        console: stderr.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect(),
    }
}

/// Loads a page, insists on no console message, saves its screenshot as `name.png`, returns its DOM.
fn load(chromium: &Path, page: &Path, name: &str) -> Dom {
    let loaded = run_chromium(chromium, page, "--dump-dom");
    assert!(loaded.console.is_empty(), "{} logs to the console:\n{}", page.display(), loaded.console.join("\n"));
    let png = output_dir().join(format!("{name}.png"));
    let shot = run_chromium(chromium, page, &format!("--screenshot={}", png.display()));
    assert!(shot.console.is_empty(), "{}", shot.console.join("\n"));
    assert!(std::fs::metadata(&png).is_ok_and(|m| m.len() > 10_000), "no screenshot at {}", png.display());
    eprintln!("screenshot: {}", png.display());
    Dom::parse(&loaded.dom)
}

#[test]
fn a_broken_page_is_caught() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(&page, "<!DOCTYPE html><p>x</p><script>console.error('deliberate'); notDefined();</script>")
        .unwrap();
    let loaded = run_chromium(&chromium, &page, "--dump-dom");
    assert!(loaded.console.iter().any(|l| l.contains("deliberate")), "console.error not seen: {:?}", loaded.console);
    assert!(loaded.console.iter().any(|l| l.contains("notDefined is not defined")), "{:?}", loaded.console);
    assert!(loaded.dom.contains("<p>x</p>"), "{}", loaded.dom);
}

#[test]
fn examples_report_shows_what_the_json_report_says() {
    let Some(chromium) = chromium() else { return };
    let t = Test::new().examples();
    let page = t.root().join("report.html");
    let run = t.clone().args(["verify", "--format", "json", "--report", "report.html"]).run().status(0);
    check_page(&chromium, &page, &run.json(), "examples");
}

#[test]
fn realworld_report_shows_what_the_json_report_says() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("realworld.html");
    // One workload of the corpus fails its level (its verify golden says why): exit 1, report written.
    let run = Test::in_dir("tests/realworld")
        .args(["verify", "--format", "json", "--report", page.to_str().unwrap()])
        .run()
        .status(1);
    check_page(&chromium, &page, &run.json(), "realworld");
}

/// The page's nodes per zone and pods per node per workload, after the rollout and before and after
/// every step, against the JSON report.
fn check_page(chromium: &Path, page: &Path, report: &Value, name: &str) {
    let html = std::fs::read_to_string(page).unwrap();
    for outside in ["src=", "href=", "url(", "@import", "<link"] {
        assert!(!html.contains(outside), "the page reaches outside itself ({outside})");
    }
    let dom = load(chromium, page, name);
    let clusters = report["clusters"].as_array().unwrap();
    assert!(clusters.iter().any(|c| !c["topology"].as_array().unwrap().is_empty()));
    for cluster in clusters {
        let name = cluster["cluster"].as_str().unwrap();
        let section = dom.find_one(0, |e| e.is("section", "cluster") && e.attr("data-cluster") == Some(name));
        let topology = cluster["topology"].as_array().unwrap();
        if topology.is_empty() {
            assert!(dom.select(section, |e| e.has_class("node")).is_empty(), "{name}");
            continue;
        }
        let mut zones: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for node in topology {
            let zone = node["zone"].as_str().unwrap_or_default().to_string();
            zones.entry(zone).or_default().insert(node["name"].as_str().unwrap().to_string());
        }
        let mut pods: BTreeMap<(String, String), usize> = BTreeMap::new();
        let mut workloads = Vec::new();
        for instance in cluster["instances"].as_array().unwrap() {
            for w in instance["workloads"].as_array().unwrap() {
                let key = format!(
                    "{}/{}/{}",
                    instance["instance"].as_str().unwrap(),
                    w["kind"].as_str().unwrap(),
                    w["name"].as_str().unwrap()
                );
                count_into(&mut pods, &key, &w["placement"]);
                workloads.push((key, w));
            }
        }
        let placement = dom.find_one(section, |e| e.is("div", "view") && e.attr("data-view") == Some("placement"));
        let shown = dom.view(placement);
        assert_eq!(shown.zones, zones, "cluster {name}: nodes per zone");
        assert_eq!(shown.pods, pods, "cluster {name}: pods per node per workload after the rollout");
        for (key, w) in workloads {
            let row =
                dom.find_one(section, |e| e.is("tr", "legend-entry") && e.attr("data-workload") == Some(key.as_str()));
            let meets = if w["meets_level"].as_bool().unwrap() { "meets" } else { "fails" };
            assert_eq!(dom.nodes[row].attr("data-verdict"), Some(meets), "{name} {key}");
            check_steps(&dom, section, name, &key, w);
        }
    }
}

/// Each scenario's steps in order: the nodes each step touched (failed or drained, or that its pods
/// left or landed on) are the nodes its views show, and their pods before and after are the JSON's
/// (the placement after a step is the one before without `gone` and with `placed`).
fn check_steps(dom: &Dom, section: usize, cluster: &str, key: &str, w: &Value) {
    let block = dom.find_one(section, |e| e.is("details", "workload") && e.attr("data-workload") == Some(key));
    let scenarios = dom.select(block, |e| e.is("section", "scenario"));
    let json = w["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), json.len(), "{cluster} {key}: scenarios");
    let placement = pod_map(&w["placement"]);
    for (&scenario, result) in scenarios.iter().zip(json) {
        let what = result["scenario"].as_str().unwrap();
        assert_eq!(dom.nodes[scenario].attr("data-scenario"), Some(what));
        let steps = dom.select(scenario, |e| e.is("details", "step"));
        let empty = Vec::new();
        let json_steps = result["steps"].as_array().unwrap_or(&empty);
        assert_eq!(steps.len(), json_steps.len(), "{cluster} {key} {what}: steps");
        let mut adversarial = None;
        for (s, (&step, expected)) in steps.iter().zip(json_steps).enumerate() {
            let label = expected["step"].as_str().unwrap();
            assert_eq!(dom.nodes[step].attr("data-step"), Some(label));
            let (gone, placed) = (pod_map(&expected["gone"]), pod_map(&expected["placed"]));
            let from_adversarial = expected["adversarial"].as_bool() == Some(true);
            let before = if from_adversarial {
                adversarial.clone().expect("the scenario's first step (the tie-break's, the scale-down's)")
            } else {
                placement.clone()
            };
            let mut after: BTreeMap<String, String> =
                before.clone().into_iter().filter(|(p, _)| !gone.contains_key(p)).collect();
            after.extend(placed.clone());
            if (what == "tie-break" || what == "scale-down") && s == 0 {
                adversarial = Some(after.clone());
            }
            let nodes = expected["nodes"]
                .as_array()
                .map_or(Vec::new(), |n| n.iter().map(|n| n.as_str().unwrap().to_string()).collect());
            let touched: BTreeSet<String> = gone.values().chain(placed.values()).cloned().chain(nodes).collect();
            for (side, placement) in [("before", &before), ("after", &after)] {
                let view = dom.find_one(step, |e| e.is("div", "view") && e.attr("data-view") == Some(side));
                let shown = dom.view(view);
                let shown_nodes: BTreeSet<String> = shown.zones.values().flatten().cloned().collect();
                assert_eq!(shown_nodes, touched, "{cluster} {key} {what} {label}: {side}: the nodes shown");
                let mut want = BTreeMap::new();
                for (_, node) in placement.iter().filter(|(_, n)| touched.contains(*n)) {
                    *want.entry((node.clone(), key.to_string())).or_insert(0) += 1;
                }
                assert_eq!(shown.pods, want, "{cluster} {key} {what} {label}: {side}");
            }
        }
    }
}

/// A JSON object of pod to node.
fn pod_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map_or(BTreeMap::new(), |m| m.iter().map(|(p, n)| (p.clone(), n.as_str().unwrap().to_string())).collect())
}

/// Adds a `placement` map's pods (pod to node) to the counts per (node, workload).
fn count_into(counts: &mut BTreeMap<(String, String), usize>, key: &str, placement: &Value) {
    for node in placement.as_object().unwrap().values() {
        *counts.entry((node.as_str().unwrap().to_string(), key.to_string())).or_insert(0) += 1;
    }
}

/// What one view shows: zone to node names, and pods per (node, workload).
struct Shown {
    zones: BTreeMap<String, BTreeSet<String>>,
    pods: BTreeMap<(String, String), usize>,
}

/// The serialized DOM Chromium dumps, read back into elements (its serializer writes every
/// attribute double-quoted and closes every non-void element, so a small reader suffices).
struct Dom {
    nodes: Vec<Element>,
}

struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<usize>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }
    fn has_class(&self, class: &str) -> bool {
        self.attr("class").is_some_and(|c| c.split_whitespace().any(|x| x == class))
    }
    fn is(&self, name: &str, class: &str) -> bool {
        self.name == name && self.has_class(class)
    }
}

const VOID: &[&str] = &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"];

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

impl Dom {
    fn parse(html: &str) -> Dom {
        let mut nodes = vec![Element { name: "#document".into(), attrs: BTreeMap::new(), children: Vec::new() }];
        let mut open = vec![0usize];
        let mut rest = html;
        while let Some(at) = rest.find('<') {
            rest = &rest[at..];
            if let Some(comment) = rest.strip_prefix("<!--") {
                rest = comment.split_once("-->").map_or("", |(_, r)| r);
                continue;
            }
            let end = rest.find('>').expect("unclosed tag");
            let tag = &rest[1..end];
            rest = &rest[end + 1..];
            if tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let name = name.trim().to_ascii_lowercase();
                let top = open.pop().expect("unbalanced DOM");
                assert_eq!(nodes[top].name, name, "unbalanced DOM at </{name}>");
                continue;
            }
            let (name, attrs) = parse_tag(tag);
            let index = nodes.len();
            let parent = *open.last().unwrap();
            nodes[parent].children.push(index);
            let closed = tag.ends_with('/') || VOID.contains(&name.as_str());
            let raw = name == "script" || name == "style";
            nodes.push(Element { name: name.clone(), attrs, children: Vec::new() });
            if raw {
                let close = format!("</{name}>");
                rest = &rest[rest.find(&close).expect("unclosed raw text") + close.len()..];
            } else if !closed {
                open.push(index);
            }
        }
        assert_eq!(open, [0], "unclosed elements in the DOM");
        Dom { nodes }
    }

    /// Every element under `from` (depth first, in document order) that `matches`.
    fn select(&self, from: usize, matches: impl Fn(&Element) -> bool + Copy) -> Vec<usize> {
        let mut found = Vec::new();
        for &child in &self.nodes[from].children {
            if matches(&self.nodes[child]) {
                found.push(child);
            }
            found.extend(self.select(child, matches));
        }
        found
    }

    #[track_caller]
    fn find_one(&self, from: usize, matches: impl Fn(&Element) -> bool + Copy) -> usize {
        let found = self.select(from, matches);
        assert_eq!(found.len(), 1, "expected one match under <{}>", self.nodes[from].name);
        found[0]
    }

    /// The zones, node boxes and pod glyphs of one `div.view`: each box's pods hold on each of its nodes.
    fn view(&self, view: usize) -> Shown {
        let mut shown = Shown { zones: BTreeMap::new(), pods: BTreeMap::new() };
        for zone in self.select(view, |e| e.is("div", "zone")) {
            let name = self.nodes[zone].attr("data-zone").unwrap().to_string();
            for node in self.select(zone, |e| e.is("div", "node")) {
                let element = &self.nodes[node];
                let names: Vec<String> = element.attr("data-nodes").unwrap().split(' ').map(str::to_string).collect();
                assert_eq!(element.attr("data-count"), Some(names.len().to_string().as_str()));
                let mut each: BTreeMap<String, usize> = BTreeMap::new();
                for pod in self.select(node, |e| e.is("svg", "pod")) {
                    *each.entry(self.nodes[pod].attr("data-workload").unwrap().to_string()).or_insert(0) += 1;
                }
                for node_name in names {
                    for (workload, n) in &each {
                        shown.pods.insert((node_name.clone(), workload.clone()), *n);
                    }
                    assert!(shown.zones.entry(name.clone()).or_default().insert(node_name), "a node shown twice");
                }
            }
        }
        shown
    }
}

fn parse_tag(tag: &str) -> (String, BTreeMap<String, String>) {
    let tag = tag.trim_end_matches('/');
    let split = tag.find(char::is_whitespace).unwrap_or(tag.len());
    let name = tag[..split].to_ascii_lowercase();
    let mut attrs = BTreeMap::new();
    let mut rest = tag[split..].trim_start();
    while !rest.is_empty() {
        let key_end = rest.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(rest.len());
        let key = rest[..key_end].to_string();
        rest = &rest[key_end..];
        if let Some(value) = rest.strip_prefix("=\"") {
            let close = value.find('"').expect("unquoted attribute");
            attrs.insert(key, unescape(&value[..close]));
            rest = &value[close + 1..];
        } else {
            attrs.insert(key, String::new());
        }
        rest = rest.trim_start();
    }
    (name, attrs)
}

#[test]
fn the_report_is_byte_identical_run_to_run() {
    let t = Test::new().examples();
    t.clone().args(["verify", "--report", "one.html"]).run().status(0);
    t.clone().args(["verify", "--report", "two.html"]).run().status(0);
    let one = std::fs::read(t.root().join("one.html")).unwrap();
    assert!(one.starts_with(b"<!DOCTYPE html>"));
    assert_eq!(one, std::fs::read(t.root().join("two.html")).unwrap());
}

#[test]
fn a_report_that_cannot_be_written_is_a_located_k0501() {
    Test::new()
        .examples()
        .args(["verify", "--report", "missing/dir/report.html"])
        .run()
        .status(1)
        .stderr_contains("error[K0501]: cannot write the report missing/dir/report.html")
        .stderr_contains("missing/dir/report.html");
}

#[test]
fn no_report_is_written_when_the_compile_fails() {
    let t = Test::new().examples().tree([("packages/web/kix.toml", "name = 3\n")]);
    t.clone().args(["verify", "--report", "report.html"]).run().status(1);
    assert!(!t.root().join("report.html").exists());
}

/// At 3,000 nodes the page stays readable: nodes alike are one box with a count, so the placement
/// view of the shipped prod cluster with 1,000 nodes per zone draws a handful of boxes, not 3,000,
/// and the counts still add up to every node.
#[test]
fn three_thousand_nodes_are_drawn_as_a_few_boxes() {
    let prod = std::fs::read_to_string(repo_path("clusters/prod.toml")).unwrap();
    assert!(prod.contains("nodesPerZone = 2\n"));
    let t = Test::new()
        .examples()
        .tree([("clusters/prod.toml", prod.replace("nodesPerZone = 2\n", "nodesPerZone = 1000\n"))]);
    // The verdicts are not the point here (the gateway's soft spread puts its three replicas in one
    // of 1,000 equal nodes' zone: exit 1); the page is written either way.
    let run = t.clone().args(["verify", "--cluster", "prod", "--report", "report.html"]).run();
    assert!(run.status == 0 || run.status == 1, "{}", run.stderr);
    let html = std::fs::read_to_string(t.root().join("report.html")).unwrap();
    let start = html.find("data-view=\"placement\"").unwrap();
    let view = &html[start..start + html[start..].find("<h3>Verdicts</h3>").unwrap()];
    let counts: Vec<usize> = view
        .split("<div class=\"node\" data-nodes=")
        .skip(1)
        .map(|b| b.split("data-count=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<usize>(), 3000);
    // Every instance shares the nodes (issue 38): each node holding pods is drawn (prod's instances run
    // fewer than 40 pods), and the empty rest of each zone is one box.
    assert_eq!(counts.iter().filter(|&&n| n >= 950).count(), 3, "one box per zone for its empty nodes: {counts:?}");
    assert!(counts.len() <= 3 + 40, "{} boxes for 3,000 nodes: {counts:?}", counts.len());
    // Issue 41: a box of alike nodes is named by what they share (pool and zone), not by its first
    // member's made-up name; the page says inventory names are made up.
    for zone in ["eu-1a", "eu-1b", "eu-1c"] {
        assert!(
            view.contains(&format!("<span class=\"node-name\">general in {zone}</span> <span class=\"count\">")),
            "no box named for {zone}"
        );
    }
    assert!(html.contains("The node names are made up by kix from the pools"));
}
