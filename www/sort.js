// Sorting the rows of a read by one column without copying them: a permutation of stream
// row numbers (a Uint32Array) in which display position p shows stream row perm[p].
// Comparison follows the column's Arrow type: numbers, BigInts (64-bit integers, decimals,
// timestamps), strings, booleans, dates; binary by its bytes; nested values by their contents
// (lists and maps element by element, structs field by field, each by its own type; a
// variant by its JSON). Nulls come last in both directions, NaN after every number
// (ascending; first among the values descending); ties keep stream order.

import { fullText, hex, isVariantType, nestedLayout, T } from './format.js';

const SAFE = 2n ** 53n;

/** How a column's values become sort keys: 'number', 'bigint' or 'text'. */
function keyKind(type) {
  switch (type?.typeId) {
    case T.Int:
    case T.Time:
    case T.Duration:
      return type.bitWidth === 64 ? 'bigint' : 'number';
    case T.Timestamp:
      return 'bigint';
    case T.Decimal:
      return type.bitWidth === 32 ? 'number' : 'bigint';
    case T.Float:
    case T.Date:
    case T.Bool:
      return 'number';
    case T.Utf8:
    case T.LargeUtf8:
    case T.Utf8View:
      return 'string';
    default:
      return 'text';
  }
}

/** The sort key of a non-null value of `type` for key kind `kind`. */
function keyOf(value, type, kind) {
  if (kind === 'number') return Number(value);
  if (kind === 'bigint' || kind === 'string') return value;
  if (value instanceof Uint8Array) return hex(value, Infinity); // same order as the bytes
  return fullText(value, type);
}

/**
 * Orders two values of `type` by their contents: numbers, BigInts, strings and booleans by
 * value, bytes by their bytes, lists and maps element by element (one that is the start of
 * the other first), structs field by field; nulls inside come after every value, NaN after
 * every number. A variant (its two binaries) is ordered by its JSON.
 * @returns {number} negative, 0 or positive
 */
export function compareValues(a, b, type) {
  const aNull = a === null || a === undefined;
  const bNull = b === null || b === undefined;
  if (aNull || bNull) return aNull === bNull ? 0 : aNull ? 1 : -1;
  if (type?.typeId === T.Dictionary) return compareValues(a, b, type.dictionary);
  if (type?.typeId === T.Struct && isVariantType(type)) return compareScalars(fullText(a, type), fullText(b, type));
  const layout = nestedLayout(type);
  if (layout?.fields) {
    for (const field of layout.fields) {
      const c = compareValues(a[field.name], b[field.name], field.type);
      if (c !== 0) return c;
    }
    return 0;
  }
  if (layout && 'item' in layout) return compareSequences(a, b, (x, y) => compareValues(x, y, layout.item));
  if (layout) {
    return compareSequences(a, b, ([ka, va], [kb, vb]) => compareValues(ka, kb, layout.key) || compareValues(va, vb, layout.value));
  }
  return compareScalars(a, b);
}

/** Element by element; when one runs out first, it comes first. */
function compareSequences(a, b, compare) {
  const xs = Array.from(a);
  const ys = Array.from(b);
  const n = Math.min(xs.length, ys.length);
  for (let i = 0; i < n; i++) {
    const c = compare(xs[i], ys[i]);
    if (c !== 0) return c;
  }
  return xs.length - ys.length;
}

/** Two leaf values of one type: bytes by their bytes, NaN after every number, else `<`. */
function compareScalars(a, b) {
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  }
  const x = a instanceof Date ? a.getTime() : a;
  const y = b instanceof Date ? b.getTime() : b;
  const xNaN = typeof x === 'number' && Number.isNaN(x);
  const yNaN = typeof y === 'number' && Number.isNaN(y);
  if (xNaN || yNaN) return xNaN === yNaN ? 0 : xNaN ? 1 : -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Room for stream row numbers in a packed sort entry: rank * ROWS + row stays below 2^53. */
const ROWS = 2 ** 26;

/** Dense ranks of numbers (NaN after every number): `rankOf(x)`, and how many ranks there are. */
function numberRanks(keys, present) {
  const sorted = Float64Array.from(present, (row) => keys[row]).sort(); // NaN sorts last
  let unique = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (Number.isNaN(sorted[i])) break;
    if (unique === 0 || sorted[i] !== sorted[unique - 1]) sorted[unique++] = sorted[i];
  }
  const values = sorted.subarray(0, unique);
  const rankOf = (x) => {
    if (Number.isNaN(x)) return unique;
    let lo = 0;
    let hi = unique - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return { rankOf, count: unique + 1 };
}

/** Dense ranks of other keys (BigInts, strings, nested values' JSON): through a Map of the
 * distinct keys; `compare` orders keys that are not BigInts or plain strings. */
function mapRanks(keys, present, kind, compare) {
  const distinct = [...new Set(Array.from(present, (row) => keys[row]))];
  if (kind === 'bigint') distinct.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  else if (compare) distinct.sort((a, b) => compare(a, b) || (a < b ? -1 : a > b ? 1 : 0));
  else distinct.sort(); // UTF-16 code unit order, as `<` compares strings
  const ranks = new Map(distinct.map((k, i) => [k, i]));
  return { rankOf: (k) => ranks.get(k), count: distinct.length };
}

/**
 * Sorts the rows of column `col` of `store` (a ResultStore) and returns the permutation
 * (display position → stream row). Each row's key becomes a dense rank; rank and row are
 * packed into one double and sorted natively (no comparator calls), which keeps ties in
 * stream order.
 * @param {import('./result.js').ResultStore} store
 * @param {number} col
 * @param {'asc' | 'desc'} direction
 * @returns {Uint32Array}
 */
export function sortPermutation(store, col, direction) {
  const n = store.rowCount;
  if (n >= ROWS) throw Object.assign(new Error(`cannot sort more than ${ROWS} rows`), { code: 'limit_exceeded' });
  const type = store.fields[col]?.type;
  let kind = keyKind(type);
  const present = new Uint32Array(n);
  const nulls = [];
  let count = 0;
  let keys = kind === 'number' ? new Float64Array(n) : new Array(n);
  let safe = kind === 'bigint';
  // One value per distinct JSON text of a nested column, which its key's order comes from.
  const nested = kind === 'text' && nestedLayout(type) !== null ? new Map() : null;
  store.forEachValue(col, (value, row) => {
    if (value === null || value === undefined) {
      nulls.push(row);
      return;
    }
    const key = keyOf(value, type, kind);
    if (nested && !nested.has(key)) nested.set(key, value);
    if (safe && (key >= SAFE || key <= -SAFE)) safe = false;
    keys[row] = key;
    present[count++] = row;
  });
  const rows = present.subarray(0, count);
  // BigInts that all fit in a double rank as numbers.
  if (safe) {
    keys = Float64Array.from(keys, (k) => (k === undefined ? 0 : Number(k)));
    kind = 'number';
  }
  const byContents = nested ? (a, b) => compareValues(nested.get(a), nested.get(b), type) : undefined;
  const { rankOf, count: ranks } = kind === 'number' ? numberRanks(keys, rows) : mapRanks(keys, rows, kind, byContents);
  const desc = direction === 'desc';
  const packed = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const row = rows[i];
    const rank = rankOf(keys[row]);
    packed[i] = (desc ? ranks - 1 - rank : rank) * ROWS + row;
  }
  packed.sort();
  const perm = new Uint32Array(n);
  for (let i = 0; i < count; i++) perm[i] = packed[i] % ROWS;
  perm.set(nulls, count);
  return perm;
}

/** The next state of a header's sort button: ascending → descending → off. */
export function nextDirection(current) {
  return current === 'asc' ? 'desc' : current === 'desc' ? null : 'asc';
}
