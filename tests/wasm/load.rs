//! Load in headless Chromium: 32 scans of one table at once through the fetch store, a third
//! of them dropped after a few batches and a third cut by a deadline, in three rounds. Every
//! scan that completes returns exactly the serial result; afterwards every scan's gauges
//! (file reads holding permits, partition tasks running) are back to 0, and the module's
//! memory does not grow from round to round (wasm memory never shrinks: its size after the
//! first round is the baseline).

use std::sync::Arc;
use std::time::Duration;

use crate::scan::SERVER;
use crate::sorted_rows::sorted_rows;
use delta_arrow_reader::io::{FetchOptions, FetchStore};
use delta_arrow_reader::{DeltaScanMetrics, DeltaTable, DeltaTableBuilder};
use futures::future::{select, Either};
use futures::StreamExt;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[path = "../shared/scan_fates.rs"]
mod scan_fates;
use scan_fates::Fate;

const TABLE: &str = "golden__dv-partitioned-with-checkpoint";
const SCANS: usize = 32;
const ROUNDS: usize = 3;

/// A `setTimeout` of `ms` as a future.
async fn sleep_ms(ms: u64) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let set_timeout = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("setTimeout"))
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        if let Some(f) = set_timeout {
            let _ = f.call2(&JsValue::NULL, &resolve, &JsValue::from(ms as f64));
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Bytes of the module's linear memory.
fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| m.buffer())
        .ok()
        .and_then(|b| b.dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0.0, |b| f64::from(b.byte_length()))
}

/// The fates of the scans of `round`.
fn fates(round: usize) -> Vec<Fate> {
    scan_fates::fates(0x2545_F491_4F6C_DD1D, round, SCANS, 60)
}

/// Runs one scan to its fate: its rows if it completed, and its metrics.
async fn scan(table: DeltaTable, fate: Fate) -> (Option<Vec<String>>, Arc<DeltaScanMetrics>) {
    let built = table
        .scan()
        .with_batch_size(4)
        .build()
        .await
        .unwrap_or_else(|e| panic!("build: {e}"));
    let metrics = built.metrics();
    let mut stream = built.into_stream();
    let mut batches = Vec::new();
    let completed = {
        let run = Box::pin(async {
            while let Some(batch) = stream.next().await {
                batches.push(batch.unwrap_or_else(|e| panic!("scan: {e}")));
                if let Fate::DropAfter(n) = fate {
                    if batches.len() >= n {
                        return false;
                    }
                }
            }
            true
        });
        match fate {
            Fate::Deadline(ms) => match select(run, Box::pin(sleep_ms(ms))).await {
                Either::Left((done, _)) => done,
                Either::Right(_) => false,
            },
            _ => run.await,
        }
    };
    drop(stream);
    (completed.then(|| sorted_rows(&batches)), metrics)
}

/// Waits until `done` holds, for at most 10 s.
async fn settle(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = js_sys::Date::now() + 10_000.0;
    while !done() {
        assert!(js_sys::Date::now() < deadline, "{what} did not return to 0");
        sleep_ms(20).await;
    }
}

#[wasm_bindgen_test]
async fn concurrent_scans_with_cancellations_leave_nothing_behind_in_the_browser() {
    let url = format!("{}/{TABLE}/", SERVER.trim_end_matches('/'));
    let mut lines = Vec::new();
    let mut memory_after_first = 0.0;
    for round in 0..ROUNDS {
        let options = FetchOptions::default().with_retry_base_delay(Duration::from_millis(20));
        let store = FetchStore::with_options(&url, options).unwrap_or_else(|e| panic!("{e}"));
        let table = DeltaTableBuilder::new(&url)
            .with_store(Arc::new(store))
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("load: {e}"));
        let serial = scan(table.clone(), Fate::Complete)
            .await
            .0
            .unwrap_or_default();
        assert_eq!(serial.len(), 35);
        let fates = fates(round);
        let runs = fates.iter().map(|&fate| scan(table.clone(), fate));
        let results = futures::future::join_all(runs).await;
        let mut completed = 0;
        for ((rows, metrics), fate) in results.iter().zip(&fates) {
            if let Some(rows) = rows {
                assert!(
                    *rows == serial,
                    "a completed scan ({fate:?}) differs from the serial one"
                );
                completed += 1;
            }
            settle("file reads holding permits", || {
                metrics.file_reads_open() == 0
            })
            .await;
            settle("partition tasks", || metrics.partition_tasks_running() == 0).await;
        }
        assert!(completed >= SCANS / 4, "only {completed} scans completed");
        let memory = memory_bytes();
        if round == 0 {
            memory_after_first = memory;
        }
        lines.push(format!(
            "round {round}: {completed} of {SCANS} completed, equal to the serial scan; \
             gauges 0; wasm memory {:.1} MiB",
            memory / f64::from(1 << 20)
        ));
    }
    let growth = memory_bytes() - memory_after_first;
    assert!(
        growth <= f64::from(16 << 20),
        "wasm memory grew {growth} bytes after the first round"
    );
    console_log!("--- load (Chromium)\n{}", lines.join("\n"));
}
