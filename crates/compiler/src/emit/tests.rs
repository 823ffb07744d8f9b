//! Tests of `emit`: carrying a previous file over, and the instance key against what is rendered.

use super::staging::carried_over;
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// A previous file is carried over (the same inode, by hard link) only when it is a regular file with
/// exactly the bytes a build would write.
#[test]
fn unchanged_files_are_linked_and_others_written() {
    let cases: &[(&str, Option<&[u8]>, bool)] = &[
        ("same bytes", Some(b"kind: A\n"), true),
        ("other bytes, same length", Some(b"kind: B\n"), false),
        ("other length", Some(b"kind: A\n\n"), false),
        ("absent", None, false),
    ];
    for (what, previous_bytes, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (previous, staged) = (dir.path().join("previous.yaml"), dir.path().join("staged.yaml"));
        if let Some(bytes) = previous_bytes {
            std::fs::write(&previous, bytes).unwrap();
        }
        assert_eq!(carried_over(&previous, b"kind: A\n", &staged), *expected, "{what}");
        assert_eq!(staged.exists(), *expected, "{what}: staged file");
        if *expected {
            let inode = |p: &std::path::Path| std::fs::metadata(p).unwrap().ino();
            assert_eq!(inode(&previous), inode(&staged), "{what}: linked, not copied");
        }
    }
}

#[test]
fn a_symlink_is_never_carried_over() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.yaml");
    std::fs::write(&target, b"kind: A\n").unwrap();
    let link = dir.path().join("previous.yaml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(!carried_over(&link, b"kind: A\n", &dir.path().join("staged.yaml")));
}

#[test]
fn a_directory_is_never_carried_over() {
    let dir = tempfile::tempdir().unwrap();
    let previous = dir.path().join("previous.yaml");
    std::fs::create_dir(&previous).unwrap();
    assert!(!carried_over(&previous, b"", &dir.path().join("staged.yaml")));
}

/// An instance's key is a function of what it renders to: the same inputs compiled twice give the same
/// key, one key never stands for two texts, and another namespace, name or package version is another key.
#[test]
fn instance_keys_follow_what_is_rendered() {
    use super::{instance_key, render_instance};
    let selection =
        crate::compile::Selection { root: concat!(env!("CARGO_MANIFEST_DIR"), "/../..").into(), ..Default::default() };
    let (first, second) = (crate::compile::compile(&selection), crate::compile::compile(&selection));
    assert!(first.ok(), "{:?}", first.diagnostics);
    let mut seen = std::collections::HashMap::new();
    let mut keyed = 0;
    for (a, b) in first.clusters.iter().zip(&second.clusters) {
        for (instance, again) in a.instances.iter().zip(&b.instances) {
            let key = instance_key(&a.name, instance);
            assert_eq!(key, instance_key(&b.name, again), "{}/{}", a.name, instance.name);
            let Some(key) = key else { continue };
            keyed += 1;
            let text = render_instance(&a.name, instance);
            if let Some(before) = seen.insert(key, text.clone()) {
                assert_eq!(before, text, "one key, two texts");
            }
            let changed = |change: &dyn Fn(&mut crate::derive::InstancePlan)| {
                let mut other = instance.clone();
                change(&mut other);
                instance_key(&a.name, &other)
            };
            assert_ne!(changed(&|p| p.namespace.push('x')), Some(key));
            assert_ne!(changed(&|p| p.name.push('x')), Some(key));
            assert_ne!(changed(&|p| p.package_version.push('x')), Some(key));
            assert_ne!(changed(&|p| p.package.push('x')), Some(key));
            assert_ne!(instance_key(&format!("{}x", a.name), instance), Some(key));
        }
    }
    assert!(keyed >= 10, "only {keyed} instances have a key");
}

/// The read buffer a thread keeps is compared only up to the new file's length.
#[test]
fn a_long_file_compared_first_does_not_leak_into_the_next_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let (long, short) = (dir.path().join("long.yaml"), dir.path().join("short.yaml"));
    std::fs::write(&long, b"kind: A\nlong: tail\n").unwrap();
    std::fs::write(&short, b"kind: B\n").unwrap();
    assert!(carried_over(&long, b"kind: A\nlong: tail\n", &dir.path().join("1.yaml")));
    assert!(!carried_over(&short, b"kind: A\n", &dir.path().join("2.yaml")));
    assert!(carried_over(&short, b"kind: B\n", &dir.path().join("3.yaml")));
}

/// A file of the spare is written over only while it is the regular file listed, its only name, with the
/// mode and owner a file created there now would have: one whose mode was changed, a file another name
/// shares (`out/`'s, a user's hard link), a symlink, a FIFO or a file replaced since it was listed is left
/// as it is (the caller removes the name and writes it anew), and no other name ever sees a byte change.
#[test]
fn a_spare_file_is_written_over_only_when_it_is_its_only_name() {
    use super::manifest::Facts;
    use super::spare::{Created, overwrite_sole};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i0.yaml");
    let created = Created::probe(dir.path()).expect("an unnamed file made in the directory");
    let overwrite_sole =
        |path: &std::path::Path, bytes: &[u8], listed: &Facts| overwrite_sole(path, bytes, listed, &created);
    // Its only name: written over, shorter and then longer than before; the facts are the file's after.
    for bytes in [&b"kind: A\nspec: {}\n"[..], b"kind: B\n", b"kind: C\nspec: {replicas: 3}\n"] {
        let listed = Facts::of(&path).unwrap_or_else(|| {
            std::fs::write(&path, b"kind: Old\nspec: {replicas: 1}\n").unwrap();
            Facts::of(&path).unwrap()
        });
        let written = overwrite_sole(&path, bytes, &listed).unwrap().expect("written over");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(written.same_file(&listed), "the same file, not a new one");
        assert_eq!(Some(written), Facts::of(&path));
    }
    // Its mode changed by hand (or its owner): not carried into `out/`, the file left for the caller to write anew.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = std::fs::read(&path).unwrap();
    assert_eq!(overwrite_sole(&path, b"kind: Mode\n", &Facts::of(&path).unwrap()).unwrap(), None);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    // Another name shares the file: neither name changes.
    let other = dir.path().join("out-i0.yaml");
    std::fs::hard_link(&path, &other).unwrap();
    let before = std::fs::read(&other).unwrap();
    assert_eq!(overwrite_sole(&path, b"kind: D\n", &Facts::of(&path).unwrap()).unwrap(), None);
    assert_eq!((std::fs::read(&path).unwrap(), std::fs::read(&other).unwrap()), (before.clone(), before));
    std::fs::remove_file(&other).unwrap();
    // Replaced since it was listed (another inode under the name): left as it is.
    let listed = Facts::of(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"kind: Replaced\n").unwrap();
    if !Facts::of(&path).unwrap().same_file(&listed) {
        assert_eq!(overwrite_sole(&path, b"kind: E\n", &listed).unwrap(), None);
        assert_eq!(std::fs::read(&path).unwrap(), b"kind: Replaced\n");
    }
    // A symlink to a file elsewhere: not followed, the target untouched.
    let target = dir.path().join("target.yaml");
    std::fs::write(&target, b"kind: Target\n").unwrap();
    let link = dir.path().join("i1.yaml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_eq!(overwrite_sole(&link, b"kind: F\n", &Facts::of(&target).unwrap()).unwrap(), None);
    assert_eq!(std::fs::read(&target).unwrap(), b"kind: Target\n");
    // A FIFO: not opened for writing (no hang), left in place.
    let fifo = dir.path().join("i2.yaml");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
    assert_eq!(overwrite_sole(&fifo, b"kind: G\n", &Facts::of(&target).unwrap()).unwrap(), None);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}
