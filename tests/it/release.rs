//! `scripts/release.sh`, as `.ci/run` runs it (given the binary under test instead of a release
//! build): one reproducible archive holding the binary, its man page, shell completions, README and
//! schemas, with a checksum that verifies, and a binary that runs from the unpacked archive.

use crate::support::*;
use std::path::Path;
use std::process::Command;

fn release(out: &Path) -> String {
    let output = Command::new(repo_path("scripts/release.sh"))
        .args([Path::new("--binary"), Path::new(env!("CARGO_BIN_EXE_kix")), Path::new("--out"), out])
        .output()
        .expect("run scripts/release.sh");
    assert!(output.status.success(), "release.sh: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn kix(args: &[&str]) -> String {
    Test::in_repo().args(args.iter().copied()).run().status(0).stdout
}

#[test]
fn release_script_packs_binary_man_page_and_completions_reproducibly() {
    let scratch = tempfile::tempdir().unwrap();
    let archive = release(&scratch.path().join("dist"));
    let version = kix(&["--version"]).trim().strip_prefix("kix ").unwrap().to_string();
    let file = Path::new(&archive).file_name().unwrap().to_str().unwrap().to_string();
    assert!(file.starts_with(&format!("kix-{version}-")) && file.ends_with(".tar.gz"), "{file}");
    let name = file.trim_end_matches(".tar.gz");

    // The checksum beside it verifies, and a second run writes the same bytes.
    let check = Command::new("sha256sum")
        .args(["-c", &format!("{file}.sha256")])
        .current_dir(scratch.path().join("dist"))
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
    let again = release(&scratch.path().join("again"));
    assert_eq!(std::fs::read(&archive).unwrap(), std::fs::read(&again).unwrap(), "the archive is reproducible");

    let unpacked = scratch.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let tar = Command::new("tar").arg("xzf").arg(&archive).arg("-C").arg(&unpacked).status().unwrap();
    assert!(tar.success());
    let root = unpacked.join(name);
    let files: Vec<String> = read_tree(&root).into_keys().map(|p| p.display().to_string()).collect();
    assert_eq!(
        files,
        [
            "bin/kix",
            "share/bash-completion/completions/kix",
            "share/doc/kix/README.md",
            "share/doc/kix/schemas/admission.schema.json",
            "share/doc/kix/schemas/audit.schema.json",
            "share/doc/kix/schemas/build.schema.json",
            "share/doc/kix/schemas/capacity.schema.json",
            "share/doc/kix/schemas/check.schema.json",
            "share/doc/kix/schemas/cluster.schema.json",
            "share/doc/kix/schemas/explain.schema.json",
            "share/doc/kix/schemas/lint.schema.json",
            "share/doc/kix/schemas/package.schema.json",
            "share/doc/kix/schemas/schedule.schema.json",
            "share/doc/kix/schemas/simulate.schema.json",
            "share/doc/kix/schemas/verify.schema.json",
            "share/fish/vendor_completions.d/kix.fish",
            "share/man/man1/kix-admission.1",
            "share/man/man1/kix-audit.1",
            "share/man/man1/kix-build.1",
            "share/man/man1/kix-capacity.1",
            "share/man/man1/kix-check.1",
            "share/man/man1/kix-completions.1",
            "share/man/man1/kix-explain.1",
            "share/man/man1/kix-init-cluster.1",
            "share/man/man1/kix-init-package.1",
            "share/man/man1/kix-init.1",
            "share/man/man1/kix-lint.1",
            "share/man/man1/kix-man.1",
            "share/man/man1/kix-schedule.1",
            "share/man/man1/kix-schema.1",
            "share/man/man1/kix-simulate.1",
            "share/man/man1/kix-verify.1",
            "share/man/man1/kix.1",
            "share/zsh/site-functions/_kix",
        ]
    );
    // Stripped for a CI download (issue 41), its debug information beside the archive.
    let size = std::fs::metadata(root.join("bin/kix")).unwrap().len();
    let built = std::fs::metadata(env!("CARGO_BIN_EXE_kix")).unwrap().len();
    assert!(size < built / 2, "the archive's binary is stripped: {size} bytes of {built}");
    let sections = Command::new("readelf").arg("-S").arg(root.join("bin/kix")).output().unwrap();
    let sections = String::from_utf8_lossy(&sections.stdout);
    assert!(![".debug_info", ".debug_line"].iter().any(|s| sections.contains(s)), "no debug information left");
    let debug = scratch.path().join("dist").join(format!("{name}.debug"));
    assert!(std::fs::metadata(&debug).is_ok_and(|m| m.len() > size), "{}", debug.display());
    let unpacked_kix = Command::new(root.join("bin/kix")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8(unpacked_kix.stdout).unwrap().trim(), format!("kix {version}"));
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    assert_eq!(read("share/man/man1/kix.1"), kix(&["man"]));
    assert_eq!(read("share/man/man1/kix-init-cluster.1"), kix(&["man", "init", "cluster"]));
    assert!(read("share/man/man1/kix.1").lines().any(|l| l.starts_with(".TH kix 1")), "a roff page, section 1");
    for (path, shell) in [
        ("share/bash-completion/completions/kix", "bash"),
        ("share/zsh/site-functions/_kix", "zsh"),
        ("share/fish/vendor_completions.d/kix.fish", "fish"),
    ] {
        assert_eq!(read(path), kix(&["completions", shell]), "{path}");
    }
    assert_eq!(read("share/doc/kix/README.md"), std::fs::read_to_string(repo_path("README.md")).unwrap());
}
