//! The output manifest (issue 20 part 3): what a build knows of the files it left in `out/`, so that the
//! next build carries an unchanged file over without reading it back.
//!
//! **Where**: beside `out/`, as `.<out>.kix-manifest` next to the build's lock (`.<out>.kix-lock`), not
//! inside it. `out/` holds only the manifests kix generates, byte for byte what a clean build writes (it is
//! often committed for GitOps, where a file rewritten by every build would churn, and applied with
//! `kubectl apply -k` or by Argo CD); a file beside it can collide with no cluster or instance name.
//!
//! **What**: per file kix wrote or linked, the XXH3-128 hash of its bytes and the file's facts as the build
//! left it: device, inode, size, mtime and ctime with nanoseconds. The facts are taken after the build's
//! last change to the file (the previous output is removed first: a hard link's removal changes the
//! file's ctime), and the manifest is written after them.
//!
//! **How a rebuild uses it** ([`Manifest::judge`]): a previous file whose facts are those recorded is
//! known to hold the recorded bytes, so it is linked when their hash is the hash of what the build writes
//! (and written, unread, when it is not); any other file is read and compared as without a manifest.
//! A `build --cluster X` neither reads nor writes it (X's files are few, the fleet's entries many); the
//! entries it leaves for X are never trusted again, since X's files are new or re-linked (ctime moves).
//!
//! **Why that is safe when a user edits `out/` by hand**: every change to a file's bytes sets its ctime to
//! the current time, and no user can set ctime (`touch -r`, `utimensat` restore mtime and atime, not
//! ctime); replacing a file (an editor's rename, `cp`, `git checkout`) changes its inode and ctime. So a
//! file changed after the build has other facts, unless the change fell in the same clock tick as the
//! recorded ctime. That is the "racy" case git's index has, guarded as git does: an entry whose mtime or
//! ctime is not older than the manifest's own mtime is not trusted, and its file is read. What it cannot
//! see: a change while the build runs (the build holds the lock and replaces `out/`), or one that also
//! restores ctime, which takes setting the system clock back or writing the disk under the file system;
//! on a file system that does not keep ctime, or without a Unix stat, no entry is trusted. A manifest that
//! is missing, unreadable, malformed or from another kix version is ignored: every file is compared.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The manifest's first line: its format and the kix that wrote it (another kix's manifest is ignored).
fn header() -> String {
    format!("kix output manifest 1 {}", env!("CARGO_PKG_VERSION"))
}

/// The content hash of a file's bytes.
pub(crate) fn hash(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// A time as (seconds, nanoseconds), ordered.
type Time = (i64, i64);

/// What `stat` says of a regular file, as far as a change to its bytes would show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Facts {
    device: u64,
    inode: u64,
    size: u64,
    modified: Time,
    changed: Time,
}

impl Facts {
    /// The facts of `path` when it is a regular file (a symlink is not followed).
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Facts> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
        Some(Facts {
            device: m.dev(),
            inode: m.ino(),
            size: m.size(),
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_: &Path) -> Option<Facts> {
        None
    }

    /// Whether a change after the manifest was written would show in these facts (see the module doc).
    fn settled_before(&self, written: Time) -> bool {
        self.modified < written && self.changed < written
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    hash: u128,
    facts: Facts,
}

/// What the manifest says of a previous file against the bytes a build is about to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judged {
    /// It holds exactly those bytes: link it, unread.
    Same,
    /// It holds other bytes: write the new ones, without reading it.
    Differs,
    /// Nothing known (no entry, other facts, a racy entry): read and compare.
    Unknown,
}

/// A manifest as read from disk: the entries a build may trust, by `cluster/file`.
#[derive(Debug, Default)]
pub(crate) struct Manifest {
    entries: HashMap<String, Entry>,
}

/// The manifest's path for the output directory `out` (whose parent is `parent` and name `base`).
pub(crate) fn path(parent: &Path, base: &str) -> PathBuf {
    parent.join(format!(".{base}.kix-manifest"))
}

impl Manifest {
    /// The manifest at `path`, with only its trusted entries (mtime and ctime older than the manifest's own
    /// mtime); empty when it is missing, unreadable, malformed or another kix's: never an error.
    pub(crate) fn load(path: &Path) -> Manifest {
        let Some(written) = Facts::of(path).map(|f| f.modified) else { return Manifest::default() };
        let Ok(text) = std::fs::read_to_string(path) else { return Manifest::default() };
        parse(&text, written).unwrap_or_default()
    }

    /// What is known of `previous` (the file `key`, `cluster/file`, of the previous output) against bytes
    /// whose [`hash`] is `hash`.
    pub(crate) fn judge(&self, key: &str, previous: &Path, hash: u128) -> Judged {
        let Some(entry) = self.entries.get(key) else { return Judged::Unknown };
        if Facts::of(previous) != Some(entry.facts) {
            return Judged::Unknown;
        }
        if entry.hash == hash { Judged::Same } else { Judged::Differs }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn parse(text: &str, written: Time) -> Option<Manifest> {
    let mut lines = text.lines();
    if lines.next()? != header() {
        return None;
    }
    let mut entries = HashMap::new();
    for line in lines {
        let (key, entry) = parse_entry(line)?;
        if entry.facts.settled_before(written) {
            entries.insert(key.to_string(), entry);
        }
    }
    Some(Manifest { entries })
}

/// `<hash> <device> <inode> <size> <mtime s>.<ns> <ctime s>.<ns> <cluster>/<file>`.
fn parse_entry(line: &str) -> Option<(&str, Entry)> {
    let mut fields = line.splitn(7, ' ');
    let mut next = || fields.next();
    let hash = u128::from_str_radix(next()?, 16).ok()?;
    let device = next()?.parse().ok()?;
    let inode = next()?.parse().ok()?;
    let size = next()?.parse().ok()?;
    let time = |field: &str| -> Option<Time> {
        let (seconds, nanos) = field.split_once('.')?;
        Some((seconds.parse().ok()?, nanos.parse().ok().filter(|n| (0..1_000_000_000).contains(n))?))
    };
    let modified = time(next()?)?;
    let changed = time(next()?)?;
    let key = next().filter(|k| k.contains('/') && !k.contains(['\n', '\r']))?;
    Some((key, Entry { hash, facts: Facts { device, inode, size, modified, changed } }))
}

fn format_entry(text: &mut String, key: &str, entry: &Entry) {
    use std::fmt::Write as _;
    let Facts { device, inode, size, modified, changed } = entry.facts;
    let _ = writeln!(
        text,
        "{:032x} {device} {inode} {size} {}.{:09} {}.{:09} {key}",
        entry.hash, modified.0, modified.1, changed.0, changed.1
    );
}

/// The files one cluster's directory was staged with: each file's name and the [`hash`] of its bytes.
#[derive(Debug)]
pub(crate) struct StagedCluster {
    pub(crate) cluster: String,
    pub(crate) files: Vec<(String, u128)>,
}

/// Writes the manifest for `out` once the build's files are in place: each staged cluster's files with
/// their facts as they are now, and, from `kept` (the manifest this build read), the entries of clusters
/// it did not stage (a `--cluster` build leaves them in place). A file that cannot be stated is left out.
/// Best effort: on any failure the manifest is removed, and the next build compares every file.
pub(crate) fn record(path: &Path, out: &Path, staged: &[StagedCluster], kept: Option<&Manifest>) {
    use rayon::prelude::*;
    let _ = std::fs::remove_file(path);
    let recorded: Vec<Vec<(String, Entry)>> = staged
        .par_iter()
        .map(|staged| {
            let dir = out.join(&staged.cluster);
            let entries = staged.files.iter().filter_map(|(name, hash)| {
                let facts = Facts::of(&dir.join(name))?;
                Some((format!("{}/{name}", staged.cluster), Entry { hash: *hash, facts }))
            });
            entries.collect()
        })
        .collect();
    let mut all: Vec<(&str, &Entry)> = recorded.iter().flatten().map(|(k, e)| (k.as_str(), e)).collect();
    if let Some(kept) = kept {
        let restaged = |key: &str| {
            let cluster = key.split_once('/').map_or(key, |(c, _)| c);
            staged.iter().any(|s| s.cluster == cluster)
        };
        all.extend(kept.entries.iter().filter(|(k, _)| !restaged(k)).map(|(k, e)| (k.as_str(), e)));
    }
    all.sort_unstable_by_key(|(key, _)| *key);
    let mut text = header() + "\n";
    for (key, entry) in all {
        format_entry(&mut text, key, entry);
    }
    let temporary = path.with_file_name(format!(
        "{}.{}",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ));
    if std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, path)).is_err() {
        let _ = std::fs::remove_file(&temporary);
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn entry(hash: u128, facts: Facts) -> Entry {
        Entry { hash, facts }
    }

    #[test]
    fn entries_read_back_as_written() {
        let facts =
            Facts { device: 2049, inode: 77, size: 123, modified: (1_700_000_000, 5), changed: (-3, 999_999_999) };
        let mut text = header() + "\n";
        format_entry(&mut text, "c0001/i0002.yaml", &entry(0xabc, facts));
        let manifest = parse(&text, (i64::MAX, 0)).expect("a manifest");
        assert_eq!(manifest.entries.get("c0001/i0002.yaml"), Some(&entry(0xabc, facts)));
    }

    /// Another kix's manifest, a bad line or a truncated one: the whole manifest is ignored.
    #[test]
    fn malformed_or_foreign_manifests_are_ignored() {
        let good = header() + "\n" + &"0".repeat(32) + " 1 2 3 4.5 6.7 c/a.yaml\n";
        assert!(parse(&good, (i64::MAX, 0)).is_some());
        let foreign = good.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1);
        let cases = [
            foreign,
            good.replace("c/a.yaml", "a.yaml"),
            good.replace(" 6.7 ", " 6 "),
            good.replace(" 4.5 ", " 4.1000000000 "),
            good.replace(" 1 2 ", " 1 x "),
            good[..good.len() - 12].to_string(),
            String::new(),
            "\u{0}\u{1}garbage".to_string(),
        ];
        for case in cases {
            assert!(parse(&case, (i64::MAX, 0)).is_none(), "{case:?}");
        }
    }

    /// An entry whose mtime or ctime is not older than the manifest is dropped when read (git's racy case).
    #[test]
    fn racy_entries_are_not_trusted() {
        let at = |modified: Time, changed: Time| Facts { device: 1, inode: 1, size: 1, modified, changed };
        let mut text = header() + "\n";
        format_entry(&mut text, "c/old.yaml", &entry(1, at((9, 0), (9, 999))));
        format_entry(&mut text, "c/same-tick.yaml", &entry(1, at((9, 0), (10, 0))));
        format_entry(&mut text, "c/later.yaml", &entry(1, at((11, 0), (9, 0))));
        let manifest = parse(&text, (10, 0)).expect("a manifest");
        let mut trusted: Vec<&str> = manifest.entries.keys().map(String::as_str).collect();
        trusted.sort_unstable();
        assert_eq!(trusted, ["c/old.yaml"]);
    }

    /// The verdicts on a real file: its recorded facts and hash, other bytes, and a file changed since.
    #[test]
    fn a_file_is_judged_by_its_facts_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, b"kind: A\n").unwrap();
        let facts = Facts::of(&file).unwrap();
        let manifest =
            Manifest { entries: HashMap::from([("c/a.yaml".to_string(), entry(hash(b"kind: A\n"), facts))]) };
        assert_eq!(manifest.judge("c/a.yaml", &file, hash(b"kind: A\n")), Judged::Same);
        assert_eq!(manifest.judge("c/a.yaml", &file, hash(b"kind: B\n")), Judged::Differs);
        assert_eq!(manifest.judge("c/b.yaml", &file, hash(b"kind: A\n")), Judged::Unknown);
        // Rewritten with bytes of the same length: its ctime (and mtime) move on.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, b"kind: B\n").unwrap();
        assert_eq!(manifest.judge("c/a.yaml", &file, hash(b"kind: A\n")), Judged::Unknown);
        std::fs::remove_file(&file).unwrap();
        assert_eq!(manifest.judge("c/a.yaml", &file, hash(b"kind: A\n")), Judged::Unknown);
    }
}
