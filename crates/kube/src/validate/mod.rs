//! kix's own Kubernetes validation of one emitted object.
//!
//! kix's output is applied straight from a GitOps repository, so an object the
//! API server would refuse is as bad as a wrong one: the sync fails on the
//! cluster, long after `kix build` said everything was fine. This module checks
//! the fields kix writes or copies (labels, selectors, replicas, the pod
//! template's `topologySpreadConstraints`, PodDisruptionBudget specs) with the
//! API server's own rules, so that tests can hold every emitted object to them
//! without a cluster. The rules mirror `pkg/apis/core/validation/validation.go`
//! (`validateTopologySpreadConstraints`), `pkg/apis/apps/validation` (selector
//! against template) and `pkg/apis/policy/validation` (PDB spec). One rule is
//! stricter than the API server on purpose: a `topologyKey` must be a valid
//! label key, since no node can carry any other key and a hard constraint on
//! one leaves every pod Pending.
//!
//! Objects of other kinds get only the metadata checks (labels, annotations,
//! namespace) and the rules every object has ([`object_rules`]: its name
//! by kind, `generateName`, `apiVersion`, sizes, a CRD's structure): kix patches
//! nothing else in them. RoleBindings and ClusterRoleBindings also get their
//! `roleRef` and `subjects` rules ([`rbac`]): kix writes their subjects'
//! namespaces.
//!
//! The rules follow staging/src/k8s.io/apimachinery/pkg/util/validation (names,
//! label keys and values, through [`super::names`]). Each problem is an
//! [`ObjectError`]: the field path and the reason, never one string to split.

use crate::int_or_percent::IntOrPercent;
use crate::kind::{ObjectKind, WorkloadKind};
use crate::names::{dns1123_label, label_key, label_value};
use crate::selector::{Labels, Selector};
use kix_yaml::Value;
use std::collections::BTreeSet;

mod error;
pub mod object_rules;
pub mod rbac;

pub use error::ObjectError;

/// Validates one object as the API server would; returns every problem found, empty when valid.
pub fn validate_object(object: &Value) -> Vec<ObjectError> {
    let mut problems = Problems::default();
    if !object.is_mapping() {
        problems.push("", "an object must be a mapping");
        return problems.0;
    }
    let kind = ObjectKind::of(object);
    // A Rollout that takes its template from a Deployment (`spec.workloadRef`) is not read as a workload.
    let workload = matches!(kind, Some(ObjectKind::Workload(_))) && WorkloadKind::of(object).is_some();
    let pdb = kind == Some(ObjectKind::PodDisruptionBudget);

    match object.get("metadata") {
        Some(metadata) if metadata.is_mapping() => {
            validate_metadata(metadata, "metadata", &mut problems);
            // The name's rule by kind is `object_rules`'; a workload or budget kix patches must have one.
            if (workload || pdb) && metadata.get("name").and_then(Value::as_str).is_none() {
                problems.push("metadata.name", "required");
            }
        }
        _ => problems.push("metadata", "required, and must be a mapping"),
    }

    let spec = object.get("spec").filter(|s| !s.is_null());
    if workload {
        match spec {
            Some(spec) if spec.is_mapping() => {
                validate_workload_spec(spec, &mut problems);
                // A Rollout's strategy is canary or blueGreen, which its CRD checks.
                if kind == Some(ObjectKind::Workload(WorkloadKind::Deployment)) {
                    validate_deployment_strategy(spec, &mut problems);
                }
            }
            _ => problems.push("spec", "required, and must be a mapping"),
        }
    } else if pdb {
        match spec {
            None => {}
            Some(spec) if spec.is_mapping() => validate_pdb_spec(spec, &mut problems),
            Some(_) => problems.push("spec", "must be a mapping"),
        }
    }
    problems.0.extend(object_rules::check(object));
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    if crate::kind::api_group(api_version) == rbac::GROUP {
        match object.get("kind").and_then(Value::as_str) {
            Some("RoleBinding") => problems.0.extend(rbac::check_binding(object, true)),
            Some("ClusterRoleBinding") => problems.0.extend(rbac::check_binding(object, false)),
            _ => {}
        }
    }
    problems.0
}

/// Problems found so far.
#[derive(Default)]
struct Problems(Vec<ObjectError>);

impl Problems {
    fn push(&mut self, path: &str, reason: impl Into<String>) {
        self.0.push(ObjectError { path: path.to_string(), reason: reason.into() });
    }
}

/// `ObjectMeta`: labels (keys and values), annotation keys and the namespace.
/// Returns the labels when they could be read.
fn validate_metadata(metadata: &Value, path: &str, problems: &mut Problems) -> Option<Labels> {
    let labels = validate_labels(metadata.get("labels"), &format!("{path}.labels"), problems);
    if let Some(annotations) = metadata.get("annotations").filter(|a| !a.is_null()) {
        match annotations.as_mapping() {
            Some(map) => {
                for (key, value) in map {
                    match key.as_str() {
                        Some(key) => {
                            if let Err(why) = label_key(key) {
                                problems.push(
                                    &format!("{path}.annotations"),
                                    format!("key `{key}` is not a qualified name: {why}"),
                                );
                            }
                            if !value.is_string() {
                                problems
                                    .push(&format!("{path}.annotations.{key}"), "annotation values must be strings");
                            }
                        }
                        None => problems.push(&format!("{path}.annotations"), "keys must be strings"),
                    }
                }
            }
            None => problems.push(&format!("{path}.annotations"), "must be a mapping"),
        }
    }
    if let Some(namespace) = metadata.get("namespace").filter(|n| !n.is_null()) {
        match namespace.as_str() {
            Some(namespace) => {
                if let Err(why) = dns1123_label(namespace) {
                    problems
                        .push(&format!("{path}.namespace"), format!("`{namespace}` is not a DNS-1123 label: {why}"));
                }
            }
            None => problems.push(&format!("{path}.namespace"), "must be a string"),
        }
    }
    labels
}

/// A `labels` mapping: string keys that are label keys, string values that are label values.
fn validate_labels(labels: Option<&Value>, path: &str, problems: &mut Problems) -> Option<Labels> {
    let Some(labels) = labels.filter(|l| !l.is_null()) else { return Some(Labels::new()) };
    let Some(map) = labels.as_mapping() else {
        problems.push(path, "must be a mapping");
        return None;
    };
    let before = problems.0.len();
    let mut read = Labels::new();
    for (key, value) in map {
        let Some(key) = key.as_str() else {
            problems.push(path, "keys must be strings");
            continue;
        };
        if let Err(why) = label_key(key) {
            problems.push(path, format!("key `{key}` is not a valid label key: {why}"));
        }
        match value.as_str() {
            Some(value) => {
                if let Err(why) = label_value(value) {
                    problems.push(&format!("{path}.{key}"), format!("`{value}` is not a valid label value: {why}"));
                }
                read.insert(key.to_string(), value.to_string());
            }
            None => problems.push(&format!("{path}.{key}"), "label values must be strings"),
        }
    }
    (problems.0.len() == before).then_some(read)
}

/// A Deployment's or StatefulSet's spec: replicas, selector against template, template labels, spread.
fn validate_workload_spec(spec: &Value, problems: &mut Problems) {
    if let Some(replicas) = spec.get("replicas").filter(|r| !r.is_null()) {
        if !replicas.as_i64().is_some_and(|n| (0..=i64::from(i32::MAX)).contains(&n)) {
            problems.push("spec.replicas", "must be a non-negative integer");
        }
    }
    let selector = match spec.get("selector").filter(|s| !s.is_null()) {
        None => {
            problems.push("spec.selector", "required");
            None
        }
        Some(value) => match Selector::from_value(value) {
            Ok(selector) if selector.is_empty() => {
                problems.push("spec.selector", "empty selector is invalid for a workload");
                None
            }
            Ok(selector) => Some(selector),
            Err(why) => {
                problems.push("spec.selector", why);
                None
            }
        },
    };
    let Some(template) = spec.get("template").filter(|t| t.is_mapping()) else {
        problems.push("spec.template", "required, and must be a mapping");
        return;
    };
    let template_labels = match template.get("metadata").filter(|m| !m.is_null()) {
        None => Some(Labels::new()),
        Some(metadata) if metadata.is_mapping() => validate_metadata(metadata, "spec.template.metadata", problems),
        Some(_) => {
            problems.push("spec.template.metadata", "must be a mapping");
            None
        }
    };
    if let (Some(selector), Some(labels)) = (&selector, &template_labels) {
        if !selector.matches(labels) {
            problems.push("spec.template.metadata.labels", "`selector` does not match template `labels`");
        }
    }
    let Some(pod_spec) = template.get("spec").filter(|s| s.is_mapping()) else {
        problems.push("spec.template.spec", "required, and must be a mapping");
        return;
    };
    if let Some(constraints) = pod_spec.get("topologySpreadConstraints").filter(|c| !c.is_null()) {
        validate_spread_constraints(constraints, "spec.template.spec.topologySpreadConstraints", problems);
    }
}

/// `validateTopologySpreadConstraints`, field by field.
fn validate_spread_constraints(constraints: &Value, path: &str, problems: &mut Problems) {
    let Some(list) = constraints.as_sequence() else {
        problems.push(path, "must be a list");
        return;
    };
    let mut pairs: BTreeSet<(String, String)> = BTreeSet::new();
    for (index, constraint) in list.iter().enumerate() {
        let path = format!("{path}[{index}]");
        let at = |field: &str| format!("{path}.{field}");
        if !constraint.is_mapping() {
            problems.push(&path, "must be a mapping");
            continue;
        }

        match constraint.get("maxSkew").filter(|v| !v.is_null()) {
            None => problems.push(&at("maxSkew"), "must be greater than zero (it is not set)"),
            Some(value) => match value.as_i64() {
                Some(n) if n > 0 && n <= i64::from(i32::MAX) => {}
                Some(n) => problems.push(&at("maxSkew"), format!("must be greater than zero (it is {n})")),
                None => problems.push(&at("maxSkew"), "must be an integer"),
            },
        }

        let key = constraint.get("topologyKey").and_then(Value::as_str).unwrap_or_default();
        if key.is_empty() {
            problems.push(&at("topologyKey"), "can not be empty");
        } else if let Err(why) = label_key(key) {
            problems.push(&at("topologyKey"), format!("`{key}` is not a valid label key: {why}"));
        }

        let action = constraint.get("whenUnsatisfiable").and_then(Value::as_str).unwrap_or_default();
        if !matches!(action, "DoNotSchedule" | "ScheduleAnyway") {
            problems.push(
                &at("whenUnsatisfiable"),
                format!("`{action}` is not supported: DoNotSchedule or ScheduleAnyway"),
            );
        }
        if !pairs.insert((key.to_string(), action.to_string())) {
            problems
                .push(&format!("{path}.{{topologyKey, whenUnsatisfiable}}"), format!("duplicate {{{key}, {action}}}"));
        }

        if let Some(min_domains) = constraint.get("minDomains").filter(|v| !v.is_null()) {
            match min_domains.as_i64() {
                Some(n) if n > 0 && n <= i64::from(i32::MAX) => {}
                Some(n) => problems.push(&at("minDomains"), format!("must be greater than zero (it is {n})")),
                None => problems.push(&at("minDomains"), "must be an integer"),
            }
            if action != "DoNotSchedule" {
                problems.push(
                    &at("minDomains"),
                    format!("can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"),
                );
            }
        }

        for field in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(policy) = constraint.get(field).filter(|v| !v.is_null()) {
                if !matches!(policy.as_str(), Some("Honor" | "Ignore")) {
                    problems.push(&at(field), "is not supported: Honor or Ignore");
                }
            }
        }

        let selector = match constraint.get("labelSelector").filter(|v| !v.is_null()) {
            None => None,
            Some(value) => match Selector::from_value(value) {
                Ok(selector) => Some(Some(selector)),
                Err(why) => {
                    problems.push(&at("labelSelector"), why);
                    // Present but unreadable: still "set" for matchLabelKeys.
                    Some(None)
                }
            },
        };

        if let Some(keys) = constraint.get("matchLabelKeys").filter(|v| !v.is_null()) {
            let Some(keys) = keys.as_sequence() else {
                problems.push(&at("matchLabelKeys"), "must be a list");
                continue;
            };
            if !keys.is_empty() && selector.is_none() {
                problems.push(&at("matchLabelKeys"), "must not be specified when labelSelector is not set");
            }
            for (i, key) in keys.iter().enumerate() {
                let key_path = format!("{path}.matchLabelKeys[{i}]");
                let Some(key) = key.as_str() else {
                    problems.push(&key_path, "must be a string");
                    continue;
                };
                if let Err(why) = label_key(key) {
                    problems.push(&key_path, format!("`{key}` is not a valid label key: {why}"));
                }
                if let Some(Some(selector)) = &selector {
                    if selector.keys().any(|k| k == key) {
                        problems.push(&key_path, format!("`{key}` exists in both matchLabelKeys and labelSelector"));
                    }
                }
            }
        }
    }
}

/// `ValidatePodDisruptionBudgetSpec`.
fn validate_pdb_spec(spec: &Value, problems: &mut Problems) {
    let min_available = spec.get("minAvailable").filter(|v| !v.is_null());
    let max_unavailable = spec.get("maxUnavailable").filter(|v| !v.is_null());
    if min_available.is_some() && max_unavailable.is_some() {
        problems.push("spec", "minAvailable and maxUnavailable cannot be both set");
    }
    for (field, value) in [("minAvailable", min_available), ("maxUnavailable", max_unavailable)] {
        if let Some(value) = value {
            if let Err(why) = IntOrPercent::validate(value, true) {
                problems.push(&format!("spec.{field}"), why.to_string());
            }
        }
    }
    if let Some(policy) = spec.get("unhealthyPodEvictionPolicy").filter(|v| !v.is_null()) {
        if !matches!(policy.as_str(), Some("IfHealthyBudget" | "AlwaysAllow")) {
            problems.push("spec.unhealthyPodEvictionPolicy", "is not supported: IfHealthyBudget or AlwaysAllow");
        }
    }
    if let Some(selector) = spec.get("selector").filter(|v| !v.is_null()) {
        if let Err(why) = Selector::from_value(selector) {
            problems.push("spec.selector", why);
        }
    }
}

/// `ValidateDeploymentStrategy` (pkg/apis/apps/validation): the type, and for RollingUpdate a
/// maxSurge and maxUnavailable that are ints >= 0 or percents (maxUnavailable at most 100%),
/// not both zero. kix's verify simulates exactly this strategy, so it must be one the API accepts.
fn validate_deployment_strategy(spec: &Value, problems: &mut Problems) {
    let Some(strategy) = spec.get("strategy").filter(|v| !v.is_null()) else { return };
    let kind = strategy.get("type").and_then(Value::as_str).unwrap_or("RollingUpdate");
    let rolling = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match kind {
        "Recreate" if rolling.is_some() => {
            problems.push("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
        }
        "Recreate" => {}
        "RollingUpdate" => {
            let Some(rolling) = rolling else { return };
            let field = |name: &str| rolling.get(name).filter(|v| !v.is_null());
            let mut zero = 0;
            for name in ["maxSurge", "maxUnavailable"] {
                let Some(value) = field(name) else { continue };
                // maxSurge may exceed 100%, maxUnavailable may not.
                match IntOrPercent::validate(value, name == "maxUnavailable") {
                    Ok(checked) if checked.is_zero() => zero += 1,
                    Ok(_) => {}
                    Err(why) => problems.push(&format!("spec.strategy.rollingUpdate.{name}"), why.to_string()),
                }
            }
            if zero == 2 {
                problems.push("spec.strategy.rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0");
            }
        }
        other => problems.push("spec.strategy.type", format!("`{other}` is not supported: Recreate or RollingUpdate")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_strategies_as_the_api_server_checks_them() {
        let with = |strategy: &str| {
            let text = format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  strategy: {strategy}\n  \
                 selector: {{matchLabels: {{app: d}}}}\n  template:\n    metadata: {{labels: {{app: d}}}}\n    \
                 spec: {{containers: [{{name: c, image: i}}]}}\n"
            );
            validate_object(&kix_yaml::from_str(&text).unwrap()).iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        for ok in [
            "{}",
            "{type: Recreate}",
            "{rollingUpdate: {maxSurge: 150%, maxUnavailable: 0}}",
            "{rollingUpdate: {maxUnavailable: 25%}}",
        ] {
            assert_eq!(with(ok), Vec::<String>::new(), "{ok}");
        }
        for (bad, says) in [
            ("{rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}", "may not be 0 when `maxSurge` is 0"),
            ("{rollingUpdate: {maxUnavailable: 150%}}", "greater than 100%"),
            ("{rollingUpdate: {maxUnavailable: abc}}", "integer or percentage"),
            ("{rollingUpdate: {maxSurge: -1}}", "greater than or equal to 0"),
            ("{type: Recreate, rollingUpdate: {maxSurge: 1}}", "may not be specified"),
            ("{type: Blue}", "not supported"),
        ] {
            let problems = with(bad);
            assert!(problems.iter().any(|p| p.contains(says)), "{bad}: {problems:?}");
        }
    }

    /// A valid Deployment as kix emits it, with `extra` spliced into the first spread constraint.
    fn deployment(extra: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: shop\n  labels:\n    \
             app.kubernetes.io/managed-by: kix\n  annotations:\n    kix.dev/availability-resolved: zone\nspec:\n  \
             replicas: 3\n  selector:\n    matchLabels:\n      app: api\n  template:\n    metadata:\n      labels:\n        \
             app: api\n    spec:\n      containers: [{{name: a, image: a}}]\n      topologySpreadConstraints:\n      \
             - maxSkew: 1\n        topologyKey: kubernetes.io/hostname\n        whenUnsatisfiable: ScheduleAnyway\n        \
             labelSelector:\n          matchLabels:\n            app: api\n        matchLabelKeys: [pod-template-hash]\n        \
             nodeTaintsPolicy: Honor\n{extra}      - maxSkew: 1\n        topologyKey: topology.kubernetes.io/zone\n        \
             whenUnsatisfiable: DoNotSchedule\n        labelSelector:\n          matchLabels:\n            app: api\n"
        )
    }

    fn pdb(spec: &str) -> String {
        format!(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: api\n  namespace: shop\nspec:\n\
             {spec}  selector:\n    matchLabels:\n      app: api\n"
        )
    }

    fn problems(yaml: &str) -> Vec<String> {
        validate_object(&kix_yaml::from_str(yaml).expect("test YAML parses")).iter().map(ToString::to_string).collect()
    }

    /// Asserts that each case yields exactly one problem containing the expected text
    /// (or none when the expectation is empty).
    fn check(cases: &[(String, &str)]) {
        for (yaml, expected) in cases {
            let found = problems(yaml);
            if expected.is_empty() {
                assert!(found.is_empty(), "expected no problems, got {found:?} in\n{yaml}");
            } else {
                assert_eq!(found.len(), 1, "expected one problem with `{expected}`, got {found:?} in\n{yaml}");
                assert!(found[0].contains(expected), "expected `{expected}`, got {found:?} in\n{yaml}");
            }
        }
    }

    /// Replaces one line of the base Deployment's first constraint.
    fn first_constraint(from: &str, to: &str) -> String {
        let yaml = deployment("");
        assert!(yaml.contains(from), "{from}");
        yaml.replacen(from, to, 1)
    }

    #[test]
    fn valid_emitted_objects_pass() {
        let stateful = deployment("")
            .replace("kind: Deployment", "kind: StatefulSet")
            .replace("        matchLabelKeys: [pod-template-hash]\n", "        nodeAffinityPolicy: Ignore\n");
        let with_min_domains = first_constraint(
            "whenUnsatisfiable: ScheduleAnyway",
            "whenUnsatisfiable: DoNotSchedule\n        minDomains: 3",
        );
        // Another kind's spec is not kix's to check (its name is, `object_rules`).
        let other_kind = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec: 7\n";
        check(&[
            (deployment(""), ""),
            (stateful, ""),
            (with_min_domains, ""),
            (other_kind.to_string(), ""),
            (pdb("  maxUnavailable: 1\n  unhealthyPodEvictionPolicy: AlwaysAllow\n"), ""),
            (pdb("  minAvailable: 50%\n  unhealthyPodEvictionPolicy: IfHealthyBudget\n"), ""),
            (pdb("  maxUnavailable: 0\n"), ""),
            (pdb("  maxUnavailable: 100%\n"), ""),
            (pdb(""), ""),
        ]);
    }

    #[test]
    fn spread_constraint_fields_follow_the_api_server() {
        check(&[
            (first_constraint("maxSkew: 1", "maxSkew: 0"), "maxSkew: must be greater than zero (it is 0)"),
            (first_constraint("maxSkew: 1", "maxSkew: -2"), "must be greater than zero (it is -2)"),
            (first_constraint("maxSkew: 1", "maxSkew: \"1\""), "maxSkew: must be an integer"),
            (first_constraint("- maxSkew: 1\n", "- \n"), "maxSkew: must be greater than zero (it is not set)"),
            (
                first_constraint("topologyKey: kubernetes.io/hostname", "topologyKey: \"\""),
                "topologyKey: can not be empty",
            ),
            (first_constraint("topologyKey: kubernetes.io/hostname", "topologyKey: -rack"), "not a valid label key"),
            (
                first_constraint("whenUnsatisfiable: ScheduleAnyway", "whenUnsatisfiable: Always"),
                "`Always` is not supported",
            ),
            (first_constraint("        whenUnsatisfiable: ScheduleAnyway\n", ""), "`` is not supported"),
            (
                first_constraint("nodeTaintsPolicy: Honor", "nodeTaintsPolicy: honor"),
                "nodeTaintsPolicy: is not supported",
            ),
            (
                first_constraint(
                    "nodeTaintsPolicy: Honor",
                    "nodeTaintsPolicy: Honor\n        nodeAffinityPolicy: Always",
                ),
                "nodeAffinityPolicy: is not supported",
            ),
            (
                first_constraint(
                    "labelSelector:\n          matchLabels:\n            app: api\n",
                    "labelSelector: {matchExpressions: [{key: app, operator: In}]}\n",
                ),
                "labelSelector: operator In on `app` needs at least one value",
            ),
        ]);
    }

    #[test]
    fn spread_constraint_pairs_are_unique() {
        let duplicate = "      - maxSkew: 2\n        topologyKey: kubernetes.io/hostname\n        \
                         whenUnsatisfiable: ScheduleAnyway\n";
        check(&[(deployment(duplicate), "duplicate {kubernetes.io/hostname, ScheduleAnyway}")]);
        // The same key with the other action is a different constraint.
        let other_action = duplicate.replace("ScheduleAnyway", "DoNotSchedule");
        check(&[(deployment(&other_action), "")]);
    }

    #[test]
    fn min_domains_only_positive_and_only_with_do_not_schedule() {
        let soft = first_constraint("nodeTaintsPolicy: Honor", "nodeTaintsPolicy: Honor\n        minDomains: 2");
        let zero = first_constraint(
            "whenUnsatisfiable: ScheduleAnyway",
            "whenUnsatisfiable: DoNotSchedule\n        minDomains: 0",
        );
        check(&[
            (soft, "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
            (zero, "minDomains: must be greater than zero (it is 0)"),
        ]);
    }

    #[test]
    fn match_label_keys_need_a_selector_and_a_key_it_does_not_use() {
        let without_selector =
            first_constraint("        labelSelector:\n          matchLabels:\n            app: api\n", "");
        let key_in_selector = first_constraint("matchLabelKeys: [pod-template-hash]", "matchLabelKeys: [app]");
        let key_in_expressions = first_constraint(
            "labelSelector:\n          matchLabels:\n            app: api\n",
            "labelSelector: {matchExpressions: [{key: pod-template-hash, operator: Exists}], matchLabels: {app: api}}\n",
        );
        let bad_key = first_constraint("matchLabelKeys: [pod-template-hash]", "matchLabelKeys: [\"a b\"]");
        check(&[
            (without_selector, "must not be specified when labelSelector is not set"),
            (key_in_selector, "`app` exists in both matchLabelKeys and labelSelector"),
            (key_in_expressions, "`pod-template-hash` exists in both matchLabelKeys and labelSelector"),
            (bad_key, "matchLabelKeys[0]: `a b` is not a valid label key"),
        ]);
    }

    #[test]
    fn labels_and_selectors_are_valid_everywhere() {
        let base = deployment("");
        check(&[
            (
                base.replace("app.kubernetes.io/managed-by: kix", "-bad: kix"),
                "metadata.labels: key `-bad` is not a valid label key",
            ),
            (
                base.replace("app.kubernetes.io/managed-by: kix", "app.kubernetes.io/managed-by: \"a b\""),
                "metadata.labels.app.kubernetes.io/managed-by: `a b` is not a valid label value",
            ),
            (
                base.replace("app.kubernetes.io/managed-by: kix", "version: 1"),
                "metadata.labels.version: label values must be strings",
            ),
            (
                base.replace("kix.dev/availability-resolved: zone", "kix.dev/: zone"),
                "metadata.annotations: key `kix.dev/` is not a qualified name",
            ),
            (base.replace("namespace: shop", "namespace: Shop"), "metadata.namespace: `Shop` is not a DNS-1123 label"),
            (base.replace("name: api\n", "name: API\n"), "metadata.name: `API` is not a DNS-1123 subdomain"),
            (
                base.replace(
                    "      labels:\n        app: api\n",
                    "      labels:\n        app: api\n        x: \"-\"\n",
                ),
                "spec.template.metadata.labels.x: `-` is not a valid label value",
            ),
            (
                base.replacen("matchLabels:\n      app: api", "matchLabels:\n      app: other", 1),
                "spec.template.metadata.labels: `selector` does not match template `labels`",
            ),
            (
                base.replacen("matchLabels:\n      app: api", "matchLabels:\n      app: -api", 1),
                "spec.selector: matchLabels value `-api` of `app` is not a valid label value",
            ),
            (
                base.replacen("  selector:\n    matchLabels:\n      app: api\n", "  selector: {}\n", 1),
                "spec.selector: empty selector is invalid",
            ),
            (base.replacen("  selector:\n    matchLabels:\n      app: api\n", "", 1), "spec.selector: required"),
            (base.replace("replicas: 3", "replicas: -1"), "spec.replicas: must be a non-negative integer"),
        ]);
    }

    #[test]
    fn pdb_budgets_are_exclusive_ints_or_percents() {
        check(&[
            (pdb("  minAvailable: 1\n  maxUnavailable: 1\n"), "minAvailable and maxUnavailable cannot be both set"),
            (pdb("  maxUnavailable: -1\n"), "spec.maxUnavailable: must be greater than or equal to 0"),
            (pdb("  maxUnavailable: 101%\n"), "must not be greater than 100%"),
            (pdb("  minAvailable: \"5\"\n"), "spec.minAvailable: `5` must be an integer or percentage"),
            (pdb("  minAvailable: \"%\"\n"), "must be an integer or percentage"),
            (pdb("  minAvailable: 1.5\n"), "must be an integer or percentage"),
            (pdb("  minAvailable: [1]\n"), "must be an integer or percentage"),
            (
                pdb("  maxUnavailable: 1\n  unhealthyPodEvictionPolicy: Always\n"),
                "unhealthyPodEvictionPolicy: is not supported",
            ),
            (
                pdb("  maxUnavailable: 1\n").replace("app: api", "app: \"a b\""),
                "spec.selector: matchLabels value `a b`",
            ),
        ]);
    }

    #[test]
    fn objects_without_metadata_or_workloads_without_spec_are_refused() {
        check(&[
            ("apiVersion: v1\nkind: ConfigMap\n".to_string(), "metadata: required"),
            ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\n".to_string(), "spec: required"),
            ("- a\n".to_string(), "an object must be a mapping"),
        ]);
    }
}
