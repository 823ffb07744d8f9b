//! A cluster compiled in part (issue 42): after a package changed, only the instances that run it are
//! resolved and derived again; the rest of the cluster is kept as the previous build recorded it in parts
//! ([`super::parts`]), when what they share with it is unchanged.
//!
//! An instance reads, besides its cluster file's settings and its own entry, only the versions of the
//! package it names (`crate::resolve`, R13), so an instance whose own key ([`super::Inputs::own_key`]) and
//! cluster file (the frame key) are the recorded ones would compile to what was recorded: its file, its
//! findings, its line of the summary. The instances whose own key changed are compiled alone, against the
//! cluster's settings, and the rest of the record is kept only when all of these hold (else the whole
//! cluster is compiled, as before):
//! - none of them is in a group across instances (whose totals read every member);
//! - each one's footprint (`super::footprint`: what the cross-instance checks, `_shared.yaml`,
//!   `_admission.yaml` and the room check read of it) is the recorded one, so the checks across instances
//!   and the cluster's own files would say what they said;
//! - none of the recorded findings of those checks points into a package that is not one of the unchanged
//!   ones (a changed file's text may have moved under it);
//! - the findings about the cluster file itself come out as recorded (nothing of another instance hides
//!   among them), no instance compiled alone reports anything but about itself, and nothing is an error;
//! - the files of `out/<cluster>` kept are still those recorded (`crate::emit::Staging::stage_in_part`).
//!
//! The compile's output is then the same as a clean build's: the instances compiled alone give what they
//! would give in the whole cluster (their own stages read nothing of another instance), and what the
//! others and the cluster's own parts would give is what the record says, by their unchanged inputs.

use super::Inputs;
use super::footprint;
use super::parts::{self, Writer};
use crate::derive::{self, ClusterPlan, InstancePlan, Shapes};
use crate::load::ClusterSource;
use crate::resolve::{self, Acknowledged, Cluster, Packages};
use kix_diag::{Diagnostic, Diagnostics};
// foldhash, not SipHash: these sets and maps are made for each cluster of a fleet's rebuild, keyed by short
// names kix reads from its own record and cluster files.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
use std::path::Path;

/// What a cluster compiled in part came to.
pub(crate) struct InPart<K> {
    /// All its findings: the cluster file's and the compiled instances' as found, the rest as recorded.
    pub found: Diagnostics,
    pub kept: K,
    /// Its inputs section for the next build.
    pub section: String,
    /// How staging its directory went.
    pub staged: Result<(), Diagnostic>,
}

/// What compiling in part needs of the build.
pub(crate) struct Context<'a, K> {
    pub inputs: &'a Inputs,
    pub packages: &'a Packages,
    pub shapes: &'a Shapes,
    pub staging: &'a crate::emit::Staging,
    /// What is kept of a cluster from its record (`None`: not what this build keeps).
    pub kept_of: &'a (dyn Fn(String, Option<&str>) -> Option<K> + Sync),
    /// What is kept of the cluster, updated for an instance compiled again: whether that changed it (`None`:
    /// nothing is kept to update).
    pub refresh: &'a (dyn Fn(&mut K, &InstancePlan) -> Option<bool> + Sync),
    /// What of the kept record the inputs section keeps.
    pub recorded_of: fn(&K) -> Option<String>,
}

/// The index of the instance (of `names`) a finding is about, plus one; 0 for one about no instance of them.
fn part_of(names: &HashMap<&str, usize>, diagnostic: &Diagnostic) -> usize {
    (diagnostic.subject.instance.as_deref()).and_then(|name| names.get(name)).map_or(0, |index| index + 1)
}

/// Sets aside and counts a part's acknowledged warnings.
fn acknowledged(mut found: Diagnostics, allowed: &Acknowledged) -> Diagnostics {
    found.acknowledge(|d| allowed.contains(d));
    found.count_acknowledged();
    found
}

/// What a cluster's whole compile records in parts: the findings of its resolve (`resolved`: the cluster
/// file's and each instance's), of its later stages per instance (`derived`: those about no instance go with
/// the checks across instances) and of the checks across instances (`across`), each part's acknowledged
/// warnings set aside and counted. Returns every finding left, and the record's body.
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    cluster: &Cluster,
    (resolved, derived, across): (Diagnostics, Diagnostics, Diagnostics),
    frame_key: u128,
    own_keys: &[u128],
    footprints: &[u128],
    moved: &[Vec<usize>],
    allowed: &Acknowledged,
) -> (Diagnostics, (String, usize)) {
    let names: HashMap<&str, usize> =
        cluster.instances.iter().enumerate().map(|(index, instance)| (instance.name.as_str(), index)).collect();
    let parts = cluster.instances.len() + 1;
    let mut resolved = resolved.part(parts, |d| part_of(&names, d)).into_iter();
    let mut derived = derived.part(parts, |d| part_of(&names, d)).into_iter();
    let frame = acknowledged(resolved.next().unwrap_or_default(), allowed);
    let mut cross = across;
    cross.extend(derived.next().unwrap_or_default());
    let cross = acknowledged(cross, allowed);
    let mut writer = Writer::default();
    writer.frame(frame_key, frame.acknowledged_count());
    writer.findings(&frame);
    writer.cross(cross.acknowledged_count());
    writer.findings(&cross);
    let mut all = frame;
    all.extend(cross);
    for (index, (own, later)) in resolved.zip(derived).enumerate() {
        let mut own = own;
        own.extend(later);
        let own = acknowledged(own, allowed);
        let instance = &cluster.instances[index];
        let (package, acknowledged) = (&instance.package.name, own.acknowledged_count());
        writer.instance(&instance.name, package, own_keys[index], footprints[index], acknowledged, &moved[index]);
        writer.findings(&own);
        all.extend(own);
    }
    (all, writer.finish())
}

/// Each instance's footprint from its objects' part (`objects`, taken before any was shared), its plan and
/// its admission guards (`guards`, per instance; empty without `[admission]`).
pub(crate) fn footprints(
    cluster: &Cluster,
    objects: &[u128],
    plans: &[InstancePlan],
    guards: &[Vec<crate::admission::Guard>],
) -> Vec<u128> {
    (cluster.instances.iter().zip(plans).enumerate())
        .map(|(index, (instance, plan))| {
            let guards: Vec<&crate::admission::Guard> = guards.get(index).into_iter().flatten().collect();
            footprint::footprint(instance, objects[index], plan, &guards)
        })
        .collect()
}

/// Compiles `source`'s cluster in part against its recorded `section`, for the inputs `key`; `None` when
/// it cannot be (the module's conditions), and the caller compiles the whole cluster.
pub(crate) fn compile<K>(
    context: &Context<'_, K>,
    source: &ClusterSource,
    section: &str,
    key: u128,
) -> Option<InPart<K>> {
    let (parts, kept_text) = Inputs::recorded_parts(section)?;
    let inputs = context.inputs;
    if inputs.frame_key(source) != parts.frame_key {
        return None;
    }
    // Which instances run a package that changed, by their own keys: the record names each entry's package,
    // and the cluster file is the one recorded (its frame key).
    let mut own_of: HashMap<&str, (u128, String)> = HashMap::default();
    let mut own_keys: Vec<Option<u128>> = Vec::with_capacity(parts.instances.len());
    for part in &parts.instances {
        let (own_key, hex) = own_of.entry(part.package).or_insert_with(|| {
            let own_key = inputs.own_key(part.package);
            (own_key, format!("{own_key:032x}"))
        });
        own_keys.push((hex.as_str() != part.own_key).then_some(*own_key));
    }
    let changed: HashSet<&str> =
        (parts.instances.iter().zip(&own_keys)).filter(|(_, own)| own.is_some()).map(|(part, _)| part.name).collect();
    let changed_packages: HashSet<&str> =
        parts.instances.iter().filter(|part| changed.contains(part.name)).map(|part| part.package).collect();
    let recorded_of_fresh: Vec<&parts::InstancePart<'_>> =
        parts.instances.iter().filter(|part| changed.contains(part.name)).collect();
    let cluster_file = source.source.path().to_path_buf();

    // The changed instances compiled alone, against the cluster's settings: the file read as if the other
    // entries were blanked (only the lines `kept_entries` keeps, where they are), or whole where it cannot be
    // cut.
    let mut found = Diagnostics::default();
    let wanted: Vec<bool> = own_keys.iter().map(Option::is_some).collect();
    let file = match kept_entries(source.source.text(), &wanted) {
        Some(kept) => ClusterSource { name: source.name.clone(), source: source.source.clone() }
            .parse_regions(&kept, &mut found)?,
        None => ClusterSource { name: source.name.clone(), source: source.source.clone() }.parse(&mut found)?,
    };
    if found.has_errors() {
        return None;
    }
    for raw in &file.raw.instances {
        let name = raw.name.get_ref().as_str();
        if changed.contains(name) && (raw.group.is_some() || !changed_packages.contains(raw.package.get_ref().as_str()))
        {
            return None;
        }
    }
    let mut across = Diagnostics::default();
    let only = |name: &str| changed.contains(name);
    let cluster =
        resolve::resolve_cluster_in_parts(file, context.packages, None, Some(&only), &mut found, &mut across)?;
    let fresh_names: Vec<&str> = cluster.instances.iter().map(|instance| instance.name.as_str()).collect();
    let expected: Vec<&str> = recorded_of_fresh.iter().map(|part| part.name).collect();
    if found.has_errors() || !across.is_empty() || fresh_names != expected {
        return None;
    }
    let mut derived = Diagnostics::default();
    let mut plans = derive::derive_instances(&cluster, context.shapes, &mut derived);
    let objects: Vec<u128> = plans.iter().map(footprint::objects).collect();
    let mut moved_of_fresh = Vec::with_capacity(plans.len());
    for (plan, part) in plans.iter_mut().zip(&recorded_of_fresh) {
        let moved = part.moved()?;
        if moved.iter().any(|&index| index >= plan.planned().len()) {
            return None;
        }
        if !moved.is_empty() {
            plan.retain_objects(|index| !moved.contains(&index));
        }
        moved_of_fresh.push(moved);
    }
    let guards: Vec<Vec<crate::admission::Guard>> = match cluster.admission {
        Some(_) => (cluster.instances.iter().zip(&plans))
            .map(|(instance, plan)| crate::admission::guards_of(&cluster.name, instance, plan, &mut derived))
            .collect(),
        None => Vec::new(),
    };
    let footprints = footprints(&cluster, &objects, &plans, &guards);
    if footprints.iter().zip(&recorded_of_fresh).any(|(now, part)| Some(*now) != part.footprint()) {
        return None;
    }
    let plan = ClusterPlan::of(&cluster, plans, Vec::new());
    crate::sizing::check_instances(&cluster, &plan, &mut derived);
    if derived.has_errors() {
        return None;
    }

    // The findings: the cluster file's found again (and as recorded), the compiled instances' found, the rest
    // replayed.
    let allowed = Acknowledged::of_cluster(&cluster);
    let names: HashMap<&str, usize> = fresh_names.iter().enumerate().map(|(index, name)| (*name, index)).collect();
    let count = cluster.instances.len() + 1;
    let mut resolved = found.part(count, |d| part_of(&names, d)).into_iter();
    let mut later = derived.part(count, |d| part_of(&names, d)).into_iter();
    if !later.next().unwrap_or_default().is_empty() {
        return None;
    }
    let frame = acknowledged(resolved.next().unwrap_or_default(), &allowed);
    let mut frame_lines: Vec<String> = frame.iter().map(Diagnostic::record).collect();
    let mut recorded_frame: Vec<&str> = parts.frame.findings.clone();
    frame_lines.sort_unstable();
    recorded_frame.sort_unstable();
    if frame_lines != recorded_frame || frame.acknowledged_count() != parts.frame.acknowledged {
        return None;
    }
    let cross = inputs.replay_lines(&parts.cross.findings, parts.cross.acknowledged)?;
    // The places a kept finding may point into: the cluster file, and the directories of the versions of a
    // package some kept instance names (its own key, unchanged, hashes every file of them with its path).
    let kept_packages: HashSet<&str> =
        parts.instances.iter().filter(|part| !changed.contains(part.name)).map(|part| part.package).collect();
    let unchanged_dirs: Vec<&Path> = (context.packages.valid.iter())
        .filter(|package| kept_packages.contains(package.name.as_str()))
        .map(|package| package.dir.as_path())
        .collect();
    let kept_place = |path: &Path| path == cluster_file || unchanged_dirs.iter().any(|dir| path.starts_with(dir));
    let points_into_change = cross.iter().any(|d| {
        let places = d.location().into_iter().chain(d.secondary().map(|(location, _)| location));
        places.map(|location| location.path()).any(|path| !kept_place(path))
    });
    if points_into_change {
        return None;
    }
    let mut fresh_own: Vec<Diagnostics> = resolved
        .zip(later)
        .map(|(mut own, later)| {
            own.extend(later);
            acknowledged(own, &allowed)
        })
        .collect::<Vec<_>>();
    fresh_own.reverse();

    let mut kept = (context.kept_of)(source.name.clone(), kept_text)?;
    // Kept whole when no instance compiled again changed it: its record is then the one read (the record is
    // a function of what it describes), written back as it was instead of anew.
    let mut as_recorded = kept_text.is_some() && !plan.instances.is_empty();
    for plan in &plan.instances {
        as_recorded &= (context.refresh)(&mut kept, plan) == Some(false);
    }
    // Room for the record it replaces and its summary (`section_in_parts` adds them to the body).
    let mut writer = Writer::with_capacity(section.len() + 64);
    writer.frame(parts.frame_key, frame.acknowledged_count());
    writer.findings(&frame);
    writer.cross(parts.cross.acknowledged);
    writer.lines(&parts.cross.findings);
    let mut all = frame;
    all.extend(cross);
    let mut fresh_index = 0;
    // The kept instances' findings, replayed together (one pass, their files looked up once).
    let (mut kept_lines, mut kept_acknowledged) = (Vec::new(), 0);
    for (part, own_key) in parts.instances.iter().zip(&own_keys) {
        match own_key {
            Some(own_key) => {
                let own = fresh_own.pop()?;
                let (footprint, moved) = (footprints[fresh_index], &moved_of_fresh[fresh_index]);
                writer.instance(part.name, part.package, *own_key, footprint, own.acknowledged_count(), moved);
                writer.findings(&own);
                all.extend(own);
                fresh_index += 1;
            }
            None => {
                writer.recorded_instance(part);
                kept_lines.extend_from_slice(&part.block.findings);
                kept_acknowledged += part.block.acknowledged;
            }
        }
    }
    all.extend(inputs.replay_lines(&kept_lines, kept_acknowledged)?);
    let recorded = match as_recorded {
        true => kept_text.map(std::borrow::Cow::Borrowed),
        false => (context.recorded_of)(&kept).map(std::borrow::Cow::Owned),
    };
    let section = Inputs::section_in_parts(key, writer.finish(), recorded.as_deref());
    let fresh: Vec<&InstancePlan> = plan.instances.iter().collect();
    let staged = match context.staging.stage_in_part(&source.name, &fresh) {
        Ok(true) => Ok(()),
        Ok(false) => return None,
        Err(failed) => Err(failed),
    };
    Some(InPart { found: all, kept, section, staged })
}

/// `text` (a cluster file) with every `[[instances]]` table but the `wanted` ones (by position) blanked: each
/// of their bytes but line breaks made a space, so every span still points where it did in the file (what
/// the compile reads the file as; its tests' view of [`kept_entries`]).
#[cfg(test)]
fn only_entries(text: &str, wanted: &[bool]) -> Option<String> {
    Some(crate::load::blanked(text, &kept_entries(text, wanted)?))
}

/// The ranges of `text` (a cluster file) left as they are when every `[[instances]]` table but the `wanted`
/// ones (by position) is left out: whole lines, in order, each left-out table from its header to the next
/// header. `None` when the file is not cut that simply: a multi-line string (whose lines could look like
/// table headers), an entry's sub-table, or not one `[[instances]]` header per wanted flag.
fn kept_entries(text: &str, wanted: &[bool]) -> Option<Vec<std::ops::Range<usize>>> {
    if has_triple_quote(text, "\"\"\"") || has_triple_quote(text, "\'\'\'") {
        return None;
    }
    let source = text.as_bytes();
    // Each unwanted entry, from its header to the next one.
    let mut left_out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut entry: Option<usize> = None;
    let mut entry_start = 0;
    let mut seen = 0;
    let mut at = 0;
    while at < source.len() {
        let end = memchr::memchr(b'\n', &source[at..]).map_or(source.len(), |found| at + found + 1);
        // A line whose first character is ASCII, neither a blank nor `[`, is no header: most of a cluster
        // file's lines, passed over without trimming them.
        let first = source[at];
        let maybe_header = first == b'[' || first >= 0x80 || char::from(first).is_whitespace();
        let trimmed = if maybe_header { text[at..end].trim_start() } else { "" };
        if trimmed.starts_with('[') {
            if let Some(index) = entry {
                if !*wanted.get(index)? {
                    left_out.push(entry_start..at);
                }
            }
            let header = trimmed.split('#').next().unwrap_or_default().trim_end();
            if header == "[[instances]]" {
                entry = Some(seen);
                seen += 1;
            } else if header.replace(' ', "").starts_with("[[instances")
                || header.replace(' ', "").starts_with("[instances")
            {
                return None;
            } else {
                entry = None;
            }
            entry_start = at;
        }
        at = end;
    }
    if let Some(index) = entry {
        if !*wanted.get(index)? {
            left_out.push(entry_start..source.len());
        }
    }
    if seen != wanted.len() {
        return None;
    }
    // What is left between the ranges left out (each starts at a header's line, so all are whole lines).
    let mut kept = Vec::with_capacity(left_out.len() + 1);
    let mut from = 0;
    for range in left_out {
        if range.start > from {
            kept.push(from..range.start);
        }
        from = range.end;
    }
    if from < source.len() {
        kept.push(from..source.len());
    }
    Some(kept)
}

/// Whether `text` holds `delimiter` (a TOML multi-line string's, `"""` or `'''`).
fn has_triple_quote(text: &str, delimiter: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), delimiter.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use super::only_entries;
    use proptest::prelude::*;

    /// `only_entries` as it was written first, a line at a time: the reference the faster one must equal.
    fn only_entries_by_line(text: &str, wanted: &[bool]) -> Option<String> {
        if text.contains("\"\"\"") || text.contains("\'\'\'") {
            return None;
        }
        let mut bytes = text.as_bytes().to_vec();
        let (mut entry, mut seen, mut at) = (None, 0, 0);
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                let header = trimmed.split('#').next().unwrap_or_default().trim_end();
                if header == "[[instances]]" {
                    entry = Some(seen);
                    seen += 1;
                } else if header.replace(' ', "").starts_with("[[instances")
                    || header.replace(' ', "").starts_with("[instances")
                {
                    return None;
                } else {
                    entry = None;
                }
            }
            if let Some(index) = entry {
                if !*wanted.get(index)? {
                    for byte in &mut bytes[at..at + line.len()] {
                        if *byte != b'\n' {
                            *byte = b' ';
                        }
                    }
                }
            }
            at += line.len();
        }
        if seen != wanted.len() {
            return None;
        }
        String::from_utf8(bytes).ok()
    }

    proptest! {
        /// On files of headers (indented, commented, by Unicode blanks, of sub-tables), keys, blank lines and
        /// `\r\n` or no final line break, the cut equals the line-at-a-time reference's.
        #[test]
        fn the_cut_is_the_line_by_line_ones(
            lines in proptest::collection::vec(prop_oneof![
                Just("[[instances]]"), Just("  [[instances]] # an entry"), Just("\t[[instances]]"),
                Just("\u{2028}[[instances]]"), Just("\u{a0}[capabilities]"), Just("\u{b}[capabilities]"),
                Just("[capabilities]"), Just("[instances.x]"), Just("[ [instances]]"), Just("name = \"a\""),
                Just("package = \"é\"  # [[instances]]"), Just(""), Just("   "), Just("zones = [\"a\"]"),
                Just("  [\"b\"]"), Just("x = \"\""),
            ], 0..24),
            breaks in proptest::collection::vec(prop_oneof![Just("\n"), Just("\r\n")], 24),
            final_break in any::<bool>(),
            wanted in proptest::collection::vec(any::<bool>(), 0..8),
        ) {
            let mut text = String::new();
            for (index, line) in lines.iter().enumerate() {
                text.push_str(line);
                if index + 1 < lines.len() || final_break {
                    text.push_str(breaks[index]);
                }
            }
            prop_assert_eq!(only_entries(&text, &wanted), only_entries_by_line(&text, &wanted));
            let count = text.lines().filter(|line| line.trim().split('#').next().unwrap_or_default().trim_end() == "[[instances]]").count();
            let all = vec![false; count];
            prop_assert_eq!(only_entries(&text, &all), only_entries_by_line(&text, &all));
        }
    }

    #[test]
    fn only_the_wanted_entries_are_left_in_place() {
        let text = "availability = \"zone\"\n\n[[instances]]\nname = \"a\"\npackage = \"web\"\n\n[[instances]] # b\nname = \"b\"\r\npackage = \"db\"\n[capabilities]\nmultiNode = true\n";
        let cut = only_entries(text, &[false, true]).expect("cut");
        assert_eq!(cut.len(), text.len());
        assert!(!cut.contains("\"a\"") && cut.contains("name = \"b\"") && cut.contains("[capabilities]"), "{cut}");
        assert_eq!(cut.lines().count(), text.lines().count());
        let first = only_entries(text, &[true, false]).expect("cut");
        assert!(first.contains("name = \"a\"") && !first.contains("\"db\"") && first.contains("multiNode = true"));
        // Not cut: another count of entries, a multi-line string, an entry's sub-table.
        assert_eq!(only_entries(text, &[true]), None);
        assert_eq!(only_entries(&text.replace("\"web\"", "\"\"\"web\"\"\""), &[true, false]), None);
        assert_eq!(only_entries(&text.replace("\"web\"", "\'\'\'web\'\'\'"), &[true, false]), None);
        // Two quotes in a row (an empty string) are not a multi-line string's.
        let empty = text.replace("\"db\"", "\"\"");
        assert!(only_entries(&empty, &[true, false]).is_some_and(|cut| cut.contains("name = \"a\"")));
        assert_eq!(only_entries(&format!("{text}[instances.x]\n"), &[true, false]), None);
    }
}
