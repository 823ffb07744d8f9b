//! Derive: turn each instance's resolved level into replicas, spread
//! constraints and PodDisruptionBudgets (R5-R12), patching copies of the
//! package's own documents.
//!
//! Every decision is made here and only here; `emit` just serialises. The
//! patches touch exactly the fields kix owns (`metadata.namespace`, two labels,
//! two annotations, `spec.replicas`, the pod template's
//! `topologySpreadConstraints`) and leave every other field, and the order of
//! fields, as the user wrote them.

use crate::diag::{Code, Diagnostic, Diagnostics, Subject};
use crate::kube::kind::WorkloadKind;
use crate::kube::labels::POD_TEMPLATE_HASH;
use crate::kube::workload::Workload as WorkloadView;
use crate::level::Level;
use crate::load::package::EvictionPolicy;
use crate::load::yaml::Document;
use crate::resolve::{Cluster, Instance, Package, Resolved};
use serde_yaml::{Mapping, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Labels kix puts on every object it emits.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// Annotations kix puts on every workload.
pub const REQUESTED_ANNOTATION: &str = "kix.dev/availability-requested";
pub const RESOLVED_ANNOTATION: &str = "kix.dev/availability-resolved";

/// The compiled output of one cluster.
#[derive(Clone, Debug)]
pub struct ClusterPlan {
    pub name: String,
    pub instances: Vec<InstancePlan>,
    /// The Node objects of the cluster's `[[nodePools]]` (empty without an inventory).
    pub nodes: Vec<Value>,
    pub domains: crate::resolve::FailureDomains,
}

/// The compiled output of one instance: its objects in emit order.
#[derive(Clone, Debug)]
pub struct InstancePlan {
    pub name: String,
    pub namespace: String,
    pub package: String,
    /// The package version chosen for the instance (R13).
    pub package_version: String,
    pub requested: Level,
    pub level: Level,
    pub objects: Vec<Value>,
    pub workloads: Vec<WorkloadPlan>,
}

/// What kix decided for one workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadPlan {
    pub kind: WorkloadKind,
    pub name: String,
    pub requested: Level,
    pub level: Level,
    pub replicas: u32,
    /// The topology keys of the derived constraints (empty when none were derived).
    pub spread_keys: Vec<String>,
    /// The key of the one `DoNotSchedule` constraint, if any.
    pub hard_key: Option<String>,
    pub derived_pdb: bool,
    /// R11: the workload brings its own topologySpreadConstraints.
    pub explicit_placement: bool,
}

/// Derives every valid instance of every valid cluster.
pub fn derive(resolved: &Resolved<'_>, diagnostics: &mut Diagnostics) -> Vec<ClusterPlan> {
    let mut plans = Vec::new();
    for cluster in &resolved.clusters {
        let mut instances = Vec::new();
        for instance in &cluster.instances {
            let package = &resolved.packages[instance.package];
            if cluster.valid && package.valid {
                instances.push(derive_instance(cluster, instance, package, diagnostics));
            }
        }
        let overlapping = report_overlapping_workloads(cluster, resolved, diagnostics);
        report_shared_budgets(cluster, resolved, &instances, &overlapping, diagnostics);
        report_objects_shared_across_instances(cluster, &instances, diagnostics);
        let nodes = crate::inventory::nodes(&cluster.file.raw.node_pools, &cluster.domains);
        plans.push(ClusterPlan { name: cluster.name.clone(), instances, nodes, domains: cluster.domains.clone() });
    }
    plans
}

fn derive_instance(
    cluster: &Cluster<'_>,
    instance: &Instance,
    package: &Package<'_>,
    diagnostics: &mut Diagnostics,
) -> InstancePlan {
    let subject = &instance.subject;
    let cluster_scoped_crds = cluster_scoped_custom_kinds(package);
    let mut objects = Vec::new();
    let mut workloads = Vec::new();
    // Where each object came from, index for index with `objects`.
    let mut origins: Vec<Origin> = Vec::new();

    for (index, document) in package.dir.documents.iter().enumerate() {
        let mut value = document.value.clone();
        let namespaced = !is_cluster_scoped(document, &cluster_scoped_crds);
        if namespaced {
            // An empty namespace is unset, as kubectl treats it.
            if let Some(theirs) = document
                .value
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
            {
                if theirs != instance.namespace {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::ForeignNamespace,
                            format!(
                                "{} {} names namespace `{theirs}`, but instance `{}` runs in `{}`",
                                document.kind(),
                                document.name(),
                                instance.name,
                                instance.namespace
                            ),
                        )
                        .at(document.locate(&["metadata", "namespace"]))
                        .about(subject),
                    );
                }
            }
            set_namespace(&mut value, &instance.namespace);
        } else if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_mapping_mut) {
            metadata.remove("namespace");
        }
        set_labels(&mut value, &instance.name);
        objects.push(value);
        origins.push(Origin { document: index, derived_for: None });

        let Some(view) = package.workloads.iter().find(|(i, _)| *i == index).map(|(_, view)| view) else { continue };
        if workloads.iter().any(|w: &WorkloadPlan| w.kind == view.kind && w.name == view.name) {
            // A second copy of a workload: reported as a duplicate object below, derived once.
            continue;
        }
        let plan = plan_workload(cluster, instance, package, document, view, diagnostics);
        let object = objects.last_mut().expect("pushed above");
        patch_workload(object, view, &plan);
        if plan.derived_pdb {
            let settings = package.settings(&view.name);
            let policy = settings
                .and_then(|s| s.pdb.as_ref())
                .and_then(|p| p.unhealthy_pod_eviction_policy.as_ref())
                .map(|p| *p.get_ref())
                .unwrap_or(match view.kind {
                    WorkloadKind::Deployment => EvictionPolicy::AlwaysAllow,
                    WorkloadKind::StatefulSet => EvictionPolicy::IfHealthyBudget,
                });
            let pdb = derived_pdb(view, &instance.namespace, &instance.name, policy);
            objects.push(pdb);
            origins
                .push(Origin { document: index, derived_for: Some(format!("{} {}", view.kind.as_str(), view.name)) });
        }
        workloads.push(plan);
    }
    report_duplicate_objects(&objects, &origins, package, &instance.namespace, subject, diagnostics);
    report_invalid_objects(&objects, &origins, package, subject, diagnostics);

    InstancePlan {
        name: instance.name.clone(),
        namespace: instance.namespace.clone(),
        package: package.name.clone(),
        package_version: package.version.to_string(),
        requested: instance.requested,
        level: instance.level,
        objects,
        workloads,
    }
}

/// R5-R11 for one workload: its level, replicas and what to derive.
fn plan_workload(
    cluster: &Cluster<'_>,
    instance: &Instance,
    package: &Package<'_>,
    document: &Document,
    view: &WorkloadView,
    diagnostics: &mut Diagnostics,
) -> WorkloadPlan {
    let subject = Subject { workload: Some(view.name.clone()), ..instance.subject.clone() };
    let settings = package.settings(&view.name);
    let manifest_location = package.dir.manifest.clone();
    let workload_ceiling =
        settings.and_then(|s| s.availability.as_ref()).and_then(|a| a.max.as_ref()).map(|m| (*m.get_ref(), m.span()));

    // R5: a workload ceiling lowers this workload only.
    let mut level = instance.level;
    if let Some((ceiling, span)) = workload_ceiling.clone() {
        if ceiling < level {
            diagnostics.push(
                Diagnostic::new(
                    Code::WorkloadCeiling,
                    format!(
                        "cluster `{}` instance `{}`: workload `{}` of package `{}` supports at most `{ceiling}`, \
                         so it runs at `{ceiling}` instead of `{level}`",
                        cluster.name, instance.name, view.name, package.name
                    ),
                )
                .at(manifest_location.locate(span))
                .about(&subject),
            );
            level = ceiling;
        }
    }

    // R6: replicas from the step function, else the manifest's.
    let mapping = settings.and_then(|s| s.replicas.as_ref());
    let replicas = replicas_at(mapping.map(|m| m.get_ref()), view.manifest_replicas, level);
    let replicas_location = || match mapping {
        Some(m) => manifest_location.locate(m.span()),
        None => document.locate(&["spec", "replicas"]),
    };

    // R7: a none ceiling means one pod at a time.
    let none_ceiling = package.ceiling == Some(Level::None) || workload_ceiling.is_some_and(|(c, _)| c == Level::None);
    if none_ceiling && replicas > 1 {
        diagnostics.push(
            Diagnostic::new(
                Code::CeilingNoneManyReplicas,
                format!(
                    "workload `{}` runs under a `none` ceiling but would run {replicas} replicas at `{level}`",
                    view.name
                ),
            )
            .at(replicas_location())
            .about(&subject)
            .help("a none ceiling declares the workload can run only one pod at a time; set its replicas to 1"),
        );
    }

    // R8: a level of pod or more needs two replicas.
    if level >= Level::Pod && replicas < 2 {
        diagnostics.push(
            Diagnostic::new(
                Code::TooFewReplicas,
                format!(
                    "workload `{}` resolves to level `{level}` but runs {replicas} replica{}; one replica cannot survive \
                     losing a pod",
                    view.name,
                    if replicas == 1 { "" } else { "s" }
                ),
            )
            .at(replicas_location())
            .about(&subject)
            .help(format!(
                "add a mapping such as [workloads.{0}] replicas = {{ none = 1, pod = 2 }}, or, if it can only run \
                 one pod at a time, declare [workloads.{0}] availability = {{ max = \"none\" }}",
                view.name
            )),
        );
    }

    // R9-R11: what to derive.
    let derives = replicas >= 2 && !view.explicit_spread && !cluster.substrate.single_node();
    let (spread_keys, hard_key) = if derives { spread_keys(cluster, level) } else { (Vec::new(), None) };
    let shipped_pdb = package.pdbs.iter().any(|(_, pdb)| pdb.selects(&view.template_labels));
    if view.explicit_spread && replicas >= 2 && !shipped_pdb {
        diagnostics.push(
            Diagnostic::new(
                Code::ExplicitPlacementWithoutPdb,
                format!(
                    "workload `{}` brings its own topologySpreadConstraints, so kix derives no spread and no PDB for \
                     it, and no PodDisruptionBudget of instance `{}` selects its pods",
                    view.name, instance.name
                ),
            )
            .at(document.locate(&["spec", "template", "spec", "topologySpreadConstraints"]))
            .about(&subject)
            .help("ship a PodDisruptionBudget (maxUnavailable: 1) with the package"),
        );
    }
    WorkloadPlan {
        kind: view.kind,
        name: view.name.clone(),
        requested: instance.requested,
        level,
        replicas,
        spread_keys,
        hard_key,
        derived_pdb: derives && !shipped_pdb,
        explicit_placement: view.explicit_spread,
    }
}

/// R6: the step function. A level not named takes the nearest lower one named;
/// below the lowest named level the manifest's own `spec.replicas` (1 when absent) applies.
pub fn replicas_at(mapping: Option<&crate::load::package::RawReplicas>, manifest: Option<u32>, level: Level) -> u32 {
    mapping
        .and_then(|m| m.steps().into_iter().rfind(|(step, _)| *step <= level).map(|(_, n)| *n.get_ref()))
        .unwrap_or(manifest.unwrap_or(1))
}

/// R9: the topology keys to spread over and the one that is hard.
pub fn spread_keys(cluster: &Cluster<'_>, level: Level) -> (Vec<String>, Option<String>) {
    let domains = &cluster.domains;
    let mut keys = vec![domains.node.clone()];
    let zones_declared = cluster.substrate.zone_count() >= 2;
    let zones_unknown = cluster.substrate.zones.is_none();
    if zones_declared || (level == Level::Zone && zones_unknown) {
        keys.push(domains.zone.clone());
    }
    keys.extend(domains.extra.iter().cloned());
    let hard = match level {
        Level::Node => Some(domains.node.clone()),
        Level::Zone => Some(domains.zone.clone()),
        Level::None | Level::Pod => None,
    };
    (keys, hard)
}

/// Applies a plan to the workload's copied document.
fn patch_workload(object: &mut Value, view: &WorkloadView, plan: &WorkloadPlan) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) {
        let annotations = mapping_entry(metadata, "annotations");
        annotations.insert(REQUESTED_ANNOTATION.into(), plan.requested.as_str().into());
        annotations.insert(RESOLVED_ANNOTATION.into(), plan.level.as_str().into());
    }
    let Some(spec) = object.get_mut("spec").and_then(Value::as_mapping_mut) else { return };
    insert_first(spec, "replicas", Value::from(plan.replicas));
    if plan.spread_keys.is_empty() {
        return;
    }
    let constraints: Vec<Value> = plan
        .spread_keys
        .iter()
        .map(|key| spread_constraint(view, key, plan.hard_key.as_deref() == Some(key)))
        .collect();
    if let Some(pod_spec) = spec.get_mut("template").and_then(|t| t.get_mut("spec")).and_then(Value::as_mapping_mut) {
        pod_spec.insert("topologySpreadConstraints".into(), Value::Sequence(constraints));
    }
}

/// One derived constraint, fields in the order people write them.
fn spread_constraint(view: &WorkloadView, key: &str, hard: bool) -> Value {
    let mut constraint = Mapping::new();
    constraint.insert("maxSkew".into(), 1.into());
    constraint.insert("topologyKey".into(), key.into());
    constraint.insert("whenUnsatisfiable".into(), if hard { "DoNotSchedule" } else { "ScheduleAnyway" }.into());
    constraint.insert("labelSelector".into(), view.selector_value.clone());
    // Only Deployments have pod-template-hash; the API server refuses a key the selector already uses.
    if view.kind == WorkloadKind::Deployment && !view.selector.keys().any(|k| k == POD_TEMPLATE_HASH) {
        constraint.insert("matchLabelKeys".into(), Value::Sequence(vec![POD_TEMPLATE_HASH.into()]));
    }
    constraint.insert("nodeTaintsPolicy".into(), "Honor".into());
    Value::Mapping(constraint)
}

/// R10: the derived budget.
fn derived_pdb(view: &WorkloadView, namespace: &str, instance: &str, policy: EvictionPolicy) -> Value {
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), view.name.clone().into());
    metadata.insert("namespace".into(), namespace.into());
    let mut spec = Mapping::new();
    spec.insert("maxUnavailable".into(), 1.into());
    spec.insert("selector".into(), view.selector_value.clone());
    spec.insert("unhealthyPodEvictionPolicy".into(), policy.as_str().into());
    let mut pdb = Mapping::new();
    pdb.insert("apiVersion".into(), "policy/v1".into());
    pdb.insert("kind".into(), "PodDisruptionBudget".into());
    pdb.insert("metadata".into(), Value::Mapping(metadata));
    pdb.insert("spec".into(), Value::Mapping(spec));
    let mut pdb = Value::Mapping(pdb);
    set_labels(&mut pdb, instance);
    pdb
}

fn set_namespace(object: &mut Value, namespace: &str) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) {
        if metadata.contains_key("namespace") {
            metadata.insert("namespace".into(), namespace.into());
        } else {
            insert_after(metadata, "name", "namespace", namespace.into());
        }
    }
}

fn set_labels(object: &mut Value, instance: &str) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) {
        let labels = mapping_entry(metadata, "labels");
        labels.insert(MANAGED_BY_LABEL.into(), "kix".into());
        labels.insert(INSTANCE_LABEL.into(), instance.into());
    }
}

/// The mapping under `key`, created (at the end) when absent or null.
fn mapping_entry<'m>(map: &'m mut Mapping, key: &str) -> &'m mut Mapping {
    if !map.get(key).is_some_and(Value::is_mapping) {
        map.insert(key.into(), Value::Mapping(Mapping::new()));
    }
    map.get_mut(key).and_then(Value::as_mapping_mut).expect("inserted above")
}

/// Sets `key`, keeping its position when present and putting it first otherwise.
fn insert_first(map: &mut Mapping, key: &str, value: Value) {
    if map.contains_key(key) {
        map.insert(key.into(), value);
        return;
    }
    let old = std::mem::take(map);
    map.insert(key.into(), value);
    map.extend(old);
}

/// Inserts `key` right after `after` (or at the end when `after` is absent).
fn insert_after(map: &mut Mapping, after: &str, key: &str, value: Value) {
    let old = std::mem::take(map);
    let mut placed = false;
    for (k, v) in old {
        let is_anchor = k.as_str() == Some(after);
        map.insert(k, v);
        if is_anchor {
            map.insert(key.into(), value.clone());
            placed = true;
        }
    }
    if !placed {
        map.insert(key.into(), value);
    }
}

/// Where an emitted object came from: a user's document, or derived for the workload in that document.
struct Origin {
    /// Index into the package's documents.
    document: usize,
    derived_for: Option<String>,
}

/// Every emitted object must pass kix's own Kubernetes validation: a manifest the API server
/// refuses fails the GitOps sync long after `kix build` said it was fine. Users' objects get one
/// error each (located at the first bad field); a derived object that fails is a kix bug.
fn report_invalid_objects(
    objects: &[Value],
    origins: &[Origin],
    package: &Package<'_>,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    for (object, origin) in objects.iter().zip(origins) {
        let problems = crate::kube::validate::validate_object(object);
        let Some(first) = problems.first() else { continue };
        let join = |problems: &[crate::kube::validate::ObjectError]| {
            problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
        };
        let document = package.document(origin.document);
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
        let (message, location) = match &origin.derived_for {
            Some(workload) => (
                format!(
                    "kix derived an invalid {kind} {name} for {workload} (a kix bug; please report it): {}",
                    join(&problems)
                ),
                document.location(),
            ),
            None => (
                format!("{kind} {name} would be refused by the API server: {}", join(&problems)),
                document.locate(&first.keys()),
            ),
        };
        diagnostics.push(Diagnostic::new(Code::InvalidObject, message).at(location).about(subject));
    }
}

/// Two objects of one instance with the same group, kind and name would overwrite each other on apply.
fn report_duplicate_objects(
    objects: &[Value],
    origins: &[Origin],
    package: &Package<'_>,
    namespace: &str,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    let identity = |object: &Value| {
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let group = crate::load::yaml::api_group(api_version).to_string();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
        (group, kind, name.to_string())
    };
    let mut first_seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for (index, object) in objects.iter().enumerate() {
        let key = identity(object);
        let Some(&first) = first_seen.get(&key) else {
            first_seen.insert(key, index);
            continue;
        };
        let (_, kind, name) = &key;
        let describe = |origin: &Origin| match &origin.derived_for {
            Some(workload) => format!("the one kix derives for {workload}"),
            None => {
                let at = package.document(origin.document).location();
                format!("{}{}", at.file.display(), at.line.map_or(String::new(), |l| format!(":{l}")))
            }
        };
        // Point at a user's document: the second one when both are, else whichever is.
        let (here, other) = if origins[index].derived_for.is_none() {
            (&origins[index], &origins[first])
        } else {
            (&origins[first], &origins[index])
        };
        diagnostics.push(
            Diagnostic::new(
                Code::DuplicateObject,
                format!("{kind} {name} is defined twice in namespace `{namespace}`: here and {}", describe(other)),
            )
            .at(package.document(here.document).location())
            .about(subject),
        );
    }
}

/// Well-known cluster-scoped kinds, by (group, kind).
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("node.k8s.io", "RuntimeClass"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("resource.k8s.io", "DeviceClass"),
];

/// Kinds the package's own CustomResourceDefinitions declare cluster-scoped, by (group, kind).
fn cluster_scoped_custom_kinds(package: &Package<'_>) -> BTreeSet<(String, String)> {
    package
        .dir
        .documents
        .iter()
        .filter(|d| d.group() == "apiextensions.k8s.io" && d.kind() == "CustomResourceDefinition")
        .filter_map(|d| {
            let spec = d.value.get("spec")?;
            (spec.get("scope")?.as_str()? == "Cluster").then(|| {
                let group = spec.get("group").and_then(Value::as_str).unwrap_or_default().to_string();
                let kind = spec.get("names").and_then(|n| n.get("kind")).and_then(Value::as_str).unwrap_or_default();
                (group, kind.to_string())
            })
        })
        .collect()
}

/// Whether an object lives outside namespaces. Unknown kinds are taken as namespaced (as custom resources
/// usually are) unless a CRD in the same package says otherwise.
fn is_cluster_scoped(document: &Document, custom: &BTreeSet<(String, String)>) -> bool {
    let (group, kind) = (document.group(), document.kind());
    CLUSTER_SCOPED.contains(&(group, kind)) || custom.contains(&(group.to_string(), kind.to_string()))
}

/// Two instances of one cluster must not emit the same object (same namespace, or both
/// cluster-scoped, and the same group, kind and name): applied together, the second silently
/// overwrites the first, and kustomize refuses the pair.
fn report_objects_shared_across_instances(
    cluster: &Cluster<'_>,
    plans: &[InstancePlan],
    diagnostics: &mut Diagnostics,
) {
    let mut first_owner: BTreeMap<(String, String, String, String), &str> = BTreeMap::new();
    for plan in plans {
        // Per earlier instance: the objects this one emits again (one diagnostic per pair of instances).
        let mut clashes: BTreeMap<&str, Vec<(String, String, String)>> = BTreeMap::new();
        for object in &plan.objects {
            let text = |path: &[&str]| {
                path.iter().try_fold(object, |v, k| v.get(k)).and_then(Value::as_str).unwrap_or_default().to_string()
            };
            let group = crate::load::yaml::api_group(&text(&["apiVersion"])).to_string();
            let key = (text(&["metadata", "namespace"]), group, text(&["kind"]), text(&["metadata", "name"]));
            match first_owner.get(&key) {
                Some(owner) if *owner != plan.name => {
                    clashes.entry(owner).or_default().push((key.0.clone(), key.2.clone(), key.3.clone()))
                }
                Some(_) => {}
                None => {
                    first_owner.insert(key, plan.name.as_str());
                }
            }
        }
        let instance = cluster.instances.iter().find(|i| i.name == plan.name);
        for (owner, objects) in clashes {
            let (namespace, kind, name) = &objects[0];
            let place =
                if namespace.is_empty() { "cluster-scoped".to_string() } else { format!("in namespace `{namespace}`") };
            let more = match objects.len() {
                1 => String::new(),
                n => format!(" and {} more object{}", n - 1, if n == 2 { "" } else { "s" }),
            };
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateObject,
                    format!(
                        "{kind} {name} ({place}){more} are emitted by both instance `{owner}` and instance `{}` of \
                         cluster `{}`: applied together, one overwrites the other",
                        plan.name, cluster.name
                    ),
                )
                .at_opt(instance.map(|i| i.location.clone()))
                .about(instance.map_or(&cluster.subject(), |i| &i.subject)),
            );
        }
    }
}

/// A pod selected by two PodDisruptionBudgets cannot be evicted at all (the eviction API refuses
/// it), so every drain of its node blocks. Budgets come from every instance of the cluster that
/// shares the namespace: shipped ones and the ones kix derives.
fn report_shared_budgets(
    cluster: &Cluster<'_>,
    resolved: &Resolved<'_>,
    plans: &[InstancePlan],
    overlapping: &BTreeSet<(String, String)>,
    diagnostics: &mut Diagnostics,
) {
    let mut budgets: Vec<(&str, String, crate::kube::selector::Selector)> = Vec::new();
    // A budget two instances both emit is one object (reported as a duplicate, K0412): count it once.
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for plan in plans {
        for object in &plan.objects {
            let is_pdb = object.get("kind").and_then(Value::as_str) == Some("PodDisruptionBudget")
                && object.get("apiVersion").and_then(Value::as_str).map(crate::load::yaml::api_group) == Some("policy");
            let selector = object.get("spec").and_then(|s| s.get("selector")).filter(|s| !s.is_null());
            let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
            if is_pdb && !seen.insert((plan.namespace.as_str(), name)) {
                continue;
            }
            if let (true, Some(Ok(selector))) = (is_pdb, selector.map(crate::kube::selector::Selector::from_value)) {
                budgets.push((plan.namespace.as_str(), format!("{name} (instance `{}`)", plan.name), selector));
            }
        }
    }
    for instance in &cluster.instances {
        if !plans.iter().any(|p| p.name == instance.name) {
            continue;
        }
        let package = &resolved.packages[instance.package];
        for (index, view) in &package.workloads {
            // Overlapping selectors (K0406) already explain why two budgets cover these pods.
            if overlapping.contains(&(instance.name.clone(), view.name.clone())) {
                continue;
            }
            let covering: Vec<&str> = budgets
                .iter()
                .filter(|(namespace, _, selector)| {
                    *namespace == instance.namespace && selector.matches(&view.template_labels)
                })
                .map(|(_, name, _)| name.as_str())
                .collect();
            if covering.len() > 1 {
                diagnostics.push(
                    Diagnostic::new(
                        Code::SharedBudget,
                        format!(
                            "the pods of {} {} in namespace `{}` are selected by {} PodDisruptionBudgets: {}; the \
                             eviction API refuses to evict such a pod, so every drain of its node blocks",
                            view.kind.as_str(),
                            view.name,
                            instance.namespace,
                            covering.len(),
                            covering.join(", ")
                        ),
                    )
                    .at(package.document(*index).locate(&["spec", "selector"]))
                    .about(&Subject { workload: Some(view.name.clone()), ..instance.subject.clone() }),
                );
            }
        }
    }
}

/// R12: two workloads of one cluster and namespace must not select each other's pods.
/// Returns the (instance, workload) pairs involved in an overlap.
fn report_overlapping_workloads(
    cluster: &Cluster<'_>,
    resolved: &Resolved<'_>,
    diagnostics: &mut Diagnostics,
) -> BTreeSet<(String, String)> {
    let mut involved = BTreeSet::new();
    struct Entry<'a> {
        namespace: &'a str,
        instance: &'a Instance,
        document: &'a Document,
        view: &'a WorkloadView,
    }
    let mut entries = Vec::new();
    for instance in &cluster.instances {
        let package = &resolved.packages[instance.package];
        for (index, view) in &package.workloads {
            entries.push(Entry { namespace: &instance.namespace, instance, document: package.document(*index), view });
        }
    }
    let describe = |e: &Entry<'_>| format!("{} {} (instance `{}`)", e.view.kind.as_str(), e.view.name, e.instance.name);
    for (i, a) in entries.iter().enumerate() {
        for b in entries.iter().skip(i + 1) {
            // The same object twice (in one instance, or in two instances sharing the namespace) is reported
            // as a duplicate (K0412), not as an overlap with itself.
            let same_object = a.view.kind == b.view.kind && a.view.name == b.view.name;
            if a.namespace != b.namespace || same_object {
                continue;
            }
            let a_selects_b = a.view.selector.matches(&b.view.template_labels);
            let b_selects_a = b.view.selector.matches(&a.view.template_labels);
            let message = match (a_selects_b, b_selects_a) {
                (false, false) => continue,
                (true, true) => format!("{} and {} select each other's pods", describe(a), describe(b)),
                (true, false) => format!("the selector of {} also selects the pods of {}", describe(a), describe(b)),
                (false, true) => format!("the selector of {} also selects the pods of {}", describe(b), describe(a)),
            };
            let at = if a_selects_b { a } else { b };
            involved.insert((a.instance.name.clone(), a.view.name.clone()));
            involved.insert((b.instance.name.clone(), b.view.name.clone()));
            diagnostics.push(
                Diagnostic::new(
                    Code::OverlappingSelectors,
                    format!("{message} in namespace `{}` of cluster `{}`", a.namespace, cluster.name),
                )
                .at(at.document.locate(&["spec", "selector"]))
                .about(&Subject { workload: Some(at.view.name.clone()), ..at.instance.subject.clone() }),
            );
        }
    }
    involved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestTree, cluster_toml, workload_yaml};

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
        let object = &compiled.instance("c", "app").objects[0];
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

    // R5: a workload ceiling lowers that workload only, with a warning.
    #[test]
    fn r5_workload_ceiling_lowers_one_workload() {
        let yaml = format!(
            "{}---\n{}",
            workload_yaml("Deployment", "leader", None, ""),
            workload_yaml("Deployment", "api", None, "")
        );
        let package = web(
            "[workloads.leader]\navailability = { max = \"none\" }\n[workloads.api]\nreplicas = { none = 1, pod = 2, zone = 3 }\n",
            &yaml,
        );
        let compiled = compile_one("zone", THREE_ZONES, package);
        assert_eq!(compiled.codes(), vec![Code::WorkloadCeiling]);
        assert_eq!(compiled.workload("c", "app", "leader").level, Level::None);
        assert_eq!(compiled.workload("c", "app", "leader").replicas, 1);
        assert_eq!(compiled.workload("c", "app", "api").level, Level::Zone);
        assert_eq!(compiled.workload("c", "app", "api").replicas, 3);
    }

    // R6: the step function, its monotonicity, and the manifest fallback.
    #[test]
    fn r6_replicas_step_function() {
        let package = |map: &str| {
            web(&format!("[workloads.w]\nreplicas = {map}\n"), &workload_yaml("Deployment", "w", Some(1), ""))
        };
        let cases = [
            ("{ none = 1, pod = 2, zone = 3 }", "node", 2),
            ("{ none = 1, pod = 2, zone = 3 }", "zone", 3),
            ("{ none = 1, pod = 2, zone = 3 }", "pod", 2),
            ("{ pod = 2 }", "none", 1),
            ("{ pod = 2 }", "zone", 2),
            ("{ none = 2, node = 4 }", "pod", 2),
        ];
        for (map, level, expected) in cases {
            let compiled = compile_one(level, THREE_ZONES, package(map));
            assert_eq!(
                compiled.workload("c", "app", "w").replicas,
                expected,
                "{map} at {level}: {:?}",
                compiled.messages()
            );
            assert_eq!(compiled.instance("c", "app").objects[0]["spec"]["replicas"].as_u64(), Some(expected as u64));
        }
    }

    #[test]
    fn r6_decreasing_mapping_is_an_error() {
        let compiled = compile_one(
            "zone",
            THREE_ZONES,
            web("[workloads.w]\nreplicas = { none = 3, zone = 2 }\n", &workload_yaml("Deployment", "w", None, "")),
        );
        assert_eq!(compiled.codes(), vec![Code::DecreasingReplicas]);
        assert!(compiled.messages()[0].contains("decrease from 3 at none to 2 at zone"));
    }

    #[test]
    fn r6_the_manifest_base_counts_as_a_step() {
        // spec.replicas 5 applies below `pod`; 2 at pod would be a decrease.
        let compiled = compile_one(
            "pod",
            THREE_ZONES,
            web("[workloads.w]\nreplicas = { pod = 2 }\n", &workload_yaml("Deployment", "w", Some(5), "")),
        );
        assert_eq!(compiled.codes(), vec![Code::DecreasingReplicas]);
        assert!(
            compiled.messages()[0].contains("decrease from 5 (the manifest's spec.replicas"),
            "{:?}",
            compiled.messages()
        );
    }

    #[test]
    fn r11_a_null_constraint_list_is_absent() {
        let yaml = workload_yaml("Deployment", "d", Some(2), "      topologySpreadConstraints: null\n");
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
        assert!(compiled.workload("c", "app", "d").derived_pdb);
        assert_eq!(constraints(&compiled), vec![("kubernetes.io/hostname".to_string(), "DoNotSchedule".to_string())]);
    }

    #[test]
    fn r6_no_mapping_keeps_manifest_replicas() {
        for (replicas, expected) in [(Some(4), 4), (None, 1)] {
            let compiled = compile_one("none", MULTI_NODE, web("", &workload_yaml("Deployment", "w", replicas, "")));
            assert_eq!(compiled.workload("c", "app", "w").replicas, expected);
        }
    }

    // R7: a none ceiling refuses more than one replica.
    #[test]
    fn r7_none_ceiling_refuses_many_replicas() {
        let workload_ceiling =
            web("[workloads.w]\navailability = { max = \"none\" }\n", &workload_yaml("Deployment", "w", Some(2), ""));
        assert_eq!(
            compile_one("node", MULTI_NODE, workload_ceiling).codes(),
            vec![Code::WorkloadCeiling, Code::CeilingNoneManyReplicas]
        );
        let package_ceiling = (
            "[meta]\nname = \"web\"\nversion = \"1.0.0\"\navailability = { max = \"none\" }\n".to_string(),
            workload_yaml("Deployment", "w", Some(3), ""),
        );
        let codes = compile_one("none", MULTI_NODE, package_ceiling).codes();
        assert_eq!(codes, vec![Code::CeilingNoneManyReplicas]);
    }

    // R8: pod or higher needs two replicas, and the message says how to fix it.
    #[test]
    fn r8_too_few_replicas_explains_the_fix() {
        let compiled = compile_one("pod", MULTI_NODE, web("", &workload_yaml("Deployment", "w", None, "")));
        assert_eq!(compiled.codes(), vec![Code::TooFewReplicas]);
        let help = compiled.diagnostics.iter().next().unwrap().help.clone().unwrap();
        assert!(help.contains("replicas = { none = 1, pod = 2 }") && help.contains("max = \"none\""), "{help}");
    }

    // R9: which keys, which is hard, and the exact shape of a derived constraint.
    #[test]
    fn r9_spread_keys_table() {
        let mapping = "[workloads.w]\nreplicas = { none = 2 }\n";
        let yaml = workload_yaml("Deployment", "w", None, "");
        let dns = "DoNotSchedule";
        let soft = "ScheduleAnyway";
        let host = "kubernetes.io/hostname";
        let zone = "topology.kubernetes.io/zone";
        let s = |pairs: &[(&str, &str)]| pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        type Case<'a> = (&'a str, &'a str, Vec<(String, String)>);
        let cases: Vec<Case> = vec![
            ("zone", THREE_ZONES, s(&[(host, soft), (zone, dns)])),
            ("node", THREE_ZONES, s(&[(host, dns), (zone, soft)])),
            ("pod", THREE_ZONES, s(&[(host, soft), (zone, soft)])),
            ("none", THREE_ZONES, s(&[(host, soft), (zone, soft)])),
            ("node", ONE_ZONE, s(&[(host, dns)])),
            ("node", MULTI_NODE, s(&[(host, dns)])),
            // Zones unknown at level zone: the zone key is used (R3 warned).
            ("zone", MULTI_NODE, s(&[(host, soft), (zone, dns)])),
            ("none", SINGLE_NODE, vec![]),
        ];
        for (level, capabilities, expected) in cases {
            let compiled = compile_one(level, capabilities, web(mapping, &yaml));
            assert_eq!(constraints(&compiled), expected, "{level} on {capabilities}");
        }
    }

    #[test]
    fn r9_extra_keys_and_exact_constraint_fields() {
        let cluster = "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\"]\n\
                       [failureDomains]\nextra = [\"example.com/rack\"]\n[[instances]]\nname = \"app\"\npackage = \"web\"\n";
        let (toml, yaml) =
            web("[workloads.w]\nreplicas = { none = 2 }\n", &workload_yaml("StatefulSet", "w", None, ""));
        let compiled = TestTree::new().cluster("c", cluster).package("web", &toml, &[("w.yaml", &yaml)]).compile();
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
        let keys: Vec<String> = constraints(&compiled).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "example.com/rack"]);
        let constraint =
            &compiled.instance("c", "app").objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"][1];
        let expected: Value = serde_yaml::from_str(
            "maxSkew: 1\ntopologyKey: topology.kubernetes.io/zone\nwhenUnsatisfiable: DoNotSchedule\n\
             labelSelector:\n  matchLabels:\n    app: w\nnodeTaintsPolicy: Honor\n",
        )
        .unwrap();
        // A StatefulSet gets no matchLabelKeys (it has no pod-template-hash).
        assert_eq!(constraint, &expected);
    }

    #[test]
    fn r9_deployments_get_pod_template_hash_and_other_kinds_pass_through() {
        let yaml = format!(
            "{}---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector: {{matchLabels: {{app: agent}}}}\n  template:\n    metadata: {{labels: {{app: agent}}}}\n    spec: {{containers: [{{name: a, image: a}}]}}\n",
            workload_yaml("Deployment", "w", Some(2), "")
        );
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        let objects = &compiled.instance("c", "app").objects;
        let constraint = &objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"][0];
        assert_eq!(constraint["matchLabelKeys"], serde_yaml::from_str::<Value>("[pod-template-hash]").unwrap());
        let daemonset = objects.iter().find(|o| o["kind"] == "DaemonSet").unwrap();
        assert!(daemonset["spec"]["template"]["spec"].get("topologySpreadConstraints").is_none());
        assert_eq!(daemonset["spec"].get("replicas"), None);
    }

    #[test]
    fn r9_workload_entry_without_workload_is_an_error() {
        let compiled = compile_one(
            "none",
            MULTI_NODE,
            web("[workloads.ghost]\nreplicas = { none = 1 }\n", &workload_yaml("Deployment", "w", None, "")),
        );
        assert_eq!(compiled.codes(), vec![Code::UnknownWorkload]);
        assert!(compiled.diagnostics.iter().next().unwrap().help.as_deref().unwrap().contains("Deployment w"));
    }

    // R10: one PDB per derived workload, with the kind's eviction policy, unless one is shipped.
    #[test]
    fn r10_derived_pdb_shape_and_policy() {
        let yaml = format!(
            "{}---\n{}",
            workload_yaml("Deployment", "d", Some(2), ""),
            workload_yaml("StatefulSet", "s", Some(3), "")
        );
        let compiled = compile_one(
            "node",
            MULTI_NODE,
            web("[workloads.s.pdb]\nunhealthyPodEvictionPolicy = \"AlwaysAllow\"\n", &yaml),
        );
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.messages());
        let objects = &compiled.instance("c", "app").objects;
        let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["Deployment", "PodDisruptionBudget", "StatefulSet", "PodDisruptionBudget"]);
        let expected: Value = serde_yaml::from_str(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: d\n  namespace: app\n  labels:\n    \
             app.kubernetes.io/managed-by: kix\n    app.kubernetes.io/instance: app\nspec:\n  maxUnavailable: 1\n  \
             selector:\n    matchLabels:\n      app: d\n  unhealthyPodEvictionPolicy: AlwaysAllow\n",
        )
        .unwrap();
        assert_eq!(objects[1], expected);
        assert_eq!(objects[3]["spec"]["unhealthyPodEvictionPolicy"], "AlwaysAllow");

        let default_policy = compile_one("node", MULTI_NODE, web("", &workload_yaml("StatefulSet", "s", Some(3), "")));
        assert_eq!(
            default_policy.instance("c", "app").objects[1]["spec"]["unhealthyPodEvictionPolicy"],
            "IfHealthyBudget"
        );
    }

    #[test]
    fn r10_shipped_pdb_suppresses_the_derived_one() {
        let yaml = format!(
            "{}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: mine\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels: {{app: d}}\n",
            workload_yaml("Deployment", "d", Some(2), "")
        );
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        let objects = &compiled.instance("c", "app").objects;
        assert_eq!(objects.iter().filter(|o| o["kind"] == "PodDisruptionBudget").count(), 1);
        assert!(!compiled.workload("c", "app", "d").derived_pdb);
        // Spread is still derived.
        assert!(objects[0]["spec"]["template"]["spec"].get("topologySpreadConstraints").is_some());
    }

    #[test]
    fn r10_one_replica_gets_neither_spread_nor_pdb() {
        let compiled = compile_one("none", THREE_ZONES, web("", &workload_yaml("Deployment", "d", Some(1), "")));
        let objects = &compiled.instance("c", "app").objects;
        assert_eq!(objects.len(), 1);
        assert!(objects[0]["spec"]["template"]["spec"].get("topologySpreadConstraints").is_none());
    }

    // R11: explicit placement (even an empty list) takes ownership.
    #[test]
    fn r11_explicit_placement_is_left_alone() {
        let yaml = workload_yaml("Deployment", "d", None, "      topologySpreadConstraints: []\n");
        let compiled = compile_one("node", MULTI_NODE, web("[workloads.d]\nreplicas = { none = 1, pod = 2 }\n", &yaml));
        assert_eq!(compiled.codes(), vec![Code::ExplicitPlacementWithoutPdb]);
        let objects = &compiled.instance("c", "app").objects;
        assert_eq!(objects.len(), 1, "no PDB derived");
        assert_eq!(objects[0]["spec"]["template"]["spec"]["topologySpreadConstraints"], Value::Sequence(vec![]));
        assert_eq!(objects[0]["spec"]["replicas"], 2, "replicas are still derived");
    }

    // R12: selector hygiene.
    #[test]
    fn r12_selector_must_select_own_template() {
        let yaml = workload_yaml("Deployment", "d", Some(2), "")
            .replace("      labels:\n        app: d", "      labels:\n        app: other");
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        assert_eq!(compiled.codes(), vec![Code::SelectorMismatch]);
    }

    #[test]
    fn r12_overlapping_workloads_in_one_namespace() {
        // `broad` selects tier=web, which both templates carry.
        let broad = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: broad\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {tier: web}\n  template:\n    metadata:\n      labels: {tier: web, app: broad}\n    spec:\n      containers: [{name: a, image: a}]\n";
        let narrow = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: narrow\nspec:\n  replicas: 2\n  selector:\n    matchExpressions: [{key: app, operator: In, values: [narrow]}]\n  template:\n    metadata:\n      labels: {tier: web, app: narrow}\n    spec:\n      containers: [{name: a, image: a}]\n";
        let compiled = compile_one("node", MULTI_NODE, web("", &format!("{broad}---\n{narrow}")));
        assert_eq!(compiled.codes(), vec![Code::OverlappingSelectors]);
        assert!(
            compiled.messages()[0].contains(
                "the selector of Deployment broad (instance `app`) also selects the pods of Deployment narrow"
            )
        );
    }

    #[test]
    fn r12_overlap_across_instances_only_in_the_same_namespace() {
        // Two workloads of different names whose pods carry the same labels.
        let pkg = |name: &str| {
            let yaml = workload_yaml("Deployment", "same", Some(2), "")
                .replace("metadata:\n  name: same", &format!("metadata:\n  name: {name}"));
            (format!("[meta]\nname = \"{name}\"\nversion = \"1.0.0\"\n"), yaml)
        };
        let (a, ay) = pkg("a");
        let (b, by) = pkg("b");
        let cluster = |ns: &str| {
            format!(
                "availability = \"node\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"one\"\npackage = \"a\"\nnamespace = \"shared\"\n[[instances]]\nname = \"two\"\npackage = \"b\"\nnamespace = \"{ns}\"\n"
            )
        };
        let tree = |ns: &str| {
            TestTree::new().cluster("c", &cluster(ns)).package("a", &a, &[("w.yaml", &ay)]).package(
                "b",
                &b,
                &[("w.yaml", &by)],
            )
        };
        assert_eq!(tree("shared").compile().codes(), vec![Code::OverlappingSelectors]);
        assert!(tree("apart").compile().diagnostics.is_empty());
    }

    #[test]
    fn a_budget_of_another_instance_over_the_same_pods_is_an_error() {
        let api = workload_yaml("Deployment", "api", Some(2), "")
            .replace("        app: api\n", "        app: api\n        tier: web\n");
        let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels: {tier: web}\n";
        let cluster = "availability = \"node\"\n[capabilities]\nmultiNode = true\n[[instances]]\nname = \"i\"\npackage = \"p\"\nnamespace = \"shared\"\n[[instances]]\nname = \"j\"\npackage = \"q\"\nnamespace = \"shared\"\n";
        let tree = TestTree::new()
            .cluster("c", cluster)
            .package("p", "[meta]\nname = \"p\"\nversion = \"1.0.0\"\n", &[("a.yaml", &api)])
            .package("q", "[meta]\nname = \"q\"\nversion = \"1.0.0\"\n", &[("pdb.yaml", pdb)]);
        let compiled = tree.compile();
        assert_eq!(compiled.codes(), vec![Code::SharedBudget]);
        assert!(compiled.messages()[0].contains("api (instance `i`), web (instance `j`)"), "{:?}", compiled.messages());
    }

    #[test]
    fn r12_shipped_pdb_over_two_workloads_warns() {
        let yaml = format!(
            "{}---\n{}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: all\nspec:\n  maxUnavailable: 1\n  selector:\n    matchExpressions: [{{key: app, operator: Exists}}]\n",
            workload_yaml("Deployment", "d", Some(2), ""),
            workload_yaml("Deployment", "e", Some(2), "")
        );
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        assert_eq!(compiled.codes(), vec![Code::BroadPdb]);
    }

    #[test]
    fn namespaces_labels_and_annotations() {
        let yaml = format!(
            "{}---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n  namespace: stray\nrules: []\n",
            workload_yaml("Deployment", "d", Some(2), "")
        );
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        let objects = &compiled.instance("c", "app").objects;
        let metadata = objects[0]["metadata"].as_mapping().unwrap();
        let keys: Vec<&str> = metadata.keys().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["name", "namespace", "labels", "annotations"]);
        assert_eq!(objects[0]["metadata"]["annotations"][RESOLVED_ANNOTATION], "node");
        let role = objects.iter().find(|o| o["kind"] == "ClusterRole").unwrap();
        assert!(role["metadata"].get("namespace").is_none(), "cluster-scoped objects keep no namespace");
        assert_eq!(role["metadata"]["labels"][INSTANCE_LABEL], "app");

        let foreign =
            workload_yaml("Deployment", "d", Some(2), "").replace("  name: d\n", "  name: d\n  namespace: elsewhere\n");
        assert_eq!(compile_one("node", MULTI_NODE, web("", &foreign)).codes(), vec![Code::ForeignNamespace]);
    }

    #[test]
    fn unknown_fields_survive_in_their_order() {
        let yaml = workload_yaml("Deployment", "d", Some(2), "      futureField: {x: 1}\n")
            .replace("spec:\n  replicas", "spec:\n  zzz: kept\n  replicas");
        let compiled = compile_one("node", MULTI_NODE, web("", &yaml));
        let spec = compiled.instance("c", "app").objects[0]["spec"].as_mapping().unwrap().clone();
        let keys: Vec<&str> = spec.keys().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["zzz", "replicas", "selector", "template"]);
        assert_eq!(spec["template"]["spec"]["futureField"]["x"], 1);
    }
}
