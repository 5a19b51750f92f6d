//! Tests of row evaluation ([`super::evaluate`]) on small batches with nulls, NaN, nested
//! structs and representations other than the bound ones.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryViewArray, BooleanArray, Float64Array, Int32Array, Int64Array,
    LargeStringArray, RecordBatch, StringArray, StringViewArray, StructArray,
    TimestampMillisecondArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowDataType, Field, Fields};

use super::*;
use crate::error::Result;
use crate::schema::{PrimitiveType, StructField, StructType};

fn schema() -> Result<StructType> {
    Ok(StructType::new([
        StructField::new("id", PrimitiveType::Long, true),
        StructField::new("name", PrimitiveType::String, true),
        StructField::new("score", PrimitiveType::Double, true),
        StructField::new("small", PrimitiveType::Integer, true),
        StructField::new(
            "s",
            StructType::new([StructField::new("inner", PrimitiveType::Long, true)]),
            true,
        ),
        StructField::new("ts", PrimitiveType::Timestamp, true),
        StructField::new("view", PrimitiveType::String, true),
        StructField::new("large", PrimitiveType::String, true),
        StructField::new("bin", PrimitiveType::Binary, true),
    ]))
}

/// Four rows; row 1 has a null struct `s` whose child slot still holds 5.
fn batch() -> Result<RecordBatch> {
    let inner: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(5), None, Some(4)]));
    let s = StructArray::try_new(
        Fields::from(vec![Field::new("inner", ArrowDataType::Int64, true)]),
        vec![inner],
        Some(NullBuffer::from(vec![true, false, true, true])),
    )
    .map_err(arrow)?;
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "id",
            Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(4)])),
        ),
        (
            "NAME",
            Arc::new(StringArray::from(vec![
                Some("a"),
                None,
                Some("c"),
                Some("abc"),
            ])),
        ),
        (
            "score",
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(-f64::NAN),
                Some(-0.0),
                None,
            ])),
        ),
        (
            "small",
            Arc::new(Int32Array::from(vec![Some(1), Some(3), Some(3), None])),
        ),
        ("s", Arc::new(s)),
        (
            "ts",
            Arc::new(
                TimestampMillisecondArray::from(vec![Some(0), Some(1), Some(2), None])
                    .with_timezone("+00:00"),
            ),
        ),
        (
            "view",
            Arc::new(StringViewArray::from(vec![
                Some("x"),
                Some("y"),
                None,
                Some("x"),
            ])),
        ),
        (
            "large",
            Arc::new(LargeStringArray::from(vec![
                Some("a"),
                Some("y"),
                Some("c"),
                None,
            ])),
        ),
        (
            "bin",
            Arc::new(BinaryViewArray::from(vec![
                Some(b"hi".as_slice()),
                None,
                Some(b"a longer binary value".as_slice()),
                Some(b"hi".as_slice()),
            ])),
        ),
    ];
    RecordBatch::try_from_iter(columns).map_err(arrow)
}

fn arrow(source: arrow_schema::ArrowError) -> crate::error::DeltaError {
    crate::error::DeltaError::Arrow {
        phase: crate::error::Phase::Read,
        source,
    }
}

fn rows(filter: &str) -> Result<Vec<bool>> {
    let bound = parse_filter(filter)?.bind(&schema()?)?;
    let result = evaluate(&bound, &batch()?)?;
    assert_eq!(result.null_count(), 0, "{filter}");
    Ok(result.iter().map(|v| v.unwrap_or(false)).collect())
}

fn expect(cases: &[(&str, [bool; 4])]) -> Result<()> {
    for (filter, expected) in cases {
        assert_eq!(rows(filter)?, expected.to_vec(), "{filter}");
    }
    Ok(())
}

const F: bool = false;
const T: bool = true;

#[test]
fn comparisons_with_nulls() -> Result<()> {
    expect(&[
        ("id = 2", [F, T, F, F]),
        ("id != 2", [T, F, F, T]),
        ("id > 1", [F, T, F, T]),
        ("id >= 2", [F, T, F, T]),
        ("id < 2", [T, F, F, F]),
        ("id <= 2", [T, T, F, F]),
        ("2 < id", [F, F, F, T]),
        ("not (id > 1)", [T, F, F, F]),
        ("id is null", [F, F, T, F]),
        ("id is not null", [T, T, F, T]),
        ("not (id < 3 or name is null)", [F, F, F, T]),
        ("name != 'a' or id = 1", [T, F, T, T]),
        ("name = 'a' and id = 1", [T, F, F, F]),
        ("id = null", [F, F, F, F]),
        ("not (id = null)", [F, F, F, F]),
        ("id between 2 and 4", [F, T, F, T]),
        ("id not between 2 and 4", [T, F, F, F]),
        ("true", [T, T, T, T]),
        ("false or id = 4", [F, F, F, T]),
    ])
}

#[test]
fn in_lists() -> Result<()> {
    expect(&[
        ("id in (1, 4)", [T, F, F, T]),
        ("id in (1, null)", [T, F, F, F]),
        ("id not in (1)", [F, T, F, T]),
        ("id not in (1, null)", [F, F, F, F]),
        ("not (id not in (1, 4))", [T, F, F, T]),
        ("id in (1.5)", [F, F, F, F]),
        ("not (id in (1.5))", [T, T, F, T]),
        ("name in ('a', 'c')", [T, F, T, F]),
    ])
}

/// A list of 16 values or more is matched through a set, not a kernel per value: the same
/// rows as the short list it pads, for every type, null and negation here.
#[test]
fn long_in_lists_match_as_short_ones() -> Result<()> {
    type Filler = fn(usize) -> String;
    let cases: [(&str, &str, Filler); 9] = [
        ("id", "1, 4", |i| format!("{}", 1000 + i)),
        ("id", "1, null", |i| format!("{}", -1000 - i as i64)),
        ("name", "'a', 'c'", |i| format!("'z{i}'")),
        ("view", "'y'", |i| format!("'x{i}'")),
        ("large", "'y', 'c'", |i| format!("'q{i}'")),
        ("score", "-0.0, double 'NaN'", |i| format!("{}.5", 10 + i)),
        ("small", "3, 2.5", |i| format!("{}", 100 + i)),
        ("s.inner", "5, 4", |i| format!("{}", 100 + i)),
        ("ts", "timestamp '1970-01-01T00:00:00.001Z'", |i| {
            format!("timestamp '2000-01-01T00:00:{:02}Z'", i % 60)
        }),
    ];
    for (column, short, filler) in cases {
        let padding: Vec<String> = (0..20).map(filler).collect();
        let long = format!("{short}, {}, {short}", padding.join(", "));
        for (a, b) in [
            (
                format!("{column} in ({short})"),
                format!("{column} in ({long})"),
            ),
            (
                format!("{column} not in ({short})"),
                format!("{column} not in ({long})"),
            ),
            (
                format!("not ({column} in ({short}))"),
                format!("not ({column} in ({long}))"),
            ),
        ] {
            assert_eq!(rows(&a)?, rows(&b)?, "{b}");
        }
    }
    // Every value matched through the set, as equality finds them.
    let all: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    assert_eq!(rows(&format!("id in ({})", all.join(", ")))?, [T, T, F, T]);
    Ok(())
}

#[test]
fn coerced_bounds_keep_null_semantics() -> Result<()> {
    expect(&[
        ("small < 2.5", [T, F, F, F]),
        ("small > 2.5", [F, T, T, F]),
        ("small = 2.5", [F, F, F, F]),
        ("small != 2.5", [T, T, T, F]),
        ("not (small = 2.5)", [T, T, T, F]),
        ("small < 1e20", [T, T, T, F]),
        ("small > -1e20", [T, T, T, F]),
    ])
}

#[test]
fn floats_follow_sql() -> Result<()> {
    expect(&[
        ("score = 0", [F, F, T, F]),
        ("score = -0.0", [F, F, T, F]),
        ("score > 100", [F, T, F, F]),
        ("score < 1", [F, F, T, F]),
        ("score = double 'NaN'", [F, T, F, F]),
        ("score is null", [F, F, F, T]),
    ])
}

#[test]
fn nested_fields_and_representations() -> Result<()> {
    expect(&[
        // Row 1's struct is null, so its field is null too.
        ("s.inner = 5", [F, F, F, F]),
        ("s.inner is null", [F, T, T, F]),
        ("s is null", [F, T, F, F]),
        ("s.inner >= 1", [T, F, F, T]),
        // Case-insensitive lookup in the batch.
        ("name = 'c'", [F, F, T, F]),
        // A string view column and a timestamp with another zone name are cast.
        ("view = 'x'", [T, F, F, T]),
        ("ts > '1970-01-01 00:00:00.001'", [F, F, T, F]),
        ("ts = timestamp '1970-01-01 00:00:00'", [T, F, F, F]),
        // Columns of different integer types compare as long.
        ("id = small", [T, F, F, F]),
        ("id < small", [F, T, F, F]),
    ])
}

#[test]
fn string_and_binary_encodings_compare_as_decoded() -> Result<()> {
    expect(&[
        ("view != 'x'", [F, T, F, F]),
        ("view > 'x'", [F, T, F, F]),
        ("view <= 'x'", [T, F, F, T]),
        ("view in ('y', 'z')", [F, T, F, F]),
        ("view not in ('y')", [T, F, F, T]),
        ("view between 'a' and 'x'", [T, F, F, T]),
        ("view is null", [F, F, T, F]),
        ("large = 'c'", [F, F, T, F]),
        ("large < 'b'", [T, F, F, F]),
        ("large in ('a', 'y')", [T, T, F, F]),
        // Columns of two string encodings (a view, a large string, a plain one).
        ("view = large", [F, T, F, F]),
        ("large = name", [T, F, T, F]),
        ("binary '6869' = bin", [T, F, F, T]),
        ("bin > binary '6869'", [F, F, F, F]),
        ("bin < binary '6869'", [F, F, T, F]),
        ("bin in (binary '6869')", [T, F, F, T]),
    ])
}

#[test]
fn errors_and_columns() -> Result<()> {
    let schema = schema()?;
    let bound = parse_filter("id = 1")?.bind(&schema)?;
    let empty = RecordBatch::try_from_iter(vec![(
        "other",
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )])
    .map_err(arrow)?;
    let err = evaluate(&bound, &empty).err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("invalid argument: the filter column id is not in the data being filtered")
    );
    let bound =
        parse_filter("(id = 1 or s.inner > 2) and not id in (3) and small = id")?.bind(&schema)?;
    assert_eq!(
        bound.columns(),
        vec![
            vec!["id".to_string()],
            vec!["s".to_string(), "inner".to_string()],
            vec!["small".to_string()],
        ]
    );
    let constant = parse_filter("id = null")?.bind(&schema)?;
    assert!(constant.columns().is_empty());
    let none: BooleanArray = evaluate(&constant, &empty)?;
    assert_eq!(none.len(), 1);
    assert!(!none.value(0));
    Ok(())
}
