//! Scalar resolution: what a scalar's text means, exactly as serde_yaml 0.9.34 decided it.
//!
//! kix's golden outputs were produced through serde_yaml, so a plain (unquoted) scalar must resolve
//! to the same null, boolean, integer, float or string as there. The functions below follow
//! serde_yaml 0.9.34 `src/de.rs` (`visit_untagged_scalar`, `parse_null`, `parse_bool`,
//! `parse_unsigned_int`, `parse_negative_int`, `parse_f64`, `digits_but_not_number`) rule for
//! rule: YAML 1.2's core schema as serde_yaml implements it, which differs from the spec in places
//! (`+0x1F` is an integer, `1_000` and `0x_1` are not; `.5` and `1e3` are floats, `017` is a
//! string). Quoted and block scalars are always strings and never reach this module.
//!
//! Integers that fit neither `u64` nor `i64` but do fit 128 bits made serde_yaml's `Value` fail
//! ("u128 is not supported"); [`Resolved::OutOfRange`] keeps that a refusal, with a located error.

use super::{Number, Value};
use std::num::ParseIntError;

/// What a scalar's text resolves to.
#[derive(Debug, PartialEq)]
pub enum Resolved {
    Value(Value),
    /// An integer wider than 64 bits: refused, as serde_yaml refused it.
    OutOfRange,
}

/// An untagged plain scalar (serde_yaml's `visit_untagged_scalar`).
pub fn plain(text: &str) -> Resolved {
    plain_non_string(text).unwrap_or_else(|| Resolved::Value(Value::String(text.to_string())))
}

/// [`plain`], but `None` for a string, so the caller can keep the text it owns.
pub(crate) fn plain_non_string(text: &str) -> Option<Resolved> {
    // Fast path: every null, bool, integer and float serde_yaml accepts starts with one of these
    // (its floats must be finite, so `inf` and `nan` without a dot are strings).
    let Some(&first) = text.as_bytes().first() else { return Some(Resolved::Value(Value::Null)) };
    match first {
        b'0'..=b'9' | b'+' | b'-' | b'.' | b'~' => {}
        // Nothing numeric starts with a letter (Rust's float parser reads `nan` and `inf`, but
        // serde_yaml's floats must be finite), so these are null, a boolean or a string.
        b'n' | b'N' => return is_null(text).then_some(Resolved::Value(Value::Null)),
        b't' | b'T' | b'f' | b'F' => return parse_bool(text).map(|b| Resolved::Value(Value::Bool(b))),
        _ => return None,
    }
    match plain_slow(text) {
        Resolved::Value(Value::String(_)) => None,
        resolved => Some(resolved),
    }
}

fn plain_slow(text: &str) -> Resolved {
    if text.is_empty() || is_null(text) {
        return Resolved::Value(Value::Null);
    }
    if let Some(b) = parse_bool(text) {
        return Resolved::Value(Value::Bool(b));
    }
    match int(text) {
        Some(Resolved::Value(v)) => return Resolved::Value(v),
        Some(Resolved::OutOfRange) => return Resolved::OutOfRange,
        None => {}
    }
    if !digits_but_not_number(text) {
        if let Some(f) = parse_f64(text) {
            return Resolved::Value(Value::Number(Number::from(f)));
        }
    }
    Resolved::Value(Value::String(text.to_string()))
}

/// A scalar under an explicit core tag (`!!int`, ...); `None` when the text does not fit the tag
/// (serde_yaml's `visit_scalar`). Other core tags (`!!str`, `!!binary`, `!!timestamp`) read the
/// text as a string, as serde_yaml did.
pub(crate) fn tagged(suffix: &str, text: &str) -> Option<Resolved> {
    Some(match suffix {
        "bool" => Resolved::Value(Value::Bool(parse_bool(text)?)),
        "int" => int(text)?,
        "float" => Resolved::Value(Value::Number(Number::from(parse_f64(text)?))),
        "null" => is_null(text).then_some(Resolved::Value(Value::Null))?,
        _ => Resolved::Value(Value::String(text.to_string())),
    })
}

fn is_null(text: &str) -> bool {
    matches!(text, "null" | "Null" | "NULL" | "~")
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// serde_yaml's `visit_int`: u64, then i64, then the 128-bit forms it could not represent.
fn int(text: &str) -> Option<Resolved> {
    if let Some(u) = parse_unsigned_int(text, u64::from_str_radix) {
        return Some(Resolved::Value(Value::Number(Number::from(u))));
    }
    if let Some(i) = parse_negative_int(text, i64::from_str_radix) {
        return Some(Resolved::Value(Value::Number(Number::from(i))));
    }
    if parse_unsigned_int(text, u128::from_str_radix).is_some()
        || parse_negative_int(text, i128::from_str_radix).is_some()
    {
        return Some(Resolved::OutOfRange);
    }
    None
}

fn parse_unsigned_int<T>(text: &str, from_str_radix: fn(&str, u32) -> Result<T, ParseIntError>) -> Option<T> {
    let unpositive = text.strip_prefix('+').unwrap_or(text);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(int);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(text) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative_int<T>(text: &str, from_str_radix: fn(&str, u32) -> Result<T, ParseIntError>) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = text.strip_prefix(prefix) {
            if let Ok(int) = from_str_radix(&format!("-{rest}"), radix) {
                return Some(int);
            }
        }
    }
    if digits_but_not_number(text) {
        return None;
    }
    from_str_radix(text, 10).ok()
}

fn parse_f64(text: &str) -> Option<f64> {
    let unpositive = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = text {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = text {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Leading zeros followed by digits are a string in YAML 1.2 (serde_yaml's comment cites
/// https://yaml.org/spec/1.2/spec.html#id2761292).
fn digits_but_not_number(text: &str) -> bool {
    let text = text.strip_prefix(['-', '+']).unwrap_or(text);
    text.len() > 1 && text.starts_with('0') && text[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, parse_stream};

    /// Scalars whose meaning differs between YAML 1.1, YAML 1.2 and serde_yaml's reading of it.
    const TRICKY: &[&str] = &[
        "on",
        "On",
        "ON",
        "off",
        "yes",
        "Yes",
        "no",
        "NO",
        "y",
        "n",
        "true",
        "True",
        "TRUE",
        "tRUE",
        "false",
        "False",
        "FALSE",
        "~",
        "null",
        "Null",
        "NULL",
        "nULL",
        "0x1F",
        "0x1f",
        "+0x1F",
        "-0x1F",
        "0x-1",
        "0x+1",
        "0x",
        "0o17",
        "-0o17",
        "0o8",
        "0b101",
        "-0b101",
        "0b2",
        "017",
        "-017",
        "+017",
        "0",
        "-0",
        "+0",
        "00",
        "0.0",
        "-0.0",
        "+12",
        "++12",
        "+-12",
        "1_000",
        "1e3",
        "1E3",
        "1e+3",
        "-1e-3",
        "+1e3",
        "1.",
        ".5",
        "-.5",
        "+.5",
        ".",
        "..",
        "-.inf",
        "+.inf",
        ".inf",
        ".Inf",
        ".INF",
        "-.Inf",
        ".iNf",
        ".nan",
        ".NaN",
        ".NAN",
        "-.nan",
        "+.nan",
        "nan",
        "NaN",
        "inf",
        "infinity",
        "-inf",
        "1:20",
        "190:20:30",
        "2026-01-01",
        "2026-01-01T00:00:00Z",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "-9223372036854775808",
        "1e400",
        "-1e400",
        "0.1",
        "1.5e-7",
        "12e",
        "0x1F.5",
        "1 2",
        "1,000",
        "$1",
        "v1",
        "250m",
        "16Gi",
        "1.4.0",
        "=",
        "<<",
        "-x",
        "0x1F_2",
        "1__0",
        "+",
        "0b",
        "1e",
        "-0",
        "0.",
        "+-.inf",
    ];

    fn ours(text: &str) -> Value {
        let doc = parse_stream(&format!("k: {text}\n"), &Limits::PACKAGE).remove(0).expect(text);
        doc.value["k"].clone()
    }

    /// serde_yaml's reading, through its own `Value` and our `Serialize`-free comparison by text.
    fn theirs(text: &str) -> serde_yaml::Value {
        let value: serde_yaml::Value = serde_yaml::from_str(&format!("k: {text}\n")).expect(text);
        value["k"].clone()
    }

    fn same(ours: &Value, theirs: &serde_yaml::Value) -> bool {
        match (ours, theirs) {
            (Value::Null, serde_yaml::Value::Null) => true,
            (Value::Bool(a), serde_yaml::Value::Bool(b)) => a == b,
            (Value::String(a), serde_yaml::Value::String(b)) => a == b,
            (Value::Number(a), serde_yaml::Value::Number(b)) => {
                a.to_string() == b.to_string()
                    && a.is_f64() == b.is_f64()
                    && a.as_i64() == b.as_i64()
                    && a.as_u64() == b.as_u64()
            }
            (Value::Mapping(a), serde_yaml::Value::Mapping(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| same(ka, kb) && same(va, vb))
            }
            _ => false,
        }
    }

    #[test]
    fn plain_scalars_resolve_as_serde_yaml_did() {
        assert!(TRICKY.len() >= 80);
        for text in TRICKY {
            let (ours, theirs) = (ours(text), theirs(text));
            assert!(same(&ours, &theirs), "{text:?}: ours {ours:?}, serde_yaml {theirs:?}");
        }
    }

    /// The first-character shortcut of `plain_non_string` agrees with the full rules.
    #[test]
    fn the_shortcut_agrees_with_the_full_rules() {
        let words =
            ["node-00001", "nan", "NaN", "n", "no", "nul", "t", "tru", "f", "fals", "falsey", "Nullable", "zone"];
        for text in TRICKY.iter().chain(&words) {
            let full = match plain_slow(text) {
                Resolved::Value(Value::String(_)) => None,
                resolved => Some(resolved),
            };
            assert_eq!(plain_non_string(text), full, "{text}");
        }
    }

    #[test]
    fn quoted_and_empty_scalars() {
        for text in ["''", "\"\"", "'on'", "\"1e3\"", "'~'", "", "\"null\"", "'017'", "|\n  on\n", ">-\n  12\n"] {
            let (ours, theirs) = (ours(text), theirs(text));
            assert!(same(&ours, &theirs), "{text:?}: ours {ours:?}, serde_yaml {theirs:?}");
        }
    }

    #[test]
    fn core_tags_resolve_as_serde_yaml_did() {
        for text in
            ["!!str 12", "!!str true", "!!int \"12\"", "!!int 0x10", "!!float 1", "!!float '.inf'", "!!bool 'true'"]
        {
            let (ours, theirs) = (ours(text), theirs(text));
            assert!(same(&ours, &theirs), "{text:?}: ours {ours:?}, serde_yaml {theirs:?}");
        }
        for text in ["!!int x", "!!bool yes", "!!null ''", "!!float abc"] {
            assert!(serde_yaml::from_str::<serde_yaml::Value>(&format!("k: {text}\n")).is_err(), "{text}");
            let error = parse_stream(&format!("k: {text}\n"), &Limits::PACKAGE).remove(0).unwrap_err();
            assert_eq!(
                (error.kind, error.mark.line, error.mark.column),
                (crate::YamlErrorKind::InvalidTaggedScalar, 1, 4)
            );
        }
    }

    #[test]
    fn integers_past_64_bits_are_refused_like_serde_yaml() {
        for text in ["18446744073709551616", "-9223372036854775809", "0xFFFFFFFFFFFFFFFFFF"] {
            assert!(serde_yaml::from_str::<serde_yaml::Value>(&format!("k: {text}\n")).is_err(), "{text}");
            assert_eq!(plain(text), Resolved::OutOfRange, "{text}");
        }
    }
}
