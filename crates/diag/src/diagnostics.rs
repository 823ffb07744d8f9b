//! [`Diagnostics`], the findings of one run: collected by every stage, set aside when the inputs
//! acknowledge them, denied under `--deny-warnings`, sorted into one stable report.

use crate::cause::Cause;
use crate::diagnostic::{Diagnostic, Subject};
use crate::{Code, Severity};
use std::path::Path;

/// The findings of one run, in the order stages reported them (until [`Diagnostics::finish`]).
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    /// Boxed: a list of a lint's tens of thousands of findings grows by pointers, not by copies of every
    /// finding into buffers twice the size, the old ones freed but resident.
    #[allow(clippy::vec_box)]
    items: Vec<Box<Diagnostic>>,
    /// Warnings the inputs acknowledge (`allow = [...]`): not printed, counted in the summary, kept for
    /// `kix explain`.
    acknowledged: Vec<Diagnostic>,
    /// Acknowledged warnings counted and let go ([`Diagnostics::count_acknowledged`]).
    acknowledged_counted: usize,
}

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(Box::new(diagnostic));
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
        self.acknowledged.extend(other.acknowledged);
        self.acknowledged_counted += other.acknowledged_counted;
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity() == Severity::Error)
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|d| d.severity() == severity).count()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().map(|d| &**d)
    }

    /// The findings as causes, in report order: those that differ only by the cluster and instance they
    /// are about as one ([`Cause`]). Every output form prints these, so they are put in the report's order
    /// here ([`order`]: errors first, then warnings, each by file, line and column), whatever a command
    /// added after [`Diagnostics::finish`] (a stale file of `build --check`, a failed write).
    pub fn causes(&self) -> Vec<Cause<'_>> {
        let mut causes = crate::cause::causes(self.iter());
        // Stable, and a finished report is in order already: one pass over it.
        causes.sort_by(|a, b| order(a.diagnostic()).cmp(&order(b.diagnostic())));
        causes
    }

    /// How many causes of `severity` there are, and how many diagnostics they stand for.
    pub fn count_causes(&self, severity: Severity) -> (usize, usize) {
        let causes = crate::cause::causes(self.iter().filter(|d| d.severity() == severity));
        (causes.len(), causes.iter().map(Cause::count).sum())
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// These findings parted into `parts` lists by `part` (each kept and acknowledged one where `part` puts
    /// it, in its order; the counted ones stay with the first list): a build records each instance's
    /// findings apart from its cluster's, so the next build can replay them instance by instance (issue 42).
    pub fn part(self, parts: usize, part: impl Fn(&Diagnostic) -> usize) -> Vec<Diagnostics> {
        let mut lists: Vec<Diagnostics> = (0..parts.max(1)).map(|_| Diagnostics::default()).collect();
        let last = lists.len() - 1;
        for item in self.items {
            lists[part(&item).min(last)].items.push(item);
        }
        for item in self.acknowledged {
            lists[part(&item).min(last)].acknowledged.push(item);
        }
        lists[0].acknowledged_counted += self.acknowledged_counted;
        lists
    }

    /// Moves the warnings `allowed` says the inputs acknowledge out of the report; errors always stay.
    pub fn acknowledge(&mut self, allowed: impl Fn(&Diagnostic) -> bool) {
        // In place, the kept ones in their order: a lint's report may hold tens of thousands of warnings,
        // and a second list of them would double its memory.
        let mut kept = 0;
        for index in 0..self.items.len() {
            if self.items[index].severity() == Severity::Warning && allowed(&self.items[index]) {
                let moved = std::mem::replace(
                    &mut self.items[index],
                    Box::new(Diagnostic::new(Code::WarningsDenied, String::new())),
                );
                self.acknowledged.push(*moved);
            } else {
                self.items.swap(kept, index);
                kept += 1;
            }
        }
        self.items.truncate(kept);
    }

    /// Lets the acknowledged warnings found so far go, counting them (exact repeats once, as
    /// [`Diagnostics::finish`] keeps them): for a run that only counts them (a build of a fleet
    /// acknowledges tens of thousands, each with its notes and locations; `kix explain` keeps them). The
    /// caller counts each part apart from the others: an acknowledged warning names its cluster, so the
    /// parts of different clusters hold no repeat of each other.
    pub fn count_acknowledged(&mut self) {
        let mut kept = std::mem::take(&mut self.acknowledged);
        sort_and_dedup(&mut kept);
        self.acknowledged_counted += kept.len();
    }

    /// Counts `count` warnings acknowledged when these inputs were compiled before, as
    /// [`Diagnostics::count_acknowledged`] counted them then: a rebuild that reuses a cluster's recorded
    /// findings instead of compiling it again (issue 42).
    pub fn count_recorded_acknowledged(&mut self, count: usize) {
        self.acknowledged_counted += count;
    }

    /// How many warnings were acknowledged: those kept and those counted.
    pub fn acknowledged_count(&self) -> usize {
        self.acknowledged.len() + self.acknowledged_counted
    }

    /// The acknowledged warnings kept (not counted), in report order (once [`Diagnostics::finish`] ran).
    pub fn acknowledged(&self) -> &[Diagnostic] {
        &self.acknowledged
    }

    /// The end of a run, the one policy for `build`, `check` and `verify`: sets aside the warnings the
    /// inputs acknowledge, sorts the report ([`Diagnostics::finish`]), and under `--deny-warnings` adds
    /// K0502 when a warning is left (once: a report that already denies its warnings is not denied again).
    pub fn settle(&mut self, acknowledged: impl Fn(&Diagnostic) -> bool, deny_warnings: bool) {
        self.acknowledge(acknowledged);
        self.finish();
        // Denied as they are printed: once per cause, the instances they stand for said beside. Counted only
        // when denying: a fleet's rebuild groups tens of thousands of findings a pass.
        if !deny_warnings || self.items.iter().any(|d| d.code == Code::WarningsDenied) {
            return;
        }
        let (warnings, instances) = self.count_causes(Severity::Warning);
        if warnings > 0 {
            let instances = in_instances(warnings, instances).map(|n| format!(" ({n})")).unwrap_or_default();
            self.push(Diagnostic::new(
                Code::WarningsDenied,
                format!("{warnings} warning(s){instances} denied by --deny-warnings"),
            ));
            self.finish();
        }
    }

    /// Sorts into the report's order ([`order`]: errors first, then warnings, each by file, line, column,
    /// code and message) and drops exact repeats, so the same inputs always print the same report; the
    /// acknowledged warnings too (they may have been acknowledged cluster by cluster, as they were found).
    pub fn finish(&mut self) {
        sort_and_dedup(&mut self.items);
        sort_and_dedup(&mut self.acknowledged);
    }

    /// The closing summary line, counting causes ([`Diagnostics::causes`]), e.g. `kix: 2 errors, 1 warning`,
    /// `0 errors, 0 warnings (4 acknowledged)` or `0 errors, 3 warnings (71,344 in instances)`. The
    /// acknowledged count is of diagnostics, one per instance: each is acknowledged where it is written.
    pub fn summary(&self) -> String {
        self.summary_of(&crate::cause::causes(self.iter()))
    }

    /// [`Diagnostics::summary`] from this report's causes as [`Diagnostics::causes`] gave them (a caller that
    /// printed them need not group a fleet's findings again).
    pub fn summary_of(&self, causes: &[Cause<'_>]) -> String {
        // A cause's findings share their code, so their severity.
        let count = |severity: Severity| {
            let of = causes.iter().filter(|cause| cause.diagnostic().severity() == severity);
            of.fold((0, 0), |(causes, instances), cause| (causes + 1, instances + cause.count()))
        };
        let counted = |severity: Severity, noun: &str| {
            let (causes, instances) = count(severity);
            let noun = format!("{} {noun}{}", crate::words::thousands(causes), crate::words::s(causes));
            (noun, in_instances(causes, instances))
        };
        let (errors, error_instances) = counted(Severity::Error, "error");
        let (warnings, warning_instances) = counted(Severity::Warning, "warning");
        let errors = match error_instances {
            Some(instances) => format!("{errors} ({instances})"),
            None => errors,
        };
        let acknowledged = match self.acknowledged_count() {
            0 => None,
            n => Some(format!("{} acknowledged", crate::words::thousands(n))),
        };
        let after: Vec<String> = warning_instances.into_iter().chain(acknowledged).collect();
        match after.is_empty() {
            true => format!("{errors}, {warnings}"),
            false => format!("{errors}, {warnings} ({})", after.join("; ")),
        }
    }
}

/// `71,344 in instances` when `causes` stand for more diagnostics than there are causes.
fn in_instances(causes: usize, instances: usize) -> Option<String> {
    (instances > causes).then(|| format!("{} in instances", crate::words::thousands(instances)))
}

/// A diagnostic's place in a file: its path and byte offset (`None` for a finding about no file, which
/// comes first), ordering as file, line, then column do.
type Place<'a> = Option<(&'a Path, Option<usize>)>;

/// The report's one order (issue 41): errors first, then warnings, each by file, line and column, then
/// code, subject and message, so the same inputs always print the same report and an error is never
/// read after an unrelated warning.
fn order(d: &Diagnostic) -> (Severity, Place<'_>, Code, &Subject, &crate::Message) {
    (d.severity(), d.location().map(|l| (l.path(), l.offset())), d.code, &d.subject, &d.message)
}

/// Sorts into the report's order ([`order`]) and drops exact repeats.
fn sort_and_dedup<D: std::borrow::Borrow<Diagnostic> + PartialEq + Sync>(list: &mut Vec<D>) {
    // Each finding's severity and place as numbers, its file by its rank among the report's files (a
    // report names a few files; comparing paths component by component was most of sorting a fleet's
    // 36,000 findings), the rest of the order compared only between findings at one place.
    let mut files: std::collections::HashMap<&Path, usize, foldhash::fast::FixedState> = Default::default();
    // Each finding's file by its index among them, looked up once; a path held at the address of the one
    // before it is that one (neighbours mostly share their file: a path is hashed component by component).
    let mut last: Option<((*const u8, usize), usize)> = None;
    let file_of: Vec<Option<usize>> = (list.iter())
        .map(|diagnostic| {
            let path = diagnostic.borrow().location()?.path();
            let address = (path.as_os_str().as_encoded_bytes().as_ptr(), path.as_os_str().len());
            if let Some((_, index)) = last.filter(|(known, _)| *known == address) {
                return Some(index);
            }
            let next = files.len();
            let index = *files.entry(path).or_insert(next);
            last = Some((address, index));
            Some(index)
        })
        .collect();
    let mut by_path: Vec<(&Path, usize)> = files.iter().map(|(path, at)| (*path, *at)).collect();
    by_path.sort_unstable();
    let mut rank = vec![0; by_path.len()];
    for (place, (_, at)) in by_path.iter().enumerate() {
        rank[*at] = place + 1;
    }
    let keys: Vec<_> = (list.iter().zip(&file_of))
        .map(|(d, file)| {
            let d = d.borrow();
            let place = d.location().zip(*file).map_or((0, None), |(l, file)| (rank[file], l.offset()));
            (d.severity(), place)
        })
        .collect();
    // Sorted as positions, then put in that order in place: a stable sort of the diagnostics themselves
    // would copy all of them into a scratch buffer (a lint of 14,000 findings: 3.7 MB).
    let mut positions: Vec<usize> = (0..list.len()).collect();
    let order = |&a: &usize, &b: &usize| {
        keys[a].cmp(&keys[b]).then_with(|| {
            let (a, b) = (list[a].borrow(), list[b].borrow());
            (a.code, &a.subject, &a.message).cmp(&(b.code, &b.subject, &b.message))
        })
    };
    // Stable either way (findings equal in this order keep theirs, so the report is the same every run); on
    // every core once there are enough to pay for it.
    if positions.len() >= 4096 {
        use rayon::slice::ParallelSliceMut as _;
        positions.par_sort_by(order);
    } else {
        positions.sort_by(order);
    }
    permute(list, &mut positions);
    list.dedup();
}

/// Puts `list` in the order `order` gives (`list[i]` becomes the element that was at `order[i]`),
/// following each cycle of the permutation with swaps; `order` is used up.
fn permute<T>(list: &mut [T], order: &mut [usize]) {
    const DONE: usize = usize::MAX;
    for start in 0..list.len() {
        let mut current = start;
        while order[current] != DONE {
            let source = std::mem::replace(&mut order[current], DONE);
            if source == start {
                break;
            }
            list.swap(current, source);
            current = source;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Location, SourceFile};

    /// The permutation puts every element where a sort puts it, for every order of up to six elements.
    #[test]
    fn permuting_in_place_gives_the_sorted_order() {
        fn orders(n: usize) -> Vec<Vec<usize>> {
            if n == 0 {
                return vec![Vec::new()];
            }
            orders(n - 1)
                .into_iter()
                .flat_map(|order| {
                    (0..n).map(move |at| {
                        let mut order = order.clone();
                        order.insert(at, n - 1);
                        order
                    })
                })
                .collect()
        }
        for n in 0..=6 {
            for order in orders(n) {
                let mut list: Vec<char> = (0..n).map(|i| (b'a' + i as u8) as char).collect();
                let expected: Vec<char> = order.iter().map(|&i| list[i]).collect();
                permute(&mut list, &mut order.clone());
                assert_eq!(list, expected, "{order:?}");
            }
        }
    }

    /// The sort by each file's rank puts any report in the order [`order`] gives, with paths whose order
    /// by components is not their order by bytes (`a/b` before `a-b`, `a//b` the same file as `a/b`),
    /// findings without a place, both severities, and ties broken by code, subject and message.
    mod ranked_order {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
            #[test]
            fn equals_the_reference_order(
                found in proptest::collection::vec((0usize..6, 0usize..5, 0usize..2, 0usize..3, 0usize..3), 0..40),
            ) {
                let paths = ["a/b", "a-b", "a//b", "a/b/c", "b", ""];
                let files: Vec<SourceFile> =
                    paths.iter().map(|path| SourceFile::new(path, "x\n".repeat(6))).collect();
                let codes: Vec<Code> = [Severity::Error, Severity::Warning]
                    .iter()
                    .map(|&severity| Code::ALL.iter().copied().find(|c| c.severity() == severity).unwrap())
                    .collect();
                let list: Vec<Diagnostic> = found
                    .iter()
                    .map(|&(file, line, code, cluster, message)| {
                        let diagnostic = Diagnostic::new(codes[code], ["m", "n", "cluster `c1`: m"][message])
                            .about(&Subject { cluster: Some(["c0", "c1", "c2"][cluster].into()), ..Subject::default() });
                        match file {
                            5 => diagnostic,
                            file => diagnostic.at(files[file].locate_line(line + 1, 1)),
                        }
                    })
                    .collect();
                let mut reference = list.clone();
                reference.sort_by(|a, b| order(a).cmp(&order(b)));
                reference.dedup();
                let mut ranked = list;
                sort_and_dedup(&mut ranked);
                prop_assert_eq!(ranked, reference);
            }
        }

        /// A fleet's report, sorted on every core: the reference order too, findings equal in it (their help
        /// differs) kept in the order they came in, so every run prints the same report.
        #[test]
        fn a_report_sorted_on_every_core_equals_the_reference_order() {
            let files: Vec<SourceFile> =
                ["a/b", "a-b", "b"].iter().map(|path| SourceFile::new(path, "x\n".repeat(6))).collect();
            let mut seed: u64 = 42;
            let list: Vec<Diagnostic> = (0..6000)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let pick = |n: u64, shift: u32| ((seed >> shift) % n) as usize;
                    Diagnostic::new(warning_code(), ["m", "n"][pick(2, 20)])
                        .at(files[pick(3, 24)].locate_line(pick(5, 28) + 1, 1))
                        .about(&Subject { cluster: Some(format!("c{}", pick(300, 32)).into()), ..Subject::default() })
                        .help(["one help", "another"][pick(2, 44)])
                })
                .collect();
            assert!(list.len() >= 4096, "large enough to be sorted on every core");
            let mut reference = list.clone();
            reference.sort_by(|a, b| order(a).cmp(&order(b)));
            reference.dedup();
            let mut ranked = list;
            sort_and_dedup(&mut ranked);
            assert_eq!(ranked, reference);
        }
    }

    fn warning_code() -> Code {
        Code::ALL.iter().copied().find(|c| c.severity() == Severity::Warning).unwrap()
    }

    /// Warnings acknowledged cluster by cluster, as they were found, end in the same order and without the
    /// same repeats as when the merged report is acknowledged at once.
    #[test]
    fn acknowledging_per_part_equals_acknowledging_the_whole() {
        let texts: Vec<SourceFile> = ["packages/p/a.yaml", "clusters/one.toml", "clusters/two.toml"]
            .into_iter()
            .map(|path| SourceFile::new(path, "x\n".repeat(10)))
            .collect();
        let warning = |file: usize, line: usize, cluster: &str| {
            Diagnostic::new(warning_code(), "w")
                .at(texts[file].locate_line(line, 1))
                .about(&Subject { cluster: Some(cluster.into()), ..Subject::default() })
        };
        let parts = [
            vec![warning(0, 9, "one"), warning(1, 2, "one"), warning(1, 2, "one")],
            vec![warning(0, 3, "two"), warning(2, 1, "two")],
        ];
        let allowed =
            |d: &Diagnostic| d.subject.cluster.as_deref() != Some("two") || d.location().unwrap().line() == Some(3);
        let mut whole = Diagnostics::default();
        parts.iter().flatten().cloned().for_each(|d| whole.push(d));
        whole.finish();
        whole.acknowledge(allowed);
        let mut merged = Diagnostics::default();
        for part in &parts {
            let mut found = Diagnostics::default();
            part.iter().cloned().for_each(|d| found.push(d));
            found.acknowledge(allowed);
            merged.extend(found);
        }
        merged.finish();
        assert_eq!(merged.acknowledged(), whole.acknowledged());
        assert_eq!(merged.acknowledged().len(), 3, "the repeat counted once");
        assert_eq!(merged.iter().collect::<Vec<_>>(), whole.iter().collect::<Vec<_>>());
        // Counted part by part and let go, as a build does: the same count and summary.
        let mut counted = Diagnostics::default();
        for part in &parts {
            let mut found = Diagnostics::default();
            part.iter().cloned().for_each(|d| found.push(d));
            found.acknowledge(allowed);
            found.count_acknowledged();
            assert!(found.acknowledged().is_empty());
            counted.extend(found);
        }
        counted.finish();
        assert_eq!(counted.acknowledged_count(), 3);
        assert_eq!(counted.summary(), merged.summary());
    }

    #[test]
    fn finish_orders_by_file_line_and_column() {
        let source = SourceFile::new("b.toml", "a = 1\nb = 2\n".to_string());
        let mut diagnostics = Diagnostics::default();
        for location in [source.locate(10..11), source.locate(6..7), Location::file("b.toml"), source.locate(0..1)] {
            diagnostics.push(Diagnostic::new(Code::Io, "x").at(location));
        }
        diagnostics.push(Diagnostic::new(Code::Io, "x").at(Location::file("a.toml")));
        let order: Vec<String> = diagnostics.iter().map(|d| d.location().unwrap().to_string()).collect();
        assert_eq!(order.len(), 5);
        diagnostics.finish();
        let order: Vec<String> = diagnostics.iter().map(|d| d.location().unwrap().to_string()).collect();
        assert_eq!(order, ["a.toml", "b.toml", "b.toml:1:1", "b.toml:2:1", "b.toml:2:5"]);
    }

    /// Issue 41: one order for every report, errors first, then warnings, each by file, line and column;
    /// the causes every output form prints keep it when a command adds a finding after `finish`.
    #[test]
    fn errors_come_first_then_warnings_each_by_file_line_and_column() {
        let a = SourceFile::new("a.toml", "x = 1\ny = 2\n".to_string());
        let b = SourceFile::new("b.toml", "x = 1\ny = 2\n".to_string());
        let error = Code::ALL.iter().copied().find(|c| c.severity() == Severity::Error).unwrap();
        let mut diagnostics = Diagnostics::default();
        for (code, location) in [
            (warning_code(), a.locate(0..1)),
            (error, b.locate(6..7)),
            (warning_code(), a.locate(6..7)),
            (error, a.locate(4..5)),
            (warning_code(), b.locate(0..1)),
            (error, b.locate(0..1)),
        ] {
            diagnostics.push(Diagnostic::new(code, "x").at(location));
        }
        let expected = ["error a.toml:1:5", "error b.toml:1:1", "error b.toml:2:1", "warning a.toml:1:1"];
        let expected = [&expected[..], &["warning a.toml:2:1", "warning b.toml:1:1"]].concat();
        let said = |d: &Diagnostic| format!("{} {}", d.severity().as_str(), d.location().unwrap());
        diagnostics.finish();
        assert_eq!(diagnostics.iter().map(said).collect::<Vec<_>>(), expected);
        // An error added after the report was finished (a stale file of `build --check`) is still printed
        // before every warning.
        diagnostics.push(Diagnostic::new(error, "late").at(b.locate(4..5)));
        let printed: Vec<String> = diagnostics.causes().iter().map(|c| said(c.diagnostic())).collect();
        let mut with_late = expected.clone();
        with_late.insert(2, "error b.toml:1:5");
        assert_eq!(printed, with_late);
    }

    /// `settle` is the policy `build` and `verify` share: acknowledged warnings aside, the rest denied once.
    #[test]
    fn settle_acknowledges_then_denies_the_warnings_left_once() {
        let mut diagnostics = Diagnostics::default();
        diagnostics.push(Diagnostic::new(warning_code(), "kept"));
        diagnostics.push(Diagnostic::new(warning_code(), "allowed"));
        diagnostics.settle(|d| d.message == "allowed", true);
        assert_eq!(diagnostics.acknowledged().len(), 1);
        let denied: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.code == Code::WarningsDenied).collect();
        assert_eq!(denied.len(), 1);
        assert_eq!(denied[0].message, "1 warning(s) denied by --deny-warnings");
        diagnostics.settle(|_| false, true);
        assert_eq!(diagnostics.iter().filter(|d| d.code == Code::WarningsDenied).count(), 1, "denied once");
        let mut allowed = Diagnostics::default();
        allowed.push(Diagnostic::new(warning_code(), "allowed"));
        allowed.settle(|_| true, true);
        assert!(allowed.is_empty(), "nothing left to deny");
    }
}
