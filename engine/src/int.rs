//! Integers of any size. An integer that fits 64 bits is an `i64` (the
//! common case); one beyond is its canonical decimal text (a `-` for a
//! negative one, no `+`, no leading zero), which never spells a value that
//! fits 64 bits. Comparisons are exact at any size; arithmetic is exact
//! within `i128` and unknown past it (the callers decide).

use std::cmp::Ordering;

/// An integer, borrowed: small (64 bits) or big (canonical decimal text).
/// Equal exactly when their order is `Equal`, since a big one never fits 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int<'a> {
    Small(i64),
    Big(&'a str),
}

/// An integer, owned: what [`parse_decimal`] and [`from_i128`] give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedInt {
    Small(i64),
    Big(String),
}

impl From<OwnedInt> for crate::value::ValKind {
    fn from(n: OwnedInt) -> Self {
        match n {
            OwnedInt::Small(i) => crate::value::ValKind::Int(i),
            OwnedInt::Big(s) => crate::value::ValKind::BigInt(s.into()),
        }
    }
}

/// Decimal digits with an optional sign (`-12`, `+0042`, a hundred digits);
/// `None` for anything else (an empty string, a space, a fraction).
pub fn parse_decimal(text: &str) -> Option<OwnedInt> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Ok(small) = text.parse::<i64>() {
        return Some(OwnedInt::Small(small));
    }
    let digits = digits.trim_start_matches('0');
    // Beyond 64 bits (a value that fits was parsed above, leading zeros and all).
    Some(OwnedInt::Big(if negative { format!("-{digits}") } else { digits.to_string() }))
}

/// An `i128` as an integer: small when it fits 64 bits.
pub fn from_i128(n: i128) -> OwnedInt {
    match i64::try_from(n) {
        Ok(small) => OwnedInt::Small(small),
        Err(_) => OwnedInt::Big(n.to_string()),
    }
}

impl Int<'_> {
    /// The integer as an `i128`, when it fits.
    pub fn to_i128(self) -> Option<i128> {
        match self {
            Int::Small(i) => Some(i128::from(i)),
            Int::Big(s) => s.parse().ok(),
        }
    }
}

/// The exact order of two integers of any size.
impl Ord for Int<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (*self, *other) {
            (Int::Small(a), Int::Small(b)) => a.cmp(&b),
            // A big integer is beyond every small one, on the side of its sign.
            (Int::Small(_), Int::Big(b)) => {
                if b.starts_with('-') {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Int::Big(_), Int::Small(_)) => other.cmp(self).reverse(),
            (Int::Big(a), Int::Big(b)) => match (a.strip_prefix('-'), b.strip_prefix('-')) {
                (None, None) => magnitude(a, b),
                (Some(a), Some(b)) => magnitude(a, b).reverse(),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
            },
        }
    }
}

impl PartialOrd for Int<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The order of two magnitudes written without leading zeros.
fn magnitude(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(s: &str) -> OwnedInt {
        OwnedInt::Big(s.into())
    }

    #[test]
    fn parses_any_size_canonically() {
        assert_eq!(parse_decimal("42"), Some(OwnedInt::Small(42)));
        assert_eq!(parse_decimal("+0042"), Some(OwnedInt::Small(42)));
        assert_eq!(parse_decimal("-9223372036854775808"), Some(OwnedInt::Small(i64::MIN)));
        assert_eq!(parse_decimal("9223372036854775808"), Some(big("9223372036854775808")));
        assert_eq!(parse_decimal("-0009223372036854775809"), Some(big("-9223372036854775809")));
        assert_eq!(parse_decimal(&format!("{}1", "0".repeat(60))), Some(OwnedInt::Small(1)));
        for bad in ["", "-", "+", "1.0", " 1", "1e3", "٣", "--1"] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
        assert_eq!(from_i128(i128::from(i64::MAX) + 1), big("9223372036854775808"));
        assert_eq!(from_i128(-5), OwnedInt::Small(-5));
    }

    #[test]
    fn orders_exactly() {
        use Ordering::*;
        let cases = [
            (Int::Small(1), Int::Big("18446744073709551617"), Less),
            (Int::Big("18446744073709551617"), Int::Small(i64::MAX), Greater),
            (Int::Big("-18446744073709551617"), Int::Small(i64::MIN), Less),
            (Int::Big("18446744073709551617"), Int::Big("18446744073709551616"), Greater),
            (Int::Big("-18446744073709551617"), Int::Big("-18446744073709551616"), Less),
            (Int::Big("100000000000000000000"), Int::Big("99999999999999999999"), Greater),
            (Int::Big("-100000000000000000000"), Int::Big("-99999999999999999999"), Less),
            (Int::Big("-99999999999999999999"), Int::Big("99999999999999999999"), Less),
            (Int::Big("99999999999999999999"), Int::Big("99999999999999999999"), Equal),
        ];
        for (a, b, want) in cases {
            assert_eq!(a.cmp(&b), want, "{a:?} vs {b:?}");
            assert_eq!(b.cmp(&a), want.reverse(), "{b:?} vs {a:?}");
        }
        assert_eq!(Int::Big("170141183460469231731687303715884105728").to_i128(), None);
        assert_eq!(Int::Big("-170141183460469231731687303715884105728").to_i128(), Some(i128::MIN));
    }
}
