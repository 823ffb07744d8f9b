//! Emit: serialise compiled instances and replace the output directory safely.
//!
//! Each instance becomes one multi-document YAML file and each cluster a
//! directory with a `kustomization.yaml` listing them; cluster-scoped objects
//! that several instances emit identically are written once, to
//! `_shared.yaml` (listed first). Paths are built only
//! from validated names (DNS-1123 labels). Output is staged beside `out/` (a
//! full build in the spare, [`crate::emit::spare`]) and swapped into place only after
//! everything was written, so a failure leaves the previous `out/` as it was; a
//! cluster's directory is replaced whole, so files of removed instances do not
//! linger.
//!
//! One file per step: [`render`] (an instance's file, `_shared.yaml`, the kustomization, the
//! stream), [`compare`] (`build --check`), [`staging`] (the staged directory and its swap),
//! [`spare`] and [`manifest`] (what the previous builds left, and what vouches for it), [`manifest_read`]
//! (the manifest as a build reads it, a cluster's sections when it is staged),
//! [`next_manifest`] (the manifest a build writes as it stages), `kept_lines` (a cluster compiled in part
//! staged from the manifest's lines), [`stream`] (`--stdout`'s spool),
//! [`outdir`] (the output directory's guards), `files` (reading what kix wrote without following
//! links).

pub mod compare;
mod files;
mod kept_lines;
pub mod manifest;
pub mod manifest_read;
pub mod next_manifest;
pub mod outdir;
pub mod render;
pub mod spare;
pub mod staging;
pub mod stream;

pub use compare::{Difference, compare_cluster, compare_removed};
pub use render::{
    instance_key, render_cluster, render_instance, render_kustomization, render_shared, render_stream,
    render_stream_part,
};
pub use staging::{Staging, check_destination};

#[cfg(all(test, unix))]
mod tests;
