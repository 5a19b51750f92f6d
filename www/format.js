// Formatting for the previewer: Arrow values to display text, byte sizes, counts.
//
// Pure functions with no DOM and no imports, so Node can test them as they are. Arrow
// values arrive as apache-arrow returns them (numbers, bigints, Vectors, StructRows,
// MapRows, DecimalBigNums, Uint8Arrays); the Arrow `Type` enum is passed in by the caller.

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

/** `1 file`, `3 files`. */
export function plural(n, one, many = `${one}s`) {
  return `${formatCount(n)} ${Number(n) === 1 ? one : many}`;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/**
 * Epoch milliseconds (apache-arrow gives microsecond and nanosecond timestamps as fractional
 * milliseconds) as `2024-01-02 03:04:05.678901`, `Z` appended when zoned. Fractions are
 * shown to the millisecond or microsecond, as needed.
 */
export function formatInstant(ms, zoned) {
  ms = Number(ms);
  let whole = Math.floor(ms);
  let micros = Math.round((ms - whole) * 1000);
  if (micros === 1000) {
    whole += 1;
    micros = 0;
  }
  const d = new Date(whole);
  if (!Number.isFinite(ms) || Number.isNaN(d.getTime())) return String(ms);
  const year = d.getUTCFullYear();
  const y = year < 0 ? `-${pad(-year, 6)}` : year > 9999 ? `+${year}` : pad(year, 4);
  const date = `${y}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const milli = pad(d.getUTCMilliseconds(), 3);
  const frac = micros ? `.${milli}${pad(micros, 3)}` : d.getUTCMilliseconds() ? `.${milli}` : '';
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac}`;
  return `${date} ${time}${zoned ? 'Z' : ''}`;
}

/** An epoch-millisecond day as `2024-01-02`. */
export function formatDate(ms) {
  return formatInstant(ms, false).slice(0, 10);
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

function hex(bytes, max = 32) {
  const shown = Array.from(bytes.subarray(0, max), (b) => b.toString(16).padStart(2, '0'));
  return `0x${shown.join('')}${bytes.length > max ? `… (${bytes.length} bytes)` : ''}`;
}

/**
 * An Arrow value as a plain JSON-able value, following its Arrow type: instants and dates
 * become text, 64-bit integers and decimals become exact text, structs and maps become
 * objects, lists become arrays, binary becomes hex.
 */
export function toPlain(value, type, Type) {
  if (value === null || value === undefined) return null;
  switch (type?.typeId) {
    case Type.Timestamp:
      return formatInstant(value, Boolean(type.timezone));
    case Type.Date:
      return formatDate(value);
    case Type.Decimal:
      return scaleDecimal(decimalText(value), type.scale);
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary:
      return hex(value);
    case Type.Struct: {
      const out = {};
      for (const field of type.children) out[field.name] = toPlain(value[field.name], field.type, Type);
      return out;
    }
    case Type.List:
    case Type.LargeList:
    case Type.FixedSizeList: {
      const item = type.children[0]?.type;
      return Array.from(value, (x) => toPlain(x, item, Type));
    }
    case Type.Map: {
      const [keyField, valueField] = type.children[0]?.type?.children ?? [];
      const out = {};
      for (const [k, v] of value) {
        out[String(toPlain(k, keyField?.type, Type))] = toPlain(v, valueField?.type, Type);
      }
      return out;
    }
    case Type.Dictionary:
      return toPlain(value, type.dictionary, Type);
    case Type.Float:
      // Float32 and Float16 values arrive widened to a double: print their shortest form.
      return type.precision === 2 ? numberText(value) : shortFloat(value);
    default:
      break;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value instanceof Uint8Array) return hex(value);
  if (typeof value === 'object' && typeof value.toJSON === 'function') return value.toJSON();
  return value;
}

function numberText(v) {
  return Number.isFinite(v) ? v : String(v);
}

/** The shortest decimal text that rounds back to the same single-precision value. */
export function shortFloat(v) {
  if (!Number.isFinite(v)) return String(v);
  for (let p = 1; p <= 9; p++) {
    const t = Number(v.toPrecision(p));
    if (Math.fround(t) === v) return t;
  }
  return v;
}

function decimalText(value) {
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  // DecimalBigNum: its toString gives the unscaled integer.
  return String(value);
}

/**
 * One cell's display text and kind (`null`, `number`, `nested`, `text`) for an Arrow value.
 * Nested values are compact JSON; long text is cut at `max` characters (the full text is
 * returned as `title`).
 */
export function formatCell(value, type, Type, max = 200) {
  if (value === null || value === undefined) return { text: 'null', kind: 'null' };
  const plain = toPlain(value, type, Type);
  let text;
  let kind = 'text';
  if (plain !== null && typeof plain === 'object') {
    text = JSON.stringify(plain);
    kind = 'nested';
  } else {
    text = String(plain);
    if (
      typeof value === 'number' ||
      typeof value === 'bigint' ||
      type?.typeId === Type.Decimal ||
      type?.typeId === Type.Int ||
      type?.typeId === Type.Float
    ) {
      kind = 'number';
    }
  }
  if (text.length > max) return { text: `${text.slice(0, max)}…`, kind, title: text };
  return { text, kind };
}
