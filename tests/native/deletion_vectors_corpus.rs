//! The corpus's deletion vectors, through scans: at every version of every table with
//! deletion vectors, each file gives its `numRecords` less its vector's cardinality; known
//! vectors delete the rows they are known to delete; and a vector file that is damaged (any
//! byte flipped, cut short) or whose descriptor lies about its cardinality is an error, never
//! rows.
//!
//! (The rows of these tables against Spark's expected rows and against delta_kernel:
//! `conformance` and `kernel_rows`.)

use std::collections::BTreeSet;

use arrow_array::RecordBatch;
use delta_arrow_reader::io::MemoryStore;
use delta_arrow_reader::log::AddStats;
use delta_arrow_reader::DeltaScanBuilder;
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use serde_json::Value;

use crate::common;

const DV_TABLES: &[&str] = &[
    "golden__dv-partitioned-with-checkpoint",
    "kernel__table-with-dv-small",
    "kernel__with-short-dv",
    "kernel__cdf-table-with-dv",
    "kernel__cdf-table-with-cdc-and-dvs",
    "kernel__compacted-log-files-table",
    "deltars__table_with_deletion_logs",
];

/// The versions a table's log folder has commits for.
fn commit_versions(name: &str) -> Vec<u64> {
    let log = common::table_dir(name).join("_delta_log");
    let mut versions: Vec<u64> = std::fs::read_dir(&log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let v = name.strip_suffix(".json")?;
            (v.len() == 20).then(|| v.parse().ok()).flatten()
        })
        .collect();
    versions.sort_unstable();
    versions
}

/// The batches of a scan, read to the end.
async fn collect(scan: DeltaScanBuilder) -> delta_arrow_reader::Result<Vec<RecordBatch>> {
    scan.build().await?.into_stream().collect_batches().await
}

async fn rows_of(table: &DeltaTable) -> delta_arrow_reader::Result<Vec<RecordBatch>> {
    collect(table.scan()).await
}

fn count(batches: &[RecordBatch]) -> u64 {
    batches.iter().map(|b| b.num_rows() as u64).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_corpus_vector_deletes_its_cardinality_at_every_version() {
    let mut vectors = BTreeSet::new();
    let (mut inline, mut shared_file, mut versions) = (BTreeSet::new(), BTreeSet::new(), 0);
    let mut failures = Vec::new();
    for name in DV_TABLES {
        let dir = common::table_dir(name);
        for version in commit_versions(name) {
            let table = match DeltaTableBuilder::new(dir.to_string_lossy())
                .with_version(version)
                .load_table_with_eager_scan_metadata()
                .await
            {
                Ok(t) => t,
                // Versions before a checkpoint whose commits were cleaned up.
                Err(e) if e.code() == "version_not_found" => continue,
                Err(e) => {
                    failures.push(format!("{name} v{version}: {e}"));
                    continue;
                }
            };
            let files = table.eager_files().unwrap_or_default();
            let mut live = Some(0u64);
            for f in files {
                let deleted = f
                    .deletion_vector
                    .as_ref()
                    .map_or(0, |d| d.cardinality as u64);
                if let Some(d) = &f.deletion_vector {
                    vectors.insert(d.unique_id());
                    if d.storage_type == "i" {
                        inline.insert(d.unique_id());
                    }
                    if d.offset.is_some_and(|o| o > 1) {
                        shared_file.insert(d.unique_id());
                    }
                }
                live = live
                    .zip(f.stats.as_ref().and_then(AddStats::num_records))
                    .map(|(n, r)| n + r - deleted);
            }
            match (rows_of(&table).await, live) {
                (Ok(b), Some(want)) if count(&b) != want => failures.push(format!(
                    "{name} v{version}: {} rows, stats less cardinalities give {want}",
                    count(&b)
                )),
                (Ok(_), None) => println!("{name} v{version}: a file without numRecords"),
                (Ok(_), Some(_)) => versions += 1,
                (Err(e), _) => failures.push(format!("{name} v{version}: {e}")),
            }
        }
    }
    println!(
        "{versions} versions, {} vectors ({} inline, {} sharing a file)",
        vectors.len(),
        inline.len(),
        shared_file.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(vectors.len() >= 25, "{} vectors", vectors.len());
    assert!(inline.len() >= 3, "{} inline vectors", inline.len());
    assert!(!shared_file.is_empty(), "no vector after another in a file");
}

/// The values of `column` of a whole scan, sorted.
async fn column_values(table: &DeltaTable, column: &str) -> Vec<String> {
    let batches = collect(table.scan().with_projection([column]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut values = common::sorted_rows(&batches);
    values.sort_by_key(|v| v.parse::<i64>().unwrap_or(i64::MAX));
    values
}

async fn load(store: &MemoryStore) -> delta_arrow_reader::Result<DeltaTable> {
    DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(std::sync::Arc::new(store.clone()))
        .load_table()
        .await
}

#[tokio::test]
async fn known_deleted_rows() {
    // Values 0..=9, DELETE of rows 0 and 9 (delta-kernel-rs test data).
    let t = load(&common::table_in_memory("kernel__table-with-dv-small", ""))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<String> = (1..=8).map(|v| v.to_string()).collect();
    assert_eq!(column_values(&t, "value").await, want);
    let t = load(&common::table_in_memory("kernel__with-short-dv", ""))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // A run container deleting rows 0, 1 and 2 of a file of ids 0..=4; a second file 5..=9.
    let want: Vec<String> = (3..=9).map(|v| v.to_string()).collect();
    assert_eq!(column_values(&t, "id").await, want);
}

/// `kernel__table-with-dv-small` in memory, its one vector file's path, and the vector's
/// offset and size in it.
fn small_dv_table() -> (MemoryStore, String, usize, usize) {
    let store = common::table_in_memory("kernel__table-with-dv-small", "");
    let file = store
        .paths()
        .into_iter()
        .find(|p| p.starts_with("deletion_vector_") && p.ends_with(".bin"))
        .unwrap_or_else(|| panic!("no deletion vector file"));
    let commit = String::from_utf8(
        std::fs::read(
            common::table_dir("kernel__table-with-dv-small")
                .join("_delta_log/00000000000000000001.json"),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dv = commit
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|a| a["add"]["deletionVector"].as_object().cloned())
        .unwrap_or_else(|| panic!("no deletion vector in commit 1"));
    let offset = dv["offset"].as_u64().unwrap_or(1) as usize;
    let size = dv["sizeInBytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("{dv:?}")) as usize;
    (store, file, offset, size)
}

async fn scan_error(store: &MemoryStore) -> String {
    let t = match load(store).await {
        Ok(t) => t,
        Err(e) => return e.to_string(),
    };
    match rows_of(&t).await {
        Ok(b) => panic!("a damaged vector read {} rows", count(&b)),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn a_damaged_vector_file_is_an_error_never_rows() {
    let (store, file, offset, size) = small_dv_table();
    let original = bytes::Bytes::from(
        std::fs::read(common::table_dir("kernel__table-with-dv-small").join(&file))
            .unwrap_or_else(|e| panic!("{e}")),
    );
    // The stored vector: its size (4 bytes), the bitmap, its CRC-32 (4 bytes).
    for at in offset + 4..offset + 4 + size + 4 {
        let mut bad = original.to_vec();
        bad[at] ^= 0x10;
        store.put(file.clone(), bad);
        let err = scan_error(&store).await;
        assert!(err.contains("checksum mismatch"), "byte {at}: {err}");
        assert!(err.contains(&file), "byte {at}: {err}");
    }
    for len in [0, offset, offset + 4, offset + size, offset + size + 7] {
        store.put(file.clone(), original.slice(..len));
        let _ = scan_error(&store).await;
    }
}

#[tokio::test]
async fn a_descriptor_with_the_wrong_cardinality_is_an_error() {
    let (store, _, _, _) = small_dv_table();
    let path = "_delta_log/00000000000000000001.json";
    let commit =
        std::fs::read_to_string(common::table_dir("kernel__table-with-dv-small").join(path))
            .unwrap_or_else(|e| panic!("{e}"));
    let edited: Vec<String> = commit
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}"));
            let dv = v.get_mut("add").and_then(|a| a.get_mut("deletionVector"));
            if let Some(dv) = dv.and_then(Value::as_object_mut) {
                dv.insert("cardinality".into(), 3.into());
            }
            v.to_string()
        })
        .collect();
    store.put(path, edited.join("\n"));
    let err = scan_error(&store).await;
    assert!(err.contains("cardinality is 3"), "{err}");
}
