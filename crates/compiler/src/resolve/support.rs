//! R3: a requested level against what the cluster's substrate can do. Both a cluster's own level
//! and an instance's override are checked here, with the same words, and the check is recorded
//! ([`SubstrateCheck`]) for the instance's trail.

use super::model::{Sourced, SubstrateCheck};
use super::substrate::{Substrate, Support};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::level::Level;

/// R3: a requested level against the substrate, reported, with R1's confirmed level beside the verdict
/// ([`SubstrateCheck::rules_out`] when declared capabilities rule it out).
pub(super) fn check_support(
    name: &str,
    substrate: &Substrate,
    level: &Sourced<Level>,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> SubstrateCheck {
    let value = level.value;
    let support = substrate.support(value);
    match &support {
        Support::Supported => {}
        Support::Unsupported(why) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::LevelAboveSubstrate,
                    format!("cluster `{name}` cannot meet availability `{value}`: {why}"),
                )
                .at(level.from.clone())
                .about(subject)
                .help("lower the availability, or correct [capabilities]"),
            );
        }
        Support::Unverified(what) => {
            diagnostics.push(
                Diagnostic::new(Code::LevelUnverified, format!("cluster `{name}`: {what}"))
                    .at(level.from.clone())
                    .about(subject)
                    .help(if value == Level::Zone {
                        "declare capabilities.availabilityZones"
                    } else {
                        "declare capabilities.multiNode"
                    }),
            );
        }
    }
    SubstrateCheck { level: value, confirmed: substrate.confirmed_level(), support }
}
