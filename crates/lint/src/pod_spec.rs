//! What lint reads of a pod spec, as records kept for the whole run: its spread constraints
//! (`topologySpreadConstraints`, read leniently: a field of the wrong shape is the API server's concern,
//! not lint's) and its pod affinity and anti-affinity terms, each with the places a finding may point
//! at located in the workload's document. [`super::set`] makes them as documents stream past; the rule
//! files ([`super::spread`], [`super::affinity`], [`super::siblings`], [`super::cluster`]) read them.

use kix_compiler::load::documents::Document;
use kix_diag::Location;
use kix_kube::kind::WorkloadKind;
use kix_kube::labels::CONTROLLER_REVISION_HASH;
use kix_kube::selector::{CompactLabels, CompactSelector, Labels, Selector};
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// `labelSelector` as written.
pub(crate) enum SelectorField {
    /// Absent or null: a nil selector, which matches no pod.
    Missing,
    /// Present and parsed; may be empty (`{}`).
    Set(CompactSelector),
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
    pub fn counts(&self, owner: (&CompactLabels, WorkloadKind), labels: &CompactLabels, same_owner: bool) -> bool {
        let (owner_labels, owner_kind) = owner;
        let SelectorField::Set(selector) = &self.selector else { return false };
        if !selector.matches(labels) {
            return false;
        }
        self.match_label_keys.iter().all(|key| match owner_labels.get(key) {
            Some(value) => labels.get(key) == Some(value),
            None if controller_hash_key(owner_kind) == key => same_owner,
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
            Ok(selector) => SelectorField::Set(selector.into()),
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

/// One required anti-affinity term.
pub(crate) struct Term {
    pub topology_key: String,
    /// Whether its selector (and namespaces) take in the workload's own pods.
    pub self_matching: bool,
    /// Where the term is written.
    pub at: Location,
}

/// A required pod affinity term.
pub(crate) struct AffinityTerm {
    pub topology_key: String,
    pub at: Location,
}

/// The terms of a list under `affinity.<kind>.<list>` of a pod spec (none when absent).
fn terms<'a>(pod_spec: Option<&'a Value>, kind: &str, list: &str) -> &'a [Value] {
    pod_spec
        .and_then(|spec| at(spec, &["affinity", kind, list]))
        .and_then(Value::as_sequence)
        .map_or(&[], Vec::as_slice)
}

/// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution` of a pod spec whose pods carry
/// `labels` in `namespace`, located in the workload's document.
pub(crate) fn required_anti_affinity(
    pod_spec: Option<&Value>,
    labels: &Labels,
    namespace: &str,
    document: &Document,
) -> Vec<Term> {
    terms(pod_spec, "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
        .map(|(index, term)| Term {
            topology_key: str_at(term, &["topologyKey"]).unwrap_or_default().to_string(),
            self_matching: matches_own_pods(labels, namespace, term),
            at: document.locate_field(&format!(
                "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
            )),
        })
        .collect()
}

/// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`, located in the workload's document.
pub(crate) fn required_affinity(pod_spec: Option<&Value>, document: &Document) -> Vec<AffinityTerm> {
    terms(pod_spec, "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
        .map(|(index, term)| AffinityTerm {
            topology_key: str_at(term, &["topologyKey"]).unwrap_or_default().to_string(),
            at: document.locate_field(&format!(
                "spec.template.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
            )),
        })
        .collect()
}

/// Which of the four lists of pod (anti-)affinity a term is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TermList {
    /// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    Required,
    /// `podAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    Preferred,
    /// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    RequiredAnti,
    /// `podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    PreferredAnti,
}

impl TermList {
    const ALL: [TermList; 4] =
        [TermList::Required, TermList::Preferred, TermList::RequiredAnti, TermList::PreferredAnti];

    /// `podAffinity` or `podAntiAffinity`, and the list's field.
    fn fields(self) -> (&'static str, &'static str) {
        match self {
            TermList::Required => ("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
            TermList::Preferred => ("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
            TermList::RequiredAnti => ("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
            TermList::PreferredAnti => ("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
        }
    }

    /// `required pod anti-affinity`, as messages name a term's list.
    pub fn describe(self) -> &'static str {
        match self {
            TermList::Required => "required pod affinity",
            TermList::Preferred => "preferred pod affinity",
            TermList::RequiredAnti => "required pod anti-affinity",
            TermList::PreferredAnti => "preferred pod anti-affinity",
        }
    }
}

/// Any pod affinity or anti-affinity term, as far as whose pods its selector may take in.
pub(crate) struct PodTerm {
    pub list: TermList,
    pub topology_key: String,
    /// `labelSelector`; None when absent or null (a nil selector, which selects no pod) or malformed.
    pub selector: Option<CompactSelector>,
    /// The selector was written but does not parse (the API server's concern: no finding of this rule).
    pub invalid: bool,
    /// `namespaces` as written.
    pub namespaces: Vec<String>,
    /// A `namespaceSelector` is written (an empty one is every namespace; lint cannot read another's).
    pub namespace_selector: bool,
    /// Where the term's `labelSelector` is written (or the term, when it has none).
    pub at_selector: Location,
}

impl PodTerm {
    /// Whether pods of `namespace` are in the term's namespaces, for a workload of `own` namespace (`""`,
    /// a namespace not written, may be any: it is where the manifests are applied).
    pub fn takes_namespace(&self, own: &str, namespace: &str) -> bool {
        self.namespace_selector
            || (self.namespaces.is_empty() && namespace == own)
            || self.namespaces.iter().any(|n| n == namespace)
            || (!self.namespaces.is_empty() && namespace.is_empty())
    }
}

/// Every pod affinity and anti-affinity term of a pod spec, required lists first, located in the
/// workload's document.
pub(crate) fn pod_terms(pod_spec: Option<&Value>, document: &Document) -> Vec<PodTerm> {
    let mut out = Vec::new();
    for list in TermList::ALL {
        let (kind, field) = list.fields();
        let preferred = matches!(list, TermList::Preferred | TermList::PreferredAnti);
        for (index, item) in terms(pod_spec, kind, field).iter().enumerate() {
            let mut path = format!("spec.template.spec.affinity.{kind}.{field}[{index}]");
            let term = if preferred {
                path.push_str(".podAffinityTerm");
                at(item, &["podAffinityTerm"])
            } else {
                Some(item)
            };
            let Some(term) = term.filter(|t| t.is_mapping()) else { continue };
            let written = at(term, &["labelSelector"]);
            let parsed = written.map(Selector::from_value);
            let namespaces = at(term, &["namespaces"])
                .and_then(Value::as_sequence)
                .map_or(Vec::new(), |l| l.iter().filter_map(Value::as_str).map(str::to_string).collect());
            out.push(PodTerm {
                list,
                topology_key: str_at(term, &["topologyKey"]).unwrap_or_default().to_string(),
                invalid: matches!(parsed, Some(Err(_))),
                selector: parsed.and_then(Result::ok).map(CompactSelector::from),
                namespaces,
                namespace_selector: at(term, &["namespaceSelector"]).is_some(),
                at_selector: match written {
                    Some(_) => document.locate_field(&format!("{path}.labelSelector")),
                    None => document.locate_field(&path),
                },
            });
        }
    }
    out.shrink_to_fit();
    out
}

/// The first `hostPort` (above 0) of the pod spec's containers and sidecars (restartable init
/// containers), as `port/protocol`, located in the workload's document: every pod of the workload
/// takes it on its node, so a node holds one of them (NodePorts, `nodeports/node_ports.go`).
pub(crate) fn first_host_port(pod_spec: Option<&Value>, document: &Document) -> Option<(String, Location)> {
    let spec = pod_spec?;
    for field in ["containers", "initContainers"] {
        let containers = at(spec, &[field]).and_then(Value::as_sequence).map_or(&[][..], Vec::as_slice);
        for (c, container) in containers.iter().enumerate() {
            if field == "initContainers" && str_at(container, &["restartPolicy"]) != Some("Always") {
                continue;
            }
            let ports = at(container, &["ports"]).and_then(Value::as_sequence).map_or(&[][..], Vec::as_slice);
            for (p, port) in ports.iter().enumerate() {
                let Some(number) = at(port, &["hostPort"]).and_then(Value::as_i64).filter(|n| *n > 0) else { continue };
                let protocol = str_at(port, &["protocol"]).filter(|s| !s.is_empty()).unwrap_or("TCP");
                let path = format!("spec.template.spec.{field}[{c}].ports[{p}].hostPort");
                return Some((format!("{number}/{protocol}"), document.locate_field(&path)));
            }
        }
    }
    None
}

/// Whether the pod spec has any preferred pod anti-affinity term.
pub(crate) fn has_preferred_anti_affinity(pod_spec: Option<&Value>) -> bool {
    !terms(pod_spec, "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").is_empty()
}

/// `PodMatchesTermsNamespaceAndSelector` for the workload's own pods (`labels` in `namespace`): a non-nil
/// selector that matches them, in the pod's namespace (no `namespaces` and no `namespaceSelector`), a
/// listed namespace, or every namespace (`namespaceSelector: {}`). A non-empty namespaceSelector is not
/// assumed to match.
fn matches_own_pods(labels: &Labels, namespace: &str, term: &Value) -> bool {
    let Some(selector) = at(term, &["labelSelector"]).and_then(|s| Selector::from_value(s).ok()) else {
        return false;
    };
    let namespaces: Vec<&str> = at(term, &["namespaces"])
        .and_then(Value::as_sequence)
        .map_or(Vec::new(), |l| l.iter().filter_map(Value::as_str).collect());
    let namespace_selector = at(term, &["namespaceSelector"]);
    let in_namespace = match namespace_selector {
        Some(ns) if ns.as_mapping().is_some_and(|m| m.is_empty()) => true,
        Some(_) => namespaces.contains(&namespace),
        None => namespaces.is_empty() || namespaces.contains(&namespace),
    };
    in_namespace && selector.matches(labels)
}
