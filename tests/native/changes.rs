//! `DeltaTable::changes` (the change data feed) on tables the fixture writer builds, where
//! every expected row is known: inserts and deletes derived from `add` and `remove`, a
//! deletion vector changed in place (rows deleted and rows restored), change data files
//! with their own `_change_type`, a partitioned table, projections and a limit, commit
//! times; and ranges that must fail whole (the feed off, a schema change, a missing commit,
//! a start past the end). `dar changes` prints the same rows.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use serde_json::{json, Value};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn schema_json(with_change_type: bool) -> Value {
    let mut fields = vec![
        json!({"name": "id", "type": "long", "nullable": true, "metadata": {}}),
        json!({"name": "p", "type": "string", "nullable": true, "metadata": {}}),
    ];
    if with_change_type {
        fields.push(
            json!({"name": "_change_type", "type": "string", "nullable": true, "metadata": {}}),
        );
    }
    json!({"type": "struct", "fields": fields})
}

/// `id` values in a batch of the data file schema (`id`, and `_change_type` for a change
/// data file); the partition column `p` is not in the files.
fn batch(ids: &[i64], change_types: Option<&[&str]>) -> RecordBatch {
    let mut fields = vec![Field::new("id", DataType::Int64, true)];
    let mut columns: Vec<Arc<dyn Array>> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    if let Some(types) = change_types {
        fields.push(Field::new("_change_type", DataType::Utf8, true));
        columns.push(Arc::new(StringArray::from(types.to_vec())));
    }
    ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns))
}

const PROTOCOL: &str = r#"{"minReaderVersion": 3, "minWriterVersion": 7,
    "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors", "changeDataFeed"]}"#;

/// The table every test reads (partitioned by `p`):
/// - v0: created with the feed on; `a` (p=x) holds ids 0..5;
/// - v1: `b` (p=y) holds ids 10..13;
/// - v2: `a` removed (ids 0..5 deleted);
/// - v3: `b` removed and added again with a deletion vector of rows 0 and 2 (ids 10, 12);
/// - v4: `b` again, its vector now rows 2 and 3 (id 10 restored, id 13 deleted);
/// - v5: a MERGE that wrote a change data file (update of id 11 to 111, insert of 20) and
///   also an `add`, which the feed ignores;
/// - v6: a data-less commit (OPTIMIZE-like, `dataChange` false).
fn table() -> TableWriter {
    let mut w = TableWriter::new();
    let mut actions = TableWriter::create_actions(
        &schema_json(false),
        &["p"],
        json!({"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"}),
        ok(serde_json::from_str(PROTOCOL)),
    );
    let a = ok(w.write_data_file(
        "p=x/a.parquet",
        &batch(&[0, 1, 2, 3, 4], None),
        json!({"p": "x"}),
        None,
    ));
    actions.push(a.clone());
    w.commit("WRITE", actions);
    let b = ok(w.write_data_file(
        "p=y/b.parquet",
        &batch(&[10, 11, 12, 13], None),
        json!({"p": "y"}),
        None,
    ));
    w.commit("WRITE", vec![b.clone()]);
    w.commit("DELETE", vec![w.remove_action(&a)]);

    let with_dv = |w: &TableWriter, n: u32, rows: &[u64]| {
        let (file, size) = delta_arrow_reader::fixture::deletion_vector_file(rows.iter().copied());
        let (descriptor, path) =
            delta_arrow_reader::fixture::uuid_deletion_vector(n, size, rows.len() as u64);
        w.store().put(&path, file);
        let mut add = b.clone();
        add["add"]["deletionVector"] = descriptor;
        add
    };
    let b3 = with_dv(&w, 1, &[0, 2]);
    w.commit("DELETE", vec![w.remove_action(&b), b3.clone()]);
    let b4 = with_dv(&w, 2, &[2, 3]);
    let mut removed = w.remove_action(&b3);
    removed["remove"]["deletionVector"] = b3["add"]["deletionVector"].clone();
    w.commit("RESTORE", vec![removed, b4]);

    let cdc_batch = batch(
        &[11, 111, 20],
        Some(&["update_preimage", "update_postimage", "insert"]),
    );
    let cdc = ok(w.write_data_file(
        "_change_data/p=y/c.parquet",
        &cdc_batch,
        json!({"p": "y"}),
        None,
    ));
    let cdc = json!({"cdc": {
        "path": cdc["add"]["path"],
        "partitionValues": {"p": "y"},
        "size": cdc["add"]["size"],
        "dataChange": false,
    }});
    let merged = ok(w.write_data_file(
        "p=y/d.parquet",
        &batch(&[111, 20], None),
        json!({"p": "y"}),
        None,
    ));
    w.commit("MERGE", vec![cdc, merged]);
    let mut compacted =
        ok(w.write_data_file("p=y/e.parquet", &batch(&[1], None), json!({"p": "y"}), None));
    compacted["add"]["dataChange"] = json!(false);
    w.commit("OPTIMIZE", vec![compacted]);
    w
}

async fn open(w: &TableWriter, version: Option<u64>) -> delta_arrow_reader::Result<DeltaTable> {
    let mut b =
        DeltaTableBuilder::new("memory://bucket/table/").with_store(Arc::new(w.store().clone()));
    if let Some(v) = version {
        b = b.with_version(v);
    }
    b.load_table().await
}

/// (id, p, _change_type, _commit_version) of every change, in the order read.
type Change = (i64, String, String, i64);

async fn changes(
    w: &TableWriter,
    start: u64,
    end: Option<u64>,
) -> delta_arrow_reader::Result<Vec<Change>> {
    let t = open(w, end).await?;
    let c = t.changes(start).build().await?;
    let names: Vec<String> = c
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "id",
            "p",
            "_change_type",
            "_commit_version",
            "_commit_timestamp"
        ]
    );
    let batches = c.into_stream().collect_batches().await?;
    let mut out = Vec::new();
    for b in &batches {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let text = |i: usize| strings(b.column(i).as_ref());
        let (ps, types) = (text(1), text(2));
        let versions = b.column(3).as_primitive::<Int64Type>();
        for r in 0..b.num_rows() {
            out.push((
                ids.value(r),
                ps[r].clone(),
                types[r].clone(),
                versions.value(r),
            ));
        }
    }
    Ok(out)
}

/// Every value of a string column (of any string type) as text.
fn strings(a: &dyn Array) -> Vec<String> {
    let utf8 = ok(arrow_cast::cast(a, &DataType::Utf8));
    utf8.as_string::<i32>()
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect()
}

fn change(id: i64, p: &str, kind: &str, version: i64) -> Change {
    (id, p.into(), kind.into(), version)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_change_in_commit_order() {
    let w = table();
    let got = ok(changes(&w, 0, None).await);
    let mut expected: Vec<Change> = (0..5).map(|i| change(i, "x", "insert", 0)).collect();
    expected.extend((10..14).map(|i| change(i, "y", "insert", 1)));
    expected.extend((0..5).map(|i| change(i, "x", "delete", 2)));
    expected.extend([
        change(10, "y", "delete", 3),
        change(12, "y", "delete", 3),
        change(13, "y", "delete", 4),
        change(10, "y", "insert", 4),
        change(11, "y", "update_preimage", 5),
        change(111, "y", "update_postimage", 5),
        change(20, "y", "insert", 5),
    ]);
    assert_eq!(got, expected);
    // Each commit alone is its part of the whole.
    for v in 0..=6 {
        let one = ok(changes(&w, v, Some(v)).await);
        let part: Vec<Change> = expected
            .iter()
            .filter(|c| c.3 == v as i64)
            .cloned()
            .collect();
        assert_eq!(one, part, "version {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_times_projection_and_limit() {
    let w = table();
    let t = ok(open(&w, None).await);
    let c = ok(t
        .changes(3)
        .with_projection(["_commit_timestamp", "_change_type", "id"])
        .build()
        .await);
    assert_eq!((c.start_version(), c.end_version()), (3, 6));
    let schema = c.schema();
    assert!(matches!(
        schema.field(0).data_type(),
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some(tz)) if tz.as_ref() == "UTC"
    ));
    assert!(!schema.field(0).is_nullable() && !schema.field(1).is_nullable());
    let batches = ok(c.into_stream().collect_batches().await);
    let mut times = Vec::new();
    for b in &batches {
        assert_eq!(b.num_columns(), 3);
        let ts = b.column(0).as_primitive::<TimestampMicrosecondType>();
        times.extend((0..b.num_rows()).map(|r| ts.value(r)));
    }
    // The fixture's commits are a minute apart from 2024-01-01T00:00:00Z; the store lists
    // each commit file with its time.
    let minute = 60_000_000i64;
    let start = 1_704_067_200_000_000i64;
    assert_eq!(
        times,
        [3, 3, 4, 4, 5, 5, 5].map(|v| start + v * minute).to_vec()
    );
    let limited = ok(t.changes(0).with_limit(7).build().await);
    let rows: usize = ok(limited.into_stream().collect_batches().await)
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 7);
    // From a time: the first version committed then or later (the fixture's commits are a
    // minute apart from 2024-01-01T00:00:00Z).
    let at = |text: &str| ok(delta_arrow_reader::parse_timestamp(text));
    for (time, start) in [
        ("2024-01-01T00:03:00Z", 3),
        ("2024-01-01T00:02:30Z", 3),
        ("2024-01-01T00:00:00Z", 0),
        ("2023-06-01", 0),
        ("2024-01-01T00:06:00Z", 6),
    ] {
        let c = ok(t.changes_since(at(time)).build().await);
        assert_eq!(c.start_version(), start, "{time}");
    }
    let later = ok(t.changes_since(at("2024-01-01T00:06:01Z")).build().await);
    assert_eq!((later.start_version(), later.end_version()), (7, 6));
    assert!(later.files().is_empty());
    assert_eq!(ok(later.into_stream().collect_batches().await).len(), 0);
    let unknown = t.changes(0).with_projection(["nope"]).build().await.err();
    assert_eq!(unknown.map(|e| e.code()), Some("invalid_argument"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_the_feed_cannot_describe_fail_whole() {
    let mut w = table();
    // v7: the feed turned off; v8: a column added (with the feed on again).
    let metadata = |config: Value, schema: Value| {
        json!({"metaData": {
            "id": "00000000-0000-4000-8000-000000000001",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema.to_string(),
            "partitionColumns": ["p"],
            "configuration": config,
        }})
    };
    w.commit(
        "SET TBLPROPERTIES",
        vec![metadata(
            json!({"delta.enableChangeDataFeed": "false"}),
            schema_json(false),
        )],
    );
    let wider = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": true, "metadata": {}},
        {"name": "p", "type": "string", "nullable": true, "metadata": {}},
        {"name": "q", "type": "string", "nullable": true, "metadata": {}}]});
    w.commit(
        "ADD COLUMNS",
        vec![metadata(
            json!({"delta.enableChangeDataFeed": "true"}),
            wider,
        )],
    );

    let code =
        |r: delta_arrow_reader::Result<Vec<Change>>| r.err().map(|e| (e.code(), e.to_string()));
    // Off at 7: a range through it fails, naming the version.
    let (c, text) = code(changes(&w, 5, Some(7)).await).unwrap_or_default();
    assert_eq!(c, "change_data_feed_unavailable");
    assert!(text.contains("version 7"), "{text}");
    // Starting where it is off fails too.
    assert_eq!(
        code(changes(&w, 7, Some(7)).await).map(|e| e.0),
        Some("change_data_feed_unavailable")
    );
    // The schema at 8 differs from the schema before: a range over the change fails.
    let t = ok(open(&w, Some(8)).await);
    let e = t.changes(6).build().await.err().map(|e| e.code());
    assert_eq!(e, Some("change_data_feed_unavailable"));
    assert_eq!(ok(t.changes(8).build().await).files().len(), 0);
    // A start after the end.
    let t = ok(open(&w, Some(3)).await);
    assert_eq!(
        t.changes(4).build().await.err().map(|e| e.code()),
        Some("invalid_argument")
    );
    // Commits removed by log cleanup: a checkpoint at 6 keeps the table readable, the
    // changes before it are gone.
    let kept = table();
    let mut state = TableWriter::create_actions(
        &schema_json(false),
        &["p"],
        json!({"delta.enableChangeDataFeed": "true"}),
        ok(serde_json::from_str(PROTOCOL)),
    );
    state.truncate(2);
    assert_eq!(ok(kept.write_checkpoint(&state)), 6);
    for v in 0..6 {
        kept.store().delete(&format!("_delta_log/{v:020}.json"));
    }
    let t = ok(open(&kept, None).await);
    let e = t.changes(3).build().await.err();
    assert_eq!(
        e.as_ref().map(|e| e.code()),
        Some("version_not_found"),
        "{e:?}"
    );
    assert_eq!(ok(t.changes(6).build().await).files().len(), 0);
}

/// `dar changes` on a corpus table: the grid with its summary, JSON lines of a projection,
/// one commit's changes with `--version`, and typed one-line errors.
#[test]
fn dar_changes_prints_the_feed() {
    let table = crate::common::table_dir("kernel__cdf-table");
    let table = table.to_string_lossy();
    let dar = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_dar"))
            .arg("changes")
            .arg(table.as_ref())
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run dar: {e}"))
    };
    let out = dar(&["--from", "0", "-n", "0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("_change_type") && text.contains("update_preimage"),
        "{text}"
    );
    assert!(
        text.contains("23 rows shown; changes of versions 0 to 3"),
        "{text}"
    );
    let out = dar(&[
        "--from",
        "0",
        "--columns",
        "_commit_version,_change_type",
        "--json",
        "-n",
        "0",
    ]);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| ok(serde_json::from_str(l)))
        .collect();
    assert_eq!(lines.len(), 23);
    assert_eq!(
        lines[0],
        json!({"_commit_version": 0, "_change_type": "insert"})
    );
    let deletes: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["_change_type"] == "delete")
        .collect();
    assert_eq!(
        deletes,
        [&json!({"_commit_version": 3, "_change_type": "delete"})]
    );
    let out = dar(&["--from", "2", "--version", "2", "--json", "-n", "2"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    // From a time: every commit of the corpus table is older than today.
    let out = dar(&["--from", "2000-01-01", "--json", "-n", "0"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 23);
    let out = dar(&["--from", "2999-01-01T00:00:00Z"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("nothing was committed since"),
        "{text}"
    );
    for (args, code) in [
        (&["--from", "3", "--version", "1"][..], "[invalid_argument]"),
        (&["--from", "-1"][..], "[invalid_argument]"),
        (&["--from", "yesterday"][..], "[invalid_argument]"),
        (&[][..], "--from"),
    ] {
        let out = dar(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(code),
            "{args:?}: {err}"
        );
    }
}

/// Over a static HTTP server (no listing), every corpus table that enables the feed gives the
/// same changes as locally, but for `_commit_timestamp`, which there is each commit's
/// `commitInfo.timestamp` (or in-commit timestamp): the store gives no file times.
#[cfg(feature = "serve")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_reads_the_same_over_http() {
    use delta_arrow_reader::serve::{ServeConfig, StaticServer};
    let root = crate::common::corpus_dir().join("tables");
    let server = ok(StaticServer::start(ServeConfig::new(&root)).await);
    let mut compared = 0;
    for (name, dir) in crate::common::corpus_tables() {
        let log = std::fs::read_dir(dir.join("_delta_log"));
        let enabled = log.into_iter().flatten().flatten().any(|e| {
            std::fs::read_to_string(e.path())
                .is_ok_and(|t| t.contains("\"delta.enableChangeDataFeed\":\"true\""))
        });
        if !enabled {
            continue;
        }
        let read = |location: String| async move {
            let t = DeltaTableBuilder::new(location).load_table().await?;
            // From the oldest commit the log holds that the feed can start at.
            let mut last = delta_arrow_reader::DeltaError::InvalidArgument {
                reason: "no start".into(),
            };
            for start in 0..=t.version() {
                let c = t
                    .changes(start)
                    .with_projection(
                        t.schema()
                            .fields()
                            .iter()
                            .map(|f| f.name().clone())
                            .chain(["_change_type".into(), "_commit_version".into()]),
                    )
                    .build()
                    .await;
                match c {
                    Ok(c) => {
                        let schema = c.schema();
                        let batches = c.into_stream().collect_batches().await?;
                        return Ok::<_, delta_arrow_reader::DeltaError>((start, schema, batches));
                    }
                    Err(e) => last = e,
                }
            }
            Err(last)
        };
        let local = read(dir.to_string_lossy().into_owned()).await;
        let remote = read(server.url_for(&format!("{name}/"))).await;
        match (local, remote) {
            (Ok((s1, schema, a)), Ok((s2, _, b))) => {
                assert_eq!(s1, s2, "{name}");
                let (a, b) = (
                    ok(crate::rows::Rows::from_batches(&schema, &a)),
                    ok(crate::rows::Rows::from_batches(&schema, &b)),
                );
                let cmp = crate::rows::compare(&a, &b);
                assert!(cmp.is_equal(), "{name}: {}", cmp.report());
                compared += 1;
            }
            (Err(a), Err(b)) => assert_eq!(a.code(), b.code(), "{name}"),
            (a, b) => panic!("{name}: locally {:?}, over HTTP {:?}", a.err(), b.err()),
        }
    }
    assert!(compared >= 15, "only {compared} tables compared");
}
