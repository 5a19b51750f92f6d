//! `add.stats_parsed` (the typed statistics struct of a checkpoint) back to the `stats` JSON
//! string of the Delta protocol, for checkpoints that carry only the struct.
//!
//! The struct (`numRecords`, `minValues`, `maxValues`, `nullCount`, `tightBounds`, nested
//! structs for nested columns) is turned once per batch into a tree of typed column views;
//! each row is then written straight into a `String`. Values are written as the protocol's
//! JSON stats write them: numbers as JSON numbers (decimals too), dates as `yyyy-MM-dd`,
//! timestamps as ISO-8601 in UTC ending in `Z` with milliseconds (more digits only when the
//! value has them). Nulls, non-finite floats and types without a JSON form (binary, lists,
//! maps) are left out, which a reader treats as "no statistic".

use std::fmt::Write as _;

use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type,
    Float32Type, Float64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, BooleanArray, PrimitiveArray, StructArray};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, Datelike, NaiveDate, Timelike};

use super::columns::{IntCol, StrCol};

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
const EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// One node of the statistics tree, with its column resolved to a concrete array type.
pub(super) enum StatsNode<'a> {
    /// A struct: written as a JSON object of its non-null fields.
    Object {
        array: &'a StructArray,
        /// `"name":` already escaped, and the field's node.
        fields: Vec<(String, StatsNode<'a>)>,
    },
    Int(IntCol<'a>),
    Float32(&'a PrimitiveArray<Float32Type>),
    Float64(&'a PrimitiveArray<Float64Type>),
    Bool(&'a BooleanArray),
    Str(StrCol<'a>),
    Date32(&'a PrimitiveArray<Date32Type>),
    Date64(&'a PrimitiveArray<Date64Type>),
    TsSecond(&'a PrimitiveArray<TimestampSecondType>),
    TsMilli(&'a PrimitiveArray<TimestampMillisecondType>),
    TsMicro(&'a PrimitiveArray<TimestampMicrosecondType>),
    TsNano(&'a PrimitiveArray<TimestampNanosecondType>),
    Decimal32(&'a PrimitiveArray<Decimal32Type>, i8),
    Decimal64(&'a PrimitiveArray<Decimal64Type>, i8),
    Decimal128(&'a PrimitiveArray<Decimal128Type>, i8),
    Decimal256(&'a PrimitiveArray<Decimal256Type>, i8),
    /// A type without a JSON statistic: never written.
    Skip,
}

/// Downcasts to `T`, or `None`.
fn cast<T: 'static>(array: &dyn Array) -> Option<&T> {
    array.as_any().downcast_ref::<T>()
}

impl<'a> StatsNode<'a> {
    /// Resolves `array` (and, for a struct, its children) to typed views.
    pub(super) fn build(array: &'a dyn Array) -> Self {
        Self::try_build(array).unwrap_or(StatsNode::Skip)
    }

    fn try_build(array: &'a dyn Array) -> Option<Self> {
        Some(match array.data_type() {
            DataType::Struct(fields) => {
                let s: &StructArray = cast(array)?;
                let fields = fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| {
                        let mut key = String::with_capacity(f.name().len() + 3);
                        push_json_str(&mut key, f.name());
                        key.push(':');
                        (key, StatsNode::build(c.as_ref()))
                    })
                    .filter(|(_, n)| !matches!(n, StatsNode::Skip))
                    .collect();
                StatsNode::Object { array: s, fields }
            }
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64 => StatsNode::Int(IntCol::new(Some(array), "stats_parsed").ok()?),
            DataType::Float32 => StatsNode::Float32(cast(array)?),
            DataType::Float64 => StatsNode::Float64(cast(array)?),
            DataType::Boolean => StatsNode::Bool(cast(array)?),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                StatsNode::Str(StrCol::new(Some(array), "stats_parsed").ok()?)
            }
            DataType::Date32 => StatsNode::Date32(cast(array)?),
            DataType::Date64 => StatsNode::Date64(cast(array)?),
            DataType::Timestamp(TimeUnit::Second, _) => StatsNode::TsSecond(cast(array)?),
            DataType::Timestamp(TimeUnit::Millisecond, _) => StatsNode::TsMilli(cast(array)?),
            DataType::Timestamp(TimeUnit::Microsecond, _) => StatsNode::TsMicro(cast(array)?),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => StatsNode::TsNano(cast(array)?),
            DataType::Decimal32(_, s) => StatsNode::Decimal32(cast(array)?, *s),
            DataType::Decimal64(_, s) => StatsNode::Decimal64(cast(array)?, *s),
            DataType::Decimal128(_, s) => StatsNode::Decimal128(cast(array)?, *s),
            DataType::Decimal256(_, s) => StatsNode::Decimal256(cast(array)?, *s),
            _ => StatsNode::Skip,
        })
    }

    /// The statistics of row `i` as a JSON string, `None` when the struct is null there.
    /// `capacity` is a guess of its length (the length of the previous row's, say).
    pub(super) fn json(&self, i: usize, capacity: usize) -> Option<String> {
        let mut out = String::with_capacity(capacity);
        self.write(i, &mut out).then_some(out)
    }

    /// Appends the value of row `i` to `out`; returns `false` (appending nothing) when there is
    /// no value to write.
    fn write(&self, i: usize, out: &mut String) -> bool {
        match self {
            StatsNode::Object { array, fields } => {
                if array.is_null(i) {
                    return false;
                }
                out.push('{');
                let mut first = true;
                for (key, node) in fields {
                    let mark = out.len();
                    if !first {
                        out.push(',');
                    }
                    out.push_str(key);
                    if node.write(i, out) {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push('}');
                true
            }
            StatsNode::Int(a) => match a.get(i) {
                Ok(Some(v)) => {
                    push_int(out, v);
                    true
                }
                _ => false,
            },
            StatsNode::Float32(a) => {
                a.is_valid(i) && a.value(i).is_finite() && write!(out, "{:?}", a.value(i)).is_ok()
            }
            StatsNode::Float64(a) => {
                a.is_valid(i) && a.value(i).is_finite() && write!(out, "{:?}", a.value(i)).is_ok()
            }
            StatsNode::Bool(a) => {
                if a.is_null(i) {
                    return false;
                }
                out.push_str(if a.value(i) { "true" } else { "false" });
                true
            }
            StatsNode::Str(a) => match a.get(i) {
                Ok(Some(s)) => {
                    push_json_str(out, s);
                    true
                }
                _ => false,
            },
            StatsNode::Date32(a) => a.is_valid(i) && push_date(out, a.value(i)),
            StatsNode::Date64(a) => {
                a.is_valid(i)
                    && i32::try_from(a.value(i).div_euclid(86_400_000))
                        .is_ok_and(|d| push_date(out, d))
            }
            StatsNode::TsSecond(a) => a.is_valid(i) && push_timestamp(out, a.value(i), 0),
            StatsNode::TsMilli(a) => {
                a.is_valid(i) && {
                    let v = a.value(i);
                    push_timestamp(out, v.div_euclid(1_000), v.rem_euclid(1_000) * 1_000_000)
                }
            }
            StatsNode::TsMicro(a) => {
                a.is_valid(i) && {
                    let v = a.value(i);
                    push_timestamp(
                        out,
                        v.div_euclid(1_000_000),
                        v.rem_euclid(1_000_000) * 1_000,
                    )
                }
            }
            StatsNode::TsNano(a) => {
                a.is_valid(i) && {
                    let v = a.value(i);
                    push_timestamp(
                        out,
                        v.div_euclid(1_000_000_000),
                        v.rem_euclid(1_000_000_000),
                    )
                }
            }
            StatsNode::Decimal32(a, s) => {
                a.is_valid(i) && push_decimal(out, &a.value(i).to_string(), *s)
            }
            StatsNode::Decimal64(a, s) => {
                a.is_valid(i) && push_decimal(out, &a.value(i).to_string(), *s)
            }
            StatsNode::Decimal128(a, s) => {
                a.is_valid(i) && push_decimal(out, &a.value(i).to_string(), *s)
            }
            StatsNode::Decimal256(a, s) => {
                a.is_valid(i) && push_decimal(out, &a.value(i).to_string(), *s)
            }
            StatsNode::Skip => false,
        }
    }
}

/// Appends the decimal digits of `v` (faster than `fmt` for the many numbers of statistics).
fn push_int(out: &mut String, v: i64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        pos -= 1;
        if let Some(slot) = buf.get_mut(pos) {
            // `n % 10` is a single digit.
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || pos == 0 {
            break;
        }
    }
    if v < 0 {
        out.push('-');
    }
    if let Some(Ok(digits)) = buf.get(pos..).map(std::str::from_utf8) {
        out.push_str(digits);
    }
}

/// Appends `s` as a JSON string literal.
pub(super) fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends a date (days since 1970-01-01) as `"yyyy-MM-dd"`.
fn push_date(out: &mut String, days: i32) -> bool {
    let Some(date) = days
        .checked_add(EPOCH_DAYS_FROM_CE)
        .and_then(NaiveDate::from_num_days_from_ce_opt)
    else {
        return false;
    };
    write!(
        out,
        "\"{:04}-{:02}-{:02}\"",
        date.year(),
        date.month(),
        date.day()
    )
    .is_ok()
}

/// Appends an instant as `"yyyy-MM-ddTHH:mm:ss.SSSZ"`, with 6 or 9 fraction digits when the
/// value has sub-millisecond precision.
fn push_timestamp(out: &mut String, secs: i64, nanos: i64) -> bool {
    let Ok(nanos) = u32::try_from(nanos) else {
        return false;
    };
    let Some(t) = DateTime::from_timestamp(secs, nanos) else {
        return false;
    };
    let ok = write!(
        out,
        "\"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
    .is_ok();
    let frac = if nanos % 1_000_000 == 0 {
        write!(out, ".{:03}Z\"", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        write!(out, ".{:06}Z\"", nanos / 1_000)
    } else {
        write!(out, ".{nanos:09}Z\"")
    };
    ok && frac.is_ok()
}

/// Appends a decimal given as its unscaled integer digits (with an optional leading `-`) and
/// scale, as a JSON number.
fn push_decimal(out: &mut String, unscaled: &str, scale: i8) -> bool {
    let (neg, digits) = match unscaled.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, unscaled),
    };
    if neg {
        out.push('-');
    }
    if scale <= 0 {
        out.push_str(digits);
        if digits != "0" {
            for _ in 0..scale.unsigned_abs() {
                out.push('0');
            }
        }
        return true;
    }
    let scale = usize::from(scale.unsigned_abs());
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else {
        out.push_str("0.");
        for _ in digits.len()..scale {
            out.push('0');
        }
        out.push_str(digits);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(unscaled: &str, scale: i8) -> String {
        let mut s = String::new();
        push_decimal(&mut s, unscaled, scale);
        s
    }

    fn ts(secs: i64, nanos: i64) -> String {
        let mut s = String::new();
        push_timestamp(&mut s, secs, nanos);
        s
    }

    #[test]
    fn integers() {
        for v in [0, 7, -7, 10, 1234567890, i64::MAX, i64::MIN] {
            let mut s = String::new();
            push_int(&mut s, v);
            assert_eq!(s, v.to_string());
        }
    }

    #[test]
    fn decimals_are_json_numbers() {
        assert_eq!(dec("12345", 2), "123.45");
        assert_eq!(dec("-5", 3), "-0.005");
        assert_eq!(dec("0", 2), "0.00");
        assert_eq!(dec("12", 0), "12");
        assert_eq!(dec("12", -2), "1200");
        assert_eq!(dec("-100", 2), "-1.00");
    }

    #[test]
    fn timestamps_are_iso_utc() {
        assert_eq!(ts(0, 0), "\"1970-01-01T00:00:00.000Z\"");
        assert_eq!(
            ts(1_600_000_000, 123_000_000),
            "\"2020-09-13T12:26:40.123Z\""
        );
        assert_eq!(
            ts(1_600_000_000, 123_456_000),
            "\"2020-09-13T12:26:40.123456Z\""
        );
        assert_eq!(ts(-1, 999_000_000), "\"1969-12-31T23:59:59.999Z\"");
    }

    #[test]
    fn dates_and_strings() {
        let mut s = String::new();
        assert!(push_date(&mut s, 0));
        assert!(push_date(&mut s, -1));
        assert!(push_date(&mut s, 19_000));
        assert_eq!(s, "\"1970-01-01\"\"1969-12-31\"\"2022-01-08\"");
        let mut s = String::new();
        push_json_str(&mut s, "a\"b\\c\nd\u{1}é");
        assert_eq!(s, "\"a\\\"b\\\\c\\nd\\u0001é\"");
        let back: String = serde_json::from_str(&s).unwrap_or_default();
        assert_eq!(back, "a\"b\\c\nd\u{1}é");
    }
}
