//! Staging a cluster compiled in part (issue 42) from the manifest's lines, in the state a rebuild after a
//! package change meets: every file of the spare's directory that the build keeps is one file with
//! `out/<cluster>`'s (the spare's section records it as `= <file>`), and the spare's directory is as
//! recorded. Then a kept file needs one `stat` and nothing else: its line of the next manifest's `out`
//! section is the previous `out` section's line, as it was written, and its line of the next spare section
//! is `= <file>`. Only the files of the instances compiled again go through [`crate::emit::spare::update`].
//!
//! This is what the general path ([`crate::emit::Staging::stage_in_part`]) concludes for such a file,
//! without the maps, names and formatted entries it makes for every file of the cluster (a fifth of a
//! fleet's package-change rebuild, issue 42): the spare's name of a kept file holds the recorded bytes when
//! its facts are the recorded ones of `out/`'s file (the same inode: `= <file>`); `out/<cluster>`'s
//! directory is as recorded, so its name is still that inode's, whose facts were just seen unchanged. Any
//! other state (a spare file of its own, facts that differ, a name missing or added, sections out of name
//! order) gives `None`, having changed nothing, and the general path stages the cluster.

use super::manifest::{Entries, Entry, Facts, Tree};
use super::manifest_read::ClusterRecord;
use super::next_manifest::{OutSection, StagedCluster};
use super::spare::{Updated, Wanted};
use crate::derive::InstancePlan;
use kix_diag::Diagnostic;
use std::path::Path;
// foldhash, not SipHash: each cluster's kept lines ask these maps of every file's name (a fleet's
// package-change rebuild, 101,000 names).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// One line of a spare's section: `= <file>` (`None`), or an entry of its own.
type SpareLine<'m> = (&'m str, Option<Entry>);

/// Stages `cluster` (whose sections of the manifest are `record`) into `dir` (the spare's directory of it)
/// as described above; `previous_dir` is `out/<cluster>`, found as recorded by the caller. `None` when the
/// state is not the one this path is for (nothing changed then), else the staged sections of the next
/// manifest.
pub(crate) fn stage(
    record: &ClusterRecord<'_>,
    cluster: &str,
    dir: &Path,
    previous_dir: &Path,
    fresh: &[&InstancePlan],
) -> Result<Option<StagedCluster>, Diagnostic> {
    let Some(out) = record.recorded_out_lines() else { return Ok(None) };
    let Some((spare_text, spare_directory)) = record.trusted_spare() else { return Ok(None) };
    // The spare's directory with the facts recorded with its names: no entry created, removed or renamed in
    // it since, so its names are its section's.
    if spare_directory.is_none() || Facts::of_directory(dir) != spare_directory {
        return Ok(None);
    }
    let Some(spare) = spare_lines(spare_text) else { return Ok(None) };
    // The same names, in the same (strictly ascending) order.
    let in_order = out.windows(2).all(|pair| pair[0].0 < pair[1].0);
    if !in_order || spare.len() != out.len() || spare.iter().zip(&out).any(|((name, _), (was, ..))| name != was) {
        return Ok(None);
    }
    let fresh: HashMap<String, &InstancePlan> =
        fresh.iter().map(|plan| (format!("{}.yaml", plan.name), *plan)).collect();
    if out.iter().filter(|(name, ..)| fresh.contains_key(*name)).count() != fresh.len() {
        return Ok(None);
    }
    // Every kept file: `= <file>` in the spare, and the spare's name a regular file with `out/`'s facts.
    let Some(directory) = open_directory(dir) else { return Ok(None) };
    for ((name, own), (_, entry, _)) in spare.iter().zip(&out) {
        if fresh.contains_key(*name) {
            continue;
        }
        if own.is_some() || facts_at(&directory, name) != Some(entry.facts) {
            return Ok(None);
        }
    }
    // The instances compiled again: brought up to date by the general rule, alone.
    let mut wanted = Vec::with_capacity(fresh.len());
    let (mut known, mut previous_known) = (Vec::new(), Vec::new());
    for ((name, own), (_, entry, _)) in spare.iter().zip(&out) {
        let Some(plan) = fresh.get(*name) else { continue };
        wanted.push(Wanted { name: name.to_string(), key: super::instance_key(cluster, plan), recorded: None });
        // The spare's entry (`out/`'s for `= <file>`), trusted as the general path trusts it.
        known.push((*name, own.unwrap_or(*entry)));
        previous_known.push((*name, *entry));
    }
    let known = Entries::settled_of(record.manifest().written(), &known);
    let previous_known = Entries::of_recorded(&previous_known);
    let render = |index: usize| fresh.get(&wanted[index].name).map(|plan| super::render_instance(cluster, plan));
    let render = |index: usize| render(index).unwrap_or_default();
    let names: Vec<&str> = wanted.iter().map(|wanted| wanted.name.as_str()).collect();
    let updated = super::spare::update_among(dir, &wanted, &render, &known, &names, previous_dir, previous_known)?;
    let Some(Updated { staged, previous }) = updated else { return Ok(None) };
    let staged: HashMap<&str, Entry> = staged.iter().map(|(name, entry)| (name.as_str(), *entry)).collect();
    let previous: HashMap<&str, Entry> = previous.iter().map(|(name, entry)| (name.as_str(), *entry)).collect();
    let (mut out_body, mut spare_body) =
        (Vec::with_capacity(out.len() * 140 + 128), Vec::with_capacity(out.len() * 16 + 128));
    for (name, _, line) in &out {
        let (new, old) = match fresh.contains_key(*name) {
            false => {
                out_body.extend_from_slice(line.as_bytes());
                out_body.push(b'\n');
                same_line(&mut spare_body, name);
                continue;
            }
            true => (staged.get(name), previous.get(name)),
        };
        if let Some(new) = new {
            super::manifest::format_entry(&mut out_body, name, new);
        }
        match old {
            Some(old) if Some(old) == new => same_line(&mut spare_body, name),
            Some(old) => super::manifest::format_entry(&mut spare_body, name, old),
            None => {}
        }
    }
    // The staged directory as the update left it; `out/<cluster>`'s with its facts while the spare's section
    // lists every entry of it (each kept name, each compiled one whose entry is still known).
    let staged_directory = Facts::of_directory(dir);
    let listed = fresh.keys().all(|name| previous.contains_key(name.as_str()));
    let now = Facts::of_directory(previous_dir);
    let previous_directory = (listed && record.manifest().directory_unchanged(cluster, now)).then_some(now).flatten();
    let section = |tree, body: Vec<u8>, directory| {
        // Lines copied from the manifest (read as UTF-8) and names and digits: always UTF-8.
        let mut body = String::from_utf8(body).unwrap_or_default();
        // The header put before the body where it is (moved up, not copied into a new allocation).
        body.insert_str(0, &super::manifest::section_header(tree, cluster, body.len(), directory));
        body
    };
    Ok(Some(StagedCluster {
        cluster: cluster.to_string(),
        out: OutSection::Formatted(section(Tree::Out, out_body, staged_directory)),
        spare: section(Tree::Spare, spare_body, previous_directory),
    }))
}

fn same_line(body: &mut Vec<u8>, name: &str) {
    body.extend_from_slice(b"= ");
    body.extend_from_slice(name.as_bytes());
    body.push(b'\n');
}

/// A spare's section line by line: `= <file>`, or an entry; `None` when one line is neither.
fn spare_lines(text: &str) -> Option<Vec<SpareLine<'_>>> {
    text.lines()
        .map(|line| match line.strip_prefix("= ") {
            Some(name) => super::manifest::is_file_name(name).then_some((name, None)),
            None => super::manifest::parse_entry(line).map(|(name, entry)| (name, Some(entry))),
        })
        .collect()
}

#[cfg(target_os = "linux")]
type Directory = rustix::fd::OwnedFd;

/// `dir` opened as a directory, not through a symlink.
#[cfg(target_os = "linux")]
fn open_directory(dir: &Path) -> Option<Directory> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::open(dir, flags, Mode::empty()).ok()
}

/// The facts of the regular file `name` in `directory` (a symlink is not followed).
#[cfg(target_os = "linux")]
fn facts_at(directory: &Directory, name: &str) -> Option<Facts> {
    use rustix::fs::{AtFlags, FileType};
    let stat = rustix::fs::statat(directory, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile).then(|| Facts::of_stat(&stat))
}

#[cfg(not(target_os = "linux"))]
type Directory = std::path::PathBuf;

#[cfg(not(target_os = "linux"))]
fn open_directory(dir: &Path) -> Option<Directory> {
    Some(dir.to_path_buf())
}

#[cfg(not(target_os = "linux"))]
fn facts_at(directory: &Directory, name: &str) -> Option<Facts> {
    Facts::of(&directory.join(name))
}
