//! Spread-constraint rules (K0701, K0703, K0705-K0709): each workload's
//! `topologySpreadConstraints`, read leniently (a field of the wrong shape is the API server's
//! concern, not lint's) and checked against how kube-scheduler's PodTopologySpread plugin reads
//! them (`pkg/scheduler/framework/plugins/podtopologyspread/common.go`
//! `filterTopologySpreadConstraints`, `filtering.go`) and against the API server's
//! `ValidateTopologySpreadConstraints` (`pkg/apis/core/validation/validation.go`).

use super::set::{Set, Target};
use crate::crosscheck::index::LabelIndex;
use crate::load::documents::Document;
use kix_diag::{Code, Diagnostic, Diagnostics, Location};
use kix_kube::kind::WorkloadKind;
use kix_kube::labels::{CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH};
use kix_kube::selector::{Labels, Selector};
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// `labelSelector` as written.
pub(crate) enum SelectorField {
    /// Absent or null: a nil selector, which matches no pod.
    Missing,
    /// Present and parsed; may be empty (`{}`).
    Set(Selector),
    /// Present but malformed (reported as K0411).
    Invalid(String),
}

/// One constraint of a pod template, with its index for locating it.
pub(crate) struct Constraint {
    pub index: usize,
    pub topology_key: String,
    /// `DoNotSchedule` or `ScheduleAnyway` as written (empty when absent).
    pub when: String,
    pub max_skew: i64,
    pub min_domains: Option<i64>,
    pub selector: SelectorField,
    pub match_label_keys: Vec<String>,
    /// Where the constraint, its `labelSelector`, `minDomains` and each `matchLabelKeys` entry are
    /// written (or the nearest ancestor that is).
    pub at: Location,
    pub at_selector: Location,
    pub at_min_domains: Location,
    pub at_match_label_keys: Vec<Location>,
}

impl Constraint {
    pub fn hard(&self) -> bool {
        self.when == "DoNotSchedule"
    }

    /// `topologyKey` / `whenUnsatisfiable`, as messages name a constraint.
    pub fn describe(&self) -> String {
        format!(
            "the {} constraint on `{}`",
            if self.when.is_empty() { "spread" } else { &self.when },
            self.topology_key
        )
    }

    /// Whether the scheduler counts a pod with `labels` when placing a pod of `owner` (whose own labels are
    /// `own`): the labelSelector, ANDed with `key=value` for every matchLabelKeys key the incoming pod has
    /// (`common.go` `mergeLabelSetWithSelector`). The controllers' hash labels (`pod-template-hash` on a
    /// Deployment's pods, `controller-revision-hash` on a StatefulSet's) are on every pod though not in the
    /// template, and their values differ between workloads: such a key counts only the owner's own pods.
    pub fn counts(&self, owner: &Target, labels: &Labels, same_owner: bool) -> bool {
        let SelectorField::Set(selector) = &self.selector else { return false };
        if !selector.matches(labels) {
            return false;
        }
        self.match_label_keys.iter().all(|key| match owner.pod_labels.get(key) {
            Some(value) => labels.get(key) == Some(value),
            None if controller_hash_key(owner.kind) == key => same_owner,
            None => true,
        })
    }
}

/// The label the workload's controller adds to its pods from the template's hash.
fn controller_hash_key(kind: WorkloadKind) -> &'static str {
    kind.template_hash_label().unwrap_or(CONTROLLER_REVISION_HASH)
}

/// The constraints of a workload's pod template (none when absent, null or not a list), located in
/// the workload's document.
pub(crate) fn constraints(pod_spec: Option<&Value>, document: &Document) -> Vec<Constraint> {
    let list = pod_spec.and_then(|spec| at(spec, &["topologySpreadConstraints"]));
    let Some(list) = list.and_then(Value::as_sequence) else { return Vec::new() };
    let mut constraints: Vec<Constraint> =
        list.iter().enumerate().filter(|(_, c)| c.is_mapping()).map(|(index, c)| read(index, c, document)).collect();
    // Kept for the whole lint, one list per workload: no spare capacity.
    constraints.shrink_to_fit();
    constraints
}

fn read(index: usize, c: &Value, document: &Document) -> Constraint {
    let selector = match at(c, &["labelSelector"]) {
        None => SelectorField::Missing,
        Some(value) => match Selector::from_value(value) {
            Ok(selector) => SelectorField::Set(selector),
            Err(why) => SelectorField::Invalid(why),
        },
    };
    let match_label_keys: Vec<String> = at(c, &["matchLabelKeys"])
        .and_then(Value::as_sequence)
        .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let path = format!("spec.template.spec.topologySpreadConstraints[{index}]");
    let locate = |field: &str| document.locate_field(&format!("{path}.{field}"));
    Constraint {
        index,
        topology_key: str_at(c, &["topologyKey"]).unwrap_or_default().to_string(),
        when: str_at(c, &["whenUnsatisfiable"]).unwrap_or_default().to_string(),
        max_skew: at(c, &["maxSkew"]).and_then(Value::as_i64).unwrap_or(1),
        min_domains: at(c, &["minDomains"]).and_then(Value::as_i64),
        selector,
        at: document.locate_field(&path),
        at_selector: locate("labelSelector"),
        at_min_domains: locate("minDomains"),
        at_match_label_keys: (0..match_label_keys.len()).map(|i| locate(&format!("matchLabelKeys[{i}]"))).collect(),
        match_label_keys,
    }
}

/// Every spread rule over every workload.
pub fn check(set: &Set, index: &LabelIndex<'_>, diagnostics: &mut Diagnostics) {
    for target in &set.workloads {
        for constraint in &target.constraints {
            selector_rules(set, index, target, constraint, diagnostics);
            field_rules(target, constraint, diagnostics);
        }
        duplicates(target, &target.constraints, diagnostics);
    }
}

fn finding(target: &Target, code: Code, at: &Location, message: String) -> Diagnostic {
    Diagnostic::new(code, message).at(at.clone()).workload(&target.name)
}

/// K0705 (no or empty selector), K0701 (misses the workload's pods), K0703 (counts another workload's pods).
fn selector_rules(set: &Set, index: &LabelIndex<'_>, target: &Target, c: &Constraint, diagnostics: &mut Diagnostics) {
    let who = target.label();
    let selector = match &c.selector {
        SelectorField::Invalid(why) => {
            let message = format!("{} of {who}: labelSelector: {why}", c.describe());
            diagnostics.push(finding(target, Code::InvalidSelector, &c.at_selector, message));
            return;
        }
        SelectorField::Missing => {
            let message =
                format!("{} of {who} has no labelSelector, so it counts no pods and spreads nothing", c.describe());
            diagnostics.push(
                finding(target, Code::LintSpreadWithoutSelector, &c.at, message)
                    .help("set labelSelector to the workload's spec.selector"),
            );
            return;
        }
        SelectorField::Set(selector) if selector.is_empty() => {
            let message = format!(
                "{} of {who} has an empty labelSelector, which spreads nothing (kubernetes#141339)",
                c.describe()
            );
            diagnostics.push(
                finding(target, Code::LintSpreadWithoutSelector, &c.at_selector, message)
                    .help("set labelSelector to the workload's spec.selector"),
            );
            return;
        }
        SelectorField::Set(selector) => selector,
    };
    if !selector.matches(target.pod_labels()) {
        let message = format!(
            "{} of {who} selects none of the workload's own pods (labels {}), so it does not spread them",
            c.describe(),
            show_labels(target.pod_labels())
        );
        diagnostics.push(
            finding(target, Code::LintSpreadMissesOwnPods, &c.at_selector, message)
                .help("copy the workload's spec.selector into labelSelector"),
        );
        return;
    }
    // A group's members (issue 17) count each other on purpose.
    let others: Vec<String> = set
        .candidates(index, target, selector)
        .filter(|other| c.counts(target, other.pod_labels(), false) && !Set::same_group(&target.group, &other.group))
        .map(Target::label)
        .collect();
    if !others.is_empty() {
        let message = format!(
            "{} of {who} also counts the pods of {}, so the scheduler balances them together",
            c.describe(),
            super::text::and_list(&others)
        );
        let help = match target.kind.template_hash_label() {
            Some(key) => {
                format!("narrow labelSelector to the workload's spec.selector, or add matchLabelKeys: [{key}]")
            }
            None => "narrow labelSelector to the workload's spec.selector".to_string(),
        };
        diagnostics.push(finding(target, Code::LintSpreadCountsOthers, &c.at_selector, message).help(help));
    }
}

/// K0706 (hard spread without pod-template-hash), K0707 (minDomains on a soft constraint), K0709 (a
/// matchLabelKeys key also in the selector).
fn field_rules(target: &Target, c: &Constraint, diagnostics: &mut Diagnostics) {
    let who = target.label();
    // A group's member (issue 17) has none: pod-template-hash would narrow the count to its own ReplicaSet.
    if c.hard()
        && target.kind == WorkloadKind::Deployment
        && !c.match_label_keys.iter().any(|k| k == POD_TEMPLATE_HASH)
        && target.group.is_none()
    {
        let message = format!(
            "{} of {who} has no matchLabelKeys: [pod-template-hash], so a rolling update balances old and new pods \
             together and can leave the new ones lopsided",
            c.describe()
        );
        diagnostics.push(
            finding(target, Code::LintHardSpreadWithoutHash, &c.at, message)
                .help("add `matchLabelKeys: [pod-template-hash]` to the constraint"),
        );
    }
    if c.min_domains.is_some() && !c.hard() {
        let message = format!(
            "{} of {who} sets minDomains, which the API server accepts only with whenUnsatisfiable: DoNotSchedule",
            c.describe()
        );
        diagnostics.push(
            finding(target, Code::LintMinDomainsSoft, &c.at_min_domains, message)
                .help("remove minDomains, or make the constraint DoNotSchedule"),
        );
    }
    if let SelectorField::Set(selector) = &c.selector {
        for (i, key) in c.match_label_keys.iter().enumerate() {
            if selector.keys().any(|k| k == key) {
                let message = format!(
                    "{} of {who} lists `{key}` in matchLabelKeys and in labelSelector, which the API server refuses",
                    c.describe()
                );
                diagnostics.push(
                    finding(target, Code::LintMatchLabelKeyInSelector, &c.at_match_label_keys[i], message)
                        .help(format!("remove `{key}` from matchLabelKeys or from labelSelector")),
                );
            }
        }
    }
}

/// K0708: a (topologyKey, whenUnsatisfiable) pair written twice.
fn duplicates(target: &Target, constraints: &[Constraint], diagnostics: &mut Diagnostics) {
    for (i, c) in constraints.iter().enumerate() {
        if let Some(first) = constraints[..i].iter().find(|f| f.topology_key == c.topology_key && f.when == c.when) {
            let message = format!(
                "topologySpreadConstraints[{}] of {} repeats the pair (`{}`, {}) of topologySpreadConstraints[{}], \
                 which the API server refuses",
                c.index,
                target.label(),
                c.topology_key,
                c.when,
                first.index
            );
            diagnostics.push(
                finding(target, Code::LintDuplicateConstraint, &c.at, message)
                    .help("merge the two constraints into one"),
            );
        }
    }
}

/// `{app: web, tier: api}`.
pub(crate) fn show_labels(labels: &Labels) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", pairs.join(", "))
}
