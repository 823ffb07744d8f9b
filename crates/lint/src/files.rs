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
    Path(PathBuf),
    Text(SourceFile),
}

impl LintFile {
    /// The path diagnostics name it by.
    pub(crate) fn path(&self) -> &Path {
        match self {
            LintFile::Path(path) => path,
            LintFile::Text(source) => source.path(),
        }
    }

    /// Hands `each` every document of the file; `false` when it could not be read (one diagnostic).
    pub(crate) fn each_document(&self, diagnostics: &mut Diagnostics, each: impl FnMut(Document)) -> bool {
        match self {
            LintFile::Path(path) => each_document_streamed(
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
                files.extend(found.into_iter().map(LintFile::Path));
            }
            Input::Path(path) => files.push(LintFile::Path(path.clone())),
        }
    }
    files
}
