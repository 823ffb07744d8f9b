//! Unit tests of the output manifest's text: fields written as `format!` wrote them and read back,
//! damaged and foreign manifests ignored, racy entries and directories not trusted.

use super::*;

/// Hashes and keys are written as `{:032x}` wrote them and read back; anything else is refused.
#[test]
fn hex_fields_are_written_as_before_and_read_back() {
    for value in [0, 1, 0xf, 0xdead_beef, u128::MAX, u128::MAX - 1, 1 << 127, 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef]
    {
        let mut text = Vec::new();
        push_hex(&mut text, value);
        let text = String::from_utf8(text).expect("hex");
        assert_eq!(text, format!("{value:032x} "));
        assert_eq!(parse_hex(text.trim_end()), Some(value));
    }
    for refused in ["", "0", &"0".repeat(31), &"0".repeat(33), &"A".repeat(32), &"g".repeat(32), &"+1".repeat(16)] {
        assert_eq!(parse_hex(refused), None, "{refused}");
    }
}

/// Numbers and times are written as `format!` wrote them.
#[test]
fn decimal_fields_are_written_as_before() {
    for value in [0, 1, 9, 10, 99, 100, 123_456_789, u64::from(u32::MAX), u64::MAX] {
        let mut text = Vec::new();
        push_decimal(&mut text, value);
        let text = String::from_utf8(text).expect("digits");
        assert_eq!(text, value.to_string());
    }
    for seconds in [0, 1, -1, 59, 1_764_000_000, i64::MAX, i64::MIN] {
        for nanos in [0, 1, 10, 999_999_999, 123_000_000, 1_000_000_000, -1, i64::MAX] {
            let mut text = Vec::new();
            push_time(&mut text, (seconds, nanos));
            let text = String::from_utf8(text).expect("time");
            assert_eq!(text, format!("{seconds}.{nanos:09}"), "{seconds} {nanos}");
        }
    }
}

/// Decimal fields read as `str::parse` read them, for every form `format_entry` writes; signs,
/// blanks, overflow and empty fields refused.
#[test]
fn decimal_fields_are_read_as_before() {
    for value in [0, 1, 9, 10, 999_999_999, u64::from(u32::MAX), u64::MAX - 1, u64::MAX] {
        assert_eq!(parse_decimal(&value.to_string()), Some(value));
    }
    for refused in ["", "+1", "-1", " 1", "1 ", "1.0", "18446744073709551616", "99999999999999999999", "x"] {
        assert_eq!(parse_decimal(refused), None, "{refused}");
    }
    let facts = Facts { device: 66, inode: 1 << 40, size: 0, modified: (-5, 7), changed: (1_764_000_000, 999_999_999) };
    let entry = Entry { hash: 1 << 100, key: Some(7), facts };
    let mut line = Vec::new();
    format_entry(&mut line, "i0001.yaml", &entry);
    let line = String::from_utf8(line).expect("entry");
    assert_eq!(parse_entry(line.trim_end_matches('\n')), Some(("i0001.yaml", entry)));
    // The hash and the key are cut at 32 digits: one digit fewer or more, or no space after them, is damage.
    let line = line.trim_end_matches('\n');
    let (hash, rest) = line.split_at(32);
    let (key, rest) = rest[1..].split_at(32);
    for broken in [
        format!("{} {key}{rest}", &hash[1..]),
        format!("{hash}0 {key}{rest}"),
        format!("{hash} {}{rest}", &key[1..]),
        format!("{hash} {key}0{rest}"),
        format!("{hash}{key}{rest}"),
        format!("{hash} -0{rest}"),
        format!("{hash}  {key}{rest}"),
    ] {
        assert_eq!(parse_entry(&broken), None, "{broken}");
    }
    assert_eq!(parse_entry(&format!("{hash} - {}", &rest[1..])).map(|(_, e)| e.key), Some(None));
    for broken in ["-.5", "1.5.0", "5.1000000000", "5", "5.-1"] {
        let damaged = line.trim_end_matches('\n').replacen("-5.000000007", broken, 1);
        assert_eq!(parse_entry(&damaged), None, "{damaged}");
    }
}

fn entry(hash: u128, facts: Facts) -> Entry {
    Entry { hash, key: None, facts }
}

type Section<'a> = (Tree, &'a str, Vec<(&'a str, Entry)>);

fn manifest(sections: &[Section<'_>], written: Time) -> Option<Manifest> {
    let mut text = header() + "\n";
    let out: ByName<'_> =
        sections.iter().filter(|(t, _, _)| *t == Tree::Out).flat_map(|(_, _, e)| e.iter().copied()).collect();
    for (tree, cluster, entries) in sections {
        let same = (*tree == Tree::Spare).then_some(&out);
        let directory = (*tree == Tree::Out).then_some(Facts { inode: 5, ..FACTS });
        format_section(&mut text, *tree, cluster, directory, entries.iter().copied(), same);
    }
    index(text, written)
}

const FACTS: Facts =
    Facts { device: 2049, inode: 77, size: 123, modified: (1_700_000_000, 5), changed: (-3, 999_999_999) };

#[test]
fn entries_read_back_as_written() {
    let a = Entry { key: Some(0x1234), ..entry(0xabc, FACTS) };
    let b = entry(0xdef, Facts { inode: 78, ..FACTS });
    let sections = [
        (Tree::Out, "c0001", vec![("i0002.yaml", a), ("i0003.yaml", b)]),
        (Tree::Spare, "c0001", vec![("i0002.yaml", a), ("i0003.yaml", entry(0xdef, FACTS))]),
    ];
    let read = manifest(&sections, (i64::MAX, 0)).expect("a manifest");
    // The spare's entry equal to out's is written as `= <file>`, and read back as that entry.
    assert!(read.text.contains("\n= i0002.yaml\n"), "{}", read.text);
    let (out, spare) = read.cluster("c0001");
    assert_eq!((out.get("i0002.yaml"), out.get("i0003.yaml")), (Some(a), Some(b)));
    assert_eq!((spare.get("i0002.yaml"), spare.get("i0003.yaml")), (Some(a), Some(entry(0xdef, FACTS))));
    assert_eq!(read.cluster("c0002").0.get("i0002.yaml"), None);
    // The directory's facts read back as written, for out's section only.
    assert!(read.directory_unchanged("c0001", Some(Facts { inode: 5, ..FACTS })));
    assert!(!read.directory_unchanged("c0001", Some(FACTS)));
    assert!(!read.directory_unchanged("c0001", None));
    assert!(!read.directory_unchanged("c0002", Some(Facts { inode: 5, ..FACTS })));
    // An empty section reads back as one.
    let empty = manifest(&[(Tree::Out, "c", vec![])], (i64::MAX, 0)).expect("a manifest");
    assert!(empty.cluster("c").0.into_map().is_empty());
}

/// Another kix's manifest, a section longer than the file, a bad header line: the whole manifest is
/// ignored; a bad entry line: its section is.
#[test]
fn malformed_or_foreign_manifests_are_ignored() {
    let body = "0".repeat(32) + " - 1 2 3 4.5 6.7 a.yaml\n";
    let section = format!("out c {}", body.len());
    let good = header() + "\n" + &section + "\n" + &body + "spare c 0\n";
    let read = index(good.clone(), (i64::MAX, 0)).expect("a manifest");
    assert!(read.cluster("c").0.get("a.yaml").is_some(), "{good}");
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
        assert!(index(case.clone(), (i64::MAX, 0)).is_none(), "{case:?}");
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
        let read = index(text.clone(), (i64::MAX, 0)).expect("the sections are found");
        assert!(read.cluster("c").0.into_map().is_empty(), "{text:?}");
    }
    // A spare's `= <file>` naming no entry of out's: the spare's section is ignored.
    let text = header() + "\nout c 0\nspare c 9\n= a.yaml\n";
    let read = index(text, (i64::MAX, 0)).expect("the sections are found");
    assert!(read.cluster("c").1.into_map().is_empty());
}

/// An entry whose mtime or ctime is not older than the manifest is dropped when read (git's racy case).
#[test]
fn racy_entries_are_not_trusted() {
    let at = |modified: Time, changed: Time| Facts { device: 1, inode: 1, size: 1, modified, changed };
    let entries = vec![
        ("old.yaml", entry(1, at((9, 0), (9, 999)))),
        ("same-tick.yaml", entry(1, at((9, 0), (10, 0)))),
        ("later.yaml", entry(1, at((11, 0), (9, 0)))),
    ];
    let read = manifest(&[(Tree::Spare, "c", entries)], (10, 0)).expect("a manifest");
    let mut trusted: Vec<&str> = read.cluster("c").1.into_map().into_keys().collect();
    trusted.sort_unstable();
    assert_eq!(trusted, ["old.yaml"]);
    // So is a directory's record.
    for (modified, changed, trusted) in [((9, 0), (9, 999), true), ((9, 0), (10, 0), false), ((11, 0), (9, 0), false)] {
        let text =
            header() + &format!("\nout c 0 1 1 1 {}.{:09} {}.{:09}\n", modified.0, modified.1, changed.0, changed.1);
        let read = index(text, (10, 0)).expect("a manifest");
        assert_eq!(read.directory_unchanged("c", Some(at(modified, changed))), trusted, "{modified:?} {changed:?}");
    }
}

/// The verdicts on a real file: its recorded facts and hash, other bytes, and a file changed since.
#[test]
fn a_file_is_judged_by_its_facts_and_hash() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.yaml");
    std::fs::write(&file, b"kind: A\n").unwrap();
    let facts = Facts::of(&file).unwrap();
    let entries = Entries { entries: [("a.yaml", entry(hash(b"kind: A\n"), facts))].into_iter().collect() };
    let judge = |name: &str, bytes: &[u8]| entries.judge(name, Facts::of(&file), hash(bytes));
    assert_eq!(judge("a.yaml", b"kind: A\n"), Judged::Same);
    assert_eq!(judge("a.yaml", b"kind: B\n"), Judged::Differs);
    assert_eq!(judge("b.yaml", b"kind: A\n"), Judged::Unknown);
    // Rewritten with bytes of the same length: its ctime (and mtime) move on.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&file, b"kind: B\n").unwrap();
    assert_eq!(judge("a.yaml", b"kind: A\n"), Judged::Unknown);
    // A second link changes the ctime too: the file is one file still, with other facts.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = Facts::of(&file).unwrap();
    std::fs::hard_link(&file, dir.path().join("b.yaml")).unwrap();
    let after = Facts::of(&file).unwrap();
    assert!(after.same_file(&before) && after != before);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(judge("a.yaml", b"kind: A\n"), Judged::Unknown);
}

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
    let modified = Facts::of(&real).unwrap().modified;
    assert_eq!(loaded.written, modified);
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
