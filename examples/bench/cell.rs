//! One measured cell, as a child process reports it: time, rows and a checksum of them, bytes
//! read and peak RSS, printed as one `BENCH-RESULT {json}` line on stdout (the Python reader
//! prints the same line).

use arrow_array::{Array, Int64Array, RecordBatch};
use serde::{Deserialize, Serialize};

/// The prefix of the result line.
pub const RESULT_PREFIX: &str = "BENCH-RESULT ";

/// What one run of a cell measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CellResult {
    /// Seconds from opening the table to the last batch (or to the listed files).
    pub secs: f64,
    /// Seconds to the first batch, for scans.
    #[serde(default)]
    pub ttfb_secs: Option<f64>,
    /// Rows returned (files listed, for log loads).
    pub rows: u64,
    /// Sum of `l_orderkey` over the rows returned (of the files' sizes, for log loads).
    pub checksum: i64,
    /// Bytes read.
    pub bytes: u64,
    /// Where `bytes` comes from: `metrics`, `rchar` or `server`.
    pub bytes_from: String,
    /// Peak resident set (VmHWM) of the process, in KiB.
    pub rss_kib: u64,
}

impl CellResult {
    /// The result of a run that began at `started` and ends now: `tally` of what it returned,
    /// `bytes` read (counted as `bytes_from` says), and this process's peak resident set.
    pub fn measured(
        started: std::time::Instant,
        ttfb_secs: Option<f64>,
        tally: &Tally,
        bytes: u64,
        bytes_from: &str,
    ) -> Self {
        CellResult {
            secs: started.elapsed().as_secs_f64(),
            ttfb_secs,
            rows: tally.rows,
            checksum: tally.checksum,
            bytes,
            bytes_from: bytes_from.into(),
            rss_kib: status_kib("VmHWM"),
        }
    }
}

/// A reader's answer for a cell: a result, or why it has none.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran.
    Ok(CellResult),
    /// It failed with this error.
    Failed(String),
    /// It cannot do this scenario, for this reason.
    NotApplicable(String),
}

/// Prints `outcome` as the result line.
pub fn report(outcome: &Outcome) {
    let text = serde_json::to_string(outcome).unwrap_or_else(|e| format!("\"{e}\""));
    println!("{RESULT_PREFIX}{text}");
}

/// Rows and the `l_orderkey` checksum of the batches seen.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Rows.
    pub rows: u64,
    /// Wrapping sum of `l_orderkey`.
    pub checksum: i64,
}

impl Tally {
    /// Counts `batch` (its `l_orderkey` column, when it has one, goes into the checksum).
    pub fn add(&mut self, batch: &RecordBatch) {
        self.rows += batch.num_rows() as u64;
        let keys = batch
            .column_by_name("l_orderkey")
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>());
        if let Some(keys) = keys {
            let sum = if keys.null_count() == 0 {
                keys.values().iter().fold(0i64, |a, &v| a.wrapping_add(v))
            } else {
                keys.iter().flatten().fold(0i64, |a, v| a.wrapping_add(v))
            };
            self.checksum = self.checksum.wrapping_add(sum);
        }
    }

    /// Adds another tally.
    pub fn merge(&mut self, other: Tally) {
        self.rows += other.rows;
        self.checksum = self.checksum.wrapping_add(other.checksum);
    }
}

/// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`).
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':').map(str::to_string))
        })
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Bytes this process has read through read-like system calls (`rchar` of `/proc/self/io`).
pub fn rchar() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("rchar:").map(|v| v.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}
