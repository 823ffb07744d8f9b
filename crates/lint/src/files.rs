//! The files a lint reads: each file given, each `*.yaml`/`*.yml` of a directory given (in path order,
//! kustomize's own file skipped), and stdin's text; each file read a window of documents at a time
//! ([`kix_compiler::load::streamed`]), stdin's text as it was read.

use kix_compiler::load::documents::{Document, Naming, each_document_named};
use kix_compiler::load::streamed::each_document_streamed;
use kix_diag::source::MAX_PACKAGE_FILE_BYTES;
use kix_diag::{Diagnostics, SourceFile};
use std::path::{Path, PathBuf};

/// Where manifests come from.
#[derive(Clone, Debug)]
pub enum Input {
    /// A file, or a directory walked for `*.yaml`/`*.yml`.
    Path(PathBuf),
    /// Text already read (stdin), shown under `name`.
    Text { name: String, text: String },
}

/// One file to lint: a file on disk, read a part at a time, or text already read (stdin).
pub(crate) enum LintFile {
    /// A file, with its environment ([`environment_of`]).
    Path(PathBuf, String),
    Text(SourceFile),
}

/// The environment of a file found under the argument `given` (issue 41): the argument's first directory
/// below it holding the file (`manifests/staging` of `manifests/staging/web.yaml` under `manifests/`), or
/// the argument itself for a file directly in it; a file given by name is in its own directory's.
/// Environments matter only when two of them hold an object of one identity ([`super::lint`]).
fn environment_of(given: &Path, file: &Path) -> String {
    let below = file.strip_prefix(given).ok().and_then(|rest| {
        let mut components = rest.components();
        let first = components.next()?;
        components.next().map(|_| given.join(first))
    });
    below.unwrap_or_else(|| given.to_path_buf()).display().to_string()
}

impl LintFile {
    /// The environment the file's objects belong to (stdin's is its own).
    pub(crate) fn environment(&self) -> String {
        match self {
            LintFile::Path(_, environment) => environment.clone(),
            LintFile::Text(source) => source.path().display().to_string(),
        }
    }

    /// The path diagnostics name it by.
    pub(crate) fn path(&self) -> &Path {
        match self {
            LintFile::Path(path, _) => path,
            LintFile::Text(source) => source.path(),
        }
    }

    /// Hands `each` every document of the file; `false` when it could not be read (one diagnostic).
    pub(crate) fn each_document(&self, diagnostics: &mut Diagnostics, each: impl FnMut(Document)) -> bool {
        match self {
            LintFile::Path(path, _) => each_document_streamed(
                path,
                path.to_path_buf(),
                MAX_PACKAGE_FILE_BYTES,
                Naming::OrGenerated,
                diagnostics,
                each,
            ),
            LintFile::Text(source) => {
                each_document_named(source.clone(), Naming::OrGenerated, diagnostics, each);
                true
            }
        }
    }
}

/// Every file to lint: files as given, directories walked in path order.
pub(super) fn list(inputs: &[Input], diagnostics: &mut Diagnostics) -> Vec<LintFile> {
    let mut files = Vec::new();
    for input in inputs {
        match input {
            Input::Text { name, text } => files.push(LintFile::Text(SourceFile::new(name, text.clone()))),
            Input::Path(path) if path.is_dir() => {
                // `*.yaml`/`*.yml`, but not kustomize's own file.
                let (found, problems) = kix_compiler::fs::walk(path, |path| {
                    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
                        && path.file_stem().is_none_or(|s| s != "kustomization")
                });
                problems.into_iter().for_each(|d| diagnostics.push(d));
                files.extend(found.into_iter().map(|file| {
                    let environment = environment_of(path, &file);
                    LintFile::Path(file, environment)
                }));
            }
            Input::Path(path) => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                files.push(LintFile::Path(path.clone(), parent.display().to_string()))
            }
        }
    }
    files
}
