//! Literal coercion: a filter literal put into the type of the column it is compared with.
//!
//! A literal either has an exact value of the column type ([`Coerced::Exact`]), or lies
//! between two values of it ([`Coerced::Above`]: `2.5` for an `integer` column lies above
//! `2`; `300` for a `byte` column lies above `127`), or below every value of it
//! ([`Coerced::BelowAll`]). The binder turns the last two into exact comparisons
//! (`b < 2.5` is `b <= 2`), so nothing is rounded silently. Numbers convert exactly between
//! integers and decimals; to `float`/`double` a number goes to the nearest value (what the
//! user wrote `0.1` for). Strings convert to numbers, dates, timestamps, booleans and binary
//! when they parse as such.

use super::literal_text::{parse_date, parse_timestamp, ExactNumber, Scaled, MICROS_PER_DAY};
use super::scalar::{normal_f32, normal_f64, Scalar};
use crate::schema::PrimitiveType;

/// A literal in the type of a column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Coerced {
    /// The literal is exactly this value.
    Exact(Scalar),
    /// The literal lies strictly above this value and below the next value of the type (or
    /// above every value, when this is the largest).
    Above(Scalar),
    /// The literal lies below every value of the type.
    BelowAll,
}

/// A number-like literal.
enum Numeric {
    Finite(ExactNumber),
    PosInfinity,
    NegInfinity,
    NaN,
}

/// `value` (not null) put into `target`; `None` when the two cannot be compared.
pub(crate) fn coerce(value: &Scalar, target: &PrimitiveType) -> Option<Coerced> {
    match target {
        PrimitiveType::String => match value {
            Scalar::String(s) => Some(Coerced::Exact(Scalar::String(s.clone()))),
            _ => None,
        },
        PrimitiveType::Binary => match value {
            Scalar::Binary(b) => Some(Coerced::Exact(Scalar::Binary(b.clone()))),
            Scalar::String(s) => Some(Coerced::Exact(Scalar::Binary(s.as_bytes().to_vec()))),
            _ => None,
        },
        PrimitiveType::Boolean => match value {
            Scalar::Boolean(b) => Some(Coerced::Exact(Scalar::Boolean(*b))),
            Scalar::String(s) if s.trim().eq_ignore_ascii_case("true") => {
                Some(Coerced::Exact(Scalar::Boolean(true)))
            }
            Scalar::String(s) if s.trim().eq_ignore_ascii_case("false") => {
                Some(Coerced::Exact(Scalar::Boolean(false)))
            }
            _ => None,
        },
        PrimitiveType::Byte => integer(value, i128::from(i8::MIN), i128::from(i8::MAX), |v| {
            i8::try_from(v).ok().map(Scalar::Byte)
        }),
        PrimitiveType::Short => integer(value, i128::from(i16::MIN), i128::from(i16::MAX), |v| {
            i16::try_from(v).ok().map(Scalar::Short)
        }),
        PrimitiveType::Integer => integer(value, i128::from(i32::MIN), i128::from(i32::MAX), |v| {
            i32::try_from(v).ok().map(Scalar::Integer)
        }),
        PrimitiveType::Long => integer(value, i128::from(i64::MIN), i128::from(i64::MAX), |v| {
            i64::try_from(v).ok().map(Scalar::Long)
        }),
        PrimitiveType::Decimal(ty) => {
            let max = 10i128
                .checked_pow(u32::from(ty.precision()))
                .map_or(i128::MAX, |p| p - 1);
            let ty = *ty;
            scaled(value, i64::from(ty.scale()), -max, max, |v| {
                Some(Scalar::Decimal(v, ty))
            })
        }
        PrimitiveType::Double => {
            let v = match value {
                Scalar::Double(v) => *v,
                Scalar::Float(v) => f64::from(*v),
                other => match numeric(other)? {
                    Numeric::Finite(n) => n.to_f64(),
                    Numeric::PosInfinity => f64::INFINITY,
                    Numeric::NegInfinity => f64::NEG_INFINITY,
                    Numeric::NaN => f64::NAN,
                },
            };
            Some(Coerced::Exact(Scalar::Double(normal_f64(v))))
        }
        PrimitiveType::Float => {
            let v = match value {
                Scalar::Float(v) => *v,
                // `as` rounds to the nearest f32.
                Scalar::Double(v) => *v as f32,
                other => match numeric(other)? {
                    Numeric::Finite(n) => n.to_f32(),
                    Numeric::PosInfinity => f32::INFINITY,
                    Numeric::NegInfinity => f32::NEG_INFINITY,
                    Numeric::NaN => f32::NAN,
                },
            };
            Some(Coerced::Exact(Scalar::Float(normal_f32(v))))
        }
        PrimitiveType::Date => date(value),
        PrimitiveType::Timestamp => timestamp(value).map(|c| map(c, Scalar::Timestamp)),
        PrimitiveType::TimestampNtz => timestamp(value).map(|c| map(c, Scalar::TimestampNtz)),
        _ => None,
    }
}

/// The literal as a number, if it is one (or a string holding one).
fn numeric(value: &Scalar) -> Option<Numeric> {
    let float = |v: f64| {
        if v.is_nan() {
            Some(Numeric::NaN)
        } else if v == f64::INFINITY {
            Some(Numeric::PosInfinity)
        } else if v == f64::NEG_INFINITY {
            Some(Numeric::NegInfinity)
        } else {
            ExactNumber::from_f64(v).map(Numeric::Finite)
        }
    };
    match value {
        Scalar::Long(v) => Some(Numeric::Finite(ExactNumber::from_unscaled(
            i128::from(*v),
            0,
        ))),
        Scalar::Integer(v) => Some(Numeric::Finite(ExactNumber::from_unscaled(
            i128::from(*v),
            0,
        ))),
        Scalar::Short(v) => Some(Numeric::Finite(ExactNumber::from_unscaled(
            i128::from(*v),
            0,
        ))),
        Scalar::Byte(v) => Some(Numeric::Finite(ExactNumber::from_unscaled(
            i128::from(*v),
            0,
        ))),
        Scalar::Decimal(v, ty) => Some(Numeric::Finite(ExactNumber::from_unscaled(
            *v,
            i64::from(ty.scale()),
        ))),
        // The shortest decimal of a float is the number the user wrote.
        Scalar::Float(v) if v.is_finite() => ExactNumber::from_f32(*v).map(Numeric::Finite),
        Scalar::Float(v) => float(f64::from(*v)),
        Scalar::Double(v) => float(*v),
        Scalar::String(s) => match ExactNumber::parse(s) {
            Some(n) => Some(Numeric::Finite(n)),
            None => match s.trim().to_ascii_lowercase().as_str() {
                "nan" => Some(Numeric::NaN),
                "infinity" | "+infinity" | "inf" => Some(Numeric::PosInfinity),
                "-infinity" | "-inf" => Some(Numeric::NegInfinity),
                _ => None,
            },
        },
        _ => None,
    }
}

/// An integer type with values `min..=max`.
fn integer(
    value: &Scalar,
    min: i128,
    max: i128,
    make: impl Fn(i128) -> Option<Scalar>,
) -> Option<Coerced> {
    scaled(value, 0, min, max, make)
}

/// A type whose values are the integers `min..=max` counted in units of `10^-scale`.
fn scaled(
    value: &Scalar,
    scale: i64,
    min: i128,
    max: i128,
    make: impl Fn(i128) -> Option<Scalar>,
) -> Option<Coerced> {
    let position = match numeric(value)? {
        Numeric::Finite(n) => n.to_scaled(scale),
        // NaN sorts above every number.
        Numeric::PosInfinity | Numeric::NaN => Scaled::TooLarge,
        Numeric::NegInfinity => Scaled::TooSmall,
    };
    let above = |v: i128| make(v).map(Coerced::Above);
    match position {
        Scaled::Exact(v) if v > max => above(max),
        Scaled::Exact(v) if v < min => Some(Coerced::BelowAll),
        Scaled::Exact(v) => make(v).map(Coerced::Exact),
        Scaled::Between(v) if v >= max => above(max),
        Scaled::Between(v) if v < min => Some(Coerced::BelowAll),
        Scaled::Between(v) => above(v),
        Scaled::TooLarge => above(max),
        Scaled::TooSmall => Some(Coerced::BelowAll),
    }
}

fn map(c: Coerced, make: impl Fn(i64) -> Scalar) -> Coerced {
    match c {
        Coerced::Exact(Scalar::Long(v)) => Coerced::Exact(make(v)),
        Coerced::Above(Scalar::Long(v)) => Coerced::Above(make(v)),
        other => other,
    }
}

/// A timestamp literal as microseconds (carried as a `Long` until [`map`] types it).
fn timestamp(value: &Scalar) -> Option<Coerced> {
    match value {
        Scalar::Timestamp(v) | Scalar::TimestampNtz(v) => Some(Coerced::Exact(Scalar::Long(*v))),
        Scalar::Date(days) => Some(match i64::from(*days).checked_mul(MICROS_PER_DAY) {
            Some(v) => Coerced::Exact(Scalar::Long(v)),
            None if *days > 0 => Coerced::Above(Scalar::Long(i64::MAX)),
            None => Coerced::BelowAll,
        }),
        Scalar::String(s) => {
            let parsed = parse_timestamp(s)?;
            Some(if parsed.truncated {
                Coerced::Above(Scalar::Long(parsed.micros))
            } else {
                Coerced::Exact(Scalar::Long(parsed.micros))
            })
        }
        _ => None,
    }
}

fn date(value: &Scalar) -> Option<Coerced> {
    let from_micros = |micros: i64, exact: bool| {
        let days = micros.div_euclid(MICROS_PER_DAY);
        let exact = exact && micros.rem_euclid(MICROS_PER_DAY) == 0;
        match i32::try_from(days) {
            Ok(d) if exact => Coerced::Exact(Scalar::Date(d)),
            Ok(d) => Coerced::Above(Scalar::Date(d)),
            Err(_) if days > 0 => Coerced::Above(Scalar::Date(i32::MAX)),
            Err(_) => Coerced::BelowAll,
        }
    };
    match value {
        Scalar::Date(d) => Some(Coerced::Exact(Scalar::Date(*d))),
        Scalar::Timestamp(v) | Scalar::TimestampNtz(v) => Some(from_micros(*v, true)),
        Scalar::String(s) => match parse_date(s) {
            Some(d) => Some(Coerced::Exact(Scalar::Date(d))),
            None => parse_timestamp(s).map(|t| from_micros(t.micros, !t.truncated)),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;

    fn exact(s: Scalar) -> Option<Coerced> {
        Some(Coerced::Exact(s))
    }

    fn above(s: Scalar) -> Option<Coerced> {
        Some(Coerced::Above(s))
    }

    #[test]
    fn integers() {
        let c = |v: Scalar, t: PrimitiveType| coerce(&v, &t);
        assert_eq!(
            c(Scalar::Long(5), PrimitiveType::Byte),
            exact(Scalar::Byte(5))
        );
        assert_eq!(
            c(Scalar::Long(300), PrimitiveType::Byte),
            above(Scalar::Byte(127))
        );
        assert_eq!(
            c(Scalar::Long(-300), PrimitiveType::Byte),
            Some(Coerced::BelowAll)
        );
        assert_eq!(
            c(Scalar::Double(2.5), PrimitiveType::Integer),
            above(Scalar::Integer(2))
        );
        assert_eq!(
            c(Scalar::Double(-2.5), PrimitiveType::Integer),
            above(Scalar::Integer(-3))
        );
        assert_eq!(
            c(Scalar::Double(1e300), PrimitiveType::Long),
            above(Scalar::Long(i64::MAX))
        );
        assert_eq!(
            c(Scalar::Double(f64::NAN), PrimitiveType::Short),
            above(Scalar::Short(i16::MAX))
        );
        assert_eq!(
            c(Scalar::from("42"), PrimitiveType::Long),
            exact(Scalar::Long(42))
        );
        assert_eq!(c(Scalar::from("4x"), PrimitiveType::Long), None);
        assert_eq!(c(Scalar::Boolean(true), PrimitiveType::Long), None);
    }

    #[test]
    fn decimals() -> Result<()> {
        let d = PrimitiveType::decimal(10, 2)?;
        let PrimitiveType::Decimal(dt) = d else {
            return Ok(());
        };
        let c = |v: Scalar| coerce(&v, &d);
        assert_eq!(
            c(Scalar::decimal(105, 3, 1)?),
            exact(Scalar::Decimal(1050, dt))
        );
        assert_eq!(c(Scalar::Long(7)), exact(Scalar::Decimal(700, dt)));
        assert_eq!(c(Scalar::Double(0.1)), exact(Scalar::Decimal(10, dt)));
        assert_eq!(
            c(Scalar::decimal(10505, 5, 3)?),
            above(Scalar::Decimal(1050, dt))
        );
        assert_eq!(
            c(Scalar::Long(10_000_000_000)),
            above(Scalar::Decimal(9_999_999_999, dt))
        );
        assert_eq!(c(Scalar::from("-1e20")), Some(Coerced::BelowAll));
        assert_eq!(c(Scalar::from("abc")), None);
        Ok(())
    }

    #[test]
    fn floats() {
        let c = |v: Scalar, t: PrimitiveType| coerce(&v, &t);
        assert_eq!(
            c(Scalar::Long(3), PrimitiveType::Double),
            exact(Scalar::Double(3.0))
        );
        assert_eq!(
            c(
                Scalar::decimal(1, 1, 1).unwrap_or(Scalar::Long(0)),
                PrimitiveType::Float
            ),
            exact(Scalar::Float(0.1))
        );
        assert_eq!(
            c(Scalar::Double(0.1), PrimitiveType::Float),
            exact(Scalar::Float(0.1))
        );
        assert_eq!(
            c(Scalar::Double(-0.0), PrimitiveType::Double),
            exact(Scalar::Double(0.0))
        );
        assert_eq!(
            c(Scalar::from("Infinity"), PrimitiveType::Double),
            exact(Scalar::Double(f64::INFINITY))
        );
        assert_eq!(c(Scalar::from("x"), PrimitiveType::Double), None);
    }

    #[test]
    fn dates_and_timestamps() {
        let c = |v: Scalar, t: PrimitiveType| coerce(&v, &t);
        let day = 19723;
        let midnight = i64::from(day) * MICROS_PER_DAY;
        assert_eq!(
            c(Scalar::from("2024-01-01"), PrimitiveType::Date),
            exact(Scalar::Date(day))
        );
        assert_eq!(
            c(Scalar::from("2024-01-01 10:00"), PrimitiveType::Date),
            above(Scalar::Date(day))
        );
        assert_eq!(
            c(Scalar::Timestamp(midnight), PrimitiveType::Date),
            exact(Scalar::Date(day))
        );
        assert_eq!(
            c(Scalar::from("2024-01-01"), PrimitiveType::Timestamp),
            exact(Scalar::Timestamp(midnight))
        );
        assert_eq!(
            c(Scalar::Date(day), PrimitiveType::TimestampNtz),
            exact(Scalar::TimestampNtz(midnight))
        );
        assert_eq!(
            c(
                Scalar::from("2024-01-01 00:00:00.0000005"),
                PrimitiveType::Timestamp
            ),
            above(Scalar::Timestamp(midnight))
        );
        assert_eq!(c(Scalar::from("soon"), PrimitiveType::Timestamp), None);
        assert_eq!(c(Scalar::Long(1), PrimitiveType::Date), None);
    }

    #[test]
    fn strings_booleans_binary() {
        let c = |v: Scalar, t: PrimitiveType| coerce(&v, &t);
        assert_eq!(
            c(Scalar::from("a"), PrimitiveType::String),
            exact(Scalar::from("a"))
        );
        assert_eq!(c(Scalar::Long(1), PrimitiveType::String), None);
        assert_eq!(
            c(Scalar::from("TRUE"), PrimitiveType::Boolean),
            exact(Scalar::Boolean(true))
        );
        assert_eq!(
            c(Scalar::from("ab"), PrimitiveType::Binary),
            exact(Scalar::from(b"ab".to_vec()))
        );
        assert_eq!(c(Scalar::from("a"), PrimitiveType::Variant), None);
    }
}
