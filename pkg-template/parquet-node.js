// toParquet for Node.js (20+): as parquet.js, with the writer's .wasm read from disk.
import { readFile } from 'node:fs/promises';
import { createParquet } from './parquet.js';

const node = createParquet(() => readFile(new URL('./parquet_writer.wasm', import.meta.url)));

/** Loads the writer's WebAssembly module (optional: toParquet calls it). */
export const initParquet = node.initParquet;
export const toParquet = node.toParquet;
