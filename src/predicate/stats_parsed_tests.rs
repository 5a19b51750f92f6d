//! Tests of [`FileStats::from_parsed`]: a checkpoint's typed `stats_parsed` reads as the same
//! statistics as the equivalent `stats` JSON, types conformed to the columns', without JSON.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int32Array, Int64Array, StructArray,
    TimestampMillisecondArray, UInt16Array,
};
use arrow_schema::{Field, Fields};

use super::*;
use crate::log::ParsedStats;
use crate::schema::{StructField, COLUMN_MAPPING_PHYSICAL_NAME_KEY};

fn schema() -> Result<StructType> {
    let physical =
        |f: StructField, name: &str| f.with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, name);
    Ok(StructType::new([
        physical(StructField::new("id", PrimitiveType::Long, true), "col-1"),
        physical(
            StructField::new("amount", PrimitiveType::decimal(38, 2)?, true),
            "col-2",
        ),
        physical(
            StructField::new(
                "s",
                StructType::new([physical(
                    StructField::new("ts", PrimitiveType::Timestamp, true),
                    "col-4",
                )]),
                true,
            ),
            "col-3",
        ),
        physical(StructField::new("f", PrimitiveType::Float, true), "col-5"),
        physical(
            StructField::new("small", PrimitiveType::Short, true),
            "col-6",
        ),
    ]))
}

/// A struct array of `fields`, with `valid` as its validity when given.
fn strukt(fields: Vec<(&str, ArrayRef)>, valid: Option<Vec<bool>>) -> ArrayRef {
    let (names, arrays): (Vec<Field>, Vec<ArrayRef>) = fields
        .into_iter()
        .map(|(n, a)| (Field::new(n, a.data_type().clone(), true), a))
        .unzip();
    let nulls = valid.map(arrow_buffer::NullBuffer::from);
    Arc::new(
        StructArray::try_new(Fields::from(names), arrays, nulls).unwrap_or_else(|e| panic!("{e}")),
    )
}

/// `[v, v, null]` of a timestamp in milliseconds, UTC.
fn millis(ms: i64) -> ArrayRef {
    Arc::new(TimestampMillisecondArray::from(vec![Some(ms), Some(ms), None]).with_timezone("UTC"))
}

/// `[v, v, null]` of `decimal(38, 2)`.
fn decimal(v: i128) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(vec![Some(v), Some(v), None])
            .with_precision_and_scale(38, 2)
            .unwrap_or_else(|e| panic!("{e}")),
    )
}

/// The bounds of `id`, `amount`, `s.ts` and `f` (physical names), the last three as
/// `[v, v, null]`.
fn bounds(id: ArrayRef, amount: i128, ts_ms: i64, f: f64) -> Vec<(&'static str, ArrayRef)> {
    vec![
        ("col-1", id),
        ("col-2", decimal(amount)),
        ("col-3", strukt(vec![("col-4", millis(ts_ms))], None)),
        (
            "col-5",
            Arc::new(Float64Array::from(vec![Some(f), Some(f), None])),
        ),
    ]
}

/// Three rows of `stats_parsed`: full statistics; a row whose `id` bounds are null and whose
/// `small` minimum does not fit a short; a null row.
fn stats_parsed() -> Arc<StructArray> {
    // `id` narrower than the column (an int column widened to long).
    let mut mins = bounds(
        Arc::new(Int32Array::from(vec![Some(1), None, None])),
        1050,
        1_704_103_200_123,
        0.1,
    );
    // An unsigned type no Delta type maps to: cast to the column's type.
    mins.push((
        "col-6",
        Arc::new(UInt16Array::from(vec![Some(7), Some(40_000), None])),
    ));
    let mins = strukt(mins, None);
    let maxes = strukt(
        bounds(
            Arc::new(Int64Array::from(vec![Some(7), None, None])),
            99_999,
            1_704_106_800_000,
            2.5,
        ),
        None,
    );
    let nulls = strukt(
        vec![
            (
                "col-1",
                Arc::new(Int64Array::from(vec![Some(0), Some(0), None])),
            ),
            (
                "col-2",
                Arc::new(Int64Array::from(vec![Some(2), Some(2), None])),
            ),
            (
                "col-3",
                strukt(
                    vec![(
                        "col-4",
                        Arc::new(Int64Array::from(vec![Some(3), Some(3), None])),
                    )],
                    None,
                ),
            ),
        ],
        None,
    );
    let root = strukt(
        vec![
            (
                "numRecords",
                Arc::new(Int64Array::from(vec![Some(10), Some(10), None])),
            ),
            ("minValues", mins),
            ("maxValues", maxes),
            ("nullCount", nulls),
            (
                "tightBounds",
                Arc::new(BooleanArray::from(vec![Some(true), None, None])),
            ),
        ],
        Some(vec![true, true, false]),
    );
    let root = root
        .as_any()
        .downcast_ref::<StructArray>()
        .cloned()
        .unwrap_or_else(|| panic!("a struct"));
    Arc::new(root)
}

fn parsed(row: usize) -> Option<ParsedStats> {
    ParsedStats::new(stats_parsed(), row)
}

#[test]
fn typed_statistics_read_like_their_json() -> Result<()> {
    let columns = StatsColumns::new(&schema()?, ColumnMappingMode::Name)?;
    let typed = FileStats::from_parsed(&parsed(0).ok_or_else(|| bad_stats("row 0"))?, &columns);
    let json = r#"{"numRecords":10,
        "minValues":{"col-1":1,"col-2":10.50,"col-3":{"col-4":"2024-01-01T10:00:00.123Z"},
                     "col-5":0.1,"col-6":7},
        "maxValues":{"col-1":7,"col-2":999.99,"col-3":{"col-4":"2024-01-01T11:00:00.000Z"},
                     "col-5":2.5},
        "nullCount":{"col-1":0,"col-2":2,"col-3":{"col-4":3}},
        "tightBounds":true}"#;
    assert_eq!(typed, FileStats::parse(json, &columns)?);
    let id = typed.column(&["id".to_string()]);
    assert_eq!(id.and_then(|c| c.min.clone()), Some(Scalar::Long(1)));
    let ts = typed.column(&["s".to_string(), "ts".to_string()]);
    assert_eq!(
        ts.and_then(|c| c.max.clone()),
        Some(Scalar::Timestamp(1_704_106_800_000_000))
    );
    // A double bound of a float column is rounded outwards.
    let f = typed.column(&["f".to_string()]);
    let min = f.and_then(|c| c.min.clone());
    assert!(
        matches!(min, Some(Scalar::Float(v)) if f64::from(v) <= 0.1),
        "{min:?}"
    );
    Ok(())
}

#[test]
fn nulls_and_values_that_do_not_fit_are_left_out() -> Result<()> {
    let columns = StatsColumns::new(&schema()?, ColumnMappingMode::Name)?;
    let typed = FileStats::from_parsed(&parsed(1).ok_or_else(|| bad_stats("row 1"))?, &columns);
    let id = typed.column(&["id".to_string()]);
    assert_eq!(id.and_then(|c| c.min.clone()), None);
    assert_eq!(id.and_then(|c| c.null_count), Some(0));
    // 40000 does not fit a short.
    assert_eq!(typed.column(&["small".to_string()]), None);
    assert_eq!(typed.tight_bounds, None);
    assert_eq!(typed.num_records, Some(10));
    // A null row is no statistics at all.
    assert!(parsed(2).is_none());
    assert!(parsed(3).is_none());
    Ok(())
}

#[test]
fn fields_of_unexpected_types_are_ignored() -> Result<()> {
    let odd = strukt(
        vec![
            ("numRecords", Arc::new(Int32Array::from(vec![5]))),
            ("minValues", Arc::new(Int64Array::from(vec![1]))),
            ("tightBounds", Arc::new(Int64Array::from(vec![1]))),
        ],
        None,
    );
    let odd = odd
        .as_any()
        .downcast_ref::<StructArray>()
        .cloned()
        .unwrap_or_else(|| panic!("a struct"));
    let parsed = ParsedStats::new(Arc::new(odd), 0).ok_or_else(|| bad_stats("row"))?;
    let columns = StatsColumns::new(&schema()?, ColumnMappingMode::Name)?;
    let typed = FileStats::from_parsed(&parsed, &columns);
    assert_eq!(typed, FileStats::default());
    Ok(())
}
