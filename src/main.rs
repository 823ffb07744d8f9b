//! The `kix` binary: parse the command line, run it, exit with its status.

/// A build allocates and frees millions of small YAML nodes (each cluster's objects are freed as soon as the
/// cluster is written); mimalloc's thread-local free lists make that a fraction of glibc malloc's cost
/// (issue 11, docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Before anything is allocated: a lint keeps transparent huge pages off for its whole run, and any
    // page touched before the command is known would already be a huge one (`kix::huge_pages`).
    kix::huge_pages(false);
    // `COMPLETE=<shell> kix ...`: the shell asking for completions (see `kix completions`).
    clap_complete::CompleteEnv::with_factory(kix::cli::command).complete();
    kix::run(kix::cli::parse())
}
