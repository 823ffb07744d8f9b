//! Where one Kubernetes object names another by `metadata.name`: the fields a rename must follow so
//! that what referred to an object still does.
//!
//! kix renames objects when instances of one package share a namespace as one availability group
//! (issue 17: each member's namespaced objects take the instance's name as a prefix). The table is
//! kustomize's name-reference configuration for the kinds kix reads
//! (`sigs.k8s.io/kustomize/api/konfig/builtinpluginconsts/namereference.go`), carried over as data:
//! pod specs naming ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims; a StatefulSet's
//! governing Service; autoscalers and Rollouts naming their target; RBAC bindings naming their Role
//! and ServiceAccounts; Ingress backends and TLS Secrets; webhook, APIService and CRD conversion
//! services. A reference whose kind is written beside it (`roleRef.kind`, `subjects[].kind`,
//! `scaleTargetRef.kind`) is followed only for that kind.

use kix_yaml::Value;

/// One field that names an object: the path to it (`*` steps into every element of a sequence) and
/// the kind it names, or the sibling field that says the kind (with the kind assumed when absent).
struct Reference {
    path: &'static [&'static str],
    target: Target,
}

enum Target {
    Kind(&'static str),
    /// The kind is the value of this field of the mapping holding the name; `default` when absent.
    Beside {
        field: &'static str,
        default: Option<&'static str>,
    },
}

use Target::{Beside, Kind};

/// References inside a pod spec (kustomize's `spec/volumes/...`, `spec/containers/env/...` rows).
const POD_SPEC: &[Reference] = &[
    Reference { path: &["volumes", "*", "configMap", "name"], target: Kind("ConfigMap") },
    Reference { path: &["volumes", "*", "secret", "secretName"], target: Kind("Secret") },
    Reference { path: &["volumes", "*", "persistentVolumeClaim", "claimName"], target: Kind("PersistentVolumeClaim") },
    Reference { path: &["volumes", "*", "projected", "sources", "*", "configMap", "name"], target: Kind("ConfigMap") },
    Reference { path: &["volumes", "*", "projected", "sources", "*", "secret", "name"], target: Kind("Secret") },
    Reference {
        path: &["containers", "*", "env", "*", "valueFrom", "configMapKeyRef", "name"],
        target: Kind("ConfigMap"),
    },
    Reference { path: &["containers", "*", "env", "*", "valueFrom", "secretKeyRef", "name"], target: Kind("Secret") },
    Reference { path: &["containers", "*", "envFrom", "*", "configMapRef", "name"], target: Kind("ConfigMap") },
    Reference { path: &["containers", "*", "envFrom", "*", "secretRef", "name"], target: Kind("Secret") },
    Reference {
        path: &["initContainers", "*", "env", "*", "valueFrom", "configMapKeyRef", "name"],
        target: Kind("ConfigMap"),
    },
    Reference {
        path: &["initContainers", "*", "env", "*", "valueFrom", "secretKeyRef", "name"],
        target: Kind("Secret"),
    },
    Reference { path: &["initContainers", "*", "envFrom", "*", "configMapRef", "name"], target: Kind("ConfigMap") },
    Reference { path: &["initContainers", "*", "envFrom", "*", "secretRef", "name"], target: Kind("Secret") },
    Reference { path: &["serviceAccountName"], target: Kind("ServiceAccount") },
    Reference { path: &["serviceAccount"], target: Kind("ServiceAccount") },
    Reference { path: &["imagePullSecrets", "*", "name"], target: Kind("Secret") },
];

/// Where each kind that runs pods keeps its pod spec.
fn pod_spec_path(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    match (group, kind) {
        ("", "Pod") => Some(&["spec"]),
        ("", "PodTemplate") => Some(&["template", "spec"]),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch", "Job")
        | ("argoproj.io", "Rollout") => Some(&["spec", "template", "spec"]),
        ("batch", "CronJob") => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// References outside pod specs, by the referring object's group and kind.
fn object_references(group: &str, kind: &str) -> &'static [Reference] {
    match (group, kind) {
        ("apps", "StatefulSet") => &[Reference { path: &["spec", "serviceName"], target: Kind("Service") }],
        ("argoproj.io", "Rollout") => {
            &[Reference { path: &["spec", "workloadRef", "name"], target: Beside { field: "kind", default: None } }]
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            &[Reference { path: &["spec", "scaleTargetRef", "name"], target: Beside { field: "kind", default: None } }]
        }
        // KEDA: `scaleTargetRef.kind` defaults to Deployment.
        ("keda.sh", "ScaledObject") => &[Reference {
            path: &["spec", "scaleTargetRef", "name"],
            target: Beside { field: "kind", default: Some("Deployment") },
        }],
        ("rbac.authorization.k8s.io", "RoleBinding") => &[
            Reference { path: &["roleRef", "name"], target: Beside { field: "kind", default: None } },
            Reference { path: &["subjects", "*", "name"], target: Beside { field: "kind", default: None } },
        ],
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            &[Reference { path: &["subjects", "*", "name"], target: Beside { field: "kind", default: None } }]
        }
        ("networking.k8s.io", "Ingress") => &[
            Reference {
                path: &["spec", "rules", "*", "http", "paths", "*", "backend", "service", "name"],
                target: Kind("Service"),
            },
            Reference { path: &["spec", "defaultBackend", "service", "name"], target: Kind("Service") },
            Reference { path: &["spec", "tls", "*", "secretName"], target: Kind("Secret") },
        ],
        ("", "ServiceAccount") => &[
            Reference { path: &["secrets", "*", "name"], target: Kind("Secret") },
            Reference { path: &["imagePullSecrets", "*", "name"], target: Kind("Secret") },
        ],
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
            &[Reference { path: &["webhooks", "*", "clientConfig", "service", "name"], target: Kind("Service") }]
        }
        ("apiregistration.k8s.io", "APIService") => {
            &[Reference { path: &["spec", "service", "name"], target: Kind("Service") }]
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => &[Reference {
            path: &["spec", "conversion", "webhook", "clientConfig", "service", "name"],
            target: Kind("Service"),
        }],
        _ => &[],
    }
}

/// Rewrites every name `object` (of `group` and `kind`) gives to another object: `rename(kind, name)`
/// returns the new name of an object of that kind, or `None` to leave the reference as written.
/// Returns how many references changed.
pub fn rename_references(
    object: &mut Value,
    group: &str,
    kind: &str,
    rename: &dyn Fn(&str, &str) -> Option<String>,
) -> usize {
    let mut changed = 0;
    if let Some(spec_path) = pod_spec_path(group, kind) {
        if let Some(spec) = descend(object, spec_path) {
            for reference in POD_SPEC {
                changed += follow(spec, reference.path, &reference.target, rename);
            }
        }
    }
    for reference in object_references(group, kind) {
        changed += follow(object, reference.path, &reference.target, rename);
    }
    changed
}

/// The value at a path of mapping keys (no `*`).
fn descend<'v>(value: &'v mut Value, path: &[&str]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, key| v.get_mut(key))
}

fn follow(value: &mut Value, path: &[&str], target: &Target, rename: &dyn Fn(&str, &str) -> Option<String>) -> usize {
    match path {
        [] => 0,
        ["*", rest @ ..] => match value {
            Value::Sequence(items) => items.iter_mut().map(|item| follow(item, rest, target, rename)).sum(),
            _ => 0,
        },
        [last] => {
            let kind = match target {
                Kind(kind) => Some((*kind).to_string()),
                Beside { field, default } => {
                    value.get(field).and_then(Value::as_str).map(str::to_string).or(default.map(str::to_string))
                }
            };
            let Some(kind) = kind else { return 0 };
            let Some(name) = value.get_mut(last) else { return 0 };
            let Some(new) = name.as_str().and_then(|n| rename(&kind, n)) else { return 0 };
            *name = new.into();
            1
        }
        [key, rest @ ..] => value.get_mut(key).map_or(0, |inner| follow(inner, rest, target, rename)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(group: &str, kind: &str, text: &str) -> Value {
        let mut object: Value = kix_yaml::from_str(text).expect("test YAML");
        let known = [
            "ConfigMap/cfg",
            "Secret/key",
            "ServiceAccount/sa",
            "Service/svc",
            "Role/r",
            "Deployment/web",
            "PersistentVolumeClaim/data",
        ];
        rename_references(&mut object, group, kind, &|kind, name| {
            known.contains(&format!("{kind}/{name}").as_str()).then(|| format!("a-{name}"))
        });
        object
    }

    fn at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
        path.iter()
            .try_fold(value, |v, key| match key.parse::<usize>() {
                Ok(index) => v.as_sequence().and_then(|s| s.get(index)),
                Err(_) => v.get(key),
            })
            .and_then(Value::as_str)
    }

    /// (group, kind, object, path to a reference, its value after renaming the known objects to `a-*`).
    #[test]
    fn references_follow_renamed_objects() {
        let pod = "{volumes: [{name: v, configMap: {name: cfg}}, {name: w, secret: {secretName: key}}, {name: x, persistentVolumeClaim: {claimName: data}}, {name: p, projected: {sources: [{configMap: {name: cfg}}, {secret: {name: other}}]}}], containers: [{name: c, env: [{name: E, valueFrom: {secretKeyRef: {name: key, key: k}}}], envFrom: [{configMapRef: {name: cfg}}]}], initContainers: [{name: i, envFrom: [{secretRef: {name: key}}]}], serviceAccountName: sa, imagePullSecrets: [{name: key}]}";
        let deployment = format!("spec: {{template: {{spec: {pod}}}}}");
        let cases: Vec<(&str, &str, String, Vec<&str>, &str)> = vec![
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "volumes", "0", "configMap", "name"], "a-cfg"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "volumes", "1", "secret", "secretName"], "a-key"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "volumes", "2", "persistentVolumeClaim", "claimName"], "a-data"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "volumes", "3", "projected", "sources", "0", "configMap", "name"], "a-cfg"),
            // Not an object of the package: left as written.
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "volumes", "3", "projected", "sources", "1", "secret", "name"], "other"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "containers", "0", "env", "0", "valueFrom", "secretKeyRef", "name"], "a-key"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "containers", "0", "envFrom", "0", "configMapRef", "name"], "a-cfg"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "initContainers", "0", "envFrom", "0", "secretRef", "name"], "a-key"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "serviceAccountName"], "a-sa"),
            ("apps", "Deployment", deployment.clone(), vec!["spec", "template", "spec", "imagePullSecrets", "0", "name"], "a-key"),
            ("", "Pod", format!("spec: {pod}"), vec!["spec", "serviceAccountName"], "a-sa"),
            ("batch", "CronJob", format!("spec: {{jobTemplate: {{spec: {{template: {{spec: {pod}}}}}}}}}"), vec!["spec", "jobTemplate", "spec", "template", "spec", "serviceAccountName"], "a-sa"),
            ("apps", "StatefulSet", "spec: {serviceName: svc}".into(), vec!["spec", "serviceName"], "a-svc"),
            ("autoscaling", "HorizontalPodAutoscaler", "spec: {scaleTargetRef: {kind: Deployment, name: web}}".into(), vec!["spec", "scaleTargetRef", "name"], "a-web"),
            // The kind beside the name decides: a StatefulSet `web` is not the Deployment `web`.
            ("autoscaling", "HorizontalPodAutoscaler", "spec: {scaleTargetRef: {kind: StatefulSet, name: web}}".into(), vec!["spec", "scaleTargetRef", "name"], "web"),
            ("keda.sh", "ScaledObject", "spec: {scaleTargetRef: {name: web}}".into(), vec!["spec", "scaleTargetRef", "name"], "a-web"),
            ("argoproj.io", "Rollout", "spec: {workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}}".into(), vec!["spec", "workloadRef", "name"], "a-web"),
            ("rbac.authorization.k8s.io", "RoleBinding", "roleRef: {kind: Role, name: r}\nsubjects: [{kind: ServiceAccount, name: sa}, {kind: User, name: sa}]".into(), vec!["roleRef", "name"], "a-r"),
            ("rbac.authorization.k8s.io", "RoleBinding", "roleRef: {kind: ClusterRole, name: r}".into(), vec!["roleRef", "name"], "r"),
            ("rbac.authorization.k8s.io", "RoleBinding", "subjects: [{kind: ServiceAccount, name: sa}, {kind: User, name: sa}]".into(), vec!["subjects", "0", "name"], "a-sa"),
            ("rbac.authorization.k8s.io", "RoleBinding", "subjects: [{kind: ServiceAccount, name: sa}, {kind: User, name: sa}]".into(), vec!["subjects", "1", "name"], "sa"),
            ("rbac.authorization.k8s.io", "ClusterRoleBinding", "subjects: [{kind: ServiceAccount, name: sa, namespace: x}]".into(), vec!["subjects", "0", "name"], "a-sa"),
            ("networking.k8s.io", "Ingress", "spec: {rules: [{http: {paths: [{backend: {service: {name: svc}}}]}}], defaultBackend: {service: {name: svc}}, tls: [{secretName: key}]}".into(), vec!["spec", "rules", "0", "http", "paths", "0", "backend", "service", "name"], "a-svc"),
            ("networking.k8s.io", "Ingress", "spec: {defaultBackend: {service: {name: svc}}, tls: [{secretName: key}]}".into(), vec!["spec", "tls", "0", "secretName"], "a-key"),
            ("", "ServiceAccount", "imagePullSecrets: [{name: key}]".into(), vec!["imagePullSecrets", "0", "name"], "a-key"),
            ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "webhooks: [{clientConfig: {service: {name: svc}}}]".into(), vec!["webhooks", "0", "clientConfig", "service", "name"], "a-svc"),
            ("apiregistration.k8s.io", "APIService", "spec: {service: {name: svc}}".into(), vec!["spec", "service", "name"], "a-svc"),
            // Kinds kix does not know are left alone.
            ("example.com", "Thing", "spec: {serviceName: svc}".into(), vec!["spec", "serviceName"], "svc"),
        ];
        for (group, kind, text, path, expected) in cases {
            let object = renamed(group, kind, &text);
            assert_eq!(at(&object, &path), Some(expected), "{kind} {}", path.join("."));
        }
    }
}
