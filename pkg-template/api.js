// The public JavaScript API of delta-arrow-reader, on top of the wasm-bindgen module
// (delta_arrow_reader.js): lazy initialisation, DeltaTable.open over http(s) or a byte
// source, and scans that are async iterables of one continuous Arrow IPC stream.
// index.js (browsers, bundlers) and node.js (Node.js) each call createApi with their way of
// loading the .wasm file and, in Node, of opening a local folder.
import initWasm, { openTable, openSource } from './delta_arrow_reader.js';
import { byteSourceFor } from './sources.js';
import { warmUp } from './warm-up.js';
import { batchIterable, checkOptionNames, checkReadable, claim, coded, deepFreeze, endOnAbort, inTurn, markCancelled, OPEN_OPTIONS, progressCallback, restOfStream, SCAN_OPTIONS, ScanViews } from './scan-views.js';

/**
 * Builds the API around a loader: `loadDefault()` returns what wasm-bindgen's init accepts
 * (a URL, a Response, bytes or a WebAssembly.Module), or undefined for its own default
 * (the .wasm next to delta_arrow_reader.js, fetched). `localFolder(pathOrFileUrl)`, where
 * the runtime has a file system (Node.js), returns `{ source, location }` for a local table.
 */
export function createApi(loadDefault, { localFolder } = {}) {
  let ready = null;
  let exports = null;
  let warmUpStarted = false;

  /** Once per module instance, right after the first open over http(s) has sent its first
   * requests: the tiny table of warm-up.js read while they are in flight, so the code a
   * first read runs is compiled then, not between its round trips. Futures of the wasm
   * module run in microtasks in the order they start, and all of the warm-up's in a row
   * (it reads from memory), before the page handles any answer. */
  function warmUpOnce() {
    if (warmUpStarted) return;
    warmUpStarted = true;
    warmUp(openSource).catch(() => {});
  }

  /** Loads and instantiates the WebAssembly module once; later calls share the promise. */
  function init(input) {
    if (ready === null) {
      ready = (async () => {
        const source = input !== undefined ? await input : await loadDefault();
        exports = await initWasm(source === undefined ? undefined : { module_or_path: source });
      })();
      // A failed load may be retried (e.g. after a network error).
      ready.catch(() => {
        ready = null;
      });
    }
    return ready;
  }

  class DeltaScan extends ScanViews {
    #raw;
    #unwatch;
    #schema;
    #metrics;
    #skippedFiles;
    /** How the scan is read: 'next' (one stream) or 'nextBatch' (batches()), fixed by the
     * first read. */
    #mode = null;

    /** @internal Made by DeltaTable.scan. */
    constructor(raw, signal) {
      super();
      this.#raw = raw;
      this.#schema = raw.schema;
      this.#skippedFiles = raw.skippedFiles;
      // The Rust side already stops reading on abort; here the wasm object is freed.
      this.#unwatch = endOnAbort(this, signal, () => this.#release());
    }

    /** The output schema: { fields: [{ name, arrowType, nullable }] }. (Not `schema`:
     * apache-arrow takes any object with a `schema` for Arrow JSON, and would not read the
     * scan as a stream.) */
    get outputSchema() {
      return this.#schema;
    }

    /** The files the filter ruled out before reading: `SkippedFile[]` in index.d.ts. */
    get skippedFiles() {
      return this.#skippedFiles;
    }

    /** What the scan did so far: `ScanMetrics` in index.d.ts (kept once the scan ends). */
    get metrics() {
      return this.#raw ? this.#raw.metrics : this.#metrics;
    }

    /** Whether the scan has ended (read to the end, failed, cancelled or aborted). */
    get done() {
      return this.#raw ? this.#raw.done : true;
    }

    /** The async-iterator protocol: resolves to { done, value: Uint8Array }, the pieces of
     * one continuous Arrow IPC stream (schema, record batches, end marker). */
    async next() {
      return this.#step('next');
    }

    /** One step of the scan read `method`'s way, after the steps asked for before it. */
    #step(method) {
      if (this.#mode !== null && this.#mode !== method && this.#raw) {
        // Refused without touching the scan, which the other way goes on reading.
        const other = method === 'next' ? 'batches()' : 'next() or stream()';
        return Promise.reject(coded('invalid_argument', `this scan is read with ${other}: a scan is read one way`));
      }
      this.#mode ??= method;
      return inTurn(this, () => this.#stepNow(method));
    }

    async #stepNow(method) {
      if (!this.#raw) {
        return { done: true, value: undefined };
      }
      let chunk;
      try {
        chunk = await this.#raw[method]();
      } catch (error) {
        this.#release();
        throw error;
      }
      if (chunk == null) {
        this.#release();
        return { done: true, value: undefined };
      }
      return { done: false, value: chunk };
    }

    /** An async iterable of one complete Arrow IPC stream (schema, batch, end marker) per
     * record batch, each readable on its own. A scan is read either this way or as one
     * stream, not both. */
    batches() {
      checkReadable(this);
      return batchIterable(this, () => this.#step('nextBatch'));
    }

    /** Everything not yet read, as one Arrow IPC stream. */
    async toIPC() {
      checkReadable(this);
      if (this.#mode === 'nextBatch') {
        throw coded('invalid_argument', 'this scan is read with batches(): a scan is read one way');
      }
      claim(this, 'toIPC()');
      if (this.#mode === 'next') {
        // The stream has begun: the rest of it.
        return restOfStream(this);
      }
      this.#mode = 'next';
      return inTurn(this, async () => {
        checkReadable(this);
        try {
          return await this.#raw.toIPC();
        } finally {
          this.#release();
        }
      });
    }

    /** Stops reading and releases the scan; a pending next() rejects with an AbortError,
     * as every later read does. */
    cancel() {
      if (this.#raw) {
        markCancelled(this);
        this.#raw.cancel();
        this.#release();
      }
    }

    #release() {
      const raw = this.#raw;
      if (!raw) {
        return;
      }
      this.#raw = null;
      this.#unwatch?.();
      try {
        // Released means ended (read to the end, failed, cancelled or aborted), also when an
        // abort released it while a read was still under way.
        const metrics = raw.metrics;
        this.#metrics = metrics && typeof metrics === 'object' ? { ...metrics, done: true } : metrics;
      } catch {
        // metrics of a scan that cannot describe itself stay undefined
      }
      raw.cancel();
      raw.free();
    }
  }

  class DeltaTable {
    #raw;
    #cache = new Map();

    /** @internal Use DeltaTable.open. */
    constructor(raw) {
      this.#raw = raw;
    }

    /** Opens the Delta table at `target`: an http(s) URL of the table root (in a page it
     * may be relative); in Node.js a path or `file://` URL; a FileSystemDirectoryHandle;
     * the files of a picked folder; or a byte source `{ read, size?, list? }`. */
    static async open(target, options = {}) {
      await init();
      const found = byteSourceFor(target, localFolder);
      const normalized = normalizeOpenOptions(options, found === null);
      await found?.check?.();
      if (found !== null) {
        return new DeltaTable(await openSource(found.source, found.kind, found.location, normalized));
      }
      const opening = openTable(String(target), normalized);
      warmUpOnce();
      return new DeltaTable(await opening);
    }

    #get(key, phase = 'load') {
      if (!this.#raw) {
        throw coded('invalid_argument', 'the table has been freed: open it again', phase);
      }
      if (!this.#cache.has(key)) {
        // Frozen: one caller's edit of the schema (or metadata, ...) is not another's.
        this.#cache.set(key, deepFreeze(this.#raw[key]));
      }
      return this.#cache.get(key);
    }

    get version() {
      return this.#get('version');
    }
    get timestamp() {
      return this.#get('timestamp');
    }
    get location() {
      return this.#get('location');
    }
    get schema() {
      return this.#get('schema');
    }
    get partitionColumns() {
      return this.#get('partitionColumns');
    }
    get protocol() {
      return this.#get('protocol');
    }
    get metadata() {
      return this.#get('metadata');
    }
    get numFiles() {
      return this.#get('numFiles');
    }
    get sizeBytes() {
      return this.#get('sizeBytes');
    }
    get loadInfo() {
      return this.#get('loadInfo');
    }
    /** Every request made for this table so far (live, not cached). */
    get metrics() {
      this.#get('version');
      return this.#raw.metrics;
    }

    /** The active files: [{ path, size, partitionValues, deletionVector, modificationTime, numRecords }]. */
    files() {
      this.#get('version');
      return this.#raw.files();
    }

    /** Per column, from the log alone: min, max, null count (see ColumnProfile in index.d.ts). */
    columnProfile() {
      this.#get('version');
      return this.#raw.columnProfile();
    }

    /** Plans a scan; throws (code invalid_argument, ...) for unknown columns or a bad filter. */
    scan(options = {}) {
      this.#get('version', 'plan');
      checkOptionNames(options, SCAN_OPTIONS, 'table.scan()');
      atLeastOne(options?.maxPageBytes, 'maxPageBytes');
      atLeastOne(options?.batchSize, 'batchSize');
      const withProgress = options?.onProgress ? { ...options, onProgress: progressCallback(options.onProgress) } : options;
      const raw = this.#raw.scan(withProgress);
      return new DeltaScan(raw, options?.signal ?? undefined);
    }

    /** Releases the snapshot's memory now instead of at garbage collection. */
    free() {
      if (this.#raw) {
        this.#raw.free();
        this.#raw = null;
      }
    }
  }

  /** The bytes of the WebAssembly module's memory (0 before it is loaded). */
  function wasmMemoryBytes() {
    return exports?.memory?.buffer?.byteLength ?? 0;
  }

  return { init, DeltaTable, DeltaScan, wasmMemoryBytes };
}

/** Headers (in `headers` and `requestInit.headers`) may be a Headers instance, an array of
 * pairs or a plain object; the wasm side takes pairs or a plain object. */
function normalizeOpenOptions(options, overHttp) {
  if (options == null) {
    return overHttp ? { fetch: pinVersions(answerWithin(globalFetch, DEFAULT_ANSWER_MS)) } : {};
  }
  checkOptionNames(options, OPEN_OPTIONS, 'DeltaTable.open()', 'load');
  const headers = headerPairs(options.headers);
  const out = { ...options, headers };
  if (options.requestInit != null && typeof options.requestInit === 'object') {
    // A header given in both places is sent once, with the value of `headers` (which win).
    const own = new Set((Array.isArray(headers) ? headers : []).map((pair) => String(pair?.[0]).toLowerCase()));
    let inner = headerPairs(options.requestInit.headers);
    if (Array.isArray(inner) && own.size > 0) {
      inner = inner.filter((pair) => !own.has(String(pair?.[0]).toLowerCase()));
    }
    out.requestInit = { ...options.requestInit, headers: inner };
  }
  let { answerTimeoutMs = DEFAULT_ANSWER_MS } = options;
  delete out.answerTimeoutMs;
  if (!overHttp && options.answerTimeoutMs !== undefined) {
    throw coded('invalid_argument', 'answerTimeoutMs applies to http(s) tables only', 'load');
  }
  if (typeof answerTimeoutMs !== 'number' || !(answerTimeoutMs >= 0)) {
    throw coded('invalid_argument', 'answerTimeoutMs must be a number of milliseconds, 0 or more (0 or Infinity: no bound)', 'load');
  }
  // Timers hold at most 2^31 - 1 ms (24.8 days); a longer bound is none (a timer set longer
  // fires at once).
  if (answerTimeoutMs > MAX_TIMER_MS) answerTimeoutMs = 0;
  const retries = typeof options.retries === 'bigint' ? Number(options.retries) : options.retries;
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0 && retries <= MAX_RETRIES)) {
    throw coded('invalid_argument', `retries must be a whole number from 0 to ${MAX_RETRIES}`, 'load');
  }
  atLeastOne(options.maxCommits, 'maxCommits', 'load');
  if (typeof options.fetch === 'function') {
    const userFetch = options.fetch;
    out.fetch = pinVersions(answerWithin(async (...args) => asResponse(await userFetch(...args)), answerTimeoutMs));
  } else if (overHttp && options.fetch == null) {
    out.fetch = pinVersions(answerWithin(globalFetch, answerTimeoutMs));
  }
  return out;
}

/** Refuses (`invalid_argument`) a count option given as 0 (or less), which means nothing;
 * the other checks of its value are the reader's. */
function atLeastOne(value, name, phase = 'plan') {
  if ((typeof value === 'number' || typeof value === 'bigint') && value < 1) {
    throw coded('invalid_argument', `options.${name} must be at least 1`, phase);
  }
}

/** How long a request may wait for its answer (status and headers) by default: 30 s. */
const DEFAULT_ANSWER_MS = 30_000;
/** The longest delay `setTimeout` keeps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The most retries a request may be given (with backoff, hours against a failing server). */
const MAX_RETRIES = 100;

function globalFetch(request) {
  return globalThis.fetch(request);
}

/** `fetchFn` with a bound (`ms`; 0: none) on the wait for each answer's status and headers,
 * and then for each next piece of its body: a server that takes the connection and never
 * answers, or stops sending in the middle of a body, fails the request with a
 * `TimeoutError`, which the reader retries like a network error (`retries`), instead of
 * holding the read for as long as the runtime lets it (Node.js: 5 minutes a try; a stalled
 * body: for ever). A body may still come as slowly as the link is, as long as it moves. */
function answerWithin(fetchFn, ms) {
  if (!(ms > 0) || typeof AbortSignal?.any !== 'function') {
    return fetchFn;
  }
  return async (request) => {
    const timer = new AbortController();
    let id;
    // Settles (rejects) when the bound passes, also for a `fetch` that does not listen to
    // its request's signal.
    const late = new Promise((_, reject) => {
      id = setTimeout(() => {
        const error = Object.assign(new Error(`no answer within ${ms} ms (answerTimeoutMs)`), { name: 'TimeoutError' });
        timer.abort(error);
        reject(error);
      }, ms);
    });
    let answer;
    try {
      const signal = AbortSignal.any([request.signal, timer.signal]);
      answer = await Promise.race([fetchFn(new Request(request, { signal })), late]);
    } finally {
      clearTimeout(id);
    }
    return bodyWithin(answer, ms, (error) => timer.abort(error));
  };
}

/** The most files whose first answer `pinVersions` keeps (then it starts again). */
const MAX_PINNED = 16_384;

/** `fetchFn`, each file's answers checked against its first one: a file is read in several
 * requests (footer, pages, deletion vector), and a file replaced between them would join a
 * footer of one file to the pages of another (wrong rows). Another size (`Content-Range`'s
 * total, or `Content-Length` of a whole answer), or another `ETag` unless both answers give
 * the same `Last-Modified` (servers that derive `ETag`s per node), is answered `412` with
 * the reason, which the read reports as its `io` error and does not retry; every pin is
 * then dropped, so the table read again reads afresh. `_last_checkpoint` (rewritten by
 * every checkpoint) is not pinned; headers a cross-origin server does not expose are not
 * compared. */
function pinVersions(fetchFn) {
  const pins = new Map();
  return async (request) => {
    const answer = await fetchFn(request);
    const status = answer?.status;
    if ((status !== 200 && status !== 206) || typeof answer?.headers?.get !== 'function') {
      return answer;
    }
    const url = new URL(request.url);
    if (url.pathname.endsWith('/_last_checkpoint')) {
      return answer;
    }
    const key = url.origin + url.pathname;
    const header = (name) => answer.headers.get(name);
    const total = status === 206 ? /\/(\d+)\s*$/.exec(header('content-range') ?? '')?.[1] : header('content-length');
    const now = { size: total ?? null, etag: header('etag'), modified: header('last-modified') };
    const before = pins.get(key);
    if (before === undefined) {
      if (pins.size >= MAX_PINNED) pins.clear();
      pins.set(key, now);
      return answer;
    }
    const sizes = before.size !== null && now.size !== null && before.size !== now.size;
    const sameTime = before.modified !== null && before.modified === now.modified;
    const tags = before.etag !== null && now.etag !== null && before.etag !== now.etag && !sameTime;
    if (!sizes && !tags) {
      return answer;
    }
    pins.clear();
    pins.set(key, now);
    answer.body?.cancel?.().catch(() => {});
    const describe = (v) => [v.size !== null && `${v.size} bytes`, v.etag !== null && `ETag ${v.etag}`, v.modified !== null && `last modified ${v.modified}`].filter(Boolean).join(', ');
    // A reason phrase is printable ASCII.
    const reason = `the file changed while it was read: it was ${describe(before)} and is now ${describe(now)}; read the table again`.replace(/[^\x20-\x7e]/g, '?');
    return new Response(null, { status: 412, statusText: reason });
  };
}

/** `answer` with its body's stream passed through a watchdog: a wait of more than `ms` for
 * the next piece errors the stream with a `TimeoutError` and calls `stop` (which aborts the
 * request, so the connection is let go). Anything without a readable stream is left as is
 * (the reader then asks for `arrayBuffer()`, which only the request's signal bounds). */
function bodyWithin(answer, ms, stop) {
  const body = answer?.body;
  if (typeof ReadableStream !== 'function' || !(body instanceof ReadableStream) || body.locked) {
    return answer;
  }
  const reader = body.getReader();
  const watched = new ReadableStream(
    {
      async pull(controller) {
        let id;
        const stalled = new Promise((_, reject) => {
          id = setTimeout(() => {
            reject(Object.assign(new Error(`no body bytes for ${ms} ms (answerTimeoutMs)`), { name: 'TimeoutError' }));
          }, ms);
        });
        try {
          const { done, value } = await Promise.race([reader.read(), stalled]);
          if (done) {
            controller.close();
          } else {
            controller.enqueue(value);
          }
        } catch (error) {
          stop(error);
          reader.cancel(error).catch(() => {});
          controller.error(error);
        } finally {
          clearTimeout(id);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  if (typeof Response === 'function' && answer instanceof Response) {
    return new Response(watched, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  }
  return { ...answer, body: watched, bodyUsed: false };
}

/** Headers as pairs: from a Headers instance, an iterable of pairs, or a plain object; the
 * wasm side checks the pairs themselves. */
function headerPairs(headers) {
  if (headers == null || Array.isArray(headers)) {
    return headers;
  }
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    return [...headers.entries()];
  }
  if (typeof headers[Symbol.iterator] === 'function') {
    return [...headers];
  }
  if (typeof headers === 'object') {
    return Object.entries(headers);
  }
  return headers;
}

/** What a user's `fetch` resolved to, as the reader reads it: a Response as it is; a
 * Response-like object (another realm's, or a test's mock) with its missing parts filled
 * (`statusText`, `ok`, `headers`), so that a partial mock is an answer or a typed error,
 * never an exception thrown outside the read. Anything without a numeric `status` is left
 * to the reader, which refuses it. */
function asResponse(answer) {
  if (typeof Response === 'function' && answer instanceof Response) {
    return answer;
  }
  if (answer == null || typeof answer !== 'object') {
    return answer;
  }
  if (!Number.isInteger(answer.status) || answer.status < 100 || answer.status > 599) {
    // Not an answer the reader can take (a status of '200', say): refused as "not a
    // Response", never read through getters that throw outside the read.
    return null;
  }
  let headers;
  try {
    headers = typeof answer.headers?.get === 'function' ? answer.headers : new Headers(answer.headers ?? undefined);
  } catch {
    return null;
  }
  const { arrayBuffer } = answer;
  return {
    status: answer.status,
    ok: typeof answer.ok === 'boolean' ? answer.ok : answer.status >= 200 && answer.status < 300,
    statusText: typeof answer.statusText === 'string' ? answer.statusText : '',
    headers,
    body: typeof ReadableStream === 'function' && answer.body instanceof ReadableStream ? answer.body : null,
    bodyUsed: Boolean(answer.bodyUsed),
    // Always a promise of bytes, whatever the mock's `arrayBuffer` returns.
    arrayBuffer: typeof arrayBuffer === 'function' ? () => bytesOf(arrayBuffer.call(answer)) : () => bytesOf(answer.body),
  };
}

/** What a Response-like answer's `arrayBuffer()` (or its `body`) gave, as a promise of an
 * ArrayBuffer or a view; anything else rejects with a TypeError (the read's `io` error). */
async function bytesOf(given) {
  const bytes = await given;
  if (bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes)) {
    return bytes;
  }
  if (typeof bytes === 'string') {
    return new TextEncoder().encode(bytes);
  }
  throw new TypeError(`the fetch function's answer gave ${bytes === null ? 'null' : typeof bytes} as its body, not bytes`);
}

