//! What the fleet benches share: a scratch directory where the figures measure kix and not the disk.

use std::path::Path;

/// A scratch directory on tmpfs where there is one, so the figures measure kix and not the disk.
pub fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { tempfile::tempdir_in(shm).unwrap() } else { tempfile::tempdir().unwrap() }
}
