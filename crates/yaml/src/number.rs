//! [`Number`]: a YAML number as serde_yaml 0.9 kept it (non-negative integers as `u64`, negative
//! ones as `i64`, the rest as `f64`) and printed it (`.inf`, `-.inf`, `.nan`, and floats in their
//! shortest round-trip form with a `.0` or exponent so they read back as floats: serde_yaml used
//! ryu's `format_finite`, and so does this file).
//!
//! Equality, hashing and ordering follow serde_yaml's `Number`: all NaNs are equal (YAML has one
//! NaN), floats hash alike (they are poor map keys), and integers order before floats only by kind.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A YAML integer or float.
#[derive(Clone, Copy, Debug)]
pub struct Number {
    n: N,
}

#[derive(Clone, Copy, Debug)]
enum N {
    PosInt(u64),
    /// Always negative.
    NegInt(i64),
    Float(f64),
}

impl Number {
    pub fn is_i64(&self) -> bool {
        match self.n {
            N::PosInt(u) => i64::try_from(u).is_ok(),
            N::NegInt(_) => true,
            N::Float(_) => false,
        }
    }

    pub fn is_u64(&self) -> bool {
        matches!(self.n, N::PosInt(_))
    }

    pub fn is_f64(&self) -> bool {
        matches!(self.n, N::Float(_))
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self.n {
            N::PosInt(u) => i64::try_from(u).ok(),
            N::NegInt(i) => Some(i),
            N::Float(_) => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self.n {
            N::PosInt(u) => Some(u),
            _ => None,
        }
    }

    /// Any number as a float (integers may round), as serde_yaml's `as_f64`.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        Some(match self.n {
            N::PosInt(u) => u as f64,
            N::NegInt(i) => i as f64,
            N::Float(f) => f,
        })
    }

    pub(crate) fn unexpected(&self) -> serde::de::Unexpected<'static> {
        match self.n {
            N::PosInt(u) => serde::de::Unexpected::Unsigned(u),
            N::NegInt(i) => serde::de::Unexpected::Signed(i),
            N::Float(f) => serde::de::Unexpected::Float(f),
        }
    }

    pub(crate) fn visit<'de, V: serde::de::Visitor<'de>, E: serde::de::Error>(
        &self,
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.n {
            N::PosInt(u) => visitor.visit_u64(u),
            N::NegInt(i) => visitor.visit_i64(i),
            N::Float(f) => visitor.visit_f64(f),
        }
    }

    fn rank(&self) -> u8 {
        match self.n {
            N::NegInt(_) => 0,
            N::PosInt(_) => 1,
            N::Float(_) => 2,
        }
    }
}

impl From<u64> for Number {
    fn from(u: u64) -> Number {
        Number { n: N::PosInt(u) }
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Number {
        match u64::try_from(i) {
            Ok(u) => Number { n: N::PosInt(u) },
            Err(_) => Number { n: N::NegInt(i) },
        }
    }
}

impl From<f64> for Number {
    fn from(f: f64) -> Number {
        Number { n: N::Float(f) }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.n {
            N::PosInt(u) => write!(f, "{u}"),
            N::NegInt(i) => write!(f, "{i}"),
            N::Float(x) if x.is_nan() => f.write_str(".nan"),
            N::Float(x) if x.is_infinite() => f.write_str(if x.is_sign_negative() { "-.inf" } else { ".inf" }),
            N::Float(x) => f.write_str(ryu::Buffer::new().format_finite(x)),
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (self.n, other.n) {
            (N::PosInt(a), N::PosInt(b)) => a == b,
            (N::NegInt(a), N::NegInt(b)) => a == b,
            (N::Float(a), N::Float(b)) => (a.is_nan() && b.is_nan()) || a == b,
            _ => false,
        }
    }
}

impl Eq for Number {}

impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.n {
            N::PosInt(u) => u.hash(state),
            N::NegInt(i) => i.hash(state),
            // Consistent with `eq` (0.0 == -0.0, NaN == NaN): all floats hash alike.
            N::Float(_) => 3.hash(state),
        }
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        match (self.n, other.n) {
            (N::PosInt(a), N::PosInt(b)) => a.cmp(&b),
            (N::NegInt(a), N::NegInt(b)) => a.cmp(&b),
            // NaN sorts last, and equals itself, as in `eq`.
            (N::Float(a), N::Float(b)) => a.partial_cmp(&b).unwrap_or_else(|| b.is_nan().cmp(&a.is_nan()).reverse()),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_serde_yaml() {
        let floats = [0.0, -0.0, 1.0, 1.5, -2.25, 1e20, 1e21, 1e-7, 0.1, 123456789.125, f64::MAX, f64::MIN_POSITIVE];
        for f in floats {
            assert_eq!(Number::from(f).to_string(), serde_yaml::Number::from(f).to_string(), "{f}");
        }
        for (number, text) in [
            (Number::from(f64::INFINITY), ".inf"),
            (Number::from(f64::NEG_INFINITY), "-.inf"),
            (Number::from(f64::NAN), ".nan"),
            (Number::from(u64::MAX), "18446744073709551615"),
            (Number::from(i64::MIN), "-9223372036854775808"),
            (Number::from(3i64), "3"),
        ] {
            assert_eq!(number.to_string(), text);
        }
    }

    #[test]
    fn equality_and_order_follow_serde_yaml() {
        assert_eq!(Number::from(f64::NAN), Number::from(f64::NAN));
        assert_eq!(Number::from(0.0), Number::from(-0.0));
        assert_eq!(Number::from(5i64), Number::from(5u64));
        assert_ne!(Number::from(5u64), Number::from(5.0));
        assert!(Number::from(-1i64) < Number::from(0u64));
        assert!(Number::from(1.0) < Number::from(f64::NAN));
        assert_eq!(Number::from(f64::NAN).cmp(&Number::from(f64::NAN)), Ordering::Equal);
    }
}
