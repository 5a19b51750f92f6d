//! Hostile and corrupt input (issue 11): each case ends in a typed error or the protocol's
//! answer, never a panic, a hang or rows silently lost or doubled.
//!
//! - a data file whose footer declares more metadata than the file holds;
//! - a panic inside a partition's task (here a store that panics) is an `internal` error of
//!   the scan, not an early end of its stream with the other partitions' rows only;
//! - the same `add` (or `remove`) repeated in one commit counts once;
//! - a FIFO where a local table has a commit or a data file is refused, not waited on, and a
//!   folder named as a commit is refused, not skipped;
//! - log file names and a checkpoint hint past the protocol's versions (longs) are ignored.
//! - a data file whose column its declared type cannot hold (longs the log calls `float`,
//!   `string`, ...) is refused naming the file and the column.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::io::{BoxFuture, MemoryStore, RangeRead};
use delta_arrow_reader::{DeltaError, DeltaTableBuilder, Result};
use serde_json::{json, Value};

/// A table of `files` data files of ids `10 * i .. 10 * i + 10`, with `extra` actions in the
/// commit after the adds.
fn table(files: usize, extra: impl Fn(&[Value]) -> Vec<Value>) -> TableWriter {
    table_declaring("long", files, extra)
}

/// [`table`] whose log declares its `id` column (longs in the data files) as `declared`.
fn table_declaring(
    declared: &str,
    files: usize,
    extra: impl Fn(&[Value]) -> Vec<Value>,
) -> TableWriter {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": declared, "nullable": false, "metadata": {}}]});
    let arrow = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut w = TableWriter::new();
    let mut adds = Vec::new();
    for i in 0..files as i64 {
        let batch = RecordBatch::try_new(
            Arc::clone(&arrow),
            vec![Arc::new(Int64Array::from_iter_values(10 * i..10 * i + 10))],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let add = w
            .write_data_file(&format!("part-{i}.parquet"), &batch, json!({}), None)
            .unwrap_or_else(|e| panic!("{e}"));
        adds.push(add);
    }
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    let more = extra(&adds);
    actions.extend(adds);
    actions.extend(more);
    w.commit("WRITE", actions);
    w
}

/// The ids of a scan of the table in `store` over `partitions` partitions, sorted.
async fn ids(store: Arc<dyn RangeRead>, partitions: usize) -> Result<Vec<i64>> {
    let t = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(store)
        .load_table()
        .await?;
    let batches = t
        .scan()
        .with_target_partitions(partitions)
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    let mut ids = crate::common::ids(&batches);
    ids.sort_unstable();
    Ok(ids)
}

#[tokio::test]
async fn a_footer_longer_than_its_file_is_a_parquet_error() {
    let w = table(2, |_| vec![]);
    let store = w.store().clone();
    let path = "part-1.parquet";
    let mut bytes = store
        .get(path)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .to_vec();
    let at = bytes.len() - 8;
    for declared in [u32::MAX, bytes.len() as u32] {
        bytes[at..at + 4].copy_from_slice(&declared.to_le_bytes());
        store.put(path, Bytes::from(bytes.clone()));
        for partitions in [1, 2] {
            let err = ids(Arc::new(store.clone()), partitions)
                .await
                .err()
                .unwrap_or_else(|| panic!("declared {declared}: the scan must fail"));
            assert_eq!(err.code(), "parquet", "{err}");
            assert!(err.to_string().contains("part-1.parquet"), "{err}");
            assert!(err.to_string().contains("footer declares"), "{err}");
        }
    }
}

/// A store whose reads of one path panic (ranged and whole: small files are read whole).
#[derive(Debug)]
struct PanicsOn {
    inner: MemoryStore,
    path: &'static str,
}

impl RangeRead for PanicsOn {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        if path == self.path {
            panic!("test store: reading {path} panics");
        }
        self.inner.get_range(path, range)
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        if path == self.path {
            panic!("test store: reading {path} panics");
        }
        self.inner.get(path)
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        self.inner.size(path)
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<delta_arrow_reader::io::ListEntry>>>> {
        self.inner.list(prefix, start_after)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_partition_is_an_internal_error_not_missing_rows() {
    let w = table(8, |_| vec![]);
    for path in ["part-0.parquet", "part-5.parquet", "part-7.parquet"] {
        let store = PanicsOn {
            inner: w.store().clone(),
            path,
        };
        let got = ids(Arc::new(store), 4).await;
        match got {
            Err(DeltaError::Internal { reason, .. }) => {
                assert!(reason.contains("panicked"), "{reason}");
                assert!(reason.contains(path), "{reason}");
            }
            other => panic!("{path}: expected an internal error, got {other:?}"),
        }
    }
    // The same table without the panic reads whole.
    let all = ids(Arc::new(w.store().clone()), 4).await;
    assert_eq!(all.ok(), Some((0..80).collect::<Vec<i64>>()));
}

#[tokio::test]
async fn an_add_repeated_in_one_commit_is_read_once() {
    // Every add twice, and one also removed and re-added in a later commit.
    let mut w = table(3, |adds| adds.to_vec());
    let add = w
        .store()
        .clone()
        .get("_delta_log/00000000000000000000.json")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let first_add = String::from_utf8_lossy(&add)
        .lines()
        .find(|l| l.contains("\"add\""))
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .unwrap_or_else(|| panic!("no add in the first commit"));
    let remove = w.remove_action(&first_add);
    w.commit("WRITE", vec![remove, first_add.clone(), first_add]);
    for partitions in [1, 3] {
        let got = ids(Arc::new(w.store().clone()), partitions).await;
        assert_eq!(
            got.ok(),
            Some((0..30).collect::<Vec<i64>>()),
            "{partitions}"
        );
    }
}

/// An add whose size is negative is an invalid log naming the file, not a file of size 0
/// (whose footer read would fail with a misleading error) and never rows.
#[tokio::test]
async fn a_negative_file_size_is_an_invalid_log() {
    let bad = one_file_with_add(|add| add["add"]["size"] = json!(-5)).await;
    let err = ids(Arc::new(bad.store().clone()), 1)
        .await
        .expect_err("a negative size read as rows");
    assert_eq!(err.code(), "invalid_log", "{err}");
    let text = err.to_string();
    assert!(
        text.contains("part-0.parquet") && text.contains("negative"),
        "{text}"
    );
}

/// The table of one data file (ids 0..10, `part-0.parquet`) whose `add` (its real size,
/// `numRecords` 10) is first given to `edit`.
async fn one_file_with_add(edit: impl FnOnce(&mut Value)) -> TableWriter {
    one_file_declaring("long", edit).await
}

/// [`one_file_with_add`] whose log declares the `id` column as `declared`.
async fn one_file_declaring(declared: &str, edit: impl FnOnce(&mut Value)) -> TableWriter {
    let data = table(1, |_| Vec::new())
        .store()
        .clone()
        .get("part-0.parquet")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = table_declaring(declared, 0, |_| Vec::new());
    w.store().put("part-0.parquet", data.clone());
    let mut add = w.add_action("part-0.parquet", data.len() as u64, 10, json!({}), None);
    edit(&mut add);
    w.commit("WRITE", vec![add]);
    w
}

/// Log files and a `_last_checkpoint` hint that name versions past the protocol's longs
/// (up to `u64::MAX`, where `version + 1` overflowed and panicked) are not the table's: it
/// loads at its own version, listed or probed.
#[tokio::test]
async fn versions_past_the_longs_are_not_log_files() {
    let w = table(2, |_| Vec::new());
    let huge = [i64::MAX as u64 + 1, u64::MAX];
    for v in huge {
        w.store()
            .put(format!("_delta_log/{v:020}.checkpoint.parquet"), "");
        w.store().put(
            format!("_delta_log/{v:020}.checkpoint.0000000001.0000000001.parquet"),
            "",
        );
        w.store().put(format!("_delta_log/{v:020}.json"), "{}");
    }
    for v in huge {
        w.store().put(
            "_delta_log/_last_checkpoint",
            format!(r#"{{"version":{v},"size":1}}"#),
        );
        for store in [w.store().clone(), w.store().without_listing()] {
            let t = DeltaTableBuilder::new("memory://bucket/table/")
                .with_store(Arc::new(store))
                .load_table()
                .await
                .unwrap_or_else(|e| panic!("hint {v}: {e}"));
            assert_eq!(t.version(), 0, "hint {v}");
        }
    }
    let rows = ids(Arc::new(w.store().clone()), 2)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, (0..20).collect::<Vec<i64>>());
}

/// A table of two files written to a new folder (kept while the `TempDir` lives), and its
/// location.
fn two_files_on_disk() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    table(2, |_| vec![])
        .write_to_dir(dir.path())
        .unwrap_or_else(|e| panic!("{e}"));
    let location = dir.path().to_string_lossy().into_owned();
    (dir, location)
}

/// Replaces the file at `path` by a FIFO nobody writes to.
fn make_fifo(path: &std::path::Path) {
    std::fs::remove_file(path).unwrap_or_else(|e| panic!("{e}"));
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(made.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_in_a_local_table_is_refused_not_waited_on() {
    for fifo in ["_delta_log/00000000000000000000.json", "part-1.parquet"] {
        let (dir, location) = two_files_on_disk();
        make_fifo(&dir.path().join(fifo));
        let read = async {
            let table = DeltaTableBuilder::new(location).load_table().await?;
            table
                .scan()
                .build()
                .await?
                .into_stream()
                .collect_batches()
                .await
        };
        let got = tokio::time::timeout(std::time::Duration::from_secs(20), read)
            .await
            .unwrap_or_else(|_| panic!("{fifo}: the read waited on the FIFO"));
        let err = got
            .err()
            .unwrap_or_else(|| panic!("{fifo}: the read must fail"));
        // (The local listing leaves out what is not a file: a log that seemed to end before
        // the FIFO would pass an older version for the latest.)
        assert_eq!(err.code(), "io", "{fifo}: {err}");
        assert!(
            err.to_string().contains("not a regular file"),
            "{fifo}: {err}"
        );
    }
}

/// A folder (or a symbolic link to nothing) named as a table's next commit is refused:
/// listed, the log would end before it and the version before it would be read as the
/// latest, without a word. A folder merely named after a version is left alone.
#[tokio::test]
async fn a_folder_named_as_a_commit_is_refused_not_skipped() {
    let (dir, location) = two_files_on_disk();
    let before = DeltaTableBuilder::new(location.clone())
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let next = format!("_delta_log/{:020}.json", before.version() + 1);
    // A folder merely named after a version (a writer's temporary, a `.crc`) is not a log
    // file: the table opens as before.
    for other in [
        format!("{next}.tmp"),
        format!("{next}x"),
        next.replace(".json", ".crc"),
    ] {
        std::fs::create_dir(dir.path().join(&other)).unwrap_or_else(|e| panic!("{e}"));
    }
    let same = DeltaTableBuilder::new(location.clone()).load_table().await;
    assert_eq!(same.map(|t| t.version()).ok(), Some(before.version()));
    // A folder named as the next commit, or a symbolic link to nothing: refused.
    std::fs::create_dir(dir.path().join(&next)).unwrap_or_else(|e| panic!("{e}"));
    let refused = || async {
        DeltaTableBuilder::new(location.clone())
            .load_table()
            .await
            .err()
            .unwrap_or_else(|| panic!("version {} read as the latest", before.version()))
    };
    let err = refused().await;
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains(&next), "{err}");
    std::fs::remove_dir(dir.path().join(&next)).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(dir.path().join("gone.json"), dir.path().join(&next))
        .unwrap_or_else(|e| panic!("{e}"));
    let err = refused().await;
    assert_eq!(err.code(), "io", "{err}");
    assert!(
        err.to_string().contains("symbolic link to nothing"),
        "{err}"
    );
}

/// A footer that counts other rows than the file's `numRecords` (row groups dropped,
/// repeated or lying about their size) would return other rows than the table holds: the
/// file is refused, naming both counts. Without `numRecords` there is nothing to check.
#[tokio::test]
async fn a_footer_disagreeing_with_num_records_is_a_parquet_error() {
    for (records, ok) in [
        (Some(9), false),
        (Some(11), false),
        (Some(10), true),
        (None, true),
    ] {
        let bad = one_file_with_add(|add| {
            add["add"]["stats"] = match records {
                Some(n) => json!(json!({ "numRecords": n }).to_string()),
                None => Value::Null,
            }
        })
        .await;
        for partitions in [1, 2] {
            let got = ids(Arc::new(bad.store().clone()), partitions).await;
            match (ok, got) {
                (true, Ok(ids)) => assert_eq!(ids, (0..10).collect::<Vec<_>>()),
                (false, Err(e)) => {
                    assert_eq!(e.code(), "parquet", "{e}");
                    let text = e.to_string();
                    assert!(
                        text.contains("part-0.parquet")
                            && text.contains("10 rows")
                            && text.contains(&format!("(numRecords) {}", records.unwrap_or(0))),
                        "{text}"
                    );
                }
                (ok, got) => panic!("numRecords {records:?}: expected ok={ok}, got {got:?}"),
            }
        }
    }
}

/// A data file holding longs where the log declares another type: converting would lose
/// digits (`float`, `double`) or is no conversion at all (`string`, `boolean`), so the file
/// contradicts the log and the scan fails naming it and the column, before any row.
#[tokio::test]
async fn a_column_its_declared_type_cannot_hold_is_refused_naming_file_and_column() {
    for declared in ["float", "double", "string", "boolean", "date"] {
        let lying = one_file_declaring(declared, |_| {}).await;
        let store: Arc<dyn RangeRead> = Arc::new(lying.store().clone());
        match ids(store, 1).await {
            Err(e @ DeltaError::InvalidLog { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains("part-0.parquet") && text.contains("`id`"),
                    "{declared}: {text}"
                );
                assert!(
                    text.contains("Int64") && text.contains(declared),
                    "{declared}: {text}"
                );
            }
            other => panic!("{declared}: {other:?}"),
        }
    }
}
