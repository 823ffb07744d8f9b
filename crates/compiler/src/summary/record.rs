//! A cluster's summary as the output manifest records it (issue 42): so that a rebuild which reuses a
//! cluster (`crate::reuse`) prints the same table and JSON as the build that compiled it, without compiling
//! it again. `kix build` with its table is the command a person runs; before this record, a rebuild
//! reused nothing unless it was told to print no summary.
//!
//! One line per instance (`i`), each followed by one line per workload (`w`), then one line per shared
//! object (`s`). An instance whose workload lines an earlier instance of the record already has (most
//! instances of one package version at one level) ends its line with that instance's index instead
//! (`@3`): a fleet's record is about a fifth of what it is written out (6.9 MB for 1,000 clusters of 100
//! instances). Fields are separated by tabs; a text field has its backslashes, tabs, line breaks and
//! carriage returns escaped (`\\`, `\t`, `\n`, `\r`), so any name reads back as it was. A record that does
//! not read back whole is refused (`None`), and the cluster is compiled.
//!
//! ```text
//! (fields shown here one space apart; the record separates them by tabs)
//! i <name> <namespace> <package> <version> <requested> <level> <replicas> <milli-cpu> <memory>[ @<index>]
//! w <kind> <name> <level> <replicas> <p|-> <e|-> <group budget, or - without one> <replicas> <milli-cpu> <memory> <hard index|-> <spread key>...
//! s <Kind name> <instance>...
//! ```
//! A group budget's name is written after `+` (`+db`), so an empty name and no budget differ.

use super::{ClusterSummary, InstanceSummary, Interner, SharedSummary, Spreads, WorkloadSummary};
use crate::sizing::cost::Cost;
use kix_kube::level::Level;
use std::collections::HashMap;
use std::sync::Arc;

impl ClusterSummary {
    /// The record of this summary (its name aside: the manifest's section names the cluster).
    pub fn record(&self) -> String {
        let mut text = String::with_capacity(self.instances.len() * 80);
        // Each instance's workload lines, written once: an instance whose lines an earlier one already has
        // names that one instead (`@index`), as most instances of one package at one level do.
        let mut blocks: HashMap<String, usize, foldhash::fast::FixedState> = HashMap::default();
        // The index each instance's workloads (by the address of their shared list) were written at or point
        // to: a summary read back from a record shares one list among the instances whose lines it shared, so
        // most instances of a cluster compiled in part are written without formatting their lines again.
        let mut by_list: HashMap<usize, usize, foldhash::fast::FixedState> = HashMap::default();
        let mut block = String::new();
        for (index, instance) in self.instances.iter().enumerate() {
            text.push('i');
            for field in [&*instance.name, &instance.namespace, &instance.package, &instance.package_version] {
                push_text(&mut text, field);
            }
            push_word(&mut text, instance.requested.as_str());
            push_word(&mut text, instance.level.as_str());
            push_cost(&mut text, instance.requests);
            let list = (!instance.workloads.is_empty()).then(|| Arc::as_ptr(&instance.workloads).cast::<()>() as usize);
            if let Some(earlier) = list.and_then(|list| by_list.get(&list)) {
                push_reference(&mut text, *earlier);
                continue;
            }
            block.clear();
            workload_lines(&mut block, &instance.workloads);
            let written_at = match blocks.get(block.as_str()) {
                Some(earlier) if !block.is_empty() => {
                    push_reference(&mut text, *earlier);
                    *earlier
                }
                _ => {
                    text.push('\n');
                    text.push_str(&block);
                    blocks.insert(block.clone(), index);
                    index
                }
            };
            if let Some(list) = list {
                by_list.insert(list, written_at);
            }
        }
        for shared in &self.shared {
            text.push('s');
            push_text(&mut text, &shared.object);
            for instance in &shared.instances {
                push_text(&mut text, instance);
            }
            text.push('\n');
        }
        text
    }

    /// The summary `record` was made from, named `name`; `None` when the record does not read back whole.
    pub fn from_record(name: String, record: &str, interner: &Interner) -> Option<ClusterSummary> {
        let mut strings = Strings { interner, seen: HashMap::default() };
        // Sized from the record's lines (an instance's line opens with `i`), not grown by doubling: a fleet's
        // rebuild reads 100,000 instances' lines, each growth a copy of those read before.
        let lines_opening = |tag: &[u8]| memchr::memmem::find_iter(record.as_bytes(), tag).count();
        let mut instances: Vec<InstanceSummary> = Vec::with_capacity(lines_opening(b"\ni\t") + 1);
        let mut workloads: Vec<WorkloadSummary> = Vec::with_capacity(8);
        let mut shared = Vec::new();
        // Whether the last instance's workloads are the lines that follow it (not an earlier instance's).
        let mut takes_lines = false;
        let close = |instances: &mut Vec<InstanceSummary>, workloads: &mut Vec<WorkloadSummary>| {
            if let Some(last) = instances.last_mut().filter(|_| !workloads.is_empty()) {
                // Drained, not taken: the buffer is kept for the next instance's lines.
                last.workloads = workloads.drain(..).collect();
            }
        };
        for line in crate::records::lines(record) {
            let mut fields = crate::records::fields(line, b'\t');
            match fields.next()? {
                "i" if shared.is_empty() => {
                    close(&mut instances, &mut workloads);
                    let name = unescape(fields.next()?)?.into_owned();
                    let namespace = unescape(fields.next()?)?.into_owned();
                    let package = strings.get(fields.next()?)?;
                    let package_version = strings.get(fields.next()?)?;
                    let requested = Level::parse(fields.next()?)?;
                    let level = Level::parse(fields.next()?)?;
                    let requests = cost(&mut fields)?;
                    // The workloads of an earlier instance whose lines these are.
                    takes_lines = false;
                    let workloads = match fields.next() {
                        Some(earlier) => {
                            let earlier: usize = earlier.strip_prefix('@')?.parse().ok()?;
                            let earlier = instances.get(earlier).filter(|e| !e.workloads.is_empty())?;
                            Arc::clone(&earlier.workloads)
                        }
                        None => {
                            takes_lines = true;
                            Arc::default()
                        }
                    };
                    instances.push(InstanceSummary {
                        name,
                        namespace,
                        package,
                        package_version,
                        requested,
                        level,
                        requests,
                        workloads,
                    });
                }
                "w" if takes_lines && shared.is_empty() => {
                    let kind = strings.get(fields.next()?)?;
                    let name = strings.get(fields.next()?)?;
                    let level = Level::parse(fields.next()?)?;
                    let replicas = fields.next()?.parse().ok()?;
                    let derived_pdb = flag(fields.next()?, "p")?;
                    let explicit_placement = flag(fields.next()?, "e")?;
                    let group_budget = match fields.next()? {
                        "-" => None,
                        group => Some(strings.get(group.strip_prefix('+')?)?),
                    };
                    let requests = cost(&mut fields)?;
                    let hard = match fields.next()? {
                        "-" => None,
                        index => Some(index.parse::<usize>().ok()?),
                    };
                    let keys: Box<[Arc<str>]> = fields.map(|key| strings.get(key)).collect::<Option<_>>()?;
                    if hard.is_some_and(|hard| hard >= keys.len()) {
                        return None;
                    }
                    let spreads = interner.spreads(Spreads { keys, hard });
                    workloads.push(WorkloadSummary {
                        kind,
                        name,
                        level,
                        replicas,
                        derived_pdb,
                        explicit_placement,
                        group_budget,
                        spreads,
                        requests,
                    });
                    continue;
                }
                "s" => {
                    close(&mut instances, &mut workloads);
                    let object = unescape(fields.next()?)?.into_owned();
                    let owners = fields
                        .map(|owner| unescape(owner).map(std::borrow::Cow::into_owned))
                        .collect::<Option<Vec<String>>>()?;
                    shared.push(SharedSummary { object, instances: owners });
                    continue;
                }
                _ => return None,
            }
            // An instance line takes no more fields than it has.
            if fields.next().is_some() {
                return None;
            }
        }
        close(&mut instances, &mut workloads);
        Some(ClusterSummary { name, instances, shared })
    }
}

/// An instance's workload lines (`w`), each ended by a line break, written into `text`.
fn workload_lines(text: &mut String, workloads: &[WorkloadSummary]) {
    for workload in workloads {
        text.push('w');
        push_text(text, &workload.kind);
        push_text(text, &workload.name);
        push_word(text, workload.level.as_str());
        text.push('\t');
        push_decimal(text, u64::from(workload.replicas));
        push_word(text, if workload.derived_pdb { "p" } else { "-" });
        push_word(text, if workload.explicit_placement { "e" } else { "-" });
        match &workload.group_budget {
            Some(group) => {
                text.push_str("\t+");
                escape_into(text, group);
            }
            None => text.push_str("\t-"),
        }
        push_cost(text, workload.requests);
        match workload.spreads.hard {
            Some(hard) => {
                text.push('\t');
                push_decimal(text, hard as u64);
            }
            None => text.push_str("\t-"),
        }
        for key in &workload.spreads.keys {
            push_text(text, key);
        }
        text.push('\n');
    }
}

/// The strings of one record, each looked up once in the compile's [`Interner`] (which every core locks);
/// hashed with foldhash (a fleet's rebuild looks up half a million fields, only looked up, never iterated).
struct Strings<'r, 'i> {
    interner: &'i Interner,
    seen: HashMap<&'r str, Arc<str>, foldhash::fast::FixedState>,
}

impl<'r> Strings<'r, '_> {
    fn get(&mut self, field: &'r str) -> Option<Arc<str>> {
        if let Some(kept) = self.seen.get(field) {
            return Some(Arc::clone(kept));
        }
        let kept = self.interner.string(&unescape(field)?);
        self.seen.insert(field, Arc::clone(&kept));
        Some(kept)
    }
}

fn push_word(text: &mut String, word: &str) {
    text.push('\t');
    text.push_str(word);
}

fn push_text(text: &mut String, field: &str) {
    text.push('\t');
    escape_into(text, field);
}

fn push_cost(text: &mut String, cost: Cost) {
    // By hand (what `\t{}\t{}\t{}` wrote): the formatting machinery was a third of writing a fleet's records.
    text.push('\t');
    push_decimal(text, cost.replicas);
    for signed in [cost.cpu_millicores, cost.memory_bytes] {
        text.push('\t');
        if signed < 0 {
            text.push('-');
        }
        push_decimal(text, signed.unsigned_abs());
    }
}

/// `\t@<index>` and a line break: the instance whose workload lines these are.
fn push_reference(text: &mut String, index: usize) {
    text.push_str("\t@");
    push_decimal(text, index as u64);
    text.push('\n');
}

/// `value` in decimal (what `{}` writes).
fn push_decimal(text: &mut String, value: u64) {
    text.push_str(crate::records::decimal(value, &mut [0; 20]));
}

fn cost<'a>(fields: &mut impl Iterator<Item = &'a str>) -> Option<Cost> {
    Some(Cost {
        replicas: fields.next()?.parse().ok()?,
        cpu_millicores: fields.next()?.parse().ok()?,
        memory_bytes: fields.next()?.parse().ok()?,
    })
}

fn flag(field: &str, set: &str) -> Option<bool> {
    match field {
        "-" => Some(false),
        _ if field == set => Some(true),
        _ => None,
    }
}

fn escape_into(text: &mut String, field: &str) {
    if !field.bytes().any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r')) {
        text.push_str(field);
        return;
    }
    for c in field.chars() {
        match c {
            '\\' => text.push_str("\\\\"),
            '\t' => text.push_str("\\t"),
            '\n' => text.push_str("\\n"),
            '\r' => text.push_str("\\r"),
            c => text.push(c),
        }
    }
}

/// A text field as it was written (escapes undone); borrowed when it holds none.
fn unescape(field: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !field.contains('\\') {
        return Some(std::borrow::Cow::Borrowed(field));
    }
    let mut text = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        text.push(match chars.next()? {
            '\\' => '\\',
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            _ => return None,
        });
    }
    Some(std::borrow::Cow::Owned(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kix_kube::level::Level;

    fn summary(interner: &Interner) -> ClusterSummary {
        let workload = |name: &str, group: Option<&str>, hard: Option<usize>, keys: &[&str]| WorkloadSummary {
            kind: interner.string("Prometheus"),
            name: interner.string(name),
            level: Level::Node,
            replicas: 3,
            derived_pdb: group.is_none(),
            explicit_placement: hard.is_none(),
            group_budget: group.map(|g| interner.string(g)),
            spreads: interner.spreads(Spreads { keys: keys.iter().map(|k| interner.string(k)).collect(), hard }),
            requests: Cost { replicas: 3, cpu_millicores: 300, memory_bytes: -1 },
        };
        let pod_instance = |name: &str| InstanceSummary {
            name: name.into(),
            namespace: "ns".into(),
            package: interner.string("p\nq"),
            package_version: interner.string("1.0.0"),
            requested: Level::Pod,
            level: Level::Pod,
            requests: Cost { replicas: 2, cpu_millicores: 200, memory_bytes: 2 },
            workloads: vec![workload("u", Some("db"), Some(0), &["kubernetes.io/hostname"])].into(),
        };
        ClusterSummary {
            name: "c".into(),
            instances: vec![
                InstanceSummary {
                    name: "a\tb\\c".into(),
                    namespace: String::new(),
                    package: interner.string("p\nq"),
                    package_version: interner.string("1.0.0"),
                    requested: Level::Zone,
                    level: Level::Node,
                    requests: Cost { replicas: 6, cpu_millicores: 600, memory_bytes: 1 << 40 },
                    workloads: vec![
                        workload("w", None, Some(1), &["topology.kubernetes.io/zone", "kubernetes.io/hostname"]),
                        workload("v", Some(""), None, &[]),
                        workload("+x", Some("+db"), None, &["-"]),
                    ]
                    .into(),
                },
                InstanceSummary {
                    name: "empty".into(),
                    namespace: "ns".into(),
                    package: interner.string("-"),
                    package_version: interner.string("2.0.0"),
                    requested: Level::None,
                    level: Level::None,
                    requests: Cost { replicas: 0, cpu_millicores: 0, memory_bytes: 0 },
                    workloads: Arc::default(),
                },
                pod_instance("last"),
                // The same workload lines as the one before: written once, named by its index.
                pod_instance("again"),
            ],
            shared: vec![
                SharedSummary { object: "ClusterRole reader\r".into(), instances: vec!["a\tb\\c".into(), "x".into()] },
                SharedSummary { object: String::new(), instances: vec![] },
            ],
        }
    }

    /// Every field, escaped or not, empty or not, reads back as it was written.
    #[test]
    fn a_record_reads_back_as_the_summary_it_was_made_from() {
        let interner = Interner::default();
        let summary = summary(&interner);
        let record = summary.record();
        let read = ClusterSummary::from_record("c".into(), &record, &interner).expect("reads back");
        assert_eq!(format!("{read:?}"), format!("{summary:?}"));
        assert_eq!(read.record(), record);
        // The fourth instance's workloads are the third's: written once, named by the third's index.
        assert!(record.contains("\t@2\n"), "{record}");
        assert_eq!(record.matches("\tu\t").count(), 1, "{record}");
    }

    /// Any summary reads back as it was: names holding backslashes, tabs, line breaks, `+`, `@` and `-`,
    /// empty ones, instances sharing workload lines (written once, named by index) or with none, shared
    /// objects with and without owners.
    mod round_trip {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;

        type Workload = (String, String, usize, u32, bool, bool, Option<String>, Option<usize>, Vec<String>);

        fn text() -> impl Strategy<Value = String> {
            "[a-z\\\\\t\n\r +@-]{0,5}"
        }

        fn workload() -> impl Strategy<Value = Workload> {
            (
                text(),
                text(),
                0usize..4,
                0u32..5,
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(text()),
                proptest::option::of(0usize..4),
                vec(text(), 0..3),
            )
        }

        const LEVELS: [Level; 4] = [Level::None, Level::Pod, Level::Node, Level::Zone];

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
            #[test]
            fn any_summary_reads_back(
                pool in vec(vec(workload(), 0..3), 1..3),
                instances in vec((text(), text(), text(), 0usize..4, 0usize..4, 0usize..3, 0i64..3000), 0..6),
                shared in vec((text(), vec(text(), 0..3)), 0..3),
            ) {
                let interner = Interner::default();
                let make = |w: &Workload| {
                    let (kind, name, level, replicas, pdb, explicit, group, hard, keys) = w.clone();
                    let hard = hard.filter(|h| *h < keys.len());
                    WorkloadSummary {
                        kind: interner.string(&kind),
                        name: interner.string(&name),
                        level: LEVELS[level],
                        replicas,
                        derived_pdb: pdb,
                        explicit_placement: explicit,
                        group_budget: group.map(|g| interner.string(&g)),
                        spreads: interner.spreads(Spreads { keys: keys.iter().map(|k| interner.string(k)).collect(), hard }),
                        requests: Cost { replicas: u64::from(replicas), cpu_millicores: 100, memory_bytes: -5 },
                    }
                };
                let summary = ClusterSummary {
                    name: "c".into(),
                    instances: instances
                        .iter()
                        .map(|(name, namespace, package, requested, level, workloads, cpu)| InstanceSummary {
                            name: name.clone(),
                            namespace: namespace.clone(),
                            package: interner.string(package),
                            package_version: interner.string("1.0.0"),
                            requested: LEVELS[*requested],
                            level: LEVELS[*level],
                            requests: Cost { replicas: 1, cpu_millicores: *cpu, memory_bytes: i64::MAX },
                            workloads: pool[workloads % pool.len()].iter().map(make).collect(),
                        })
                        .collect(),
                    shared: shared
                        .iter()
                        .map(|(object, owners)| SharedSummary { object: object.clone(), instances: owners.clone() })
                        .collect(),
                };
                let record = summary.record();
                let read = ClusterSummary::from_record("c".into(), &record, &interner);
                prop_assert!(read.is_some(), "refused: {record:?}");
                let read = read.unwrap();
                prop_assert_eq!(format!("{read:?}"), format!("{summary:?}"));
                prop_assert_eq!(read.record(), record);
            }
        }
    }

    /// A record cut short, with a field too many, out of order or with an unknown escape is refused whole.
    /// Numbers are written as `{}` wrote them, signs and extremes included, and read back.
    #[test]
    fn numbers_are_written_as_format_wrote_them() {
        for replicas in [0, 1, 9, 10, 99, 100, u64::from(u32::MAX), u64::MAX] {
            for signed in [i64::MIN, -1_000_000, -10, -1, 0, 1, 7, 10, 1_207_959_552, i64::MAX] {
                let cost = Cost { replicas, cpu_millicores: signed, memory_bytes: -signed.saturating_add(1) };
                let mut text = String::new();
                push_cost(&mut text, cost);
                assert_eq!(text, format!("\t{}\t{}\t{}", cost.replicas, cost.cpu_millicores, cost.memory_bytes));
                let mut fields = text[1..].split('\t');
                assert_eq!(super::cost(&mut fields), Some(cost));
            }
        }
        let mut text = String::new();
        push_reference(&mut text, 1234);
        assert_eq!(text, "\t@1234\n");
    }

    #[test]
    fn a_damaged_record_is_refused() {
        let interner = Interner::default();
        let record = summary(&interner).record();
        let lines: Vec<&str> = record.lines().collect();
        let damaged = [
            record.replacen("\tzone\t", "\tregion\t", 1),
            record.replacen("a\\tb", "a\\qb", 1),
            format!("{}\tmore\n{}", lines[0], lines[1..].join("\n")),
            lines[1..].join("\n"),
            format!("{}\n{}", lines.last().unwrap(), lines[..lines.len() - 1].join("\n")),
            record.replacen("\t1\ttopology", "\t2\ttopology", 1),
            record.replacen("\tp\t", "\ty\t", 1),
            format!("{record}x\n"),
            record.replacen("\t@2\n", "\t@3\n", 1),
            record.replacen("\t@2\n", "\t@1\n", 1),
            record.replacen("\t@2\n", "\t2\n", 1),
            record.replacen("\t@2\n", "\t@2\tx\n", 1),
            record.replacen("\t@2\n", &format!("\t@2\n{}\n", lines[1]), 1),
        ];
        for damaged in &damaged {
            assert_ne!(damaged, &record);
            assert!(ClusterSummary::from_record("c".into(), damaged, &interner).is_none(), "{damaged}");
        }
    }
}
