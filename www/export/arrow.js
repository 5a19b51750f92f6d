// The Arrow download: an Arrow IPC stream (`.arrows`) of the result as shown. With every
// column shown in stream order it is the bytes the reader sent, as they came; with columns
// hidden it is those columns' batches re-encoded by Flechette (no value is touched); sorted,
// the values are gathered in display order into new batches, slice by slice, yielding to
// the page between slices.

import { Column, columnFromValues, int32, int64, Table, tableToIPC } from '@uwdata/flechette';
import { T } from '../format.js';

export const ARROW_STREAM_MIME = 'application/vnd.apache.arrow.stream';

const SLICE_ROWS = 65_536;
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

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
  const fields = cols.map((c) => store.fields[c]);
  let columns;
  if (!perm) {
    columns = cols.map((c) => new Column(store.batchesOf(c), store.fields[c].type));
  } else {
    const batches = cols.map(() => []);
    for (let start = 0; start < perm.length; start += SLICE_ROWS) {
      const end = Math.min(perm.length, start + SLICE_ROWS);
      cols.forEach((c, k) => {
        const type = store.fields[c].type;
        const visit = (emit) => {
          for (let p = start; p < end; p++) emit(store.value(c, perm[p]));
        };
        batches[k].push(...columnFromValues(visit, buildType(type)).data);
      });
      options.onProgress?.(end, perm.length);
      if (end < perm.length) await nextTask();
    }
    columns = cols.map((c, k) => new Column(batches[k], store.fields[c].type));
  }
  const table = new Table({ ...store.schema, fields }, columns);
  return new Blob([tableToIPC(table, { format: 'stream' })], { type: ARROW_STREAM_MIME });
}
