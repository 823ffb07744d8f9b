//! The resolved model: what `resolve` hands to `derive`, owned and complete.
//!
//! Everything here passed validation; whatever failed is absent, with its
//! diagnostic already reported, so later stages never re-check raw input or
//! consult a validity flag. Each decision keeps the location it came from, so
//! `derive` can point back at the cluster file or kix.toml that caused it.
//!
//! Beside each outcome `derive` reads, the model keeps the decision trail that
//! `kix explain` prints ([`LevelTrail`] per instance, [`WorkloadTrail`] per
//! workload): who requested the level, the substrate check, each ceiling and
//! what it did, the replica step chosen. Resolve writes each entry where it
//! makes that decision; explain reads the trail and never decides again, so
//! it cannot drift from the build.

use super::inventory::InventoryNode;
use super::substrate::{FailureDomains, Substrate, Support};
use crate::load::documents::Document;
use crate::load::package::{EvictionPolicy, Survive};
use kix_diag::{Code, Location, SourceFile, Subject};
use kix_kube::autoscaler::AutoscalerView;
use kix_kube::kind::WorkloadKind;
use kix_kube::level::Level;
use kix_kube::selector::Labels;
use kix_kube::workload::{PdbView, WorkloadView};
use semver::Version;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

/// A value together with where it was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub from: Location,
}

/// A cluster whose file is valid, with the instances that resolved.
#[derive(Debug)]
pub struct Cluster {
    pub name: String,
    /// The cluster file.
    pub source: Arc<SourceFile>,
    /// The cluster's own `availability`.
    pub level: Sourced<Level>,
    pub substrate: Substrate,
    /// Where `capabilities.multiNode` and `capabilities.availabilityZones` are written (when they are).
    pub multi_node_at: Option<Location>,
    pub zones_at: Option<Location>,
    pub domains: FailureDomains,
    /// The expanded `[[nodePools]]` (empty without an inventory).
    pub inventory: Vec<InventoryNode>,
    /// Warning codes the cluster file acknowledges for all its instances (`allow = [...]`).
    pub allow: Vec<Code>,
    /// `instanceLabel`: whether kix adds `app.kubernetes.io/instance` where an object has none.
    pub instance_label: crate::load::cluster::InstanceLabel,
    /// `[verify] requireNodes = true`, where it is written: verify fails the cluster without nodes (K0624).
    pub require_nodes: Option<Location>,
    /// `[admission]`: the level enforced at admission (issue 40), when the file asks for it.
    pub admission: Option<Admission>,
    /// `[storage] topology`: what a pod's provisioned volume binds it to (zonal by default).
    pub storage: kix_kube::volumes::VolumeTopology,
    /// The pools' node groups the cluster autoscaler may grow (`maxNodesPerZone`): the nodes it may
    /// add, not in `inventory` (capacity and sizing count what runs).
    pub node_groups: Vec<super::inventory::NodeGroup>,
    pub instances: Vec<Instance>,
}

/// A cluster's `[admission]`, validated: what its bindings do with a request that undoes the level, and
/// who may still delete or change kix's budgets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    pub enforce: crate::load::cluster::Enforce,
    /// The exempt user names, in the file's order, each once.
    pub exempt: Vec<String>,
    /// Where `[admission]` is written (its `enforce`).
    pub at: Location,
}

impl Cluster {
    pub fn subject(&self) -> Subject {
        Subject { cluster: Some(self.name.clone().into()), ..Subject::default() }
    }
}

/// One package instance on one cluster, bound to a package version and a level.
#[derive(Debug)]
pub struct Instance {
    pub name: String,
    pub namespace: String,
    /// `createNamespace = true`: emit the instance's `v1 Namespace` unless the package ships it.
    pub create_namespace: bool,
    /// Where the instance is declared (its name in the cluster file).
    pub location: Location,
    /// Cluster, instance and package.
    pub subject: Subject,
    /// The version chosen for it (R13).
    pub package: Arc<Package>,
    /// The instance's `version` requirement, when it has one (else the highest version won).
    pub version_requirement: Option<Sourced<String>>,
    /// R2: the instance's own `availability`, else the cluster's, with the line it was read from (the
    /// level of `trail.requested`).
    pub requested: Sourced<Level>,
    /// After the package ceiling (R4): the requested level, or the ceiling where it was lower (with where the
    /// ceiling is written).
    pub level: Sourced<Level>,
    /// How `requested` and `level` were decided (R2-R4), recorded as each step was taken.
    pub trail: LevelTrail,
    /// Warning codes the instance acknowledges (its own `allow`; the cluster's apply too).
    pub allow: Vec<Code>,
    /// R5-R8 for each workload of the package (the first copy of each kind and name), in document order.
    pub workloads: Vec<InstanceWorkload>,
    /// Each `[groups.X]` of the package: its level and its members' total, in name order.
    pub groups: Vec<InstanceGroup>,
    /// Its availability group across instances (`group = "NAME"`), when it is in one.
    pub across: Option<Across>,
}

/// An instance's membership in an availability group across instances (`group = "NAME"`, issue 17).
#[derive(Clone, Debug)]
pub struct Across {
    pub name: String,
    /// Where `group` is written.
    pub at: Location,
    /// The group's instances in name order, this one among them (filled once the cluster's instances
    /// resolved).
    pub members: Vec<String>,
}

impl Across {
    /// Whether `instance` emits the group's budgets: the first member by name does, once.
    pub fn emits_budget(&self, instance: &str) -> bool {
        self.members.first().is_some_and(|first| first == instance)
    }
}

/// What one availability group of one instance runs at: the level its members share and their total.
#[derive(Clone, Debug)]
pub struct InstanceGroup {
    /// Index into the package's `groups`.
    pub group: usize,
    /// The instance's level after the group's ceiling.
    pub level: Sourced<Level>,
    /// The group's `availability.max` met by the instance's level.
    pub ceiling: Ceiling,
    /// The members' replicas added up (R7, R8 and the survival check judge this), made once they
    /// resolved; for a group across instances, over every member instance (`across`, once they all
    /// resolved: no instance alone knows the others').
    pub replicas: u32,
}

/// What one workload of one instance runs at: its level and replica count, and why.
#[derive(Clone, Debug)]
pub struct InstanceWorkload {
    /// Index into the package's `workloads`.
    pub workload: usize,
    /// After the workload's ceiling (R5): the instance's level, or the workload's ceiling where it was lower.
    pub level: Sourced<Level>,
    pub replicas: u32,
    /// The range its autoscaler is emitted with, when one scales it (`replicas` is then its minimum).
    pub autoscaler: Option<AutoscaledRange>,
    /// How `level` and `replicas` were decided (R5, R6), recorded as each step was taken.
    pub trail: WorkloadTrail,
}

/// An autoscaler's range after kix raised it to the level's floor (see `resolve::autoscaler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoscaledRange {
    pub min: u32,
    pub max: u32,
    /// Whether kix raised the minimum (K0432) or the maximum (K0433) above what the autoscaler says.
    pub raised: bool,
}

/// The source of a workload's replica count (R6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaSource {
    /// The mapping's step for this level (the step's level and where its count is written).
    Mapping { step: Level, at: Location },
    /// The manifest's own `spec.replicas`: no mapping, or a level below the lowest step. `defaulted`
    /// when the field is absent and the count is its default, 1; `at` is where it is written (or its
    /// `spec`).
    Manifest { at: Location, defaulted: bool },
    /// The minimum of the workload's autoscaler (where it is written, or its spec when absent).
    Autoscaler { at: Location },
    /// The manifest's own `spec.replicas: 0` (no mapping step, no autoscaler): a workload scaled to zero
    /// runs no pods, so there is nothing for a level to protect and kix passes it through unchanged (as
    /// Argo Rollouts' workloadRef pattern leaves the Deployment whose template a Rollout runs).
    ScaledToZero { at: Location },
}

/// Why an instance runs at its level: R2-R4 in the order resolve decides them, each entry written where
/// its decision is made (`resolve::instance`, `resolve::support`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelTrail {
    /// R2: the level asked for, who asked, and where it is written.
    pub requested: Request,
    /// R1, R3: the requested level against the cluster's declared capabilities.
    pub substrate: SubstrateCheck,
    /// R4: the package's `meta.availability.max` met by the requested level.
    pub package_ceiling: Ceiling,
}

/// R2: a requested level and who requested it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub by: RequestedBy,
    pub level: Sourced<Level>,
}

/// Who requested an instance's level (R2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestedBy {
    /// The cluster file's `availability`: the instance names none of its own.
    Cluster,
    /// The instance's own `availability`.
    Instance,
    /// `kix explain --level`: a what-if level asked on the command line in place of the files' (which are
    /// not changed); located at the instance's name.
    WhatIf,
}

/// R1 and R3 for one requested level: what the declared capabilities confirm, and the verdict on the level.
/// An instance that inherits the cluster's level inherits the cluster's check of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubstrateCheck {
    /// The level checked.
    pub level: Level,
    /// R1: the highest level the capabilities confirm (`None`: nothing above `none` is confirmed, nothing is
    /// ruled out).
    pub confirmed: Option<Level>,
    /// R3: supported, unsupported (an error, K0302) or unverified (a warning, K0303).
    pub support: Support,
}

impl SubstrateCheck {
    /// Whether declared capabilities rule the level out (R3's error).
    pub fn rules_out(&self) -> bool {
        matches!(self.support, Support::Unsupported(_))
    }
}

/// An `availability.max` met by a level: the package's (R4, for the whole instance) or one workload's (R5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ceiling {
    /// No `availability.max` is written.
    Undeclared,
    /// Written (with where) at or above the level it met, which stays.
    NotBelow(Sourced<Level>),
    /// Written (with where) below the level it met (`from`): the level is lowered to the ceiling.
    Lowered { max: Sourced<Level>, from: Level },
}

/// Why one workload of an instance runs at its level with its replica count, each entry written where its
/// decision is made (`resolve::instance`, `resolve::autoscaler`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadTrail {
    /// R5: the workload's own `availability.max` met by the instance's level.
    pub ceiling: Ceiling,
    /// R6: the replica step chosen, or the manifest's count, or the autoscaler's minimum.
    pub replicas: ReplicaSource,
}

/// A validated package version, shared by every instance that chose it (a member of a group across
/// instances holds its own copy, renamed and labelled for it: `resolve::across`).
#[derive(Clone, Debug)]
pub struct Package {
    pub name: String,
    pub version: Version,
    /// `version` as text, made once (every instance's plan carries it).
    pub version_text: String,
    /// The package directory, relative to the root.
    pub dir: PathBuf,
    /// Its kix.toml.
    pub manifest: Arc<SourceFile>,
    /// `meta.availability.max` (R4).
    pub ceiling: Option<Sourced<Level>>,
    /// Every document of every YAML file, files in name order, documents in file order, each with what
    /// resolve read of it once for every instance.
    pub documents: Vec<PackageDocument>,
    /// Deployments and StatefulSets, in document order.
    pub workloads: Vec<Workload>,
    /// `[groups.X]`, in name order.
    pub groups: Vec<Group>,
    /// Custom kinds the package's own CRDs declare cluster-scoped, by (group, kind).
    pub cluster_scoped_kinds: BTreeSet<(String, String)>,
    /// Where the package's objects go and which namespaces they keep (`meta.namespace`,
    /// `meta.keepNamespaces`).
    pub namespaces: PackageNamespaces,
    /// The `namespace` the package's kustomization file sets, which kix skips (K0112): named in the
    /// help of a ServiceAccount subject refused for having no namespace (K0414).
    pub kustomization_namespace: Option<String>,
    /// The documents whose strings name `meta.namespace` (K0209), found the first time an instance runs
    /// elsewhere: the same for every instance, so a package's strings are read once, not per instance.
    pub namespace_strings: std::sync::OnceLock<Vec<NamespaceInStrings>>,
    /// A hash of every byte kix read of the package ([`crate::load::PackageDir::content`]).
    pub content: u128,
}

impl Package {
    /// Its shipped PodDisruptionBudgets, each with the index of its document, in document order.
    pub fn budgets(&self) -> impl Iterator<Item = (usize, &PdbView)> {
        self.documents.iter().enumerate().filter_map(|(index, d)| Some((index, d.budget.as_ref()?)))
    }

    /// Its custom resources whose pods an operator runs and kix does not place (K0435), in document order.
    pub fn unmanaged_custom(&self) -> impl Iterator<Item = &UnmanagedCustom> {
        self.documents.iter().filter_map(|d| d.unmanaged.as_ref())
    }
}

/// One document of a package version and what resolve read of it, once for every instance that runs
/// the version (issue 20): where it goes, and what kind of thing it is to kix beside a workload (whose
/// views are the package's `workloads`, by document index). It reads as its [`Document`].
#[derive(Clone, Debug)]
pub struct PackageDocument {
    pub document: Document,
    /// Where it goes, as far as the package decides it.
    pub scope: DocumentScope,
    /// A shipped PodDisruptionBudget, as read.
    pub budget: Option<PdbView>,
    /// A ReplicaSet or ReplicationController: a kind that replicates pods kix does not place (K0434).
    pub replicating: Option<kix_kube::kind::ControllerKind>,
    /// A custom resource whose pods an operator runs and kix does not place (K0435).
    pub unmanaged: Option<UnmanagedCustom>,
}

impl std::ops::Deref for PackageDocument {
    type Target = Document;
    fn deref(&self) -> &Document {
        &self.document
    }
}

impl std::ops::DerefMut for PackageDocument {
    fn deref_mut(&mut self) -> &mut Document {
        &mut self.document
    }
}

/// Where one of a package's documents goes, as far as the package decides it: read once per package
/// version, where derive read every document of every instance (issue 20).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocumentScope {
    /// Outside namespaces: a well-known cluster-scoped kind, or a custom one the package's CRDs declare so.
    Cluster,
    /// In a namespace: the `metadata.namespace` written (`None` when absent, empty or not a string: unset,
    /// as kubectl treats it).
    Namespaced(Option<String>),
}

/// A document whose strings name the package's own namespace (K0209, `resolve::namespace_strings`).
#[derive(Clone, Debug)]
pub struct NamespaceInStrings {
    /// Index into the package's documents.
    pub document: usize,
    /// The fields, as paths (`spec.template.spec.containers[0].args[1]`, `data.config.yaml`).
    pub fields: Vec<String>,
    /// Where the first of them is.
    pub first_at: Location,
}

/// A custom resource that runs pods which kix derives no spread or budget for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnmanagedCustom {
    /// Index into the package's documents.
    pub document: usize,
    pub kind: String,
    pub name: String,
    pub why: UnmanagedWhy,
}

/// How kix knows that a custom resource runs pods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnmanagedWhy {
    /// A well-known operator's kind (`kix_kube::operators`).
    Operator,
    /// A kind kix has a profile of (built-in or the package's `[kinds]`), which cannot read it: why.
    Unreadable(String),
    /// Its CustomResourceDefinition, shipped in the package, declares this field under `spec`.
    CrdField(&'static str),
}

/// `meta.namespace` and `meta.keepNamespaces`, validated (DNS-1123 labels, no namespace both moved and kept).
#[derive(Clone, Debug, Default)]
pub struct PackageNamespaces {
    /// The namespace the package's YAML was written for: its objects, and references to it, move to the
    /// instance's namespace.
    pub own: Option<Sourced<String>>,
    /// Namespaces whose objects stay where they are, in the order written, each once.
    pub keep: Vec<Sourced<String>>,
}

impl PackageNamespaces {
    /// Whether objects in `namespace` keep it.
    pub fn keeps(&self, namespace: &str) -> bool {
        self.keep.iter().any(|k| k.value == namespace)
    }

    /// Whether `namespace` is the one the package was written for.
    pub fn is_own(&self, namespace: &str) -> bool {
        self.own.as_ref().is_some_and(|own| own.value == namespace)
    }
}

impl Package {
    pub fn subject(&self) -> Subject {
        Subject { package: Some(self.name.clone().into()), ..Subject::default() }
    }
}

/// One Deployment or StatefulSet of a package with its `[workloads.X]` settings, validated.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Index into the package's documents.
    pub document: usize,
    pub view: WorkloadView,
    /// `availability.max` of its entry (R5).
    pub ceiling: Option<Sourced<Level>>,
    /// Its replica mapping (R6), lowest level first: each step's level, count and where the count is written.
    pub steps: Vec<(Level, u32, Location)>,
    /// Where the mapping is written (the whole `replicas = {...}`), when there is one.
    pub mapping_at: Option<Location>,
    /// Where the manifest's `spec.replicas` is written (its `spec` when absent).
    pub spec_replicas_at: Location,
    /// The budget's `unhealthyPodEvictionPolicy`: the entry's override, else by kind (R10).
    pub eviction_policy: EvictionPolicy,
    /// Where the override is written; `None` when the policy is the kind's default.
    pub eviction_policy_at: Option<Location>,
    /// R10: a PodDisruptionBudget shipped in the package selects its pods.
    pub shipped_pdb: bool,
    /// The HorizontalPodAutoscaler or ScaledObject of the package that scales it.
    pub autoscaler: Option<Autoscaler>,
    /// Its `survive` (where written; `one` by default).
    pub survive: Survive,
    pub survive_at: Option<Location>,
    /// The `[groups.X]` it belongs to: an index into the package's `groups`.
    pub group: Option<usize>,
    /// A Rollout's `spec.workloadRef`: the index of the Deployment whose template it runs (derive writes
    /// its spread there).
    pub template_from: Option<usize>,
    /// A custom resource whose operator makes its own PodDisruptionBudget (its profile's `budget`):
    /// kix derives none (R10).
    pub operator_budget: Option<kix_kube::selector::Labels>,
    /// One pod's requests as the scheduler counts them (`kix_kube::requests`), read once from its template
    /// (a Rollout with a workloadRef: the referenced Deployment's, `custom`); kix's patches never touch
    /// them. `None` when a quantity cannot be read (validation reports it).
    pub pod_requests: Option<kix_kube::requests::Requests>,
}

/// A `[groups.X]` of a package, validated: its members, the selector over their pods, its ceiling; or
/// one workload's group across instances (`across`).
#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    /// Where `[groups.X]` is written (its name).
    pub at: Location,
    /// Its members, in document order: each an index into the package's `workloads` and the pattern
    /// that matched it.
    pub members: Vec<GroupMember>,
    /// The labels every member's pod template carries with the same value: the spread constraints'
    /// and the budget's selector.
    pub selector: Labels,
    /// Its `availability.max`.
    pub ceiling: Option<Sourced<Level>>,
    pub survive: Survive,
    pub survive_at: Option<Location>,
    /// The budget's policy: `AlwaysAllow` when every member is a Deployment, else `IfHealthyBudget`.
    pub eviction_policy: EvictionPolicy,
    /// A PodDisruptionBudget shipped in the package selects the group's pods: kix derives none.
    pub shipped_pdb: bool,
    /// Formed by a cluster file's `group` over one workload of several instances (`resolve::across`):
    /// its total is the members' across those instances, and the first of them emits its budget.
    pub across: bool,
}

/// One member of a group.
#[derive(Clone, Debug)]
pub struct GroupMember {
    /// Index into the package's `workloads`.
    pub workload: usize,
    /// The `workloads` pattern that matched it.
    pub pattern_at: Location,
}

/// An autoscaler of the package, bound to the workload it scales.
#[derive(Clone, Debug)]
pub struct Autoscaler {
    /// Index into the package's documents.
    pub document: usize,
    pub view: AutoscalerView,
    /// Where its minimum is written (its `spec` when absent).
    pub min_at: Location,
    /// Where its maximum is written (its `spec` when absent).
    pub max_at: Location,
}

impl Workload {
    pub fn kind(&self) -> WorkloadKind {
        self.view.kind
    }

    pub fn name(&self) -> &str {
        &self.view.name
    }

    /// R6: the step function. A level not named takes the nearest lower one named;
    /// below the lowest named level the manifest's own `spec.replicas` (1 when absent) applies.
    pub fn replicas_at(&self, level: Level) -> (u32, ReplicaSource) {
        match self.steps.iter().rfind(|(step, _, _)| *step <= level) {
            Some((step, count, at)) => (*count, ReplicaSource::Mapping { step: *step, at: at.clone() }),
            None => (
                self.view.manifest_replicas.unwrap_or(1),
                ReplicaSource::Manifest {
                    at: self.spec_replicas_at.clone(),
                    defaulted: self.view.manifest_replicas.is_none(),
                },
            ),
        }
    }

    /// Whether a `none` ceiling (the package's or its own) applies (R7).
    pub fn under_none_ceiling(&self, package: &Package) -> bool {
        package.ceiling.as_ref().is_some_and(|c| c.value == Level::None)
            || self.ceiling.as_ref().is_some_and(|c| c.value == Level::None)
    }
}
