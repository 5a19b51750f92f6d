// Rows as CSV (RFC 4180: fields with a comma, quote, CR or LF, or with leading or trailing
// space, are quoted, quotes doubled, lines end in CRLF) or TSV (tab, newline, carriage
// return and backslash written as \t, \n, \r and \\; lines end in LF). A null is an empty
// field. Built in chunks that yield to the page between them, so a million rows never
// freeze it.

/** One CSV field. */
export function csvField(text) {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const TSV_ESCAPES = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One TSV field. */
export function tsvField(text) {
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

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The text of `count` rows (header first) in `format`, as an array of string parts (for a
 * Blob, or to join): `rowTexts(i)` gives the field texts of the i-th row to write. Yields to
 * the page every `chunkRows` rows and reports `onProgress(done, count)`.
 * @param {string[]} header
 * @param {number} count
 * @param {(i: number) => string[]} rowTexts
 * @param {typeof FORMATS.csv} format
 * @param {{ chunkRows?: number, onProgress?: (done: number, total: number) => void, signal?: AbortSignal }} [options]
 * @returns {Promise<string[]>}
 */
export async function delimitedParts(header, count, rowTexts, format, options = {}) {
  const { chunkRows = 20_000, onProgress, signal } = options;
  const parts = [line(header, format)];
  for (let start = 0; start < count; start += chunkRows) {
    const end = Math.min(count, start + chunkRows);
    let chunk = '';
    for (let i = start; i < end; i++) chunk += line(rowTexts(i), format);
    parts.push(chunk);
    onProgress?.(end, count);
    if (end < count) {
      await nextTask();
      signal?.throwIfAborted();
    }
  }
  return parts;
}
