//! Rebuilds over an `out/` that a previous build left, with its manifest (`.out.kix-manifest`, issue 20
//! part 3), after the user changed `out/` or the manifest by hand: each rebuild ends with `out/` exactly as
//! a clean build writes it.

use crate::support::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

const MANIFEST: &str = ".out.kix-manifest";

/// What a clean build of the root's inputs writes: a build into an `--out` that does not exist yet.
fn clean_tree(t: &Test) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let clean = t.root().join("clean");
    let _ = std::fs::remove_dir_all(&clean);
    t.clone().args(["build", "-q", "--out", "clean"]).run().status(0);
    let tree = read_tree(&clean);
    std::fs::remove_dir_all(&clean).unwrap();
    let _ = std::fs::remove_file(t.root().join(".clean.kix-manifest"));
    tree
}

fn build_and_compare(t: &Test, what: &str) {
    t.clone().args(["build", "-q"]).run().status(0);
    assert!(read_tree(&t.root().join("out")) == clean_tree(t), "{what}: out/ differs from a clean build");
    let manifest = std::fs::read_to_string(t.root().join(MANIFEST)).expect("a manifest after the build");
    assert!(manifest.starts_with("kix output manifest 1 "), "{what}: {manifest:.80}");
}

/// Moves the manifest's mtime past every time it records, so that its entries are trusted (not racy) and
/// the rebuild takes the path that reads nothing. Without it a small build's entries may all fall in the
/// manifest's own clock tick and be read anyway, which would let these tests pass for the wrong reason.
fn trust_manifest(root: &Path) {
    let file = std::fs::File::options().append(true).open(root.join(MANIFEST)).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(3600)).unwrap();
}

fn an_instance_file(root: &Path) -> std::path::PathBuf {
    root.join("out/prod/shop.yaml")
}

/// Positive control: a trusted entry is used without reading the file. An entry claiming other bytes than
/// the file holds makes the rebuild write the file anew (another inode), where a comparison would have
/// linked the file as it is.
#[test]
fn a_trusted_entry_is_used_unread() {
    let t = Test::new().examples();
    t.clone().args(["build", "-q"]).run().status(0);
    let file = an_instance_file(t.root());
    let inode = std::fs::metadata(&file).unwrap().ino();
    let manifest = std::fs::read_to_string(t.root().join(MANIFEST)).unwrap();
    let line = manifest.lines().find(|l| l.ends_with(" prod/shop.yaml")).expect("an entry for the file");
    let forged = format!("{}{}", "0".repeat(32), &line[32..]);
    std::fs::write(t.root().join(MANIFEST), manifest.replace(line, &forged)).unwrap();
    trust_manifest(t.root());
    build_and_compare(&t, "forged hash");
    assert_ne!(std::fs::metadata(&file).unwrap().ino(), inode, "the entry was trusted: the file was written");

    // Without a manifest, the same file is read, found equal and linked: its inode stays.
    let inode = std::fs::metadata(&file).unwrap().ino();
    std::fs::remove_file(t.root().join(MANIFEST)).unwrap();
    build_and_compare(&t, "no manifest");
    assert_eq!(std::fs::metadata(&file).unwrap().ino(), inode);
}

/// A hand edit that keeps the size and puts the mtime back (`touch -r`) changes the ctime, which no user
/// can set: the rebuild reads the file and writes the build's bytes again.
#[test]
fn a_hand_edit_with_its_mtime_restored_is_undone() {
    let t = Test::new().examples();
    t.clone().args(["build", "-q"]).run().status(0);
    trust_manifest(t.root());
    let file = an_instance_file(t.root());
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
    build_and_compare(&t, "hand edit, mtime restored");
}

#[test]
fn deleted_and_stray_files_are_put_right() {
    let t = Test::new().examples();
    t.clone().args(["build", "-q"]).run().status(0);
    trust_manifest(t.root());
    std::fs::remove_file(an_instance_file(t.root())).unwrap();
    std::fs::remove_file(t.root().join("out/dev/kustomization.yaml")).unwrap();
    std::fs::write(t.root().join("out/prod/stray.yaml"), "kind: Stray\n").unwrap();
    build_and_compare(&t, "deleted and stray files");
}

/// A corrupted manifest, one truncated, one from another kix and one from an older build (its files since
/// replaced): each is ignored or finds no file it describes, and the build compares every file.
#[test]
fn corrupted_foreign_and_old_manifests_are_ignored() {
    let t = Test::new().examples();
    t.clone().args(["build", "-q"]).run().status(0);
    let manifest = t.root().join(MANIFEST);
    let good = std::fs::read_to_string(&manifest).unwrap();
    let foreign = good.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1);
    for (what, text) in [
        ("garbage", "\u{0}not a manifest\n".to_string()),
        ("truncated", good[..good.len() / 2].to_string()),
        ("another kix", foreign),
        ("a directory", String::new()),
    ] {
        std::fs::write(an_instance_file(t.root()), "kind: Edited\n").unwrap();
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
    std::fs::write(&dev, &original).unwrap();
    std::fs::write(&manifest, old).unwrap();
    trust_manifest(t.root());
    build_and_compare(&t, "an older build's manifest");
}

/// Two builds back to back, then a third after an input changed: each leaves what a clean build writes,
/// and a build that fails leaves `out/` and the manifest as they were.
#[test]
fn builds_back_to_back_write_what_a_clean_build_writes() {
    let t = Test::new().examples();
    build_and_compare(&t, "first");
    build_and_compare(&t, "second");
    let dev = t.root().join("clusters/dev.toml");
    let original = std::fs::read_to_string(&dev).unwrap();
    std::fs::write(&dev, original.replacen("name = \"shop\"", "name = \"shop-two\"", 1)).unwrap();
    build_and_compare(&t, "after a rename");
    let (out, manifest) = (read_tree(&t.root().join("out")), std::fs::read(t.root().join(MANIFEST)).unwrap());
    std::fs::write(&dev, "availability = \"nonsense\"\n").unwrap();
    t.clone().args(["build", "-q"]).run().status(1);
    assert!(read_tree(&t.root().join("out")) == out, "a failed build changed out/");
    assert_eq!(std::fs::read(t.root().join(MANIFEST)).unwrap(), manifest, "a failed build changed the manifest");
}

/// `build --cluster` leaves the manifest as it was (reading and rewriting the fleet's entries would cost
/// more than its one cluster's files), and the next full build, which cannot trust the rebuilt cluster's
/// entries (its files are new or re-linked), writes what a clean build writes.
#[test]
fn a_build_of_one_cluster_leaves_the_manifest_alone() {
    let t = Test::new().examples();
    t.clone().args(["build", "-q"]).run().status(0);
    trust_manifest(t.root());
    let before = std::fs::read(t.root().join(MANIFEST)).unwrap();
    std::fs::write(t.root().join("out/dev/stray.yaml"), "kind: Stray\n").unwrap();
    let dev = t.root().join("clusters/prod.toml");
    let original = std::fs::read_to_string(&dev).unwrap();
    std::fs::write(&dev, original.replacen("name = \"shop\"", "name = \"shop-two\"", 1)).unwrap();
    t.clone().args(["build", "-q", "--cluster", "prod"]).run().status(0);
    assert!(t.root().join("out/dev/stray.yaml").exists());
    assert_eq!(std::fs::read(t.root().join(MANIFEST)).unwrap(), before, "--cluster rewrote the manifest");
    std::fs::remove_file(t.root().join("out/dev/stray.yaml")).unwrap();
    std::fs::write(&dev, &original).unwrap();
    trust_manifest(t.root());
    build_and_compare(&t, "full build after --cluster");
}
