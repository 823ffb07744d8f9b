//! The documents of one file read a part at a time, for `kix lint`, whose inputs may be far larger
//! than what it keeps of them: the file's text is never held whole, so a lint's memory is what its
//! rules keep, not the size of its largest file (issue 20).
//!
//! The file is read twice, from the page cache:
//! 1. once through, checking what makes the loader refuse a whole file (a size over the limit, a
//!    byte that is not UTF-8, a character YAML does not allow), wherever it is: any of them, and the
//!    file is read whole and parsed as every other file is ([`super::documents::each_document_named`]),
//!    so the one diagnostic it gets is the same;
//! 2. then a line at a time, cut into windows at each line that starts a document (`---` at the
//!    start of a line, then a space, a tab or the line's end). YAML allows such a line nowhere but
//!    between documents (1.2, `c-forbidden`), so each window is one or more whole documents, and
//!    parsed alone it gives what the whole stream gives: the same values, and every location at the
//!    same offset in the file ([`SourceFile::window`]). Should a window not read as YAML, the file is
//!    parsed whole after all, its documents handed on only from where the windows stopped, and the
//!    windows' own diagnostics are dropped for the whole parse's: what the file gets is, again, what
//!    the whole stream gives.
//!
//! The lines a diagnostic shows are read from the file again when it is rendered
//! ([`SourceFile::on_disk`]).

use super::documents::{Document, Naming, each_document_in, each_document_named};
use kix_diag::source::not_a_file;
use kix_diag::{Diagnostics, SourceFile};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// Every document of the file at `path` (shown as `display`, at most `limit` bytes), in order, each
/// as soon as it is read, with the problems [`each_document_named`] reports for the file read whole.
/// `false` when the file could not be read at all (one diagnostic says why).
pub fn each_document_streamed(
    path: &Path,
    display: PathBuf,
    limit: u64,
    naming: Naming,
    diagnostics: &mut Diagnostics,
    mut each: impl FnMut(Document),
) -> bool {
    if !plain_text(path, limit) {
        return whole(path, display, limit, naming, 0, diagnostics, each);
    }
    let file = SourceFile::on_disk(display.clone(), path);
    let mut windows = Diagnostics::default();
    let mut handed_on = 0usize;
    let read = windows_of(path, limit, |text, offset| {
        let window = file.window(text, offset);
        each_document_in(window, naming, &mut windows, |document| {
            handed_on = document.byte_range().end;
            each(document);
        })
    });
    match read {
        Ok(()) => {
            diagnostics.extend(windows);
            true
        }
        // A window that is not YAML, or a file that changed under the second read.
        Err(Stopped) => whole(path, display, limit, naming, handed_on, diagnostics, each),
    }
}

/// The file read whole and parsed as one stream, its documents handed on from byte `from` on.
fn whole(
    path: &Path,
    display: PathBuf,
    limit: u64,
    naming: Naming,
    from: usize,
    diagnostics: &mut Diagnostics,
    mut each: impl FnMut(Document),
) -> bool {
    match crate::fs::read_source(path, display, limit) {
        Ok(source) => {
            each_document_named(source, naming, diagnostics, |document| {
                if document.byte_range().start >= from {
                    each(document);
                }
            });
            true
        }
        Err(problem) => {
            diagnostics.push(problem);
            false
        }
    }
}

/// Whether the file is a regular file of at most `limit` bytes of UTF-8 text with no character YAML
/// refuses: what reading it whole would find nothing wrong with before parsing. Read in blocks,
/// never whole.
fn plain_text(path: &Path, limit: u64) -> bool {
    // Judged from the metadata first: opening a FIFO would wait for a writer.
    match std::fs::metadata(path) {
        Ok(metadata) if not_a_file(&metadata).is_none() && metadata.len() <= limit => {}
        _ => return false,
    }
    let Ok(mut file) = std::fs::File::open(path) else { return false };
    let mut block = vec![0u8; 64 * 1024];
    // The bytes read but not yet checked: a character may be cut by the end of a block.
    let mut pending: Vec<u8> = Vec::with_capacity(block.len() + 4);
    let mut total = 0u64;
    loop {
        let read = match file.read(&mut block) {
            Ok(0) => return pending.is_empty(),
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        total += read as u64;
        if total > limit {
            return false;
        }
        pending.extend_from_slice(&block[..read]);
        let valid = match std::str::from_utf8(&pending) {
            Ok(text) => text.len(),
            // Only a character cut at the end of what was read may still be completed.
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => return false,
        };
        match std::str::from_utf8(&pending[..valid]) {
            Ok(text) if kix_yaml::free_of_control_characters(text) => {}
            _ => return false,
        }
        pending.drain(..valid);
    }
}

/// Reading the windows stopped: a window was not YAML, or the file is no longer what was checked.
struct Stopped;

/// Hands `each` the file's text a window at a time (the text and its offset in the file), cut before
/// every line that starts a document; `each` says whether the window read as YAML.
fn windows_of(path: &Path, limit: u64, mut each: impl FnMut(String, usize) -> bool) -> Result<(), Stopped> {
    let file = std::fs::File::open(path).map_err(|_| Stopped)?;
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, file);
    let mut window = String::new();
    let (mut window_start, mut offset) = (0usize, 0usize);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(|_| Stopped)?;
        let ends_window = (read == 0 || starts_document(&line)) && !window.is_empty();
        if ends_window && !each(std::mem::take(&mut window), window_start) {
            return Err(Stopped);
        }
        if read == 0 {
            return Ok(());
        }
        if window.is_empty() {
            window_start = offset;
        }
        window.push_str(std::str::from_utf8(&line).map_err(|_| Stopped)?);
        offset += read;
        if offset as u64 > limit {
            return Err(Stopped);
        }
    }
}

/// Whether a line is a document start marker: `---` at its start, then a space, a tab or its end.
fn starts_document(line: &[u8]) -> bool {
    line.starts_with(b"---") && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

#[cfg(test)]
mod tests;
