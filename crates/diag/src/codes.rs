//! Every diagnostic code kix can print, with its severity, one-line summary and explanation (`kix explain`).
//!
//! Codes are stable: never renumber one, and a code means one thing (its README row and explanation say
//! exactly that; `readme_code_table_matches_explain` keeps them in step). Groups: K01xx reading files,
//! K02xx names and keys, K03xx resolving levels and inventories, K04xx deriving, K05xx writing, K06xx
//! verify, K07xx lint.

use super::Severity;

macro_rules! codes {
    ($( $variant:ident = $id:literal, $severity:ident, $summary:literal, $explanation:literal; )*) => {
        /// Every diagnostic kix can print. Codes are stable: never renumber one.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $( $variant, )* }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The stable identifier, e.g. `K0301`.
            pub fn id(self) -> &'static str {
                match self { $( Code::$variant => $id, )* }
            }

            /// The code whose identifier is `id` (`K0301`), if any.
            pub fn from_id(id: &str) -> Option<Code> {
                match id { $( $id => Some(Code::$variant), )* _ => None }
            }

            /// The severity this code is always reported with.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$severity, )* }
            }

            /// A one-line summary, for the codes table.
            pub fn summary(self) -> &'static str {
                match self { $( Code::$variant => $summary, )* }
            }

            /// What the code means and how to fix it (`kix explain K0301`).
            pub fn explanation(self) -> &'static str {
                match self { $( Code::$variant => $explanation, )* }
            }
        }
    };
}

codes! {
    // K01xx: reading files.
    Io = "K0101", Error, "a file or directory cannot be read",
        "kix could not read an input file or list a directory. Check that it exists and is readable.";
    TomlSyntax = "K0102", Error, "malformed TOML, or a value of the wrong type",
        "A cluster file or kix.toml is not valid TOML, or a value has the wrong type or an unknown name. The caret points at the offending text.";
    UnknownKey = "K0103", Error, "an unknown key in a TOML file",
        "Cluster files and kix.toml accept only the documented keys, so that a misspelt key never silently falls back to a default. Remove or correct the key.";
    YamlSyntax = "K0104", Error, "malformed YAML",
        "A package resource file is not valid YAML (tabs for indentation, duplicate keys and bad nesting are common causes).";
    NotAnObject = "K0105", Error, "a YAML document is not a Kubernetes object",
        "Every document in a package's YAML files must be a mapping with apiVersion, kind and metadata.name (empty documents are skipped).";
    NoClusters = "K0106", Error, "no cluster files found",
        "kix looks for clusters/<name>.toml under the root (--root, default the current directory). Check the root, or the names given to --cluster.";
    NotAPackage = "K0107", Warning, "a directory under packages/ has no kix.toml",
        "Every directory directly under packages/ is a package and needs a kix.toml; a directory without one is skipped.";
    InputRefused = "K0108", Error, "an input is refused for safety (size, encoding, nesting, symlink, file type)",
        "kix reads at most 16 MiB per file, only UTF-8 text in regular files (never a directory, FIFO, socket or device), YAML nested at most 64 levels deep with bounded alias expansion, and follows no symlink that leaves the package directory or clusters/. The input exceeds one of these limits.";
    InvalidResourcePattern = "K0110", Error, "a resources pattern in kix.toml is not a relative path pattern",
        "resources = [...] lists files of the package directory: relative paths with '/' between directories, where '*' matches any characters of one name, '?' one character and '**' (a whole path part) any number of directories. A pattern may not be empty, absolute, contain '..' or use other glob syntax ([...], {...}, backslashes).";
    ResourcePatternMatchesNothing = "K0111", Error, "a resources pattern in kix.toml matches no file",
        "Every entry of resources = [...] must name at least one file of the package directory (directories are not resources, and kix.toml never is). Correct the path or remove the entry.";
    KustomizationSkipped = "K0112", Warning, "a kustomization file asks for transformations kix does not apply",
        "A Kustomization (kustomization.yaml, .yml or Kustomization, or a document of kind Kustomization or Component in group kustomize.config.k8s.io) is not a Kubernetes object, so kix skips it. It asks kustomize to change the resources (names, labels, images, namespace, patches, generated objects, replicas...), and kix does not: the objects are emitted as written. Its `namespace` is the exception: kix puts a package's namespaced objects in each instance's namespace anyway, so it is not reported when meta.namespace names the same namespace, and otherwise reported as that move. Apply the changes to the YAML files, or render the kustomization first and package its output.";
    UnreadSubdirectory = "K0113", Warning, "a package subdirectory holds YAML files kix does not read",
        "Without `resources` in kix.toml, a package is the YAML files at the top of its directory; YAML files in subdirectories (crds/, hpa/, ...) are not read. List them, for example resources = [\"*.yaml\", \"crds/*.yaml\"], or move them up.";
    NothingToSimulate = "K0115", Error, "the manifests given to kix simulate hold no workload",
        "kix simulate places the replicas of the Deployments and StatefulSets (apps/v1) in the manifests it is given; none of the files holds one. Check the file names, or that the workloads' apiVersion is apps/v1.";
    // K02xx: names, keys and versions.
    InvalidName = "K0201", Error, "a name is not a DNS-1123 label",
        "Cluster names (the file stem), instance names, package names and namespaces must be DNS-1123 labels: at most 63 characters of a-z, 0-9 and '-', starting and ending alphanumeric. They become paths under out/ and Kubernetes namespaces.";
    InvalidLabelKey = "K0202", Error, "a failure-domain key is not a valid label key, or is used twice",
        "failureDomains keys become topologyKeys: an optional DNS-1123 subdomain prefix (at most 253 characters) and '/', then a name of at most 63 characters of letters, digits, '-', '_' and '.', starting and ending alphanumeric. Each key may appear once among node, zone and extra, since each becomes one spread constraint.";
    DuplicateInstance = "K0203", Error, "two instances of one cluster share a name",
        "Instance names are unique within a cluster: each one becomes out/<cluster>/<instance>.yaml.";
    InvalidVersion = "K0204", Error, "a package version is not semver",
        "meta.version must be a semantic version such as 1.4.0.";
    InvalidRequirement = "K0205", Error, "an instance's version requirement is not a semver requirement",
        "instances.version must be a semver requirement such as ^1.2, ~1.4.0, >=1, <2 or =1.4.0.";
    InvalidZone = "K0206", Error, "an availability zone is not a valid label value, or is declared twice",
        "capabilities.availabilityZones become values of the zone label nodes carry: each must be a non-empty label value (at most 63 characters of letters, digits, '-', '_' and '.', starting and ending alphanumeric), listed once.";
    UnknownAllow = "K0207", Error, "an allow entry names no warning code",
        "allow = [...] on a cluster or an instance acknowledges warnings by their code (`kix explain` lists them): each entry must be the code of a warning; errors cannot be acknowledged.";
    ReservedInstanceName = "K0208", Error, "an instance name is the name of a file kix writes itself",
        "An instance becomes out/<cluster>/<instance>.yaml, beside the files kix writes for the whole cluster (kustomization.yaml, _shared.yaml). An instance named after one of them would be overwritten by it, so the name is refused. Choose another instance name.";
    // K03xx: resolving instances, levels and ceilings.
    NamespaceInString = "K0209", Warning, "a string names the namespace kix moves a package out of",
        "kix moves a package's objects from meta.namespace to the instance's namespace, with the typed references to it (RoleBinding subjects, webhook services and namespaceSelectors, APIServices, CRD conversion webhooks). It never rewrites free text: a container argument (--exempt-namespace=gatekeeper-system), command, environment value, ConfigMap data or Secret stringData that names the old namespace (as a whole string, a flag's value, a namespace/name pair or a NAME.NAMESPACE.svc address) keeps naming it after the move. kix warns once per object and names the fields. Check each: point it at the instance's namespace, or read the pod's own namespace through the downward API; then acknowledge the warning with allow.";
    ContradictoryCapabilities = "K0301", Error, "multiNode = false together with two or more zones",
        "A single-node cluster cannot span two availability zones. Correct capabilities.multiNode or capabilities.availabilityZones.";
    LevelAboveSubstrate = "K0302", Error, "the requested level is above what the declared substrate supports",
        "R1/R3: a confirmed single-node cluster supports only none; a cluster with fewer than two declared zones cannot meet zone. Lower the cluster's or the instance's availability, or correct the capabilities.";
    LevelUnverified = "K0303", Warning, "the requested level cannot be verified because a capability is unknown",
        "R3: the capability that decides the level (multiNode for pod and node, availabilityZones for zone) is not declared. kix compiles the level anyway. For zone this is risky: a hard zone rule leaves pods Pending on nodes without the zone label. Declare the capability to silence the warning.";
    PackageNotFound = "K0304", Error, "an instance names a package that does not exist",
        "No packages/<dir>/kix.toml has this meta.name. Check the instance's package key.";
    NoMatchingVersion = "K0305", Error, "no package version matches the instance's requirement",
        "R13: the instance's version requirement matches none of the package's versions; the message lists those that exist.";
    DuplicatePackageVersion = "K0306", Error, "two package directories hold the same name and version",
        "R13: a name and version must identify one package directory. Bump one of the versions or remove the copy.";
    PackageCeiling = "K0307", Warning, "a package ceiling lowered an instance's level",
        "R4: the package declares meta.availability.max below the level the cluster or instance requests, so the whole instance runs at the ceiling.";
    WorkloadCeiling = "K0308", Warning, "workload ceilings lowered some of a package's workloads",
        "R5: workloads declare availability.max below their instance's level, so each runs at its ceiling; the rest of the package keeps the full level. Said once per package and cluster, naming every capped workload and the instances concerned (an instance that acknowledges K0308 is left out).";
    InvalidNodePool = "K0309", Error, "a node pool does not fit the cluster's capabilities",
        "[[nodePools]] describe the nodes `kix verify` simulates on: pool names are DNS-1123 labels, zones must be among capabilities.availabilityZones, a single-node cluster has one node and a multi-node cluster at least two, taint effects are NoSchedule, PreferNoSchedule or NoExecute, allocatable cpu and memory are Kubernetes quantities, and maxNodesPerZone (the most nodes the cluster autoscaler may run in a zone) is at least the nodes the pool runs in each zone.";
    InvalidNodeSetting = "K0310", Error, "a node pool's os, arch, region or instanceType is not a valid label value",
        "Each of these [[nodePools]] settings becomes a label on every node of the pool (kubernetes.io/os, kubernetes.io/arch, topology.kubernetes.io/region, node.kubernetes.io/instance-type): it must be a non-empty label value (at most 63 characters of letters, digits, '-', '_' and '.', starting and ending alphanumeric).";
    InvalidPoolDomains = "K0311", Error, "a node pool's domains name an undeclared key or an invalid value",
        "[nodePools.domains] spreads a pool's nodes over the values of an extra failure-domain key, round-robin within each zone. Each key must be one of the cluster's failureDomains.extra keys, and each list must hold at least one value, every value a non-empty label value, listed once.";
    PoolLabelConflict = "K0312", Error, "a node pool's labels set a label kix gives its nodes from another setting",
        "kix labels every inventory node itself: the node key and kubernetes.io/hostname with the node's name, the zone key and topology.kubernetes.io/zone with its zone (when the pool lists zones), a domains key with its value, and kubernetes.io/os, kubernetes.io/arch, topology.kubernetes.io/region and node.kubernetes.io/instance-type from os, arch, region and instanceType. Set each of these one way: remove the entry from labels (or drop the setting).";
    ExtraKeyMissing = "K0313", Warning, "a declared extra failure-domain key is missing from inventory nodes",
        "kix spreads every workload over each failureDomains.extra key with a ScheduleAnyway constraint. The scheduler's spread scoring (PodTopologySpread PreScore, pkg/scheduler/framework/plugins/podtopologyspread/scoring.go) ignores every node that lacks any of a pod's ScheduleAnyway keys: such nodes score 0 for all of the pod's soft spreading, so the other soft constraints (the zone at level node, the hostname at level zone) stop steering replicas there too. Label the pool's nodes with [nodePools.domains] or labels, or drop the key.";
    // K04xx: deriving replicas, spread and budgets.
    DecreasingReplicas = "K0401", Error, "a replica mapping decreases as the level rises",
        "R6: replicas = { ... } is a step function over none < pod < node < zone and must not decrease as the level rises.";
    CeilingNoneManyReplicas = "K0402", Error, "a workload under a none ceiling runs more than one replica",
        "R7: a none ceiling says the workload can run only one pod at a time (a single-active controller, say). Set its replicas to 1, or remove the ceiling.";
    TooFewReplicas = "K0403", Error, "a workload at level pod or higher runs fewer than two replicas",
        "R8: one replica cannot survive losing a pod. Add a replicas mapping such as { none = 1, pod = 2 }, or declare availability = { max = \"none\" } for a workload that can run only one pod.";
    UnknownWorkload = "K0404", Error, "a [workloads.X] entry names no Deployment, StatefulSet or Rollout of the package",
        "R9: workload entries are keyed by the metadata.name of a Deployment, StatefulSet or Argo Rollouts Rollout among the package's YAML files.";
    SelectorMismatch = "K0405", Error, "a workload's selector does not select its own pod template",
        "R12: spec.selector must match spec.template.metadata.labels, or the controller never owns its pods and every derived count is wrong.";
    OverlappingSelectors = "K0406", Error, "two workloads in one namespace select each other's pods",
        "R12: their spread counts and PDB budgets would mix. Give each workload a selector that only its own pods match (add a distinguishing label such as app.kubernetes.io/component).";
    BroadPdb = "K0407", Warning, "a shipped PodDisruptionBudget selects pods of more than one workload",
        "R12: the budget is shared between the workloads, so draining one can be blocked by the other. Narrow the PDB's selector.";
    ExplicitPlacementWithoutPdb = "K0408", Warning, "a workload with its own topologySpreadConstraints has no PDB",
        "R11: the workload brings its own placement, so kix derives neither spread nor a PDB for it; nothing in the instance stops a drain from evicting all its pods at once. Ship a PDB with the package.";
    ForeignNamespace = "K0409", Error, "a package object names a namespace other than the instance's",
        "Namespaced objects are placed in the instance's namespace. An object may name no namespace, the instance's, the one the package is written for (meta.namespace in kix.toml: it moves to the instance's namespace, and so do references to it) or one the package keeps (meta.keepNamespaces, for objects that must stay in a shared namespace such as RBAC in kube-system). Any other namespace is refused: set one of those keys, or remove metadata.namespace from the object.";
    EmptySelector = "K0410", Error, "a workload has no selector, or an empty one",
        "An empty selector selects everything (or, in spread constraints, nothing): kix never copies one. Give spec.selector matchLabels that identify the workload's pods.";
    InvalidSelector = "K0411", Error, "a label selector is malformed",
        "matchExpressions operators are In, NotIn, Exists and DoesNotExist; In and NotIn need values, Exists and DoesNotExist take none; keys and values must be valid labels.";
    DuplicateObject = "K0412", Error, "two objects of one instance share kind and name",
        "Each object of an instance must be unique by apiVersion group, kind, namespace and name; kix also derives PodDisruptionBudgets named after their workloads.";
    InvalidWorkload = "K0413", Error, "a workload's fields cannot be read",
        "A Deployment, StatefulSet or Rollout field kix reads (spec.replicas, spec.selector, spec.template, or the template of the Deployment a Rollout's workloadRef names) has the wrong shape.";
    InvalidObject = "K0414", Error, "an object would be refused by the Kubernetes API server",
        "kix validates every object it emits with the API server's rules (label keys and values, selectors, topologySpreadConstraints, PodDisruptionBudget specs, names). A user's object that fails would make the GitOps sync fail on the cluster; fix the field named in the message.";
    SharedBudget = "K0415", Error, "a workload's pods are selected by two PodDisruptionBudgets",
        "The eviction API refuses to evict a pod covered by more than one PodDisruptionBudget, so draining any node that runs one never finishes. Budgets of every instance sharing the namespace count, derived ones included. Narrow the shipped budget's selector, or drop it and let kix derive one.";
    ReplicasOutOfRange = "K0416", Error, "a replica count in kix.toml is above the Kubernetes maximum",
        "R6: spec.replicas is an int32, so a replicas mapping may name at most 2147483647 for a level.";
    ObjectInTwoInstances = "K0417", Error, "two instances of one cluster emit the same object",
        "Two instances in one namespace (or two instances emitting one cluster-scoped object) produce an object with the same apiVersion group, kind, namespace and name: applied together, one overwrites the other. A cluster-scoped object that every instance emitting it emits identically (apart from kix's per-instance labels) is not an error: kix writes it once, to _shared.yaml. The message names the first field at which the two objects differ. Give the instances different namespaces, make the objects identical, or move the shared object into a package of its own.";
    GroupAcrossNamespaces = "K0418", Error, "instances of one availability group run in different namespaces",
        "Instances with the same `group` in a cluster file form one availability group per workload: each member's workload is spread and budgeted over the pods of all of them. Spread constraints and PodDisruptionBudgets count the pods of their own namespace only, so every member must run in one namespace. Give the instances the same `namespace`, or different groups.";
    GroupAcrossUnlike = "K0419", Error, "instances of one availability group differ in package or level, or the package has groups of its own",
        "Instances with the same `group` in a cluster file must be instances of one package, at one level: the group is formed per workload name, and its spread and budget are one set of rules over all members' pods. A package with [groups.X] of its own cannot also be grouped across instances (a workload belongs to at most one group). Use one package and level for the group's instances, or different groups.";
    KeptOwnNamespace = "K0420", Error, "meta.keepNamespaces names the package's own namespace or the instance's",
        "A kept namespace (meta.keepNamespaces, such as kube-system) is shared with the rest of the cluster: the package's objects there stay there, and references into it are not rewritten. The namespace the package was written for (meta.namespace) moves to the instance's namespace, so it cannot also be kept; and an instance cannot run in a namespace its package keeps, since its own objects and the kept ones would mix and createNamespace would claim a shared namespace. Remove the entry, or give the instance another namespace.";
    KeptNamespaceNotCreated = "K0421", Warning, "a namespace a package keeps is created by nothing in the cluster",
        "meta.keepNamespaces leaves objects in namespaces the package does not own (kube-system, monitoring, ...). kix creates only the instances' own namespaces, so objects kept in a namespace no instance of the cluster creates fail to apply on a fresh cluster. The system namespaces (default, kube-system, kube-public, kube-node-lease) always exist. Create the namespace through an instance of the cluster (createNamespace), or acknowledge the warning with allow where the namespace is managed elsewhere.";
    GroupPatternUnmatched = "K0422", Error, "a [groups.X] workloads pattern matches no Deployment or StatefulSet",
        "Each entry of a group's workloads list is the name of a Deployment or StatefulSet of the package or a glob in which `*` matches any characters (dns-primary-*). An entry that matches none of them is a mistake: fix the name, or remove the entry.";
    WorkloadInTwoGroups = "K0423", Error, "a workload belongs to two availability groups",
        "A workload belongs to at most one [groups.X]: each group derives its own spread constraints and PodDisruptionBudget over its members, and two budgets over one pod refuse every eviction. Narrow one group's workloads patterns.";
    GroupSelector = "K0424", Error, "a group's selector does not select exactly its members' pods",
        "A group's selector is the labels every member's pod template carries with the same value. It must select every member's pods and no other pod template of the instance's namespace: the group's spread constraints and budget count the pods it selects. When the members share no label, or another workload of the namespace carries them all, give the members' pod templates a label of their own (changing a pod template restarts its pods once).";
    MajorityUnreachable = "K0425", Error, "a majority workload or group cannot keep a majority through one domain loss",
        "survive = \"majority\" asks that more than half of the pods keep running when one domain of the level fails. Spread with maxSkew 1 over D domains, the largest domain holds ceil(N/D) of N pods, so N - ceil(N/D) must be more than N/2. Over 2 zones no count can (the larger zone always holds at least half); over 3 zones 2 and 4 cannot, 3, 5, 6 and more can. The usual fix is the instance's own level: availability = \"node\" on its entry in the cluster file (a secondary label points at where the level is set) keeps a majority through the loss of one node. Otherwise the help lists the counts that would pass (change the replicas, or the group's members, to one of them), or says that only more domains would.";
    MajorityUnchecked = "K0426", Warning, "the number of domains a majority workload or group spreads over is unknown",
        "survive = \"majority\" is checked at build time against the domains the cluster file declares: the zones (availabilityZones) at level zone, the inventory's nodes at level node. Where that count is unknown kix cannot say whether a majority survives one domain loss; declare the domains, or run kix verify on a snapshot.";
    GroupCeiling = "K0427", Warning, "a group ceiling lowered its members' level",
        "A [groups.X] availability.max below the instance's level lowers every member of the group to it: they are judged, spread and budgeted as one service.";
    NamespaceNotCreated = "K0428", Warning, "nothing in the cluster creates an instance's namespace",
        "An instance's objects go to its namespace (its entry's `namespace`, else its name), and a namespace must exist before anything is created in it: on a fresh cluster, `kubectl apply -k out/<cluster>` (and Flux's apply of the same directory) is refused when nothing in the cluster's output creates it. Something does when the instance has `createNamespace = true`, when its package ships a v1 Namespace of that name, or when another instance of the cluster emits one (written to _shared.yaml when several do). The system namespaces (default, kube-system, kube-public, kube-node-lease) always exist, and an instance whose objects are all cluster-scoped needs none. Set `createNamespace = true` on the instance (kix writes the Namespace first in its file), or ship the Namespace in the package; where the namespace is created elsewhere (a platform's own manifests, Argo CD's CreateNamespace=true sync option when it is the Application's destination namespace: Argo CD creates that one namespace only), acknowledge the warning with allow = [\"K0428\"] on the instance or the cluster.";
    InvalidAutoscaler = "K0430", Error, "an autoscaler's fields cannot be read",
        "A HorizontalPodAutoscaler or KEDA ScaledObject of the package has a replica bound that is not a count (or below what the API accepts: minReplicas at least 1), no maxReplicas, a maximum below its minimum, or a scaleTargetRef without kind or name.";
    TwoAutoscalers = "K0431", Error, "two autoscalers scale one workload",
        "Two HorizontalPodAutoscalers or ScaledObjects of the package name the same Deployment or StatefulSet in scaleTargetRef: they would fight over its spec.replicas. Keep one.";
    AutoscalerMinRaised = "K0432", Warning, "kix raised an autoscaler's minimum to the level's replica count",
        "The autoscaler owns the workload's spec.replicas and may scale it down to its minimum, below the replica count the workload's level needs (its replicas mapping), which would break the level. kix raises minReplicas (minReplicaCount) to that count, never lowers it, and leaves spec.replicas as written. Write the minimum into the autoscaler to silence the warning.";
    AutoscalerMaxRaised = "K0433", Warning, "kix raised an autoscaler's maximum to its raised minimum",
        "After raising the autoscaler's minimum to the level's replica count, its maxReplicas (maxReplicaCount) was below it, which the API server refuses; kix raises the maximum to the minimum. Raise maxReplicas in the package to give the autoscaler room.";
    UnmanagedReplicas = "K0434", Warning, "a ReplicaSet or ReplicationController gets no spread or budget",
        "kix manages Deployments and StatefulSets: it derives replicas, topologySpreadConstraints and a PodDisruptionBudget only for them. A ReplicaSet or ReplicationController at level pod or higher is emitted as written, so its pods may share one node and a drain may evict them all. Rewrite it as an apps/v1 Deployment (its selector under matchLabels, the same template).";
    UnmanagedCustomResource = "K0435", Warning, "a custom resource that runs pods gets no spread or budget",
        "A custom resource at level pod or higher whose pods come from an operator: a kind of a well-known operator (Argo Rollouts Rollout, prometheus-operator Prometheus and Alertmanager, CloudNativePG Cluster, Strimzi KafkaNodePool) or a kind whose CustomResourceDefinition, shipped in the package, declares spec.replicas, spec.instances or spec.template. kix emits it as written: its pods get no spread constraints and no PodDisruptionBudget from kix, and kix verify lists it as unverified. Set the operator's own spread and budget fields, or acknowledge the warning with allow.";
    UnplaceableCustomResource = "K0436", Warning, "kix cannot place the pods of a custom resource",
        "A custom resource kix reads through a profile (a package's [kinds] entry, or a built-in one) whose profile names no field where its operator takes topology spread constraints. kix still sets its replica count and derives a PodDisruptionBudget over its pod labels (unless its operator makes one or the package ships one), but its pods get no spread constraints, so they may share one node or zone. Name the operator's field with topologySpreadConstraints = \"spec....\" in the [kinds] entry, or acknowledge the warning with allow.";
    KindPathNotInCrd = "K0437", Error, "a [kinds] field path is not in the kind's CustomResourceDefinition",
        "A path of a [kinds.\"group/Kind\"] entry (replicas, podTemplate, topologySpreadConstraints) names a field that the kind's CustomResourceDefinition, shipped in the package, does not declare in any served version's schema, so kix would read nothing there or write a field the API server drops. Fix the path (the help names the fields the schema declares at that point).";
    AmbiguousWorkload = "K0438", Error, "a [workloads.X] entry names several workloads of different kinds",
        "The package has more than one workload of that metadata.name (say a Deployment and a custom resource read through [kinds]) and the entry does not say which it configures. Add kind = \"Kind\" to the entry.";
    InvalidKind = "K0439", Error, "a [kinds] entry is not valid",
        "A [kinds] key must be group/Kind (the API group of the custom resource's apiVersion and its kind); its paths must be dotted field names under spec; podLabels needs at least one label, with valid keys and values ({name} is the resource's name, {label:KEY} its own label KEY). A [workloads.X] kind must name a kind of a workload of the package, and a [workloads.X] replicas mapping for a custom resource needs its [kinds] entry to name the count field (replicas = \"spec....\"): kix has nowhere else to write the count.";
    // K0440-K0449: strict validation of whole objects (kube/strict).
    UnknownField = "K0440", Error, "an object has a field its schema does not know",
        "A field of a built-in object that Kubernetes 1.33 does not define, or a field of a custom resource that its CustomResourceDefinition (shipped in the package) does not declare. kubectl apply refuses it (strict field validation) or the API server drops it silently: either way it is a typo. The help names the closest field there is.";
    MissingField = "K0441", Error, "an object lacks a field its schema requires",
        "A field that Kubernetes 1.33's API (or the custom resource's CustomResourceDefinition) requires is absent or null, such as a container's name or a Service port's port. The API server refuses the object.";
    WrongFieldType = "K0442", Error, "a field's value does not fit its type",
        "A value of the wrong type (a string where an integer is required, a list where an object is), or a value its type cannot read (a malformed timestamp or base64 text). The API server refuses the object.";
    NotServed = "K0443", Error, "an object's apiVersion and kind are not served",
        "Kubernetes 1.33 does not serve this apiVersion and kind (apps/v1beta1 StatefulSet, extensions/v1beta1 Deployment, policy/v1beta1 PodDisruptionBudget were removed), or the package's CustomResourceDefinition does not serve that version. The help names the apiVersion that serves the kind.";
    // K0450-K0454: what a workload's own pod anti-affinity does on the declared domains.
    AntiAffinityDeadlock = "K0450", Warning, "a workload's own required pod anti-affinity cannot hold its replicas or its rollout on the declared domains",
        "A required podAntiAffinity term whose topologyKey is a failure-domain key and whose selector selects the workload's own pods allows one pod per domain, old and new revisions alike. kix counts the domains the cluster file declares: nodes of the [[nodePools]] inventory for the node key, capabilities.availabilityZones for the zone key (unknown counts are not checked). More replicas than domains leaves pods Pending; a Deployment with as many replicas as domains and maxUnavailable 0 deadlocks its rolling update (the surge pod has no domain and no old pod may stop first), and a drain leaves the evicted pod Pending. Allow maxUnavailable 1, add matchLabelKeys: [pod-template-hash] to the term, use a preferred term or a topologySpreadConstraint instead, or add a domain.";
    // K0460-K0469: sizing, from the arithmetic `kix capacity` shows.
    UnevenZoneSplit = "K0460", Warning, "at level zone, the replica count is not a multiple of the declared zone count",
        "Spread over Z zones, R replicas that are not a multiple of Z leave some zones one pod heavier; losing a heavier zone takes ceil(R/Z) of R pods, more than the 1/Z share a zone loss takes from an even split, so the extra pod buys less capacity through the failure than it costs. The message names the split and the loss; the help names the multiples of Z on either side. Keeping capacity C through the loss of one of Z zones needs R = ceil(C x Z / (Z - 1)) replicas, rounded up to a multiple of Z. Not reported for workloads and groups with survive = \"majority\": K0425 sizes those, and a quorum wants an odd count, not a multiple of the zones.";
    FewerReplicasThanZones = "K0461", Warning, "at level zone, fewer replicas than declared zones under a hard zone spread",
        "With a DoNotSchedule spread on the zone key and fewer replicas than zones, at least one zone holds no pod, and losing a zone that does takes 1 of R pods: with 2 replicas over 3 zones, half the capacity goes with the wrong zone. As many replicas as zones (or a multiple) keep each zone loss to its 1/Z share. Not reported for workloads and groups with survive = \"majority\": K0425 sizes those, and a quorum wants an odd count, not a multiple of the zones.";
    ClusterTooSmall = "K0462", Warning, "a cluster's compiled requests exceed what its inventory holds, or what is left after losing its worst domain",
        "The requests of every compiled workload of the cluster (each pod's requests as the scheduler counts them, times its replicas at the resolved level, an autoscaler's minimum) added up against the allocatable of the [[nodePools]] inventory's nodes the pods can use (nodes tainted NoSchedule or NoExecute are left out: kix's pods tolerate no taint unless their template says so), and against what is left after losing the worst domain of the cluster's level (its largest zone at level zone, its largest node at level node). More than the nodes hold leaves pods Pending at rollout; more than the rest holds leaves replacements Pending after the loss the level promises to survive, and kix verify fails the scenarios that need room. Workloads whose requests cannot be read are named as unknown, not counted as 0. Add nodes (or a zone's), lower the level, or acknowledge the warning with allow = [\"K0462\"].";
    // K0470-K0479: what the level and replica count kix chose do to a workload's own update strategy and budget.
    RecreateAboveNone = "K0470", Warning, "a Recreate Deployment runs above level none",
        "A Deployment with spec.strategy.type: Recreate stops every old pod before it starts a new one, so each rollout is an outage whatever its replica count, spread and budget: the level it resolved to (pod or higher) does not hold through an update, and kix verify fails the rolling update. Use the RollingUpdate strategy, cap the workload with availability = { max = \"none\" } in its [workloads.X] entry, or acknowledge the warning with allow.";
    ShippedBudgetBlocksDrain = "K0471", Warning, "a shipped PodDisruptionBudget allows no disruption at the replica count kix chose",
        "A PodDisruptionBudget shipped in the package selects the workload's pods (kix derives none for them, R10) and its minAvailable is at least the replica count kix chose for the cluster's level (the sum over the workloads it selects; an autoscaler's minimum): no pod may ever be evicted, so every drain of their nodes waits forever (kix lint reports the same budget as K0711, kix verify as a drain that does not finish). Use maxUnavailable: 1 in the budget, a minAvailable below the replica count, or more replicas at this level.";
    // K0480-K0489: the level enforced at admission (`[admission]`, issue 40).
    AdmissionUnguarded = "K0480", Warning, "a compiled workload the cluster's admission policies cannot guard",
        "With [admission], kix writes ValidatingAdmissionPolicies that match each compiled workload by its API resource (`deployments` in group `apps`), namespace and name. A custom resource is matched by its resource's plural name, which kix reads from the package's CustomResourceDefinition (or knows for the operators it profiles); when neither gives it, no policy can match the resource, so its count and spread are not enforced at admission (kix verify and kix audit still judge it). Ship the CustomResourceDefinition in the package, or acknowledge the warning with allow = [\"K0480\"].";
    AdmissionExemptInvalid = "K0481", Error, "an `[admission] exempt` name is not a user name",
        "`[admission] exempt` lists the user names allowed to delete or change kix's PodDisruptionBudgets, compared with the request's authenticated user name exactly (`request.userInfo.username`). An empty name, one with spaces at its ends, or one written twice is a mistake: no user has it, or it says nothing the first did not. A service account's user name is `system:serviceaccount:<namespace>:<name>`.";
    AdmissionMissing = "K0482", Error, "`kix admission` was asked about a cluster without `[admission]`",
        "kix admission evaluates the ValidatingAdmissionPolicies kix compiles for a cluster from its `[admission]` table; a cluster file without one has no policies to evaluate. Add `[admission] enforce = \"audit\"` (admitted and recorded in the audit log) to compile them, run kix admission --state to see what they would refuse, then switch to \"warn\" and \"deny\".";
    // K05xx: writing output.
    WriteFailed = "K0501", Error, "output cannot be written",
        "kix writes to a temporary directory beside out/ and renames it into place; a failure leaves the previous out/ untouched. Before staging, kix refuses an out/ it could not replace without damage: --out inside the root's inputs (resolved through symlinks), an out/ that is a symlink, one holding a FIFO, socket or device, or one (or a directory in it) it cannot write.";
    WarningsDenied = "K0502", Error, "warnings were denied by --deny-warnings",
        "--deny-warnings turns any warning into a failed build.";
    OutputLocked = "K0503", Error, "another kix build is writing the same output directory",
        "A build holds a lock (.kix/.<out>.kix-lock beside the output directory) while it stages and swaps its output; a second build into the same directory fails at once rather than race the first and silently lose one of the two outputs. Run one build at a time into one output directory.";
    OutputStale = "K0504", Error, "a file of the output directory differs from what `kix build` would write",
        "kix build --check compares the output directory with what a build would write, writing nothing: each file that is missing, that differs, or that a build would remove is out of date. The text form lists them on stdout (with --diff, a patch); JSON, SARIF, JUnit and GitHub forms also report each as this diagnostic, located at the file, so a CI annotation points at it. Run kix build and commit the result.";
    // K06xx: verifying.
    VerifyNotSimulated = "K0601", Error, "the scheduler model cannot take a workload",
        "kix verify could not simulate the workload as compiled (for example an autoscaler's minimum above what the model places), so its level is not proved. The message says why; change the workload or its autoscaler so the model can place it.";
    VerifyPending = "K0602", Error, "a pod of the rollout or of a Recreate update stays Pending",
        "kix verify placed the workload's pods on the cluster's nodes (inventory or --state) with the scheduler model, and the scheduler's filters left a pod with no node; the message carries the scheduler's reason (`0/6 nodes are available: ...`). Add capacity, relax a hard rule, or lower the replicas.";
    VerifyLoneSelector = "K0603", Error, "a spread constraint's selector counts at most one pod",
        "kix verify found a topologySpreadConstraint whose labelSelector matches a set of at most one pod, so it balances nothing and the replicas may share a domain. Use the workload's spec.selector as labelSelector (or declare the single-replica siblings one [groups.X]).";
    VerifyNothingRunning = "K0604", Error, "no replica runs, so every domain loss takes them all",
        "kix verify placed none of the workload's replicas, so the loss of any domain leaves nothing running. See the K0602 findings for why the pods stay Pending.";
    VerifyNeverReplaced = "K0605", Error, "a lost pod tolerates node.kubernetes.io/unreachable forever and is never replaced",
        "A pod with a toleration of node.kubernetes.io/unreachable (NoExecute) without tolerationSeconds stays bound to the lost node: the taint manager never evicts it and the controller never replaces it (pkg/controller/tainteviction). Give the toleration a tolerationSeconds, or drop it.";
    VerifyStaysTerminating = "K0606", Error, "a lost StatefulSet pod stays Terminating: no replacement until force-deleted",
        "A StatefulSet pod on an unreachable node is marked for deletion but the kubelet cannot confirm it, so the StatefulSet controller does not create a pod of the same identity until it is force-deleted (Kubernetes docs, Force Delete StatefulSet Pods). The level must then hold on the remaining replicas; run more replicas or spread them wider.";
    VerifyReplacementPending = "K0607", Error, "a replacement stays Pending although surviving nodes have room",
        "After a domain loss the replacement of a lost pod stays Pending on a cluster whose surviving nodes have room: a hard rule (a DoNotSchedule spread, required anti-affinity, a node selector) keeps it off them. The message carries the scheduler's reason. Relax the rule, or use a ScheduleAnyway spread on the failed key.";
    VerifyNoRoomLeft = "K0608", Error, "a replacement stays Pending with no room left on the surviving nodes",
        "After a domain loss the surviving nodes have no room (CPU, memory or pods) for the replacement of a lost pod. Add capacity, or lower the requests.";
    VerifyNoReplicaLeft = "K0609", Error, "a domain's loss leaves no replica running",
        "The loss of one domain of the workload's level (a zone at level zone, a node at level node) takes every replica, so the level does not hold. Add replicas, or spread them over more domains of the level's key.";
    VerifyKeyMissing = "K0610", Warning, "a failure-domain key is missing from some or all simulated nodes",
        "kix verify found nodes (from the inventory or the --state snapshot) without a failure-domain key the cluster declares or a verified workload spreads on. A DoNotSchedule constraint on the key makes those nodes unschedulable for the pod (\"node(s) didn't match pod topology spread constraints (missing required label)\", pkg/scheduler/framework/plugins/podtopologyspread/filtering.go). A ScheduleAnyway constraint on it makes the scheduler's spread scoring skip them (scoring.go PreScore: a pod with its own constraints requires every soft key; a node lacking one is in IgnoredNodes, is not counted in any domain, and NormalizeScore gives it 0, the lowest spread score, for all of the pod's soft constraints together). Where some nodes lack the key, soft spreading steers pods away from them whatever their counts; where every node lacks it, soft spreading does nothing at all and replicas land where the other scores put them. Label the nodes, or drop the key.";
    VerifyRestsOnTieBreak = "K0611", Error, "the level holds only if the scheduler breaks score ties kix's way",
        "With score ties broken against the level (the scheduler picks among equally scored nodes at random, pkg/scheduler/schedule_one.go selectHost), a domain's loss leaves no replica running, though on kix's placement one survives: the verdict rests on chance. Use a DoNotSchedule spread on the level's key.";
    VerifyDrainBlocked = "K0612", Error, "draining a node is blocked by the workload's own budget or quorum",
        "The eviction API refuses every eviction of the workload's pod on the drained node (429: its PodDisruptionBudget allows no disruption), or evicting it leaves fewer than the pods the level needs running. The drain cannot finish. Loosen the budget (maxUnavailable: 1) or add replicas.";
    VerifyEvictionFailed = "K0613", Error, "evicting a pod of the workload fails with an error other than 429",
        "The eviction API returns an error other than 429 for a pod of the workload (for example a pod under two PodDisruptionBudgets: 500), so kubectl drain gives up on it and the drain fails. Keep one budget per workload.";
    VerifyEvictedReplacementPending = "K0614", Error, "the replacement of an evicted pod stays Pending",
        "A drain evicted one of the workload's pods and its replacement found no node (the cordoned node excluded). The message carries the scheduler's reason. Add room, or relax the hard rule that keeps it off the other nodes.";
    VerifyStrategyRefused = "K0615", Error, "the API server refuses the update strategy (maxSurge and maxUnavailable both 0)",
        "A Deployment's rollingUpdate with maxSurge and maxUnavailable both 0 is refused by the API server (ValidateRollingUpdateDeployment): it could never make progress. Set maxUnavailable or maxSurge above 0.";
    VerifyUpdateDeadlocks = "K0616", Error, "a Deployment's rolling update deadlocks",
        "The rolling update stops progressing, and the message says which limit blocks it, with the values. With maxUnavailable 0, no old pod may stop before a new one runs, and the surge pods (maxSurge) find no node: allow maxUnavailable: 1, or leave room for a surge pod. With maxUnavailable 1 or more, old pods did stop, and the new pods still fit on no node (their spread, affinity, host ports or requests, as each Pending pod's reasons say): loosen what the reasons name, or add room where the new pods may go.";
    VerifyUpdateDoesNotConverge = "K0617", Error, "a Deployment's rolling update does not converge",
        "The simulated rolling update stops with old pods left and new pods Pending. The message says where it stopped; leave room for the new pods or relax the hard rule that keeps them off the nodes.";
    VerifyUpdateDropsAvailability = "K0618", Error, "an update drops to no available replica",
        "During the simulated update every replica is unavailable at some point, so the workload is down although its level promises otherwise. Lower maxUnavailable below the replica count, or add replicas.";
    VerifyRecreate = "K0619", Error, "strategy Recreate stops every old pod before the new ones start",
        "strategy.type: Recreate deletes all old pods before creating new ones, so every update is an outage: this fails level pod and above. Use RollingUpdate.";
    VerifyUpdateStops = "K0620", Error, "a StatefulSet's update stops at a pod whose new revision stays Pending",
        "The StatefulSet controller replaces pods one at a time and waits for each to be Running and Ready; a new pod left Pending stops the update there for good. The message carries the scheduler's reason.";
    VerifyDrainUnmanaged = "K0621", Warning, "a drain stops at once: the node holds pods that declare no controller",
        "kubectl drain refuses to start on a node holding pods with no controller (`cannot delete Pods that declare no controller`, k8s.io/kubectl/pkg/drain/filters.go) unless --force is given. The drain of the node leaves the workload's replicas in place, so the cluster's operators cannot drain it. Run those pods under a controller, or drain with --force.";
    VerifyDrainNeverFinishes = "K0622", Warning, "a drain never finishes: another workload's pod refuses eviction",
        "Evicting another workload's pod on the drained node is refused every round (429: its budget allows no disruption), so the drain never finishes, although this workload's own pods went. Loosen that workload's budget.";
    VerifyScenarioFails = "K0623", Error, "a verify scenario fails",
        "A scenario of kix verify fails for the workload; the message names the scenario and what it found.";
    VerifyNoNodes = "K0624", Error, "a cluster has no nodes to verify on, and verify requires them",
        "kix verify simulates on the cluster file's [[nodePools]] or on a --state snapshot; this cluster has neither, so nothing about it is proved. With --require-nodes, or [verify] requireNodes = true in the cluster file, that is an error instead of a cluster reported as not verified. Declare the cluster's [[nodePools]] (kix init cluster --from-state writes them from `kubectl get nodes -o yaml`), or verify on a snapshot with --state.";
    VerifyScaleDownUnmet = "K0625", Error, "a scale-down from the autoscaler's maximum can leave the level unmet",
        "kix verify scaled the autoscaled workload from its autoscaler's maximum back to its minimum, deleting pods as the controllers choose them: the ReplicaSet controller's ActivePodsWithRanks order (unassigned, Pending, not ready, lower pod-deletion-cost, more of the set's pods on the same node first; pods equal on these are ordered by ready and creation times that LogarithmicScaleDown compares at random within a logarithmic bucket, so kix breaks those ties against the level), a StatefulSet's highest ordinals first. Neither consults spread constraints (kubernetes/kubernetes#124149). The loss of one domain of the level on the pods left then leaves fewer running than the level needs; the message names the split the scale-down left and the domain. A rollout restart (kubectl rollout restart) re-places the pods under the spread constraints, and the descheduler's RemovePodsViolatingTopologySpreadConstraint strategy evicts pods of a domain above a hard constraint's maxSkew; verify judges the state before either. Raise the autoscaler's minimum to a multiple of the domains that survives the loss, or run the descheduler.";
    VerifyVolumeBound = "K0626", Error, "a replacement can run only where its volume is bound, and no node there takes it",
        "A StatefulSet pod with a volumeClaimTemplates claim, or a pod of a workload sharing one claim, is bound to where its volume was provisioned (WaitForFirstConsumer: where its first pod ran): under [storage] topology = \"zonal\" (the default) to that zone, under \"node\" to that node. The scheduler's VolumeBinding filter then admits only nodes the PersistentVolume's node affinity matches (pkg/scheduler/framework/plugins/volumebinding: \"node(s) didn't match PersistentVolume's node affinity\"). A drain or a domain loss left the replacement Pending because no node there takes it; at level pod and node that is a failure (at level zone the member waits for its zone, reported as a fact). Give each zone room for a second node's worth of its pods (or a second node), use regional storage (topology = \"regional\" when the StorageClass is), or lower the level.";
    // K07xx: lint (linting manifests kix did not write).
    LintSpreadMissesOwnPods = "K0701", Error, "a spread constraint's selector selects none of its workload's pods",
        "kix lint: the scheduler counts only pods matching the constraint's labelSelector (podtopologyspread), so a selector that misses the workload's own pods balances some other set and never spreads this one. Copy the workload's spec.selector into labelSelector.";
    LintPdbSelectsNothing = "K0702", Warning, "a PodDisruptionBudget selects no workload's pods",
        "kix lint: no Deployment or StatefulSet in the linted manifests of the budget's namespace has pods its selector matches (a budget without a selector matches none), so it protects nothing; nor are they the pods prometheus-operator runs for a Prometheus or Alertmanager of the manifests. Make spec.selector match the workload's pod template labels; a budget over pods another operator runs, which lint cannot see, is accepted with the annotation kix.dev/allow: \"K0702\" on the budget.";
    LintSpreadCountsOthers = "K0703", Warning, "a spread constraint also counts another workload's pods",
        "kix lint: the constraint's labelSelector (with its matchLabelKeys) matches pods of another workload in the namespace, so the scheduler balances the two together and this workload can end up in one domain. Narrow labelSelector to the workload's own spec.selector, or add matchLabelKeys: [pod-template-hash] on a Deployment.";
    LintPdbOverSeveral = "K0704", Warning, "a PodDisruptionBudget selects pods of more than one workload",
        "kix lint: the budget is shared by the workloads it selects, so disrupting one can be blocked by the other and its count is the sum of both. Give each workload its own budget with the workload's own selector.";
    LintSpreadWithoutSelector = "K0705", Error, "a spread constraint has no labelSelector, or an empty one",
        "kix lint: a constraint without labelSelector counts no pods, and an empty one ({}) has been a silent no-op in recent releases (kubernetes#141339): either way nothing is spread. Set labelSelector to the workload's spec.selector.";
    LintHardSpreadWithoutHash = "K0706", Warning, "a hard spread on a Deployment lacks matchLabelKeys: [pod-template-hash]",
        "kix lint: without it a rolling update counts old and new pods together, so the new ReplicaSet can end up in one domain once the old pods are gone (Kubernetes docs, Pod Topology Spread Constraints, matchLabelKeys). Add matchLabelKeys: [pod-template-hash].";
    LintMinDomainsSoft = "K0707", Error, "minDomains on a constraint that is not DoNotSchedule",
        "kix lint: the API server refuses minDomains unless whenUnsatisfiable is DoNotSchedule (ValidateTopologySpreadConstraints). Remove minDomains, or make the constraint DoNotSchedule.";
    LintDuplicateConstraint = "K0708", Error, "two spread constraints share topologyKey and whenUnsatisfiable",
        "kix lint: the API server refuses a pod whose topologySpreadConstraints repeat a (topologyKey, whenUnsatisfiable) pair (ValidateTopologySpreadConstraints). Merge the two constraints.";
    LintMatchLabelKeyInSelector = "K0709", Error, "a matchLabelKeys key is also in the labelSelector",
        "kix lint: the API server refuses a matchLabelKeys key that the labelSelector already uses (ValidateTopologySpreadConstraints). Remove the key from one of them.";
    LintPdbZeroMaxUnavailable = "K0710", Error, "a PodDisruptionBudget has maxUnavailable 0",
        "kix lint: the disruption controller then allows no disruption at all, so every node drain that meets one of its pods waits forever. Use maxUnavailable: 1.";
    LintPdbMinAvailableBlocks = "K0711", Error, "a PodDisruptionBudget's minAvailable is 100% or at least the replica count",
        "kix lint: disruptionsAllowed = healthy - minAvailable (percentages rounded up) is 0 with every pod healthy, so every node drain that meets one of its pods waits forever. Use maxUnavailable: 1, or a minAvailable below the replica count.";
    LintPdbOverOneReplica = "K0712", Warning, "a PodDisruptionBudget covers a one-replica workload",
        "kix lint: a budget over one pod either blocks every drain (minAvailable 1, K0711) or, as here, lets the only pod go and protects nothing. Run two or more replicas, or drop the budget.";
    LintPodsUnderTwoPdbs = "K0713", Error, "a workload's pods are selected by two PodDisruptionBudgets",
        "kix lint: the eviction API refuses to evict a pod covered by more than one PodDisruptionBudget, so draining any node that runs one never finishes. Keep one budget per workload.";
    LintPdbNoEvictionPolicy = "K0714", Warning, "a PodDisruptionBudget has no explicit unhealthyPodEvictionPolicy",
        "kix lint: the default, IfHealthyBudget, lets a running but not-ready pod block drains while the budget is unhealthy (a crash-looping pod stops a node upgrade). Set unhealthyPodEvictionPolicy: AlwaysAllow (or IfHealthyBudget deliberately).";
    LintNoSpreadNoAntiAffinity = "K0715", Warning, "a multi-replica workload has neither spread constraints nor pod anti-affinity",
        "kix lint: only the scheduler's soft default spreading applies, so every replica may land on one node or zone (a workload whose pods take a hostPort is not reported: NodePorts keeps them one per node). Add topologySpreadConstraints over kubernetes.io/hostname (and the zone key) with the workload's selector.";
    LintZoneAntiAffinity = "K0716", Warning, "required pod anti-affinity on a zone key caps replicas at the zone count",
        "kix lint: a required anti-affinity term that matches the workload's own pods allows one pod per zone (interpodaffinity Filter), so replicas beyond the number of zones stay Pending, and so does a surge pod during a rolling update. Use a topologySpreadConstraint on the zone key with maxSkew 1 instead.";
    LintAutoscalerBelowTwo = "K0717", Warning, "an HPA lets a workload with a PDB scale below two replicas",
        "kix lint: at one replica the workload's budget either blocks every drain or protects nothing. Set the HorizontalPodAutoscaler's minReplicas to 2 or more.";
    LintHardRuleOnMissingKey = "K0720", Error, "a hard placement rule uses a key the cluster's nodes lack",
        "kix lint --cluster: a DoNotSchedule spread constraint or required pod affinity on a node label the cluster's nodes do not carry (its inventory, or the keys its file declares) leaves every pod Pending (podtopologyspread: missing required label). Use a key the nodes carry, or declare it.";
    LintAntiAffinityOnMissingKey = "K0721", Warning, "required pod anti-affinity uses a key the cluster's nodes lack",
        "kix lint --cluster: on a node without the term's topologyKey no anti-affinity term matches (interpodaffinity nodeMatchesAnyTopologyTerm), so the rule separates nothing. Use a key the nodes carry.";
    LintTooManyReplicas = "K0722", Error, "more replicas than a hard rule can place on the cluster's domains",
        "kix lint --cluster: required pod anti-affinity matching the workload's own pods places one pod per domain of its key, and a DoNotSchedule spread with minDomains above the number of domains places at most maxSkew pods per domain, and a container's hostPort places one pod per node (NodePorts: no two pods hold one port on a node); the replicas beyond stay Pending. A DoNotSchedule spread with minDomains at most the domain count places any number.";
    LintSetOfOne = "K0723", Warning, "single-replica Deployments that share labels each spread over only their own pod",
        "kix lint: Deployments of one replica in one namespace whose spread constraints each select only the workload's own pods balance a set of one, so all of them may land in one zone or node, though their pod templates share labels (members with identities: nameservers, quorum members, per-zone primaries). Select the siblings together (the labels they share, no matchLabelKeys), or in kix declare them one [groups.X].";
    LintAffinitySelectsNothing = "K0724", Warning, "a pod affinity or anti-affinity term selects no pod of the manifests",
        "kix lint: the term's labelSelector (required or preferred, pod affinity or anti-affinity) matches none of the workload's own pod template labels, in its namespaces no other workload's of the linted manifests and no pods an operator of the manifests runs; a term without a labelSelector selects no pod. A required or preferred anti-affinity term then keeps the pods apart from nothing, so every replica may share one node; a preferred affinity term draws them to nothing; a required affinity term is met only where the cluster already runs a pod it selects. Select the workload's own pod labels (the finding names them), or accept a term over pods these manifests do not hold with kix.dev/allow: \"K0724\" on the workload.";
    LintSameObjectTwice = "K0725", Warning, "one object is written twice in one environment of the manifests",
        "kix lint: two objects of one identity (API group, kind, namespace and name) in one environment (the files of one directory below a directory you lint, or of a file's own directory) would land in one apply, where the later replaces the earlier without a word, so half of what is written never runs. Identities repeated across environments (staging/ and prod/ each with Deployment web) are not this finding: each environment is then linted on its own, as the cluster it is. Keep one copy, or put each environment in a directory of its own.";
    LintAllowNotAWarning = "K0730", Error, "a kix.dev/allow annotation names something that is not a warning's code",
        "kix lint: the annotation kix.dev/allow: \"K0702,K0714\" on an object accepts those warnings on that object (they are not printed and are counted as acknowledged), as allow = [...] does in a cluster file. Each comma-separated entry must be the code of a warning; errors cannot be accepted. Correct or remove the entry (kix explain lists every code with its severity).";
}
