//! Scalar resolution: what a scalar's text means, exactly as kubectl's decoder decides it.
//!
//! kubectl reads YAML through sigs.k8s.io/yaml, which decodes with its fork of go-yaml v2
//! (`sigs.k8s.io/yaml/goyaml.v2/resolve.go`, `resolve`): YAML 1.1 as go-yaml implements it. The
//! functions below follow that function rule for rule:
//!
//! * a lookup table first, tried only when the text starts with one of `yYnNtTfFoO~.+-` or a digit
//!   (the "hint"): `y Y yes Yes YES true True TRUE on On ON` are true, `n N no No NO false False
//!   FALSE off Off OFF` false, `"" ~ null Null NULL` null, `.nan .inf +.inf -.inf` (three
//!   spellings each) floats;
//! * text starting with `.`: a float as Go's `strconv.ParseFloat` reads it;
//! * text starting with a sign or a digit: underscores are removed, then an integer as Go's
//!   `strconv.ParseInt(_, 0, 64)` reads it (`0x`, `0o`, `0b` prefixes, and a leading `0` is octal:
//!   `0755` is 493), then `ParseUint`, then a float if it matches go-yaml's `yamlStyleFloat`
//!   (`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`; so `08` is the float 8 and
//!   `18446744073709551616` a float); a prefixed integer wider than 64 bits is a `big.Int` there and
//!   [`Resolved::OutOfRange`] here (kix's numbers are 64 bits: refused with a located error);
//! * everything else is a string: sexagesimal (`1:20`, "purposefully unsupported" there),
//!   timestamps (go-yaml v2 hands a timestamp to an `interface{}` as its text), `.5.5`.
//!
//! Quoted and block scalars are always strings and never reach this module. Keys are resolved the
//! same way and then made strings as sigs.k8s.io/yaml does before it writes JSON ([`key`]).

use super::{Number, Value};

/// What a scalar's text resolves to.
#[derive(Debug, PartialEq)]
pub enum Resolved {
    Value(Value),
    /// An integer wider than 64 bits: refused.
    OutOfRange,
}

/// An untagged plain scalar (go-yaml v2's `resolve("", text)`).
pub fn plain(text: &str) -> Resolved {
    plain_non_string(text).unwrap_or_else(|| Resolved::Value(Value::String(text.to_string())))
}

/// [`plain`], but `None` for a string, so the caller can keep the text it owns.
pub(crate) fn plain_non_string(text: &str) -> Option<Resolved> {
    let Some(&first) = text.as_bytes().first() else { return Some(Resolved::Value(Value::Null)) };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => keyword(text),
        b'.' => keyword(text).or_else(|| dot_float(text)),
        b'0'..=b'9' | b'+' | b'-' => keyword(text).or_else(|| number(text)),
        _ => None,
    }
}

/// go-yaml v2's `resolveMap`.
fn keyword(text: &str) -> Option<Resolved> {
    let value = match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Value::Bool(true),
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Value::Bool(false),
        "~" | "null" | "Null" | "NULL" => Value::Null,
        ".nan" | ".NaN" | ".NAN" => Value::Number(Number::from(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Value::Number(Number::from(f64::INFINITY)),
        "-.inf" | "-.Inf" | "-.INF" => Value::Number(Number::from(f64::NEG_INFINITY)),
        _ => return None,
    };
    Some(Resolved::Value(value))
}

/// The `.` hint: `strconv.ParseFloat(text, 64)`, which takes no underscore that does not sit
/// between digits and fails (so the text stays a string) when the float overflows.
fn dot_float(text: &str) -> Option<Resolved> {
    if !text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_')) {
        return None;
    }
    if text.contains('_') && !underscores_between_digits(text) {
        return None;
    }
    float(&text.replace('_', ""))
}

/// The sign-or-digit hint: integer, unsigned integer, then a YAML-style float.
fn number(text: &str) -> Option<Resolved> {
    let plain = text.replace('_', "");
    match parse_uint(plain.strip_prefix('+').unwrap_or(&plain)) {
        // ParseInt: an optional sign, then ParseUint's digits, within i64.
        Ok(u) if !plain.starts_with('-') && i64::try_from(u).is_ok() => return Some(int(Number::from(u))),
        _ => {}
    }
    if let Some(digits) = plain.strip_prefix('-') {
        if let Ok(u) = parse_uint(digits) {
            if u <= 1 << 63 {
                let i = if u == 1 << 63 { i64::MIN } else { -(u as i64) };
                return Some(int(Number::from(i)));
            }
        }
    }
    // ParseUint: no sign at all.
    let unsigned = parse_uint(&plain);
    if let Ok(u) = unsigned {
        return Some(int(Number::from(u)));
    }
    if yaml_style_float(&plain) {
        if let Some(resolved) = float(&plain) {
            return Some(resolved);
        }
    }
    // go-yaml's `big.Int` branch: a range error from ParseUint.
    (unsigned == Err(IntError::Range)).then_some(Resolved::OutOfRange)
}

fn int(n: Number) -> Resolved {
    Resolved::Value(Value::Number(n))
}

fn float(text: &str) -> Option<Resolved> {
    let f: f64 = text.parse().ok()?;
    f.is_finite().then(|| Resolved::Value(Value::Number(Number::from(f))))
}

#[derive(Debug, PartialEq)]
enum IntError {
    Syntax,
    Range,
}

/// Go's `strconv.ParseUint(text, 0, 64)` on text without underscores: `0x`, `0o`, `0b` (either
/// case, with at least one digit after), a leading `0` for octal, else decimal; no sign.
fn parse_uint(text: &str) -> Result<u64, IntError> {
    let b = text.as_bytes();
    if b.is_empty() {
        return Err(IntError::Syntax);
    }
    let (radix, digits) = if b[0] == b'0' && b.len() >= 3 {
        match b[1].to_ascii_lowercase() {
            b'x' => (16, &text[2..]),
            b'o' => (8, &text[2..]),
            b'b' => (2, &text[2..]),
            _ => (8, &text[1..]),
        }
    } else if b[0] == b'0' {
        (8, &text[1..])
    } else {
        (10, text)
    };
    let mut n: u64 = 0;
    for c in digits.bytes() {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'z' => c - b'a' + 10,
            b'A'..=b'Z' => c - b'A' + 10,
            _ => return Err(IntError::Syntax),
        };
        if u32::from(d) >= radix {
            return Err(IntError::Syntax);
        }
        n = n.checked_mul(u64::from(radix)).and_then(|n| n.checked_add(u64::from(d))).ok_or(IntError::Range)?;
    }
    Ok(n)
}

/// go-yaml v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `underscoreOK` for a number without a base prefix: each `_` between two digits.
fn underscores_between_digits(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().all(|(i, &c)| {
        c != b'_' || (i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
    })
}

/// A scalar under an explicit core tag (`!!int`, ...); `None` when the text does not fit the tag
/// (go-yaml v2's `resolve(tag, text)`: the text resolves as if plain and must come out of the
/// tag's kind, except that `!!float` takes an integer as a float). `!!binary` is base64 that
/// go-yaml v2 decodes into the string's bytes (`decode.go`, `scalar`: `resolved = string(data)`), which
/// sigs.k8s.io/yaml then writes as a JSON string (Go's encoding/json replacing invalid UTF-8 with
/// U+FFFD): the decoded text here; text that is not base64 is refused, as go-yaml refuses it.
/// `!!str`, `!!timestamp` and the other tags read the text as a string.
pub(crate) fn tagged(suffix: &str, text: &str) -> Option<Resolved> {
    if suffix == "binary" {
        let bytes = base64_std(text)?;
        return Some(Resolved::Value(Value::String(String::from_utf8_lossy(&bytes).into_owned())));
    }
    let resolved = || plain(text);
    Some(match (suffix, resolved()) {
        ("bool", r @ Resolved::Value(Value::Bool(_))) => r,
        ("null", r @ Resolved::Value(Value::Null)) => r,
        ("int", Resolved::Value(Value::Number(n))) if !n.is_f64() => int(n),
        ("int", Resolved::OutOfRange) => Resolved::OutOfRange,
        ("float", Resolved::Value(Value::Number(n))) => {
            Resolved::Value(Value::Number(if n.is_f64() { n } else { Number::from(n.as_f64()?) }))
        }
        ("bool" | "null" | "int" | "float", _) => return None,
        _ => Resolved::Value(Value::String(text.to_string())),
    })
}

/// Go's `base64.StdEncoding.DecodeString`: the standard alphabet with `=` padding, `\r` and `\n`
/// ignored (`encoding/base64`, "New line characters (\r and \n) are ignored"); `None` for anything else.
fn base64_std(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text.bytes().filter(|b| *b != b'\r' && *b != b'\n').collect();
    if digits.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(digits.len() / 4 * 3);
    let quads = digits.chunks(4).count();
    for (index, quad) in digits.chunks(4).enumerate() {
        let padding = quad.iter().rev().take_while(|c| **c == b'=').count();
        if padding > 2 || (padding > 0 && index + 1 != quads) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - padding] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * padding as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - padding]);
    }
    Some(out)
}

/// A mapping key as sigs.k8s.io/yaml makes it a JSON object's key (`yaml.go`,
/// `convertToJSONableObject`): strings stay, integers are written in decimal, booleans as `true`
/// and `false`, floats as Go's `strconv.FormatFloat(f, 'g', -1, 32)` (`.inf`, `-.inf`, `.nan` for
/// the special values). A null or collection key is an error there ("unsupported map key"):
/// `None` here.
pub fn key(value: Value) -> Option<Value> {
    Some(Value::String(match value {
        Value::String(_) => return Some(value),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(i)) => i.to_string(),
            _ => format_float_g32(n.as_f64()?),
        },
        _ => return None,
    }))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)` (`ftoa.go`, `%g` with the shortest precision): the
/// shortest digits that read back as the same `float32`, in `%e` form when the decimal exponent is
/// below -4 or at least 6 (`eprec = 6` when shortest), else `%f`.
fn format_float_g32(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let f = f as f32;
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let e = format!("{:e}", f.abs());
    let (mantissa, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let rest = &digits[1..];
        let point = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{}{point}e{esign}{:02}", &digits[..1], exp.abs());
    }
    // %f with exactly the shortest digits.
    let dp = exp + 1;
    let body = if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(dp as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys as sigs.k8s.io/yaml writes them into JSON (`yaml.go`; its `yaml_test.go` has
    /// `1: a`, `true: b` and `1.5: c` read as "1", "true" and "1.5").
    #[test]
    fn keys_are_strings_as_sigs_k8s_io_yaml_makes_them() {
        let cases: &[(&str, &str)] = &[
            ("5432", "5432"),
            ("0755", "493"),
            ("-3", "-3"),
            ("on", "true"),
            ("no", "false"),
            ("1.5", "1.5"),
            ("0.1", "0.1"),
            ("1e3", "1000"),
            ("1e6", "1e+06"),
            ("123456", "123456"),
            ("1234567.0", "1.234567e+06"),
            ("0.0001", "0.0001"),
            ("0.00001", "1e-05"),
            ("-2.5e-7", "-2.5e-07"),
            ("3.14159265358979", "3.1415927"),
            (".inf", ".inf"),
            ("-.inf", "-.inf"),
            (".nan", ".nan"),
            ("0.0", "0"),
            ("name", "name"),
        ];
        for (text, want) in cases {
            let Resolved::Value(value) = plain(text) else { panic!("{text}") };
            assert_eq!(key(value), Some(Value::String((*want).into())), "{text}");
        }
        assert_eq!(key(Value::Null), None);
    }

    /// The hint table: only text starting with one of these can be anything but a string.
    #[test]
    fn text_without_a_hint_is_a_string() {
        for text in ["<<", "=", "v1", "250m", "abc", "_1", "@x", "Yes!", "onion", "offset", "nulls", "tRUE"] {
            assert_eq!(plain(text), Resolved::Value(Value::String(text.into())), "{text}");
        }
    }

    #[test]
    fn go_parse_uint_prefixes() {
        assert_eq!(parse_uint("0x1F"), Ok(31));
        assert_eq!(parse_uint("0X1f"), Ok(31));
        assert_eq!(parse_uint("0o17"), Ok(15));
        assert_eq!(parse_uint("017"), Ok(15));
        assert_eq!(parse_uint("0b101"), Ok(5));
        assert_eq!(parse_uint("0"), Ok(0));
        assert_eq!(parse_uint("0x"), Err(IntError::Syntax));
        assert_eq!(parse_uint("08"), Err(IntError::Syntax));
        assert_eq!(parse_uint("+1"), Err(IntError::Syntax));
        assert_eq!(parse_uint("18446744073709551616"), Err(IntError::Range));
    }
}
