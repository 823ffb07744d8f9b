//! The module map of ARCHITECTURE.md, checked: which top-level module of src/ may import which,
//! read from the `use crate::` lines and `crate::` paths of non-test code.
//!
//! The rules: no import cycle between top-level modules; the scheduler model (`sim`) and the
//! Kubernetes vocabulary (`kube`) import nothing of the compiler stages or the command line; only
//! `commands` (and `main`) know the command line.

use crate::support::repo_path;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its non-test code names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let src = repo_path("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        if module == "testing" {
            continue;
        }
        let mut names = BTreeSet::new();
        for file in rust_files(&path) {
            if file.file_name().is_some_and(|n| n == "tests.rs" || n.to_string_lossy().ends_with("_tests.rs")) {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            // Unit tests sit at the end of a file, after `#[cfg(test)]`.
            let code = text.split("#[cfg(test)]").next().unwrap();
            collect_crate_paths(code, &mut names);
        }
        names.remove(&module);
        graph.entry(module).or_default().extend(names);
    }
    graph
}

fn rust_files(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_dir() {
        std::fs::read_dir(path).unwrap().flat_map(|e| rust_files(&e.unwrap().path())).collect()
    } else if path.extension().is_some_and(|e| e == "rs") {
        vec![path.to_path_buf()]
    } else {
        Vec::new()
    }
}

/// The first segment after every `crate::`, including each name of `use crate::{a, b::c}`.
fn collect_crate_paths(code: &str, names: &mut BTreeSet<String>) {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inside = &group[..group.find('}').unwrap_or(group.len())];
            for item in inside.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() && name != "self" {
                    names.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
}

#[test]
fn the_scanner_reads_grouped_and_nested_imports() {
    let mut names = BTreeSet::new();
    collect_crate_paths("use crate::{load, resolve::Model};\nlet x = crate::kube::names::f();", &mut names);
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["kube", "load", "resolve"]);
}

#[test]
fn no_import_cycle_between_modules() {
    let graph = imports();
    // Depth-first search; a back edge is a cycle, reported with its path.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(cycle) = visit(module, &graph, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_scheduler_model_and_the_vocabulary_stand_alone() {
    let graph = imports();
    let allowed: &[(&str, &[&str])] = &[
        ("sim", &["kube", "level", "diag", "source", "yaml"]),
        ("kube", &["yaml"]),
        ("lint", &["diag", "kube", "load", "resolve", "source", "yaml"]),
        ("yaml", &[]),
        ("diag", &[]),
        ("level", &[]),
    ];
    for (module, may) in allowed {
        let names = graph.get(*module).unwrap_or_else(|| panic!("no module {module}"));
        let extra: Vec<&String> = names.iter().filter(|n| !may.contains(&n.as_str())).collect();
        assert!(extra.is_empty(), "{module} imports {extra:?}; it may import only {may:?}");
    }
    for (module, names) in &graph {
        if module != "commands" && module != "main" && module != "lib" {
            assert!(!names.contains("cli"), "{module} imports the command line; only commands may");
        }
    }
}
