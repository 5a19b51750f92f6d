//! Tests of checkpoint and commit decoding on small checkpoints written in memory with
//! `ArrowWriter`. The corpus's checkpoints are checked through the public API in
//! `tests/native/checkpoints.rs`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float64Array,
    Int32Array, Int64Array, LargeStringArray, ListArray, RecordBatch, StringArray, StringViewArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use serde_json::{json, Value};

use super::*;

const ALL: ActionKinds = ActionKinds(0b11_1111);

fn strs(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn i64s(v: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

fn i32s(v: &[Option<i32>]) -> ArrayRef {
    Arc::new(Int32Array::from(v.to_vec()))
}

fn bools(v: &[Option<bool>]) -> ArrayRef {
    Arc::new(BooleanArray::from(v.to_vec()))
}

type Entries<'a> = &'a [(&'a str, Option<&'a str>)];

fn map(rows: &[Option<Entries<'_>>]) -> ArrayRef {
    let mut b = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for row in rows {
        if let Some(entries) = row {
            for (k, v) in *entries {
                b.keys().append_value(k);
                b.values().append_option(*v);
            }
        }
        b.append(row.is_some()).unwrap();
    }
    Arc::new(b.finish())
}

fn list(rows: &[Option<&[&str]>]) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for row in rows {
        match row {
            Some(items) => {
                for i in *items {
                    b.values().append_value(i);
                }
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

fn strukt(fields: Vec<(&str, ArrayRef)>, valid: &[bool]) -> ArrayRef {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = fields
        .into_iter()
        .map(|(n, a)| (Field::new(n, a.data_type().clone(), true), a))
        .unzip();
    let nulls = NullBuffer::from(valid.to_vec());
    Arc::new(StructArray::try_new(Fields::from(fields), arrays, Some(nulls)).unwrap())
}

fn parquet_file(cols: Vec<(&str, ArrayRef)>) -> Bytes {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch =
        RecordBatch::try_new(schema.clone(), cols.into_iter().map(|c| c.1).collect()).unwrap();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    Bytes::from(out)
}

fn pv(entries: &[(&str, Option<&str>)]) -> PartitionValues {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
        .collect()
}

/// Six rows: protocol, metaData, two adds (one with a deletion vector and a null partition
/// value), a remove, and a `txn` row that is none of the decoded kinds.
fn classic_checkpoint() -> Bytes {
    let only = |row: usize| -> Vec<bool> { (0..6).map(|i| i == row).collect() };
    let protocol = strukt(
        vec![
            (
                "minReaderVersion",
                i32s(&[Some(3), None, None, None, None, None]),
            ),
            (
                "minWriterVersion",
                i32s(&[Some(7), None, None, None, None, None]),
            ),
            (
                "readerFeatures",
                list(&[Some(&["deletionVectors"]), None, None, None, None, None]),
            ),
            (
                "writerFeatures",
                list(&[
                    Some(&["deletionVectors", "x"]),
                    None,
                    None,
                    None,
                    None,
                    None,
                ]),
            ),
        ],
        &only(0),
    );
    let none6 = [None; 6];
    let format = strukt(
        vec![
            (
                "provider",
                strs(&[None, Some("parquet"), None, None, None, None]),
            ),
            ("options", map(&[None, Some(&[]), None, None, None, None])),
        ],
        &only(1),
    );
    let metadata = strukt(
        vec![
            ("id", strs(&[None, Some("id-1"), None, None, None, None])),
            ("name", strs(&none6)),
            ("description", strs(&none6)),
            ("format", format),
            (
                "schemaString",
                strs(&[None, Some("{}"), None, None, None, None]),
            ),
            (
                "partitionColumns",
                list(&[None, Some(&["p"]), None, None, None, None]),
            ),
            (
                "configuration",
                map(&[
                    None,
                    Some(&[("a", Some("1")), ("b", None)]),
                    None,
                    None,
                    None,
                    None,
                ]),
            ),
            (
                "createdTime",
                i64s(&[None, Some(5), None, None, None, None]),
            ),
        ],
        &only(1),
    );
    let dv = strukt(
        vec![
            (
                "storageType",
                strs(&[None, None, None, Some("u"), None, None]),
            ),
            (
                "pathOrInlineDv",
                strs(&[None, None, None, Some("ab^-aqEH"), None, None]),
            ),
            ("offset", i32s(&[None, None, None, Some(1), None, None])),
            (
                "sizeInBytes",
                i32s(&[None, None, None, Some(40), None, None]),
            ),
            (
                "cardinality",
                i64s(&[None, None, None, Some(6), None, None]),
            ),
        ],
        &only(3),
    );
    let add = strukt(
        vec![
            (
                "path",
                strs(&[
                    None,
                    None,
                    Some("p=1/a.parquet"),
                    Some("b.parquet"),
                    None,
                    None,
                ]),
            ),
            (
                "partitionValues",
                map(&[
                    None,
                    None,
                    Some(&[("p", Some("1"))]),
                    Some(&[("p", None)]),
                    None,
                    None,
                ]),
            ),
            ("size", i64s(&[None, None, Some(10), Some(20), None, None])),
            (
                "modificationTime",
                i64s(&[None, None, Some(1), Some(2), None, None]),
            ),
            (
                "dataChange",
                bools(&[None, None, Some(true), Some(false), None, None]),
            ),
            (
                "stats",
                strs(&[None, None, Some("{\"numRecords\":3}"), None, None, None]),
            ),
            (
                "tags",
                map(&[None, None, Some(&[("t", Some("v"))]), None, None, None]),
            ),
            ("deletionVector", dv),
        ],
        &[false, false, true, true, false, false],
    );
    let remove = strukt(
        vec![
            (
                "path",
                strs(&[None, None, None, None, Some("old.parquet"), None]),
            ),
            (
                "deletionTimestamp",
                i64s(&[None, None, None, None, Some(7), None]),
            ),
            (
                "dataChange",
                bools(&[None, None, None, None, Some(true), None]),
            ),
        ],
        &only(4),
    );
    let txn = strukt(
        vec![
            ("appId", strs(&[None, None, None, None, None, Some("app")])),
            ("version", i64s(&[None, None, None, None, None, Some(1)])),
        ],
        &only(5),
    );
    parquet_file(vec![
        ("txn", txn),
        ("add", add),
        ("remove", remove),
        ("metaData", metadata),
        ("protocol", protocol),
    ])
}

fn expected_classic() -> Vec<Action> {
    vec![
        Action::Protocol(Protocol {
            min_reader_version: 3,
            min_writer_version: 7,
            reader_features: Some(vec!["deletionVectors".into()]),
            writer_features: Some(vec!["deletionVectors".into(), "x".into()]),
        }),
        Action::Metadata(Metadata {
            id: "id-1".into(),
            name: None,
            description: None,
            format: Format {
                provider: "parquet".into(),
                options: HashMap::new(),
            },
            schema_string: "{}".into(),
            partition_columns: vec!["p".into()],
            configuration: HashMap::from([("a".to_string(), "1".to_string())]),
            created_time: Some(5),
        }),
        Action::Add(Add {
            path: "p=1/a.parquet".into(),
            partition_values: pv(&[("p", Some("1"))]),
            size: 10,
            modification_time: 1,
            data_change: true,
            stats: Some("{\"numRecords\":3}".into()),
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
        }),
        Action::Add(Add {
            path: "b.parquet".into(),
            partition_values: pv(&[("p", None)]),
            size: 20,
            modification_time: 2,
            data_change: false,
            stats: None,
            tags: None,
            deletion_vector: Some(DeletionVectorDescriptor {
                storage_type: "u".into(),
                path_or_inline_dv: "ab^-aqEH".into(),
                offset: Some(1),
                size_in_bytes: 40,
                cardinality: 6,
            }),
            base_row_id: None,
            default_row_commit_version: None,
        }),
        Action::Remove(Remove {
            path: "old.parquet".into(),
            deletion_timestamp: Some(7),
            data_change: true,
            deletion_vector: None,
        }),
    ]
}

#[test]
fn classic_checkpoint_decodes_every_kind() {
    let actions = parquet_actions("c.parquet", classic_checkpoint(), ALL).unwrap();
    assert_eq!(actions, expected_classic());
}

/// Reads `data` with a [`ParquetRead`] asking first for `tail` bytes, answering each request
/// from `data`: the actions and the ranges asked for.
fn read_by_ranges(
    data: &Bytes,
    want: ActionKinds,
    tail: u64,
) -> (Result<Vec<Action>>, Vec<Range<u64>>) {
    let mut read = ParquetRead::new("c", data.len() as u64, want, tail);
    let mut asked = Vec::new();
    for _ in 0..10 {
        match read.poll() {
            Err(e) => return (Err(e), asked),
            Ok(Step::Ready(actions)) => return (Ok(actions), asked),
            Ok(Step::Need(ranges)) => {
                for r in ranges {
                    asked.push(r.clone());
                    let bytes = data.slice(r.start as usize..r.end as usize);
                    if let Err(e) = read.push_range(r, bytes) {
                        return (Err(e), asked);
                    }
                }
            }
        }
    }
    panic!("the read does not end");
}

#[test]
fn a_read_by_ranges_gives_what_a_whole_read_gives() {
    let data = classic_checkpoint();
    let size = data.len() as u64;
    let kinds = [
        ALL,
        ActionKinds::ADD,
        ActionKinds::PROTOCOL | ActionKinds::METADATA,
    ];
    for want in kinds {
        let whole = parquet_actions("c", data.clone(), want).unwrap();
        for tail in [0, 8, 100, size / 2, size, 10 * size] {
            let (got, asked) = read_by_ranges(&data, want, tail);
            assert_eq!(got.unwrap(), whole, "tail {tail}");
            assert!(asked.iter().all(|r| r.start < r.end && r.end <= size));
            for (i, r) in asked.iter().enumerate() {
                let again = asked[..i]
                    .iter()
                    .any(|a| a.start <= r.start && r.end <= a.end);
                assert!(!again, "tail {tail}: {r:?} asked for twice in {asked:?}");
            }
        }
    }
    // A tail as large as the file: one request, the whole file.
    let (_, asked) = read_by_ranges(&data, ALL, size);
    assert_eq!(asked, vec![0..size]);
    // Only the protocol: the footer and its column chunks, not the file.
    let (_, asked) = read_by_ranges(&data, ActionKinds::PROTOCOL, 8);
    let bytes: u64 = asked.iter().map(|r| r.end - r.start).sum();
    assert!(bytes < size, "{bytes} of {size} bytes: {asked:?}");
}

#[test]
fn a_read_by_ranges_refuses_bad_bytes_and_a_footer_longer_than_the_file() {
    let data = classic_checkpoint();
    let size = data.len() as u64;
    let mut read = ParquetRead::new("c", size, ALL, 64);
    let outside = read.push_range(size..size + 1, Bytes::from_static(b"x"));
    assert_eq!(outside.err().map(|e| e.code()), Some("invalid_log"));
    let short = read.push_range(0..4, Bytes::from_static(b"x"));
    assert_eq!(short.err().map(|e| e.code()), Some("invalid_log"));
    let mut bad = data.to_vec();
    let n = bad.len();
    bad[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = parquet_actions("c", Bytes::from(bad), ALL).err();
    assert_eq!(err.map(|e| e.code()), Some("parquet"));
}

#[test]
fn an_action_column_that_is_not_a_struct_is_refused() {
    // An `add` column of strings: not a table without files.
    let data = parquet_file(vec![("add", strs(&[Some("a.parquet"), None]))]);
    let err = parquet_actions("c.parquet", data.clone(), ALL).err();
    let text = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(err.map(|e| e.code()), Some("invalid_log"), "{text}");
    assert!(
        text.contains("'add'") && text.contains("c.parquet"),
        "{text}"
    );
    // A kind that is not wanted is not looked at.
    let got = parquet_actions("c.parquet", data, ActionKinds::PROTOCOL);
    assert_eq!(got.ok(), Some(Vec::new()));
}

#[test]
fn only_the_wanted_kinds_come_out() {
    let data = classic_checkpoint();
    let got = parquet_actions("c", data.clone(), ActionKinds::ADD).unwrap();
    assert_eq!(got, expected_classic()[2..4].to_vec());
    let got = parquet_actions(
        "c",
        data.clone(),
        ActionKinds::PROTOCOL | ActionKinds::METADATA,
    )
    .unwrap();
    assert_eq!(got, expected_classic()[..2].to_vec());
    let got = parquet_actions("c", data.clone(), ActionKinds::REMOVE).unwrap();
    assert_eq!(got, expected_classic()[4..].to_vec());
    // Kinds the file has no column for: nothing, and no error.
    let got = parquet_actions(
        "c",
        data,
        ActionKinds::SIDECAR | ActionKinds::CHECKPOINT_METADATA,
    )
    .unwrap();
    assert!(got.is_empty());
}

#[test]
fn wanted_leaves_skip_unused_add_fields() {
    let data = classic_checkpoint();
    let b = ParquetRecordBatchReaderBuilder::try_new(data).unwrap();
    let schema = b.parquet_schema();
    let names: Vec<String> = wanted_leaves(schema, ActionKinds::ADD)
        .into_iter()
        .map(|i| schema.column(i).path().string())
        .collect();
    assert!(names.contains(&"add.path".to_string()));
    assert!(names.iter().any(|n| n.starts_with("add.partitionValues.")));
    assert!(names.contains(&"add.deletionVector.cardinality".to_string()));
    assert!(!names.iter().any(|n| n.starts_with("add.tags")));
    assert!(!names.iter().any(|n| !n.starts_with("add.")));
}

#[test]
fn v2_checkpoint_sidecars_and_checkpoint_metadata() {
    let sidecar = strukt(
        vec![
            ("path", strs(&[Some("a.parquet"), None, None])),
            ("sizeInBytes", i64s(&[Some(100), None, None])),
            ("modificationTime", i64s(&[Some(9), None, None])),
            ("tags", map(&[None, None, None])),
        ],
        &[true, false, false],
    );
    let cm = strukt(
        vec![
            ("version", i64s(&[None, Some(4), None])),
            ("tags", map(&[None, None, None])),
        ],
        &[false, true, false],
    );
    let add = strukt(
        vec![
            ("path", strs(&[None, None, Some("x.parquet")])),
            ("size", i64s(&[None, None, Some(1)])),
        ],
        &[false, false, true],
    );
    let data = parquet_file(vec![
        ("add", add),
        ("checkpointMetadata", cm),
        ("sidecar", sidecar),
    ]);
    let got = parquet_actions("v2", data, ALL).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(
        got[0],
        Action::Sidecar(Sidecar {
            path: "a.parquet".into(),
            size_in_bytes: 100,
            modification_time: 9
        })
    );
    assert_eq!(
        got[1],
        Action::CheckpointMetadata(CheckpointMetadata { version: 4 })
    );
    match &got[2] {
        // Missing optional columns read as defaults.
        Action::Add(a) => {
            assert_eq!(
                (a.path.as_str(), a.size, a.modification_time),
                ("x.parquet", 1, 0)
            );
            assert!(a.partition_values.is_empty() && !a.data_change && a.stats.is_none());
        }
        other => panic!("expected an add, got {other:?}"),
    }
}

#[test]
fn stats_are_rebuilt_from_stats_parsed() {
    let ts = TimestampMicrosecondArray::from(vec![Some(1_600_000_000_123_000), Some(-1_000)])
        .with_timezone("UTC");
    let dec = Decimal128Array::from(vec![Some(12345), Some(-5)])
        .with_precision_and_scale(5, 2)
        .unwrap();
    let min_values = strukt(
        vec![
            ("a", i32s(&[Some(1), None])),
            ("s", strs(&[Some("x\"y"), None])),
            ("ts", Arc::new(ts)),
            (
                "d",
                Arc::new(Date32Array::from(vec![Some(19_000), Some(0)])),
            ),
            ("dec", Arc::new(dec)),
            (
                "nested",
                strukt(
                    vec![(
                        "x",
                        Arc::new(Float64Array::from(vec![Some(1.5), Some(f64::NAN)])),
                    )],
                    &[true, true],
                ),
            ),
            (
                "bin",
                Arc::new(BinaryArray::from(vec![Some(&b"z"[..]), None])),
            ),
        ],
        &[true, true],
    );
    let null_count = strukt(
        vec![
            ("a", i64s(&[Some(0), Some(7)])),
            (
                "nested",
                strukt(vec![("x", i64s(&[Some(0), Some(0)]))], &[true, true]),
            ),
        ],
        &[true, true],
    );
    let stats_parsed = strukt(
        vec![
            ("numRecords", i64s(&[Some(5), Some(7)])),
            ("minValues", min_values),
            ("nullCount", null_count),
            ("tightBounds", bools(&[Some(true), None])),
        ],
        &[true, true],
    );
    let add = strukt(
        vec![
            ("path", strs(&[Some("a"), Some("b")])),
            ("size", i64s(&[Some(1), Some(2)])),
            ("stats_parsed", stats_parsed),
        ],
        &[true, true],
    );
    let got = parquet_actions("s", parquet_file(vec![("add", add)]), ActionKinds::ADD).unwrap();
    let stats: Vec<String> = got
        .iter()
        .map(|a| match a {
            Action::Add(a) => stats_json(a).unwrap_or_default(),
            _ => String::new(),
        })
        .collect();
    let parsed: Vec<Value> = stats
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
    assert_eq!(
        parsed[0],
        json!({"numRecords": 5, "minValues": {"a": 1, "s": "x\"y",
            "ts": "2020-09-13T12:26:40.123Z", "d": "2022-01-08", "dec": 123.45,
            "nested": {"x": 1.5}}, "nullCount": {"a": 0, "nested": {"x": 0}},
            "tightBounds": true})
    );
    assert_eq!(
        parsed[1],
        json!({"numRecords": 7, "minValues": {"ts": "1969-12-31T23:59:59.999Z",
            "d": "1970-01-01", "dec": -0.05, "nested": {}},
            "nullCount": {"a": 7, "nested": {"x": 0}}})
    );
    assert!(stats[1].contains("\"dec\":-0.05"), "{}", stats[1]);
}

#[test]
fn stats_string_wins_over_stats_parsed() {
    let stats_parsed = strukt(vec![("numRecords", i64s(&[Some(5)]))], &[true]);
    let add = strukt(
        vec![
            ("path", strs(&[Some("a")])),
            ("size", i64s(&[Some(1)])),
            ("stats", strs(&[Some("{\"numRecords\":1}")])),
            ("stats_parsed", stats_parsed),
        ],
        &[true],
    );
    let data = parquet_file(vec![("add", add)]);
    let got = parquet_actions("s", data, ActionKinds::ADD).unwrap();
    match &got[..] {
        [Action::Add(a)] => assert_eq!(stats_json(a).as_deref(), Some("{\"numRecords\":1}")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_string_and_map_layouts() {
    // LargeUtf8 and Utf8View strings (kept by the embedded Arrow schema), and a map written
    // as a plain list of key/value structs.
    let entries = StructArray::try_new(
        Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, true),
        ]),
        vec![strs(&[Some("p"), Some("q")]), strs(&[Some("1"), None])],
        None,
    )
    .unwrap();
    let item = Field::new("item", entries.data_type().clone(), false);
    let kv_list = ListArray::try_new(
        Arc::new(item),
        OffsetBuffer::from_lengths([2, 0]),
        Arc::new(entries),
        None,
    )
    .unwrap();
    let add = strukt(
        vec![
            (
                "path",
                Arc::new(LargeStringArray::from(vec![Some("l1"), Some("l2")])),
            ),
            ("partitionValues", Arc::new(kv_list)),
            ("size", i64s(&[Some(1), Some(2)])),
            (
                "stats",
                Arc::new(StringViewArray::from(vec![Some("{}"), None])),
            ),
        ],
        &[true, true],
    );
    let got = parquet_actions("l", parquet_file(vec![("add", add)]), ALL).unwrap();
    let adds: Vec<&Add> = got
        .iter()
        .filter_map(|a| match a {
            Action::Add(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(adds.len(), 2);
    assert_eq!(adds[0].path, "l1");
    assert_eq!(
        adds[0].partition_values,
        pv(&[("p", Some("1")), ("q", None)])
    );
    assert_eq!(stats_json(adds[0]).as_deref(), Some("{}"));
    assert_eq!(adds[1].path, "l2");
    assert!(adds[1].partition_values.is_empty());
}

#[test]
fn malformed_checkpoints_fail_with_typed_errors() {
    let add = strukt(
        vec![
            ("path", strs(&[Some("a"), None])),
            ("size", i64s(&[Some(1), Some(2)])),
        ],
        &[true, true],
    );
    let err = parquet_actions("bad.parquet", parquet_file(vec![("add", add)]), ALL).unwrap_err();
    assert_eq!(err.code(), "invalid_log");
    assert!(err.to_string().contains("row 1: add.path is null"), "{err}");

    let add = strukt(vec![("path", i64s(&[Some(1)]))], &[true]);
    let err = parquet_actions("bad.parquet", parquet_file(vec![("add", add)]), ALL).unwrap_err();
    assert_eq!(err.code(), "invalid_log");
    assert!(err.to_string().contains("add.path"), "{err}");

    let err = parquet_actions("junk.parquet", Bytes::from_static(b"not parquet"), ALL).unwrap_err();
    assert_eq!(err.code(), "parquet");
    assert_eq!(err.phase(), Phase::Load);
    assert!(err.to_string().contains("junk.parquet"));
}

#[test]
fn json_lines_decode_with_line_numbers() {
    let data = b"{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\r\n\n  \n\
{\"txn\":{\"appId\":\"a\",\"version\":1}}\n\
{\"add\":{\"path\":\"a\",\"partitionValues\":{},\"size\":1,\"modificationTime\":0,\"dataChange\":true}}";
    let got = json_actions("00.json", data).unwrap();
    assert_eq!(got.len(), 2);
    assert!(matches!(&got[0], Action::Protocol(p) if p.min_writer_version == 2));
    assert!(matches!(&got[1], Action::Add(a) if a.path == "a"));
    assert!(json_actions("e.json", b"").unwrap().is_empty());

    let err = json_actions(
        "01.json",
        b"{\"add\":{\"path\":\"a\",\"size\":1}}\n\n{\"add\":",
    )
    .unwrap_err();
    assert_eq!(err.code(), "invalid_log");
    assert!(err.to_string().contains("01.json"), "{err}");
    assert!(err.to_string().contains("line 3:"), "{err}");
    let gz = json_actions("02.json", b"\x1f\x8b\x08\x00\x00\x00\x00\x00").unwrap_err();
    assert!(gz.to_string().contains("gzip-compressed"), "{gz}");
}

/// The statistics of `add` as the protocol's JSON text.
fn stats_json(add: &Add) -> Option<String> {
    add.stats.as_ref()?.json().map(|j| j.into_owned())
}

#[test]
fn a_log_line_past_the_maximum_is_a_limit_not_an_allocation() {
    let long = format!(
        "{{\"commitInfo\":{{\"note\":\"{}\"}}}}\n",
        "x".repeat(crate::limits::MAX_LOG_LINE_BYTES)
    );
    let err = json_actions("_delta_log/00000000000000000001.json", long.as_bytes()).err();
    assert_eq!(
        err.as_ref().map(|e| e.code()),
        Some("limit_exceeded"),
        "{err:?}"
    );
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.contains("log line length") && text.contains("00000000000000000001.json"),
        "{text}"
    );
}

#[test]
fn blank_lines_reserve_nothing_per_line() {
    // Ten million newlines: one reservation per line would be 2.4 GB of actions.
    let blank = vec![b'\n'; 10_000_000];
    let actions = json_actions("_delta_log/00000000000000000001.json", &blank);
    let capacity = actions.map(|a| a.capacity()).unwrap_or(usize::MAX);
    assert!(capacity <= blank.len() / 64 + 1, "{capacity}");
}
