//! The manifest as a build reads it (issue 42): where each section is, found by reading each section's
//! header line where the section before it ends, and each cluster's sections read when that cluster is
//! staged ([`ClusterRecord`]) into memory freed once it is. A fleet's rebuild never holds the whole
//! manifest (47 MB at 1,000 clusters of 100 instances, which the build before read, copied into memory
//! touched for the first time and held from before the first cluster compiled to the end): what it holds
//! of it grows with a cluster, not with the fleet. What the sections say, and why an entry is trusted, is
//! `crate::emit::manifest`'s.
//!
//! The file is opened once ([`Manifest::load`]) and read by position from then on. kix never changes a
//! manifest in place: a build writes the next one beside it and renames it over the path
//! (`emit::next_manifest`), so the file opened is the file indexed for as long as the build reads it. A
//! section that cannot be read then, or is not UTF-8, is damaged, and ignored as a damaged section is.

use super::manifest::{self, ByName, Entries, Entry, Facts, Time, Tree};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

/// A section's header line is read this many bytes at a time (it is under 200 bytes unless its cluster's
/// name is long), up to [`HEADER_MAX`].
const HEADER_READ: u64 = 512;
const HEADER_MAX: u64 = 64 * 1024;

/// Where a manifest's bytes are read from.
#[derive(Debug, Default)]
enum Source {
    /// No manifest: every section is missing.
    #[default]
    None,
    /// The manifest's file, opened once, read by position.
    #[cfg(unix)]
    File(std::fs::File),
    /// The manifest's text: read whole where there is no read by position, and in tests.
    #[cfg_attr(all(unix, not(test)), allow(dead_code))]
    Text(String),
}

impl Source {
    /// Whether the manifest's file was written to in place since it had the facts `loaded`: another size or
    /// mtime (the text never was).
    fn unchanged_since(&self, loaded: Option<Facts>) -> bool {
        match self {
            #[cfg(unix)]
            Source::File(file) => loaded.zip(Facts::of_file(file)).is_some_and(|(then, now)| then.same_bytes(&now)),
            _ => true,
        }
    }

    /// The bytes of `range`; `None` unless all of them are read.
    fn read(&self, range: Range<u64>) -> Option<Vec<u8>> {
        let length = usize::try_from(range.end.checked_sub(range.start)?).ok()?;
        match self {
            Source::None => None,
            // Into the buffer's spare capacity, not zeroed first: a fleet's rebuild reads its whole manifest
            // this way, a section at a time.
            #[cfg(target_os = "linux")]
            Source::File(file) => {
                let mut bytes = Vec::with_capacity(length);
                while bytes.len() < length {
                    let at = range.start + bytes.len() as u64;
                    match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut bytes), at) {
                        Ok(0) => return None,
                        Ok(_) | Err(rustix::io::Errno::INTR) => {}
                        Err(_) => return None,
                    }
                }
                bytes.truncate(length);
                Some(bytes)
            }
            #[cfg(all(unix, not(target_os = "linux")))]
            Source::File(file) => {
                use std::os::unix::fs::FileExt;
                let mut bytes = vec![0; length];
                file.read_exact_at(&mut bytes, range.start).ok()?;
                Some(bytes)
            }
            Source::Text(text) => {
                let start = usize::try_from(range.start).ok()?;
                Some(text.as_bytes().get(start..start.checked_add(length)?)?.to_vec())
            }
        }
    }
}

/// A manifest as a build reads it: where its bytes are, its mtime (entries not older are not trusted) and
/// where each cluster's sections are, with the facts of the directory a section describes where they were
/// recorded; a section is read and parsed only when its cluster is staged ([`Manifest::of_cluster`]).
#[derive(Debug, Default)]
pub(crate) struct Manifest {
    source: Source,
    /// The facts of the manifest's file when it was opened: a section read after anything wrote to the file
    /// in place (kix never does: it renames the next manifest over it, which leaves this file's bytes and
    /// mtime as they were) is missing ([`Manifest::body`]).
    loaded: Option<Facts>,
    written: Time,
    sections: HashMap<(Tree, String), (Range<u64>, Option<Facts>)>,
}

impl Manifest {
    /// The manifest at `path`; empty when it is missing, unreadable, malformed, not a regular file or
    /// another kix's: never an error. Opened once, without following a link or waiting on a FIFO, and its
    /// mtime and length taken from the file it reads (not from a `stat` of the path before, which
    /// something put at the path in between would have outlived).
    pub(crate) fn load(path: &Path) -> Manifest {
        let Ok(file) = crate::emit::outdir::open_not_following(path) else { return Manifest::default() };
        let Ok(metadata) = file.metadata() else { return Manifest::default() };
        let Some(loaded) = Facts::of_metadata(&metadata) else { return Manifest::default() };
        #[cfg(unix)]
        let source = Source::File(file);
        #[cfg(not(unix))]
        let source = {
            let mut text = String::new();
            if std::io::Read::read_to_string(&mut { file }, &mut text).is_err() {
                return Manifest::default();
            }
            Source::Text(text)
        };
        index(source, metadata.len(), loaded).unwrap_or_default()
    }

    /// The manifest `text` holds, as if written at `written`; `None` when it is malformed or another kix's.
    #[cfg(test)]
    pub(crate) fn of_text(text: String, written: Time) -> Option<Manifest> {
        let length = text.len() as u64;
        index(Source::Text(text), length, Facts::new(0, 0, length, written, written))
    }

    /// When the manifest was written: entries not older are not trusted (git's racy rule).
    pub(crate) fn written(&self) -> Time {
        self.written
    }

    /// `cluster`'s sections, each read when first asked for.
    pub(crate) fn of_cluster(&self, cluster: &str) -> ClusterRecord<'_> {
        ClusterRecord { manifest: self, cluster: cluster.to_string(), out: OnceCell::new(), spare: OnceCell::new() }
    }

    /// The body of `cluster`'s section in `tree`, read now; `None` when the section is missing, cannot be
    /// read, or was read after something wrote to the file in place since it was loaded (its size and mtime,
    /// taken after the read: a write begun before it moved them).
    pub(crate) fn body(&self, tree: Tree, cluster: &str) -> Option<String> {
        let (range, _) = self.sections.get(&(tree, cluster.to_string()))?;
        let bytes = self.source.read(range.clone())?;
        self.source.unchanged_since(self.loaded).then_some(())?;
        String::from_utf8(bytes).ok()
    }

    /// The length of the body of `cluster`'s section in `tree`, as its header gives it.
    pub(crate) fn body_length(&self, tree: Tree, cluster: &str) -> Option<usize> {
        let (range, _) = self.sections.get(&(tree, cluster.to_string()))?;
        usize::try_from(range.end - range.start).ok()
    }

    /// Whether the manifest has `cluster`'s section of `tree`.
    #[cfg(test)]
    pub(crate) fn has_section(&self, tree: Tree, cluster: &str) -> bool {
        self.sections.contains_key(&(tree, cluster.to_string()))
    }

    /// The facts recorded for `cluster`'s directory of `tree` when they are older than the manifest (else
    /// `None`: that directory may have changed since in the same clock tick).
    fn trusted_directory(&self, tree: Tree, cluster: &str) -> Option<Facts> {
        let (_, facts) = self.sections.get(&(tree, cluster.to_string()))?;
        facts.filter(|facts| facts.settled_before(self.written))
    }

    /// Whether `cluster`'s directory in `out/`, whose facts now are `now`, is the one the build left: its
    /// recorded facts, older than the manifest (so a change since would show in its mtime or ctime). It then
    /// holds exactly the regular files of its section, all that build wrote (no FIFO, no directory, nothing
    /// a user added: creating, removing or renaming an entry moves the directory's mtime).
    pub(crate) fn directory_unchanged(&self, cluster: &str, now: Option<Facts>) -> bool {
        self.trusted_directory(Tree::Out, cluster).is_some_and(|recorded| Some(recorded) == now)
    }
}

/// Finds the sections: after the header, each section is a line `<tree> <cluster> <length>`, followed by
/// the directory's `<device> <inode> <size> <mtime> <ctime>` where they were recorded, and `length` bytes of
/// entry lines (ending with a line break unless there are none). `length` is the manifest's.
fn index(source: Source, length: u64, loaded: Facts) -> Option<Manifest> {
    let (first, mut at) = line_at(&source, 0, length, false)?;
    if first != manifest::header() {
        return None;
    }
    let mut sections = HashMap::new();
    // Whether the section before ends with a line break, still to be read (with the next header's bytes).
    let mut unchecked_end = false;
    while at < length {
        let (line, next) = line_at(&source, at, length, unchecked_end)?;
        let (tree, cluster, body_length, directory) = manifest::parse_section_header(&line)?;
        let body = next..next.checked_add(u64::try_from(body_length).ok()?)?;
        if body.end > length {
            return None;
        }
        unchecked_end = body_length > 0;
        sections.insert((tree, cluster.to_string()), (body.clone(), directory));
        at = body.end;
    }
    if unchecked_end && source.read(length - 1..length)? != b"\n" {
        return None;
    }
    let loaded = Some(loaded);
    source.unchanged_since(loaded).then_some(())?;
    Some(Manifest { source, loaded, written: loaded?.modified(), sections })
}

/// The line that starts at `at` (without its line break, as UTF-8) and where the next one starts; `None`
/// without a line break within [`HEADER_MAX`] bytes. With `after_line_break`, the byte before `at` is read
/// too and must be a line break (the end of the section before).
fn line_at(source: &Source, at: u64, length: u64, after_line_break: bool) -> Option<(String, u64)> {
    let from = if after_line_break { at.checked_sub(1)? } else { at };
    let mut chunk = HEADER_READ;
    loop {
        let end = from.saturating_add(chunk).min(length);
        let bytes = source.read(from..end)?;
        let (before, rest) = bytes.split_at_checked(usize::from(after_line_break))?;
        if after_line_break && before != b"\n" {
            return None;
        }
        if let Some(line_end) = memchr::memchr(b'\n', rest) {
            let line = String::from_utf8(rest[..line_end].to_vec()).ok()?;
            return Some((line, at + line_end as u64 + 1));
        }
        if end == length || chunk >= HEADER_MAX {
            return None;
        }
        chunk = (chunk * 8).min(HEADER_MAX);
    }
}

/// One cluster's directories' sections of a [`Manifest`] (`out/<cluster>` and the spare's), each read the
/// first time it is asked for and freed with the record: what staging knows of the cluster from the build
/// before. (Its inputs section is read where the cluster compiles, [`Manifest::body`].)
#[derive(Debug)]
pub(crate) struct ClusterRecord<'m> {
    manifest: &'m Manifest,
    cluster: String,
    out: OnceCell<Option<String>>,
    spare: OnceCell<Option<String>>,
}

impl<'m> ClusterRecord<'m> {
    /// The manifest this record is of.
    pub(crate) fn manifest(&self) -> &'m Manifest {
        self.manifest
    }

    /// The cluster whose sections these are.
    pub(crate) fn cluster_name(&self) -> &str {
        &self.cluster
    }

    /// The body of the cluster's section of `out/<cluster>`, as written.
    fn out(&self) -> Option<&str> {
        self.out.get_or_init(|| self.manifest.body(Tree::Out, &self.cluster)).as_deref()
    }

    /// The body of the cluster's section of the spare's directory, as written.
    fn spare(&self) -> Option<&str> {
        self.spare.get_or_init(|| self.manifest.body(Tree::Spare, &self.cluster)).as_deref()
    }

    /// The trusted entries of the cluster's sections, its directory in `out/` and in the spare (mtime and
    /// ctime older than the manifest's own mtime); none for a section that is missing or damaged.
    pub(crate) fn cluster(&self) -> (Entries<'_>, Entries<'_>) {
        let out = self.out().and_then(|text| manifest::parse_section(text, None)).unwrap_or_default();
        let spare = self.spare().and_then(|text| manifest::parse_section(text, Some(&out)));
        let written = self.manifest.written;
        (Entries::settled(out, written), Entries::settled(spare.unwrap_or_default(), written))
    }

    /// Every file the build that wrote `out/<cluster>` wrote there, in name order, each entry trusted (older
    /// than the manifest, git's racy rule), what the manifest trusts of the spare's directory of the cluster,
    /// and the names it lists there ([`SpareNames`]); `None` when the out section is missing or damaged or
    /// one of its entries is not trusted: then what `out/<cluster>` should hold is known only by compiling
    /// the cluster. Each section parsed once.
    pub(crate) fn recorded_cluster(&self) -> Option<RecordedCluster<'_>> {
        let out = self.recorded_out()?;
        let by_name: ByName<'_> = out.iter().copied().collect();
        let parsed = self.spare().and_then(|text| manifest::parse_section(text, Some(&by_name)));
        // Every name of a section read whole (trusted or not), with the directory's facts when they were
        // recorded and are older than the manifest; none for a damaged section (ignored: its directory is
        // listed).
        let names = match (&parsed, self.manifest.trusted_directory(Tree::Spare, &self.cluster)) {
            (Some(entries), Some(facts)) => {
                SpareNames { directory: Some(facts), names: entries.keys().copied().collect() }
            }
            _ => SpareNames::default(),
        };
        Some((out, Entries::settled(parsed.unwrap_or_default(), self.manifest.written), names))
    }

    /// Whether `out/<cluster>` (`dir`) is, file for file, what the build that wrote it recorded: its
    /// directory's recorded facts (so no entry was added, removed or renamed in it since: that moves its
    /// mtime and ctime) and each recorded file with its recorded facts (so none was changed: a change moves
    /// a file's ctime), every one older than the manifest. Each file is stat'ed by name, never following a
    /// link; anything but a regular file with the recorded facts makes it `false`.
    pub(crate) fn unchanged_on_disk(&self, dir: &Path) -> bool {
        self.manifest.directory_unchanged(&self.cluster, Facts::of_directory(dir))
            && self.recorded_out().is_some_and(|recorded| files_unchanged(dir, &recorded))
    }

    /// The entries of `out/<cluster>`'s section, in name order; `None` when the section is missing or
    /// damaged or one of its entries is not older than the manifest (git's racy rule).
    pub(crate) fn recorded_out(&self) -> Option<Vec<(&str, Entry)>> {
        Some(self.recorded_out_lines()?.into_iter().map(|(name, entry, _)| (name, entry)).collect())
    }

    /// [`ClusterRecord::recorded_out`]'s entries, each with its line as written.
    pub(crate) fn recorded_out_lines(&self) -> Option<Vec<(&str, Entry, &str)>> {
        let line = |line| manifest::parse_entry(line).map(|(name, entry)| (name, entry, line));
        let out: Vec<_> = self.out()?.lines().map(line).collect::<Option<_>>()?;
        let written = self.manifest.written;
        out.iter().all(|(_, entry, _)| entry.facts.settled_before(written)).then_some(out)
    }

    /// The body of the cluster's section of the spare's directory and that directory's facts when recorded
    /// and older than the manifest (else `None`: it may have changed since in the same clock tick).
    pub(crate) fn trusted_spare(&self) -> Option<(&str, Option<Facts>)> {
        Some((self.spare()?, self.manifest.trusted_directory(Tree::Spare, &self.cluster)))
    }
}

/// Whether each recorded file of `dir` is a regular file with its recorded facts, each stat'ed by name
/// relative to the directory, opened once (not listed: the caller knows from the directory's own facts that
/// its names are the recorded ones; a fleet's unchanged rebuild stats 100,000 files).
#[cfg(target_os = "linux")]
fn files_unchanged(dir: &Path, recorded: &[(&str, Entry)]) -> bool {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(directory) = rustix::fs::open(dir, flags, Mode::empty()) else { return false };
    recorded.iter().all(|(name, entry)| {
        rustix::fs::statat(&directory, *name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|stat| {
            FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile && Facts::of_stat(&stat) == entry.facts
        })
    })
}

/// As on Linux, each file's path stat'ed without following a link.
#[cfg(not(target_os = "linux"))]
fn files_unchanged(dir: &Path, recorded: &[(&str, Entry)]) -> bool {
    recorded.iter().all(|(name, entry)| Facts::of(&dir.join(name)) == Some(entry.facts))
}

/// What [`ClusterRecord::recorded_cluster`] reads of a cluster: `out/<cluster>`'s entries in name order,
/// the spare's trusted entries, and the spare's names with its directory's facts.
pub(crate) type RecordedCluster<'r> = (Vec<(&'r str, Entry)>, Entries<'r>, SpareNames<'r>);

/// The names a spare's section lists, with the facts its directory had when they were recorded (only when
/// the section lists every entry of the directory, `emit::Staging`): while the directory has those facts, no
/// entry was created, removed or renamed in it, so its names are these, and it need not be listed.
#[derive(Debug, Default)]
pub(crate) struct SpareNames<'r> {
    pub(crate) directory: Option<Facts>,
    pub(crate) names: Vec<&'r str>,
}

#[cfg(test)]
#[path = "manifest_read_tests.rs"]
mod tests;
