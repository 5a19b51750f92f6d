// The Arrow download: an Arrow IPC stream (`.arrows`) of the result as shown. With every
// column shown in stream order it is the bytes the reader sent, as they came. Otherwise it
// is re-encoded by Flechette one slice of rows at a time, yielding to the page between
// slices: with columns hidden, each record batch's shown columns as they are (no value is
// touched); sorted, the values gathered in display order into new batches. Each slice is
// encoded as a stream of its own, and the slices joined into one stream: the schema once,
// the batches, one end marker.

import { Column, columnFromValues, int32, int64, Table, tableToIPC } from '@uwdata/flechette';
import { nextTask } from '../dom.js';
import { T } from '../format.js';
import { schemaMessage } from '../result.js';

export const ARROW_STREAM_MIME = 'application/vnd.apache.arrow.stream';

/** Rows gathered per slice when sorted. */
const SLICE_ROWS = 8192;
/** The end-of-stream marker: a continuation and a zero length. */
const EOS = Uint8Array.of(255, 255, 255, 255, 0, 0, 0, 0);

/**
 * The type whose builder takes our extracted values as they are (see DECODE_OPTIONS in
 * result.js): timestamps arrive as raw BigInts and 32-bit decimals as unscaled numbers, so
 * they are built as the integers they are stored as; the encoder then writes those buffers
 * under the real type.
 */
function buildType(type) {
  if (type.typeId === T.Timestamp) return int64();
  if (type.typeId === T.Decimal && type.bitWidth === 32) return int32();
  if (!type.children) return type;
  return { ...type, children: type.children.map((f) => ({ ...f, type: buildType(f.type) })) };
}

/** Joins slice streams into one stream of `parts`: the first slice's schema, every slice's
 * batches, one end marker. */
class StreamJoiner {
  parts = [];

  add(table) {
    const bytes = tableToIPC(table, { format: 'stream' });
    const body = this.parts.length === 0 ? bytes : bytes.subarray(schemaMessage(bytes).byteLength);
    this.parts.push(body.subarray(0, body.byteLength - EOS.byteLength));
  }

  blob() {
    return new Blob([...this.parts, EOS], { type: ARROW_STREAM_MIME });
  }
}

/**
 * An Arrow IPC stream of `store` (a ResultStore) with columns `cols` (store column indexes,
 * in display order), rows in the order of `perm` (display → stream row) or stream order.
 * @param {import('../result.js').ResultStore} store
 * @param {number[]} cols
 * @param {Uint32Array | null} perm
 * @param {{ onProgress?: (done: number, total: number) => void }} [options]
 * @returns {Promise<Blob>}
 */
export async function arrowBlob(store, cols, perm, options = {}) {
  const all = cols.length === store.fields.length && cols.every((c, i) => c === i);
  if (all && !perm) return new Blob(store.pieces, { type: ARROW_STREAM_MIME });
  const schema = { ...store.schema, fields: cols.map((c) => store.fields[c]) };
  const types = cols.map((c) => store.fields[c].type);
  const out = new StreamJoiner();
  if (!perm) {
    for (let b = 0; b < store.chunks.length; b++) {
      out.add(new Table(schema, cols.map((c, k) => new Column([store.chunks[b][c]], types[k]))));
      options.onProgress?.(store.starts[b] + store.chunks[b][0].length, store.rowCount);
      await nextTask();
    }
  } else {
    const building = types.map(buildType);
    for (let start = 0; start < perm.length; start += SLICE_ROWS) {
      const end = Math.min(perm.length, start + SLICE_ROWS);
      const columns = cols.map((c, k) => {
        const visit = (emit) => {
          for (let p = start; p < end; p++) emit(store.value(c, perm[p]));
        };
        return new Column(columnFromValues(visit, building[k]).data, types[k]);
      });
      out.add(new Table(schema, columns));
      options.onProgress?.(end, perm.length);
      await nextTask();
    }
  }
  if (out.parts.length === 0) out.add(new Table(schema, types.map((t) => new Column([], t))));
  return out.blob();
}
