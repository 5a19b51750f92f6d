// toParquet: an Arrow IPC stream written as a Parquet file by the package's second
// WebAssembly module (parquet_writer.wasm, built from parquet-writer/), which is fetched on
// the first call only: the reader's .wasm carries no writer. The input may be the bytes of a
// stream (a scan's toIPC(), an .arrows file), a Blob of them, or a scan itself (any async
// iterable of stream pieces), which is read to its end first. Several whole streams of one
// schema laid end to end (the pieces of `scan.batches()`) are joined into one.
//
// The module has a plain ABI (no wasm-bindgen glue): it is compiled once and instantiated
// afresh for every call, so a malformed stream that traps the module (arrow-ipc panics on
// some) costs that call only, and each call's memory goes when it ends.

import { joinStreams } from './ipc-streams.js';
import { checkOptionNames, coded, concatBytes } from './scan-views.js';

/** Builds toParquet around a loader of the writer's .wasm: `loadDefault()` returns its bytes,
 * a Response or a WebAssembly.Module, or `undefined` to fetch it from next to this module. */
export function createParquet(loadDefault) {
  let compiled = null;

  /** Compiles the writer's module once; a failed load may be retried. */
  function initParquet(input) {
    if (compiled === null) {
      compiled = (async () => {
        const source = input !== undefined ? await input : await loadDefault();
        return compile(source ?? fetch(new URL('./parquet_writer.wasm', import.meta.url)));
      })();
      compiled.catch(() => {
        compiled = null;
      });
    }
    return compiled.then(() => undefined);
  }

  /** The Parquet file (snappy, row groups of at most `rowGroupRows` rows, default 1,048,576)
   * of an Arrow IPC stream. Rejects with code `invalid_argument` when the input is not one. */
  async function toParquet(input, options = {}) {
    checkOptionNames(options, ['rowGroupRows'], 'toParquet()', 'write');
    const { rowGroupRows } = options ?? {};
    if (rowGroupRows !== undefined && (!Number.isInteger(rowGroupRows) || rowGroupRows < 1 || rowGroupRows > 0xffffffff)) {
      throw failed('invalid_argument', 'rowGroupRows must be a whole number from 1 to 4294967295');
    }
    // Several whole streams (the pieces of scan.batches(), a Blob of them) become one: an
    // IPC reader would stop at the first one's end.
    const bytes = joinStreams(await streamBytes(input), (message) => {
      throw failed('invalid_argument', `toParquet: ${message}`);
    });
    await initParquet();
    const { exports } = await WebAssembly.instantiate(await compiled, {});
    let status;
    try {
      // Addresses and lengths come back as wasm i32s: read unsigned (`>>> 0`), or one past
      // 2 GiB of the writer's memory is negative.
      const at = exports.dar_alloc(bytes.byteLength) >>> 0;
      new Uint8Array(exports.memory.buffer, at, bytes.byteLength).set(bytes);
      status = exports.dar_ipc_to_parquet(at, bytes.byteLength, rowGroupRows ?? 0);
    } catch (error) {
      // A trap: the instance is dropped with this call.
      throw failed('invalid_argument', `toParquet: the writer could not read this Arrow IPC stream (${error?.message ?? error})`, error);
    }
    const result = new Uint8Array(exports.memory.buffer, exports.dar_result_ptr() >>> 0, exports.dar_result_len() >>> 0).slice();
    if (status !== 0) {
      throw failed('invalid_argument', `toParquet: ${new TextDecoder().decode(result)}`);
    }
    return result;
  }

  return { initParquet, toParquet };
}

/** A WebAssembly.Module from a module, bytes, a Response or a promise of one. */
async function compile(source) {
  const given = await source;
  if (given instanceof WebAssembly.Module) return given;
  if (typeof Response !== 'undefined' && given instanceof Response) {
    if (!given.ok) throw failed('io', `cannot fetch parquet_writer.wasm: HTTP ${given.status}`);
    return WebAssembly.compile(await given.arrayBuffer());
  }
  return WebAssembly.compile(given);
}

/** An Error as the reader's own are; writing is no phase of a read, so its phase is `write`. */
const failed = (code, message, cause) => coded(code, message, 'write', cause);

/** The input's bytes as one Uint8Array. */
async function streamBytes(input) {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (typeof Blob !== 'undefined' && input instanceof Blob) return new Uint8Array(await input.arrayBuffer());
  if (input != null && typeof input[Symbol.asyncIterator] === 'function') {
    const pieces = [];
    for await (const piece of input) {
      if (!(piece instanceof Uint8Array)) throw failed('invalid_argument', 'toParquet: the iterable gave something other than a Uint8Array');
      pieces.push(piece);
    }
    return concatBytes(pieces);
  }
  throw failed('invalid_argument', 'toParquet takes the bytes of an Arrow IPC stream (Uint8Array, ArrayBuffer, Blob) or a scan');
}

const browser = createParquet(() => undefined);

/** Loads the writer's WebAssembly module (optional: toParquet calls it). */
export const initParquet = browser.initParquet;
export const toParquet = browser.toParquet;
