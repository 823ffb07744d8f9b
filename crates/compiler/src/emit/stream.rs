//! The YAML stream of `kix build --stdout` (issue 20): each cluster's part is written as soon as
//! that cluster is compiled, in cluster order, into an unnamed temporary file, and the file is
//! copied to stdout once the whole compile succeeded. Memory holds the parts of clusters compiled
//! ahead of the next one to write (about one per core, since clusters are taken in order), not the
//! fleet's stream; and a compile error anywhere still prints nothing, as before.

use kix_diag::{Code, Diagnostic};
use std::collections::BTreeMap;
use std::io::{Seek, Write};
use std::sync::Mutex;

/// Parts received out of order wait here until every part before them was written or skipped.
struct Pending {
    next: usize,
    waiting: BTreeMap<usize, Option<String>>,
    file: std::io::BufWriter<std::fs::File>,
    /// A part was skipped (its cluster had an error) or a write failed: nothing more is kept.
    failed: bool,
}

/// The stream being written.
pub struct Spool {
    pending: Mutex<Pending>,
}

fn failed(error: std::io::Error) -> Diagnostic {
    Diagnostic::new(Code::WriteFailed, format!("cannot write the stream to a temporary file: {error}"))
}

impl Spool {
    pub fn new() -> Result<Spool, Diagnostic> {
        let file = tempfile::tempfile().map_err(failed)?;
        let pending = Pending { next: 0, waiting: BTreeMap::new(), file: std::io::BufWriter::new(file), failed: false };
        Ok(Spool { pending: Mutex::new(pending) })
    }

    /// Part `index` of the stream: its text, or `None` for a cluster that has none (it failed).
    pub fn part(&self, index: usize, text: Option<String>) -> Result<(), Diagnostic> {
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let pending = &mut *pending;
        if pending.failed {
            return Ok(());
        }
        pending.waiting.insert(index, text);
        while let Some(text) = pending.waiting.remove(&pending.next) {
            pending.next += 1;
            let Some(text) = text else {
                // The stream will not be printed: stop keeping parts.
                pending.failed = true;
                pending.waiting.clear();
                return Ok(());
            };
            if let Err(error) = pending.file.write_all(text.as_bytes()) {
                pending.failed = true;
                pending.waiting.clear();
                return Err(failed(error));
            }
        }
        Ok(())
    }

    /// The written stream, read from its start.
    pub fn finish(self) -> Result<Stream, Diagnostic> {
        let pending = self.pending.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut file = pending.file.into_inner().map_err(|e| failed(e.into_error()))?;
        file.rewind().map_err(failed)?;
        Ok(Stream { file })
    }
}

/// A compiled stream, to be copied where it goes.
#[derive(Debug)]
pub struct Stream {
    file: std::fs::File,
}

impl Stream {
    pub fn copy_to(&mut self, to: &mut impl Write) -> std::io::Result<u64> {
        std::io::copy(&mut self.file, to)
    }
}

#[cfg(test)]
mod tests {
    use super::Spool;

    fn text_of(spool: Spool) -> String {
        let mut bytes = Vec::new();
        spool.finish().unwrap().copy_to(&mut bytes).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    /// Parts arriving in any order are written in index order.
    #[test]
    fn parts_are_written_in_order_whatever_order_they_arrive_in() {
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2], [2, 0, 3, 1]] {
            let spool = Spool::new().unwrap();
            for index in order {
                spool.part(index, Some(format!("{index};"))).unwrap();
            }
            assert_eq!(text_of(spool), "0;1;2;3;", "{order:?}");
        }
    }

    /// After a skipped part nothing more is written or kept.
    #[test]
    fn a_skipped_part_stops_the_stream() {
        let spool = Spool::new().unwrap();
        spool.part(2, Some("2;".into())).unwrap();
        spool.part(0, Some("0;".into())).unwrap();
        spool.part(1, None).unwrap();
        assert!(spool.pending.lock().unwrap().waiting.is_empty());
        spool.part(3, Some("3;".into())).unwrap();
        assert_eq!(text_of(spool), "0;");
    }
}
