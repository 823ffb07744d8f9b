//! The level enforced at admission (issue 40): the ValidatingAdmissionPolicies `kix build` writes for a
//! cluster with `[admission]`, evaluated offline as the API server applies them, by the `cel` crate (an
//! implementation independent of the API server's cel-go), from the emitted `_admission.yaml`.
//!
//! Requests are made here as the API server makes them (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers`:
//! a create's name from the object, a `/scale` request's object an `autoscaling/v1` Scale, a delete's object
//! null and its old object the stored one), with each kind's resource written out by hand.

use crate::support::{Test, copy_tree, read_tree, repo_path};
use kix_engines::admission::{Decision, PolicySet, Request};
use kix_yaml::Value;
use std::path::Path;

const EXEMPT: &str = "system:serviceaccount:argocd:argocd-application-controller";

/// The plural resource of a kind, as the API serves it.
fn resource_of(group: &str, kind: &str) -> String {
    match (group, kind) {
        ("monitoring.coreos.com", "Prometheus") => "prometheuses".into(),
        ("", "Endpoints") => "endpoints".into(),
        (_, kind) if kind.ends_with("Policy") => format!("{}ies", kind.to_lowercase().trim_end_matches('y')),
        (_, kind) if kind.ends_with('s') => format!("{}es", kind.to_lowercase()),
        (_, kind) => format!("{}s", kind.to_lowercase()),
    }
}

fn text<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    kix_kube::value::str_at(object, path).unwrap_or_default()
}

/// A request about `object` (or, for a delete, `old`).
fn request(operation: &str, object: Option<&Value>, old: Option<&Value>, user: &str) -> Request {
    let about = object.or(old).expect("an object");
    let api_version = text(about, &["apiVersion"]);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Request {
        operation: operation.into(),
        group: group.into(),
        version: version.into(),
        resource: resource_of(group, text(about, &["kind"])),
        subresource: String::new(),
        kind: text(about, &["kind"]).into(),
        namespace: text(about, &["metadata", "namespace"]).into(),
        name: text(about, &["metadata", "name"]).into(),
        object: object.cloned(),
        old_object: old.cloned(),
        user: user.into(),
        namespace_labels: Default::default(),
    }
}

/// `kubectl scale --replicas=N` of a workload: an UPDATE of its `/scale` subresource.
fn scale(workload: &Value, replicas: i64) -> Request {
    let scale = |n: i64| {
        kix_yaml::from_str(&format!(
            "apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {{name: {}, namespace: {}}}\nspec: {{replicas: {n}}}\n",
            text(workload, &["metadata", "name"]),
            text(workload, &["metadata", "namespace"])
        ))
        .unwrap()
    };
    let before = kix_kube::value::at(workload, &["spec", "replicas"]).and_then(Value::as_i64).unwrap_or(1);
    let mut request = request("UPDATE", Some(&scale(replicas)), Some(&scale(before)), "alice");
    // The request is about the workload's resource (`deployments`, `apps/v1`), its object a Scale.
    let api_version = text(workload, &["apiVersion"]);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    request.group = group.to_string();
    request.version = version.to_string();
    request.resource = resource_of(group, text(workload, &["kind"]));
    request.subresource = "scale".into();
    request
}

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    kix_yaml::from_str_all(&text).unwrap().into_iter().filter(|d| !d.is_null()).collect()
}

/// A built cluster: its policies and every object of its output.
struct Built {
    policies: PolicySet,
    objects: Vec<Value>,
}

fn built(out: &Path, cluster: &str) -> Built {
    let dir = out.join(cluster);
    let policies = PolicySet::from_documents(&documents(&dir.join("_admission.yaml"))).unwrap();
    let mut objects = Vec::new();
    for (file, _) in read_tree(&dir) {
        let name = file.to_string_lossy();
        if name != "_admission.yaml" && name != "kustomization.yaml" {
            objects.extend(documents(&dir.join(&file)));
        }
    }
    Built { policies, objects }
}

impl Built {
    fn find(&self, kind: &str, namespace: &str, name: &str) -> Value {
        self.objects
            .iter()
            .find(|o| {
                text(o, &["kind"]) == kind
                    && text(o, &["metadata", "namespace"]) == namespace
                    && text(o, &["metadata", "name"]) == name
            })
            .unwrap_or_else(|| panic!("{kind} {namespace}/{name} is not in the output"))
            .clone()
    }

    /// An UPDATE of `object` to `changed` by `user`.
    fn update(&self, object: &Value, changed: &Value, user: &str) -> Decision {
        self.policies.evaluate(&request("UPDATE", Some(changed), Some(object), user))
    }
}

/// Every object of a build, created and updated unchanged (and each workload scaled to its own count),
/// is admitted; returns how many of those requests a policy matched, so the caller can require that the
/// policies were exercised at all.
fn all_admitted(built: &Built, what: &str) -> usize {
    let mut matched = 0;
    for object in &built.objects {
        let mut requests = vec![
            request("CREATE", Some(object), None, "alice"),
            request("UPDATE", Some(object), Some(object), "alice"),
        ];
        if let Some(replicas) = kix_kube::value::at(object, &["spec", "replicas"]).and_then(Value::as_i64) {
            requests.push(scale(object, replicas));
        }
        for request in requests {
            let decision = built.policies.evaluate(&request);
            assert!(
                decision.violations.is_empty(),
                "{what}: kix's own {} {} {}/{} is refused: {:?}",
                request.operation,
                request.kind,
                request.namespace,
                request.name,
                decision.violations
            );
            matched += usize::from(!decision.matched.is_empty());
        }
    }
    matched
}

fn edit(object: &Value, change: impl FnOnce(&mut Value)) -> Value {
    let mut changed = object.clone();
    change(&mut changed);
    changed
}

fn at_mut<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Value {
    path.iter().fold(value, |value, key| value.get_mut(key).unwrap_or_else(|| panic!("no {key}")))
}

/// Where a workload's spread constraints are.
const SPREAD: [&str; 4] = ["spec", "template", "spec", "topologySpreadConstraints"];

/// Applies `change` to each hard (`DoNotSchedule`) spread constraint of a workload.
fn on_hard(workload: &mut Value, change: impl Fn(&mut Value)) {
    for constraint in at_mut(workload, &SPREAD).as_sequence_mut().unwrap() {
        if text(constraint, &["whenUnsatisfiable"]) == "DoNotSchedule" {
            change(constraint);
        }
    }
}

/// The messages of a decision that records violations under `audit` and refuses nothing.
fn recorded(decision: &Decision) -> String {
    assert!(!decision.denied() && !decision.violations.is_empty(), "expected recorded violations: {decision:?}");
    assert!(decision.violations.iter().all(|v| v.actions == ["Audit"]), "{decision:?}");
    decision.violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("\n")
}

fn refusal(decision: &Decision) -> String {
    assert!(decision.denied(), "admitted, expected a refusal: {decision:?}");
    decision.violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_examples_own_output_is_admitted_and_each_drift_refused_with_the_floor_or_key() {
    let run = Test::new().examples().args(["build"]).run().status(0);
    let out = run.root().join("out");
    let prod = built(&out, "prod");
    assert!(all_admitted(&prod, "prod") >= 30, "the policies matched too few of kix's own requests");

    // shop/api: a Deployment at level zone, 3 replicas, its zone spread derived, its budget kix's.
    let api = prod.find("Deployment", "shop", "api");
    let lowered = edit(&api, |d| *at_mut(d, &["spec", "replicas"]) = Value::from(1));
    let message = refusal(&prod.update(&api, &lowered, "alice"));
    assert!(message.contains("Deployment shop/api needs at least 3 replicas to hold level zone"), "{message}");
    assert!(message.contains("this request sets 1 at spec.replicas"), "{message}");
    assert!(message.contains("kix explain --cluster prod --instance shop --workload api"), "{message}");
    // A create of it with too few is refused as well (a GitOps tool re-creating it from an edited copy).
    assert!(prod.policies.evaluate(&request("CREATE", Some(&lowered), None, "alice")).denied());
    // At the floor, and above it, admitted.
    for n in [3, 5] {
        let at = edit(&api, |d| *at_mut(d, &["spec", "replicas"]) = Value::from(n));
        assert!(prod.update(&api, &at, "alice").violations.is_empty(), "{n} replicas refused");
    }

    // kubectl scale through /scale, below the floor and at it.
    let message = refusal(&prod.policies.evaluate(&scale(&api, 2)));
    assert!(
        message.contains("needs at least 3 replicas") && message.contains("this scale request sets 2"),
        "{message}"
    );
    assert!(prod.policies.evaluate(&scale(&api, 3)).violations.is_empty());

    // The zone constraint dropped, softened, loosened or pointed at other pods.
    type Mutation = fn(&mut Value);
    let mutations: [(&str, Mutation); 5] = [
        ("dropped", |d| {
            at_mut(d, &SPREAD).as_sequence_mut().unwrap().retain(|c| text(c, &["whenUnsatisfiable"]) != "DoNotSchedule")
        }),
        ("softened", |d| on_hard(d, |c| *c.get_mut("whenUnsatisfiable").unwrap() = Value::from("ScheduleAnyway"))),
        ("maxSkew 2", |d| on_hard(d, |c| *c.get_mut("maxSkew").unwrap() = Value::from(2))),
        ("selecting other pods", |d| {
            on_hard(d, |c| {
                *c.get_mut("labelSelector").unwrap() = kix_yaml::from_str("matchLabels: {app: someone-else}").unwrap()
            })
        }),
        ("with no selector", |d| on_hard(d, |c| drop(c.as_mapping_mut().unwrap().remove("labelSelector")))),
    ];
    for (what, mutate) in mutations {
        let changed = edit(&api, mutate);
        let message = refusal(&prod.update(&api, &changed, "alice"));
        assert!(
            message
                .contains("Deployment shop/api must keep a topology spread constraint on topology.kubernetes.io/zone"),
            "{what}: {message}"
        );
    }
    // A selector written with matchExpressions that still selects the pods is admitted.
    let expressions = edit(&api, |d| {
        on_hard(d, |c| {
            let labels =
                kix_kube::value::at(c, &["labelSelector", "matchLabels"]).and_then(Value::as_mapping).unwrap().clone();
            let terms: Vec<String> = labels
                .iter()
                .map(|(k, v)| {
                    format!("{{key: {}, operator: In, values: [{}]}}", k.as_str().unwrap(), v.as_str().unwrap())
                })
                .collect();
            *c.get_mut("labelSelector").unwrap() =
                kix_yaml::from_str(&format!("matchExpressions: [{}]", terms.join(", "))).unwrap();
        })
    });
    assert!(prod.update(&api, &expressions, "alice").violations.is_empty());

    // retail/storefront's HorizontalPodAutoscaler: its minimum lowered below the floor.
    let hpa = prod.find("HorizontalPodAutoscaler", "retail", "storefront");
    let floor = kix_kube::value::at(&hpa, &["spec", "minReplicas"]).and_then(Value::as_i64).unwrap();
    let lowered = edit(&hpa, |h| *at_mut(h, &["spec", "minReplicas"]) = Value::from(floor - 1));
    let message = refusal(&prod.update(&hpa, &lowered, "alice"));
    assert!(message.contains(&format!("needs at least {floor} replicas")), "{message}");
    assert!(message.contains(&format!("this request sets minReplicas {}", floor - 1)), "{message}");
    // Its Deployment's count is the autoscaler's: not checked on the Deployment or its /scale.
    let storefront = prod.find("Deployment", "retail", "storefront");
    assert!(prod.policies.evaluate(&scale(&storefront, 1)).violations.is_empty());

    // shop/api's budget: deleted or weakened by anyone but the exempt applier.
    let budget = prod.find("PodDisruptionBudget", "shop", "api");
    let message = refusal(&prod.policies.evaluate(&request("DELETE", None, Some(&budget), "alice")));
    assert!(
        message.contains("PodDisruptionBudget api is kix's budget for Deployment shop/api (level zone)"),
        "{message}"
    );
    assert!(message.contains(EXEMPT), "{message}");
    assert!(prod.policies.evaluate(&request("DELETE", None, Some(&budget), EXEMPT)).violations.is_empty());
    let weakened = edit(&budget, |b| *at_mut(b, &["spec", "maxUnavailable"]) = Value::from(2));
    assert!(refusal(&prod.update(&budget, &weakened, "alice")).contains("must keep maxUnavailable: 1"));
    let min_available = edit(&budget, |b| {
        let spec = at_mut(b, &["spec"]).as_mapping_mut().unwrap();
        spec.remove("maxUnavailable");
        spec.insert(Value::from("minAvailable"), Value::from(2));
    });
    assert!(prod.update(&budget, &min_available, "alice").denied());
    assert!(prod.update(&budget, &weakened, EXEMPT).violations.is_empty());

    // Objects kix did not compile are never matched: another Deployment in shop, an `api` in a namespace
    // kix does not compile it into, a budget of the same name elsewhere, and their scales and deletes.
    let other = edit(&lowered_to(&api, 1), |d| *at_mut(d, &["metadata", "name"]) = Value::from("other"));
    let elsewhere = edit(&lowered_to(&api, 1), |d| *at_mut(d, &["metadata", "namespace"]) = Value::from("elsewhere"));
    let budget_elsewhere = edit(&budget, |b| *at_mut(b, &["metadata", "namespace"]) = Value::from("elsewhere"));
    for (what, decision) in [
        ("another Deployment", prod.policies.evaluate(&request("CREATE", Some(&other), None, "alice"))),
        ("api elsewhere", prod.policies.evaluate(&request("CREATE", Some(&elsewhere), None, "alice"))),
        ("api elsewhere scaled", prod.policies.evaluate(&scale(&elsewhere, 0))),
        ("another scaled", prod.policies.evaluate(&scale(&other, 0))),
        ("a budget elsewhere", prod.policies.evaluate(&request("DELETE", None, Some(&budget_elsewhere), "alice"))),
    ] {
        assert!(decision.matched.is_empty() && decision.violations.is_empty(), "{what}: {decision:?}");
    }
}

fn lowered_to(workload: &Value, replicas: i64) -> Value {
    edit(workload, |d| *at_mut(d, &["spec", "replicas"]) = Value::from(replicas))
}

/// Adds `[admission] enforce = "deny"` to every cluster file of a tree.
fn enforce_everywhere(root: &Path) {
    for entry in std::fs::read_dir(root.join("clusters")).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if text.contains("[admission]") {
            continue;
        }
        let end = text.find("\n[").map_or(text.len(), |i| i + 1);
        text.insert_str(end, &format!("[admission]\nenforce = \"deny\"\nexempt = [\"{EXEMPT}\"]\n"));
        std::fs::write(&path, text).unwrap();
    }
}

#[test]
fn the_real_world_corpus_is_admitted_by_its_own_policies() {
    let run = Test::new();
    copy_tree(&repo_path("tests/realworld/clusters"), &run.root().join("clusters"));
    copy_tree(&repo_path("tests/realworld/packages"), &run.root().join("packages"));
    enforce_everywhere(run.root());
    let run = run.args(["build", "--quiet"]).run();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let out = run.root().join("out");
    let mut matched = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let cluster = entry.unwrap().file_name().to_string_lossy().into_owned();
        matched += all_admitted(&built(&out, &cluster), &cluster);
    }
    assert!(matched >= 100, "the corpus's policies matched only {matched} of kix's own requests");

    // An operator's resource is guarded at its profile's count field and its /scale: CloudNativePG's
    // Cluster runs `spec.instances` pods, and its CRD maps /scale to `.spec.instances`.
    // The corpus's prod enforces with `audit`: violations are recorded, nothing is refused.
    let prod = built(&out, "prod");
    let pg = prod.find("Cluster", "postgres", "cluster-example");
    let fewer = edit(&pg, |c| *at_mut(c, &["spec", "instances"]) = Value::from(1));
    let message = recorded(&prod.update(&pg, &fewer, "alice"));
    assert!(message.contains("Cluster postgres/cluster-example needs at least 3 replicas"), "{message}");
    assert!(message.contains("at spec.instances"), "{message}");
    recorded(&prod.policies.evaluate(&scale(&pg, 2)));
    // Its spread field is the operator's, checked for the key, DoNotSchedule and maxSkew.
    let soft = edit(&pg, |c| {
        for constraint in at_mut(c, &["spec", "topologySpreadConstraints"]).as_sequence_mut().unwrap() {
            *constraint.get_mut("whenUnsatisfiable").unwrap() = Value::from("ScheduleAnyway");
        }
    });
    assert!(recorded(&prod.update(&pg, &soft, "alice")).contains("must keep a topology spread constraint"));
}

#[test]
fn a_scaled_objects_minimum_is_guarded_at_the_floor() {
    let package = "[meta]\nname = \"api\"\nversion = \"1.0.0\"\n[workloads.api]\nreplicas = { none = 1, pod = 2 }\n";
    let manifests = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  \
        template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: example/api:1\n\
        ---\napiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata:\n  name: api\nspec:\n  scaleTargetRef:\n    name: api\n  \
        minReplicaCount: 2\n  maxReplicaCount: 10\n  triggers:\n  - type: cpu\n    metadata: {value: \"60\"}\n";
    let cluster = "availability = \"pod\"\n[capabilities]\nmultiNode = true\n[admission]\nenforce = \"deny\"\n\
        [[instances]]\nname = \"shop\"\npackage = \"api\"\n";
    let run = Test::new()
        .tree([("clusters/c.toml", cluster), ("packages/api/kix.toml", package), ("packages/api/api.yaml", manifests)])
        .args(["build"])
        .run()
        .status(0);
    let c = built(&run.root().join("out"), "c");
    let scaled = c.find("ScaledObject", "shop", "api");
    let to_zero = edit(&scaled, |s| drop(at_mut(s, &["spec"]).as_mapping_mut().unwrap().remove("minReplicaCount")));
    let message = refusal(&c.update(&scaled, &to_zero, "alice"));
    assert!(message.contains("Deployment shop/api needs at least 2 replicas to hold level pod"), "{message}");
    assert!(
        message.contains("ScaledObject api may not scale it below that (this request sets minReplicaCount 0)"),
        "{message}"
    );
    assert!(c.update(&scaled, &scaled, "alice").violations.is_empty());
}

#[test]
fn admission_lists_exactly_the_drifted_objects_of_a_snapshot() {
    let run = Test::new().examples().args(["build"]).run().status(0);
    let prod = built(&run.root().join("out"), "prod");
    // The snapshot: everything kix wrote for prod, then three drifts and one object kix did not compile.
    let api = prod.find("Deployment", "shop", "api");
    let hpa = prod.find("HorizontalPodAutoscaler", "retail", "storefront");
    let mut objects: Vec<Value> = prod
        .objects
        .iter()
        .filter(|o| !(text(o, &["kind"]) == "PodDisruptionBudget" && text(o, &["metadata", "name"]) == "cache"))
        .map(|o| match (text(o, &["kind"]), text(o, &["metadata", "name"]), text(o, &["metadata", "namespace"])) {
            ("Deployment", "api", "shop") => lowered_to(&api, 1),
            ("HorizontalPodAutoscaler", "storefront", _) => {
                edit(&hpa, |h| *at_mut(h, &["spec", "minReplicas"]) = Value::from(1))
            }
            _ => o.clone(),
        })
        .collect();
    objects.push(edit(&lowered_to(&api, 1), |d| *at_mut(d, &["metadata", "name"]) = Value::from("not-kix")));
    let mut state = String::new();
    for object in &objects {
        state.push_str("---\n");
        kix_yaml::emit::write_document(&mut state, object);
    }
    std::fs::write(run.root().join("state.yaml"), &state).unwrap();
    let drifted =
        Test::in_dir(run.root()).args(["admission", "--cluster", "prod", "--state", "state.yaml"]).run().status(1);
    assert!(drifted.stdout.starts_with("cluster prod ([admission] enforce = \"deny\"): 3 of "), "{}", drifted.stdout);
    let listed: Vec<&str> =
        drifted.stdout.lines().filter(|l| l.starts_with("  ") && !l.starts_with("    ")).map(str::trim).collect();
    let mut names = listed.clone();
    names.sort_unstable();
    assert_eq!(
        names,
        ["Deployment shop/api", "HorizontalPodAutoscaler retail/storefront", "PodDisruptionBudget shop/cache"]
    );
    assert!(drifted.stdout.contains("Deployment shop/api needs at least 3 replicas"), "{}", drifted.stdout);
    assert!(!drifted.stdout.contains("not-kix"), "{}", drifted.stdout);

    let json = Test::in_dir(run.root())
        .args(["admission", "--cluster", "prod", "--state", "state.yaml", "--format", "json"])
        .run()
        .status(1)
        .json();
    let drifts = json["drifted"].as_array().unwrap();
    assert_eq!(drifts.len(), 3);
    assert!(drifts.iter().any(|d| d["kind"] == "PodDisruptionBudget" && d["name"] == "cache" && d["missing"] == true));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo_path("schemas/admission.schema.json")).unwrap()).unwrap();
    crate::audit::conforms(&json, &schema, &schema, "admission").unwrap();

    // The output as kix wrote it: nothing would be refused.
    let mut clean = String::new();
    for object in &prod.objects {
        clean.push_str("---\n");
        kix_yaml::emit::write_document(&mut clean, object);
    }
    std::fs::write(run.root().join("clean.yaml"), &clean).unwrap();
    let ok = Test::in_dir(run.root()).args(["admission", "--cluster", "prod", "--state", "clean.yaml"]).run().status(0);
    assert!(ok.stdout.contains("): 0 of "), "{}", ok.stdout);
}

#[test]
fn admission_on_a_cluster_without_it_names_the_file() {
    let run = Test::new().examples().args(["build"]).run().status(0);
    std::fs::write(run.root().join("state.yaml"), "apiVersion: v1\nkind: List\nitems: []\n").unwrap();
    let refused =
        Test::in_dir(run.root()).args(["admission", "--cluster", "dev", "--state", "state.yaml"]).run().status(1);
    assert!(refused.stderr.contains("error[K0482]: cluster dev has no [admission]"), "{}", refused.stderr);
    assert!(refused.stderr.contains("clusters/dev.toml"), "{}", refused.stderr);
}

#[test]
fn an_empty_or_repeated_exempt_name_is_refused_where_it_is_written() {
    let run = Test::new()
        .examples()
        .tree([(
            "clusters/dev.toml",
            "availability = \"pod\"\n[admission]\nenforce = \"warn\"\nexempt = [\"a\", \"\", \"a\"]\n".to_string(),
        )])
        .args(["build"])
        .run()
        .status(1);
    assert!(run.stderr.contains("error[K0481]: exempt user `` is empty"), "{}", run.stderr);
    assert!(run.stderr.contains("error[K0481]: exempt user `a` is written twice"), "{}", run.stderr);
    assert!(run.stderr.contains("clusters/dev.toml:4:"), "{}", run.stderr);
    assert!(!run.root().join("out").exists(), "a refused build wrote output");
}

#[test]
fn warn_and_audit_bind_with_their_action() {
    let run = Test::new().examples();
    let path = run.root().join("clusters/prod.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace("enforce = \"deny\"", "enforce = \"warn\"");
    std::fs::write(&path, text).unwrap();
    let run = run.args(["build"]).run().status(0);
    let prod = built(&run.root().join("out"), "prod");
    let api = prod.find("Deployment", "shop", "api");
    let decision = prod.update(&api, &lowered_to(&api, 1), "alice");
    assert!(!decision.denied(), "warn refused: {decision:?}");
    assert!(decision.violations.iter().all(|v| v.actions == ["Warn"]) && !decision.violations.is_empty());
}

#[test]
fn a_namespace_without_its_params_refuses_kixs_objects_and_nothing_else() {
    let run = Test::new().examples().args(["build"]).run().status(0);
    let dir = run.root().join("out/prod");
    let without: Vec<Value> = documents(&dir.join("_admission.yaml"))
        .into_iter()
        .filter(|d| !(text(d, &["kind"]) == "ConfigMap" && text(d, &["metadata", "namespace"]) == "shop"))
        .collect();
    let policies = PolicySet::from_documents(&without).unwrap();
    let prod = built(&run.root().join("out"), "prod");
    let api = prod.find("Deployment", "shop", "api");
    let decision = policies.evaluate(&request("UPDATE", Some(&api), Some(&api), "alice"));
    assert!(refusal(&decision).contains("no params found for policy binding with `Deny` parameterNotFoundAction"));
    let other = edit(&api, |d| *at_mut(d, &["metadata", "name"]) = Value::from("other"));
    assert!(policies.evaluate(&request("CREATE", Some(&other), None, "alice")).violations.is_empty());
}

/// Every emitted expression is portable (CEL's standard definitions and macros only) and within the API
/// server's cost limits with every list it walks at 50 elements (50 spread constraints of 50 selector
/// terms of 50 values each, 125,000 values, is far beyond any real pod template); the figures are
/// docs/admission.md's table (`KIX_ADMISSION_COSTS=1` prints it, at 10 and 50 elements).
#[test]
fn every_expression_is_portable_and_within_the_cost_limits() {
    use kix_engines::admission::cost::{estimate, unportable};
    let run = Test::new().examples().args(["build"]).run().status(0);
    let prod = built(&run.root().join("out"), "prod");
    let mut per_policy: std::collections::BTreeMap<&str, u64> = Default::default();
    let mut table = String::new();
    let expressions = prod.policies.expressions();
    assert!(expressions.len() >= 30, "too few expressions: {}", expressions.len());
    for (policy, at, text, expression) in &expressions {
        assert_eq!(unportable(expression), Vec::<String>::new(), "{policy} {at}: `{text}`");
        assert!(!text.contains(".?") && !text.contains("orValue") && !text.contains("optional."), "{policy} {at}");
        let cost = estimate(expression, 50);
        assert!(cost < 1_000_000, "{policy} {at} costs {cost} at 50 elements: `{text}`");
        *per_policy.entry(policy).or_default() += cost;
        table.push_str(&format!("| {policy} | {at} | {} | {cost} |\n", estimate(expression, 10)));
    }
    for (policy, cost) in &per_policy {
        assert!(*cost < 10_000_000, "{policy}'s expressions cost {cost} together at 50 elements");
    }
    if std::env::var_os("KIX_ADMISSION_COSTS").is_some() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{table}");
    }
}
