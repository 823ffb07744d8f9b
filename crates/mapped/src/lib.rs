//! A text file kix only reads, mapped read-only ([`MappedText`]): the output manifest a rebuild reads
//! (47 MB on a 1,000-cluster fleet, issue 42), used where the kernel's page cache already holds it.
//!
//! **Why**: `read` copies a file into memory the process touches for the first time, and on kix's build
//! machine the kernel zeroing such memory was 13 % of the CPU of a package change's rebuild
//! (docs/performance.md, "a seventh step"): the 47 MB manifest read whole cost its copy and its zeroing
//! before the first cluster compiled. A mapping shares the page cache's pages, so nothing is copied or
//! zeroed.
//!
//! **What it assumes**: nothing truncates the file while it is mapped (a page past the new end would be a
//! `SIGBUS`). kix maps only files it writes beside another name and renames into place, under its build
//! lock, so no kix ever writes a mapped file; a user truncating kix's state file while a build reads it is
//! outside what a build can guard, as a user writing `out/` while the build runs is
//! (`crates/compiler/src/emit/manifest.rs`). Where mapping fails (an empty file, a file system that cannot
//! map, another OS), the file is read.

/// A file's text, valid UTF-8, mapped read-only (or read, where it cannot be mapped). Dereferences to
/// `str`; the mapping is removed when it is dropped.
pub struct MappedText {
    bytes: Bytes,
}

enum Bytes {
    /// `len` bytes at `address`, mapped `PROT_READ` and `MAP_PRIVATE` by [`MappedText::open`], and
    /// checked to be UTF-8 there.
    Mapped { address: std::ptr::NonNull<u8>, len: usize },
    /// The file read into memory, or nothing (an empty text).
    Read(Box<str>),
}

// SAFETY: the mapping is read-only and private to this value, which only ever hands out shared `&str`
// borrows of it; nothing writes through it, so reading it from several threads is as for a `Box<str>`.
#[allow(unsafe_code)]
unsafe impl Send for MappedText {}
// SAFETY: as for `Send`: shared reads of immutable bytes.
#[allow(unsafe_code)]
unsafe impl Sync for MappedText {}

impl Default for MappedText {
    fn default() -> Self {
        MappedText { bytes: Bytes::Read(Box::default()) }
    }
}

/// A text already in memory, held as it is (tests, and callers that made the text themselves).
impl From<String> for MappedText {
    fn from(text: String) -> Self {
        MappedText { bytes: Bytes::Read(text.into_boxed_str()) }
    }
}

impl std::fmt::Debug for MappedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if matches!(self.bytes, Bytes::Mapped { .. }) { "mapped" } else { "read" };
        write!(f, "MappedText({how}, {} bytes)", self.len())
    }
}

impl MappedText {
    /// The text of the file at `path`: mapped (pages populated at once, so reading it takes no page
    /// faults), or read when the file is empty or cannot be mapped. An error when it cannot be opened or
    /// read, or is not UTF-8.
    ///
    /// Only a regular file is read, its own name not a symlink: anything else (a FIFO, which a plain
    /// `open` would wait on for a writer, a device, a directory, a link) is an `InvalidInput` error at once.
    pub fn open(path: &std::path::Path) -> std::io::Result<MappedText> {
        let file = open_regular(path)?;
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
        }
        let len = usize::try_from(metadata.len()).map_err(std::io::Error::other)?;
        match map(&file, len) {
            Some(address) => {
                let text = MappedText { bytes: Bytes::Mapped { address, len } };
                // Checked once here; `deref` relies on it.
                std::str::from_utf8(text.raw()).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
                Ok(text)
            }
            None => {
                let mut text = String::with_capacity(len);
                std::io::Read::read_to_string(&mut &file, &mut text)?;
                Ok(MappedText { bytes: Bytes::Read(text.into_boxed_str()) })
            }
        }
    }

    fn raw(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Read(text) => text.as_bytes(),
            #[allow(unsafe_code)]
            // SAFETY: `address` is the start of a live mapping of `len` readable bytes (made in `map`,
            // removed only in `drop`), never written while this value lives, so the slice borrowed for
            // `&self` stays valid and unchanged.
            Bytes::Mapped { address, len } => unsafe { std::slice::from_raw_parts(address.as_ptr(), *len) },
        }
    }
}

impl std::ops::Deref for MappedText {
    type Target = str;

    fn deref(&self) -> &str {
        match &self.bytes {
            Bytes::Read(text) => text,
            #[allow(unsafe_code)]
            // SAFETY: a mapped text's bytes were checked to be UTF-8 in `open`, and never change.
            Bytes::Mapped { .. } => unsafe { std::str::from_utf8_unchecked(self.raw()) },
        }
    }
}

impl Drop for MappedText {
    fn drop(&mut self) {
        if let Bytes::Mapped { address, len } = self.bytes {
            #[allow(unsafe_code)]
            // SAFETY: the mapping `map` made, unmapped once, here; no borrow of it outlives `self`.
            let _ = unsafe { rustix::mm::munmap(address.as_ptr().cast(), len) };
        }
    }
}

/// `path` opened for reading without following a symlink in its last component and without waiting (a
/// FIFO opens at once, to be refused as not a regular file).
#[cfg(unix)]
fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

#[cfg(not(unix))]
fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// `file`'s first `len` bytes mapped read-only and private, its pages populated; `None` for an empty file
/// (a mapping cannot be empty) or one the kernel will not map.
#[cfg(unix)]
fn map(file: &std::fs::File, len: usize) -> Option<std::ptr::NonNull<u8>> {
    use rustix::mm::{MapFlags, ProtFlags};
    if len == 0 {
        return None;
    }
    #[allow(unsafe_code)]
    // SAFETY: a new mapping at an address the kernel picks, so no existing memory is replaced; read-only
    // and private, so nothing kix holds can write to the file through it.
    let address = unsafe {
        rustix::mm::mmap(std::ptr::null_mut(), len, ProtFlags::READ, MapFlags::PRIVATE | MapFlags::POPULATE, file, 0)
    };
    std::ptr::NonNull::new(address.ok()?.cast())
}

#[cfg(not(unix))]
fn map(_: &std::fs::File, _: usize) -> Option<std::ptr::NonNull<u8>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    /// A file's text is its bytes, mapped; an empty file is read (nothing to map), and its text is empty.
    #[test]
    fn a_mapped_text_is_the_files_text() {
        let (_dir, path) = file("héllo\nworld\n".as_bytes());
        let text = MappedText::open(&path).unwrap();
        assert_eq!(&*text, "héllo\nworld\n");
        assert!(format!("{text:?}").starts_with("MappedText(mapped"), "{text:?}");
        let (_dir, path) = file(b"");
        let text = MappedText::open(&path).unwrap();
        assert_eq!(&*text, "");
        assert_eq!(&*MappedText::default(), "");
    }

    /// Bytes that are not UTF-8 are an error, as `read_to_string` gives; so is a missing file.
    #[test]
    fn a_text_that_is_not_utf8_is_an_error() {
        let (_dir, path) = file(b"ok\xff\n");
        assert_eq!(MappedText::open(&path).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(MappedText::open(&path.with_file_name("missing")).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    }

    /// A FIFO is refused at once (a plain open would wait for a writer), and so are a symlink to a
    /// regular file and a directory.
    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_is_read() {
        let (dir, path) = file(b"text\n");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        for refused in [&fifo, &link, &dir.path().to_path_buf()] {
            let error = MappedText::open(refused).unwrap_err();
            assert!(
                error.kind() == std::io::ErrorKind::InvalidInput
                    || error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()),
                "{}: {error:?}",
                refused.display()
            );
        }
        assert_eq!(&*MappedText::open(&path).unwrap(), "text\n");
    }

    /// A mapped file replaced by rename (as kix writes its state) keeps its old text for the holder.
    #[test]
    fn a_file_renamed_over_keeps_the_mapped_text() {
        let (dir, path) = file(b"before\n");
        let text = MappedText::open(&path).unwrap();
        let next = dir.path().join("next");
        std::fs::write(&next, b"after, longer\n").unwrap();
        std::fs::rename(&next, &path).unwrap();
        assert_eq!(&*text, "before\n");
        let other = std::thread::spawn(move || text.len()).join().unwrap();
        assert_eq!(other, 7);
    }
}
