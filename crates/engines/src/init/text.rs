//! The text `kix init` writes its names in: DNS-1123 labels made from any text, TOML keys, and the
//! one-diagnostic error both commands return.

use kix_diag::{Diagnostic, Diagnostics};

pub(super) fn one(diagnostic: Diagnostic) -> Diagnostics {
    let mut diagnostics = Diagnostics::default();
    diagnostics.push(diagnostic);
    diagnostics
}

/// A key as TOML writes it: bare when it can be, quoted otherwise.
pub(super) fn toml_key(key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// A DNS-1123 label made from any text (lower case, `-` for anything else, trimmed, at most 63).
pub(super) fn dns_label(text: &str) -> String {
    let mapped: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let trimmed: String = mapped.trim_matches('-').chars().take(63).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() { "pool".to_string() } else { trimmed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_written_as_people_write_them() {
        assert_eq!(dns_label("My_App.v2"), "my-app-v2");
        assert_eq!(dns_label("--"), "pool");
        assert_eq!(toml_key("api"), "api");
        assert_eq!(toml_key("api.v2"), "\"api.v2\"");
    }
}
