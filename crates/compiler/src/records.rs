//! Cutting kix's own records into lines and fields, by byte: the inputs section's parts
//! ([`crate::reuse::parts`]) and a cluster's summary record ([`crate::summary`]). A fleet's rebuild
//! reads the records of every cluster it compiles in part (issue 42), where `str::lines` and
//! `str::split` searched a character at a time.

/// `text`'s lines as [`str::lines`] gives them (a line break is `\n` or `\r\n`), each found with `memchr`.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(end) = memchr::memchr(b'\n', rest.as_bytes()) else {
            return Some(std::mem::take(&mut rest));
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// `line`'s fields as `line.split(separator)` gives them, for an ASCII `separator`: a byte never part of
/// another character's UTF-8, so each cut is at a character boundary. Looked for a byte at a time: a
/// record's fields are a few bytes each.
pub(crate) fn fields(line: &str, separator: u8) -> impl Iterator<Item = &str> {
    debug_assert!(separator.is_ascii());
    let mut rest = Some(line);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.bytes().position(|b| b == separator) {
            Some(at) => {
                rest = Some(&text[at + 1..]);
                Some(&text[..at])
            }
            None => rest.take(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Cut as `str::lines` and `str::split` cut, whatever the mix of breaks and separators.
        #[test]
        fn cut_as_std_cuts(text in "[a\\r\\n\\t é]{0,14}") {
            proptest::prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
            proptest::prop_assert_eq!(fields(&text, b'\t').collect::<Vec<_>>(), text.split('\t').collect::<Vec<_>>());
        }
    }
}
