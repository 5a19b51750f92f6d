//! Delta `variant` values as JSON text for `dar`'s text outputs (JSON lines, CSV, the grid).
//!
//! A variant is read as a struct of two binaries, `metadata` (a dictionary of keys) and
//! `value`, in Parquet's Variant binary encoding (parquet-format `VariantEncoding.md`):
//!
//! - metadata: a header byte (version 1 in bits 0-3, offset size − 1 in bits 6-7), the key
//!   count, count + 1 offsets, then the keys' UTF-8 bytes;
//! - value: a header byte whose bits 0-1 give the basic type: 0 a primitive (bits 2-7 its
//!   type id), 1 a short string (bits 2-7 its length), 2 an object (key ids, offsets,
//!   values), 3 an array (offsets, values); bits 2-7 of objects and arrays give the sizes of
//!   their ids and offsets and whether the count takes 4 bytes.
//!
//! Written here rather than through the `parquet-variant-json` crate so that a hostile value
//! nested thousands deep is refused at [`MAX_DEPTH`] instead of exhausting the stack; every
//! read is bounds-checked, and a value that does not decode is written as its raw struct by
//! the caller. Numbers are exact (decimals keep their scale, 64-bit integers every digit);
//! dates, times and instants are text as in the other JSON columns; binaries are hex.

use arrow_array::cast::AsArray;
use arrow_array::{Array, StructArray};
use arrow_schema::{DataType, Field};

/// Deeper nesting is refused.
pub const MAX_DEPTH: usize = 200;

/// Why a variant's bytes were not decoded.
#[derive(Debug, PartialEq, Eq)]
pub struct NotAVariant(pub &'static str);

type Decoded = Result<(), NotAVariant>;

/// Whether `field` holds variants as `dar` reads them (see [`is_variant_type`]).
pub fn is_variant(field: &Field) -> bool {
    is_variant_type(field.data_type())
}

/// Whether values of `data_type` are variants as `dar` reads them: a struct of `metadata` and
/// `value`, both binary and not null.
pub fn is_variant_type(data_type: &DataType) -> bool {
    let DataType::Struct(children) = data_type else {
        return false;
    };
    let binary = |f: &Field| {
        matches!(
            f.data_type(),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ) && !f.is_nullable()
    };
    matches!(&children.iter().collect::<Vec<_>>()[..],
        [m, v] if m.name() == "metadata" && v.name() == "value" && binary(m) && binary(v))
}

/// The bytes of row `i` of a binary column of any offset kind.
fn bytes_at(array: &dyn Array, i: usize) -> Option<&[u8]> {
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(i)),
        DataType::BinaryView => Some(array.as_binary_view().value(i)),
        _ => None,
    }
}

/// Writes the variant at row `i` of `array` (see [`is_variant`]) as JSON to `out`; on an
/// error `out` is left as it was.
pub fn write_row(array: &StructArray, i: usize, out: &mut Vec<u8>) -> Decoded {
    let (Some(metadata), Some(value)) = (
        array
            .column_by_name("metadata")
            .and_then(|c| bytes_at(c.as_ref(), i)),
        array
            .column_by_name("value")
            .and_then(|c| bytes_at(c.as_ref(), i)),
    ) else {
        return Err(NotAVariant("not a struct of two binaries"));
    };
    let start = out.len();
    let written = write_variant(metadata, value, out);
    if written.is_err() {
        out.truncate(start);
    }
    written
}

/// Writes the variant of `metadata` and `value` as JSON to `out`.
pub fn write_variant(metadata: &[u8], value: &[u8], out: &mut Vec<u8>) -> Decoded {
    let keys = keys(metadata)?;
    Value {
        bytes: value,
        keys: &keys,
    }
    .write(0, 0, out)
}

/// Little-endian unsigned integer of `size` (1-4) bytes at `at`.
fn uint(bytes: &[u8], at: usize, size: usize) -> Result<usize, NotAVariant> {
    let end = at
        .checked_add(size)
        .ok_or(NotAVariant("offset overflows"))?;
    let b = bytes.get(at..end).ok_or(NotAVariant("out of bounds"))?;
    Ok(b.iter()
        .rev()
        .fold(0usize, |v, &x| (v << 8) | usize::from(x)))
}

fn slice(bytes: &[u8], at: usize, len: usize) -> Result<&[u8], NotAVariant> {
    let end = at.checked_add(len).ok_or(NotAVariant("length overflows"))?;
    bytes.get(at..end).ok_or(NotAVariant("out of bounds"))
}

fn text(bytes: &[u8], at: usize, len: usize) -> Result<&str, NotAVariant> {
    std::str::from_utf8(slice(bytes, at, len)?).map_err(|_| NotAVariant("a string is not UTF-8"))
}

/// The keys of a metadata dictionary.
fn keys(metadata: &[u8]) -> Result<Vec<&str>, NotAVariant> {
    let header = uint(metadata, 0, 1)?;
    if header & 0x0f != 1 {
        return Err(NotAVariant("metadata version is not 1"));
    }
    let size = ((header >> 6) & 3) + 1;
    let count = uint(metadata, 1, size)?;
    let offsets = 1 + size;
    // Each key takes an offset: a count beyond the bytes is refused before allocating.
    if count > metadata.len() {
        return Err(NotAVariant("more keys than bytes"));
    }
    let start = offsets + (count + 1) * size;
    let mut keys = Vec::with_capacity(count);
    for k in 0..count {
        let from = uint(metadata, offsets + k * size, size)?;
        let to = uint(metadata, offsets + (k + 1) * size, size)?;
        let len = to
            .checked_sub(from)
            .ok_or(NotAVariant("key offsets go back"))?;
        keys.push(text(metadata, start + from, len)?);
    }
    Ok(keys)
}

struct Value<'a> {
    bytes: &'a [u8],
    keys: &'a [&'a str],
}

impl Value<'_> {
    fn write(&self, at: usize, depth: usize, out: &mut Vec<u8>) -> Decoded {
        if depth > MAX_DEPTH {
            return Err(NotAVariant("nested too deep"));
        }
        let header = uint(self.bytes, at, 1)?;
        let bits = header >> 2;
        match header & 3 {
            0 => self.primitive(at + 1, bits, out),
            1 => {
                json_string(text(self.bytes, at + 1, bits)?, out);
                Ok(())
            }
            2 => self.object(at, bits, depth, out),
            _ => self.array(at, bits, depth, out),
        }
    }

    fn object(&self, at: usize, bits: usize, depth: usize, out: &mut Vec<u8>) -> Decoded {
        let offset_size = (bits & 3) + 1;
        let id_size = ((bits >> 2) & 3) + 1;
        let count_size = if (bits >> 4) & 1 == 1 { 4 } else { 1 };
        let count = uint(self.bytes, at + 1, count_size)?;
        if count > self.bytes.len() {
            return Err(NotAVariant("more fields than bytes"));
        }
        let ids = at + 1 + count_size;
        let offsets = ids + count * id_size;
        let values = offsets + (count + 1) * offset_size;
        out.push(b'{');
        for k in 0..count {
            if k > 0 {
                out.push(b',');
            }
            let id = uint(self.bytes, ids + k * id_size, id_size)?;
            let key = self
                .keys
                .get(id)
                .ok_or(NotAVariant("a key id is not in the dictionary"))?;
            json_string(key, out);
            out.push(b':');
            let offset = uint(self.bytes, offsets + k * offset_size, offset_size)?;
            self.write(values + offset, depth + 1, out)?;
        }
        out.push(b'}');
        Ok(())
    }

    fn array(&self, at: usize, bits: usize, depth: usize, out: &mut Vec<u8>) -> Decoded {
        let offset_size = (bits & 3) + 1;
        let count_size = if (bits >> 2) & 1 == 1 { 4 } else { 1 };
        let count = uint(self.bytes, at + 1, count_size)?;
        if count > self.bytes.len() {
            return Err(NotAVariant("more elements than bytes"));
        }
        let offsets = at + 1 + count_size;
        let values = offsets + (count + 1) * offset_size;
        out.push(b'[');
        for k in 0..count {
            if k > 0 {
                out.push(b',');
            }
            let offset = uint(self.bytes, offsets + k * offset_size, offset_size)?;
            self.write(values + offset, depth + 1, out)?;
        }
        out.push(b']');
        Ok(())
    }

    /// A signed little-endian integer of `N` bytes at `at`.
    fn int<const N: usize>(&self, at: usize) -> Result<[u8; N], NotAVariant> {
        slice(self.bytes, at, N)?
            .try_into()
            .map_err(|_| NotAVariant("out of bounds"))
    }

    fn primitive(&self, at: usize, id: usize, out: &mut Vec<u8>) -> Decoded {
        let put = |out: &mut Vec<u8>, s: &str| out.extend_from_slice(s.as_bytes());
        match id {
            0 => put(out, "null"),
            1 => put(out, "true"),
            2 => put(out, "false"),
            3 => put(out, &i8::from_le_bytes(self.int::<1>(at)?).to_string()),
            4 => put(out, &i16::from_le_bytes(self.int::<2>(at)?).to_string()),
            5 => put(out, &i32::from_le_bytes(self.int::<4>(at)?).to_string()),
            6 => put(out, &i64::from_le_bytes(self.int::<8>(at)?).to_string()),
            7 => float(f64::from_le_bytes(self.int::<8>(at)?), out),
            8 => self.decimal(
                at,
                i128::from(i32::from_le_bytes(self.int::<4>(at + 1)?)),
                out,
            )?,
            9 => self.decimal(
                at,
                i128::from(i64::from_le_bytes(self.int::<8>(at + 1)?)),
                out,
            )?,
            10 => self.decimal(at, i128::from_le_bytes(self.int::<16>(at + 1)?), out)?,
            11 => {
                let days = i32::from_le_bytes(self.int::<4>(at)?);
                let date = chrono::NaiveDate::from_yo_opt(1970, 1)
                    .and_then(|d| d.checked_add_signed(chrono::Duration::days(i64::from(days))))
                    .ok_or(NotAVariant("a date out of range"))?;
                json_string(&date.format("%Y-%m-%d").to_string(), out);
            }
            12 | 13 | 18 | 19 => {
                let raw = i64::from_le_bytes(self.int::<8>(at)?);
                let instant = if id <= 13 {
                    chrono::DateTime::from_timestamp_micros(raw)
                } else {
                    Some(chrono::DateTime::from_timestamp_nanos(raw))
                }
                .ok_or(NotAVariant("an instant out of range"))?;
                let zone = if id == 12 || id == 18 { "Z" } else { "" };
                json_string(
                    &format!(
                        "{}{zone}",
                        instant.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f")
                    ),
                    out,
                );
            }
            14 => float(f64::from(f32::from_le_bytes(self.int::<4>(at)?)), out),
            15 => {
                let len = uint(self.bytes, at, 4)?;
                json_string(&hex(slice(self.bytes, at + 4, len)?), out);
            }
            16 => {
                let len = uint(self.bytes, at, 4)?;
                json_string(text(self.bytes, at + 4, len)?, out);
            }
            17 => {
                let micros = i64::from_le_bytes(self.int::<8>(at)?);
                let time = u32::try_from(micros.div_euclid(1_000_000))
                    .ok()
                    .and_then(|s| {
                        let nanos = u32::try_from(micros.rem_euclid(1_000_000) * 1000).ok()?;
                        chrono::NaiveTime::from_num_seconds_from_midnight_opt(s, nanos)
                    })
                    .ok_or(NotAVariant("a time out of range"))?;
                json_string(&time.format("%H:%M:%S%.f").to_string(), out);
            }
            20 => {
                let h = hex(slice(self.bytes, at, 16)?);
                let uuid = format!(
                    "{}-{}-{}-{}-{}",
                    &h[0..8],
                    &h[8..12],
                    &h[12..16],
                    &h[16..20],
                    &h[20..32]
                );
                json_string(&uuid, out);
            }
            _ => return Err(NotAVariant("an unknown primitive type")),
        }
        Ok(())
    }

    /// A decimal whose scale is the byte at `at`, its unscaled value `unscaled`.
    fn decimal(&self, at: usize, unscaled: i128, out: &mut Vec<u8>) -> Decoded {
        let scale = uint(self.bytes, at, 1)?;
        let digits = unscaled.unsigned_abs().to_string();
        if unscaled < 0 {
            out.push(b'-');
        }
        if scale == 0 {
            out.extend_from_slice(digits.as_bytes());
            return Ok(());
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (whole, fraction) = padded.split_at(padded.len() - scale);
        out.extend_from_slice(format!("{whole}.{fraction}").as_bytes());
        Ok(())
    }
}

/// A float as JSON: finite ones as numbers, the others as strings (as the other JSON columns).
fn float(v: f64, out: &mut Vec<u8>) {
    match serde_json::Number::from_f64(v) {
        Some(n) => out.extend_from_slice(n.to_string().as_bytes()),
        None if v.is_nan() => out.extend_from_slice(b"\"NaN\""),
        None if v > 0.0 => out.extend_from_slice(b"\"Infinity\""),
        None => out.extend_from_slice(b"\"-Infinity\""),
    }
}

/// Bytes as lowercase hex (binaries, as the other JSON columns write them; UUIDs).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn json_string(s: &str, out: &mut Vec<u8>) {
    // Writing a str to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    fn json(metadata: &str, value: &str) -> Result<String, NotAVariant> {
        let mut out = Vec::new();
        write_variant(&hex(metadata), &hex(value), &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn objects_arrays_and_primitives() {
        // {"key": 1} as Spark writes it (the corpus table deltars__spark-variant-checkpoint).
        assert_eq!(
            json("010100036b6579", "02010000020c01").as_deref(),
            Ok(r#"{"key":1}"#)
        );
        // [1, "ab", null, 2.5]
        assert_eq!(
            json("010000", "0304000205060f0c01096162001c0000000000000440").as_deref(),
            Ok(r#"[1,"ab",null,2.5]"#)
        );
        // decimal4 1.50, decimal16 -0.05, int64 2^63-1, a date, a UTC instant, a string.
        assert_eq!(json("010000", "200296000000").as_deref(), Ok("1.50"));
        let decimal16 = format!("2802{}", super::hex(&(-5i128).to_le_bytes()));
        assert_eq!(json("010000", &decimal16).as_deref(), Ok("-0.05"));
        assert_eq!(
            json("010000", "18ffffffffffffff7f").as_deref(),
            Ok(i64::MAX.to_string().as_str())
        );
        assert_eq!(
            json("010000", "2c01000000").as_deref(),
            Ok(r#""1970-01-02""#)
        );
        assert_eq!(
            json("010000", "3040420f0000000000").as_deref(),
            Ok(r#""1970-01-01T00:00:01Z""#)
        );
        assert_eq!(
            json("010000", "400300000061225c").as_deref(),
            Ok(r#""a\"\\""#)
        );
    }

    #[test]
    fn bad_bytes_are_refused_not_read_past() {
        assert!(json("02", "00").is_err(), "metadata version 2");
        assert!(json("010000", "0c").is_err(), "an int8 without its byte");
        assert!(
            json("010000", "02010500020c01").is_err(),
            "a key id past the dictionary"
        );
        assert!(json("010000", "fc").is_err(), "an unknown primitive");
        assert!(
            json("0101000a6b6579", "00").is_err(),
            "a key past the metadata"
        );
        assert!(
            json("010000", "0301000a").is_err(),
            "an element past the value"
        );
        assert!(
            json("01ffffff", "00").is_err(),
            "a key count beyond the bytes"
        );
    }

    #[test]
    fn deep_nesting_is_refused_at_the_bound() {
        // [[[ … null … ]]]: each level an array of one element, at offset 0, whose end
        // offset is the size of what it holds.
        let nest = |levels: usize| {
            let mut v = Vec::new();
            for k in 0..levels {
                let inner = (levels - k - 1) * 4 + 1;
                v.extend_from_slice(&[0x03, 0x01, 0x00, u8::try_from(inner).unwrap_or(u8::MAX)]);
            }
            v.push(0x00);
            v
        };
        let mut out = Vec::new();
        assert!(write_variant(&hex("010000"), &nest(10), &mut out).is_ok());
        assert_eq!(String::from_utf8_lossy(&out), "[[[[[[[[[[null]]]]]]]]]]");
        let mut out = Vec::new();
        let deep: Vec<u8> = std::iter::repeat_n([0x03u8, 0x01, 0x00, 0x00], 100_000)
            .flatten()
            .collect();
        assert_eq!(
            write_variant(&hex("010000"), &deep, &mut out),
            Err(NotAVariant("nested too deep"))
        );
    }
}
