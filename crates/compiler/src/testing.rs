//! Test support: build a throw-away tree of cluster files and packages and
//! compile it in-process, so rule tests read like the rules they check.

use crate::compile::{Compiled, Selection, compile};
use crate::derive::{InstancePlan, WorkloadPlan};
use kix_diag::Code;
use std::path::Path;

/// A tree under a temporary directory.
pub struct TestTree {
    pub dir: tempfile::TempDir,
}

impl Default for TestTree {
    fn default() -> Self {
        TestTree { dir: tempfile::tempdir().expect("temporary directory") }
    }
}

impl TestTree {
    pub fn new() -> TestTree {
        TestTree::default()
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `clusters/<name>.toml`.
    pub fn cluster(self, name: &str, toml: &str) -> TestTree {
        self.file(&format!("clusters/{name}.toml"), toml)
    }

    /// Writes `packages/<dir>/kix.toml` and the given YAML files.
    pub fn package(self, dir: &str, toml: &str, files: &[(&str, &str)]) -> TestTree {
        let mut tree = self.file(&format!("packages/{dir}/kix.toml"), toml);
        for (name, text) in files {
            tree = tree.file(&format!("packages/{dir}/{name}"), text);
        }
        tree
    }

    pub fn file(self, path: &str, text: &str) -> TestTree {
        let path = self.root().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    pub fn compile(&self) -> Compiled {
        compile(&Selection { root: self.root().to_path_buf(), ..Selection::default() })
    }
}

impl Compiled {
    /// The codes reported, in report order.
    pub fn codes(&self) -> Vec<Code> {
        self.diagnostics.iter().map(|d| d.code).collect()
    }

    pub fn messages(&self) -> Vec<String> {
        self.diagnostics.iter().map(|d| d.message.to_string()).collect()
    }

    pub fn instance(&self, cluster: &str, instance: &str) -> &InstancePlan {
        self.clusters
            .iter()
            .find(|c| c.name == cluster)
            .and_then(|c| c.instances.iter().find(|i| i.name == instance))
            .unwrap_or_else(|| panic!("no instance {cluster}/{instance}; diagnostics: {:?}", self.messages()))
    }

    pub fn workload(&self, cluster: &str, instance: &str, workload: &str) -> &WorkloadPlan {
        self.instance(cluster, instance).workloads.iter().find(|w| w.name == workload).expect("workload")
    }
}

/// A Deployment (or StatefulSet, by `kind`) whose selector and template use `app: <name>`.
pub fn workload_yaml(kind: &str, name: &str, replicas: Option<u32>, pod_spec_extra: &str) -> String {
    let replicas = replicas.map(|r| format!("  replicas: {r}\n")).unwrap_or_default();
    format!(
        "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{replicas}  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n{pod_spec_extra}      containers:\n        - name: main\n          image: example/{name}:1\n"
    )
}

/// A cluster file: level, capabilities block and one instance of `package`. It acknowledges K0428 (nothing
/// creates the instance's namespace): the rules tested with it are others, and its objects are the
/// package's alone (no Namespace first).
pub fn cluster_toml(level: &str, capabilities: &str, package: &str) -> String {
    format!(
        "availability = \"{level}\"\n{ALLOW_NAMESPACE}[capabilities]\n{capabilities}\n[[instances]]\nname = \"app\"\npackage = \"{package}\"\n"
    )
}

/// A cluster file's top-level `allow` of K0428, for trees that test other rules and create no namespace.
pub const ALLOW_NAMESPACE: &str = "allow = [\"K0428\"]\n";
