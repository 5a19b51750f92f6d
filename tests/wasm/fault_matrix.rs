//! The fault matrix in headless Chromium: a corpus table (partitioned, deletion vectors, a
//! checkpoint) read through the fetch store from servers that misbehave in one way each
//! (`examples/serve_corpus.rs` starts one per fault and `scripts/test test-wasm` passes their
//! URLs in `DAR_TEST_HTTP_MATRIX`). Each fault has one outcome, checked: exactly the rows of a
//! clean read (retried or worked around), or a typed error, within a bound on time; never
//! other rows, never a hang. The figures are printed for RELIABILITY.md.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::scan::SERVER;
use crate::sorted_rows::sorted_rows;
use delta_arrow_reader::io::{FetchOptions, FetchStore};
use delta_arrow_reader::{DeltaError, DeltaTableBuilder};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

const MATRIX: &str = env!(
    "DAR_TEST_HTTP_MATRIX",
    "run the wasm tests with `scripts/test test-wasm`, which starts the fault servers"
);

const TABLE: &str = "golden__dv-partitioned-with-checkpoint";

/// No case may take longer: the retry bound ends every fault sooner.
const CASE_BOUND_MS: f64 = 45_000.0;

/// What a case must come to.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exactly the rows of a clean read.
    Rows,
    /// An error with this code.
    Error(&'static str),
}

/// Each fault served by `serve_corpus` (by its name there), its outcome, and the retries the
/// read allows (few where the fault never clears, so that it fails in seconds). A fault that
/// recurs ("2 of every 7 requests") counts the server's requests, not a request's attempts:
/// with up to 6 requests in flight a retry can land in the next burst again, each attempt
/// failing with at most the burst's share (2/7, 1/3, 1/4). 8 retries make the 9 failures in
/// a row that would fail a request rarer than one in 10^4 per request (1/3 ^ 9); 3 were one
/// in 81 (1/3 ^ 4), and a read of about 40 requests failed now and then.
const RECURRING: u32 = 8;
const CASES: &[(&str, Expect, u32)] = &[
    ("503-first-3", Expect::Rows, 3),
    ("429-bursts", Expect::Rows, RECURRING),
    ("500-1-of-3-data", Expect::Rows, RECURRING),
    ("502-always", Expect::Error("io"), 2),
    ("reset-1-of-4", Expect::Rows, RECURRING),
    ("reset-every-data", Expect::Error("io"), 2),
    ("slow-bodies", Expect::Rows, 3),
    ("cut-1-of-3-data", Expect::Rows, RECURRING),
    ("cut-every-data", Expect::Error("io"), 2),
    ("cut-every-log", Expect::Error("io"), 2),
    ("whole-body-for-ranges", Expect::Rows, 3),
    ("shifted-dv-ranges", Expect::Error("io"), 2),
    ("fallback-page", Expect::Error("limit_exceeded"), 2),
];

/// The fault servers by name, from `DAR_TEST_HTTP_MATRIX` (`NAME=URL NAME=URL …`).
fn servers() -> BTreeMap<&'static str, &'static str> {
    MATRIX
        .split_whitespace()
        .filter_map(|entry| entry.split_once('='))
        .collect()
}

/// Loads and scans the table on `server` with `retries` retries per request.
async fn read(server: &str, retries: u32) -> Result<Vec<String>, DeltaError> {
    let url = format!("{}/{TABLE}/", server.trim_end_matches('/'));
    let options = FetchOptions::default()
        .with_retries(retries)
        .with_retry_base_delay(Duration::from_millis(20));
    let store = FetchStore::with_options(&url, options)?;
    let table = DeltaTableBuilder::new(url)
        .with_store(Arc::new(store))
        .load_table()
        .await?;
    let batches = table
        .scan()
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    Ok(sorted_rows(&batches))
}

#[wasm_bindgen_test]
async fn every_fault_is_retried_or_a_typed_error_in_the_browser() {
    let servers = servers();
    let expected: Vec<&str> = CASES.iter().map(|(name, _, _)| *name).collect();
    let served: Vec<&str> = servers.keys().copied().collect();
    let mut sorted = expected.clone();
    sorted.sort_unstable();
    assert_eq!(served, sorted, "the fault servers and the cases agree");
    let clean = read(SERVER, 3)
        .await
        .unwrap_or_else(|e| panic!("clean read: {e}"));
    assert_eq!(clean.len(), 35);
    let mut lines = Vec::new();
    for &(name, expect, retries) in CASES {
        let url = servers.get(name).copied().unwrap_or_default();
        let start = js_sys::Date::now();
        let got = read(url, retries).await;
        let took = js_sys::Date::now() - start;
        assert!(took < CASE_BOUND_MS, "{name}: {took} ms");
        let outcome = match (&got, expect) {
            (Ok(rows), Expect::Rows) => {
                assert!(*rows == clean, "{name}: other rows than a clean read");
                format!("{} rows, as read cleanly", rows.len())
            }
            (Err(e), Expect::Error(code)) => {
                assert_eq!(e.code(), code, "{name}: {e}");
                let text = e.to_string();
                assert!(
                    text.len() < 2048,
                    "{name}: an error of {} bytes",
                    text.len()
                );
                assert!(
                    !text.chars().any(|c| c.is_control()),
                    "{name}: control characters in {text:?}"
                );
                format!("{code} error")
            }
            (Ok(rows), Expect::Error(code)) => {
                panic!("{name}: {} rows where a {code} error was due", rows.len())
            }
            (Err(e), Expect::Rows) => panic!("{name}: {e}"),
        };
        lines.push(format!("{name}: {outcome}, {:.2} s", took / 1000.0));
    }
    console_log!("--- fault matrix (Chromium)\n{}", lines.join("\n"));
}
