// The table card and the schema card: an opened table's version, commit time, protocol,
// partition columns, files, log, row count and description, its properties, its data files
// (listed when the panel is opened) and its schema with the column profile from the log
// (min, max, nulls before any data file is read) and the checkboxes that pick what to read.

import { $, chip, el } from './dom.js';
import { decodePath, formatBytes, formatCount, formatInstant, plural } from './format.js';
import { listFiles } from './reader.js';

/** Data files listed at most in the files panel. */
const FILE_ROWS = 500;

/** The min, max and null-count cells of a column: `≤ min` and `≥ max` when some file has
 * no bounds (the true extremes may lie there). */
function statCells(stats) {
  const bound = (value, sign) => (value === null || value === undefined ? '' : stats.complete ? value : `${sign} ${value}`);
  const title = stats ? `${stats.filesWithBounds} file(s) with bounds${stats.complete ? ' (all)' : ''}` : 'no statistics';
  return [
    el('td', { className: 'type stat', textContent: stats ? bound(stats.min, '≤') : '', title }),
    el('td', { className: 'type stat', textContent: stats ? bound(stats.max, '≥') : '', title }),
    el('td', { className: 'num stat', textContent: stats?.nullCount === null || !stats ? '' : formatCount(stats.nullCount), title }),
  ];
}

const show = (selector, visible) => document.querySelectorAll(selector).forEach((n) => (n.hidden = !visible));

function renderProtocol(pr) {
  const features = [...new Set([...pr.readerFeatures, ...pr.writerFeatures])];
  const node = $('info-protocol');
  node.replaceChildren(
    el('span', { textContent: `reader ${pr.reader ?? '?'} · writer ${pr.writer ?? '?'}` }),
    ...(features.length ? [el('br')] : []),
    ...features.map((f) => chip(f, pr.readerFeatures.includes(f) ? 'reader' : 'writer')),
  );
  if (features.length) node.title = 'Blue: reader features (needed to read). Grey: writer-only features.';
}

function renderLog(info) {
  const log = info.loadInfo;
  if (log) {
    const parts = [log.checkpointVersion !== null && log.checkpointVersion !== undefined ? `checkpoint ${log.checkpointVersion}` : 'no checkpoint'];
    if (log.logFilesRead !== undefined) parts.push(`${plural(log.logFilesRead, 'log file')} read`);
    if (log.discovery) parts.push(`found by ${log.discovery}`);
    if (info.columnMapping && info.columnMapping !== 'none') parts.push(`column mapping: ${info.columnMapping}`);
    $('info-log').textContent = parts.join(' · ');
  }
  show('.log-row', Boolean(log));
}

/**
 * Shows an opened table (`describeTable`'s result). `latest` is the latest version when
 * known; `keepColumns` keeps the column choice (the same table at another version).
 */
export function renderInfo(info, latest, keepColumns) {
  $('placeholder').hidden = true;
  $('info').hidden = false;
  $('schema-card').hidden = false;
  $('info-version').textContent = String(info.version);
  $('info-version').dataset.version = String(info.version);
  const note = latest === null ? '' : latest === info.version ? '(latest)' : `(latest is ${latest})`;
  $('info-version-note').textContent = note;
  const committed = info.timestamp === null ? '' : typeof info.timestamp === 'number' ? formatInstant(info.timestamp, true) : String(info.timestamp);
  $('info-committed').textContent = committed;
  show('.committed-row', Boolean(committed));
  renderProtocol(info.protocol);
  $('info-partitions').replaceChildren(
    ...(info.partitionColumns.length ? info.partitionColumns.map((c) => chip(c, 'part')) : [el('span', { className: 'muted', textContent: 'not partitioned' })]),
  );
  $('info-files').textContent = `${plural(info.numFiles, 'file')} · ${formatBytes(info.totalBytes)}`;
  $('info-files').dataset.files = String(info.numFiles);
  renderLog(info);
  const profile = info.profile;
  const rows = profile?.numRecords;
  $('info-rows').textContent =
    rows === null || rows === undefined
      ? ''
      : `${formatCount(rows)} (from the log's statistics${profile.countsExact ? '' : '; null counts may include deleted rows'})`;
  show('.rows-row', Boolean($('info-rows').textContent));
  $('info-description').textContent = info.description ?? '';
  show('.description-row', Boolean(info.description));
  const properties = Object.entries(info.configuration).sort(([a], [b]) => a.localeCompare(b));
  $('properties-body').replaceChildren(
    ...properties.map(([k, v]) => el('tr', {}, el('td', { className: 'path', textContent: k }), el('td', { textContent: v }))),
  );
  $('properties-details').hidden = properties.length === 0;
  $('files-body').replaceChildren();
  renderSchema(info.fields, keepColumns);
}

function renderSchema(fields, keepColumns) {
  const body = $('schema-body');
  const previous = new Map(keepColumns ? [...body.querySelectorAll('input[type=checkbox]')].map((b) => [b.value, b.checked]) : []);
  body.replaceChildren(
    ...fields.flatMap((f, i) => {
      const id = `col-${i}`;
      const box = el('input', { type: 'checkbox', id, value: f.name, checked: previous.get(f.name) ?? true });
      const row = el(
        'tr',
        {},
        el('td', {}, box),
        el(
          'td',
          {},
          el('label', { htmlFor: id, textContent: f.name }),
          ...(f.partition ? [' ', chip('partition', 'part small')] : []),
          ...(f.nullable ? [] : [' ', chip('not null', 'small')]),
        ),
        el('td', { className: 'type', textContent: f.deltaType, title: f.deltaType }),
        el('td', { className: 'type', textContent: f.arrowType, title: f.arrowType }),
        ...statCells(f.stats),
      );
      // A struct's fields with statistics follow it, indented (read with their struct).
      const nested = (f.nested ?? []).map((c) =>
        el(
          'tr',
          { className: 'nested-field' },
          el('td', {}),
          el('td', { className: 'nested-name', textContent: c.name, title: `${c.name}: inside ${f.name}` }),
          el('td', {}),
          el('td', {}),
          ...statCells(c),
        ),
      );
      return [row, ...nested];
    }),
  );
}

/** The columns ticked to read, or undefined when all are. */
export function selectedColumns() {
  const boxes = [...$('schema-body').querySelectorAll('input[type=checkbox]')];
  const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
  return chosen.length === boxes.length ? undefined : chosen;
}

/** Ticks every column to read (`on`) or none. */
export function tickAll(on) {
  $('schema-body').querySelectorAll('input[type=checkbox]').forEach((b) => (b.checked = on));
}

/** The table whose files the panel is being filled with. */
let filesOf = null;

/** Fills the data files panel (on demand: a table may have very many files). */
export async function renderFiles(table) {
  const body = $('files-body');
  if (!table || body.childElementCount) return;
  filesOf = table;
  const files = await listFiles(table);
  // Another table or version was opened meanwhile: its own call fills the panel.
  if (body.childElementCount || filesOf !== table) return;
  const rows = files.slice(0, FILE_ROWS).map((f) => {
    const pv = Object.entries(f.partitionValues ?? {}).map(([k, v]) => `${k}=${v ?? 'null'}`).join(', ');
    return el(
      'tr',
      {},
      el('td', { className: 'path', textContent: decodePath(f.path), title: f.path }),
      el('td', { className: 'num', textContent: formatBytes(f.size) }),
      el('td', { textContent: pv }),
      el('td', { textContent: f.deletionVector ? 'yes' : '' }),
    );
  });
  if (files.length > FILE_ROWS) {
    rows.push(el('tr', {}, el('td', { colSpan: 4, className: 'muted', textContent: `… and ${formatCount(files.length - FILE_ROWS)} more` })));
  }
  if (!files.length) rows.push(el('tr', {}, el('td', { colSpan: 4, className: 'muted', textContent: 'No data files.' })));
  body.replaceChildren(...rows);
}
