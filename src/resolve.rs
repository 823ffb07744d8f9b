//! Resolve: validate names and versions, pick each instance's package version,
//! and settle the availability level of every instance (R1-R4, R13, R14).
//!
//! Packages are validated once (their workload entries, replica mappings and
//! selectors do not depend on any cluster), clusters once, and then each
//! instance is bound to one package version and a level: the requested level
//! (R2) checked against the substrate (R1, R3) and lowered to the package
//! ceiling (R4). Per-workload decisions are `derive`'s.

use crate::diag::{Code, Diagnostic, Diagnostics, Location, SourceFile, Subject};
use crate::kube::kind::WorkloadKind;
use crate::kube::names;
use crate::kube::workload::{PdbView, Workload as WorkloadView};
use crate::level::Level;
use crate::load::package::RawWorkload;
use crate::load::yaml::Document;
use crate::load::{ClusterFile, PackageDir, Tree};
use crate::located;
use semver::{Version, VersionReq};
use std::collections::BTreeMap;
use toml::Spanned;

/// Default failure-domain keys (the well-known labels every kubelet and cloud provider sets).
pub const DEFAULT_NODE_KEY: &str = crate::kube::labels::HOSTNAME;
pub const DEFAULT_ZONE_KEY: &str = crate::kube::labels::ZONE;

/// Everything resolved from one tree.
#[derive(Debug)]
pub struct Resolved<'t> {
    pub packages: Vec<Package<'t>>,
    pub clusters: Vec<Cluster<'t>>,
}

/// A validated package version.
#[derive(Debug)]
pub struct Package<'t> {
    pub dir: &'t PackageDir,
    pub name: String,
    pub version: Version,
    /// `meta.availability.max`.
    pub ceiling: Option<Level>,
    /// Deployments and StatefulSets, in document order, by their index in `dir.documents`.
    pub workloads: Vec<(usize, WorkloadView)>,
    /// Shipped PodDisruptionBudgets, by document index.
    pub pdbs: Vec<(usize, PdbView)>,
    /// False when the package had errors: instances of it are not derived (the errors are reported already).
    pub valid: bool,
}

impl Package<'_> {
    pub fn settings(&self, workload: &str) -> Option<&RawWorkload> {
        self.dir.raw.workloads.iter().find(|(name, _)| name.get_ref() == workload).map(|(_, settings)| settings)
    }

    pub fn document(&self, index: usize) -> &Document {
        &self.dir.documents[index]
    }

    pub fn subject(&self) -> Subject {
        Subject { package: Some(self.name.clone()), ..Subject::default() }
    }
}

/// What a cluster's substrate is known to be able to do (R1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Substrate {
    /// `capabilities.multiNode`: `None` when not declared.
    pub multi_node: Option<bool>,
    /// `capabilities.availabilityZones`: `None` when not declared.
    pub zones: Option<Vec<String>>,
}

/// Whether a substrate can carry a level (R3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    Supported,
    /// Declared capabilities rule the level out; the reason completes "because …".
    Unsupported(String),
    /// The deciding capability is unknown; the text says what cannot be verified.
    Unverified(String),
}

impl Substrate {
    /// R1: the highest level the declared capabilities confirm (`None` when nothing above none is confirmed
    /// and nothing is ruled out either).
    pub fn confirmed_level(&self) -> Option<Level> {
        if self.multi_node == Some(false) {
            Some(Level::None)
        } else if self.zone_count() >= 2 {
            Some(Level::Zone)
        } else if self.multi_node == Some(true) {
            Some(Level::Node)
        } else {
            None
        }
    }

    pub fn zone_count(&self) -> usize {
        self.zones.as_ref().map_or(0, Vec::len)
    }

    /// True when the cluster is confirmed to have one node.
    pub fn single_node(&self) -> bool {
        self.multi_node == Some(false)
    }

    /// R3: whether a requested level is possible here.
    pub fn support(&self, level: Level) -> Support {
        if level == Level::None {
            return Support::Supported;
        }
        if self.multi_node == Some(false) {
            return Support::Unsupported("the cluster is declared single-node (multiNode = false)".into());
        }
        match level {
            Level::None => Support::Supported,
            Level::Pod | Level::Node => match self.multi_node {
                Some(_) => Support::Supported,
                None if self.zone_count() >= 2 => Support::Supported,
                None => Support::Unverified(format!(
                    "capabilities.multiNode is not declared, so kix cannot verify that `{level}` is possible: \
                     on a single node, {}",
                    if level == Level::Node {
                        "a hard spread over kubernetes.io/hostname leaves every replica after the first Pending"
                    } else {
                        "losing the node loses every replica"
                    }
                )),
            },
            Level::Zone => match &self.zones {
                Some(zones) if zones.len() >= 2 => Support::Supported,
                Some(zones) => Support::Unsupported(format!(
                    "the cluster declares {} availability zone{} (zone needs two or more)",
                    zones.len(),
                    if zones.len() == 1 { "" } else { "s" }
                )),
                None => Support::Unverified(
                    "capabilities.availabilityZones is not declared, so kix cannot verify that `zone` is possible: \
                     a hard zone rule leaves pods Pending on nodes without the zone label"
                        .into(),
                ),
            },
        }
    }
}

/// The node-label keys a cluster's failure domains are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureDomains {
    pub node: String,
    pub zone: String,
    pub extra: Vec<String>,
}

/// A validated cluster with its instances.
#[derive(Debug)]
pub struct Cluster<'t> {
    pub file: &'t ClusterFile,
    pub name: String,
    pub level: Level,
    pub substrate: Substrate,
    pub domains: FailureDomains,
    pub instances: Vec<Instance>,
    /// False when the cluster file had errors that make its name or settings unusable.
    pub valid: bool,
}

impl Cluster<'_> {
    pub fn source(&self) -> &SourceFile {
        &self.file.source
    }

    pub fn subject(&self) -> Subject {
        Subject { cluster: Some(self.name.clone()), ..Subject::default() }
    }
}

/// One package instance on one cluster.
#[derive(Debug)]
pub struct Instance {
    pub name: String,
    pub namespace: String,
    /// Index into `Resolved::packages`.
    pub package: usize,
    /// R2: the instance's own level, else the cluster's.
    pub requested: Level,
    /// After the package ceiling (R4).
    pub level: Level,
    /// Where the instance is declared (its name in the cluster file).
    pub location: Location,
    pub subject: Subject,
}

/// Validates every package and cluster and binds instances to packages.
pub fn resolve<'t>(tree: &'t Tree, diagnostics: &mut Diagnostics) -> Resolved<'t> {
    let mut packages = Vec::new();
    // Packages already reported as broken: an instance naming one must not be told it does not exist.
    let mut broken = tree.broken_packages.clone();
    for dir in &tree.packages {
        match validate_package(dir, diagnostics) {
            Some(package) => packages.push(package),
            // An invalid name cannot be matched against instances at all.
            None if names::dns1123_label(dir.raw.meta.name.get_ref()).is_err() => broken.push(None),
            None => broken.push(Some(dir.raw.meta.name.get_ref().clone())),
        }
    }
    report_duplicate_versions(&packages, diagnostics);
    let clusters = tree.clusters.iter().map(|file| resolve_cluster(file, &packages, &broken, diagnostics)).collect();
    Resolved { packages, clusters }
}

fn located<T>(source: &SourceFile, value: &Spanned<T>) -> Location {
    source.locate(value.span())
}

fn validate_package<'t>(dir: &'t PackageDir, diagnostics: &mut Diagnostics) -> Option<Package<'t>> {
    let source = &dir.manifest;
    let meta = &dir.raw.meta;
    let name = meta.name.get_ref().clone();
    let subject = Subject { package: Some(name.clone()), ..Subject::default() };
    let mut valid = dir.complete;
    if let Err(why) = names::dns1123_label(&name) {
        diagnostics.push(
            Diagnostic::new(Code::InvalidName, format!("package name `{name}` is not valid: {why}"))
                .at(located(source, &meta.name)),
        );
        return None;
    }
    let version = match Version::parse(meta.version.get_ref()) {
        Ok(version) => version,
        Err(error) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidVersion,
                    format!("package version `{}` is not semver: {error}", meta.version.get_ref()),
                )
                .at(located(source, &meta.version))
                .about(&subject),
            );
            return None;
        }
    };
    let ceiling = meta.availability.as_ref().and_then(|a| a.max.as_ref()).map(|m| *m.get_ref());

    let mut workloads = Vec::new();
    let mut pdbs = Vec::new();
    for (index, document) in dir.documents.iter().enumerate() {
        if let Some(kind) = WorkloadKind::of(&document.value) {
            match located::read_workload(document, kind) {
                Ok(view) => workloads.push((index, view)),
                Err(problems) => {
                    valid = false;
                    for problem in problems {
                        diagnostics.push(problem.about(&subject).workload(document.name()));
                    }
                }
            }
        } else if PdbView::is_pdb(&document.value) {
            match located::read_pdb(document) {
                Ok(view) => pdbs.push((index, view)),
                Err(problem) => {
                    valid = false;
                    diagnostics.push(problem.about(&subject));
                }
            }
        }
    }

    // R12: a shipped budget shared by several workloads.
    for (index, pdb) in &pdbs {
        let covered: Vec<&str> =
            workloads.iter().filter(|(_, w)| pdb.selects(&w.template_labels)).map(|(_, w)| w.name.as_str()).collect();
        if covered.len() > 1 {
            diagnostics.push(
                Diagnostic::new(
                    Code::BroadPdb,
                    format!(
                        "PodDisruptionBudget {} selects the pods of {} workloads: {}",
                        pdb.name,
                        covered.len(),
                        covered.join(", ")
                    ),
                )
                .at(dir.documents[*index].locate(&["spec", "selector"]))
                .about(&subject),
            );
        }
    }

    for (key, settings) in &dir.raw.workloads {
        let workload = key.get_ref();
        let named = dir.documents.iter().any(|d| WorkloadKind::of(&d.value).is_some() && d.name() == workload);
        if !named && dir.complete {
            valid = false;
            diagnostics.push(
                Diagnostic::new(
                    Code::UnknownWorkload,
                    format!("[workloads.{workload}] names no Deployment or StatefulSet of package `{name}`"),
                )
                .at(located(source, key))
                .about(&subject)
                .workload(workload)
                .help(workload_names_help(dir)),
            );
        }
        if let Some(replicas) = &settings.replicas {
            let steps = replicas.get_ref().steps();
            for (level, count) in &steps {
                if *count.get_ref() > crate::kube::workload::MAX_REPLICAS {
                    valid = false;
                    diagnostics.push(
                        Diagnostic::new(
                            Code::TomlSyntax,
                            format!(
                                "replicas {} at {level} for workload `{workload}` exceed the Kubernetes maximum {}",
                                count.get_ref(),
                                crate::kube::workload::MAX_REPLICAS
                            ),
                        )
                        .at(located(source, count))
                        .about(&subject)
                        .workload(workload),
                    );
                }
            }
            // Below the lowest level the mapping names, the manifest's spec.replicas applies (R6): the
            // whole step function, that base included, must not decrease.
            let manifest = workloads
                .iter()
                .find(|(_, view): &&(usize, WorkloadView)| &view.name == workload)
                .map(|(_, view)| view.manifest_replicas.unwrap_or(1));
            if let (Some(base), Some((lowest, first))) = (manifest, steps.first()) {
                if *lowest > Level::None && *first.get_ref() < base {
                    valid = false;
                    diagnostics.push(
                        Diagnostic::new(
                            Code::DecreasingReplicas,
                            format!(
                                "replicas for workload `{workload}` decrease from {base} (the manifest's spec.replicas, \
                                 used below `{lowest}`) to {} at {lowest}",
                                first.get_ref()
                            ),
                        )
                        .at(located(source, first))
                        .about(&subject)
                        .workload(workload)
                        .help(format!("name the lower levels too, e.g. replicas = {{ none = {}, ... }}", first.get_ref())),
                    );
                }
            }
            for pair in steps.windows(2) {
                let ((low, low_count), (high, high_count)) = (pair[0], pair[1]);
                if high_count.get_ref() < low_count.get_ref() {
                    valid = false;
                    diagnostics.push(
                        Diagnostic::new(
                            Code::DecreasingReplicas,
                            format!(
                                "replicas for workload `{workload}` decrease from {} at {low} to {} at {high}",
                                low_count.get_ref(),
                                high_count.get_ref()
                            ),
                        )
                        .at(located(source, high_count))
                        .about(&subject)
                        .workload(workload),
                    );
                }
            }
        }
    }
    Some(Package { dir, name, version, ceiling, workloads, pdbs, valid })
}

fn workload_names_help(dir: &PackageDir) -> String {
    let names: Vec<String> = dir
        .documents
        .iter()
        .filter_map(|d| WorkloadKind::of(&d.value).map(|k| format!("{} {}", k.as_str(), d.name())))
        .collect();
    if names.is_empty() {
        "the package has no Deployment or StatefulSet".into()
    } else {
        format!("the package's workloads are: {}", names.join(", "))
    }
}

fn report_duplicate_versions(packages: &[Package<'_>], diagnostics: &mut Diagnostics) {
    // Build metadata does not distinguish versions (semver 2.0, item 10): 1.0.0 and 1.0.0+b5 are one version.
    let mut seen: BTreeMap<(&str, Version), &Package<'_>> = BTreeMap::new();
    for package in packages {
        let mut version = package.version.clone();
        version.build = semver::BuildMetadata::EMPTY;
        if let Some(first) = seen.insert((&package.name, version), package) {
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicatePackageVersion,
                    format!(
                        "package `{}` version {} is defined twice: in {} and in {}",
                        package.name,
                        package.version,
                        first.dir.dir.display(),
                        package.dir.dir.display()
                    ),
                )
                .at(located(&package.dir.manifest, &package.dir.raw.meta.version))
                .about(&package.subject()),
            );
        }
    }
}

fn resolve_cluster<'t>(
    file: &'t ClusterFile,
    packages: &[Package<'t>],
    broken: &[Option<String>],
    diagnostics: &mut Diagnostics,
) -> Cluster<'t> {
    let source = &file.source;
    let raw = &file.raw;
    let name = file.name.clone();
    let subject = Subject { cluster: Some(name.clone()), ..Subject::default() };
    let mut valid = true;
    if let Err(why) = names::dns1123_label(&name) {
        valid = false;
        diagnostics.push(
            Diagnostic::new(Code::InvalidName, format!("cluster name `{name}` (the file name) is not valid: {why}"))
                .at(Location::file(source.path())),
        );
    }

    // Capabilities (R1).
    let zones_raw = raw.capabilities.availability_zones.as_ref();
    let substrate = Substrate {
        multi_node: raw.capabilities.multi_node.as_ref().map(|m| *m.get_ref()),
        zones: zones_raw.map(|zones| zones.get_ref().iter().map(|z| z.get_ref().clone()).collect()),
    };
    if let Some(zones) = zones_raw {
        let mut seen = Vec::new();
        for zone in zones.get_ref() {
            if let Err(why) = names::label_value(zone.get_ref())
                .and_then(|()| if zone.get_ref().is_empty() { Err("must not be empty".to_string()) } else { Ok(()) })
            {
                valid = false;
                diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidLabelKey,
                        format!("zone `{}` is not a valid label value: {why}", zone.get_ref()),
                    )
                    .at(located(source, zone))
                    .about(&subject),
                );
            } else if seen.contains(zone.get_ref()) {
                valid = false;
                diagnostics.push(
                    Diagnostic::new(Code::InvalidLabelKey, format!("zone `{}` is declared twice", zone.get_ref()))
                        .at(located(source, zone))
                        .about(&subject),
                );
            }
            seen.push(zone.get_ref().clone());
        }
    }
    if substrate.multi_node == Some(false) && substrate.zone_count() >= 2 {
        valid = false;
        let at = raw.capabilities.multi_node.as_ref().map(|m| located(source, m));
        diagnostics.push(
            Diagnostic::new(
                Code::ContradictoryCapabilities,
                format!(
                    "cluster `{name}` is declared single-node (multiNode = false) but lists {} availability zones",
                    substrate.zone_count()
                ),
            )
            .at_opt(at)
            .about(&subject),
        );
    }

    // Failure-domain keys (R14).
    let fd = &raw.failure_domains;
    let domains = FailureDomains {
        node: fd.node.as_ref().map_or(DEFAULT_NODE_KEY.to_string(), |k| k.get_ref().clone()),
        zone: fd.zone.as_ref().map_or(DEFAULT_ZONE_KEY.to_string(), |k| k.get_ref().clone()),
        extra: fd.extra.iter().map(|k| k.get_ref().clone()).collect(),
    };
    let mut used_keys: Vec<&str> = Vec::new();
    let keyed: Vec<(Option<&Spanned<String>>, &str)> = std::iter::once((fd.node.as_ref(), domains.node.as_str()))
        .chain(std::iter::once((fd.zone.as_ref(), domains.zone.as_str())))
        .chain(fd.extra.iter().map(|k| (Some(k), k.get_ref().as_str())))
        .collect();
    for (spanned, key) in keyed {
        let at = spanned.map(|s| located(source, s));
        if let Err(why) = names::label_key(key) {
            valid = false;
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidLabelKey,
                    format!("failure-domain key `{key}` is not a valid label key: {why}"),
                )
                .at_opt(at)
                .about(&subject),
            );
        } else if used_keys.contains(&key) {
            valid = false;
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidLabelKey,
                    format!("failure-domain key `{key}` is used twice (each key becomes one spread constraint)"),
                )
                .at_opt(at)
                .about(&subject),
            );
        }
        used_keys.push(key);
    }

    // The node inventory `kix verify` simulates on.
    if !crate::inventory::validate(&raw.node_pools, &substrate, source, &subject, diagnostics) {
        valid = false;
    }

    // The cluster's own level against its substrate (R3).
    let level = *raw.availability.get_ref();
    check_support(&substrate, level, located(source, &raw.availability), &subject, &name, diagnostics, &mut valid);

    // Instances (R2, R4, R13, R14).
    let mut instances = Vec::new();
    let mut seen_names: Vec<&str> = Vec::new();
    for raw_instance in &raw.instances {
        let instance_name = raw_instance.name.get_ref();
        let location = located(source, &raw_instance.name);
        let instance_subject = Subject { instance: Some(instance_name.clone()), ..subject.clone() };
        if let Err(why) = names::dns1123_label(instance_name) {
            valid = false;
            diagnostics.push(
                Diagnostic::new(Code::InvalidName, format!("instance name `{instance_name}` is not valid: {why}"))
                    .at(location)
                    .about(&subject),
            );
            continue;
        }
        if seen_names.contains(&instance_name.as_str()) {
            valid = false;
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateInstance,
                    format!("instance `{instance_name}` is declared twice in cluster `{name}`"),
                )
                .at(location)
                .about(&subject),
            );
            continue;
        }
        seen_names.push(instance_name);
        let namespace = raw_instance.namespace.as_ref().map_or(instance_name.clone(), |n| n.get_ref().clone());
        if let Some(spanned) = &raw_instance.namespace {
            if let Err(why) = names::dns1123_label(&namespace) {
                valid = false;
                diagnostics.push(
                    Diagnostic::new(Code::InvalidName, format!("namespace `{namespace}` is not valid: {why}"))
                        .at(located(source, spanned))
                        .about(&instance_subject),
                );
                continue;
            }
        }
        let requested = match &raw_instance.availability {
            Some(own) => {
                let own_level = *own.get_ref();
                check_support(
                    &substrate,
                    own_level,
                    located(source, own),
                    &instance_subject,
                    &name,
                    diagnostics,
                    &mut valid,
                );
                own_level
            }
            None => level,
        };
        let Some(package) = choose_package(source, raw_instance, packages, broken, &instance_subject, diagnostics)
        else {
            valid = false;
            continue;
        };
        let chosen = &packages[package];
        let instance_subject = Subject { package: Some(chosen.name.clone()), ..instance_subject };
        let resolved_level = match chosen.ceiling {
            Some(ceiling) if ceiling < requested => {
                diagnostics.push(
                    Diagnostic::new(
                        Code::PackageCeiling,
                        format!(
                            "cluster `{name}` instance `{instance_name}`: package `{}` {} supports at most `{ceiling}`, \
                             so the requested level `{requested}` is lowered to `{ceiling}`",
                            chosen.name, chosen.version
                        ),
                    )
                    .at(location.clone())
                    .about(&instance_subject),
                );
                ceiling
            }
            _ => requested,
        };
        instances.push(Instance {
            name: instance_name.clone(),
            namespace,
            package,
            requested,
            level: resolved_level,
            location,
            subject: instance_subject,
        });
    }

    Cluster { file, name, level, substrate, domains, instances, valid }
}

fn check_support(
    substrate: &Substrate,
    level: Level,
    at: Location,
    subject: &Subject,
    cluster: &str,
    diagnostics: &mut Diagnostics,
    valid: &mut bool,
) {
    match substrate.support(level) {
        Support::Supported => {}
        Support::Unsupported(why) => {
            *valid = false;
            diagnostics.push(
                Diagnostic::new(
                    Code::LevelAboveSubstrate,
                    format!("cluster `{cluster}` cannot meet availability `{level}`: {why}"),
                )
                .at(at)
                .about(subject)
                .help("lower the availability, or correct [capabilities]"),
            );
        }
        Support::Unverified(what) => diagnostics.push(
            Diagnostic::new(Code::LevelUnverified, format!("cluster `{cluster}`: {what}")).at(at).about(subject).help(
                if level == Level::Zone {
                    "declare capabilities.availabilityZones"
                } else {
                    "declare capabilities.multiNode"
                },
            ),
        ),
    }
}

/// R13: the highest version of the named package that meets the requirement.
fn choose_package(
    source: &SourceFile,
    instance: &crate::load::cluster::RawInstance,
    packages: &[Package<'_>],
    broken: &[Option<String>],
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Option<usize> {
    let wanted = instance.package.get_ref();
    let candidates: Vec<usize> = (0..packages.len()).filter(|&i| &packages[i].name == wanted).collect();
    let maybe_broken = broken.iter().any(|name| name.as_ref().is_none_or(|name| name == wanted));
    if candidates.is_empty() && maybe_broken {
        // The package's own error is reported; a second one here would only mislead.
        return None;
    }
    if candidates.is_empty() {
        let mut known: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
        known.dedup();
        diagnostics.push(
            Diagnostic::new(Code::PackageNotFound, format!("package `{wanted}` does not exist"))
                .at(located(source, &instance.package))
                .about(subject)
                .help(if known.is_empty() {
                    "there are no packages under packages/".to_string()
                } else {
                    format!("packages that exist: {}", known.join(", "))
                }),
        );
        return None;
    }
    let requirement = match &instance.version {
        None => VersionReq::STAR,
        Some(spanned) => match VersionReq::parse(spanned.get_ref()) {
            Ok(requirement) => requirement,
            Err(error) => {
                diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidRequirement,
                        format!("version requirement `{}` is not valid: {error}", spanned.get_ref()),
                    )
                    .at(located(source, spanned))
                    .about(subject),
                );
                return None;
            }
        },
    };
    // Without a requirement the highest release wins; a pre-release only when there is no release
    // (as cargo and helm choose). With one, semver's own rules apply (pre-releases only when named).
    let matches = |version: &Version| match &instance.version {
        Some(_) => requirement.matches(version),
        None => version.pre.is_empty() || candidates.iter().all(|&i| !packages[i].version.pre.is_empty()),
    };
    let best = candidates
        .iter()
        .copied()
        .filter(|&i| matches(&packages[i].version))
        .max_by(|&a, &b| packages[a].version.cmp(&packages[b].version));
    if best.is_none() {
        let mut versions: Vec<&Version> = candidates.iter().map(|&i| &packages[i].version).collect();
        versions.sort();
        let listed: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
        diagnostics.push(
            Diagnostic::new(
                Code::NoMatchingVersion,
                format!(
                    "no version of package `{wanted}` matches `{requirement}`; versions there are: {}",
                    listed.join(", ")
                ),
            )
            .at(instance.version.as_ref().map_or_else(|| located(source, &instance.package), |v| located(source, v)))
            .about(subject),
        );
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn substrate(multi_node: Option<bool>, zones: Option<&[&str]>) -> Substrate {
        Substrate { multi_node, zones: zones.map(|z| z.iter().map(|s| s.to_string()).collect()) }
    }

    // R1: what each declared substrate confirms.
    #[test]
    fn r1_substrate_table() {
        let three: &[&str] = &["a", "b", "c"];
        let one: &[&str] = &["a"];
        let cases = [
            (substrate(Some(false), None), Some(Level::None)),
            (substrate(Some(false), Some(one)), Some(Level::None)),
            (substrate(Some(true), None), Some(Level::Node)),
            (substrate(Some(true), Some(one)), Some(Level::Node)),
            (substrate(Some(true), Some(three)), Some(Level::Zone)),
            (substrate(None, Some(three)), Some(Level::Zone)),
            (substrate(None, None), None),
            (substrate(None, Some(one)), None),
        ];
        for (substrate, expected) in cases {
            assert_eq!(substrate.confirmed_level(), expected, "{substrate:?}");
        }
    }

    // R3: errors when the deciding capability is declared, warnings when it is unknown.
    #[test]
    fn r3_support_table() {
        use Support::*;
        let three: &[&str] = &["a", "b", "c"];
        let one: &[&str] = &["a"];
        let kind = |s: Support| match s {
            Supported => "ok",
            Unsupported(_) => "error",
            Unverified(_) => "warning",
        };
        let cases = [
            (substrate(Some(false), None), Level::None, "ok"),
            (substrate(Some(false), None), Level::Pod, "error"),
            (substrate(Some(false), None), Level::Zone, "error"),
            (substrate(Some(true), None), Level::Pod, "ok"),
            (substrate(Some(true), None), Level::Node, "ok"),
            (substrate(Some(true), None), Level::Zone, "warning"),
            (substrate(Some(true), Some(one)), Level::Zone, "error"),
            (substrate(Some(true), Some(three)), Level::Zone, "ok"),
            (substrate(None, None), Level::Pod, "warning"),
            (substrate(None, None), Level::Node, "warning"),
            (substrate(None, None), Level::Zone, "warning"),
            (substrate(None, Some(three)), Level::Node, "ok"),
            (substrate(None, Some(one)), Level::Zone, "error"),
            (substrate(None, Some(&[])), Level::Zone, "error"),
        ];
        for (substrate, level, expected) in cases {
            assert_eq!(kind(substrate.support(level)), expected, "{substrate:?} at {level}");
        }
    }

    #[test]
    fn r3_zone_warning_says_what_cannot_be_verified() {
        let Support::Unverified(text) = substrate(Some(true), None).support(Level::Zone) else { panic!() };
        assert!(text.contains("Pending on nodes without the zone label"), "{text}");
    }

    use crate::diag::Code;
    use crate::testing::{TestTree, workload_yaml};

    fn package(name: &str, version: &str, extra: &str) -> (String, String) {
        (
            format!("[meta]\nname = \"{name}\"\nversion = \"{version}\"\n{extra}"),
            workload_yaml("Deployment", "w", None, "").replace("spec:\n  selector", "spec:\n  replicas: 1\n  selector"),
        )
    }

    fn tree_with(cluster: &str, packages: &[(&str, (String, String))]) -> TestTree {
        let mut tree = TestTree::new().cluster("c", cluster);
        for (dir, (toml, yaml)) in packages {
            tree = tree.package(dir, toml, &[("w.yaml", yaml)]);
        }
        tree
    }

    // R2: the instance's own level wins over the cluster's.
    #[test]
    fn r2_instance_level_overrides_cluster_level() {
        let cluster = "availability = \"none\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"a\"\npackage = \"p\"\n\
                       [[instances]]\nname = \"b\"\npackage = \"p\"\navailability = \"node\"\n";
        let (toml, _) = package("p", "1.0.0", "[workloads.w]\nreplicas = { none = 1, pod = 2 }\n");
        let compiled = TestTree::new()
            .cluster("c", cluster)
            .package("p", &toml, &[("w.yaml", &workload_yaml("Deployment", "w", None, ""))])
            .compile();
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
        assert_eq!(compiled.instance("c", "a").level, Level::None);
        assert_eq!(compiled.instance("c", "b").level, Level::Node);
        assert_eq!(compiled.workload("c", "b", "w").replicas, 2);
    }

    // R1/R3 end to end: errors point at the level, warnings do not stop the build.
    #[test]
    fn r3_errors_and_warnings_end_to_end() {
        let p = package("p", "1.0.0", "[workloads.w]\nreplicas = { none = 1, pod = 2 }\n");
        let single =
            tree_with("availability = \"pod\"\n[capabilities]\nmultiNode = false\n", &[("p", p.clone())]).compile();
        assert_eq!(single.codes(), vec![Code::LevelAboveSubstrate]);
        let location = single.diagnostics.iter().next().unwrap().location.clone().unwrap();
        assert_eq!((location.line, location.column), (Some(1), Some(16)));

        let unknown =
            tree_with("availability = \"zone\"\n[[instances]]\nname = \"a\"\npackage = \"p\"\n", &[("p", p.clone())])
                .compile();
        assert_eq!(unknown.codes(), vec![Code::LevelUnverified]);
        assert!(unknown.ok());

        let contradictory = tree_with(
            "availability = \"none\"\n[capabilities]\nmultiNode = false\navailabilityZones = [\"a\", \"b\"]\n",
            &[("p", p)],
        )
        .compile();
        assert_eq!(contradictory.codes(), vec![Code::ContradictoryCapabilities]);
    }

    // R4: a package ceiling lowers the whole instance, naming everything.
    #[test]
    fn r4_package_ceiling_lowers_the_instance() {
        let p = package(
            "p",
            "1.0.0",
            "[meta.availability]\nmax = \"node\"\n[workloads.w]\nreplicas = { none = 1, pod = 2 }\n",
        );
        let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
                       [[instances]]\nname = \"a\"\npackage = \"p\"\n";
        let compiled = tree_with(cluster, &[("p", p)]).compile();
        assert_eq!(compiled.codes(), vec![Code::PackageCeiling]);
        let message = &compiled.messages()[0];
        for part in ["cluster `c`", "instance `a`", "package `p`", "`zone`", "lowered to `node`"] {
            assert!(message.contains(part), "{message} lacks {part}");
        }
        assert_eq!(compiled.instance("c", "a").level, Level::Node);
        assert_eq!(compiled.workload("c", "a", "w").hard_key.as_deref(), Some("kubernetes.io/hostname"));
    }

    // R13: highest matching version; no match lists versions; duplicates refused.
    #[test]
    fn r13_versions() {
        let packages =
            [("p1", package("p", "1.2.0", "")), ("p2", package("p", "1.4.1", "")), ("p3", package("p", "2.0.0", ""))];
        let cluster = |req: &str| {
            format!(
                "availability = \"none\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"a\"\npackage = \"p\"\n{req}"
            )
        };
        let chosen = |req: &str| {
            let compiled = tree_with(&cluster(req), &packages).compile();
            assert!(compiled.ok(), "{:?}", compiled.messages());
            compiled.instance("c", "a").package_version.clone()
        };
        assert_eq!(chosen(""), "2.0.0", "without a requirement the highest version wins");
        assert_eq!(chosen("version = \"^1.2\"\n"), "1.4.1");
        assert_eq!(chosen("version = \"~1.2\"\n"), "1.2.0");
        assert_eq!(chosen("version = \"=1.2.0\"\n"), "1.2.0");
        // A pre-release is chosen only when asked for, or when there is nothing else.
        let with_rc = [("p1", package("p", "1.2.0", "")), ("p2", package("p", "2.0.0-rc.1", ""))];
        let pick = |req: &str, packages: &[(&str, (String, String))]| {
            tree_with(&cluster(req), packages).compile().instance("c", "a").package_version.clone()
        };
        assert_eq!(pick("", &with_rc), "1.2.0");
        assert_eq!(pick("version = \"=2.0.0-rc.1\"\n", &with_rc), "2.0.0-rc.1");
        assert_eq!(pick("", &[("p2", package("p", "2.0.0-rc.1", ""))]), "2.0.0-rc.1");
        let build_twice =
            tree_with(&cluster(""), &[("p1", package("p", "1.0.0", "")), ("p2", package("p", "1.0.0+b5", ""))])
                .compile();
        assert_eq!(build_twice.codes(), vec![Code::DuplicatePackageVersion]);

        let none = tree_with(&cluster("version = \"^3\"\n"), &packages).compile();
        assert_eq!(none.codes(), vec![Code::NoMatchingVersion]);
        assert!(none.messages()[0].contains("versions there are: 1.2.0, 1.4.1, 2.0.0"), "{}", none.messages()[0]);

        let bad = tree_with(&cluster("version = \"one\"\n"), &packages).compile();
        assert_eq!(bad.codes(), vec![Code::InvalidRequirement]);

        let twice =
            tree_with(&cluster(""), &[("p1", package("p", "1.0.0", "")), ("p2", package("p", "1.0.0", ""))]).compile();
        assert_eq!(twice.codes(), vec![Code::DuplicatePackageVersion]);

        let bad_version = tree_with(&cluster(""), &[("p1", package("p", "1.0", ""))]).compile();
        assert!(bad_version.codes().contains(&Code::InvalidVersion));
    }

    // R14: names and failure-domain keys.
    #[test]
    fn r14_names_and_keys_end_to_end() {
        let p = || [("p", package("p", "1.0.0", ""))];
        let instance = |name: &str| {
            format!(
                "availability = \"none\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"{name}\"\npackage = \"p\"\n"
            )
        };
        assert_eq!(tree_with(&instance("../escape"), &p()).compile().codes(), vec![Code::InvalidName]);
        assert_eq!(tree_with(&instance("Shop"), &p()).compile().codes(), vec![Code::InvalidName]);
        let twice = format!("{}[[instances]]\nname = \"a\"\npackage = \"p\"\n", instance("a"));
        assert_eq!(tree_with(&twice, &p()).compile().codes(), vec![Code::DuplicateInstance]);
        let bad_key = "availability = \"none\"\n[failureDomains]\nextra = [\"bad key\"]\n";
        assert_eq!(tree_with(bad_key, &p()).compile().codes(), vec![Code::InvalidLabelKey]);
        let long_prefix = format!("availability = \"none\"\n[failureDomains]\nzone = \"{}/zone\"\n", "a".repeat(254));
        assert_eq!(tree_with(&long_prefix, &p()).compile().codes(), vec![Code::InvalidLabelKey]);
        let bad_namespace = format!("{}namespace = \"Not_OK\"\n", instance("a"));
        assert_eq!(tree_with(&bad_namespace, &p()).compile().codes(), vec![Code::InvalidName]);
        let bad_cluster = TestTree::new().cluster("Prod_1", "availability = \"none\"\n").compile();
        assert_eq!(bad_cluster.codes(), vec![Code::InvalidName]);
    }
}
