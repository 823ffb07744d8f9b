//! Counts as people write them: `1 workload`, `3 workloads`, never `workload(s)`.

/// `n` and the noun, plural with an `s` unless `n` is 1.
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// `n` and the noun in the form its count takes, for nouns whose plural is not `s` (`1 does`, `3 do`).
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(super::plural(1u32, "workload"), "1 workload");
        assert_eq!(super::plural(0u32, "workload"), "0 workloads");
        assert_eq!(super::plural(3u32, "pod"), "3 pods");
        assert_eq!(super::counted(1u32, "does", "do"), "1 does");
        assert_eq!(super::counted(2u32, "does", "do"), "2 do");
    }
}
