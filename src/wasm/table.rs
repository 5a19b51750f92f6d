//! `openTable(url, options)`, `openSource(source, kind, location, options)` and the exported
//! `WasmTable`: one snapshot of a table read over `fetch` or through a JS byte source.
//!
//! The store under the table is a `FetchStore` (caller headers, `requestInit` and `fetch`,
//! retries, range checks, the caller's `signUrl` before every attempt) or a `JsSourceStore`
//! (a Node.js folder, a directory handle, picked files, the caller's own source), under the
//! table's own metered store (`table.metrics`). An operation given an `AbortSignal` reads
//! through a copy of that store carrying the signal, so aborting stops its requests at once
//! and no other's: the open's signal applies to loading only, each scan's to that scan.

use std::sync::Arc;

use js_sys::Promise;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;

use super::abort::AbortWatch;
use super::describe::{self, to_js};
use super::error::{invalid_open_argument, js_error, load_error};
use super::options::{OpenOptions, ScanOptions, TimeTravel};
use super::scan::WasmScan;
use super::sign::js_signer;
use crate::api::{DeltaTable, DeltaTableBuilder};
use crate::io::{FetchOptions, FetchStore, JsSourceStore, Store};
use web_sys::AbortSignal;

/// Opens the Delta table at `url` (an `http(s)` URL of the table root; in a page, relative
/// to it) and resolves to a [`WasmTable`]. `options`: `{ headers, version, timestamp,
/// signUrl, signal, retries }`. Rejects with an `Error` whose `code` names the failure
/// (`not_a_table`, `not_found`, `io`, `version_not_found`, `unsupported_feature`, ...), or
/// an `AbortError` (code `aborted`) when `signal` aborts.
#[wasm_bindgen(js_name = openTable)]
pub fn open_table(url: String, options: JsValue) -> Promise {
    future_to_promise(async move { open_url(url, options).await.map(JsValue::from) })
}

/// Opens the Delta table that the JS byte `source` holds (see `JsSourceStore`: `read(path,
/// start, end)`, optional `size(path)` and `list(prefix)`) and resolves to a [`WasmTable`].
/// `kind` names the source in debug output (`node-fs`, `directory-handle`, `files`,
/// `custom`); `location` is the URL the table reports as its location (`file:///…/`).
/// `options`: `{ version, timestamp, signal }`; the http-only options are refused.
#[wasm_bindgen(js_name = openSource)]
pub fn open_source(source: JsValue, kind: String, location: String, options: JsValue) -> Promise {
    future_to_promise(async move {
        open_js(source, kind, location, options)
            .await
            .map(JsValue::from)
    })
}

/// Where a table's bytes come from; each operation reads through a copy that carries its
/// own abort signal.
#[derive(Clone, Debug)]
enum Source {
    Fetch(FetchStore),
    Js(JsSourceStore),
}

impl Source {
    // On wasm32 stores are not `Send`: the `Arc` is shared on one thread only.
    #[allow(clippy::arc_with_non_send_sync)]
    fn store(&self, signal: Option<AbortSignal>) -> Store {
        match self {
            Source::Fetch(fetch) => Arc::new(fetch.clone().with_abort_signal(signal)),
            Source::Js(js) => Arc::new(js.clone().with_abort_signal(signal)),
        }
    }
}

async fn open_url(url: String, options: JsValue) -> Result<WasmTable, JsValue> {
    let options = OpenOptions::from_js(&options).map_err(|e| load_error(&e))?;
    let defaults = FetchOptions::default();
    let fetch_options = FetchOptions {
        headers: options.headers.clone(),
        retries: options.retries.unwrap_or(defaults.retries),
        ..defaults
    };
    let mut fetch = FetchStore::with_options(&url, fetch_options).map_err(|e| load_error(&e))?;
    if let Some(sign) = options.sign_url.clone() {
        fetch = fetch.with_url_signer(js_signer(sign));
    }
    if let Some(f) = options.fetch.clone() {
        fetch = fetch.with_fetch(f);
    }
    if let Some(init) = options.request_init.clone() {
        fetch = fetch.with_request_init(init);
    }
    // The resolved absolute URL (a relative one is resolved against the page), without
    // its query string (the fetch store adds that to every request itself).
    let location = fetch.base_url().to_string();
    load(Source::Fetch(fetch), location, options).await
}

async fn open_js(
    source: JsValue,
    kind: String,
    location: String,
    options: JsValue,
) -> Result<WasmTable, JsValue> {
    let options = OpenOptions::from_js(&options).map_err(|e| load_error(&e))?;
    if let Some(name) = options.http_only_given() {
        return Err(invalid_open_argument(format!(
            "options.{name} applies to http(s) tables only, not to a {kind} source"
        )));
    }
    let store = JsSourceStore::new(&source, &kind).map_err(|e| load_error(&e))?;
    load(Source::Js(store), location, options).await
}

/// Loads the snapshot `options` name from `source`, its log and scan metadata at once.
async fn load(
    source: Source,
    location: String,
    options: OpenOptions,
) -> Result<WasmTable, JsValue> {
    let abort = AbortWatch::new(options.signal.as_ref());
    let loading = source.store(options.signal.clone());
    let mut builder = DeltaTableBuilder::new(location).with_store(loading);
    if let Some(max) = options.max_commits {
        builder = builder.with_max_commits(max);
    }
    let builder = match options.target {
        TimeTravel::Latest => builder,
        TimeTravel::Version(v) => builder.with_version(v),
        TimeTravel::TimestampText(text) => builder
            .with_timestamp_str(&text)
            .map_err(|e| load_error(&e))?,
        TimeTravel::TimestampMs(ms) => {
            let at = chrono::DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| invalid_open_argument("options.timestamp is out of range"))?;
            builder.with_timestamp(at)
        }
    };
    // A read the signal stopped fails as aborted: the abort's error (with the signal's
    // reason), not the store's.
    let table = abort
        .run(builder.load_table_with_eager_scan_metadata())
        .await?
        .map_err(|e| abort.error_for(&e).unwrap_or_else(|| load_error(&e)))?;
    // Later reads do not stop on the open's signal.
    let table = table.with_store(source.store(None));
    Ok(WasmTable { table, source })
}

/// `table.loadInfo` in JS: how the snapshot was loaded, and the log files its host
/// answered missing (`404`), or forbidden (`403`, taken as missing as S3 answers it to a
/// reader without `ListBucket`). A host that answers both may hide a commit the reader may
/// not read, and the versions after it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsLoadInfo {
    #[serde(flatten)]
    info: crate::api::LoadInfo,
    log_files_not_found: u64,
    log_files_forbidden: u64,
}

/// One version of a Delta table. Made by `openTable` and `openSource`.
#[wasm_bindgen]
pub struct WasmTable {
    table: DeltaTable,
    /// Where the table's bytes come from (scans with a signal read through a copy).
    source: Source,
}

#[wasm_bindgen]
impl WasmTable {
    /// The table version of this snapshot.
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> f64 {
        self.table.version() as f64
    }

    /// Commit time of this version (ms since the epoch), where known.
    #[wasm_bindgen(getter)]
    pub fn timestamp(&self) -> Option<f64> {
        self.table.timestamp_ms().map(|ms| ms as f64)
    }

    /// The table root URL (without query string).
    #[wasm_bindgen(getter)]
    pub fn location(&self) -> String {
        self.table.location().to_string()
    }

    /// `{ fields: [{ name, type, arrowType, nullable, metadata }] }`.
    #[wasm_bindgen(getter)]
    pub fn schema(&self) -> Result<JsValue, JsValue> {
        to_js(&describe::schema(&self.table))
    }

    /// Partition columns (logical names), in order.
    #[wasm_bindgen(getter, js_name = partitionColumns)]
    pub fn partition_columns(&self) -> Vec<String> {
        self.table.partition_columns().to_vec()
    }

    /// `{ minReaderVersion, minWriterVersion, readerFeatures?, writerFeatures? }`.
    #[wasm_bindgen(getter)]
    pub fn protocol(&self) -> Result<JsValue, JsValue> {
        to_js(self.table.protocol())
    }

    /// `{ id, name, description, partitionColumns, configuration, createdTime, columnMapping }`.
    #[wasm_bindgen(getter)]
    pub fn metadata(&self) -> Result<JsValue, JsValue> {
        to_js(&describe::metadata(&self.table))
    }

    /// Number of active files.
    #[wasm_bindgen(getter, js_name = numFiles)]
    pub fn num_files(&self) -> f64 {
        self.table.eager_files().unwrap_or_default().len() as f64
    }

    /// Total size of the active files in bytes.
    #[wasm_bindgen(getter, js_name = sizeBytes)]
    pub fn size_bytes(&self) -> f64 {
        self.table.eager_size_bytes().unwrap_or_default() as f64
    }

    /// `{ discovery, checkpointVersion, logFilesRead, logBytesRead, roundTrips,
    /// logFilesNotFound, logFilesForbidden }`.
    #[wasm_bindgen(getter, js_name = loadInfo)]
    pub fn load_info(&self) -> Result<JsValue, JsValue> {
        let (not_found, forbidden) = self.table.store().missing_log_answers();
        to_js(&JsLoadInfo {
            info: self.table.load_info(),
            log_files_not_found: not_found,
            log_files_forbidden: forbidden,
        })
    }

    /// Every request made for this table so far (loading and scans): `{ requests,
    /// listRequests, getRequests, rangeRequests, bytesRequested, bytesReceived, notFound }`.
    #[wasm_bindgen(getter)]
    pub fn metrics(&self) -> Result<JsValue, JsValue> {
        to_js(&self.table.io_counters().snapshot())
    }

    /// The active files: `[{ path, size, partitionValues, deletionVector,
    /// modificationTime, numRecords }]`.
    pub fn files(&self) -> Result<JsValue, JsValue> {
        to_js(&describe::files(&self.table))
    }

    /// The column profile from the log alone: `{ files, filesWithStats, numRecords,
    /// countsExact, columns: [{ name, path, min, max, nullCount, filesWithBounds, complete }] }`.
    #[wasm_bindgen(js_name = columnProfile)]
    pub fn column_profile(&self) -> Result<JsValue, JsValue> {
        to_js(&describe::profile(&self.table).map_err(|e| js_error(&e))?)
    }

    /// Plans a scan: `options` `{ columns, filter, limit, batchSize, signal, onProgress }`.
    /// Throws for an unknown column or a filter that does not parse; reading starts at the
    /// first `next()`.
    pub fn scan(&self, options: JsValue) -> Result<WasmScan, JsValue> {
        let options = ScanOptions::from_js(&options).map_err(|e| js_error(&e))?;
        let table = match &options.signal {
            Some(signal) => self
                .table
                .with_store(self.source.store(Some(signal.clone()))),
            None => self.table.clone(),
        };
        WasmScan::start(&table, options)
    }
}
