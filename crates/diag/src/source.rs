//! Bounded reading of input files: one place that decides how much kix reads
//! and what counts as text, for packages, cluster files and snapshots alike.
//!
//! Errors are typed ([`ReadError`]); each caller turns them into a located
//! diagnostic naming its file.

use crate::Code;
use std::io::Read;
use std::path::Path;

/// Largest package or cluster file (16 MiB): far above any real manifest, far below memory trouble.
pub const MAX_PACKAGE_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Largest state snapshot or manifest the scheduler commands read (256 MiB): a 5,000-node cluster with its
/// pods fits; anything larger is refused rather than risking memory.
pub const MAX_SNAPSHOT_BYTES: u64 = 256 * 1024 * 1024;

/// Why a file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read file: {0}")]
    Io(#[from] std::io::Error),
    /// A directory, FIFO, socket or device: never opened (opening a FIFO blocks until a writer comes).
    #[error("not a regular file but {kind}; kix reads only regular files")]
    NotAFile { kind: &'static str },
    #[error("file is larger than kix's input limit of {} MiB", limit >> 20)]
    TooLarge { limit: u64 },
    /// The text up to the first invalid byte is kept so the diagnostic can show the line.
    #[error("file is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 { offset: usize, lossy: String },
}

impl ReadError {
    /// The diagnostic code this error is reported with.
    pub fn code(&self) -> Code {
        match self {
            ReadError::Io(_) => Code::Io,
            ReadError::TooLarge { .. } | ReadError::NotUtf8 { .. } | ReadError::NotAFile { .. } => Code::InputRefused,
        }
    }
}

/// What a path (followed through symlinks) is when it is not a regular file, in the words
/// diagnostics use (`a directory`, `a FIFO`); `None` for a regular file. Judged from the metadata,
/// without opening the file.
pub fn not_a_file(metadata: &std::fs::Metadata) -> Option<&'static str> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Some("a device");
        }
    }
    Some("not a file")
}

/// Reads a whole file as UTF-8 text, refusing files over `limit` bytes without reading past it, and
/// anything that is not a regular file (checked before opening it: a FIFO's open would block).
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    if let Some(kind) = not_a_file(&std::fs::metadata(path)?) {
        return Err(ReadError::NotAFile { kind });
    }
    let file = std::fs::File::open(path)?;
    // Sized from the file's length when it is known (and within the limit), so a big snapshot is
    // read into one allocation rather than a buffer doubled (and its pages touched) a dozen times.
    let known = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(known.min(limit) as usize + 1);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
        lossy: String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_encoding_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "héllo").unwrap();
        assert_eq!(read_text(&path, 6).unwrap(), "héllo");
        assert!(matches!(read_text(&path, 5), Err(ReadError::TooLarge { limit: 5 })));
        std::fs::write(&path, b"ok\n\xff").unwrap();
        let Err(ReadError::NotUtf8 { offset, .. }) = read_text(&path, 100) else { panic!() };
        assert_eq!(offset, 3);
        assert_eq!(read_text(&dir.path().join("missing"), 1).unwrap_err().code(), Code::Io);
        assert!(matches!(read_text(dir.path(), 100), Err(ReadError::NotAFile { kind: "a directory" })));
    }

    /// A FIFO is refused without being opened: the open would wait for a writer forever.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(matches!(read_text(&fifo, 100), Err(ReadError::NotAFile { kind: "a FIFO" })));
    }
}
