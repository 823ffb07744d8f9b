//! Text tables as kix prints them (build's summary, verify's verdicts, capacity's costs): columns
//! padded to their widest cell, two spaces apart, indented by two; the last column, which holds
//! lists (`api x3 +pdb, worker x2, ...`), wrapped at its items to fit a width, each continuation line
//! starting under the column, or, where the other columns leave it too little room (less than
//! [`MIN_LAST`] or its longest item), on lines of their own four spaces in. The other columns are kept
//! whole; where they alone are wider than the width (issue 41: a long workload name in an 80-column
//! terminal pushed every row past the edge), each row is printed as a record instead: its first cell,
//! then one `HEADER value` line per other column, four spaces in, the last one's list wrapped to fit.
//!
//! The width is the caller's: `commands/`, the one place that talks to the terminal, passes
//! `COLUMNS` when set, else the terminal's width when stdout is one, else no limit (so a pipe or a
//! file gets one line per row).

use std::fmt::Write as _;

/// How wide a table may be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Width(pub Option<usize>);

impl Width {
    /// No limit.
    pub const UNLIMITED: Width = Width(None);
}

/// The narrowest the last column is squeezed to under its header; with less room, or less than its longest
/// item needs, it continues on lines of its own at [`INDENT`].
const MIN_LAST: usize = 24;

/// Where the last column's lines start when it has no room under its header.
const INDENT: usize = 4;

/// How many characters `text` is (what a column's width counts): its length when it is ASCII, as a table's
/// cells almost always are (counting characters was a fifth of rendering a fleet's table, issue 42).
fn text_width(text: &str) -> usize {
    if text.is_ascii() { text.len() } else { text.chars().count() }
}

/// Renders rows (the first is the header), each line ending in `\n`.
pub fn render<S: AsRef<str>, R: AsRef<[S]>>(rows: &[R], width: Width) -> String {
    let columns = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    if columns == 0 {
        return String::new();
    }
    let cell_width =
        |c: usize| rows.iter().map(|r| r.as_ref().get(c).map_or(0, |s| text_width(s.as_ref()))).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns).map(cell_width).collect();
    // Where the last column starts: the indent, every other column and the gaps.
    let start = 2 + widths[..columns - 1].iter().map(|w| w + 2).sum::<usize>();
    // Where continuation lines start and how long they may be: under the column when it has room, else
    // (the other columns leave less than MIN_LAST) at a fixed indent, the whole width less it.
    let longest_item = || {
        rows.iter()
            .filter_map(|r| r.as_ref().get(columns - 1))
            .flat_map(|cell| cell.as_ref().split(", ").map(|item| item.chars().count() + 1))
            .max()
            .unwrap_or(0)
    };
    if let Some(w) = width.0
        && start > w
    {
        return records(rows, w);
    }
    let (indent, room) = match width.0 {
        None => (start, None),
        Some(w) if w >= start + MIN_LAST.max(longest_item()) => (start, Some(w - start)),
        Some(w) => (INDENT, Some(w.saturating_sub(INDENT).max(MIN_LAST))),
    };
    let mut out = String::with_capacity(rows.len() * (start + 40));
    let mut line = String::with_capacity(start + 80);
    for row in rows {
        let row = row.as_ref();
        line.clear();
        line.push_str("  ");
        for (c, width) in widths.iter().enumerate().take(columns - 1) {
            let cell = row.get(c).map_or("", AsRef::as_ref);
            line.push_str(cell);
            push_spaces(&mut line, width - text_width(cell) + 2);
        }
        let last = row.get(columns - 1).map_or("", AsRef::as_ref);
        if room.is_none() {
            // No width: the last column whole on the row's line (a fleet's table is 100,000 rows).
            line.push_str(last);
            out.push_str(line.trim_end());
            out.push('\n');
            continue;
        }
        let mut pieces = wrap(last, room).into_iter().peekable();
        let fits = |piece: &String| width.0.is_none_or(|w| start + piece.chars().count() <= w);
        if indent == start || pieces.peek().is_some_and(fits) {
            line.push_str(&pieces.next().unwrap_or_default());
        }
        out.push_str(line.trim_end());
        out.push('\n');
        for piece in pieces {
            let _ = writeln!(out, "{:indent$}{piece}", "");
        }
    }
    out
}

/// `count` spaces, pushed a run at a time.
fn push_spaces(line: &mut String, count: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = count;
    while left > 0 {
        let run = left.min(SPACES.len());
        line.push_str(&SPACES[..run]);
        left -= run;
    }
}

/// The rows as records, for a width the fixed columns do not fit: each row's first cell, then each
/// other column as `HEADER value` four spaces in (the header row itself is not printed on its own).
fn records<S: AsRef<str>, R: AsRef<[S]>>(rows: &[R], width: usize) -> String {
    let Some((header, rows)) = rows.split_first() else { return String::new() };
    let header = header.as_ref();
    let label_width = header.iter().skip(1).map(|h| h.as_ref().chars().count()).max().unwrap_or(0);
    let room = width.saturating_sub(INDENT + label_width + 1).max(MIN_LAST);
    let mut out = String::new();
    for row in rows {
        let row = row.as_ref();
        let _ = writeln!(out, "  {}", row.first().map_or("", AsRef::as_ref));
        for (label, cell) in header.iter().zip(row).skip(1) {
            let (label, mut pieces) = (label.as_ref(), wrap(cell.as_ref(), Some(room)).into_iter());
            let _ = writeln!(out, "{:INDENT$}{label:<label_width$} {}", "", pieces.next().unwrap_or_default());
            for piece in pieces {
                let _ = writeln!(out, "{:w$}{piece}", "", w = INDENT + label_width + 1);
            }
        }
    }
    out
}

/// A list cell cut at its `, ` separators into lines of at most `room` characters (the comma stays at the
/// end of the line it ends).
fn wrap(cell: &str, room: Option<usize>) -> Vec<String> {
    let Some(room) = room else { return vec![cell.to_string()] };
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    let items: Vec<&str> = cell.split(", ").collect();
    for (index, item) in items.iter().enumerate() {
        let piece = if index + 1 < items.len() { format!("{item},") } else { (*item).to_string() };
        if current.is_empty() {
            current = piece;
        } else if current.chars().count() + 1 + piece.chars().count() <= room {
            current.push(' ');
            current.push_str(&piece);
        } else {
            lines.push(std::mem::take(&mut current));
            current = piece;
        }
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(last: &str) -> Vec<Vec<String>> {
        vec![vec!["NAME".into(), "WORKLOADS".into()], vec!["shop".into(), last.into()]]
    }

    // Each table at a width, with the lines it prints.
    #[test]
    fn the_last_column_wraps_at_its_items() {
        let long = "api x3 +pdb, worker x2 +pdb, cart x1, checkout x3 +pdb, currency x3 +pdb";
        let cases: &[(&str, Width, &[&str])] = &[
            (long, Width::UNLIMITED, &["  NAME  WORKLOADS", &format!("  shop  {long}")]),
            (long, Width(Some(200)), &["  NAME  WORKLOADS", &format!("  shop  {long}")]),
            (
                long,
                Width(Some(40)),
                &[
                    "  NAME  WORKLOADS",
                    "  shop  api x3 +pdb, worker x2 +pdb,",
                    "        cart x1, checkout x3 +pdb,",
                    "        currency x3 +pdb",
                ],
            ),
            // Less room than 24 under the header: the list continues on lines of its own, 4 in.
            (
                long,
                Width(Some(30)),
                &[
                    "  NAME  WORKLOADS",
                    "  shop  api x3 +pdb,",
                    "    worker x2 +pdb, cart x1,",
                    "    checkout x3 +pdb,",
                    "    currency x3 +pdb",
                ],
            ),
            ("-", Width(Some(20)), &["  NAME  WORKLOADS", "  shop  -"]),
        ];
        // Issue 41: fixed columns wider than the width make each row a record rather than overflow.
        let wide: Vec<Vec<String>> = vec![
            vec!["INSTANCE".into(), "WORKLOAD".into(), "VERDICT".into()],
            vec!["shop".into(), "Deployment/a-workload-with-a-very-long-name".into(), "meets zone".into()],
        ];
        let text = render(&wide, Width(Some(30)));
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            ["  shop", "    WORKLOAD Deployment/a-workload-with-a-very-long-name", "    VERDICT  meets zone"],
            "{text}"
        );
        for (last, width, lines) in cases {
            let text = render(&rows(last), *width);
            assert_eq!(text.lines().collect::<Vec<_>>(), *lines, "{width:?}\n{text}");
            if let Width(Some(w)) = width {
                if *w >= 30 {
                    assert!(text.lines().all(|l| l.chars().count() <= *w), "{text}");
                }
            }
        }
    }
}
