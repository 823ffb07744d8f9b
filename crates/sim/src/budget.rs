//! PodDisruptionBudgets as the disruption controller computes their status and the eviction API
//! applies them.
//!
//! - Status (kubernetes/kubernetes `pkg/controller/disruption/disruption.go`,
//!   `getExpectedPodCount`, `getExpectedScale`, `countHealthyPods`, `updatePdbStatus`): with
//!   maxUnavailable or a percent minAvailable the expected count is the sum of the scales of the
//!   controllers of the covered pods (pods without a controller add nothing), desired healthy is
//!   expected - maxUnavailable (percent rounded up) or minAvailable scaled (rounded up); with an
//!   integer minAvailable the expected count is the number of covered pods and desired healthy is
//!   minAvailable itself. Healthy pods are covered pods that are Ready and not being deleted.
//!   disruptionsAllowed = healthy - desired, and 0 when negative or when nothing is expected.
//! - Eviction (`pkg/registry/core/pod/storage/eviction.go`, `EvictionREST.Create`,
//!   `canIgnorePDB`, `checkAndDecrement`): a Pending or terminating pod is deleted without looking
//!   at budgets; a pod under more than one budget of its namespace gets **500** ("This pod has more
//!   than one PodDisruptionBudget, which the eviction subresource does not support."); a pod that
//!   is not Ready is evicted without using the budget under `unhealthyPodEvictionPolicy:
//!   AlwaysAllow`, and under IfHealthyBudget (the default) only while currentHealthy >=
//!   desiredHealthy > 0; otherwise the eviction needs disruptionsAllowed > 0 and is refused with
//!   **429** TooManyRequests when it is 0.
//!
//! kix reads budgets from the compiled objects and from a `--state` snapshot (`kubectl get
//! nodes,pods,pdb -A -o yaml`); both count, in every namespace, foreign ones included.

use super::objects::{Phase, Pod};
use kix_kube::int_or_percent::IntOrPercent;
use kix_kube::selector::Selector;
use kix_kube::value::str_at;
use kix_kube::workload::PdbView;
use kix_yaml::Value;

/// A PodDisruptionBudget as the model applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub namespace: String,
    pub name: String,
    pub selector: Selector,
    pub min_available: Option<IntOrPercent>,
    pub max_unavailable: Option<IntOrPercent>,
    /// `unhealthyPodEvictionPolicy: AlwaysAllow` (else IfHealthyBudget, the default).
    pub always_allow: bool,
}

impl Budget {
    /// Reads a `policy` PodDisruptionBudget; Ok(None) for other objects and for a budget with no
    /// selector or no name (it covers nothing: a nil selector selects no pods).
    pub fn read(object: &Value) -> Result<Option<Budget>, String> {
        if !PdbView::is_pdb(object) {
            return Ok(None);
        }
        let view = PdbView::read(object).map_err(|e| e.to_string())?;
        let always_allow = match str_at(object, &["spec", "unhealthyPodEvictionPolicy"]) {
            None | Some("IfHealthyBudget") => false,
            Some("AlwaysAllow") => true,
            Some(other) => {
                return Err(format!(
                    "PodDisruptionBudget {}: unhealthyPodEvictionPolicy `{other}` is not IfHealthyBudget or AlwaysAllow",
                    view.name
                ));
            }
        };
        let (Some(selector), false) = (view.selector, view.name.is_empty()) else { return Ok(None) };
        Ok(Some(Budget {
            namespace: view.namespace.unwrap_or_else(|| "default".to_string()),
            name: view.name,
            selector,
            min_available: view.min_available,
            max_unavailable: view.max_unavailable,
            always_allow,
        }))
    }

    /// Whether the budget covers a pod (`getPodDisruptionBudgets`: same namespace, selector matches).
    pub fn covers(&self, pod: &Pod) -> bool {
        pod.namespace == self.namespace && self.selector.matches(&pod.labels)
    }

    /// The status the disruption controller writes. `pods` are the pods that exist (the budget
    /// picks the ones it covers); `scale` gives a pod's controller (any key unique to it) and that
    /// controller's scale, or None for a pod without a controller.
    pub fn status<'p>(
        &self,
        pods: impl Iterator<Item = &'p Pod>,
        scale: impl Fn(&Pod) -> Option<(String, i64)>,
    ) -> BudgetStatus {
        let covered: Vec<&Pod> = pods.filter(|p| self.covers(p)).collect();
        let controllers = || {
            let mut scales: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
            for pod in &covered {
                if let Some((key, n)) = scale(pod) {
                    scales.insert(key, n);
                }
            }
            scales.values().sum::<i64>()
        };
        let healthy = covered.iter().filter(|p| !p.terminating && p.ready).count() as i64;
        self.status_from(covered.len() as i64, healthy, controllers)
    }

    /// The status from counts: the pods the budget covers, the healthy ones among them (Ready and
    /// not terminating), and the sum of the scales of their controllers (asked only when needed).
    pub fn status_from(&self, covered: i64, healthy: i64, controllers: impl Fn() -> i64) -> BudgetStatus {
        let (expected, desired, rule) = match (&self.max_unavailable, &self.min_available) {
            (Some(max), _) => {
                let expected = controllers();
                (expected, (expected - max.scaled_value(expected, true)).max(0), format!("maxUnavailable {max}"))
            }
            (None, Some(IntOrPercent::Int(min))) => (covered, *min, format!("minAvailable {min}")),
            (None, Some(min)) => {
                let expected = controllers();
                (expected, min.scaled_value(expected, true), format!("minAvailable {min}"))
            }
            // Validation requires one of the two; a budget without either guards nothing here.
            (None, None) => (covered, 0, "no policy".to_string()),
        };
        let allowed = if expected <= 0 { 0 } else { (healthy - desired).max(0) };
        BudgetStatus { expected, desired, healthy, allowed, rule }
    }
}

/// A budget's status: `expectedPods`, `desiredHealthy`, `currentHealthy`, `disruptionsAllowed`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetStatus {
    pub expected: i64,
    pub desired: i64,
    pub healthy: i64,
    pub allowed: i64,
    /// The budget's rule as written (`maxUnavailable 1`).
    pub rule: String,
}

impl std::fmt::Display for BudgetStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} expected, {} healthy, {} desired healthy",
            self.rule, self.expected, self.healthy, self.desired
        )
    }
}

/// The eviction API's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Eviction {
    /// The pod is deleted.
    Evicted,
    /// 429 TooManyRequests: the budget allows no disruption now; `kubectl drain` retries.
    TooManyRequests(String),
    /// 500: the pod is under more than one budget; `kubectl drain` gives up on it.
    InternalError(String),
}

/// What the eviction API answers for `pod`, given every budget and a way to compute a budget's
/// status (`EvictionREST.Create`).
pub fn evict(pod: &Pod, budgets: &[Budget], status: impl Fn(&Budget) -> BudgetStatus) -> Eviction {
    if pod.phase == Some(Phase::Pending) || pod.terminating {
        return Eviction::Evicted;
    }
    let covering: Vec<&Budget> = budgets.iter().filter(|b| b.covers(pod)).collect();
    let budget = match covering.as_slice() {
        [] => return Eviction::Evicted,
        [budget] => *budget,
        many => {
            let names: Vec<&str> = many.iter().map(|b| b.name.as_str()).collect();
            return Eviction::InternalError(format!(
                "it is covered by {} PodDisruptionBudgets ({}): the eviction API answers 500 (This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.)",
                many.len(),
                names.join(", ")
            ));
        }
    };
    let status = status(budget);
    if !pod.ready && (budget.always_allow || (status.healthy >= status.desired && status.desired > 0)) {
        return Eviction::Evicted;
    }
    if status.allowed > 0 {
        return Eviction::Evicted;
    }
    Eviction::TooManyRequests(format!(
        "PodDisruptionBudget {}/{} allows no disruption ({status}){}: the eviction API answers 429 TooManyRequests",
        budget.namespace,
        budget.name,
        if pod.ready {
            ""
        } else {
            "; the pod is not Ready and the budget's unhealthyPodEvictionPolicy is IfHealthyBudget"
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(spec: &str) -> Budget {
        let yaml = format!(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b, namespace: ns}}\nspec: {{selector: {{matchLabels: {{app: a}}}}, {spec}}}\n"
        );
        Budget::read(&kix_yaml::from_str(&yaml).unwrap()).unwrap().unwrap()
    }

    fn pod(name: &str, ready: bool, controller: &str) -> Pod {
        let owner = if controller.is_empty() {
            String::new()
        } else {
            format!(", ownerReferences: [{{kind: ReplicaSet, name: {controller}, controller: true}}]")
        };
        let conditions = if ready { "[{type: Ready, status: 'True'}]" } else { "[{type: Ready, status: 'False'}]" };
        let yaml = format!(
            "kind: Pod\nmetadata: {{name: {name}, namespace: ns, labels: {{app: a}}{owner}}}\nspec: {{nodeName: n}}\nstatus: {{phase: Running, conditions: {conditions}}}\n"
        );
        crate::snapshot::parse_pod(&kix_yaml::from_str(&yaml).unwrap(), "default").unwrap()
    }

    /// The controller's scale: the pod's ReplicaSet at 3 replicas.
    fn scale(p: &Pod) -> Option<(String, i64)> {
        p.controller.as_ref().map(|c| (c.name.clone(), 3))
    }

    /// disruption.go getExpectedPodCount / countHealthyPods / updatePdbStatus, as a table:
    /// (spec, pods (ready, controller), expected, desired, healthy, allowed).
    #[test]
    fn status_is_computed_as_the_disruption_controller_does() {
        type Case = (&'static str, &'static [(bool, &'static str)], [i64; 4]);
        let cases: &[Case] = &[
            // maxUnavailable: expected from the controller's scale (3), not the 2 pods that exist.
            ("maxUnavailable: 1", &[(true, "rs"), (true, "rs")], [3, 2, 2, 0]),
            ("maxUnavailable: 1", &[(true, "rs"), (true, "rs"), (true, "rs")], [3, 2, 3, 1]),
            // A not-Ready pod is not healthy (countHealthyPods: IsPodReady).
            ("maxUnavailable: 1", &[(true, "rs"), (false, "rs"), (true, "rs")], [3, 2, 2, 0]),
            // Percent rounds up: 34% of 3 is 2 unavailable.
            ("maxUnavailable: 34%", &[(true, "rs"), (true, "rs"), (true, "rs")], [3, 1, 3, 2]),
            // Integer minAvailable: expected is the number of pods; desired is minAvailable.
            ("minAvailable: 2", &[(true, ""), (true, ""), (true, "")], [3, 2, 3, 1]),
            // Percent minAvailable: scale of controllers, rounded up (50% of 3 is 2).
            ("minAvailable: 50%", &[(true, "rs"), (true, "rs"), (true, "rs")], [3, 2, 3, 1]),
            // Pods without a controller add nothing to the expected count: nothing expected, nothing allowed.
            ("maxUnavailable: 1", &[(true, ""), (true, "")], [0, 0, 2, 0]),
        ];
        for (spec, pods, [expected, desired, healthy, allowed]) in cases {
            let b = budget(spec);
            let pods: Vec<Pod> = pods.iter().enumerate().map(|(i, (r, c))| pod(&format!("p{i}"), *r, c)).collect();
            let s = b.status(pods.iter(), scale);
            assert_eq!(
                [s.expected, s.desired, s.healthy, s.allowed],
                [*expected, *desired, *healthy, *allowed],
                "{spec}"
            );
        }
    }

    /// eviction.go EvictionREST.Create, as a table: (budget specs, pod ready, the set's other pods
    /// (ready), answer); the set's controller has 3 replicas.
    #[test]
    fn evictions_are_answered_as_the_eviction_api_does() {
        type Case = (&'static [&'static str], bool, &'static [bool], &'static str);
        let cases: &[Case] = &[
            (&[], true, &[true], "evicted"),
            (&["maxUnavailable: 1"], true, &[true, true], "evicted"),
            (&["maxUnavailable: 0"], true, &[true, true], "429"),
            // Two budgets over one pod: 500, whatever they allow.
            (&["maxUnavailable: 1", "maxUnavailable: 2"], true, &[true, true], "500"),
            // Unhealthy pod, AlwaysAllow: evicted although the budget allows nothing.
            (&["maxUnavailable: 0, unhealthyPodEvictionPolicy: AlwaysAllow"], false, &[true, true], "evicted"),
            // Unhealthy pod, IfHealthyBudget, budget healthy (2 healthy >= 2 desired > 0): evicted.
            (&["minAvailable: 2"], false, &[true, true], "evicted"),
            (&["minAvailable: 2, unhealthyPodEvictionPolicy: IfHealthyBudget"], false, &[true, true], "evicted"),
            // Unhealthy pod, IfHealthyBudget, budget not healthy (1 healthy < 2 desired): 429.
            (&["minAvailable: 2"], false, &[true, false], "429"),
            // desiredHealthy 0 is not a healthy budget for IfHealthyBudget, and allows nothing with 0 healthy.
            (&["minAvailable: 0"], false, &[], "429"),
        ];
        for (specs, ready, others, answer) in cases {
            let budgets: Vec<Budget> =
                specs.iter().enumerate().map(|(i, s)| Budget { name: format!("b{i}"), ..budget(s) }).collect();
            let target = pod("target", *ready, "rs");
            let mut pods = vec![target.clone()];
            pods.extend(others.iter().enumerate().map(|(i, r)| pod(&format!("o{i}"), *r, "rs")));
            let got = match evict(&target, &budgets, |b| b.status(pods.iter(), scale)) {
                Eviction::Evicted => "evicted",
                Eviction::TooManyRequests(_) => "429",
                Eviction::InternalError(_) => "500",
            };
            assert_eq!(got, *answer, "{specs:?} ready={ready} others={others:?}");
        }
    }

    #[test]
    fn pending_and_terminating_pods_are_evicted_without_budgets() {
        let b = budget("maxUnavailable: 0");
        let mut p = pod("p", true, "rs");
        p.phase = Some(Phase::Pending);
        assert_eq!(evict(&p, std::slice::from_ref(&b), |x| x.status(std::iter::empty(), scale)), Eviction::Evicted);
        let mut p = pod("p", true, "rs");
        p.terminating = true;
        assert_eq!(evict(&p, &[b], |x| x.status(std::iter::empty(), scale)), Eviction::Evicted);
    }
}
