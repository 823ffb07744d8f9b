//! What a build keeps of each compiled cluster for its summary (the table `kix build` prints and the
//! JSON of `build` and `check`), made from the cluster's plan as soon as that cluster is compiled, once
//! the plan is dropped. A fleet build keeps one of these per cluster instead of the plans, so what it
//! holds grows by what the summary shows (about a hundred bytes a workload), not by what kix decided
//! (a plan's workload alone is nearly three hundred, issue 20).
//!
//! The strings every cluster of a fleet repeats (package names and versions, workload names, spread
//! keys) are shared through an [`Interner`] for the whole compile.

use crate::derive::{ClusterPlan, InstancePlan};
use crate::sizing::cost::{Cost, instance_requests, workload_requests};
use kix_kube::level::Level;
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

mod record;

/// One compiled cluster as its build summary shows it.
#[derive(Debug)]
pub struct ClusterSummary {
    pub name: String,
    /// By name, as the summary lists them.
    pub instances: Vec<InstanceSummary>,
    /// The objects written once for several instances (`_shared.yaml`), in the order they are written.
    pub shared: Vec<SharedSummary>,
}

/// One instance: its package, level, requests and workloads.
#[derive(Debug, PartialEq)]
pub struct InstanceSummary {
    pub name: String,
    pub namespace: String,
    pub package: Arc<str>,
    pub package_version: Arc<str>,
    pub requested: Level,
    pub level: Level,
    /// Its pods' requests at its level, all workloads added (`capacity::instance_requests`).
    pub requests: Cost,
    /// Shared by instances whose workloads read back from one record line (`record`).
    pub workloads: Arc<[WorkloadSummary]>,
}

/// One workload, as the summary's `WORKLOADS` column and JSON show it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSummary {
    /// The kind as the API spells it ([`kix_kube::kind::WorkloadKind::as_str`]).
    pub kind: Arc<str>,
    pub name: Arc<str>,
    pub level: Level,
    pub replicas: u32,
    /// Whether kix derived a budget for it.
    pub derived_pdb: bool,
    pub explicit_placement: bool,
    /// The budget of its group, which it emits (the group's first member): the group's name.
    pub group_budget: Option<Arc<str>>,
    /// The derived spread constraints' keys, in order, and which one is hard.
    pub spreads: Arc<Spreads>,
    /// Its pods' requests at its level (`capacity::workload_requests`).
    pub requests: Cost,
}

/// A workload's spread keys and the index of the hard one: most workloads of a fleet share a few of these.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Spreads {
    pub keys: Box<[Arc<str>]>,
    pub hard: Option<usize>,
}

impl Spreads {
    /// The key of the one `DoNotSchedule` constraint, if any ([`crate::derive::WorkloadPlan::hard_key`]).
    pub fn hard_key(&self) -> Option<&str> {
        self.hard.map(|index| &*self.keys[index])
    }
}

/// An object written once for several instances: `Kind name` and the instances that emit it.
#[derive(Debug)]
pub struct SharedSummary {
    pub object: String,
    pub instances: Vec<String>,
}

/// The strings and spread lists of one compile's summaries, each kept once, shared by every core.
#[derive(Default)]
pub struct Interner {
    strings: Mutex<HashSet<Arc<str>, foldhash::fast::FixedState>>,
    spreads: Mutex<HashSet<Arc<Spreads>, foldhash::fast::FixedState>>,
}

impl Interner {
    fn string(&self, text: &str) -> Arc<str> {
        intern(&self.strings, text, || Arc::from(text))
    }

    fn spreads(&self, spreads: Spreads) -> Arc<Spreads> {
        let mut set = self.spreads.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(kept) = set.get(&spreads) {
            return Arc::clone(kept);
        }
        let kept = Arc::new(spreads);
        set.insert(Arc::clone(&kept));
        kept
    }
}

fn intern<T: ?Sized + Hash + Eq>(
    set: &Mutex<HashSet<Arc<T>, foldhash::fast::FixedState>>,
    value: &T,
    make: impl FnOnce() -> Arc<T>,
) -> Arc<T> {
    let mut set = set.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(kept) = set.get(value) {
        return Arc::clone(kept);
    }
    let kept = make();
    set.insert(Arc::clone(&kept));
    kept
}

impl ClusterSummary {
    /// What the summary shows of a compiled cluster.
    pub fn of(plan: &ClusterPlan, interner: &Interner) -> ClusterSummary {
        let mut instances: Vec<InstanceSummary> =
            plan.instances.iter().map(|instance| InstanceSummary::of(instance, interner)).collect();
        instances.sort_by(|a, b| a.name.cmp(&b.name));
        let shared = plan
            .shared
            .iter()
            .map(|shared| SharedSummary { object: object_name(&shared.object), instances: shared.instances.clone() })
            .collect();
        ClusterSummary { name: plan.name.clone(), instances, shared }
    }

    /// The summary with the line of `instance` (compiled again, `crate::reuse`) put in place of the line of
    /// the same name; unchanged when it has none. Whether it changed: `false` when the line it has says the
    /// same (it is then kept, shared as it was), so the summary is still the one its record describes.
    pub fn refresh(&mut self, instance: &InstancePlan, interner: &Interner) -> bool {
        let Ok(at) = self.instances.binary_search_by(|line| line.name.as_str().cmp(&instance.name)) else {
            return true;
        };
        let line = InstanceSummary::of(instance, interner);
        let changed = self.instances[at] != line;
        if changed {
            self.instances[at] = line;
        }
        changed
    }

    /// Only the cluster's name: what a build into a stream and `kix check` in text keep (they print no
    /// summary).
    /// Only a cluster's name: what a build keeps of a cluster it did not compile (`crate::reuse`).
    pub fn of_name(name: String) -> ClusterSummary {
        ClusterSummary { name, instances: Vec::new(), shared: Vec::new() }
    }

    pub fn named(plan: &ClusterPlan) -> ClusterSummary {
        ClusterSummary { name: plan.name.clone(), instances: Vec::new(), shared: Vec::new() }
    }

    /// [`ClusterSummary::of`] when the summary will be shown, else [`ClusterSummary::named`].
    pub fn kept(plan: &ClusterPlan, shown: bool, interner: &Interner) -> ClusterSummary {
        if shown { ClusterSummary::of(plan, interner) } else { ClusterSummary::named(plan) }
    }
}

impl InstanceSummary {
    /// What the summary shows of one compiled instance.
    pub fn of(instance: &InstancePlan, interner: &Interner) -> InstanceSummary {
        InstanceSummary {
            name: instance.name.clone(),
            namespace: instance.namespace.clone(),
            package: interner.string(&instance.package),
            package_version: interner.string(&instance.package_version),
            requested: instance.requested,
            level: instance.level,
            requests: instance_requests(instance),
            workloads: instance
                .workloads
                .iter()
                .map(|workload| WorkloadSummary {
                    kind: interner.string(workload.kind.as_str()),
                    name: interner.string(&workload.name),
                    level: workload.level,
                    replicas: workload.replicas,
                    derived_pdb: workload.derived_pdb(),
                    explicit_placement: workload.explicit_placement,
                    group_budget: workload.group_budget.as_ref().map(|group| interner.string(&group.name)),
                    spreads: interner.spreads(Spreads {
                        keys: workload.spreads.iter().map(|spread| interner.string(&spread.key)).collect(),
                        hard: workload.spreads.iter().position(|spread| spread.hard),
                    }),
                    requests: workload_requests(workload),
                })
                .collect(),
        }
    }
}

/// `Kind name` of an emitted object.
fn object_name(object: &kix_yaml::Value) -> String {
    let text = |value: Option<&kix_yaml::Value>| value.and_then(|v| v.as_str()).unwrap_or_default().to_string();
    format!("{} {}", text(object.get("kind")), text(object.get("metadata").and_then(|m| m.get("name"))))
}

#[cfg(test)]
mod tests {
    use crate::compile::{Selection, check};
    use crate::testing::{TestTree, workload_yaml};

    /// `check` (each cluster resolved, compiled and dropped, a summary kept) reports what the whole compile
    /// does: the same summary, made from the kept plans, and the same findings.
    #[test]
    fn a_summarized_compile_equals_the_whole_compile() {
        let package =
            "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n[workloads.w]\nreplicas = { none = 1, pod = 2, node = 3 }\n";
        let cluster = |level: &str| {
            format!(
                "availability = \"{level}\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"b\"\npackage = \"p\"\n\
                 [[instances]]\nname = \"a\"\npackage = \"p\"\navailability = \"none\"\n"
            )
        };
        let tree = TestTree::new().cluster("one", &cluster("node")).cluster("two", &cluster("pod")).package(
            "p",
            package,
            &[("w.yaml", &workload_yaml("Deployment", "w", None, ""))],
        );
        let whole = tree.compile();
        assert!(whole.ok(), "{:?}", whole.diagnostics);
        let summarized = check(&Selection { root: tree.root().to_path_buf(), ..Selection::default() }, true);
        let interner = super::Interner::default();
        let from_plans: Vec<super::ClusterSummary> =
            whole.clusters.iter().map(|plan| super::ClusterSummary::of(plan, &interner)).collect();
        assert_eq!(format!("{:?}", summarized.clusters), format!("{from_plans:?}"));
        assert_eq!(summarized.clusters.len(), 2);
        assert_eq!(summarized.clusters[0].instances[0].name, "a", "instances by name");
        assert_eq!(summarized.diagnostics.summary(), whole.diagnostics.summary());
    }
}
