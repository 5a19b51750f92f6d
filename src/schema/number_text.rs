//! Decimal numbers read exactly from text: `[+-]digits[.digits][e[+-]digits]` as digits and a
//! power of ten, so a value such as `10.5` can be put at any decimal scale (or compared with
//! any numeric type) without a detour through binary floating point. Used for partition
//! values and for filter literals and statistics.

/// A decimal number held exactly: `±digits × 10^exponent`, with no leading or trailing zero
/// digits (zero has no digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExactNumber {
    pub(crate) negative: bool,
    pub(crate) digits: Vec<u8>,
    pub(crate) exponent: i64,
}

/// A number put at a fixed scale (as an integer count of `10^-scale` units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scaled {
    /// The number is exactly this many units.
    Exact(i128),
    /// The number lies strictly between this many units and one more.
    Between(i128),
    /// The number is above every `i128`.
    TooLarge,
    /// The number is below every `i128`.
    TooSmall,
}

impl ExactNumber {
    /// Reads `[+-]digits[.digits][e[+-]digits]` (also `.5` and `5.`); surrounding ASCII
    /// whitespace is allowed.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let s = s.trim_ascii();
        let (negative, rest) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(pos) => (&rest[..pos], rest[pos + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if int_part.len() + frac_part.len() == 0 || !all_digits(int_part) || !all_digits(frac_part)
        {
            return None;
        }
        let frac_len = i64::try_from(frac_part.len()).ok()?;
        let digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).collect();
        Some(Self::normalized(
            negative,
            digits,
            exponent.checked_sub(frac_len)?,
        ))
    }

    /// The number `unscaled × 10^-scale`.
    pub(crate) fn from_unscaled(unscaled: i128, scale: i64) -> Self {
        let digits = unscaled.unsigned_abs().to_string().into_bytes();
        Self::normalized(unscaled < 0, digits, -scale)
    }

    /// The shortest decimal that reads back as `value` (`None` for NaN and infinities).
    pub(crate) fn from_f64(value: f64) -> Option<Self> {
        if !value.is_finite() {
            return None;
        }
        Self::parse(&format!("{value:e}"))
    }

    /// The shortest decimal that reads back as `value` (`None` for NaN and infinities).
    pub(crate) fn from_f32(value: f32) -> Option<Self> {
        if !value.is_finite() {
            return None;
        }
        Self::parse(&format!("{value:e}"))
    }

    fn normalized(negative: bool, digits: Vec<u8>, exponent: i64) -> Self {
        let start = digits
            .iter()
            .position(|d| *d != b'0')
            .unwrap_or(digits.len());
        let end = digits
            .iter()
            .rposition(|d| *d != b'0')
            .map_or(start, |p| p + 1);
        let trailing = i64::try_from(digits.len() - end).unwrap_or(0);
        let digits = digits
            .get(start..end)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        if digits.is_empty() {
            return ExactNumber {
                negative: false,
                digits,
                exponent: 0,
            };
        }
        ExactNumber {
            negative,
            digits,
            exponent: exponent.saturating_add(trailing),
        }
    }

    /// Number of significant digits.
    pub(crate) fn significant_digits(&self) -> usize {
        self.digits.len()
    }

    /// The number as a count of `10^-scale` units, rounded towards negative infinity when it
    /// is not a whole count.
    pub(crate) fn to_scaled(&self, scale: i64) -> Scaled {
        let too_far = if self.negative {
            Scaled::TooSmall
        } else {
            Scaled::TooLarge
        };
        let shift = self.exponent.saturating_add(scale);
        let keep = if shift >= 0 {
            self.digits.len()
        } else {
            let drop = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
            self.digits.len().saturating_sub(drop)
        };
        let exact = keep == self.digits.len();
        let mut magnitude: i128 = 0;
        for d in self.digits.iter().take(keep) {
            magnitude = match magnitude
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(d - b'0')))
            {
                Some(m) => m,
                None => return too_far,
            };
        }
        if shift > 0 && magnitude != 0 {
            for _ in 0..shift {
                magnitude = match magnitude.checked_mul(10) {
                    Some(m) => m,
                    None => return too_far,
                };
            }
        }
        match (self.negative, exact) {
            (false, true) => Scaled::Exact(magnitude),
            (false, false) => Scaled::Between(magnitude),
            (true, true) => Scaled::Exact(-magnitude),
            // -(m + fraction) lies between -(m + 1) and -m.
            (true, false) => match magnitude.checked_add(1) {
                Some(m) => Scaled::Between(-m),
                None => Scaled::TooSmall,
            },
        }
    }

    /// The nearest `f64`.
    pub(crate) fn to_f64(&self) -> f64 {
        self.float_text().parse().unwrap_or(f64::NAN)
    }

    /// The nearest `f32`.
    pub(crate) fn to_f32(&self) -> f32 {
        self.float_text().parse().unwrap_or(f32::NAN)
    }

    fn float_text(&self) -> String {
        if self.digits.is_empty() {
            return "0".to_string();
        }
        let sign = if self.negative { "-" } else { "" };
        let digits = String::from_utf8_lossy(&self.digits);
        format!("{sign}{digits}e{}", self.exponent)
    }
}
