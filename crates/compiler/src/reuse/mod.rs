//! A rebuild that compiles only the clusters whose inputs changed (issue 42).
//!
//! A cluster's compile reads its cluster file and the package versions its file may name, nothing else of
//! the tree (`load`, `resolve`: packages are resolved once for every cluster, and what fails there fails the
//! whole build). So the build that writes `out/<cluster>` records, in the output manifest's inputs section
//! for the cluster ([`crate::emit::manifest`]), a **key** of those inputs and the **findings** the compile
//! reported (the warnings left once the cluster's `allow` lists acknowledged theirs, one
//! [`kix_diag::Diagnostic::record`] line each, and how many were acknowledged). A later full build whose key
//! for the cluster is the recorded one does not parse, resolve, derive or check the cluster: it reports the
//! recorded findings, and stages `out/<cluster>` as the recorded build wrote it
//! ([`crate::emit::Staging::stage_recorded`]). A build that prints the summary (the table, the JSON report)
//! also records the cluster's summary after its findings (`crate::summary`'s record) and replays it; a
//! record without one (written by a `-q` build, which keeps only the clusters' names) makes such a build
//! compile the cluster.
//!
//! The key hashes, each after its length: the kix binary's identity (its version and its executable's
//! facts, [`crate::emit::manifest::binary_identity`]: another build of kix never trusts this one's records),
//! the root as given (the findings' paths are shown relative to it), the cluster file's path and bytes, and
//! for every package version whose name the file holds as a quoted word (a superset of what its instances
//! may run, [`crate::derive::Shapes::versions_named`]) its name and the hash of every byte kix read of it
//! ([`crate::load::PackageDir::content`]), and the names of the directories under `packages/` that are no
//! package or a broken one. Bytes, never mtimes: a package file changed with its mtime put back changes the
//! key.
//!
//! A section's first line ends with the hash of the rest (the findings and the summary): a section damaged
//! since it was written does not read back, and its cluster is compiled, as a damaged entry of `out/`'s
//! section is not trusted ([`crate::emit::manifest`]).
//!
//! What the record does not cover is caught where it is used: a file of `out/<cluster>` changed by hand since
//! (its facts are not the recorded ones) makes the cluster compile, as does a missing, damaged or racy
//! record. A cross-instance check is a check of one cluster (`crosscheck`), so a cluster whose inputs are
//! unchanged has the same cross-instance findings.
//!
//! Below the cluster, the instance: a build records its findings in parts ([`parts`]), each instance's with
//! its own key ([`Inputs::own_key`]) and its footprint ([`footprint`]), so a rebuild after a package changed
//! compiles only the instances that run it and keeps the rest of their cluster as recorded when what the
//! checks across instances read of them is unchanged ([`in_part`], whose doc says when it may).

pub mod footprint;
pub(crate) mod in_part;
pub mod parts;

use crate::load::ClusterSource;
use crate::resolve::Packages;
use kix_diag::{Diagnostic, Diagnostics, SourceFile};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use xxhash_rust::xxh3::Xxh3;

/// What every cluster's key starts from, made once per build.
pub struct Inputs {
    /// The binary's identity, the root and the names of the directories under `packages/` that are not
    /// packages, hashed.
    common: Xxh3,
    /// Each valid package version's name and content hash, by its address (as
    /// [`crate::derive::Shapes::versions_named`] names a version).
    packages: HashMap<usize, (String, u128)>,
    /// Per package name, the hash of every valid version's content: what an instance that names it reads of
    /// the tree besides its cluster file ([`Inputs::own_key`]).
    by_name: HashMap<String, u128>,
    root: PathBuf,
    /// The files the recorded findings point into, each read from disk when a finding in it is rendered.
    sources: Mutex<HashMap<PathBuf, SourceFile>>,
}

/// One cluster's recorded compile, as its inputs section holds it.
struct Recorded<'a> {
    acknowledged: usize,
    findings: &'a str,
    /// What the build kept of the cluster beyond its findings (after the line [`SUMMARY`]).
    kept: Option<&'a str>,
}

/// The line between a section's findings (each a JSON object, `{...}`) and the summary kept of the cluster.
const SUMMARY: &str = "summary";

impl Inputs {
    /// `None` when the binary cannot name itself (no executable to read the facts of): nothing is reused.
    pub fn new(root: &Path, packages: &Packages) -> Option<Inputs> {
        let identity = crate::emit::manifest::binary_identity()?;
        let mut common = Xxh3::new();
        common.update(&identity.to_le_bytes());
        hash_part(&mut common, root.as_os_str().as_encoded_bytes());
        for name in packages
            .failed
            .iter()
            .map(|name| name.as_deref().unwrap_or(""))
            .chain(packages.not_packages.iter().map(String::as_str))
        {
            hash_part(&mut common, name.as_bytes());
        }
        let packages: HashMap<usize, (String, u128)> = (packages.valid.iter())
            .map(|package| (std::sync::Arc::as_ptr(package) as usize, (package.name.clone(), package.content)))
            .collect();
        let mut versions: Vec<&(String, u128)> = packages.values().collect();
        versions.sort_unstable();
        let mut by_name: HashMap<String, Xxh3> = HashMap::new();
        for (name, content) in versions {
            let key = by_name.entry(name.clone()).or_insert_with(|| {
                let mut key = Xxh3::new();
                hash_part(&mut key, name.as_bytes());
                key
            });
            key.update(&content.to_le_bytes());
        }
        let by_name = by_name.into_iter().map(|(name, key)| (name, key.digest128())).collect();
        Some(Inputs { common, packages, by_name, root: root.to_path_buf(), sources: Mutex::new(HashMap::new()) })
    }

    /// The key of what a cluster's compile reads besides the package versions: the binary, the root, the
    /// tree's broken and non-package directories ([`Inputs::key`]'s common part) and the cluster file's path
    /// and bytes. Equal frame keys and an instance's equal [`Inputs::own_key`] mean that instance reads
    /// what it read when recorded (`crate::resolve`'s instance reads its cluster's settings and entry, and of
    /// the tree only the versions of the package it names: R13 chooses among them).
    pub fn frame_key(&self, file: &ClusterSource) -> u128 {
        let mut key = self.common.clone();
        hash_part(&mut key, file.source.path().as_os_str().as_encoded_bytes());
        hash_part(&mut key, file.source.text().as_bytes());
        key.digest128()
    }

    /// The key of the package versions an instance naming `package` may run: every valid version of that
    /// name, by content (a name with none hashes as itself).
    pub fn own_key(&self, package: &str) -> u128 {
        self.by_name.get(package).copied().unwrap_or_else(|| {
            let mut key = Xxh3::new();
            hash_part(&mut key, package.as_bytes());
            key.digest128()
        })
    }

    /// The key of a cluster's inputs: its file and the package versions it may run (`versions`, by address),
    /// taken in the order of their names and contents (addresses differ from run to run).
    pub fn key(&self, file: &ClusterSource, versions: &HashSet<usize>) -> u128 {
        let mut key = self.common.clone();
        hash_part(&mut key, file.source.path().as_os_str().as_encoded_bytes());
        hash_part(&mut key, file.source.text().as_bytes());
        let mut versions: Vec<&(String, u128)> = versions.iter().filter_map(|at| self.packages.get(at)).collect();
        versions.sort_unstable();
        for (name, content) in versions {
            hash_part(&mut key, name.as_bytes());
            key.update(&content.to_le_bytes());
        }
        key.digest128()
    }

    /// The inputs section of a cluster compiled with `key`: the key, how many warnings its `allow` lists
    /// acknowledged, its findings recorded in parts (`body`, written by [`parts::Writer`], with the warnings
    /// its parts acknowledged); then, when the build keeps more of the cluster than its name (the summary it
    /// printed, `crate::summary`), the line `summary` and that record. The first line ends with the hash of
    /// its count and the rest ([`section_hash`]): a section damaged after it was written (a digit changed in
    /// a finding or a summary line) does not read back, and the cluster is compiled.
    pub fn section_in_parts(key: u128, (mut body, acknowledged): (String, usize), kept: Option<&str>) -> String {
        if let Some(kept) = kept {
            body.reserve(SUMMARY.len() + 1 + kept.len() + 64);
            body.push_str(SUMMARY);
            body.push('\n');
            body.push_str(kept);
        }
        // The first line put before the body in its own allocation (moved up, not copied into a new one).
        let first = format!("{key:032x} {acknowledged} {:016x}\n", section_hash(acknowledged, &body));
        body.insert_str(0, &first);
        body
    }

    /// The parts of a cluster's record (whatever key it was recorded for) and what it kept beyond its
    /// findings; `None` when it has no parts or does not read back whole.
    pub fn recorded_parts(section: &str) -> Option<(parts::Parts<'_>, Option<&str>)> {
        let recorded = parse(section, None)?;
        Some((parts::read(recorded.findings)?, recorded.kept))
    }

    /// Recorded finding lines read back, `acknowledged` counted with them; `None` when one does not read back.
    pub fn replay_lines(&self, lines: &[&str], acknowledged: usize) -> Option<Diagnostics> {
        let mut replayed = Diagnostics::default();
        let mut files: Vec<(PathBuf, SourceFile)> = Vec::new();
        let mut source = |path: &Path| {
            // Compared as bytes: a path's `==` walks both paths component by component, for every finding.
            if let Some((_, file)) = files.iter().find(|(known, _)| known.as_os_str() == path.as_os_str()) {
                return Some(file.clone());
            }
            let file = self.source(path);
            files.push((path.to_path_buf(), file.clone()));
            Some(file)
        };
        let mut names = kix_diag::SubjectNames::default();
        for line in lines {
            replayed.push(Diagnostic::from_record_sharing(line, &mut source, &mut names)?);
        }
        replayed.count_recorded_acknowledged(acknowledged);
        Some(replayed)
    }

    /// The findings `section` recorded and what it kept beyond them (`None` when it kept nothing), when it
    /// was recorded for the inputs `key` names; `None` for a section of other inputs, or one that does not
    /// read back whole.
    pub fn replay<'s>(&self, section: &'s str, key: u128) -> Option<(Diagnostics, Option<&'s str>)> {
        let recorded = parse(section, Some(key))?;
        // Every finding line, in parts or not (a part's first line is not a finding: `parts`). The few files a
        // cluster's findings point into are looked up in a list of the replay's own before the build's shared
        // (locked) one.
        let lines: Vec<&str> = recorded.findings.lines().filter(|line| line.starts_with('{')).collect();
        let replayed = self.replay_lines(&lines, recorded.acknowledged)?;
        Some((replayed, recorded.kept))
    }

    /// The file a recorded finding points into, shared by every finding in it (its lines read once).
    fn source(&self, path: &Path) -> SourceFile {
        let mut sources = self.sources.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let file = sources.entry(path.to_path_buf()).or_insert_with(|| {
            let read_from = if path.is_absolute() { path.to_path_buf() } else { self.root.join(path) };
            SourceFile::on_disk(path, read_from)
        });
        file.clone()
    }
}

/// The hash of a section's acknowledged count and body (everything after its first line), as its first line
/// records it: XXH3-64, fixed by its specification (a section written by one build is read by the next),
/// of the count in decimal, a line break, and the body. The count is covered too: a rebuild that replays
/// the section prints it.
pub fn section_hash(acknowledged: usize, body: &str) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(format!("{acknowledged}\n").as_bytes());
    hasher.update(body.as_bytes());
    hasher.digest()
}

/// `key acknowledged body-hash` on the first line, the findings after it, then what was kept of the
/// cluster; `None` unless the recorded key is `key` (when given) and the body's hash the recorded one (the
/// key is compared first: a changed cluster's body is not hashed).
fn parse(section: &str, key: Option<u128>) -> Option<Recorded<'_>> {
    let (first, rest) = section.split_once('\n')?;
    let mut words = first.split(' ');
    let (recorded_key, acknowledged, hash) = (words.next()?, words.next()?, words.next()?);
    let hex = |text: &str, digits: usize| text.len() == digits && text.bytes().all(|b| b.is_ascii_hexdigit());
    if words.next().is_some() || !hex(recorded_key, 32) || !hex(hash, 16) {
        return None;
    }
    let recorded_key = u128::from_str_radix(recorded_key, 16).ok()?;
    if key.is_some_and(|key| key != recorded_key) {
        return None;
    }
    let acknowledged: usize = acknowledged.parse().ok()?;
    if u64::from_str_radix(hash, 16).ok()? != section_hash(acknowledged, rest) {
        return None;
    }
    // By memmem: `str::find` of this pattern was a twentieth of a package change's rebuild (issue 42).
    let (findings, kept) = match memchr::memmem::find(rest.as_bytes(), b"\nsummary\n") {
        Some(at) => (&rest[..at + 1], Some(&rest[at + SUMMARY.len() + 2..])),
        None => match rest.strip_prefix("summary\n") {
            Some(kept) => ("", Some(kept)),
            None => (rest, None),
        },
    };
    Some(Recorded { acknowledged, findings, kept })
}

/// One part of a key, after its length, so no two sequences of parts hash alike by moving bytes between them.
fn hash_part(key: &mut Xxh3, part: &[u8]) {
    key.update(&(part.len() as u64).to_le_bytes());
    key.update(part);
}

#[cfg(test)]
mod tests {
    use super::*;
    use kix_diag::Code;

    /// A section of `found` (one frame part) and `kept`, as a build writes it.
    fn section_of(key: u128, found: &Diagnostics, kept: Option<&str>) -> String {
        let mut writer = parts::Writer::default();
        writer.frame(1, found.acknowledged_count());
        writer.findings(found);
        writer.cross(0);
        Inputs::section_in_parts(key, writer.finish(), kept)
    }

    #[test]
    fn a_section_reads_back_only_for_its_own_key() {
        let mut found = Diagnostics::default();
        found.push(Diagnostic::new(Code::ALL[1], "cluster `c`: something").help("do this"));
        let inputs = Inputs {
            common: Xxh3::new(),
            packages: HashMap::new(),
            by_name: HashMap::new(),
            root: PathBuf::from("."),
            sources: Mutex::new(HashMap::new()),
        };
        for kept in [None, Some(""), Some("i\ta\n"), Some("summary\nx\n")] {
            let section = section_of(7, &found, kept);
            assert!(inputs.replay(&section, 8).is_none());
            let (replayed, replayed_kept) = inputs.replay(&section, 7).expect("its own key");
            assert_eq!(replayed.iter().collect::<Vec<_>>(), found.iter().collect::<Vec<_>>());
            assert_eq!(replayed_kept, kept, "{section}");
            let (first, body) = section.split_once('\n').unwrap();
            let damaged = [
                String::new(),
                "7 0\n".to_string(),
                section.replace("something", "something\""),
                // One character of the body changed, its length kept (the hash on the first line no longer
                // matches), with or without what was kept.
                section.replace("something", "somethinG"),
                format!("{first}\n{}", body.replacen('\n', "\r", 1)),
                format!("{} {first}\n{body}", "+"),
                // The acknowledged count changed, the hash left as it was.
                format!("{}\n{body}", first.replacen(" 0 ", " 9 ", 1)),
            ];
            for damaged in &damaged {
                assert!(inputs.replay(damaged, 7).is_none(), "{damaged}");
            }
        }
        // Without findings, what was kept follows the first line.
        let section = section_of(7, &Diagnostics::default(), Some("i\ta\n"));
        let (replayed, kept) = inputs.replay(&section, 7).expect("its own key");
        assert_eq!((replayed.iter().count(), kept), (0, Some("i\ta\n")));
    }
}
