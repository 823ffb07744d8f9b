//! Counts as people write them: `1 workload`, `3 workloads`, never `workload(s)`. Every message kix
//! writes agrees its nouns and verbs with their count through these three functions.

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
