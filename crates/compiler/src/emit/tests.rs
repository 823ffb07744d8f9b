//! Tests of `emit`: carrying a previous file over, and the instance key against what is rendered.

use super::staging::carried_over;
use std::os::unix::fs::MetadataExt;

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
