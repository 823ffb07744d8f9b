//! The tree generator the `build_tree` and `hostile_tree` targets share: the input bytes drive
//! choices from small vocabularies that mix valid and invalid values (bad names, levels, versions,
//! selectors, label keys, replica counts, placements), and now and then raw input bytes are
//! spliced into a file, so both deep pipeline paths and error paths get exercised. When the bytes
//! run out every choice is the simplest valid one, so short inputs build.

use kix_yaml::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads choices from the fuzzer's bytes; zeros once they run out (the simplest choice).
pub struct Choices<'a> {
    pub data: &'a [u8],
}

impl<'a> Choices<'a> {
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((first, rest)) => {
                self.data = rest;
                *first
            }
            None => 0,
        }
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n.max(1)
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// True with probability about `percent`/100.
    pub fn chance(&mut self, percent: u8) -> bool {
        (self.byte() as u16 * 100 / 256) < percent as u16
    }

    /// True with probability about `percent`/100, but false once the bytes run out
    /// (for optional extras: the simplest tree has none).
    pub fn sometimes(&mut self, percent: u8) -> bool {
        (self.byte() as u16 * 100 / 256) >= 100 - percent as u16
    }

    /// True for about one choice in sixteen (never once the bytes run out): the rare, usually invalid, option.
    pub fn rare(&mut self) -> bool {
        self.byte() >= 240
    }

    /// A common value, or now and then one from `odd` (usually invalid).
    pub fn mostly<T: Copy>(&mut self, common: &[T], odd: &[T]) -> T {
        if self.rare() { self.pick(odd) } else { self.pick(common) }
    }

    /// Up to `max` raw bytes of input, as text.
    pub fn raw_text(&mut self, max: usize) -> String {
        let len = self.below(max + 1).min(self.data.len());
        let (taken, rest) = self.data.split_at(len);
        self.data = rest;
        String::from_utf8_lossy(taken).into_owned()
    }
}

/// Levels, the most demanding first (the choice when the bytes run out).
const LEVELS: [&str; 4] = ["zone", "node", "pod", "none"];
const BAD_LEVELS: [&str; 2] = ["region", "Zone"];
const KEYS: [&str; 4] =
    ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "example.com/rack", "example.com/row"];
const BAD_KEYS: [&str; 4] = ["bad key", "", "Example.com/x", "a/b/c"];
const LABEL_VALUES: [&str; 5] = ["w0", "w1", "web", "-bad", ""];

fn quoted(items: &[String]) -> String {
    items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ")
}

fn cluster_toml(c: &mut Choices<'_>, packages: &[&str]) -> String {
    let mut text = String::new();
    if c.chance(95) {
        text.push_str(&format!("availability = {:?}\n", c.mostly(&LEVELS, &BAD_LEVELS)));
    }
    text.push_str("[capabilities]\n");
    match c.below(3) {
        0 => text.push_str("multiNode = true\n"),
        1 => text.push_str("multiNode = false\n"),
        _ => {}
    }
    if c.chance(70) {
        let zones: Vec<String> = (0..(3 + c.below(5)) % 5)
            .map(|z| c.mostly(&[["a", "b", "c", "d"][z]], &["a", "-z", ""]).to_string())
            .collect();
        text.push_str(&format!("availabilityZones = [{}]\n", quoted(&zones)));
    }
    text.push_str("[failureDomains]\n");
    if c.rare() {
        text.push_str(&format!("node = {:?}\n", c.mostly(&["example.com/host"], &BAD_KEYS)));
    }
    if c.rare() {
        text.push_str(&format!("zone = {:?}\n", c.mostly(&["example.com/zone"], &BAD_KEYS)));
    }
    let extra: Vec<String> = (0..c.below(3)).map(|e| c.mostly(&[KEYS[2 + e % 2]], &KEYS).to_string()).collect();
    text.push_str(&format!("extra = [{}]\n", quoted(&extra)));
    for i in 0..1 + c.below(3) {
        text.push_str("[[instances]]\n");
        text.push_str(&format!("name = {:?}\n", c.mostly(&[["i0", "i1", "i2"][i]], &["i0", "Bad", "../x"])));
        let package = if c.rare() || packages.is_empty() { "missing" } else { c.pick(packages) };
        text.push_str(&format!("package = {package:?}\n"));
        let version = c.mostly(&["", "^1", "=1.1.0", "^2"], &[">=3", "not a requirement"]);
        if !version.is_empty() {
            text.push_str(&format!("version = {version:?}\n"));
        }
        if c.rare() {
            text.push_str(&format!("namespace = {:?}\n", c.pick(&["shared", "Bad_NS", "ns"])));
        }
        if c.sometimes(40) {
            text.push_str(&format!("availability = {:?}\n", c.mostly(&LEVELS, &BAD_LEVELS)));
        }
    }
    text
}

fn manifest_toml(c: &mut Choices<'_>, dir: usize, name: &str, workloads: &[String]) -> String {
    let version = c.mostly(&[["1.0.0", "1.1.0", "2.0.0", "1.2.0"][dir]], &["1.0.0", "x.y", "2.0.0-rc.1"]);
    let mut text = format!("[meta]\nname = {name:?}\nversion = {version:?}\n");
    if c.sometimes(30) {
        text.push_str(&format!("availability = {{ max = {:?} }}\n", c.pick(&LEVELS)));
    }
    for workload in workloads.iter().cloned().chain(c.rare().then(|| "ghost".to_string())) {
        if !c.chance(70) {
            continue;
        }
        text.push_str(&format!("[workloads.{workload}]\n"));
        if c.chance(70) {
            // Monotone, unless a rare step goes down.
            let mut count = 0;
            let mut steps = Vec::new();
            for level in ["none", "pod", "node", "zone"] {
                if c.chance(50) {
                    let least = if level == "none" { 1 } else { 2 };
                    count = if c.rare() { c.below(3) } else { count.max(least) + c.below(2) };
                    steps.push(format!("{level} = {count}"));
                }
            }
            text.push_str(&format!("replicas = {{ {} }}\n", steps.join(", ")));
        }
        if c.sometimes(30) {
            text.push_str(&format!("availability = {{ max = {:?} }}\n", c.pick(&LEVELS)));
        }
        if c.sometimes(20) {
            text.push_str(&format!(
                "pdb = {{ unhealthyPodEvictionPolicy = {:?} }}\n",
                c.pick(&["AlwaysAllow", "IfHealthyBudget", "Never"])
            ));
        }
    }
    text
}

fn selector(c: &mut Choices<'_>, app: &str) -> String {
    if c.rare() {
        return c
            .pick(&["{}", "{matchExpressions: [{key: app, operator: In}]}", "{matchLabels: {app: 3}}", "[]"])
            .to_string();
    }
    match c.below(8) {
        0 => format!("{{matchLabels: {{app: {app}}}}}"),
        1 => format!("{{matchExpressions: [{{key: app, operator: In, values: [{app}]}}]}}"),
        2 => format!("{{matchLabels: {{app: {app}}}, matchExpressions: [{{key: tier, operator: Exists}}]}}"),
        3 => format!(
            "{{matchLabels: {{app: {app}}}, matchExpressions: [{{key: pod-template-hash, operator: DoesNotExist}}]}}"
        ),
        4 => format!("{{matchExpressions: [{{key: app, operator: NotIn, values: [{:?}]}}]}}", c.pick(&LABEL_VALUES)),
        5 => format!("{{matchLabels: {{app: {:?}}}}}", c.pick(&LABEL_VALUES)),
        6 => "{matchExpressions: [{key: app, operator: Exists}]}".to_string(),
        _ => format!("{{matchLabels: {{app: {app}}}}}"),
    }
}

fn spread(c: &mut Choices<'_>, app: &str) -> String {
    let mut items = Vec::new();
    for _ in 0..c.below(3) {
        let mut item = format!(
            "{{maxSkew: {}, topologyKey: {:?}, whenUnsatisfiable: {}",
            c.mostly(&[1, 2], &[0, -1]),
            c.mostly(&KEYS, &BAD_KEYS),
            c.mostly(&["DoNotSchedule", "ScheduleAnyway"], &["Maybe", ""])
        );
        if c.chance(60) {
            item.push_str(&format!(", labelSelector: {{matchLabels: {{app: {app}}}}}"));
        }
        if c.sometimes(20) {
            item.push_str(", matchLabelKeys: [pod-template-hash]");
        }
        if c.sometimes(20) {
            item.push_str(&format!(", minDomains: {}", c.pick(&[1, 2, 0])));
        }
        item.push('}');
        items.push(item);
    }
    format!("[{}]", items.join(", "))
}

fn workload_yaml(c: &mut Choices<'_>, name: &str) -> String {
    let kind = c.pick(&["Deployment", "StatefulSet", "Deployment", "DaemonSet"]);
    let mut text = format!("apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n");
    if c.rare() {
        text.push_str(c.pick(&["  namespace: other\n", "  labels: {team: \"-x\"}\n", "  labels: {team: t}\n"]));
    }
    text.push_str("spec:\n");
    if c.rare() {
        text.push_str(c.pick(&["  replicas: -1\n", "  replicas: two\n", "  replicas: 0\n", ""]));
    } else {
        text.push_str(&format!("  replicas: {}\n", c.pick(&[2, 3, 1, 4])));
    }
    if c.chance(95) {
        text.push_str(&format!("  selector: {}\n", selector(c, name)));
    }
    let tier = if c.chance(50) { ", tier: backend" } else { "" };
    let label_app = if c.rare() { c.pick(&LABEL_VALUES).to_string() } else { name.to_string() };
    text.push_str(&format!("  template:\n    metadata:\n      labels: {{app: {label_app:?}{tier}}}\n"));
    if !c.rare() {
        text.push_str("    spec:\n      containers: [{name: main, image: example/app:1}]\n");
        if c.sometimes(25) {
            text.push_str(&format!("      topologySpreadConstraints: {}\n", spread(c, name)));
        }
    }
    text
}

fn pdb_yaml(c: &mut Choices<'_>, name: &str, app: &str) -> String {
    let budget = c.mostly(&["maxUnavailable: 1", "minAvailable: 50%"], &["maxUnavailable: 0", "minAvailable: 150%"]);
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {name}\nspec:\n  {budget}\n  selector: {}\n",
        selector(c, app)
    )
}

fn other_yaml(c: &mut Choices<'_>) -> String {
    match c.below(4) {
        0 => "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  selector: {app: w0}\n".to_string(),
        1 => "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n  namespace: x\nrules: []\n"
            .to_string(),
        2 => "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n\
              spec:\n  group: example.com\n  scope: Cluster\n  names: {kind: Widget, plural: widgets}\n---\n\
              apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: y\n"
            .to_string(),
        _ => "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata: {a: b}\n".to_string(),
    }
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create scratch directory");
    }
    std::fs::write(path, text).expect("write scratch file");
}

/// Writes a generated tree; returns the input documents by `kind/name` (from every package directory).
pub fn generate(c: &mut Choices<'_>, root: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut inputs: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut names = Vec::new();
    for dir in 0..1 + c.below(3) {
        let name = c.mostly(&["p0", "p1"], &["Bad"]);
        names.push(name);
        let workloads: Vec<String> = (0..1 + c.below(3)).map(|w| format!("w{w}")).collect();
        let mut manifest = manifest_toml(c, dir, name, &workloads);
        if c.rare() && c.rare() {
            manifest.push_str(&c.raw_text(64));
        }
        write(root, &format!("packages/d{dir}/kix.toml"), &manifest);
        let mut files: [Vec<String>; 2] = [Vec::new(), Vec::new()];
        for workload in &workloads {
            let file = c.below(2);
            files[file].push(workload_yaml(c, workload));
            if c.sometimes(25) {
                let app = if c.chance(80) { workload.as_str() } else { "w0" };
                let pdb_name = if c.chance(80) { format!("{workload}-budget") } else { workload.clone() };
                files[file].push(pdb_yaml(c, &pdb_name, app));
            }
        }
        if c.sometimes(40) {
            files[0].push(other_yaml(c));
        }
        if c.rare() && c.rare() {
            files[1].push(c.raw_text(96));
        }
        for (file, documents) in files.iter().enumerate() {
            if documents.is_empty() {
                continue;
            }
            let text = documents.join("---\n");
            for value in kix_yaml::from_str_all(&text).unwrap_or_default() {
                {
                    let kind = value["kind"].as_str().unwrap_or_default().to_string();
                    let object = value["metadata"]["name"].as_str().unwrap_or_default().to_string();
                    inputs.entry(format!("{kind}/{object}")).or_default().push(value);
                }
            }
            write(root, &format!("packages/d{dir}/{}", ["a.yaml", "b.yml"][file]), &text);
        }
    }
    for index in 0..1 + c.below(2) {
        let name = c.mostly(&[["prod", "edge"][index]], &["Bad_Cluster", "prod"]);
        let mut text = cluster_toml(c, &names);
        if c.rare() && c.rare() {
            text.push_str(&c.raw_text(64));
        }
        write(root, &format!("clusters/{name}{}.toml", if index == 0 { "" } else { "-2" }), &text);
    }
    inputs
}
