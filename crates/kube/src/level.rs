//! Availability levels: the four promises kix compiles (`none < pod < node < zone`), and what must
//! keep running through a failure to keep one (`Survive`: one pod, or a majority).
//!
//! A level is what an operator needs and what a package can meet; the order
//! matters everywhere (ceilings lower, substrates cap, replica mappings step),
//! so the enum derives `Ord` in declaration order.

use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// One availability level. Declaration order is the promise order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A failure or rolling update may cause downtime.
    None,
    /// Losing one pod, or replacing pods during an update, causes no downtime.
    Pod,
    /// Losing one node causes no downtime.
    Node,
    /// Losing one availability zone causes no downtime.
    Zone,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 4] = [Level::None, Level::Pod, Level::Node, Level::Zone];

    /// The name used in files, annotations and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Pod => "pod",
            Level::Node => "node",
            Level::Zone => "zone",
        }
    }

    /// Parses a level name as written in a cluster or package file.
    pub fn parse(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|level| level.as_str() == name)
    }
}

/// Levels are read from plain strings, so that a wrong value gets a message in kix's words
/// ("expected an availability level: none, pod, node or zone") rather than a parser's.
impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Level, D::Error> {
        struct LevelVisitor;
        impl serde::de::Visitor<'_> for LevelVisitor {
            type Value = Level;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an availability level: \"none\", \"pod\", \"node\" or \"zone\"")
            }
            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Level, E> {
                Level::parse(value).ok_or_else(|| {
                    E::custom(format!(
                        "unknown availability level `{value}`, expected one of `none`, `pod`, `node`, `zone`"
                    ))
                })
            }
        }
        deserializer.deserialize_str(LevelVisitor)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// In JSON Schemas of the input files (`kix schema`): one of the four level names.
impl schemars::JsonSchema for Level {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Level".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["none", "pod", "node", "zone"],
            "description": "An availability level: none < pod (survives losing a pod) < node (losing a node) < zone (losing a zone)."
        })
    }
}

/// `survive`: what must keep running through one failure.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Survive {
    /// At least one pod keeps running.
    #[default]
    One,
    /// More than half of the pods keep running (a quorum).
    Majority,
}

impl Survive {
    pub fn as_str(self) -> &'static str {
        match self {
            Survive::One => "one",
            Survive::Majority => "majority",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_by_promise() {
        assert!(Level::None < Level::Pod);
        assert!(Level::Pod < Level::Node);
        assert!(Level::Node < Level::Zone);
    }

    #[test]
    fn parse_round_trips_and_rejects_unknown_names() {
        for level in Level::ALL {
            assert_eq!(Level::parse(level.as_str()), Some(level));
        }
        assert_eq!(Level::parse("region"), None);
        assert_eq!(Level::parse("Zone"), None);
    }

    #[test]
    fn deserialising_explains_what_a_level_is() {
        #[derive(Debug, Deserialize)]
        struct File {
            #[allow(dead_code)]
            level: Level,
        }
        let unknown = toml::from_str::<File>("level = \"region\"").unwrap_err().to_string();
        assert!(unknown.contains("unknown availability level `region`"), "{unknown}");
        let wrong_type = toml::from_str::<File>("level = true").unwrap_err().to_string();
        assert!(wrong_type.contains("expected an availability level"), "{wrong_type}");
        assert_eq!(toml::from_str::<File>("level = \"node\"").unwrap().level, Level::Node);
    }
}
