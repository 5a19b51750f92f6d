//! Time travel by timestamp on a local table whose commit files' times go back with the
//! version (a table copied or restored file by file): the versions' times are made to rise
//! as Delta Spark's history makes them, so each version is found at its own reported time,
//! and a time before the oldest commit has no version.

use std::time::{Duration, UNIX_EPOCH};

use delta_arrow_reader::DeltaTableBuilder;

use crate::common;

/// Sets the modification time of the file at `path`.
fn set_time(path: &std::path::Path, time: std::time::SystemTime) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{e}"));
    file.set_modified(time).unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn file_times_that_go_back_still_give_each_version_at_its_time() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let log = dir.path().join("_delta_log");
    std::fs::create_dir(&log).unwrap_or_else(|e| panic!("{e}"));
    let source = common::table_dir("deltars__simple_table").join("_delta_log");
    // Whole seconds: every file system here keeps them.
    let newest = 1_700_000_000i64;
    for v in 0..5u64 {
        let name = format!("{v:020}.json");
        let to = log.join(&name);
        std::fs::copy(source.join(&name), &to).unwrap_or_else(|e| panic!("{e}"));
        set_time(
            &to,
            UNIX_EPOCH + Duration::from_secs((newest - v as i64 * 10) as u64),
        );
    }
    let location = dir.path().to_string_lossy().to_string();
    let at = |ms: i64| {
        let location = location.clone();
        async move {
            let when = chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
            DeltaTableBuilder::new(&location)
                .with_timestamp(when)
                .load_table()
                .await
        }
    };
    let t0 = newest * 1000;
    for v in 0..5i64 {
        let table = at(t0 + v)
            .await
            .unwrap_or_else(|e| panic!("version {v}: {e}"));
        assert_eq!(table.version(), v as u64);
        assert_eq!(table.timestamp_ms(), Some(t0 + v), "version {v}");
    }
    let later = at(t0 + 3_600_000).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(later.version(), 4);
    let before = at(t0 - 1).await.map(|t| t.version());
    assert_eq!(before.err().map(|e| e.code()), Some("timestamp_not_found"));
    let latest = DeltaTableBuilder::new(&location)
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(latest.timestamp_ms(), Some(t0 + 4));
}

/// A local table with a checkpoint (and `_last_checkpoint` naming it) whose commit files all
/// have the same time, as a copy made within one millisecond has: each version's reported
/// time is the one a search by timestamp gives it (rising by 1 ms a version over the whole
/// log, not only from the checkpoint on), so it finds that version again.
#[tokio::test]
async fn each_versions_time_finds_it_again_across_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let source = common::table_dir("dat__with_checkpoint");
    let copy = |from: &std::path::Path, to: &std::path::Path| {
        std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
        for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
            let entry = entry.unwrap_or_else(|e| panic!("{e}"));
            if entry.path().is_file() {
                std::fs::copy(entry.path(), to.join(entry.file_name()))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    };
    copy(&source, dir.path());
    copy(&source.join("_delta_log"), &dir.path().join("_delta_log"));
    let same = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for entry in std::fs::read_dir(dir.path().join("_delta_log")).unwrap_or_else(|e| panic!("{e}"))
    {
        set_time(&entry.unwrap_or_else(|e| panic!("{e}")).path(), same);
    }
    let location = dir.path().to_string_lossy().to_string();
    let t0 = 1_700_000_000_000i64;
    for v in 0..4u64 {
        let table = DeltaTableBuilder::new(&location)
            .with_version(v)
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("version {v}: {e}"));
        let time = table.timestamp_ms();
        assert_eq!(time, Some(t0 + v as i64), "version {v}");
        let when = chrono::DateTime::from_timestamp_millis(t0 + v as i64).unwrap_or_default();
        let found = DeltaTableBuilder::new(&location)
            .with_timestamp(when)
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("version {v}'s time: {e}"));
        assert_eq!(found.version(), v, "the time of version {v}");
    }
}
