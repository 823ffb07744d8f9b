//! R3: a requested level against what the cluster's substrate can do. Both a cluster's own level
//! and an instance's override are checked here, with the same words.

use super::model::Sourced;
use super::substrate::{Substrate, Support};
use kix_diag::{Code, Diagnostic, Diagnostics, Subject};
use kix_kube::level::Level;

/// R3: a requested level against the substrate; false when declared capabilities rule it out.
pub(super) fn check_support(
    name: &str,
    substrate: &Substrate,
    level: &Sourced<Level>,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> bool {
    let value = level.value;
    match substrate.support(value) {
        Support::Supported => true,
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
            false
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
            true
        }
    }
}
