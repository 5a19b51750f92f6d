// One scan read by several workers at once (remote.js plans it): each worker reads a part of
// the scan's files (`options.part`, disjoint byte ranges that own whole row groups), and this
// page merges what they send into the one result a scan gives.
//
// - As one stream (`next()`, iteration, `stream()`, `toIPC()`): each part's pieces are one
//   IPC stream; the first piece handed out keeps its schema message, every other part's
//   schema message and every part's end marker are cut, and one end marker closes the
//   merged stream. Batches come in the order the workers finish them, not in file order.
// - Batch by batch (`batches()`): each part's complete one-batch streams, as they come.
// - Each worker keeps at most `AHEAD` pieces waiting here, so a slow reader holds back the
//   workers instead of filling the page's memory.
// - Metrics and progress are the parts' summed, with the counts that describe the whole
//   scan (files planned, skipped, in the snapshot) taken from its plan.

import { END_MARKER } from './ipc-streams.js';
import { batchIterable, checkReadable, claim, coded, endOnAbort, inTurn, markCancelled, restOfStream, ScanViews, whenDropped } from './scan-views.js';

/** Pieces a part may have waiting on the page before its worker is asked for more. */
const AHEAD = 2;

/** The IPC end-of-stream marker: a continuation marker and a zero length. */

/** Metrics that describe the whole scan (the same in every part): the plan's value. */
const FROM_PLAN = new Set(['filesInSnapshot', 'filesPlanned', 'filesSkippedByPartition', 'filesSkippedByStats', 'logFilesRead', 'filesToRead', 'bytesTotal']);

/** Bytes of the schema message that starts `bytes` (an IPC stream's first piece). */
function schemaLength(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 8 || view.getUint32(0, true) !== 0xffffffff) {
    throw coded('internal', "a worker's scan did not start with an IPC schema message");
  }
  const length = 8 + view.getInt32(4, true);
  if (length > bytes.byteLength) {
    throw coded('internal', "a worker's first piece holds less than its schema message");
  }
  return length;
}

/** The parts' metrics merged into one scan's (see the module comment). */
export function mergeMetrics(planned, parts) {
  const out = { ...planned };
  for (const key of Object.keys(planned)) {
    if (FROM_PLAN.has(key) || typeof planned[key] !== 'number') continue;
    out[key] = parts.reduce((sum, m) => sum + (m?.[key] ?? 0), 0);
  }
  const firsts = parts.map((m) => m?.timeToFirstBatchUs).filter((t) => typeof t === 'number');
  out.timeToFirstBatchUs = firsts.length ? Math.min(...firsts) : null;
  out.done = parts.every((m) => m?.done);
  out.filesDone = filesDone(planned.filesToRead, parts.map((m) => [m?.filesDone ?? 0, m?.filesToRead ?? 0]));
  out.bytesDone = Math.min(planned.bytesTotal, out.bytesDone ?? 0);
  return out;
}

/** Files of the whole scan done, from each part's `[done, total]`: a file split among parts
 * is a task in each, so the tasks done are scaled to the files and reach the file count only
 * when every task is done. */
function filesDone(files, parts) {
  const done = parts.reduce((n, [d]) => n + d, 0);
  const tasks = parts.reduce((n, [, t]) => n + t, 0);
  return tasks === 0 ? files : Math.floor((Math.min(done, tasks) * files) / tasks);
}

export class PartsScan extends ScanViews {
  #parts;
  #schema;
  #skippedFiles;
  #planned;
  #reading = null;
  #schemaSent = false;
  #ended = false;
  #failure = null;
  #turn = 0;
  #unwatch;
  #onProgress;
  #reported = '';

  /**
   * @param {{ channel: object, id: number, opened: object }[]} parts the planned part scans
   * @param {object} plan the whole scan's plan (`{ schema, metrics, skippedFiles }`)
   */
  constructor(parts, plan, { signal, onProgress }) {
    super();
    this.#schema = plan.schema;
    this.#skippedFiles = plan.skippedFiles ?? [];
    this.#planned = plan.metrics;
    this.#onProgress = onProgress;
    this.#parts = parts.map(({ channel, id, opened }) => ({
      channel,
      id,
      metrics: opened.metrics,
      progress: null,
      queue: [],
      inFlight: null,
      started: false,
      finished: false,
    }));
    // The workers' progress reaches the scan through a weak reference, so that a scan let go
    // unfinished can be reclaimed (and its parts cancelled in the workers, below).
    const self = new WeakRef(this);
    for (const part of this.#parts) {
      if (onProgress) part.channel.onProgress(part.id, PartsScan.#progressOf(part, self));
    }
    whenDropped.register(this, releaseParts(this.#parts), this);
    this.#unwatch = endOnAbort(this, signal, () => this.cancel());
  }

  /** A part's progress handler. Static, so that it does not share the constructor's scope,
   * which holds the scan (see `releaseParts`). */
  static #progressOf(part, scan) {
    return (value) => {
      part.progress = value;
      scan.deref()?.#report();
    };
  }

  get outputSchema() {
    return this.#schema;
  }

  get skippedFiles() {
    return this.#skippedFiles;
  }

  /** The scan's metrics: the parts' as of their last pieces, merged. */
  get metrics() {
    return mergeMetrics(this.#planned, this.#parts.map((p) => p.metrics));
  }

  get done() {
    return this.#ended;
  }

  /** How many workers read this scan. */
  get parts() {
    return this.#parts.length;
  }

  next() {
    return inTurn(this, () => this.#take('stream'));
  }

  batches() {
    checkReadable(this);
    return batchIterable(this, () => inTurn(this, () => this.#take('batch')));
  }

  async toIPC() {
    checkReadable(this);
    claim(this, 'toIPC()');
    return restOfStream(this);
  }

  cancel() {
    if (this.#ended) return;
    markCancelled(this);
    this.#stop();
  }

  /** Stops every part still reading and ends the scan. */
  #stop() {
    for (const part of this.#parts) {
      if (!part.finished) part.channel.send({ op: 'cancel', target: part.id });
      part.finished = true;
      part.queue = [];
    }
    this.#end();
  }

  #end() {
    this.#ended = true;
    whenDropped.unregister(this);
    // Unset while the constructor runs: a signal aborted already ends the scan at once.
    this.#unwatch?.();
    for (const part of this.#parts) part.channel.onProgress(part.id, null);
  }

  async #take(how) {
    if (this.#ended) return { done: true, value: undefined };
    if (this.#reading !== null && this.#reading !== how) {
      throw coded('invalid_argument', 'a scan is read one way only: as one stream or batch by batch');
    }
    this.#reading = how;
    for (;;) {
      if (this.#failure) {
        const failure = this.#failure;
        if (!this.#ended) this.#stop();
        throw failure;
      }
      const piece = this.#nextQueued(how);
      if (piece) return { done: false, value: piece };
      if (this.#parts.every((p) => p.finished)) {
        if (how === 'stream' && this.#schemaSent && !this.#ended) {
          this.#end();
          this.#report(true);
          return { done: false, value: END_MARKER.slice() };
        }
        this.#end();
        this.#report(true);
        return { done: true, value: undefined };
      }
      for (const part of this.#parts) this.#refill(part, how);
      const waiting = this.#parts.filter((p) => p.inFlight).map((p) => p.inFlight);
      await Promise.race(waiting);
      if (this.#ended) return { done: true, value: undefined };
    }
  }

  /** The next waiting piece, taking the parts in turn; a part's first piece loses its
   * schema message unless it is the first piece handed out. */
  #nextQueued(how) {
    const count = this.#parts.length;
    for (let k = 0; k < count; k++) {
      const part = this.#parts[(this.#turn + k) % count];
      const item = part.queue.shift();
      if (item === undefined) continue;
      this.#turn = (this.#turn + k + 1) % count;
      this.#refill(part, how);
      let bytes = item.bytes;
      if (item.schema > 0) {
        if (this.#schemaSent) bytes = bytes.subarray(item.schema);
        this.#schemaSent = true;
      }
      if (bytes.byteLength > 0) return bytes;
      return this.#nextQueued(how);
    }
    return null;
  }

  /** Asks `part`'s worker for its next piece unless one is asked for, enough wait, or the
   * part has ended. */
  #refill(part, how) {
    if (part.finished || part.inFlight || part.queue.length >= AHEAD || this.#ended) return;
    part.inFlight = part.channel.call({ op: 'read', scan: part.id, how }).then(
      (step) => {
        part.inFlight = null;
        part.metrics = step.metrics;
        if (step.done) {
          part.finished = true;
          return;
        }
        try {
          part.queue.push(how === 'batch' ? { bytes: step.piece, schema: 0 } : this.#framed(part, step.piece, step.last));
        } catch (error) {
          this.#fail(part, error);
          return;
        }
        this.#refill(part, how);
      },
      (error) => {
        part.inFlight = null;
        this.#fail(part, error);
      },
    );
  }

  /** `part` failed: the scan fails with the first error (at the next read). */
  #fail(part, error) {
    part.finished = true;
    this.#failure ??= error;
  }

  /** A stream piece of `part` without its end marker (`last`), with the length of the schema
   * message it starts with (its first piece) or 0. */
  #framed(part, piece, last) {
    let bytes = piece;
    if (last) {
      if (bytes.byteLength < END_MARKER.byteLength) {
        throw coded('internal', "a worker's last piece is shorter than an end marker");
      }
      bytes = bytes.subarray(0, bytes.byteLength - END_MARKER.byteLength);
    }
    let schema = 0;
    if (!part.started) {
      part.started = true;
      schema = schemaLength(bytes);
    }
    return { bytes, schema };
  }

  /** Sends the merged progress when it changed; `last` once everything is read. */
  #report(last = false) {
    if (!this.#onProgress) return;
    const total = this.#planned;
    const events = this.#parts.map((p) => p.progress);
    const bytesDone = last ? total.bytesTotal : Math.min(total.bytesTotal, events.reduce((n, e) => n + (e?.bytesDone ?? 0), 0));
    const done = last
      ? total.filesToRead
      : filesDone(total.filesToRead, events.map((e, i) => [e?.filesDone ?? 0, e?.filesTotal ?? this.#parts[i].metrics?.filesToRead ?? 0]));
    const event = { filesDone: done, filesTotal: total.filesToRead, bytesDone, bytesTotal: total.bytesTotal };
    const key = `${event.filesDone}/${event.bytesDone}`;
    if (key === this.#reported) return;
    this.#reported = key;
    // Wrapped by progressCallback: what it throws does not break the read.
    this.#onProgress(event);
  }
}

/** What stops a dropped scan's unfinished parts in their workers. Made here, not in the
 * constructor: a closure made there would share the constructor's scope, which holds the scan
 * (its other closures use `this`), and the registry would keep the scan alive for ever. */
function releaseParts(parts) {
  return () => {
    for (const part of parts) {
      part.channel.onProgress(part.id, null);
      if (!part.finished) part.channel.send({ op: 'cancel', target: part.id });
    }
  };
}
