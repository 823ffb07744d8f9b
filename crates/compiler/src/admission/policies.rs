//! The objects of `_admission.yaml`: per guarded resource and check, one ValidatingAdmissionPolicy and its
//! ValidatingAdmissionPolicyBinding; per namespace, one ConfigMap of params.
//!
//! How they select only what kix compiled (issue 40): the policy's `resourceRules` name the resource and
//! the compiled objects' names (`resourceNames`), the binding's `namespaceSelector` their namespaces (by the
//! `kubernetes.io/metadata.name` label every namespace carries), and a match condition requires the
//! object's entry in its namespace's params, so an object of the same name in another namespace is not
//! matched. A `/scale` request's object is an `autoscaling/v1` Scale, which carries no labels: selecting by
//! label would let every `kubectl scale` through.
//!
//! The params are a ConfigMap per namespace (`kix-admission-<cluster>`), looked up in the request's own
//! namespace (`paramRef` without a namespace). `parameterNotFoundAction: Deny`: without its params a
//! namespace's guarded objects are refused, loudly, rather than silently unguarded (a deleted ConfigMap
//! must not switch enforcement off). The price is kubernetes/kubernetes#133827: after a batch delete and
//! recreate, kix's objects in that namespace are refused until the ConfigMap is back. `kubectl apply -k`
//! applies ConfigMaps before workloads (kustomize's kind order), so one apply restores both.

use super::expressions::{compiled, fact, has_fact, literal, or_default, present, select, selects_labels};
use super::{Check, Guard, Resource};
use crate::resolve::model::Admission;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

/// The name of a cluster's params ConfigMap in each namespace it guards.
pub fn params_name(cluster: &str) -> String {
    format!("kix-admission-{cluster}")
}

/// The key prefix of an object's entries in its namespace's params: `<resource>.<group>_<name>_` (neither
/// resource names nor object names hold `_`, so no two objects share a key).
pub fn prefix(resource: &Resource, name: &str) -> String {
    format!("{}_{name}_", resource.qualified())
}

/// The policies, bindings and params for `guards`, in a fixed order: each policy with its binding (by
/// resource, then check), then the params by namespace.
pub fn documents(cluster: &str, admission: &Admission, guards: &[Guard]) -> Vec<kix_yaml::Value> {
    let mut by_policy: BTreeMap<(&Resource, PolicyCheck), Vec<&Guard>> = BTreeMap::new();
    for guard in guards {
        by_policy.entry((&guard.resource, PolicyCheck::of(&guard.check))).or_default().push(guard);
    }
    let mut documents = Vec::new();
    for ((resource, check), guarded) in &by_policy {
        let name = policy_name(cluster, resource, *check);
        documents.push(policy(cluster, &name, resource, guarded, admission));
        documents.push(binding(cluster, &name, admission, guarded));
    }
    let mut params: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    for guard in guards {
        let data = params.entry(&guard.namespace).or_default();
        let prefix = prefix(&guard.resource, &guard.name);
        data.insert(format!("{prefix}workload"), guard.workload.clone());
        data.insert(format!("{prefix}level"), guard.level.to_string());
        data.insert(format!("{prefix}explain"), guard.explain.clone());
        let counted = match &guard.check {
            Check::Workload { count, .. } => !count.is_empty(),
            Check::Scale | Check::Autoscaler { .. } => true,
            Check::Budget => false,
        };
        if let (true, Some(floor)) = (counted, guard.floor) {
            data.insert(format!("{prefix}floor"), floor.to_string());
        }
        if let Some(key) = &guard.spread_key {
            data.insert(format!("{prefix}spread"), key.clone());
        }
    }
    for (namespace, data) in params {
        documents.push(to_yaml(&json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": params_name(cluster), "namespace": namespace, "labels": managed_labels() },
            "data": data,
        })));
    }
    documents
}

/// The checks that each make one policy (a workload's count and spread share one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PolicyCheck {
    Workload,
    Scale,
    Autoscaler,
    Budget,
}

impl PolicyCheck {
    fn of(check: &Check) -> PolicyCheck {
        match check {
            Check::Workload { .. } => PolicyCheck::Workload,
            Check::Scale => PolicyCheck::Scale,
            Check::Autoscaler { .. } => PolicyCheck::Autoscaler,
            Check::Budget => PolicyCheck::Budget,
        }
    }
}

fn policy_name(cluster: &str, resource: &Resource, check: PolicyCheck) -> String {
    let suffix = if check == PolicyCheck::Scale { "-scale" } else { "" };
    format!("kix-{cluster}-{}{suffix}", resource.qualified())
}

fn managed_labels() -> Json {
    json!({ kix_kube::kix_names::MANAGED_BY_LABEL: "kix" })
}

/// The words every denial starts with.
fn opening(cluster: &str) -> String {
    literal(&format!("kix (cluster {cluster}): "))
}

fn policy(
    cluster: &str,
    name: &str,
    resource: &Resource,
    guarded: &[&Guard],
    admission: &Admission,
) -> kix_yaml::Value {
    let mut names: Vec<&str> = guarded.iter().map(|g| g.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    // The objects of one resource share its paths; an object's own entries in the params say which of
    // the policy's checks apply to it (an autoscaled workload has no floor of its own, R11's no spread).
    let merged = merge(guarded);
    let check = &merged;
    let (resources, operations) = match check {
        Check::Scale => (format!("{}/scale", resource.plural), vec!["UPDATE"]),
        Check::Budget => (resource.plural.clone(), vec!["CREATE", "UPDATE", "DELETE"]),
        Check::Workload { .. } | Check::Autoscaler { .. } => (resource.plural.clone(), vec!["CREATE", "UPDATE"]),
    };
    let prefix_literal = literal(&format!("{}_", resource.qualified()));
    let mut variables = vec![json!({
        "name": "prefix",
        "expression": format!("{prefix_literal} + request.name + '_'"),
    })];
    // Scale and autoscaler requests are about an object whose floor kix compiled; the others about any
    // object it compiled (each validation then reads only the entries the object has).
    let key = if matches!(check, Check::Scale | Check::Autoscaler { .. }) { "_floor" } else { "_workload" };
    let mut conditions =
        vec![json!({ "name": "compiled-by-kix", "expression": compiled(&format!("{}_", resource.qualified()), key) })];
    let open = opening(cluster);
    let why = format!("'. Why: ' + {}", fact("explain"));
    // Spliced into an open string literal: closes it, adds the level, opens the next.
    let holds = format!("' + ' to hold level ' + {} + '", fact("level"));
    let mut validations = Vec::new();
    match check {
        Check::Workload { count, default, spread } => {
            if !count.is_empty() {
                variables
                    .push(json!({ "name": "count", "expression": or_default("object", count, &default.to_string()) }));
                validations.push(json!({
                    "expression": format!("!{} || variables.count >= int({})", has_fact("floor"), fact("floor")),
                    "messageExpression": format!(
                        "{open} + {} + ' needs at least ' + {} + ' replicas{holds}; this request sets ' + string(variables.count) + ' at {}' + {why}",
                        fact("workload"), fact("floor"), count.join(".")
                    ),
                    "message": format!("kix (cluster {cluster}): a workload kix compiled may not run fewer replicas than its level's floor"),
                    "reason": "Invalid",
                }));
            }
            if let Some(at) = spread {
                if let Some(labels) = &at.labels {
                    variables.push(json!({ "name": "labels", "expression": format!("{} ? {} : {{}}", present("object", labels), select("object", labels)) }));
                }
                let constraints = select("object", &at.constraints);
                let selector_check = match &at.labels {
                    Some(_) => format!(" && has(c.labelSelector) && {}", selects_labels("c.labelSelector")),
                    None => String::new(),
                };
                validations.push(json!({
                    "expression": format!(
                        "!{} || ({} && {constraints}.exists(c, c.topologyKey == {} && c.whenUnsatisfiable == 'DoNotSchedule' && c.maxSkew == 1{selector_check}))",
                        has_fact("spread"), present("object", &at.constraints), fact("spread")
                    ),
                    "messageExpression": format!(
                        "{open} + {} + ' must keep a topology spread constraint on ' + {} + ' with whenUnsatisfiable: DoNotSchedule and maxSkew: 1{}{holds}' + {why}",
                        fact("workload"), fact("spread"),
                        if at.labels.is_some() { ", whose labelSelector selects its pod template\\'s labels," } else { "" },
                    ),
                    "message": format!("kix (cluster {cluster}): a workload kix compiled must keep its level's hard topology spread constraint"),
                    "reason": "Invalid",
                }));
            }
        }
        Check::Scale => {
            variables.push(json!({ "name": "count", "expression": or_default("object", &["spec".into(), "replicas".into()], "0") }));
            validations.push(json!({
                "expression": format!("variables.count >= int({})", fact("floor")),
                "messageExpression": format!(
                    "{open} + {} + ' needs at least ' + {} + ' replicas{holds}; this scale request sets ' + string(variables.count) + {why}",
                    fact("workload"), fact("floor")
                ),
                "message": format!("kix (cluster {cluster}): a workload kix compiled may not be scaled below its level's floor"),
                "reason": "Invalid",
            }));
        }
        Check::Autoscaler { min, default } => {
            let path = vec!["spec".to_string(), min.to_string()];
            variables
                .push(json!({ "name": "minimum", "expression": or_default("object", &path, &default.to_string()) }));
            validations.push(json!({
                "expression": format!("variables.minimum >= int({})", fact("floor")),
                "messageExpression": format!(
                    "{open} + {} + ' needs at least ' + {} + ' replicas{holds}; {} ' + request.name + ' may not scale it below that (this request sets {min} ' + string(variables.minimum) + ')' + {why}",
                    fact("workload"), fact("floor"), resource.kind
                ),
                "message": format!("kix (cluster {cluster}): an autoscaler kix compiled may not scale its workload below its level's floor"),
                "reason": "Invalid",
            }));
        }
        Check::Budget => {
            let exempt = match admission.exempt.as_slice() {
                [] => "no one".to_string(),
                names => names.join(", "),
            };
            if !admission.exempt.is_empty() {
                let names: Vec<String> = admission.exempt.iter().map(|name| literal(name)).collect();
                conditions.push(json!({
                    "name": "not-exempt",
                    "expression": format!("!(request.userInfo.username in [{}])", names.join(", ")),
                }));
            }
            validations.push(json!({
                "expression": "request.operation != 'DELETE'",
                "messageExpression": format!(
                    "{open} + 'PodDisruptionBudget ' + request.name + ' is kix\\'s budget for ' + {} + ' (level ' + {} + '); only {} may delete it' + {why}",
                    fact("workload"), fact("level"), literal_text(&exempt)
                ),
                "message": format!("kix (cluster {cluster}): kix's PodDisruptionBudgets may be deleted only by {exempt}"),
                "reason": "Forbidden",
            }));
            validations.push(json!({
                "expression": "request.operation == 'DELETE' || (has(object.spec) && !has(object.spec.minAvailable) && has(object.spec.maxUnavailable) && string(object.spec.maxUnavailable) in ['0', '1', '0%'])",
                "messageExpression": format!(
                    "{open} + 'PodDisruptionBudget ' + request.name + ' is kix\\'s budget for ' + {} + ' (level ' + {} + '): it must keep maxUnavailable: 1 (or 0) and no minAvailable; only {} may change it' + {why}",
                    fact("workload"), fact("level"), literal_text(&exempt)
                ),
                "message": format!("kix (cluster {cluster}): kix's PodDisruptionBudgets may not be weakened"),
                "reason": "Invalid",
            }));
        }
    }
    to_yaml(&json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": { "name": name, "labels": managed_labels() },
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": { "apiVersion": "v1", "kind": "ConfigMap" },
            "matchConstraints": {
                "resourceRules": [{
                    "apiGroups": [resource.group],
                    "apiVersions": ["*"],
                    "resources": [resources],
                    "operations": operations,
                    "resourceNames": names,
                }],
            },
            "matchConditions": conditions,
            "variables": variables,
            "validations": validations,
        },
    }))
}

/// One check holding every path the guards of one policy need: the count field of those whose count is
/// checked, the spread field of those whose spread is.
fn merge(guarded: &[&Guard]) -> Check {
    let mut check = guarded[0].check.clone();
    if let Check::Workload { count, default, spread } = &mut check {
        for guard in guarded {
            if let Check::Workload { count: other, default: other_default, spread: other_spread } = &guard.check {
                if count.is_empty() && !other.is_empty() {
                    *count = other.clone();
                    *default = *other_default;
                }
                if spread.is_none() {
                    *spread = other_spread.clone();
                }
            }
        }
    }
    check
}

/// Text to splice inside a CEL string literal that is already open (quotes and backslashes escaped).
fn literal_text(text: &str) -> String {
    let quoted = literal(text);
    quoted[1..quoted.len() - 1].to_string()
}

fn binding(cluster: &str, name: &str, admission: &Admission, guarded: &[&Guard]) -> kix_yaml::Value {
    let mut namespaces: Vec<&str> = guarded.iter().map(|g| g.namespace.as_str()).collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    to_yaml(&json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": { "name": name, "labels": managed_labels() },
        "spec": {
            "policyName": name,
            "validationActions": [admission.enforce.action()],
            "paramRef": { "name": params_name(cluster), "parameterNotFoundAction": "Deny" },
            "matchResources": {
                "namespaceSelector": {
                    "matchExpressions": [{
                        "key": "kubernetes.io/metadata.name",
                        "operator": "In",
                        "values": namespaces,
                    }],
                },
            },
        },
    }))
}

/// A JSON value as a YAML document value (keys in serde_json's order: sorted).
pub fn to_yaml(json: &Json) -> kix_yaml::Value {
    use kix_yaml::{Mapping, Value};
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::Sequence(items.iter().map(to_yaml).collect()),
        Json::Object(fields) => {
            let mut map = Mapping::with_capacity(fields.len());
            for (key, value) in fields {
                map.insert(Value::from(key.as_str()), to_yaml(value));
            }
            Value::Mapping(map)
        }
    }
}
