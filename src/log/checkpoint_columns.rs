//! Typed, column-wise views of the Arrow arrays a checkpoint batch decodes to.
//!
//! The Parquet reader may give one logical type several physical Arrow types (`Utf8`,
//! `LargeUtf8` or `Utf8View` for a string; `Int32` or `Int64` for a version; `Map` or a list of
//! key/value structs for a map). Each view here is resolved once per batch with a downcast and
//! then read row by row by index, so decoding never goes through a per-row dynamic lookup.
//! A column that is absent (older checkpoints) or of Arrow type `Null` reads as all nulls.
//! Errors are plain messages; the caller adds the file path and row.

use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, BinaryArray, BinaryViewArray, BooleanArray, LargeBinaryArray, LargeListArray,
    LargeStringArray, ListArray, MapArray, PrimitiveArray, StringArray, StringViewArray,
    StructArray,
};
use arrow_schema::DataType;

/// A column-decoding failure, as a message without file or row.
pub(super) type ColResult<T> = std::result::Result<T, String>;

/// Downcasts `array` to `T`, naming the column and its type when that fails.
fn down<'a, T: 'static>(array: &'a dyn Array, what: &str) -> ColResult<&'a T> {
    array
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| format!("column {what} has unexpected type {}", array.data_type()))
}

/// The child `name` of a struct column, if the checkpoint has it.
pub(super) fn child<'a>(parent: &'a StructArray, name: &str) -> Option<&'a dyn Array> {
    parent.column_by_name(name).map(|c| c.as_ref())
}

/// A nullable struct column (an action, or a nested struct such as `deletionVector`).
#[derive(Clone, Copy)]
pub(super) struct StructCol<'a> {
    array: &'a StructArray,
}

impl<'a> StructCol<'a> {
    /// Views `array` as a struct; `None` when absent or of type `Null`.
    pub(super) fn new(array: Option<&'a dyn Array>, what: &str) -> ColResult<Option<Self>> {
        match array {
            None => Ok(None),
            Some(a) if a.data_type() == &DataType::Null => Ok(None),
            Some(a) => Ok(Some(StructCol {
                array: down::<StructArray>(a, what)?,
            })),
        }
    }

    /// Whether row `i` holds a struct (rather than null).
    #[inline]
    pub(super) fn valid(&self, i: usize) -> bool {
        self.array.is_valid(i)
    }

    /// The child column `name`, if present.
    pub(super) fn child(&self, name: &str) -> Option<&'a dyn Array> {
        child(self.array, name)
    }
}

/// A string column of any Arrow string or binary type.
#[derive(Clone, Copy)]
pub(super) enum StrCol<'a> {
    /// The column does not exist: every value is null.
    Absent,
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Binary(&'a BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    BinaryView(&'a BinaryViewArray),
}

impl<'a> StrCol<'a> {
    /// Views `array` as strings; `what` names the column in errors.
    pub(super) fn new(array: Option<&'a dyn Array>, what: &str) -> ColResult<Self> {
        let Some(a) = array else {
            return Ok(StrCol::Absent);
        };
        Ok(match a.data_type() {
            DataType::Null => StrCol::Absent,
            DataType::Utf8 => StrCol::Utf8(down(a, what)?),
            DataType::LargeUtf8 => StrCol::LargeUtf8(down(a, what)?),
            DataType::Utf8View => StrCol::Utf8View(down(a, what)?),
            DataType::Binary => StrCol::Binary(down(a, what)?),
            DataType::LargeBinary => StrCol::LargeBinary(down(a, what)?),
            DataType::BinaryView => StrCol::BinaryView(down(a, what)?),
            other => return Err(format!("column {what} has type {other}, expected a string")),
        })
    }

    /// The value of row `i`, `None` when null.
    #[inline]
    pub(super) fn get(&self, i: usize) -> ColResult<Option<&'a str>> {
        fn utf8(b: &[u8]) -> ColResult<&str> {
            std::str::from_utf8(b).map_err(|e| format!("invalid UTF-8 in a string column: {e}"))
        }
        Ok(match *self {
            StrCol::Absent => None,
            StrCol::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            StrCol::LargeUtf8(a) => a.is_valid(i).then(|| a.value(i)),
            StrCol::Utf8View(a) => a.is_valid(i).then(|| a.value(i)),
            StrCol::Binary(a) => match a.is_valid(i) {
                true => Some(utf8(a.value(i))?),
                false => None,
            },
            StrCol::LargeBinary(a) => match a.is_valid(i) {
                true => Some(utf8(a.value(i))?),
                false => None,
            },
            StrCol::BinaryView(a) => match a.is_valid(i) {
                true => Some(utf8(a.value(i))?),
                false => None,
            },
        })
    }
}

/// An integer column of any Arrow integer type, read as `i64`.
#[derive(Clone, Copy)]
pub(super) enum IntCol<'a> {
    /// The column does not exist: every value is null.
    Absent,
    I8(&'a PrimitiveArray<Int8Type>),
    I16(&'a PrimitiveArray<Int16Type>),
    I32(&'a PrimitiveArray<Int32Type>),
    I64(&'a PrimitiveArray<Int64Type>),
    U8(&'a PrimitiveArray<UInt8Type>),
    U16(&'a PrimitiveArray<UInt16Type>),
    U32(&'a PrimitiveArray<UInt32Type>),
    U64(&'a PrimitiveArray<UInt64Type>),
}

impl<'a> IntCol<'a> {
    /// Views `array` as integers; `what` names the column in errors.
    pub(super) fn new(array: Option<&'a dyn Array>, what: &str) -> ColResult<Self> {
        let Some(a) = array else {
            return Ok(IntCol::Absent);
        };
        Ok(match a.data_type() {
            DataType::Null => IntCol::Absent,
            DataType::Int8 => IntCol::I8(down(a, what)?),
            DataType::Int16 => IntCol::I16(down(a, what)?),
            DataType::Int32 => IntCol::I32(down(a, what)?),
            DataType::Int64 => IntCol::I64(down(a, what)?),
            DataType::UInt8 => IntCol::U8(down(a, what)?),
            DataType::UInt16 => IntCol::U16(down(a, what)?),
            DataType::UInt32 => IntCol::U32(down(a, what)?),
            DataType::UInt64 => IntCol::U64(down(a, what)?),
            other => {
                return Err(format!(
                    "column {what} has type {other}, expected an integer"
                ))
            }
        })
    }

    /// The value of row `i`, `None` when null.
    #[inline]
    pub(super) fn get(&self, i: usize) -> ColResult<Option<i64>> {
        Ok(match *self {
            IntCol::Absent => None,
            IntCol::I8(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            IntCol::I16(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            IntCol::I32(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            IntCol::I64(a) => a.is_valid(i).then(|| a.value(i)),
            IntCol::U8(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            IntCol::U16(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            IntCol::U32(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            IntCol::U64(a) => match a.is_valid(i) {
                true => Some(
                    i64::try_from(a.value(i))
                        .map_err(|_| format!("integer {} out of range", a.value(i)))?,
                ),
                false => None,
            },
        })
    }
}

/// A boolean column.
#[derive(Clone, Copy)]
pub(super) struct BoolCol<'a>(Option<&'a BooleanArray>);

impl<'a> BoolCol<'a> {
    /// Views `array` as booleans; `what` names the column in errors.
    pub(super) fn new(array: Option<&'a dyn Array>, what: &str) -> ColResult<Self> {
        match array {
            None => Ok(BoolCol(None)),
            Some(a) if a.data_type() == &DataType::Null => Ok(BoolCol(None)),
            Some(a) => Ok(BoolCol(Some(down(a, what)?))),
        }
    }

    /// The value of row `i`, `None` when null.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<bool> {
        self.0.and_then(|a| a.is_valid(i).then(|| a.value(i)))
    }
}

/// Offsets of a list-like column, 32 or 64 bit.
#[derive(Clone, Copy)]
enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

impl Offsets<'_> {
    /// The range of child values of row `i`.
    #[inline]
    fn range(&self, i: usize) -> ColResult<std::ops::Range<usize>> {
        let bad = || format!("list offsets out of range at row {i}");
        let (start, end) = match *self {
            Offsets::Small(o) => (
                o.get(i).map(|&v| usize::try_from(v)),
                o.get(i + 1).map(|&v| usize::try_from(v)),
            ),
            Offsets::Large(o) => (
                o.get(i).map(|&v| usize::try_from(v)),
                o.get(i + 1).map(|&v| usize::try_from(v)),
            ),
        };
        match (start, end) {
            (Some(Ok(s)), Some(Ok(e))) if s <= e => Ok(s..e),
            _ => Err(bad()),
        }
    }
}

/// A list of strings (`partitionColumns`, `readerFeatures`, `writerFeatures`).
#[derive(Clone, Copy)]
pub(super) struct StrListCol<'a> {
    list: Option<(&'a dyn Array, Offsets<'a>, StrCol<'a>)>,
}

impl<'a> StrListCol<'a> {
    /// Views `array` as a list of strings; `what` names the column in errors.
    pub(super) fn new(array: Option<&'a dyn Array>, what: &str) -> ColResult<Self> {
        let Some(a) = array else {
            return Ok(StrListCol { list: None });
        };
        let list = match a.data_type() {
            DataType::Null => None,
            DataType::List(_) => {
                let l: &ListArray = down(a, what)?;
                let values = StrCol::new(Some(l.values().as_ref()), what)?;
                Some((a, Offsets::Small(l.value_offsets()), values))
            }
            DataType::LargeList(_) => {
                let l: &LargeListArray = down(a, what)?;
                let values = StrCol::new(Some(l.values().as_ref()), what)?;
                Some((a, Offsets::Large(l.value_offsets()), values))
            }
            other => return Err(format!("column {what} has type {other}, expected a list")),
        };
        Ok(StrListCol { list })
    }

    /// The strings of row `i` (null elements dropped), `None` when the list is null.
    pub(super) fn get(&self, i: usize) -> ColResult<Option<Vec<String>>> {
        let Some((array, offsets, values)) = self.list else {
            return Ok(None);
        };
        if array.is_null(i) {
            return Ok(None);
        }
        let range = offsets.range(i)?;
        let mut out = Vec::with_capacity(range.len());
        for j in range {
            if let Some(s) = values.get(j)? {
                out.push(s.to_owned());
            }
        }
        Ok(Some(out))
    }
}

/// A map of strings to nullable strings (`partitionValues`, `configuration`, `options`):
/// an Arrow `Map`, or a list of two-field structs when the file lacks the map annotation.
#[derive(Clone, Copy)]
pub(super) struct StrMapCol<'a> {
    map: Option<(&'a dyn Array, Offsets<'a>, StrCol<'a>, StrCol<'a>)>,
}

impl<'a> StrMapCol<'a> {
    /// Views `array` as a string map; `what` names the column in errors.
    pub(super) fn new(array: Option<&'a dyn Array>, what: &str) -> ColResult<Self> {
        let Some(a) = array else {
            return Ok(StrMapCol { map: None });
        };
        let entries = |s: &'a dyn Array| -> ColResult<(StrCol<'a>, StrCol<'a>)> {
            let s: &StructArray = down(s, what)?;
            if s.num_columns() != 2 {
                return Err(format!(
                    "column {what} is a list, but not of key/value pairs"
                ));
            }
            Ok((
                StrCol::new(Some(s.column(0).as_ref()), what)?,
                StrCol::new(Some(s.column(1).as_ref()), what)?,
            ))
        };
        let map = match a.data_type() {
            DataType::Null => None,
            DataType::Map(_, _) => {
                let m: &MapArray = down(a, what)?;
                let (k, v) = entries(m.entries())?;
                Some((a, Offsets::Small(m.value_offsets()), k, v))
            }
            DataType::List(_) => {
                let l: &ListArray = down(a, what)?;
                let (k, v) = entries(l.values().as_ref())?;
                Some((a, Offsets::Small(l.value_offsets()), k, v))
            }
            // A map decoded from its groups where panics abort (see `limits::map_groups`):
            // the struct of its one key/value list; a null map is a null struct.
            DataType::Struct(fields)
                if fields.len() == 1 && matches!(fields[0].data_type(), DataType::List(_)) =>
            {
                let s: &StructArray = down(a, what)?;
                let l: &ListArray = down(s.column(0).as_ref(), what)?;
                let (k, v) = entries(l.values().as_ref())?;
                Some((a, Offsets::Small(l.value_offsets()), k, v))
            }
            DataType::LargeList(_) => {
                let l: &LargeListArray = down(a, what)?;
                let (k, v) = entries(l.values().as_ref())?;
                Some((a, Offsets::Large(l.value_offsets()), k, v))
            }
            other => return Err(format!("column {what} has type {other}, expected a map")),
        };
        Ok(StrMapCol { map })
    }

    /// Calls `f` with each entry of row `i` whose key is not null; returns `false` (and calls
    /// nothing) when the map itself is null.
    #[inline]
    pub(super) fn visit(
        &self,
        i: usize,
        mut f: impl FnMut(&'a str, Option<&'a str>),
    ) -> ColResult<bool> {
        let Some((array, offsets, keys, values)) = self.map else {
            return Ok(false);
        };
        if array.is_null(i) {
            return Ok(false);
        }
        for j in offsets.range(i)? {
            if let Some(k) = keys.get(j)? {
                f(k, values.get(j)?);
            }
        }
        Ok(true)
    }
}
