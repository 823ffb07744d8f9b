//! Cutting kix's own records into lines and fields, by byte: the inputs section's parts
//! ([`crate::reuse::parts`]) and a cluster's summary record ([`crate::summary`]); and writing their
//! numbers, for those and the output manifest ([`crate::emit::manifest`]). A fleet's rebuild reads and
//! writes the records of every cluster it compiles in part (issue 42), where `str::lines` and
//! `str::split` searched a character at a time and `write!` went through the formatting machinery.

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

/// `value` in decimal (what `{}` writes), made in `digits`: written by hand, the records hold hundreds of
/// thousands of numbers.
pub(crate) fn decimal(value: u64, digits: &mut [u8; 20]) -> &str {
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // Digits only: always UTF-8.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
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

        /// Numbers written as `{}` writes them.
        #[test]
        fn decimals_are_written_as_format_writes_them(value in proptest::num::u64::ANY) {
            let mut digits = [0; 20];
            proptest::prop_assert_eq!(decimal(value, &mut digits), value.to_string());
        }
    }
}
