//! The staged output: each cluster's directory written beside `out/` (a full build in the spare) as
//! soon as the cluster compiles, files the output manifest vouches for kept without being read, then
//! swapped with `out/` atomically once every cluster compiled without error; a failure leaves the
//! previous `out/` as it was.

use super::files::generated_by_kix;
use super::manifest::{Entry, Facts, Tree};
use super::manifest_read::{ClusterRecord, Manifest};
use super::next_manifest::{InputsSection, NextManifest, OutSection, StagedCluster};
use super::render::{instance_key, render_cluster, render_file, render_instance, wanted_files};
use super::spare::{Wanted, holds_exactly, make_writable, write_failed};
use crate::derive::{ClusterPlan, InstancePlan};
use kix_diag::{Code, Diagnostic, Location};
use std::path::{Path, PathBuf};

/// Refuses an output directory that would overwrite the inputs: the root itself, an ancestor
/// of it, or anything inside `clusters/` or `packages/`, where the path leads once its existing
/// ancestors are resolved through symlinks (so `pk/web/gen`, with `pk -> packages`, is refused
/// before `gen` exists); and one kix could not replace without damage
/// ([`crate::emit::outdir::check_replaceable`]).
pub fn check_destination(root: &Path, out: &Path, only: Option<&[&str]>) -> Result<(), Diagnostic> {
    use crate::emit::outdir::resolve_existing;
    let (root, target) = (resolve_existing(root), resolve_existing(out));
    let clobbers = root.starts_with(&target)
        || target.starts_with(root.join("clusters"))
        || target.starts_with(root.join("packages"));
    if clobbers {
        return Err(Diagnostic::new(
            Code::WriteFailed,
            format!(
                "--out {} would overwrite kix's own inputs: choose a directory that is not the root, an ancestor \
                 of it, or inside clusters/ or packages/",
                out.display()
            ),
        )
        .at(Location::file(out)));
    }
    crate::emit::outdir::check_replaceable(out, only, true)
}

/// A build's output directory being written: each cluster's directory is staged beside `out` as soon
/// as the cluster is compiled (so a build holds one cluster's output at a time, not the fleet's), then
/// [`Staging::finish`] swaps the staged directory in whole. A full build stages into the spare
/// ([`crate::emit::spare`]: the output of the build before the previous one, brought up to date), and the `out`
/// it replaces becomes the next build's spare; dropped without `finish` (a compile error, a failed
/// write), `out` and the manifest are as they were, and the spare is left as far as it was updated.
///
/// A build of some clusters (`--cluster`, issue 20) stages only their directories, in a directory of its
/// own, and swaps each into `out` on its own: the rest of `out` is left in place, never read, copied or
/// moved, so its cost is that of the clusters it builds, not of the fleet's output.
pub struct Staging {
    out: PathBuf,
    /// The clusters a partial build replaces; `None` for a full build.
    only: Option<Vec<String>>,
    parent: PathBuf,
    base: String,
    /// Created on first use, so a run that stages nothing writes nothing.
    staging: std::sync::OnceLock<Result<PathBuf, Diagnostic>>,
    /// Held from the first staged file until the staging directory is gone.
    lock: std::sync::OnceLock<crate::emit::outdir::Lock>,
    /// What the previous build recorded of `out`'s files and the spare's (read while the clusters compile,
    /// taken when the lock is: see `loading`; full builds only), and what this one staged: the next build's
    /// manifest ([`crate::emit::manifest`]).
    manifest: std::sync::OnceLock<Manifest>,
    /// The manifest being read while the clusters compile (a full build's first staged cluster waits for
    /// it). Read before the lock is taken: a manifest another build replaced since describes files whose
    /// facts have changed, and none of its entries is trusted for them.
    loading: std::sync::Mutex<Option<std::thread::JoinHandle<Manifest>>>,
    /// The next manifest, written beside the manifest as clusters are staged (full builds only), put in
    /// place once `out/` is swapped in ([`Staging::record`]).
    next_manifest: NextManifest,
    /// The spare this build created (there was none): removed unless the build swapped it in, so a build
    /// that fails leaves nothing beside `out` it did not find there.
    spare_created: std::sync::atomic::AtomicBool,
    /// This build made kix's state directory (`.kix/`): removed again unless the build swapped its output in.
    state_created: std::sync::atomic::AtomicBool,
    /// Every cluster was reused and `out/` is file for file what the previous build recorded
    /// ([`Staging::unchanged_in_place`]): nothing is staged, swapped or recorded ([`Staging::leave_in_place`]).
    in_place: std::sync::atomic::AtomicBool,
}

impl Staging {
    pub fn new(out: &Path, only: Option<Vec<String>>) -> Staging {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let manifest = crate::emit::manifest::path(&parent, &base);
        let loading = only.is_none().then(|| std::thread::spawn(move || Manifest::load(&manifest)));
        Staging {
            out: out.to_path_buf(),
            only,
            parent,
            base,
            loading: std::sync::Mutex::new(loading),
            staging: std::sync::OnceLock::new(),
            lock: std::sync::OnceLock::new(),
            manifest: std::sync::OnceLock::new(),
            next_manifest: NextManifest::default(),
            spare_created: std::sync::atomic::AtomicBool::new(false),
            state_created: std::sync::atomic::AtomicBool::new(false),
            in_place: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The staged directory, created the first time it is asked for: after the output directory is
    /// found replaceable, `out`'s parent created, the lock taken and what killed runs left removed.
    fn directory(&self) -> Result<&Path, Diagnostic> {
        let created = self.staging.get_or_init(|| {
            std::fs::create_dir_all(&self.parent).map_err(|e| write_failed("cannot create", &self.parent, e))?;
            let (state, created) = crate::emit::outdir::ensure_state_dir(&self.parent, &self.out)?;
            self.state_created.store(created, std::sync::atomic::Ordering::Relaxed);
            let lock = crate::emit::outdir::Lock::take(&state, &self.base, &self.out)?;
            let _ = self.lock.set(lock);
            // Checked under the lock (check_destination checked before the compile; a build that held
            // the lock since may have changed `out`).
            let only: Option<Vec<&str>> = self.only.as_ref().map(|o| o.iter().map(String::as_str).collect());
            crate::emit::outdir::check_replaceable(&self.out, only.as_deref(), self.only.is_some())?;
            remove_stale(&state, &self.base);
            // A `--cluster` build neither reads nor writes the manifest, nor uses the spare: one cluster's
            // files are few, and the fleet's manifest (200,200 entries at 1,000 clusters) would cost it more
            // than they do (issue 20: `build --cluster X` under 0.1 s). The entries of X it leaves are never
            // trusted again: X's files are new or re-linked, so their ctime (or inode) is not the one recorded.
            if self.only.is_none() {
                let loading = self.loading.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                let manifest = loading.and_then(|thread| thread.join().ok());
                let _ = self.manifest.set(manifest.unwrap_or_else(|| Manifest::load(&self.manifest_path())));
                let spare = state.join(format!(".{}.kix-spare", self.base));
                match std::fs::symlink_metadata(&spare) {
                    Ok(m) if m.is_dir() && crate::emit::outdir::writable(&spare) => return Ok(spare),
                    Ok(m) if m.is_dir() => remove_tree(&spare),
                    Ok(_) => crate::emit::spare::remove(&spare)?,
                    Err(_) => {}
                }
                std::fs::create_dir(&spare).map_err(|e| write_failed("cannot create", &spare, e))?;
                self.spare_created.store(true, std::sync::atomic::Ordering::Relaxed);
                return Ok(spare);
            }
            let staging = state.join(format!(".{}.kix-staging-{}", self.base, std::process::id()));
            let _ = std::fs::remove_dir_all(&staging);
            std::fs::create_dir(&staging).map_err(|e| write_failed("cannot create", &staging, e))?;
            Ok(staging)
        });
        created.as_deref().map_err(Clone::clone)
    }

    fn manifest_path(&self) -> PathBuf {
        crate::emit::manifest::path(&self.parent, &self.base)
    }

    /// Renders and stages one cluster's directory. A full build brings the spare's directory of the cluster
    /// up to date ([`crate::emit::spare::update`]); a `--cluster` build makes it anew, carrying over files whose
    /// bytes equal `out`'s (read and compared).
    pub fn stage(&self, cluster: &ClusterPlan) -> Result<(), Diagnostic> {
        let dir = self.directory()?.join(&cluster.name);
        let previous_dir = self.out.join(&cluster.name);
        let Some(manifest) = self.manifest.get() else {
            std::fs::create_dir(&dir).map_err(|e| write_failed("cannot create", &dir, e))?;
            for (name, text) in render_cluster(cluster) {
                let path = dir.join(&name);
                if !carried_over(&previous_dir.join(&name), text.as_bytes(), &path) {
                    std::fs::write(&path, text).map_err(|e| write_failed("cannot write", &path, e))?;
                }
            }
            return Ok(());
        };
        let previous = check_previous(manifest, &cluster.name, &previous_dir)?;
        let record = manifest.of_cluster(&cluster.name);
        let (previous_known, known) = record.cluster();
        let render = |index| render_file(cluster, index);
        let wanted = wanted_files(cluster);
        // Every file is rendered here (none is wanted as recorded), so the update always completes.
        let updated = crate::emit::spare::update(&dir, &wanted, &render, &known, None, &previous_dir, previous_known)?;
        let previous_names = (previous == Previous::AsRecorded).then(|| record.recorded_out()).flatten();
        self.keep_staged(&cluster.name, &dir, updated.unwrap_or_default(), false, previous_names.as_deref());
        Ok(())
    }

    /// Stages `cluster`'s directory for a cluster compiled in part (`crate::reuse`): the files of `fresh`
    /// (instances compiled again, by name) rendered from their plans, every other file as the previous build
    /// recorded it (kept from the spare or linked from `out/<cluster>`, never rendered). `false` when that
    /// cannot be done (no trusted record of `out/<cluster>`, a recorded file changed since, an instance's
    /// file not in the record): the caller compiles the whole cluster and stages it with [`Staging::stage`].
    pub fn stage_in_part(&self, cluster: &str, fresh: &[&InstancePlan]) -> Result<bool, Diagnostic> {
        // The state a rebuild after a package change meets, staged from the manifest's lines
        // (`emit::kept_lines`); any other by the general rule below.
        let (dir, previous_dir) = (self.directory()?.join(cluster), self.out.join(cluster));
        let Some(manifest) = self.manifest.get() else { return Ok(false) };
        let record = manifest.of_cluster(cluster);
        if check_previous(manifest, cluster, &previous_dir)? == Previous::AsRecorded {
            if let Some(staged) = super::kept_lines::stage(&record, cluster, &dir, &previous_dir, fresh)? {
                self.next_manifest.staged(manifest, &self.manifest_path(), staged);
                return Ok(true);
            }
        }
        let Some(Recorded { dir, previous_dir, recorded, known, listing, previous }) = self.recorded(&record)? else {
            return Ok(false);
        };
        let fresh: std::collections::HashMap<String, &InstancePlan> =
            fresh.iter().map(|plan| (format!("{}.yaml", plan.name), *plan)).collect();
        let wanted: Vec<Wanted> = (recorded.iter())
            .map(|(name, entry)| match fresh.get(*name) {
                Some(plan) => Wanted { name: name.to_string(), key: instance_key(cluster, plan), recorded: None },
                None => Wanted { name: name.to_string(), key: entry.key, recorded: Some(*entry) },
            })
            .collect();
        if wanted.iter().filter(|wanted| wanted.recorded.is_none()).count() != fresh.len() {
            return Ok(false);
        }
        // Called only for a file not wanted as recorded: one of `fresh`.
        let render = |index: usize| fresh.get(&wanted[index].name).map(|plan| render_instance(cluster, plan));
        let render = |index: usize| render(index).unwrap_or_default();
        // `out/<cluster>`'s entries are the recorded ones (each trusted: `recorded_cluster` read them so).
        let previous_known = crate::emit::manifest::Entries::of_recorded(&recorded);
        let listing = listing.as_deref();
        let updated =
            crate::emit::spare::update(&dir, &wanted, &render, &known, listing, &previous_dir, previous_known)?;
        let Some(updated) = updated else { return Ok(false) };
        let previous_names = (previous == Previous::AsRecorded).then_some(recorded.as_slice());
        self.keep_staged(cluster, &dir, updated, false, previous_names);
        Ok(true)
    }

    /// What the previous build recorded of `cluster`'s inputs and findings (`crate::reuse`), read under the
    /// lock once the staged directory is made (full builds only; `None` for a `--cluster` build, which keeps
    /// no manifest).
    pub fn recorded_inputs(&self, cluster: &str) -> Result<Option<String>, Diagnostic> {
        self.directory()?;
        Ok(self.manifest.get().and_then(|manifest| manifest.body(Tree::Inputs, cluster)))
    }

    /// Stages `cluster`'s directory as the previous build wrote it, for a cluster whose inputs are unchanged
    /// since (`crate::reuse`): nothing is rendered, the spare's files the manifest vouches for are kept and the
    /// others linked from `out/<cluster>` ([`crate::emit::spare::carry`]). `false` when that cannot be done (no
    /// trusted record of `out/<cluster>`, a file of it changed since): the caller compiles the cluster and
    /// stages it with [`Staging::stage`].
    pub fn stage_recorded(&self, cluster: &str) -> Result<bool, Diagnostic> {
        self.directory()?;
        let Some(manifest) = self.manifest.get() else { return Ok(false) };
        let record = manifest.of_cluster(cluster);
        let Some(Recorded { dir, previous_dir, recorded, known, listing, previous }) = self.recorded(&record)? else {
            return Ok(false);
        };
        let Some(updated) = crate::emit::spare::carry(&dir, &recorded, &known, listing.as_deref(), &previous_dir)?
        else {
            return Ok(false);
        };
        let as_recorded = updated.staged.len() == recorded.len()
            && updated
                .staged
                .iter()
                .zip(&recorded)
                .all(|((name, entry), (was, recorded))| name == was && entry == recorded);
        self.keep_inputs_section(cluster, InputsSection::Recorded);
        let previous_names = (previous == Previous::AsRecorded).then_some(recorded.as_slice());
        self.keep_staged(cluster, &dir, updated, as_recorded, previous_names);
        Ok(true)
    }

    /// What a cluster staged from its record starts from: the trusted record of `out/<cluster>` (and of the
    /// spare's directory), once `out/<cluster>` is checked as staging checks it; `None` without one, or
    /// when `out/<cluster>` is not a directory.
    fn recorded<'r>(&self, record: &'r ClusterRecord<'_>) -> Result<Option<Recorded<'r>>, Diagnostic> {
        let cluster = record.cluster_name();
        let dir = self.directory()?.join(cluster);
        let previous_dir = self.out.join(cluster);
        let Some((recorded, known, spare_names)) = record.recorded_cluster() else { return Ok(None) };
        let previous = check_previous(record.manifest(), cluster, &previous_dir)?;
        if previous == Previous::Absent {
            return Ok(None);
        }
        // The spare's directory with the facts recorded with its names: those are its entries, unlisted.
        let listing = spare_names.directory.filter(|facts| Facts::of_directory(&dir) == Some(*facts));
        let listing = listing.map(|_| spare_names.names);
        Ok(Some(Recorded { dir, previous_dir, recorded, known, listing, previous }))
    }

    /// Whether `out/<cluster>` is, file for file, what the previous build recorded and wrote (full builds
    /// only; read under the lock): its directory, every file's facts, nothing added
    /// ([`crate::emit::manifest_read::ClusterRecord::unchanged_on_disk`]), and writable as staging requires.
    pub fn unchanged_in_place(&self, cluster: &str) -> Result<bool, Diagnostic> {
        self.directory()?;
        let Some(manifest) = self.manifest.get() else { return Ok(false) };
        let dir = self.out.join(cluster);
        Ok(manifest.of_cluster(cluster).unchanged_on_disk(&dir) && crate::emit::outdir::writable(&dir))
    }

    /// Whether `out/` holds exactly the directories of `clusters` (by name) and nothing else.
    pub fn out_holds_only(&self, clusters: &[&str]) -> bool {
        let names: std::collections::HashSet<&str> = clusters.iter().copied().collect();
        let Ok(listing) = std::fs::read_dir(&self.out) else { return false };
        let mut seen = 0;
        for entry in listing {
            let Ok(entry) = entry else { return false };
            if !entry.file_name().to_str().is_some_and(|name| names.contains(name)) {
                return false;
            }
            seen += 1;
        }
        seen == names.len()
    }

    /// Declares that this build changes nothing: every cluster was reused, and `out/` holds exactly their
    /// directories, each [`Staging::unchanged_in_place`]. Then nothing is staged, [`Staging::finish`] swaps
    /// nothing and the manifest is kept as it is (it still describes `out/`, the spare and every cluster's
    /// inputs). A rebuild of an unchanged fleet thus writes nothing and takes no file's facts but `out/`'s.
    pub fn leave_in_place(&self) {
        self.in_place.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Keeps what `crate::reuse` recorded of a compiled cluster's inputs and findings, for the next manifest.
    pub fn keep_inputs(&self, cluster: &str, inputs: String) {
        self.keep_inputs_section(cluster, InputsSection::New(inputs));
    }

    /// Declares that every cluster this build stages has its inputs recorded ([`Staging::keep_inputs`]): a
    /// staged cluster's sections are written to the next manifest once its inputs are known too.
    pub fn record_inputs(&self) {
        self.next_manifest.record_inputs();
    }

    fn keep_inputs_section(&self, cluster: &str, inputs: InputsSection) {
        if let Some(previous) = self.manifest.get() {
            self.next_manifest.inputs(previous, &self.manifest_path(), cluster, inputs);
        }
    }

    /// Keeps the next manifest's sections of a staged cluster: its staged directory (`out/<cluster>` once
    /// swapped in) and the previous one (the spare's). `as_recorded`: every staged entry is the one the
    /// previous manifest recorded for `out/<cluster>`, whose body is then written again as it is.
    fn keep_staged(
        &self,
        cluster: &str,
        dir: &Path,
        updated: crate::emit::spare::Updated,
        as_recorded: bool,
        previous_names: Option<&[(&str, Entry)]>,
    ) {
        // The staged directory as the update left it (it holds exactly the files written): what the next
        // build finds `out/<cluster>` to be unless someone changed it.
        let staged_directory = Facts::of_directory(dir);
        // `out/<cluster>`'s directory (the next spare's) with its facts, when the spare's section lists every
        // entry of it: it was the recorded directory (`previous_names`, its entries), is still, and each of
        // its entries is in `updated.previous`. The next build then need not list it.
        let previous_directory = previous_names.and_then(|names| {
            let kept: std::collections::HashSet<&str> =
                updated.previous.iter().map(|(name, _)| name.as_str()).collect();
            let listed = names.len() == kept.len() && names.iter().all(|(name, _)| kept.contains(name));
            let now = Facts::of_directory(&self.out.join(cluster));
            let manifest = self.manifest.get()?;
            (listed && manifest.directory_unchanged(cluster, now)).then_some(now).flatten()
        });
        let section = |tree, entries: &[(String, Entry)], same| {
            let mut text = String::new();
            let entries = entries.iter().map(|(name, entry)| (name.as_str(), *entry));
            let directory = if tree == Tree::Out { staged_directory } else { previous_directory };
            crate::emit::manifest::format_section(&mut text, tree, cluster, directory, entries, same);
            text
        };
        let out: crate::emit::manifest::ByName<'_> =
            updated.staged.iter().map(|(name, entry)| (name.as_str(), *entry)).collect();
        let recorded_length = as_recorded.then(|| self.manifest.get()?.body_length(Tree::Out, cluster)).flatten();
        let out_section = match recorded_length {
            Some(length) => OutSection::Recorded {
                header: crate::emit::manifest::section_header(Tree::Out, cluster, length, staged_directory),
            },
            None => OutSection::Formatted(section(Tree::Out, &updated.staged, None)),
        };
        let staged = StagedCluster {
            cluster: cluster.to_string(),
            out: out_section,
            spare: section(Tree::Spare, &updated.previous, Some(&out)),
        };
        if let Some(previous) = self.manifest.get() {
            self.next_manifest.staged(previous, &self.manifest_path(), staged);
        }
    }

    /// Once the staged files are in `out`, the manifest for the next build (full builds only): each staged
    /// cluster's sections, written as it was staged ([`NextManifest`]), put in place with its mtime set
    /// now, after every fact it records was taken (the rule `crate::emit::manifest` trusts entries by); the
    /// spare's sections only when the previous `out` became the spare (`spare`).
    fn record(&self, spare: bool) {
        // Swapped in: the state directory is this build's to keep, and an earlier kix's state goes.
        self.state_created.store(false, std::sync::atomic::Ordering::Relaxed);
        crate::emit::outdir::remove_legacy_state(&self.parent, &self.base);
        if let Some(previous) = self.manifest.get() {
            self.next_manifest.finish(previous, &self.manifest_path(), spare);
        }
    }

    /// Completes the staged directory with what this run does not replace (every entry of `out` but the
    /// `built` clusters' directories and, on a full build (`all_clusters`), directories kix generated for
    /// clusters that no longer exist: their manifests must not linger in GitOps), then swaps it in.
    pub fn finish(self, built: &[&str], all_clusters: bool) -> Result<(), Diagnostic> {
        let staging = self.directory()?.to_path_buf();
        if self.only.is_none() && self.in_place.load(std::sync::atomic::Ordering::Relaxed) {
            // Nothing to swap or record; an earlier kix's state beside `out/` goes, as after any full build.
            crate::emit::outdir::remove_legacy_state(&self.parent, &self.base);
            return Ok(());
        }
        let out = &self.out;
        if !all_clusters && self.only.is_some() && out.is_dir() {
            swap_clusters(&staging, out, built)?;
            remove_tree(&staging);
            return Ok(());
        }
        // By name, hashed: a fleet's two listings asked every name of a thousand clusters (issue 20).
        let built_names: std::collections::HashSet<&str> = built.iter().copied().collect();
        let is_built = |name: &std::ffi::OsStr| name.to_str().is_some_and(|name| built_names.contains(name));
        // The spare's entries that are not this build's clusters' directories: clusters gone, and what was
        // copied from the `out` of two builds ago.
        let entries = std::fs::read_dir(&staging).map_err(|e| write_failed("cannot list", &staging, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| write_failed("cannot list", &staging, e))?;
            if !is_built(&entry.file_name()) {
                crate::emit::spare::remove(&entry.path())?;
            }
        }
        if out.is_dir() {
            let entries = std::fs::read_dir(out).map_err(|e| write_failed("cannot list", out, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| write_failed("cannot list", out, e))?;
                let name = entry.file_name();
                if is_built(&name) {
                    continue;
                }
                // A directory no cluster of this build staged, checked as every entry of `out` is before
                // it is carried over or dropped (crate::emit::outdir).
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    crate::emit::outdir::check_directory(&entry.path())?;
                }
                if all_clusters && generated_by_kix(&entry.path()) {
                    continue;
                }
                copy_tree(&entry.path(), &staging.join(&name))
                    .map_err(|e| write_failed("cannot copy", &entry.path(), e))?;
            }
        }
        // Swap atomically where the kernel can (Linux renameat2 RENAME_EXCHANGE): at no moment is there
        // no out/, and the previous out/ is the spare. Elsewhere: out -> previous, staging -> out,
        // previous -> spare (or removed); on failure put out back.
        if out.exists() && exchange(&staging, out) {
            self.spare_created.store(false, std::sync::atomic::Ordering::Relaxed);
            self.record(self.only.is_none());
            if self.only.is_some() {
                remove_tree(&staging);
            }
            return Ok(());
        }
        let previous = crate::emit::outdir::state_dir(&self.parent).join(format!(
            ".{}.kix-previous-{}",
            self.base,
            std::process::id()
        ));
        let had_out = out.exists();
        if had_out {
            std::fs::rename(out, &previous).map_err(|e| write_failed("cannot move aside", out, e))?;
        }
        if let Err(e) = std::fs::rename(&staging, out) {
            if had_out {
                let _ = std::fs::rename(&previous, out);
            }
            return Err(write_failed("cannot move into place", out, e));
        }
        self.spare_created.store(false, std::sync::atomic::Ordering::Relaxed);
        let spare = had_out && self.only.is_none() && std::fs::rename(&previous, &staging).is_ok();
        if had_out && !spare {
            remove_tree(&previous);
        }
        self.record(spare);
        Ok(())
    }
}

/// A cluster's staged directory, its directory in `out/`, and what the manifest trusts of both
/// ([`Staging::recorded`]).
struct Recorded<'m> {
    dir: PathBuf,
    previous_dir: PathBuf,
    /// `out/<cluster>`'s entries, in name order.
    recorded: Vec<(&'m str, Entry)>,
    /// The spare's.
    known: crate::emit::manifest::Entries<'m>,
    /// The names in the spare's directory, when its facts are those recorded with the spare's section.
    listing: Option<Vec<&'m str>>,
    /// What `out/<cluster>` is.
    previous: Previous,
}

/// Checks `out/<cluster>` as a cluster is staged, not before the compile (crate::emit::outdir): unchanged
/// since the build that wrote it, it holds only that build's files, and only its mode is looked at; else
/// every entry is (a FIFO, a socket or a device is refused). What it found: [`Previous`].
fn check_previous(manifest: &Manifest, cluster: &str, previous_dir: &Path) -> Result<Previous, Diagnostic> {
    let Some(now) = Facts::of_directory(previous_dir) else { return Ok(Previous::Absent) };
    if manifest.directory_unchanged(cluster, Some(now)) {
        crate::emit::outdir::check_writable(previous_dir)?;
        return Ok(Previous::AsRecorded);
    }
    crate::emit::outdir::check_directory(previous_dir)?;
    Ok(Previous::Changed)
}

/// What [`check_previous`] found of `out/<cluster>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Previous {
    /// Not a directory (or none).
    Absent,
    /// A directory since changed, or never recorded.
    Changed,
    /// The directory the previous build recorded (its facts, older than the manifest): its entries are the
    /// recorded ones.
    AsRecorded,
}

/// A partial build's end: each built cluster's staged directory swapped with its directory in `out`
/// (atomically where the kernel can, as the whole `out` is on a full build), or moved in where `out` has
/// none. What it replaced is left in the staged directory, which dropping the `Staging` removes. Each
/// cluster's directory is at every moment either the previous build's or this one's, whole; a build of
/// several clusters killed between two swaps leaves the first swapped and the rest as they were.
fn swap_clusters(staging: &Path, out: &Path, built: &[&str]) -> Result<(), Diagnostic> {
    for cluster in built {
        let (staged, target) = (staging.join(cluster), out.join(cluster));
        let present = std::fs::symlink_metadata(&target).is_ok();
        if present && exchange(&staged, &target) {
            continue;
        }
        if present {
            // No exchange here: the previous directory set aside first, then the new one moved in.
            let aside = staging.join(format!(".{cluster}.previous"));
            std::fs::rename(&target, &aside).map_err(|e| write_failed("cannot move aside", &target, e))?;
            if let Err(e) = std::fs::rename(&staged, &target) {
                let _ = std::fs::rename(&aside, &target);
                return Err(write_failed("cannot move into place", &target, e));
            }
            continue;
        }
        std::fs::rename(&staged, &target).map_err(|e| write_failed("cannot move into place", &target, e))?;
    }
    Ok(())
}

impl Drop for Staging {
    /// A `--cluster` build's staged directory: what is left of it (the directories it replaced, or one that
    /// was never swapped in). A full build's is the spare, kept for the next build unless the build made it.
    fn drop(&mut self) {
        if let (Some(Ok(staging)), Some(_)) = (self.staging.get(), &self.only) {
            remove_tree(staging);
        }
        // A spare this build made and never swapped in (a cluster failed after others were staged).
        if let (Some(Ok(spare)), true) = (self.staging.get(), *self.spare_created.get_mut()) {
            remove_tree(spare);
        }
        // A next manifest never put in place (the build failed).
        let path = self.manifest_path();
        self.next_manifest.discard(&path);
        // Released (and its file removed) only once nothing of this build is left beside `out`.
        drop(self.lock.take());
        // A state directory this build made for output it never swapped in: the tree as it was found.
        if *self.state_created.get_mut() {
            let _ = std::fs::remove_dir_all(crate::emit::outdir::state_dir(&self.parent));
        }
    }
}

/// Carries a file of the previous output into the staged directory when its bytes are the ones a build
/// would write: a hard link, so a rebuild rewrites only what changed (creating thousands of files right
/// after the swap deleted the old ones is slow on ext4; issue 11, docs/performance.md). False when the
/// file is absent, not a regular file, differs, or cannot be linked (another file system): then the
/// caller writes it.
pub(super) fn carried_over(previous: &Path, bytes: &[u8], staged: &Path) -> bool {
    holds_exactly(previous, bytes) && std::fs::hard_link(previous, staged).is_ok()
}

/// Exchanges two directories in one step; false where the platform or file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> bool {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> bool {
    false
}

/// Removes a directory tree, its top-level entries (clusters' directories) on every core: after a build
/// swapped `out` in, the previous one is removed before kix exits, thousands of files.
fn remove_tree(dir: &Path) {
    use rayon::prelude::*;
    let entries: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    entries.par_iter().for_each(|entry| match std::fs::symlink_metadata(entry) {
        Ok(m) if m.is_dir() => _ = std::fs::remove_dir_all(entry),
        _ => _ = std::fs::remove_file(entry),
    });
    if std::fs::remove_dir_all(dir).is_err() && std::fs::symlink_metadata(dir).is_ok() {
        // A directory kix may not write (made read-only after the checks): the tree is kix's to remove
        // (a staged build or the output it replaced), so make it writable and try once more.
        make_writable(dir);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Removes staging and set-aside directories, and a half-written output manifest, left by a kix run that
/// was killed (its process is gone).
fn remove_stale(parent: &Path, base: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // A killed build's staging or previous directory, or its output manifest being written
        // (`.<out>.kix-manifest.<pid>`, renamed into place when complete: see `emit::next_manifest`).
        let directory = name
            .strip_prefix(&format!(".{base}.kix-staging-"))
            .or_else(|| name.strip_prefix(&format!(".{base}.kix-previous-")));
        let manifest = name.strip_prefix(&format!(".{base}.kix-manifest."));
        let Some(pid) = directory.or(manifest).filter(|pid| pid.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        let alive = Path::new("/proc").join(pid).exists() || !Path::new("/proc/self").exists();
        if alive {
            continue;
        }
        if directory.is_some() {
            let _ = std::fs::remove_dir_all(entry.path());
        } else if entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Copies a file or directory tree (symlinks are copied as the files they point to are not followed out).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let metadata = std::fs::symlink_metadata(from)?;
    if metadata.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if metadata.file_type().is_symlink() {
        // Recreate the link itself rather than following it.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
        }
        #[cfg(not(unix))]
        {
            Ok(())
        }
    } else if metadata.is_file() {
        std::fs::copy(from, to).map(|_| ())
    } else {
        // A FIFO, socket or device: never opened (a FIFO would block); refused before staging anyway.
        Err(std::io::Error::other("not a regular file, directory or symlink"))
    }
}
