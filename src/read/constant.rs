//! A partition column's value repeated on every row of a batch.
//!
//! A partition value is one length-1 array per file; each batch of the file needs it
//! `rows` times. The arrays are built directly from the value's bytes: fixed-width values
//! and byte-array values by doubling copies, views by repeating the one view over the
//! value's own data buffers, booleans as an all-set or all-unset bitmap. The `take` kernel,
//! which did this before, cost 26 ms of a 1.7 s browser full scan and was the largest
//! function the browser compiled at its top tier while scanning (about 0.1 s of CPU). Other types (none the Delta protocol
//! allows as a partition column) still go through `take`.

use std::sync::Arc;

use arrow_array::types::{
    BinaryViewType, ByteArrayType, ByteViewType, GenericBinaryType, GenericStringType,
    StringViewType,
};
use arrow_array::{
    new_null_array, Array, ArrayRef, BooleanArray, GenericByteArray, GenericByteViewArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, Buffer, MutableBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType};

/// `value` (a length-1 array) repeated `rows` times, of the same type.
pub(crate) fn repeat_value(value: &ArrayRef, rows: usize) -> Result<ArrayRef, ArrowError> {
    if value.is_empty() {
        return Err(ArrowError::InvalidArgumentError(
            "a partition value must hold one row".into(),
        ));
    }
    if value.is_null(0) {
        return Ok(new_null_array(value.data_type(), rows));
    }
    let data_type = value.data_type();
    match data_type {
        DataType::Boolean => {
            let set = value
                .as_any()
                .downcast_ref::<BooleanArray>()
                .is_some_and(|b| b.value(0));
            let bits = if set {
                BooleanBuffer::new_set(rows)
            } else {
                BooleanBuffer::new_unset(rows)
            };
            Ok(Arc::new(BooleanArray::new(bits, None)))
        }
        DataType::Utf8 => bytes::<GenericStringType<i32>>(value, rows),
        DataType::LargeUtf8 => bytes::<GenericStringType<i64>>(value, rows),
        DataType::Binary => bytes::<GenericBinaryType<i32>>(value, rows),
        DataType::LargeBinary => bytes::<GenericBinaryType<i64>>(value, rows),
        DataType::Utf8View => views::<StringViewType>(value, rows),
        DataType::BinaryView => views::<BinaryViewType>(value, rows),
        t if t.is_primitive() => fixed_width(value, rows),
        _ => {
            let indices = arrow_array::UInt32Array::from(vec![0u32; rows]);
            arrow_select::take::take(value.as_ref(), &indices, None)
        }
    }
}

/// `unit` repeated `times` times, by doubling copies (in an aligned buffer, as Arrow wants).
fn repeated(unit: &[u8], times: usize) -> Result<Buffer, ArrowError> {
    let total = unit
        .len()
        .checked_mul(times)
        .ok_or_else(|| ArrowError::ComputeError("a repeated partition value overflows".into()))?;
    let mut out = MutableBuffer::from_len_zeroed(total);
    let bytes = out.as_slice_mut();
    if total > 0 {
        bytes[..unit.len()].copy_from_slice(unit);
        let mut filled = unit.len();
        while filled < total {
            let more = filled.min(total - filled);
            bytes.copy_within(..more, filled);
            filled += more;
        }
    }
    Ok(out.into())
}

/// A primitive value (numbers, decimals, dates, timestamps): its bytes repeated.
fn fixed_width(value: &ArrayRef, rows: usize) -> Result<ArrayRef, ArrowError> {
    let data_type = value.data_type();
    let width = data_type
        .primitive_width()
        .ok_or_else(|| ArrowError::ComputeError(format!("{data_type} has no fixed width")))?;
    let data = value.to_data();
    let start = data.offset() * width;
    let unit = data
        .buffers()
        .first()
        .and_then(|b| b.as_slice().get(start..start + width))
        .ok_or_else(|| ArrowError::ComputeError("a partition value without its bytes".into()))?;
    let values = repeated(unit, rows)?;
    let data = ArrayData::builder(data_type.clone())
        .len(rows)
        .add_buffer(values)
        .build()?;
    Ok(arrow_array::make_array(data))
}

/// A string or binary value: its bytes repeated, offsets at every multiple of its length.
fn bytes<T: ByteArrayType>(value: &ArrayRef, rows: usize) -> Result<ArrayRef, ArrowError> {
    let array = value
        .as_any()
        .downcast_ref::<GenericByteArray<T>>()
        .ok_or_else(|| ArrowError::ComputeError("a partition value of another type".into()))?;
    let unit: &[u8] = array.value(0).as_ref();
    let total = unit.len().saturating_mul(rows);
    if <T::Offset as ArrowNativeType>::from_usize(total).is_none() {
        return Err(ArrowError::ComputeError(format!(
            "a partition value repeated {rows} times is {total} bytes, too many for {}",
            value.data_type()
        )));
    }
    let offsets = OffsetBuffer::<T::Offset>::from_lengths(std::iter::repeat_n(unit.len(), rows));
    let values = repeated(unit, rows)?;
    Ok(Arc::new(GenericByteArray::<T>::try_new(
        offsets, values, None,
    )?))
}

/// A string or binary view value: the one view repeated over the value's data buffers.
fn views<T: ByteViewType>(value: &ArrayRef, rows: usize) -> Result<ArrayRef, ArrowError> {
    let array = value
        .as_any()
        .downcast_ref::<GenericByteViewArray<T>>()
        .ok_or_else(|| ArrowError::ComputeError("a partition value of another type".into()))?;
    let view = array
        .views()
        .first()
        .copied()
        .ok_or_else(|| ArrowError::ComputeError("a partition value without its view".into()))?;
    let views = ScalarBuffer::from(vec![view; rows]);
    Ok(Arc::new(GenericByteViewArray::<T>::try_new(
        views,
        array.data_buffers().to_vec(),
        None,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        BinaryArray, BinaryViewArray, Date32Array, Decimal128Array, Float64Array, Int16Array,
        Int32Array, Int64Array, Int8Array, LargeStringArray, StringArray, StringViewArray,
        TimestampMicrosecondArray, UInt32Array,
    };

    /// What `take` makes of the same value: the reference.
    fn by_take(value: &ArrayRef, rows: usize) -> ArrayRef {
        let indices = UInt32Array::from(vec![0u32; rows]);
        arrow_select::take::take(value.as_ref(), &indices, None).unwrap()
    }

    fn values() -> Vec<ArrayRef> {
        let long = "a partition value longer than twelve bytes";
        vec![
            Arc::new(Int8Array::from(vec![-3])),
            Arc::new(Int16Array::from(vec![300])),
            Arc::new(Int32Array::from(vec![-70_000])),
            Arc::new(Int64Array::from(vec![1 << 40])),
            Arc::new(Float64Array::from(vec![2.5])),
            Arc::new(Date32Array::from(vec![19_723])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![1_704_067_200_000_000]).with_timezone("UTC"),
            ),
            Arc::new(TimestampMicrosecondArray::from(vec![-1])),
            Arc::new(
                Decimal128Array::from(vec![-12_345])
                    .with_precision_and_scale(12, 2)
                    .unwrap(),
            ),
            Arc::new(BooleanArray::from(vec![true])),
            Arc::new(BooleanArray::from(vec![false])),
            Arc::new(StringArray::from(vec!["north"])),
            Arc::new(StringArray::from(vec![""])),
            Arc::new(LargeStringArray::from(vec![long])),
            Arc::new(BinaryArray::from(vec![&b"\x00\xff"[..]])),
            Arc::new(StringViewArray::from(vec!["short"])),
            Arc::new(StringViewArray::from(vec![long])),
            Arc::new(BinaryViewArray::from(vec![long.as_bytes()])),
            Arc::new(StringArray::from(vec![None::<&str>])),
            Arc::new(Int64Array::from(vec![None])),
            Arc::new(BooleanArray::from(vec![None])),
        ]
    }

    #[test]
    fn matches_take_for_every_partition_type_and_length() {
        for value in values() {
            for rows in [0, 1, 2, 3, 7, 8, 9, 1000, 8193] {
                let got = repeat_value(&value, rows).unwrap();
                got.to_data().validate_full().unwrap();
                assert_eq!(
                    got.as_ref(),
                    by_take(&value, rows).as_ref(),
                    "{} x {rows}",
                    value.data_type()
                );
                assert_eq!(got.data_type(), value.data_type());
            }
        }
    }

    #[test]
    fn a_value_sliced_out_of_a_longer_array_repeats_its_own_row() {
        let all: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let got = repeat_value(&all.slice(1, 1), 4).unwrap();
        assert_eq!(
            got.as_ref(),
            &Int64Array::from(vec![2, 2, 2, 2]) as &dyn Array
        );
        let words: ArrayRef = Arc::new(StringArray::from(vec!["a", "bc", "d"]));
        let got = repeat_value(&words.slice(1, 1), 3).unwrap();
        assert_eq!(
            got.as_ref(),
            &StringArray::from(vec!["bc"; 3]) as &dyn Array
        );
    }

    #[test]
    fn an_empty_value_is_an_error_not_a_panic() {
        let empty: ArrayRef = Arc::new(Int32Array::from(Vec::<i32>::new()));
        assert!(repeat_value(&empty, 3).is_err());
    }
}
