//! Column data converted to the Arrow type of its Delta column: [`cast`].
//!
//! A data file (or its Parquet statistics) may hold a column in another Arrow type than the
//! table's logical one: a narrower or older type (type widening, schema evolution), another
//! timestamp unit (INT96, milliseconds, nanoseconds), a large, view or dictionary encoding,
//! strings stored without their UTF-8 annotation. This module converts exactly those, and
//! nothing else, so the wasm build carries no general cast kernel:
//!
//! - integers (signed or unsigned) to `Int8`..`Int64`, an out-of-range value an error;
//! - `Float32`, and integers of at most 32 bits, to `Float64` (type widening; a long or
//!   an integer to `Float32` would lose digits, and is an error);
//! - integers and decimals to `Decimal128(p, s)` (rescaled, rounding half away from zero when
//!   the scale shrinks), a value beyond the precision an error;
//! - `Date64` to `Date32`; dates and timestamps of any unit to a timestamp of any unit
//!   (dividing truncates, multiplying checks overflow); a time zone label is only relabelled,
//!   as stored values are UTC instants (or zone-less for `timestamp_ntz`);
//! - the string and binary encodings (plain, large, view) to one another, read as strings only
//!   when they are UTF-8 (see [`crate::schema::OutputTypes`]);
//! - `Null` to anything (all nulls), a dictionary to its value type;
//! - lists, structs and maps whose children convert.
//!
//! Errors are [`ArrowError::CastError`]s; callers say which column failed.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Decimal32Type, Decimal64Type, DecimalType,
    Float32Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BinaryArray, BinaryViewArray, Decimal128Array,
    Float64Array, Int64Array, LargeBinaryArray, LargeStringArray, ListArray, MapArray,
    PrimitiveArray, StringArray, StringViewArray, StructArray, UInt32Array,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, FieldRef, Fields, TimeUnit};

const SECONDS_PER_DAY: i64 = 86_400;
const MILLIS_PER_DAY: i64 = SECONDS_PER_DAY * 1000;

/// `data` as `target`, for the conversions listed in the module doc.
pub(crate) fn cast(data: &ArrayRef, target: &DataType) -> Result<ArrayRef, ArrowError> {
    let from = data.data_type();
    if from == target {
        return Ok(Arc::clone(data));
    }
    match (from, target) {
        (DataType::Null, _) => Ok(new_null_array(target, data.len())),
        (DataType::Dictionary(_, _), _) => cast(&unpack_dictionary(data)?, target),
        (_, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64) => {
            let values = integers(data).ok_or_else(|| unsupported(from, target))??;
            narrow_integers(&values, target)
        }
        (DataType::Float32, DataType::Float64) => Ok(Arc::new(
            data.as_primitive::<Float32Type>()
                .unary::<_, arrow_array::types::Float64Type>(f64::from),
        )),
        // Type widening's integer → double: integers of at most 32 bits, which a double
        // holds exactly (a long would lose digits past 2^53, and no integer widens to float).
        (
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32,
            DataType::Float64,
        ) => {
            let values = integers(data).ok_or_else(|| unsupported(from, target))??;
            Ok(Arc::new(Float64Array::from(
                values.unary::<_, arrow_array::types::Float64Type>(|v| v as f64),
            )))
        }
        (_, DataType::Decimal128(precision, scale)) => {
            to_decimal(data, *precision, *scale).ok_or_else(|| unsupported(from, target))?
        }
        (DataType::Date64, DataType::Date32) => {
            let days = reinterpret::<Int64Type>(data)?
                .try_unary::<_, Int32Type, _>(|ms| i32::try_from(ms / MILLIS_PER_DAY))
                .map_err(|_| out_of_range(from, target))?;
            retype(&days, target)
        }
        (_, DataType::Timestamp(unit, _)) => {
            to_timestamp(data, *unit, target).ok_or_else(|| unsupported(from, target))?
        }
        (
            _,
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView,
        ) => to_bytes(data, target).ok_or_else(|| unsupported(from, target))?,
        (
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _),
            DataType::List(item),
        ) => to_list(data, item),
        (DataType::Struct(_), DataType::Struct(fields)) => to_struct(data, fields),
        (DataType::Map(_, _), DataType::Map(entries, sorted)) => to_map(data, entries, *sorted),
        _ => Err(unsupported(from, target)),
    }
}

fn unsupported(from: &DataType, to: &DataType) -> ArrowError {
    ArrowError::CastError(format!("converting {from} to {to} is not supported"))
}

fn out_of_range(from: &DataType, to: &DataType) -> ArrowError {
    ArrowError::CastError(format!("a {from} value is out of range for {to}"))
}

/// The same values and nulls under another type with the same physical layout.
fn retype(data: &dyn Array, target: &DataType) -> Result<ArrayRef, ArrowError> {
    let data = data
        .to_data()
        .into_builder()
        .data_type(target.clone())
        .build()?;
    Ok(make_array(data))
}

/// A primitive array read as `T` (same native width: a timestamp as `Int64`, say).
fn reinterpret<T: ArrowPrimitiveType>(data: &dyn Array) -> Result<PrimitiveArray<T>, ArrowError> {
    let data = data
        .to_data()
        .into_builder()
        .data_type(T::DATA_TYPE)
        .build()?;
    Ok(PrimitiveArray::<T>::from(data))
}

/// A dictionary array as a plain array of its values.
fn unpack_dictionary(data: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let DataType::Dictionary(_, value_type) = data.data_type() else {
        return Err(unsupported(data.data_type(), data.data_type()));
    };
    let dict = data
        .as_any_dictionary_opt()
        .ok_or_else(|| unsupported(data.data_type(), value_type))?;
    let keys = integers(dict.keys()).ok_or_else(|| unsupported(data.data_type(), value_type))??;
    let indices: UInt32Array = keys
        .try_unary(u32::try_from)
        .map_err(|_| out_of_range(data.data_type(), value_type))?;
    arrow_select::take::take(dict.values().as_ref(), &indices, None)
}

/// The values of an integer array as `i64` (`None` for another type; an unsigned value
/// beyond `i64::MAX` is an error).
fn integers(data: &dyn Array) -> Option<Result<Int64Array, ArrowError>> {
    fn widen<T: ArrowPrimitiveType>(data: &dyn Array) -> Result<Int64Array, ArrowError>
    where
        T::Native: Into<i64>,
    {
        Ok(data.as_primitive::<T>().unary(Into::into))
    }
    Some(match data.data_type() {
        DataType::Int8 => widen::<Int8Type>(data),
        DataType::Int16 => widen::<Int16Type>(data),
        DataType::Int32 => widen::<Int32Type>(data),
        DataType::Int64 => Ok(data.as_primitive::<Int64Type>().clone()),
        DataType::UInt8 => widen::<UInt8Type>(data),
        DataType::UInt16 => widen::<UInt16Type>(data),
        DataType::UInt32 => widen::<UInt32Type>(data),
        DataType::UInt64 => data
            .as_primitive::<UInt64Type>()
            .try_unary(i64::try_from)
            .map_err(|_| out_of_range(data.data_type(), &DataType::Int64)),
        _ => return None,
    })
}

/// `Int64` values as `target` (`Int8`..`Int64`), each checked to fit.
fn narrow_integers(values: &Int64Array, target: &DataType) -> Result<ArrayRef, ArrowError> {
    fn to<T: ArrowPrimitiveType>(values: &Int64Array) -> Result<ArrayRef, ArrowError>
    where
        T::Native: TryFrom<i64>,
    {
        let out = values
            .try_unary::<_, T, _>(T::Native::try_from)
            .map_err(|_| out_of_range(&DataType::Int64, &T::DATA_TYPE))?;
        Ok(Arc::new(out))
    }
    match target {
        DataType::Int8 => to::<Int8Type>(values),
        DataType::Int16 => to::<Int16Type>(values),
        DataType::Int32 => to::<Int32Type>(values),
        _ => Ok(Arc::new(values.clone())),
    }
}

/// Integers or decimals as `Decimal128(precision, scale)`.
fn to_decimal(data: &ArrayRef, precision: u8, scale: i8) -> Option<Result<ArrayRef, ArrowError>> {
    let target = DataType::Decimal128(precision, scale);
    let (raw, from_scale): (Result<Decimal128Array, ArrowError>, i8) = match data.data_type() {
        DataType::Decimal32(_, s) => (
            Ok(data.as_primitive::<Decimal32Type>().unary(i128::from)),
            *s,
        ),
        DataType::Decimal64(_, s) => (
            Ok(data.as_primitive::<Decimal64Type>().unary(i128::from)),
            *s,
        ),
        DataType::Decimal128(_, s) => (Ok(data.as_primitive::<Decimal128Type>().clone()), *s),
        _ => (integers(data)?.map(|v| v.unary(i128::from)), 0),
    };
    Some(raw.and_then(|raw| {
        let from = data.data_type();
        let shift = i32::from(scale) - i32::from(from_scale);
        let factor = 10i128
            .checked_pow(shift.unsigned_abs())
            .ok_or_else(|| out_of_range(from, &target))?;
        let rescaled = if shift >= 0 {
            raw.try_unary::<_, Decimal128Type, _>(|v| {
                v.checked_mul(factor)
                    .ok_or_else(|| out_of_range(from, &target))
            })?
        } else {
            // Round half away from zero, like Spark.
            raw.unary::<_, Decimal128Type>(|v| {
                let (q, r) = (v / factor, v % factor);
                if r.abs() * 2 >= factor {
                    q + v.signum()
                } else {
                    q
                }
            })
        };
        let fits = rescaled
            .iter()
            .flatten()
            .all(|v| Decimal128Type::is_valid_decimal_precision(v, precision));
        if !fits {
            return Err(out_of_range(from, &target));
        }
        Ok(Arc::new(rescaled.with_precision_and_scale(precision, scale)?) as ArrayRef)
    }))
}

/// Units per second.
fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// Dates and timestamps as a timestamp in `unit` (`target`, with its zone label).
fn to_timestamp(
    data: &ArrayRef,
    unit: TimeUnit,
    target: &DataType,
) -> Option<Result<ArrayRef, ArrowError>> {
    let from = data.data_type();
    let to = per_second(unit);
    let scaled = match from {
        DataType::Timestamp(from_unit, _) => {
            let have = per_second(*from_unit);
            reinterpret::<Int64Type>(data.as_ref()).and_then(|v| {
                if have >= to {
                    let divisor = have / to;
                    Ok(v.unary::<_, Int64Type>(|x| x / divisor))
                } else {
                    let factor = to / have;
                    v.try_unary(|x| {
                        x.checked_mul(factor)
                            .ok_or_else(|| out_of_range(from, target))
                    })
                }
            })
        }
        DataType::Date32 => {
            let factor = SECONDS_PER_DAY * to;
            data.as_primitive::<Date32Type>()
                .try_unary::<_, Int64Type, _>(|d| {
                    i64::from(d)
                        .checked_mul(factor)
                        .ok_or_else(|| out_of_range(from, target))
                })
        }
        _ => return None,
    };
    Some(scaled.and_then(|v| retype(&v, target)))
}

/// The string and binary encodings as one another (`target` is one of `Utf8`, `LargeUtf8`,
/// `Utf8View`, `Binary`, `LargeBinary`, `BinaryView`; values read as strings must be UTF-8).
/// Views are built over the source's value buffer, without copying values.
fn to_bytes(data: &ArrayRef, target: &DataType) -> Option<Result<ArrayRef, ArrowError>> {
    let from = data.data_type();
    let view: Option<ArrayRef> = match (from, target) {
        (DataType::Utf8, DataType::Utf8View) => {
            Some(Arc::new(StringViewArray::from(data.as_string::<i32>())))
        }
        (DataType::LargeUtf8, DataType::Utf8View) => {
            Some(Arc::new(StringViewArray::from(data.as_string::<i64>())))
        }
        (DataType::Binary, DataType::BinaryView) => {
            Some(Arc::new(BinaryViewArray::from(data.as_binary::<i32>())))
        }
        (DataType::LargeBinary, DataType::BinaryView) => {
            Some(Arc::new(BinaryViewArray::from(data.as_binary::<i64>())))
        }
        (DataType::Utf8View, DataType::BinaryView) => {
            Some(Arc::new(data.as_string_view().clone().to_binary_view()))
        }
        (DataType::Binary | DataType::LargeBinary | DataType::BinaryView, DataType::Utf8View) => {
            let binary = match from {
                DataType::Binary => BinaryViewArray::from(data.as_binary::<i32>()),
                DataType::LargeBinary => BinaryViewArray::from(data.as_binary::<i64>()),
                _ => data.as_binary_view().clone(),
            };
            return Some(
                binary
                    .to_string_view()
                    .map(|v| Arc::new(v) as ArrayRef)
                    .map_err(|_| not_utf8(from)),
            );
        }
        _ => None,
    };
    if let Some(view) = view {
        return Some(Ok(view));
    }
    let bytes = binary_values(data)?;
    let text = || -> Result<Vec<Option<&str>>, ArrowError> {
        bytes
            .iter()
            .map(|b| b.map(std::str::from_utf8).transpose())
            .collect::<Result<_, _>>()
            .map_err(|_| not_utf8(from))
    };
    let out: Result<ArrayRef, ArrowError> = match target {
        DataType::Utf8 => text().map(|t| Arc::new(StringArray::from(t)) as ArrayRef),
        DataType::LargeUtf8 => text().map(|t| Arc::new(LargeStringArray::from(t)) as ArrayRef),
        DataType::Utf8View => text().map(|t| Arc::new(StringViewArray::from(t)) as ArrayRef),
        DataType::Binary => Ok(Arc::new(BinaryArray::from(bytes))),
        DataType::LargeBinary => Ok(Arc::new(LargeBinaryArray::from(bytes))),
        DataType::BinaryView => Ok(Arc::new(BinaryViewArray::from(bytes))),
        _ => return None,
    };
    Some(out)
}

fn not_utf8(from: &DataType) -> ArrowError {
    ArrowError::CastError(format!("a {from} value is not valid UTF-8"))
}

/// The values of a string or binary array as bytes (`None` for another type).
fn binary_values(data: &ArrayRef) -> Option<Vec<Option<&[u8]>>> {
    fn bytes(s: Option<&str>) -> Option<&[u8]> {
        s.map(str::as_bytes)
    }
    Some(match data.data_type() {
        DataType::Utf8 => data.as_string::<i32>().iter().map(bytes).collect(),
        DataType::LargeUtf8 => data.as_string::<i64>().iter().map(bytes).collect(),
        DataType::Utf8View => data.as_string_view().iter().map(bytes).collect(),
        DataType::Binary => data.as_binary::<i32>().iter().collect(),
        DataType::LargeBinary => data.as_binary::<i64>().iter().collect(),
        DataType::BinaryView => data.as_binary_view().iter().collect(),
        DataType::FixedSizeBinary(_) => data.as_fixed_size_binary().iter().collect(),
        _ => return None,
    })
}

/// A list (plain, large or fixed-size) as a `List` of `item`.
fn to_list(data: &ArrayRef, item: &FieldRef) -> Result<ArrayRef, ArrowError> {
    let too_long = || out_of_range(data.data_type(), &DataType::List(Arc::clone(item)));
    let (offsets, values): (OffsetBuffer<i32>, &ArrayRef) = match data.data_type() {
        DataType::List(_) => {
            let list = data.as_list::<i32>();
            (list.offsets().clone(), list.values())
        }
        DataType::LargeList(_) => {
            let list = data.as_list::<i64>();
            let offsets: Result<Vec<i32>, _> =
                list.offsets().iter().map(|&o| i32::try_from(o)).collect();
            let offsets = offsets.map_err(|_| too_long())?;
            (
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                list.values(),
            )
        }
        _ => {
            let list = data.as_fixed_size_list();
            let size = usize::try_from(list.value_length()).map_err(|_| too_long())?;
            let lengths = std::iter::repeat_n(size, list.len());
            (OffsetBuffer::from_lengths(lengths), list.values())
        }
    };
    let values = cast(values, item.data_type())?;
    let out = ListArray::try_new(Arc::clone(item), offsets, values, data.nulls().cloned())?;
    Ok(Arc::new(out))
}

/// A struct with the same number of fields, matched by name (else by position), each
/// converted.
fn to_struct(data: &ArrayRef, fields: &Fields) -> Result<ArrayRef, ArrowError> {
    let source = data.as_struct();
    let from = source.fields();
    if from.len() != fields.len() {
        return Err(unsupported(
            data.data_type(),
            &DataType::Struct(fields.clone()),
        ));
    }
    let by_name: Option<Vec<usize>> = fields
        .iter()
        .map(|f| from.iter().position(|g| g.name() == f.name()))
        .collect();
    let order = by_name.unwrap_or_else(|| (0..fields.len()).collect());
    let children = order
        .iter()
        .zip(fields.iter())
        .map(|(&i, f)| cast(source.column(i), f.data_type()))
        .collect::<Result<Vec<_>, _>>()?;
    let out = StructArray::try_new(fields.clone(), children, source.nulls().cloned())?;
    Ok(Arc::new(out))
}

/// A map whose entries convert (key and value by name, else by position).
fn to_map(data: &ArrayRef, entries: &FieldRef, sorted: bool) -> Result<ArrayRef, ArrowError> {
    let map = data.as_map();
    let DataType::Struct(fields) = entries.data_type() else {
        return Err(unsupported(
            data.data_type(),
            &DataType::Map(Arc::clone(entries), sorted),
        ));
    };
    let source: ArrayRef = Arc::new(map.entries().clone());
    let converted = to_struct(&source, fields)?;
    let out = MapArray::try_new(
        Arc::clone(entries),
        map.offsets().clone(),
        converted.as_struct().clone(),
        map.nulls().cloned(),
        sorted,
    )?;
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::{TimestampMicrosecondType, TimestampNanosecondType};
    use arrow_array::{
        Date32Array, DictionaryArray, Float32Array, Int32Array, Int8Array, LargeListArray,
        NullArray, TimestampMillisecondArray, TimestampNanosecondArray, UInt64Array,
    };
    use arrow_schema::Field;

    fn run(data: ArrayRef, target: &DataType) -> ArrayRef {
        let out = cast(&data, target).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.data_type(), target);
        out
    }

    #[test]
    fn integers_widen_and_narrow_with_checks() {
        let out = run(
            Arc::new(Int8Array::from(vec![Some(-3), None, Some(7)])),
            &DataType::Int64,
        );
        let v = out.as_primitive::<Int64Type>();
        assert_eq!((v.value(0), v.is_null(1), v.value(2)), (-3, true, 7));
        let out = run(Arc::new(Int32Array::from(vec![100])), &DataType::Int8);
        assert_eq!(out.as_primitive::<Int8Type>().value(0), 100);
        assert!(cast(
            &(Arc::new(Int32Array::from(vec![300])) as ArrayRef),
            &DataType::Int8
        )
        .is_err());
        let big: ArrayRef = Arc::new(UInt64Array::from(vec![u64::MAX]));
        assert!(cast(&big, &DataType::Int64).is_err());
        // A null slot's hidden value is never checked.
        let out = run(
            Arc::new(Int32Array::from(vec![Some(1), None])),
            &DataType::Int16,
        );
        assert_eq!(out.null_count(), 1);
    }

    #[test]
    fn floats_from_integers_and_float() {
        let out = run(Arc::new(Int32Array::from(vec![3])), &DataType::Float64);
        assert_eq!(
            out.as_primitive::<arrow_array::types::Float64Type>()
                .value(0),
            3.0
        );
        let out = run(
            Arc::new(Float32Array::from(vec![0.5f32])),
            &DataType::Float64,
        );
        assert_eq!(
            out.as_primitive::<arrow_array::types::Float64Type>()
                .value(0),
            0.5
        );
        let back: ArrayRef = Arc::new(Float64Array::from(vec![0.5]));
        assert!(cast(&back, &DataType::Float32).is_err());
        // Neither a long (digits past 2^53) nor any integer to float is a widening.
        let long: ArrayRef = Arc::new(Int64Array::from(vec![1_099_511_627_781]));
        assert!(cast(&long, &DataType::Float64).is_err());
        assert!(cast(&long, &DataType::Float32).is_err());
        let int: ArrayRef = Arc::new(Int32Array::from(vec![3]));
        assert!(cast(&int, &DataType::Float32).is_err());
    }

    #[test]
    fn decimals_rescale_and_check_precision() {
        let out = run(
            Arc::new(Int32Array::from(vec![Some(12), None])),
            &DataType::Decimal128(5, 2),
        );
        assert_eq!(out.as_primitive::<Decimal128Type>().value(0), 1200);
        assert!(cast(
            &(Arc::new(Int32Array::from(vec![1000])) as ArrayRef),
            &DataType::Decimal128(5, 2)
        )
        .is_err());
        let d: ArrayRef = Arc::new(
            Decimal128Array::from(vec![12345, -12345, 12344])
                .with_precision_and_scale(6, 3)
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let up = run(Arc::clone(&d), &DataType::Decimal128(10, 5));
        assert_eq!(up.as_primitive::<Decimal128Type>().value(0), 1_234_500);
        let down = run(d, &DataType::Decimal128(6, 2));
        let v = down.as_primitive::<Decimal128Type>();
        assert_eq!((v.value(0), v.value(1), v.value(2)), (1235, -1235, 1234));
    }

    #[test]
    fn timestamps_change_unit_and_label() {
        let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![-1_500, 1_500_000_000]));
        let target = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let out = run(ns, &target);
        let v = out.as_primitive::<TimestampMicrosecondType>();
        // Truncated toward zero.
        assert_eq!((v.value(0), v.value(1)), (-1, 1_500_000));
        let ms: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![2]).with_timezone("UTC"));
        let out = run(ms, &DataType::Timestamp(TimeUnit::Nanosecond, None));
        assert_eq!(
            out.as_primitive::<TimestampNanosecondType>().value(0),
            2_000_000
        );
        let huge: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![i64::MAX]));
        assert!(cast(&huge, &DataType::Timestamp(TimeUnit::Microsecond, None)).is_err());
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![Some(1), None]));
        let out = run(dates, &DataType::Timestamp(TimeUnit::Microsecond, None));
        let v = out.as_primitive::<TimestampMicrosecondType>();
        assert_eq!((v.value(0), v.is_null(1)), (86_400_000_000, true));
    }

    #[test]
    fn strings_and_binary_between_encodings() {
        let large: ArrayRef = Arc::new(LargeStringArray::from(vec![Some("a"), None]));
        let out = run(large, &DataType::Utf8);
        assert_eq!(out.as_string::<i32>().value(0), "a");
        let bin: ArrayRef = Arc::new(BinaryArray::from(vec![b"ok".as_slice()]));
        let out = run(Arc::clone(&bin), &DataType::Utf8);
        assert_eq!(out.as_string::<i32>().value(0), "ok");
        let bad: ArrayRef = Arc::new(BinaryArray::from(vec![[0xffu8].as_slice()]));
        assert!(cast(&bad, &DataType::Utf8).is_err());
        let text: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        let out = run(text, &DataType::Binary);
        assert_eq!(out.as_binary::<i32>().value(0), b"x");
        let text: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        assert!(cast(&text, &DataType::Int64).is_err());
    }

    #[test]
    fn strings_and_binary_to_large_and_view_types() {
        let text: ArrayRef = Arc::new(StringArray::from(vec![
            Some("short"),
            None,
            Some("a value longer than twelve bytes"),
        ]));
        let bin: ArrayRef = Arc::new(BinaryArray::from(vec![
            Some(b"ab".as_slice()),
            None,
            Some([0xffu8, 0].as_slice()),
        ]));
        let want_text = [
            Some("short"),
            None,
            Some("a value longer than twelve bytes"),
        ];
        for target in [DataType::Utf8View, DataType::LargeUtf8, DataType::Utf8] {
            let out = run(Arc::clone(&text), &target);
            // And back, from every encoding to every other.
            for back in [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View] {
                let again = run(Arc::clone(&out), &back);
                let values: Vec<Option<String>> = match back {
                    DataType::Utf8 => again
                        .as_string::<i32>()
                        .iter()
                        .map(|v| v.map(String::from))
                        .collect(),
                    DataType::LargeUtf8 => again
                        .as_string::<i64>()
                        .iter()
                        .map(|v| v.map(String::from))
                        .collect(),
                    _ => again
                        .as_string_view()
                        .iter()
                        .map(|v| v.map(String::from))
                        .collect(),
                };
                let want: Vec<Option<String>> =
                    want_text.iter().map(|v| v.map(String::from)).collect();
                assert_eq!(values, want, "{target} -> {back}");
            }
        }
        // Views over a plain array share its value buffer.
        let view = run(Arc::clone(&text), &DataType::Utf8View);
        let view = view.as_string_view();
        assert_eq!(view.data_buffers().len(), 1);
        assert_eq!(
            view.data_buffers()[0].as_ptr(),
            text.as_string::<i32>().values().as_ptr()
        );
        for target in [DataType::BinaryView, DataType::LargeBinary] {
            let out = run(Arc::clone(&bin), &target);
            let back = run(out, &DataType::Binary);
            assert_eq!(back.as_binary::<i32>(), bin.as_binary::<i32>());
        }
        // Strings to binaries, and binaries to strings only when UTF-8.
        let out = run(Arc::clone(&text), &DataType::BinaryView);
        assert_eq!(out.as_binary_view().value(0), b"short");
        let out = run(
            run(Arc::clone(&text), &DataType::Utf8View),
            &DataType::BinaryView,
        );
        assert_eq!(
            out.as_binary_view().value(2),
            want_text[2].map(str::as_bytes).unwrap_or_default()
        );
        for target in [DataType::Utf8View, DataType::LargeUtf8] {
            assert!(cast(&bin, &target).is_err(), "{target}");
            let good: ArrayRef = Arc::new(BinaryArray::from(vec![b"ok".as_slice()]));
            assert_eq!(cast(&good, &target).map(|a| a.len()).ok(), Some(1));
        }
        let view_bin: ArrayRef = Arc::new(BinaryViewArray::from(vec![b"ok".as_slice()]));
        let out = run(view_bin, &DataType::Utf8View);
        assert_eq!(out.as_string_view().value(0), "ok");
        let dict: DictionaryArray<Int8Type> = vec![Some("b"), None].into_iter().collect();
        let out = run(Arc::new(dict), &DataType::Utf8View);
        assert_eq!((out.as_string_view().value(0), out.is_null(1)), ("b", true));
        assert!(cast(&text, &DataType::Int64).is_err());
    }

    #[test]
    fn nulls_dictionaries_and_lists() {
        let out = run(Arc::new(NullArray::new(2)), &DataType::Int32);
        assert_eq!(out.null_count(), 2);
        let dict: DictionaryArray<Int8Type> = vec![Some("b"), None, Some("a"), Some("b")]
            .into_iter()
            .collect();
        let out = run(Arc::new(dict), &DataType::Utf8);
        let v = out.as_string::<i32>();
        assert_eq!((v.value(0), v.is_null(1), v.value(3)), ("b", true, "b"));
        let large = LargeListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            None,
            Some(vec![]),
        ]);
        let item = Arc::new(Field::new("element", DataType::Int64, true));
        let out = run(Arc::new(large), &DataType::List(item));
        let list = out.as_list::<i32>();
        assert_eq!((list.value_length(0), list.is_null(1)), (2, true));
        assert_eq!(list.values().as_primitive::<Int64Type>().value(1), 2);
    }

    #[test]
    fn structs_match_fields_by_name() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        let b: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        let source: ArrayRef = Arc::new(StructArray::from(vec![
            (Arc::new(Field::new("b", DataType::Utf8, true)), b),
            (Arc::new(Field::new("a", DataType::Int32, true)), a),
        ]));
        let fields = Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
        ]);
        let out = run(source, &DataType::Struct(fields));
        let s = out.as_struct();
        assert_eq!(s.column(0).as_primitive::<Int64Type>().value(0), 1);
        assert_eq!(s.column(1).as_string::<i32>().value(0), "x");
    }
}
