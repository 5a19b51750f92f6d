//! Load: 32 scans of one table at once over loopback HTTP, a third of them cancelled after a
//! few batches and a third by a deadline, in three rounds. Every scan that completes
//! returns exactly the serial result; afterwards every scan's gauges (file reads holding
//! permits, partition tasks running) are back to 0, the server has no connection open, and
//! the process's open files and memory are back to where they started (memory: within a
//! bound for what the allocator keeps, and not growing from round to round).
//!
//! Ignored in the ordinary run (files and memory are the whole process's, and other tests
//! run beside it); `scripts/test hostile` runs it alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use delta_arrow_reader::serve::{ServeConfig, StaticServer};
use delta_arrow_reader::{DeltaScanMetrics, DeltaTable, DeltaTableBuilder};
use futures::StreamExt;

use crate::common;

#[path = "../shared/scan_fates.rs"]
mod scan_fates;
use scan_fates::Fate;

const TABLE: &str = "golden__dv-partitioned-with-checkpoint";
const SCANS: usize = 32;
const ROUNDS: usize = 3;

/// Open file descriptors of this process.
fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Resident memory of this process, in bytes.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The fates of the scans of `round`.
fn fates(round: usize) -> Vec<Fate> {
    scan_fates::fates(0x9E37_79B9_7F4A_7C15, round, SCANS, 30)
}

/// Runs one scan to its fate: its rows if it completed, and its metrics.
async fn scan(table: DeltaTable, fate: Fate) -> (Option<Vec<String>>, Arc<DeltaScanMetrics>) {
    let built = table
        .scan()
        .build()
        .await
        .unwrap_or_else(|e| panic!("build: {e}"));
    let metrics = built.metrics();
    let mut stream = built.into_stream();
    let mut batches = Vec::new();
    let run = async {
        while let Some(batch) = stream.next().await {
            batches.push(batch.unwrap_or_else(|e| panic!("scan: {e}")));
            if let Fate::DropAfter(n) = fate {
                if batches.len() >= n {
                    return false;
                }
            }
        }
        true
    };
    let completed = match fate {
        Fate::Deadline(ms) => tokio::time::timeout(Duration::from_millis(ms), run)
            .await
            .unwrap_or(false),
        _ => run.await,
    };
    drop(stream);
    (completed.then(|| common::sorted_rows(&batches)), metrics)
}

/// Waits until `done` holds, for at most 10 s.
async fn settle(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{what} did not return to its start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measures the whole process: run alone by scripts/test hostile"]
async fn concurrent_scans_with_cancellations_leave_nothing_behind() {
    let config = ServeConfig::new(common::corpus_dir().join("tables"))
        .with_latency(Duration::from_millis(1));
    let server = StaticServer::start(config)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let url = server.url_for(&format!("{TABLE}/"));
    let files_before = open_files();
    let memory_before = resident_bytes();
    let mut lines = Vec::new();
    let mut memory_after_first = 0;
    for round in 0..ROUNDS {
        let table = DeltaTableBuilder::new(&url)
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("load: {e}"));
        let (serial, _) = scan(table.clone(), Fate::Complete).await;
        let serial = serial.unwrap_or_default();
        assert!(!serial.is_empty());
        let fates = fates(round);
        let tasks: Vec<_> = fates
            .iter()
            .map(|&fate| tokio::spawn(scan(table.clone(), fate)))
            .collect();
        let mut completed = 0;
        let mut all_metrics = Vec::new();
        for (task, fate) in tasks.into_iter().zip(&fates) {
            let (rows, metrics) = task.await.unwrap_or_else(|e| panic!("scan task: {e}"));
            if let Some(rows) = rows {
                assert!(
                    rows == serial,
                    "a concurrent scan ({fate:?}) returned other rows"
                );
                completed += 1;
            } else {
                assert_ne!(*fate, Fate::Complete, "a scan meant to complete was cut");
            }
            all_metrics.push(metrics);
        }
        settle("file reads holding permits", || {
            all_metrics
                .iter()
                .all(|m| m.snapshot().file_reads_open == 0)
        })
        .await;
        settle("partition tasks", || {
            all_metrics
                .iter()
                .all(|m| m.snapshot().partition_tasks_running == 0)
        })
        .await;
        drop(table);
        let stats = server.stats();
        settle("the server's open connections", || {
            stats.connections_open() == 0
        })
        .await;
        settle("open files", || open_files() <= files_before).await;
        let memory = resident_bytes();
        if round == 0 {
            memory_after_first = memory;
        }
        lines.push(format!(
            "round {round}: {completed} of {SCANS} completed with the serial rows ({} rows), \
             {} cancelled; open files {} (start {files_before}); resident {:.1} MiB (start \
             {:.1} MiB)",
            serial.len(),
            SCANS - completed,
            open_files(),
            memory as f64 / 1048576.0,
            memory_before as f64 / 1048576.0
        ));
    }
    common::print_section("concurrent scans", &lines);
    let memory_end = resident_bytes();
    assert!(
        memory_end <= memory_before + (64 << 20),
        "resident memory grew from {memory_before} to {memory_end} bytes"
    );
    assert!(
        memory_end <= memory_after_first + (16 << 20),
        "resident memory keeps growing from round to round: {memory_after_first} after the \
         first, {memory_end} after the last"
    );
}
