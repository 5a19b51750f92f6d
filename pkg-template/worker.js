// The Web Worker side of `openInWorker` (remote.js): opens tables and runs scans in the
// worker, so decoding never runs on the page's thread. Each reply names the request it
// answers; scan pieces are transferred (not copied) to the page. Started by remote.js as
// `new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })`, which Vite,
// webpack 5 and esbuild's bundlers understand; start it yourself and pass it to
// openInWorker to load it from elsewhere.
import { DeltaTable, wasmMemoryBytes } from './index.js';
// A static import: bundlers build workers as one chunk (Vite's default worker format cannot
// split). The writer's .wasm is still fetched only by the first toParquet.
import { toParquet } from './parquet.js';
import { coded } from './scan-views.js';

// Room for the requests of a failed open (see `open`, which clears the timeline first); the
// browser keeps 250 by default.
globalThis.performance?.setResourceTimingBufferSize?.(10000);

/**
 * The messages between the page (remote.js) and this worker. Requests carry an `id` when they
 * want a reply; `cancel` and `free` do not.
 *
 * @typedef {{ op: 'open', id: number, source: string | object, options: object }} OpenRequest
 * @typedef {{ op: 'files' | 'columnProfile' | 'tableMetrics', id: number, table: number }} TableRequest
 * @typedef {{ op: 'scan', id: number, table: number, options: object, progress: boolean }} ScanRequest
 * @typedef {{ op: 'read', id: number, scan: number, how: 'stream' | 'batch' | 'toIPC' }} ReadRequest
 * @typedef {{ op: 'memory', id: number }} MemoryRequest
 * @typedef {{ op: 'toParquet', id: number, input: Uint8Array | ArrayBuffer | Blob, options: { rowGroupRows?: number } }} ParquetRequest
 * @typedef {{ op: 'cancel', target: number }} CancelRequest
 * @typedef {{ op: 'free', table: number }} FreeRequest
 * @typedef {OpenRequest | TableRequest | ScanRequest | ReadRequest | MemoryRequest | ParquetRequest | CancelRequest | FreeRequest} Request
 *
 * @typedef {{ id: number, ok: true, value: unknown }} Success
 *   `open` answers a table's description, `scan` `{ schema, metrics, skippedFiles }`, `read`
 *   `{ piece: Uint8Array | null, done: boolean, last: boolean, metrics }` (the piece
 *   transferred; `last`: the piece holds the stream's end marker), `memory` the bytes of
 *   this worker's wasm memory.
 * @typedef {{ id: number, ok: false, error: ReturnType<typeof errorData> }} Failure
 * @typedef {{ progress: number, value: object }} Progress  a scan's progress, by scan id
 * @typedef {Success | Failure | Progress} Reply
 */

const tables = new Map();
const scans = new Map();
/** The batches() iterator of each scan read batch by batch, made on first use. */
const batchIterators = new Map();
/** The next step of each scan being read, started as soon as the last was handed over, so
 * that the worker decodes while the page takes a piece (one piece ahead at most). */
const ahead = new Map();
/** AbortControllers of opens and scans, by their id, so the page can abort them. */
const aborts = new Map();

/** The plain, cloneable description of a table the page shows without asking again. */
function describe(table) {
  return {
    version: table.version,
    timestamp: table.timestamp,
    location: table.location,
    schema: table.schema,
    partitionColumns: table.partitionColumns,
    protocol: table.protocol,
    metadata: table.metadata,
    numFiles: table.numFiles,
    sizeBytes: table.sizeBytes,
    loadInfo: table.loadInfo,
  };
}

/** The fetches this worker's performance timeline holds for the table at `source`. */
function fetchesOf(source) {
  if (typeof source !== 'string' || typeof performance?.getEntriesByType !== 'function') {
    return [];
  }
  return performance.getEntriesByType('resource').filter((e) => e.name.startsWith(source) && e.initiatorType === 'fetch');
}

function errorData(error) {
  return {
    requests: error?.requests,
    bytesReceived: error?.bytesReceived,
    name: error?.name ?? 'Error',
    message: String(error?.message ?? error),
    code: error?.code,
    phase: error?.phase,
    transient: error?.transient,
    cause: error?.cause === undefined ? undefined : String(error.cause?.message ?? error.cause),
  };
}

function reply(id, value, transfer = []) {
  self.postMessage({ id, ok: true, value }, transfer);
}

/** A piece whose buffer is its own can be transferred; others are copied. */
function transferable(piece) {
  return piece instanceof Uint8Array && piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength
    ? [piece.buffer]
    : [];
}

const ops = {
  async open({ id, source, options }) {
    const controller = new AbortController();
    aborts.set(id, controller);
    globalThis.performance?.clearResourceTimings?.();
    try {
      const table = await DeltaTable.open(source, { ...options, signal: controller.signal });
      tables.set(id, table);
      return describe(table);
    } catch (error) {
      // A failed open leaves no table to ask for its metrics: what this worker's timeline
      // saw of the open's requests (same-origin sizes only) goes with the error.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const seen = fetchesOf(source);
      throw Object.assign(error, {
        requests: seen.length,
        bytesReceived: seen.reduce((sum, e) => sum + (e.encodedBodySize || 0), 0) || undefined,
      });
    } finally {
      aborts.delete(id);
    }
  },
  files({ table }) {
    return need(tables, table, 'table', 'load').files();
  },
  columnProfile({ table }) {
    return need(tables, table, 'table', 'load').columnProfile();
  },
  tableMetrics({ table }) {
    return need(tables, table, 'table', 'load').metrics;
  },
  scan({ id, table, options, progress }) {
    const controller = new AbortController();
    const scan = need(tables, table, 'table').scan({
      ...options,
      signal: controller.signal,
      onProgress: progress ? (p) => self.postMessage({ progress: id, value: p }) : undefined,
    });
    scans.set(id, scan);
    aborts.set(id, controller);
    return { schema: scan.outputSchema, metrics: scan.metrics, skippedFiles: scan.skippedFiles };
  },
  async read({ scan: scanId, how }) {
    const scan = need(scans, scanId, 'scan');
    try {
      if (how === 'toIPC') {
        const whole = await scan.toIPC();
        forget(scanId);
        return { piece: whole, done: false, metrics: scan.metrics };
      }
      const started = ahead.get(scanId);
      ahead.delete(scanId);
      const step = await (started ?? nextStep(scanId, scan, how));
      // The scan is forgotten once its iterator says done (the page asks once more after
      // the last piece), not when the scan's reading ends.
      if (step.done) {
        forget(scanId);
      }
      // A stream's last piece (its end marker) ends the scan before the iterator says done.
      const last = how === 'stream' && !step.done && scan.done;
      if (!step.done && !last) {
        // Decode the next piece while this one crosses to the page (its error, if any,
        // reaches the page with the next read).
        const next = nextStep(scanId, scan, how);
        next.catch(() => {});
        ahead.set(scanId, next);
      }
      return { piece: step.value ?? null, done: step.done, last, metrics: scan.metrics };
    } catch (error) {
      forget(scanId);
      throw error;
    }
  },
  memory() {
    return wasmMemoryBytes();
  },
  /** toParquet (parquet.js; its module is fetched on the first call) on `input`, the bytes
   * or a Blob of an Arrow IPC stream; answers the file's bytes, transferred. */
  toParquet({ input, options }) {
    return toParquet(input, options);
  },
  cancel({ target }) {
    aborts.get(target)?.abort(new Error('cancelled by the page'));
    scans.get(target)?.cancel();
    forget(target);
  },
  free({ table }) {
    tables.get(table)?.free();
    tables.delete(table);
  },
};

function need(map, key, what, phase = 'plan') {
  const value = map.get(key);
  if (value === undefined) {
    throw coded('invalid_argument', `this ${what} has ended or was freed in the worker`, phase);
  }
  return value;
}

/** The next step of `scan` read `how` (as one stream, or batch by batch). */
function nextStep(scanId, scan, how) {
  if (how !== 'batch') return scan.next();
  if (!batchIterators.has(scanId)) batchIterators.set(scanId, scan.batches());
  return batchIterators.get(scanId).next();
}

function forget(scanId) {
  scans.delete(scanId);
  ahead.delete(scanId);
  batchIterators.delete(scanId);
  aborts.delete(scanId);
}

self.addEventListener('message', async (event) => {
  const message = event.data;
  const op = Object.hasOwn(ops, message?.op) ? ops[message.op] : undefined;
  if (op === undefined) {
    // A page of another version of the package: say so rather than leave it waiting.
    if (message?.id !== undefined) {
      const error = Object.assign(new Error(`this worker has no operation ${JSON.stringify(message?.op)}`), {
        code: 'invalid_argument',
      });
      self.postMessage({ id: message.id, ok: false, error: errorData(error) });
    }
    return;
  }
  try {
    const value = await op(message);
    if (message.op === 'read' && value?.piece instanceof Uint8Array) {
      reply(message.id, value, transferable(value.piece));
    } else if (message.op === 'toParquet') {
      reply(message.id, value, transferable(value));
    } else if (message.id !== undefined) {
      reply(message.id, value);
    }
  } catch (error) {
    if (message.id !== undefined) {
      self.postMessage({ id: message.id, ok: false, error: errorData(error) });
    }
  }
});
