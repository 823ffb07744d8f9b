//! Kubernetes resource quantities (`100m`, `1.5`, `512Mi`, `1e3`) as integers.
//!
//! The scheduler works in milli-CPU and bytes; `MilliValue`/`Value` round up,
//! so kix does too. Parsing is exact (integer arithmetic on the decimal
//! mantissa), so `0.1` CPU is 100m and never 99m. Every valid form is read
//! (`1E` is 10^18, `1Ei` 2^60); a result beyond 64 bits saturates at
//! `i64::MAX`, as upstream caps a quantity at 2^63-1, and the model's resource
//! arithmetic saturates too, so an absurd quantity never wraps or panics.
//!
//! Follows staging/src/k8s.io/apimachinery/pkg/api/resource (`ParseQuantity`,
//! `Quantity.ScaledValue`, `MilliValue`).

/// A quantity kix cannot read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error("`{0}` is not a Kubernetes quantity")]
    Syntax(String),
    #[error("`{text}`: the exponent {exponent} is out of range (kix reads exponents of up to 9 digits)")]
    Exponent { text: String, exponent: String },
}

/// Parses a quantity and returns `value * scale`, rounded up (away from zero, as upstream's
/// `ScaledValue`) (scale 1000 for milli-units, 1 for units).
///
/// Every form of upstream's grammar is accepted: an optional sign, `1`, `1.5`, `.5`, `5.`, any
/// number of digits (leading zeros and digits beyond the precision kix keeps do not matter; a
/// dropped non-zero digit still rounds up), decimal SI suffixes `n u m k M G T P E`, binary
/// suffixes `Ki Mi Gi Ti Pi Ei`, and decimal exponents `e3`, `E-2`, `e+6`. A value whose result
/// does not fit in 64 bits saturates at `i64::MAX` (or `i64::MIN`), as upstream caps quantities
/// at 2^63-1. Only an exponent that does not fit in 32 bits is refused, with a message saying so.
pub(crate) fn parse_scaled(text: &str, scale: i128) -> Result<i64, QuantityError> {
    let text = text.trim();
    let bad = || QuantityError::Syntax(text.to_string());
    if text.is_empty() {
        return Err(bad());
    }
    let (negative, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_end = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
    let (number, suffix) = body.split_at(number_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err(bad());
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    // value = mantissa * 10^(exp10 - fraction digits) * 2^exp2
    let (exp10, exp2): (i64, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        s if s.starts_with(['e', 'E']) => {
            let exponent = &s[1..];
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let e: i32 = exponent
                .parse()
                .map_err(|_| QuantityError::Exponent { text: text.to_string(), exponent: exponent.to_string() })?;
            (i64::from(e), 0)
        }
        _ => return Err(bad()),
    };
    // Significant digits: no leading zeros, no trailing zeros after the point.
    let fraction = fraction.trim_end_matches('0');
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    let saturated = if negative { i64::MIN } else { i64::MAX };
    if significant.is_empty() {
        return Ok(0);
    }
    let mut exp10 = exp10 - fraction.len() as i64;
    // Keep 30 digits; a non-zero digit dropped beyond them makes the value round up.
    const KEEP: usize = 30;
    let (kept, dropped) = significant.split_at(significant.len().min(KEEP));
    let sticky = dropped.bytes().any(|b| b != b'0');
    exp10 += dropped.len() as i64;
    let mantissa: i128 = kept.parse().map_err(|_| bad())?;
    // Orders of magnitude: 10^(digits + exp10 - 1) <= |value| / (scale * 2^exp2).
    let magnitude = kept.len() as i64 + exp10;
    if magnitude > 40 {
        return Ok(saturated);
    }
    let numerator = mantissa.checked_mul(scale).and_then(|n| n.checked_mul(1i128 << exp2));
    let Some(mut numerator) = numerator else { return Ok(saturated) };
    let mut denominator: i128 = 1;
    if exp10 >= 0 {
        match 10i128.checked_pow(exp10 as u32).and_then(|p| numerator.checked_mul(p)) {
            Some(n) => numerator = n,
            None => return Ok(saturated),
        }
    } else {
        match u32::try_from(-exp10).ok().and_then(|e| 10i128.checked_pow(e)) {
            Some(d) => denominator = d,
            // Smaller than any unit: rounds up to one (away from zero).
            None => return Ok(if negative { -1 } else { 1 }),
        }
    }
    let mut value = numerator / denominator;
    if numerator % denominator != 0 || sticky {
        value += 1;
    }
    let value = if negative { -value } else { value };
    Ok(i64::try_from(value).unwrap_or(saturated))
}

/// A CPU quantity in milli-CPU.
pub fn milli(text: &str) -> Result<i64, QuantityError> {
    parse_scaled(text, 1000)
}

/// A quantity in whole units (bytes for memory, a count for pods).
pub fn units(text: &str) -> Result<i64, QuantityError> {
    parse_scaled(text, 1)
}

/// A CPU quantity as kix writes it in messages: whole CPUs bare (`2`), else millicores (`1800m`).
pub fn milli_text(milli: i64) -> String {
    if milli % 1000 == 0 { format!("{}", milli / 1000) } else { format!("{milli}m") }
}

/// A memory quantity as kix writes it in messages: `16Gi`, `512Mi`, or bytes.
pub fn bytes_text(bytes: i64) -> String {
    const GI: i64 = 1 << 30;
    const MI: i64 = 1 << 20;
    if bytes != 0 && bytes % GI == 0 {
        format!("{}Gi", bytes / GI)
    } else if bytes != 0 && bytes % MI == 0 {
        format!("{}Mi", bytes / MI)
    } else {
        format!("{bytes}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_table() {
        let cases = [
            ("100m", 1000, 100),
            ("1", 1000, 1000),
            ("0.1", 1000, 100),
            ("1.5", 1000, 1500),
            ("2k", 1, 2000),
            ("512Mi", 1, 512 * 1024 * 1024),
            ("1Gi", 1, 1 << 30),
            ("1G", 1, 1_000_000_000),
            ("1e3", 1, 1000),
            ("1n", 1000, 1),
            ("110", 1, 110),
        ];
        for (text, scale, expected) in cases {
            assert_eq!(parse_scaled(text, scale), Ok(expected), "{text}");
        }
    }

    #[test]
    fn every_valid_form_is_read_and_overflow_saturates() {
        let max = i64::MAX;
        let cases = [
            ("1E", 1, 1_000_000_000_000_000_000),
            ("1Ei", 1, 1 << 60),
            ("8Ei", 1, max),
            ("9223372036854775807", 1, max),
            ("9223372036854775807", 1000, max),
            ("1E", 1000, max),
            ("1Ei", 1000, max),
            ("-1E", 1000, i64::MIN),
            ("1e30", 1, max),
            ("99999999999999999999999999999999Ei", 1000, max),
            (".5", 1000, 500),
            ("5.", 1000, 5000),
            ("+2", 1, 2),
            ("1e+3", 1, 1000),
            ("1E3", 1, 1000),
            ("1e-3", 1000, 1),
            ("1.5Gi", 1, 3 << 29),
            ("0000000000000000000000000000000000000000001", 1, 1),
            ("1.0000000000000000000000000000000000000001", 1, 2),
            ("0.00000000000000000000000000000000000000000000001", 1000, 1),
            ("12345678901234567890123456789012345678901234567890e-40", 1, 1_234_567_891),
            ("1e-999", 1, 1),
            ("0e999", 1, 0),
            ("0.000", 1000, 0),
            ("100u", 1000, 1),
            ("1P", 1, 1_000_000_000_000_000),
        ];
        for (text, scale, expected) in cases {
            assert_eq!(parse_scaled(text, scale), Ok(expected), "{text} at scale {scale}");
        }
    }

    #[test]
    fn bad_quantities_are_errors() {
        for text in ["", "abc", "1..2", "1Xi", "m", "1e", "1e+", "1e1.5", "1K", "1 Gi", "--1", "1ee3"] {
            assert_eq!(parse_scaled(text, 1000), Err(QuantityError::Syntax(text.to_string())), "{text}");
        }
        let e = parse_scaled("1e99999999999", 1).unwrap_err().to_string();
        assert!(e.contains("exponent") && e.contains("out of range"), "{e}");
    }
}
