//! InterPodAffinity: required and preferred pod affinity and anti-affinity, filter and score.
//!
//! Follows kubernetes/kubernetes v1.33 `pkg/scheduler/framework/plugins/interpodaffinity/`
//! (`filtering.go`, `scoring.go`, `plugin.go`) and the `AffinityTerm` helpers of
//! `pkg/scheduler/framework/types.go` (`newAffinityTerm`, `AffinityTerm.Matches`):
//!
//! - **Terms.** A term selects pods by `labelSelector` (nil selects nothing, `{}` everything)
//!   in its namespaces: `namespaces`, plus those `namespaceSelector` selects; with neither, the
//!   owning pod's own namespace; `namespaceSelector: {}` means every namespace.
//!   `matchLabelKeys`/`mismatchLabelKeys` (KEP-3633: alpha 1.29, beta 1.31, GA 1.33, so always
//!   on in 1.33) are merged into the selector as `key In (value)` / `key NotIn (value)` from the
//!   owning pod's labels, as the API server does when it admits the pod
//!   (pkg/registry/core/pod/strategy.go, `applyMatchLabelKeysAndMismatchLabelKeys`); merging is
//!   idempotent, so a snapshot pod that already carries the merged selector reads the same.
//! - **Namespaces.** The incoming pod's `namespaceSelector` is resolved against the namespaces
//!   the model knows (`mergeAffinityTermNamespacesIfNotEmpty`); an existing pod's is matched
//!   against the incoming pod's namespace labels (`GetNamespaceLabelsSnapshot`). The model knows
//!   a snapshot's Namespace objects and every namespace a pod is in; one without a Namespace
//!   object (every namespace of an inventory-only cluster) carries only
//!   `kubernetes.io/metadata.name`, the label the API server sets on every namespace.
//! - **Filter** (`Filter`), in this order: the incoming pod's required affinity (every term's
//!   topology key on the node, and an existing pod matching *all* terms in the node's domain of
//!   each, else UnschedulableAndUnresolvable; the first pod of a group passes when no pod
//!   anywhere matches all terms and it matches them itself), its required anti-affinity (no
//!   matching pod in the node's domain of any term), then the symmetric check: no existing
//!   pod's required anti-affinity term matches the incoming pod within the domain of that
//!   existing pod's node.
//! - **Score** (`PreScore`, `Score`, `NormalizeScore`; weight 2): per topology pair, the
//!   incoming pod's preferred affinity (+weight) and anti-affinity (-weight) for every existing
//!   pod it matches, existing pods' required affinity matching the incoming pod
//!   (`hardPodAffinityWeight`, 1) and existing pods' preferred terms matching it; a node sums
//!   the pairs it carries; normalised over the feasible nodes to `100 * (s - min) / (max - min)`
//!   (0 everywhere when nothing applies).
//! - Terminating pods count (the plugin reads the scheduler cache's pods, terminating or not).

use super::framework::Rejection;
use super::objects::{AffinityTerm, Pod};
use kix_kube::labels::NAMESPACE_NAME;
use kix_kube::selector::{Labels, Operator, Requirement, Selector};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `ErrReasonAffinityRulesNotMatch` (UnschedulableAndUnresolvable).
pub const REASON_AFFINITY: &str = "node(s) didn't match pod affinity rules";
/// `ErrReasonAntiAffinityRulesNotMatch` (Unschedulable).
pub const REASON_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
/// `ErrReasonExistingAntiAffinityRulesNotMatch` (Unschedulable).
pub const REASON_EXISTING_ANTI_AFFINITY: &str = "node(s) didn't satisfy existing pods anti-affinity rules";
/// `InterPodAffinityArgs.hardPodAffinityWeight` default (`DefaultHardPodAffinitySymmetricWeight`).
pub const HARD_POD_AFFINITY_WEIGHT: i64 = 1;

/// The namespaces the model knows, with their labels (for `namespaceSelector`).
#[derive(Clone, Debug, Default)]
pub struct NamespaceIndex {
    labels: BTreeMap<String, Labels>,
}

impl NamespaceIndex {
    /// Adds a namespace described by a Namespace object (its labels win over an implicit entry).
    pub fn declare(&mut self, name: &str, labels: &Labels) {
        self.labels.insert(name.to_string(), labels.clone());
    }

    /// Makes a namespace a pod is in known, with only its name label unless it was declared.
    /// Returns whether it was new.
    pub fn note(&mut self, name: &str) -> bool {
        if self.labels.contains_key(name) {
            return false;
        }
        self.labels.insert(name.to_string(), implicit_labels(name));
        true
    }

    /// Forgets a namespace [`NamespaceIndex::note`] learnt (to undo it).
    pub fn forget(&mut self, name: &str) {
        self.labels.remove(name);
    }

    /// A namespace's labels (the name label alone for one the model has not seen).
    pub fn labels(&self, name: &str) -> Labels {
        self.labels.get(name).cloned().unwrap_or_else(|| implicit_labels(name))
    }

    /// [`NamespaceIndex::labels`] without a copy for a namespace the model knows (every bound pod's).
    pub fn labels_of(&self, name: &str) -> std::borrow::Cow<'_, Labels> {
        match self.labels.get(name) {
            Some(labels) => std::borrow::Cow::Borrowed(labels),
            None => std::borrow::Cow::Owned(implicit_labels(name)),
        }
    }

    fn matching<'a>(&'a self, selector: &'a Selector) -> impl Iterator<Item = &'a String> + 'a {
        self.labels.iter().filter(|(_, l)| selector.matches(l)).map(|(n, _)| n)
    }
}

fn implicit_labels(name: &str) -> Labels {
    [(NAMESPACE_NAME.to_string(), name.to_string())].into_iter().collect()
}

/// Which namespaces a resolved term's namespace selector admits.
#[derive(Clone, Debug)]
enum NamespaceSelector {
    Nothing,
    Everything,
    /// Matched against the incoming pod's namespace labels (an existing pod's term).
    Labels(Selector),
}

/// A term ready to match: `framework.AffinityTerm`.
#[derive(Clone, Debug)]
pub(crate) struct Term {
    selector: Option<Selector>,
    namespaces: BTreeSet<String>,
    namespace_selector: NamespaceSelector,
    /// The topology key.
    pub(crate) key: String,
}

impl Term {
    /// `newAffinityTerm` for a term of `owner`, with matchLabelKeys merged from its labels.
    /// `index` resolves a namespace selector into names (the incoming pod's terms only).
    /// Without `index`, a namespace selector is kept and matched against a pod's namespace labels:
    /// for pods in namespaces the model knows (every bound pod's) that admits what resolving it
    /// against the known namespaces admits, and it stays true as namespaces become known.
    pub(crate) fn new(term: &AffinityTerm, owner: &Pod, index: Option<&NamespaceIndex>) -> Term {
        let mut selector = term.selector.clone();
        if let Some(s) = selector.as_mut() {
            for (keys, operator) in
                [(&term.match_label_keys, Operator::In), (&term.mismatch_label_keys, Operator::NotIn)]
            {
                for key in keys {
                    if let Some(value) = owner.labels.get(key) {
                        s.requirements.push(Requirement { key: key.clone(), operator, values: vec![value.clone()] });
                    }
                }
            }
        }
        let mut namespaces: BTreeSet<String> = term.namespaces.iter().cloned().collect();
        if term.namespaces.is_empty() && term.namespace_selector.is_none() {
            namespaces.insert(owner.namespace.clone());
        }
        let namespace_selector = match (&term.namespace_selector, index) {
            (None, _) => NamespaceSelector::Nothing,
            (Some(s), _) if s.is_empty() => NamespaceSelector::Everything,
            (Some(s), Some(index)) => {
                namespaces.extend(index.matching(s).cloned());
                NamespaceSelector::Nothing
            }
            (Some(s), None) => NamespaceSelector::Labels(s.clone()),
        };
        Term { selector, namespaces, namespace_selector, key: term.topology_key.clone() }
    }

    /// `AffinityTerm.Matches`: the pod's namespace is admitted and its labels selected.
    pub(crate) fn matches(&self, pod: &Pod, namespace_labels: &Labels) -> bool {
        let namespace = self.namespaces.contains(&pod.namespace)
            || match &self.namespace_selector {
                NamespaceSelector::Nothing => false,
                NamespaceSelector::Everything => true,
                NamespaceSelector::Labels(s) => s.matches(namespace_labels),
            };
        namespace && self.selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
    }
}

/// A topology pair (`topologyPair`): a node label key and value.
type Pair = (String, String);

fn bump(map: &mut HashMap<Pair, i64>, labels: &Labels, key: &str, by: i64) {
    if let Some(value) = labels.get(key) {
        *map.entry((key.to_string(), value.clone())).or_insert(0) += by;
    }
}

/// One cycle's InterPodAffinity state for an incoming pod: PreFilter's and PreScore's counts.
#[derive(Clone, Debug)]
pub struct Prepared {
    required: Vec<Term>,
    required_anti: Vec<Term>,
    /// The incoming pod matches all of its own required affinity terms.
    self_match: bool,
    /// `affinityCounts`: pods matching all required affinity terms, per pair of each term.
    affinity: HashMap<Pair, i64>,
    /// `antiAffinityCounts`: pods matching a required anti-affinity term, per pair.
    anti: HashMap<Pair, i64>,
    /// `existingAntiAffinityCounts`: existing pods' required anti terms matching the incoming pod.
    existing_anti: HashMap<Pair, i64>,
    /// `topologyScore` of PreScore.
    score: HashMap<Pair, i64>,
}

impl Prepared {
    /// Counts over every bound pod (`bound` yields each with its node's labels).
    pub fn new<'a>(pod: &Pod, bound: impl Iterator<Item = (&'a Pod, &'a Labels)>, index: &NamespaceIndex) -> Prepared {
        let own = &pod.spec.pod_affinity;
        let resolve =
            |terms: &[AffinityTerm]| -> Vec<Term> { terms.iter().map(|t| Term::new(t, pod, Some(index))).collect() };
        let weighted = |terms: &[(i64, AffinityTerm)]| -> Vec<(i64, Term)> {
            terms.iter().map(|(w, t)| (*w, Term::new(t, pod, Some(index)))).collect()
        };
        let required = resolve(&own.required);
        let required_anti = resolve(&own.required_anti);
        let preferred = weighted(&own.preferred);
        let preferred_anti = weighted(&own.preferred_anti);
        let own_labels = index.labels(&pod.namespace);
        let mut state = Prepared {
            self_match: !required.is_empty() && required.iter().all(|t| t.matches(pod, &own_labels)),
            required,
            required_anti,
            affinity: HashMap::new(),
            anti: HashMap::new(),
            existing_anti: HashMap::new(),
            score: HashMap::new(),
        };
        for (existing, node) in bound {
            let theirs = &existing.spec.pod_affinity;
            let existing_labels = index.labels(&existing.namespace);
            // PreFilter: the incoming pod's required terms against the existing pod.
            if !state.required.is_empty() && state.required.iter().all(|t| t.matches(existing, &existing_labels)) {
                for t in &state.required {
                    bump(&mut state.affinity, node, &t.key, 1);
                }
            }
            for t in state.required_anti.iter().filter(|t| t.matches(existing, &existing_labels)) {
                bump(&mut state.anti, node, &t.key, 1);
            }
            // PreScore: the incoming pod's preferred terms against the existing pod.
            for (sign, terms) in [(1, &preferred), (-1, &preferred_anti)] {
                for (w, t) in terms.iter().filter(|(_, t)| t.matches(existing, &existing_labels)) {
                    bump(&mut state.score, node, &t.key, sign * w);
                }
            }
            if theirs.is_empty() {
                continue;
            }
            // The existing pod's terms against the incoming pod (symmetry).
            for t in &theirs.required_anti {
                let t = Term::new(t, existing, None);
                if t.matches(pod, &own_labels) {
                    bump(&mut state.existing_anti, node, &t.key, 1);
                }
            }
            if !node.is_empty() {
                for t in &theirs.required {
                    let t = Term::new(t, existing, None);
                    if t.matches(pod, &own_labels) {
                        bump(&mut state.score, node, &t.key, HARD_POD_AFFINITY_WEIGHT);
                    }
                }
            }
            for (sign, terms) in [(1, &theirs.preferred), (-1, &theirs.preferred_anti)] {
                for (w, t) in terms {
                    let t = Term::new(t, existing, None);
                    if t.matches(pod, &own_labels) {
                        bump(&mut state.score, node, &t.key, sign * w);
                    }
                }
            }
        }
        state.score.retain(|_, v| *v != 0);
        state
    }

    /// `Filter`: affinity, then anti-affinity, then existing pods' anti-affinity.
    pub fn filter(&self, labels: &Labels) -> Result<(), Rejection> {
        let count = |map: &HashMap<Pair, i64>, key: &str, value: &str| {
            map.get(&(key.to_string(), value.to_string())).copied().unwrap_or(0)
        };
        let mut pods_exist = true;
        for t in &self.required {
            let Some(value) = labels.get(&t.key) else { return Err(reject(REASON_AFFINITY, true)) };
            if count(&self.affinity, &t.key, value) <= 0 {
                pods_exist = false;
            }
        }
        // The first pod of a group whose affinity selects itself (satisfyPodAffinity): no pod
        // anywhere matches all terms, and the pod matches them itself.
        let first_of_group = self.affinity.values().all(|&c| c == 0) && self.self_match;
        if !pods_exist && !first_of_group {
            return Err(reject(REASON_AFFINITY, true));
        }
        for t in &self.required_anti {
            if labels.get(&t.key).is_some_and(|value| count(&self.anti, &t.key, value) > 0) {
                return Err(reject(REASON_ANTI_AFFINITY, false));
            }
        }
        if labels.iter().any(|(k, v)| count(&self.existing_anti, k, v) > 0) {
            return Err(reject(REASON_EXISTING_ANTI_AFFINITY, false));
        }
        Ok(())
    }

    /// `Score`: the sum of the topology pairs the node carries.
    pub fn raw_score(&self, labels: &Labels) -> i64 {
        self.score.iter().filter(|((k, v), _)| labels.get(k) == Some(v)).map(|(_, s)| *s).sum()
    }

    /// `NormalizeScore` over the feasible nodes' raw scores (0 for all when PreScore skipped).
    pub fn normalise(&self, raw: &[i64]) -> Vec<i64> {
        if self.score.is_empty() {
            return vec![0; raw.len()];
        }
        normalise(raw)
    }
}

/// `NormalizeScore`: `MAX_SCORE * (s - min) / (max - min)` over the feasible nodes' raw scores, 0
/// for all when they are equal (as they are, all 0, when PreScore found no topology pair).
pub fn normalise(raw: &[i64]) -> Vec<i64> {
    let (Some(&min), Some(&max)) = (raw.iter().min(), raw.iter().max()) else { return Vec::new() };
    if max == min {
        return vec![0; raw.len()];
    }
    let diff = (max - min) as f64;
    raw.iter().map(|&s| (super::plugins::MAX_SCORE as f64 * ((s - min) as f64 / diff)) as i64).collect()
}

pub(crate) fn reject(reason: &str, unresolvable: bool) -> Rejection {
    Rejection { reasons: vec![reason.to_string()], unresolvable }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_pod;

    fn pod(yaml: &str) -> Pod {
        parse_pod(&kix_yaml::from_str(yaml).unwrap(), "default").unwrap()
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn match_label_keys_merge_from_the_owner_and_stay_idempotent() {
        let p = pod(
            "kind: Pod\nmetadata: {name: p, labels: {app: a, pod-template-hash: h1, tenant: t}}\nspec:\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: a}}\n        matchLabelKeys: [pod-template-hash, missing]\n        mismatchLabelKeys: [tenant]\n        topologyKey: kubernetes.io/hostname\n",
        );
        let term = Term::new(&p.spec.pod_affinity.required_anti[0], &p, None);
        let ns = labels(&[]);
        let other = |l: &[(&str, &str)]| Pod { labels: labels(l), ..p.clone() };
        assert!(!term.matches(&other(&[("app", "a"), ("pod-template-hash", "h2")]), &ns));
        assert!(term.matches(&other(&[("app", "a"), ("pod-template-hash", "h1"), ("tenant", "u")]), &ns));
        assert!(!term.matches(&other(&[("app", "a"), ("pod-template-hash", "h1"), ("tenant", "t")]), &ns));
    }

    #[test]
    fn namespaces_default_to_the_owners_and_selectors_resolve_against_known_namespaces() {
        let mut index = NamespaceIndex::default();
        index.declare("a", &labels(&[("team", "x"), (NAMESPACE_NAME, "a")]));
        index.note("b");
        let term = AffinityTerm {
            selector: Some(Selector::default()),
            namespace_selector: Some(Selector { match_labels: labels(&[("team", "x")]), requirements: Vec::new() }),
            ..AffinityTerm::default()
        };
        let owner = pod("kind: Pod\nmetadata: {name: o, namespace: b}\n");
        let resolved = Term::new(&term, &owner, Some(&index));
        assert_eq!(resolved.namespaces.iter().collect::<Vec<_>>(), ["a"]);
        // Without a selector or names, the owner's namespace; `{}` admits every namespace.
        let own =
            Term::new(&AffinityTerm { selector: Some(Selector::default()), ..AffinityTerm::default() }, &owner, None);
        assert_eq!(own.namespaces.iter().collect::<Vec<_>>(), ["b"]);
        let all = AffinityTerm { namespace_selector: Some(Selector::default()), ..term };
        let elsewhere = pod("kind: Pod\nmetadata: {name: e, namespace: zzz}\n");
        assert!(Term::new(&all, &owner, Some(&index)).matches(&elsewhere, &index.labels("zzz")));
        assert_eq!(index.labels("zzz"), labels(&[(NAMESPACE_NAME, "zzz")]));
    }

    #[test]
    fn normalisation_spreads_between_min_and_max() {
        let state =
            Prepared::new(&pod("kind: Pod\nmetadata: {name: p}\n"), std::iter::empty(), &NamespaceIndex::default());
        assert_eq!(state.normalise(&[0, 0]), [0, 0]);
        let mut with_score = state.clone();
        with_score.score.insert(("k".into(), "v".into()), 5);
        assert_eq!(with_score.normalise(&[-5, 0, 3]), [0, 62, 100]);
    }
}
