// Types of `delta-arrow-reader/parquet`: Arrow IPC streams written as Parquet files by the
// package's second WebAssembly module, fetched on the first call.

/** Anything toParquet reads one Arrow IPC stream from: its bytes, a Blob of them, or a scan
 * (any async iterable of the stream's pieces). */
export type ArrowStreamInput = Uint8Array | ArrayBuffer | ArrayBufferView | Blob | AsyncIterable<Uint8Array>;

/** The Parquet file (snappy-compressed, the Arrow schema embedded, row groups of at most
 * `rowGroupRows` rows, default 1,048,576) of an Arrow IPC stream: `toParquet(table.scan())`
 * or `toParquet(await scan.toIPC())`. Rejects with code `invalid_argument` when the input is
 * not a stream. */
export function toParquet(input: ArrowStreamInput, options?: { rowGroupRows?: number }): Promise<ReturnType<Uint8Array['slice']>>;

/** Loads the writer's module now (from `input`: a URL, Response, bytes or
 * WebAssembly.Module; default: `parquet_writer.wasm` next to the module). Optional. */
export function initParquet(input?: unknown): Promise<void>;
