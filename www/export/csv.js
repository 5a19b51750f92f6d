// Rows as CSV (RFC 4180: fields with a comma, quote, CR or LF, or with leading or trailing
// space, are quoted, quotes doubled, lines end in CRLF) or TSV (tab, newline, carriage
// return and backslash written as \t, \n, \r and \\; lines end in LF). A null is an empty
// field; in CSV an empty value is `""`, so the two stay apart (TSV, made for pasting into
// spreadsheets, writes both as an empty field). Built in chunks that yield to the page between them, so a million rows never
// freeze it.

import { nextTask } from '../dom.js';

/** One CSV field: `null` for a null value. */
export function csvField(text) {
  if (text === null) return '';
  return text === '' || /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const TSV_ESCAPES = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One TSV field: `null` for a null value. */
export function tsvField(text) {
  if (text === null) return '';
  return text.replace(/[\\\t\n\r]/g, (c) => TSV_ESCAPES[c]);
}

/** The two formats: field encoder, separator, line end, MIME type, file extension. */
export const FORMATS = {
  csv: { field: csvField, sep: ',', eol: '\r\n', mime: 'text/csv', ext: 'csv' },
  tsv: { field: tsvField, sep: '\t', eol: '\n', mime: 'text/tab-separated-values', ext: 'tsv' },
};

/** One line of `format` from the field texts of a row. */
export function line(texts, format) {
  return texts.map(format.field).join(format.sep) + format.eol;
}

/** How long one slice of work may hold the page's thread before it yields. */
const SLICE_MS = 25;

/**
 * The text of `count` rows (header first) in `format`, as an array of parts: strings to
 * join, or with `utf8` UTF-8 bytes for a Blob (encoded slice by slice: a Blob made of
 * strings would encode them all at once). `rowTexts(i)` gives the field texts of the i-th
 * row to write. Works in slices of about SLICE_MS, yielding to the page between them, and
 * reports `onProgress(done, count)` after each.
 * @param {string[]} header
 * @param {number} count
 * @param {(i: number) => string[]} rowTexts
 * @param {typeof FORMATS.csv} format
 * @param {{ utf8?: boolean, onProgress?: (done: number, total: number) => void, signal?: AbortSignal }} [options]
 * @returns {Promise<Array<string | Uint8Array>>}
 */
export async function delimitedParts(header, count, rowTexts, format, options = {}) {
  const { onProgress, signal } = options;
  const encoder = options.utf8 ? new TextEncoder() : null;
  const parts = [];
  const add = (text) => parts.push(encoder ? encoder.encode(text) : text);
  add(line(header, format));
  let i = 0;
  while (i < count) {
    const start = performance.now();
    let chunk = '';
    do {
      for (const end = Math.min(count, i + 256); i < end; i++) chunk += line(rowTexts(i), format);
    } while (i < count && performance.now() - start < SLICE_MS);
    add(chunk);
    onProgress?.(i, count);
    if (i < count) {
      await nextTask();
      signal?.throwIfAborted();
    }
  }
  return parts;
}
