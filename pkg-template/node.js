// delta-arrow-reader for Node.js (20+): the .wasm file is read from disk on first use, and
// a path or file:// URL opens a local table (node-source.js).
import { readFile } from 'node:fs/promises';
import { createApi } from './api.js';
import { nodeFolder } from './node-source.js';
import { coded } from './scan-views.js';

const api = createApi(() => readFile(new URL('./delta_arrow_reader_bg.wasm', import.meta.url)), {
  localFolder: nodeFolder,
});

/** Loads the WebAssembly module; optional, DeltaTable.open calls it. */
export const init = api.init;
export const DeltaTable = api.DeltaTable;
export const DeltaScan = api.DeltaScan;
/** The bytes of the WebAssembly module's memory in this thread (0 before it is loaded). */
export const wasmMemoryBytes = api.wasmMemoryBytes;

/** Web Workers are a browser API: in Node.js use toParquet from delta-arrow-reader/parquet. */
export async function toParquetInWorker() {
  throw coded('unsupported_feature', 'toParquetInWorker runs in browsers (Web Workers); in Node.js use toParquet from delta-arrow-reader/parquet', 'write');
}

/** Web Workers are a browser API: in Node.js open tables with DeltaTable.open (in a
 * worker_threads Worker of your own if the event loop must stay free). */
export async function openInWorker() {
  throw coded('unsupported_feature', 'openInWorker runs in browsers (Web Workers); in Node.js use DeltaTable.open', 'load');
}
