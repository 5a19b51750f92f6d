// The other two ways to read a scan, shared by the scan on this thread (api.js) and the
// scan in a worker (remote.js): its bytes as a ReadableStream, and its record batches one
// at a time. Each takes the scan's own step functions, so both scans read the same way.

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
    return this;
  }

  /** The same bytes as iteration, as a `ReadableStream<Uint8Array>` (for `new
   * Response(...)`, `pipeTo`, ...); cancelling the stream cancels the scan. */
  stream() {
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
