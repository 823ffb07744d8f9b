//! The substrate (R1, R3) and the failure-domain keys of a cluster.
//!
//! A cluster file declares what its substrate can do (`[capabilities]`);
//! `Substrate` answers which levels that confirms, rules out or leaves
//! unverified, and `FailureDomains` holds the node-label keys the levels
//! name.

use kix_kube::level::Level;

/// What a cluster's substrate is known to be able to do (R1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Substrate {
    /// `capabilities.multiNode`: `None` when not declared.
    pub multi_node: Option<bool>,
    /// `capabilities.availabilityZones`: `None` when not declared.
    pub zones: Option<Vec<String>>,
}

/// Whether a substrate can carry a level (R3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    Supported,
    /// Declared capabilities rule the level out; the reason completes "because …".
    Unsupported(String),
    /// The deciding capability is unknown; the text says what cannot be verified.
    Unverified(String),
}

impl Substrate {
    /// R1: the highest level the declared capabilities confirm (`None` when nothing above none is confirmed
    /// and nothing is ruled out either).
    pub fn confirmed_level(&self) -> Option<Level> {
        if self.multi_node == Some(false) {
            Some(Level::None)
        } else if self.zone_count() >= 2 {
            Some(Level::Zone)
        } else if self.multi_node == Some(true) {
            Some(Level::Node)
        } else {
            None
        }
    }

    pub fn zone_count(&self) -> usize {
        self.zones.as_ref().map_or(0, Vec::len)
    }

    /// True when the cluster is confirmed to have one node.
    pub fn single_node(&self) -> bool {
        self.multi_node == Some(false)
    }

    /// R3: whether a requested level is possible here.
    pub fn support(&self, level: Level) -> Support {
        if level == Level::None {
            return Support::Supported;
        }
        if self.multi_node == Some(false) {
            return Support::Unsupported("the cluster is declared single-node (multiNode = false)".into());
        }
        match level {
            Level::None => Support::Supported,
            Level::Pod | Level::Node => match self.multi_node {
                Some(_) => Support::Supported,
                None if self.zone_count() >= 2 => Support::Supported,
                None => Support::Unverified(format!(
                    "capabilities.multiNode is not declared, so kix cannot verify that `{level}` is possible: \
                     on a single node, {}",
                    if level == Level::Node {
                        "a hard spread over kubernetes.io/hostname leaves every replica after the first Pending"
                    } else {
                        "losing the node loses every replica"
                    }
                )),
            },
            Level::Zone => match &self.zones {
                Some(zones) if zones.len() >= 2 => Support::Supported,
                Some(zones) => Support::Unsupported(format!(
                    "the cluster declares {} availability zone{} (zone needs two or more)",
                    zones.len(),
                    kix_diag::words::s(zones.len())
                )),
                None => Support::Unverified(
                    "capabilities.availabilityZones is not declared, so kix cannot verify that `zone` is possible: \
                     a hard zone rule leaves pods Pending on nodes without the zone label"
                        .into(),
                ),
            },
        }
    }
}

/// The node-label keys a cluster's failure domains are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureDomains {
    pub node: String,
    pub zone: String,
    pub extra: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn substrate(multi_node: Option<bool>, zones: Option<&[&str]>) -> Substrate {
        Substrate { multi_node, zones: zones.map(|z| z.iter().map(|s| s.to_string()).collect()) }
    }

    // R1: what each declared substrate confirms.
    #[test]
    fn r1_substrate_table() {
        let three: &[&str] = &["a", "b", "c"];
        let one: &[&str] = &["a"];
        let cases = [
            (substrate(Some(false), None), Some(Level::None)),
            (substrate(Some(false), Some(one)), Some(Level::None)),
            (substrate(Some(true), None), Some(Level::Node)),
            (substrate(Some(true), Some(one)), Some(Level::Node)),
            (substrate(Some(true), Some(three)), Some(Level::Zone)),
            (substrate(None, Some(three)), Some(Level::Zone)),
            (substrate(None, None), None),
            (substrate(None, Some(one)), None),
        ];
        for (substrate, expected) in cases {
            assert_eq!(substrate.confirmed_level(), expected, "{substrate:?}");
        }
    }

    // R3: errors when the deciding capability is declared, warnings when it is unknown.
    #[test]
    fn r3_support_table() {
        use Support::*;
        let three: &[&str] = &["a", "b", "c"];
        let one: &[&str] = &["a"];
        let kind = |s: Support| match s {
            Supported => "ok",
            Unsupported(_) => "error",
            Unverified(_) => "warning",
        };
        let cases = [
            (substrate(Some(false), None), Level::None, "ok"),
            (substrate(Some(false), None), Level::Pod, "error"),
            (substrate(Some(false), None), Level::Zone, "error"),
            (substrate(Some(true), None), Level::Pod, "ok"),
            (substrate(Some(true), None), Level::Node, "ok"),
            (substrate(Some(true), None), Level::Zone, "warning"),
            (substrate(Some(true), Some(one)), Level::Zone, "error"),
            (substrate(Some(true), Some(three)), Level::Zone, "ok"),
            (substrate(None, None), Level::Pod, "warning"),
            (substrate(None, None), Level::Node, "warning"),
            (substrate(None, None), Level::Zone, "warning"),
            (substrate(None, Some(three)), Level::Node, "ok"),
            (substrate(None, Some(one)), Level::Zone, "error"),
            (substrate(None, Some(&[])), Level::Zone, "error"),
        ];
        for (substrate, level, expected) in cases {
            assert_eq!(kind(substrate.support(level)), expected, "{substrate:?} at {level}");
        }
    }

    #[test]
    fn r3_zone_warning_says_what_cannot_be_verified() {
        let Support::Unverified(text) = substrate(Some(true), None).support(Level::Zone) else { panic!() };
        assert!(text.contains("Pending on nodes without the zone label"), "{text}");
    }
}
