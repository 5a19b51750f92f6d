// Formatting for the viewer: Arrow values to text, byte sizes, counts and durations.
//
// Pure functions with no DOM (importing only the variant decoder, as pure), so Node can test
// them as they are. Values
// arrive as Flechette extracts them with the options in result.js (`DECODE_OPTIONS`):
// 64-bit integers, timestamps and 64-bit-or-wider decimals as BigInt (timestamps in their
// own unit, decimals unscaled), dates as epoch milliseconds, binary as Uint8Array, structs
// as objects, lists as arrays, maps as arrays of [key, value] pairs. Types are Flechette's
// data type objects (`typeId`, `unit`, `scale`, `children`, ...); the numbers below are the
// Arrow type ids Flechette uses.

import { decodeVariant } from './variant.js';

/** Arrow type ids (Flechette's `Type`), written out so this file needs no Arrow library. */
export const T = Object.freeze({
  Dictionary: -1, Null: 1, Int: 2, Float: 3, Binary: 4, Utf8: 5, Bool: 6, Decimal: 7, Date: 8,
  Time: 9, Timestamp: 10, Interval: 11, List: 12, Struct: 13, Union: 14, FixedSizeBinary: 15,
  FixedSizeList: 16, Map: 17, Duration: 18, LargeBinary: 19, LargeUtf8: 20, LargeList: 21,
  BinaryView: 23, Utf8View: 24, ListView: 25, LargeListView: 26,
});

/**
 * What a nested type holds, by layout: `{ fields: [{ name, type }] }` for a struct,
 * `{ item }` for a list of any kind, `{ key, value }` for a map (each a type); null for a
 * type that is not nested. The one description of these layouts that formatting and
 * sorting walk.
 */
export function nestedLayout(type) {
  switch (type?.typeId) {
    case T.Struct:
      return { fields: type.children.map((field) => ({ name: field.name, type: field.type })) };
    case T.List:
    case T.LargeList:
    case T.ListView:
    case T.LargeListView:
    case T.FixedSizeList:
      return { item: type.children[0]?.type };
    case T.Map: {
      const [key, value] = type.children[0]?.type?.children ?? [];
      return { key: key?.type, value: value?.type };
    }
    default:
      return null;
  }
}

/** Bytes as a short human size: `10.7 KiB`. */
export function formatBytes(n) {
  n = Number(n);
  if (!Number.isFinite(n)) return '?';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

/** A count with thousands separators: `1,233`. */
export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}

/** Milliseconds as `340 ms` or `2.4 s`. */
export function formatDuration(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A percent-encoded path (as the Delta log writes them) as readable text. */
export function decodePath(path) {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** `1 file`, `3 files`. */
export function plural(n, one, many = `${one}s`) {
  return `${formatCount(n)} ${Number(n) === 1 ? one : many}`;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

function dateText(d) {
  const year = d.getUTCFullYear();
  const y = year < 0 ? `-${pad(-year, 6)}` : year > 9999 ? `+${year}` : pad(year, 4);
  return `${y}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** Epoch milliseconds as `2024-01-02 03:04:05.678`, `Z` appended when zoned (commit times). */
export function formatInstant(ms, zoned) {
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) return String(ms);
  const milli = d.getUTCMilliseconds();
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${milli ? `.${pad(milli, 3)}` : ''}`;
  return `${dateText(d)} ${time}${zoned ? 'Z' : ''}`;
}

/** An epoch-millisecond day as `2024-01-02`. */
export function formatDate(ms) {
  const d = new Date(Number(ms));
  return Number.isNaN(d.getTime()) ? String(ms) : dateText(d);
}

const PER_SECOND = [1n, 1000n, 1000000n, 1000000000n]; // Arrow TimeUnit: s, ms, µs, ns

/** Fraction digits of a second, in groups of three, as few as show it exactly. */
function fraction(rest, unit) {
  if (rest === 0n || unit === 0) return '';
  let digits = String(rest).padStart(unit * 3, '0');
  while (digits.length > 3 && digits.endsWith('000')) digits = digits.slice(0, -3);
  return `.${digits}`;
}

/**
 * A timestamp given as a BigInt count of `unit` (Arrow TimeUnit 0–3) since the epoch, exactly:
 * `2024-01-02 03:04:05.000200`, `Z` appended when zoned.
 */
export function formatTimestamp(raw, unit, zoned) {
  const per = PER_SECOND[unit] ?? 1000n;
  const v = BigInt(raw);
  let secs = v / per;
  let rest = v % per;
  if (rest < 0n) {
    rest += per;
    secs -= 1n;
  }
  const d = new Date(Number(secs) * 1000);
  if (Number.isNaN(d.getTime())) return String(raw);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${fraction(rest, unit)}`;
  return `${dateText(d)} ${time}${zoned ? 'Z' : ''}`;
}

/** A time of day in `unit` since midnight as `13:04:05.25`. */
function formatTime(raw, unit) {
  const per = PER_SECOND[unit] ?? 1000n;
  const v = BigInt(raw);
  const secs = Number(v / per);
  return `${pad(Math.floor(secs / 3600))}:${pad(Math.floor(secs / 60) % 60)}:${pad(secs % 60)}${fraction(v % per, unit)}`;
}

/** An unscaled decimal integer (as text) with `scale` digits after the point. */
export function scaleDecimal(unscaled, scale) {
  let s = String(unscaled);
  if (!scale || scale <= 0) return s;
  const neg = s.startsWith('-');
  if (neg) s = s.slice(1);
  s = s.padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

/** Bytes as `0x…` hex; cut after `max` bytes (with the length) unless `max` is Infinity. */
export function hex(bytes, max = 32) {
  const shown = Array.from(bytes.subarray(0, max), (b) => b.toString(16).padStart(2, '0'));
  return `0x${shown.join('')}${bytes.length > max ? `… (${bytes.length} bytes)` : ''}`;
}

/** The shortest decimal text that rounds back to the same single-precision value. */
export function shortFloat(v) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return v; // keeps the sign of -0
  for (let p = 1; p <= 9; p++) {
    const t = Number(v.toPrecision(p));
    if (Math.fround(t) === v) return t;
  }
  return v;
}

/**
 * A struct's fields or a map's entries as `[key, value]` pairs, in their order: a plain
 * object would put integer-like keys first, lose a `__proto__` key and merge a map's
 * repeated keys. [`plainJson`] writes it as a JSON object.
 */
export class Entries {
  /** @param {Array<[string, unknown]>} pairs */
  constructor(pairs) {
    this.pairs = pairs;
  }
}

/** A number written as it is in JSON (a variant's: exact decimals and 64-bit integers). */
export class JsonNumber {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
  }
}

const BINARY = new Set([T.Binary, T.LargeBinary, T.BinaryView]);

/** Whether a struct type is how a Delta `variant` is read: `metadata` and `value`, both
 * binary and not null (the value is still shown raw when its bytes do not decode). */
export function isVariantType(type) {
  const [m, v] = type?.children ?? [];
  return (
    type?.children?.length === 2 &&
    m.name === 'metadata' && v.name === 'value' &&
    BINARY.has(m.type?.typeId) && BINARY.has(v.type?.typeId) &&
    m.nullable === false && v.nullable === false
  );
}

/** What [`decodeVariant`] builds a variant's plain value from. */
function variantMakers(binaryMax) {
  return {
    object: (pairs) => new Entries(pairs),
    number: (text) => new JsonNumber(text),
    float: (v, single) => (Number.isFinite(v) ? new JsonNumber(String(single ? shortFloat(v) : v)) : String(v)),
    date: (ms) => formatDate(ms),
    timestamp: (raw, unit, zoned) => formatTimestamp(raw, unit, zoned),
    time: (micros) => formatTime(micros, 2),
    bytes: (b) => hex(b, binaryMax),
  };
}

/** A value of [`toPlain`] that is not nested as text (`-0` keeps its sign). */
function scalarText(plain) {
  return Object.is(plain, -0) ? '-0' : String(plain);
}

/** A value of [`toPlain`] as JSON text (`pretty`: indented by two spaces). */
export function plainJson(plain, pretty = false, indent = '') {
  if (plain === null || plain === undefined) return 'null';
  const inner = pretty ? `${indent}  ` : '';
  const wrap = (open, items, close) => {
    if (!items.length) return `${open}${close}`;
    return pretty ? `${open}\n${inner}${items.join(`,\n${inner}`)}\n${indent}${close}` : `${open}${items.join(',')}${close}`;
  };
  if (plain instanceof Entries) {
    return wrap('{', plain.pairs.map(([k, v]) => `${JSON.stringify(k)}:${pretty ? ' ' : ''}${plainJson(v, pretty, inner)}`), '}');
  }
  if (Array.isArray(plain)) return wrap('[', plain.map((v) => plainJson(v, pretty, inner)), ']');
  if (plain instanceof JsonNumber) return plain.text;
  if (Object.is(plain, -0)) return '-0';
  return JSON.stringify(plain) ?? 'null';
}

/**
 * An Arrow value as a plain JSON-able value by its Arrow type: instants and dates become
 * text, 64-bit integers and decimals exact text, structs and maps objects, lists arrays,
 * binary hex (cut at `binaryMax` bytes).
 */
export function toPlain(value, type, binaryMax = 32) {
  if (value === null || value === undefined) return null;
  if (type?.typeId === T.Struct && isVariantType(type)) {
    try {
      return decodeVariant(value.metadata, value.value, variantMakers(binaryMax));
    } catch {
      // Not a valid variant: its two binaries as they are, below.
    }
  }
  const layout = nestedLayout(type);
  if (layout?.fields) return new Entries(layout.fields.map((field) => [field.name, inner(value[field.name], field.type, binaryMax)]));
  if (layout && 'item' in layout) return Array.from(value, (x) => inner(x, layout.item, binaryMax));
  if (layout) return new Entries(Array.from(value, ([k, v]) => [String(toPlain(k, layout.key, binaryMax)), inner(v, layout.value, binaryMax)]));
  switch (type?.typeId) {
    case T.Timestamp:
      return formatTimestamp(value, type.unit, Boolean(type.timezone));
    case T.Date:
      return formatDate(value);
    case T.Time:
      return formatTime(value, type.unit);
    case T.Decimal:
      return scaleDecimal(value, type.scale);
    case T.Binary:
    case T.LargeBinary:
    case T.BinaryView:
    case T.FixedSizeBinary:
      return hex(value, binaryMax);
    case T.Dictionary:
      return toPlain(value, type.dictionary, binaryMax);
    case T.Float:
      // Float32 values arrive widened to a double: print their shortest form.
      return type.precision === 1 ? shortFloat(value) : Number.isFinite(value) ? value : String(value);
    default:
      break;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value instanceof Uint8Array) return hex(value, binaryMax);
  return value;
}

/** A value inside a struct, list or map: as [`toPlain`], but 64-bit integers and decimals
 * (exact text at the top level) stay numbers in the JSON, every digit kept, as `dar`'s JSON
 * writes them. */
function inner(value, type, binaryMax) {
  const plain = toPlain(value, type, binaryMax);
  const exact = type?.typeId === T.Decimal || (type?.typeId === T.Int && type.bitWidth === 64);
  return exact && typeof plain === 'string' ? new JsonNumber(plain) : plain;
}

const NUMERIC = new Set([T.Int, T.Float, T.Decimal, T.Duration]);

/** Whether values of `type` are numbers (right-aligned in the grid). */
export function isNumericType(type) {
  return NUMERIC.has(type?.typeId);
}

/**
 * One cell's display text and kind (`null`, `number`, `nested`, `text`). Nested values are
 * compact JSON; text is cut at `max` characters (the cell panel shows all of it).
 */
export function formatCell(value, type, max = 300) {
  if (value === null || value === undefined) return { text: 'null', kind: 'null' };
  const plain = toPlain(value, type);
  const nested = plain !== null && typeof plain === 'object';
  const text = nested ? plainJson(plain) : scalarText(plain);
  const kind = nested ? 'nested' : isNumericType(type) ? 'number' : 'text';
  return { text: text.length > max ? `${text.slice(0, max)}…` : text, kind };
}

/** A value in full for export and the cell panel: `''` for null, compact or (`pretty`)
 * indented JSON for nested values, every byte of binary. */
export function fullText(value, type, pretty = false) {
  if (value === null || value === undefined) return '';
  const plain = toPlain(value, type, Infinity);
  if (plain !== null && typeof plain === 'object') return plainJson(plain, pretty);
  return scalarText(plain);
}

/** A Flechette data type as short text: `Int64`, `Timestamp(µs, UTC)`, `List<Utf8>`. */
export function typeLabel(type) {
  if (!type) return '';
  const units = ['s', 'ms', 'µs', 'ns'];
  switch (type.typeId) {
    case T.Int:
      return `${type.signed ? 'Int' : 'UInt'}${type.bitWidth}`;
    case T.Float:
      return ['Float16', 'Float32', 'Float64'][type.precision] ?? 'Float';
    case T.Decimal:
      return `Decimal${type.bitWidth}(${type.precision}, ${type.scale})`;
    case T.Timestamp:
      return `Timestamp(${units[type.unit]}${type.timezone ? `, ${type.timezone}` : ''})`;
    case T.Date:
      return type.unit === 0 ? 'Date32' : 'Date64';
    case T.List:
    case T.LargeList:
      return `List<${typeLabel(type.children[0]?.type)}>`;
    case T.Struct:
      return `Struct<${type.children.map((f) => f.name).join(', ')}>`;
    case T.Map:
      return 'Map';
    default:
      return Object.entries(T).find(([, id]) => id === type.typeId)?.[0] ?? `type ${type.typeId}`;
  }
}
