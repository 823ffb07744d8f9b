//! [`Cause`], one finding as a person reads it: the diagnostics that say the same thing at the same place
//! for different instances and clusters, shown once with the instances they apply to (issue 42).
//!
//! A fleet of 1,000 clusters of 100 instances each reports a package ceiling (K0307) or an uneven zone
//! split (K0460) once per instance: 71,344 warnings in 563,302 lines, where a reader wants one line per
//! cause. As rustc and clippy say "N more" and cargo says a warning reported for several targets once,
//! diagnostics are one cause when they have the same code, the same primary location (file and place, and
//! the text under it), the same message, the same secondary labels, notes and help, and the same package
//! and workload in their subject: they differ at most by the cluster and instance they are about. A
//! message that differs by a number (`3 replicas` against `5 replicas`) is another cause: its count is
//! part of what to fix. The collection stays one record per instance (`Diagnostics`: `allow` is
//! decided where it is written, for an instance or a cluster, and `kix explain` looks an instance's
//! findings up); the grouping is the view every output form is printed from.

use crate::diagnostic::{Diagnostic, Subject};
use crate::render::Style;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasher, Hash, Hasher};

/// How many of a cause's instances the text names before `and N more`.
const NAMED: usize = 3;

/// One cause: its first diagnostic (in report order) and all of them, that one first.
#[derive(Clone, Debug)]
pub struct Cause<'d> {
    first: &'d Diagnostic,
    members: Vec<&'d Diagnostic>,
    subjects: Vec<&'d Subject>,
}

impl<'d> Cause<'d> {
    /// The first diagnostic of the cause: its code, message and places are every one's.
    pub fn diagnostic(&self) -> &'d Diagnostic {
        self.first
    }

    /// Every instance (or cluster) the cause applies to, in report order.
    pub fn subjects(&self) -> &[&'d Subject] {
        &self.subjects
    }

    /// What the cause says: the message, without the `cluster `c` instance `i`: ` it opens with when the
    /// cause stands for several diagnostics (the `= in` line names them).
    pub fn message(&self) -> String {
        match self.members.len() {
            1 => self.first.message.to_string(),
            _ => self.first.unqualified().to_string(),
        }
    }

    /// How many diagnostics the cause stands for.
    pub fn count(&self) -> usize {
        self.subjects.len()
    }

    /// `in package pkg3 of 2,104 instances of 701 clusters: c0/i3, c0/i50, c1/i2 and 2,101 more; kix check
    /// --format json lists them`, the `= in` line of a cause of more than one diagnostic (`None` for one).
    pub fn spread(&self) -> Option<String> {
        if self.subjects.len() < 2 {
            return None;
        }
        let words = crate::words::thousands;
        let instances = self.subjects.iter().filter(|s| s.instance.is_some()).count();
        let clusters: BTreeSet<&str> = self.subjects.iter().filter_map(|s| s.cluster.as_deref()).collect();
        let counted = |n: usize, noun: &str| format!("{} {noun}{}", words(n), crate::words::s(n));
        let many = match (instances, clusters.len()) {
            (0, clusters) => counted(clusters, "cluster"),
            (instances, 0) => counted(instances, "instance"),
            (instances, clusters) => format!("{} of {}", counted(instances, "instance"), counted(clusters, "cluster")),
        };
        let named: Vec<String> = self.subjects.iter().take(NAMED).map(|s| name(s)).collect();
        let more = match self.subjects.len().saturating_sub(NAMED) {
            0 => String::new(),
            n => format!(" and {} more; kix check --format json lists them", words(n)),
        };
        let common = Subject {
            package: self.first.subject.package.clone(),
            workload: self.first.subject.workload.clone(),
            ..Subject::default()
        };
        let common = common.describe().map(|c| format!("{c} of ")).unwrap_or_default();
        Some(format!("in {common}{many}: {}{more}", named.join(", ")))
    }

    /// The text form: the first diagnostic, its `= in` line saying every instance it applies to.
    pub fn render(&self, style: Style) -> String {
        let within = self.spread().or_else(|| self.first.subject.describe().map(|s| format!("in {s}")));
        self.first.render_in(style, &self.message(), within)
    }

    /// The JSON form: the first diagnostic's, and for a cause of several diagnostics its [`Cause::message`]
    /// and `instances`, every one's cluster and instance (the first's too) in report order, with its own
    /// message where that says more (K0308 names every instance of its cluster).
    pub fn to_json_value(&self) -> serde_json::Value {
        let mut value = self.first.to_json_value();
        if self.members.len() > 1 {
            let message = self.message();
            let all: Vec<serde_json::Value> = self
                .members
                .iter()
                .map(|d| {
                    let s = &d.subject;
                    let mut member =
                        serde_json::json!({ "cluster": s.cluster.as_deref(), "instance": s.instance.as_deref() });
                    if d.message != message.as_str() {
                        member["message"] = serde_json::Value::from(d.message.to_string());
                    }
                    member
                })
                .collect();
            value["message"] = serde_json::Value::from(message);
            value["instances"] = serde_json::Value::Array(all);
        }
        value
    }
}

/// `c0/i3`: a subject's cluster and instance, or whichever of them it has.
fn name(subject: &Subject) -> String {
    match (&subject.cluster, &subject.instance) {
        (Some(cluster), Some(instance)) => format!("{cluster}/{instance}"),
        (Some(one), None) | (None, Some(one)) => one.to_string(),
        (None, None) => "(no cluster)".to_string(),
    }
}

/// The causes of `items` (in report order), each in the place of its first diagnostic.
pub(crate) fn causes<'d>(items: impl Iterator<Item = &'d Diagnostic>) -> Vec<Cause<'d>> {
    let items: Vec<&'d Diagnostic> = items.collect();
    // Each finding's hash taken on every core for a report this long (a fleet's rebuild groups tens of
    // thousands of findings on one core, after the last cluster compiled); the grouping stays in order.
    let hashes: Vec<u64> = if items.len() >= PARALLEL_FROM {
        use rayon::prelude::*;
        items.par_iter().map(|diagnostic| cause_hash(diagnostic)).collect()
    } else {
        items.iter().map(|diagnostic| cause_hash(diagnostic)).collect()
    };
    let mut causes: Vec<Cause<'d>> = Vec::new();
    // By a hash of what makes a cause, each bucket's causes compared in full: a lint's tens of thousands
    // of findings are all at different places, so no bucket grows.
    let mut buckets: HashMap<u64, Vec<usize>, foldhash::fast::FixedState> = HashMap::default();
    for (diagnostic, hash) in items.into_iter().zip(hashes) {
        let bucket = buckets.entry(hash).or_default();
        match bucket.iter().find(|&&at| causes[at].first.same_cause(diagnostic)) {
            Some(&at) => {
                causes[at].members.push(diagnostic);
                causes[at].subjects.push(&diagnostic.subject);
            }
            None => {
                bucket.push(causes.len());
                causes.push(Cause {
                    first: diagnostic,
                    members: vec![diagnostic],
                    subjects: vec![&diagnostic.subject],
                });
            }
        }
    }
    causes
}

/// How many findings a report holds before their hashes are taken on every core.
const PARALLEL_FROM: usize = 4096;

/// A hash of what [`Diagnostic::same_cause`] compares (code, place, message, package and workload).
fn cause_hash(diagnostic: &Diagnostic) -> u64 {
    // foldhash, not SipHash: a fleet's rebuild groups tens of thousands of findings a pass, and the buckets
    // are compared in full anyway.
    let mut hasher = foldhash::fast::FixedState::default().build_hasher();
    diagnostic.code.hash(&mut hasher);
    diagnostic.location().map(|l| (l.path(), l.offset())).hash(&mut hasher);
    diagnostic.unqualified().hash(&mut hasher);
    diagnostic.subject.package.hash(&mut hasher);
    diagnostic.subject.workload.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;

    fn about(message: &str, cluster: &str, instance: &str) -> Diagnostic {
        let subject = Subject { cluster: Some(cluster.into()), instance: Some(instance.into()), ..Subject::default() };
        Diagnostic::new(Code::PackageCeiling, message).about(&subject)
    }

    /// A report long enough to have its hashes taken on every core groups as a short one does: each cause
    /// once, in the order its first finding comes, with every member in order.
    #[test]
    fn a_long_report_groups_in_order() {
        let found: Vec<Diagnostic> = (0..PARALLEL_FROM + 904)
            .map(|n| {
                let message = format!("cluster `c{}` instance `i{n}`: caps {} workload", n % 7, n % 3);
                about(&message, &format!("c{}", n % 7), &format!("i{n}"))
            })
            .collect();
        let causes = causes(found.iter());
        let counts: Vec<usize> = causes.iter().map(Cause::count).collect();
        assert_eq!(counts, [1667, 1667, 1666]);
        let messages: Vec<String> = causes.iter().map(|cause| cause.message().to_string()).collect();
        assert_eq!(messages, ["caps 0 workload", "caps 1 workload", "caps 2 workload"]);
        for (index, cause) in causes.iter().enumerate() {
            let instances: Vec<&str> = cause.subjects.iter().filter_map(|s| s.instance.as_deref()).collect();
            let expected: Vec<String> = (index..found.len()).step_by(3).map(|n| format!("i{n}")).collect();
            assert_eq!(instances, expected);
        }
    }

    /// Messages opening with their own cluster and instance are one cause; a number or another cluster's
    /// name in the message makes another.
    #[test]
    fn causes_differ_only_by_cluster_and_instance() {
        let found = [
            about("cluster `a` instance `x`: caps 1 workload", "a", "x"),
            about("cluster `b` instances `y`, `z`: caps 1 workload", "b", "y"),
            about("cluster `c`: caps 1 workload", "c", "w"),
            about("caps 1 workload", "d", "v"),
            about("caps 2 workloads", "d", "v"),
            about("cluster `a` instance `x`: caps 1 workload", "e", "u"),
        ];
        let causes = causes(found.iter());
        let counts: Vec<usize> = causes.iter().map(Cause::count).collect();
        assert_eq!(counts, [4, 1, 1]);
        assert_eq!(causes[0].message(), "caps 1 workload");
        assert_eq!(
            causes[0].spread().unwrap(),
            "in 4 instances of 4 clusters: a/x, b/y, c/w and 1 more; kix check --format json lists them"
        );
        assert_eq!(causes[1].message(), "caps 2 workloads", "a cause of one keeps its message");
        assert_eq!(causes[2].message(), "cluster `a` instance `x`: caps 1 workload", "not its own cluster's name");
        let json = causes[0].to_json_value();
        assert_eq!(json["message"], "caps 1 workload");
        assert_eq!(json["instances"][1]["message"], "cluster `b` instances `y`, `z`: caps 1 workload");
        assert!(json["instances"][3].get("message").is_none(), "said as the cause says it");
    }

    /// A message of two parts (a written head and a fixed sentence) is one cause with the same message
    /// written whole, for another cluster and instance.
    #[test]
    fn a_message_in_parts_is_unqualified_as_one_written_whole() {
        let subject = |cluster: &str| Subject { cluster: Some(cluster.into()), ..Subject::default() };
        let parts = Diagnostic::new(
            Code::PackageCeiling,
            crate::Message::in_parts("cluster `a` instance `x`: PodDisruptionBudget `p`", " has no policy"),
        )
        .about(&subject("a"));
        let whole =
            Diagnostic::new(Code::PackageCeiling, "cluster `b` instance `y`: PodDisruptionBudget `p` has no policy")
                .about(&subject("b"));
        assert_eq!(parts.unqualified(), "PodDisruptionBudget `p` has no policy");
        assert_eq!(whole.unqualified(), "PodDisruptionBudget `p` has no policy");
        assert_eq!(causes([&parts, &whole].into_iter()).len(), 1);
        let other = Diagnostic::new(Code::PackageCeiling, "cluster `bb`: PodDisruptionBudget `p` has no policy")
            .about(&subject("b"));
        assert_eq!(
            other.unqualified(),
            "cluster `bb`: PodDisruptionBudget `p` has no policy",
            "another cluster's name"
        );
    }
}
