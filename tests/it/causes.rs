//! One diagnostic per cause (issue 42): a package ceiling that lowers many instances of many clusters is
//! one K0307 in every output form, naming how many instances and clusters and the first few, while the
//! JSON record lists every instance; `allow` and `--deny-warnings` act on what is left of the cause, and
//! the summary counts causes and the instances they stand for.

use crate::support::Test;

const API: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers: [{name: api, image: example/api:1}]
";

/// A fleet of `clusters` clusters of `instances` instances each, every one of package `web` (whose ceiling
/// is `node`) asking for `zone`, and one instance of `db` (ceiling `pod`) in the first cluster. `allow` is
/// written into the last cluster's file.
fn fleet(clusters: usize, instances: usize, allow: &str) -> Test {
    let mut files: Vec<(String, String)> = vec![
        ("packages/web/kix.toml".into(), "[meta]\nname = \"web\"\nversion = \"1.0.0\"\n[meta.availability]\nmax = \"node\"\n[workloads.api]\nreplicas = { none = 1, pod = 2, node = 2 }\n".into()),
        ("packages/web/api.yaml".into(), API.into()),
        ("packages/db/kix.toml".into(), "[meta]\nname = \"db\"\nversion = \"2.0.0\"\n[meta.availability]\nmax = \"pod\"\n[workloads.api]\nreplicas = { none = 1, pod = 2 }\n".into()),
        ("packages/db/api.yaml".into(), API.into()),
    ];
    for c in 0..clusters {
        let mut text = String::from(
            "availability = \"zone\"\n[capabilities]\nmultiNode = true\navailabilityZones = [\"a\", \"b\", \"c\"]\n",
        );
        if c == clusters - 1 {
            text.insert_str(0, allow);
        }
        for i in 0..instances {
            text.push_str(&format!("[[instances]]\nname = \"i{i}\"\npackage = \"web\"\ncreateNamespace = true\n"));
        }
        if c == 0 {
            text.push_str("[[instances]]\nname = \"d\"\npackage = \"db\"\ncreateNamespace = true\n");
        }
        files.push((format!("clusters/c{c}.toml"), text));
    }
    Test::new().tree(files)
}

#[test]
fn a_ceiling_lowering_a_fleet_is_one_warning_naming_its_instances() {
    let run = fleet(4, 5, "").args(["check"]).run().status(0);
    let stderr = &run.stderr;
    assert_eq!(stderr.matches("warning[K0307]").count(), 2, "one per cause (web's and db's):\n{stderr}");
    assert!(
        stderr.contains(
            "warning[K0307]: package `web` 1.0.0 supports at most `node`, so the requested level `zone` is lowered to `node`\n"
        ),
        "{stderr}"
    );
    assert!(stderr.contains(" --> packages/web/kix.toml:5:7\n"), "at the ceiling, the cause:\n{stderr}");
    assert!(
        stderr.contains(
            "= in package web of 20 instances of 4 clusters: c0/i0, c0/i1, c0/i2 and 17 more; kix check --format json lists them\n"
        ),
        "{stderr}"
    );
    // A cause of one instance reads as any single diagnostic.
    assert!(stderr.contains("= in cluster c0, instance d, package db\n"), "{stderr}");
    assert!(stderr.ends_with("kix: 0 errors, 2 warnings (21 in instances)\n"), "{stderr}");
    assert!(stderr.lines().count() < 20, "two findings, not 21:\n{stderr}");
}

#[test]
fn json_keeps_every_instance_in_the_one_record() {
    let run = fleet(4, 5, "").args(["check", "--format", "json"]).run().status(0);
    let diagnostics = run.diagnostics();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    let web = diagnostics.iter().find(|d| d["package"] == "web").unwrap();
    let listed: Vec<String> = web["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("{}/{}", i["cluster"].as_str().unwrap(), i["instance"].as_str().unwrap()))
        .collect();
    let every: Vec<String> = (0..4).flat_map(|c| (0..5).map(move |i| format!("c{c}/i{i}"))).collect();
    assert_eq!(listed, every);
    assert_eq!((web["cluster"].as_str(), web["instance"].as_str()), (Some("c0"), Some("i0")), "the first");
    let db = diagnostics.iter().find(|d| d["package"] == "db").unwrap();
    assert!(db.get("instances").is_none(), "one instance: no list: {db}");
    let summary = &run.json()["summary"];
    assert_eq!(summary["warnings"], 2);
    assert_eq!(summary["instances"], serde_json::json!({ "errors": 0, "warnings": 21 }));
    assert_eq!(summary["text"], "0 errors, 2 warnings (21 in instances)");
}

#[test]
fn sarif_and_github_say_a_cause_once() {
    let sarif = fleet(3, 2, "").args(["check", "--format", "sarif"]).run().status(0).json();
    let results = sarif["runs"][0]["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 2, "{results:?}");
    let web = results.iter().find(|r| r["message"]["text"].as_str().unwrap().contains("`web`")).unwrap();
    assert_eq!(
        web["message"]["text"],
        "package `web` 1.0.0 supports at most `node`, so the requested level `zone` is lowered to `node`\n\
         in package web of 6 instances of 3 clusters: c0/i0, c0/i1, c1/i0 and 3 more; kix check --format json lists them"
    );
    let github = fleet(3, 2, "").args(["check", "--format", "github"]).run().status(0);
    let lines: Vec<&str> = github.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", github.stdout);
    assert!(lines.iter().any(|l| l.starts_with("::warning file=packages/web/kix.toml,line=5,col=7,title=K0307::")
        && l.ends_with("%0Ain package web of 6 instances of 3 clusters: c0/i0, c0/i1, c1/i0 and 3 more; kix check --format json lists them")), "{}", github.stdout);
}

#[test]
fn allow_and_deny_warnings_work_on_the_cause() {
    // The last cluster acknowledges K0307: its instances leave the cause, counted as acknowledged.
    let run = fleet(3, 2, "allow = [\"K0307\"]\n").args(["check"]).run().status(0);
    assert!(
        run.stderr.contains("= in package web of 4 instances of 2 clusters: c0/i0, c0/i1, c1/i0 and 1 more;"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.ends_with("kix: 0 errors, 2 warnings (5 in instances; 2 acknowledged)\n"), "{}", run.stderr);
    // Every instance acknowledged: the cause is gone.
    let mut allowed = fleet(1, 3, "allow = [\"K0307\"]\n").args(["check"]).run().status(0);
    allowed = allowed.stderr_ends_with("kix: 0 errors, 0 warnings (4 acknowledged)\n");
    assert!(!allowed.stderr.contains("K0307"), "{}", allowed.stderr);
    // Denied once, counting causes, the instances said beside.
    fleet(3, 2, "")
        .args(["check", "--deny-warnings"])
        .run()
        .status(1)
        .stderr_contains("error[K0502]: 2 warning(s) (7 in instances) denied by --deny-warnings\n")
        .stderr_ends_with("kix: 1 error, 2 warnings (7 in instances)\n");
}
