//! A cluster's record in parts (issue 42): its findings recorded apart for the cluster itself (`frame`), for
//! the checks across its instances (`cross`) and for each instance, with each instance's own key and
//! footprint, so a rebuild after a package changed compiles only the instances that run it
//! (`crate::compile`) and replays the rest of the record.
//!
//! In an inputs section ([`super::Inputs`]) the parts are blocks of lines, each opened by one line:
//! - `frame FRAME-KEY ACKNOWLEDGED`: the key of the cluster file and of what every cluster reads, then the
//!   findings about the cluster file itself;
//! - `cross ACKNOWLEDGED`: the findings of the checks across instances (groups across instances, the
//!   cross-instance checks, the cluster's room);
//! - `instance NAME PACKAGE OWN-KEY FOOTPRINT MOVED ACKNOWLEDGED`, one per instance in the cluster file's
//!   order: the package its entry names, its own key ([`super::Inputs::own_key`]), its footprint
//!   (`super::footprint`), and which of its objects (by index, `-` for none) went to `_shared.yaml`; then
//!   its own findings.
//!
//! Each finding is one JSON line (`{...}`), as in a section without parts; `ACKNOWLEDGED` counts the warnings
//! of that part its `allow` lists acknowledged. A section that replays whole reads the findings of every
//! part and skips these lines.

use std::fmt::Write;

/// One part's findings as recorded: how many warnings were acknowledged, and its finding lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block<'s> {
    pub acknowledged: usize,
    pub findings: Vec<&'s str>,
}

/// One instance's part of a record: its key, footprint and objects moved as written (read when used: a
/// rebuild reads those of the few instances it compiles again, and writes the others' back as they are).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstancePart<'s> {
    pub name: &'s str,
    /// The package its entry names (the cluster file, unchanged while the frame key is, still names it).
    pub package: &'s str,
    /// Its own key, 32 hex digits.
    pub own_key: &'s str,
    /// Its footprint, 32 hex digits.
    pub footprint: &'s str,
    /// The indices of its objects (as derived) written to `_shared.yaml` instead of its file: `-` for none,
    /// else a comma-separated list.
    pub moved: &'s str,
    pub block: Block<'s>,
    /// Its lines as the record holds them, its opening line to its last finding's (each with its line break
    /// but the section's very last): written back as they are when the instance is kept.
    pub text: &'s str,
}

impl InstancePart<'_> {
    pub fn footprint(&self) -> Option<u128> {
        hex128(self.footprint)
    }

    pub fn moved(&self) -> Option<Vec<usize>> {
        match self.moved {
            "-" => Some(Vec::new()),
            list => list.split(',').map(|index| index.parse().ok()).collect(),
        }
    }
}

/// A cluster's record in parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts<'s> {
    pub frame_key: u128,
    pub frame: Block<'s>,
    pub cross: Block<'s>,
    pub instances: Vec<InstancePart<'s>>,
}

/// Reads the parts of a section's findings (the text between its first line and its summary); `None` when
/// it has none or they do not read back whole.
pub fn read<'s>(findings: &'s str) -> Option<Parts<'s>> {
    let mut lines = crate::records::lines(findings);
    let mut words = crate::records::fields(lines.next()?, b' ');
    if words.next()? != "frame" {
        return None;
    }
    let frame_key = hex128(words.next()?)?;
    let mut parts = Parts {
        frame_key,
        frame: Block { acknowledged: words.next()?.parse().ok()?, findings: Vec::new() },
        cross: Block::default(),
        instances: Vec::new(),
    };
    if words.next().is_some() {
        return None;
    }
    let mut cross_seen = false;
    let mut block = &mut parts.frame;
    // Where each line starts in `findings` (`lines` gives no offsets): the instance parts' spans.
    let offset = |line: &str| line.as_ptr() as usize - findings.as_ptr() as usize;
    let mut opened: Option<usize> = None;
    let close = |instances: &mut Vec<InstancePart<'s>>, end: usize, opened: Option<usize>| {
        if let (Some(start), Some(last)) = (opened, instances.last_mut()) {
            last.text = &findings[start..end];
        }
    };
    for line in lines {
        if line.starts_with('{') {
            block.findings.push(line);
            continue;
        }
        close(&mut parts.instances, offset(line), opened.take());
        let mut words = crate::records::fields(line, b' ');
        match words.next()? {
            "cross" if !cross_seen && parts.instances.is_empty() => {
                cross_seen = true;
                parts.cross.acknowledged = words.next()?.parse().ok()?;
                if words.next().is_some() {
                    return None;
                }
                block = &mut parts.cross;
            }
            "instance" if cross_seen => {
                let (name, package, own_key, footprint, moved) =
                    (words.next()?, words.next()?, words.next()?, words.next()?, words.next()?);
                let acknowledged = words.next()?.parse().ok()?;
                if words.next().is_some() || name.is_empty() || package.is_empty() {
                    return None;
                }
                if own_key.len() != 32 || footprint.len() != 32 || moved.is_empty() {
                    return None;
                }
                let block_of = Block { acknowledged, findings: Vec::new() };
                let part = InstancePart { name, package, own_key, footprint, moved, block: block_of, text: "" };
                parts.instances.push(part);
                opened = Some(offset(line));
                block = &mut parts.instances.last_mut()?.block;
            }
            _ => return None,
        }
    }
    close(&mut parts.instances, findings.len(), opened);
    cross_seen.then_some(parts)
}

fn hex128(text: &str) -> Option<u128> {
    (text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())).then(|| u128::from_str_radix(text, 16).ok())?
}

/// Writes a record in parts, block by block, from findings just compiled or lines replayed.
#[derive(Debug, Default)]
pub struct Writer {
    body: String,
    acknowledged: usize,
}

impl Writer {
    /// A writer whose body has room for `bytes` (a cluster compiled in part writes about what its previous
    /// record held: growing the body by doubling copied and faulted in a fleet's records over again).
    pub fn with_capacity(bytes: usize) -> Writer {
        Writer { body: String::with_capacity(bytes), acknowledged: 0 }
    }

    /// Opens the frame block (first).
    pub fn frame(&mut self, frame_key: u128, acknowledged: usize) {
        let _ = writeln!(self.body, "frame {frame_key:032x} {acknowledged}");
        self.acknowledged += acknowledged;
    }

    /// Opens the cross block (after the frame's findings).
    pub fn cross(&mut self, acknowledged: usize) {
        let _ = writeln!(self.body, "cross {acknowledged}");
        self.acknowledged += acknowledged;
    }

    /// Opens an instance's block (after the cross block, in the cluster file's order).
    pub fn instance(
        &mut self,
        name: &str,
        package: &str,
        own_key: u128,
        footprint: u128,
        acknowledged: usize,
        moved: &[usize],
    ) {
        let _ = write!(self.body, "instance {name} {package} {own_key:032x} {footprint:032x} ");
        if moved.is_empty() {
            self.body.push('-');
        }
        for (at, index) in moved.iter().enumerate() {
            let _ = write!(self.body, "{}{index}", if at == 0 { "" } else { "," });
        }
        let _ = writeln!(self.body, " {acknowledged}");
        self.acknowledged += acknowledged;
    }

    /// An instance's block as recorded, its findings with it.
    pub fn recorded_instance(&mut self, part: &InstancePart<'_>) {
        // Its lines copied as they are: they read back as this part did (`read` took each of them whole).
        self.body.push_str(part.text);
        if !part.text.ends_with('\n') {
            self.body.push('\n');
        }
        self.acknowledged += part.block.acknowledged;
    }

    /// Adds the findings of the block opened last, as compiled.
    pub fn findings(&mut self, found: &kix_diag::Diagnostics) {
        for diagnostic in found.iter() {
            self.body.push_str(&diagnostic.record());
            self.body.push('\n');
        }
    }

    /// Adds the findings of the block opened last, as recorded.
    pub fn lines(&mut self, lines: &[&str]) {
        for line in lines {
            self.body.push_str(line);
            self.body.push('\n');
        }
    }

    /// The body written (the findings part of a section) and how many warnings its blocks acknowledged.
    pub fn finish(self) -> (String, usize) {
        (self.body, self.acknowledged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_read_back_as_written() {
        let mut writer = Writer::default();
        writer.frame(1, 2);
        writer.lines(&["{\"a\":1}"]);
        writer.cross(0);
        writer.instance("a", "web", 3, 4, 1, &[]);
        writer.lines(&["{\"b\":1}", "{\"c\":1}"]);
        writer.instance("b", "db", 5, 6, 0, &[0, 7]);
        let (body, acknowledged) = writer.finish();
        assert_eq!(acknowledged, 3);
        let parts = read(&body).expect("reads back");
        assert_eq!(parts.frame_key, 1);
        assert_eq!(parts.frame, Block { acknowledged: 2, findings: vec!["{\"a\":1}"] });
        assert_eq!(parts.cross, Block::default());
        assert_eq!(parts.instances.len(), 2);
        let a = &parts.instances[0];
        assert_eq!((a.name, a.package, a.own_key, a.footprint()), ("a", "web", &format!("{:032x}", 3)[..], Some(4)));
        assert_eq!(a.block.findings.len(), 2);
        assert_eq!(parts.instances[1].moved(), Some(vec![0, 7]));
        // Written back as recorded, the body is the same.
        let mut again = Writer::default();
        again.frame(parts.frame_key, parts.frame.acknowledged);
        again.lines(&parts.frame.findings);
        again.cross(parts.cross.acknowledged);
        again.lines(&parts.cross.findings);
        for part in &parts.instances {
            again.recorded_instance(part);
        }
        assert_eq!(again.finish(), (body.clone(), 3));
        // Each instance's lines are its span of the record, copied whole; the last one's without the section's
        // final line break is written back with it.
        let opening = format!("instance a web {:032x} {:032x} - 1\n", 3, 4);
        assert_eq!(parts.instances[0].text, format!("{opening}{{\"b\":1}}\n{{\"c\":1}}\n"));
        let unended = read(body.trim_end()).expect("reads back");
        let mut written = Writer::default();
        written.recorded_instance(&unended.instances[1]);
        assert_eq!(written.finish().0, format!("instance b db {:032x} {:032x} 0,7 0\n", 5, 6));
        // Damaged: out of order, a field missing or too many, a bad key, no parts at all.
        for damaged in [
            body.replacen("cross 0\n", "", 1),
            body.replacen(" - 1\n", " -\n", 1),
            body.replacen(" - 1\n", " - 1 x\n", 1),
            body.replacen("frame 0", "frame g", 1),
            body.replacen(" web ", "  ", 1),
            "{\"a\":1}\n".to_string(),
            String::new(),
        ] {
            assert!(read(&damaged).is_none(), "{damaged}");
        }
        // A list of moved objects that does not read is refused where it is read.
        let bad = body.replacen("0,7", "0,,7", 1);
        assert_eq!(read(&bad).expect("reads").instances[1].moved(), None);
    }
}
