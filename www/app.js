// The previewer page: open a table (URL, served list, time travel), show its facts and
// schema, read the first rows into a grid with progress and Cancel, report the last
// action's requests and bytes, and show every error in the page.

import {
  formatBytes,
  formatCell,
  formatCount,
  formatDuration,
  formatInstant,
  plural,
} from './format.js';
import { coded, describeTable, isAbort, listFiles, loadLibraries, openTableOffThread, tableMetrics } from './reader.js';

/** Rows rendered in the grid at most; a read may return more (up to the row limit). */
const GRID_ROWS = 200;
/** Data files listed at most in the files panel. */
const FILE_ROWS = 500;

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) node.append(c);
  return node;
};

const ui = {
  libStatus: $('lib-status'),
  error: $('error'),
  openForm: $('open-form'),
  pickField: $('pick-field'),
  pick: $('table-pick'),
  url: $('url'),
  version: $('version'),
  timestamp: $('timestamp'),
  open: $('open'),
  latest: $('latest'),
  info: $('info'),
  infoVersion: $('info-version'),
  infoVersionNote: $('info-version-note'),
  infoCommitted: $('info-committed'),
  committedRow: [...document.querySelectorAll('.committed-row')],
  infoProtocol: $('info-protocol'),
  infoPartitions: $('info-partitions'),
  infoFiles: $('info-files'),
  filesDetails: $('files-details'),
  filesBody: $('files-body'),
  infoLog: $('info-log'),
  infoLogRow: [...document.querySelectorAll('.log-row')],
  infoRows: $('info-rows'),
  infoRowsRow: [...document.querySelectorAll('.rows-row')],
  infoDescription: $('info-description'),
  infoDescriptionRow: [...document.querySelectorAll('.description-row')],
  propertiesDetails: $('properties-details'),
  propertiesBody: $('properties-body'),
  schemaCard: $('schema-card'),
  schemaBody: $('schema-body'),
  colsAll: $('cols-all'),
  colsNone: $('cols-none'),
  readForm: $('read-form'),
  filter: $('filter'),
  limit: $('limit'),
  read: $('read'),
  cancel: $('cancel'),
  progress: $('progress'),
  progressText: $('progress-text'),
  rowCount: $('row-count'),
  status: $('status'),
  metrics: $('metrics'),
  grid: $('grid'),
};

const state = {
  lib: null, // { DeltaTable, arrow }
  table: null, // the open table: in the package's Web Worker (RemoteDeltaTable), or a DeltaTable
  info: null, // describeTable(table)
  url: '',
  latestVersion: null, // per URL, learned when opened without time travel
  action: null, // { controller, kind, id }
  actionSeq: 0,
};

// ---------------------------------------------------------------- messages

function showError(err, what) {
  const code = err?.code ? String(err.code) : err?.name && err.name !== 'Error' ? err.name : 'error';
  const message = err?.message ? String(err.message) : String(err);
  ui.error.replaceChildren(
    el('strong', { textContent: what ? `${what}: ` : 'Error: ' }),
    el('code', { className: 'code', textContent: code }),
    ' ',
    el('span', { className: 'message', textContent: message }),
    el('button', {
      type: 'button',
      className: 'close',
      textContent: '×',
      title: 'Dismiss',
      ariaLabel: 'Dismiss the error',
      onclick: clearError,
    }),
  );
  ui.error.dataset.code = code;
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.replaceChildren();
  delete ui.error.dataset.code;
}

function setStatus(text, kind = '') {
  ui.status.textContent = text;
  ui.status.className = `status ${kind}`.trim();
}

// Nothing goes only to the console: uncaught failures are shown too.
window.addEventListener('error', (e) => showError(e.error ?? e.message, 'Unexpected error'));
window.addEventListener('unhandledrejection', (e) => showError(e.reason, 'Unexpected error'));

// ---------------------------------------------------------------- actions

/** Starts an action (open or read): aborts the running one, shows progress and Cancel. */
function beginAction(kind) {
  if (state.action) state.action.controller.abort();
  const action = { controller: new AbortController(), kind, id: ++state.actionSeq, started: performance.now() };
  state.action = action;
  clearError();
  ui.cancel.disabled = false;
  ui.progress.hidden = false;
  ui.progress.removeAttribute('value'); // indeterminate until progress arrives
  ui.progressText.textContent = kind === 'open' ? 'Reading the log…' : 'Planning…';
  document.body.classList.add('busy');
  // The last open and the last read each keep a line; an open clears both.
  if (kind === 'open') ui.metrics.replaceChildren();
  ui.metrics.querySelector(`[data-kind="${kind}"]`)?.remove();
  delete ui.rowCount.dataset.rows;
  delete ui.status.dataset.cancelled;
  startResourceCount();
  return action;
}

function endAction(action) {
  if (state.action !== action) return false;
  state.action = null;
  ui.cancel.disabled = true;
  ui.progress.hidden = true;
  ui.progressText.textContent = '';
  document.body.classList.remove('busy');
  ui.read.disabled = !state.table;
  return true;
}

const current = (action) => state.action === action;

/** Shows a scan's `onProgress` report (`ScanProgress` in the package's index.d.ts). */
function onProgress(action, p) {
  if (!current(action)) return;
  if (p.bytesTotal > 0) {
    ui.progress.max = p.bytesTotal;
    ui.progress.value = Math.min(p.bytesDone, p.bytesTotal);
  } else if (p.filesTotal > 0) {
    ui.progress.max = p.filesTotal;
    ui.progress.value = Math.min(p.filesDone, p.filesTotal);
  }
  const parts = [];
  parts.push(`${formatCount(p.filesDone)} of ${plural(p.filesTotal, 'file')}`);
  parts.push(`${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}`);
  ui.progressText.textContent = parts.join(' · ');
}

// Requests seen by the browser during an open that failed, which leaves no table to ask for
// its metrics (same-origin sizes only: other origins hide them without Timing-Allow-Origin).
function startResourceCount() {
  performance.setResourceTimingBufferSize?.(100000);
  performance.clearResourceTimings?.();
}

async function resourceCount(url) {
  // Entries reach the timeline a little after their fetch has settled.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const entries = performance
    .getEntriesByType('resource')
    .filter((e) => e.name.startsWith(url) && e.initiatorType === 'fetch');
  const bytes = entries.reduce((sum, e) => sum + (e.encodedBodySize || 0), 0);
  return { requests: entries.length, bytesReceived: bytes || undefined };
}

/**
 * Shows the last open's or read's line: `m` is `table.metrics` (`TableMetrics`) or
 * `scan.metrics` (`ScanMetrics`), or what resourceCount saw of a failed open.
 */
function showMetrics(kind, m, started) {
  const parts = [`${formatDuration(performance.now() - started)}`];
  parts.push(plural(m.requests, 'request'));
  if (m.bytesReceived !== undefined) parts.push(`${formatBytes(m.bytesReceived)} fetched`);
  if (kind === 'read') {
    const skipped = m.filesSkippedByPartition + m.filesSkippedByStats;
    parts.push(`${formatCount(skipped)} of ${formatCount(m.filesInSnapshot)} ${m.filesInSnapshot === 1 ? 'file' : 'files'} skipped`);
    parts.push(`${plural(m.rowGroupsPruned, 'row group')} skipped`);
  }
  const line = el(
    'span',
    { className: 'metric-line' },
    el('span', { className: 'metric-kind', textContent: `Last ${kind}: ` }),
    parts.join(' · '),
  );
  line.dataset.kind = kind;
  line.dataset.requests = m.requests ?? '';
  line.dataset.bytes = m.bytesReceived ?? '';
  ui.metrics.querySelector(`[data-kind="${kind}"]`)?.remove();
  if (kind === 'open') ui.metrics.prepend(line);
  else ui.metrics.append(line);
}

// ---------------------------------------------------------------- open

function tableUrl(raw) {
  const text = raw.trim();
  if (!text) throw coded('invalid_argument', 'enter the URL of a table (the folder that holds _delta_log/)');
  let url;
  try {
    url = new URL(text, location.href);
  } catch {
    throw coded('invalid_argument', `not a URL: ${text}`);
  }
  if (!/^https?:$/.test(url.protocol)) throw coded('invalid_argument', `only http(s) URLs can be read in a browser: ${text}`);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}

function timeTravel() {
  const v = ui.version.value.trim();
  const t = ui.timestamp.value.trim();
  if (v && t) throw coded('invalid_argument', 'give a version or a timestamp, not both');
  if (v) {
    if (!/^\d+$/.test(v)) throw coded('invalid_argument', `a version is a whole number ≥ 0, not '${v}'`);
    return { version: Number(v) };
  }
  if (t) return { timestamp: t };
  return {};
}

async function openTable({ autoRead = true } = {}) {
  if (!state.lib) return;
  const action = beginAction('open');
  let url;
  try {
    url = tableUrl(ui.url.value);
    ui.url.value = url;
    const travel = timeTravel();
    setStatus(`Opening ${url}…`);
    // In the package's Web Worker: a long read never freezes the page (or its Cancel button).
    const table = await openTableOffThread(state.lib, url, { ...travel, signal: action.controller.signal });
    if (!current(action)) return;
    const info = await describeTable(table);
    if (!current(action)) return;
    const sameTable = state.url === url;
    if (!sameTable) state.latestVersion = null;
    if (travel.version === undefined && travel.timestamp === undefined) state.latestVersion = info.version;
    state.table?.free();
    state.table = table;
    state.info = info;
    state.url = url;
    renderInfo(info, sameTable);
    updateLocation();
    showMetrics('open', await tableMetrics(table), action.started);
    setStatus(`Opened version ${info.version}.`);
    syncPick(url);
  } catch (err) {
    await finishFailed(action, err, 'Could not open the table', url);
    return;
  } finally {
    endAction(action);
  }
  if (autoRead) await readRows();
}

async function finishFailed(action, err, what, url = state.url) {
  if (!current(action)) return;
  if (isAbort(err) || action.controller.signal.aborted) {
    setStatus(`Cancelled: the ${action.kind === 'open' ? 'table was not opened' : 'read stopped'} after ${formatDuration(performance.now() - action.started)}.`, 'warn');
    ui.status.dataset.cancelled = 'true';
  } else {
    showError(err, what);
    const previous = action.kind === 'open' && state.table ? ` (still showing version ${state.info.version} of ${state.url})` : '';
    setStatus(`${what}${previous}.`, 'bad');
  }
  if (action.kind === 'open') {
    // Opened in the worker: its own timeline counted the requests (see the package's worker.js).
    const counted = err?.requests !== undefined ? { requests: err.requests, bytesReceived: err.bytesReceived } : await resourceCount(url || location.origin);
    if (current(action)) showMetrics('open', counted, action.started);
  }
}

// ---------------------------------------------------------------- read

function selectedColumns() {
  const boxes = [...ui.schemaBody.querySelectorAll('input[type=checkbox]')];
  const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
  return chosen.length === boxes.length ? undefined : chosen;
}

async function readRows() {
  if (!state.table) return;
  const action = beginAction('read');
  const { arrow } = state.lib;
  let scan;
  const result = { fields: null, rows: [], total: 0, renderedAt: performance.now() };
  try {
    const columns = selectedColumns();
    if (columns && columns.length === 0) throw coded('invalid_argument', 'tick at least one column to read');
    const filter = ui.filter.value.trim();
    const limitText = ui.limit.value.trim();
    const limit = limitText ? Number(limitText) : undefined;
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
      throw coded('invalid_argument', `the row limit is a whole number ≥ 1, not '${limitText}'`);
    }
    setStatus('Reading…');
    const options = { signal: action.controller.signal, onProgress: (p) => onProgress(action, p) };
    if (columns) options.columns = columns;
    if (filter) options.filter = filter;
    if (limit !== undefined) options.limit = limit;
    scan = await state.table.scan(options);
    if (!current(action)) {
      scan.cancel();
      return;
    }

    const labels = arrowTypeLabels(scan);
    // Batch by batch: each chunk of batches() is a complete IPC stream, shown as it comes.
    for await (const bytes of scan.batches()) {
      if (!current(action)) return;
      const batch = arrow.tableFromIPC(bytes);
      if (!result.fields) {
        result.fields = batch.schema.fields.map((f) => ({ name: f.name, type: f.type, label: labels.get(f.name) }));
      }
      const take = Math.min(batch.numRows, GRID_ROWS - result.rows.length);
      if (take > 0) {
        const vectors = result.fields.map((_, j) => batch.getChildAt(j));
        for (let i = 0; i < take; i++) {
          result.rows.push(result.fields.map((f, j) => formatCell(vectors[j]?.get(i), f.type, arrow.Type)));
        }
      }
      result.total += batch.numRows;
      ui.rowCount.textContent = `${formatCount(result.total)} so far`;
      // Show rows as they come, re-rendering at most every 150 ms.
      if (take > 0 && performance.now() - result.renderedAt > 150) {
        renderGrid(result.fields, result.rows);
        result.renderedAt = performance.now();
      }
    }
    if (!current(action)) return;
    if (!result.fields) {
      result.fields = state.info.fields
        .filter((f) => !columns || columns.includes(f.name))
        .map((f) => ({ name: f.name, type: null, label: f.arrowType }));
    }
    renderGrid(result.fields, result.rows);
    const { total, rows } = result;
    const limited = limit !== undefined && total >= limit;
    ui.rowCount.textContent = `${formatCount(total)}${limited ? ' (limit reached)' : ''}`;
    ui.rowCount.dataset.rows = String(total);
    const shown = total > rows.length ? `; showing the first ${formatCount(rows.length)}` : '';
    setStatus(`${plural(total, 'row')} read from version ${state.info.version}${filter ? ' matching the filter' : ''}${shown}.`, 'good');
    showMetrics('read', scan.metrics, action.started);
    updateLocation();
  } catch (err) {
    if (current(action) && result.fields) {
      // Keep what was read before the cancel or the error on screen.
      renderGrid(result.fields, result.rows);
      ui.rowCount.textContent = `${formatCount(result.total)} before ${isAbort(err) ? 'Cancel' : 'the error'}`;
    } else if (current(action)) {
      ui.rowCount.textContent = '';
    }
    await finishFailed(action, err, 'Could not read the rows');
    if (current(action) && scan) showMetrics('read', scan.metrics, action.started);
  } finally {
    endAction(action);
    scan?.cancel();
  }
}

// ---------------------------------------------------------------- rendering

function chip(text, cls = '') {
  return el('span', { className: `chip ${cls}`.trim(), textContent: text });
}

/** The min, max and null-count cells of a column: `≤ min` and `≥ max` when some file has
 * no bounds (the true extremes may lie there, so the table's minimum is at most the one
 * shown, its maximum at least). */
function statCells(stats) {
  const bound = (value, sign) => (value === null || value === undefined ? '' : stats.complete ? value : `${sign} ${value}`);
  const title = stats ? `${stats.filesWithBounds} file(s) with bounds${stats.complete ? ' (all)' : ''}` : 'no statistics';
  return [
    el('td', { className: 'type stat', textContent: stats ? bound(stats.min, '≤') : '', title }),
    el('td', { className: 'type stat', textContent: stats ? bound(stats.max, '≥') : '', title }),
    el('td', { className: 'num stat', textContent: stats?.nullCount === null || !stats ? '' : formatCount(stats.nullCount), title }),
  ];
}

function renderInfo(info, sameTable) {
  $('placeholder').hidden = true;
  ui.info.hidden = false;
  ui.schemaCard.hidden = false;
  ui.infoVersion.textContent = String(info.version);
  ui.infoVersion.dataset.version = String(info.version);
  const notes = [];
  if (state.latestVersion !== null && state.latestVersion !== info.version) notes.push(`latest is ${state.latestVersion}`);
  else if (state.latestVersion === info.version) notes.push('latest');
  ui.infoVersionNote.textContent = notes.length ? `(${notes.join(', ')})` : '';
  const committed = info.timestamp === null ? '' : typeof info.timestamp === 'number' ? formatInstant(info.timestamp, true) : String(info.timestamp);
  ui.infoCommitted.textContent = committed;
  ui.committedRow.forEach((n) => (n.hidden = !committed));
  ui.version.max = state.latestVersion ?? '';

  const pr = info.protocol;
  const features = [...new Set([...pr.readerFeatures, ...pr.writerFeatures])];
  ui.infoProtocol.replaceChildren(
    el('span', { textContent: `reader ${pr.reader ?? '?'} · writer ${pr.writer ?? '?'}` }),
    ...(features.length ? [el('br')] : []),
    ...features.map((f) =>
      chip(f, pr.readerFeatures.includes(f) ? 'reader' : 'writer'),
    ),
  );
  if (features.length) {
    ui.infoProtocol.title = 'Blue: reader features (needed to read). Grey: writer-only features.';
  }
  ui.infoPartitions.replaceChildren(
    ...(info.partitionColumns.length ? info.partitionColumns.map((c) => chip(c, 'part')) : [el('span', { className: 'muted', textContent: 'not partitioned' })]),
  );
  ui.infoFiles.textContent = `${plural(info.numFiles, 'file')} · ${formatBytes(info.totalBytes)}`;
  ui.infoFiles.dataset.files = String(info.numFiles);
  const log = info.loadInfo;
  if (log) {
    const parts = [];
    parts.push(log.checkpointVersion !== null && log.checkpointVersion !== undefined ? `checkpoint ${log.checkpointVersion}` : 'no checkpoint');
    if (log.logFilesRead !== undefined) parts.push(plural(log.logFilesRead, 'log file') + ' read');
    if (log.discovery) parts.push(`found by ${log.discovery}`);
    if (info.columnMapping && info.columnMapping !== 'none') parts.push(`column mapping: ${info.columnMapping}`);
    ui.infoLog.textContent = parts.join(' · ');
  }
  ui.infoLogRow.forEach((n) => (n.hidden = !log));
  const profile = info.profile;
  const rows = profile?.numRecords;
  ui.infoRows.textContent =
    rows === null || rows === undefined
      ? ''
      : `${profile.countsExact ? '' : 'at most '}${formatCount(rows)} (from the log's statistics${profile.countsExact ? '' : '; deleted rows may be counted'})`;
  ui.infoRowsRow.forEach((n) => (n.hidden = !ui.infoRows.textContent));
  ui.infoDescription.textContent = info.description ?? '';
  ui.infoDescriptionRow.forEach((n) => (n.hidden = !info.description));
  const properties = Object.entries(info.configuration).sort(([a], [b]) => a.localeCompare(b));
  ui.propertiesBody.replaceChildren(
    ...properties.map(([k, v]) => el('tr', {}, el('td', { className: 'path', textContent: k }), el('td', { textContent: v }))),
  );
  ui.propertiesDetails.hidden = properties.length === 0;
  ui.filesBody.replaceChildren();
  if (ui.filesDetails.open) renderFiles();

  // Keep the column choice on the same table (time travel), not across tables.
  const previous = new Map(
    sameTable ? [...ui.schemaBody.querySelectorAll('input[type=checkbox]')].map((b) => [b.value, b.checked]) : [],
  );
  ui.schemaBody.replaceChildren(
    ...info.fields.map((f, i) => {
      const id = `col-${i}`;
      const box = el('input', { type: 'checkbox', id, value: f.name, checked: previous.get(f.name) ?? true });
      return el(
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
    }),
  );
  ui.read.disabled = false;
}

/** Fills the data files panel (on demand: a table may have very many files). */
async function renderFiles() {
  if (!state.table || ui.filesBody.childElementCount) return;
  let files;
  try {
    files = await listFiles(state.table);
    if (ui.filesBody.childElementCount) return;
  } catch (err) {
    showError(err, 'Could not list the files');
    return;
  }
  const rows = files.slice(0, FILE_ROWS).map((f) => {
    const pv = Object.entries(f.partitionValues ?? {}).map(([k, v]) => `${k}=${v ?? 'null'}`).join(', ');
    return el(
      'tr',
      {},
      el('td', { className: 'path', textContent: decodeURIComponentSafe(f.path), title: f.path }),
      el('td', { className: 'num', textContent: formatBytes(f.size) }),
      el('td', { textContent: pv }),
      el('td', { textContent: f.deletionVector ? 'yes' : '' }),
    );
  });
  if (files.length > FILE_ROWS) {
    rows.push(el('tr', {}, el('td', { colSpan: 4, className: 'muted', textContent: `… and ${formatCount(files.length - FILE_ROWS)} more` })));
  }
  if (!files.length) rows.push(el('tr', {}, el('td', { colSpan: 4, className: 'muted', textContent: 'No data files.' })));
  ui.filesBody.replaceChildren(...rows);
}

function decodeURIComponentSafe(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function renderGrid(fields, rows) {
  const head = el(
    'tr',
    {},
    el('th', { scope: 'col', className: 'rownum', textContent: '#' }),
    ...fields.map((f) =>
      el('th', { scope: 'col' }, el('span', { className: 'colname', textContent: f.name }), el('span', { className: 'coltype', textContent: f.label ?? shortType(f.type) })),
    ),
    el('td', { className: 'fill', ariaHidden: 'true' }),
  );
  const body = document.createDocumentFragment();
  rows.forEach((cells, i) => {
    const tr = el('tr', {}, el('th', { scope: 'row', className: 'rownum', textContent: String(i + 1) }));
    for (const c of cells) {
      const td = el('td', { className: c.kind, textContent: c.text });
      if (c.title) td.title = c.title;
      tr.append(td);
    }
    tr.append(el('td', { className: 'fill', ariaHidden: 'true' }));
    body.append(tr);
  });
  const tbody = el('tbody');
  tbody.append(body);
  if (rows.length === 0) {
    tbody.append(el('tr', {}, el('td', { colSpan: fields.length + 2, className: 'empty', textContent: 'No rows.' })));
  }
  ui.grid.replaceChildren(el('thead', {}, head), tbody);
}

/** Arrow type names as the reader prints them (`Decimal128(10, 2)`), by column name. */
function arrowTypeLabels(scan) {
  return new Map(scan.outputSchema.fields.map((f) => [f.name, f.arrowType]));
}

function shortType(type) {
  return type ? String(type) : '';
}

// ---------------------------------------------------------------- served tables, URL state

async function servedTables() {
  const params = new URLSearchParams(location.search);
  const fromQuery = params.get('tables');
  if (fromQuery) return fromQuery.split(',').map((s) => s.trim()).filter(Boolean).map((name) => ({ name, url: new URL(`/${name.replace(/^\/+|\/+$/g, '')}/`, location.origin).href }));
  try {
    const res = await fetch(new URL('/tables.json', location.origin), { cache: 'no-store' });
    if (!res.ok) return [];
    const json = await res.json();
    const list = Array.isArray(json) ? json : json?.tables ?? [];
    return list
      .map((t) => (typeof t === 'string' ? { name: t } : t))
      .filter((t) => t && (t.name || t.url))
      .map((t) => ({
        name: t.name ?? t.url,
        url: new URL(t.url ?? `/${String(t.name).replace(/^\/+|\/+$/g, '')}/`, location.origin).href,
      }));
  } catch {
    return [];
  }
}

function fillPick(tables) {
  if (!tables.length) return;
  ui.pick.append(...tables.map((t) => el('option', { value: t.url, textContent: t.name })));
  ui.pickField.hidden = false;
}

function syncPick(url) {
  const match = [...ui.pick.options].find((o) => o.value === url);
  ui.pick.value = match ? url : '';
}

function updateLocation() {
  const params = new URLSearchParams(location.search);
  const set = (k, v) => (v ? params.set(k, v) : params.delete(k));
  set('url', state.url);
  set('version', ui.version.value.trim());
  set('timestamp', ui.timestamp.value.trim());
  set('filter', ui.filter.value.trim());
  const query = params.toString();
  history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
}

// ---------------------------------------------------------------- wiring

ui.openForm.addEventListener('submit', (e) => {
  e.preventDefault();
  openTable();
});
ui.latest.addEventListener('click', () => {
  ui.version.value = '';
  ui.timestamp.value = '';
  openTable();
});
ui.pick.addEventListener('change', () => {
  if (!ui.pick.value) return;
  ui.url.value = ui.pick.value;
  ui.version.value = '';
  ui.timestamp.value = '';
  ui.filter.value = '';
  openTable();
});
ui.version.addEventListener('input', () => {
  if (ui.version.value) ui.timestamp.value = '';
});
ui.timestamp.addEventListener('input', () => {
  if (ui.timestamp.value) ui.version.value = '';
});
ui.readForm.addEventListener('submit', (e) => {
  e.preventDefault();
  readRows();
});
ui.filesDetails.addEventListener('toggle', () => {
  if (ui.filesDetails.open) renderFiles();
});
ui.cancel.addEventListener('click', () => state.action?.controller.abort());
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && state.action) state.action.controller.abort();
});
ui.colsAll.addEventListener('click', () => ui.schemaBody.querySelectorAll('input[type=checkbox]').forEach((b) => (b.checked = true)));
ui.colsNone.addEventListener('click', () => ui.schemaBody.querySelectorAll('input[type=checkbox]').forEach((b) => (b.checked = false)));

async function start() {
  const params = new URLSearchParams(location.search);
  const [libs, tables] = await Promise.allSettled([loadLibraries(), servedTables()]);
  if (tables.status === 'fulfilled') fillPick(tables.value);
  if (libs.status === 'rejected') {
    ui.libStatus.textContent = 'Reader not loaded';
    ui.libStatus.classList.add('bad');
    showError(libs.reason, 'Could not load the reader');
    setStatus('The reader could not be loaded.', 'bad');
    return;
  }
  state.lib = libs.value;
  ui.open.disabled = false;
  ui.latest.disabled = false;
  ui.libStatus.textContent = libs.value.version ? `Reader ${libs.value.version} ready` : 'Reader ready';
  ui.libStatus.classList.add('good');
  document.body.dataset.ready = 'true';
  if (params.get('filter')) ui.filter.value = params.get('filter');
  if (params.get('version')) ui.version.value = params.get('version');
  if (params.get('timestamp')) ui.timestamp.value = params.get('timestamp');
  const url = params.get('url');
  if (url) {
    ui.url.value = url;
    await openTable();
  }
}

start();
