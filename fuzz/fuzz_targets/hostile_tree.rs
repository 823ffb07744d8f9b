//! Fuzzes `kix build` where the bugs of issue 19 were: trees and output directories holding
//! non-regular files, symlinks and reserved names.
//!
//! The input's first bytes choose hazards; the rest drive the tree generator `build_tree` uses
//! (`generator.rs`: mostly valid, so builds get deep). In a scratch directory it writes
//!
//!     root/clusters/, root/packages/   the tree
//!     root/out/                        sometimes a previous output (a real build, or user files)
//!     elsewhere/                       a GitOps checkout outside the tree (`.git`, cluster files,
//!                                      a file whose content no diagnostic may ever show)
//!
//! then plants the hazards: a kix.toml, cluster file, package resource or `--state` file that is
//! a directory, a FIFO, a socket, or a symlink (within its directory, leaving it for elsewhere in
//! the tree, leaving the tree, dangling, a loop, to `/dev/zero`); instance names that are output
//! files of kix (`kustomization`, `_shared`); an `out/` that is a symlink to `elsewhere/`, a file
//! or a FIFO; a FIFO, socket, directory or symlink inside `out/`; a read-only `out/`; `--out`
//! through a symlinked parent into `packages/` or `clusters/`, or onto the root or an ancestor.
//! It runs the build through `kix::compile::build` (what `kix build` runs; the output-directory
//! guards live there), with the summary or without it (`kix build -q`, which reuses unchanged clusters) and `--state` through `kix_sim::read_state` (what `kix verify --state` runs).
//!
//! Checks, from a snapshot of the whole scratch directory (names, file types, modes, link targets,
//! contents; a FIFO is never opened) taken before and after:
//! - no panic, and no hang (a FIFO opened for reading would block: run with libFuzzer's `-timeout`);
//! - a `--state` that is not a regular file (or a link to one) is an error;
//! - no diagnostic shows the content of a file outside the tree;
//! - the build either succeeded, and then `out/` holds exactly one build (`build --check` finds
//!   nothing to change), every entry of the previous `out/` that is not a rebuilt cluster's directory
//!   (or, on a full build, one kix generated) is carried over unchanged, and nothing else changed
//!   but `out/` and its new parents; or it failed with an error diagnostic and the scratch directory,
//!   `out/`, any symlink's target and `elsewhere/` included, is byte-for-byte what it was;
//! - either way no staging, set-aside or lock file is left beside `out/`; after a full build, kix's
//!   output manifest (`.kix/.<out>.kix-manifest`) is there, and it, the spare (`.kix/.<out>.kix-spare`, the
//!   output of the build before, which a full build brings up to date and swaps in), kix's state
//!   directory `.kix/` with its `.gitignore`, and an earlier kix's `.<out>.kix-manifest` and
//!   `.<out>.kix-spare` (removed by a successful build) are the only things beside `out/` a build may change (a failed full build may have brought the spare partly up to date;
//!   a `--cluster` build leaves both as they were).
//!
//! Fuzzing runs as root here (and in CI's container), where permissions do not bind: a read-only
//! `out/` is writable for root, so the build succeeds and the success checks apply; run as another
//! user, the same input takes the refusal path and the failure checks apply.
#![no_main]

use kix::compile::{BuildRequest, Output, Selection};
use kix_diag::Style;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

mod generator;
use generator::{Choices, generate};

/// What a file outside the tree holds: no diagnostic may show it.
const SECRET: &str = "kix-fuzz-secret-outside-the-tree";

/// One entry of the scratch directory, as seen without following links or opening FIFOs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    Dir { mode: u32 },
    File { mode: u32, bytes: Vec<u8> },
    Link { target: PathBuf },
    Fifo,
    Socket,
    Other,
}

type Snapshot = BTreeMap<PathBuf, Entry>;

fn snapshot(top: &Path) -> Snapshot {
    fn walk(top: &Path, dir: &Path, into: &mut Snapshot) {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(dir).expect("list scratch").map(|e| e.expect("entry").path()).collect();
        entries.sort();
        for path in entries {
            let metadata = std::fs::symlink_metadata(&path).expect("stat scratch entry");
            let kind = metadata.file_type();
            let mode = metadata.permissions().mode() & 0o7777;
            let entry = if kind.is_symlink() {
                Entry::Link { target: std::fs::read_link(&path).expect("read link") }
            } else if kind.is_dir() {
                walk(top, &path, into);
                Entry::Dir { mode }
            } else if kind.is_file() {
                Entry::File { mode, bytes: std::fs::read(&path).expect("read scratch file") }
            } else if kind.is_fifo() {
                Entry::Fifo
            } else if kind.is_socket() {
                Entry::Socket
            } else {
                Entry::Other
            };
            into.insert(path.strip_prefix(top).expect("inside the scratch").to_path_buf(), entry);
        }
    }
    let mut snapshot = Snapshot::new();
    walk(top, top, &mut snapshot);
    snapshot
}

/// What a planted path becomes.
#[derive(Clone, Copy, Debug)]
enum Hazard {
    Directory,
    Fifo,
    Socket,
    /// To a regular file beside it (the content moved there): a symlink kix may follow.
    LinkBeside,
    /// To a file elsewhere in the tree (out of its own directory).
    LinkInTree,
    /// To a file outside the tree, whose content is the secret.
    LinkOutside,
    LinkDangling,
    /// `x -> x.loop -> x`.
    LinkLoop,
    LinkDevice,
}

const HAZARDS: [Hazard; 9] = [
    Hazard::Directory,
    Hazard::Fifo,
    Hazard::Socket,
    Hazard::LinkBeside,
    Hazard::LinkInTree,
    Hazard::LinkOutside,
    Hazard::LinkDangling,
    Hazard::LinkLoop,
    Hazard::LinkDevice,
];

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path without NUL");
    // SAFETY: a valid NUL-terminated path; mkfifo reads nothing else.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).expect("remove scratch directory"),
        Ok(_) => std::fs::remove_file(path).expect("remove scratch file"),
        Err(_) => {}
    }
}

/// Turns `path` (a file of the tree, or a new name) into `hazard`. `in_tree` is a file elsewhere
/// in the tree, relative to `path`'s directory.
fn plant(path: &Path, hazard: Hazard, in_tree: &str, outside: &Path) {
    let parent = path.parent().expect("a parent");
    std::fs::create_dir_all(parent).expect("create scratch directory");
    let name = path.file_name().expect("a name").to_string_lossy().into_owned();
    match hazard {
        Hazard::LinkBeside => {
            let beside = parent.join(format!("{name}.real"));
            if std::fs::symlink_metadata(path).is_ok() {
                std::fs::rename(path, &beside).expect("move aside");
            } else {
                std::fs::write(&beside, "").expect("write scratch file");
            }
            symlink(format!("{name}.real"), path).expect("symlink");
            return;
        }
        Hazard::LinkLoop => {
            remove(path);
            symlink(format!("{name}.loop"), path).expect("symlink");
            remove(&parent.join(format!("{name}.loop")));
            symlink(&name, parent.join(format!("{name}.loop"))).expect("symlink");
            return;
        }
        _ => {}
    }
    remove(path);
    match hazard {
        Hazard::Directory => {
            std::fs::create_dir(path).expect("mkdir");
            std::fs::write(path.join("inside.yaml"), "a: b\n").expect("write scratch file");
        }
        Hazard::Fifo => mkfifo(path),
        Hazard::Socket => drop(std::os::unix::net::UnixListener::bind(path).expect("bind socket")),
        Hazard::LinkInTree => symlink(in_tree, path).expect("symlink"),
        Hazard::LinkOutside => symlink(outside, path).expect("symlink"),
        Hazard::LinkDangling => symlink(format!("{name}.missing"), path).expect("symlink"),
        Hazard::LinkDevice => symlink("/dev/zero", path).expect("symlink"),
        Hazard::LinkBeside | Hazard::LinkLoop => unreachable!(),
    }
}

/// The files of `dir` (sorted) whose names end in one of `suffixes`.
fn files_of(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && suffixes.iter().any(|s| p.to_string_lossy().ends_with(s)))
        .collect();
    files.sort();
    files
}

fn pick_path(c: &mut Choices<'_>, existing: Vec<PathBuf>, new: PathBuf) -> PathBuf {
    let index = c.below(existing.len() + 1);
    existing.into_iter().nth(index).unwrap_or(new)
}

/// A previous output kix did not write, or did: user files beside cluster directories.
fn write_user_output(c: &mut Choices<'_>, out: &Path) {
    let files: [(&str, &str); 5] = [
        ("README.md", "what is deployed here\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("notes/plan.txt", "user notes\n"),
        ("old/kustomization.yaml", "# Generated by kix: do not edit\nresources: [i0.yaml]\n"),
        ("prod/kustomization.yaml", "# Generated by kix: do not edit\nresources: [stale.yaml]\n"),
    ];
    for (path, text) in files {
        if c.chance(60) {
            let path = out.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create scratch directory");
            std::fs::write(path, text).expect("write scratch file");
        }
    }
    std::fs::create_dir_all(out).expect("create out");
}

/// Hazards inside an existing `out/`.
fn plant_in_output(c: &mut Choices<'_>, out: &Path, elsewhere: &Path) {
    let clusters: Vec<PathBuf> =
        std::fs::read_dir(out).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    for _ in 0..c.below(3) {
        let at = match c.below(3) {
            0 => out.join(c.pick(&["pipe", "prod", "edge-2", "old", "notes", "link"])),
            1 => match clusters.first() {
                Some(dir) => dir.join(c.pick(&["i0.yaml", "pipe.yaml", "kustomization.yaml", "sub"])),
                None => out.join("pipe"),
            },
            _ => out.join(".hidden"),
        };
        match c.below(6) {
            0 => {
                remove(&at);
                mkfifo(&at);
            }
            1 => {
                remove(&at);
                drop(std::os::unix::net::UnixListener::bind(&at).expect("bind socket"));
            }
            2 => {
                remove(&at);
                std::fs::create_dir_all(at.join("deeper")).expect("mkdir");
                std::fs::write(at.join("deeper/user.txt"), "kept\n").expect("write scratch file");
            }
            3 => {
                remove(&at);
                // A cluster's directory or a file linked to the user's checkout outside.
                let target = elsewhere.join(c.pick(&["prod", "prod/i0.yaml", ".git", "missing"]));
                symlink(target, &at).expect("symlink");
            }
            4 => {
                remove(&at);
                symlink(at.file_name().expect("a name"), &at).expect("symlink");
            }
            _ => {
                if std::fs::symlink_metadata(&at).is_ok_and(|m| !m.is_dir()) {
                    remove(&at);
                }
                std::fs::create_dir_all(&at).expect("mkdir");
                std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o555)).expect("chmod");
            }
        }
    }
    if c.sometimes(15) {
        std::fs::set_permissions(out, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    }
}

/// The user's checkout outside the tree, and a file whose content must never be echoed.
fn write_elsewhere(elsewhere: &Path) -> PathBuf {
    for (path, text) in [
        (".git/HEAD", "ref: refs/heads/main\n".to_string()),
        ("prod/i0.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: user}\n".to_string()),
        ("prod/kustomization.yaml", "resources: [i0.yaml]\n".to_string()),
        ("secret", format!("availability = \"{SECRET}\"\nkind: {SECRET}\n{SECRET}\n")),
    ] {
        let path = elsewhere.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create scratch directory");
        std::fs::write(path, text).expect("write scratch file");
    }
    elsewhere.join("secret")
}

/// Where `--out` points, planted as asked; `None` for the default `root/out`.
fn choose_out(c: &mut Choices<'_>, scratch: &Path, root: &Path) -> Option<PathBuf> {
    match c.below(16) {
        0..=9 => None,
        10 => Some(root.join("out")),
        11 => Some(scratch.join("deploy/fleet/out")),
        12 => {
            // A symlinked parent into packages/ or clusters/ (refused, K0501), or out of the tree.
            let (link, target) = c.pick(&[("pk", "packages"), ("ck", "clusters"), ("ek", "../elsewhere")]);
            symlink(target, root.join(link)).expect("symlink");
            Some(root.join(link).join(c.pick(&["d0/gen", "gen"])))
        }
        13 => Some(root.join(c.pick(&["packages/d0/gen", "clusters/gen", "packages"]))),
        14 => Some(c.pick(&[root, scratch]).to_path_buf()),
        _ => Some(scratch.join("elsewhere/prod")),
    }
}

/// Instance names that are kix's own output files, written over a generated cluster file.
fn reserve_instance_names(c: &mut Choices<'_>, root: &Path) {
    let files = files_of(&root.join("clusters"), &[".toml"]);
    let Some(path) = files.get(c.below(files.len().max(1))) else { return };
    let Ok(text) = std::fs::read_to_string(path) else { return };
    let name = c.pick(&["i0", "i1", "i2"]);
    let reserved = c.pick(&["kustomization", "_shared", "kustomization.yaml", "Kustomization"]);
    let text = text.replacen(&format!("name = \"{name}\""), &format!("name = \"{reserved}\""), 1);
    std::fs::write(path, text).expect("write scratch file");
}

/// Renders every diagnostic (text and JSON); with `tree_only`, none may show a file outside the tree
/// (a `--state` the user named may be anywhere, and its lines are shown).
fn render_all(diagnostics: &kix_diag::Diagnostics, tree_only: bool) {
    for diagnostic in diagnostics.iter() {
        let text = diagnostic.render(Style::Plain);
        let json = diagnostic.to_json();
        assert!(
            !tree_only || (!text.contains(SECRET) && !json.contains(SECRET)),
            "a diagnostic shows a file outside the tree:\n{text}"
        );
    }
}

/// Kix's own files beside `out`: none may outlive a build.
fn leftovers(snapshot: &Snapshot) -> Vec<&PathBuf> {
    snapshot
        .keys()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.contains(".kix-staging-") || name.contains(".kix-previous-") || name.ends_with(".kix-lock")
        })
        .collect()
}

/// After a build that wrote `out`: what else changed, and what of the previous `out` was lost.
/// Kix's own entries beside `out`, which a build may change: its manifest (`src/output_manifest.rs`) and
/// the spare and what is in it (`src/spare.rs`).
fn kix_own(out: &Path, path: &Path) -> bool {
    let parent = out.parent().unwrap_or(Path::new(""));
    let beside =
        |suffix: &str| parent.join(format!(".{}.kix-{suffix}", out.file_name().unwrap_or_default().to_string_lossy()));
    // kix's state directory (issue 41), and the state an earlier kix kept beside `out` itself.
    path.starts_with(parent.join(".kix")) || *path == beside("manifest") || path.starts_with(beside("spare"))
}

fn check_written(before: &Snapshot, after: &Snapshot, out: &Path, built: &[String], full: bool) {
    // kix's own record of what it wrote (`src/output_manifest.rs`): beside out/, rewritten by every build.
    let manifest = out
        .parent()
        .unwrap_or(Path::new(""))
        .join(".kix")
        .join(format!(".{}.kix-manifest", out.file_name().unwrap_or_default().to_string_lossy()));
    if full {
        assert!(
            matches!(after.get(&manifest), Some(Entry::File { .. })),
            "no output manifest at {} after a build",
            manifest.display()
        );
    }
    let generated = |top: &Path| {
        matches!(before.get(&top.join("kustomization.yaml")),
            Some(Entry::File { bytes, .. }) if bytes.starts_with(b"# Generated by kix"))
    };
    for (path, entry) in before {
        if kix_own(out, path) {
            continue;
        }
        let Ok(inside) = path.strip_prefix(out) else {
            assert_eq!(after.get(path), Some(entry), "{} changed outside out/ ({})", path.display(), out.display());
            continue;
        };
        let Some(top) = inside.components().next() else { continue };
        let top = out.join(top);
        let rebuilt = built.iter().any(|c| top == out.join(c));
        if rebuilt || (full && generated(&top)) {
            continue;
        }
        assert_eq!(after.get(path), Some(entry), "{} of the previous out/ was not carried over", path.display());
    }
    for (path, entry) in after {
        if before.contains_key(path) || kix_own(out, path) {
            continue;
        }
        match path.strip_prefix(out) {
            Ok(inside) => {
                let top = inside.components().next().map(|t| out.join(t));
                assert!(
                    top.is_none_or(|top| built.iter().any(|c| top == out.join(c))),
                    "{} appeared in out/ and is no cluster's directory",
                    path.display()
                );
            }
            Err(_) => assert!(
                out.starts_with(path) && matches!(entry, Entry::Dir { .. }),
                "{} appeared outside out/ ({})",
                path.display(),
                out.display()
            ),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut c = Choices { data };
    let scratch_dir = tempfile::tempdir().expect("scratch directory");
    let scratch = scratch_dir.path().canonicalize().expect("scratch path");
    let root = scratch.join("root");
    let outside = write_elsewhere(&scratch.join("elsewhere"));

    // The hazards are chosen first, from the input's head, so the generator's choices after them do
    // not move them; planted once the tree is written.
    let planted: Vec<(u8, Hazard, u8)> =
        (0..if c.sometimes(50) { 1 + c.below(3) } else { 0 }).map(|_| (c.byte(), c.pick(&HAZARDS), c.byte())).collect();
    let reserved = c.sometimes(20);
    let previous = c.below(4);
    let out_hazards = c.sometimes(50);
    let out_itself = c.sometimes(15).then(|| c.chance(50));
    let out_choice = c.byte();
    let only = c.sometimes(20).then(|| c.pick(&["prod", "edge-2", "missing"]).to_string());
    generate(&mut c, &root);

    let mut state = None;
    for (target, hazard, which) in planted {
        let mut pick = Choices { data: std::slice::from_ref(&which) };
        let mut dirs: Vec<PathBuf> =
            std::fs::read_dir(root.join("packages")).into_iter().flatten().flatten().map(|e| e.path()).collect();
        dirs.sort();
        let package = pick_path(&mut pick, dirs, root.join("packages/d9"));
        let (path, in_tree) = match target % 4 {
            0 => (package.join("kix.toml"), "../../clusters/prod.toml"),
            1 => (
                pick_path(&mut pick, files_of(&root.join("clusters"), &[".toml"]), root.join("clusters/extra.toml")),
                "../packages/d0/kix.toml",
            ),
            2 => (
                pick_path(&mut pick, files_of(&package, &[".yaml", ".yml"]), package.join("c.yaml")),
                "../../clusters/prod.toml",
            ),
            _ => {
                let path = scratch.join("state.yaml");
                if std::fs::symlink_metadata(&path).is_err() {
                    std::fs::write(&path, "apiVersion: v1\nkind: List\nitems: []\n").expect("write state");
                }
                state = Some((path.clone(), hazard));
                (path, "root/clusters/prod.toml")
            }
        };
        plant(&path, hazard, in_tree, &outside);
    }
    if reserved {
        reserve_instance_names(&mut c, &root);
    }

    // Half the builds show no summary, as `kix build -q` does: a rebuild then reuses each cluster whose
    // inputs the previous build recorded (issue 42), staging it from the hazards planted in `out/`.
    let summary = c.chance(50);
    let mut choose = Choices { data: std::slice::from_ref(&out_choice) };
    let out = choose_out(&mut choose, &scratch, &root);
    let out_path = out.clone().unwrap_or_else(|| root.join("out"));
    let plain_out = !out_path.starts_with(&root) || out_path == root.join("out");
    if plain_out && out_path != scratch && out_path != root {
        match previous {
            0 => {}
            1 => write_user_output(&mut c, &out_path),
            _ => {
                // A real previous build, so unchanged files are carried over by hard link.
                let selection = Selection { root: root.clone(), ..Default::default() };
                let request = BuildRequest { selection, output: Output::Directory(out.clone()), summary };
                let _ = kix::compile::build(&request);
                if previous == 3 {
                    write_user_output(&mut c, &out_path);
                }
            }
        }
        if out_path.is_dir() && out_hazards {
            plant_in_output(&mut c, &out_path, &scratch.join("elsewhere"));
        }
        match out_itself {
            Some(true) => {
                remove(&out_path);
                std::fs::create_dir_all(out_path.parent().expect("a parent")).expect("mkdir");
                symlink(scratch.join(c.pick(&["elsewhere", "elsewhere/prod", "missing"])), &out_path).expect("symlink");
            }
            Some(false) => {
                remove(&out_path);
                std::fs::create_dir_all(out_path.parent().expect("a parent")).expect("mkdir");
                if c.chance(50) {
                    mkfifo(&out_path)
                } else {
                    std::fs::write(&out_path, "not a directory\n").expect("write")
                }
            }
            None => {}
        }
    }

    if let Some((path, hazard)) = &state {
        let read = kix_sim::read_state(path);
        if let Err(problems) = &read {
            render_all(&kix_diag::Diagnostics::from(problems.clone()), false);
        }
        let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        assert!(regular || read.is_err(), "--state {hazard:?} was read as a snapshot");
    }

    let before = snapshot(&scratch);
    let clusters = only.clone().into_iter().collect();
    let selection = Selection { root: root.clone(), clusters, ..Default::default() };
    let request = BuildRequest { selection: selection.clone(), output: Output::Directory(out.clone()), summary };
    let built = kix::compile::build(&request).expect("a directory build has no usage error");
    render_all(&built.compiled.diagnostics, true);
    let after = snapshot(&scratch);
    assert!(leftovers(&after).is_empty(), "left beside out/: {:?}", leftovers(&after));

    if built.written.is_none() {
        assert!(built.compiled.diagnostics.has_errors(), "nothing written and no error");
        let out_relative = out_path.strip_prefix(&scratch).unwrap_or(&out_path).to_path_buf();
        for (path, entry) in &before {
            if kix_own(&out_relative, path) {
                continue;
            }
            assert_eq!(after.get(path), Some(entry), "a failed build changed {}", path.display());
        }
        for path in after.keys() {
            if kix_own(&out_relative, path) {
                continue;
            }
            assert!(before.contains_key(path), "a failed build created {}", path.display());
        }
    } else {
        assert!(!built.compiled.diagnostics.has_errors(), "written with errors");
        let meta = std::fs::symlink_metadata(&out_path).expect("out/ exists after a build");
        assert!(meta.is_dir(), "out/ is not a directory after a build");
        let real = out_path.canonicalize().expect("out/ resolves");
        let relative = real.strip_prefix(&scratch).expect("out/ inside the scratch").to_path_buf();
        let names: Vec<String> = built.compiled.clusters.iter().map(|c| c.name.clone()).collect();
        check_written(&before, &after, &relative, &names, only.is_none());
        let check = BuildRequest { selection, output: Output::Check(out.clone()), summary: true };
        let checked = kix::compile::build(&check).expect("a check has no usage error");
        let differences = checked.differences.expect("the check compiled");
        assert!(differences.is_empty(), "out/ is not one complete build: {differences:?}");
    }
    // Writable again, so the scratch directory can be removed by any user.
    for (path, entry) in &after {
        if matches!(entry, Entry::Dir { .. }) {
            let _ = std::fs::set_permissions(scratch.join(path), std::fs::Permissions::from_mode(0o755));
        }
    }
});
