// Variant values (Delta's `variant` type, stored as Parquet's Variant binary encoding: a
// `metadata` dictionary of keys and a `value`) decoded for display. Pure, no DOM: the
// caller gives the constructors of the plain values it prints (objects as ordered entries,
// numbers as exact text) and the formatters of dates, instants and bytes.
//
// Encoding (Parquet VariantEncoding.md): metadata = header (version 1 in bits 0-3, offset
// size - 1 in bits 6-7), dictionary size, size + 1 offsets, the keys' UTF-8 bytes. A value
// starts with a byte whose bits 0-1 say its basic type: 0 primitive (bits 2-7 its type id), 1
// short string (bits 2-7 its length), 2 object, 3 array (bits 2-7 the sizes of its ids and
// offsets, and whether its count takes 4 bytes). Anything out of bounds or unknown throws,
// and the caller shows the raw bytes instead.

/** Nesting deeper than this is refused (a hostile value cannot exhaust the stack). */
const MAX_DEPTH = 200;

const utf8 = new TextDecoder('utf-8', { fatal: true });

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(at, n) {
    if (!(at >= 0 && n >= 0 && at + n <= this.bytes.length)) throw new RangeError('variant: out of bounds');
  }

  /** An unsigned little-endian integer of `size` (1-4) bytes at `at`. */
  uint(at, size) {
    this.need(at, size);
    let v = 0;
    for (let i = size - 1; i >= 0; i--) v = v * 256 + this.bytes[at + i];
    return v;
  }

  /** A signed little-endian integer of `size` (1, 2, 4, 8 or 16) bytes as a BigInt. */
  int(at, size) {
    this.need(at, size);
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(this.bytes[at + i]);
    const bits = BigInt(size * 8);
    return v >= 1n << (bits - 1n) ? v - (1n << bits) : v;
  }

  text(at, n) {
    this.need(at, n);
    return utf8.decode(this.bytes.subarray(at, at + n));
  }
}

/** The keys of a metadata dictionary. */
function keysOf(metadata) {
  const r = new Reader(metadata);
  const header = r.uint(0, 1);
  if ((header & 0x0f) !== 1) throw new RangeError(`variant: metadata version ${header & 0x0f}`);
  const size = ((header >> 6) & 3) + 1;
  const count = r.uint(1, size);
  const offsets = 1 + size;
  const start = offsets + (count + 1) * size;
  r.need(offsets, (count + 1) * size);
  const keys = new Array(count);
  for (let i = 0; i < count; i++) {
    const from = r.uint(offsets + i * size, size);
    const to = r.uint(offsets + (i + 1) * size, size);
    if (to < from) throw new RangeError('variant: metadata offsets go back');
    keys[i] = r.text(start + from, to - from);
  }
  return keys;
}

/**
 * The variant of `metadata` and `value` (Uint8Arrays) as a plain value: `make.object(pairs)`,
 * arrays, strings, booleans, null, `make.number(text)` for numbers, and the formatters
 * `make.date(epochMs)`, `make.timestamp(bigint, unit, zoned)`, `make.bytes(Uint8Array)`,
 * `make.float(number)` for the other primitives.
 */
export function decodeVariant(metadata, value, make) {
  const keys = keysOf(metadata);
  const r = new Reader(value);
  const read = (at, depth) => {
    if (depth > MAX_DEPTH) throw new RangeError('variant: nested too deep');
    const header = r.uint(at, 1);
    const basic = header & 3;
    const bits = header >> 2;
    if (basic === 1) return r.text(at + 1, bits);
    if (basic === 0) return primitive(r, at + 1, bits, make);
    const offsetSize = (bits & 3) + 1;
    if (basic === 2) {
      const idSize = ((bits >> 2) & 3) + 1;
      const countSize = (bits >> 4) & 1 ? 4 : 1;
      const count = r.uint(at + 1, countSize);
      const ids = at + 1 + countSize;
      const offsets = ids + count * idSize;
      const values = offsets + (count + 1) * offsetSize;
      r.need(ids, count * idSize + (count + 1) * offsetSize);
      const pairs = new Array(count);
      for (let i = 0; i < count; i++) {
        const id = r.uint(ids + i * idSize, idSize);
        if (id >= keys.length) throw new RangeError('variant: key id out of the dictionary');
        pairs[i] = [keys[id], read(values + r.uint(offsets + i * offsetSize, offsetSize), depth + 1)];
      }
      return make.object(pairs);
    }
    const countSize = (bits >> 2) & 1 ? 4 : 1;
    const count = r.uint(at + 1, countSize);
    const offsets = at + 1 + countSize;
    const values = offsets + (count + 1) * offsetSize;
    r.need(offsets, (count + 1) * offsetSize);
    return Array.from({ length: count }, (_, i) => read(values + r.uint(offsets + i * offsetSize, offsetSize), depth + 1));
  };
  return read(0, 0);
}

/** A primitive of type `id` whose bytes start at `at`. */
function primitive(r, at, id, make) {
  const decimal = (size) => {
    const scale = r.uint(at, 1);
    const unscaled = r.int(at + 1, size).toString();
    if (!scale) return make.number(unscaled);
    const neg = unscaled.startsWith('-');
    const digits = (neg ? unscaled.slice(1) : unscaled).padStart(scale + 1, '0');
    return make.number(`${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`);
  };
  switch (id) {
    case 0:
      return null;
    case 1:
      return true;
    case 2:
      return false;
    case 3:
      return make.number(r.int(at, 1).toString());
    case 4:
      return make.number(r.int(at, 2).toString());
    case 5:
      return make.number(r.int(at, 4).toString());
    case 6:
      return make.number(r.int(at, 8).toString());
    case 7:
      r.need(at, 8);
      return make.float(r.view.getFloat64(at, true), false);
    case 8:
      return decimal(4);
    case 9:
      return decimal(8);
    case 10:
      return decimal(16);
    case 11:
      return make.date(Number(r.int(at, 4)) * 86_400_000);
    case 12:
    case 13:
      return make.timestamp(r.int(at, 8), 2, id === 12);
    case 14:
      r.need(at, 4);
      return make.float(r.view.getFloat32(at, true), true);
    case 15:
    case 16: {
      const n = r.uint(at, 4);
      if (id === 16) return r.text(at + 4, n);
      r.need(at + 4, n);
      return make.bytes(r.bytes.subarray(at + 4, at + 4 + n));
    }
    case 17: {
      const micros = r.int(at, 8);
      return make.time(micros);
    }
    case 18:
    case 19:
      return make.timestamp(r.int(at, 8), 3, id === 18);
    case 20: {
      r.need(at, 16);
      const h = Array.from(r.bytes.subarray(at, at + 16), (b) => b.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    default:
      throw new RangeError(`variant: primitive type ${id}`);
  }
}
