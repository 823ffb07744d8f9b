//! The `kix` binary: parse the command line, run it, exit with its status.

/// A build allocates and frees millions of small YAML nodes (each cluster's objects are freed as soon as the
/// cluster is written); mimalloc's thread-local free lists make that a fraction of glibc malloc's cost
/// (issue 11, docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Transparent huge pages off for this process (what mimalloc's `MIMALLOC_ALLOW_THP=0` does): mimalloc
    // asks for huge pages on its arenas, so every touched 2 MiB is resident and zeroed whole. Without
    // them a lint of a 15 MB file holds 67 MB instead of 80, a fleet's stream 86 MB instead of 116, at
    // the same speed (docs/performance.md, "Lint's memory, second step"). Refused (an old kernel) is harmless.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    // `COMPLETE=<shell> kix ...`: the shell asking for completions (see `kix completions`).
    clap_complete::CompleteEnv::with_factory(kix::cli::command).complete();
    kix::run(kix::cli::parse())
}
