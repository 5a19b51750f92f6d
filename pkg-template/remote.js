// `openInWorker(source, options)`: the same tables and scans as DeltaTable.open, run in a Web
// Worker (worker.js) so that loading and decoding never block the page. A scan's pieces are
// transferred from the worker (no copy); cancelling (`cancel()`, `break`, the scan's
// `signal`) stops the worker's read at once; `onProgress` is called on the page.
//
// What crosses to the worker must be cloneable: URLs, paths, a FileSystemDirectoryHandle,
// a FileList, and plain options. Functions cannot cross: `onProgress` is relayed, `signal`
// becomes a message; `signUrl`, `fetch` and a custom byte source are refused (open those
// tables in the worker yourself, with the package's DeltaTable).

import { PartsScan } from './parts-scan.js';
import { abortError, whenDropped, batchIterable, checkOptionNames, checkReadable, claim, deepFreeze, OPEN_OPTIONS, SCAN_OPTIONS, coded, endOnAbort, inTurn, markCancelled, progressCallback, restOfStream, ScanViews, watch } from './scan-views.js';

/** The package's own workers, started when first needed: the first opens tables, the others
 * join it to read big scans. */
const packageWorkers = [];
let nextId = 1;

/** A scan is read by more than one worker only when it reads at least this many bytes per
 * worker: below it, opening the table in another worker costs more than it saves. */
export const MIN_PART_BYTES = 16 * 1024 * 1024;

/** The most workers one table's scans may use. */
const MAX_WORKERS = 16;

/** One worker and its pending requests. */
class Channel {
  #worker;
  #pending = new Map();
  #progress = new Map();
  /** The error of a worker that failed: every later call rejects with it at once (the
   * worker will never answer). */
  #failed = null;

  constructor(worker) {
    this.#worker = worker;
    worker.addEventListener('message', (event) => this.#receive(event.data));
    worker.addEventListener('error', (event) => {
      // A worker whose script (or a module it imports) cannot be loaded fails with no
      // message: say what to look at.
      const why = event.message ?? "it could not start: its script (worker.js) or what it imports could not be loaded — with a bundler, see 'Where it runs' in the package README";
      const error = coded('io', `the reader's worker failed: ${why}`, 'read');
      this.#failed = error;
      for (const { reject } of this.#pending.values()) reject(error);
      this.#pending.clear();
    });
  }

  #receive(message) {
    if (message?.progress !== undefined) {
      this.#progress.get(message.progress)?.(message.value);
      return;
    }
    const waiting = this.#pending.get(message?.id);
    if (waiting === undefined) {
      return;
    }
    this.#pending.delete(message.id);
    if (message.ok) {
      waiting.resolve(message.value);
    } else {
      const data = message.error ?? {};
      const error = new Error(data.message);
      error.name = data.name ?? 'Error';
      for (const key of ['code', 'phase', 'transient', 'cause', 'requests', 'bytesReceived']) {
        if (data[key] !== undefined) error[key] = data[key];
      }
      waiting.reject(error);
    }
  }

  /** Sends `message` with a fresh id; resolves to the worker's reply. */
  call(message, id = nextId++) {
    if (this.#failed) {
      return Promise.reject(this.#failed);
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id });
    });
  }

  /** Sends `message` without waiting for a reply. */
  send(message) {
    this.#worker.postMessage(message);
  }

  onProgress(scanId, callback) {
    if (callback) this.#progress.set(scanId, callback);
    else this.#progress.delete(scanId);
  }
}

/** The options without what cannot cross to the worker; refuses functions it cannot relay
 * (as an error of `phase`: `load` for `openInWorker`'s options, `plan` for a scan's). */
function cloneable(options, allowed, phase = 'plan') {
  const out = {};
  for (const [key, value] of Object.entries(options ?? {})) {
    if (allowed.has(key)) continue;
    if (typeof value === 'function') {
      throw coded('invalid_argument', `options.${key} is a function, which cannot be sent to a worker: open the table in the worker yourself`, phase);
    }
    out[key] = value;
  }
  return out;
}

class RemoteScan extends ScanViews {
  #channel;
  #id;
  #schema;
  #metrics;
  #skippedFiles;
  #done = false;
  #unwatch;
  #reading = null;

  constructor(channel, id, opened, signal) {
    super();
    this.#channel = channel;
    this.#id = id;
    this.#schema = opened.schema;
    this.#metrics = opened.metrics;
    this.#skippedFiles = opened.skippedFiles ?? [];
    whenDropped.register(this, releaseScan(channel, id), this);
    this.#unwatch = endOnAbort(this, signal, () => this.cancel());
  }

  get outputSchema() {
    return this.#schema;
  }

  /** The files the filter ruled out before reading (as the worker's scan planned them). */
  get skippedFiles() {
    return this.#skippedFiles;
  }

  /** The scan's metrics as of its last piece. */
  get metrics() {
    return this.#metrics;
  }

  get done() {
    return this.#done;
  }

  /** How many workers read this scan (1). */
  get parts() {
    return 1;
  }

  async #read(how) {
    if (this.#done) {
      return { done: true, value: undefined };
    }
    const kind = how === 'stream' ? 'stream' : 'batch';
    if (this.#reading !== null && this.#reading !== kind) {
      throw coded('invalid_argument', 'a scan is read one way only: as one stream or batch by batch');
    }
    this.#reading = kind;
    try {
      const step = await this.#channel.call({ op: 'read', scan: this.#id, how });
      this.#metrics = step.metrics;
      if (step.done) {
        this.#end();
        return { done: true, value: undefined };
      }
      return { done: false, value: step.piece };
    } catch (error) {
      this.#end();
      throw error;
    }
  }

  next() {
    return inTurn(this, () => this.#read('stream'));
  }

  batches() {
    checkReadable(this);
    return batchIterable(this, () => inTurn(this, () => this.#read('batch')));
  }

  async toIPC() {
    checkReadable(this);
    claim(this, 'toIPC()');
    if (this.#reading === 'stream') {
      // The stream has begun: the rest of it.
      return restOfStream(this);
    }
    const { done, value } = await inTurn(this, () => this.#read('toIPC'));
    if (done) throw coded('invalid_argument', 'the scan has ended; start a new one with table.scan()');
    this.#end();
    return value;
  }

  cancel() {
    if (!this.#done) {
      markCancelled(this);
      this.#channel.send({ op: 'cancel', target: this.#id });
      this.#end();
    }
  }

  #end() {
    this.#done = true;
    whenDropped.unregister(this);
    // Unset while the constructor runs: a signal aborted already ends the scan at once.
    this.#unwatch?.();
    this.#channel.onProgress(this.#id, null);
  }
}

class RemoteTable {
  #channel;
  #id;
  #info;
  #freed = false;
  #opening;
  #helpers;
  /** The table opened in each helper worker, by its channel: a promise of its id there. */
  #helperTables = new Map();

  /**
   * @param {object} opening `{ source, options }` as sent to the first worker, to open the
   *   same version in the others
   * @param {{ count: number, take: (n: number) => Channel[] }} helpers the other workers
   *   that may read this table's scans: how many, and the first `n` of them (started then)
   */
  constructor(channel, id, info, opening, helpers) {
    this.#channel = channel;
    this.#id = id;
    // Frozen: one caller's edit of the schema (or metadata, ...) is not another's.
    this.#info = deepFreeze(info);
    this.#opening = opening;
    this.#helpers = helpers;
    whenDropped.register(this, releaseTable(channel, id, this.#helperTables), this);
  }

  get version() { return this.#fact('version'); }
  get timestamp() { return this.#fact('timestamp'); }
  get location() { return this.#fact('location'); }
  get schema() { return this.#fact('schema'); }
  get partitionColumns() { return this.#fact('partitionColumns'); }
  get protocol() { return this.#fact('protocol'); }
  get metadata() { return this.#fact('metadata'); }
  get numFiles() { return this.#fact('numFiles'); }
  get sizeBytes() { return this.#fact('sizeBytes'); }
  get loadInfo() { return this.#fact('loadInfo'); }

  /** One of the table's facts; refused once the table is freed, as `DeltaTable`'s are. */
  #fact(key) {
    if (this.#freed) throw coded('invalid_argument', 'the table has been freed: open it again', 'load');
    return this.#info[key];
  }

  /** The active files (asked of the worker). */
  files() {
    return this.#channel.call({ op: 'files', table: this.#id });
  }

  /** The column profile from the log (asked of the worker). */
  columnProfile() {
    return this.#channel.call({ op: 'columnProfile', table: this.#id });
  }

  /** Every request made for this table so far (asked of the worker). */
  metrics() {
    return this.#channel.call({ op: 'tableMetrics', table: this.#id });
  }

  /** The wasm memory of each worker holding this table, in bytes (asked of the workers). */
  async memory() {
    const ids = [[this.#channel, Promise.resolve(this.#id)], ...this.#helperTables];
    const settled = await Promise.allSettled(ids.map(async ([channel, table]) => {
      await table;
      return channel.call({ op: 'memory' });
    }));
    return settled.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  }

  /**
   * Plans a scan in the worker; resolves once it is planned (a bad filter rejects). A scan
   * without a `limit` that reads at least `2 × MIN_PART_BYTES` is read by more workers at
   * once when the table has them (`openInWorker`'s `workers`), each decoding a part of its
   * files; its batches then come in the order the workers finish them. `parallel: false`
   * keeps a scan on one worker, in file order; `parallel: true` uses every worker whatever
   * the scan's size.
   */
  async scan(options = {}) {
    checkOptionNames(options, [...SCAN_OPTIONS, 'parallel'], 'table.scan()');
    const { signal, parallel } = options ?? {};
    const onProgress = progressCallback(options?.onProgress);
    const sent = cloneable(options, new Set(['signal', 'onProgress', 'parallel']));
    const whole = await this.#plan(this.#channel, this.#id, sent, onProgress);
    const available = parallel === false || sent.limit != null || sent.part != null ? 0 : this.#helpers.count;
    const byBytes = Math.floor((whole.opened.metrics?.bytesTotal ?? 0) / MIN_PART_BYTES);
    const count = Math.min(available + 1, parallel === true ? Infinity : byBytes);
    if (count > 1) {
      const parts = await this.#planParts(this.#helpers.take(count - 1), sent, whole, signal, onProgress);
      if (parts !== null) {
        return new PartsScan(parts, whole.opened, { signal, onProgress });
      }
    }
    return new RemoteScan(this.#channel, whole.id, whole.opened, signal);
  }

  /** Plans `options` in `channel`'s table `table`; `{ id, opened }`. */
  async #plan(channel, table, options, onProgress) {
    const id = nextId++;
    channel.onProgress(id, onProgress ?? null);
    try {
      const opened = await channel.call({ op: 'scan', table, options, progress: Boolean(onProgress) }, id);
      return { channel, id, opened };
    } catch (error) {
      channel.onProgress(id, null);
      throw error;
    }
  }

  /**
   * The scan `whole` (planned in the first worker) cut into one part per worker: the first
   * worker and those of `helpers` that could open this version. `null`, with `whole` left
   * as it is, when no helper could; otherwise `whole` is dropped.
   */
  async #planParts(helpers, options, whole, signal, onProgress) {
    const opened = await Promise.all(helpers.map((channel) => this.#openIn(channel).then(
      (table) => ({ channel, table }),
      () => null,
    )));
    const usable = [{ channel: this.#channel, table: this.#id }, ...opened.filter(Boolean)];
    if (usable.length < 2 || signal?.aborted) {
      return null;
    }
    this.#channel.send({ op: 'cancel', target: whole.id });
    this.#channel.onProgress(whole.id, null);
    const count = usable.length;
    const planned = await Promise.allSettled(usable.map(({ channel, table }, index) => (
      this.#plan(channel, table, { ...options, part: { index, count } }, onProgress)
    )));
    const failed = planned.find((p) => p.status === 'rejected');
    if (failed) {
      for (const p of planned) {
        if (p.status === 'fulfilled') {
          p.value.channel.send({ op: 'cancel', target: p.value.id });
          p.value.channel.onProgress(p.value.id, null);
        }
      }
      throw failed.reason;
    }
    return planned.map((p) => p.value);
  }

  /** Opens this table's version in every helper worker now (in the background: a failure is
   * retried by the next scan that needs that worker). `early`: opens already sent to helpers
   * together with the first worker's (`openHelpersEarly`), kept where they found this
   * version. */
  prepareHelpers(early = []) {
    for (const { channel, id, info } of early) {
      const table = info.then((opened) => {
        if (opened?.version === this.#info.version) return id;
        // A commit landed between the two opens: this one read another version.
        channel.send({ op: 'free', table: id });
        this.#helperTables.delete(channel);
        return this.#openIn(channel);
      });
      table.catch(() => this.#helperTables.delete(channel));
      this.#helperTables.set(channel, table);
    }
    for (const channel of this.#helpers.take(this.#helpers.count)) {
      this.#openIn(channel).catch(() => {});
    }
  }

  /** This table's version opened in `channel`'s worker (once; a failed open is retried by
   * the next scan). */
  #openIn(channel) {
    if (!this.#helperTables.has(channel)) {
      const { source, options } = this.#opening;
      const pinned = { ...options, version: this.#info.version };
      delete pinned.timestamp;
      const id = nextId++;
      const table = channel.call({ op: 'open', source, options: pinned }, id).then(() => id);
      table.catch(() => this.#helperTables.delete(channel));
      this.#helperTables.set(channel, table);
    }
    return this.#helperTables.get(channel);
  }

  free() {
    this.#freed = true;
    whenDropped.unregister(this);
    releaseTable(this.#channel, this.#id, this.#helperTables)();
  }
}

/** What stops a scan in its worker. Made here, not in the constructor: a closure made there
 * would share the constructor's scope, which holds the scan (its other closures use `this`),
 * and the registry would then keep the scan alive for ever. */
function releaseScan(channel, id) {
  return () => {
    channel.onProgress(id, null);
    channel.send({ op: 'cancel', target: id });
  };
}

/** What frees a table in its workers: the first's and each helper's (see `free()`). */
function releaseTable(channel, id, helperTables) {
  return () => {
    channel.send({ op: 'free', table: id });
    for (const [helper, table] of helperTables) {
      table.then((tableId) => helper.send({ op: 'free', table: tableId }), () => {});
    }
    helperTables.clear();
  };
}

/**
 * Opens a table in a Web Worker: `source` and `options` as for `DeltaTable.open` (cloneable
 * ones only). `worker` defaults to the first of the package's own workers. `workers`: how
 * many workers may read one big scan (a number: the package's own workers after the first;
 * default: the machine's cores, at most 4), or the workers themselves (an array, the first
 * of which opens the table).
 */
export async function openInWorker(source, options = {}, { worker, workers } = {}) {
  if (source !== null && typeof source === 'object' && typeof source.read === 'function') {
    throw coded('invalid_argument', 'a custom byte source cannot be sent to a worker: open it in the worker yourself');
  }
  checkOptionNames(options, OPEN_OPTIONS, 'openInWorker()', 'load');
  const { first, helpers } = workerPool(worker, workers);
  const channel = channelFor(first);
  const { signal } = options ?? {};
  const sent = cloneable(options, new Set(['signal']), 'load');
  if (signal?.aborted) throw abortError(signal.reason);
  const id = nextId++;
  const unwatch = watch(signal, () => channel.send({ op: 'cancel', target: id }));
  const opening = { source: pageRelative(source), options: sent };
  // Workers asked for by the caller open the table at the same time as the first one, so a
  // big scan need not wait for them (the package's default ones start only when a big scan
  // first needs them). Each open is kept if it found the first worker's version.
  const early = workers !== undefined ? openHelpersEarly(helpers.take(helpers.count).map(channelFor), opening) : [];
  try {
    const info = await channel.call({ op: 'open', ...opening }, id);
    const table = new RemoteTable(channel, id, info, opening, { count: helpers.count, take: (n) => helpers.take(n).map(channelFor) });
    if (workers !== undefined) table.prepareHelpers(early);
    return table;
  } catch (error) {
    for (const helper of early) {
      helper.channel.send({ op: 'cancel', target: helper.id });
      helper.info.then(() => helper.channel.send({ op: 'free', table: helper.id }), () => {});
    }
    throw error;
  } finally {
    unwatch();
  }
}

/** The table opened in each helper worker as in the first: `{ channel, id, info }` each,
 * `info` the promise of what its open found. */
function openHelpersEarly(channels, opening) {
  return channels.map((channel) => {
    const id = nextId++;
    const info = channel.call({ op: 'open', ...opening }, id);
    info.catch(() => {});
    return { channel, id, info };
  });
}

/**
 * `toParquet` (see `delta-arrow-reader/parquet`) run in a worker, so the page's thread only
 * hands the stream over and takes the file back: `input` is the bytes of an Arrow IPC stream
 * (Uint8Array, ArrayBuffer) or a Blob of them, copied to the worker (a Blob by reference);
 * the file's bytes come back transferred. `worker` defaults to the package's first worker.
 */
export async function toParquetInWorker(input, { rowGroupRows } = {}, { worker } = {}) {
  const sendable = input instanceof Uint8Array || input instanceof ArrayBuffer || (typeof Blob !== 'undefined' && input instanceof Blob);
  if (!sendable) {
    throw coded('invalid_argument', 'toParquetInWorker takes the bytes of an Arrow IPC stream (Uint8Array, ArrayBuffer) or a Blob of them');
  }
  return channelFor(worker ?? packageWorker(0)).call({ op: 'toParquet', input, options: { rowGroupRows } });
}

/** The worker that opens the table, and the others: how many, and the first `n` of them
 * (the package's own are started then, so a table whose scans stay small starts no more). */
function workerPool(worker, workers) {
  if (Array.isArray(workers)) {
    if (worker !== undefined || workers.length === 0 || workers.length > MAX_WORKERS) {
      throw coded('invalid_argument', `workers must be 1 to ${MAX_WORKERS} workers, given without worker`);
    }
    return { first: workers[0], helpers: { count: workers.length - 1, take: (n) => workers.slice(1, 1 + n) } };
  }
  const count = workers ?? (worker === undefined ? defaultWorkers() : 1);
  if (!Number.isInteger(count) || count < 1 || count > MAX_WORKERS) {
    throw coded('invalid_argument', `workers must be a whole number from 1 to ${MAX_WORKERS}, or an array of workers`);
  }
  const first = worker ?? packageWorker(0);
  const offset = worker === undefined ? 1 : 0;
  return {
    first,
    helpers: { count: count - 1, take: (n) => Array.from({ length: Math.min(n, count - 1) }, (_, i) => packageWorker(i + offset)) },
  };
}

/** The machine's cores, 1 to 4. */
function defaultWorkers() {
  return Math.max(1, Math.min(4, globalThis.navigator?.hardwareConcurrency ?? 1));
}

/** The package's `index`th own worker, started now if it was not (or if it failed). */
function packageWorker(index) {
  for (let i = 0; i <= index; i += 1) {
    packageWorkers[i] ??= startPackageWorker(i);
  }
  return packageWorkers[index];
}

/** Starts the package's `i`th worker. One that fails (its script could not be loaded) is
 * not handed out again: the next open starts a new one, and reports its failure too, where
 * a failed worker kept would leave every later open waiting for ever. */
function startPackageWorker(i) {
  const name = i === 0 ? 'delta-arrow-reader' : `delta-arrow-reader-${i}`;
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name });
  worker.addEventListener('error', () => {
    if (packageWorkers[i] === worker) packageWorkers[i] = undefined;
  });
  return worker;
}

/** A URL relative to the page, made absolute here: in the worker it would be resolved
 * against the worker's script. */
function pageRelative(source) {
  if (source instanceof URL) return source.href;
  if (typeof source === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(source) && globalThis.location) {
    return new URL(source, globalThis.document?.baseURI ?? globalThis.location.href).href;
  }
  return source;
}

const channels = new WeakMap();

function channelFor(worker) {
  if (!channels.has(worker)) channels.set(worker, new Channel(worker));
  return channels.get(worker);
}
