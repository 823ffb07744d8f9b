//! The spare (issue 20 part 9): a full build's output is staged in `.kix/.<out>.kix-spare`, beside `out/`,
//! which holds the output of the build before the previous one, and is swapped with `out/` whole
//! (`renameat2(RENAME_EXCHANGE)`); the `out/` it replaced becomes the next build's spare.
//!
//! So a rebuild does not make the new output from nothing: it brings the spare up to date. A file of the
//! spare that already holds the bytes the build writes (known from the output manifest and one `stat`,
//! [`crate::emit::manifest`]) is left as it is, with no other system call; one that holds other bytes is
//! removed and replaced by a hard link to `out/`'s file when that one holds the new bytes, else written.
//! Files and directories the build does not write are removed. A rebuild after a change therefore costs
//! one `stat` per unchanged file and a few calls per file that changed since the build before the
//! previous one, where making a new tree cost a link, a `stat` and (removing the replaced tree) an
//! unlink per file.
//!
//! The spare and `out/` share the inodes of files linked from one to the other; a file is written in place
//! only when the spare's name is its only one (one link, so not `out/`'s) and it has the mode and owner a
//! new file would, else removed, then created anew or linked, so nothing done to the spare changes a byte
//! of `out/`. Removing or adding a link changes the inode's ctime, so the facts of a file of `out/` whose
//! link the update added or removed are taken again ([`Updated::previous`]); a hand edit of a file of
//! `out/` that shares its inode with the spare changes both names' facts, and both are read or replaced.
//!
//! Nothing in the spare is trusted without the manifest and a `stat`: a spare a user changed, one a
//! killed build left half updated, or one without a manifest is compared file by file, never followed
//! through a symlink, and a FIFO or device in it is removed, never opened.

use crate::emit::manifest::{self, Entries, Entry, Facts, Judged};
use crate::emit::outdir::open_not_following;
use kix_diag::{Code, Diagnostic, Location};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

/// What one cluster's directory of the spare holds once brought up to date, and what changed of `out/`'s.
#[derive(Debug, Default)]
pub(crate) struct Updated {
    /// The staged directory's files and their entries (in the order written).
    pub(crate) staged: Vec<(String, Entry)>,
    /// The entries of the previous directory (`out/<cluster>/`, the next build's spare) still known:
    /// those the manifest trusted, with the facts of files whose links the update changed taken again.
    pub(crate) previous: Vec<(String, Entry)>,
}

pub(crate) fn write_failed(what: &str, path: &Path, error: std::io::Error) -> Diagnostic {
    Diagnostic::new(Code::WriteFailed, format!("{what} {}: {error}", path.display())).at(Location::file(path))
}

/// A file a build writes into a cluster's directory: its name and, for an instance's file, the key of
/// what it is rendered from (`emit::instance_key`); or, for a cluster compiled in part (`crate::reuse`), a
/// file of the previous build kept as it recorded it (`recorded`, its entry of `out/<cluster>`).
#[derive(Debug)]
pub(crate) struct Wanted {
    pub(crate) name: String,
    pub(crate) key: Option<u128>,
    pub(crate) recorded: Option<Entry>,
}

/// Brings `staged` (a cluster's directory in the spare, or a new one) to hold exactly the `wanted` files,
/// whose bytes `render` gives by position (called only for a file no entry vouches for by its key).
/// `known` is what the manifest says of `staged`, `previous` the cluster's directory in `out/` and
/// `previous_known` what the manifest says of it; `listing`, the names in `staged` when the manifest knows
/// them ([`list`]). A file wanted as `recorded` is never rendered: the
/// spare's copy is kept when the manifest vouches for it holding the recorded bytes, else `out/`'s file is
/// linked when its facts are still the recorded ones, else nothing can be kept and the update is `None`
/// (the caller compiles the whole cluster and updates the spare again).
#[allow(clippy::too_many_arguments)]
pub(crate) fn update(
    staged: &Path,
    wanted: &[Wanted],
    render: &dyn Fn(usize) -> String,
    known: &Entries<'_>,
    listing: Option<&[&str]>,
    previous: &Path,
    previous_known: Entries<'_>,
) -> Result<Option<Updated>, Diagnostic> {
    let listed = list(staged, listing)?;
    update_listed(staged, listed, wanted, render, known, previous, previous_known)
}

/// As [`update`], for the `wanted` files alone among others of `staged` that are left as they are: only
/// the names of `wanted` (`names`) are looked at, each stat'ed by name; `None` when they cannot be (and
/// nothing is changed), never a listing of the directory, whose other files are not this update's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_among(
    staged: &Path,
    wanted: &[Wanted],
    render: &dyn Fn(usize) -> String,
    known: &Entries<'_>,
    names: &[&str],
    previous: &Path,
    previous_known: Entries<'_>,
) -> Result<Option<Updated>, Diagnostic> {
    let Some(listed) = list_named(staged, names) else { return Ok(None) };
    update_listed(staged, listed, wanted, render, known, previous, previous_known)
}

/// [`update`] once `staged` is listed (`listed`: its names, each with its facts when a regular file).
fn update_listed(
    staged: &Path,
    mut listed: Listed<'_>,
    wanted: &[Wanted],
    render: &dyn Fn(usize) -> String,
    known: &Entries<'_>,
    previous: &Path,
    previous_known: Entries<'_>,
) -> Result<Option<Updated>, Diagnostic> {
    // Who a file created here would belong to, and its mode: taken once, when a file is first to be written
    // over (`overwrite_sole`).
    let created = std::cell::OnceCell::new();
    // `staged` opened as a directory when a file is first written over, its files then opened in it.
    let directory = std::cell::OnceCell::new();
    let mut carried = previous_known.into_map();
    let mut refreshed: Vec<(String, Entry)> = Vec::new();
    let mut updated = Updated { staged: Vec::with_capacity(wanted.len()), previous: Vec::new() };
    for (index, Wanted { name, key, recorded }) in wanted.iter().enumerate() {
        let key = *key;
        let listing = listed.remove(name.as_str());
        let (present, facts) = (listing.is_some(), listing.flatten());
        let entry = known.get(name);
        if let Some(recorded) = recorded {
            let kept =
                entry.zip(facts).is_some_and(|(entry, facts)| entry.hash == recorded.hash && entry.facts == facts);
            if let (true, Some(facts)) = (kept, facts) {
                updated.staged.push((name.clone(), Entry { facts, ..*recorded }));
                continue;
            }
            let Some(facts) = link_recorded(&staged.join(name), &previous.join(name), recorded, present, facts)? else {
                return Ok(None);
            };
            carried.remove(name.as_str());
            refreshed.push((name.clone(), Entry { facts, ..*recorded }));
            updated.staged.push((name.clone(), Entry { facts, ..*recorded }));
            continue;
        }
        if let (Some(entry), Some(facts)) = (entry, facts) {
            if entry.vouches_for(Some(facts), key) {
                updated.staged.push((name.clone(), Entry { hash: entry.hash, key, facts }));
                continue;
            }
        }
        let path = staged.join(name);
        let text = render(index);
        let bytes = text.as_bytes();
        let hash = manifest::hash(bytes);
        let judged = manifest::judge(entry.as_ref(), facts, hash);
        let keep = match judged {
            Judged::Same => true,
            Judged::Differs => false,
            Judged::Unknown => facts.is_some() && holds_exactly(&path, bytes),
        };
        if let (true, Some(facts)) = (keep, facts) {
            updated.staged.push((name.clone(), Entry { hash, key, facts }));
            continue;
        }
        // The spare's file is one with `out/`'s (linked by an earlier build): removing it moves that file's ctime.
        let relink = facts.zip(carried.get(name.as_str())).is_some_and(|(gone, entry)| entry.facts == gone);
        let from = previous.join(name);
        // `out/`'s file is the spare's (one inode), whose bytes the manifest said differ: not linked, and not
        // read to learn that (a package change read every changed file of a fleet's `out/` once more).
        // Declining a link is always safe: the file is written instead.
        // Nor tried when the manifest records other bytes for `out/`'s file: unless changed since (and then
        // only a link is lost), it does not hold these.
        let other_bytes = carried.get(name.as_str()).is_some_and(|entry| entry.hash != hash);
        let declined = other_bytes || (relink && judged == Judged::Differs);
        let link = !declined && {
            let from_facts = Facts::of(&from);
            match manifest::judge(carried.get(name.as_str()), from_facts, hash) {
                Judged::Same => true,
                Judged::Differs => false,
                Judged::Unknown => from_facts.is_some() && holds_exactly(&from, bytes),
            }
        };
        // A regular file of the spare that is not `out/`'s, written over where it is its file's only name.
        let listed = facts.filter(|_| present && !link && !relink);
        let like = |listed| created.get_or_init(|| Created::probe(staged)).map(|created| (listed, created));
        let sole = listed
            .and_then(like)
            .map(|(listed, created)| overwrite_in((&directory, staged), name, &path, bytes, &listed, &created));
        if let Some(facts) = sole.transpose()?.flatten() {
            // Written over (its facts taken after the write).
            updated.staged.push((name.clone(), Entry { hash, key, facts }));
            continue;
        }
        if present {
            // A regular file when listed: removed without asking again what it is (else, or if that
            // fails, whatever is there now is removed as `remove` finds it).
            if facts.is_none() || std::fs::remove_file(&path).is_err() {
                remove(&path)?;
            }
        }
        let linked = link && std::fs::hard_link(&from, &path).is_ok();
        let facts = if linked {
            // One inode under both names now: the same facts for both.
            let facts = Facts::of(&path);
            if let Some(facts) = facts {
                refreshed.push((name.clone(), Entry { hash, key, facts }));
            }
            carried.remove(name.as_str());
            facts
        } else {
            let facts = write_new(&path, bytes)?;
            if relink {
                if let Some(entry) = carried.remove(name.as_str()) {
                    if let Some(now) = Facts::of(&from).filter(|now| now.same_file(&entry.facts)) {
                        refreshed.push((name.clone(), Entry { facts: now, ..entry }));
                    }
                }
            }
            facts
        };
        if let Some(facts) = facts {
            updated.staged.push((name.clone(), Entry { hash, key, facts }));
        }
    }
    for name in listed.into_keys() {
        remove(&staged.join(&*name))?;
    }
    updated.previous = carried.into_iter().map(|(name, entry)| (name.to_string(), entry)).collect();
    updated.previous.extend(refreshed);
    Ok(Some(updated))
}

/// Brings `staged` (a cluster's directory in the spare) to hold exactly the files `recorded` lists (the
/// entries of `out/<cluster>` the previous build wrote, in name order) for a cluster whose inputs are
/// unchanged since (`crate::reuse`): nothing is rendered. A file of the spare whose entry in `known` vouches
/// for it (its facts, and the hash the previous build recorded for `out/`'s file) is kept; any other is
/// replaced by a hard link to `out/`'s file, which is taken only when its facts are still the recorded ones.
/// `None` when one is not (a hand edit of `out/`, a file gone) or cannot be linked: what the cluster's files
/// hold is then known only by compiling it, and [`update`] brings the spare up to date from the render.
/// `listing`: the names in `staged` when the manifest knows them ([`list`]).
pub(crate) fn carry(
    staged: &Path,
    recorded: &[(&str, Entry)],
    known: &Entries<'_>,
    listing: Option<&[&str]>,
    previous: &Path,
) -> Result<Option<Updated>, Diagnostic> {
    let mut listed = list(staged, listing)?;
    let mut updated =
        Updated { staged: Vec::with_capacity(recorded.len()), previous: Vec::with_capacity(recorded.len()) };
    for (name, wanted) in recorded {
        let listing = listed.remove(*name);
        let (present, facts) = (listing.is_some(), listing.flatten());
        let entry = known.get(name).filter(|entry| entry.hash == wanted.hash);
        if let (Some(entry), Some(facts)) = (entry, facts) {
            if entry.facts == facts {
                updated.staged.push((name.to_string(), Entry { facts, ..*wanted }));
                // `out/`'s file is the spare's (one inode, the facts unchanged) or another one: as recorded.
                updated.previous.push((name.to_string(), *wanted));
                continue;
            }
        }
        let Some(facts) = link_recorded(&staged.join(name), &previous.join(name), wanted, present, facts)? else {
            return Ok(None);
        };
        updated.staged.push((name.to_string(), Entry { facts, ..*wanted }));
        updated.previous.push((name.to_string(), Entry { facts, ..*wanted }));
    }
    for name in listed.into_keys() {
        remove(&staged.join(&*name))?;
    }
    Ok(Some(updated))
}

/// Puts at `path` (in the spare; `present` when listed there, a regular file with `facts`) a hard link to
/// `from` (`out/`'s file), taken only while its facts are still the `recorded` ones; the facts of the one
/// inode under both names then (the link moved its ctime). `None` when `from` is not as recorded or cannot
/// be linked.
fn link_recorded(
    path: &Path,
    from: &Path,
    recorded: &Entry,
    present: bool,
    facts: Option<Facts>,
) -> Result<Option<Facts>, Diagnostic> {
    if Facts::of(from) != Some(recorded.facts) {
        return Ok(None);
    }
    // A regular file when listed: removed without asking again what it is (as `update` does).
    if present && (facts.is_none() || std::fs::remove_file(path).is_err()) {
        remove(path)?;
    }
    if std::fs::hard_link(from, path).is_err() {
        return Ok(None);
    }
    Ok(Facts::of(path))
}

/// Names in a directory, each with its facts when it is a regular file: borrowed from the manifest's names
/// when it gave them (a fleet's spare holds 100,000), owned when the directory was read.
type Listed<'n> = HashMap<Cow<'n, str>, Option<Facts>, foldhash::fast::RandomState>;

/// The names in `dir` and their facts: `listing` when the caller knows them (the directory's facts are those
/// recorded with its names, so no entry was created, removed or renamed since), each stat'ed by name relative
/// to the directory, opened once; else as [`list_or_create`] reads them. Not listing a fleet's spare saved a
/// twentieth of a package change's rebuild (issue 42).
fn list<'n>(dir: &Path, listing: Option<&[&'n str]>) -> Result<Listed<'n>, Diagnostic> {
    match listing.and_then(|names| list_named(dir, names)) {
        Some(listed) => Ok(listed),
        None => list_or_create(dir),
    }
}

/// Each of `names` present in `dir` with its facts when it is a regular file (a name absent is left out);
/// `None` when `dir` cannot be opened as a directory (not through a symlink).
#[cfg(target_os = "linux")]
fn list_named<'n>(dir: &Path, names: &[&'n str]) -> Option<Listed<'n>> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    // Only names of files kix writes (the manifest's parser refuses others; checked again where they become
    // paths): anything else and the directory is listed.
    if !names.iter().all(|name| crate::emit::manifest::is_file_name(name)) {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let directory = rustix::fs::open(dir, flags, Mode::empty()).ok()?;
    let mut listed = Listed::with_capacity_and_hasher(names.len(), Default::default());
    for name in names {
        let Ok(stat) = rustix::fs::statat(&directory, *name, AtFlags::SYMLINK_NOFOLLOW) else { continue };
        let regular = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile;
        listed.insert(Cow::Borrowed(*name), regular.then(|| Facts::of_stat(&stat)));
    }
    Some(listed)
}

#[cfg(not(target_os = "linux"))]
fn list_named<'n>(_: &Path, _: &[&'n str]) -> Option<Listed<'n>> {
    None
}

/// The names in `dir` when it is a directory (not a symlink to one), each with its facts when it is a
/// regular file; else whatever is there is removed and an empty directory made. The facts are taken as
/// the directory is read, relative to it (`DirEntry::metadata`: a `statx` of the name in the open
/// directory, never following a symlink), where a `stat` of each file's whole path walked the path again
/// for every file (a tenth of a fleet's rebuild, issue 20).
fn list_or_create(dir: &Path) -> Result<Listed<'static>, Diagnostic> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() && !crate::emit::outdir::writable(dir) => remove(dir)?,
        Ok(m) if m.is_dir() => {
            let entries = std::fs::read_dir(dir).map_err(|e| write_failed("cannot list", dir, e))?;
            let mut names = HashMap::default();
            for entry in entries {
                let entry = entry.map_err(|e| write_failed("cannot list", dir, e))?;
                match entry.file_name().into_string() {
                    Ok(name) => {
                        _ = names.insert(Cow::Owned(name), entry.metadata().ok().and_then(|m| Facts::of_metadata(&m)));
                    }
                    // No file kix writes has such a name: removed at once.
                    Err(_) => remove(&entry.path())?,
                }
            }
            return Ok(names);
        }
        Ok(_) => remove(dir)?,
        Err(_) => {}
    }
    std::fs::create_dir(dir).map_err(|e| write_failed("cannot create", dir, e))?;
    Ok(HashMap::default())
}

/// Removes a file, a symlink (not what it points to) or a directory tree (made writable first where it
/// is not: the spare is kix's, whoever changed its modes).
pub(crate) fn remove(path: &Path) -> Result<(), Diagnostic> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).or_else(|_| {
            make_writable(path);
            std::fs::remove_dir_all(path)
        }),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| write_failed("cannot remove", path, e))
}

/// Creates `path` (which does not exist: never through a symlink left there) holding `bytes`; the facts of
/// the file written.
fn write_new(path: &Path, bytes: &[u8]) -> Result<Option<Facts>, Diagnostic> {
    use std::io::Write;
    let mut file = std::fs::File::create_new(path).map_err(|e| write_failed("cannot write", path, e))?;
    file.write_all(bytes).map_err(|e| write_failed("cannot write", path, e))?;
    Ok(Facts::of_file(&file))
}

/// A directory opened to open files in it by name (on Linux).
#[cfg(target_os = "linux")]
type Directory = rustix::fd::OwnedFd;
#[cfg(not(target_os = "linux"))]
type Directory = ();

/// A directory opened when first needed (`None` once it could not be), and its path.
type OpenedOnce<'a> = (&'a std::cell::OnceCell<Option<Directory>>, &'a Path);

/// `dir` opened as a directory, not through a symbolic link (`None` where it cannot be).
#[cfg(target_os = "linux")]
fn open_directory(dir: &Path) -> Option<Directory> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::open(dir, flags, Mode::empty()).ok()
}

#[cfg(not(target_os = "linux"))]
fn open_directory(_: &Path) -> Option<Directory> {
    None
}

/// [`overwrite_sole`] of `name` in `staged` (`path`), opened in the staged directory (`directory`, opened on
/// first use) where it could be opened and `name` is one component, else by its path.
#[cfg(target_os = "linux")]
fn overwrite_in(
    (directory, staged): OpenedOnce<'_>,
    name: &str,
    path: &Path,
    bytes: &[u8],
    listed: &Facts,
    created: &Created,
) -> Result<Option<Facts>, Diagnostic> {
    use rustix::fs::{Mode, OFlags};
    match directory.get_or_init(|| open_directory(staged)) {
        // The one name looked up, not every component of the path again (a package change writes over an
        // eighth of a fleet's files, issue 42); the flags `overwrite_sole`'s.
        Some(directory) if crate::emit::manifest::is_file_name(name) => {
            let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let opened = rustix::fs::openat(directory, name, flags, Mode::empty()).ok().map(std::fs::File::from);
            overwrite_opened(opened, path, bytes, listed, created)
        }
        _ => overwrite_sole(path, bytes, listed, created),
    }
}

#[cfg(not(target_os = "linux"))]
fn overwrite_in(
    _: OpenedOnce<'_>,
    _: &str,
    path: &Path,
    bytes: &[u8],
    listed: &Facts,
    created: &Created,
) -> Result<Option<Facts>, Diagnostic> {
    overwrite_sole(path, bytes, listed, created)
}

/// Who a file created in a directory belongs to and its permission bits, as the directory and the process's
/// umask give them (`create_new` makes every file the build writes so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Created {
    mode: u32,
    user: u32,
    group: u32,
}

impl Created {
    /// Learnt from an unnamed file made in `dir` and let go (`O_TMPFILE`: nothing is left there, even if the
    /// build is killed); `None` where that cannot be done (and no file is written over).
    #[cfg(target_os = "linux")]
    pub(crate) fn probe(dir: &Path) -> Option<Created> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        let file = rustix::fs::open(dir, flags, Mode::from_bits_truncate(0o666)).ok()?;
        let stat = rustix::fs::fstat(&file).ok()?;
        Some(Created { mode: stat.st_mode & 0o7777, user: stat.st_uid, group: stat.st_gid })
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn probe(_: &Path) -> Option<Created> {
        None
    }
}

/// Writes `bytes` over the file at `path` (in the spare) when it is still the regular file `listed` (its
/// device and inode), that file's only name, so no other name (`out/`'s, a user's) sees a byte change, and
/// it belongs to whom and has the mode a file created now would (`created`: a mode or owner changed by hand
/// is not carried into `out/`): the facts of the file written, or `None` when it is not such a file
/// (nothing written), which the caller then removes and writes anew. Cheaper than removing and creating
/// it (a package change rewrites an eighth of a fleet's files: a fifth of the rebuild went into unlinking
/// and creating them, issue 42).
/// Safe under the manifest's rule as a new file is: the write moves the file's ctime past the manifest
/// that recorded its old bytes, so that entry no longer vouches for it, even if the build stops halfway.
#[cfg(unix)]
pub(crate) fn overwrite_sole(
    path: &Path,
    bytes: &[u8],
    listed: &Facts,
    created: &Created,
) -> Result<Option<Facts>, Diagnostic> {
    use std::os::unix::fs::OpenOptionsExt;
    // NOFOLLOW: never through a symlink put there since; NONBLOCK: a FIFO is not waited on (nor written).
    let flags = (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32;
    let opened = std::fs::OpenOptions::new().write(true).custom_flags(flags).open(path);
    overwrite_opened(opened.ok(), path, bytes, listed, created)
}

/// [`overwrite_sole`] once the file is opened for writing (`None`: it could not be).
#[cfg(unix)]
fn overwrite_opened(
    file: Option<std::fs::File>,
    path: &Path,
    bytes: &[u8],
    listed: &Facts,
    created: &Created,
) -> Result<Option<Facts>, Diagnostic> {
    use std::os::unix::fs::{FileExt, MetadataExt};
    let Some(file) = file else { return Ok(None) };
    let Ok(metadata) = file.metadata() else { return Ok(None) };
    let sole = metadata.is_file()
        && metadata.nlink() == 1
        && Facts::of_metadata(&metadata).is_some_and(|now| now.same_file(listed));
    let as_created = Created { mode: metadata.mode() & 0o7777, user: metadata.uid(), group: metadata.gid() };
    if !sole || as_created != *created {
        return Ok(None);
    }
    file.write_all_at(bytes, 0).map_err(|e| write_failed("cannot write", path, e))?;
    if metadata.len() > bytes.len() as u64 {
        file.set_len(bytes.len() as u64).map_err(|e| write_failed("cannot write", path, e))?;
    }
    // Its facts after the write (`None` only if they cannot be taken: the caller then writes it anew).
    Ok(Facts::of_file(&file))
}

#[cfg(not(unix))]
fn overwrite_sole(_: &Path, _: &[u8], _: &Facts, _: &Created) -> Result<Option<Facts>, Diagnostic> {
    Ok(None)
}

/// Whether `path` is a regular file, not a symbolic link, holding exactly `bytes`. One open, one stat and
/// one read into a buffer each thread keeps.
pub(crate) fn holds_exactly(path: &Path, bytes: &[u8]) -> bool {
    use std::io::Read;
    thread_local! {
        static FOUND: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let Ok(mut file) = open_not_following(path) else { return false };
    if !file.metadata().is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) {
        return false;
    }
    FOUND.with_borrow_mut(|found| {
        if found.len() < bytes.len() {
            found.resize(bytes.len(), 0);
        }
        let found = &mut found[..bytes.len()];
        file.read_exact(found).is_ok() && found == bytes
    })
}

/// Makes a directory tree writable for its owner (a directory's entries cannot be removed otherwise).
#[cfg(unix)]
pub(crate) fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&entry.path());
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn make_writable(_: &Path) {}
