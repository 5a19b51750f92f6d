// Sorting the rows of a read by one column without copying them: a permutation of stream
// row numbers (a Uint32Array) in which display position p shows stream row perm[p].
// Comparison follows the column's Arrow type: numbers, BigInts (64-bit integers, decimals,
// timestamps), strings, booleans, dates; binary by its bytes; nested values by their JSON.
// Nulls come last in both directions, NaN after every number; ties keep stream order.

import { fullText, hex, T } from './format.js';

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

/** Compares two numbers with NaN after every other number. */
function compareNumbers(x, y) {
  if (x < y) return -1;
  if (x > y) return 1;
  if (x === y) return 0;
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  return xn === yn ? 0 : xn ? 1 : -1;
}

const compareOther = (x, y) => (x < y ? -1 : x > y ? 1 : 0);

/**
 * Sorts the rows of column `col` of `store` (a ResultStore): resolves to the permutation
 * (`Uint32Array`, display position → stream row). `direction` is 'asc' or 'desc'.
 * @param {import('./result.js').ResultStore} store
 * @param {number} col
 * @param {'asc' | 'desc'} direction
 * @returns {Uint32Array}
 */
export function sortPermutation(store, col, direction) {
  const n = store.rowCount;
  const type = store.fields[col]?.type;
  let kind = keyKind(type);
  const sign = direction === 'desc' ? -1 : 1;
  const present = new Uint32Array(n);
  const nulls = [];
  let count = 0;
  let keys = kind === 'number' ? new Float64Array(n) : new Array(n);
  let safe = kind === 'bigint';
  store.forEachValue(col, (value, row) => {
    if (value === null || value === undefined) {
      nulls.push(row);
      return;
    }
    const key = keyOf(value, type, kind);
    if (safe && (key >= SAFE || key <= -SAFE)) safe = false;
    keys[row] = key;
    present[count++] = row;
  });
  // BigInts that all fit in a double sort as numbers, which is several times faster.
  if (safe) {
    keys = Float64Array.from(keys, (k) => (k === undefined ? 0 : Number(k)));
    kind = 'number';
  }
  const compare = kind === 'number' ? compareNumbers : compareOther;
  const order = present.subarray(0, count);
  order.sort((a, b) => sign * compare(keys[a], keys[b]) || a - b);
  const perm = new Uint32Array(n);
  perm.set(order);
  perm.set(nulls, count);
  return perm;
}

/** The next state of a header's sort button: ascending → descending → off. */
export function nextDirection(current) {
  return current === 'asc' ? 'desc' : current === 'desc' ? null : 'asc';
}
