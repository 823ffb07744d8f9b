//! Completion of names from the kix root: `--cluster` completes the cluster files under `clusters/`,
//! `--instance` the instances they declare. The shell calls back into kix while completing (clap's
//! dynamic completion, `COMPLETE=<shell> kix`), so the names are always those on disk now.
//!
//! A root that cannot be read completes nothing: completion must never print an error into a prompt.

use clap_complete::CompletionCandidate;
use kix_compiler::compile::find_root;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The cluster files' names (`clusters/<name>.toml`) that start with what is typed.
pub fn cluster_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    cluster_files(&find_root(Path::new(".")))
        .into_iter()
        .filter_map(|path| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|name| name.starts_with(typed.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}

/// Every instance name declared by a cluster file (`[[instances]] name = ...`) that starts with what is typed.
pub fn instance_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let mut names: Vec<String> = cluster_files(&find_root(Path::new(".")))
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .filter_map(|text| text.parse::<toml::Table>().ok())
        .flat_map(|table| {
            let instances = table.get("instances").and_then(|i| i.as_array()).cloned().unwrap_or_default();
            instances.into_iter().filter_map(|i| i.get("name").and_then(|n| n.as_str()).map(str::to_string))
        })
        .filter(|name| name.starts_with(typed.as_ref()))
        .collect();
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

fn cluster_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("clusters"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// The script that registers kix's completions with `shell` (it calls back into kix for every completion).
pub fn registration(shell: clap_complete::Shell) -> String {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let completer: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Elvish => &Elvish,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::PowerShell => &Powershell,
        _ => &Zsh,
    };
    let mut script = Vec::new();
    let _ = completer.write_registration("COMPLETE", "kix", "kix", "kix", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}
