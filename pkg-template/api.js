// The public JavaScript API of delta-arrow-reader, on top of the wasm-bindgen module
// (delta_arrow_reader.js): lazy initialisation, DeltaTable.open, and scans that are async
// iterables of Arrow IPC streams. index.js (browsers, bundlers) and node.js (Node.js) each
// call createApi with their way of loading the .wasm file.
import initWasm, { openTable } from './delta_arrow_reader.js';

/**
 * Builds the API around a loader: `loadDefault()` returns what wasm-bindgen's init accepts
 * (a URL, a Response, bytes or a WebAssembly.Module), or undefined for its own default
 * (the .wasm next to delta_arrow_reader.js, fetched).
 */
export function createApi(loadDefault) {
  let ready = null;

  /** Loads and instantiates the WebAssembly module once; later calls share the promise. */
  function init(input) {
    if (ready === null) {
      ready = (async () => {
        const source = input !== undefined ? await input : await loadDefault();
        await initWasm(source === undefined ? undefined : { module_or_path: source });
      })();
      // A failed load may be retried (e.g. after a network error).
      ready.catch(() => {
        ready = null;
      });
    }
    return ready;
  }

  class DeltaScan {
    #raw;
    #signal;
    #onAbort;
    #schema;
    #metrics;

    /** @internal Made by DeltaTable.scan. */
    constructor(raw, signal) {
      this.#raw = raw;
      this.#schema = raw.schema;
      if (signal) {
        // The Rust side already stops reading on abort; here the wasm object is freed.
        this.#signal = signal;
        this.#onAbort = () => this.#release();
        signal.addEventListener('abort', this.#onAbort, { once: true });
      }
    }

    /** The output schema: { fields: [{ name, arrowType, nullable }] }. */
    get schema() {
      return this.#schema;
    }

    /** What the scan did so far: `ScanMetrics` in index.d.ts (kept once the scan ends). */
    get metrics() {
      return this.#raw ? this.#raw.metrics : this.#metrics;
    }

    /** Whether the scan has ended (read to the end, failed, cancelled or aborted). */
    get done() {
      return this.#raw ? this.#raw.done : true;
    }

    /** The async-iterator protocol: resolves to { done, value: Uint8Array }. */
    async next() {
      if (!this.#raw) {
        return { done: true, value: undefined };
      }
      let chunk;
      try {
        chunk = await this.#raw.next();
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

    /** Called by `break` in `for await`: stops the scan and releases it. */
    async return(value) {
      this.cancel();
      return { done: true, value };
    }

    [Symbol.asyncIterator]() {
      return this;
    }

    /** Everything not yet read, as one Arrow IPC stream. */
    async toIPC() {
      if (!this.#raw) {
        throw Object.assign(new Error('the scan has ended; start a new one with table.scan()'), {
          code: 'invalid_argument',
        });
      }
      try {
        return await this.#raw.toIPC();
      } finally {
        this.#release();
      }
    }

    /** Stops reading and releases the scan; a pending next() rejects with an AbortError. */
    cancel() {
      if (this.#raw) {
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
      this.#signal?.removeEventListener('abort', this.#onAbort);
      try {
        this.#metrics = raw.metrics;
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

    /** Opens the Delta table at `url` (the table root, http(s); in a page it may be relative). */
    static async open(url, options = {}) {
      await init();
      const raw = await openTable(String(url), normalizeOpenOptions(options));
      return new DeltaTable(raw);
    }

    #get(key) {
      if (!this.#raw) {
        throw Object.assign(new Error('the table has been freed'), { code: 'invalid_argument' });
      }
      if (!this.#cache.has(key)) {
        this.#cache.set(key, this.#raw[key]);
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

    /** Plans a scan; throws (code invalid_argument, ...) for unknown columns or a bad filter. */
    scan(options = {}) {
      this.#get('version');
      const raw = this.#raw.scan(options);
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

  return { init, DeltaTable, DeltaScan };
}

/** Headers may be a Headers instance, an array of pairs or a plain object. */
function normalizeOpenOptions(options) {
  if (options == null) {
    return {};
  }
  const { headers } = options;
  if (headers == null || Array.isArray(headers)) {
    return options;
  }
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    return { ...options, headers: [...headers.entries()] };
  }
  if (typeof headers[Symbol.iterator] === 'function') {
    return { ...options, headers: [...headers] };
  }
  return options;
}
