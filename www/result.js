// The rows of one read, kept as they arrive: the scan's Arrow IPC stream is received piece
// by piece (the schema with the first batch, then a piece per batch, then the end marker),
// every piece is kept (the Arrow download hands them out as they came) and decoded at once
// with Flechette into column batches that point into the piece's bytes (no copy, no work
// per row). Rows are addressed by their position in the stream.

import { tableFromIPC } from '@uwdata/flechette';

/** How Flechette extracts values; format.js and sort.js expect exactly these. */
export const DECODE_OPTIONS = Object.freeze({
  useBigInt: true, // 64-bit integers exactly
  useBigIntTimestamp: true, // timestamps exactly, in their own unit
  useDecimalInt: true, // decimals as unscaled integers
  useDate: false, // dates as epoch milliseconds
  useMap: false, // maps as [key, value] pairs
  useProxy: false,
});

/** The bytes of the first message of an IPC stream (the schema), with its framing. */
export function schemaMessage(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const continued = view.getInt32(0, true) === -1;
  const length = view.getInt32(continued ? 4 : 0, true);
  return bytes.subarray(0, (continued ? 8 : 4) + length);
}

/** The rows of one read, growing as pieces are added. */
export class ResultStore {
  constructor() {
    /** @type {Uint8Array[]} every piece of the IPC stream, as received */
    this.pieces = [];
    /** Flechette's schema (fields with `name` and `type`), once the first piece is in. */
    this.schema = null;
    /** Per record batch: its column batches, by column index. */
    this.chunks = [];
    /** Per record batch: the stream position of its first row. */
    this.starts = [];
    this.rowCount = 0;
    this.bytes = 0;
    this.schemaBytes = null;
  }

  get fields() {
    return this.schema?.fields ?? [];
  }

  /** Decodes one piece of the stream and keeps it; returns the number of rows it added. */
  addPiece(piece) {
    this.pieces.push(piece);
    this.bytes += piece.byteLength;
    let table;
    if (!this.schemaBytes) {
      table = tableFromIPC(piece, DECODE_OPTIONS);
      this.schemaBytes = schemaMessage(piece);
      this.schema = table.schema;
    } else {
      // A later piece holds whole messages (batches or the end marker) but no schema.
      table = tableFromIPC([this.schemaBytes, piece], DECODE_OPTIONS);
    }
    const columns = table.children;
    const batches = columns[0]?.data.length ?? 0;
    let added = 0;
    for (let b = 0; b < batches; b++) {
      const length = columns[0].data[b].length;
      if (length === 0) continue;
      this.chunks.push(columns.map((c) => c.data[b]));
      this.starts.push(this.rowCount);
      this.rowCount += length;
      added += length;
    }
    return added;
  }

  /** The record batch index holding stream row `row`. */
  chunkOf(row) {
    const { starts } = this;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= row) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The value of column `col` at stream row `row` (null for a null). */
  value(col, row) {
    const c = this.chunkOf(row);
    return this.chunks[c][col].at(row - this.starts[c]);
  }

  /** The column batches of stream row `row` and the row's index in them: `[batches, i]`. */
  locate(row) {
    const c = this.chunkOf(row);
    return [this.chunks[c], row - this.starts[c]];
  }

  /** Calls `fn(value, row)` for every row of column `col`, batch by batch (no search). */
  forEachValue(col, fn) {
    for (let c = 0; c < this.chunks.length; c++) {
      const batch = this.chunks[c][col];
      const start = this.starts[c];
      for (let i = 0; i < batch.length; i++) fn(batch.at(i), start + i);
    }
  }

  /** The column batches of column `col`, in stream order. */
  batchesOf(col) {
    return this.chunks.map((chunk) => chunk[col]);
  }
}
