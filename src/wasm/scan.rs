//! The exported `WasmScan`: a planned scan read batch by batch from JS.
//!
//! `next()` resolves to one complete Arrow IPC stream (`Uint8Array`) per non-empty batch,
//! then `null`; `toIPC()` reads what is left into one IPC stream. One call runs at a time.
//! The scan ends — and drops its stream, decoder and requests in flight — when it is read
//! to the end, fails, is cancelled (`cancel()`) or its `AbortSignal` fires; a pending
//! `next()` then rejects with an `AbortError` (code `aborted`).

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::FutureExt;
use futures::StreamExt;
use js_sys::Promise;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;

use super::abort::AbortWatch;
use super::describe::{arrow_fields, to_js};
use super::error::{invalid_argument, js_error};
use super::ipc::{batch_to_stream, StreamPieces};
use super::options::ScanOptions;
use super::progress::{Reporting, ScanProgress};
use crate::api::{DeltaBatchStream, DeltaTable};
use crate::read::metrics::{DeltaScanMetrics, ScanMetricsSnapshot};

/// A running scan. Made by `WasmTable.scan(options)`.
#[wasm_bindgen]
pub struct WasmScan {
    state: Rc<ScanState>,
}

struct ScanState {
    /// `None` while a `next()` holds it, and once the scan has ended.
    stream: RefCell<Option<DeltaBatchStream>>,
    schema: SchemaRef,
    busy: Cell<bool>,
    ended: Cell<bool>,
    abort: AbortWatch,
    progress: ScanProgress,
    metrics: Arc<DeltaScanMetrics>,
}

/// `scan.metrics` in JS: the scan's counters as the Rust API reports them (its file selection
/// among them), and the progress of its reads (as in `onProgress`). `index.d.ts` types it as
/// `ScanMetrics`, field for field.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsScanMetrics {
    #[serde(flatten)]
    counters: ScanMetricsSnapshot,
    /// Data files (or file ranges) the scan reads: `onProgress`'s `filesTotal`.
    files_to_read: u64,
    /// Of those, the ones read to their end: `onProgress`'s `filesDone`.
    files_done: u64,
    /// Size of the data files the scan reads: `onProgress`'s `bytesTotal`.
    bytes_total: u64,
    /// Bytes of those files done: `onProgress`'s `bytesDone`.
    bytes_done: u64,
    /// Whether the scan has ended (read to the end, failed, cancelled or aborted).
    done: bool,
}

impl WasmScan {
    /// Plans the scan of `table`.
    pub(crate) fn start(table: &DeltaTable, options: ScanOptions) -> Result<WasmScan, JsValue> {
        let mut builder = table.scan().with_output_types(options.output_types);
        if let Some(columns) = options.columns {
            builder = builder.with_projection(columns);
        }
        if let Some(filter) = options.filter {
            builder = builder.with_filter(filter);
        }
        if let Some(limit) = options.limit {
            builder = builder.with_limit(limit);
        }
        if let Some(batch_size) = options.batch_size {
            builder = builder.with_batch_size(batch_size);
        }
        // JS tables are loaded eagerly, so building reads nothing and finishes on its first
        // poll: `scan()` stays synchronous for JS.
        let scan = builder
            .build()
            .now_or_never()
            .ok_or_else(|| invalid_argument("this table's scan metadata is not loaded"))?
            .map_err(|e| js_error(&e))?;
        let metrics = scan.metrics();
        let sizes = scan.tasks().iter().map(|task| task.size);
        let progress = ScanProgress::new(Arc::clone(&metrics), sizes, options.on_progress);
        let state = Rc::new(ScanState {
            schema: scan.schema(),
            stream: RefCell::new(Some(scan.into_stream())),
            busy: Cell::new(false),
            ended: Cell::new(false),
            abort: AbortWatch::new(options.signal.as_ref()),
            progress,
            metrics,
        });
        // An abort between two `next()` calls drops the stream at once.
        let weak = Rc::downgrade(&state);
        state.abort.on_abort(move || {
            if let Some(state) = weak.upgrade() {
                if !state.busy.get() {
                    state.end(false);
                }
            }
        });
        Ok(WasmScan { state })
    }
}

#[wasm_bindgen]
impl WasmScan {
    /// The next non-empty batch as a complete Arrow IPC stream (`Uint8Array`), or `null`
    /// at the end.
    pub fn next(&self) -> Promise {
        let state = Rc::clone(&self.state);
        future_to_promise(async move {
            match state.next_batch().await? {
                Some(batch) => batch_to_stream(&batch)
                    .map(JsValue::from)
                    .map_err(|e| js_error(&e)),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Every remaining batch as one Arrow IPC stream (`Uint8Array`); a scan with no rows
    /// gives a stream with the schema only.
    #[wasm_bindgen(js_name = toIPC)]
    pub fn to_ipc(&self) -> Promise {
        let state = Rc::clone(&self.state);
        future_to_promise(async move {
            let mut pieces = StreamPieces::new(&state.schema).map_err(|e| js_error(&e))?;
            while let Some(batch) = state.next_batch().await? {
                pieces.write(&batch).map_err(|e| js_error(&e))?;
            }
            pieces.finish().map(JsValue::from).map_err(|e| js_error(&e))
        })
    }

    /// Stops the scan: drops its stream and requests in flight; a pending `next()` rejects
    /// with an `AbortError`.
    pub fn cancel(&self) {
        self.state.abort.abort(JsValue::UNDEFINED);
    }

    /// Whether the scan has ended (read to the end, failed, cancelled or aborted).
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        self.state.ended.get()
    }

    /// The output schema: `{ fields: [{ name, arrowType, nullable }] }`.
    #[wasm_bindgen(getter)]
    pub fn schema(&self) -> Result<JsValue, JsValue> {
        to_js(&arrow_fields(&self.state.schema))
    }

    /// What the scan did so far: the Rust `ScanMetricsSnapshot` (camelCase) and the progress of
    /// its reads; see `ScanMetrics` in `index.d.ts`.
    #[wasm_bindgen(getter)]
    pub fn metrics(&self) -> Result<JsValue, JsValue> {
        let s = &self.state;
        let p = &s.progress;
        to_js(&JsScanMetrics {
            counters: s.metrics.snapshot(),
            files_to_read: p.files_total(),
            files_done: p.files_done(),
            bytes_total: p.bytes_total(),
            bytes_done: p.bytes_done(),
            done: s.ended.get(),
        })
    }
}

impl ScanState {
    /// The next non-empty batch, `None` at the end.
    async fn next_batch(&self) -> Result<Option<RecordBatch>, JsValue> {
        if self.abort.is_aborted() {
            self.end(false);
            return Err(self.abort.error());
        }
        if self.busy.get() {
            return Err(invalid_argument(
                "the scan is already reading: await the previous next() or toIPC() first",
            ));
        }
        let Some(mut stream) = self.stream.borrow_mut().take() else {
            return Ok(None);
        };
        self.busy.set(true);
        let result = loop {
            let mut next = stream.next();
            let next = Reporting::new(Pin::new(&mut next), &self.progress);
            match self.abort.run(next).await {
                Err(aborted) => break Err(aborted),
                Ok(Some(Ok(batch))) if batch.num_rows() == 0 => continue,
                Ok(Some(Ok(batch))) => break Ok(Some(batch)),
                Ok(Some(Err(e))) => break Err(js_error(&e)),
                Ok(None) => break Ok(None),
            }
        };
        self.busy.set(false);
        match &result {
            Ok(Some(_)) => {
                *self.stream.borrow_mut() = Some(stream);
            }
            Ok(None) => {
                drop(stream);
                self.end(true);
            }
            Err(_) => {
                drop(stream);
                self.end(false);
            }
        }
        result
    }

    /// Ends the scan: drops the stream (when idle); a scan that read everything sends its
    /// last progress event.
    fn end(&self, completed: bool) {
        let stream = self.stream.borrow_mut().take();
        drop(stream);
        if !self.ended.replace(true) && completed {
            self.progress.complete();
        }
    }
}
