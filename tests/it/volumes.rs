//! What the scheduler never re-checks (issue 39), part 2: a pod returns to where its volume is bound.
//!
//! The second Done-when case: a 3-replica StatefulSet with a `volumeClaimTemplates` claim at
//! level pod on 3 zones of one node each. Figures by hand, from upstream:
//! - The claim is provisioned where its pod is first scheduled (WaitForFirstConsumer), and a zonal
//!   disk's PersistentVolume gets a node affinity on that zone. VolumeBinding
//!   (`pkg/scheduler/framework/plugins/volumebinding/binder.go`, `checkBoundClaims`) then admits only
//!   nodes that match it: "node(s) didn't match PersistentVolume's node affinity".
//! - Draining zone a's only node cordons it ("node(s) were unschedulable") and evicts db-0, which
//!   keeps its name and claim (`data-db-0`): the two other nodes are in zones b and c, so the
//!   replacement stays Pending, `0/3 nodes are available: 2 ... PersistentVolume's node affinity, 1
//!   ... unschedulable`. At level pod every evicted pod must come back: the drain fails.
//! - With `topology = "regional"` the volume follows the pod anywhere: db-0 goes to zone b or c, and
//!   the drain passes.

use crate::support::Test;
use serde_json::Value;

const PACKAGE: &str = "[meta]\nname = \"db\"\nversion = \"1.0.0\"\n[workloads.db]\nreplicas = { none = 1, pod = 3, node = 3, zone = 3 }\n";

const STATEFULSET: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  serviceName: db\n  \
    selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    spec:\n      \
    containers:\n      - name: db\n        image: example/db:1\n        resources:\n          \
    requests: {cpu: 500m, memory: 1Gi}\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec:\n      \
    accessModes: [ReadWriteOnce]\n      resources:\n        requests: {storage: 10Gi}\n";

fn tree(level: &str, storage: Option<&str>) -> Test {
    let mut cluster = format!(
        "availability = \"{level}\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n\
         [[instances]]\nname = \"data\"\npackage = \"db\"\n\
         [[nodePools]]\nname = \"general\"\nzones = [\"a\", \"b\", \"c\"]\nnodesPerZone = 1\n"
    );
    if let Some(topology) = storage {
        cluster.push_str(&format!("[storage]\ntopology = \"{topology}\"\n"));
    }
    Test::new().tree([
        ("clusters/c.toml", cluster),
        ("packages/db/kix.toml", PACKAGE.to_string()),
        ("packages/db/db.yaml", STATEFULSET.to_string()),
    ])
}

fn drain(json: &Value) -> Value {
    let w = &json["clusters"][0]["instances"][0]["workloads"][0];
    w["scenarios"].as_array().unwrap().iter().find(|s| s["scenario"] == "drain").unwrap().clone()
}

fn findings(scenario: &Value) -> Vec<String> {
    scenario["findings"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_statefulset_pod_on_a_zonal_volume_cannot_leave_its_drained_zone() {
    // Zonal is the default: the same with and without the table.
    for storage in [None, Some("zonal")] {
        let out = tree("pod", storage).args(["verify", "--format", "json"]).run().status(1);
        let drain = drain(&out.json());
        assert_eq!(drain["pass"], false, "{drain}");
        let findings = findings(&drain);
        assert_eq!(findings.len(), 3, "{findings:?}");
        assert_eq!(
            findings[0],
            "drain of general-a-1: replacement db-0 of evicted db-0 can run only in zone a, where its volume is bound, \
             and stays Pending: 0/3 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity, \
             1 node(s) were unschedulable."
        );
        assert_eq!(drain["steps"][0]["pending"]["db-0"].as_str().map(|m| m.starts_with("0/3 nodes")), Some(true));
        let codes: Vec<String> =
            out.diagnostics().iter().map(|d| d["code"].as_str().unwrap_or_default().to_string()).collect();
        assert_eq!(codes.iter().filter(|c| *c == "K0626").count(), 3, "{codes:?}");
    }
}

#[test]
fn on_regional_storage_the_drained_pod_goes_to_another_zone() {
    let out = tree("pod", Some("regional")).args(["verify", "--format", "json"]).run().status(0);
    let drain = drain(&out.json());
    assert_eq!(drain["pass"], true, "{drain}");
    let placed = drain["steps"][0]["placed"]["db-0"].as_str().unwrap().to_string();
    assert!(placed == "general-b-1" || placed == "general-c-1", "{drain}");
}

#[test]
fn at_level_zone_the_drained_member_waits_for_its_zone() {
    let out = tree("zone", None).args(["verify", "--format", "json"]).run();
    let drain = drain(&out.json());
    assert_eq!(drain["pass"], true, "{drain}");
    let findings = findings(&drain);
    assert!(
        findings[0].starts_with(
            "drain of general-a-1: replacement db-0 of evicted db-0 waits for zone a, where its volume is bound"
        ),
        "{findings:?}"
    );
}

#[test]
fn a_node_local_volume_binds_the_pod_to_its_node() {
    // Two nodes a zone: a zonal disk lets db-0 move to its zone's other node; a local volume does not.
    let two = |topology: &str| {
        let mut t = tree("pod", Some(topology));
        let path = t.root().join("clusters/c.toml");
        let text = std::fs::read_to_string(&path).unwrap().replace("nodesPerZone = 1", "nodesPerZone = 2");
        std::fs::write(path, text).unwrap();
        t = t.args(["verify", "--format", "json"]);
        drain(&t.run().json())
    };
    assert_eq!(two("zonal")["pass"], true);
    let local = two("node");
    assert_eq!(local["pass"], false, "{local}");
    assert!(findings(&local)[0].contains("can run only in node general-a-1, where its volume is bound"), "{local}");
}
