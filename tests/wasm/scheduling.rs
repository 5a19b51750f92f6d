//! The scan scheduler on wasm32's single-threaded executor (headless Chromium), with the same
//! code as natively: several partitions with prefetch and a one-batch output buffer read a
//! twelve-file table from the in-memory store, each partition in its task order; dropping a stream mid-way ends
//! the scan with nothing left running; lazy and eager tables plan the same tasks.

use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::DeltaScanExecutionOptions;
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use futures::StreamExt;
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

const FILES: i64 = 12;
const ROWS_PER_FILE: i64 = 50;

/// Twelve files of 50 ids each (file k holds ids 50k..50k+49), one commit per file.
fn table() -> TableWriter {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}},
    ]});
    let arrow = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut w = TableWriter::new();
    w.commit(
        "CREATE",
        TableWriter::create_actions(
            &schema,
            &[],
            json!({}),
            json!({"minReaderVersion": 1, "minWriterVersion": 2}),
        ),
    );
    for k in 0..FILES {
        let ids = Int64Array::from_iter_values(k * ROWS_PER_FILE..(k + 1) * ROWS_PER_FILE);
        let batch = RecordBatch::try_new(Arc::clone(&arrow), vec![Arc::new(ids)])
            .unwrap_or_else(|e| panic!("{e}"));
        let add = w
            .write_data_file(&format!("part-{k:02}.parquet"), &batch, json!({}), None)
            .unwrap_or_else(|e| panic!("{e}"));
        w.commit("WRITE", vec![add]);
    }
    w
}

async fn load(w: &TableWriter, eager: bool) -> DeltaTable {
    let builder = DeltaTableBuilder::new("memory://t/").with_store(Arc::new(w.store().clone()));
    let loaded = if eager {
        builder.load_table_with_eager_scan_metadata().await
    } else {
        builder.load_table().await
    };
    loaded.unwrap_or_else(|e| panic!("{e}"))
}

fn options() -> DeltaScanExecutionOptions {
    DeltaScanExecutionOptions {
        target_partitions: Some(3),
        max_concurrent_file_reads_per_partition: 2,
        prefetch_files_per_partition: Some(2),
        batches_ahead_per_partition: 1,
        ..Default::default()
    }
}

/// The `k` of a data file `part-k.parquet`.
fn file_index(path: &str) -> usize {
    let name = path.rsplit('/').next().unwrap_or(path);
    let digits = name
        .trim_start_matches("part-")
        .trim_end_matches(".parquet");
    digits.parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let col = b.column(0).as_any().downcast_ref::<Int64Array>();
            col.map(|c| c.values().to_vec()).unwrap_or_default()
        })
        .collect()
}

#[wasm_bindgen_test]
async fn partitions_read_every_file_in_task_order() {
    let w = table();
    let table = load(&w, true).await;
    let scan = table
        .scan()
        .with_execution_options(options())
        .with_batch_size(20)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scan.partitions(), 3);
    let metrics = scan.metrics();
    // Each partition's ids, in its task order (file k holds ids 50k..50k+49).
    let partition_of_file: Vec<usize> = {
        let mut owner = vec![usize::MAX; FILES as usize];
        for (p, tasks) in scan.partition_tasks().iter().enumerate() {
            for t in tasks {
                owner[file_index(&t.path)] = p;
            }
        }
        owner
    };
    let per_partition = |ids: &[i64]| -> Vec<Vec<i64>> {
        let mut out = vec![Vec::new(); 3];
        for &id in ids {
            out[partition_of_file[(id / ROWS_PER_FILE) as usize]].push(id);
        }
        out
    };
    let want: Vec<Vec<i64>> = scan
        .partition_tasks()
        .iter()
        .map(|tasks| {
            tasks
                .iter()
                .flat_map(|t| {
                    let k = file_index(&t.path) as i64;
                    k * ROWS_PER_FILE..(k + 1) * ROWS_PER_FILE
                })
                .collect()
        })
        .collect();
    let batches = scan
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // With no limit, the merged stream hands batches out as partitions produce them: every
    // id comes exactly once, and each partition's ids keep its task order.
    let got = ids(&batches);
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..FILES * ROWS_PER_FILE).collect::<Vec<_>>());
    assert_eq!(per_partition(&got), want);
    assert_eq!(metrics.file_tasks_started(), FILES as u64);
    assert_eq!(metrics.file_tasks_completed(), FILES as u64);
    assert_eq!(metrics.partitions_completed(), 3);
    assert_eq!(metrics.rows_emitted(), (FILES * ROWS_PER_FILE) as u64);
    assert_eq!(
        metrics.log_files_read(),
        0,
        "an eager table reads no log at scan build"
    );
}

#[wasm_bindgen_test]
async fn a_dropped_stream_ends_the_scan_and_the_next_scan_reads_everything() {
    let w = table();
    let table = load(&w, true).await;
    let scan = table
        .scan()
        .with_execution_options(options())
        .with_batch_size(10)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let metrics = scan.metrics();
    let mut streams = scan.into_partition_streams();
    assert_eq!(streams.len(), 3);
    let first = streams[0].next().await;
    assert!(matches!(first, Some(Ok(_))), "{first:?}");
    drop(streams);
    // Nothing runs after the drop on a single-threaded executor: yield, then look again.
    let started = metrics.file_tasks_started();
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&wasm_bindgen::JsValue::NULL))
        .await
        .ok();
    assert_eq!(metrics.file_tasks_started(), started);
    assert!(metrics.file_tasks_completed() < FILES as u64);
    // Per-partition limits: at most 1 + prefetch files were opened by the polled partition.
    assert!(started <= 3, "{started} files started");

    let again = table
        .scan()
        .with_execution_options(options())
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&again).len() as i64, FILES * ROWS_PER_FILE);
}

#[wasm_bindgen_test]
async fn lazy_and_eager_tables_plan_the_same_tasks() {
    let w = table();
    let eager = load(&w, true).await;
    let lazy = load(&w, false).await;
    assert!(lazy.eager_files().is_none());
    let plan = |t: DeltaTable| async move {
        let scan = t
            .scan()
            .with_execution_options(options())
            .with_filter("id >= 120")
            .build()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let tasks: Vec<String> = scan.tasks().iter().map(|t| format!("{t:?}")).collect();
        (tasks, scan.metrics().log_files_read())
    };
    let (eager_tasks, eager_reads) = plan(eager).await;
    let (lazy_tasks, lazy_reads) = plan(lazy).await;
    assert_eq!(eager_tasks, lazy_tasks);
    assert_eq!(eager_reads, 0);
    assert_eq!(
        lazy_reads,
        FILES as u64 + 1,
        "the lazy build replays every commit"
    );
}
