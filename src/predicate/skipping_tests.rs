//! Tests of file skipping ([`super::may_match_file`]) against partition values and
//! statistics: every operator, nulls, missing and loose statistics, truncated strings,
//! millisecond timestamps, decimals, dates, floats and column mapping.

use super::*;
use crate::error::Result;
use crate::predicate::TypedPartitionValues;
use crate::schema::{
    ColumnMappingMode, PrimitiveType, StructField, StructType, COLUMN_MAPPING_PHYSICAL_NAME_KEY,
};

fn schema() -> Result<StructType> {
    Ok(StructType::new([
        StructField::new("id", PrimitiveType::Long, true),
        StructField::new("name", PrimitiveType::String, true),
        StructField::new("amount", PrimitiveType::decimal(10, 2)?, true),
        StructField::new("wide", PrimitiveType::decimal(18, 4)?, true),
        StructField::new("big", PrimitiveType::decimal(38, 0)?, true),
        StructField::new("day", PrimitiveType::Date, true),
        StructField::new("ts", PrimitiveType::Timestamp, true),
        StructField::new("ntz", PrimitiveType::TimestampNtz, true),
        StructField::new("score", PrimitiveType::Double, true),
        StructField::new("small", PrimitiveType::Byte, true),
        StructField::new("flag", PrimitiveType::Boolean, true),
        StructField::new("part", PrimitiveType::String, true),
        StructField::new("pnum", PrimitiveType::Integer, true),
        StructField::new(
            "s",
            StructType::new([StructField::new("inner", PrimitiveType::Long, true)]),
            true,
        ),
    ]))
}

/// Whether a file with these statistics (and partition values) may match `filter`.
fn may(filter: &str, stats: Option<&str>, partitions: &[(&str, Scalar)]) -> Result<bool> {
    may_with(filter, stats, partitions, false)
}

fn may_with(
    filter: &str,
    stats: Option<&str>,
    partitions: &[(&str, Scalar)],
    deletion_vector: bool,
) -> Result<bool> {
    let schema = schema()?;
    let bound = parse_filter(filter)?.bind(&schema)?;
    let columns = StatsColumns::for_predicate(&schema, ColumnMappingMode::None, &bound)?;
    let stats = stats
        .map(|json| FileStats::parse(json, &columns))
        .transpose()?
        .map(|s| s.with_deletion_vector(deletion_vector));
    let partitions = TypedPartitionValues::from_entries(
        partitions.iter().map(|(k, v)| (k.to_string(), v.clone())),
    );
    Ok(may_match_file(&bound, &partitions, stats.as_ref()))
}

/// Asserts, for each `(filter, expected)`, what [`may`] says.
fn expect(
    stats: Option<&str>,
    partitions: &[(&str, Scalar)],
    cases: &[(&str, bool)],
) -> Result<()> {
    for (filter, expected) in cases {
        assert_eq!(
            may(filter, stats, partitions)?,
            *expected,
            "{filter} with {stats:?} {partitions:?}"
        );
    }
    Ok(())
}

const IDS: &str =
    r#"{"numRecords":5,"minValues":{"id":10},"maxValues":{"id":20},"nullCount":{"id":1}}"#;

#[test]
fn comparisons_on_integers() -> Result<()> {
    expect(
        Some(IDS),
        &[],
        &[
            ("id = 5", false),
            ("id = 10", true),
            ("id = 15", true),
            ("id = 20", true),
            ("id = 25", false),
            ("5 = id", false),
            ("id < 10", false),
            ("id <= 10", true),
            ("id < 11", true),
            ("id > 20", false),
            ("id >= 20", true),
            ("19 < id", true),
            ("id != 15", true),
            ("id in (1, 2, 30)", false),
            ("id in (1, 15)", true),
            ("id not in (10, 11)", true),
            ("id between 21 and 30", false),
            ("id between 0 and 10", true),
            ("id not between 0 and 30", false),
            ("not (id < 10)", true),
            ("not (id <= 20)", false),
            ("not (id >= 10)", false),
            ("id = 1 or id = 15", true),
            ("id = 1 or id = 25", false),
            ("id > 12 and id < 15", true),
            ("id > 12 and id > 25", false),
            ("id > 12.5", true),
            ("id < 10.5", true),
            ("id < 9.5", false),
            ("id = 15.5", false),
            ("not (id = 15.5)", true),
            ("id = 15 and true", true),
            ("id = 15 and false", false),
            ("id = null", false),
            ("not (id = null)", false),
            ("id in (null)", false),
        ],
    )
}

#[test]
fn single_value_files_refute_not_equal() -> Result<()> {
    let one =
        r#"{"numRecords":3,"minValues":{"id":10},"maxValues":{"id":10},"nullCount":{"id":0}}"#;
    expect(
        Some(one),
        &[],
        &[
            ("id != 10", false),
            ("not (id = 10)", false),
            ("id not in (10, 11)", false),
            ("not (id in (10))", false),
            ("id not in (11)", true),
            ("id != 11", true),
            ("id = 10", true),
            ("id is null", false),
            ("not (id is not null)", false),
            ("id is not null", true),
        ],
    )
}

#[test]
fn null_counts() -> Result<()> {
    let all_null = r#"{"numRecords":3,"nullCount":{"id":3}}"#;
    expect(
        Some(all_null),
        &[],
        &[
            ("id = 1", false),
            ("id != 1", false),
            ("id > 1", false),
            ("not (id = 1)", false),
            ("id in (1, 2)", false),
            ("id not in (1)", false),
            ("id is null", true),
            ("not (id is null)", false),
            ("id is not null", false),
            ("id is null and name = 'x'", true),
            ("id = small", false),
        ],
    )?;
    let no_nulls = r#"{"numRecords":3,"nullCount":{"id":0}}"#;
    expect(
        Some(no_nulls),
        &[],
        &[
            ("id is null", false),
            ("id is not null", true),
            ("id = 1", true),
        ],
    )?;
    // Without a null count, or with counts that may include deleted rows, nothing is known.
    let no_count = r#"{"numRecords":3,"minValues":{"id":1},"maxValues":{"id":1}}"#;
    expect(
        Some(no_count),
        &[],
        &[("id is null", true), ("id is not null", true)],
    )?;
    let loose = r#"{"numRecords":3,"nullCount":{"id":3},"tightBounds":false}"#;
    expect(
        Some(loose),
        &[],
        &[
            ("id is not null", true),
            ("id = 1", true),
            ("id is null", true),
        ],
    )?;
    assert!(may_with("id is not null", Some(all_null), &[], true)?);
    assert!(may_with("id = 1", Some(all_null), &[], true)?);
    // A zero null count holds even with a deletion vector.
    assert!(!may_with("id is null", Some(no_nulls), &[], true)?);
    Ok(())
}

#[test]
fn empty_and_missing_stats() -> Result<()> {
    expect(
        Some(r#"{"numRecords":0}"#),
        &[],
        &[("id = 1", false), ("id is null", false), ("true", false)],
    )?;
    for stats in [None, Some("{}"), Some(r#"{"numRecords":4}"#)] {
        expect(
            stats,
            &[],
            &[
                ("id = 1", true),
                ("id != 1", true),
                ("id is null", true),
                ("id is not null", true),
                ("name > 'z'", true),
                ("not (id < 3 or name is null)", true),
                ("id = 1 and false", false),
                ("id = null or false", false),
                ("small = 300", false),
                ("not (small = 300)", true),
                ("small < -300", false),
                ("small > -300", true),
            ],
        )?;
    }
    // Values that do not fit their column type are no statistics.
    let odd = r#"{"numRecords":4,"minValues":{"id":"ten","day":"soon"},"maxValues":{"id":[1]}}"#;
    expect(
        Some(odd),
        &[],
        &[("id = 1", true), ("day = '2024-01-01'", true)],
    )
}

#[test]
fn truncated_string_bounds() -> Result<()> {
    // Writers truncate string statistics: "abc" may stand for "abcz...".
    let stats = r#"{"numRecords":5,"minValues":{"name":"aaa"},"maxValues":{"name":"abc"},"nullCount":{"name":0}}"#;
    expect(
        Some(stats),
        &[],
        &[
            ("name = 'abcd'", true),
            ("name = 'abc'", true),
            ("name = 'abczzzz'", true),
            ("name >= 'abcz'", true),
            ("name > 'abc'", true),
            ("name > 'abd'", false),
            ("name = 'abd'", false),
            ("name = 'b'", false),
            ("name in ('zz', 'abcdef')", true),
            ("name in ('zz', 'b')", false),
            ("name < 'aaa'", false),
            ("name <= 'aaa'", true),
            ("name = 'a'", false),
            ("name = 'aaaa'", true),
        ],
    )?;
    // Even when min and max agree, a truncated value may hide longer ones.
    let same = r#"{"numRecords":5,"minValues":{"name":"abc"},"maxValues":{"name":"abc"},"nullCount":{"name":0}}"#;
    expect(
        Some(same),
        &[],
        &[("name != 'abc'", true), ("name not in ('abc')", true)],
    )?;
    let unicode = r#"{"numRecords":1,"minValues":{"name":"é"},"maxValues":{"name":"ü"}}"#;
    expect(
        Some(unicode),
        &[],
        &[
            ("name = 'üx'", true),
            ("name = 'z'", false),
            ("name = 'ö'", true),
        ],
    )
}

#[test]
fn timestamps_have_millisecond_bounds() -> Result<()> {
    let stats = r#"{"numRecords":5,"minValues":{"ts":"2024-01-01T09:00:00.000+00:00","ntz":"2024-01-01T09:00:00.000"},
        "maxValues":{"ts":"2024-01-01T10:00:00.123Z","ntz":"2024-01-01T10:00:00.123"},"nullCount":{"ts":0}}"#;
    expect(
        Some(stats),
        &[],
        &[
            // A value written as .123456 has max statistic .123.
            ("ts = '2024-01-01 10:00:00.123456'", true),
            ("ts >= '2024-01-01 10:00:00.123999'", true),
            ("ts > timestamp '2024-01-01 10:00:00.124'", false),
            ("ts >= '2024-01-01 10:00:00.125'", false),
            ("ts = '2024-01-01 11:00:00'", false),
            ("ts < '2024-01-01 08:59:59.999'", false),
            ("ts <= '2024-01-01 08:59:59.999'", true),
            ("ts < '2024-01-01 09:00:00'", true),
            ("ts = '2024-01-01 09:00:00+01:00'", false),
            ("ts = '2024-01-01 11:00:00+01:00'", true),
            ("ts >= '2024-01-01'", true),
            ("ts < '2024-01-01'", false),
            ("ts != '2024-01-01 10:00:00'", true),
            ("ntz = timestamp_ntz '2024-01-01 10:00:00.123456'", true),
            ("ntz > '2024-01-01 10:00:00.124'", false),
            ("ntz < '2024-01-01 08:59:59.999'", false),
        ],
    )
}

#[test]
fn decimals() -> Result<()> {
    let stats = r#"{"numRecords":5,"minValues":{"amount":10.5},"maxValues":{"amount":99.99},"nullCount":{"amount":0}}"#;
    expect(
        Some(stats),
        &[],
        &[
            ("amount = 10.5", true),
            ("amount = 10.50", true),
            ("amount < 10.5", false),
            ("amount < 10.51", true),
            ("amount > 99.99", false),
            ("amount >= 99.99", true),
            ("amount > 99.985", true),
            ("amount = 100", false),
            ("amount = '50'", true),
            ("amount in (1, 2, 3)", false),
            ("amount > 1e3", false),
            ("amount > 1e-3", true),
        ],
    )?;
    // A bound with more digits than an f64 keeps exactly is no bound.
    let long = r#"{"numRecords":5,"minValues":{"amount":12345678.123456789123},"maxValues":{"amount":12345678.123456789123}}"#;
    expect(
        Some(long),
        &[],
        &[("amount = 1", true), ("amount > 99999999", true)],
    )
}

/// delta-rs writes decimal statistics through doubles: `-99999999999999.5131` as
/// `-99999999999999.52`, and a `decimal(38, 0)` past the i64 range as i64's maximum. Such
/// bounds must not rule out the values they were written for; bounds far from a value still
/// do, and small decimals stay exact.
#[test]
fn decimals_written_through_doubles() -> Result<()> {
    let rounded = r#"{"numRecords":1,"minValues":{"wide":-99999999999999.52,"big":12345678901234567890},"maxValues":{"wide":-99999999999999.52,"big":12345678901234567890}}"#;
    expect(
        Some(rounded),
        &[],
        &[
            ("wide >= -99999999999999.5131", true),
            ("wide = -99999999999999.5131", true),
            ("wide <= -99999999999999.5299", true),
            ("wide > -99999999999990", false),
            ("wide < -99999999999999.9", false),
            ("big = 12345678901234567893", true),
            ("big > 12345678901234600000", false),
            ("big < 12345678901234500000", false),
        ],
    )?;
    let clamped = r#"{"numRecords":1,"minValues":{"big":9223372036854775807},"maxValues":{"big":9223372036854775807}}"#;
    expect(
        Some(clamped),
        &[],
        &[
            ("big = 99999999999999999999999999999999999999", true),
            ("big = 1", true),
        ],
    )?;
    let exact =
        r#"{"numRecords":1,"minValues":{"wide":1.5,"big":7},"maxValues":{"wide":1.5,"big":7}}"#;
    expect(
        Some(exact),
        &[],
        &[
            ("wide > 1.5", false),
            ("wide < 1.5", false),
            ("wide = 1.5", true),
            ("big = 8", false),
            ("big = 7", true),
        ],
    )
}

#[test]
fn dates() -> Result<()> {
    let stats =
        r#"{"numRecords":5,"minValues":{"day":"2024-01-01"},"maxValues":{"day":"2024-01-31"}}"#;
    expect(
        Some(stats),
        &[],
        &[
            ("day between '2024-02-01' and '2024-02-28'", false),
            ("day between '2023-12-01' and '2024-01-01'", true),
            ("day = '2024-01-15'", true),
            ("day = date '2024-02-01'", false),
            ("day > '2024-01-31'", false),
            ("day >= '2024-01-31'", true),
            ("day > '2024-01-31 00:00:01'", false),
            ("day >= '2024-01-30 23:59:59'", true),
            ("day < '2024-01-01'", false),
            ("day < '2024-01-01 00:00:01'", true),
            ("day = '2024-01-15 12:00:00'", false),
        ],
    )
}

#[test]
fn floats_beware_nan() -> Result<()> {
    let stats = r#"{"numRecords":5,"minValues":{"score":1.0},"maxValues":{"score":2.0},"nullCount":{"score":0}}"#;
    expect(
        Some(stats),
        &[],
        &[
            // NaN sorts above every number and is not in the statistics.
            ("score > 5", true),
            ("score >= 5", true),
            ("score = double 'NaN'", true),
            ("score = 5", false),
            ("score = 1.5", true),
            ("score in (5, 6)", false),
            ("score < 0.5", false),
            ("score < 1.5", true),
            ("not (score >= 1)", false),
            ("score != 1.5", true),
        ],
    )?;
    let same = r#"{"numRecords":5,"minValues":{"score":1.0},"maxValues":{"score":1.0},"nullCount":{"score":0}}"#;
    expect(Some(same), &[], &[("score != 1", true)])?;
    let zero = r#"{"numRecords":5,"minValues":{"score":0.0},"maxValues":{"score":0.0}}"#;
    expect(
        Some(zero),
        &[],
        &[("score = -0.0", true), ("score < 0", false)],
    )
}

#[test]
fn booleans_and_nested() -> Result<()> {
    let stats = r#"{"numRecords":5,"minValues":{"flag":false,"s":{"inner":3}},"maxValues":{"flag":false,"s":{"inner":7}},"nullCount":{"flag":0,"s":{"inner":5}}}"#;
    expect(
        Some(stats),
        &[],
        &[
            ("flag", false),
            ("not flag", true),
            ("flag = false", true),
            ("s.inner = 5", false),
            ("s.inner is null", true),
        ],
    )?;
    let nested = r#"{"numRecords":5,"minValues":{"s":{"inner":3}},"maxValues":{"s":{"inner":7}}}"#;
    expect(
        Some(nested),
        &[],
        &[
            ("s.inner = 5", true),
            ("s.inner = 8", false),
            ("s.inner < 3", false),
        ],
    )
}

#[test]
fn partition_values_are_exact() -> Result<()> {
    let nl = [("part", Scalar::from("NL")), ("pnum", Scalar::Integer(7))];
    expect(
        None,
        &nl,
        &[
            ("part = 'NL'", true),
            ("part = 'DE'", false),
            ("part != 'NL'", false),
            ("part != 'DE'", true),
            ("part > 'NL'", false),
            ("part >= 'NL'", true),
            ("part = 'N'", false),
            ("part = 'NLX'", false),
            ("part in ('DE', 'NL')", true),
            ("part not in ('DE', 'NL')", false),
            ("part is null", false),
            ("part is not null", true),
            ("not (part = 'NL')", false),
            ("PART = 'NL'", true),
            ("pnum = 7", true),
            ("pnum = 7.5", false),
            ("pnum < 7.5", true),
            ("pnum > 7.5", false),
            ("pnum between 1 and 6", false),
            ("part = 'DE' or id = 15", true),
            ("part = 'DE' and id = 15", false),
        ],
    )?;
    expect(
        Some(IDS),
        &nl,
        &[
            ("part = 'NL' and id = 15", true),
            ("part = 'NL' and id = 25", false),
            ("part = 'DE' or id = 25", false),
        ],
    )?;
    let null = [("part", Scalar::Null(PrimitiveType::String))];
    expect(
        None,
        &null,
        &[
            ("part = 'NL'", false),
            ("part != 'NL'", false),
            ("part is null", true),
            ("part is not null", false),
            ("not (part is null)", false),
            ("part in ('NL', null)", false),
        ],
    )
}

#[test]
fn typed_partition_values_follow_column_mapping() -> Result<()> {
    let schema = StructType::new([
        StructField::new("Day", PrimitiveType::Date, true)
            .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-9"),
        StructField::new("region", PrimitiveType::String, true)
            .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-8"),
        StructField::new("id", PrimitiveType::Long, true)
            .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-7"),
    ]);
    let raw: crate::log::PartitionValues = [
        ("col-9".to_string(), Some("2024-01-02".to_string())),
        ("col-8".to_string(), None),
    ]
    .into_iter()
    .collect();
    let columns = ["day".to_string(), "region".to_string()];
    let values = TypedPartitionValues::parse(&raw, &schema, &columns, ColumnMappingMode::Name)?;
    assert_eq!(values.get("Day"), Some(&Scalar::Date(19724)));
    assert_eq!(
        values.get("region"),
        Some(&Scalar::Null(PrimitiveType::String))
    );
    let bound = parse_filter("day = '2024-01-02' and region is null and id > 5")?.bind(&schema)?;
    let cols = StatsColumns::for_predicate(&schema, ColumnMappingMode::Name, &bound)?;
    assert_eq!(cols.len(), 3);
    let stats = FileStats::parse(r#"{"numRecords":2,"maxValues":{"col-7":5}}"#, &cols)?;
    assert!(!may_match_file(&bound, &values, Some(&stats)));
    let stats = FileStats::parse(r#"{"numRecords":2,"maxValues":{"col-7":6}}"#, &cols)?;
    assert!(may_match_file(&bound, &values, Some(&stats)));
    // Keys by logical name would be wrong under column mapping: they are not statistics.
    let stats = FileStats::parse(r#"{"numRecords":2,"maxValues":{"id":5}}"#, &cols)?;
    assert!(may_match_file(&bound, &values, Some(&stats)));
    let bad: crate::log::PartitionValues = [("col-9".to_string(), Some("soon".to_string()))]
        .into_iter()
        .collect();
    assert!(TypedPartitionValues::parse(&bad, &schema, &columns, ColumnMappingMode::Name).is_err());
    assert!(TypedPartitionValues::parse(
        &raw,
        &schema,
        &["nope".to_string()],
        ColumnMappingMode::Name
    )
    .is_err());
    Ok(())
}
