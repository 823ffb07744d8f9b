//! The snapshot corpus (issue 9): hand-written `kubectl get nodes,pods,pdb -A -o yaml` snapshots
//! under crates/sim/tests/snapshots/, one per behaviour of a real cluster that decides a verdict,
//! one trial each (`snapshots::<case>`). Each file names, in its opening comment, the upstream
//! source that decides it, the manifest it is verified with (`# manifest: <path>`, relative to the
//! workspace root: the workloads in tests/sim/ that the command line's tests share) and the expected
//! verdict (`Expected: meets ...` or `Expected: fails ...`, anywhere in the comment). The snapshot is
//! read as `kix verify --state` reads it (`kix_sim::read_state`), the Deployment `shop/web`
//! is verified at level zone, and the verdict with every scenario's findings and every domain loss
//! is compared with `<case>.expected` (bless with KIX_BLESS=1).

use crate::support::*;
use kix_kube::level::Level;
use kix_sim::{WorkloadVerdict, verify_workloads};
use libtest_mimic::{Failed, Trial};
use std::fmt::Write;
use std::path::Path;

const CORPUS: &str = "tests/snapshots";

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

/// Verifies one snapshot and compares the verdict with its golden.
fn run_case(path: &Path, name: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let header = |key: &str| {
        text.lines()
            .take_while(|l| l.starts_with('#'))
            .find_map(|l| l.split_once(&format!("{key}: ")).map(|(_, rest)| rest.to_string()))
            .ok_or_else(|| format!("{}: no `# {key}:` line", path.display()))
    };
    let manifest = workspace_file(&header("manifest")?);
    let want_meets = header("Expected")?.starts_with("meets");
    let state = kix_sim::read_state(path).map_err(|_| format!("{} does not read", path.display()))?;
    let request = verify_request(kix_kube::kind::WorkloadKind::Deployment, "shop", "web", Level::Zone, None);
    let verdict = verify_workloads(&state, &kix_yaml::from_str_all(&manifest).unwrap(), &request).remove(0);
    let mut failures = Vec::new();
    if verdict.meets_level != want_meets {
        failures.push(format!("expected meets_level {want_meets}:\n{}", render(&verdict)));
    }
    if let Err(diff) = check_golden(format!("{CORPUS}/{name}.expected"), &render(&verdict)) {
        failures.push(diff);
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n").into()) }
}

/// One trial per snapshot (`<case>.yaml`, beside its `<case>.expected`).
pub fn trials() -> Vec<Trial> {
    let dir = crate_path(CORPUS);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let cases: Vec<_> = files.iter().filter(|p| p.extension().is_some_and(|e| e == "yaml")).cloned().collect();
    // Every file is a snapshot or its golden: nothing in the corpus goes unchecked.
    for file in &files {
        let golden_of_a_case = file.extension().is_some_and(|e| e == "expected")
            && cases.iter().any(|case| case.file_stem() == file.file_stem());
        assert!(
            cases.contains(file) || golden_of_a_case,
            "{} is neither a snapshot nor a snapshot's golden",
            file.display()
        );
    }
    assert!(cases.len() >= 9, "the snapshot corpus holds {} cases: {cases:?}", cases.len());
    cases
        .into_iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            Trial::test(format!("snapshots::{name}"), move || run_case(&path, &name))
        })
        .collect()
}
