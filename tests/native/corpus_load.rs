//! Walks the whole corpus: every table loads with the version and number of active files the
//! inventory gives (and reports the log bytes its store sent), or, where it must, fails with
//! a typed error. Nothing panics.

use crate::common;

use delta_arrow_reader::log::SUPPORTED_READER_FEATURES;
use delta_arrow_reader::DeltaTableBuilder;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_corpus_table_loads_or_fails_cleanly() {
    let rows = common::inventory();
    assert!(
        rows.len() >= 200 || common::corpus_overridden(),
        "inventory has {} rows",
        rows.len()
    );
    let mut failures = Vec::new();
    let (mut passed, mut refused) = (0, 0);
    for row in &rows {
        let name = row.name().to_string();
        let dir = common::table_dir(&name);
        let location = dir.to_string_lossy().into_owned();
        let outcome = tokio::spawn(async move {
            DeltaTableBuilder::new(location)
                .load_table_with_eager_scan_metadata()
                .await
        })
        .await;
        let result = match outcome {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: PANIC {e}"));
                continue;
            }
        };
        match (row.must_fail(SUPPORTED_READER_FEATURES), result) {
            (Some(why), Ok(t)) => failures.push(format!(
                "{name}: loaded version {} but must fail ({why})",
                t.version()
            )),
            (Some(why), Err(e)) => {
                refused += 1;
                println!("refused {name} [{}]: {e}  ({why})", e.code());
            }
            (None, Err(e)) => failures.push(format!("{name}: error [{}] {e}", e.code())),
            (None, Ok(t)) => {
                let want_version = row.latest_version();
                let want_files = common::INVENTORY_FILE_COUNT_ERRATA
                    .iter()
                    .find(|e| e.0 == name)
                    .map(|e| e.1)
                    .or(row.active_files());
                if want_version.is_some_and(|v| v != t.version()) {
                    failures.push(format!(
                        "{name}: version {} != inventory {want_version:?}",
                        t.version()
                    ));
                } else if want_files.is_some_and(|n| n != t.eager_files().unwrap_or_default().len())
                {
                    failures.push(format!(
                        "{name}: {} active files != inventory {want_files:?}",
                        t.eager_files().unwrap_or_default().len()
                    ));
                } else if t.schema().fields().is_empty() && !name.contains("concurrent_workers") {
                    failures.push(format!("{name}: empty schema"));
                } else if t.load_info().log_bytes_read != t.io_counters().snapshot().bytes_received
                {
                    // The load is all the table's store has been asked for so far.
                    failures.push(format!(
                        "{name}: load info says {} log bytes read, the store sent {}",
                        t.load_info().log_bytes_read,
                        t.io_counters().snapshot().bytes_received
                    ));
                } else {
                    passed += 1;
                }
            }
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "corpus load: {} passed, {} failed ({refused} refused as required)",
        passed + refused,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} corpus tables failed",
        failures.len()
    );
}
