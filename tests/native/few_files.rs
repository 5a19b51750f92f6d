//! A scan of too few files for its partitions cuts them into byte ranges when the partitions
//! run side by side (`into_stream()` on a multi-thread Tokio runtime), so every core
//! decodes. One file of about 10 MB with ten row groups and a deletion vector, read with two
//! partitions: two range tasks, the same rows as a whole-file read, and progress that counts
//! the file's size once. Read whole: with a limit (log order, as few files as needed), on a
//! current-thread runtime (one thread polls every partition), and with one partition. A log
//! whose `add.size` for the file is wrong (short or long) is a typed error naming the file,
//! read in ranges or whole, never a row twice. A file of one large row group (with its page
//! index) is shared by its ranges row by row: each range decodes its own part of the row
//! group, fetching only its pages; so is a file whose tasks are capped in bytes.

use crate::common;

use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch};
use delta_arrow_reader::{
    DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder, ScanMetricsSnapshot,
};
use serde_json::json;

const ROWS: u64 = 40_000;
const ROWS_PER_GROUP: usize = 4_000;

/// 256 hex digits, different for every `id`, that hardly compress (about 10 MB over the
/// table).
fn pad(id: u64) -> String {
    let mut state = id.wrapping_add(1).wrapping_mul(0xD134_2543_DE82_EF95);
    let mut out = String::with_capacity(256);
    for _ in 0..16 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push_str(&format!("{:016x}", state ^ (state >> 29)));
    }
    out
}

/// Rows deleted: in the first, a middle and the last row group, and across a boundary.
fn deleted() -> Vec<u64> {
    let mut d = vec![0, 7, 3_999, 17_000, ROWS - 1];
    d.extend(7_990..8_010);
    d
}

/// The table's writer: one padded file of `ROWS` rows with the deletion vector of
/// `deleted()`.
fn writer() -> delta_arrow_reader::fixture::TableWriter {
    common::dv_table_padded(
        ROWS,
        ROWS_PER_GROUP,
        &deleted(),
        json!({"numRecords": ROWS}),
        Some(pad),
    )
}

async fn table() -> (DeltaTable, u64) {
    let w = writer();
    let table = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let size: u64 = table
        .active_files()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|f| u64::try_from(f.size).unwrap_or(0))
        .sum();
    assert!(
        size > 9 << 20,
        "the file is big enough to be cut: {size} bytes"
    );
    (table, size)
}

/// The `id`s of `batches`, sorted, checked against their `pad`.
fn ids(batches: &[RecordBatch]) -> Vec<u64> {
    let mut ids = Vec::new();
    for b in batches {
        let id = b
            .column_by_name("id")
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
            .unwrap_or_else(|| panic!("an id column"));
        let pads = b
            .column_by_name("pad")
            .map(|c| arrow_cast::cast(c, &arrow_schema::DataType::Utf8))
            .unwrap_or_else(|| panic!("a pad column"))
            .unwrap_or_else(|e| panic!("{e}"));
        let pads = pads
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap_or_else(|| panic!("strings"));
        for i in 0..id.len() {
            let v = id.value(i) as u64;
            assert_eq!(pads.value(i), pad(v), "row {v} keeps its own pad");
            ids.push(v);
        }
    }
    ids.sort_unstable();
    ids
}

fn expected() -> Vec<u64> {
    let d = deleted();
    (0..ROWS).filter(|i| !d.contains(i)).collect()
}

/// Reads `table` through `into_stream()` with `partitions` and an optional limit: the ids
/// and the scan's metrics at the end.
async fn read(
    table: &DeltaTable,
    partitions: usize,
    limit: Option<usize>,
) -> (Vec<u64>, ScanMetricsSnapshot) {
    let mut builder = table.scan().with_target_partitions(partitions);
    if let Some(n) = limit {
        builder = builder.with_limit(n);
    }
    let scan = builder.build().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scan.partitions(), 1, "planned as one whole file");
    let (batches, metrics) = common::read_to_end(scan).await;
    (ids(&batches), metrics.snapshot())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_big_file_is_read_in_ranges_by_every_partition() {
    let (table, size) = table().await;
    let (got, m) = read(&table, 2, None).await;
    assert_eq!(got, expected());
    assert_eq!(m.partitions_planned, 2);
    assert_eq!(m.file_tasks_completed, 2, "two range tasks");
    assert_eq!(m.rows_deleted, deleted().len() as u64);
    assert_eq!(m.file_bytes_done, size, "progress counts the file once");

    let (got, m) = read(&table, 4, None).await;
    assert_eq!(got, expected());
    assert_eq!(
        (m.partitions_planned, m.file_tasks_completed),
        (2, 2),
        "at least 4 MiB each"
    );

    // A limit reads in log order from as few files as it needs: whole.
    let (got, m) = read(&table, 2, Some(5)).await;
    assert_eq!(got.len(), 5);
    assert_eq!((m.partitions_planned, m.file_tasks_started), (1, 1));

    let (got, m) = read(&table, 1, None).await;
    assert_eq!(got, expected());
    assert_eq!((m.partitions_planned, m.file_tasks_completed), (1, 1));
    assert_eq!(m.file_bytes_done, size);
}

#[tokio::test(flavor = "current_thread")]
async fn on_one_thread_the_file_is_read_whole() {
    let (table, size) = table().await;
    let (got, m) = read(&table, 2, None).await;
    assert_eq!(got, expected());
    assert_eq!((m.partitions_planned, m.file_tasks_completed), (1, 1));
    assert_eq!(m.file_bytes_done, size);
}

/// The table with its `add.size` rewritten from the file's real size by `wrong`.
async fn table_with_size(wrong: fn(u64) -> u64) -> DeltaTable {
    use delta_arrow_reader::io::RangeRead;
    let w = writer();
    let commit = "_delta_log/00000000000000000000.json";
    let text = w
        .store()
        .get(commit)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&text).into_owned();
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut action: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}"));
        if let Some(size) = action.pointer_mut("/add/size") {
            let real = size.as_u64().unwrap_or_else(|| panic!("a size"));
            *size = json!(wrong(real));
        }
        lines.push(action.to_string());
    }
    w.store().put(commit, lines.join("\n"));
    DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A log whose `add.size` is wrong for a file big enough to be cut into ranges: every way of
/// reading it (ranges on two partitions, whole on one) ends in a typed error naming the
/// file, and no row comes out twice or with another row's values before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_size_in_the_log_is_an_error_not_wrong_rows() {
    use futures::StreamExt;
    type Wrong = (&'static str, fn(u64) -> u64);
    let wrongs: [Wrong; 4] = [
        ("3 bytes short", |s| s - 3),
        ("1 MiB short", |s| s - (1 << 20)),
        ("1 byte long", |s| s + 1),
        ("1 MiB long", |s| s + (1 << 20)),
    ];
    for (what, wrong) in wrongs {
        let table = table_with_size(wrong).await;
        for partitions in [2, 1] {
            let scan = table
                .scan()
                .with_target_partitions(partitions)
                .build()
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut stream = scan.into_stream();
            let mut batches = Vec::new();
            let mut error = None;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(b) => batches.push(b),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let error = error.unwrap_or_else(|| {
                panic!("{what}, {partitions} partitions: read to the end without an error")
            });
            let text = error.to_string();
            assert!(
                text.contains("data.parquet"),
                "{what}, {partitions} partitions: the error names the file: {text}"
            );
            let got = ids(&batches);
            let mut unique = got.clone();
            unique.dedup();
            assert_eq!(got, unique, "{what}, {partitions} partitions: no row twice");
            let expected = expected();
            assert!(
                got.iter().all(|id| expected.binary_search(id).is_ok()),
                "{what}, {partitions} partitions: no deleted row"
            );
        }
    }
}

/// Reads `scan` one stream per partition, polled together: each partition's ids (checked
/// against their pad), and the scan's metrics.
async fn read_partitions(
    scan: delta_arrow_reader::DeltaScan,
) -> (Vec<Vec<u64>>, ScanMetricsSnapshot) {
    use futures::StreamExt;
    let metrics = scan.metrics();
    let reads = scan.into_partition_streams().into_iter().map(|stream| {
        stream
            .map(|item| item.unwrap_or_else(|e| panic!("{e}")))
            .collect::<Vec<_>>()
    });
    let parts = futures::future::join_all(reads).await;
    (parts.iter().map(|b| ids(b)).collect(), metrics.snapshot())
}

/// One row group of `ROWS` rows: ranges cut it by rows, each range decodes its own rows
/// (none twice, none lost, deletes applied once, whether the deletion vector becomes a row
/// selection or a mask), and together they fetch about the file once, not once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_big_row_group_is_shared_by_its_ranges_row_by_row() {
    let every_tenth: Vec<u64> = (0..ROWS).filter(|i| i % 10 == 3).collect();
    for deletes in [deleted(), every_tenth, Vec::new()] {
        let w = common::dv_table_padded(
            ROWS,
            ROWS as usize,
            &deletes,
            json!({"numRecords": ROWS}),
            Some(pad),
        );
        let table = DeltaTableBuilder::new("memory://bucket/table/")
            .with_store(Arc::new(w.store().clone()))
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let size: u64 = (table.active_files().await.unwrap_or_else(|e| panic!("{e}")))
            .iter()
            .map(|f| u64::try_from(f.size).unwrap_or(0))
            .sum();
        let expected: Vec<u64> = (0..ROWS).filter(|i| !deletes.contains(i)).collect();

        // The default stream on two partitions: two ranges, the same rows as a whole read.
        let (got, m) = read(&table, 2, None).await;
        assert_eq!(got, expected);
        assert_eq!((m.partitions_planned, m.file_tasks_completed), (2, 2));
        assert_eq!(m.rows_deleted, deletes.len() as u64);

        // On one partition, tasks capped at 1 MiB: the pieces, read one after another,
        // return every row once, each fetching about its share.
        let scan = (table.scan().with_target_partitions(1).build().await)
            .unwrap_or_else(|e| panic!("{e}"));
        let (per_partition, m) = read_partitions(scan.cap_task_bytes(1 << 20)).await;
        assert_eq!(per_partition.concat(), expected, "capped: every row once");
        assert_eq!(m.file_tasks_completed, size.div_ceil(1 << 20), "capped");
        assert_eq!(m.rows_deleted, deletes.len() as u64, "capped");
        assert!(
            m.bytes_received < 2 * size,
            "capped: {} bytes",
            m.bytes_received
        );

        // The default stream with the execution option set to 1 MiB: the scan spreads
        // itself into tasks of at most that, and reads every row once.
        let options = DeltaScanExecutionOptions {
            target_partitions: Some(2),
            max_task_bytes: 1 << 20,
            ..DeltaScanExecutionOptions::default()
        };
        let scan = (table.scan().with_execution_options(options).build().await)
            .unwrap_or_else(|e| panic!("{e}"));
        let (batches, m) = common::read_to_end(scan).await;
        let mut got = ids(&batches);
        got.sort_unstable();
        assert_eq!(got, expected, "option: every row once");
        let m = m.snapshot();
        assert_eq!(m.rows_deleted, deletes.len() as u64, "option");
        assert!(
            m.file_tasks_completed >= size.div_ceil(1 << 20),
            "option: {} tasks for {size} bytes",
            m.file_tasks_completed
        );

        for parts in 2..=5 {
            let scan = table.scan().build().await.unwrap_or_else(|e| panic!("{e}"));
            let (per_partition, m) = read_partitions(scan.split_into_byte_ranges(parts)).await;
            assert_eq!(per_partition.len(), parts);
            for (i, ids) in per_partition.iter().enumerate() {
                assert!(
                    !ids.is_empty(),
                    "{parts} ranges: range {i} decodes rows of it"
                );
            }
            let mut all: Vec<u64> = per_partition.concat();
            all.sort_unstable();
            assert_eq!(all, expected, "{parts} ranges: every row once");
            assert_eq!(m.rows_deleted, deletes.len() as u64, "{parts} ranges");
            assert_eq!(
                m.file_bytes_done, size,
                "{parts} ranges: progress counts the file once"
            );
            // Each range fetches the pages of its rows, the pages its cuts fall in twice
            // (here about 1 MB each), and the footer: far less than the file once per range.
            assert!(
                m.bytes_received < 2 * size,
                "{parts} ranges fetched {} bytes of a {size}-byte file",
                m.bytes_received
            );
        }
    }
}
