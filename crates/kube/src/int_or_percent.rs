//! IntOrString values that are a count or a percentage (`maxSurge`, `minAvailable`, ...).
//!
//! Follows `k8s.io/apimachinery/pkg/util/intstr` (`GetScaledValueFromIntOrPercent`:
//! a percentage of a total, rounded up or down as the caller asks) and the API
//! server's checks in `pkg/apis/apps/validation` (`ValidatePositiveIntOrPercent`,
//! `IsNotMoreThan100Percent`). The Deployment controller rounds `maxSurge` up and
//! `maxUnavailable` down (`deploymentutil.ResolveFenceposts`); the disruption
//! controller rounds a PodDisruptionBudget's percentages up (`getExpectedScale`).

use kix_yaml::Value;
use std::fmt;

/// A count or a percentage of some total.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntOrPercent {
    Int(i64),
    Percent(i64),
}

/// Why a value is not an int-or-percent the API server accepts; phrased to follow "field: ".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntOrPercentError {
    #[error("must be an integer or percentage (e.g '5%')")]
    NotIntOrPercent,
    #[error("must be an integer or percentage (e.g '5%'), not {0}")]
    NotAnInteger(String),
    #[error("`{0}` must be an integer or percentage (e.g '5%')")]
    NotAPercentage(String),
    #[error("must be greater than or equal to 0 (it is {0})")]
    OutOfRange(i64),
    #[error("`{0}` must not be greater than 100%")]
    OverHundred(String),
}

impl IntOrPercent {
    /// Reads a value as `GetScaledValueFromIntOrPercent` does: any integer, or `N%` with an integer N.
    pub fn read(value: &Value) -> Result<IntOrPercent, IntOrPercentError> {
        if let Some(n) = value.as_i64() {
            return Ok(IntOrPercent::Int(n));
        }
        let text = value.as_str().ok_or(IntOrPercentError::NotIntOrPercent)?;
        let n = text.strip_suffix('%').and_then(|n| n.parse::<i64>().ok());
        n.map(IntOrPercent::Percent).ok_or_else(|| IntOrPercentError::NotAPercentage(text.to_string()))
    }

    /// Reads a value with the API server's rules: an int from 0 to 2^31-1, or `N%` with N made of
    /// digits (`ValidatePositiveIntOrPercent`), at most 100% when `at_most_100` (`IsNotMoreThan100Percent`).
    pub fn validate(value: &Value, at_most_100: bool) -> Result<IntOrPercent, IntOrPercentError> {
        match value {
            Value::Number(number) => match number.as_i64() {
                Some(n) if (0..=i64::from(i32::MAX)).contains(&n) => Ok(IntOrPercent::Int(n)),
                Some(n) => Err(IntOrPercentError::OutOfRange(n)),
                None => Err(IntOrPercentError::NotAnInteger(number.to_string())),
            },
            Value::String(text) => {
                let digits = text.strip_suffix('%').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
                let digits = digits.ok_or_else(|| IntOrPercentError::NotAPercentage(text.clone()))?;
                match digits.parse::<i64>() {
                    Ok(n) if n <= 100 || !at_most_100 => Ok(IntOrPercent::Percent(n)),
                    Err(_) if !at_most_100 => Ok(IntOrPercent::Percent(i64::MAX)),
                    _ => Err(IntOrPercentError::OverHundred(text.clone())),
                }
            }
            _ => Err(IntOrPercentError::NotIntOrPercent),
        }
    }

    /// Whether the value is zero however it is written (`0` or `0%`).
    pub fn is_zero(&self) -> bool {
        matches!(self, IntOrPercent::Int(0) | IntOrPercent::Percent(0))
    }

    /// `GetScaledValueFromIntOrPercent`: an int as is, a percentage of `total` rounded up (ceil)
    /// or down (floor).
    pub fn scaled_value(&self, total: i64, round_up: bool) -> i64 {
        match *self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => {
                let product = i128::from(p) * i128::from(total);
                let scaled = if round_up { -(-product).div_euclid(100) } else { product.div_euclid(100) };
                scaled.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
            }
        }
    }
}

impl fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrPercent::Int(n) => write!(f, "{n}"),
            IntOrPercent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use IntOrPercent::{Int, Percent};

    #[test]
    fn percentages_round_as_the_controllers_ask() {
        let cases = [
            // (value, total, round_up, expected)
            (Percent(25), 3, true, 1),
            (Percent(25), 3, false, 0),
            (Percent(25), 4, true, 1),
            (Percent(25), 4, false, 1),
            (Percent(50), 5, true, 3),
            (Percent(50), 5, false, 2),
            (Percent(100), 7, false, 7),
            (Percent(0), 7, true, 0),
            (Percent(30), 0, true, 0),
            (Percent(150), 2, true, 3),
            (Int(2), 3, false, 2),
            (Int(2), 3, true, 2),
        ];
        for (value, total, round_up, expected) in cases {
            assert_eq!(value.scaled_value(total, round_up), expected, "{value} of {total}, up {round_up}");
        }
    }

    #[test]
    fn reading_accepts_what_the_controllers_read() {
        let read = |yaml: &str| IntOrPercent::read(&kix_yaml::from_str(yaml).unwrap());
        let cases = [
            ("3", Ok(Int(3))),
            ("-1", Ok(Int(-1))),
            ("\"25%\"", Ok(Percent(25))),
            ("\"x%\"", Err(IntOrPercentError::NotAPercentage("x%".into()))),
            ("\"25\"", Err(IntOrPercentError::NotAPercentage("25".into()))),
            ("[1]", Err(IntOrPercentError::NotIntOrPercent)),
        ];
        for (yaml, expected) in cases {
            assert_eq!(read(yaml), expected, "{yaml}");
        }
    }

    #[test]
    fn validation_follows_the_api_server() {
        let check = |yaml: &str, at_most_100: bool| {
            IntOrPercent::validate(&kix_yaml::from_str(yaml).unwrap(), at_most_100).map_err(|e| e.to_string())
        };
        let cases = [
            ("0", true, Ok(Int(0))),
            ("\"100%\"", true, Ok(Percent(100))),
            ("\"150%\"", false, Ok(Percent(150))),
            ("\"150%\"", true, Err("`150%` must not be greater than 100%")),
            ("-1", true, Err("must be greater than or equal to 0 (it is -1)")),
            ("1.5", true, Err("must be an integer or percentage (e.g '5%'), not 1.5")),
            ("\"5\"", false, Err("`5` must be an integer or percentage (e.g '5%')")),
            ("\"%\"", true, Err("`%` must be an integer or percentage (e.g '5%')")),
            ("\"-5%\"", false, Err("`-5%` must be an integer or percentage (e.g '5%')")),
            ("[1]", true, Err("must be an integer or percentage (e.g '5%')")),
        ];
        for (yaml, at_most_100, expected) in cases {
            assert_eq!(check(yaml, at_most_100), expected.map_err(str::to_string), "{yaml}");
        }
    }
}
