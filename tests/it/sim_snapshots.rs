//! The snapshot corpus (issue 9): hand-written `kubectl get nodes,pods,pdb -A -o yaml` snapshots
//! under tests/sim/snapshots/, one per behaviour of a real cluster that decides a verdict. Each
//! file names, in its opening comment, the upstream source that decides it, the manifest it is
//! verified with (`# manifest: <path>`) and the expected verdict (`Expected: meets ...` or
//! `Expected: fails ...`, anywhere in the comment). The snapshot is read as `kix verify --state` reads it
//! (`sim::input::read_state`), the Deployment `shop/web` is verified at level zone, and the
//! verdict with every scenario's findings and every domain loss is compared with
//! `<case>.expected` (bless with KIX_BLESS=1).

use crate::support::*;
use kix_kube::level::Level;
use kix_sim::{WorkloadVerdict, verify_workloads};
use std::fmt::Write;

fn render(v: &WorkloadVerdict) -> String {
    let mut out = format!(
        "{} {}/{} at level {}: {}\n",
        v.kind,
        v.namespace,
        v.name,
        v.level,
        if v.meets_level { "meets" } else { "fails" }
    );
    for s in &v.scenarios {
        let _ = writeln!(out, "{}: {}", s.scenario, if s.pass { "pass" } else { "FAIL" });
        for f in &s.findings {
            let _ = writeln!(out, "  {f}");
        }
    }
    for l in &v.domain_losses {
        let _ = writeln!(
            out,
            "loss of {}: {} running, {} lost, replaced after {}, replacements {:?}, pending {:?}, not replaced {:?}",
            l.domain,
            l.running,
            l.lost,
            l.replaced_after_seconds.map_or("-".to_string(), |s| format!("{s}s")),
            l.replacements,
            l.pending,
            l.not_replaced.keys().collect::<Vec<_>>()
        );
    }
    out
}

#[test]
fn snapshot_corpus_verdicts_match_their_goldens() {
    let dir = repo_path("tests/sim/snapshots");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 9, "{cases:?}");
    let mut failures = Vec::new();
    for path in cases {
        let text = std::fs::read_to_string(&path).unwrap();
        let header = |key: &str| {
            text.lines()
                .take_while(|l| l.starts_with('#'))
                .find_map(|l| l.split_once(&format!("{key}: ")).map(|(_, rest)| rest.to_string()))
                .unwrap_or_else(|| panic!("{}: no `# {key}:` line", path.display()))
        };
        let manifest = std::fs::read_to_string(repo_path(header("manifest"))).unwrap();
        let want_meets = header("Expected").starts_with("meets");
        let state = kix_sim::read_state(&path).unwrap_or_else(|_| panic!("{} does not read", path.display()));
        let request = verify_request(kix_kube::kind::WorkloadKind::Deployment, "shop", "web", Level::Zone, None);
        let verdict = verify_workloads(&state, &kix_yaml::from_str_all(&manifest).unwrap(), &request).remove(0);
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if verdict.meets_level != want_meets {
            failures.push(format!("{name}: expected meets_level {want_meets}:\n{}", render(&verdict)));
        }
        if let Err(diff) = check_golden(format!("tests/sim/snapshots/{name}.expected"), &render(&verdict)) {
            failures.push(format!("{name}: {diff}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The same corpus through the binary: `kix verify --state` with a snapshot full of finished Job
/// pods places the shipped examples as on empty nodes.
#[test]
fn kix_verify_state_ignores_finished_pods() {
    let state = repo_path("tests/sim/snapshots/terminal-pods.yaml");
    Test::in_repo()
        .args(["verify", "--cluster", "prod", "--state", state.to_str().unwrap()])
        .run()
        .status(0)
        .stdout_golden("tests/sim/snapshots/terminal-pods.kix-verify.txt");
}
