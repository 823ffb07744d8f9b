//! Issue 43, part 2: every custom resource kix emits is valid against the CustomResourceDefinition
//! it ships beside it (the `openAPIV3Schema` of the served version: required fields, types, enums,
//! unknown fields, `x-kubernetes-preserve-unknown-fields`), as kix holds custom resources on input.
//! The trees are the goldens of the shipped examples, of every fixture and of the real-world corpus,
//! which their own tests keep equal to what `kix build` writes.

use crate::support::repo_path;
use kix_kube::strict::{self, CustomKinds};
use std::path::{Path, PathBuf};

/// Every cluster directory (`out/<cluster>/`) of the golden output trees.
fn cluster_dirs() -> Vec<PathBuf> {
    let mut outs = vec![repo_path("tests/realworld/expected/out")];
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(repo_path("tests/fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path().join("expected/out"))
        .filter(|p| p.is_dir())
        .collect();
    fixtures.sort();
    outs.extend(fixtures);
    let mut dirs = Vec::new();
    for out in outs {
        let mut clusters: Vec<PathBuf> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
        clusters.sort();
        dirs.extend(clusters);
    }
    dirs
}

/// The YAML documents of every file of one cluster's output, with the file each came from.
fn documents(dir: &Path) -> Vec<(String, kix_yaml::Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut out = Vec::new();
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "yaml")) {
        let text = std::fs::read_to_string(file).unwrap();
        for value in kix_yaml::from_str_all(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display())) {
            out.push((file.display().to_string(), value));
        }
    }
    out
}

#[test]
fn every_emitted_custom_resource_is_valid_against_its_shipped_crd() {
    let mut checked: Vec<String> = Vec::new();
    let mut problems = Vec::new();
    let dirs = cluster_dirs();
    assert!(
        dirs.iter().any(|d| d.ends_with("fixtures/examples/expected/out/prod")),
        "the shipped examples' tree is read"
    );
    for dir in dirs {
        let documents = documents(&dir);
        let custom = CustomKinds::from_objects(documents.iter().map(|(_, v)| v));
        for (file, object) in &documents {
            let text = |key: &str| object.get(key).and_then(kix_yaml::Value::as_str).unwrap_or_default();
            let group = text("apiVersion").rsplit_once('/').map_or("", |(group, _)| group);
            if !custom.defines(group, text("kind")) {
                continue;
            }
            let name = object.get("metadata").and_then(|m| m.get("name")).and_then(kix_yaml::Value::as_str);
            checked.push(format!("{file}: {} {}", text("kind"), name.unwrap_or_default()));
            for error in strict::check_object(object, &custom) {
                problems.push(format!("{file}: {} {}: {error}", text("kind"), name.unwrap_or_default()));
            }
        }
    }
    assert!(problems.is_empty(), "custom resources refused by their CRDs:\n{}", problems.join("\n"));
    // The operators' resources kix patches through its built-in profiles and a [kinds] profile whose
    // spread field needed a new pod template are among those checked.
    for kind in ["Cluster", "KafkaNodePool", "Alertmanager", "Cache"] {
        assert!(checked.iter().any(|c| c.contains(&format!(": {kind} "))), "no {kind} checked: {checked:#?}");
    }
}
