//! The system calls a package-change rebuild of a built fleet cannot avoid, timed alone (issue 42's
//! package-change row, docs/performance.md "the floor"): no compile, no render, no summary, no diagnostics.
//!
//! On a fleet `kix build` has built (its `.kix/.out.kix-spare` holding the previous build's files, as after
//! two builds), on as many threads as `kix build` uses and with the same division of work (a cluster's
//! directory to a core):
//!
//! 1. the manifest read whole (`kix build` reads it to know what each file of `out/` was);
//! 2. every file of the spare `stat`ed by name in its directory, without following a link (the trust rule
//!    that makes hand edits of `out/` safe: an edit in place moves only the file's own times);
//! 3. every `--changed-every`th file of each directory written over with bytes of its own size (`openat`,
//!    `fstat`, `pwrite`, `fstat`, `close`: what `emit::spare` does for a changed file);
//! 4. a file of the manifest's size written beside it and renamed over it (the next manifest).
//!
//! The bytes written are the files' own (read once before the clock starts), so the fleet stays as it
//! was. Prints each phase's wall time and the total. Compare with `kix build` after a package change that
//! reaches the same share of instances (`genfleet`'s packages are `i % 8`; pkg-1 is every 8th from i0001).
//!
//! usage: cargo run --release --example io_floor -- FLEET [--changed-every N] [--first M]

use rayon::prelude::*;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

struct Args {
    fleet: PathBuf,
    changed_every: usize,
    first: usize,
}

fn args() -> Result<Args, String> {
    let mut fleet = None;
    let (mut changed_every, mut first) = (8, 1);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or_else(|| format!("{name} wants a number"))
        };
        match arg.as_str() {
            "--changed-every" => changed_every = number("--changed-every")?.max(1),
            "--first" => first = number("--first")?,
            _ if fleet.is_none() => fleet = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument `{arg}`")),
        }
    }
    let fleet = fleet.ok_or("usage: io_floor FLEET [--changed-every N] [--first M]")?;
    Ok(Args { fleet, changed_every, first })
}

/// One cluster directory of the spare: its path, its files' names, and the bytes of those to write.
struct Directory {
    path: PathBuf,
    names: Vec<String>,
    written: Vec<(usize, Vec<u8>)>,
}

fn directories(spare: &Path, args: &Args) -> std::io::Result<Vec<Directory>> {
    let mut clusters: Vec<PathBuf> =
        std::fs::read_dir(spare)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    clusters.sort();
    clusters
        .into_iter()
        .filter(|path| path.is_dir())
        .map(|path| {
            let mut names: Vec<String> = std::fs::read_dir(&path)?
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<Result<_, _>>()?;
            names.sort();
            let written = (0..names.len())
                .filter(|i| i % args.changed_every == args.first % args.changed_every)
                .map(|i| Ok((i, std::fs::read(path.join(&names[i]))?)))
                .collect::<std::io::Result<_>>()?;
            Ok(Directory { path, names, written })
        })
        .collect()
}

/// The CPU time (user and system, every thread) this process has used, from `/proc/self/stat` (in the
/// kernel's clock ticks, 100 a second here: `getconf CLK_TCK`), 0 where it cannot be read.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's name (which is in parentheses and may hold spaces): state is the
    // first, utime the 12th, stime the 13th.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("io_floor: {message}");
            std::process::exit(2);
        }
    };
    let state = args.fleet.join(".kix");
    let (manifest, spare) = (state.join(".out.kix-manifest"), state.join(".out.kix-spare"));
    let directories = match directories(&spare, &args) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("io_floor: {}: {e} (build the fleet twice first)", spare.display());
            std::process::exit(1);
        }
    };
    let files: usize = directories.iter().map(|d| d.names.len()).sum();
    let changed: usize = directories.iter().map(|d| d.written.len()).sum();

    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    let text = std::fs::read_to_string(&manifest).expect("the manifest is readable");
    let read = start.elapsed();

    let stat_start = Instant::now();
    let stated: usize = directories
        .par_iter()
        .map(|d| {
            let dir = rustix::fs::open(&d.path, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .expect("a directory of the spare opens");
            d.names
                .iter()
                .filter(|name| rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok())
                .count()
        })
        .sum();
    let stat = stat_start.elapsed();

    let write_start = Instant::now();
    directories.par_iter().for_each(|d| {
        let dir = rustix::fs::open(&d.path, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .expect("a directory of the spare opens");
        for (index, bytes) in &d.written {
            let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&dir, d.names[*index].as_str(), flags, Mode::empty()).expect("opens");
            let file = std::fs::File::from(fd);
            let before = file.metadata().expect("fstat");
            file.write_all_at(bytes, 0).expect("written");
            if before.len() > bytes.len() as u64 {
                file.set_len(bytes.len() as u64).expect("truncated");
            }
            let _ = file.metadata().expect("fstat");
        }
    });
    let write = write_start.elapsed();

    let next_start = Instant::now();
    let next = manifest.with_extension(format!("floor.{}", std::process::id()));
    let mut file = std::fs::File::create(&next).expect("the next manifest is created");
    file.write_all(text.as_bytes()).expect("the next manifest is written");
    drop(file);
    std::fs::rename(&next, &manifest).expect("the next manifest is put in place");
    let next_manifest = next_start.elapsed();
    drop(text);
    let total = start.elapsed();
    let cpu = cpu_seconds() - cpu_start;

    println!(
        "{} files in {} directories, {stated} stated, {changed} written; manifest read {:.3} s, stat {:.3} s, write {:.3} s, next manifest {:.3} s; total {:.3} s, CPU {cpu:.2} s",
        files,
        directories.len(),
        read.as_secs_f64(),
        stat.as_secs_f64(),
        write.as_secs_f64(),
        next_manifest.as_secs_f64(),
        total.as_secs_f64()
    );
}
