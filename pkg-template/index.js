// delta-arrow-reader for browsers, web workers and bundlers (Vite, webpack, ...): the .wasm
// file next to this module is fetched on first use (or call init() with your own URL).
// openInWorker (remote.js) runs the same tables and scans in a Web Worker (worker.js).
import { createApi } from './api.js';

const api = createApi(() => undefined);

/** Loads the WebAssembly module; optional, DeltaTable.open calls it. */
export const init = api.init;
export const DeltaTable = api.DeltaTable;
export const DeltaScan = api.DeltaScan;
/** The bytes of the WebAssembly module's memory in this thread (0 before it is loaded). */
export const wasmMemoryBytes = api.wasmMemoryBytes;
export { openInWorker, toParquetInWorker } from './remote.js';
