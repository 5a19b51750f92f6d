//! Text forms of typed values: numbers, dates and timestamps read from the strings of filter
//! literals and file statistics, and written back for display.
//!
//! Numbers are read exactly as an [`ExactNumber`] (digits and a power of ten) so that a
//! literal such as `10.5` can be put into any numeric column type without a detour through
//! binary floating point. Timestamps are microseconds since the Unix epoch; a text without a
//! zone is read as UTC wall-clock time.

pub(crate) use crate::schema::number_text::{ExactNumber, Scaled};
pub(crate) use crate::schema::time_text::{
    format_date, format_timestamp, parse_date, parse_timestamp, MICROS_PER_DAY,
};

/// Writes `unscaled × 10^-scale` with exactly `scale` fractional digits (`1050`, 2 → `10.50`).
pub(crate) fn format_decimal(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = usize::from(scale);
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int_part, frac_part) = padded.split_at(padded.len() - scale);
    format!("{sign}{int_part}.{frac_part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> ExactNumber {
        ExactNumber::parse(s).unwrap_or(ExactNumber {
            negative: true,
            digits: b"999".to_vec(),
            exponent: 999,
        })
    }

    #[test]
    fn exact_numbers_scale() {
        assert_eq!(num("10.5").to_scaled(2), Scaled::Exact(1050));
        assert_eq!(num("10.50").to_scaled(1), Scaled::Exact(105));
        assert_eq!(num("10.505").to_scaled(2), Scaled::Between(1050));
        assert_eq!(num("-10.505").to_scaled(2), Scaled::Between(-1051));
        assert_eq!(num("1e3").to_scaled(0), Scaled::Exact(1000));
        assert_eq!(num("1.5E-1").to_scaled(2), Scaled::Exact(15));
        assert_eq!(num("-0.0").to_scaled(3), Scaled::Exact(0));
        assert_eq!(num(".5").to_scaled(0), Scaled::Between(0));
        assert_eq!(num("-.5").to_scaled(0), Scaled::Between(-1));
        assert_eq!(num("1e50").to_scaled(0), Scaled::TooLarge);
        assert_eq!(num("-1e50").to_scaled(0), Scaled::TooSmall);
        assert_eq!(num("1e-50").to_scaled(2), Scaled::Between(0));
        assert_eq!(num("007").significant_digits(), 1);
        assert!(ExactNumber::parse("1.2.3").is_none());
        assert!(ExactNumber::parse("e5").is_none());
        assert!(ExactNumber::parse("").is_none());
        assert!(ExactNumber::parse("abc").is_none());
    }

    #[test]
    fn exact_numbers_floats() {
        assert_eq!(num("0.1").to_f64(), 0.1);
        assert_eq!(num("0.1").to_f32(), 0.1f32);
        assert_eq!(
            ExactNumber::from_f64(0.1).map(|n| n.to_scaled(1)),
            Some(Scaled::Exact(1))
        );
        assert_eq!(
            ExactNumber::from_f32(2.5).map(|n| n.to_scaled(1)),
            Some(Scaled::Exact(25))
        );
        assert_eq!(ExactNumber::from_f64(f64::NAN), None);
        assert_eq!(ExactNumber::from_unscaled(-1050, 2), num("-10.5"));
    }

    #[test]
    fn decimal_text() {
        assert_eq!(format_decimal(1050, 2), "10.50");
        assert_eq!(format_decimal(-5, 3), "-0.005");
        assert_eq!(format_decimal(7, 0), "7");
    }
}
