//! [`Scalar`]: one typed value of any Delta primitive type, as used by filter literals,
//! partition values and file statistics.
//!
//! A scalar converts to and from a length-1 Arrow array of the Arrow type the schema gives
//! its Delta type ([`PrimitiveType::to_arrow`]), orders against another scalar of the same
//! type, and displays in the text filter syntax (`'it''s'`, `date '2024-01-01'`, `10.50`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, NullArray, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType as ArrowDataType, TimeUnit};

use super::literal_text::{
    format_date, format_decimal, format_timestamp, parse_date, parse_timestamp,
};
use crate::error::{DeltaError, Result};
use crate::schema::{DecimalType, PrimitiveType};

/// One value of a Delta primitive type, or a typed null.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Scalar {
    /// `string`.
    String(String),
    /// `long`.
    Long(i64),
    /// `integer`.
    Integer(i32),
    /// `short`.
    Short(i16),
    /// `byte`.
    Byte(i8),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `boolean`.
    Boolean(bool),
    /// `binary`.
    Binary(Vec<u8>),
    /// `date`: days since 1970-01-01.
    Date(i32),
    /// `timestamp`: microseconds since 1970-01-01 00:00:00 UTC.
    Timestamp(i64),
    /// `timestamp_ntz`: microseconds since 1970-01-01 00:00:00, without time zone.
    TimestampNtz(i64),
    /// `decimal(p,s)`: the unscaled value (`10.50` at scale 2 is `1050`) and its type.
    Decimal(i128, DecimalType),
    /// A null of the given type ([`PrimitiveType::Void`] when the type is not known, as for
    /// the literal `null`).
    Null(PrimitiveType),
}

impl Scalar {
    /// A decimal scalar, checking the precision and scale and that `unscaled` has at most
    /// `precision` digits.
    pub fn decimal(unscaled: i128, precision: u8, scale: u8) -> Result<Scalar> {
        let ty = DecimalType::try_new(precision, scale).map_err(|e| invalid(e.to_string()))?;
        let limit = 10i128
            .checked_pow(u32::from(precision))
            .unwrap_or(i128::MAX);
        if unscaled.unsigned_abs() >= limit.unsigned_abs() {
            return Err(invalid(format!(
                "{unscaled} has more than {precision} digits for decimal({precision},{scale})"
            )));
        }
        Ok(Scalar::Decimal(unscaled, ty))
    }

    /// A `date` from `yyyy-MM-dd`.
    pub fn parse_date(text: &str) -> Result<Scalar> {
        parse_date(text)
            .map(Scalar::Date)
            .ok_or_else(|| invalid(format!("'{text}' is not a date (expected yyyy-MM-dd)")))
    }

    /// A `timestamp` from `yyyy-MM-dd[ HH:mm[:ss[.ffffff]]][zone]`; without a zone the time is
    /// UTC.
    pub fn parse_timestamp(text: &str) -> Result<Scalar> {
        timestamp_micros(text).map(Scalar::Timestamp)
    }

    /// A `timestamp_ntz` from `yyyy-MM-dd[ HH:mm[:ss[.ffffff]]]`.
    pub fn parse_timestamp_ntz(text: &str) -> Result<Scalar> {
        timestamp_micros(text).map(Scalar::TimestampNtz)
    }

    /// The Delta type of the value.
    pub fn data_type(&self) -> PrimitiveType {
        match self {
            Scalar::String(_) => PrimitiveType::String,
            Scalar::Long(_) => PrimitiveType::Long,
            Scalar::Integer(_) => PrimitiveType::Integer,
            Scalar::Short(_) => PrimitiveType::Short,
            Scalar::Byte(_) => PrimitiveType::Byte,
            Scalar::Float(_) => PrimitiveType::Float,
            Scalar::Double(_) => PrimitiveType::Double,
            Scalar::Boolean(_) => PrimitiveType::Boolean,
            Scalar::Binary(_) => PrimitiveType::Binary,
            Scalar::Date(_) => PrimitiveType::Date,
            Scalar::Timestamp(_) => PrimitiveType::Timestamp,
            Scalar::TimestampNtz(_) => PrimitiveType::TimestampNtz,
            Scalar::Decimal(_, ty) => PrimitiveType::Decimal(*ty),
            Scalar::Null(ty) => *ty,
        }
    }

    /// Whether this is a null.
    pub fn is_null(&self) -> bool {
        matches!(self, Scalar::Null(_))
    }

    /// A length-1 Arrow array of the value, of the Arrow type of [`Scalar::data_type`].
    pub fn to_array(&self) -> Result<ArrayRef> {
        let array: ArrayRef = match self {
            Scalar::String(v) => Arc::new(StringArray::from(vec![v.as_str()])),
            Scalar::Long(v) => Arc::new(Int64Array::from(vec![*v])),
            Scalar::Integer(v) => Arc::new(Int32Array::from(vec![*v])),
            Scalar::Short(v) => Arc::new(Int16Array::from(vec![*v])),
            Scalar::Byte(v) => Arc::new(Int8Array::from(vec![*v])),
            Scalar::Float(v) => Arc::new(Float32Array::from(vec![*v])),
            Scalar::Double(v) => Arc::new(Float64Array::from(vec![*v])),
            Scalar::Boolean(v) => Arc::new(BooleanArray::from(vec![*v])),
            Scalar::Binary(v) => Arc::new(BinaryArray::from(vec![v.as_slice()])),
            Scalar::Date(v) => Arc::new(Date32Array::from(vec![*v])),
            Scalar::Timestamp(v) => {
                Arc::new(TimestampMicrosecondArray::from(vec![*v]).with_timezone("UTC"))
            }
            Scalar::TimestampNtz(v) => Arc::new(TimestampMicrosecondArray::from(vec![*v])),
            Scalar::Decimal(v, ty) => Arc::new(
                Decimal128Array::from(vec![*v])
                    .with_precision_and_scale(ty.precision(), decimal_scale(*ty))
                    .map_err(|e| invalid(format!("decimal {self}: {e}")))?,
            ),
            Scalar::Null(PrimitiveType::Void) => Arc::new(NullArray::new(1)),
            Scalar::Null(ty) => arrow_array::new_null_array(&ty.to_arrow(), 1),
        };
        Ok(array)
    }

    /// The value at `row` of an Arrow array whose type is one a Delta primitive type maps to
    /// (strings, binaries and timestamps of any Arrow flavour are accepted too).
    pub fn from_array(array: &dyn Array, row: usize) -> Result<Scalar> {
        if row >= array.len() {
            return Err(invalid(format!(
                "row {row} is out of bounds for an array of {} rows",
                array.len()
            )));
        }
        let ty = delta_type_of(array.data_type()).ok_or_else(|| {
            invalid(format!(
                "arrow type {} has no Delta primitive type",
                array.data_type()
            ))
        })?;
        if array.logical_nulls().is_some_and(|n| n.is_null(row)) {
            return Ok(Scalar::Null(ty));
        }
        let scalar = match array.data_type() {
            ArrowDataType::Utf8 => Scalar::String(array.as_string::<i32>().value(row).into()),
            ArrowDataType::LargeUtf8 => Scalar::String(array.as_string::<i64>().value(row).into()),
            ArrowDataType::Utf8View => Scalar::String(array.as_string_view().value(row).into()),
            ArrowDataType::Binary => Scalar::Binary(array.as_binary::<i32>().value(row).into()),
            ArrowDataType::LargeBinary => {
                Scalar::Binary(array.as_binary::<i64>().value(row).into())
            }
            ArrowDataType::BinaryView => Scalar::Binary(array.as_binary_view().value(row).into()),
            ArrowDataType::Int64 => Scalar::Long(array.as_primitive::<Int64Type>().value(row)),
            ArrowDataType::Int32 => Scalar::Integer(array.as_primitive::<Int32Type>().value(row)),
            ArrowDataType::Int16 => Scalar::Short(array.as_primitive::<Int16Type>().value(row)),
            ArrowDataType::Int8 => Scalar::Byte(array.as_primitive::<Int8Type>().value(row)),
            ArrowDataType::Float32 => Scalar::Float(array.as_primitive::<Float32Type>().value(row)),
            ArrowDataType::Float64 => {
                Scalar::Double(array.as_primitive::<Float64Type>().value(row))
            }
            ArrowDataType::Boolean => Scalar::Boolean(array.as_boolean().value(row)),
            ArrowDataType::Date32 => Scalar::Date(array.as_primitive::<Date32Type>().value(row)),
            ArrowDataType::Decimal128(_, _) => match ty {
                PrimitiveType::Decimal(d) => {
                    Scalar::Decimal(array.as_primitive::<Decimal128Type>().value(row), d)
                }
                _ => return Err(invalid("decimal array without a decimal type")),
            },
            ArrowDataType::Timestamp(unit, _) => {
                let micros = timestamp_value_micros(array, *unit, row)
                    .ok_or_else(|| invalid("timestamp out of range"))?;
                match ty {
                    PrimitiveType::Timestamp => Scalar::Timestamp(micros),
                    _ => Scalar::TimestampNtz(micros),
                }
            }
            other => return Err(invalid(format!("unsupported arrow type {other}"))),
        };
        Ok(scalar)
    }

    /// Orders two values of the same type; `None` for different types or a null. Floats are
    /// ordered as in [`Scalar::normalized`] form: `-0.0` equals `0.0` and NaN is one value
    /// greater than every number.
    pub(crate) fn compare(&self, other: &Scalar) -> Option<Ordering> {
        Some(match (self, other) {
            (Scalar::String(a), Scalar::String(b)) => a.cmp(b),
            (Scalar::Long(a), Scalar::Long(b)) => a.cmp(b),
            (Scalar::Integer(a), Scalar::Integer(b)) => a.cmp(b),
            (Scalar::Short(a), Scalar::Short(b)) => a.cmp(b),
            (Scalar::Byte(a), Scalar::Byte(b)) => a.cmp(b),
            (Scalar::Float(a), Scalar::Float(b)) => normal_f32(*a).total_cmp(&normal_f32(*b)),
            (Scalar::Double(a), Scalar::Double(b)) => normal_f64(*a).total_cmp(&normal_f64(*b)),
            (Scalar::Boolean(a), Scalar::Boolean(b)) => a.cmp(b),
            (Scalar::Binary(a), Scalar::Binary(b)) => a.cmp(b),
            (Scalar::Date(a), Scalar::Date(b)) => a.cmp(b),
            (Scalar::Timestamp(a), Scalar::Timestamp(b)) => a.cmp(b),
            (Scalar::TimestampNtz(a), Scalar::TimestampNtz(b)) => a.cmp(b),
            (Scalar::Decimal(a, ta), Scalar::Decimal(b, tb)) if ta.scale() == tb.scale() => {
                a.cmp(b)
            }
            _ => return None,
        })
    }

    /// The value with floats in canonical form: `-0.0` becomes `0.0` and every NaN becomes
    /// the positive quiet NaN, so that Arrow's total order on floats agrees with SQL.
    pub(crate) fn normalized(self) -> Scalar {
        match self {
            Scalar::Float(v) => Scalar::Float(normal_f32(v)),
            Scalar::Double(v) => Scalar::Double(normal_f64(v)),
            other => other,
        }
    }

    /// A text equal for two values exactly when they are equal as `=` compares them (the
    /// same type, floats [`Scalar::normalized`]): the key of an `in` list's set of values.
    pub(crate) fn set_key(&self) -> String {
        format!("{:?}", self.clone().normalized())
    }
}

/// `v` with `-0.0` as `0.0` and any NaN as the positive quiet NaN.
pub(crate) fn normal_f64(v: f64) -> f64 {
    if v.is_nan() {
        f64::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// `v` with `-0.0` as `0.0` and any NaN as the positive quiet NaN.
pub(crate) fn normal_f32(v: f32) -> f32 {
    if v.is_nan() {
        f32::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// The Delta primitive type an Arrow type stands for.
pub(crate) fn delta_type_of(data_type: &ArrowDataType) -> Option<PrimitiveType> {
    Some(match data_type {
        ArrowDataType::Utf8 | ArrowDataType::LargeUtf8 | ArrowDataType::Utf8View => {
            PrimitiveType::String
        }
        ArrowDataType::Binary | ArrowDataType::LargeBinary | ArrowDataType::BinaryView => {
            PrimitiveType::Binary
        }
        ArrowDataType::Int64 => PrimitiveType::Long,
        ArrowDataType::Int32 => PrimitiveType::Integer,
        ArrowDataType::Int16 => PrimitiveType::Short,
        ArrowDataType::Int8 => PrimitiveType::Byte,
        ArrowDataType::Float32 => PrimitiveType::Float,
        ArrowDataType::Float64 => PrimitiveType::Double,
        ArrowDataType::Boolean => PrimitiveType::Boolean,
        ArrowDataType::Date32 => PrimitiveType::Date,
        ArrowDataType::Timestamp(_, Some(_)) => PrimitiveType::Timestamp,
        ArrowDataType::Timestamp(_, None) => PrimitiveType::TimestampNtz,
        ArrowDataType::Decimal128(p, s) => {
            PrimitiveType::decimal(*p, u8::try_from(*s).ok()?).ok()?
        }
        ArrowDataType::Null => PrimitiveType::Void,
        _ => return None,
    })
}

/// The scale of a decimal type as Arrow wants it (at most 38, so it always fits).
pub(crate) fn decimal_scale(ty: DecimalType) -> i8 {
    i8::try_from(ty.scale()).unwrap_or(i8::MAX)
}

fn timestamp_value_micros(array: &dyn Array, unit: TimeUnit, row: usize) -> Option<i64> {
    match unit {
        TimeUnit::Second => array
            .as_primitive::<TimestampSecondType>()
            .value(row)
            .checked_mul(1_000_000),
        TimeUnit::Millisecond => array
            .as_primitive::<TimestampMillisecondType>()
            .value(row)
            .checked_mul(1000),
        TimeUnit::Microsecond => Some(array.as_primitive::<TimestampMicrosecondType>().value(row)),
        TimeUnit::Nanosecond => Some(
            array
                .as_primitive::<TimestampNanosecondType>()
                .value(row)
                .div_euclid(1000),
        ),
    }
}

fn timestamp_micros(text: &str) -> Result<i64> {
    match parse_timestamp(text) {
        Some(t) if !t.truncated => Ok(t.micros),
        Some(_) => Err(invalid(format!(
            "'{text}' has more precision than microseconds"
        ))),
        None => Err(invalid(format!(
            "'{text}' is not a timestamp (expected yyyy-MM-dd HH:mm:ss[.ffffff])"
        ))),
    }
}

fn invalid(reason: impl Into<String>) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: reason.into(),
    }
}

/// Writes `text` as a single-quoted literal, doubling quotes inside.
pub(crate) fn write_quoted(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_str("'")?;
    f.write_str(&text.replace('\'', "''"))?;
    f.write_str("'")
}

fn write_float(
    f: &mut fmt::Formatter<'_>,
    type_name: &str,
    text: String,
    finite: bool,
) -> fmt::Result {
    if finite {
        return f.write_str(&text);
    }
    let name = match text.as_str() {
        "inf" => "Infinity",
        "-inf" => "-Infinity",
        _ => "NaN",
    };
    write!(f, "{type_name} '{name}'")
}

impl fmt::Display for Scalar {
    /// The value in the text filter syntax: parsing it back gives a literal that binds to the
    /// same value for a column of this type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::String(v) => write_quoted(f, v),
            Scalar::Long(v) => write!(f, "{v}"),
            Scalar::Integer(v) => write!(f, "{v}"),
            Scalar::Short(v) => write!(f, "{v}"),
            Scalar::Byte(v) => write!(f, "{v}"),
            Scalar::Float(v) => write_float(f, "float", format!("{v:?}"), v.is_finite()),
            Scalar::Double(v) => write_float(f, "double", format!("{v:?}"), v.is_finite()),
            Scalar::Boolean(v) => write!(f, "{v}"),
            Scalar::Binary(v) => {
                f.write_str("X'")?;
                for byte in v {
                    write!(f, "{byte:02x}")?;
                }
                f.write_str("'")
            }
            Scalar::Date(v) => write!(f, "date '{}'", format_date(*v)),
            Scalar::Timestamp(v) => write!(f, "timestamp '{}'", format_timestamp(*v, true)),
            Scalar::TimestampNtz(v) => {
                write!(f, "timestamp_ntz '{}'", format_timestamp(*v, false))
            }
            Scalar::Decimal(v, ty) => f.write_str(&format_decimal(*v, ty.scale())),
            Scalar::Null(_) => f.write_str("null"),
        }
    }
}

macro_rules! scalar_from {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl From<$t> for Scalar {
            fn from(v: $t) -> Self {
                Scalar::$variant(v.into())
            }
        })*
    };
}

scalar_from!(
    i64 => Long,
    i32 => Integer,
    i16 => Short,
    i8 => Byte,
    f32 => Float,
    f64 => Double,
    bool => Boolean,
    String => String,
    &str => String,
    Vec<u8> => Binary,
    &[u8] => Binary,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_round_trip() -> Result<()> {
        let scalars = [
            Scalar::from("a"),
            Scalar::from(1i64),
            Scalar::from(2i32),
            Scalar::from(3i16),
            Scalar::from(4i8),
            Scalar::from(1.5f32),
            Scalar::from(2.5f64),
            Scalar::from(true),
            Scalar::from(vec![1u8, 2]),
            Scalar::parse_date("2024-01-01")?,
            Scalar::parse_timestamp("2024-01-01 10:00:00.123456")?,
            Scalar::parse_timestamp_ntz("2024-01-01 10:00:00")?,
            Scalar::decimal(1050, 10, 2)?,
            Scalar::Null(PrimitiveType::Long),
            Scalar::Null(PrimitiveType::Void),
        ];
        for scalar in scalars {
            let array = scalar.to_array()?;
            assert_eq!(array.len(), 1);
            assert_eq!(
                array.data_type(),
                &scalar.data_type().to_arrow(),
                "{scalar}"
            );
            assert_eq!(Scalar::from_array(&array, 0)?, scalar);
        }
        Ok(())
    }

    #[test]
    fn display_uses_filter_syntax() -> Result<()> {
        assert_eq!(Scalar::from("it's").to_string(), "'it''s'");
        assert_eq!(Scalar::decimal(-5, 5, 3)?.to_string(), "-0.005");
        assert_eq!(Scalar::from(f64::NAN).to_string(), "double 'NaN'");
        assert_eq!(
            Scalar::from(f32::NEG_INFINITY).to_string(),
            "float '-Infinity'"
        );
        assert_eq!(Scalar::from(0.1f64).to_string(), "0.1");
        assert_eq!(Scalar::from(vec![0u8, 255]).to_string(), "X'00ff'");
        assert_eq!(
            Scalar::parse_timestamp("2024-01-01T10:00:00+01:00")?.to_string(),
            "timestamp '2024-01-01 09:00:00Z'"
        );
        assert_eq!(
            Scalar::parse_date("2024-02-29")?.to_string(),
            "date '2024-02-29'"
        );
        Ok(())
    }

    #[test]
    fn validates_inputs() {
        assert!(Scalar::decimal(100, 2, 0).is_err());
        assert!(Scalar::decimal(99, 2, 0).is_ok());
        assert!(Scalar::decimal(1, 2, 3).is_err());
        assert!(Scalar::parse_date("2024-1-1x").is_err());
        assert!(Scalar::parse_timestamp("2024-01-01 00:00:00.0000001").is_err());
        assert!(Scalar::from_array(&Int64Array::from(vec![1]), 1).is_err());
    }

    #[test]
    fn orders_same_types() -> Result<()> {
        use Ordering::*;
        assert_eq!(Scalar::from(1i64).compare(&Scalar::from(2i64)), Some(Less));
        assert_eq!(
            Scalar::from(-0.0f64).compare(&Scalar::from(0.0f64)),
            Some(Equal)
        );
        assert_eq!(
            Scalar::from(f64::NAN).compare(&Scalar::from(f64::INFINITY)),
            Some(Greater)
        );
        assert_eq!(
            Scalar::from(-f64::NAN).compare(&Scalar::from(1.0)),
            Some(Greater)
        );
        assert_eq!(Scalar::from(1i64).compare(&Scalar::from(1i32)), None);
        assert_eq!(
            Scalar::decimal(5, 3, 1)?.compare(&Scalar::decimal(7, 3, 1)?),
            Some(Less)
        );
        Ok(())
    }
}
