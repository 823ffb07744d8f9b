//! Packages: `packages/<dir>/kix.toml` plus the Kubernetes YAML files beside it.
//!
//! The manifest is parsed into raw values with spans; every resource file
//! (see [`super::globs`]: `resources = [...]`, else every `*.yaml`/`*.yml`
//! file of the directory) is split into documents (see [`super::documents`]) and kept as
//! `kix_yaml::Value`s so that `emit` can patch the user's own document and
//! keep its fields and their order. Kustomization files are not resources:
//! they are checked for transformations kix does not apply
//! ([`super::kustomization`]) and skipped.

use super::documents::{self, Document};
use super::toml_file::{self, Shape};
use crate::fs::{Reader, package_escape};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use kix_kube::level::Level;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// One package directory.
#[derive(Debug)]
pub struct PackageDir {
    /// The directory, relative to the root.
    pub dir: PathBuf,
    pub manifest: SourceFile,
    pub raw: RawPackage,
    /// Every document of every resource file, files in resource order (see [`super::globs`]),
    /// documents in file order.
    pub documents: Vec<Document>,
    /// False when one of its files could not be read or parsed (already reported):
    /// later stages skip the package's own checks so one mistake is reported once.
    pub complete: bool,
    /// The `namespace` its kustomization file sets (and kix skips, K0112), if any.
    pub kustomization_namespace: Option<String>,
    /// A hash of every byte kix read of the package (kix.toml and each resource file, with their paths, in
    /// the order read): what a cluster's recorded compile vouches for of it (`crate::reuse`, issue 42),
    /// taken from the bytes, so a file changed without its mtime moving still changes it.
    pub content: u128,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// A package's kix.toml: its name and version, and how its workloads turn a level into replicas.
#[schemars(title = "kix package manifest (kix.toml)")]
pub struct RawPackage {
    /// The package's identity, ceiling and namespaces.
    pub meta: RawMeta,
    /// Per Deployment or StatefulSet (by metadata.name): its replica mapping, budget policy and ceiling.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawWorkload>")]
    pub workloads: BTreeMap<Spanned<String>, RawWorkload>,
    /// `resources = ["deploy.yaml", "crds/*.yaml"]`: the package's files (read by [`super::globs`]);
    /// absent means every YAML file of the directory.
    // The schema keeps the description it has always shown users (its file is a golden, issue 37).
    #[schemars(
        with = "Option<Vec<String>>",
        description = "`resources = [\"deploy.yaml\", \"crds/*.yaml\"]`: the package's files (see [`super::resources`]);\nabsent means every YAML file of the directory."
    )]
    pub resources: Option<Vec<Spanned<String>>>,
    /// Availability groups (by name, which the group's PodDisruptionBudget takes): workloads judged,
    /// spread and budgeted as one service.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawGroup>")]
    pub groups: BTreeMap<Spanned<String>, RawGroup>,
    /// Custom resources that run pods, by `group/Kind`: where their operator reads the pod count and
    /// spread constraints, how it labels the pods, and who makes their budget. Overrides kix's
    /// built-in profile of the kind.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawKind>")]
    pub kinds: BTreeMap<Spanned<String>, RawKind>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// `[kinds."group/Kind"]`: how an operator runs the pods of a kind of custom resource.
pub struct RawKind {
    /// Dotted path of the pod count (`spec.members`); absent means `replicasDefault` is the count.
    #[schemars(with = "Option<String>")]
    pub replicas: Option<Spanned<String>>,
    /// The pod count when the field is absent (default 1).
    #[serde(rename = "replicasDefault")]
    #[schemars(with = "Option<u32>")]
    pub replicas_default: Option<Spanned<u32>>,
    /// The labels the operator gives every pod; `{name}` in a value is the resource's name, and a value
    /// `{label:KEY}` is the resource's own label KEY.
    #[serde(rename = "podLabels")]
    #[schemars(with = "BTreeMap<String, String>")]
    pub pod_labels: Spanned<BTreeMap<String, Spanned<String>>>,
    /// Dotted path of a pod template (`metadata`, `spec`) whose spec verify simulates.
    #[serde(rename = "podTemplate")]
    #[schemars(with = "Option<String>")]
    pub pod_template: Option<Spanned<String>>,
    /// Dotted path where the operator takes topology spread constraints; absent means kix cannot
    /// place the pods (they still get replicas and a budget).
    #[serde(rename = "topologySpreadConstraints")]
    #[schemars(with = "Option<String>")]
    pub spread: Option<Spanned<String>>,
    /// `derive` (default: kix emits a PodDisruptionBudget over the pod labels) or `operator` (the
    /// operator makes its own).
    #[schemars(with = "Option<KindBudget>")]
    pub budget: Option<Spanned<KindBudget>>,
    /// How verify treats the pods: `Deployment` (default) or `StatefulSet` semantics.
    #[schemars(with = "Option<KindController>")]
    pub controller: Option<Spanned<KindController>>,
}

/// `[kinds.X] budget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KindBudget {
    /// kix derives a PodDisruptionBudget over the pod labels.
    Derive,
    /// The operator makes its own.
    Operator,
}

/// `[kinds.X] controller`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
pub enum KindController {
    Deployment,
    StatefulSet,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// `[groups.X]`: several Deployments and StatefulSets of the package that form one service.
pub struct RawGroup {
    /// Names or `*` globs of the package's Deployments and StatefulSets; a workload belongs to at most one group.
    #[schemars(with = "Vec<String>")]
    pub workloads: Vec<Spanned<String>>,
    /// How many of the group's pods must keep running: `one` (default) or `majority` (more than half).
    #[schemars(with = "Option<Survive>")]
    pub survive: Option<Spanned<Survive>>,
    /// The group's ceiling: the highest level its members can meet together.
    pub availability: Option<RawCeiling>,
}

pub use kix_kube::level::Survive;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// `[meta]`.
pub struct RawMeta {
    /// The package's name (a DNS-1123 label), what instances name.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The package's version (semver).
    #[schemars(with = "String")]
    pub version: Spanned<String>,
    /// The highest level the whole package can meet.
    pub availability: Option<RawCeiling>,
    /// The namespace the package's YAML was written for: moved to the instance's.
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// Namespaces whose objects keep them (`kube-system`, ...).
    #[serde(rename = "keepNamespaces")]
    #[schemars(with = "Option<Vec<String>>")]
    pub keep_namespaces: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// A ceiling: what can never be met.
pub struct RawCeiling {
    /// The highest level (none, pod, node or zone).
    #[schemars(with = "Option<Level>")]
    pub max: Option<Spanned<Level>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// `[workloads.X]`.
pub struct RawWorkload {
    /// Replicas per level; a level not named takes the nearest lower one named.
    #[schemars(with = "Option<RawReplicas>")]
    pub replicas: Option<Spanned<RawReplicas>>,
    /// The derived PodDisruptionBudget's settings.
    pub pdb: Option<RawPdb>,
    /// This workload's own ceiling.
    pub availability: Option<RawCeiling>,
    /// How many of its pods must keep running: `one` (default) or `majority` (more than half).
    #[schemars(with = "Option<Survive>")]
    pub survive: Option<Spanned<Survive>>,
    /// The kind of the resource the entry names (`Deployment`, `Prometheus`, ...), where several of the
    /// package's workloads have its name.
    #[schemars(with = "Option<String>")]
    pub kind: Option<Spanned<String>>,
}

/// `replicas = { none = 1, pod = 2, zone = 3 }`: a step function over levels.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReplicas {
    /// Replicas at level none.
    #[schemars(with = "Option<u32>")]
    pub none: Option<Spanned<u32>>,
    /// Replicas at level pod.
    #[schemars(with = "Option<u32>")]
    pub pod: Option<Spanned<u32>>,
    /// Replicas at level node.
    #[schemars(with = "Option<u32>")]
    pub node: Option<Spanned<u32>>,
    /// Replicas at level zone.
    #[schemars(with = "Option<u32>")]
    pub zone: Option<Spanned<u32>>,
}

impl RawReplicas {
    /// The named steps, lowest level first.
    pub fn steps(&self) -> Vec<(Level, &Spanned<u32>)> {
        [(Level::None, &self.none), (Level::Pod, &self.pod), (Level::Node, &self.node), (Level::Zone, &self.zone)]
            .into_iter()
            .filter_map(|(level, count)| count.as_ref().map(|count| (level, count)))
            .collect()
    }
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// `[workloads.X.pdb]`.
pub struct RawPdb {
    /// The budget's unhealthyPodEvictionPolicy (default: AlwaysAllow for Deployments, IfHealthyBudget for
    /// StatefulSets).
    #[serde(rename = "unhealthyPodEvictionPolicy")]
    #[schemars(with = "Option<EvictionPolicy>")]
    pub unhealthy_pod_eviction_policy: Option<Spanned<EvictionPolicy>>,
}

/// `PodDisruptionBudget.spec.unhealthyPodEvictionPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
pub enum EvictionPolicy {
    IfHealthyBudget,
    AlwaysAllow,
}

impl EvictionPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            EvictionPolicy::IfHealthyBudget => "IfHealthyBudget",
            EvictionPolicy::AlwaysAllow => "AlwaysAllow",
        }
    }
}

const PACKAGE_SHAPE: &[Shape] = &[
    Shape::Table(&["meta"]),
    Shape::Table(&["meta", "availability"]),
    Shape::Table(&["workloads"]),
    Shape::Table(&["workloads", "*"]),
    Shape::Table(&["workloads", "*", "replicas"]),
    Shape::Table(&["workloads", "*", "pdb"]),
    Shape::Table(&["workloads", "*", "availability"]),
    Shape::Table(&["groups"]),
    Shape::Table(&["groups", "*"]),
    Shape::Table(&["groups", "*", "availability"]),
    Shape::Table(&["kinds"]),
    Shape::Table(&["kinds", "*"]),
    Shape::Table(&["kinds", "*", "podLabels"]),
];

/// What one directory under `packages/` turned out to be.
#[derive(Debug)]
pub(crate) enum Loaded {
    Package(Box<PackageDir>),
    /// A package whose kix.toml could not be read or parsed (already reported), with its
    /// `meta.name` when that much could be read: later stages must not report it missing too.
    Broken(Option<String>),
    NotAPackage,
}

/// Loads one directory under `packages/`.
pub(crate) fn load_dir(reader: &Reader<'_>, dir: &Path, diagnostics: &mut Diagnostics) -> Loaded {
    match load_package(reader, dir, diagnostics) {
        Ok(Some(package)) => Loaded::Package(Box::new(package)),
        Ok(None) => Loaded::NotAPackage,
        Err(name) => Loaded::Broken(name),
    }
}

/// `Ok(None)`: not a package; `Err(name)`: a broken package.
fn load_package(
    reader: &Reader<'_>,
    dir: &Path,
    diagnostics: &mut Diagnostics,
) -> Result<Option<PackageDir>, Option<String>> {
    let manifest_path = dir.join("kix.toml");
    // symlink_metadata: a kix.toml that is a (possibly dangling) symlink is still the package's manifest.
    if std::fs::symlink_metadata(&manifest_path).is_err() {
        diagnostics.push(
            Diagnostic::new(Code::NotAPackage, "directory under packages/ has no kix.toml; skipped")
                .at(Location::file(reader.display(dir))),
        );
        return Ok(None);
    }
    let canonical_dir = match dir.canonicalize() {
        Ok(path) => path,
        Err(e) => {
            diagnostics.push(
                Diagnostic::new(Code::Io, format!("cannot resolve directory: {e}"))
                    .at(Location::file(reader.display(dir))),
            );
            return Err(None);
        }
    };
    let errors_before = diagnostics.count(kix_diag::Severity::Error);
    let entries = match reader.list(dir) {
        Ok(entries) => entries,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return Err(None);
        }
    };
    let (manifest, broken_name) = read_manifest(reader, &manifest_path, &canonical_dir, diagnostics);
    let files = match manifest.as_ref().and_then(|(source, raw)| Some((source, raw.resources.as_ref()?))) {
        Some((source, patterns)) => super::globs::listed(reader, dir, &canonical_dir, source, patterns, diagnostics),
        None => super::globs::default_files(reader, &entries, &canonical_dir, diagnostics),
    };
    let mut documents = Vec::new();
    let mut kustomization_namespace = None;
    let mut content = xxhash_rust::xxh3::Xxh3::new();
    if let Some((source, _)) = &manifest {
        hash_file(&mut content, source);
    }
    for path in files {
        let Some(source) = reader.read(&path, diagnostics) else { continue };
        hash_file(&mut content, &source);
        if super::kustomization::is_kustomization_file(&path) {
            let own = manifest.as_ref().and_then(|(_, raw)| raw.meta.namespace.as_ref()).map(|n| n.get_ref().as_str());
            let supplied = super::kustomization::check_file(source, own, diagnostics);
            kustomization_namespace = kustomization_namespace.or(supplied);
        } else {
            documents.extend(documents::parse_documents(source, diagnostics));
        }
    }
    let complete = diagnostics.count(kix_diag::Severity::Error) == errors_before;
    let Some((manifest, raw)) = manifest else { return Err(broken_name) };
    let content = content.digest128();
    Ok(Some(PackageDir {
        dir: reader.display(dir),
        manifest,
        raw,
        documents,
        complete,
        kustomization_namespace,
        content,
    }))
}

/// Adds one file to a package's content hash: its path and its text, each after its length, so no two
/// trees of files hash alike by moving bytes from one file or name to the next.
fn hash_file(content: &mut xxhash_rust::xxh3::Xxh3, source: &SourceFile) {
    for part in [source.path().as_os_str().as_encoded_bytes(), source.text().as_bytes()] {
        content.update(&(part.len() as u64).to_le_bytes());
        content.update(part);
    }
}

/// Reads and parses kix.toml: the manifest, or the package's `meta.name` when that much could be
/// read from a broken one.
fn read_manifest(
    reader: &Reader<'_>,
    path: &Path,
    canonical_dir: &Path,
    diagnostics: &mut Diagnostics,
) -> (Option<(SourceFile, RawPackage)>, Option<String>) {
    let name_of = |source: &SourceFile| {
        toml::from_str::<toml::Table>(source.text())
            .ok()
            .and_then(|t| t.get("meta")?.get("name")?.as_str().map(str::to_string))
    };
    if let Some(why) = package_escape(path, canonical_dir) {
        diagnostics.push(Diagnostic::new(Code::InputRefused, why).at(Location::file(reader.display(path))));
        return (None, None);
    }
    let Some(source) = reader.read(path, diagnostics) else { return (None, None) };
    match parse(&source) {
        Ok(raw) => (Some((source, raw)), None),
        Err(problem) => {
            diagnostics.push(problem);
            let name = name_of(&source);
            (None, name)
        }
    }
}

/// Parses a kix.toml; its first syntax, shape, type or unknown-key problem as one located diagnostic.
pub fn parse(source: &SourceFile) -> Result<RawPackage, Diagnostic> {
    toml_file::parse::<RawPackage>(source, PACKAGE_SHAPE)
}
