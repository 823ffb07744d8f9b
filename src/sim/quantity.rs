//! Kubernetes resource quantities (`100m`, `1.5`, `512Mi`, `1e3`) as integers.
//!
//! The scheduler works in milli-CPU and bytes; `MilliValue`/`Value` round up,
//! so kix does too. Parsing is exact (integer arithmetic on the decimal
//! mantissa), so `0.1` CPU is 100m and never 99m.

/// Parses a quantity and returns `value * scale`, rounded up (scale 1000 for milli-units, 1 for units).
pub fn parse_scaled(text: &str, scale: i128) -> Result<i64, String> {
    let text = text.trim();
    let bad = || format!("`{text}` is not a Kubernetes quantity");
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
    let digits = format!("{whole}{fraction}");
    if digits.len() > 30 {
        return Err(bad());
    }
    let mantissa: i128 = digits.parse().map_err(|_| bad())?;
    // value = mantissa * 10^(exp10 - fraction digits) * 2^exp2
    let (exp10, exp2): (i32, u32) = match suffix {
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
        s if s.starts_with(['e', 'E']) => (s[1..].parse::<i32>().map_err(|_| bad())?, 0),
        _ => return Err(bad()),
    };
    let exp10 = exp10 - fraction.len() as i32;
    if !(-40..=30).contains(&exp10) {
        return Err(bad());
    }
    let mut numerator = mantissa.checked_mul(scale).ok_or_else(bad)?;
    numerator = numerator.checked_mul(1i128 << exp2).ok_or_else(bad)?;
    let mut denominator: i128 = 1;
    if exp10 >= 0 {
        numerator = numerator.checked_mul(10i128.pow(exp10 as u32)).ok_or_else(bad)?;
    } else {
        denominator = 10i128.checked_pow((-exp10) as u32).ok_or_else(bad)?;
    }
    let value = (numerator + denominator - 1) / denominator;
    let value = if negative { -value } else { value };
    i64::try_from(value).map_err(|_| bad())
}

/// A CPU quantity in milli-CPU.
pub fn milli(text: &str) -> Result<i64, String> {
    parse_scaled(text, 1000)
}

/// A quantity in whole units (bytes for memory, a count for pods).
pub fn units(text: &str) -> Result<i64, String> {
    parse_scaled(text, 1)
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
    fn bad_quantities_are_errors() {
        for text in ["", "abc", "1..2", "1Xi", "m", "1e", "99999999999999999999999999999999Ei"] {
            assert!(parse_scaled(text, 1000).is_err(), "{text}");
        }
    }
}
