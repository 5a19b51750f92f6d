//! Partition values: the strings of `add.partitionValues` parsed into typed Arrow arrays.
//!
//! Formats follow the Delta protocol ("Partition Value Serialization"): a missing value or an
//! empty string is null (for every type, strings included); numbers are their decimal string
//! form; `date` is `yyyy-MM-dd`; `timestamp` and `timestamp_ntz` are
//! `yyyy-MM-dd HH:mm:ss[.ffffff]`; `boolean` is `true` or `false`; `binary` is the string's
//! bytes. Leniencies: numbers, dates and timestamps may have surrounding ASCII whitespace,
//! booleans may have any case, floats accept `NaN`/`Infinity`/`-Infinity`, decimals accept an
//! exponent (`1E+2`), timestamps accept a `T` separator, and a `timestamp` (never a
//! `timestamp_ntz`) may carry `Z` or an offset. A `timestamp` without zone is read as UTC, as
//! `delta_kernel` does. Arrays have the Arrow type that [`PrimitiveType::to_arrow`] gives.

use std::sync::Arc;

use super::time_text::parse_date;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, NullArray, StringArray,
    TimestampMicrosecondArray,
};

use super::types::{DecimalType, PrimitiveType};
use crate::error::{DeltaError, Result};

/// Parses one partition value (`None` when the key is absent or JSON `null`) into a length-1
/// Arrow array of `ty`'s Arrow type.
pub fn parse_partition_value(raw: Option<&str>, ty: &PrimitiveType) -> Result<ArrayRef> {
    parse_partition_values(&[raw], ty)
}

/// Parses partition values into an Arrow array of `ty`'s Arrow type, one row per value.
pub fn parse_partition_values(raws: &[Option<&str>], ty: &PrimitiveType) -> Result<ArrayRef> {
    let array: ArrayRef = match ty {
        PrimitiveType::String => Arc::new(StringArray::from(present(raws))),
        PrimitiveType::Binary => Arc::new(BinaryArray::from(
            present(raws)
                .into_iter()
                .map(|v| v.map(str::as_bytes))
                .collect::<Vec<_>>(),
        )),
        PrimitiveType::Boolean => Arc::new(BooleanArray::from(parse_each(raws, ty, parse_bool)?)),
        PrimitiveType::Byte => Arc::new(Int8Array::from(parse_each(raws, ty, parse_trimmed)?)),
        PrimitiveType::Short => Arc::new(Int16Array::from(parse_each(raws, ty, parse_trimmed)?)),
        PrimitiveType::Integer => Arc::new(Int32Array::from(parse_each(raws, ty, parse_trimmed)?)),
        PrimitiveType::Long => Arc::new(Int64Array::from(parse_each(raws, ty, parse_trimmed)?)),
        PrimitiveType::Float => Arc::new(Float32Array::from(parse_each(raws, ty, parse_trimmed)?)),
        PrimitiveType::Double => Arc::new(Float64Array::from(parse_each(raws, ty, parse_trimmed)?)),
        PrimitiveType::Date => Arc::new(Date32Array::from(parse_each(raws, ty, parse_date)?)),
        PrimitiveType::Timestamp => Arc::new(
            TimestampMicrosecondArray::from(parse_each(raws, ty, |s| parse_timestamp(s, true))?)
                .with_timezone("UTC"),
        ),
        PrimitiveType::TimestampNtz => Arc::new(TimestampMicrosecondArray::from(parse_each(
            raws,
            ty,
            |s| parse_timestamp(s, false),
        )?)),
        PrimitiveType::Decimal(d) => {
            let values = parse_each(raws, ty, |s| parse_decimal(s, *d))?;
            let scale = i8::try_from(d.scale())
                .map_err(|_| DeltaError::invalid_schema(format!("invalid decimal type {ty}")))?;
            Arc::new(
                Decimal128Array::from(values)
                    .with_precision_and_scale(d.precision(), scale)
                    .map_err(|e| DeltaError::invalid_schema(format!("decimal type {ty}: {e}")))?,
            )
        }
        PrimitiveType::Void => {
            // A void column has no values: only nulls are valid.
            parse_each(raws, ty, |_| None::<()>)?;
            Arc::new(NullArray::new(raws.len()))
        }
        PrimitiveType::Variant => {
            return Err(DeltaError::invalid_schema(
                "a variant column cannot be a partition column",
            ))
        }
    };
    Ok(array)
}

/// The values with empty strings turned into nulls.
fn present<'a>(raws: &[Option<&'a str>]) -> Vec<Option<&'a str>> {
    raws.iter()
        .map(|raw| raw.filter(|s| !s.is_empty()))
        .collect()
}

/// Parses each present, non-empty value with `parse`; a value it refuses is an error that
/// names the value and the type.
fn parse_each<T>(
    raws: &[Option<&str>],
    ty: &PrimitiveType,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<Option<T>>> {
    present(raws)
        .into_iter()
        .map(|raw| match raw {
            None => Ok(None),
            Some(s) => parse(s).map(Some).ok_or_else(|| {
                DeltaError::invalid_schema(format!("partition value '{s}' is not a valid {ty}"))
            }),
        })
        .collect()
}

fn parse_trimmed<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.trim_ascii().parse().ok()
}

fn parse_bool(s: &str) -> Option<bool> {
    let s = s.trim_ascii();
    if s.eq_ignore_ascii_case("true") {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// Microseconds since the epoch of a timestamp. Without zone, the wall-clock time is taken as
/// UTC; `with_zone` allows (and applies) a `Z` or an offset.
fn parse_timestamp(s: &str, with_zone: bool) -> Option<i64> {
    super::time_text::parse_timestamp_zoned(s, with_zone).map(|t| t.micros)
}

/// The unscaled value of a decimal string at `ty`'s scale, exactly: a value with more
/// fractional digits than the scale (other than trailing zeros), or more digits than the
/// precision, is refused.
fn parse_decimal(s: &str, ty: DecimalType) -> Option<i128> {
    use super::number_text::{ExactNumber, Scaled};
    match ExactNumber::parse(s)?.to_scaled(i64::from(ty.scale())) {
        Scaled::Exact(v) => {
            let limit = 10i128.checked_pow(u32::from(ty.precision()))?;
            (v.unsigned_abs() < limit.unsigned_abs()).then_some(v)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
        Int8Type, TimestampMicrosecondType,
    };
    use arrow_array::Array;

    fn one(raw: &str, ty: PrimitiveType) -> Result<ArrayRef> {
        let array = parse_partition_value(Some(raw), &ty)?;
        assert_eq!(array.len(), 1);
        assert_eq!(array.data_type(), &ty.to_arrow(), "{ty}");
        Ok(array)
    }

    fn dec(p: u8, s: u8) -> Result<DecimalType> {
        DecimalType::try_new(p, s)
    }

    #[test]
    fn nulls_and_empty_strings() -> Result<()> {
        let types = [
            PrimitiveType::String,
            PrimitiveType::Binary,
            PrimitiveType::Boolean,
            PrimitiveType::Byte,
            PrimitiveType::Short,
            PrimitiveType::Integer,
            PrimitiveType::Long,
            PrimitiveType::Float,
            PrimitiveType::Double,
            PrimitiveType::Date,
            PrimitiveType::Timestamp,
            PrimitiveType::TimestampNtz,
            PrimitiveType::decimal(10, 2)?,
            PrimitiveType::Void,
        ];
        for ty in types {
            for raw in [None, Some("")] {
                let array = parse_partition_value(raw, &ty)?;
                assert_eq!(array.data_type(), &ty.to_arrow(), "{ty}");
                assert_eq!(array.len(), 1);
                assert!(
                    array.is_null(0) || ty == PrimitiveType::Void,
                    "{ty} {raw:?}"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn strings_binary_booleans() -> Result<()> {
        let a = one("a b/=%", PrimitiveType::String)?;
        assert_eq!(a.as_string::<i32>().value(0), "a b/=%");
        let a = one("null", PrimitiveType::String)?;
        assert_eq!(a.as_string::<i32>().value(0), "null");
        let a = one("\u{1}\u{2}é", PrimitiveType::Binary)?;
        assert_eq!(a.as_binary::<i32>().value(0), "\u{1}\u{2}é".as_bytes());
        assert!(one("true", PrimitiveType::Boolean)?.as_boolean().value(0));
        assert!(!one("FALSE", PrimitiveType::Boolean)?.as_boolean().value(0));
        assert!(one("yes", PrimitiveType::Boolean).is_err());
        Ok(())
    }

    #[test]
    fn integers_and_floats() -> Result<()> {
        assert_eq!(
            one("-128", PrimitiveType::Byte)?
                .as_primitive::<Int8Type>()
                .value(0),
            -128
        );
        assert!(one("128", PrimitiveType::Byte).is_err());
        assert_eq!(
            one("32767", PrimitiveType::Short)?
                .as_primitive::<Int16Type>()
                .value(0),
            32767
        );
        assert_eq!(
            one(" 42 ", PrimitiveType::Integer)?
                .as_primitive::<Int32Type>()
                .value(0),
            42
        );
        assert_eq!(
            one("-9223372036854775808", PrimitiveType::Long)?
                .as_primitive::<Int64Type>()
                .value(0),
            i64::MIN
        );
        assert!(one("1.5", PrimitiveType::Long).is_err());
        assert!(one("x", PrimitiveType::Integer).is_err());
        assert_eq!(
            one("1.5", PrimitiveType::Float)?
                .as_primitive::<Float32Type>()
                .value(0),
            1.5
        );
        assert_eq!(
            one("-2.5E3", PrimitiveType::Double)?
                .as_primitive::<Float64Type>()
                .value(0),
            -2500.0
        );
        assert!(one("NaN", PrimitiveType::Double)?
            .as_primitive::<Float64Type>()
            .value(0)
            .is_nan());
        assert_eq!(
            one("Infinity", PrimitiveType::Double)?
                .as_primitive::<Float64Type>()
                .value(0),
            f64::INFINITY
        );
        assert_eq!(
            one("-Infinity", PrimitiveType::Float)?
                .as_primitive::<Float32Type>()
                .value(0),
            f32::NEG_INFINITY
        );
        Ok(())
    }

    #[test]
    fn decimals_are_exact() -> Result<()> {
        let cases: [(&str, u8, u8, Option<i128>); 16] = [
            ("1.23", 10, 2, Some(123)),
            ("-0.5", 10, 2, Some(-50)),
            ("+7", 3, 0, Some(7)),
            ("1E+2", 10, 2, Some(10000)),
            ("1.5e-1", 10, 2, Some(15)),
            ("123.4500", 10, 2, Some(12345)),
            ("0", 1, 0, Some(0)),
            ("0.000", 5, 2, Some(0)),
            (
                "99999999999999999999999999999999999999",
                38,
                0,
                Some(10i128.pow(38) - 1),
            ),
            (".5", 2, 1, Some(5)),
            ("5.", 2, 1, Some(50)),
            ("1.234", 10, 2, None),
            ("100", 3, 1, None),
            ("1e", 10, 2, None),
            ("1.2.3", 10, 2, None),
            ("-", 10, 2, None),
        ];
        for (raw, p, s, expected) in cases {
            let ty = PrimitiveType::Decimal(dec(p, s)?);
            match expected {
                Some(v) => {
                    let a = one(raw, ty)?;
                    assert_eq!(a.as_primitive::<Decimal128Type>().value(0), v, "{raw}");
                }
                None => {
                    let err = one(raw, ty)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default();
                    assert!(
                        err.contains(&format!("partition value '{raw}' is not a valid decimal")),
                        "{raw}: {err}"
                    );
                }
            }
        }
        assert_eq!(parse_decimal("1e99999999999999999999", dec(10, 0)?), None);
        assert_eq!(parse_decimal("0e99999", dec(10, 0)?), Some(0));
        Ok(())
    }

    #[test]
    fn dates() -> Result<()> {
        let day = |raw| -> Result<i32> {
            Ok(one(raw, PrimitiveType::Date)?
                .as_primitive::<Date32Type>()
                .value(0))
        };
        assert_eq!(day("1970-01-01")?, 0);
        assert_eq!(day("2021-09-08")?, 18878);
        assert_eq!(day("1969-12-31")?, -1);
        assert!(one("2021-13-01", PrimitiveType::Date).is_err());
        assert!(one("20180512", PrimitiveType::Date).is_err());
        Ok(())
    }

    #[test]
    fn timestamps() -> Result<()> {
        let ts = |raw, ty| -> Result<i64> {
            Ok(one(raw, ty)?
                .as_primitive::<TimestampMicrosecondType>()
                .value(0))
        };
        let utc = PrimitiveType::Timestamp;
        let ntz = PrimitiveType::TimestampNtz;
        assert_eq!(ts("1970-01-01 00:00:00", utc)?, 0);
        assert_eq!(ts("2021-09-08 11:11:11", utc)?, 1_631_099_471_000_000);
        assert_eq!(ts("2020-01-01 08:09:10.001", utc)?, 1_577_866_150_001_000);
        assert_eq!(
            ts("2013-07-05 17:01:00.123456", ntz)?,
            1_373_043_660_123_456
        );
        assert_eq!(
            ts("2013-07-05T17:01:00.123456", ntz)?,
            1_373_043_660_123_456
        );
        assert_eq!(ts("1969-01-01 00:00:00", utc)?, -31_536_000_000_000);
        assert_eq!(ts("1969-12-31 23:59:59.5", utc)?, -500_000);
        assert_eq!(ts("2021-10-01T08:09:20Z", utc)?, 1_633_075_760_000_000);
        assert_eq!(ts("2021-10-01T10:09:20+02:00", utc)?, 1_633_075_760_000_000);
        assert_eq!(
            ts("2021-10-01T08:09:20.000001Z", utc)?,
            1_633_075_760_000_001
        );
        assert_eq!(ts("2021-10-01", utc)?, 1_633_046_400_000_000);
        assert!(one("2021-10-01T08:09:20Z", ntz).is_err());
        assert!(one("yesterday", utc).is_err());
        let a = one("1970-01-01 00:00:00", utc)?;
        assert_eq!(
            a.data_type(),
            &arrow_schema::DataType::Timestamp(
                arrow_schema::TimeUnit::Microsecond,
                Some("UTC".into())
            )
        );
        Ok(())
    }

    #[test]
    fn many_rows() -> Result<()> {
        let a = parse_partition_values(
            &[Some("1"), None, Some(""), Some("4")],
            &PrimitiveType::Long,
        )?;
        let a = a.as_primitive::<Int64Type>();
        assert_eq!(a.len(), 4);
        assert_eq!(a.null_count(), 2);
        assert_eq!((a.value(0), a.value(3)), (1, 4));
        let a = parse_partition_values(&[], &PrimitiveType::String)?;
        assert_eq!(a.len(), 0);
        let err = parse_partition_values(&[Some("1"), Some("b")], &PrimitiveType::Integer)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("partition value 'b' is not a valid integer"),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn void_and_variant() -> Result<()> {
        let a = parse_partition_values(&[None, Some("")], &PrimitiveType::Void)?;
        assert_eq!(a.len(), 2);
        assert!(parse_partition_value(Some("x"), &PrimitiveType::Void).is_err());
        assert!(parse_partition_value(None, &PrimitiveType::Variant).is_err());
        Ok(())
    }
}
