//! The output directory's guards (issue 19): what `emit` checks before it stages anything, so a
//! build never damages `out/` and never leaves a staging directory it could have avoided.
//!
//! - **Where it leads**: `--out` resolved through its longest existing ancestor
//!   ([`resolve_existing`]), so a symlinked parent cannot lead the K0501 guard into `clusters/` or
//!   `packages/` while the directory does not exist yet.
//! - **A symlink is refused**, never written through. kix replaces `out/` whole by swapping a staged
//!   directory in; swapping the link would leave the link's target to be emptied as "the previous
//!   output", and writing into the target would put the staging directory and the swap on another
//!   directory (often a GitOps checkout whose `.git` is not kix's). Passing the target itself as
//!   `--out` does what the user means, with its other entries carried over.
//! - **Only directories, regular files and symlinks** in `out/`: a FIFO, socket or device is
//!   neither read nor copied (opening a FIFO blocks forever); the build is refused, naming it.
//! - **Writable**: `out/`, and every directory in it, must be writable, else the swapped-out
//!   previous output could not be brought up to date as the next build's spare (checked with
//!   `access`, so it holds for the user kix runs as; root may write anywhere). `out/` itself and its
//!   top-level entries are checked before the compile; a full build checks each directory in it where
//!   it uses it (a cluster's as the cluster is staged, the others before the swap), and a cluster's
//!   directory that the output manifest shows unchanged since the build that wrote it (its mtime and
//!   ctime recorded, [`crate::emit::manifest_read::Manifest::directory_unchanged`]) holds only the files
//!   that build wrote: its entries are not listed again (a thousand directories' listing was a twentieth
//!   of a fleet's rebuild, issue 20).
//! - **One build at a time** ([`Lock`]): `flock` on `.kix/.<out>.kix-lock` beside `out/`; a second
//!   build fails at once (K0503) rather than wait: two builds racing into one `out/` is a mistake in
//!   the pipeline that waiting would hide, and whichever swapped last would silently win.

use kix_diag::{Code, Diagnostic, Location};
use std::path::{Component, Path, PathBuf};

/// `path` made absolute, its longest existing ancestor resolved through symlinks and the rest
/// appended by text: where a directory created at `path` would be.
pub(crate) fn resolve_existing(path: &Path) -> PathBuf {
    let absolute = crate::fs::lexically_normal(&std::env::current_dir().unwrap_or_default().join(path));
    let mut existing = absolute.as_path();
    let mut rest: Vec<Component<'_>> = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return rest.iter().rev().fold(canonical, |p, c| p.join(c));
        }
        let (Some(parent), Some(last)) = (existing.parent(), existing.components().next_back()) else {
            return absolute;
        };
        rest.push(last);
        existing = parent;
    }
}

fn refused(out: &Path, message: String) -> Diagnostic {
    Diagnostic::new(Code::WriteFailed, message).at(Location::file(out))
}

/// Refuses an `out` kix could not replace without damage: a symlink, an entry that is not a
/// directory, regular file or symlink, or a directory it cannot write. Nothing is opened. With
/// `only` (a build of some clusters, issue 20), what is checked inside `out` is those clusters'
/// directories: they are all such a build replaces, and the rest of `out` is left in place, neither
/// read nor copied, so a 1,000-cluster `out/` is not walked to rebuild one cluster.
///
/// A full build (`only` is `None`) checks `out` and, with `top_level`, its entries that are not
/// directories: each directory is checked where the build uses it ([`check_directory`]). `top_level`
/// false checks `out` itself only (a full build's second look, under the lock: what a user puts in
/// `out/` while a build runs is that build's race anyway; kix still never opens a FIFO there, and refuses
/// to copy one).
pub(crate) fn check_replaceable(out: &Path, only: Option<&[&str]>, top_level: bool) -> Result<(), Diagnostic> {
    let Ok(metadata) = std::fs::symlink_metadata(out) else { return Ok(()) };
    if metadata.file_type().is_symlink() {
        let target = std::fs::read_link(out).unwrap_or_default();
        return Err(refused(
            out,
            format!(
                "{} is a symlink (to {}): kix replaces the output directory whole and does not write through \
                 a link; pass the directory itself as --out",
                out.display(),
                target.display()
            ),
        ));
    }
    if !metadata.is_dir() {
        return Err(refused(out, format!("{} exists and is not a directory", out.display())));
    }
    let Some(clusters) = only else {
        return if top_level { check_top_level(out) } else { check_writable(out) };
    };
    check_writable(out)?;
    for cluster in clusters {
        let dir = out.join(cluster);
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            check_directory(&dir)?;
        }
    }
    Ok(())
}

/// Refuses a directory of `out` that is not writable (checked with `access`).
pub(crate) fn check_writable(dir: &Path) -> Result<(), Diagnostic> {
    if writable(dir) {
        return Ok(());
    }
    Err(refused(
        dir,
        format!(
            "{} is not writable: kix could not remove the previous output after replacing it; make it \
             writable or choose another --out",
            dir.display()
        ),
    ))
}

/// `out` and its top-level entries but the directories (clusters' directories, checked where the build
/// uses each); the first refusal in listing order is the one reported.
fn check_top_level(out: &Path) -> Result<(), Diagnostic> {
    check_writable(out)?;
    let entries = std::fs::read_dir(out).map_err(|e| refused(out, format!("cannot list {}: {e}", out.display())))?;
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            check_entry(&entry)?;
        }
    }
    Ok(())
}

fn check_entry(entry: &std::fs::DirEntry) -> Result<(), Diagnostic> {
    let Ok(kind) = entry.file_type() else { return Ok(()) };
    if kind.is_dir() {
        return check_directory(&entry.path());
    }
    if kind.is_file() || kind.is_symlink() {
        return Ok(());
    }
    let path = entry.path();
    let what =
        std::fs::symlink_metadata(&path).ok().and_then(|m| kix_diag::source::not_a_file(&m)).unwrap_or("not a file");
    Err(refused(
        &path,
        format!(
            "{} is {what}: kix neither reads nor copies it into a new build; remove it or choose another --out",
            path.display()
        ),
    ))
}

/// Refuses a directory of `out` (at any depth) that is not writable or holds, at any depth, an entry that
/// is not a directory, regular file or symlink.
pub(crate) fn check_directory(dir: &Path) -> Result<(), Diagnostic> {
    check_writable(dir)?;
    let entries = std::fs::read_dir(dir).map_err(|e| refused(dir, format!("cannot list {}: {e}", dir.display())))?;
    for entry in entries.flatten() {
        check_entry(&entry)?;
    }
    Ok(())
}

#[cfg(unix)]
pub(crate) fn writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK).is_ok()
}

#[cfg(not(unix))]
pub(crate) fn writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| !m.permissions().readonly())
}

/// The directory of kix's own state beside an output directory whose parent is `parent`.
pub(crate) fn state_dir(parent: &Path) -> PathBuf {
    parent.join(kix_kube::kix_names::STATE_DIR)
}

/// [`state_dir`], created with its `.gitignore` (`*`: git ignores the directory and the file itself) when
/// missing; `true` with it when this call made it (a build that then fails removes it again, leaving the
/// tree as it found it). A `.kix` that is not a directory (a file, a symlink) is refused: kix writes only
/// into a directory it made.
pub(crate) fn ensure_state_dir(parent: &Path, out: &Path) -> Result<(PathBuf, bool), Diagnostic> {
    let state = state_dir(parent);
    let created = match std::fs::symlink_metadata(&state) {
        Ok(metadata) if metadata.is_dir() => false,
        Ok(_) => {
            return Err(refused(out, format!("{} is not a directory kix made for its state", state.display())));
        }
        Err(_) => {
            std::fs::create_dir(&state).map_err(|e| refused(out, format!("cannot create {}: {e}", state.display())))?;
            true
        }
    };
    let ignore = state.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_err() {
        let text = "# kix's own state beside the output directory (the output manifest, the spare, the lock): never committed.\n*\n";
        std::fs::write(&ignore, text).map_err(|e| refused(out, format!("cannot write {}: {e}", ignore.display())))?;
    }
    Ok((state, created))
}

/// After a build swapped its output in: the state an earlier kix kept beside `out/` itself
/// (`.<out>.kix-manifest`, `.<out>.kix-spare`) removed, so it leaves the user's commits (issue 41).
pub(crate) fn remove_legacy_state(parent: &Path, base: &str) {
    let legacy_manifest = parent.join(format!(".{base}.kix-manifest"));
    if std::fs::symlink_metadata(&legacy_manifest).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(&legacy_manifest);
    }
    let legacy_spare = parent.join(format!(".{base}.kix-spare"));
    if std::fs::symlink_metadata(&legacy_spare).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::remove_dir_all(&legacy_spare);
    }
}

/// The lock one build holds on an output directory from its first staged file until it ends:
/// `flock` on `<parent>/.kix/.<out>.kix-lock`, removed when released (and taken again if another build
/// removed it in between, so two builds never hold locks on two files of one name).
pub(crate) struct Lock {
    path: PathBuf,
    _file: std::fs::File,
}

impl Lock {
    /// The lock in `state`, kix's state directory beside `out` ([`ensure_state_dir`]).
    pub(crate) fn take(state: &Path, base: &str, out: &Path) -> Result<Lock, Diagnostic> {
        let path = state.join(format!(".{base}.kix-lock"));
        loop {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|e| refused(out, format!("cannot create the lock {}: {e}", path.display())))?;
            if !try_lock(&file) {
                return Err(Diagnostic::new(
                    Code::OutputLocked,
                    format!(
                        "another kix build is writing {} (it holds {}); run one build at a time into one \
                         output directory",
                        out.display(),
                        path.display()
                    ),
                )
                .at(Location::file(out)));
            }
            if same_file(&file, &path) {
                return Ok(Lock { path, _file: file });
            }
        }
    }
}

impl Drop for Lock {
    /// Removed while still held, so the next build creates and locks a fresh one.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(unix)]
fn try_lock(file: &std::fs::File) -> bool {
    rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}

#[cfg(not(unix))]
fn try_lock(_: &std::fs::File) -> bool {
    true
}

/// Whether the open lock file is still the one at `path` (not removed by the build that held it).
#[cfg(unix)]
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::File, _: &Path) -> bool {
    true
}

/// Opens a file for reading; an error for a symbolic link (where the platform says so at open, else before).
#[cfg(target_os = "linux")]
pub(crate) fn open_not_following(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // NONBLOCK: a FIFO found where a file was is opened without waiting for a writer (and then
    // refused as not a regular file); it changes nothing for regular files.
    let no_follow = (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32;
    std::fs::OpenOptions::new().read(true).custom_flags(no_follow).open(path)
}

/// Elsewhere, the path's type is asked first: anything but a regular file (a symbolic link, or a FIFO, which
/// an open would wait on) is refused before the open.
#[cfg(not(target_os = "linux"))]
pub(crate) fn open_not_following(path: &Path) -> std::io::Result<std::fs::File> {
    if !std::fs::symlink_metadata(path)?.file_type().is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    std::fs::File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn resolve_existing_follows_a_symlinked_parent_of_a_missing_directory() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("packages/web")).unwrap();
        std::os::unix::fs::symlink("packages", root.join("pk")).unwrap();
        assert_eq!(resolve_existing(&root.join("pk/web/gen/x")), root.join("packages/web/gen/x"));
        assert_eq!(resolve_existing(&root.join("new/../out")), root.join("out"));
    }

    #[test]
    fn a_second_lock_on_one_output_directory_is_refused_until_the_first_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = Lock::take(dir.path(), "out", &out).unwrap();
        let second = Lock::take(dir.path(), "out", &out).err().unwrap();
        assert_eq!(second.code, Code::OutputLocked);
        drop(first);
        assert!(!dir.path().join(".out.kix-lock").exists());
        let _third = Lock::take(dir.path(), "out", &out).unwrap();
    }
}
