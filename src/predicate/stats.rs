//! File statistics: the `add.stats` JSON of a data file, parsed once into typed values per
//! logical column.
//!
//! The JSON (`{"numRecords":N,"minValues":{...},"maxValues":{...},"nullCount":{...},
//! "tightBounds":bool}`) nests values by struct and keys them by PHYSICAL column names
//! (column mapping). [`StatsColumns`] maps each logical column to its physical path and type
//! once per scan; [`FileStats::parse`] then reads one file's JSON with it. A checkpoint's
//! typed `stats_parsed` (the same struct as Arrow arrays) is read as it is by
//! [`FileStats::from_parsed`], with no JSON in between.
//!
//! Values are kept as written; how loose each kind of bound is (truncated strings,
//! millisecond timestamps, NaN) is the business of [`super::skipping`]. A value that does not
//! parse for its column type (a decimal with more digits than a double holds exactly, a
//! `"NaN"` string) is dropped: a missing statistic never causes a file to be skipped.

use std::collections::{BTreeSet, HashMap};

use arrow_array::{Array, ArrayRef, StructArray};
use serde_json::Value;

use super::bind::BoundExpr;
use super::literal_text::{parse_date, parse_timestamp, ExactNumber, Scaled};
use super::scalar::{normal_f32, normal_f64, Scalar};
use crate::error::{DeltaError, Result};
use crate::log::{AddStats, ParsedStats};
use crate::schema::{physical_name, ColumnMappingMode, DataType, PrimitiveType, StructType};

/// Significant digits a decimal number read through an `f64` keeps exactly.
const EXACT_F64_DIGITS: usize = 15;

/// Where the statistics of each (primitive, not inside an array or map) logical column are
/// found in the stats JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsColumns {
    columns: Vec<StatsColumn>,
}

#[derive(Debug, Clone, PartialEq)]
struct StatsColumn {
    logical: Vec<String>,
    physical: Vec<String>,
    ty: PrimitiveType,
    /// A `double` column that was a `float` (type widening, `delta.typeChanges`): files
    /// written before the change hold `float` values and bounds written for them (`3.4` for
    /// a value that reads as the double `3.4000000953674316`), so each bound is widened by the
    /// rounding of a float ([`widen_float_written`]).
    float_written: bool,
}

impl StatsColumns {
    /// Every primitive column of `schema` (nested struct fields included).
    pub fn new(schema: &StructType, mode: ColumnMappingMode) -> Result<Self> {
        let mut columns = Vec::new();
        collect(schema, mode, &mut Vec::new(), &mut Vec::new(), &mut columns)?;
        Ok(StatsColumns { columns })
    }

    /// Only the columns `predicate` refers to.
    pub fn for_predicate(
        schema: &StructType,
        mode: ColumnMappingMode,
        predicate: &BoundExpr,
    ) -> Result<Self> {
        let wanted: BTreeSet<Vec<String>> = predicate.columns().into_iter().collect();
        let mut all = Self::new(schema, mode)?;
        all.columns.retain(|c| wanted.contains(&c.logical));
        Ok(all)
    }

    /// The logical paths of the columns, as the schema spells them.
    pub fn logical_paths(&self) -> impl Iterator<Item = &[String]> {
        self.columns.iter().map(|c| c.logical.as_slice())
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
}

fn collect(
    st: &StructType,
    mode: ColumnMappingMode,
    logical: &mut Vec<String>,
    physical: &mut Vec<String>,
    out: &mut Vec<StatsColumn>,
) -> Result<()> {
    for field in &st.fields {
        logical.push(field.name.clone());
        physical.push(physical_name(field, mode)?.to_string());
        match &field.data_type {
            DataType::Primitive(ty) => out.push(StatsColumn {
                logical: logical.clone(),
                physical: physical.clone(),
                ty: *ty,
                float_written: *ty == PrimitiveType::Double && widened_from_float(field),
            }),
            DataType::Struct(inner) => collect(inner, mode, logical, physical, out)?,
            _ => {}
        }
        logical.pop();
        physical.pop();
    }
    Ok(())
}

impl StatsColumn {
    /// A bound read in the column's type, as the column takes it: widened when its older
    /// files wrote it for a `float` (see [`widen_float_written`]). JSON and `stats_parsed`
    /// bounds both pass through here.
    fn taken(&self, bound: Option<Scalar>, side: Side) -> Option<Scalar> {
        if self.float_written {
            widen_float_written(bound, side)
        } else {
            bound
        }
    }
}

/// Whether `field`'s type history (`delta.typeChanges`) has it widened from `float`.
fn widened_from_float(field: &crate::schema::StructField) -> bool {
    field
        .metadata
        .get("delta.typeChanges")
        .and_then(Value::as_array)
        .is_some_and(|changes| {
            changes
                .iter()
                .any(|c| c.get("fromType").and_then(Value::as_str) == Some("float"))
        })
}

/// A bound of a `double` column once a `float` (see [`StatsColumn::float_written`]): the
/// `double` and the `float` the same text names may differ by a float's rounding, so the
/// bound takes the wider of the two (and a bound written for a double is widened by at most
/// one float step, which only reads a file more).
fn widen_float_written(bound: Option<Scalar>, side: Side) -> Option<Scalar> {
    match bound {
        // Beyond f32's range a bound was written for a double: it stays.
        Some(Scalar::Double(v)) if v.is_finite() && (v as f32).is_finite() => {
            let f = f64::from(outward_f32(v, side));
            let wider = match side {
                Side::Min => v.min(f),
                Side::Max => v.max(f),
            };
            Some(Scalar::Double(normal_f64(wider)))
        }
        other => other,
    }
}

/// The statistics of one column of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnStats {
    /// `minValues`: no non-null value is smaller (a string may be a truncated prefix).
    pub min: Option<Scalar>,
    /// `maxValues`: no non-null value is larger, except that a string may be a truncated
    /// prefix and a timestamp has millisecond precision.
    pub max: Option<Scalar>,
    /// `nullCount`.
    pub null_count: Option<u64>,
}

/// The statistics of one data file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileStats {
    /// `numRecords`: rows in the physical file (deleted rows included).
    pub num_records: Option<u64>,
    /// `tightBounds`: `Some(false)` when the statistics may count rows a deletion vector
    /// removed.
    pub tight_bounds: Option<bool>,
    /// Whether the file has a deletion vector (set by the caller with
    /// [`FileStats::with_deletion_vector`]).
    pub has_deletion_vector: bool,
    columns: HashMap<Vec<String>, ColumnStats>,
}

impl FileStats {
    /// Parses an `add.stats` JSON string for the given columns. Malformed JSON (or JSON that
    /// is not an object) is an error, which a caller may treat as "no statistics"; values
    /// that do not fit their column type are left out.
    pub fn parse(json: &str, columns: &StatsColumns) -> Result<FileStats> {
        let value: Value = serde_json::from_str(json).map_err(|e| bad_stats(e.to_string()))?;
        let Value::Object(root) = value else {
            return Err(bad_stats("not a JSON object"));
        };
        let (mins, maxes, nulls) = sections(|key| root.get(key).filter(|v| v.is_object()));
        let bound = |section: Option<&Value>, column: &StatsColumn, side| {
            let value = find_path(section, &column.physical)?;
            column.taken(
                match exact_decimal_text(json, column, value) {
                    Some(text) => stat_value(&Value::String(text), &column.ty, side),
                    None => stat_value(value, &column.ty, side),
                },
                side,
            )
        };
        let stats = column_stats(columns, |column| ColumnStats {
            min: bound(mins, column, Side::Min),
            max: bound(maxes, column, Side::Max),
            null_count: find_path(nulls, &column.physical).and_then(Value::as_u64),
        });
        Ok(FileStats {
            num_records: root.get("numRecords").and_then(Value::as_u64),
            tight_bounds: root.get("tightBounds").and_then(Value::as_bool),
            has_deletion_vector: false,
            columns: stats,
        })
    }

    /// The statistics of an `add` action for the given columns: its JSON parsed (see
    /// [`FileStats::parse`]), or a checkpoint's typed `stats_parsed` read as it is (see
    /// [`FileStats::from_parsed`]).
    pub fn from_add(stats: &AddStats, columns: &StatsColumns) -> Result<FileStats> {
        match stats {
            AddStats::Json(json) => Self::parse(json, columns),
            AddStats::Parsed(parsed) => Ok(Self::from_parsed(parsed, columns)),
        }
    }

    /// Reads a checkpoint's typed statistics for the given columns. Each value is taken in
    /// its column's type: integers widen or narrow when they fit, a double bound of a float
    /// column is rounded outwards, a decimal keeps its scale; a value of another type, a null
    /// or a missing field is left out (a missing statistic never skips a file).
    pub fn from_parsed(parsed: &ParsedStats, columns: &StatsColumns) -> FileStats {
        let (_, row) = parsed.row();
        let (mins, maxes, nulls) = sections(|key| {
            parsed
                .field(key)
                .and_then(|a| a.as_any().downcast_ref::<StructArray>())
        });
        let stats = column_stats(columns, |column| {
            let value = |section: Option<&StructArray>, side| {
                let leaf = find_leaf(section, &column.physical)?;
                column.taken(parsed_value(leaf, row, &column.ty, side), side)
            };
            let null_count = find_leaf(nulls, &column.physical).and_then(|leaf| {
                match Scalar::from_array(leaf.as_ref(), row).ok()? {
                    Scalar::Long(n) => u64::try_from(n).ok(),
                    Scalar::Integer(n) => u64::try_from(n).ok(),
                    _ => None,
                }
            });
            ColumnStats {
                min: value(mins, Side::Min),
                max: value(maxes, Side::Max),
                null_count,
            }
        });
        let tight_bounds = parsed.field("tightBounds").and_then(|a| {
            match Scalar::from_array(a.as_ref(), row).ok()? {
                Scalar::Boolean(b) => Some(b),
                _ => None,
            }
        });
        FileStats {
            num_records: parsed.num_records(),
            tight_bounds,
            has_deletion_vector: false,
            columns: stats,
        }
    }

    /// Statistics from values already typed, e.g. those of one Parquet row group: `columns`
    /// maps logical column paths (as the schema spells them) to their statistics.
    pub fn from_columns(
        num_records: Option<u64>,
        tight_bounds: Option<bool>,
        columns: impl IntoIterator<Item = (Vec<String>, ColumnStats)>,
    ) -> FileStats {
        FileStats {
            num_records,
            tight_bounds,
            has_deletion_vector: false,
            columns: columns.into_iter().collect(),
        }
    }

    /// The statistics of an `add` for every primitive column of `schema`; see
    /// [`FileStats::from_add`].
    #[cfg_attr(not(feature = "datafusion"), allow(dead_code))] // DataFusion statistics only
    pub fn from_add_for_schema(
        stats: &AddStats,
        schema: &StructType,
        mode: ColumnMappingMode,
    ) -> Result<FileStats> {
        Self::from_add(stats, &StatsColumns::new(schema, mode)?)
    }

    /// These statistics, noting whether the file has a deletion vector (then row and null
    /// counts may include deleted rows).
    pub fn with_deletion_vector(mut self, has_deletion_vector: bool) -> Self {
        self.has_deletion_vector = has_deletion_vector;
        self
    }

    /// The statistics of the column at logical `path`, as the schema spells it.
    pub fn column(&self, path: &[String]) -> Option<&ColumnStats> {
        self.columns.get(path)
    }

    /// Whether `numRecords` and `nullCount` count exactly the rows a reader sees (no
    /// deletion vector, and `tightBounds` not false).
    pub fn counts_are_exact(&self) -> bool {
        !self.has_deletion_vector && self.tight_bounds != Some(false)
    }
}

/// The `minValues`, `maxValues` and `nullCount` sections, as `section` finds them.
fn sections<T>(section: impl Fn(&str) -> Option<T>) -> (Option<T>, Option<T>, Option<T>) {
    (
        section("minValues"),
        section("maxValues"),
        section("nullCount"),
    )
}

/// The statistics `read` finds for each of `columns`, by logical path; columns without any
/// are left out.
fn column_stats(
    columns: &StatsColumns,
    read: impl Fn(&StatsColumn) -> ColumnStats,
) -> HashMap<Vec<String>, ColumnStats> {
    columns
        .columns
        .iter()
        .filter_map(|c| {
            let entry = read(c);
            (entry != ColumnStats::default()).then(|| (c.logical.clone(), entry))
        })
        .collect()
}

/// The leaf array at `path` inside a struct section of parsed statistics.
fn find_leaf<'a>(section: Option<&'a StructArray>, path: &[String]) -> Option<&'a ArrayRef> {
    let (last, parents) = path.split_last()?;
    let parent = parents.iter().try_fold(section?, |s, name| {
        s.column_by_name(name)?
            .as_any()
            .downcast_ref::<StructArray>()
    })?;
    parent.column_by_name(last)
}

/// The typed statistic at `row` of `array`, in the column type `ty`, or `None` when it is
/// null or does not fit.
fn parsed_value(array: &ArrayRef, row: usize, ty: &PrimitiveType, side: Side) -> Option<Scalar> {
    if row >= array.len() || array.is_null(row) {
        return None;
    }
    // Arrow types a Delta type does not map to (unsigned integers, 64-bit dates, narrow or
    // wide decimals, other timestamp units) are cast to the column's own Arrow type first.
    let value = match Scalar::from_array(array.as_ref(), row) {
        Ok(v) => v,
        Err(_) => {
            let cast = crate::schema::cast::cast(&array.slice(row, 1), &ty.to_arrow()).ok()?;
            Scalar::from_array(cast.as_ref(), 0).ok()?
        }
    };
    conform(value, ty, side)
}

/// `value` as a statistic of a column of type `ty`, or `None` when it is not one.
fn conform(value: Scalar, ty: &PrimitiveType, side: Side) -> Option<Scalar> {
    let integer = |v: &Scalar| match v {
        Scalar::Long(n) => Some(*n),
        Scalar::Integer(n) => Some(i64::from(*n)),
        Scalar::Short(n) => Some(i64::from(*n)),
        Scalar::Byte(n) => Some(i64::from(*n)),
        _ => None,
    };
    Some(match (value, ty) {
        (Scalar::Null(_), _) => return None,
        (v, PrimitiveType::Long) => Scalar::Long(integer(&v)?),
        (v, PrimitiveType::Integer) => Scalar::Integer(i32::try_from(integer(&v)?).ok()?),
        (v, PrimitiveType::Short) => Scalar::Short(i16::try_from(integer(&v)?).ok()?),
        (v, PrimitiveType::Byte) => Scalar::Byte(i8::try_from(integer(&v)?).ok()?),
        (Scalar::Double(v), PrimitiveType::Double) => Scalar::Double(normal_f64(v)),
        (Scalar::Float(v), PrimitiveType::Double) => Scalar::Double(normal_f64(f64::from(v))),
        (Scalar::Float(v), PrimitiveType::Float) => Scalar::Float(normal_f32(v)),
        (Scalar::Double(v), PrimitiveType::Float) => {
            Scalar::Float(normal_f32(outward_f32(v, side)))
        }
        (Scalar::Timestamp(v) | Scalar::TimestampNtz(v), PrimitiveType::Timestamp) => {
            Scalar::Timestamp(v)
        }
        (Scalar::Timestamp(v) | Scalar::TimestampNtz(v), PrimitiveType::TimestampNtz) => {
            Scalar::TimestampNtz(v)
        }
        (Scalar::Decimal(v, from), PrimitiveType::Decimal(d)) if from.scale() == d.scale() => {
            let limit = 10i128.checked_pow(u32::from(d.precision()))?;
            (v.unsigned_abs() < limit.unsigned_abs()).then_some(Scalar::Decimal(v, *d))?
        }
        (v @ Scalar::String(_), PrimitiveType::String)
        | (v @ Scalar::Boolean(_), PrimitiveType::Boolean)
        | (v @ Scalar::Date(_), PrimitiveType::Date) => v,
        _ => return None,
    })
}

/// `v` as an `f32` that does not move the bound inwards. The largest finite `f32` written in
/// its shortest form (`3.4028235E38`) reads as an `f64` just above it; no finite value lies
/// beyond it, so it stays the bound rather than widening to infinity.
fn outward_f32(v: f64, side: Side) -> f32 {
    let mut f = v as f32;
    match side {
        Side::Min if f64::from(f) > v && f != f32::MIN => f = f.next_down(),
        Side::Max if f64::from(f) < v && f != f32::MAX => f = f.next_up(),
        _ => {}
    }
    f
}

/// The value at `path` inside `section`.
/// The text of a decimal column's bound as written in `json` (the whole stats object), when
/// it is a number that did not parse as an integer: `serde_json` reads such numbers as `f64`,
/// which keeps only about 15 significant digits of a `decimal(38, 18)`. The text is the
/// number after the column's key whose value reads as the same `f64`, taken only when one
/// text does (a bound elsewhere of the same key and `f64` but other digits leaves it unknown,
/// as before). Native builds only: the browser build keeps its size budget (such bounds
/// there stay unknown, which prunes less but never wrongly).
#[cfg(not(target_arch = "wasm32"))]
fn exact_decimal_text(json: &str, column: &StatsColumn, value: &Value) -> Option<String> {
    if !matches!(column.ty, PrimitiveType::Decimal(_)) {
        return None;
    }
    let parsed = value.as_f64().filter(|_| value.is_f64())?;
    let key = format!("\"{}\"", column.physical.last()?);
    let mut found: Option<&str> = None;
    for (at, _) in json.match_indices(&key) {
        let rest = json[at + key.len()..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
            .unwrap_or(rest.len());
        let text = &rest[..end];
        // Read as serde_json read the bound: its parsing of a long number may differ from
        // Rust's correctly rounded one in the last bit.
        let same = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.as_f64());
        if same != Some(parsed) {
            continue;
        }
        match found {
            Some(other) if other != text => return None,
            _ => found = Some(text),
        }
    }
    found.map(str::to_string)
}

#[cfg(target_arch = "wasm32")]
fn exact_decimal_text(_: &str, _: &StatsColumn, _: &Value) -> Option<String> {
    None
}

fn find_path<'a>(section: Option<&'a Value>, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(section?, |v, name| v.get(name))
}

fn bad_stats(reason: impl std::fmt::Display) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: format!("invalid file statistics (add.stats): {reason}"),
    }
}

#[derive(Clone, Copy)]
enum Side {
    Min,
    Max,
}

/// A statistics value read as `ty`, or `None` when it does not fit.
fn stat_value(value: &Value, ty: &PrimitiveType, side: Side) -> Option<Scalar> {
    let integer = || -> Option<i64> {
        value.as_i64().or_else(|| {
            let f = value.as_f64()?;
            // An integral float within the i64 range (checked by the round trip).
            let i = f as i64;
            (f.fract() == 0.0 && i as f64 == f).then_some(i)
        })
    };
    let float = || -> Option<f64> {
        match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => match s.as_str() {
                "Infinity" | "+Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                _ => None,
            },
            _ => None,
        }
    };
    Some(match ty {
        PrimitiveType::String => Scalar::String(value.as_str()?.to_string()),
        PrimitiveType::Long => Scalar::Long(integer()?),
        PrimitiveType::Integer => Scalar::Integer(i32::try_from(integer()?).ok()?),
        PrimitiveType::Short => Scalar::Short(i16::try_from(integer()?).ok()?),
        PrimitiveType::Byte => Scalar::Byte(i8::try_from(integer()?).ok()?),
        PrimitiveType::Double => Scalar::Double(normal_f64(float()?)),
        // Rounding to f32 must not move the bound inwards.
        PrimitiveType::Float => Scalar::Float(normal_f32(outward_f32(float()?, side))),
        PrimitiveType::Boolean => Scalar::Boolean(value.as_bool()?),
        PrimitiveType::Date => Scalar::Date(parse_date(value.as_str()?)?),
        PrimitiveType::Timestamp => Scalar::Timestamp(parse_timestamp(value.as_str()?)?.micros),
        PrimitiveType::TimestampNtz => {
            Scalar::TimestampNtz(parse_timestamp(value.as_str()?)?.micros)
        }
        PrimitiveType::Decimal(d) => {
            let (text, exact_text) = match value {
                Value::Number(n) => (n.to_string(), n.is_i64() || n.is_u64()),
                Value::String(s) => (s.clone(), true),
                _ => return None,
            };
            let number = ExactNumber::parse(&text)?;
            // Through an f64, only 15 significant digits are sure to be the ones written.
            if !exact_text && number.significant_digits() > EXACT_F64_DIGITS {
                return None;
            }
            let limit = 10i128.checked_pow(u32::from(d.precision()))?;
            match number.to_scaled(i64::from(d.scale())) {
                Scaled::Exact(v) if v.unsigned_abs() < limit.unsigned_abs() => {
                    Scalar::Decimal(v, *d)
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
#[path = "stats_parsed_tests.rs"]
mod parsed_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{StructField, COLUMN_MAPPING_PHYSICAL_NAME_KEY};

    fn schema() -> Result<StructType> {
        Ok(StructType::new([
            StructField::new("id", PrimitiveType::Long, true)
                .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-1"),
            StructField::new("amount", PrimitiveType::decimal(38, 2)?, true)
                .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-2"),
            StructField::new(
                "s",
                StructType::new([StructField::new("ts", PrimitiveType::Timestamp, true)
                    .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-4")]),
                true,
            )
            .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-3"),
            StructField::new("f", PrimitiveType::Float, true)
                .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-5"),
        ]))
    }

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_physical_names_into_logical_paths() -> Result<()> {
        let json = r#"{"numRecords":10,"minValues":{"col-1":1,"col-2":10.5,
            "col-3":{"col-4":"2024-01-01T10:00:00.123Z"},"col-5":0.1},
            "maxValues":{"col-1":9,"col-2":12345678901234567.89,"col-5":"NaN"},
            "nullCount":{"col-1":0,"col-3":{"col-4":2}},"tightBounds":true}"#;
        let stats = FileStats::parse(
            json,
            &StatsColumns::new(&schema()?, ColumnMappingMode::Name)?,
        )?;
        assert_eq!(stats.num_records, Some(10));
        assert_eq!(stats.tight_bounds, Some(true));
        assert!(stats.counts_are_exact());
        assert!(!stats.clone().with_deletion_vector(true).counts_are_exact());
        let id = stats.column(&path(&["id"]));
        assert_eq!(id.and_then(|c| c.min.clone()), Some(Scalar::Long(1)));
        assert_eq!(id.and_then(|c| c.max.clone()), Some(Scalar::Long(9)));
        assert_eq!(id.and_then(|c| c.null_count), Some(0));
        let amount = stats.column(&path(&["amount"]));
        assert_eq!(
            amount.and_then(|c| c.min.clone()),
            Some(Scalar::decimal(1050, 38, 2)?)
        );
        // 19 significant digits: read from the number's text, not through an f64.
        assert_eq!(
            amount.and_then(|c| c.max.clone()),
            Some(Scalar::decimal(1234567890123456789, 38, 2)?)
        );
        // Negative, nested under a struct, and with escapes in other keys.
        let schema = StructType::new([StructField::new(
            "s",
            StructType::new([StructField::new(
                "d",
                PrimitiveType::Decimal(crate::schema::DecimalType::try_new(20, 10)?),
                true,
            )]),
            true,
        )]);
        let text = r#"{"numRecords":2,"minValues":{"x\"y":1,"s":{"d":-9999999999.9999999999}},
            "maxValues":{"s":{"d":3333333333.3333333333}}}"#;
        let nested = FileStats::parse(text, &StatsColumns::new(&schema, ColumnMappingMode::None)?)?;
        let d = nested.column(&path(&["s", "d"]));
        assert_eq!(
            d.and_then(|c| c.min.clone()),
            Some(Scalar::decimal(-99999999999999999999, 20, 10)?)
        );
        assert_eq!(
            d.and_then(|c| c.max.clone()),
            Some(Scalar::decimal(33333333333333333333, 20, 10)?)
        );
        // 20 significant digits, which serde_json's own parsing reads to another f64 than
        // Rust's correctly rounded one (a golden table's statistics).
        let schema = StructType::new([StructField::new(
            "col3",
            PrimitiveType::Decimal(crate::schema::DecimalType::try_new(20, 5)?),
            true,
        )]);
        let text = r#"{"numRecords":99998,"minValues":{"col3":-999929997299970.99990},
            "maxValues":{"col3":999999999399991.99997},"nullCount":{"col3":0}}"#;
        let wide = FileStats::parse(text, &StatsColumns::new(&schema, ColumnMappingMode::None)?)?;
        let col3 = wide.column(&path(&["col3"]));
        assert_eq!(
            col3.and_then(|c| c.min.clone()),
            Some(Scalar::decimal(-99992999729997099990, 20, 5)?)
        );
        assert_eq!(
            col3.and_then(|c| c.max.clone()),
            Some(Scalar::decimal(99999999939999199997, 20, 5)?)
        );
        let ts = stats.column(&path(&["s", "ts"]));
        assert_eq!(
            ts.and_then(|c| c.min.clone()),
            Some(Scalar::parse_timestamp("2024-01-01 10:00:00.123")?)
        );
        assert_eq!(ts.and_then(|c| c.null_count), Some(2));
        let f = stats.column(&path(&["f"]));
        // 0.1 (as an f64) is below 0.1f32: the min widens down to the f32 below.
        assert_eq!(
            f.and_then(|c| c.min.clone()),
            Some(Scalar::Float(0.1f32.next_down()))
        );
        assert_eq!(f.and_then(|c| c.max.clone()), None);
        Ok(())
    }

    #[test]
    fn without_mapping_and_partial() -> Result<()> {
        let json = r#"{"numRecords":3,"minValues":{"id":"x"},"nullCount":{"amount":3}}"#;
        let stats = FileStats::parse(
            json,
            &StatsColumns::new(&schema()?, ColumnMappingMode::None)?,
        )?;
        assert_eq!(stats.tight_bounds, None);
        assert!(stats.counts_are_exact());
        assert_eq!(stats.column(&path(&["id"])), None);
        assert_eq!(
            stats.column(&path(&["amount"])).and_then(|c| c.null_count),
            Some(3)
        );
        let all = StatsColumns::new(&schema()?, ColumnMappingMode::None)?;
        let loose = FileStats::parse(r#"{"numRecords":3,"tightBounds":false}"#, &all)?;
        assert!(!loose.counts_are_exact());
        assert!(FileStats::parse("[1]", &all).is_err());
        assert!(FileStats::parse("{", &all).is_err());
        Ok(())
    }

    #[test]
    fn a_double_once_a_float_has_its_bounds_widened_by_a_floats_rounding() -> Result<()> {
        let changes = serde_json::json!([{"fromType": "float", "toType": "double"}]);
        let mut widened = StructField::new("x", PrimitiveType::Double, true);
        widened.metadata.insert("delta.typeChanges".into(), changes);
        let schema = StructType::new([widened, StructField::new("y", PrimitiveType::Double, true)]);
        let columns = StatsColumns::new(&schema, ColumnMappingMode::None)?;
        // Written for the float 3.4f32, which reads as the double 3.4000000953674316.
        let text = r#"{"numRecords":1,"minValues":{"x":3.4,"y":3.4,"big":0},
            "maxValues":{"x":3.4,"y":3.4}}"#;
        let stats = FileStats::parse(text, &columns)?;
        let x = stats.column(&path(&["x"])).cloned().unwrap_or_default();
        let (Some(Scalar::Double(min)), Some(Scalar::Double(max))) = (x.min, x.max) else {
            return Err(bad_stats("no bounds"));
        };
        let data = f64::from(3.4f32);
        assert!(min <= data && data <= max, "{min} <= {data} <= {max}");
        assert!(
            max - 3.4 < 1e-6 && 3.4 - min < 1e-6,
            "widened by a float step only"
        );
        // A column that never was a float keeps the bounds as written.
        let y = stats.column(&path(&["y"])).cloned().unwrap_or_default();
        assert_eq!(
            (y.min, y.max),
            (Some(Scalar::Double(3.4)), Some(Scalar::Double(3.4)))
        );
        // A bound past f32's range was written for a double: it stays.
        let far = FileStats::parse(r#"{"maxValues":{"x":1e300}}"#, &columns)?;
        assert_eq!(
            far.column(&path(&["x"])).and_then(|c| c.max.clone()),
            Some(Scalar::Double(1e300))
        );
        Ok(())
    }

    #[test]
    fn value_kinds() -> Result<()> {
        let v = |json: &str, ty: PrimitiveType, side: Side| {
            serde_json::from_str::<Value>(json)
                .ok()
                .and_then(|v| stat_value(&v, &ty, side))
        };
        assert_eq!(
            v("5.0", PrimitiveType::Integer, Side::Min),
            Some(Scalar::Integer(5))
        );
        assert_eq!(v("5.5", PrimitiveType::Integer, Side::Min), None);
        assert_eq!(v("300", PrimitiveType::Byte, Side::Min), None);
        assert_eq!(
            v("true", PrimitiveType::Boolean, Side::Min),
            Some(Scalar::Boolean(true))
        );
        assert_eq!(
            v("\"2024-01-01\"", PrimitiveType::Date, Side::Min),
            Some(Scalar::Date(19723))
        );
        assert_eq!(v("\"x\"", PrimitiveType::Date, Side::Min), None);
        assert_eq!(
            v("\"-Infinity\"", PrimitiveType::Double, Side::Min),
            Some(Scalar::Double(f64::NEG_INFINITY))
        );
        assert_eq!(
            v("-0.0", PrimitiveType::Double, Side::Min),
            Some(Scalar::Double(0.0))
        );
        assert_eq!(v("\"AQI=\"", PrimitiveType::Binary, Side::Min), None);
        assert_eq!(
            v(
                "\"2024-01-01 10:00:00\"",
                PrimitiveType::TimestampNtz,
                Side::Max
            ),
            Some(Scalar::parse_timestamp_ntz("2024-01-01 10:00:00")?)
        );
        // A float bound written with more digits than an f32 has widens outwards.
        let Some(Scalar::Float(max)) = v("0.10000000000000001", PrimitiveType::Float, Side::Max)
        else {
            return Err(bad_stats("no float"));
        };
        assert!(f64::from(max) >= 0.1);
        let Some(Scalar::Float(min)) = v("0.10000000000000001", PrimitiveType::Float, Side::Min)
        else {
            return Err(bad_stats("no float"));
        };
        assert!(f64::from(min) <= 0.1);
        // The largest f32 as Java and ryu write it stays finite, on both sides.
        assert_eq!(
            v("3.4028235E38", PrimitiveType::Float, Side::Max),
            Some(Scalar::Float(f32::MAX))
        );
        assert_eq!(
            v("-3.4028235E38", PrimitiveType::Float, Side::Min),
            Some(Scalar::Float(f32::MIN))
        );
        assert_eq!(
            v("3.4028234663852886e38", PrimitiveType::Float, Side::Max),
            Some(Scalar::Float(f32::MAX))
        );
        assert_eq!(
            v("123", PrimitiveType::decimal(5, 2)?, Side::Min),
            Some(Scalar::decimal(12300, 5, 2)?)
        );
        assert_eq!(v("1234", PrimitiveType::decimal(5, 2)?, Side::Min), None);
        assert_eq!(v("1.234", PrimitiveType::decimal(5, 2)?, Side::Min), None);
        Ok(())
    }
}
