//! ValidatingAdmissionPolicies evaluated in-process, as the API server applies them
//! (kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating`:
//! `dispatcher.go` and `validator.go`; matching in `../matching/matching.go` and `../../webhook/predicates/rules`),
//! with the `cel` crate as the CEL implementation:
//!
//! 1. For each binding, its policy's `matchConstraints` (resource rules with their operations, groups,
//!    versions, resources and subresources, `resourceNames`; `excludeResourceRules`; namespace and object
//!    selectors) and the binding's own `matchResources` must both match the request.
//! 2. The params: `paramRef.name` in `paramRef.namespace`, or in the request's namespace when unset. None
//!    found: `parameterNotFoundAction: Deny` refuses the request (before any match condition, as
//!    `collectParams` runs first), `Allow` skips the binding.
//! 3. `matchConditions`, in order: one false skips the policy; an error is a failure.
//! 4. `variables`, in order (each sees the ones before it), then each validation: false is a violation
//!    with its `messageExpression` (or `message`, or the expression); an error is a failure.
//! 5. A failure under `failurePolicy: Fail` (the default) is a violation; under `Ignore` it is dropped.
//!    Violations take the binding's `validationActions`; the request is refused when one is `Deny`.
//!
//! Left out (kix's policies use none of them, and a policy that does is refused with the reason):
//! `paramRef.selector`, `authorizer`, Kubernetes' CEL libraries (`quantity`, `url`, regex extensions),
//! `auditAnnotations`, `matchPolicy: Exact` version conversion.

use super::cel_values::{cel, map, string};
use cel::{Context, Program, Value as Cel};
use kix_kube::selector::{Labels, Selector};
use kix_kube::value::{at, str_at};
use kix_yaml::Value;

/// An admission request: what the API server knows when it calls the policies.
#[derive(Clone, Debug)]
pub struct Request {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    pub group: String,
    pub version: String,
    /// The resource's plural name (`deployments`).
    pub resource: String,
    /// The subresource (`scale`), empty for the resource itself.
    pub subresource: String,
    /// The kind of `object` (`Scale` for a `/scale` request).
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// The object after the request (`None` for a DELETE).
    pub object: Option<Value>,
    /// The object before it (`None` for a CREATE).
    pub old_object: Option<Value>,
    /// The authenticated user name.
    pub user: String,
    /// Labels of the request's namespace (its `kubernetes.io/metadata.name` is added).
    pub namespace_labels: Labels,
}

/// What one binding's policy said about a request.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    pub policy: String,
    pub binding: String,
    /// The binding's `validationActions` (`Deny`, `Warn`, `Audit`).
    pub actions: Vec<String>,
    pub message: String,
}

/// The policies' answer to one request.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Decision {
    /// The policies that matched (by binding), whether or not they refused.
    pub matched: Vec<String>,
    pub violations: Vec<Violation>,
}

impl Decision {
    /// Whether the API server refuses the request (a violation with the `Deny` action).
    pub fn denied(&self) -> bool {
        self.violations.iter().any(|v| v.actions.iter().any(|a| a == "Deny"))
    }
}

struct Compiled {
    name: String,
    program: Program,
    text: String,
}

struct Validation {
    check: Compiled,
    message: Option<String>,
    message_expression: Option<Compiled>,
}

struct Policy {
    name: String,
    object: Value,
    fail: bool,
    conditions: Vec<Compiled>,
    variables: Vec<Compiled>,
    validations: Vec<Validation>,
}

struct Binding {
    name: String,
    policy: String,
    object: Value,
    actions: Vec<String>,
}

/// A set of policies, bindings and the params they may read, compiled once.
pub struct PolicySet {
    policies: Vec<Policy>,
    bindings: Vec<Binding>,
    params: Vec<Value>,
}

fn compile(name: &str, text: &str) -> Result<Compiled, String> {
    let program = Program::compile(text).map_err(|e| format!("{name}: `{text}` does not parse as CEL: {e}"))?;
    Ok(Compiled { name: name.to_string(), program, text: text.to_string() })
}

fn entries<'a>(value: &'a Value, path: &[&str]) -> &'a [Value] {
    at(value, path).and_then(Value::as_sequence).map(Vec::as_slice).unwrap_or_default()
}

fn strings(value: &Value, path: &[&str]) -> Vec<String> {
    entries(value, path).iter().filter_map(Value::as_str).map(str::to_string).collect()
}

impl PolicySet {
    /// The set of `documents`: ValidatingAdmissionPolicies and their bindings, and every other object as a
    /// possible param. Errors name the policy and the expression that does not compile.
    pub fn from_documents(documents: &[Value]) -> Result<PolicySet, String> {
        let mut set = PolicySet { policies: Vec::new(), bindings: Vec::new(), params: Vec::new() };
        for document in documents {
            let kind = str_at(document, &["kind"]).unwrap_or_default();
            let name = str_at(document, &["metadata", "name"]).unwrap_or_default().to_string();
            let admission =
                str_at(document, &["apiVersion"]).unwrap_or_default().starts_with("admissionregistration.k8s.io/");
            match (admission, kind) {
                (true, "ValidatingAdmissionPolicy") => set.policies.push(Policy::compile(&name, document)?),
                (true, "ValidatingAdmissionPolicyBinding") => set.bindings.push(Binding {
                    policy: str_at(document, &["spec", "policyName"]).unwrap_or_default().to_string(),
                    actions: strings(document, &["spec", "validationActions"]),
                    object: document.clone(),
                    name,
                }),
                _ => set.params.push(document.clone()),
            }
        }
        Ok(set)
    }

    /// Every expression of every policy, as (policy, where in it, its text, the parsed expression): for
    /// the cost and portability checks ([`super::cost`]).
    pub fn expressions(&self) -> Vec<(&str, String, &str, &cel::common::ast::IdedExpr)> {
        let mut all = Vec::new();
        for policy in &self.policies {
            for (list, entries) in [("matchConditions", &policy.conditions), ("variables", &policy.variables)] {
                for c in entries {
                    all.push((
                        policy.name.as_str(),
                        format!("{list}.{}", c.name),
                        c.text.as_str(),
                        c.program.expression(),
                    ));
                }
            }
            for (index, validation) in policy.validations.iter().enumerate() {
                let check = &validation.check;
                all.push((
                    policy.name.as_str(),
                    format!("validations[{index}]"),
                    check.text.as_str(),
                    check.program.expression(),
                ));
                if let Some(m) = &validation.message_expression {
                    all.push((
                        policy.name.as_str(),
                        format!("validations[{index}].messageExpression"),
                        m.text.as_str(),
                        m.program.expression(),
                    ));
                }
            }
        }
        all
    }

    /// How the API server answers `request`.
    pub fn evaluate(&self, request: &Request) -> Decision {
        let mut decision = Decision::default();
        for binding in &self.bindings {
            let Some(policy) = self.policies.iter().find(|p| p.name == binding.policy) else { continue };
            let constraints = at(&policy.object, &["spec", "matchConstraints"]);
            let resources = at(&binding.object, &["spec", "matchResources"]);
            if !constraints.is_some_and(|c| matches(c, request, true))
                || !resources.is_none_or(|r| matches(r, request, false))
            {
                continue;
            }
            let violate = |decision: &mut Decision, message: String| {
                decision.violations.push(Violation {
                    policy: policy.name.clone(),
                    binding: binding.name.clone(),
                    actions: binding.actions.clone(),
                    message,
                })
            };
            let params = match self.params_for(policy, binding, request) {
                Ok(Some(params)) => params,
                Ok(None) => continue,
                Err(message) => {
                    decision.matched.push(binding.name.clone());
                    violate(&mut decision, message);
                    continue;
                }
            };
            let mut context = Context::default();
            let absent = |object: &Option<Value>| object.as_ref().map_or(Cel::Null, cel);
            context.add_variable_from_value("object", absent(&request.object));
            context.add_variable_from_value("oldObject", absent(&request.old_object));
            context.add_variable_from_value("params", params);
            context.add_variable_from_value("request", request_value(request));
            context.add_variable_from_value(
                "namespaceObject",
                map([("metadata", map([("name", string(&request.namespace))]))]),
            );
            let mut skipped = false;
            for condition in &policy.conditions {
                match condition.program.execute(&context) {
                    Ok(Cel::Bool(true)) => {}
                    Ok(Cel::Bool(false)) => {
                        skipped = true;
                        break;
                    }
                    other => {
                        if policy.fail {
                            decision.matched.push(binding.name.clone());
                            violate(&mut decision, failure(&policy.name, condition, &other));
                        }
                        skipped = true;
                        break;
                    }
                }
            }
            if skipped {
                continue;
            }
            decision.matched.push(binding.name.clone());
            let mut variables: Vec<(&str, Cel)> = Vec::new();
            for variable in &policy.variables {
                // An erroring variable is left out: an expression that reads it fails as the API server's
                // lazy evaluation would, one that does not is unaffected.
                context.add_variable_from_value("variables", map(variables.clone()));
                if let Ok(value) = variable.program.execute(&context) {
                    variables.push((variable.name.as_str(), value));
                }
            }
            context.add_variable_from_value("variables", map(variables));
            for validation in &policy.validations {
                match validation.check.program.execute(&context) {
                    Ok(Cel::Bool(true)) => {}
                    Ok(Cel::Bool(false)) => {
                        let message = validation
                            .message_expression
                            .as_ref()
                            .and_then(|m| match m.program.execute(&context) {
                                Ok(Cel::String(text)) if !text.trim().is_empty() => Some(text.to_string()),
                                _ => None,
                            })
                            .or_else(|| validation.message.clone())
                            .unwrap_or_else(|| format!("failed expression: {}", validation.check.text));
                        violate(&mut decision, message);
                    }
                    other => {
                        if policy.fail {
                            violate(&mut decision, failure(&policy.name, &validation.check, &other));
                        }
                    }
                }
            }
        }
        decision
    }

    /// The params object of a binding for a request: `Ok(None)` when the policy takes none... or the
    /// binding allows their absence and none is found (the binding is skipped).
    fn params_for(&self, policy: &Policy, binding: &Binding, request: &Request) -> Result<Option<Cel>, String> {
        let Some(kind) = at(&policy.object, &["spec", "paramKind"]) else { return Ok(Some(Cel::Null)) };
        let Some(reference) = at(&binding.object, &["spec", "paramRef"]) else {
            return Err(format!("binding {} of policy {} with paramKind has no paramRef", binding.name, policy.name));
        };
        if at(reference, &["selector"]).is_some() {
            return Err(format!("binding {}: paramRef.selector is not evaluated offline", binding.name));
        }
        let name = str_at(reference, &["name"]).unwrap_or_default();
        let namespace = str_at(reference, &["namespace"]).unwrap_or(&request.namespace);
        let (api_version, kind) = (str_at(kind, &["apiVersion"]), str_at(kind, &["kind"]));
        let found = self.params.iter().find(|param| {
            str_at(param, &["apiVersion"]) == api_version
                && str_at(param, &["kind"]) == kind
                && str_at(param, &["metadata", "name"]) == Some(name)
                && str_at(param, &["metadata", "namespace"]).unwrap_or_default() == namespace
        });
        match (found, str_at(reference, &["parameterNotFoundAction"]).unwrap_or("Deny")) {
            (Some(param), _) => Ok(Some(cel(param))),
            (None, "Allow") => Ok(None),
            // dispatcher.go's words for this case.
            (None, _) => Err(format!(
                "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction ({} {namespace}/{name})",
                kind.unwrap_or_default()
            )),
        }
    }
}

impl Policy {
    fn compile(name: &str, object: &Value) -> Result<Policy, String> {
        let named = |list: &str| -> Result<Vec<Compiled>, String> {
            entries(object, &["spec", list])
                .iter()
                .map(|entry| {
                    let entry_name = str_at(entry, &["name"]).unwrap_or_default();
                    compile(&format!("{name} {list} {entry_name}"), str_at(entry, &["expression"]).unwrap_or_default())
                        .map(|mut c| {
                            c.name = entry_name.to_string();
                            c
                        })
                })
                .collect()
        };
        let validations = entries(object, &["spec", "validations"])
            .iter()
            .map(|entry| {
                Ok(Validation {
                    check: compile(name, str_at(entry, &["expression"]).unwrap_or_default())?,
                    message: str_at(entry, &["message"]).map(str::to_string),
                    message_expression: str_at(entry, &["messageExpression"]).map(|m| compile(name, m)).transpose()?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Policy {
            name: name.to_string(),
            fail: str_at(object, &["spec", "failurePolicy"]).unwrap_or("Fail") == "Fail",
            conditions: named("matchConditions")?,
            variables: named("variables")?,
            validations,
            object: object.clone(),
        })
    }
}

/// The message of an expression that did not evaluate to a boolean.
fn failure(policy: &str, expression: &Compiled, result: &Result<Cel, cel::ExecutionError>) -> String {
    match result {
        Ok(value) => format!("policy {policy}: expression `{}` evaluated to {value:?}, not a boolean", expression.text),
        Err(error) => format!("policy {policy}: expression `{}` failed: {error}", expression.text),
    }
}

/// The `request` variable (an AdmissionRequest's fields the policies read).
fn request_value(request: &Request) -> Cel {
    map([
        ("operation", string(&request.operation)),
        ("name", string(&request.name)),
        ("namespace", string(&request.namespace)),
        ("subResource", string(&request.subresource)),
        (
            "resource",
            map([
                ("group", string(&request.group)),
                ("version", string(&request.version)),
                ("resource", string(&request.resource)),
            ]),
        ),
        (
            "kind",
            map([
                ("group", string(&request.group)),
                ("version", string(&request.version)),
                ("kind", string(&request.kind)),
            ]),
        ),
        ("userInfo", map([("username", string(&request.user)), ("groups", Cel::List(Default::default()))])),
    ])
}

/// Whether a MatchResources (a policy's `matchConstraints`, a binding's `matchResources`) matches the
/// request. A policy's must name resources (`rules`); a binding's without rules matches every resource
/// its policy does.
fn matches(resources: &Value, request: &Request, policy: bool) -> bool {
    let rules = entries(resources, &["resourceRules"]);
    let ruled = match rules.is_empty() {
        true => !policy,
        false => rules.iter().any(|rule| rule_matches(rule, request)),
    };
    let excluded = entries(resources, &["excludeResourceRules"]).iter().any(|rule| rule_matches(rule, request));
    let mut namespace_labels = request.namespace_labels.clone();
    namespace_labels.insert("kubernetes.io/metadata.name".into(), request.namespace.clone());
    let selected = |key: &str, labels: &Labels| match at(resources, &[key]) {
        None => true,
        Some(selector) => Selector::from_value(selector).is_ok_and(|s| s.matches(labels)),
    };
    let object = request.object.as_ref().or(request.old_object.as_ref());
    let object_labels: Labels = object
        .and_then(|o| at(o, &["metadata", "labels"]))
        .and_then(Value::as_mapping)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string()))).collect())
        .unwrap_or_default();
    ruled && !excluded && selected("namespaceSelector", &namespace_labels) && selected("objectSelector", &object_labels)
}

/// One NamedRuleWithOperations against the request (`rules.Matcher`: operations, groups, versions,
/// resource with subresource, names).
fn rule_matches(rule: &Value, request: &Request) -> bool {
    let any = |list: Vec<String>, value: &str| list.iter().any(|item| item == "*" || item == value);
    let resource_matches = strings(rule, &["resources"]).iter().any(|item| {
        let (resource, sub) = item.split_once('/').unwrap_or((item, ""));
        let resource_ok = resource == "*" || resource == request.resource;
        let sub_ok = match (sub, request.subresource.as_str()) {
            ("*", _) => true,
            (wanted, actual) => wanted == actual,
        };
        resource_ok && sub_ok
    });
    let names = strings(rule, &["resourceNames"]);
    any(strings(rule, &["operations"]), &request.operation)
        && any(strings(rule, &["apiGroups"]), &request.group)
        && any(strings(rule, &["apiVersions"]), &request.version)
        && resource_matches
        && (names.is_empty() || names.contains(&request.name))
}
