//! Issue 19: whatever the tree or the output directory holds, nothing is lost. Inputs that are
//! not regular files are refused without being opened (the corpus cases `tests/bad/input-*` cover
//! the tree; here the paths given on the command line), and each output-directory hazard leaves
//! the previous output as it was.

use crate::support::*;
use std::os::unix::process::CommandExt;
use std::path::Path;

fn mkfifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `--state` naming a FIFO is one located error, not a build waiting for a writer forever.
#[test]
fn a_state_file_that_is_a_fifo_is_refused() {
    let t = Test::new().examples();
    let fifo = t.root().join("state.yaml");
    mkfifo(&fifo);
    t.args(["verify", "--cluster", "prod", "--state", "state.yaml"])
        .run()
        .status(1)
        .stderr_contains("not a regular file but a FIFO; kix reads only regular files");
}

/// `kix lint` given a directory holding a FIFO refuses it (it used to hang).
#[test]
fn lint_refuses_a_fifo_in_a_directory() {
    let t = Test::new().tree([("m/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")]);
    mkfifo(&t.root().join("m/pipe.yaml"));
    t.args(["lint", "m"]).run().status(1).stderr_contains("not a regular file but a FIFO");
}

/// `kix lint DIR` reads what is under DIR: a symlink out of it is refused at the link, a symlink loop
/// is walked once, and a link within DIR is followed.
#[test]
fn lint_stays_inside_the_directory_it_was_given() {
    let object = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    let t = Test::new().tree([("m/a.yaml", object), ("elsewhere/b.yaml", object)]);
    let root = t.root().to_path_buf();
    std::os::unix::fs::symlink("../elsewhere", root.join("m/out")).unwrap();
    std::os::unix::fs::symlink("../elsewhere/b.yaml", root.join("m/b.yaml")).unwrap();
    std::os::unix::fs::symlink(".", root.join("m/loop")).unwrap();
    std::os::unix::fs::symlink("a.yaml", root.join("m/same.yaml")).unwrap();
    let run = t.args(["lint", "m"]).run().status(1);
    let run = run.stderr_contains("error[K0108]: symlink points outside m; kix does not follow it\n --> m/b.yaml");
    let run = run.stderr_contains("error[K0108]: symlink points outside m; kix does not follow it\n --> m/out");
    // a.yaml, and the link to it inside m: two files, each once (the loop adds nothing).
    run.stderr_contains("kix: linted 2 objects (0 workloads, 0 PodDisruptionBudgets) from 2 files");
}

/// The names of the root's entries that a build leaves beside `out/` (staging, set-aside, lock; not the
/// manifest and the spare, which a build keeps there on purpose).
fn leftovers(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("kix-") && !kept_beside_out(n))
        .collect()
}

/// The shipped examples with a previous `out/` holding kix's output and a file of the user's.
fn examples_built() -> Test {
    let t = Test::new().examples();
    t.clone().args(["build"]).run().status(0);
    write_tree(t.root(), [("out/NOTES.md", "the user's own file\n")]);
    t
}

/// An `out/` that is a symlink (a GitOps checkout elsewhere) is refused: the link and its target,
/// `.git` included, stay as they were.
#[test]
fn a_symlinked_out_is_refused_and_its_target_kept() {
    let t = examples_built();
    let root = t.root();
    std::fs::rename(root.join("out"), root.join("checkout")).unwrap();
    write_tree(root, [("checkout/.git/HEAD", "ref: refs/heads/main\n")]);
    std::os::unix::fs::symlink("checkout", root.join("out")).unwrap();
    let before = read_tree(&root.join("checkout"));
    t.clone().args(["build"]).run().status(1).stderr_contains("out is a symlink (to checkout)");
    assert_eq!(read_tree(&root.join("checkout")), before);
    assert!(root.join("out").is_symlink());
    assert!(leftovers(root).is_empty(), "{:?}", leftovers(root));
}

/// A FIFO in `out/` is neither read nor copied (it used to hang the build): the build is refused and
/// the previous output is as it was.
#[test]
fn a_fifo_in_out_is_refused_without_hanging() {
    let t = examples_built();
    let root = t.root();
    mkfifo(&root.join("out/pipe"));
    let before = read_tree(&root.join("out"));
    t.clone().args(["build"]).run().status(1).stderr_contains("out/pipe is a FIFO");
    assert_eq!(read_tree(&root.join("out")), before);
    assert!(leftovers(root).is_empty(), "{:?}", leftovers(root));
    // Inside a cluster's directory too, where an unchanged file would be compared.
    std::fs::remove_file(root.join("out/pipe")).unwrap();
    std::fs::remove_file(root.join("out/prod/shop.yaml")).unwrap();
    mkfifo(&root.join("out/prod/shop.yaml"));
    t.clone().args(["build"]).run().status(1).stderr_contains("out/prod/shop.yaml is a FIFO");
    t.clone().args(["build", "--check"]).run().status(1);
}

fn running_as_root() -> bool {
    let id = std::process::Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&id.stdout).trim() == "0"
}

/// A read-only `out/` is refused before anything is staged (its replaced copy could not be removed and
/// would linger beside it). Root may write anywhere, so as root (CI runs as root) the build itself
/// succeeds and leaves nothing behind, and the refusal is then checked as user `nobody` (65534) through
/// `setpriv` (util-linux), on a copy of the binary in the scratch directory that user can run.
#[test]
fn a_read_only_out_is_refused_before_staging() {
    use std::os::unix::fs::PermissionsExt;
    let t = examples_built();
    let root = t.root();
    let read_only = |dir: &str, mode| std::fs::set_permissions(root.join(dir), std::fs::Permissions::from_mode(mode));
    read_only("out/prod", 0o555).unwrap();
    let before = read_tree(&root.join("out"));
    if running_as_root() {
        let scratch = root.parent().unwrap();
        let kix = scratch.join("kix");
        std::fs::copy(env!("CARGO_BIN_EXE_kix"), &kix).unwrap();
        open_to_everyone(scratch);
        read_only("out/prod", 0o555).unwrap();
        let refused = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&kix)
            .arg("build")
            .current_dir(root)
            .env("NO_COLOR", "1")
            .output()
            .expect("setpriv (util-linux) runs kix as user nobody");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "as nobody: {stderr}");
        assert!(stderr.contains("out/prod is not writable"), "as nobody: {stderr}");
        assert_eq!(read_tree(&root.join("out")), before);
        assert!(leftovers(root).is_empty(), "as nobody: {:?}", leftovers(root));
        t.clone().args(["build"]).run().status(0);
    } else {
        t.clone().args(["build"]).run().status(1).stderr_contains("out/prod is not writable");
        assert_eq!(read_tree(&root.join("out")), before);
        read_only("out/prod", 0o755).unwrap();
    }
    assert!(leftovers(root).is_empty(), "{:?}", leftovers(root));
}

/// Makes a directory tree readable and writable by every user (for the run as `nobody`).
fn open_to_everyone(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(dir).unwrap();
    if meta.file_type().is_symlink() {
        return;
    }
    let mode = if meta.is_dir() || meta.permissions().mode() & 0o100 != 0 { 0o777 } else { 0o666 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap() {
            open_to_everyone(&entry.unwrap().path());
        }
    }
}

/// While one build holds the output directory's lock, a second fails at once (K0503) and changes nothing.
#[test]
fn a_second_build_into_one_out_fails_while_the_first_holds_the_lock() {
    let t = examples_built();
    let root = t.root();
    std::fs::create_dir_all(root.join(".kix")).unwrap();
    let lock = root.join(".kix/.out.kix-lock");
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["-c", "echo locked; sleep 30"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.take().unwrap()), &mut line).unwrap();
    assert_eq!(line, "locked\n");
    let before = read_tree(&root.join("out"));
    let run = examples_rebuild(root);
    // The shell and its sleep hold the lock too: end the holder's whole process group.
    std::process::Command::new("kill").args(["--", &format!("-{}", holder.id())]).status().unwrap();
    holder.wait().unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stderr).contains("error[K0503]: another kix build is writing"));
    assert_eq!(read_tree(&root.join("out")), before);
    assert_eq!(examples_rebuild(root).status.code(), Some(0), "the lock is free again");
}

fn examples_rebuild(root: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kix"))
        .arg("build")
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// `--out pk/web/gen` with `pk -> packages`, `gen` not yet there: the K0501 guard resolves the existing
/// ancestors and refuses it; nothing is written under packages/.
#[test]
fn a_symlinked_parent_cannot_lead_out_into_packages() {
    let t = examples_built();
    let root = t.root();
    std::os::unix::fs::symlink("packages", root.join("pk")).unwrap();
    let (packages, out) = (read_tree(&root.join("packages")), read_tree(&root.join("out")));
    t.clone()
        .args(["build", "--out", "pk/web/gen"])
        .run()
        .status(1)
        .stderr_contains("would overwrite kix's own inputs");
    assert_eq!(read_tree(&root.join("packages")), packages);
    assert_eq!(read_tree(&root.join("out")), out);
    assert!(leftovers(root).is_empty() && leftovers(&root.join("packages/web")).is_empty());
}

/// Builds of the real binary killed (SIGKILL) at random points, alternating between two inputs:
/// after every kill `out/` is exactly one complete build, the one before or the one asked for,
/// and the next run removes what the killed one left beside it. The seed is printed; set
/// `KIX_KILL_SEED` to replay it.
#[test]
fn a_build_killed_at_any_point_leaves_one_complete_build() {
    killed_builds_leave_one_complete_build(&["build"]);
}

/// The same for a build of one cluster (issue 20), which swaps that cluster's directory alone.
#[test]
fn a_build_of_one_cluster_killed_at_any_point_leaves_one_complete_build() {
    killed_builds_leave_one_complete_build(&["build", "--cluster", "prod"]);
}

fn killed_builds_leave_one_complete_build(args: &[&str]) {
    let t = examples_built();
    let root = t.root();
    std::fs::remove_file(root.join("out/NOTES.md")).unwrap();
    let prod = std::fs::read_to_string(root.join("clusters/prod.toml")).unwrap();
    let changed = prod.replacen("name = \"shop\"", "name = \"shop2\"", 1);
    assert_ne!(prod, changed);
    // The two complete builds.
    let first = read_tree(&root.join("out"));
    std::fs::write(root.join("clusters/prod.toml"), &changed).unwrap();
    assert_eq!(examples_rebuild(root).status.code(), Some(0));
    let second = read_tree(&root.join("out"));
    assert_ne!(first, second);
    // How long a whole build takes, to kill within it.
    let started = std::time::Instant::now();
    assert_eq!(examples_rebuild(root).status.code(), Some(0));
    let span = started.elapsed().as_micros().max(1000) as u64 * 3 / 2;
    let mut seed: u64 = std::env::var("KIX_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    eprintln!("KIX_KILL_SEED={seed}");
    for iteration in 0..12 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let text = if iteration % 2 == 0 { &prod } else { &changed };
        std::fs::write(root.join("clusters/prod.toml"), text).unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kix"))
            .args(args)
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros((seed >> 33) % span));
        let _ = child.kill();
        child.wait().unwrap();
        let now = read_tree(&root.join("out"));
        assert!(now == first || now == second, "iteration {iteration}: out/ is not one complete build");
    }
    // The next build completes and leaves nothing of the killed ones behind.
    assert_eq!(examples_rebuild(root).status.code(), Some(0));
    assert!(leftovers(root).is_empty(), "{:?}", leftovers(root));
}

/// A build killed while it wrote the output manifest leaves `.out.kix-manifest.<pid>`; the next build
/// removes it once that process is gone (found by the killed-build test above in CI), and leaves a
/// directory of that name, or a live process's, alone.
#[test]
fn a_killed_builds_half_written_manifest_is_removed_by_the_next_build() {
    let t = examples_built();
    let root = t.root();
    // No process has a pid this high (Linux caps pid_max at 4,194,304).
    std::fs::write(root.join(".kix/.out.kix-manifest.4999999"), "half a manifest").unwrap();
    std::fs::create_dir(root.join(".kix/.out.kix-manifest.4999998")).unwrap();
    let live = format!(".kix/.out.kix-manifest.{}", std::process::id());
    std::fs::write(root.join(&live), "a build still writing").unwrap();
    t.clone().args(["build"]).run().status(0);
    assert!(!root.join(".kix/.out.kix-manifest.4999999").exists(), "{:?}", leftovers(root));
    assert!(root.join(".kix/.out.kix-manifest.4999998").is_dir(), "a directory is not kix's");
    assert!(root.join(&live).exists(), "a live build's file stays");
}

/// Issue 41's state directory in a hostile tree: a `.kix` that is a symlink out of the tree, a FIFO or a
/// file is refused with one located error, nothing is written through it, and the previous `out/`
/// survives byte for byte.
#[test]
fn a_state_directory_that_is_not_a_directory_is_refused_and_out_survives() {
    let t = examples_built();
    let root = t.root().to_path_buf();
    let before = read_tree(&root.join("out"));
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::remove_dir_all(root.join(".kix")).unwrap();
    type Make<'a> = Box<dyn Fn(&Path) + 'a>;
    let make: [(&str, Make); 3] = [
        ("a symlink out of the tree", Box::new(|p| std::os::unix::fs::symlink(elsewhere.path(), p).unwrap())),
        ("a FIFO", Box::new(|p| assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success()))),
        ("a file", Box::new(|p| std::fs::write(p, "not kix's").unwrap())),
    ];
    for (what, make) in make {
        make(&root.join(".kix"));
        let run = t.clone().args(["build"]).run().status(1);
        assert!(
            run.stderr.contains("error[K0501]: ./.kix is not a directory kix made for its state"),
            "{what}: {}",
            run.stderr
        );
        assert_eq!(read_tree(&root.join("out")), before, "{what}: out/ changed");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0, "{what}: written through");
        std::fs::remove_file(root.join(".kix")).unwrap();
    }
}

/// A build that fails once other clusters are staged (each staged cluster's sections of the next manifest
/// are written as it is staged, issue 42) leaves the manifest byte for byte as it was, `out/` as it was,
/// and nothing beside them; the next clean build completes.
#[test]
fn a_build_that_fails_after_clusters_were_staged_leaves_the_manifest_as_it_was() {
    let t = examples_built();
    let root = t.root();
    let manifest = std::fs::read(root.join(".kix/.out.kix-manifest")).unwrap();
    let out = read_tree(&root.join("out"));
    // Every cluster compiled again (a package changed), and one more cluster file that fails.
    let web = root.join("packages/web/kix.toml");
    let text = std::fs::read_to_string(&web).unwrap();
    std::fs::write(&web, format!("{text}\n# changed\n")).unwrap();
    std::fs::write(root.join("clusters/zz-broken.toml"), "level = \n").unwrap();
    let failed = examples_rebuild(root);
    assert_eq!(failed.status.code(), Some(1), "{}", String::from_utf8_lossy(&failed.stderr));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("clusters/zz-broken.toml"));
    assert_eq!(std::fs::read(root.join(".kix/.out.kix-manifest")).unwrap(), manifest, "the manifest changed");
    assert!(read_tree(&root.join("out")) == out, "out/ changed");
    let mut state: Vec<String> = std::fs::read_dir(root.join(".kix"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    state.sort();
    // The spare this build made (there was none) is gone again too.
    assert_eq!(state, [".gitignore", ".out.kix-manifest"], "left beside out/");
    std::fs::remove_file(root.join("clusters/zz-broken.toml")).unwrap();
    assert_eq!(examples_rebuild(root).status.code(), Some(0));
}
