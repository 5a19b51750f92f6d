//! The printed report: a side-by-side table of median times with each reader's time relative
//! to ours, a detail table (first batch, peak RSS, bytes read, rows and checksum), the row
//! checks, and a legend saying how everything was measured. Markdown, so the output can go
//! into BENCHMARKS.md as it is.

use std::fmt::Write;

use crate::runner::{Reader, Summary, READERS};
use crate::scenario::Scenario;

/// One scenario's cells, in [`READERS`] order, and notes printed under the tables.
pub struct Row {
    /// The scenario.
    pub scenario: Scenario,
    /// One summary per reader.
    pub cells: Vec<Summary>,
    /// Extra facts (the selective scan's matching row groups).
    pub notes: Vec<String>,
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

fn bytes(b: u64) -> String {
    if b >= 10 * 1024 * 1024 {
        format!("{:.1} MiB", b as f64 / 1048576.0)
    } else {
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.3} s", s)
    } else {
        format!("{:.2} s", s)
    }
}

fn reader_title(r: Reader, cores: usize) -> String {
    match r {
        Reader::Ours => "ours (into_stream)".into(),
        Reader::DataFusion => "ours via DataFusion".into(),
        Reader::Kernel => "delta_kernel default engine".into(),
        Reader::DeltaRs => "delta-rs (deltalake, QueryBuilder)".into(),
        Reader::LimitOne => "arrow-rs limit, 1 thread".into(),
        Reader::LimitAll => format!("arrow-rs limit, {cores} threads"),
    }
}

/// The rows and checksum ours (else the first reader that ran) returned in a row.
fn reference(row: &Row) -> Option<(u64, i64)> {
    row.cells.iter().find_map(|c| match c {
        Summary::Ok { median, .. } => Some((median.rows, median.checksum)),
        _ => None,
    })
}

fn ours_secs(row: &Row) -> Option<f64> {
    match row.cells.first() {
        Some(Summary::Ok { median, .. }) => Some(median.secs),
        _ => None,
    }
}

fn time_cell(row: &Row, reader: Reader, cell: &Summary) -> String {
    match cell {
        Summary::Failed(e) => format!("failed: {}", e.replace('|', "/")),
        Summary::NotApplicable(why) => format!("n/a: {why}"),
        Summary::Ok {
            median, unstable, ..
        } => {
            let mut text = match median.ttfb_secs.filter(|_| row.scenario.http) {
                Some(first) => format!("{} / {}", secs(first), secs(median.secs)),
                None => secs(median.secs),
            };
            if reader != Reader::Ours {
                if let Some(ours) = ours_secs(row) {
                    let _ = write!(text, " ({:.2}×)", median.secs / ours);
                }
            }
            if reference(row) != Some((median.rows, median.checksum)) {
                text.push_str(" MISMATCH");
            }
            if *unstable {
                text.push_str(" UNSTABLE");
            }
            text
        }
    }
}

/// Renders the report.
pub fn render(rows: &[Row], cores: usize, reps: usize) -> String {
    let mut out = String::new();
    let titles: Vec<String> = READERS.iter().map(|&r| reader_title(r, cores)).collect();
    let _ = writeln!(out, "| scenario | {} |", titles.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(READERS.len()));
    for row in rows {
        let cells: Vec<String> = READERS
            .iter()
            .zip(&row.cells)
            .map(|(&r, c)| time_cell(row, r, c))
            .collect();
        let _ = writeln!(out, "| {} | {} |", row.scenario.title, cells.join(" | "));
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| scenario | reader | median | first batch | peak RSS | bytes read | rows | checksum |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for row in rows {
        for (&r, c) in READERS.iter().zip(&row.cells) {
            let Summary::Ok {
                median, rss_kib, ..
            } = c
            else {
                continue;
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} ({}) | {} | {} |",
                row.scenario.name,
                r.name(),
                secs(median.secs),
                median.ttfb_secs.map_or("-".into(), secs),
                mib(*rss_kib),
                bytes(median.bytes),
                median.bytes_from,
                median.rows,
                median.checksum,
            );
        }
    }
    let _ = writeln!(out);
    for row in rows {
        for note in &row.notes {
            let _ = writeln!(out, "- {}: {note}", row.scenario.name);
        }
        let reference = reference(row);
        for (&r, c) in READERS.iter().zip(&row.cells) {
            if let Summary::Ok { median, .. } = c {
                if Some((median.rows, median.checksum)) != reference {
                    let _ = writeln!(
                        out,
                        "- {}: MISMATCH: {} returned {} rows (checksum {}), the first reader {:?}",
                        row.scenario.name,
                        r.name(),
                        median.rows,
                        median.checksum,
                        reference
                    );
                }
            }
        }
    }
    let _ = writeln!(out);
    let _ = write!(out, "{}", legend(reps));
    out
}

fn legend(reps: usize) -> String {
    format!(
        "Legend: each cell is the median of {reps} runs, each run a fresh process (peak RSS is \
         that process's VmHWM from /proc/self/status, the largest over the runs; for delta-rs it \
         includes the Python interpreter and pyarrow). `(x×)` is the reader's median time divided \
         by ours: above 1 ours is faster. Over HTTP a cell shows time to the first batch / total. \
         Times run from opening the table to the last batch dropped (log loads: to the list of \
         active files); the arrow-rs limit times only the decoding of the files and row groups \
         our scan plans (planning is not timed, partition columns are not produced). Bytes read: \
         `metrics` = the table store's own counters (ours, and ours via DataFusion); `rchar` = \
         the process's read system calls in the timed part (/proc/self/io); `server` = bytes the \
         loopback server sent during the run (every reader over HTTP). Rows are checked equal \
         across readers: the row count and the sum of `l_orderkey` (log loads: files listed and \
         the sum of their sizes); a difference is printed as MISMATCH. Ours via DataFusion runs \
         in process with `dar sql`'s setup (SessionContext::new(), eagerly loaded scan metadata, \
         ScanOptions::default()), streaming the result instead of printing it. delta-rs runs \
         `QueryBuilder().register(..).execute(sql)` and drops each batch.\n"
    )
}
