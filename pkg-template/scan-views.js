// What the package's three scans (on this thread, api.js; in a worker, remote.js; in parts
// over workers, parts-scan.js) share: the other two ways to read a scan (its bytes as a
// ReadableStream, its record batches one at a time) and the rules every read follows:
//
// - steps asked for at once are served in turn, as an async generator's (`inTurn`);
// - once the scan's signal fires, every later read rejects with the abort's error, whether
//   or not a read was pending (`endOnAbort`): never a normal end with the rows so far;
// - a new read (iteration, `stream()`, `batches()`, `toIPC()`) of a scan that has ended is
//   an error (`checkReadable`), never an empty result that reads as an empty table.

/** An Error as the reader's own are: named `DeltaError`, with a `code` and the `phase`
 * (`load` for the options of an open, `plan` for those of a scan, `write` for toParquet). */
export function coded(code, message, phase = 'plan', cause = undefined) {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  return Object.assign(error, { name: 'DeltaError', code, phase, transient: false });
}

/** The options `DeltaTable.open` and `openInWorker` take. */
export const OPEN_OPTIONS = ['headers', 'requestInit', 'fetch', 'version', 'timestamp', 'signUrl', 'signal', 'retries', 'answerTimeoutMs', 'maxCommits'];
/** The options `table.scan` takes (a worker's table: also `parallel`). */
export const SCAN_OPTIONS = ['columns', 'filter', 'limit', 'batchSize', 'stringType', 'binaryType', 'maxPageBytes', 'part', 'signal', 'onProgress'];

/** Refuses (`invalid_argument`) an options object with a name outside `known`: a misspelt
 * `versio` or `filtr` would otherwise be ignored, and the read give other rows than asked
 * for without a word. `null` and `undefined` are no options; anything else but a plain
 * object is refused too. */
export function checkOptionNames(options, known, where, phase = 'plan') {
  if (options == null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw coded('invalid_argument', `${where}'s options must be an object, not ${Array.isArray(options) ? 'an array' : typeof options}`, phase);
  }
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const near = known.find((k) => k.toLowerCase() === name.toLowerCase()) ?? known.find((k) => editDistance(k, name) <= 2);
    const hint = near ? `; did you mean '${near}'?` : '';
    throw coded('invalid_argument', `unknown option '${name}' in ${where}${hint} (known: ${known.join(', ')})`, phase);
  }
}

/** The Levenshtein distance of two short strings. */
function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/** `value` and everything in it frozen (plain objects and arrays), so that what a table
 * describes (its schema, metadata, ...) cannot be edited by one caller under another. */
export function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The error an aborted read rejects with: an `AbortError` (code `aborted`) whose cause is
 * the signal's reason, as the reader's own aborts are. */
export function abortError(reason, message = 'the read was aborted') {
  return Object.assign(new Error(message), { name: 'AbortError', code: 'aborted', cause: reason });
}

/** `onProgress` as the scans call it: what it throws does not break the read, and is not lost
 * either: it goes to `reportError` (as an event listener's error does in a page), or to
 * `console.error` where there is none. Anything but a function is left as it is. */
export function progressCallback(onProgress) {
  if (onProgress == null) return undefined;
  if (typeof onProgress !== 'function') throw coded('invalid_argument', 'options.onProgress must be a function');
  return (event) => {
    try {
      onProgress(event);
    } catch (error) {
      if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
      else console.error('delta-arrow-reader: onProgress threw', error);
    }
  };
}

/** Scans and tables of the worker path dropped unfinished (a scan read part way and let go,
 * a table never freed): `whenDropped.register(owner, release, owner)` runs `release` (which
 * must not hold `owner`) once the garbage collector reclaims `owner`, so the worker frees
 * what it kept for it; `unregister(owner)` when it ends the normal way. */
export const whenDropped = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((release) => release())
  : { register() {}, unregister() {} };

/** The abort error of each aborted scan; the tail of each scan's queue of steps; how each
 * scan is being consumed, once `stream()` or iteration has begun. */
const aborted = new WeakMap();
const queues = new WeakMap();
const consumers = new WeakMap();

/** Claims `scan` for one consumer (`how`: 'stream()' or 'iteration'): a second one would
 * take every other piece of the one stream, each getting part of the rows and neither an
 * error. Refused with `invalid_argument` once claimed. */
export function claim(scan, how) {
  const by = consumers.get(scan);
  if (by) {
    throw coded('invalid_argument', `this scan is already read by ${by}: a scan has one reader; start another scan with table.scan()`);
  }
  consumers.set(scan, how);
}

/** Turns `signal`'s abort into `onAbort()` (at once if it has fired); the function that stops
 * watching. Without a signal, nothing. */
export function watch(signal, onAbort) {
  if (!signal) return () => {};
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** Ends `scan` with `stop()` when `signal` fires, every later read of it rejecting with the
 * abort's error; the function that stops watching. */
export function endOnAbort(scan, signal, stop) {
  return watch(signal, () => {
    if (!aborted.has(scan)) aborted.set(scan, abortError(signal.reason));
    stop();
  });
}

/** Marks `scan` as cancelled (`cancel()`, unless it has ended or was aborted before): its
 * pending and later reads reject with an `AbortError`, never end as if the rows so far were
 * all. */
export function markCancelled(scan) {
  if (!scan.done && !aborted.has(scan)) {
    aborted.set(scan, abortError('cancel() was called', 'the scan was cancelled'));
  }
}

/** Runs `step` once the steps asked for before it have settled; rejects with the abort's
 * error instead when the scan has been aborted (or cancelled) by then, or when it is while
 * the step runs and the step comes back as the end. */
export function inTurn(scan, step) {
  const run = (queues.get(scan) ?? Promise.resolve()).then(async () => {
    let error = aborted.get(scan);
    if (error) throw error;
    const result = await step();
    error = aborted.get(scan);
    if (error && result?.done) throw error;
    return result;
  });
  queues.set(scan, run.catch(() => {}));
  return run;
}

/** Throws what a new read of `scan` meets: the abort's error, or `invalid_argument` once
 * the scan has ended (read to its end, failed or cancelled). */
export function checkReadable(scan) {
  const error = aborted.get(scan);
  if (error) throw error;
  if (scan.done) throw coded('invalid_argument', 'the scan has ended; start a new one with table.scan()');
}

/** `scan`'s bytes, the values its `next()` resolves to, as a `ReadableStream<Uint8Array>`
 * that pulls one piece at a time (no read-ahead); cancelling the stream cancels the scan. */
export function scanStream(scan) {
  return new ReadableStream(
    {
      pull: async (controller) => {
        try {
          const { done, value } = await scan.next();
          if (done) {
            controller.close();
          } else {
            controller.enqueue(value);
          }
        } catch (error) {
          controller.error(error);
        }
      },
      cancel: () => scan.cancel(),
    },
    { highWaterMark: 0 },
  );
}

/** What the package's scans (on this thread, in a worker, in parts over workers) share
 * around their `next()` and `cancel()`: the async-iterator protocol and `stream()`. */
export class ScanViews {
  /** Called by `break` in `for await`: stops the scan and releases it. */
  async return(value) {
    this.cancel();
    return { done: true, value };
  }

  [Symbol.asyncIterator]() {
    checkReadable(this);
    claim(this, 'iteration');
    return this;
  }

  /** The same bytes as iteration, as a `ReadableStream<Uint8Array>` (for `new
   * Response(...)`, `pipeTo`, ...); cancelling the stream cancels the scan. A scan has one
   * reader: a second `stream()`, or iteration beside it, is refused. */
  stream() {
    checkReadable(this);
    claim(this, 'stream()');
    return scanStream(this);
  }
}

/** An async iterable whose steps are `nextBatch()` (each `{ done, value }`, the value one
 * complete Arrow IPC stream of one record batch); leaving a `for await` early cancels
 * `scan`. */
export function batchIterable(scan, nextBatch) {
  return {
    next: nextBatch,
    return: async (value) => {
      scan.cancel();
      return { done: true, value };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** The rest of `scan`'s one stream, as its `next()` hands it out, joined into one
 * `Uint8Array` (`toIPC()` of a stream already begun, or read in parts). */
export async function restOfStream(scan) {
  const pieces = [];
  for (;;) {
    const { done, value } = await scan.next();
    if (done) return concatBytes(pieces);
    pieces.push(value);
  }
}

/** `pieces` (Uint8Arrays) joined into one. */
export function concatBytes(pieces) {
  const whole = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.byteLength;
  }
  return whole;
}
