// Downloads: a Blob handed to the browser as a file through a temporary object URL.

import { decodePath } from '../format.js';

/**
 * Saves `blob` as a download named `filename`.
 * @param {Blob} blob
 * @param {string} filename
 */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken the URL by the next task; a minute is plenty.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A file name from a table URL and a version: `events-v12`. */
export function baseName(tableUrl, version) {
  const name = decodePath(new URL(tableUrl).pathname.replace(/\/+$/, '').split('/').pop() || 'table');
  return `${name.replace(/[^\w.-]+/g, '_')}-v${version}`;
}
