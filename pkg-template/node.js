// delta-arrow-reader for Node.js (20+): the .wasm file is read from disk on first use.
import { readFile } from 'node:fs/promises';
import { createApi } from './api.js';

const api = createApi(() => readFile(new URL('./delta_arrow_reader_bg.wasm', import.meta.url)));

/** Loads the WebAssembly module; optional, DeltaTable.open calls it. */
export const init = api.init;
export const DeltaTable = api.DeltaTable;
export const DeltaScan = api.DeltaScan;
