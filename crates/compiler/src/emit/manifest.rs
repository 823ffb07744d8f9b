//! The output manifest (issue 20 parts 3 and 9): what a build knows of the files it left in `out/` and in
//! the spare beside it, so that the next build uses an unchanged file without reading it back.
//!
//! **Where**: in kix's state directory beside `out/` (`.kix/`, which holds a `.gitignore` of `*` so a
//! repository that commits `out/` never takes it, issue 41), as `.kix/.<out>.kix-manifest` next to the build's
//! lock (`.<out>.kix-lock`) and the spare (`.<out>.kix-spare`, [`crate::emit::spare`]), not inside `out/`. `out/` holds only the manifests kix
//! generates, byte for byte what a clean build writes (it is often committed for GitOps, where a file
//! rewritten by every build would churn, and applied with `kubectl apply -k` or by Argo CD); a file beside
//! it can collide with no cluster or instance name.
//!
//! **What**: per cluster, one section for its directory in `out/` and one for its directory in the spare;
//! per file the XXH3-128 hash of its bytes and the file's facts as the build left it: device, inode, size,
//! mtime and ctime with nanoseconds. The facts are taken after the build's last change to the file (a
//! hard link made or removed changes a file's ctime, so a file whose links the build changed is stated
//! again), and the manifest is written after them: each cluster's sections are appended to the next
//! manifest (`.<out>.kix-manifest.<pid>`) by the core that staged it, as soon as it is staged, and the file
//! is renamed into place once `out/` is swapped in, its mtime set to that moment (`emit::next_manifest`). A
//! section's header gives its length, so a build finds a cluster's sections without reading the others (in
//! whatever order the cores wrote them), and each core reads and parses the sections of the cluster it
//! stages when it stages it (`emit::manifest_read`).
//!
//! **How a rebuild uses it** ([`Entries::judge`]): a file whose facts are those recorded is known to hold
//! the recorded bytes, so it is kept when their hash is the hash of what the build writes (and replaced,
//! unread, when it is not); any other file is read and compared. A `build --cluster X` neither reads nor
//! writes it (X's files are few, the fleet's entries many); the entries it leaves for X are never trusted
//! again, since X's files are new or re-linked (ctime moves).
//!
//! **A rebuild that changes nothing writes nothing** ([`crate::emit::manifest_read::ClusterRecord::unchanged_on_disk`]): when every cluster
//! is reused (`crate::reuse`) and `out/` holds exactly their directories, each with its recorded facts and
//! each file in it with its recorded facts, the build stages nothing, swaps nothing and leaves this
//! manifest as it is: it still describes `out/`, the spare and every cluster's inputs. `out/` is then what
//! the build would write, by the same rule that lets a build keep a file unread.
//!
//! **Why that is safe when a user edits `out/` by hand**: every change to a file's bytes sets its ctime to
//! the current time, and no user can set ctime (`touch -r`, `utimensat` restore mtime and atime, not
//! ctime); replacing a file (an editor's rename, `cp`, `git checkout`) changes its inode and ctime. So a
//! file changed after the build has other facts, unless the change fell in the same clock tick as the
//! recorded ctime. That is the "racy" case git's index has, guarded as git does: an entry whose mtime or
//! ctime is not older than the manifest's own mtime is not trusted, and its file is read. An entry that no
//! longer describes its file (the build itself changed the file since, or a killed build left the
//! manifest of the build before) can never be trusted by mistake: every change moves the facts. What it
//! cannot see: a change while the build runs (the build holds the lock), or one that also restores ctime,
//! which takes setting the system clock back or writing the disk under the file system; on a file system
//! that does not keep ctime, or without a Unix stat, no entry is trusted. A manifest that is missing,
//! unreadable, malformed or from another kix version is ignored, and so is a damaged section: every file
//! it would describe is compared.

use std::collections::HashMap;

/// Entries by file name. Hashed with foldhash: a fleet's rebuild looks up two entries per file it keeps
/// (std's SipHash showed in its profile); only looked up, never iterated into output.
pub(crate) type ByName<'a> = HashMap<&'a str, Entry, foldhash::fast::RandomState>;
use std::path::{Path, PathBuf};

/// The manifest's first line: its format and the kix that wrote it (another kix's manifest is ignored).
pub(crate) fn header() -> String {
    format!("kix output manifest 4 {}", env!("CARGO_PKG_VERSION"))
}

/// The content hash of a file's bytes.
pub(crate) fn hash(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// A time as (seconds, nanoseconds), ordered.
pub(crate) type Time = (i64, i64);

/// What `stat` says of a regular file, as far as a change to its bytes would show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Facts {
    device: u64,
    inode: u64,
    size: u64,
    modified: Time,
    changed: Time,
}

impl Facts {
    /// The facts of `path` when it is a regular file (a symlink is not followed).
    pub(crate) fn of(path: &Path) -> Option<Facts> {
        Facts::of_metadata(&std::fs::symlink_metadata(path).ok()?)
    }

    /// The facts of an open file (one the build has just written).
    pub(crate) fn of_file(file: &std::fs::File) -> Option<Facts> {
        Facts::of_metadata(&file.metadata().ok()?)
    }

    /// The facts a file's metadata gives (`None` unless it is a regular file).
    pub(crate) fn of_metadata(m: &std::fs::Metadata) -> Option<Facts> {
        m.is_file().then(|| Facts::of_any(m)).flatten()
    }

    /// The facts of `path` when it is a directory (not a symlink to one): its mtime and ctime move whenever
    /// an entry is created, removed or renamed in it, or its mode changes.
    pub(crate) fn of_directory(path: &Path) -> Option<Facts> {
        let m = std::fs::symlink_metadata(path).ok()?;
        m.is_dir().then(|| Facts::of_any(&m)).flatten()
    }

    #[cfg(unix)]
    fn of_any(m: &std::fs::Metadata) -> Option<Facts> {
        use std::os::unix::fs::MetadataExt;
        Some(Facts {
            device: m.dev(),
            inode: m.ino(),
            size: m.size(),
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// The facts of a `stat` (of a regular file), as [`Facts::of_metadata`] takes them from std's.
    #[cfg(target_os = "linux")]
    #[allow(clippy::unnecessary_cast)] // The field types differ between architectures.
    pub(crate) fn of_stat(stat: &rustix::fs::Stat) -> Facts {
        Facts {
            device: stat.st_dev as u64,
            inode: stat.st_ino as u64,
            size: stat.st_size as u64,
            modified: (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            changed: (stat.st_ctime as i64, stat.st_ctime_nsec as i64),
        }
    }

    /// Without a Unix stat no facts are known, and no entry is trusted.
    #[cfg(not(unix))]
    fn of_any(_: &std::fs::Metadata) -> Option<Facts> {
        None
    }

    /// Whether `self` and `other` are one file with the same size and mtime: what a write to it in place
    /// moves (ctime moves as well for a link made or removed, as when another file is renamed over its
    /// path, which leaves its bytes as they were).
    pub(crate) fn same_bytes(&self, other: &Facts) -> bool {
        (self.device, self.inode, self.size, self.modified) == (other.device, other.inode, other.size, other.modified)
    }

    /// Whether `self` and `other` are one file (its links may have changed since).
    pub(crate) fn same_file(&self, other: &Facts) -> bool {
        (self.device, self.inode) == (other.device, other.inode)
    }

    /// Facts as a test states them.
    #[cfg(test)]
    pub(crate) const fn new(device: u64, inode: u64, size: u64, modified: Time, changed: Time) -> Facts {
        Facts { device, inode, size, modified, changed }
    }

    /// These facts with another inode (another file), as a test states them.
    #[cfg(test)]
    pub(crate) const fn with_inode(self, inode: u64) -> Facts {
        Facts { inode, ..self }
    }

    /// The file's mtime.
    pub(crate) fn modified(&self) -> Time {
        self.modified
    }

    /// Whether a change after the manifest was written would show in these facts (see the module doc).
    pub(crate) fn settled_before(&self, written: Time) -> bool {
        self.modified < written && self.changed < written
    }
}

/// One file's record: the hash of its bytes, the key of what it was rendered from (an instance's file,
/// `emit::instance_key`) and its facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) hash: u128,
    pub(crate) key: Option<u128>,
    pub(crate) facts: Facts,
}

impl Entry {
    /// Whether the file whose facts now are `facts` is known, unread and unrendered, to hold what a build
    /// renders from inputs whose key is `key`: its facts are the recorded ones and so is its key.
    pub(crate) fn vouches_for(&self, facts: Option<Facts>, key: Option<u128>) -> bool {
        key.is_some() && self.key == key && Some(self.facts) == facts
    }
}

/// What identifies the kix binary that renders: its version and its executable's device, inode, size and
/// mtime (a rebuilt kix is another file), so that a key recorded by one binary is never taken for one
/// of another, whose rendering may differ. `None` where the executable cannot be found: no keys then.
pub(crate) fn binary_identity() -> Option<u128> {
    static IDENTITY: std::sync::OnceLock<Option<u128>> = std::sync::OnceLock::new();
    *IDENTITY.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        let facts = Facts::of_metadata(&std::fs::metadata(exe).ok()?)?;
        let identity = format!("{} {facts:?}", env!("CARGO_PKG_VERSION"));
        Some(hash(identity.as_bytes()))
    })
}

/// What the manifest says of a file against the bytes a build is about to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judged {
    /// It holds exactly those bytes: keep it, unread.
    Same,
    /// It holds other bytes: replace it, without reading it.
    Differs,
    /// Nothing known (no entry, other facts, a racy entry): read and compare.
    Unknown,
}

/// Which directory of a cluster a section describes, or that it describes the cluster's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tree {
    /// `out/<cluster>/`.
    Out,
    /// `.<out>.kix-spare/<cluster>/`.
    Spare,
    /// Not a directory: what the build that wrote `out/<cluster>` compiled it from and found
    /// (`crate::reuse`, issue 42).
    Inputs,
}

impl Tree {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Tree::Out => "out",
            Tree::Spare => "spare",
            Tree::Inputs => "inputs",
        }
    }
}

/// The trusted entries of one section, by file name.
#[derive(Debug, Default)]
pub(crate) struct Entries<'a> {
    entries: ByName<'a>,
}

/// The manifest's path for the output directory `out` (whose parent is `parent` and name `base`): in kix's
/// state directory beside it ([`crate::emit::outdir::state_dir`]).
pub(crate) fn path(parent: &Path, base: &str) -> PathBuf {
    crate::emit::outdir::state_dir(parent).join(format!(".{base}.kix-manifest"))
}

/// A section's entries; in the spare's, a line `= <file>` is the entry of `<file>` in `out` (the two
/// names are one file, linked).
pub(crate) fn parse_section<'t>(text: &'t str, out: Option<&ByName<'t>>) -> Option<ByName<'t>> {
    let mut entries = ByName::with_capacity_and_hasher(text.len() / 100, Default::default());
    for line in text.lines() {
        if let (Some(name), Some(out)) = (line.strip_prefix("= "), out) {
            entries.insert(name, *out.get(name)?);
            continue;
        }
        let (name, entry) = parse_entry(line)?;
        entries.insert(name, entry);
    }
    Some(entries)
}

impl<'a> Entries<'a> {
    /// The trusted entry of the file `name`.
    pub(crate) fn get(&self, name: &str) -> Option<Entry> {
        self.entries.get(name).copied()
    }

    /// What is known of the file `name` (whose facts now are `facts`, `None` when it is not a regular
    /// file) against bytes whose [`hash`] is `hash`.
    #[cfg(test)]
    pub(crate) fn judge(&self, name: &str, facts: Option<Facts>, hash: u128) -> Judged {
        judge(self.entries.get(name), facts, hash)
    }

    /// The entries of a section [`crate::emit::manifest_read::ClusterRecord::recorded_cluster`] read (each trusted), by name.
    pub(crate) fn of_recorded(recorded: &[(&'a str, Entry)]) -> Entries<'a> {
        Entries { entries: recorded.iter().copied().collect() }
    }

    /// The entries of `entries` older than a manifest written at `written` (git's racy rule), by name.
    pub(crate) fn settled_of(written: Time, entries: &[(&'a str, Entry)]) -> Entries<'a> {
        let settled = entries.iter().filter(|(_, entry)| entry.facts.settled_before(written));
        Entries { entries: settled.copied().collect() }
    }

    /// `entries` but those not older than a manifest written at `written` (git's racy rule).
    pub(crate) fn settled(mut entries: ByName<'a>, written: Time) -> Entries<'a> {
        entries.retain(|_, e| e.facts.settled_before(written));
        Entries { entries }
    }

    /// Every trusted entry, by name.
    pub(crate) fn into_map(self) -> ByName<'a> {
        self.entries
    }
}

/// What `entry` says of a file whose facts now are `facts` (`None`: not a regular file) against bytes whose
/// [`hash`] is `hash`.
pub(crate) fn judge(entry: Option<&Entry>, facts: Option<Facts>, hash: u128) -> Judged {
    match (entry, facts) {
        (Some(entry), Some(facts)) if entry.facts == facts => {
            if entry.hash == hash {
                Judged::Same
            } else {
                Judged::Differs
            }
        }
        _ => Judged::Unknown,
    }
}

/// `<hash> <key or -> <device> <inode> <size> <mtime s>.<ns> <ctime s>.<ns> <file>`, numbers in decimal as
/// [`format_entry`] writes them (a leading `-` only on a time's seconds). Read a byte at a time: a
/// fleet's rebuild reads two entries per file it keeps (`splitn` and `str::parse` were a twentieth of it).
pub(crate) fn parse_entry(line: &str) -> Option<(&str, Entry)> {
    // The hash and the key are 32 digits each (or the key `-`): cut where they end, not searched for.
    let fixed = |text: &str| -> Option<(u128, usize)> {
        let field = text.get(..32).filter(|_| text.as_bytes().get(32) == Some(&b' '))?;
        Some((parse_hex(field)?, 33))
    };
    let (hash, at) = fixed(line)?;
    let mut rest = &line[at..];
    let key = match rest.strip_prefix("- ") {
        Some(after) => {
            rest = after;
            None
        }
        None => {
            let (key, at) = fixed(rest)?;
            rest = &rest[at..];
            Some(key)
        }
    };
    let mut field = || -> Option<&str> {
        let (field, after) = rest.split_at(memchr::memchr(b' ', rest.as_bytes())?);
        rest = &after[1..];
        Some(field)
    };
    let device = parse_decimal(field()?)?;
    let inode = parse_decimal(field()?)?;
    let size = parse_decimal(field()?)?;
    let modified = parse_time(field()?)?;
    let changed = parse_time(field()?)?;
    let name = Some(rest).filter(|name| is_file_name(name))?;
    Some((name, Entry { hash, key, facts: Facts { device, inode, size, modified, changed } }))
}

/// Whether `name` could be a file kix writes into a cluster's directory: one component, never `.` or `..`,
/// nothing a line of the manifest could not hold. A manifest's names become paths (a spare's directory as
/// recorded is not listed: `emit::spare`), so a damaged or forged one must not lead anywhere else.
pub(crate) fn is_file_name(name: &str) -> bool {
    // By byte: none of these is ever part of another character's UTF-8.
    let refused = |b: &u8| matches!(b, b'/' | b' ' | b'\n' | b'\r' | 0);
    !name.is_empty() && name != "." && name != ".." && !name.as_bytes().iter().any(refused)
}

/// A time as [`push_time`] writes it: `<seconds>.<nanoseconds>`, the seconds signed.
fn parse_time(field: &str) -> Option<Time> {
    let dot = memchr::memchr(b'.', field.as_bytes())?;
    let (seconds, nanos) = (&field[..dot], &field[dot + 1..]);
    let seconds = match seconds.strip_prefix('-') {
        Some(magnitude) => -i64::try_from(parse_decimal(magnitude)?).ok()?,
        None => i64::try_from(parse_decimal(seconds)?).ok()?,
    };
    let nanos = parse_decimal(nanos).filter(|n| *n < 1_000_000_000)?;
    Some((seconds, nanos as i64))
}

/// An unsigned decimal of one to twenty digits that fits a `u64`.
fn parse_decimal(field: &str) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    field.bytes().try_fold(0u64, |value, digit| {
        let digit = digit.checked_sub(b'0').filter(|d| *d < 10)?;
        value.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// A hash or key as [`push_hex`] writes it: exactly 32 lowercase hex digits (what `{:032x}` wrote). Each
/// digit's value is looked up, 16 marking a byte that is none: a fleet's rebuild reads two per file it keeps.
fn parse_hex(field: &str) -> Option<u128> {
    const VALUES: [u8; 256] = {
        let mut values = [16u8; 256];
        let mut digit = 0;
        while digit < 16 {
            values[b"0123456789abcdef"[digit] as usize] = digit as u8;
            digit += 1;
        }
        values
    };
    let digits: &[u8; 32] = field.as_bytes().try_into().ok()?;
    let mut value = 0u128;
    let mut invalid = 0u8;
    for &digit in digits {
        let nibble = VALUES[usize::from(digit)];
        invalid |= nibble;
        value = value << 4 | u128::from(nibble & 15);
    }
    (invalid < 16).then_some(value)
}

/// Appends `value` as 32 lowercase hex digits and a space (by hand: `write!` through the formatting
/// machinery was a tenth of writing the manifest, which holds two of them per file of a fleet).
fn push_hex(text: &mut Vec<u8>, value: u128) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0u8; 33];
    for (i, digit) in hex[..32].iter_mut().enumerate() {
        *digit = DIGITS[(value >> (124 - 4 * i) & 0xf) as usize];
    }
    hex[32] = b' ';
    // Into bytes, checked as UTF-8 once per section (`from_utf8` of each field was a third of writing, and
    // pushing each as a character a tenth).
    text.extend_from_slice(&hex);
}

pub(crate) fn format_entry(text: &mut Vec<u8>, name: &str, entry: &Entry) {
    let Facts { device, inode, size, modified, changed } = entry.facts;
    push_hex(text, entry.hash);
    match entry.key {
        Some(key) => push_hex(text, key),
        None => text.extend_from_slice(b"- "),
    }
    // By hand, as `push_hex`: what `{device} {inode} {size} {}.{:09} {}.{:09} {name}\n` wrote.
    for number in [device, inode, size] {
        push_decimal(text, number);
        text.push(b' ');
    }
    for time in [modified, changed] {
        push_time(text, time);
        text.push(b' ');
    }
    text.extend_from_slice(name.as_bytes());
    text.push(b'\n');
}

/// Appends `value` in decimal (what `{}` writes).
fn push_decimal(text: &mut Vec<u8>, value: u64) {
    text.extend_from_slice(crate::records::decimal(value, &mut [0; 20]).as_bytes());
}

/// Appends a time as `<seconds>.<nanoseconds, nine digits>` (what `{}.{:09}` writes).
fn push_time(text: &mut Vec<u8>, (seconds, nanos): Time) {
    if seconds < 0 {
        text.push(b'-');
    }
    push_decimal(text, seconds.unsigned_abs());
    text.push(b'.');
    match u64::try_from(nanos).ok().filter(|n| *n < 1_000_000_000) {
        Some(mut nanos) => {
            // Nine digits, leading zeros included, written from the last.
            let mut digits = [b'0'; 9];
            for digit in digits.iter_mut().rev() {
                *digit = b'0' + (nanos % 10) as u8;
                nanos /= 10;
            }
            text.extend_from_slice(&digits);
        }
        None => text.extend_from_slice(format!("{nanos:09}").as_bytes()),
    }
}

/// Appends the section of `cluster`'s directory in `tree` holding `entries` (in name order) to `text`, with
/// the directory's facts when given; an entry equal to the one of its name in `same` (the cluster's `out`
/// entries, for the spare's section) is written as `= <file>`.
pub(crate) fn format_section<'e>(
    text: &mut String,
    tree: Tree,
    cluster: &str,
    directory: Option<Facts>,
    entries: impl IntoIterator<Item = (&'e str, Entry)>,
    same: Option<&ByName<'_>>,
) {
    let mut entries: Vec<(&str, Entry)> = entries.into_iter().collect();
    entries.sort_unstable_by_key(|(name, _)| *name);
    let mut body: Vec<u8> = Vec::with_capacity(entries.len() * 140);
    for (name, entry) in &entries {
        if same.and_then(|same| same.get(name)) == Some(entry) {
            body.extend_from_slice(b"= ");
            body.extend_from_slice(name.as_bytes());
            body.push(b'\n');
        } else {
            format_entry(&mut body, name, entry);
        }
    }
    text.push_str(&section_header(tree, cluster, body.len(), directory));
    // Names and digits only: always UTF-8.
    text.push_str(std::str::from_utf8(&body).unwrap_or_default());
}

/// The header line of a section of `cluster` in `tree` whose body is `length` bytes (its lines, each ended
/// by a line break), with the directory's facts when given: for a body written as it is (the inputs section,
/// [`Tree::Inputs`], whose lines are `crate::reuse`'s, or a body the previous manifest holds).
pub(crate) fn section_header(tree: Tree, cluster: &str, length: usize, directory: Option<Facts>) -> String {
    let mut text: Vec<u8> = Vec::with_capacity(cluster.len() + 120);
    text.extend_from_slice(tree.word().as_bytes());
    text.push(b' ');
    text.extend_from_slice(cluster.as_bytes());
    text.push(b' ');
    push_decimal(&mut text, length as u64);
    if let Some(Facts { device, inode, size, modified, changed }) = directory {
        for number in [device, inode, size] {
            text.push(b' ');
            push_decimal(&mut text, number);
        }
        for time in [modified, changed] {
            text.push(b' ');
            push_time(&mut text, time);
        }
    }
    text.push(b'\n');
    // A cluster's name, a word and digits: always UTF-8.
    String::from_utf8(text).unwrap_or_default()
}

#[cfg(all(test, unix))]
#[path = "manifest_tests.rs"]
mod tests;

/// A section's header line as [`section_header`] writes it: `<tree> <cluster> <length>`, then the
/// directory's `<device> <inode> <size> <mtime> <ctime>` where they were recorded.
pub(crate) fn parse_section_header(line: &str) -> Option<(Tree, &str, usize, Option<Facts>)> {
    let mut words = line.split(' ');
    let tree = match words.next()? {
        "out" => Tree::Out,
        "spare" => Tree::Spare,
        "inputs" => Tree::Inputs,
        _ => return None,
    };
    let cluster = words.next().filter(|c| !c.is_empty())?;
    let length: usize = words.next()?.parse().ok()?;
    let directory = match words.next() {
        None => None,
        Some(device) => {
            let mut number = || parse_decimal(words.next()?);
            let (inode, size) = (number()?, number()?);
            let (modified, changed) = (parse_time(words.next()?)?, parse_time(words.next()?)?);
            Some(Facts { device: parse_decimal(device)?, inode, size, modified, changed })
        }
    };
    if words.next().is_some() {
        return None;
    }
    Some((tree, cluster, length, directory))
}
