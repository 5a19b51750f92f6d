// Arrow IPC streams laid end to end, joined into one: what `toParquet` does with the pieces
// of `scan.batches()` (each a whole stream: schema, batch, end marker) or a Blob of them,
// which an IPC reader would otherwise stop reading after the first.
//
// A stream is a sequence of messages, each `0xFFFFFFFF`, the length of its flatbuffer
// metadata, the metadata, then the body of `bodyLength` bytes (the metadata's `Message`
// table: field 1 the header type, 1 a Schema, 2 a DictionaryBatch, 3 a RecordBatch; field 3
// the body length); a message of metadata length 0 is the end marker. The walk reads only
// those two fields; bytes it cannot walk are left as they are, for the writer to judge.

import { concatBytes } from './scan-views.js';

const SCHEMA = 1;
const DICTIONARY = 2;

/** The end-of-stream marker: a message of metadata length 0. */
export const END_MARKER = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** One message at `at`: `{ end, header, eos }`, or null when the bytes are not one. */
function message(bytes, view, at) {
  try {
    return walk(bytes, view, at);
  } catch {
    return null; // a read past the end (RangeError): not a message
  }
}

function walk(bytes, view, at) {
  if (at + 8 > bytes.length) return null;
  let meta = at + 4;
  let len = view.getInt32(at, true);
  if (len === -1) {
    len = view.getInt32(at + 4, true);
    meta = at + 8;
  }
  if (len === 0) return { end: meta, header: 0, eos: true };
  if (len < 0 || meta + len > bytes.length) return null;
  const u16 = (p) => (p + 2 <= meta + len ? view.getUint16(p, true) : null);
  const table = meta + view.getUint32(meta, true);
  if (table + 4 > meta + len) return null;
  const vtable = table - view.getInt32(table, true);
  const vtableSize = u16(vtable);
  if (vtable < meta || vtableSize === null) return null;
  const field = (i) => (4 + 2 * i < vtableSize ? u16(vtable + 4 + 2 * i) : 0);
  const headerAt = field(1);
  const bodyAt = field(3);
  if (headerAt === null || bodyAt === null) return null;
  const header = headerAt ? bytes[table + headerAt] : 0;
  let body = 0;
  if (bodyAt) {
    if (table + bodyAt + 8 > meta + len) return null;
    const big = view.getBigInt64(table + bodyAt, true);
    if (big < 0n || big > BigInt(bytes.length)) return null;
    body = Number(big);
  }
  const end = meta + len + body;
  return end <= bytes.length ? { end, header, eos: false } : null;
}

/**
 * `bytes` as one stream: unchanged when they hold one (or cannot be walked); when they hold
 * several with the same schema, the first schema, every other message in order and one end
 * marker. Streams with different schemas, or several with dictionaries, are refused with
 * `fail(message)` (thrown), since no one stream holds them.
 */
export function joinStreams(bytes, fail) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const streams = [];
  let current = null;
  let at = 0;
  while (at < bytes.length) {
    const m = message(bytes, view, at);
    if (m === null) return bytes;
    if (current === null) {
      if (m.eos || m.header !== SCHEMA) return bytes;
      current = { schema: bytes.subarray(at, m.end), rest: [], dictionaries: false };
    } else if (m.eos) {
      streams.push(current);
      current = null;
    } else {
      current.rest.push(bytes.subarray(at, m.end));
      current.dictionaries ||= m.header === DICTIONARY;
    }
    at = m.end;
  }
  if (current !== null) streams.push(current);
  if (streams.length < 2) return bytes;
  const [first] = streams;
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!streams.every((s) => same(s.schema, first.schema))) {
    fail(`the input holds ${streams.length} Arrow IPC streams whose schemas differ: give one stream (a scan, or its toIPC())`);
  }
  if (streams.filter((s) => s.dictionaries).length > 1) {
    fail(`the input holds ${streams.length} Arrow IPC streams with dictionaries of their own: give one stream (a scan, or its toIPC())`);
  }
  return concatBytes([first.schema, ...streams.flatMap((s) => s.rest), END_MARKER]);
}
