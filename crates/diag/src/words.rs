//! Counts as people write them: `1 workload`, `3 workloads`, never `workload(s)`.

/// `n` and the noun, plural with an `s` unless `n` is 1.
pub fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// `n` and the noun in the form its count takes, for nouns whose plural is not `s` (`1 does`, `3 do`).
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(super::plural(1, "workload"), "1 workload");
        assert_eq!(super::plural(0, "workload"), "0 workloads");
        assert_eq!(super::plural(3, "pod"), "3 pods");
        assert_eq!(super::counted(1, "does", "do"), "1 does");
        assert_eq!(super::counted(2, "does", "do"), "2 do");
    }
}
