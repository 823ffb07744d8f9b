//! Unit tests of reading the output manifest: sections read back as written, damaged and foreign
//! manifests ignored, racy entries and directories not trusted, only a regular file loaded.

use super::*;
use crate::emit::manifest::{format_section, header};

fn entry(hash: u128, facts: Facts) -> Entry {
    Entry { hash, key: None, facts }
}

type Section<'a> = (Tree, &'a str, Vec<(&'a str, Entry)>);

fn manifest(sections: &[Section<'_>], written: Time) -> Option<Manifest> {
    Manifest::of_text(text_of(sections), written)
}

fn text_of(sections: &[Section<'_>]) -> String {
    let mut text = header() + "\n";
    let out: ByName<'_> =
        sections.iter().filter(|(t, _, _)| *t == Tree::Out).flat_map(|(_, _, e)| e.iter().copied()).collect();
    for (tree, cluster, entries) in sections {
        let same = (*tree == Tree::Spare).then_some(&out);
        let directory = (*tree == Tree::Out).then_some(FACTS.with_inode(5));
        format_section(&mut text, *tree, cluster, directory, entries.iter().copied(), same);
    }
    text
}

const FACTS: Facts = Facts::new(2049, 77, 123, (1_700_000_000, 5), (-3, 999_999_999));

#[test]
fn entries_read_back_as_written() {
    let a = Entry { key: Some(0x1234), ..entry(0xabc, FACTS) };
    let b = entry(0xdef, FACTS.with_inode(78));
    let sections = [
        (Tree::Out, "c0001", vec![("i0002.yaml", a), ("i0003.yaml", b)]),
        (Tree::Spare, "c0001", vec![("i0002.yaml", a), ("i0003.yaml", entry(0xdef, FACTS))]),
    ];
    let read = manifest(&sections, (i64::MAX, 0)).expect("a manifest");
    // The spare's entry equal to out's is written as `= <file>`, and read back as that entry.
    let text = text_of(&sections);
    assert!(text.contains("\n= i0002.yaml\n"), "{text}");
    let record = read.of_cluster("c0001");
    let (out, spare) = record.cluster();
    assert_eq!((out.get("i0002.yaml"), out.get("i0003.yaml")), (Some(a), Some(b)));
    assert_eq!((spare.get("i0002.yaml"), spare.get("i0003.yaml")), (Some(a), Some(entry(0xdef, FACTS))));
    assert_eq!(read.of_cluster("c0002").cluster().0.get("i0002.yaml"), None);
    // The directory's facts read back as written, for out's section only.
    assert!(read.directory_unchanged("c0001", Some(FACTS.with_inode(5))));
    assert!(!read.directory_unchanged("c0001", Some(FACTS)));
    assert!(!read.directory_unchanged("c0001", None));
    assert!(!read.directory_unchanged("c0002", Some(FACTS.with_inode(5))));
    // An empty section reads back as one.
    let empty = manifest(&[(Tree::Out, "c", vec![])], (i64::MAX, 0)).expect("a manifest");
    assert!(empty.of_cluster("c").cluster().0.into_map().is_empty());
}

/// Another kix's manifest, a section longer than the file, a bad header line: the whole manifest is
/// ignored; a bad entry line: its section is.
#[test]
fn malformed_or_foreign_manifests_are_ignored() {
    let body = "0".repeat(32) + " - 1 2 3 4.5 6.7 a.yaml\n";
    let section = format!("out c {}", body.len());
    let good = header() + "\n" + &section + "\n" + &body + "spare c 0\n";
    let read = Manifest::of_text(good.clone(), (i64::MAX, 0)).expect("a manifest");
    assert!(read.of_cluster("c").cluster().0.get("a.yaml").is_some(), "{good}");
    let foreign = good.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1);
    let whole = [
        foreign,
        good.replace(&section, &format!("out c {}", body.len() + 8)),
        good.replace(&section, &format!("out c {}", body.len() - 1)),
        good.replace(&section, &section.replace("out", "inside")),
        good.replace("spare c 0", "spare c"),
        // A directory's facts cut short, one word too many, or not numbers.
        good.replace(&section, &format!("{section} 1 2 3 4.5")),
        good.replace(&section, &format!("{section} 1 2 3 4.5 6.7 8")),
        good.replace(&section, &format!("{section} 1 2 x 4.5 6.7")),
        good[..good.len() - 30].to_string(),
        String::new(),
        "\u{0}\u{1}garbage".to_string(),
    ];
    for case in whole {
        assert!(Manifest::of_text(case.clone(), (i64::MAX, 0)).is_none(), "{case:?}");
    }
    let damaged = [
        " - 1 2 3 4.5 6 a.yaml",
        " - 1 2 3 4.1000000000 6.7 a.yaml",
        " - 1 x 3 4.5 6.7 a.yaml",
        " - 1 2 3 4.5 6.7 c/a",
        " 1 2 3 4.5 6.7 a.yaml",
        " xyz 1 2 3 4.5 6.7 a.yaml",
    ];
    for line in damaged {
        let body = "0".repeat(32) + line + "\n";
        let text = header() + &format!("\nout c {}\n", body.len()) + &body;
        let read = Manifest::of_text(text.clone(), (i64::MAX, 0)).expect("the sections are found");
        assert!(read.of_cluster("c").cluster().0.into_map().is_empty(), "{text:?}");
    }
    // A spare's `= <file>` naming no entry of out's: the spare's section is ignored.
    let text = header() + "\nout c 0\nspare c 9\n= a.yaml\n";
    let read = Manifest::of_text(text, (i64::MAX, 0)).expect("the sections are found");
    assert!(read.of_cluster("c").cluster().1.into_map().is_empty());
}

/// An entry whose mtime or ctime is not older than the manifest is dropped when read (git's racy case).
#[test]
fn racy_entries_are_not_trusted() {
    let at = |modified: Time, changed: Time| Facts::new(1, 1, 1, modified, changed);
    let entries = vec![
        ("old.yaml", entry(1, at((9, 0), (9, 999)))),
        ("same-tick.yaml", entry(1, at((9, 0), (10, 0)))),
        ("later.yaml", entry(1, at((11, 0), (9, 0)))),
    ];
    let read = manifest(&[(Tree::Spare, "c", entries)], (10, 0)).expect("a manifest");
    let record = read.of_cluster("c");
    let mut trusted: Vec<&str> = record.cluster().1.into_map().into_keys().collect();
    trusted.sort_unstable();
    assert_eq!(trusted, ["old.yaml"]);
    // So is a directory's record.
    for (modified, changed, trusted) in [((9, 0), (9, 999), true), ((9, 0), (10, 0), false), ((11, 0), (9, 0), false)] {
        let text =
            header() + &format!("\nout c 0 1 1 1 {}.{:09} {}.{:09}\n", modified.0, modified.1, changed.0, changed.1);
        let read = Manifest::of_text(text, (10, 0)).expect("a manifest");
        assert_eq!(read.directory_unchanged("c", Some(at(modified, changed))), trusted, "{modified:?} {changed:?}");
    }
}

/// The verdicts on a real file: its recorded facts and hash, other bytes, and a file changed since.
/// A manifest on disk is read only from a regular file under its own name: one behind a symlink, a FIFO
/// (opened without waiting for a writer) and a directory at its path are ignored, never waited on; the
/// regular file itself reads back with its mtime as `written`.
#[cfg(target_os = "linux")]
#[test]
fn a_manifest_is_loaded_only_from_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("manifest");
    let mut text = header() + "\n";
    format_section(&mut text, Tree::Out, "c0001", None, [("a.yaml", entry(0xabc, FACTS))], None);
    std::fs::write(&real, &text).unwrap();
    let loaded = Manifest::load(&real);
    assert!(loaded.has_section(Tree::Out, "c0001"), "the regular file is read");
    let modified = Facts::of(&real).unwrap().modified();
    assert_eq!(loaded.written(), modified);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for ignored in [link, fifo, dir.path().to_path_buf(), dir.path().join("missing")] {
        // On a thread of its own, so that a load that waits (a FIFO opened for a writer) fails the test
        // instead of hanging it.
        let (done, loaded) = std::sync::mpsc::channel();
        let path = ignored.clone();
        std::thread::spawn(move || done.send(Manifest::load(&path).has_section(Tree::Out, "c0001")));
        let read = loaded.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(read, Ok(false), "{}: ignored at once", ignored.display());
    }
}

/// A cluster's sections are read from the file the manifest was loaded from, by position, when asked for:
/// a manifest renamed over the path since (as the next build's is) changes nothing read, a header line
/// longer than one read of it is found, and a section that can no longer be read (the file cut short
/// after the load) is missing, never an error or a panic.
#[cfg(unix)]
#[test]
fn sections_are_read_from_the_file_loaded_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("manifest");
    let long = "c".repeat(2 * HEADER_READ as usize);
    let sections = [
        (Tree::Out, "c0001", vec![("a.yaml", entry(0xabc, FACTS))]),
        (Tree::Out, long.as_str(), vec![("b.yaml", entry(0xdef, FACTS))]),
        (Tree::Inputs, "c0001", vec![("k.yaml", entry(1, FACTS))]),
    ];
    std::fs::write(&path, text_of(&sections)).unwrap();
    let loaded = Manifest::load(&path);
    // Replaced by another file at the path, as a build puts its next manifest in place.
    let next = dir.path().join("next");
    std::fs::write(&next, header() + "\n").unwrap();
    std::fs::rename(&next, &path).unwrap();
    let record = loaded.of_cluster("c0001");
    assert_eq!(record.cluster().0.get("a.yaml"), Some(entry(0xabc, FACTS)));
    assert!(loaded.body(Tree::Inputs, "c0001").is_some_and(|body| body.ends_with(" k.yaml\n")));
    assert_eq!(loaded.of_cluster(&long).cluster().0.get("b.yaml"), Some(entry(0xdef, FACTS)));
    // Cut short after the load: what lies beyond the end is missing.
    std::fs::write(&path, text_of(&sections)).unwrap();
    let loaded = Manifest::load(&path);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(header().len() as u64 + 10).unwrap();
    assert_eq!(loaded.body(Tree::Inputs, "c0001"), None);
    assert!(loaded.of_cluster("c0001").cluster().0.into_map().is_empty());
    assert!(loaded.of_cluster("c0001").recorded_cluster().is_none());
    // What the index knows is still known: the body's length its header gave.
    let mut line = Vec::new();
    crate::emit::manifest::format_entry(&mut line, "a.yaml", &entry(0xabc, FACTS));
    assert_eq!(loaded.body_length(Tree::Out, "c0001"), Some(line.len()));
}

/// A manifest written to in place after it was loaded (by anything but kix, which renames the next one
/// over it), even with bytes of the same length: every section read after that is missing, so nothing the
/// other bytes say is trusted against the facts taken at the load.
#[cfg(unix)]
#[test]
fn a_manifest_written_in_place_after_the_load_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("manifest");
    let text = text_of(&[(Tree::Out, "c0001", vec![("a.yaml", entry(0xabc, FACTS))])]);
    std::fs::write(&path, &text).unwrap();
    let loaded = Manifest::load(&path);
    assert!(loaded.body(Tree::Out, "c0001").is_some());
    // The clock moves on (a change within the tick the file was stated in keeps its ctime: git's racy case).
    std::thread::sleep(std::time::Duration::from_millis(20));
    let other = text.replace(&format!("{:032x}", 0xabc), &format!("{:032x}", 0xdef));
    assert_eq!(other.len(), text.len());
    std::fs::write(&path, &other).unwrap();
    assert_eq!(loaded.body(Tree::Out, "c0001"), None);
    let record = loaded.of_cluster("c0001");
    assert!(record.cluster().0.into_map().is_empty() && record.recorded_out().is_none());
}
