//! The one place kix touches the file system for its inputs: bounded reading into a
//! [`SourceFile`], sorted directory listings, the symlink escape check, path normalising by text,
//! and a directory walker with a symlink loop guard. `load` (cluster files and packages) and
//! `lint` (files and directories given on the command line) read through it, so both refuse the
//! same things with the same words.
//!
//! What kix reads is bounded by size and must be UTF-8 ([`kix_diag::source`], also used by the
//! scheduler model's snapshot reader); a symlink is judged before it is followed: one that
//! resolves outside the directory kix was given, or to nothing, is refused ([`Escape`]).

use kix_diag::source::{self, MAX_PACKAGE_FILE_BYTES, ReadError};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use std::path::{Component, Path, PathBuf};

/// Why a path inside a directory is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Escape {
    /// A symlink (or a path through one) that resolves outside the directory.
    Outside,
    /// A symlink whose target does not exist, though it would lie inside.
    Dangling,
}

impl Escape {
    /// Why a path is refused, in the words diagnostics use; `inside` names the directory
    /// (`the package directory`).
    pub(crate) fn describe(self, inside: &str) -> String {
        match self {
            Escape::Outside => format!("symlink points outside {inside}; kix does not follow it"),
            Escape::Dangling => "symlink points to a file that does not exist".to_string(),
        }
    }
}

/// Whether `path` stays inside `canonical_dir` (a canonicalized directory): a path that resolves
/// outside it, or a dangling symlink, escapes. A path that does not exist and is no symlink does
/// not escape (there is nothing to follow).
pub(crate) fn escape(path: &Path, canonical_dir: &Path) -> Option<Escape> {
    match path.canonicalize() {
        Ok(target) if target.starts_with(canonical_dir) => None,
        Ok(_) => Some(Escape::Outside),
        Err(_) if is_symlink(path) => {
            // Dangling: judge where the link text leads, without following anything.
            let link = std::fs::read_link(path).unwrap_or_default();
            let parent = path.parent().and_then(|p| p.canonicalize().ok()).unwrap_or_default();
            if lexically_normal(&parent.join(link)).starts_with(canonical_dir) {
                Some(Escape::Dangling)
            } else {
                Some(Escape::Outside)
            }
        }
        Err(_) => None,
    }
}

/// Why kix will not read a path of a package, if it will not: a symlink that resolves outside
/// the package directory, or one whose target does not exist; in the words diagnostics use.
pub(crate) fn package_escape(path: &Path, canonical_package_dir: &Path) -> Option<String> {
    escape(path, canonical_package_dir).map(|why| why.describe("the package directory"))
}

/// Whether `path` itself is a symlink (not followed).
pub(crate) fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Resolves `.` and `..` in a path by its text alone.
pub fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// A directory's entries, sorted by name so every run sees the same order.
pub fn list(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        paths.push(entry?.path());
    }
    paths.sort();
    Ok(paths)
}

/// Reads one text file within `limit` bytes into a [`SourceFile`] shown as `display`; a file too
/// large, not UTF-8 (located at its first invalid byte) or unreadable is one diagnostic.
pub(crate) fn read_source(path: &Path, display: PathBuf, limit: u64) -> Result<SourceFile, Diagnostic> {
    match source::read_text(path, limit) {
        Ok(text) => Ok(SourceFile::new(display, text)),
        Err(error) => {
            let location = match &error {
                ReadError::NotUtf8 { offset, lossy } => {
                    SourceFile::new(display, lossy.clone()).locate(*offset..offset + 1)
                }
                _ => Location::file(display),
            };
            Err(Diagnostic::new(error.code(), error.to_string()).at(location))
        }
    }
}

/// Every file under `dir` that `wanted` accepts, sorted by path. Symlinks are followed within
/// `dir` only: one that leads outside it (or to nothing) is a diagnostic at the link (K0108), as in
/// a package, so a walk never reads what its caller did not name. Symlinked directories are never
/// followed into a directory that is already being walked (by its canonical path): a symlink loop
/// ends the descent there instead of recursing forever. A directory that cannot be listed is one
/// diagnostic.
pub fn walk(dir: &Path, wanted: impl Fn(&Path) -> bool) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    fn descend(
        dir: &Path,
        root: &(PathBuf, String),
        wanted: &dyn Fn(&Path) -> bool,
        ancestors: &mut Vec<PathBuf>,
        files: &mut Vec<PathBuf>,
        problems: &mut Vec<Diagnostic>,
    ) {
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        if ancestors.contains(&canonical) {
            return;
        }
        match list(dir) {
            Ok(entries) => {
                ancestors.push(canonical);
                for path in entries {
                    if is_symlink(&path) {
                        if let Some(why) = escape(&path, &root.0) {
                            let is_wanted = path.is_dir() || wanted(&path);
                            if is_wanted {
                                problems.push(
                                    Diagnostic::new(Code::InputRefused, why.describe(&root.1))
                                        .at(Location::file(&path)),
                                );
                            }
                            continue;
                        }
                    }
                    if path.is_dir() {
                        descend(&path, root, wanted, ancestors, files, problems);
                    } else if wanted(&path) {
                        files.push(path);
                    }
                }
                ancestors.pop();
            }
            Err(error) => problems
                .push(Diagnostic::new(Code::Io, format!("cannot list directory: {error}")).at(Location::file(dir))),
        }
    }
    let (mut files, mut problems) = (Vec::new(), Vec::new());
    let root = (dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()), dir.display().to_string());
    descend(dir, &root, &wanted, &mut Vec::new(), &mut files, &mut problems);
    files.sort();
    (files, problems)
}

/// Bounded, root-relative file access shared by the loaders.
pub(crate) struct Reader<'a> {
    root: &'a Path,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(root: &'a Path) -> Reader<'a> {
        Reader { root }
    }
}

impl Reader<'_> {
    /// The path as diagnostics show it: relative to the root when it lies under it.
    pub fn display(&self, path: &Path) -> PathBuf {
        path.strip_prefix(self.root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
    }

    /// Directory entries, sorted by name so every run sees the same order.
    pub fn list(&self, dir: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
        list(dir).map_err(|e| {
            Diagnostic::new(Code::Io, format!("cannot list directory: {e}")).at(Location::file(self.display(dir)))
        })
    }

    /// Reads one text file, refusing files that are too large or not UTF-8.
    pub fn read(&self, path: &Path, diagnostics: &mut Diagnostics) -> Option<SourceFile> {
        read_source(path, self.display(path), MAX_PACKAGE_FILE_BYTES).map_err(|d| diagnostics.push(d)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexically_normal_resolves_dots_by_text() {
        for (path, normal) in [("a/./b", "a/b"), ("a/b/../c", "a/c"), ("/x/../../y", "/y"), ("a/b/", "a/b")] {
            assert_eq!(lexically_normal(Path::new(path)), PathBuf::from(normal), "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn escape_tells_outside_from_dangling() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("pkg");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.yaml"), "x: 1\n").unwrap();
        std::fs::write(root.path().join("outside.yaml"), "x: 1\n").unwrap();
        std::os::unix::fs::symlink("a.yaml", dir.join("inside")).unwrap();
        std::os::unix::fs::symlink("../outside.yaml", dir.join("out")).unwrap();
        std::os::unix::fs::symlink("missing.yaml", dir.join("dangling")).unwrap();
        std::os::unix::fs::symlink("../missing.yaml", dir.join("dangling-out")).unwrap();
        let canonical = dir.canonicalize().unwrap();
        assert_eq!(escape(&dir.join("a.yaml"), &canonical), None);
        assert_eq!(escape(&dir.join("inside"), &canonical), None);
        assert_eq!(escape(&dir.join("out"), &canonical), Some(Escape::Outside));
        assert_eq!(escape(&dir.join("dangling"), &canonical), Some(Escape::Dangling));
        assert_eq!(escape(&dir.join("dangling-out"), &canonical), Some(Escape::Outside));
        assert_eq!(escape(&dir.join("absent"), &canonical), None);
    }

    #[cfg(unix)]
    #[test]
    fn walk_ends_a_symlink_loop_and_sorts() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("d");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("b.yaml"), "").unwrap();
        std::fs::write(dir.join("sub/a.yaml"), "").unwrap();
        std::fs::write(dir.join("sub/notes.txt"), "").unwrap();
        // sub/loop -> .. : entering it again would recurse forever.
        std::os::unix::fs::symlink("..", dir.join("sub/loop")).unwrap();
        let (files, problems) = walk(&dir, |p| p.extension().is_some_and(|e| e == "yaml"));
        assert!(problems.is_empty());
        assert_eq!(files, [dir.join("b.yaml"), dir.join("sub/a.yaml")]);
    }
}
