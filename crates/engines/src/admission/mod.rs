//! Admission, offline (issue 40): the cluster's compiled ValidatingAdmissionPolicies evaluated in-process
//! ([`evaluate`], on the `cel` crate), and `kix admission --state`: what they would refuse today among a
//! snapshot's objects ([`dry_run`]), the dry run before switching `warn` to `deny`.

mod cel_values;
pub mod cost;
pub mod dry_run;
pub mod evaluate;

pub use dry_run::{Drift, DryRun, dry_run};
pub use evaluate::{Decision, PolicySet, Request, Violation};
