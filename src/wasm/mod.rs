//! The JavaScript API (wasm32 only): `wasm-bindgen` exports that the npm package
//! (`pkg-template/`) wraps into `DeltaTable.open(url, options)` and async-iterable scans.
//!
//! What is exported, as the generated module names it:
//!
//! - `openTable(url, options) → Promise<WasmTable>`: opens a table over `fetch`;
//! - `openSource(source, kind, location, options) → Promise<WasmTable>`: opens a table
//!   through a JS byte source (`io::JsSourceStore`);
//! - `WasmTable`: one snapshot (version, schema, protocol, files, metrics) and `scan(options)`;
//! - `WasmScan`: a running scan; `next()` yields the pieces of one continuous Arrow IPC
//!   stream, `nextBatch()` one complete stream per batch, `toIPC()` the whole result as one
//!   stream, `cancel()` stops it, `metrics` counts what it did.
//!
//! The package's JS wrapper adds `[Symbol.asyncIterator]` and lazy initialisation; these
//! classes are usable on their own too. Files, one job each:
//!
//! - `options`: reading the JS option objects;
//! - `abort`: an `AbortSignal` (or `cancel()`) as a Rust future;
//! - `sign`: the caller's `signUrl` as the fetch store's URL signer;
//! - `progress`: a scan's progress events, from its own counters;
//! - `describe`: schema, protocol, metadata and files as plain JS objects;
//! - `ipc`: record batches as Arrow IPC stream bytes;
//! - `error`: `DeltaError` as a JS `Error` with `code`;
//! - `table`, `scan`: the exported classes.

mod abort;
mod describe;
mod error;
mod ipc;
mod options;
mod progress;
mod scan;
mod sign;
mod table;

pub use scan::WasmScan;
pub use table::{open_source, open_table, WasmTable};
