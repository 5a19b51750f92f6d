//! Row canonicalisation for conformance tests: turns Arrow record batches (from a scan, or
//! read from the corpus's expected parquet files) into [`Rows`], a table of canonical
//! [`Value`] trees keyed by column name, and compares two of them as multisets of rows.
//!
//! Normalisation, so that equal data compares equal whatever physical form it arrived in:
//! - integers of every width → `Int(i128)` (widths are checked by the schema comparison);
//! - `float32`/`float64` → their bits, every NaN the same NaN (so `NaN == NaN`, `-0.0 != 0.0`);
//! - decimals → their exact value as a normalised decimal string (precision and scale do not
//!   matter: `1.50` as `decimal(5,2)` equals `1.5000` as `decimal(10,4)`);
//! - strings and binaries in all Arrow flavours (large, view, fixed size) → `Str`/`Bytes`;
//! - dates (`date32`, `date64`) → days since the epoch; times → nanoseconds since midnight;
//! - timestamps → nanoseconds since the epoch (any unit), plus whether the value is an instant
//!   (the Arrow type has a time zone: the value is UTC-based whatever the zone's name) or a
//!   zone-less wall-clock time (`timestamp_ntz`). Parquet INT96 columns of the expected files
//!   (Spark's default for `timestamp`) are read as UTC instants in microseconds;
//! - structs → fields sorted by name; lists (all flavours) → element sequences; maps → sorted
//!   lists of entries (a map is a set of entries); dictionaries and run-end arrays → their
//!   values; anything else → Arrow's display text.
//!
//! Nullability, list element names, map entry names, struct field order and dictionary
//! encoding are never compared.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::basic::Type as PhysicalType;

/// How many differing rows of each side a diff shows.
pub const DIFF_ROWS: usize = 5;

/// One canonical value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Null,
    Bool(bool),
    /// Any integer type.
    Int(i128),
    /// Bits of an `f32`; every NaN is the same NaN.
    Float32(u32),
    /// Bits of an `f64`; every NaN is the same NaN.
    Float64(u64),
    /// Exact decimal value, normalised: no trailing fraction zeros, no `-0`.
    Decimal(String),
    Str(String),
    Bytes(Vec<u8>),
    /// Days since 1970-01-01.
    Date(i64),
    /// Nanoseconds since midnight.
    Time(i64),
    /// Nanoseconds since the epoch; `utc`: an instant (zoned type), else a wall-clock time.
    Timestamp {
        nanos: i128,
        utc: bool,
    },
    /// A value kept as Arrow's display text (durations, intervals; pretty-printed expected).
    Text(String),
    List(Vec<Value>),
    /// Fields sorted by name.
    Struct(Vec<(String, Value)>),
    /// Entries sorted.
    Map(Vec<(Value, Value)>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float32(bits) => write!(f, "{:?}f32", f32::from_bits(*bits)),
            Value::Float64(bits) => write!(f, "{:?}", f64::from_bits(*bits)),
            Value::Decimal(d) => write!(f, "{d}dec"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => {
                f.write_str("0x")?;
                b.iter().try_for_each(|x| write!(f, "{x:02x}"))
            }
            Value::Date(days) => {
                match epoch_date().checked_add_signed(chrono::TimeDelta::days(*days)) {
                    Some(d) => write!(f, "{d}"),
                    None => write!(f, "date({days})"),
                }
            }
            Value::Time(ns) => write!(f, "time({ns}ns)"),
            Value::Timestamp { nanos, utc } => {
                let zone = if *utc { "Z" } else { " (ntz)" };
                let secs = nanos.div_euclid(1_000_000_000);
                let sub = nanos.rem_euclid(1_000_000_000) as u32;
                let dt = i64::try_from(secs)
                    .ok()
                    .and_then(|s| chrono::DateTime::from_timestamp(s, sub));
                match dt {
                    Some(dt) if sub.is_multiple_of(1000) => {
                        write!(
                            f,
                            "{}{zone}",
                            dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.6f")
                        )
                    }
                    Some(dt) => {
                        write!(
                            f,
                            "{}{zone}",
                            dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.9f")
                        )
                    }
                    None => write!(f, "timestamp({nanos}ns){zone}"),
                }
            }
            Value::Text(t) => write!(f, "{t}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Struct(fields) => {
                f.write_str("{")?;
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Map(entries) => {
                f.write_str("map{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} => {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

fn epoch_date() -> chrono::NaiveDate {
    chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()
}

/// One column: its name and its canonical type (see [`kind`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: String,
}

/// A table of canonical rows. `rows[r][c]` is the value of `columns[c]` in row `r`.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
}

impl Rows {
    /// Canonical rows of `batches`, whose columns are those of `schema` (batches whose schema
    /// does not match are an error, naming the difference).
    pub fn from_batches(schema: &Schema, batches: &[RecordBatch]) -> Result<Rows, String> {
        let columns = columns_of(schema.fields());
        let mut rows = Vec::new();
        for (b, batch) in batches.iter().enumerate() {
            let got = columns_of(batch.schema().fields());
            if got != columns {
                return Err(format!(
                    "batch {b} has columns [{}] but the schema says [{}]",
                    describe_columns(&got),
                    describe_columns(&columns)
                ));
            }
            let cols: Vec<Vec<Value>> =
                batch.columns().iter().map(|a| values(a.as_ref())).collect();
            for r in 0..batch.num_rows() {
                rows.push(cols.iter().map(|c| c[r].clone()).collect());
            }
        }
        Ok(Rows { columns, rows })
    }

    /// Rows of `batches` rendered as Arrow's display text (`FormatOptions::default()`,
    /// nulls as empty cells), for comparison with a pretty-printed expected table.
    pub fn from_batches_as_text(schema: &Schema, batches: &[RecordBatch]) -> Result<Rows, String> {
        let columns: Vec<Column> = schema
            .fields()
            .iter()
            .map(|f| Column {
                name: f.name().clone(),
                kind: "text".into(),
            })
            .collect();
        let options = arrow_cast::display::FormatOptions::default();
        let mut rows = Vec::new();
        for batch in batches {
            let formatters = batch
                .columns()
                .iter()
                .map(|a| arrow_cast::display::ArrayFormatter::try_new(a.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("cannot display a batch: {e}"))?;
            for r in 0..batch.num_rows() {
                rows.push(
                    formatters
                        .iter()
                        .map(|f| Value::Text(f.value(r).to_string().trim().to_string()))
                        .collect(),
                );
            }
        }
        Ok(Rows { columns, rows })
    }

    /// All rows of the given parquet files (read in order, which does not matter).
    pub fn read_parquet_files(paths: &[PathBuf]) -> Result<Rows, String> {
        let mut all: Option<Rows> = None;
        for path in paths {
            let (schema, batches) = read_parquet(path)?;
            let rows = Rows::from_batches(&schema, &batches)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            match &mut all {
                None => all = Some(rows),
                Some(acc) if acc.columns == rows.columns => acc.rows.extend(rows.rows),
                Some(acc) => {
                    return Err(format!(
                        "{} has columns [{}], other files of the same table have [{}]",
                        path.display(),
                        describe_columns(&rows.columns),
                        describe_columns(&acc.columns)
                    ))
                }
            }
        }
        all.ok_or_else(|| "no parquet files".to_string())
    }

    /// A pretty-printed table as delta-kernel-rs tests keep it (`*.expected.in`: a Rust
    /// `vec![...]` of the lines of `arrow::util::pretty` output). Every cell is `Text`.
    pub fn read_pretty_table(path: &Path) -> Result<Rows, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let lines: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('"'))
            .map(|l| {
                l.trim_end_matches(',')
                    .trim_matches('"')
                    .replace("\\\"", "\"")
                    .replace("\\\\", "\\")
            })
            .collect();
        let mut table = lines.iter().filter(|l| l.starts_with('|')).map(|l| {
            let inner = l.trim_start_matches('|').trim_end_matches('|');
            inner
                .split('|')
                .map(|c| c.trim().to_string())
                .collect::<Vec<_>>()
        });
        let header = table
            .next()
            .ok_or_else(|| format!("{}: no header line", path.display()))?;
        let columns: Vec<Column> = header
            .iter()
            .map(|n| Column {
                name: n.clone(),
                kind: "text".into(),
            })
            .collect();
        let mut rows = Vec::new();
        for cells in table {
            if cells.len() != columns.len() {
                return Err(format!(
                    "{}: a row has {} cells, the header {}",
                    path.display(),
                    cells.len(),
                    columns.len()
                ));
            }
            rows.push(cells.into_iter().map(Value::Text).collect());
        }
        Ok(Rows { columns, rows })
    }

    /// Adds `nanos` to every timestamp of the top-level column `column`; returns how many
    /// values changed (for corrections of known-wrong expected files).
    pub fn shift_timestamps(&mut self, column: &str, nanos: i128) -> usize {
        let Some(c) = self.columns.iter().position(|col| col.name == column) else {
            return 0;
        };
        let mut changed = 0;
        for row in &mut self.rows {
            if let Value::Timestamp { nanos: n, .. } = &mut row[c] {
                *n += nanos;
                changed += 1;
            }
        }
        changed
    }

    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// The rows with only the named columns, in that order.
    fn project(&self, names: &[&str]) -> Vec<Vec<Value>> {
        let idx: Vec<usize> = names
            .iter()
            .filter_map(|n| self.columns.iter().position(|c| c.name == *n))
            .collect();
        self.rows
            .iter()
            .map(|r| idx.iter().map(|&i| r[i].clone()).collect())
            .collect()
    }
}

fn columns_of(fields: &Fields) -> Vec<Column> {
    fields
        .iter()
        .map(|f| Column {
            name: f.name().clone(),
            kind: kind(f.data_type()),
        })
        .collect()
}

fn describe_columns(columns: &[Column]) -> String {
    columns
        .iter()
        .map(|c| format!("{}: {}", c.name, c.kind))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads one parquet file into Arrow. INT96 columns (Spark's legacy `timestamp` encoding,
/// which Arrow would otherwise read as zone-less nanoseconds) are read as UTC instants in
/// microseconds.
pub fn read_parquet(path: &Path) -> Result<(SchemaRef, Vec<RecordBatch>), String> {
    let open = || File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()));
    let builder = ParquetRecordBatchReaderBuilder::try_new(open()?)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let int96 = builder
        .parquet_schema()
        .columns()
        .iter()
        .filter(|c| c.physical_type() == PhysicalType::INT96)
        .count();
    let builder = if int96 > 0 {
        let mut replaced = 0;
        let hinted = hint_int96(builder.schema().fields(), &mut replaced);
        if replaced != int96 {
            return Err(format!(
                "{}: {int96} INT96 columns but {replaced} zone-less nanosecond timestamps in its \
                 Arrow schema; cannot tell which is which",
                path.display()
            ));
        }
        let options = ArrowReaderOptions::new().with_schema(Arc::new(Schema::new(hinted)));
        ParquetRecordBatchReaderBuilder::try_new_with_options(open()?, options)
            .map_err(|e| format!("cannot read {} with INT96 as UTC: {e}", path.display()))?
    } else {
        builder
    };
    let schema = builder.schema().clone();
    let reader = builder
        .build()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot decode {}: {e}", path.display()))?;
    Ok((schema, batches))
}

/// `fields` with every `Timestamp(Nanosecond, None)` (how Arrow reads INT96) turned into
/// `Timestamp(Microsecond, "UTC")`, counting them.
fn hint_int96(fields: &Fields, replaced: &mut usize) -> Fields {
    fields
        .iter()
        .map(|f| {
            Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(hint_type(f.data_type(), replaced)),
            )
        })
        .collect::<Vec<Arc<Field>>>()
        .into()
}

fn hint_type(dt: &DataType, replaced: &mut usize) -> DataType {
    let field = |f: &Arc<Field>, replaced: &mut usize| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(hint_type(f.data_type(), replaced)),
        )
    };
    match dt {
        DataType::Timestamp(TimeUnit::Nanosecond, None) => {
            *replaced += 1;
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        }
        DataType::Struct(fields) => DataType::Struct(hint_int96(fields, replaced)),
        DataType::List(f) => DataType::List(field(f, replaced)),
        DataType::LargeList(f) => DataType::LargeList(field(f, replaced)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f, replaced), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f, replaced), *sorted),
        other => other.clone(),
    }
}

/// The canonical type of a column: what must agree between expected and actual. Integer and
/// float widths count; decimal precision and scale, string/binary flavours, timestamp units
/// and zone names, nullability and nested field names of lists and maps do not.
pub fn kind(dt: &DataType) -> String {
    match dt {
        DataType::Null => "null".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "float16".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => "decimal".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "binary".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Time32(_) | DataType::Time64(_) => "time".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Timestamp(_, None) => "timestamp_ntz".into(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => format!("array<{}>", kind(f.data_type())),
        DataType::Struct(fields) => {
            let mut parts: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), kind(f.data_type())))
                .collect();
            parts.sort();
            format!("struct<{}>", parts.join(", "))
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                format!(
                    "map<{}, {}>",
                    kind(kv[0].data_type()),
                    kind(kv[1].data_type())
                )
            }
            other => format!("map<{}>", kind(other)),
        },
        DataType::Dictionary(_, v) => kind(v),
        DataType::RunEndEncoded(_, v) => kind(v.data_type()),
        other => format!("{other}"),
    }
}

/// Canonical values of every slot of `array`.
pub fn values(array: &dyn Array) -> Vec<Value> {
    let n = array.len();
    let nulls = array.logical_nulls();
    let is_null = |i: usize| nulls.as_ref().is_some_and(|b| b.is_null(i));
    let map = |f: &dyn Fn(usize) -> Value| -> Vec<Value> {
        (0..n)
            .map(|i| if is_null(i) { Value::Null } else { f(i) })
            .collect()
    };
    macro_rules! ints {
        ($t:ty) => {{
            let a = array.as_primitive::<$t>();
            map(&|i| Value::Int(a.value(i) as i128))
        }};
    }
    macro_rules! decimal {
        ($t:ty, $scale:expr) => {{
            let a = array.as_primitive::<$t>();
            map(&|i| Value::Decimal(normalise_decimal(&a.value(i).to_string(), *$scale as i32)))
        }};
    }
    macro_rules! timestamp {
        ($t:ty, $unit:expr, $tz:expr) => {{
            let a = array.as_primitive::<$t>();
            let per = nanos_per($unit);
            let utc = $tz.is_some();
            map(&|i| Value::Timestamp {
                nanos: a.value(i) as i128 * per,
                utc,
            })
        }};
    }
    match array.data_type() {
        DataType::Null => vec![Value::Null; n],
        DataType::Boolean => {
            let a = array.as_boolean();
            map(&|i| Value::Bool(a.value(i)))
        }
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Float16 => {
            let a = array.as_primitive::<Float16Type>();
            map(&|i| float32(a.value(i).to_f32()))
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            map(&|i| float32(a.value(i)))
        }
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            map(&|i| float64(a.value(i)))
        }
        DataType::Decimal32(_, s) => decimal!(Decimal32Type, s),
        DataType::Decimal64(_, s) => decimal!(Decimal64Type, s),
        DataType::Decimal128(_, s) => decimal!(Decimal128Type, s),
        DataType::Decimal256(_, s) => decimal!(Decimal256Type, s),
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            map(&|i| Value::Str(a.value(i).to_string()))
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            map(&|i| Value::Str(a.value(i).to_string()))
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            map(&|i| Value::Str(a.value(i).to_string()))
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            map(&|i| Value::Bytes(a.value(i).to_vec()))
        }
        DataType::LargeBinary => {
            let a = array.as_binary::<i64>();
            map(&|i| Value::Bytes(a.value(i).to_vec()))
        }
        DataType::BinaryView => {
            let a = array.as_binary_view();
            map(&|i| Value::Bytes(a.value(i).to_vec()))
        }
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            map(&|i| Value::Bytes(a.value(i).to_vec()))
        }
        DataType::Date32 => {
            let a = array.as_primitive::<Date32Type>();
            map(&|i| Value::Date(a.value(i) as i64))
        }
        DataType::Date64 => {
            let a = array.as_primitive::<Date64Type>();
            map(&|i| Value::Date(a.value(i).div_euclid(86_400_000)))
        }
        DataType::Time32(TimeUnit::Second) => {
            let a = array.as_primitive::<Time32SecondType>();
            map(&|i| Value::Time(a.value(i) as i64 * 1_000_000_000))
        }
        DataType::Time32(_) => {
            let a = array.as_primitive::<Time32MillisecondType>();
            map(&|i| Value::Time(a.value(i) as i64 * 1_000_000))
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            let a = array.as_primitive::<Time64MicrosecondType>();
            map(&|i| Value::Time(a.value(i) * 1_000))
        }
        DataType::Time64(_) => {
            let a = array.as_primitive::<Time64NanosecondType>();
            map(&|i| Value::Time(a.value(i)))
        }
        DataType::Timestamp(TimeUnit::Second, tz) => {
            timestamp!(TimestampSecondType, TimeUnit::Second, tz)
        }
        DataType::Timestamp(TimeUnit::Millisecond, tz) => {
            timestamp!(TimestampMillisecondType, TimeUnit::Millisecond, tz)
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            timestamp!(TimestampMicrosecondType, TimeUnit::Microsecond, tz)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
            timestamp!(TimestampNanosecondType, TimeUnit::Nanosecond, tz)
        }
        DataType::List(_) => {
            let a = array.as_list::<i32>();
            let items = values(a.values().as_ref());
            let offsets = a.value_offsets();
            map(&|i| Value::List(items[offsets[i] as usize..offsets[i + 1] as usize].to_vec()))
        }
        DataType::LargeList(_) => {
            let a = array.as_list::<i64>();
            let items = values(a.values().as_ref());
            let offsets = a.value_offsets();
            map(&|i| Value::List(items[offsets[i] as usize..offsets[i + 1] as usize].to_vec()))
        }
        DataType::FixedSizeList(_, _) => {
            let a = array.as_fixed_size_list();
            let items = values(a.values().as_ref());
            let len = a.value_length() as usize;
            map(&|i| {
                let start = a.value_offset(i) as usize;
                Value::List(items[start..start + len].to_vec())
            })
        }
        DataType::Struct(_) => {
            let a = array.as_struct();
            let mut fields: Vec<(String, Vec<Value>)> = a
                .fields()
                .iter()
                .zip(a.columns())
                .map(|(f, c)| (f.name().clone(), values(c.as_ref())))
                .collect();
            fields.sort_by(|x, y| x.0.cmp(&y.0));
            map(&|i| {
                Value::Struct(
                    fields
                        .iter()
                        .map(|(k, v)| (k.clone(), v[i].clone()))
                        .collect(),
                )
            })
        }
        DataType::Map(_, _) => {
            let a = array.as_map();
            let keys = values(a.keys().as_ref());
            let vals = values(a.values().as_ref());
            let offsets = a.value_offsets();
            map(&|i| {
                let range = offsets[i] as usize..offsets[i + 1] as usize;
                let mut entries: Vec<(Value, Value)> =
                    range.map(|j| (keys[j].clone(), vals[j].clone())).collect();
                entries.sort();
                Value::Map(entries)
            })
        }
        DataType::Dictionary(_, value_type) => match arrow_cast::cast(array, value_type) {
            Ok(plain) => values(plain.as_ref()),
            Err(_) => text_values(array),
        },
        DataType::RunEndEncoded(_, value_field) => {
            match arrow_cast::cast(array, value_field.data_type()) {
                Ok(plain) => values(plain.as_ref()),
                Err(_) => text_values(array),
            }
        }
        _ => text_values(array),
    }
}

fn float32(x: f32) -> Value {
    Value::Float32(if x.is_nan() {
        f32::NAN.to_bits()
    } else {
        x.to_bits()
    })
}

fn float64(x: f64) -> Value {
    Value::Float64(if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    })
}

fn nanos_per(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// Values as Arrow's display text, for types with no canonical form here.
fn text_values(array: &dyn Array) -> Vec<Value> {
    let options = arrow_cast::display::FormatOptions::default();
    match arrow_cast::display::ArrayFormatter::try_new(array, &options) {
        Ok(f) => (0..array.len())
            .map(|i| {
                if array.is_null(i) {
                    Value::Null
                } else {
                    Value::Text(f.value(i).to_string())
                }
            })
            .collect(),
        Err(e) => {
            vec![Value::Text(format!("<undisplayable {}: {e}>", array.data_type())); array.len()]
        }
    }
}

/// The exact value of the decimal whose unscaled integer is `unscaled` (decimal digits with
/// an optional `-`) and whose scale is `scale`, as a string with no trailing fraction zeros:
/// `("12300", 2)` → `123`, `("-5", 3)` → `-0.005`, `("0", 4)` → `0`, `("12", -2)` → `1200`.
pub fn normalise_decimal(unscaled: &str, scale: i32) -> String {
    let (negative, digits) = match unscaled.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, unscaled),
    };
    let digits = digits.trim_start_matches('0');
    let (int_part, frac_part) = if scale <= 0 {
        let zeros = if digits.is_empty() {
            0
        } else {
            (-scale) as usize
        };
        (format!("{digits}{}", "0".repeat(zeros)), String::new())
    } else {
        let scale = scale as usize;
        let padded = format!("{digits:0>scale$}");
        let split = padded.len() - scale;
        (padded[..split].to_string(), padded[split..].to_string())
    };
    let int_part = if int_part.is_empty() {
        "0".to_string()
    } else {
        int_part
    };
    let frac_part = frac_part.trim_end_matches('0');
    let body = if frac_part.is_empty() {
        int_part
    } else {
        format!("{int_part}.{frac_part}")
    };
    if negative && body != "0" {
        format!("-{body}")
    } else {
        body
    }
}

/// The outcome of comparing expected rows with actual rows.
#[derive(Debug, Default)]
pub struct Comparison {
    /// What differs; empty when the two are equal.
    pub problems: Vec<String>,
}

impl Comparison {
    pub fn is_equal(&self) -> bool {
        self.problems.is_empty()
    }

    /// All problems, one paragraph each.
    pub fn report(&self) -> String {
        self.problems.join("\n")
    }
}

/// Compares `expected` and `actual` as multisets of rows, matching columns by name.
pub fn compare(expected: &Rows, actual: &Rows) -> Comparison {
    let mut out = Comparison::default();
    for (side, rows) in [("expected", expected), ("actual", actual)] {
        let mut seen = BTreeSet::new();
        for n in rows.column_names() {
            if !seen.insert(n) {
                out.problems
                    .push(format!("the {side} data has two columns named `{n}`"));
            }
        }
    }
    let exp_names = expected.column_names();
    let act_names = actual.column_names();
    let missing: Vec<&str> = exp_names
        .iter()
        .copied()
        .filter(|n| !act_names.contains(n))
        .collect();
    let extra: Vec<&str> = act_names
        .iter()
        .copied()
        .filter(|n| !exp_names.contains(n))
        .collect();
    if !missing.is_empty() {
        out.problems.push(format!(
            "columns expected but missing from the scan: {} (scan has: {})",
            missing.join(", "),
            act_names.join(", ")
        ));
    }
    if !extra.is_empty() {
        out.problems.push(format!(
            "columns in the scan that the expected data does not have: {} (expected: {})",
            extra.join(", "),
            exp_names.join(", ")
        ));
    }
    let common: Vec<&str> = exp_names
        .iter()
        .copied()
        .filter(|n| act_names.contains(n))
        .collect();
    let act_order: Vec<&str> = act_names
        .iter()
        .copied()
        .filter(|n| common.contains(n))
        .collect();
    if common != act_order {
        out.problems.push(format!(
            "column order differs: expected [{}], scan [{}]",
            common.join(", "),
            act_order.join(", ")
        ));
    }
    for name in &common {
        let e = &expected.columns[expected
            .columns
            .iter()
            .position(|c| c.name == *name)
            .unwrap_or(0)];
        let a = &actual.columns[actual
            .columns
            .iter()
            .position(|c| c.name == *name)
            .unwrap_or(0)];
        if e.kind != a.kind && e.kind != "text" && a.kind != "text" {
            out.problems.push(format!(
                "column `{name}` has type {} in the scan, {} expected",
                a.kind, e.kind
            ));
        }
    }

    if common.is_empty() {
        if expected.rows.len() != actual.rows.len() {
            out.problems.push(format!(
                "no common columns; expected {} rows, scan gave {}",
                expected.rows.len(),
                actual.rows.len()
            ));
        }
        return out;
    }
    let mut exp_rows = expected.project(&common);
    let mut act_rows = actual.project(&common);
    exp_rows.sort_unstable();
    act_rows.sort_unstable();
    let (only_exp, only_act) = multiset_difference(&exp_rows, &act_rows);
    if only_exp.is_empty() && only_act.is_empty() {
        return out;
    }
    let mut msg = format!(
        "rows differ: expected {} rows, scan gave {}; {} expected rows not in the scan, {} scan \
         rows not expected",
        exp_rows.len(),
        act_rows.len(),
        only_exp.len(),
        only_act.len()
    );
    if exp_rows.len() == act_rows.len() {
        let differing: Vec<&str> = common
            .iter()
            .enumerate()
            .filter(|(c, _)| {
                let mut x: Vec<&Value> = exp_rows.iter().map(|r| &r[*c]).collect();
                let mut y: Vec<&Value> = act_rows.iter().map(|r| &r[*c]).collect();
                x.sort_unstable();
                y.sort_unstable();
                x != y
            })
            .map(|(_, n)| *n)
            .collect();
        if !differing.is_empty() {
            msg.push_str(&format!(
                "\n    columns whose values differ: {}",
                differing.join(", ")
            ));
        }
    }
    for (sign, rows, what) in [
        ("-", &only_exp, "expected, not in scan"),
        ("+", &only_act, "in scan, not expected"),
    ] {
        if rows.is_empty() {
            continue;
        }
        msg.push_str(&format!(
            "\n    {what} (first {} of {}):",
            rows.len().min(DIFF_ROWS),
            rows.len()
        ));
        for row in rows.iter().take(DIFF_ROWS) {
            msg.push_str(&format!("\n    {sign} {}", show_row(&common, row)));
        }
    }
    out.problems.push(msg);
    out
}

/// Rows of sorted `a` not matched in sorted `b`, and of `b` not matched in `a`, counting
/// repeats.
fn multiset_difference<'a>(
    a: &'a [Vec<Value>],
    b: &'a [Vec<Value>],
) -> (Vec<&'a Vec<Value>>, Vec<&'a Vec<Value>>) {
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => {
                only_a.push(&a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                only_b.push(&b[j]);
                j += 1;
            }
        }
    }
    only_a.extend(&a[i..]);
    only_b.extend(&b[j..]);
    (only_a, only_b)
}

/// `{a: 1, b: "x"}`.
pub fn show_row(names: &[&str], row: &[Value]) -> String {
    let cells: Vec<String> = names
        .iter()
        .zip(row)
        .map(|(n, v)| format!("{n}: {v}"))
        .collect();
    format!("{{{}}}", cells.join(", "))
}

/// Where the expected contents of one case come from.
#[derive(Debug, Clone)]
pub enum ExpectedSource {
    /// Parquet files holding all rows.
    Parquet(Vec<PathBuf>),
    /// A pretty-printed table (delta-kernel-rs `*.expected.in`).
    Pretty(PathBuf),
}

/// One thing to check: a table at a version against its expected rows.
#[derive(Debug, Clone)]
pub struct ExpectedCase {
    pub table: String,
    /// `None`: the latest version.
    pub version: Option<u64>,
    /// For DAT `latest`: the version its `table_version_metadata.json` says.
    pub latest_version: Option<u64>,
    pub source: ExpectedSource,
}

impl ExpectedCase {
    /// `table@latest` or `table@v3`.
    pub fn label(&self) -> String {
        match self.version {
            Some(v) => format!("{}@v{v}", self.table),
            None => format!("{}@latest", self.table),
        }
    }

    pub fn read_expected(&self) -> Result<Rows, String> {
        match &self.source {
            ExpectedSource::Parquet(files) => Rows::read_parquet_files(files),
            ExpectedSource::Pretty(path) => Rows::read_pretty_table(path),
        }
    }
}

/// The `*.parquet` files directly in `dir`, sorted (hidden files skipped).
pub fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && name.ends_with(".parquet") && p.is_file()
        })
        .collect();
    files.sort();
    files
}

/// Every case of `expected_root/<table>/`, or an error naming what in it is not understood.
/// Layouts: `*.parquet` (latest), `latest/table_content/*.parquet` and
/// `vN/table_content/*.parquet` (DAT), `*.expected.in` (pretty-printed, latest).
pub fn cases_of(expected_root: &Path, table: &str) -> Result<Vec<ExpectedCase>, String> {
    let dir = expected_root.join(table);
    let mut cases = Vec::new();
    let case = |version, latest_version, source| ExpectedCase {
        table: table.to_string(),
        version,
        latest_version,
        source,
    };
    let top = parquet_files(&dir);
    if !top.is_empty() {
        cases.push(case(None, None, ExpectedSource::Parquet(top)));
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let mut versions = BTreeMap::new();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if path.is_file() && name.ends_with(".expected.in") {
            cases.push(case(None, None, ExpectedSource::Pretty(path)));
            continue;
        }
        if !path.is_dir() {
            continue;
        }
        let version = match name.as_str() {
            "latest" => None,
            v => match v.strip_prefix('v').and_then(|n| n.parse::<u64>().ok()) {
                Some(n) => Some(n),
                None => return Err(format!("unknown expected folder {}", path.display())),
            },
        };
        let files = parquet_files(&path.join("table_content"));
        if files.is_empty() {
            return Err(format!(
                "no parquet files in {}/table_content",
                path.display()
            ));
        }
        let meta = path.join("table_version_metadata.json");
        let meta_version = std::fs::read_to_string(&meta)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|j| j.get("version").and_then(|v| v.as_u64()));
        if let (Some(v), Some(m)) = (version, meta_version) {
            if v != m {
                return Err(format!("{} says version {m}", meta.display()));
            }
        }
        let latest_version = if version.is_none() {
            meta_version
        } else {
            None
        };
        versions.insert(
            version.map_or(u64::MAX, |v| v),
            case(version, latest_version, ExpectedSource::Parquet(files)),
        );
    }
    // DAT: latest first, then v0, v1, ...
    if let Some(latest) = versions.remove(&u64::MAX) {
        cases.push(latest);
    }
    cases.extend(versions.into_values());
    if cases.is_empty() {
        return Err(format!(
            "no expected results understood in {}",
            dir.display()
        ));
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
    use arrow_array::{
        Decimal128Array, Float32Array, Float64Array, Int64Array, ListArray, StringArray,
        StructArray, TimestampMicrosecondArray, TimestampMillisecondArray,
        TimestampNanosecondArray,
    };

    /// Every case under `expected/`, with its table name.
    fn all_cases() -> Vec<ExpectedCase> {
        let root = crate::common::corpus_dir().join("expected");
        let mut names: Vec<String> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", root.display()))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
            .iter()
            .flat_map(|n| cases_of(&root, n).unwrap_or_else(|e| panic!("{n}: {e}")))
            .collect()
    }

    fn one_column(name: &str, array: ArrayRef) -> Rows {
        let schema = Schema::new(vec![Field::new(name, array.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema.clone()), vec![array]).unwrap();
        Rows::from_batches(&schema, &[batch]).unwrap()
    }

    #[test]
    fn decimals_normalise_to_their_exact_value() {
        assert_eq!(normalise_decimal("12300", 2), "123");
        assert_eq!(normalise_decimal("12345", 2), "123.45");
        assert_eq!(normalise_decimal("-5", 3), "-0.005");
        assert_eq!(normalise_decimal("0", 4), "0");
        assert_eq!(normalise_decimal("-0", 4), "0");
        assert_eq!(normalise_decimal("150", 2), normalise_decimal("15000", 4));
        assert_eq!(normalise_decimal("12", -2), "1200");
        assert_eq!(normalise_decimal("123", 0), "123");
        assert_eq!(normalise_decimal("-100", 0), "-100");
    }

    #[test]
    fn values_compare_by_meaning_not_encoding() {
        // The same instant in three units and two zone names.
        let a = one_column(
            "t",
            Arc::new(TimestampMicrosecondArray::from(vec![1_500_000]).with_timezone("UTC")),
        );
        let b = one_column(
            "t",
            Arc::new(TimestampMillisecondArray::from(vec![1_500]).with_timezone("+00:00")),
        );
        let c = one_column(
            "t",
            Arc::new(
                TimestampNanosecondArray::from(vec![1_500_000_000])
                    .with_timezone("America/Los_Angeles"),
            ),
        );
        assert!(compare(&a, &b).is_equal());
        assert!(compare(&a, &c).is_equal());
        // A wall-clock time is not an instant.
        let ntz = one_column(
            "t",
            Arc::new(TimestampMicrosecondArray::from(vec![1_500_000])),
        );
        let cmp = compare(&a, &ntz);
        assert!(!cmp.is_equal());
        assert!(cmp.report().contains("timestamp_ntz"), "{}", cmp.report());
        assert!(
            cmp.report().contains("1970-01-01T00:00:01.500000Z"),
            "{}",
            cmp.report()
        );

        // Decimals: precision and scale may differ, the value may not.
        let d1 = one_column(
            "d",
            Arc::new(
                Decimal128Array::from(vec![150])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        );
        let d2 = one_column(
            "d",
            Arc::new(
                Decimal128Array::from(vec![15000])
                    .with_precision_and_scale(10, 4)
                    .unwrap(),
            ),
        );
        let d3 = one_column(
            "d",
            Arc::new(
                Decimal128Array::from(vec![15001])
                    .with_precision_and_scale(10, 4)
                    .unwrap(),
            ),
        );
        assert!(compare(&d1, &d2).is_equal());
        assert!(!compare(&d1, &d3).is_equal());

        // Floats: NaN equals NaN, bit patterns otherwise.
        let f1 = one_column("f", Arc::new(Float64Array::from(vec![f64::NAN, 0.0, 1.1])));
        let f2 = one_column("f", Arc::new(Float64Array::from(vec![1.1, -f64::NAN, 0.0])));
        let f3 = one_column("f", Arc::new(Float64Array::from(vec![1.1, f64::NAN, -0.0])));
        assert!(compare(&f1, &f2).is_equal());
        assert!(!compare(&f1, &f3).is_equal());
        // float32 is not float64.
        let g = one_column("f", Arc::new(Float32Array::from(vec![f32::NAN, 0.0, 1.1])));
        assert!(compare(&f1, &g).report().contains("float32"));

        // Strings in any flavour.
        let s1 = one_column("s", Arc::new(StringArray::from(vec![Some("x"), None])));
        let s2 = one_column(
            "s",
            Arc::new(arrow_array::StringViewArray::from(vec![None, Some("x")])),
        );
        assert!(compare(&s1, &s2).is_equal());
    }

    #[test]
    fn maps_are_sets_of_entries_and_structs_match_fields_by_name() {
        let map = |entries: &[(&str, i32)]| -> ArrayRef {
            let mut b = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
            for (k, v) in entries {
                b.keys().append_value(k);
                b.values().append_value(*v);
            }
            b.append(true).unwrap();
            Arc::new(b.finish())
        };
        let m1 = one_column("m", map(&[("a", 1), ("b", 2)]));
        let m2 = one_column("m", map(&[("b", 2), ("a", 1)]));
        let m3 = one_column("m", map(&[("b", 1), ("a", 2)]));
        assert!(compare(&m1, &m2).is_equal());
        assert!(!compare(&m1, &m3).is_equal());

        let x: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        let y: ArrayRef = Arc::new(StringArray::from(vec!["y"]));
        let s1 = StructArray::from(vec![
            (Arc::new(Field::new("x", DataType::Int64, true)), x.clone()),
            (Arc::new(Field::new("y", DataType::Utf8, true)), y.clone()),
        ]);
        let s2 = StructArray::from(vec![
            (Arc::new(Field::new("y", DataType::Utf8, false)), y),
            (Arc::new(Field::new("x", DataType::Int64, false)), x),
        ]);
        assert!(compare(
            &one_column("s", Arc::new(s1)),
            &one_column("s", Arc::new(s2))
        )
        .is_equal());

        // Lists keep their order.
        let l1 =
            ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), Some(2)])]);
        let l2 =
            ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(2), Some(1)])]);
        assert!(!compare(
            &one_column("l", Arc::new(l1)),
            &one_column("l", Arc::new(l2))
        )
        .is_equal());
    }

    #[test]
    fn every_expected_file_reads_and_equals_itself() {
        let cases = all_cases();
        let inventory = crate::common::inventory();
        assert!(cases.len() >= 60, "only {} expected cases", cases.len());
        let mut failures = Vec::new();
        for case in &cases {
            let label = case.label();
            let (first, second) = match (case.read_expected(), case.read_expected()) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => {
                    failures.push(format!("{label}: {e}"));
                    continue;
                }
            };
            let cmp = compare(&first, &second);
            if !cmp.is_equal() {
                failures.push(format!("{label}: not equal to itself: {}", cmp.report()));
            }
            // The inventory's "(N rows)" is the row count of the latest version.
            let row = inventory.iter().find(|r| r.name() == case.table);
            let want = row.and_then(|r| {
                let e = r.get("expected");
                let n = e.rsplit_once('(')?.1.split_once(" rows)")?.0;
                n.parse::<usize>().ok()
            });
            if case.version.is_none() && want.is_some_and(|n| n != first.rows.len()) {
                failures.push(format!(
                    "{label}: {} rows, inventory says {want:?}",
                    first.rows.len()
                ));
            }
            println!(
                "{label}: {} rows; {}",
                first.rows.len(),
                describe_columns(&first.columns)
            );
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_different_table_is_a_mismatch_with_a_useful_message() {
        let root = crate::common::corpus_dir().join("expected");
        let read = |t: &str| cases_of(&root, t).unwrap()[0].read_expected().unwrap();
        // Same columns, different rows.
        let a = read("golden__snapshot-data0");
        let b = read("golden__snapshot-data1");
        assert_eq!(a.columns, b.columns);
        let cmp = compare(&a, &b);
        assert!(!cmp.is_equal());
        let msg = cmp.report();
        assert!(
            msg.contains(&format!(
                "expected {} rows, scan gave {}",
                a.rows.len(),
                b.rows.len()
            )),
            "{msg}"
        );
        assert!(msg.contains("\n    + {"), "{msg}");
        println!("{msg}");

        // Different columns.
        let c = read("golden__data-reader-primitives");
        let cmp = compare(&a, &c);
        let msg = cmp.report();
        assert!(
            msg.contains("columns expected but missing from the scan"),
            "{msg}"
        );
        assert!(
            msg.contains("columns in the scan that the expected data does not have"),
            "{msg}"
        );
        println!("{msg}");

        // DAT versions of one table: v0 is a subset of latest.
        let dat = cases_of(&root, "dat__basic_append").unwrap();
        let latest = dat
            .iter()
            .find(|c| c.version.is_none())
            .unwrap()
            .read_expected()
            .unwrap();
        let v0 = dat
            .iter()
            .find(|c| c.version == Some(0))
            .unwrap()
            .read_expected()
            .unwrap();
        let cmp = compare(&latest, &v0);
        assert!(
            cmp.report().contains("0 scan rows not expected"),
            "{}",
            cmp.report()
        );
        println!("{}", cmp.report());
    }

    #[test]
    fn one_changed_value_is_shown_with_its_row_and_column() {
        let root = crate::common::corpus_dir().join("expected");
        let expected = cases_of(&root, "golden__data-reader-primitives").unwrap()[0]
            .read_expected()
            .unwrap();
        let mut actual = expected.clone();
        let victim = actual
            .rows
            .iter()
            .position(|r| r.iter().all(|v| *v != Value::Null))
            .unwrap();
        let col = actual
            .columns
            .iter()
            .position(|c| c.kind == "int32")
            .unwrap();
        let before = actual.rows[victim][col].clone();
        actual.rows[victim][col] = Value::Int(-424242);
        let cmp = compare(&expected, &actual);
        let msg = cmp.report();
        assert!(
            msg.contains("1 expected rows not in the scan, 1 scan rows not expected"),
            "{msg}"
        );
        assert!(
            msg.contains(&format!(
                "columns whose values differ: {}",
                actual.columns[col].name
            )),
            "{msg}"
        );
        assert!(msg.contains("-424242"), "{msg}");
        assert!(
            msg.contains(&format!("{}: {before}", actual.columns[col].name)),
            "{msg}"
        );
        // A dropped duplicate is a difference too (multisets, not sets).
        let mut doubled = expected.clone();
        doubled.rows.push(expected.rows[0].clone());
        let msg = compare(&doubled, &expected).report();
        assert!(
            msg.contains("1 expected rows not in the scan, 0 scan rows not expected"),
            "{msg}"
        );
        println!("{msg}");
    }

    #[test]
    fn int96_timestamps_read_as_instants() {
        let root = crate::common::corpus_dir().join("expected");
        let rows = cases_of(&root, "dat__all_primitive_types").unwrap()[0]
            .read_expected()
            .unwrap();
        let ts: Vec<&Column> = rows
            .columns
            .iter()
            .filter(|c| c.kind.starts_with("timestamp"))
            .collect();
        assert!(!ts.is_empty(), "{:?}", rows.columns);
        assert!(ts.iter().all(|c| c.kind == "timestamp"), "{ts:?}");
    }

    #[test]
    fn the_pretty_printed_variant_table_parses() {
        let root = crate::common::corpus_dir().join("expected");
        let cases = cases_of(&root, "kernel__unshredded-variant").unwrap();
        assert_eq!(cases.len(), 1);
        let rows = cases[0].read_expected().unwrap();
        assert_eq!(rows.columns.len(), 7);
        assert_eq!(rows.columns[0].name, "id");
        assert!(rows.rows.len() >= 100, "{}", rows.rows.len());
        assert!(compare(&rows, &rows).is_equal());
    }
}
