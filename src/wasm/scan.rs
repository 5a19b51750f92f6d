//! The exported `WasmScan`: a planned scan read from JS, in one of two ways.
//!
//! - `next()` resolves to the next piece of one continuous Arrow IPC stream (`Uint8Array`):
//!   the schema with the first batch, then one piece per non-empty batch, then the end
//!   marker, then `null`. The pieces in order are one stream, so every Arrow reader given
//!   the async iterable (or the bytes joined) reads the whole result.
//! - `nextBatch()` resolves to one complete IPC stream (schema, batch, end marker) per
//!   non-empty batch, then `null`; `toIPC()` reads what is left into one stream.
//!
//! With `options.part = { index, count }` the scan reads one part of its files (see
//! `DeltaScan::part`), for workers that share one scan; its metrics and progress are the
//! part's.
//!
//! A scan read with `next()` cannot also be read with `nextBatch()` or `toIPC()` (their
//! bytes would not continue its stream), nor the other way round. One call runs at a time.
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
use super::ipc::{batch_to_stream, IpcStream, Pieces};
use super::options::ScanOptions;
use super::progress::{Reporting, ScanProgress};
use crate::api::{DeltaBatchStream, DeltaTable};
use crate::plan::FileTask;
use crate::read::metrics::{DeltaScanMetrics, ScanMetricsSnapshot};

/// A running scan. Made by `WasmTable.scan(options)`.
#[wasm_bindgen]
pub struct WasmScan {
    state: Rc<ScanState>,
}

/// How a scan is being read: as one continuous stream, or batch by batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    NotYet,
    /// `next()`: pieces of one stream.
    OneStream,
    /// `nextBatch()` or `toIPC()`: complete streams.
    Streams,
}

struct ScanState {
    /// `None` while a `next()` holds it, and once the scan has ended.
    stream: RefCell<Option<DeltaBatchStream>>,
    schema: SchemaRef,
    /// The continuous stream `next()` writes; `None` while a `next()` holds it, and once
    /// its end marker is handed out or the scan has failed.
    ipc: RefCell<Option<IpcStream>>,
    reading: Cell<Reading>,
    busy: Cell<bool>,
    ended: Cell<bool>,
    abort: AbortWatch,
    progress: ScanProgress,
    metrics: Arc<DeltaScanMetrics>,
    /// `scan.skippedFiles`: made once at planning.
    skipped: Vec<JsSkippedFile>,
}

/// One of `scan.skippedFiles`: a file the filter ruled out before reading. `path` is as
/// written in the log (as in `table.files()`).
#[derive(Debug, serde::Serialize)]
struct JsSkippedFile {
    path: String,
    size: i64,
    reason: crate::api::SkipReason,
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
        if let Some(max) = options.max_page_bytes {
            builder = builder.with_execution_options(crate::api::DeltaScanExecutionOptions {
                max_page_bytes: max,
                ..Default::default()
            });
        }
        // JS tables are loaded eagerly, so building reads nothing and finishes on its first
        // poll: `scan()` stays synchronous for JS.
        let scan = builder
            .build()
            .now_or_never()
            .ok_or_else(|| invalid_argument("this table's scan metadata is not loaded"))?
            .map_err(|e| js_error(&e))?;
        let skipped: Vec<JsSkippedFile> = scan
            .skipped_files()
            .iter()
            .map(|f| JsSkippedFile {
                path: f.add.path.clone(),
                size: f.add.size,
                reason: f.reason,
            })
            .collect();
        let scan = match options.part {
            Some(part) => scan
                .part(part.index, part.count)
                .map_err(|e| js_error(&e))?,
            None => scan,
        };
        let metrics = scan.metrics();
        let sizes = scan.tasks().iter().map(FileTask::bytes);
        let progress = ScanProgress::new(Arc::clone(&metrics), sizes, options.on_progress);
        let schema = scan.schema();
        let ipc = IpcStream::new(&schema).map_err(|e| js_error(&e))?;
        let state = Rc::new(ScanState {
            ipc: RefCell::new(Some(ipc)),
            reading: Cell::new(Reading::NotYet),
            schema,
            stream: RefCell::new(Some(scan.into_stream())),
            busy: Cell::new(false),
            ended: Cell::new(false),
            abort: AbortWatch::new(options.signal.as_ref()),
            progress,
            metrics,
            skipped,
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
    /// The next piece of the scan's one continuous Arrow IPC stream (`Uint8Array`): the
    /// schema with the first batch, one piece per further non-empty batch, the end marker;
    /// then `null`.
    pub fn next(&self) -> Promise {
        let state = Rc::clone(&self.state);
        future_to_promise(async move { state.next_piece().await })
    }

    /// The next non-empty batch as a complete Arrow IPC stream (`Uint8Array`), or `null`
    /// at the end.
    #[wasm_bindgen(js_name = nextBatch)]
    pub fn next_batch(&self) -> Promise {
        let state = Rc::clone(&self.state);
        future_to_promise(async move {
            state.claim(Reading::Streams)?;
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
            state.claim(Reading::Streams)?;
            let js = |e: crate::DeltaError| js_error(&e);
            let mut stream = IpcStream::new(&state.schema).map_err(js)?;
            let mut pieces = Pieces::new();
            while let Some(batch) = state.next_batch().await? {
                stream.write(&batch).map_err(js)?;
                pieces.push(stream.take()).map_err(js)?;
            }
            stream.finish().map_err(js)?;
            pieces.push(stream.take()).map_err(js)?;
            Ok(JsValue::from(pieces.join()))
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

    /// The files the filter ruled out before reading: `[{ path, size, reason }]`, `reason`
    /// `'partition'` (by partition values) or `'stats'` (by statistics), in the log's order.
    #[wasm_bindgen(getter, js_name = skippedFiles)]
    pub fn skipped_files(&self) -> Result<JsValue, JsValue> {
        to_js(&self.state.skipped)
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
            files_done: p.files_read(),
            bytes_total: p.bytes_total(),
            bytes_done: p.bytes_read(),
            done: s.ended.get(),
        })
    }
}

impl ScanState {
    /// Commits the scan to one way of reading; the other way is then refused.
    fn claim(&self, way: Reading) -> Result<(), JsValue> {
        match self.reading.get() {
            Reading::NotYet => {
                self.reading.set(way);
                Ok(())
            }
            current if current == way => Ok(()),
            // One message for both ways (the module's size is budgeted).
            Reading::OneStream | Reading::Streams => Err(invalid_argument(
                "a scan is read one way only: as one stream or batch by batch",
            )),
        }
    }

    /// The next piece of the continuous stream, or `null` once its end marker was handed
    /// out (or the scan failed: its stream then stays unfinished).
    async fn next_piece(&self) -> Result<JsValue, JsValue> {
        self.claim(Reading::OneStream)?;
        if self.busy.get() {
            return Err(invalid_argument(
                "the scan is already reading: await the previous next() first",
            ));
        }
        let Some(mut ipc) = self.ipc.borrow_mut().take() else {
            return Ok(JsValue::NULL);
        };
        let js = |e: crate::DeltaError| js_error(&e);
        match self.next_batch().await? {
            Some(batch) => {
                ipc.write(&batch).map_err(js)?;
                let piece = ipc.take();
                *self.ipc.borrow_mut() = Some(ipc);
                Ok(piece.into())
            }
            None => {
                ipc.finish().map_err(js)?;
                Ok(ipc.take().into())
            }
        }
    }

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
                Ok(Some(Err(e))) => {
                    break Err(self.abort.error_for(&e).unwrap_or_else(|| js_error(&e)))
                }
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
