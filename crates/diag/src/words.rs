//! Counts as people write them: `1 workload`, `3 workloads`, never `workload(s)`. Every message kix
//! writes agrees its nouns and verbs with their count through these three functions. And serde's
//! messages in kix's words ([`serde_message`]): no Rust type or serde variant name reaches a user.

use std::fmt::Display;

/// The plural ending of a noun counted `n`: `""` for one, `"s"` for any other count (`0 pods`).
pub fn s<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

/// `n` and the noun, plural with an `s` unless `n` is 1.
pub fn plural<N: Display + PartialEq + From<u8> + Copy>(n: N, noun: &str) -> String {
    format!("{n} {noun}{}", s(n))
}

/// `n` and the noun in the form its count takes, for nouns whose plural is not `s` (`1 does`, `3 do`).
pub fn counted<N: Display + PartialEq + From<u8> + Copy>(n: N, one: &str, many: &str) -> String {
    format!("{n} {}", if n == N::from(1) { one } else { many })
}

/// A serde error message in kix's words (issue 41: no Rust type or serde variant name reaches a user).
/// serde's own forms (`serde::de::Error`'s `invalid type: X, expected Y`, `invalid value: X, expected Y`,
/// `unknown variant `x`, expected ...`) are rewritten; other text (kix's own `expecting` sentences, toml's
/// syntax messages) is returned as it is.
pub fn serde_message(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return format!("{} is not valid here: it takes {}", found_words(found), expected_words(expected));
    }
    if let Some(rest) = message.strip_prefix("invalid value: ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return format!("{} is not valid here: it takes {}", found_words(found), expected_words(expected));
    }
    if let Some(rest) = message.strip_prefix("unknown variant ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        let choices = expected.strip_prefix("one of ").unwrap_or(expected);
        return format!("{found} is not one of the values this key takes: {choices}");
    }
    message.to_string()
}

/// serde's `Unexpected` in words: `integer `4`` is the number 4, `string "2"` the text "2".
fn found_words(found: &str) -> String {
    let quoted = |prefix: &str| found.strip_prefix(prefix).map(|v| v.trim_matches('`').to_string());
    if let Some(n) = quoted("integer ").or_else(|| quoted("floating point ")) {
        return format!("the number {n}");
    }
    if let Some(text) = found.strip_prefix("string ") {
        return format!("the text {text}");
    }
    if let Some(b) = quoted("boolean ") {
        return format!("`{b}`");
    }
    match found {
        "sequence" => "a list".to_string(),
        "map" => "a table".to_string(),
        "unit value" | "null" | "unit" => "an empty value".to_string(),
        other => other.to_string(),
    }
}

/// serde's `expecting` in words: Rust's number types as what they count, `a sequence` as a list.
fn expected_words(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number, 0 or more".to_string(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a string" => "text (a quoted string)".to_string(),
        "a sequence" => "a list (`[...]`)".to_string(),
        "a boolean" => "`true` or `false`".to_string(),
        "a map" | "a struct" => "a table".to_string(),
        "a character" | "a char" => "one character".to_string(),
        other => other.strip_prefix("struct ").map_or_else(|| other.to_string(), |_| "a table".to_string()),
    }
}

/// `n` with a comma between each three digits, as English writes large counts: `71,344`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn serde_messages_are_said_in_kix_words() {
        use super::serde_message;
        for (serde, kix) in [
            (
                "invalid value: integer `-2`, expected u32",
                "the number -2 is not valid here: it takes a whole number, 0 or more",
            ),
            (
                "invalid type: string \"2\", expected u32",
                "the text \"2\" is not valid here: it takes a whole number, 0 or more",
            ),
            (
                "invalid type: integer `1`, expected a string",
                "the number 1 is not valid here: it takes text (a quoted string)",
            ),
            (
                "invalid type: string \"eu\", expected a sequence",
                "the text \"eu\" is not valid here: it takes a list (`[...]`)",
            ),
            (
                "invalid type: string \"true\", expected a boolean",
                "the text \"true\" is not valid here: it takes `true` or `false`",
            ),
            (
                "unknown variant `argocd`, expected `add` or `leave`",
                "`argocd` is not one of the values this key takes: `add` or `leave`",
            ),
            (
                "unknown variant `q`, expected one of `one`, `majority`",
                "`q` is not one of the values this key takes: `one`, `majority`",
            ),
            ("missing value after `=`", "missing value after `=`"),
        ] {
            assert_eq!(serde_message(serde), kix, "{serde}");
        }
    }

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(super::plural(1usize, "workload"), "1 workload");
        assert_eq!(super::plural(0u32, "workload"), "0 workloads");
        assert_eq!(super::plural(3i64, "pod"), "3 pods");
        assert_eq!(super::counted(1usize, "does", "do"), "1 does");
        assert_eq!(super::counted(2u64, "does", "do"), "2 do");
        assert_eq!((super::s(1u64), super::s(2usize)), ("", "s"));
        let thousands: Vec<String> = [0, 7, 999, 1000, 71_344, 563_302, 1_000_000].map(super::thousands).into();
        assert_eq!(thousands, ["0", "7", "999", "1,000", "71,344", "563,302", "1,000,000"]);
    }
}
