//! Rule tests for derive (R5-R12), end to end through an in-process compile, by theme: [`rules`]
//! (replicas, ceilings, spread, budgets, explicit placement, selector hygiene), [`metadata`]
//! (namespaces, labels, annotations, objects several instances share) and [`shapes`] (instances
//! stamped from a shape equal instances derived alone). The helpers below are theirs.

mod groups;
mod metadata;
mod operators;
mod profiles;
mod rules;
mod shapes;

use super::*;
use crate::testing::{ALLOW_NAMESPACE, TestTree, cluster_toml, workload_yaml};
use kix_kube::kix_names::{INSTANCE_LABEL, KIX_INSTANCE_LABEL, MANAGED_BY_LABEL, RESOLVED_ANNOTATION};
use kix_kube::level::Level;
use patch::comparable;

const THREE_ZONES: &str = "multiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]";
const ONE_ZONE: &str = "multiNode = true\navailabilityZones = [\"a\"]";
const MULTI_NODE: &str = "multiNode = true";
const SINGLE_NODE: &str = "multiNode = false";

fn web(toml_workloads: &str, yaml: &str) -> (String, String) {
    (format!("[meta]\nname = \"web\"\nversion = \"1.0.0\"\n{toml_workloads}"), yaml.to_string())
}

fn compile_one(level: &str, capabilities: &str, package: (String, String)) -> crate::compile::Compiled {
    TestTree::new()
        .cluster("c", &cluster_toml(level, capabilities, "web"))
        .package("web", &package.0, &[("w.yaml", &package.1)])
        .compile()
}

fn constraints(compiled: &crate::compile::Compiled) -> Vec<(String, String)> {
    let object = &compiled.instance("c", "app").objects()[0];
    object["spec"]["template"]["spec"]["topologySpreadConstraints"]
        .as_sequence()
        .map(|list| {
            list.iter()
                .map(|c| {
                    (
                        c["topologyKey"].as_str().unwrap().to_string(),
                        c["whenUnsatisfiable"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

const RBAC: &str = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ";

fn package_in(namespace: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata: {{}}\n---\n\
         apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  namespace: {namespace}\n---\n\
         {RBAC}RoleBinding\nmetadata:\n  name: auth-reader\n  namespace: kube-system\n\
         roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}}\n\
         subjects: [{{kind: ServiceAccount, name: sa, namespace: {namespace}}}]\n---\n\
         {RBAC}ClusterRoleBinding\nmetadata:\n  name: sa-binding\n\
         roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}}\n\
         subjects: [{{kind: ServiceAccount, name: sa, namespace: {namespace}}}]\n"
    )
}

fn cluster_of(instances: &[(&str, &str, bool)]) -> String {
    let mut text = format!("availability = \"none\"\n{ALLOW_NAMESPACE}[capabilities]\nmultiNode = true\n");
    for (name, namespace, create) in instances {
        text.push_str(&format!(
            "[[instances]]\nname = \"{name}\"\npackage = \"web\"\nnamespace = \"{namespace}\"\ncreateNamespace = {create}\n"
        ));
    }
    text
}

fn compile_cluster(instances: &[(&str, &str, bool)], meta: &str, yaml: &str) -> crate::compile::Compiled {
    TestTree::new()
        .cluster("c", &cluster_of(instances))
        .package("web", &web(meta, yaml).0, &[("w.yaml", yaml)])
        .compile()
}
