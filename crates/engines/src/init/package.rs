//! `kix init package DIR`: a kix.toml read from the manifests already in DIR, so that the first
//! `kix build` passes without an edit.
//!
//! What it reads, and what it writes from it:
//!
//! - **Files**: every `*.yaml`/`*.yml` under DIR, hidden files and directories left out (a
//!   resource pattern's wildcard never matches them either). Kustomization files are skipped by
//!   name, as `build` skips them ([`kix_compiler::load::kustomization`]).
//! - **`resources`**, when manifests sit in subdirectories (kube-prometheus's `setup/`): without
//!   the list `build` reads only DIR's own files. One pattern per directory and extension;
//!   directories holding a Namespace or a CustomResourceDefinition first (upstream applies them
//!   first, as kube-prometheus's `setup/`), then DIR's own files, then the other directories,
//!   each group in path order.
//! - **`meta.namespace`**, when more than half of the package's namespaced objects name one
//!   namespace that is not one every cluster has ([`kix_kube::names::SYSTEM_NAMESPACES`]): the
//!   namespace the YAML was written for, whose objects and references move to the instance's.
//! - **`meta.keepNamespaces`**: every other namespace the objects name that is a system namespace
//!   or is named only by RBAC objects (Roles and RoleBindings a package ships into a namespace it
//!   does not own, as kube-prometheus's in `kube-system` and `default`). A namespace named by
//!   other objects is neither: it is listed in a comment, and `build` refuses it (K0409) until
//!   the author decides.
//! - **`availability = { max = "none" }`**, with the reason as a comment, for a workload whose own
//!   YAML says it cannot run more than one pod at a time. The signals read, each a fact of the
//!   manifest rather than a guess from names:
//!   - a Deployment with `spec.strategy.type: Recreate`: the controller stops every old pod before
//!     it starts a new one (pkg/controller/deployment/recreate.go), so no level above none survives
//!     a rollout (K0470 at build);
//!   - a Deployment whose pod template mounts a PersistentVolumeClaim of the package that is
//!     ReadWriteOnce or ReadWriteOncePod only: one node (RWO) or one pod (RWOP) can use the volume,
//!     so a second replica, or the new pod of a rolling update on another node, waits for it;
//!   - a workload whose containers turn leader election off (`--leader-elect=false`,
//!     `--leader-election=false`, `--enable-leader-election=false`): two pods would both act.
//!
//!   Not read: a `replicas: 1` alone (most manifests ship 1 as a default, not a design), and a
//!   StatefulSet's claims (each pod gets its own from `volumeClaimTemplates`).
//! - Every other Deployment and StatefulSet gets the replica mapping `{ none = N, pod = max(N, 2),
//!   zone = max(N, 3) }` from its current `spec.replicas` N.

use kix_compiler::load::documents::{Document, parse_documents};
use kix_diag::{Diagnostic, Diagnostics, Location, SourceFile};
use kix_kube::kind::WorkloadKind;
use kix_kube::names::is_system_namespace;
use kix_kube::workload::WorkloadView;
use kix_yaml::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// kix.toml for the manifests under `dir`, starting with `schema_line`.
pub(super) fn manifest(dir: &Path, schema_line: &str) -> Result<String, Diagnostics> {
    let mut diagnostics = Diagnostics::default();
    let (files, problems) = kix_compiler::fs::walk(dir, |path| is_manifest(dir, path));
    for problem in problems {
        diagnostics.push(problem);
    }
    let mut documents: Vec<(PathBuf, Document)> = Vec::new();
    for file in &files {
        let text = match kix_diag::source::read_text(file, kix_diag::source::MAX_PACKAGE_FILE_BYTES) {
            Ok(text) => text,
            Err(error) => {
                diagnostics.push(Diagnostic::new(error.code(), error.to_string()).at(Location::file(file)));
                continue;
            }
        };
        let relative = file.strip_prefix(dir).unwrap_or(file).to_path_buf();
        // Kustomization documents inside other files are skipped as build skips them; their K0112
        // warnings are build's to give.
        let mut ignored = Diagnostics::default();
        for document in parse_documents(SourceFile::new(file, text), &mut ignored) {
            documents.push((relative.clone(), document));
        }
        for problem in ignored.iter().filter(|d| d.severity() == kix_diag::Severity::Error) {
            diagnostics.push(problem.clone());
        }
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let name = super::text::dns_label(
        &dir.canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map_or_else(|| "package".to_string(), |n| n.to_string_lossy().into_owned()),
    );
    let mut text =
        format!("{schema_line}# Written by `kix init package`: check each workload's mapping, then `kix build`.\n");
    text.push_str(&resources(&documents, &files, dir));
    let _ = write!(text, "[meta]\nname = \"{name}\"\nversion = \"0.1.0\"\n");
    let all: Vec<&Document> = documents.iter().map(|(_, d)| d).collect();
    text.push_str(&namespaces(&all));
    text.push_str("# [meta.availability]\n# max = \"node\"                       # the highest level the whole package can meet\n");
    text.push_str(&workloads(&all));
    Ok(text)
}

/// A YAML file under `dir` that build would read: not hidden, not a kustomization.
fn is_manifest(dir: &Path, path: &Path) -> bool {
    let relative = path.strip_prefix(dir).unwrap_or(path);
    let hidden = relative.components().any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
    !hidden
        && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
        && !kix_compiler::load::kustomization::is_kustomization_file(path)
}

/// `resources = [...]` when any manifest sits below `dir`; nothing otherwise (build's default reads `dir`'s own
/// files).
fn resources(documents: &[(PathBuf, Document)], files: &[PathBuf], dir: &Path) -> String {
    // Directory (relative, `/`-joined; "" for dir itself) -> the extensions of its files.
    let mut dirs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(dir).unwrap_or(file);
        let parent: Vec<String> = relative
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let extension = relative.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
        dirs.entry(parent.join("/")).or_default().insert(extension);
    }
    if dirs.keys().all(String::is_empty) {
        return String::new();
    }
    let first: BTreeSet<String> = documents
        .iter()
        .filter(|(_, d)| {
            (d.group() == "" && d.kind() == "Namespace")
                || (d.group() == "apiextensions.k8s.io" && d.kind() == "CustomResourceDefinition")
        })
        .filter_map(|(file, _)| Some(file.parent()?.to_string_lossy().replace('\\', "/")))
        .filter(|parent| !parent.is_empty())
        .collect();
    let rank = |dir: &str| {
        if first.contains(dir) {
            0
        } else if dir.is_empty() {
            1
        } else {
            2
        }
    };
    let mut ordered: Vec<(&String, &BTreeSet<String>)> = dirs.iter().collect();
    ordered.sort_by_key(|(dir, _)| (rank(dir), dir.to_string()));
    let mut patterns = Vec::new();
    let mut refused = Vec::new();
    for (dir, extensions) in ordered {
        // Resource patterns take `*`, `?` and `**` only (kix_compiler::load::globs): a directory whose name
        // holds other glob syntax cannot be listed.
        if dir.chars().any(|c| matches!(c, '[' | ']' | '{' | '}' | '*' | '?' | '"')) {
            refused.push(dir.clone());
            continue;
        }
        for extension in extensions {
            patterns.push(if dir.is_empty() {
                format!("\"*.{extension}\"")
            } else {
                format!("\"{dir}/*.{extension}\"")
            });
        }
    }
    let mut text = String::from(
        "# Manifests sit in subdirectories, which build reads only when listed; Namespaces and CRDs first.\n",
    );
    let _ = writeln!(text, "resources = [{}]", patterns.join(", "));
    for dir in refused {
        let _ = writeln!(text, "# {dir}/ is left out: its name holds glob syntax, which resource patterns do not take");
    }
    text
}

/// What one namespace is named by.
#[derive(Default)]
struct Named {
    objects: usize,
    rbac: usize,
    kinds: BTreeSet<String>,
}

/// `namespace` and `keepNamespaces` from the namespaces the package's namespaced objects name.
fn namespaces(documents: &[&Document]) -> String {
    let custom = kix_compiler::resolve::cluster_scoped_custom_kinds(documents.iter().copied());
    let mut named: BTreeMap<String, Named> = BTreeMap::new();
    let mut namespaced = 0;
    for document in documents {
        if kix_kube::scope::is_cluster_scoped(document.group(), document.kind(), &custom) {
            continue;
        }
        namespaced += 1;
        let written = document.value.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str);
        let Some(namespace) = written.filter(|ns| !ns.is_empty()) else { continue };
        let entry = named.entry(namespace.to_string()).or_default();
        entry.objects += 1;
        if document.group() == "rbac.authorization.k8s.io" && matches!(document.kind(), "Role" | "RoleBinding") {
            entry.rbac += 1;
        }
        entry.kinds.insert(document.kind().to_string());
    }
    let most = named.values().map(|n| n.objects).max().unwrap_or(0);
    let leaders: Vec<&String> = named.iter().filter(|(_, n)| n.objects == most).map(|(ns, _)| ns).collect();
    let own = match leaders.as_slice() {
        [one] if most * 2 > namespaced && !is_system_namespace(one) => Some(one.to_string()),
        _ => None,
    };
    let mut text = String::new();
    match &own {
        Some(own) => {
            let _ = writeln!(
                text,
                "namespace = \"{own}\"   # {most} of the {namespaced} namespaced objects name it: they move to each instance's namespace"
            );
        }
        None => text.push_str(
            "# namespace = \"...\"                 # the namespace these manifests were written for, if any\n",
        ),
    }
    let (mut keep, mut foreign) = (Vec::new(), Vec::new());
    for (namespace, by) in &named {
        if Some(namespace) == own.as_ref() {
            continue;
        }
        if is_system_namespace(namespace) || by.rbac == by.objects {
            keep.push(namespace.clone());
        } else {
            foreign.push((namespace, by));
        }
    }
    if keep.is_empty() {
        text.push_str("# keepNamespaces = [\"kube-system\"]  # namespaces whose objects stay where they are\n");
    } else {
        let listed: Vec<String> = keep.iter().map(|ns| format!("\"{ns}\"")).collect();
        let _ = writeln!(
            text,
            "keepNamespaces = [{}]   # shared namespaces the package ships into (system namespaces, RBAC only): its objects there stay",
            listed.join(", ")
        );
    }
    for (namespace, by) in foreign {
        let kinds: Vec<&str> = by.kinds.iter().map(String::as_str).collect();
        let _ = writeln!(
            text,
            "# `{namespace}` is named by {} ({}): neither the package's namespace nor kept, so build refuses {} \
             (K0409) until you set meta.namespace or add it to keepNamespaces",
            kix_diag::words::plural(by.objects, "object"),
            kinds.join(", "),
            if by.objects == 1 { "it" } else { "them" }
        );
    }
    text
}

/// One `[workloads.X]` table per Deployment and StatefulSet (and Rollout with its own template).
fn workloads(documents: &[&Document]) -> String {
    let claims = single_node_claims(documents);
    let mut text = String::new();
    let mut found = false;
    for document in documents {
        let Some(kind) = WorkloadKind::of(&document.value) else { continue };
        found = true;
        let view = WorkloadView::read_as(&document.value, kind).ok();
        let replicas = view.as_ref().and_then(|w| w.manifest_replicas);
        let name = document.name();
        let _ = write!(
            text,
            "\n# {} {name}: {} today.\n",
            kind.as_str(),
            match replicas {
                Some(n) => format!("spec.replicas is {n}"),
                None => "spec.replicas is not set (1)".to_string(),
            }
        );
        if let Some(reason) = view.as_ref().and_then(|view| one_pod_reason(kind, view, &claims)) {
            let _ = write!(
                text,
                "# It runs one pod at a time by design: {reason}.\n[workloads.{}]\navailability = {{ max = \"none\" }}\n",
                super::text::toml_key(name)
            );
            continue;
        }
        let base = replicas.unwrap_or(1);
        let _ = writeln!(
            text,
            "[workloads.{}]\nreplicas = {{ none = {base}, pod = {}, zone = {} }}   # a level not named takes the nearest lower one",
            super::text::toml_key(name),
            base.max(2),
            base.max(3)
        );
        text.push_str(
            "# availability = { max = \"none\" }   # if it can run only one pod at a time (a leader without election)\n",
        );
    }
    if !found {
        text.push_str("\n# No Deployment or StatefulSet was found: kix passes every object through.\n");
    }
    text
}

/// PersistentVolumeClaims of the package that one node (ReadWriteOnce) or one pod (ReadWriteOncePod) can use,
/// by name, with their access mode.
fn single_node_claims(documents: &[&Document]) -> BTreeMap<String, String> {
    documents
        .iter()
        .filter(|d| d.group() == "" && d.kind() == "PersistentVolumeClaim")
        .filter_map(|d| {
            let modes: Vec<&str> =
                d.value.get("spec")?.get("accessModes")?.as_sequence()?.iter().filter_map(Value::as_str).collect();
            let single = !modes.is_empty() && modes.iter().all(|m| matches!(*m, "ReadWriteOnce" | "ReadWriteOncePod"));
            single.then(|| (d.name().to_string(), modes.join(", ")))
        })
        .collect()
}

/// Why a workload can run only one pod at a time, from its own manifest (see the module doc), if it says so.
fn one_pod_reason(kind: WorkloadKind, view: &WorkloadView, claims: &BTreeMap<String, String>) -> Option<String> {
    if kind == WorkloadKind::Deployment && view.strategy().is_ok_and(|s| s.recreate) {
        return Some(
            "`strategy: Recreate` stops every old pod before a new one starts, so no level above none survives a \
             rollout"
                .to_string(),
        );
    }
    let spec = view.template.get("spec");
    if kind == WorkloadKind::Deployment {
        let volumes = spec.and_then(|s| s.get("volumes")).and_then(Value::as_sequence).into_iter().flatten();
        for volume in volumes {
            let claim = volume.get("persistentVolumeClaim").and_then(|c| c.get("claimName")).and_then(Value::as_str);
            if let Some((claim, modes)) = claim.and_then(|c| claims.get_key_value(c)) {
                return Some(format!(
                    "it mounts PersistentVolumeClaim `{claim}` ({modes}), which one node holds, so a second pod or a \
                     rolling update's new pod elsewhere waits for it"
                ));
            }
        }
    }
    let containers = spec.and_then(|s| s.get("containers")).and_then(Value::as_sequence).into_iter().flatten();
    for container in containers {
        let words = ["command", "args"]
            .into_iter()
            .filter_map(|key| container.get(key).and_then(Value::as_sequence))
            .flatten()
            .filter_map(Value::as_str);
        for word in words {
            if LEADER_ELECTION_OFF.contains(&word) {
                return Some(format!("its container runs with `{word}`, so two pods would both act"));
            }
        }
    }
    None
}

/// Arguments that turn a controller's leader election off (kube-controller-manager's and client-go's
/// `--leader-elect`, controller-runtime scaffolds' `--leader-election` and `--enable-leader-election`).
const LEADER_ELECTION_OFF: &[&str] =
    &["--leader-elect=false", "--leader-election=false", "--enable-leader-election=false"];

#[cfg(test)]
mod tests {
    use super::*;

    fn written(files: &[(&str, &str)]) -> String {
        let tree =
            files.iter().fold(kix_compiler::testing::TestTree::new(), |tree, (path, text)| tree.file(path, text));
        manifest(tree.root(), "").unwrap()
    }

    const ROLE: &str =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r, namespace: kube-system}\n";

    fn deployment(name: &str, namespace: &str, spec: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  \
             selector: {{matchLabels: {{app: {name}}}}}\n{spec}  template:\n    metadata: {{labels: {{app: {name}}}}}\n    \
             spec:\n      containers: [{{name: c, image: i, args: [\"--leader-elect=false\"]}}]\n"
        )
    }

    // Each tree with lines its kix.toml must hold and lines it must not.
    #[test]
    fn init_reads_namespaces_subdirectories_and_single_pod_workloads() {
        let service = |ns: &str| format!("apiVersion: v1\nkind: Service\nmetadata: {{name: s, namespace: {ns}}}\n");
        let recreate = deployment("db", "app", "  strategy: {type: Recreate}\n");
        let plain = deployment("web", "app", "  replicas: 2\n").replace(", args: [\"--leader-elect=false\"]", "");
        let elected = deployment("ctl", "app", "");
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\n";
        let pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: app}\nspec: {accessModes: [ReadWriteOnce]}\n";
        let mounts = deployment("files", "app", "").replace(
            ", args: [\"--leader-elect=false\"]}]",
            "}]\n      volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]",
        );
        // The files of a package, lines its kix.toml holds, lines it does not.
        type Case<'a> = (Vec<(&'a str, String)>, &'a [&'a str], &'a [&'a str]);
        let cases: Vec<Case> = vec![
            (
                vec![
                    ("a.yaml", format!("{}---\n{}---\n{ROLE}", service("app"), plain)),
                    ("kustomization.yaml", "resources: [a.yaml]\n".into()),
                ],
                &[
                    "namespace = \"app\"",
                    "keepNamespaces = [\"kube-system\"]",
                    "replicas = { none = 2, pod = 2, zone = 3 }",
                ],
                &["resources =", "max = \"none\" }\n"],
            ),
            (
                vec![("setup/crd.yaml", crd.into()), ("z/x.yml", service("app")), ("a.yaml", service("app"))],
                &["resources = [\"setup/*.yaml\", \"*.yaml\", \"z/*.yml\"]"],
                &[],
            ),
            (
                vec![("a.yaml", format!("{recreate}---\n{elected}---\n{pvc}---\n{mounts}"))],
                &[
                    "Recreate` stops every old pod",
                    "runs with `--leader-elect=false`",
                    "mounts PersistentVolumeClaim `data` (ReadWriteOnce)",
                ],
                &["replicas = {"],
            ),
            // Everything in kube-system: kept, never the package's namespace.
            (
                vec![("a.yaml", format!("{}---\n{ROLE}", service("kube-system")))],
                &["# namespace = \"...\"", "keepNamespaces = [\"kube-system\"]"],
                &[],
            ),
            // A tie, and a namespace named by a Service: neither chosen nor kept.
            (
                vec![("a.yaml", format!("{}---\n{}", service("one"), service("two")))],
                &["# namespace = \"...\"", "`one` is named by 1 object (Service)"],
                &["\nkeepNamespaces = ["],
            ),
        ];
        for (files, present, absent) in cases {
            let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
            let text = written(&files);
            for line in present {
                assert!(text.contains(line), "{line} missing from\n{text}");
            }
            for line in absent {
                assert!(!text.contains(line), "{line} present in\n{text}");
            }
        }
    }
}
