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
