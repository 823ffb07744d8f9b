//! Taints, tolerations and their effects: one type each.
//!
//! Follows `staging/src/k8s.io/api/core/v1/toleration.go` (`ToleratesTaint`),
//! `pkg/apis/core/v1/helper` (`TolerationsTolerateTaint`) and the effects of
//! `core/v1/types.go` (`TaintEffect`). The well-known taint keys live in
//! [`super::labels`].

use super::labels::{TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE};
use std::fmt;

/// A taint effect (`TaintEffect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl Effect {
    /// Every effect, in the API's order.
    pub const ALL: [Effect; 3] = [Effect::NoSchedule, Effect::PreferNoSchedule, Effect::NoExecute];

    /// The effect an API string names; `None` for anything else (including the empty string).
    pub fn parse(text: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::NoSchedule => "NoSchedule",
            Effect::PreferNoSchedule => "PreferNoSchedule",
            Effect::NoExecute => "NoExecute",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: Effect,
}

impl Taint {
    /// `node.kubernetes.io/unschedulable:NoSchedule`, as the node lifecycle controller's
    /// `doNoScheduleTaintingPass` adds it to every node with `spec.unschedulable: true`.
    pub fn unschedulable() -> Taint {
        Taint { key: TAINT_UNSCHEDULABLE.into(), value: String::new(), effect: Effect::NoSchedule }
    }

    /// `node.kubernetes.io/unreachable` with NoSchedule and NoExecute, as the node lifecycle
    /// controller taints a node whose kubelet stopped reporting.
    pub fn unreachable() -> [Taint; 2] {
        [Effect::NoSchedule, Effect::NoExecute].map(|effect| Taint {
            key: TAINT_UNREACHABLE.into(),
            value: String::new(),
            effect,
        })
    }
}

/// A pod toleration. `exists` is `operator: Exists`; `Equal` and the empty operator are `false`.
/// An empty `key` (with Exists) tolerates every key; `effect: None` (empty) tolerates every effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    pub exists: bool,
    pub value: String,
    pub effect: Option<Effect>,
    /// `tolerationSeconds`: how long a NoExecute taint is tolerated; None is forever.
    pub seconds: Option<i64>,
}

impl Toleration {
    /// `Toleration.ToleratesTaint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        self.exists || self.value == taint.value
    }
}

/// How long a pod stays bound to a node with these taints before the taint-eviction controller
/// deletes it (kubernetes/kubernetes pkg/controller/tainteviction/taint_eviction.go,
/// `processPodOnNode` and `getMinTolerationTime`): at once (`Some(0)`) when a NoExecute taint is
/// not tolerated; else the smallest `tolerationSeconds` among the tolerations matching the
/// NoExecute taints (0 or less is at once); None (never) when none of those sets seconds.
pub fn no_execute_eviction_seconds(tolerations: &[Toleration], taints: &[Taint]) -> Option<i64> {
    let mut matching = Vec::new();
    for taint in taints.iter().filter(|t| t.effect == Effect::NoExecute) {
        let tolerating: Vec<&Toleration> = tolerations.iter().filter(|t| t.tolerates(taint)).collect();
        if tolerating.is_empty() {
            return Some(0);
        }
        matching.extend(tolerating);
    }
    if matching.is_empty() {
        return Some(0);
    }
    let min = matching.iter().filter_map(|t| t.seconds).min()?;
    Some(min.max(0))
}

/// `TolerationsTolerateTaint`: whether any of the tolerations tolerates the taint.
pub fn tolerations_tolerate(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tol(key: &str, exists: bool, value: &str, effect: Option<Effect>) -> Toleration {
        Toleration { key: key.into(), exists, value: value.into(), effect, seconds: None }
    }

    #[test]
    fn toleration_matching_follows_tolerates_taint() {
        let taint = Taint { key: "k".into(), value: "v".into(), effect: Effect::NoSchedule };
        let cases = [
            // Equal (or empty operator): key and value must match.
            (tol("k", false, "v", None), true),
            (tol("k", false, "w", None), false),
            (tol("j", false, "v", None), false),
            // Exists: any value.
            (tol("k", true, "", Some(Effect::NoSchedule)), true),
            (tol("k", true, "", None), true),
            // A set effect must be the taint's.
            (tol("k", true, "", Some(Effect::NoExecute)), false),
            (tol("k", false, "v", Some(Effect::PreferNoSchedule)), false),
            // Empty key with Exists tolerates everything; with Equal only an equal value of any key.
            (tol("", true, "", None), true),
            (tol("", false, "v", None), true),
            (tol("", false, "", None), false),
            (tol("j", true, "", None), false),
        ];
        for (toleration, expected) in cases {
            assert_eq!(toleration.tolerates(&taint), expected, "{toleration:?}");
        }
    }

    #[test]
    fn any_toleration_may_tolerate() {
        let taint = Taint::unschedulable();
        assert!(!tolerations_tolerate(&[], &taint));
        let tolerations = [tol("other", true, "", None), tol(TAINT_UNSCHEDULABLE, true, "", Some(Effect::NoSchedule))];
        assert!(tolerations_tolerate(&tolerations, &taint));
        assert!(Taint::unreachable().iter().all(|t| t.key == TAINT_UNREACHABLE));
    }

    #[test]
    fn effects_parse_as_the_api_spells_them() {
        let cases = [
            ("NoSchedule", Some(Effect::NoSchedule)),
            ("PreferNoSchedule", Some(Effect::PreferNoSchedule)),
            ("NoExecute", Some(Effect::NoExecute)),
            ("", None),
            ("noschedule", None),
            ("Never", None),
        ];
        for (text, expected) in cases {
            assert_eq!(Effect::parse(text), expected, "{text}");
            if let Some(effect) = expected {
                assert_eq!(effect.to_string(), text);
            }
        }
    }

    /// taint_eviction.go getMinTolerationTime, as a table: (tolerations (key, seconds), answer).
    #[test]
    fn no_execute_eviction_waits_for_the_shortest_matching_toleration() {
        let unreachable = Taint::unreachable();
        let with = |list: &[(&str, Option<i64>)]| -> Vec<Toleration> {
            list.iter().map(|(k, s)| Toleration { seconds: *s, ..tol(k, true, "", Some(Effect::NoExecute)) }).collect()
        };
        type Case = (&'static [(&'static str, Option<i64>)], Option<i64>);
        let cases: &[Case] = &[
            (&[], Some(0)),
            (&[("node.kubernetes.io/unreachable", Some(300))], Some(300)),
            (&[("node.kubernetes.io/unreachable", None)], None),
            // The shortest of the matching tolerations; one without seconds does not lengthen it.
            (&[("node.kubernetes.io/unreachable", None), ("", Some(60))], Some(60)),
            (&[("node.kubernetes.io/unreachable", Some(-5))], Some(0)),
            (&[("node.kubernetes.io/not-ready", Some(300))], Some(0)),
        ];
        for (list, want) in cases {
            assert_eq!(no_execute_eviction_seconds(&with(list), &unreachable), *want, "{list:?}");
        }
    }
}
