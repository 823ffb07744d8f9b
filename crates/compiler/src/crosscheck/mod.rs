//! Cross-instance checks: a stage of its own over one cluster's derived
//! output, since two instances that are each fine alone can still break each
//! other when applied together.
//!
//! - [`overlap`]: two workloads of one namespace whose selectors take each
//!   other's pods (R12, K0406);
//! - [`budgets`]: pods selected by two PodDisruptionBudgets, which the
//!   eviction API refuses to evict (K0415);
//! - [`shared_objects`]: one object emitted by two instances (K0417);
//! - [`groups`]: a group's selector that selects another instance's pods (K0424);
//! - [`namespaces`]: an instance's namespace (K0428) or a kept namespace (K0421) that nothing in the
//!   cluster creates.
//!
//! Every check finds its candidates through an index by namespace and label
//! ([`index::LabelIndex`]), never by comparing every pair of a cluster's workloads.

mod budgets;
mod groups;
pub mod index;
mod namespaces;
mod overlap;
mod shared_objects;

use crate::derive::ClusterPlan;
use crate::resolve::Cluster;
use index::ClusterWorkloads;
use kix_diag::Diagnostics;

/// Runs every cross-instance check of one cluster.
pub fn check(cluster: &Cluster, plan: &ClusterPlan, diagnostics: &mut Diagnostics) {
    let plans = &plan.instances;
    let workloads = ClusterWorkloads::of(cluster);
    let mut explained = overlap::report(cluster, &workloads, diagnostics);
    // A workload a group's selector takes in (K0424) is under the group's budget too: that explains it.
    explained.extend(groups::report(cluster, &workloads, diagnostics));
    budgets::report(cluster, &workloads, plans, &explained, diagnostics);
    shared_objects::report(cluster, plans, diagnostics);
    namespaces::report(cluster, plan, diagnostics);
}
