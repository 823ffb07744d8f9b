//! Rebuilds over an `out/` that a previous build left, with its manifest (`.out.kix-manifest`) and the
//! spare (`.out.kix-spare`, the output of the build before the previous one, which a full build brings up
//! to date and swaps in; issue 20 parts 3 and 9), after the inputs, `out/`, the spare or the manifest
//! changed: each rebuild ends with `out/` exactly as a clean build writes it.

use crate::support::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const MANIFEST: &str = ".kix/.out.kix-manifest";
const SPARE: &str = ".kix/.out.kix-spare";

/// What a clean build of the root's inputs writes: a build into an `--out` that does not exist yet.
fn clean_tree(t: &Test) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let clean = t.root().join("clean");
    let _ = std::fs::remove_dir_all(&clean);
    t.clone().args(["build", "-q", "--out", "clean"]).run().status(0);
    let tree = read_tree(&clean);
    std::fs::remove_dir_all(&clean).unwrap();
    let _ = std::fs::remove_file(t.root().join(".kix/.clean.kix-manifest"));
    let _ = std::fs::remove_dir_all(t.root().join(".kix/.clean.kix-spare"));
    tree
}

fn build_and_compare(t: &Test, what: &str) {
    t.clone().args(["build", "-q"]).run().status(0);
    assert!(read_tree(&t.root().join("out")) == clean_tree(t), "{what}: out/ differs from a clean build");
    let manifest = std::fs::read_to_string(t.root().join(MANIFEST)).expect("a manifest after the build");
    assert!(manifest.starts_with("kix output manifest 4 "), "{what}: {manifest:.80}");
}

/// Moves the manifest's mtime past every time it records, so that its entries are trusted (not racy) and
/// the rebuild takes the path that reads nothing. Without it a small build's entries may all fall in the
/// manifest's own clock tick and be read anyway, which would let these tests pass for the wrong reason.
fn trust_manifest(root: &Path) {
    let file = std::fs::File::options().append(true).open(root.join(MANIFEST)).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(3600)).unwrap();
}

/// A stray file in a cluster's directory of `out/`, so the next build stages and swaps (a rebuild of
/// unchanged inputs over an unchanged `out/` leaves `out/`, the spare and the manifest in place); the build
/// removes it, as a clean build has none.
fn make_the_next_build_stage(root: &Path) {
    std::fs::write(root.join("out/staging/zz-stage.yaml"), "kind: Stray\n").unwrap();
    trust_manifest(root);
}

/// Two builds: `out/` and the spare both hold a complete build, and the manifest describes both. The
/// second build is made without the first's manifest, so it stages and swaps (a rebuild of unchanged
/// inputs over an unchanged `out/` leaves everything in place, spare and manifest too).
fn built_twice() -> Test {
    let t = Test::new().examples();
    t.clone().args(["build", "-q"]).run().status(0);
    std::fs::remove_file(t.root().join(MANIFEST)).unwrap();
    t.clone().args(["build", "-q"]).run().status(0);
    assert!(t.root().join(SPARE).join("prod/shop.yaml").is_file(), "the second build leaves a spare");
    t
}

fn inode(path: &Path) -> u64 {
    std::fs::symlink_metadata(path).unwrap().ino()
}

/// A file as one file: its inode and its mtime (a file system may give a new file the inode number of one
/// just removed; its mtime is then the new file's).
fn identity(path: &Path) -> (u64, i64, i64) {
    let m = std::fs::symlink_metadata(path).unwrap();
    (m.ino(), m.mtime(), m.mtime_nsec())
}

/// The manifest with the entry of `file` in the `tree` section (`out` or `spare`) of `cluster` replaced by
/// what `edit` makes of its fields (`[hash, key, device, inode, size, mtime, ctime, name]`); an entry the
/// spare's section writes as `= <file>` is the out section's. Section lengths are kept right.
fn forge(root: &Path, tree: &str, cluster: &str, file: &str, edit: impl Fn(&mut Vec<String>)) {
    let text = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    let mut lines = text.lines();
    let mut forged = String::from(lines.next().unwrap());
    forged.push('\n');
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in lines {
        if line.starts_with("out ") || line.starts_with("spare ") || line.starts_with("inputs ") {
            let words: Vec<&str> = line.split(' ').collect();
            sections.push((format!("{} {}", words[0], words[1]), Vec::new()));
        } else {
            sections.last_mut().unwrap().1.push(line.to_string());
        }
    }
    let out_line = |cluster: &str| {
        let section = sections.iter().find(|(h, _)| *h == format!("out {cluster}")).unwrap();
        section.1.iter().find(|l| l.ends_with(&format!(" {file}"))).unwrap().clone()
    };
    let wanted = format!("{tree} {cluster}");
    let mut found = false;
    for (header, entries) in &sections {
        let mut body = String::new();
        for line in entries {
            let is_it = *header == wanted && (line.ends_with(&format!(" {file}")) || *line == format!("= {file}"));
            if is_it {
                found = true;
                let line = if line.starts_with("= ") { out_line(cluster) } else { line.clone() };
                let mut fields: Vec<String> = line.split(' ').map(str::to_string).collect();
                edit(&mut fields);
                body.push_str(&fields.join(" "));
            } else {
                body.push_str(line);
            }
            body.push('\n');
        }
        forged.push_str(&format!("{header} {}\n{body}", body.len()));
    }
    assert!(found, "no entry for {file} in {wanted}");
    std::fs::write(root.join(MANIFEST), forged).unwrap();
    trust_manifest(root);
}

/// Runs `kix` (a path to a kix binary) to build the root, successfully.
fn build_with(kix: &Path, root: &Path) {
    let run = std::process::Command::new(kix).args(["build", "-q"]).current_dir(root).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
}

/// Builds with `kix` until the spare holds what the next build writes for `prod/shop.yaml` (a web instance)
/// and `out/` other bytes, in another inode: a package edited, built, and put back. Each manifest is
/// trusted before the next build (builds seconds apart, not in one clock tick).
fn diverged(t: &Test, kix: &Path) {
    let root = t.root();
    let build = |kix: &Path| {
        build_with(kix, root);
        trust_manifest(root);
    };
    build(kix);
    build(kix);
    let api = root.join("packages/web/api.yaml");
    let original = std::fs::read_to_string(&api).unwrap();
    std::fs::write(&api, original.replacen("containerPort: 8080", "containerPort: 8081", 1)).unwrap();
    build(kix);
    std::fs::write(&api, &original).unwrap();
    let (spare, out) = (root.join(SPARE).join("prod/shop.yaml"), root.join("out/prod/shop.yaml"));
    assert_ne!(inode(&spare), inode(&out));
    assert_ne!(std::fs::read(&spare).unwrap(), std::fs::read(&out).unwrap());
}

/// Positive control: a trusted entry is used without reading the file. A spare's entry claiming other
/// bytes (and another key) than its file holds makes the rebuild write the file anew (another inode than
/// both the spare's and `out/`'s), where reading it would have kept the spare's file, which holds the right
/// bytes.
#[test]
fn a_trusted_entry_is_used_unread() {
    let t = Test::new().examples();
    let root = t.root();
    diverged(&t, Path::new(env!("CARGO_BIN_EXE_kix")));
    let (spare_file, out_file) = (root.join(SPARE).join("prod/shop.yaml"), root.join("out/prod/shop.yaml"));
    let before = [identity(&spare_file), identity(&out_file)];
    forge(root, "spare", "prod", "shop.yaml", |f| {
        f[0] = "0".repeat(32);
        f[1] = "1".repeat(32);
    });
    std::thread::sleep(Duration::from_millis(20));
    build_and_compare(&t, "forged hash and key");
    assert!(!before.contains(&identity(&out_file)), "the entry was trusted: the file was written");

    // Without a manifest, the same setup: the spare's file is read, found equal and kept.
    let t = Test::new().examples();
    let root = t.root();
    diverged(&t, Path::new(env!("CARGO_BIN_EXE_kix")));
    let kept = identity(&root.join(SPARE).join("prod/shop.yaml"));
    std::fs::remove_file(root.join(MANIFEST)).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    build_and_compare(&t, "no manifest");
    assert_eq!(identity(&root.join("out/prod/shop.yaml")), kept);
}

/// An entry whose key is the key of what the build renders vouches for its file without the file being
/// rendered or read: with the real key and a forged hash, the spare's file is kept (and the manifest then
/// records the forged hash again). A key recorded by another kix binary (a copy elsewhere is another file)
/// is not trusted: the same forged entry makes this binary render, find the hash wrong and write the file.
#[test]
fn a_key_vouches_for_a_file_only_for_the_binary_that_recorded_it() {
    let kix = Path::new(env!("CARGO_BIN_EXE_kix"));
    let t = Test::new().examples();
    let root = t.root();
    let other = root.parent().unwrap().join("other-kix");
    std::fs::copy(kix, &other).unwrap();
    for (recorded_by, rebuilt_by, trusted) in [(kix, kix, true), (other.as_path(), kix, false), (kix, &other, false)] {
        let _ = std::fs::remove_dir_all(root.join("out"));
        let _ = std::fs::remove_dir_all(root.join(SPARE));
        let _ = std::fs::remove_file(root.join(MANIFEST));
        diverged(&t, recorded_by);
        let (spare_file, out_file) = (root.join(SPARE).join("prod/shop.yaml"), root.join("out/prod/shop.yaml"));
        let before = [identity(&spare_file), identity(&out_file)];
        forge(root, "spare", "prod", "shop.yaml", |f| f[0] = "0".repeat(32));
        std::thread::sleep(Duration::from_millis(20));
        build_with(rebuilt_by, root);
        assert!(read_tree(&root.join("out")) == clean_tree(&t), "out/ differs from a clean build");
        let what = format!("recorded by {}, rebuilt by {}", recorded_by.display(), rebuilt_by.display());
        if trusted {
            assert_eq!(identity(&out_file), before[0], "{what}: the key vouched for the file: kept as it was");
            let manifest = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
            let forged = manifest.lines().any(|l| l.starts_with(&"0".repeat(32)) && l.ends_with(" shop.yaml"));
            assert!(forged, "{what}: the file's hash was never computed");
        } else {
            assert!(!before.contains(&identity(&out_file)), "{what}: another binary's key was trusted");
        }
    }
}

/// A hand edit that keeps the size and puts the mtime back (`touch -r`) changes the ctime, which no user
/// can set: the rebuild reads the file and writes the build's bytes again. Checked on a file of `out/`
/// (which shares its inode with the spare's after the second build), on the spare's own file, and on a file
/// of `out/` two builds on, when the `out/` it was edited in has become the spare the build updates.
#[test]
fn a_hand_edit_with_its_mtime_restored_is_undone() {
    for edited in ["out/prod/shop.yaml", ".kix/.out.kix-spare/prod/shop.yaml", "out/dev/kustomization.yaml"] {
        let t = built_twice();
        let file = t.root().join(edited);
        trust_manifest(t.root());
        let before = std::fs::metadata(&file).unwrap();
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.iter().rposition(|b| b.is_ascii_lowercase()).unwrap();
        bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
        // Rewritten in place (the same inode), then its mtime put back.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&file, &bytes).unwrap();
        std::fs::File::options().append(true).open(&file).unwrap().set_modified(before.modified().unwrap()).unwrap();
        let after = std::fs::metadata(&file).unwrap();
        assert_eq!(
            (after.ino(), after.size(), after.mtime(), after.mtime_nsec()),
            (before.ino(), before.size(), before.mtime(), before.mtime_nsec())
        );
        build_and_compare(&t, &format!("{edited} edited, mtime restored"));
        make_the_next_build_stage(t.root());
        build_and_compare(&t, &format!("{edited} edited, two builds on"));
    }
}

#[test]
fn deleted_and_stray_files_are_put_right() {
    let t = built_twice();
    let root = t.root();
    trust_manifest(root);
    std::fs::remove_file(root.join("out/prod/shop.yaml")).unwrap();
    std::fs::remove_file(root.join("out/dev/kustomization.yaml")).unwrap();
    std::fs::write(root.join("out/prod/stray.yaml"), "kind: Stray\n").unwrap();
    std::fs::remove_file(root.join(SPARE).join("staging/kustomization.yaml")).unwrap();
    std::fs::write(root.join(SPARE).join("dev/stray.yaml"), "kind: Stray\n").unwrap();
    std::fs::create_dir(root.join(SPARE).join("prod/stray-dir")).unwrap();
    std::fs::create_dir(root.join(SPARE).join("gone-cluster")).unwrap();
    build_and_compare(&t, "deleted and stray files");
    make_the_next_build_stage(root);
    build_and_compare(&t, "deleted and stray files, two builds on");
}

/// What is not a regular file in the spare (a symlink out of it, a FIFO, a cluster's directory that is a
/// symlink) is removed, never followed nor opened: the files outside stay as they were.
#[test]
fn the_spare_is_never_followed_out_of() {
    let t = built_twice();
    let root = t.root();
    let outside = root.parent().unwrap().join("outside");
    std::fs::create_dir_all(outside.join("prod")).unwrap();
    std::fs::write(outside.join("shop.yaml"), "not kix's\n").unwrap();
    std::fs::write(outside.join("prod/shop.yaml"), "not kix's either\n").unwrap();
    let spare = root.join(SPARE);
    std::fs::remove_file(spare.join("dev/shop.yaml")).unwrap();
    std::os::unix::fs::symlink(outside.join("shop.yaml"), spare.join("dev/shop.yaml")).unwrap();
    std::fs::remove_dir_all(spare.join("prod")).unwrap();
    std::os::unix::fs::symlink(outside.join("prod"), spare.join("prod")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(spare.join("staging/pipe")).status().unwrap().success());
    // A stray file in out/, so the build stages through the spare (an unchanged out/ is left in place).
    std::fs::write(root.join("out/staging/stray.yaml"), "x\n").unwrap();
    trust_manifest(root);
    build_and_compare(&t, "a spare with symlinks and a FIFO");
    assert!(!spare.join("prod").is_symlink() && !spare.join("staging/pipe").exists(), "the build did not stage");
    assert_eq!(std::fs::read_to_string(outside.join("shop.yaml")).unwrap(), "not kix's\n");
    assert_eq!(std::fs::read_to_string(outside.join("prod/shop.yaml")).unwrap(), "not kix's either\n");
    // A spare that is a file, then a symlink to a directory: replaced, the directory untouched.
    for junk in ["a file", "a symlink"] {
        std::fs::remove_dir_all(&spare).unwrap();
        match junk {
            "a file" => std::fs::write(&spare, "junk").unwrap(),
            _ => std::os::unix::fs::symlink(&outside, &spare).unwrap(),
        }
        build_and_compare(&t, junk);
        assert!(std::fs::symlink_metadata(&spare).unwrap().is_dir(), "{junk}: a spare directory again");
        assert_eq!(std::fs::read_to_string(outside.join("shop.yaml")).unwrap(), "not kix's\n");
    }
}

/// A rebuild after an input changed (a package's manifest, a cluster file, one instance's entry), over a
/// spare and manifest of the builds before: the changed instances' files are written, and `out/` is what a
/// clean build writes; changed back, the same.
#[test]
fn inputs_changed_between_builds() {
    let t = built_twice();
    let root = t.root();
    let edits: [(&str, &str, &str); 3] = [
        ("packages/web/api.yaml", "containerPort: 8080", "containerPort: 8081"),
        ("clusters/prod.toml", "name = \"shop\"", "name = \"shop-two\""),
        ("clusters/dev.toml", "namespace = \"operator-system\"", "namespace = \"operator-two\""),
    ];
    for (file, from, to) in edits {
        let path = root.join(file);
        let original = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(original.contains(from), "{file} holds {from}");
        std::fs::write(&path, original.replacen(from, to, 1)).unwrap();
        trust_manifest(root);
        build_and_compare(&t, &format!("{file} changed"));
        std::fs::write(&path, &original).unwrap();
        trust_manifest(root);
        build_and_compare(&t, &format!("{file} changed back"));
        make_the_next_build_stage(root);
        build_and_compare(&t, &format!("{file} changed back, again"));
    }
}

/// A corrupted manifest, one truncated, one from another kix, one with a damaged section and one from an
/// older build (its files since replaced): each is ignored or finds no file it describes, and the build
/// compares every file.
#[test]
fn corrupted_foreign_and_old_manifests_are_ignored() {
    let t = built_twice();
    let manifest = t.root().join(MANIFEST);
    let good = std::fs::read_to_string(&manifest).unwrap();
    let foreign = good.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1);
    let damaged = good.replacen(" prod/", " prod/x/", 1).replacen(" shop.yaml\n", " sh op.yaml\n", 1);
    for (what, text) in [
        ("garbage", "\u{0}not a manifest\n".to_string()),
        ("truncated", good[..good.len() / 2].to_string()),
        ("another kix", foreign),
        ("a damaged section", damaged),
        ("a directory", String::new()),
    ] {
        std::fs::write(t.root().join("out/prod/shop.yaml"), "kind: Edited\n").unwrap();
        std::fs::write(t.root().join(SPARE).join("prod/shop.yaml"), "kind: Edited too\n").unwrap();
        if what == "a directory" {
            let _ = std::fs::remove_file(&manifest);
            std::fs::create_dir(&manifest).unwrap();
        } else {
            std::fs::write(&manifest, text).unwrap();
            trust_manifest(t.root());
        }
        t.clone().args(["build", "-q"]).run().status(0);
        assert!(read_tree(&t.root().join("out")) == clean_tree(&t), "{what}: out/ differs from a clean build");
        if what == "a directory" {
            std::fs::remove_dir(&manifest).unwrap();
        }
    }

    // An older build's manifest: the instance renamed and back; the first build's manifest put back.
    build_and_compare(&t, "after the corrupted ones");
    let old = std::fs::read(&manifest).unwrap();
    let dev = t.root().join("clusters/dev.toml");
    let original = std::fs::read_to_string(&dev).unwrap();
    std::fs::write(&dev, original.replacen("name = \"shop\"", "name = \"shop-two\"", 1)).unwrap();
    build_and_compare(&t, "an instance renamed");
    build_and_compare(&t, "an instance renamed, again");
    std::fs::write(&dev, &original).unwrap();
    std::fs::write(&manifest, old).unwrap();
    trust_manifest(t.root());
    build_and_compare(&t, "an older build's manifest");
}

/// Builds back to back, then one after an input changed: each leaves what a clean build writes, and a
/// build that fails leaves `out/` and the manifest as they were.
#[test]
fn builds_back_to_back_write_what_a_clean_build_writes() {
    let t = Test::new().examples();
    build_and_compare(&t, "first");
    build_and_compare(&t, "second");
    build_and_compare(&t, "third");
    let dev = t.root().join("clusters/dev.toml");
    let original = std::fs::read_to_string(&dev).unwrap();
    std::fs::write(&dev, original.replacen("name = \"shop\"", "name = \"shop-two\"", 1)).unwrap();
    build_and_compare(&t, "after a rename");
    let (out, manifest) = (read_tree(&t.root().join("out")), std::fs::read(t.root().join(MANIFEST)).unwrap());
    std::fs::write(&dev, "availability = \"nonsense\"\n").unwrap();
    t.clone().args(["build", "-q"]).run().status(1);
    assert!(read_tree(&t.root().join("out")) == out, "a failed build changed out/");
    assert_eq!(std::fs::read(t.root().join(MANIFEST)).unwrap(), manifest, "a failed build changed the manifest");
    std::fs::write(&dev, &original).unwrap();
    build_and_compare(&t, "after the failed build");
}

/// The files of a rebuild whose inputs did not change are not written when it stages (a stray file in
/// `out/` makes it): `out/` then holds the spare's files, the same inodes, as the spare held them (one
/// `stat` each, no other call), and the spare is the previous `out/`, stray file and all.
#[test]
fn an_unchanged_rebuild_writes_no_file() {
    let t = built_twice();
    let root = t.root();
    make_the_next_build_stage(root);
    let spare = read_inodes(&root.join(SPARE));
    let out = read_inodes(&root.join("out"));
    std::thread::sleep(Duration::from_millis(20));
    build_and_compare(&t, "unchanged");
    assert_eq!(read_inodes(&root.join("out")), spare, "out/ is the spare, unchanged");
    assert_eq!(read_inodes(&root.join(SPARE)), out, "the spare is the previous out/");
}

fn read_inodes(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u64, i64, i64)> {
    let mut inodes = std::collections::BTreeMap::new();
    for path in read_tree(dir).into_keys() {
        inodes.insert(path.clone(), identity(&dir.join(&path)));
    }
    inodes
}

/// `build --cluster` leaves the manifest as it was (reading and rewriting the fleet's entries would cost
/// more than its one cluster's files), and the next full build, which cannot trust the rebuilt cluster's
/// entries (its files are new or re-linked), writes what a clean build writes.
#[test]
fn a_build_of_one_cluster_leaves_the_manifest_alone() {
    let t = built_twice();
    trust_manifest(t.root());
    let before = std::fs::read(t.root().join(MANIFEST)).unwrap();
    std::fs::write(t.root().join("out/dev/stray.yaml"), "kind: Stray\n").unwrap();
    let prod = t.root().join("clusters/prod.toml");
    let original = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(&prod, original.replacen("name = \"shop\"", "name = \"shop-two\"", 1)).unwrap();
    t.clone().args(["build", "-q", "--cluster", "prod"]).run().status(0);
    assert!(t.root().join("out/dev/stray.yaml").exists());
    assert_eq!(std::fs::read(t.root().join(MANIFEST)).unwrap(), before, "--cluster rewrote the manifest");
    std::fs::remove_file(t.root().join("out/dev/stray.yaml")).unwrap();
    std::fs::write(&prod, &original).unwrap();
    trust_manifest(t.root());
    build_and_compare(&t, "full build after --cluster");
    make_the_next_build_stage(t.root());
    build_and_compare(&t, "full build after --cluster, two builds on");
}

/// A spare's directory as the manifest recorded it with its names (issue 42) is not listed: its files are
/// stat'ed by name. The manifest records those facts once a rebuild stages over a recorded `out/`; a file of
/// the spare changed in place since (its directory untouched), or one added beside it (the directory moved),
/// is still put right, and the rebuild writes what a clean build writes.
#[test]
fn a_spare_directory_as_recorded_is_not_listed_and_still_put_right() {
    let t = built_twice();
    let root = t.root();
    let api = root.join("packages/web/api.yaml");
    let original = std::fs::read_to_string(&api).unwrap();
    let changed = original.replacen("containerPort: 8080", "containerPort: 8081", 1);
    assert_ne!(original, changed);
    // Two rebuilds over recorded directories: the second records the spare's directories with their names.
    for text in [&changed, &original] {
        std::fs::write(&api, text).unwrap();
        trust_manifest(root);
        build_and_compare(&t, "web changed");
    }
    let manifest = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    let spare_with_facts =
        manifest.lines().filter(|line| line.starts_with("spare ") && line.split(' ').count() == 8).count();
    assert!(spare_with_facts >= 3, "the spare's directories are recorded with their facts:\n{manifest}");
    // A kept file of the spare changed in place (`prod/orders-db.yaml`: the quorum package, unchanged), and a
    // file added to another cluster's directory of the spare.
    let kept = root.join(SPARE).join("prod/orders-db.yaml");
    let before = std::fs::metadata(&kept).unwrap();
    assert_eq!(before.nlink(), 2, "shared with out/ before it is changed");
    std::fs::remove_file(root.join("out/prod/orders-db.yaml")).unwrap();
    std::fs::copy(&kept, root.join("out/prod/orders-db.yaml")).unwrap();
    std::io::Write::write_all(
        &mut std::fs::OpenOptions::new().append(true).open(&kept).unwrap(),
        b"# changed in place\n",
    )
    .unwrap();
    std::fs::write(root.join(SPARE).join("dev/stray.yaml"), "kind: Stray\n").unwrap();
    std::fs::write(&api, &changed).unwrap();
    trust_manifest(root);
    build_and_compare(&t, "a spare file changed in place, a stray one added");
    std::fs::write(&api, &original).unwrap();
    trust_manifest(root);
    build_and_compare(&t, "changed back");
}

/// A rebuild in part over a spare whose kept files are `out/`'s (`= <file>` in its section) stages them from
/// the manifest's lines (`emit::kept_lines`): positive control, a kept file's entry written with a leading
/// zero (the same facts) is copied as it is, where the general path would write it anew; and every change
/// to a kept file since, through either name (one inode), still makes the cluster's output a clean build's.
#[test]
fn a_kept_file_is_staged_from_its_line_until_it_changes() {
    let t = built_twice();
    let root = t.root();
    let api = root.join("packages/web/api.yaml");
    let original = std::fs::read_to_string(&api).unwrap();
    let changed = original.replacen("containerPort: 8080", "containerPort: 8081", 1);
    let flipped = std::cell::Cell::new(false);
    let flip = |what: &str| {
        flipped.set(!flipped.get());
        std::fs::write(&api, if flipped.get() { &changed } else { &original }).unwrap();
        trust_manifest(root);
        build_and_compare(&t, what);
    };
    flip("web changed");
    flip("web changed back");
    // prod's orders-db (the quorum package, unchanged) is one file under both names.
    let (out_file, spare_file) = (root.join("out/prod/orders-db.yaml"), root.join(SPARE).join("prod/orders-db.yaml"));
    assert_eq!((inode(&out_file), std::fs::metadata(&out_file).unwrap().nlink()), (inode(&spare_file), 2));
    // Its device written `0<device>` in prod's out section, one byte longer (the directories' facts kept).
    let text = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = lines.iter().position(|line| line.starts_with("out prod ")).unwrap();
    let entry = header + lines[header..].iter().position(|line| line.ends_with(" orders-db.yaml")).unwrap();
    let mut fields: Vec<String> = lines[entry].split(' ').map(str::to_string).collect();
    fields[2].insert(0, '0');
    lines[entry] = fields.join(" ");
    let mut words: Vec<String> = lines[header].split(' ').map(str::to_string).collect();
    assert_eq!(words.len(), 8, "prod's directory recorded: {}", lines[header]);
    words[2] = (words[2].parse::<usize>().unwrap() + 1).to_string();
    lines[header] = words.join(" ");
    std::fs::write(root.join(MANIFEST), lines.iter().map(|line| format!("{line}\n")).collect::<String>()).unwrap();
    trust_manifest(root);
    let forged = |manifest: &str| manifest.lines().any(|line| line.contains(" 0") && line.ends_with(" orders-db.yaml"));
    assert!(forged(&std::fs::read_to_string(root.join(MANIFEST)).unwrap()));
    flip("a kept entry written with a leading zero");
    let manifest = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    assert!(forged(&manifest), "the kept entry was written anew, not copied:\n{manifest}");
    // Changed in place through `out/`'s name, its mtime put back; then through the spare's.
    let mtime = std::fs::metadata(&out_file).unwrap().modified().unwrap();
    let append = |path: &Path, text: &[u8]| {
        let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        std::io::Write::write_all(&mut file, text).unwrap();
        file.set_modified(mtime).unwrap();
    };
    append(&out_file, b"# edited through out/\n");
    flip("a kept file edited through out/");
    // Compiled whole, prod's file is written anew: two rebuilds later it is one file under both names again.
    flip("rebuilt");
    flip("rebuilt again");
    let spare_file = root.join(SPARE).join("prod/orders-db.yaml");
    assert_eq!(inode(&spare_file), inode(&out_file), "one file again");
    append(&spare_file, b"# edited through the spare\n");
    flip("a kept file edited through the spare");
    assert!(!std::fs::read_to_string(&out_file).unwrap().contains("# edited"));
}

/// `cluster`'s section of the spare in the manifest with its body rewritten by `edit`, its header's length
/// made right and its directory's facts kept.
fn edit_spare_section(root: &Path, cluster: &str, edit: impl Fn(&mut Vec<String>)) {
    let text = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|line| line.starts_with(&format!("spare {cluster} "))).unwrap();
    let mut header: Vec<&str> = lines[at].split(' ').collect();
    assert_eq!(header.len(), 8, "the section records its directory's facts: {}", lines[at]);
    let length: usize = header[2].parse().unwrap();
    let (mut body, mut taken) = (Vec::new(), 0);
    for line in &lines[at + 1..] {
        if taken >= length {
            break;
        }
        taken += line.len() + 1;
        body.push(line.to_string());
    }
    edit(&mut body);
    let body: String = body.iter().map(|line| format!("{line}\n")).collect();
    let length = body.len().to_string();
    header[2] = &length;
    let before: String = lines[..at].iter().map(|line| format!("{line}\n")).collect();
    let after: String = text.lines().skip(at + 1).collect::<Vec<_>>().join("\n");
    let after = &after[taken.min(after.len())..];
    let after = after.strip_prefix('\n').unwrap_or(after);
    std::fs::write(root.join(MANIFEST), format!("{before}{}\n{body}{after}\n", header.join(" "))).unwrap();
    trust_manifest(root);
}

/// A spare's section that is damaged, or that names `.` or `..`, is ignored and its directory listed: a
/// review found a damaged one made every later build fail, and a forged `..` emptied `out/` (the spare's
/// names became paths when its directory was not listed).
#[test]
fn a_damaged_or_forged_spare_section_is_ignored() {
    type Damage = fn(&mut Vec<String>);
    let damages: [(&str, Damage); 3] = [
        ("a line damaged", |body| body[0].replace_range(0..1, "g")),
        ("a name `..`", |body| body.push("00000000000000000000000000000000 - 1 1 1 1.000000000 1.000000000 ..".into())),
        ("a name `.`", |body| body.push("00000000000000000000000000000000 - 1 1 1 1.000000000 1.000000000 .".into())),
    ];
    for (what, damage) in damages {
        let t = built_twice();
        let root = t.root();
        // A cluster whose first file (by name) is an instance of the package that changes: a damaged section
        // whose names were trusted then failed the build as it wrote that file.
        let edge = std::fs::read_to_string(root.join("clusters/edge.toml")).unwrap();
        let zz = format!(
            "{}\n[[instances]]\nname = \"zcache\"\npackage = \"cache\"\ncreateNamespace = true\n",
            edge.replacen("name = \"shop\"", "name = \"aaa\"", 1)
        );
        std::fs::write(root.join("clusters/zz.toml"), zz).unwrap();
        let api = root.join("packages/web/api.yaml");
        let original = std::fs::read_to_string(&api).unwrap();
        let changed = original.replacen("containerPort: 8080", "containerPort: 8081", 1);
        for text in [&changed, &original] {
            std::fs::write(&api, text).unwrap();
            trust_manifest(root);
            build_and_compare(&t, &format!("{what}: web changed"));
        }
        edit_spare_section(root, "zz", damage);
        std::fs::write(&api, &changed).unwrap();
        trust_manifest(root);
        build_and_compare(&t, what);
        std::fs::write(&api, &original).unwrap();
        trust_manifest(root);
        build_and_compare(&t, &format!("{what}, then changed back"));
    }
}
