//! Failure-domain keys the simulated nodes lack, and what that does to spreading.
//!
//! A cluster's failure-domain keys (node, zone, extra) are what kix spreads
//! workloads over; verify checks that the nodes it simulates on (the inventory
//! or a `--state` snapshot) carry them. A key is checked when some node carries
//! it or some verified workload spreads on it, so a cluster without zones is
//! not told that its nodes lack a zone label nobody uses. The effect is the
//! real scheduler's, read from upstream kubernetes/kubernetes
//! `pkg/scheduler/framework/plugins/podtopologyspread/`:
//!
//! - `filtering.go` (`Filter`): a node lacking the key of any of the pod's
//!   DoNotSchedule constraints is UnschedulableAndUnresolvable, "node(s)
//!   didn't match pod topology spread constraints (missing required label)".
//! - `scoring.go` (`PreScore`, `initPreScoreState`): a pod with constraints of
//!   its own sets `requireAllTopologies`, so a node lacking the key of any of
//!   its ScheduleAnyway constraints goes into `IgnoredNodes`: its pods are
//!   counted in no domain, `Score` returns 0 for it, and `NormalizeScore` gives
//!   it 0, the lowest spread score, while the other nodes score
//!   `100 * (max + min - raw) / max`. Some nodes lacking the key are pushed
//!   away from whatever they hold; every node lacking it scores every node 0,
//!   so soft spreading does nothing and the other scores place the replicas.

use kix_compiler::derive::InstancePlan;
use kix_compiler::resolve::FailureDomains;
use kix_sim::Workload;
use kix_sim::objects::{Node, When};
use serde::Serialize;

/// Which of the cluster's failure-domain keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyRole {
    Node,
    Zone,
    Extra,
}

impl KeyRole {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyRole::Node => "node",
            KeyRole::Zone => "zone",
            KeyRole::Extra => "extra",
        }
    }
}

/// A failure-domain key that some or all simulated nodes lack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissingKey {
    pub key: String,
    pub role: KeyRole,
    /// How many of the cluster's nodes lack it, of how many.
    pub lacking: usize,
    pub nodes: usize,
    /// The first few nodes that lack it, in node order.
    pub examples: Vec<String>,
    /// Workloads (`instance/Kind/name`) with a DoNotSchedule, and with a ScheduleAnyway, constraint on it.
    pub hard: Vec<String>,
    pub soft: Vec<String>,
    /// What the scheduler does about it, in words.
    pub effect: String,
}

impl MissingKey {
    /// One sentence: which key, how many nodes, and the effect.
    pub fn message(&self, cluster: &str) -> String {
        let more = if self.lacking > self.examples.len() { ", ..." } else { "" };
        format!(
            "cluster `{cluster}`: failure-domain key `{}` ({} key) is missing from {} of {} nodes ({}{more}): {}",
            self.key,
            self.role.as_str(),
            self.lacking,
            self.nodes,
            self.examples.join(", "),
            self.effect
        )
    }
}

/// How many lacking nodes a finding names.
const EXAMPLES: usize = 3;

/// Every checked key that some node lacks, in node, zone, extra order.
pub fn missing_keys(domains: &FailureDomains, nodes: &[Node], instances: &[InstancePlan]) -> Vec<MissingKey> {
    let keys = [(domains.node.as_str(), KeyRole::Node), (domains.zone.as_str(), KeyRole::Zone)]
        .into_iter()
        .chain(domains.extra.iter().map(|k| (k.as_str(), KeyRole::Extra)));
    let mut found = Vec::new();
    for (key, role) in keys {
        let (hard, soft) = spreading_on(key, instances);
        let lacking: Vec<&Node> = nodes.iter().filter(|n| !n.labels.contains_key(key)).collect();
        let carried = lacking.len() < nodes.len();
        if lacking.is_empty() || (!carried && hard.is_empty() && soft.is_empty() && role != KeyRole::Extra) {
            continue;
        }
        let effect = effect(&hard, &soft, lacking.len() == nodes.len());
        found.push(MissingKey {
            key: key.to_string(),
            role,
            lacking: lacking.len(),
            nodes: nodes.len(),
            examples: lacking.iter().take(EXAMPLES).map(|n| n.name.clone()).collect(),
            hard,
            soft,
            effect,
        });
    }
    found
}

/// The workloads with a DoNotSchedule, and with a ScheduleAnyway, constraint on `key`.
fn spreading_on(key: &str, instances: &[InstancePlan]) -> (Vec<String>, Vec<String>) {
    let (mut hard, mut soft) = (Vec::new(), Vec::new());
    for instance in instances {
        for object in instance.objects() {
            let Ok(Some(workload)) = Workload::from_object(object, &instance.namespace) else { continue };
            let name = format!("{}/{}/{}", instance.name, workload.kind.as_str(), workload.name);
            let on_key = |when| workload.spec.spread.iter().any(|c| c.topology_key == key && c.when == when);
            if on_key(When::DoNotSchedule) {
                hard.push(name.clone());
            }
            if on_key(When::ScheduleAnyway) {
                soft.push(name);
            }
        }
    }
    (hard, soft)
}

/// What the scheduler does with the nodes lacking the key, for the workloads that spread on it.
fn effect(hard: &[String], soft: &[String], all_lack: bool) -> String {
    let mut parts = Vec::new();
    if !hard.is_empty() {
        parts.push(format!(
            "{} DoNotSchedule on it, so {} (\"node(s) didn't match pod topology spread constraints (missing required \
             label)\")",
            hard.join(", "),
            if all_lack {
                "every pod of theirs stays Pending"
            } else {
                "the nodes lacking it are unschedulable for their pods"
            }
        ));
    }
    if !soft.is_empty() {
        parts.push(format!(
            "{} ScheduleAnyway on it, so spread scoring skips the nodes lacking it and scores them 0 for all of the \
             pod's soft constraints ({})",
            soft.join(", "),
            if all_lack {
                "every node: soft spreading does nothing and replicas land where the other scores put them"
            } else {
                "the lowest spread score: their pods are counted in no domain and soft spreading steers pods away \
                 from them whatever they hold"
            }
        ));
    }
    if parts.is_empty() {
        "no verified workload spreads on it; a DoNotSchedule constraint on it would leave those nodes \
         unschedulable, a ScheduleAnyway one would make spread scoring skip them"
            .to_string()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kix_sim::objects::Resources;

    fn node(name: &str, labels: &[(&str, &str)]) -> Node {
        Node {
            name: name.into(),
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            taints: Vec::new(),
            unschedulable: false,
            allocatable: Resources { milli_cpu: 4000, memory: 1 << 34, pods: 110 },
            absent: false,
        }
    }

    fn domains() -> FailureDomains {
        FailureDomains {
            node: "kubernetes.io/hostname".into(),
            zone: "topology.kubernetes.io/zone".into(),
            extra: vec!["example.com/rack".into()],
        }
    }

    fn instance(spread: &str) -> InstancePlan {
        let yaml = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: api}}\nspec:\n  replicas: 3\n  selector: \
             {{matchLabels: {{app: api}}}}\n  template:\n    metadata: {{labels: {{app: api}}}}\n    spec:\n      \
             topologySpreadConstraints: {spread}\n      containers: [{{name: c, image: i}}]\n"
        );
        let node = kix_kube::level::Level::Node;
        let mut plan = InstancePlan::new("shop", "shop", "web", "1.0.0", node, node);
        plan.push_object(kix_yaml::from_str(&yaml).unwrap(), true);
        plan
    }

    const HOST_HARD_RACK_SOFT: &str = "[{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: \
        DoNotSchedule, labelSelector: {matchLabels: {app: api}}}, {maxSkew: 1, topologyKey: example.com/rack, \
        whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: api}}}]";

    // Which keys are reported, for how many nodes, and which workloads are named as hard or soft.
    #[test]
    fn missing_keys_table() {
        let full = |n: &str, rack: &str| node(n, &[("kubernetes.io/hostname", n), ("example.com/rack", rack)]);
        let bare = |n: &str| node(n, &[("kubernetes.io/hostname", n)]);
        let nameless = |n: &str| node(n, &[("example.com/rack", "r1")]);
        // (nodes, constraints, expected [(key, lacking, hard, soft)])
        type Row = (&'static str, usize, usize, usize);
        let cases: Vec<(Vec<Node>, &str, Vec<Row>)> = vec![
            // Every key carried (zone unused and carried by none): nothing to say.
            (vec![full("a", "r1"), full("b", "r2")], HOST_HARD_RACK_SOFT, vec![]),
            // The rack on no node: the extra key is reported, its soft user named.
            (vec![bare("a"), bare("b")], HOST_HARD_RACK_SOFT, vec![("example.com/rack", 2, 0, 1)]),
            // The rack on some nodes only.
            (vec![full("a", "r1"), bare("b"), bare("c")], HOST_HARD_RACK_SOFT, vec![("example.com/rack", 2, 0, 1)]),
            // A snapshot node without a hostname label: the hard constraint's key.
            (vec![full("a", "r1"), nameless("b")], HOST_HARD_RACK_SOFT, vec![("kubernetes.io/hostname", 1, 1, 0)]),
            // An extra key is declared, so it is reported even when nothing spreads on it.
            (vec![bare("a"), bare("b")], "[]", vec![("example.com/rack", 2, 0, 0)]),
        ];
        for (nodes, spread, expected) in cases {
            let found = missing_keys(&domains(), &nodes, &[instance(spread)]);
            let got: Vec<Row> = found
                .iter()
                .map(|m| {
                    let key: &'static str = match m.key.as_str() {
                        "example.com/rack" => "example.com/rack",
                        "kubernetes.io/hostname" => "kubernetes.io/hostname",
                        other => panic!("unexpected key {other}"),
                    };
                    (key, m.lacking, m.hard.len(), m.soft.len())
                })
                .collect();
            assert_eq!(got, expected, "{spread} on {nodes:?}");
        }
    }

    #[test]
    fn the_effect_says_what_the_scheduler_does() {
        let all = effect(&[], &["shop/Deployment/api".into()], true);
        assert!(all.contains("soft spreading does nothing"), "{all}");
        let some = effect(&[], &["shop/Deployment/api".into()], false);
        assert!(some.contains("steers pods away from them"), "{some}");
        let hard = effect(&["shop/Deployment/api".into()], &[], false);
        assert!(hard.contains("(missing required label)") && hard.contains("unschedulable"), "{hard}");
        let pending = effect(&["shop/Deployment/api".into()], &[], true);
        assert!(pending.contains("stays Pending"), "{pending}");
    }

    #[test]
    fn the_message_names_the_key_the_count_and_the_first_nodes() {
        let nodes: Vec<Node> = (1..=5).map(|i| node(&format!("n{i}"), &[("kubernetes.io/hostname", "x")])).collect();
        let found = missing_keys(&domains(), &nodes, &[instance(HOST_HARD_RACK_SOFT)]);
        let message = found[0].message("prod");
        assert!(
            message.starts_with(
                "cluster `prod`: failure-domain key `example.com/rack` (extra key) is missing from 5 of 5 nodes \
                 (n1, n2, n3, ...): shop/Deployment/api ScheduleAnyway on it"
            ),
            "{message}"
        );
    }
}
