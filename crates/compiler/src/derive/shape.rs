//! Derive once per shape: most instances of a package in a fleet derive the
//! same objects but for their namespace and their instance labels, so the
//! copy, patching and validation of a package's documents are done once per
//! shape (for the whole compile: [`Shapes`] is shared by the clusters) and the
//! objects of every other instance of that shape are a copy stamped with its
//! own namespace and name (issue 11). The copy shares all but `metadata` with
//! the template (mappings are copy-on-write, [`kix_yaml::Mapping`]).
//!
//! A shape is what the objects depend on besides those two values: the
//! package version, where each document goes ([`Placement`]), every
//! workload's plan (replicas, spread, budget, autoscaler range, the
//! annotations' levels). Checks run once per shape too: a shape whose objects
//! drew any finding is not reused, so every instance of it is derived and
//! reported on its own, as before.
//!
//! Stamping writes exactly what `derive` wrote per instance, by the same function
//! ([`super::patch::write_instance_fields`]): `metadata.namespace` of the objects
//! placed in the instance's namespace (kept in its place), the values of
//! `kix.dev/instance` and, where kix added it, `app.kubernetes.io/instance`, and,
//! for a package written for a namespace of its own (`meta.namespace`), every
//! reference to that namespace that moves to the instance's (RBAC subjects,
//! webhook, APIService and conversion services, namespace selectors naming it, a
//! shipped Namespace's name: [`super::namespaces::reference_sites`], found in the
//! package's documents, so the same places for every instance; issue 20).
//!
//! One case is derived per namespace still: an instance whose namespace the
//! package's documents name themselves (any string of theirs equal to it, such as
//! a second shipped Namespace of that name, or the package's own namespace when
//! the instance runs there), where what derive finds (a duplicate Namespace once
//! the own one is renamed) could depend on the namespace. Such an instance's
//! shape holds its namespace, as every shape of such a package did before.
//!
//! Shapes are dropped as the compile streams: [`Shapes::counting`] counts the
//! clusters that may run each package version, and once the last of them is derived
//! its shapes go ([`Shapes::cluster_derived`]); the instances already derived
//! keep their own copies of the objects until they are emitted.
//!
//! Each object of a shape is also rendered once ([`RenderedObject`]): its YAML
//! with the places where the namespace and the instance's name go, so `emit`
//! writes an instance's file by copying text.

use super::namespaces::Placement;
use super::planned_object::PlannedObject;
use super::rendered::{INSTANCE_STAND_IN, NAMESPACE_STAND_IN, RenderedObject};
use super::workload_plan::WorkloadPlan;
use crate::load::cluster::ClusterSource;
use crate::resolve::{Instance, Packages};
use kix_kube::kix_names::KIX_INSTANCE_LABEL;
use kix_yaml::Value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What an instance's derived objects depend on, besides its namespace and name. An instance looks its
/// shape up with a key that borrows its plans; only a shape's first instance makes an owned key, to keep
/// (every instance of a fleet copied its placements and workloads' plans into a key, issue 20).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ShapeKey<'a> {
    /// The package version, by identity: the address of the `Arc<Package>` instances of one version share
    /// (the compile's packages hold it until the compile ends).
    package: usize,
    /// Per document: `None` when cluster-scoped, else where it goes.
    placements: Cow<'a, [Option<Placement>]>,
    workloads: Cow<'a, [WorkloadPlan]>,
    /// The instance's namespace, when the package's documents name it (see the module comment).
    namespace: Option<Cow<'a, str>>,
    /// The cluster's `instanceLabel` is `add`: shapes are shared by the clusters of a compile, and on a
    /// cluster that leaves `app.kubernetes.io/instance` alone the objects differ.
    add_instance_label: bool,
}

impl ShapeKey<'_> {
    /// The key with what it borrows copied, to keep with the shape.
    fn into_owned(self) -> ShapeKey<'static> {
        ShapeKey {
            package: self.package,
            placements: Cow::Owned(self.placements.into_owned()),
            workloads: Cow::Owned(self.workloads.into_owned()),
            namespace: self.namespace.map(|namespace| Cow::Owned(namespace.into_owned())),
            add_instance_label: self.add_instance_label,
        }
    }
}

/// A shape derived before: its key and its template.
type KnownShape = (ShapeKey<'static>, Arc<Template>);

/// One shape's derived objects, as derived for the first instance of that shape, each rendered once where it
/// can be (see [`RenderedObject`]).
pub struct Template {
    /// Shared by every instance of the shape (an instance copies them only to change them).
    pub objects: Arc<Vec<PlannedObject>>,
}

impl Template {
    pub fn new(mut objects: Vec<PlannedObject>) -> Template {
        for planned in &mut objects {
            let object = planned.stamped(NAMESPACE_STAND_IN, INSTANCE_STAND_IN);
            let references = planned.fields.references.as_ref().map_or(0, |sites| sites.len());
            let sites = usize::from(planned.fields.in_instance_namespace)
                + usize::from(planned.fields.instance_label_added)
                + usize::from(has_kix_label(&object))
                + references;
            planned.rendered = RenderedObject::cut(&object, sites).map(Arc::new);
        }
        Template { objects: Arc::new(objects) }
    }
}

fn has_kix_label(object: &Value) -> bool {
    let labels = object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_mapping);
    labels.is_some_and(|labels| labels.contains_key(KIX_INSTANCE_LABEL))
}

/// The shapes derived so far in one compile, shared by the clusters deriving on every core: clusters of
/// one fleet run the same packages at the same levels, so a shape is mostly derived and rendered once for
/// the fleet. Which instance derived a shape first does not matter: stamping writes every per-instance
/// value (`stamped_instances_equal_instances_derived_alone`), so the output is the same in any order.
#[derive(Default)]
pub struct Shapes {
    /// By the key's hash (with `hasher`), the shapes whose keys hash so. Hashed with foldhash: a key
    /// holds every workload's plan and is hashed for every instance of a fleet (std's SipHash was 4% of a
    /// `check`); the map is only looked up.
    entries: Mutex<HashMap<u64, Vec<KnownShape>>>,
    hasher: foldhash::fast::RandomState,
    /// Per package version with a namespace of its own (by address): the hashes of the strings its
    /// documents hold, made the first time one of its instances derives.
    strings: Mutex<HashMap<usize, Arc<HashSet<u64>>>>,
    /// Per package version (by address): how many clusters left to derive may run it (`counting`; none
    /// counted: shapes are kept for the whole compile).
    users: Mutex<HashMap<usize, usize>>,
}

/// A package version's identity while the compile's packages hold it: the address of its `Arc<Package>`.
fn address(instance: &Instance) -> usize {
    Arc::as_ptr(&instance.package) as usize
}

/// Every valid package version's address by its package's name, for [`Shapes::versions_named`].
pub struct VersionsByName<'p>(HashMap<&'p str, Vec<usize>, foldhash::fast::RandomState>);

impl<'p> VersionsByName<'p> {
    pub fn new(packages: &'p Packages) -> VersionsByName<'p> {
        let mut by_name: HashMap<&'p str, Vec<usize>, foldhash::fast::RandomState> = HashMap::default();
        for package in &packages.valid {
            by_name.entry(package.name.as_str()).or_default().push(Arc::as_ptr(package) as usize);
        }
        VersionsByName(by_name)
    }
}

impl Shapes {
    /// Shapes for a compile of clusters that each may run one set of package versions (by address, from
    /// [`Shapes::versions_named`]), each version's dropped once the last cluster that may run it was
    /// derived.
    pub fn counting(clusters: &[HashSet<usize>]) -> Shapes {
        let mut users: HashMap<usize, usize> = HashMap::new();
        for packages in clusters {
            for package in packages {
                *users.entry(*package).or_default() += 1;
            }
        }
        Shapes { users: Mutex::new(users), ..Shapes::default() }
    }

    /// The package versions a cluster file may run, by address: every version of each package its text may
    /// name ([`ClusterSource::quoted_words`], read before the file is parsed: which versions its instances
    /// run is resolve's choice, made as the cluster compiles; the packages hold every version for the whole
    /// compile, so the addresses stay theirs). A superset only keeps a version's shapes longer.
    pub fn versions_named(packages: &VersionsByName<'_>, file: &ClusterSource) -> HashSet<usize> {
        match file.quoted_words() {
            Some(words) => words.filter_map(|word| packages.0.get(word)).flatten().copied().collect(),
            None => packages.0.values().flatten().copied().collect(),
        }
    }

    /// A cluster that may run these package versions was derived (or failed to resolve): the shapes of
    /// the versions no cluster left to derive may run are dropped.
    pub fn cluster_derived(&self, packages: &HashSet<usize>) {
        let mut done = Vec::new();
        {
            let mut users = lock(&self.users);
            for package in packages {
                let Some(left) = users.get_mut(package) else { continue };
                *left -= 1;
                if *left == 0 {
                    users.remove(package);
                    done.push(*package);
                }
            }
        }
        if done.is_empty() {
            return;
        }
        lock(&self.entries).retain(|_, shapes| {
            shapes.retain(|(key, _)| !done.contains(&key.package));
            !shapes.is_empty()
        });
        let mut strings = lock(&self.strings);
        for package in done {
            strings.remove(&package);
        }
    }

    /// The shape of an instance's objects (see the module comment), borrowing them.
    pub fn key<'a>(
        &self,
        instance: &'a Instance,
        placements: &'a [Option<Placement>],
        workloads: &'a [WorkloadPlan],
        add_instance_label: bool,
    ) -> ShapeKey<'a> {
        let named = instance.package.namespaces.own.is_some() && self.names(instance, &instance.namespace);
        ShapeKey {
            package: address(instance),
            placements: Cow::Borrowed(placements),
            workloads: Cow::Borrowed(workloads),
            namespace: named.then_some(Cow::Borrowed(instance.namespace.as_str())),
            add_instance_label,
        }
    }

    /// Whether the documents of the instance's package hold `text` as a string (a value or a key).
    fn names(&self, instance: &Instance, text: &str) -> bool {
        let package = address(instance);
        let known = lock(&self.strings).get(&package).cloned();
        let strings = known.unwrap_or_else(|| {
            let mut strings = HashSet::new();
            for document in &instance.package.documents {
                collect_strings(&document.value, &mut strings);
            }
            lock(&self.strings).entry(package).or_insert_with(|| Arc::new(strings)).clone()
        });
        strings.contains(&hash_of(text))
    }

    pub fn get(&self, key: &ShapeKey<'_>) -> Option<Arc<Template>> {
        let hash = self.hasher.hash_one(key);
        let entries = lock(&self.entries);
        let shapes = entries.get(&hash)?;
        shapes.iter().find(|(known, _)| known == key).map(|(_, template)| template.clone())
    }

    /// Keeps the first template of a shape (another core may have derived the same shape meanwhile).
    pub fn insert(&self, key: ShapeKey<'_>, template: Template) {
        let hash = self.hasher.hash_one(&key);
        let mut entries = lock(&self.entries);
        let shapes = entries.entry(hash).or_default();
        if !shapes.iter().any(|(known, _)| *known == key) {
            shapes.push((key.into_owned(), Arc::new(template)));
        }
    }

    #[cfg(test)]
    pub fn count(&self) -> usize {
        lock(&self.entries).values().map(Vec::len).sum()
    }
}

fn hash_of(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn collect_strings(value: &Value, strings: &mut HashSet<u64>) {
    match value {
        Value::String(text) => {
            strings.insert(hash_of(text));
        }
        Value::Sequence(items) => items.iter().for_each(|item| collect_strings(item, strings)),
        Value::Mapping(mapping) => {
            for (key, value) in mapping.iter() {
                collect_strings(key, strings);
                collect_strings(value, strings);
            }
        }
        _ => {}
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock can only leave a complete entry or none: the maps are sound.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
