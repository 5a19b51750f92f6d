// The skipped-files panel: after a filtered read, which data files the filter ruled out
// before reading (by their partition values, by their statistics, or all of them because the
// filter is false for every row) and the bytes that
// saved. It lists `scan.skippedFiles` where the package has it (and it agrees with the
// scan's counts); otherwise it shows the counts of `scan.metrics` alone.

import { decodePath, formatBytes, formatCount, plural } from './format.js';

/** Files listed at most (the counts and bytes cover all of them). */
const MAX_LISTED = 1000;

/**
 * What the scan skipped: `{ byPartition, byStats, byFilter, files, bytes }`; `files` (and `bytes`) are
 * null when the package does not name the files.
 * @param {{ metrics: object, skippedFiles?: Array<{ path: string, size: number, reason: string }> }} scan
 */
export function skippedOf(scan) {
  const m = scan.metrics ?? {};
  const byPartition = m.filesSkippedByPartition ?? 0;
  const byStats = m.filesSkippedByStats ?? 0;
  const byFilter = m.filesSkippedByFilter ?? 0;
  const list = Array.isArray(scan.skippedFiles) ? scan.skippedFiles : null;
  // A package that has the property but not the data answers [] whatever the counts are.
  const named = list !== null && list.length === byPartition + byStats + byFilter;
  const files = named ? list : null;
  const bytes = files ? files.reduce((sum, f) => sum + Number(f.size || 0), 0) : null;
  return { byPartition, byStats, byFilter, files, bytes };
}

/** How the panel names a skipped file's reason. */
const REASONS = { partition: 'partition values', stats: 'statistics', filter: 'the filter matches no row' };

const cell = (text, className = '') => Object.assign(document.createElement('td'), { textContent: text, className });

/**
 * Fills the panel (`root` holds #skipped-summary and #skipped-body) for a read with
 * `filter`; hides it when there was no filter.
 * @param {HTMLElement} root
 * @param {ReturnType<typeof skippedOf> | null} skipped
 * @param {string} filter
 */
export function renderSkipped(root, skipped, filter) {
  const summary = root.querySelector('#skipped-summary');
  const body = root.querySelector('#skipped-body');
  root.hidden = !filter || !skipped;
  if (root.hidden) return;
  const total = skipped.byPartition + skipped.byStats + skipped.byFilter;
  const parts = [`${plural(total, 'file')} skipped`];
  if (skipped.byFilter > 0) parts.push('the filter is false for every row, whatever a file holds');
  else parts.push(`${formatCount(skipped.byPartition)} by partition values`, `${formatCount(skipped.byStats)} by statistics`);
  if (skipped.bytes !== null) parts.push(`${formatBytes(skipped.bytes)} not read`);
  summary.textContent = parts.join(' · ');
  root.dataset.partition = String(skipped.byPartition);
  root.dataset.stats = String(skipped.byStats);
  root.dataset.filter = String(skipped.byFilter);
  root.dataset.bytes = skipped.bytes === null ? '' : String(skipped.bytes);
  const rows = (skipped.files ?? []).slice(0, MAX_LISTED).map((f) => {
    const tr = document.createElement('tr');
    tr.append(cell(decodePath(f.path), 'path'), cell(formatBytes(f.size), 'num'), cell(REASONS[f.reason] ?? f.reason));
    tr.title = f.path;
    tr.dataset.reason = f.reason;
    tr.dataset.size = String(f.size);
    return tr;
  });
  if (skipped.files === null && total > 0) {
    const tr = document.createElement('tr');
    tr.append(Object.assign(cell('This version of the package counts the skipped files but does not name them.', 'muted'), { colSpan: 3 }));
    rows.push(tr);
  } else if ((skipped.files?.length ?? 0) > MAX_LISTED) {
    const tr = document.createElement('tr');
    tr.append(Object.assign(cell(`… and ${formatCount(skipped.files.length - MAX_LISTED)} more`, 'muted'), { colSpan: 3 }));
    rows.push(tr);
  } else if (total === 0) {
    const tr = document.createElement('tr');
    tr.append(Object.assign(cell('The filter ruled out no file: every file was read.', 'muted'), { colSpan: 3 }));
    rows.push(tr);
  }
  body.replaceChildren(...rows);
}
