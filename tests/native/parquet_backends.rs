//! The two Parquet backends (`Direct`, `DeltaKernel`) over the whole corpus.
//!
//! - Every table reads the same rows with both (compared as multisets of canonical rows), or
//!   fails with the same error code with both; with a filter on the first column too.
//! - The rest of the scan behaves the same: files planned, deletion vectors loaded and rows
//!   deleted match.
//! - Known difference, printed and not counted: `delta_kernel` reads INT96 timestamps as
//!   nanoseconds, which wrap for dates outside 1677–2262 (the direct backend reads them as
//!   microseconds); [`INT96_OUTSIDE_NANOS`] lists the corpus tables with such values.
//! - The kernel backend reads one file at a time per partition and starts no later file once
//!   its stream is dropped.
//!
//! Run: `cargo test --features kernel --test native parquet_backends -- --nocapture`.

use crate::common;
use crate::rows;

use std::time::Duration;

use delta_arrow_reader::{DeltaScanExecutionOptions, ParquetReaderBackend};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use futures::StreamExt;
use rows::Rows;

/// Tables with INT96 timestamps outside the range of i64 nanoseconds.
const INT96_OUTSIDE_NANOS: &[&str] = &["deltars__table_with_edge_timestamps"];

struct Outcome {
    rows: Result<Rows, String>,
    facts: String,
}

async fn read(table: &DeltaTable, backend: ParquetReaderBackend, filter: Option<&str>) -> Outcome {
    let options = DeltaScanExecutionOptions {
        parquet_reader_backend: backend,
        ..Default::default()
    };
    let mut scan = table
        .scan()
        .with_execution_options(options)
        .with_target_partitions(2);
    if let Some(f) = filter {
        scan = scan.with_filter(f);
    }
    let scan = match scan.build().await {
        Ok(s) => s,
        Err(e) => {
            return Outcome {
                rows: Err(e.code().to_string()),
                facts: String::new(),
            }
        }
    };
    let schema = scan.schema();
    let metrics = scan.metrics();
    let rows = match scan.into_stream().collect_batches().await {
        Ok(batches) => Rows::from_batches(&schema, &batches),
        Err(e) => Err(e.code().to_string()),
    };
    Outcome {
        rows,
        facts: format!(
            "files planned {}, deletion vectors {}, rows deleted {}",
            metrics.files_planned(),
            metrics.deletion_vectors_loaded(),
            metrics.rows_deleted()
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_backends_read_the_same_rows_from_every_corpus_table() {
    let mut failures = Vec::new();
    let (mut compared, mut both_failed, mut known) = (0, 0, 0);
    for (name, dir) in common::corpus_tables() {
        let Ok(table) = DeltaTableBuilder::new(dir.to_string_lossy())
            .load_table_with_eager_scan_metadata()
            .await
        else {
            continue;
        };
        let filter = common::first_column_not_null(&table);
        for filter in [None, filter.as_deref()] {
            let direct = read(&table, ParquetReaderBackend::Direct, filter).await;
            let kernel = read(&table, ParquetReaderBackend::DeltaKernel, filter).await;
            match (&direct.rows, &kernel.rows) {
                (Ok(d), Ok(k)) => {
                    let cmp = rows::compare(d, k);
                    if !cmp.is_equal() && INT96_OUTSIDE_NANOS.contains(&name.as_str()) {
                        println!(
                            "known difference (kernel INT96 wrap) {name}: {}",
                            cmp.report()
                        );
                        known += 1;
                    } else if !cmp.is_equal() {
                        failures.push(format!("{name} {filter:?}: {}", cmp.report()));
                    } else if direct.facts != kernel.facts {
                        failures.push(format!(
                            "{name} {filter:?}: direct {} / kernel {}",
                            direct.facts, kernel.facts
                        ));
                    } else {
                        compared += 1;
                    }
                }
                (Err(d), Err(k)) if d == k => both_failed += 1,
                (d, k) => failures.push(format!(
                    "{name} {filter:?}: direct {:?}, kernel {:?}",
                    d.as_ref().err(),
                    k.as_ref().err()
                )),
            }
        }
    }
    println!(
        "parquet backends: {compared} reads equal, {both_failed} failed alike with both, \
         {known} known differences, {} differ",
        failures.len()
    );
    assert!(known <= 2 * INT96_OUTSIDE_NANOS.len());
    assert!(compared >= 200, "only {compared} reads compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kernel_backend_starts_no_file_after_its_stream_is_dropped() {
    let dir = common::table_dir("kernel__v2-checkpoints-parquet-with-sidecars");
    let table = DeltaTableBuilder::new(dir.to_string_lossy())
        .load_table_with_eager_scan_metadata()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let options = DeltaScanExecutionOptions {
        parquet_reader_backend: ParquetReaderBackend::DeltaKernel,
        // Ignored by the kernel backend: it never prefetches.
        prefetch_files_per_partition: Some(4),
        max_concurrent_file_reads_per_partition: 4,
        ..Default::default()
    };
    let scan = table
        .scan()
        .with_execution_options(options)
        .with_target_partitions(1)
        .with_batch_size(1)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(scan.tasks().len() > 10);
    let tasks = scan.tasks().len() as u64;
    let metrics = scan.metrics();
    let mut stream = scan.into_stream();
    let first = stream.next().await;
    assert!(matches!(first, Some(Ok(_))), "{first:?}");
    // One file at a time: no file is opened ahead of the one being read. (Its files hold a
    // row or two, so the partition may have finished one and begun the next to fill its
    // output buffer while the first batch was handed over: that is not reading ahead.)
    // Started is read first: both only grow.
    let started = metrics.file_tasks_started();
    let completed = metrics.file_tasks_completed();
    assert!(
        started <= completed + 1,
        "{started} files started, {completed} completed"
    );
    drop(stream);
    let at_drop = metrics.file_tasks_started();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        metrics.file_tasks_started(),
        at_drop,
        "a file started after the drop"
    );
    assert!(at_drop < tasks, "{at_drop} of {tasks} files started");
}

/// Corpus tables with strings and binaries everywhere they can be: nested in structs, lists
/// and maps, partition columns, column mapping (name and id), deletion vectors, row groups.
const STRING_TABLES: &[&str] = &[
    "golden__hive-deltatbl-map-types-correctly",
    "golden__table-with-columnmapping-mode-name",
    "golden__data-reader-array-complex-objects",
    "golden__data-reader-nested-struct",
    "dat__nested_types",
    "dat__multi_partitioned",
    "deltars__table_with_column_mapping",
    "golden__data-skipping-basic-stats-all-types-columnmapping-id",
    "golden__dv-partitioned-with-checkpoint",
    "kernel__with-short-dv",
    "kernel__parquet_row_group_skipping",
];

/// Every string and binary leaf type of `t`.
/// The string and binary leaves of `t`, each with whether it is a map's key (map keys are
/// never views: `OutputTypes::keys`).
fn byte_leaves(
    t: &arrow_schema::DataType,
    key: bool,
    out: &mut Vec<(bool, arrow_schema::DataType)>,
) {
    use arrow_schema::DataType as D;
    match t {
        D::Struct(fields) => fields
            .iter()
            .for_each(|f| byte_leaves(f.data_type(), key, out)),
        D::List(f) | D::LargeList(f) => byte_leaves(f.data_type(), false, out),
        D::Map(entries, _) => {
            if let D::Struct(pair) = entries.data_type() {
                for (i, f) in pair.iter().enumerate() {
                    byte_leaves(f.data_type(), i == 0, out);
                }
            }
        }
        D::Utf8 | D::LargeUtf8 | D::Utf8View | D::Binary | D::LargeBinary | D::BinaryView => {
            out.push((key, t.clone()))
        }
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_output_type_reads_the_same_values_with_both_backends() {
    use delta_arrow_reader::{BinaryType, OutputTypes, StringType};
    let large = OutputTypes::new(StringType::LargeUtf8, BinaryType::LargeBinary);
    let mut failures = Vec::new();
    for name in STRING_TABLES {
        let table = DeltaTableBuilder::new(common::table_dir(name).to_string_lossy())
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut reference: Option<Vec<String>> = None;
        for types in [OutputTypes::PLAIN, large, OutputTypes::VIEWS] {
            for backend in [
                ParquetReaderBackend::Direct,
                ParquetReaderBackend::DeltaKernel,
            ] {
                let options = DeltaScanExecutionOptions {
                    parquet_reader_backend: backend,
                    ..Default::default()
                };
                let scan = table
                    .scan()
                    .with_output_types(types)
                    .with_execution_options(options)
                    .build()
                    .await
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let schema = scan.schema();
                assert_eq!(scan.output_types(), types);
                assert_eq!(
                    schema.as_ref(),
                    &types.apply_schema(&table.schema()),
                    "{name} {types:?}"
                );
                let mut leaves = Vec::new();
                schema
                    .fields()
                    .iter()
                    .for_each(|f| byte_leaves(f.data_type(), false, &mut leaves));
                assert!(!leaves.is_empty(), "{name} has no string or binary column");
                let wanted = |t: OutputTypes| [t.strings.data_type(), t.binaries.data_type()];
                assert!(
                    leaves.iter().all(|(key, t)| {
                        wanted(if *key { types.keys() } else { types }).contains(t)
                    }),
                    "{name} {types:?}: {leaves:?}"
                );
                let batches = scan
                    .into_stream()
                    .collect_batches()
                    .await
                    .unwrap_or_else(|e| panic!("{name} {types:?} {backend:?}: {e}"));
                assert!(batches.iter().all(|b| b.schema() == schema), "{name}");
                // Compared as text (arrow-cast display), so every encoding must print alike.
                let rows = common::sorted_rows(&batches);
                match &reference {
                    None => {
                        assert!(!rows.is_empty(), "{name} has no rows");
                        reference = Some(rows);
                    }
                    Some(want) if *want != rows => failures.push(format!(
                        "{name} {types:?} {backend:?}: {} rows differ from Utf8/Direct's {}",
                        rows.len(),
                        want.len()
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A data file whose pages are junk (its footer intact, so the kernel gets to decode it)
/// fails with the same typed error with both backends: the kernel's error is not flattened
/// into an I/O one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_data_file_fails_alike_with_both_backends() {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use delta_arrow_reader::fixture::TableWriter;
    use serde_json::json;

    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}}]});
    let arrow = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(arrow, vec![Arc::new(Int64Array::from_iter_values(0..100))])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = TableWriter::new();
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    let add = w
        .write_data_file("part-0.parquet", &batch, json!({}), None)
        .unwrap_or_else(|e| panic!("{e}"));
    actions.push(add);
    w.commit("WRITE", actions);
    let mut junk = delta_arrow_reader::fixture::parquet_bytes("part-0.parquet", &batch)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_vec();
    let footer = u32::from_le_bytes(
        junk[junk.len() - 8..junk.len() - 4]
            .try_into()
            .unwrap_or([0; 4]),
    );
    // The first page's header and values (the page indexes before the footer stay intact).
    let pages_end = junk.len() - 8 - footer as usize;
    junk[4..pages_end.min(40)].fill(0x5a);
    w.store().put("part-0.parquet", junk);
    let table = DeltaTableBuilder::new("memory://t/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let direct = read(&table, ParquetReaderBackend::Direct, None).await;
    let kernel = read(&table, ParquetReaderBackend::DeltaKernel, None).await;
    let (Err(d), Err(k)) = (&direct.rows, &kernel.rows) else {
        panic!(
            "junk read as rows: {:?} / {:?}",
            direct.rows.is_ok(),
            kernel.rows.is_ok()
        );
    };
    assert_eq!(d, k, "direct {d}, kernel {k}");
    assert_eq!(d, "parquet");
}
