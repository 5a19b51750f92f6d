// `openInWorker(source, options)`: the same tables and scans as DeltaTable.open, run in a Web
// Worker (worker.js) so that loading and decoding never block the page. A scan's pieces are
// transferred from the worker (no copy); cancelling (`cancel()`, `break`, the scan's
// `signal`) stops the worker's read at once; `onProgress` is called on the page.
//
// What crosses to the worker must be cloneable: URLs, paths, a FileSystemDirectoryHandle,
// a FileList, and plain options. Functions cannot cross: `onProgress` is relayed, `signal`
// becomes a message; `signUrl`, `fetch` and a custom byte source are refused (open those
// tables in the worker yourself, with the package's DeltaTable).

import { batchIterable, scanStream } from './scan-views.js';

let defaultWorker = null;
let nextId = 1;

function coded(code, message) {
  return Object.assign(new Error(message), { code });
}

/** One worker and its pending requests. */
class Channel {
  #worker;
  #pending = new Map();
  #progress = new Map();

  constructor(worker) {
    this.#worker = worker;
    worker.addEventListener('message', (event) => this.#receive(event.data));
    worker.addEventListener('error', (event) => {
      const error = coded('io', `the reader's worker failed: ${event.message ?? 'unknown error'}`);
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

/** The options without what cannot cross to the worker; refuses functions it cannot relay. */
function cloneable(options, allowed) {
  const out = {};
  for (const [key, value] of Object.entries(options ?? {})) {
    if (allowed.has(key)) continue;
    if (typeof value === 'function') {
      throw coded('invalid_argument', `options.${key} is a function, which cannot be sent to a worker: open the table in the worker yourself`);
    }
    out[key] = value;
  }
  return out;
}

/** Stops `signal` from being an option, and turns its abort into `onAbort()`. */
function watch(signal, onAbort) {
  if (!signal) return () => {};
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

function abortError(signal) {
  return Object.assign(new Error('the read was aborted'), { name: 'AbortError', code: 'aborted', cause: signal?.reason });
}

class RemoteScan {
  #channel;
  #id;
  #schema;
  #metrics;
  #skippedFiles;
  #done = false;
  #unwatch;
  #reading = null;

  constructor(channel, id, opened, signal) {
    this.#channel = channel;
    this.#id = id;
    this.#schema = opened.schema;
    this.#metrics = opened.metrics;
    this.#skippedFiles = opened.skippedFiles ?? [];
    this.#unwatch = watch(signal, () => this.cancel());
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
    return this.#read('stream');
  }

  async return(value) {
    this.cancel();
    return { done: true, value };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  stream() {
    return scanStream(this);
  }

  batches() {
    return batchIterable(this, () => this.#read('batch'));
  }

  async toIPC() {
    const { done, value } = await this.#read('toIPC');
    if (done) throw coded('invalid_argument', 'the scan has ended; start a new one with table.scan()');
    this.#end();
    return value;
  }

  cancel() {
    if (!this.#done) {
      this.#channel.send({ op: 'cancel', target: this.#id });
      this.#end();
    }
  }

  #end() {
    this.#done = true;
    this.#unwatch();
    this.#channel.onProgress(this.#id, null);
  }
}

class RemoteTable {
  #channel;
  #id;
  #info;

  constructor(channel, id, info) {
    this.#channel = channel;
    this.#id = id;
    this.#info = info;
  }

  get version() { return this.#info.version; }
  get timestamp() { return this.#info.timestamp; }
  get location() { return this.#info.location; }
  get schema() { return this.#info.schema; }
  get partitionColumns() { return this.#info.partitionColumns; }
  get protocol() { return this.#info.protocol; }
  get metadata() { return this.#info.metadata; }
  get numFiles() { return this.#info.numFiles; }
  get sizeBytes() { return this.#info.sizeBytes; }
  get loadInfo() { return this.#info.loadInfo; }

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

  /** Plans a scan in the worker; resolves once it is planned (a bad filter rejects). */
  async scan(options = {}) {
    const id = nextId++;
    const { signal, onProgress } = options;
    const sent = cloneable(options, new Set(['signal', 'onProgress']));
    this.#channel.onProgress(id, onProgress ?? null);
    let opened;
    try {
      opened = await this.#channel.call({ op: 'scan', table: this.#id, options: sent, progress: Boolean(onProgress) }, id);
    } catch (error) {
      this.#channel.onProgress(id, null);
      throw error;
    }
    return new RemoteScan(this.#channel, id, opened, signal);
  }

  free() {
    this.#channel.send({ op: 'free', table: this.#id });
  }
}

/**
 * Opens a table in a Web Worker: `source` and `options` as for `DeltaTable.open` (cloneable
 * ones only). `worker` defaults to one shared worker running the package's worker.js.
 */
export async function openInWorker(source, options = {}, { worker } = {}) {
  if (source !== null && typeof source === 'object' && typeof source.read === 'function') {
    throw coded('invalid_argument', 'a custom byte source cannot be sent to a worker: open it in the worker yourself');
  }
  const channel = channelFor(worker);
  const { signal } = options;
  const sent = cloneable(options, new Set(['signal']));
  if (signal?.aborted) throw abortError(signal);
  const id = nextId++;
  const unwatch = watch(signal, () => channel.send({ op: 'cancel', target: id }));
  try {
    const info = await channel.call({ op: 'open', source: pageRelative(source), options: sent }, id);
    return new RemoteTable(channel, id, info);
  } finally {
    unwatch();
  }
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
  if (worker === undefined) {
    defaultWorker ??= new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'delta-arrow-reader' });
    worker = defaultWorker;
  }
  if (!channels.has(worker)) channels.set(worker, new Channel(worker));
  return channels.get(worker);
}
