//! Issue 21: the machine-readable forms, through the real binary. Every command's `--format json` is one
//! document on stdout that validates against its committed schema (`schemas/<command>.schema.json`, what
//! `kix schema <command>` prints) and whose summary agrees with the exit status; `--format sarif`
//! validates against the official SARIF 2.1.0 schema (tests/formats/, with its provenance); `--format
//! junit` is read back by a JUnit parser; `--format github` annotations carry file and line. Then verify's
//! `--require-nodes` and `[verify] requireNodes`, and lint's `--deny-warnings`, `kix.dev/allow` and
//! `allow` under `--cluster`.

use crate::support::*;

/// The committed schema of a command's document, which `kix schema NAME` prints byte for byte; every
/// property it names has a description, and no object allows keys it does not name.
fn schema(name: &str) -> serde_json::Value {
    let committed = std::fs::read_to_string(repo_path(format!("schemas/{name}.schema.json"))).unwrap();
    Test::in_repo().args(["schema", name]).run().status(0).stdout(&committed);
    let schema: serde_json::Value = serde_json::from_str(&committed).unwrap();
    let mut pending = vec![("$".to_string(), &schema)];
    while let Some((at, node)) = pending.pop() {
        if let Some(properties) = node.get("properties").and_then(|p| p.as_object()) {
            assert_eq!(node["additionalProperties"], false, "{name}: {at} allows unnamed keys");
            for (key, property) in properties {
                let described = property.get("description").is_some() || property.get("$ref").is_some();
                assert!(described, "{name}: {at}.{key} has no description");
            }
        }
        match node {
            serde_json::Value::Object(map) => pending.extend(map.iter().map(|(k, v)| (format!("{at}.{k}"), v))),
            serde_json::Value::Array(items) => pending.extend(items.iter().map(|v| (at.clone(), v))),
            _ => {}
        }
    }
    schema
}

fn validate(schema: &serde_json::Value, document: &serde_json::Value, what: &str) {
    let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{what}: the schema is invalid: {e}"));
    let problems: Vec<String> =
        validator.iter_errors(document).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(problems.is_empty(), "{what} does not match its schema:\n{}\n{document:#}", problems.join("\n"));
}

/// Runs, checks stdout is one JSON document of `command`'s schema whose summary agrees with the exit status
/// and with the summary line on stderr, and returns it.
fn document(run: Output, command: &str, what: &str) -> serde_json::Value {
    let json: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{what}: stdout is not one JSON document ({e})"));
    validate(&schema(command), &json, what);
    assert_eq!(json["command"], command);
    assert_eq!(json["summary"]["exit_status"], run.status, "{what}: {}", json["summary"]);
    let line = format!("kix: {}\n", json["summary"]["text"].as_str().unwrap());
    assert!(run.stderr.ends_with(&line), "{what}: stderr ends {:?}, not {line:?}", run.stderr);
    json
}

#[test]
fn every_commands_json_is_one_document_that_matches_its_schema() {
    let t = Test::new().examples();
    let built = document(t.clone().args(["build", "--format", "json"]).run().status(0), "build", "build");
    assert!(built["written"]["instances"].as_u64().unwrap() > 0);
    document(t.clone().args(["build", "--check", "--format", "json"]).run().status(0), "build", "build --check");
    std::fs::write(t.root().join("out/prod/shop.yaml"), "stale\n").unwrap();
    let stale =
        document(t.clone().args(["build", "--check", "--diff", "--format", "json"]).run().status(1), "build", "stale");
    assert_eq!(stale["differences"][0]["change"], "changed");
    assert!(stale["differences"][0]["diff"].as_str().unwrap().starts_with("--- a/out/prod/shop.yaml"));
    assert_eq!(stale["summary"]["failed"], "1 file out of date");
    document(t.clone().args(["check", "--format", "json"]).run().status(0), "check", "check");
    let verified = document(t.clone().args(["verify", "--format", "json"]).run().status(0), "verify", "verify");
    assert!(verified["clusters"].as_array().unwrap().iter().any(|c| c["nodes_from"] == "none"));
    let explained = document(
        t.clone().args(["explain", "--cluster", "prod", "--instance", "shop", "--format", "json"]).run().status(0),
        "explain",
        "explain --instance",
    );
    // Locations are fields, as in diagnostics.
    let from = &explained["steps"][0]["from"];
    assert!(from["file"].is_string() && from["line"].is_u64() && from["column"].is_u64(), "{from}");
    let code =
        document(Test::in_repo().args(["explain", "K0714", "--format", "json"]).run().status(0), "explain", "code");
    assert_eq!(code["codes"][0]["code"], "K0714");
    document(Test::in_repo().args(["explain", "--format", "json"]).run().status(0), "explain", "codes");
    let no_honor = Test::in_dir("tests/fixtures/no-honor").args(["verify", "--format", "json"]).run().status(1);
    let failed = document(no_honor, "verify", "a failing verify");
    assert_eq!(failed["summary"]["errors"], 3);
    let linted = document(
        Test::in_repo().args(["lint", "tests/realworld/packages", "--format", "json"]).run(),
        "lint",
        "lint of the real-world corpus",
    );
    assert!(!linted["diagnostics"].as_array().unwrap().is_empty());
    assert!(linted["diagnostics"].as_array().unwrap().iter().all(|d| d["file"].is_string() && d["line"].is_u64()));
    let sim = ["--state", "tests/sim/three-zones.yaml"];
    let schedule =
        Test::in_repo().args(["schedule", sim[0], sim[1], "--pod", "tests/sim/web.yaml", "--format", "json"]);
    document(schedule.run().status(0), "schedule", "schedule");
    let simulate = Test::in_repo().args(["simulate", sim[0], sim[1], "tests/sim/web.yaml", "--format", "json"]);
    document(simulate.run().status(0), "simulate", "simulate");
    let unreadable =
        Test::in_repo().args(["simulate", "--state", "tests/sim/bad.yaml", "tests/sim/web.yaml", "--format", "json"]);
    let bad = document(unreadable.run().status(1), "simulate", "simulate of a bad snapshot");
    assert!(bad["diagnostics"][0]["file"].is_string(), "{bad}");
    // Broken input: the compile's errors are in the document, located.
    let broken = Test::new().fixture("tests/bad/r13-duplicate-name-and-version").args(["check", "--format", "json"]);
    let broken = document(broken.run().status(1), "check", "a tree that does not compile");
    assert!(broken["diagnostics"].as_array().unwrap().iter().any(|d| d["severity"] == "error" && d["line"].is_u64()));
}

/// The SARIF logs of build, check, lint and verify validate against the official 2.1.0 schema; results have
/// relative physical locations and levels, rules carry the explain text and a help URI.
#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let official: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo_path("tests/formats/sarif-schema-2.1.0.json")).unwrap())
            .unwrap();
    let runs = [
        ("build", Test::new().examples().args(["build", "--format", "sarif"]).run().status(0)),
        (
            "check",
            Test::new()
                .fixture("tests/bad/r13-duplicate-name-and-version")
                .args(["check", "--format", "sarif"])
                .run()
                .status(1),
        ),
        ("lint", Test::in_repo().args(["lint", "tests/realworld/packages", "--format", "sarif"]).run()),
        ("verify", Test::in_dir("tests/fixtures/no-honor").args(["verify", "--format", "sarif"]).run().status(1)),
        // K0624 at a whole file; K0502 about no file (a notification, not a result).
        ("no nodes", Test::new().examples().args(["verify", "--require-nodes", "--format", "sarif"]).run().status(1)),
        (
            "denied",
            Test::in_dir("tests/lint/k0714-pdb-no-eviction-policy")
                .args(["lint", "manifests.yaml", "--deny-warnings", "--format", "sarif"])
                .run()
                .status(1),
        ),
    ];
    for (what, run) in runs {
        let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{what}: {e}"));
        validate(&official, &log, &format!("{what} --format sarif"));
        assert_eq!(log["version"], "2.1.0");
        let sarif_run = &log["runs"][0];
        let rules = sarif_run["tool"]["driver"]["rules"].as_array().unwrap();
        let k0714 = rules.iter().find(|r| r["id"] == "K0714").unwrap();
        assert!(k0714["fullDescription"]["text"].as_str().unwrap().contains("unhealthyPodEvictionPolicy"));
        // Issue 41: no address of a repository that is not kix's; the help is whole.
        assert!(k0714.get("helpUri").is_none() && sarif_run["tool"]["driver"].get("informationUri").is_none());
        assert!(k0714["help"]["text"].as_str().unwrap().contains("`kix explain K0714` prints this text"));
        let results = sarif_run["results"].as_array().unwrap();
        if what != "build" {
            assert!(!results.is_empty(), "{what}: no results");
        }
        for result in results {
            assert_eq!(rules[result["ruleIndex"].as_u64().unwrap() as usize]["id"], result["ruleId"]);
            assert!(["error", "warning", "note"].contains(&result["level"].as_str().unwrap()), "{result}");
            let physical = &result["locations"][0]["physicalLocation"];
            let uri = physical["artifactLocation"]["uri"].as_str().unwrap_or_else(|| panic!("{what}: {result}"));
            assert!(!uri.starts_with('/') && !uri.contains(':'), "{what}: not relative: {uri}");
            assert!(std::path::Path::new(&run.root().join(uri)).exists() || what == "check", "{what}: {uri}");
            assert!(physical["region"]["startLine"].as_u64().unwrap() >= 1, "{what}: {result}");
        }
        assert_eq!(sarif_run["invocations"][0]["exitCode"], run.status);
        let notifications = sarif_run["invocations"][0]["toolExecutionNotifications"].as_array().unwrap();
        match what {
            "denied" => assert_eq!(notifications[0]["descriptor"]["id"], "K0502", "{notifications:?}"),
            "no nodes" => assert!(results.iter().any(|r| r["ruleId"] == "K0624"), "{results:?}"),
            _ => assert!(notifications.is_empty(), "{what}: {notifications:?}"),
        }
    }
}

#[test]
fn junit_parses_with_one_case_per_workload_and_scenario() {
    let failing = Test::in_dir("tests/fixtures/no-honor").args(["verify", "--format", "junit"]).run().status(1);
    let suites = junit_parser::from_reader(std::io::Cursor::new(failing.stdout.as_bytes())).unwrap();
    let prod = suites.suites.iter().find(|s| s.name == "prod").unwrap();
    let loss = prod.cases.iter().find(|c| c.original_name == "shop Deployment/api: domain-loss").unwrap();
    match &loss.status {
        junit_parser::TestStatus::Failure(failure) => {
            assert_eq!(failure.failure_type, "K0607");
            assert!(failure.text.contains("[K0607]"), "{}", failure.text);
        }
        other => panic!("domain-loss should fail: {other:?}"),
    }
    assert!(prod.cases.iter().any(|c| c.original_name == "shop Deployment/api: level zone" && c.status.is_failure()));
    assert!(prod.cases.iter().any(|c| c.original_name == "shop Deployment/api: rollout" && c.status.is_success()));
    let passing = Test::new().examples().args(["verify", "--format", "junit"]).run().status(0);
    let suites = junit_parser::from_reader(std::io::Cursor::new(passing.stdout.as_bytes())).unwrap();
    assert_eq!(suites.failures, 0);
    assert!(suites.tests > 20, "{}", suites.tests);
    let edge = suites.suites.iter().find(|s| s.name == "edge").unwrap();
    assert!(edge.cases[0].status.is_skipped(), "a cluster without nodes is not verified");
    let lint =
        Test::in_dir("tests/lint/k0701-spread-misses-own-pods").args(["lint", "manifests.yaml", "--format", "junit"]);
    let lint = lint.run().status(1);
    let suites = junit_parser::from_reader(std::io::Cursor::new(lint.stdout.as_bytes())).unwrap();
    assert_eq!(suites.suites[0].name, "manifests.yaml");
    let web = suites.suites[0].cases.iter().find(|c| c.original_name == "Deployment shop/web").unwrap();
    assert!(web.status.is_failure(), "{web:?}");
}

#[test]
fn github_annotations_carry_file_line_and_code() {
    let run =
        Test::in_dir("tests/lint/k0701-spread-misses-own-pods").args(["lint", "manifests.yaml", "--format", "github"]);
    let run = run.run().status(1);
    let line = run.stdout.lines().next().unwrap();
    assert!(line.starts_with("::error file=manifests.yaml,line="), "{line}");
    assert!(line.contains(",col=") && line.contains(",title=K0701::"), "{line}");
    let verify = Test::in_dir("tests/fixtures/no-honor").args(["verify", "--format", "github"]).run().status(1);
    assert!(
        verify.stdout.lines().all(|l| l.starts_with("::error file=packages/web/api.yaml,line=")),
        "{}",
        verify.stdout
    );
    assert!(verify.stderr.ends_with("kix: 3 errors, 0 warnings\n"), "{}", verify.stderr);
    let warned =
        Test::in_dir("tests/lint/k0714-pdb-no-eviction-policy").args(["lint", "manifests.yaml", "--format", "github"]);
    assert!(warned.run().status(0).stdout.starts_with("::warning file=manifests.yaml,line="));
}

#[test]
fn formats_a_command_does_not_take_are_usage_errors() {
    Test::in_repo().args(["explain", "K0101", "--format", "sarif"]).run().status(2).stderr_contains("takes text, json");
    Test::new().examples().args(["build", "--format", "junit"]).run().status(2);
    Test::new().examples().args(["build", "--stdout", "--cluster", "prod", "--format", "json"]).run().status(2);
}

#[test]
fn require_nodes_fails_a_cluster_with_nothing_to_verify_on() {
    let t = Test::new().examples();
    t.clone().args(["verify", "--cluster", "edge"]).run().status(0);
    t.clone()
        .args(["verify", "--cluster", "edge", "--require-nodes"])
        .run()
        .status(1)
        .stderr_contains("error[K0624]: cluster `edge` has no [[nodePools]]")
        .stderr_contains("--> clusters/edge.toml")
        .stderr_ends_with("kix: 1 error, 0 warnings (1 acknowledged)\n");
    let file = t.root().join("clusters/edge.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\n[verify]\nrequireNodes = true\n")).unwrap();
    let json = t.clone().args(["verify", "--cluster", "edge", "--format", "json"]).run().status(1).json();
    let error = &json["diagnostics"][0];
    assert_eq!(error["code"], "K0624");
    assert_eq!(error["file"], "clusters/edge.toml");
    assert!(error["line"].as_u64().unwrap() > 1, "located at the setting: {error}");
}

#[test]
fn lint_deny_warnings_and_what_allow_accepts() {
    let case = "tests/lint/k0714-pdb-no-eviction-policy";
    Test::in_dir(case).args(["lint", "manifests.yaml"]).run().status(0).stderr_contains("warning[K0714]");
    Test::in_dir(case)
        .args(["lint", "manifests.yaml", "--deny-warnings"])
        .run()
        .status(1)
        .stderr_contains("error[K0502]")
        .stderr_ends_with("kix: 1 error, 1 warning\n");
    // kix.dev/allow on the budget accepts K0714 there.
    let text = std::fs::read_to_string(repo_path(case).join("manifests.yaml")).unwrap();
    let pdb =
        text.find("kind: PodDisruptionBudget\nmetadata:\n").unwrap() + "kind: PodDisruptionBudget\nmetadata:\n".len();
    let annotated = format!("{}  annotations: {{kix.dev/allow: \"K0702, k0714\"}}\n{}", &text[..pdb], &text[pdb..]);
    let t = Test::new().tree([("m.yaml", annotated.as_str())]);
    t.clone()
        .args(["lint", "m.yaml", "--deny-warnings"])
        .run()
        .status(0)
        .stderr_ends_with("kix: 0 errors, 0 warnings (1 acknowledged)\n");
    // An error cannot be accepted: K0730 at the annotation.
    let t = Test::new().tree([("m.yaml", annotated.replace("K0702", "K0701").as_str())]);
    t.args(["lint", "m.yaml"]).run().status(1).stderr_contains("error[K0730]: kix.dev/allow: `K0701` is an error");
    // With --cluster, the cluster's allow accepts it on every object, an instance's on its namespace's.
    for allow in ["allow = [\"K0714\"]\n", ""] {
        let instance = if allow.is_empty() { "allow = [\"K0714\"]\n" } else { "" };
        let cluster =
            format!("availability = \"none\"\n{allow}\n[[instances]]\nname = \"shop\"\npackage = \"web\"\n{instance}");
        let t = Test::new().examples().tree([("clusters/c.toml", cluster.as_str()), ("m.yaml", text.as_str())]);
        t.args(["lint", "m.yaml", "--cluster", "c", "--deny-warnings"])
            .run()
            .status(0)
            .stderr_ends_with("kix: 0 errors, 0 warnings (1 acknowledged)\n");
    }
}
