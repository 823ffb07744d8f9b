//! Table tests of the inventory: validation of pools and the labels each expanded node carries.

use super::*;
use crate::load::cluster::RawCluster;

fn domains(extra: &[&str]) -> FailureDomains {
    FailureDomains {
        node: well_known::HOSTNAME.into(),
        zone: well_known::ZONE.into(),
        extra: extra.iter().map(|k| k.to_string()).collect(),
    }
}

fn pools(toml_text: &str) -> Vec<RawNodePool> {
    let text = format!("availability = \"node\"\n{toml_text}");
    toml::from_str::<RawCluster>(&text).unwrap().node_pools
}

fn substrate() -> Substrate {
    Substrate { multi_node: Some(true), zones: Some(vec!["a".into(), "b".into()]) }
}

/// The codes and messages `validate` reports for one cluster file's pools.
fn problems(toml_text: &str, domains: &FailureDomains) -> Vec<(Code, String)> {
    let source = SourceFile::new("c.toml", toml_text.to_string());
    let mut diagnostics = Diagnostics::default();
    let valid = validate(&pools(toml_text), &substrate(), domains, &source, &Subject::default(), &mut diagnostics);
    let found: Vec<(Code, String)> = diagnostics.iter().map(|d| (d.code, d.message.to_string())).collect();
    assert_eq!(valid, found.is_empty());
    found
}

fn labels_of(node: &InventoryNode) -> Vec<(&str, &str)> {
    node.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

// Every node carries the kubelet's and the cloud provider's labels, with the defaults.
#[test]
fn nodes_carry_well_known_labels_with_defaults() {
    let nodes = expand(&pools("[[nodePools]]\nname = \"gp\"\nzones = [\"a\"]\nnodesPerZone = 1\n"), &domains(&[]));
    assert_eq!(
        labels_of(&nodes[0]),
        [
            ("beta.kubernetes.io/arch", "amd64"),
            ("beta.kubernetes.io/instance-type", "gp"),
            ("beta.kubernetes.io/os", "linux"),
            ("failure-domain.beta.kubernetes.io/zone", "a"),
            ("kubernetes.io/arch", "amd64"),
            ("kubernetes.io/hostname", "gp-a-1"),
            ("kubernetes.io/os", "linux"),
            ("node.kubernetes.io/instance-type", "gp"),
            ("topology.kubernetes.io/zone", "a"),
        ]
    );
}

// Settings, pool labels and the cluster's own keys, node by node.
#[test]
fn expansion_table() {
    let custom = FailureDomains {
        node: "example.com/node".into(),
        zone: "example.com/zone".into(),
        extra: vec!["example.com/rack".into()],
    };
    // (pools, keys, node, expected labels: None for absent)
    type Case = (&'static str, FailureDomains, &'static str, Vec<(&'static str, Option<&'static str>)>);
    let cases: Vec<Case> = vec![
        // Settings become labels and their beta twins.
        (
            "[[nodePools]]\nname = \"arm\"\nzones = [\"a\"]\nnodesPerZone = 1\nos = \"linux\"\narch = \"arm64\"\n\
             region = \"eu-1\"\ninstanceType = \"m7g.large\"\n",
            domains(&[]),
            "arm-a-1",
            vec![
                ("kubernetes.io/arch", Some("arm64")),
                ("beta.kubernetes.io/arch", Some("arm64")),
                ("topology.kubernetes.io/region", Some("eu-1")),
                ("failure-domain.beta.kubernetes.io/region", Some("eu-1")),
                ("node.kubernetes.io/instance-type", Some("m7g.large")),
            ],
        ),
        // No region by default, no zone labels without zones.
        (
            "[[nodePools]]\nname = \"gp\"\nnodesPerZone = 2\n",
            domains(&[]),
            "gp-2",
            vec![
                ("topology.kubernetes.io/region", None),
                ("topology.kubernetes.io/zone", None),
                ("kubernetes.io/hostname", Some("gp-2")),
            ],
        ),
        // A pool label stands in for a setting not given (as kubelet --node-labels do), twins follow.
        (
            "[[nodePools]]\nname = \"win\"\nnodesPerZone = 2\nlabels = { \"kubernetes.io/os\" = \"windows\" }\n",
            domains(&[]),
            "win-1",
            vec![("kubernetes.io/os", Some("windows")), ("beta.kubernetes.io/os", Some("windows"))],
        ),
        // A cluster whose keys differ from the well-known ones: both are set.
        (
            "[[nodePools]]\nname = \"gp\"\nzones = [\"b\"]\nnodesPerZone = 1\n\
             labels = { \"example.com/rack\" = \"r9\" }\n",
            custom,
            "gp-b-1",
            vec![
                ("example.com/node", Some("gp-b-1")),
                ("kubernetes.io/hostname", Some("gp-b-1")),
                ("example.com/zone", Some("b")),
                ("topology.kubernetes.io/zone", Some("b")),
                ("example.com/rack", Some("r9")),
            ],
        ),
    ];
    for (toml_text, domains, node, expected) in cases {
        let nodes = expand(&pools(toml_text), &domains);
        let node = nodes.iter().find(|n| n.name == node).unwrap_or_else(|| panic!("no {node} in {nodes:?}"));
        for (key, value) in expected {
            assert_eq!(node.labels.get(key).map(String::as_str), value, "{key} on {}", node.name);
        }
    }
}

// Domain values go round-robin to the nodes of each zone, starting again in every zone.
#[test]
fn domains_are_dealt_round_robin_within_each_zone() {
    let text = "[[nodePools]]\nname = \"gp\"\nzones = [\"a\", \"b\"]\nnodesPerZone = 4\n\
                [nodePools.domains]\n\"example.com/rack\" = [\"r1\", \"r2\", \"r3\"]\n";
    let nodes = expand(&pools(text), &domains(&["example.com/rack"]));
    let racks: Vec<(&str, &str)> =
        nodes.iter().map(|n| (n.name.as_str(), n.labels["example.com/rack"].as_str())).collect();
    assert_eq!(
        racks,
        [
            ("gp-a-1", "r1"),
            ("gp-a-2", "r2"),
            ("gp-a-3", "r3"),
            ("gp-a-4", "r1"),
            ("gp-b-1", "r1"),
            ("gp-b-2", "r2"),
            ("gp-b-3", "r3"),
            ("gp-b-4", "r1"),
        ]
    );
}

// Every new error: its code and what the message says.
#[test]
fn bad_settings_domains_and_labels_table() {
    let pool = "[[nodePools]]\nname = \"gp\"\nzones = [\"a\", \"b\"]\nnodesPerZone = 1\n";
    let rack = domains(&["example.com/rack"]);
    let cases: Vec<(String, Code, &str)> = vec![
        (format!("{pool}os = \"\"\n"), Code::InvalidNodeSetting, "os `` (the value of `kubernetes.io/os`)"),
        (format!("{pool}arch = \"-arm\"\n"), Code::InvalidNodeSetting, "arch `-arm`"),
        (format!("{pool}region = \"eu 1\"\n"), Code::InvalidNodeSetting, "region `eu 1`"),
        (format!("{pool}instanceType = \"{}\"\n", "m".repeat(64)), Code::InvalidNodeSetting, "instanceType"),
        (
            format!("{pool}[nodePools.domains]\n\"example.com/row\" = [\"r1\"]\n"),
            Code::InvalidPoolDomains,
            "`example.com/row`, which is not an extra failure-domain key: the cluster's failureDomains.extra keys \
             are example.com/rack",
        ),
        (
            format!("{pool}[nodePools.domains]\n\"topology.kubernetes.io/zone\" = [\"a\"]\n"),
            Code::InvalidPoolDomains,
            "(it is the zone key: kix sets it from zones)",
        ),
        (
            format!("{pool}[nodePools.domains]\n\"example.com/rack\" = []\n"),
            Code::InvalidPoolDomains,
            "lists no values for `example.com/rack`",
        ),
        (
            format!("{pool}[nodePools.domains]\n\"example.com/rack\" = [\"r1\", \"r1\"]\n"),
            Code::InvalidPoolDomains,
            "value `r1` of `example.com/rack` is listed twice",
        ),
        (
            format!("{pool}[nodePools.domains]\n\"example.com/rack\" = [\"r/1\"]\n"),
            Code::InvalidPoolDomains,
            "value `r/1` of `example.com/rack` is not a valid label value",
        ),
        (
            format!("{pool}labels = {{ \"kubernetes.io/hostname\" = \"x\" }}\n"),
            Code::PoolLabelConflict,
            "label `kubernetes.io/hostname` conflicts: kix sets it to each node's name",
        ),
        (
            format!("{pool}labels = {{ \"topology.kubernetes.io/zone\" = \"a\" }}\n"),
            Code::PoolLabelConflict,
            "kix sets it to each node's zone from `zones`",
        ),
        (
            format!("{pool}arch = \"arm64\"\nlabels = {{ \"kubernetes.io/arch\" = \"arm64\" }}\n"),
            Code::PoolLabelConflict,
            "the pool's `arch` sets it too",
        ),
        (
            format!(
                "{pool}labels = {{ \"example.com/rack\" = \"r1\" }}\n[nodePools.domains]\n\
                 \"example.com/rack\" = [\"r1\"]\n"
            ),
            Code::PoolLabelConflict,
            "[nodePools.domains] sets it too",
        ),
    ];
    for (text, code, says) in cases {
        let found = problems(&text, &rack);
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert_eq!(found[0].0, code, "{text}: {found:?}");
        assert!(found[0].1.contains(says), "{text}: {}", found[0].1);
    }
    // The old shapes keep working: a zone key in labels on a pool without zones, a rack in labels.
    let single =
        "[[nodePools]]\nname = \"gp\"\nnodesPerZone = 2\nlabels = { \"topology.kubernetes.io/zone\" = \"a\" }\n";
    let source = SourceFile::new("c.toml", single.to_string());
    let mut diagnostics = Diagnostics::default();
    let one_zone = Substrate { multi_node: Some(true), zones: Some(vec!["a".into()]) };
    assert!(validate(&pools(single), &one_zone, &rack, &source, &Subject::default(), &mut diagnostics));
    assert!(problems(&format!("{pool}labels = {{ \"example.com/rack\" = \"r1\" }}\n"), &rack).is_empty());
}

// K0313: an extra key that the nodes of no pool, or of some pools, carry.
#[test]
fn missing_extra_keys_table() {
    let text = "failureDomains = { extra = [\"example.com/rack\", \"example.com/row\"] }\n\
                [[nodePools]]\nname = \"racked\"\nnodesPerZone = 1\n\
                [nodePools.domains]\n\"example.com/rack\" = [\"r1\"]\n\
                [[nodePools]]\nname = \"plain\"\nnodesPerZone = 1\n";
    let raw = toml::from_str::<RawCluster>(&format!("availability = \"node\"\n{text}")).unwrap();
    let found = missing_extra_keys(&raw.node_pools, &raw.failure_domains.extra);
    let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with(
            "failure-domain key `example.com/rack` is declared, but the nodes of node pool `plain` lack it"
        ),
        "{}",
        messages[0]
    );
    assert!(messages[0].contains("steers replicas away from those nodes"), "{}", messages[0]);
    assert!(
        messages[1]
            .starts_with("failure-domain key `example.com/row` is declared, but no node of the inventory carries it"),
        "{}",
        messages[1]
    );
    assert!(messages[1].contains("does nothing on this cluster"), "{}", messages[1]);
    // Without an inventory kix knows nothing of the nodes: no warning.
    assert!(missing_extra_keys(&[], &raw.failure_domains.extra).is_empty());
}
