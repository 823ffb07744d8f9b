//! The next output manifest as a full build writes it (issue 42): each staged cluster's sections (its
//! directories', from staging, and its inputs section, from `crate::reuse`) are appended by the core that
//! staged it as soon as both are known, to a file beside the manifest (`.<out>.kix-manifest.<pid>`), and
//! the file is put in place once `out/` is swapped in, its mtime set to that moment (`finish_next`).
//! The build before held every section to the end and wrote them all on one core (a package change's
//! rebuild of a fleet spent 20 ms there, and 50 MB). What the sections hold, and why an entry is trusted,
//! is `crate::emit::manifest`'s.

use super::manifest::{self, Tree};
use super::manifest_read::Manifest;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// One cluster's sections of the next manifest: its staged directory (`out/<cluster>` once swapped in) and
/// its previous one (the spare's).
#[derive(Debug)]
pub(crate) struct StagedCluster {
    pub(crate) cluster: String,
    pub(crate) out: OutSection,
    pub(crate) spare: String,
}

/// The next manifest's section of a staged cluster's `out/` directory.
#[derive(Debug)]
pub(crate) enum OutSection {
    /// Formatted by this build.
    Formatted(String),
    /// Every entry as the previous manifest recorded it (a cluster staged from its record whose files were
    /// all kept): that body, under this header (the staged directory's own facts are new). Written from the
    /// previous manifest's text, not formatted again (a fleet's rebuild, issue 42).
    Recorded { header: String },
}

/// What is known of a staged cluster's sections of the next manifest while the other half is awaited.
#[derive(Debug, Default)]
struct PendingCluster {
    staged: Option<StagedCluster>,
    inputs: Option<InputsSection>,
}

/// The next manifest's inputs section of a staged cluster (`crate::reuse`).
#[derive(Debug)]
pub(crate) enum InputsSection {
    /// Made by this build's compile: the body.
    New(String),
    /// As the previous manifest holds it (the cluster was staged from its record).
    Recorded,
}

/// The next manifest being written: the clusters with one half of their sections known, whether every
/// staged cluster's inputs are to come, and the file (created on first use), or why it could not be written.
#[derive(Default)]
pub(crate) struct NextManifest {
    pending: Mutex<HashMap<String, PendingCluster>>,
    records_inputs: AtomicBool,
    file: Mutex<Option<std::io::Result<std::fs::File>>>,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl NextManifest {
    /// Declares that every cluster this build stages has its inputs recorded: a staged cluster's sections
    /// are written once its inputs are known too.
    pub(crate) fn record_inputs(&self) {
        self.records_inputs.store(true, Ordering::Relaxed);
    }

    /// A cluster's inputs section: written with its directories' sections when those are known, else kept
    /// until they are. `previous` is the manifest the build read, `path` where the manifest goes.
    pub(crate) fn inputs(&self, previous: &Manifest, path: &Path, cluster: &str, inputs: InputsSection) {
        let complete = {
            let mut pending = locked(&self.pending);
            let entry = pending.entry(cluster.to_string()).or_default();
            entry.inputs = Some(inputs);
            match entry.staged.is_some() {
                true => pending.remove(cluster),
                false => None,
            }
        };
        if let Some(PendingCluster { staged: Some(staged), inputs }) = complete {
            self.write(previous, path, &staged, inputs.as_ref());
        }
    }

    /// A staged cluster's directories' sections: written at once when its inputs are known or none are
    /// recorded, else when they come.
    pub(crate) fn staged(&self, previous: &Manifest, path: &Path, staged: StagedCluster) {
        let complete = {
            let mut pending = locked(&self.pending);
            let inputs = pending.remove(&staged.cluster).and_then(|waiting| waiting.inputs);
            match (inputs, self.records_inputs.load(Ordering::Relaxed)) {
                (Some(inputs), _) => Some((staged, Some(inputs))),
                (None, false) => Some((staged, None)),
                (None, true) => {
                    let cluster = staged.cluster.clone();
                    pending.insert(cluster, PendingCluster { staged: Some(staged), inputs: None });
                    None
                }
            }
        };
        if let Some((staged, inputs)) = complete {
            self.write(previous, path, &staged, inputs.as_ref());
        }
    }

    /// Appends a staged cluster's sections to the next manifest, the spare's too (taken out again by
    /// [`finish_next`] if `out/` does not become the spare). A failed write is kept, and the manifest then
    /// removed at the end: nothing is trusted. A body written as recorded is read from the previous manifest
    /// here (`emit::manifest_read`: a cluster's sections are not held from when it was staged); an `out`
    /// body that cannot be read then fails the write, since its header gave its length.
    fn write(&self, previous: &Manifest, path: &Path, staged: &StagedCluster, inputs: Option<&InputsSection>) {
        let (out_header, recorded_out) = match &staged.out {
            OutSection::Formatted(text) => (text.as_str(), None),
            OutSection::Recorded { header } => (header.as_str(), Some(previous.body(Tree::Out, &staged.cluster))),
        };
        let recorded_inputs = match inputs {
            Some(InputsSection::Recorded) => previous.body(Tree::Inputs, &staged.cluster),
            _ => None,
        };
        let inputs = match inputs {
            Some(InputsSection::New(body)) => Some(body.as_str()),
            Some(InputsSection::Recorded) => recorded_inputs.as_deref(),
            None => None,
        };
        let inputs_header = inputs
            .map(|body| manifest::section_header(Tree::Inputs, &staged.cluster, body.len(), None))
            .unwrap_or_default();
        let out_body = recorded_out.as_ref().map_or(Some(""), Option::as_deref);
        let mut file = locked(&self.file);
        let file = file.get_or_insert_with(|| create_next(path));
        let Some(out_body) = out_body else {
            *file = Err(std::io::Error::other("a recorded section could not be read again"));
            return;
        };
        let parts = [out_header, out_body, staged.spare.as_str(), inputs_header.as_str(), inputs.unwrap_or("")];
        if let Ok(open) = file {
            if let Err(failed) = write_all_parts(open, &parts) {
                *file = Err(failed);
            }
        }
    }

    /// Once the staged files are in `out/`: the sections still waiting written (a build that records no
    /// inputs), and the manifest put in place at `path` ([`finish_next`]), the spare's sections only when
    /// the previous `out/` became the spare (`spare`).
    pub(crate) fn finish(&self, previous: &Manifest, path: &Path, spare: bool) {
        let waiting: Vec<(String, PendingCluster)> = locked(&self.pending).drain().collect();
        for (_, PendingCluster { staged, inputs }) in waiting {
            if let Some(staged) = staged {
                self.write(previous, path, &staged, inputs.as_ref());
            }
        }
        finish_next(path, locked(&self.file).take(), spare);
    }

    /// A next manifest never put in place (the build failed): removed.
    pub(crate) fn discard(&mut self, path: &Path) {
        let file = self.file.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        if file.take().is_some() {
            let _ = std::fs::remove_file(temporary(path));
        }
    }
}

/// Writes the manifest at `path` from sections as `manifest::format_section` formats them, in the order
/// given. Best effort: on any failure the manifest is removed, and the next build compares every file.
fn write<'s>(path: &Path, sections: impl IntoIterator<Item = &'s str>) {
    use std::io::Write as _;
    let temporary = temporary(path);
    let written = (|| -> std::io::Result<()> {
        let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&temporary)?);
        file.write_all(manifest::header().as_bytes())?;
        file.write_all(b"\n")?;
        for section in sections {
            file.write_all(section.as_bytes())?;
        }
        file.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
        let _ = std::fs::remove_file(path);
    }
}

/// Where a manifest is written before it is renamed into place: `.<out>.kix-manifest.<pid>` (a killed
/// build's is removed by the next one, `emit::staging`).
fn temporary(path: &Path) -> PathBuf {
    path.with_file_name(format!(
        "{}.{}",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ))
}

/// Appends `parts` to `file` in order, as one write where the kernel takes them all (`writev`): the parts
/// are not copied into one buffer first (a fleet's sections are 47 MB, copied and faulted in once more).
fn write_all_parts(file: &mut std::fs::File, parts: &[&str]) -> std::io::Result<()> {
    use std::io::{IoSlice, Write as _};
    let mut slices: Vec<IoSlice<'_>> =
        parts.iter().filter(|part| !part.is_empty()).map(|part| IoSlice::new(part.as_bytes())).collect();
    let mut slices = slices.as_mut_slice();
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut slices, written),
            Err(failed) if failed.kind() == std::io::ErrorKind::Interrupted => {}
            Err(failed) => return Err(failed),
        }
    }
    Ok(())
}

/// The next manifest, created at [`temporary`] with its first line, for sections appended as clusters are
/// staged (`emit::Staging`).
fn create_next(path: &Path) -> std::io::Result<std::fs::File> {
    use std::io::Write as _;
    let mut file = std::fs::File::create(temporary(path))?;
    file.write_all(format!("{}\n", manifest::header()).as_bytes())?;
    Ok(file)
}

/// Puts the next manifest (`next`: written at [`temporary`] by [`create_next`] and the sections appended
/// since; `None` when no cluster was staged) in place at `path`, without its spare sections unless `out/`'s
/// previous directory became the spare (`spare`). When it could not be written, neither it nor the previous
/// manifest is left: nothing is trusted by the next build.
fn finish_next(path: &Path, next: Option<std::io::Result<std::fs::File>>, spare: bool) {
    let temporary = temporary(path);
    let done = match next {
        None => {
            write(path, []);
            return;
        }
        Some(Err(_)) => Err(()),
        Some(Ok(file)) => {
            // Its mtime made now (the kernel's file clock, as a user's edit after the build would read): the
            // sections were appended as clusters were staged, and the rule trusts an entry only when its
            // facts are older than the manifest, as the previous build's whole write at this point made it.
            stamp_now(&file);
            drop(file);
            match spare {
                true => std::fs::rename(&temporary, path).map_err(|_| ()),
                false => without_spare(&temporary).map(|text| write(path, [text.as_str()])),
            }
        }
    };
    if done.is_err() {
        let _ = std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(&temporary);
}

/// Sets `file`'s mtime to the current time of the kernel's file clock (`UTIME_NOW`), the clock every
/// change to a file is stamped by. Where that cannot be done, the file keeps the mtime of its last write,
/// which is after every fact it records too (only a few more entries are then too recent to be trusted).
fn stamp_now(file: &std::fs::File) {
    #[cfg(unix)]
    {
        use rustix::fs::{Timespec, Timestamps, UTIME_NOW};
        let now = Timespec { tv_sec: 0, tv_nsec: UTIME_NOW };
        let _ = rustix::fs::futimens(file, &Timestamps { last_access: now, last_modification: now });
    }
    #[cfg(not(unix))]
    let _ = file;
}

/// The sections of the manifest at `path` but the spare's (whatever follows its first line), or `Err` when
/// it cannot be read or is not one this kix wrote.
fn without_spare(path: &Path) -> Result<String, ()> {
    let text = std::fs::read_to_string(path).map_err(|_| ())?;
    let first = text.find('\n').ok_or(())?;
    let mut kept = String::with_capacity(text.len());
    let mut at = first + 1;
    while at < text.len() {
        let end = at + text[at..].find('\n').ok_or(())?;
        let mut words = text[at..end].split(' ');
        let tree = words.next().ok_or(())?;
        let length: usize = words.nth(1).and_then(|length| length.parse().ok()).ok_or(())?;
        let next = (end + 1).checked_add(length).filter(|next| *next <= text.len()).ok_or(())?;
        if tree != Tree::Spare.word() {
            kept.push_str(&text[at..next]);
        }
        at = next;
    }
    Ok(kept)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A cluster staged as recorded whose `out` body can no longer be read from the previous manifest (cut
    /// short since it was loaded) fails the next manifest: none is left, rather than one whose header gives
    /// a length its body does not have.
    #[test]
    fn a_recorded_body_that_cannot_be_read_again_fails_the_next_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest");
        let body = format!("{} - 1 2 3 4.5 6.7 a.yaml\n", "0".repeat(32));
        std::fs::write(&path, format!("{}\nout a {}\n{body}", manifest::header(), body.len())).unwrap();
        let previous = Manifest::load(&path);
        assert_eq!(previous.body(Tree::Out, "a").as_deref(), Some(body.as_str()));
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(10).unwrap();
        let next = NextManifest::default();
        let header = manifest::section_header(Tree::Out, "a", body.len(), None);
        let staged = StagedCluster { cluster: "a".into(), out: OutSection::Recorded { header }, spare: String::new() };
        next.staged(&previous, &path, staged);
        next.finish(&previous, &path, true);
        assert!(!path.exists() && !temporary(&path).exists());
    }

    /// The next manifest, appended to as clusters are staged, is put in place whole: with its spare sections
    /// when `out/` became the spare, without them (every other section as written) when it did not, with an
    /// mtime no older than its last write; one that could not be written leaves no manifest, and no next
    /// manifest is ever left beside it.
    #[test]
    fn the_next_manifest_is_put_in_place_with_or_without_its_spare_sections() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".out.kix-manifest");
        let sections = ["out a 6\nx y z\n", "spare a 4\n= y\n", "inputs a 3\nk\n\n", "out b 0\n", "spare b 0\n"];
        for spare in [true, false] {
            let mut next = create_next(&path).unwrap();
            for section in sections {
                next.write_all(section.as_bytes()).unwrap();
            }
            let before = std::time::SystemTime::now();
            finish_next(&path, Some(Ok(next)), spare);
            let text = std::fs::read_to_string(&path).unwrap();
            let kept: String = sections.iter().filter(|s| spare || !s.starts_with("spare ")).copied().collect();
            assert_eq!(text, format!("{}\n{kept}", manifest::header()), "spare: {spare}");
            assert!(!temporary(&path).exists(), "spare: {spare}: the next manifest is left beside it");
            // Read back as a manifest, each section where it was written.
            let manifest = Manifest::load(&path);
            assert_eq!(manifest.body(Tree::Inputs, "a").as_deref(), Some("k\n\n"));
            assert_eq!(manifest.has_section(Tree::Spare, "a"), spare);
            let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
            // Stamped by the kernel's coarse clock, which may lag the fine one by a tick.
            assert!(modified + std::time::Duration::from_millis(20) >= before, "stamped before its last write");
        }
        // Not written (a failed write): neither it nor the previous manifest is left.
        std::fs::write(temporary(&path), "kix output manifest").unwrap();
        finish_next(&path, Some(Err(std::io::Error::other("disk full"))), true);
        assert!(!path.exists() && !temporary(&path).exists());
        // No cluster staged: a manifest of nothing.
        finish_next(&path, None, true);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{}\n", manifest::header()));
    }
}
