//! Tests of checkpoint and commit decoding: small checkpoints written in memory with
//! `ArrowWriter`, and the real checkpoints of the shared corpus.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // tests: files, clocks, block_on

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
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
            Action::Add(a) => a.stats.clone().unwrap_or_default(),
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
        [Action::Add(a)] => assert_eq!(a.stats.as_deref(), Some("{\"numRecords\":1}")),
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
    assert_eq!(adds[0].stats.as_deref(), Some("{}"));
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
}

// ---- the shared corpus -------------------------------------------------------------------

fn corpus_tables() -> Option<PathBuf> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/tables"
    ));
    dir.is_dir().then(|| dir.to_path_buf())
}

/// Every checkpoint part and sidecar Parquet file of the corpus.
fn corpus_checkpoint_files(tables: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(tables)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for t in dirs {
        for sub in ["_delta_log", "_delta_log/_sidecars"] {
            let Ok(rd) = std::fs::read_dir(t.join(sub)) else {
                continue;
            };
            for f in rd {
                let f = f.unwrap().path();
                let name = f.file_name().unwrap().to_string_lossy().to_string();
                let is_checkpoint = name.contains(".checkpoint.") || sub.ends_with("_sidecars");
                if is_checkpoint && name.ends_with(".parquet") && !name.starts_with("._") {
                    files.push(f);
                }
            }
        }
    }
    files.sort();
    files
}

fn kind_name(a: &Action) -> &'static str {
    match a {
        Action::Add(_) => "add",
        Action::Remove(_) => "remove",
        Action::Metadata(_) => "metaData",
        Action::Protocol(_) => "protocol",
        Action::Sidecar(_) => "sidecar",
        Action::CheckpointMetadata(_) => "checkpointMetadata",
        Action::CommitInfo(_) => "commitInfo",
    }
}

/// Non-null rows per top-level column, read without projection.
fn plain_counts(data: Bytes) -> BTreeMap<String, usize> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(data)
        .unwrap()
        .build()
        .unwrap();
    let mut counts = BTreeMap::new();
    for batch in reader {
        let batch = batch.unwrap();
        for name in [
            "add",
            "remove",
            "metaData",
            "protocol",
            "sidecar",
            "checkpointMetadata",
        ] {
            if let Some(c) = batch.column_by_name(name) {
                *counts.entry(name.to_string()).or_insert(0) += c.len() - c.null_count();
            }
        }
    }
    counts.retain(|_, n| *n > 0);
    counts
}

#[test]
fn corpus_checkpoints_match_a_plain_read() {
    let Some(tables) = corpus_tables() else {
        eprintln!("corpus not found; skipping");
        return;
    };
    let files = corpus_checkpoint_files(&tables);
    assert!(files.len() > 90, "found only {} files", files.len());
    let mut total_adds = 0;
    let mut no_schema = 0;
    for f in &files {
        let data = Bytes::from(std::fs::read(f).unwrap());
        let name = f.display().to_string();
        let actions =
            parquet_actions(&name, data.clone(), ALL).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Synthetic corpus tables whose metaData lacks schemaString (as their commits do).
        no_schema += actions
            .iter()
            .filter(|a| matches!(a, Action::Metadata(m) if m.schema_string.is_empty()))
            .count();
        let mut counts = BTreeMap::new();
        for a in &actions {
            *counts.entry(kind_name(a).to_string()).or_insert(0) += 1;
            if let Action::Add(add) = a {
                assert!(!add.path.is_empty() && add.size >= 0, "{name}: {add:?}");
                if let Some(s) = &add.stats {
                    let v: Value = serde_json::from_str(s)
                        .unwrap_or_else(|e| panic!("{name}: stats {s}: {e}"));
                    assert!(v.is_object(), "{name}: {s}");
                }
            }
        }
        assert_eq!(counts, plain_counts(data), "{name}");
        total_adds += counts.get("add").copied().unwrap_or(0);
    }
    assert!(total_adds > 500, "{total_adds}");
    assert_eq!(no_schema, 2);
}

#[test]
fn corpus_v2_checkpoint_lists_its_sidecars() {
    let Some(tables) = corpus_tables() else {
        return;
    };
    let log = tables.join("kernel__v2-checkpoints-parquet-with-sidecars/_delta_log");
    let top =
        log.join("00000000000000000006.checkpoint.f15b9025-707a-4c73-aac0-31dfcbd29aa6.parquet");
    let data = Bytes::from(std::fs::read(&top).unwrap());
    let actions = parquet_actions("top", data, ALL).unwrap();
    let mut sidecar_adds = 0;
    let mut sidecars = 0;
    for a in &actions {
        match a {
            Action::Sidecar(s) => {
                sidecars += 1;
                let file = log.join("_sidecars").join(&s.path);
                let bytes = std::fs::read(&file).unwrap();
                assert_eq!(bytes.len() as i64, s.size_in_bytes, "{}", s.path);
                let inner = parquet_actions(&s.path, Bytes::from(bytes), ActionKinds::ADD).unwrap();
                sidecar_adds += inner.iter().filter(|a| matches!(a, Action::Add(_))).count();
            }
            Action::CheckpointMetadata(c) => assert_eq!(c.version, 6),
            Action::Protocol(p) => assert!(p.has_writer_feature("v2Checkpoint")),
            _ => {}
        }
    }
    assert_eq!(sidecars, 2);
    assert_eq!(sidecar_adds, 101);
    assert!(actions.iter().any(|a| matches!(a, Action::Metadata(_))));
}

/// Flattens a JSON object to `a.b.c -> leaf`.
fn leaves(v: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                leaves(v, &format!("{prefix}{k}."), out);
            }
        }
        other => {
            out.insert(prefix.trim_end_matches('.').to_string(), other.clone());
        }
    }
}

/// Checkpoints that store statistics only as `stats_parsed`: the rebuilt JSON must agree with
/// the `stats` the commits wrote for the same files.
#[test]
fn corpus_struct_only_stats_agree_with_commit_stats() {
    let Some(tables) = corpus_tables() else {
        return;
    };
    let mut compared = 0;
    let mut timestamps = 0;
    for f in corpus_checkpoint_files(&tables) {
        let data = Bytes::from(std::fs::read(&f).unwrap());
        let b = ParquetRecordBatchReaderBuilder::try_new(data.clone()).unwrap();
        let paths: Vec<String> = b
            .parquet_schema()
            .columns()
            .iter()
            .map(|c| c.path().string())
            .collect();
        if paths.iter().any(|p| p == "add.stats")
            || !paths.iter().any(|p| p.starts_with("add.stats_parsed."))
        {
            continue;
        }
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let version: u64 = name[..20].parse().unwrap();
        let log = if f.parent().unwrap().ends_with("_sidecars") {
            f.parent().unwrap().parent().unwrap().to_path_buf()
        } else {
            f.parent().unwrap().to_path_buf()
        };
        let mut commit_stats = HashMap::new();
        for v in 0..=version {
            let Ok(bytes) = std::fs::read(log.join(format!("{v:020}.json"))) else {
                continue;
            };
            for a in json_actions("c", &bytes).unwrap() {
                if let Action::Add(a) = a {
                    if let Some(s) = a.stats {
                        commit_stats.insert(a.path, s);
                    }
                }
            }
        }
        for a in parquet_actions(&name, data, ActionKinds::ADD).unwrap() {
            let Action::Add(a) = a else { continue };
            let Some(theirs) = commit_stats.get(&a.path) else {
                continue;
            };
            let ours = a
                .stats
                .unwrap_or_else(|| panic!("{name}: {} has no stats", a.path));

            let (mut o, mut t) = (BTreeMap::new(), BTreeMap::new());
            leaves(&serde_json::from_str(&ours).unwrap(), "", &mut o);
            leaves(&serde_json::from_str(theirs).unwrap(), "", &mut t);
            assert!(o.contains_key("numRecords"), "{ours}");
            for (k, v) in &o {
                let tv = t
                    .get(k)
                    .unwrap_or_else(|| panic!("{name}: {k} not in {theirs}"));
                let same = match (v.as_f64(), tv.as_f64()) {
                    (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                    _ => v == tv,
                };
                assert!(same, "{name} {}: {k}: ours {v}, commit {tv}", a.path);
                if v.as_str().is_some_and(|s| s.ends_with('Z')) {
                    timestamps += 1;
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "compared {compared}");
    assert!(timestamps > 0);
}

/// Writes a Spark-shaped checkpoint (protocol, metaData, then one row per add) of `adds`;
/// `stats` gives each add's `stats` string column and/or `stats_parsed` struct.
fn stress_checkpoint(
    protocol: &Protocol,
    metadata: &Metadata,
    adds: &[&Add],
    stats: Option<ArrayRef>,
    stats_parsed: Option<ArrayRef>,
) -> Bytes {
    let n = adds.len() + 2;
    let only = |row: usize| -> Vec<bool> { (0..n).map(|i| i == row).collect() };
    let at = |row: usize, v: &str| -> ArrayRef {
        strs(&(0..n).map(|i| (i == row).then_some(v)).collect::<Vec<_>>())
    };
    let protocol = strukt(
        vec![
            ("minReaderVersion", {
                let v = i32::try_from(protocol.min_reader_version).unwrap();
                i32s(&(0..n).map(|i| (i == 0).then_some(v)).collect::<Vec<_>>())
            }),
            ("minWriterVersion", {
                let v = i32::try_from(protocol.min_writer_version).unwrap();
                i32s(&(0..n).map(|i| (i == 0).then_some(v)).collect::<Vec<_>>())
            }),
        ],
        &only(0),
    );
    let metadata = strukt(
        vec![
            ("id", at(1, &metadata.id)),
            ("schemaString", at(1, &metadata.schema_string)),
            (
                "format",
                strukt(vec![("provider", at(1, "parquet"))], &only(1)),
            ),
            ("partitionColumns", {
                let cols: Vec<&str> = metadata
                    .partition_columns
                    .iter()
                    .map(|s| s.as_str())
                    .collect();
                let rows: Vec<Option<&[&str]>> =
                    (0..n).map(|i| (i == 1).then_some(&cols[..])).collect();
                list(&rows)
            }),
        ],
        &only(1),
    );
    let mut pv = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    let mut path = StringBuilder::new();
    let (mut size, mut mtime, mut change) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..2 {
        pv.append(false).unwrap();
        path.append_null();
        size.push(None);
        mtime.push(None);
        change.push(None);
    }
    for a in adds {
        for (k, v) in &a.partition_values {
            pv.keys().append_value(k);
            pv.values().append_option(v.as_deref());
        }
        pv.append(true).unwrap();
        path.append_value(&a.path);
        size.push(Some(a.size));
        mtime.push(Some(a.modification_time));
        change.push(Some(a.data_change));
    }
    let mut add_fields: Vec<(&str, ArrayRef)> = vec![
        ("path", Arc::new(path.finish())),
        ("partitionValues", Arc::new(pv.finish())),
        ("size", i64s(&size)),
        ("modificationTime", i64s(&mtime)),
        ("dataChange", bools(&change)),
        ("tags", map(&vec![None; n])),
        (
            "deletionVector",
            strukt(
                vec![
                    ("storageType", strs(&vec![None; n])),
                    ("pathOrInlineDv", strs(&vec![None; n])),
                    ("offset", i32s(&vec![None; n])),
                    ("sizeInBytes", i32s(&vec![None; n])),
                    ("cardinality", i64s(&vec![None; n])),
                ],
                &vec![false; n],
            ),
        ),
    ];
    if let Some(s) = stats {
        add_fields.push(("stats", s));
    }
    if let Some(s) = stats_parsed {
        add_fields.push(("stats_parsed", s));
    }
    let valid: Vec<bool> = (0..n).map(|i| i >= 2).collect();
    let add = strukt(add_fields, &valid);
    let fields = vec![("protocol", protocol), ("metaData", metadata), ("add", add)];
    let schema = Arc::new(Schema::new(
        fields
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch =
        RecordBatch::try_new(schema.clone(), fields.into_iter().map(|c| c.1).collect()).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    Bytes::from(out)
}

/// The stress table `kernel__300k-add-files-100-col-partitioned` has only commits: decode
/// them, write them as one checkpoint (without stats, with 32-column stats strings, and with
/// only a 32-column `stats_parsed`), and time decoding each.
/// Run: `cargo test --release --lib stress_300k -- --ignored --nocapture`.
#[test]
#[ignore = "stress: about 1 GB of memory"]
fn stress_300k_adds() {
    use std::time::Instant;
    let Some(tables) = corpus_tables() else {
        return;
    };
    let log = tables.join("kernel__300k-add-files-100-col-partitioned/_delta_log");
    let t = Instant::now();
    let mut bytes = 0;
    let mut actions = Vec::new();
    for v in 0..=4 {
        let data = std::fs::read(log.join(format!("{v:020}.json"))).unwrap();
        bytes += data.len();
        actions.extend(json_actions("c", &data).unwrap());
    }
    eprintln!(
        "json_actions: {} actions from {:.1} MB of commits in {:?}",
        actions.len(),
        bytes as f64 / 1e6,
        t.elapsed()
    );
    let protocol = actions.iter().find_map(|a| match a {
        Action::Protocol(p) => Some(p.clone()),
        _ => None,
    });
    let metadata = actions.iter().find_map(|a| match a {
        Action::Metadata(m) => Some(m.clone()),
        _ => None,
    });
    let (protocol, metadata) = (protocol.unwrap(), metadata.unwrap());
    let adds: Vec<&Add> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Add(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(adds.len(), 300_000);
    let n = adds.len() + 2;
    const COLS: usize = 32;
    let value = |row: usize, col: usize| (row * 31 + col * 7) as i64;
    let mut stats = StringBuilder::new();
    stats.append_null();
    stats.append_null();
    for r in 0..adds.len() {
        let obj = |f: &dyn Fn(usize) -> i64| {
            (0..COLS)
                .map(|c| format!("\"col_{c}\":{}", f(c)))
                .collect::<Vec<_>>()
                .join(",")
        };
        stats.append_value(format!(
            "{{\"numRecords\":{},\"minValues\":{{{}}},\"maxValues\":{{{}}},\"nullCount\":{{{}}}}}",
            r + 1,
            obj(&|c| value(r, c)),
            obj(&|c| value(r, c) + 1000),
            obj(&|_| 0)
        ));
    }
    let stats: ArrayRef = Arc::new(stats.finish());
    let parsed = {
        let column = |offset: i64| -> ArrayRef {
            let fields = (0..COLS)
                .map(|c| {
                    let v: Vec<Option<i64>> = (0..n)
                        .map(|i| (i >= 2).then(|| value(i - 2, c) + offset))
                        .collect();
                    (format!("col_{c}"), i64s(&v))
                })
                .collect::<Vec<_>>();
            let fields = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            strukt(fields, &vec![true; n])
        };
        let nrec: Vec<Option<i64>> = (0..n).map(|i| (i >= 2).then(|| (i - 1) as i64)).collect();
        let zero: Vec<Option<i64>> = vec![Some(0); n];
        let nulls = (0..COLS)
            .map(|c| (format!("col_{c}"), i64s(&zero)))
            .collect::<Vec<_>>();
        let nulls = nulls.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let valid: Vec<bool> = (0..n).map(|i| i >= 2).collect();
        strukt(
            vec![
                ("numRecords", i64s(&nrec)),
                ("minValues", column(0)),
                ("maxValues", column(1000)),
                ("nullCount", strukt(nulls, &vec![true; n])),
            ],
            &valid,
        )
    };
    let variants: [(&str, Option<ArrayRef>, Option<ArrayRef>); 3] = [
        ("no stats", None, None),
        ("stats strings (32 cols)", Some(stats), None),
        ("stats_parsed only (32 cols)", None, Some(parsed)),
    ];
    for (label, stats, parsed) in variants {
        let file = stress_checkpoint(&protocol, &metadata, &adds, stats, parsed);
        let size = file.len();
        let want = ActionKinds::ADD | ActionKinds::PROTOCOL | ActionKinds::METADATA;
        // The Parquet decoding alone, with the same projection, for comparison.
        let t = Instant::now();
        let b = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
        let mask = parquet::arrow::ProjectionMask::leaves(
            b.parquet_schema(),
            wanted_leaves(b.parquet_schema(), want),
        );
        let rows: usize = b
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(rows, n);
        let decode_only = t.elapsed();
        let t = Instant::now();
        let got = parquet_actions("stress", file, want).unwrap();
        let elapsed = t.elapsed();
        let decoded: Vec<&Add> = got
            .iter()
            .filter_map(|a| match a {
                Action::Add(a) => Some(a),
                _ => None,
            })
            .collect();
        assert_eq!(decoded.len(), 300_000);
        assert_eq!(got.len(), 300_002);
        assert_eq!(decoded[0].path, adds[0].path);
        assert_eq!(
            decoded[299_999].partition_values,
            adds[299_999].partition_values
        );
        if label != "no stats" {
            let s: Value = serde_json::from_str(decoded[7].stats.as_deref().unwrap()).unwrap();
            assert_eq!(s["minValues"]["col_3"], json!(value(7, 3)));
            assert_eq!(s["maxValues"]["col_31"], json!(value(7, 31) + 1000));
        }
        eprintln!(
            "parquet_actions, {label}: {:.1} MB checkpoint, 300000 adds in {elapsed:?} \
             (Parquet decoding alone: {decode_only:?})",
            size as f64 / 1e6
        );
    }
}
