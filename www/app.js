// The viewer page: open a table (URL, served list, version box and slider, time), show its
// facts and schema, read the whole result into the virtual grid as it streams in (progress,
// Cancel), report the last action's requests, bytes and skipped files, and show every error
// in the page. The result view (view.js) owns what is done with the rows.

import { readAddress, servedTables, writeAddress } from './address.js';
import { $, el } from './dom.js';
import { formatBytes, formatCount, formatDuration, plural } from './format.js';
import { renderFiles, renderInfo, selectedColumns, tickAll } from './info.js';
import { coded, describeTable, isAbort, loadReader, openTable, tableMetrics } from './reader.js';
import { renderSkipped, skippedOf } from './skipped.js';
import { VersionSlider } from './versions.js';
import { ResultView } from './view.js';

const ui = {
  error: $('error'),
  url: $('url'),
  version: $('version'),
  timestamp: $('timestamp'),
  filter: $('filter'),
  limit: $('limit'),
  read: $('read'),
  cancel: $('cancel'),
  progress: $('progress'),
  progressText: $('progress-text'),
  rowCount: $('row-count'),
  status: $('status'),
  metrics: $('metrics'),
  pick: $('table-pick'),
};

const state = {
  ready: false,
  table: null, // the open table: in the package's Web Worker (RemoteDeltaTable), or a DeltaTable
  info: null, // describeTable(table)
  url: '',
  latestVersion: null, // of state.url, learned from an open without time travel
  action: null, // { controller, kind, id, started }
  actionSeq: 0,
  opened: '', // openKey() of what the open table was opened as
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
    el('button', { type: 'button', className: 'close', textContent: '×', title: 'Dismiss', ariaLabel: 'Dismiss the error', onclick: clearError }),
  );
  ui.error.dataset.code = code;
  delete ui.error.dataset.source;
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.replaceChildren();
  delete ui.error.dataset.code;
  delete ui.error.dataset.source;
}

function setStatus(text, kind = '') {
  ui.status.textContent = text;
  ui.status.className = `status ${kind}`.trim();
}

// Nothing goes only to the console: uncaught failures are shown too.
window.addEventListener('error', (e) => showError(e.error ?? e.message, 'Unexpected error'));
window.addEventListener('unhandledrejection', (e) => showError(e.reason, 'Unexpected error'));

// A copy or download that fails shows its error until one succeeds (or an action begins).
const view = new ResultView({
  status: (text, kind) => {
    if (kind === 'good' && ui.error.dataset.source === 'view') clearError();
    setStatus(text, kind);
  },
  error: (err, what) => {
    showError(err, what);
    ui.error.dataset.source = 'view';
  },
});

// ---------------------------------------------------------------- actions

/** Starts an action (open or read): aborts the running one, shows progress and Cancel. */
function beginAction(kind) {
  state.action?.controller.abort();
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
  performance.setResourceTimingBufferSize?.(100000);
  performance.clearResourceTimings?.();
  return action;
}

function endAction(action) {
  if (state.action !== action) return;
  state.action = null;
  ui.cancel.disabled = true;
  ui.progress.hidden = true;
  ui.progressText.textContent = '';
  document.body.classList.remove('busy');
  ui.read.disabled = !state.table;
}

const current = (action) => state.action === action;

/** Progress is shown at most this often (each update costs the page a layout). */
const PROGRESS_EVERY_MS = 150;
let progressAt = 0;

/** Shows a scan's `onProgress` report (`ScanProgress` in the package's index.d.ts). */
function onProgress(action, p) {
  if (!current(action)) return;
  const now = performance.now();
  if (now - progressAt < PROGRESS_EVERY_MS && p.filesDone < p.filesTotal) return;
  progressAt = now;
  if (p.bytesTotal > 0) {
    ui.progress.max = p.bytesTotal;
    ui.progress.value = Math.min(p.bytesDone, p.bytesTotal);
  } else if (p.filesTotal > 0) {
    ui.progress.max = p.filesTotal;
    ui.progress.value = Math.min(p.filesDone, p.filesTotal);
  }
  ui.progressText.textContent = `${formatCount(p.filesDone)} of ${plural(p.filesTotal, 'file')} · ${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}`;
}

/** Requests this page saw for `url` (a failed open on this thread leaves no table to ask). */
async function resourceCount(url) {
  await new Promise((resolve) => setTimeout(resolve, 50)); // entries land a little later
  const entries = performance.getEntriesByType('resource').filter((e) => e.name.startsWith(url) && e.initiatorType === 'fetch');
  const bytes = entries.reduce((sum, e) => sum + (e.encodedBodySize || 0), 0);
  return { requests: entries.length, bytesReceived: bytes || undefined };
}

/** The last open's or read's line: `m` is `TableMetrics` or `ScanMetrics` (index.d.ts). */
function showMetrics(kind, m, started) {
  const parts = [formatDuration(performance.now() - started), plural(m.requests, 'request')];
  if (m.bytesReceived !== undefined) parts.push(`${formatBytes(m.bytesReceived)} fetched`);
  if (kind === 'read') {
    const skipped = m.filesSkippedByPartition + m.filesSkippedByStats + (m.filesSkippedByFilter ?? 0);
    parts.push(`${formatCount(skipped)} of ${formatCount(m.filesInSnapshot)} ${m.filesInSnapshot === 1 ? 'file' : 'files'} skipped`);
    parts.push(`${plural(m.rowGroupsPruned, 'row group')} skipped`);
  }
  const line = el('span', { className: 'metric-line' }, el('span', { className: 'metric-kind', textContent: `Last ${kind}: ` }), parts.join(' · '));
  line.dataset.kind = kind;
  line.dataset.requests = m.requests ?? '';
  line.dataset.bytes = m.bytesReceived ?? '';
  ui.metrics.querySelector(`[data-kind="${kind}"]`)?.remove();
  if (kind === 'open') ui.metrics.prepend(line);
  else ui.metrics.append(line);
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

/** The time travel a version and a timestamp (as typed, or from the page address) ask for;
 * throws `invalid_argument` for both at once or a version that is not a whole number. */
function travelOf(version, timestamp) {
  const v = (version ?? '').trim();
  const t = (timestamp ?? '').trim();
  if (v && t) throw coded('invalid_argument', 'give a version or a timestamp, not both');
  if (v) {
    if (!/^\d+$/.test(v)) throw coded('invalid_argument', `a version is a whole number ≥ 0, not '${v}'`);
    return { version: Number(v) };
  }
  return t ? { timestamp: t } : {};
}

function timeTravel() {
  return travelOf(ui.version.value, ui.timestamp.value);
}

const slider = new VersionSlider({
  range: $('version-slider'),
  output: $('version-slider-value'),
  field: $('slider-field'),
  onPick: (version) => {
    ui.version.value = String(version);
    ui.timestamp.value = '';
    open();
  },
});

/** Learns the latest version of `url` with an open of its own (the page was opened at an
 * older one), for the slider and the "latest is" note. */
async function learnLatest(url) {
  try {
    const latest = await openTable(url, {});
    const version = latest.version;
    latest.free();
    if (state.url !== url || state.latestVersion !== null) return;
    state.latestVersion = version;
    showInfo(state.info, version, true);
    slider.set(version, state.info.version);
  } catch {
    // The slider stays hidden; the version box still works.
  }
}

async function open({ autoRead = true } = {}) {
  if (!state.ready) return;
  const action = beginAction('open');
  let url;
  try {
    url = tableUrl(ui.url.value);
    ui.url.value = url;
    const travel = timeTravel();
    setStatus(`Opening ${url}…`);
    const table = await openTable(url, { ...travel, signal: action.controller.signal });
    if (!current(action)) return table.free();
    const info = await describeTable(table);
    if (!current(action)) return table.free();
    const sameTable = state.url === url;
    if (!sameTable) state.latestVersion = null;
    const latestOpen = travel.version === undefined && travel.timestamp === undefined;
    if (latestOpen) state.latestVersion = info.version;
    state.table?.free();
    Object.assign(state, { table, info, url, opened: openKey(url, travel) });
    showInfo(info, state.latestVersion, sameTable);
    slider.set(state.latestVersion, info.version);
    if (state.latestVersion === null) learnLatest(url);
    writeAddress({ url, version: ui.version.value.trim(), timestamp: ui.timestamp.value.trim(), filter: ui.filter.value.trim() });
    showMetrics('open', await tableMetrics(table), action.started);
    setStatus(`Opened version ${info.version}.`);
    syncPick(url);
  } catch (err) {
    await finishFailed(action, err, 'Could not open the table', url);
    // Another table failed to open (or its open was cancelled): the controls name the table
    // still shown again, so that Read and the downloads are not taken for the new one's.
    if (current(action) && state.table && url !== undefined && url !== state.url) {
      ui.url.value = state.url;
      syncPick(state.url);
    }
    return;
  } finally {
    endAction(action);
  }
  if (autoRead) await read();
}

// ---------------------------------------------------------------- read

function readOptions(action) {
  const columns = selectedColumns();
  if (columns && columns.length === 0) throw coded('invalid_argument', 'tick at least one column to read');
  const filter = ui.filter.value.trim();
  const limitText = ui.limit.value.trim();
  const limit = limitText ? Number(limitText) : undefined;
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    throw coded('invalid_argument', `the row limit is a whole number ≥ 1 (or empty for none), not '${limitText}'`);
  }
  const options = { signal: action.controller.signal, onProgress: (p) => onProgress(action, p) };
  if (columns) options.columns = columns;
  if (filter) options.filter = filter;
  if (limit !== undefined) options.limit = limit;
  return options;
}

let lastRead = { url: '', version: null };
let countFrame = 0;

/** Shows the row count while rows stream in, at most every PROGRESS_EVERY_MS. */
function showCount(text) {
  if (countFrame) return;
  countFrame = setTimeout(() => {
    countFrame = 0;
    ui.rowCount.textContent = text();
  }, PROGRESS_EVERY_MS);
}

/** What an open of `url` with `travel` ({ version } or { timestamp }) opens, as a key. */
function openKey(url, travel) {
  return `${url}\n${JSON.stringify(travel)}`;
}

/** Whether the table controls (address, version, timestamp) name something other than the
 * open table: a slider move whose open this read would cut short, or a version typed and not
 * opened. Read then opens what they name first, so the rows are the version they show. */
function controlsNameAnotherTable() {
  try {
    return openKey(tableUrl(ui.url.value), timeTravel()) !== state.opened;
  } catch {
    return true; // the open says what is wrong with them
  }
}

async function read() {
  if (!state.table) return;
  if (controlsNameAnotherTable()) return open();
  const action = beginAction('read');
  let scan;
  let begun = false;
  const info = state.info;
  try {
    const options = readOptions(action);
    setStatus('Reading…');
    renderSkipped($('skipped'), null, '');
    scan = await state.table.scan(options);
    if (!current(action)) return scan.cancel();
    const sameTable = lastRead.url === state.url;
    lastRead = { url: state.url, version: info.version };
    view.begin(
      {
        arrowTypes: new Map(scan.outputSchema.fields.map((f) => [f.name, f.arrowType])),
        deltaTypes: new Map(info.fields.map((f) => [f.name, f.deltaType])),
        table: state.url,
        version: info.version,
      },
      sameTable,
    );
    begun = true;
    // The scan is one Arrow IPC stream; each piece is decoded as it arrives (result.js).
    for await (const piece of scan) {
      if (!current(action)) return;
      view.addPiece(piece);
      showCount(() => `${formatCount(view.rowCount)} so far`);
    }
    if (!current(action)) return;
    // A cancelled scan may simply end: that is a Cancel, not the whole result.
    action.controller.signal.throwIfAborted();
    const total = view.rowCount;
    // At the limit, more rows may exist, unless the log's exact count says every row is here.
    const known = options.filter === undefined ? info.profile?.numRecords : undefined;
    const limited = options.limit !== undefined && total >= options.limit && !(typeof known === 'number' && known <= total);
    clearTimeout(countFrame);
    countFrame = 0;
    ui.rowCount.textContent = `${formatCount(total)}${limited ? ' (limit reached)' : ''}`;
    ui.rowCount.dataset.rows = String(total);
    showMetrics('read', scan.metrics, action.started);
    renderSkipped($('skipped'), skippedOf(scan), options.filter ?? '');
    writeAddress({ filter: ui.filter.value.trim() });
    const sorted = await view.end();
    if (!current(action)) return;
    setStatus(`${plural(total, 'row')} read from version ${info.version}${options.filter ? ' matching the filter' : ''}${sorted ? `, ${sorted}` : ''}.`, 'good');
  } catch (err) {
    if (current(action)) {
      clearTimeout(countFrame);
      countFrame = 0;
      // Options refused before any read leave the rows shown as they were.
      if (begun) ui.rowCount.textContent = view.rowCount ? `${formatCount(view.rowCount)} before ${isAbort(err) ? 'Cancel' : 'the error'}` : '';
      await finishFailed(action, err, 'Could not read the rows');
      if (scan) showMetrics('read', scan.metrics, action.started);
      if (begun) await view.end(isAbort(err) ? 'Cancelled before any row arrived.' : 'No rows.');
      else if (view.rowCount) ui.rowCount.dataset.rows = String(view.rowCount);
    }
  } finally {
    endAction(action);
    scan?.cancel();
  }
}

// ---------------------------------------------------------------- served tables

function fillPick(tables) {
  if (!tables.length) return;
  ui.pick.append(...tables.map((t) => el('option', { value: t.url, textContent: t.name })));
  $('pick-field').hidden = false;
}

function syncPick(url) {
  const match = [...ui.pick.options].find((o) => o.value === url);
  ui.pick.value = match ? url : '';
}

// ---------------------------------------------------------------- wiring

$('open-form').addEventListener('submit', (e) => {
  e.preventDefault();
  open();
});
$('latest').addEventListener('click', () => {
  ui.version.value = '';
  ui.timestamp.value = '';
  open();
});
ui.pick.addEventListener('change', () => {
  if (!ui.pick.value) return;
  ui.url.value = ui.pick.value;
  ui.version.value = '';
  ui.timestamp.value = '';
  ui.filter.value = '';
  open();
});
ui.version.addEventListener('input', () => {
  if (ui.version.value) ui.timestamp.value = '';
});
ui.timestamp.addEventListener('input', () => {
  if (ui.timestamp.value) ui.version.value = '';
});
$('read-form').addEventListener('submit', (e) => {
  e.preventDefault();
  read();
});
/** The table's facts in the side panels; an open files panel lists the files of what is open. */
function showInfo(info, latest, keepColumns) {
  renderInfo(info, latest, keepColumns);
  if ($('files-details').open) renderFiles(state.table).catch((err) => showError(err, 'Could not list the files'));
}

$('files-details').addEventListener('toggle', () => {
  if ($('files-details').open) renderFiles(state.table).catch((err) => showError(err, 'Could not list the files'));
});
ui.cancel.addEventListener('click', () => state.action?.controller.abort());
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape') return;
  if (view.closeMenu()) return;
  if (view.panel.isOpen) view.panel.close();
  else state.action?.controller.abort();
});
// Back and Forward: the address names a table and version shown before; open it again.
window.addEventListener('popstate', () => {
  const address = readAddress();
  if (!address.url || !state.ready) return;
  ui.url.value = address.url;
  ui.version.value = address.version ?? '';
  ui.timestamp.value = address.timestamp ?? '';
  ui.filter.value = address.filter ?? '';
  open();
});
$('cols-all').addEventListener('click', () => tickAll(true));
$('cols-none').addEventListener('click', () => tickAll(false));

async function start() {
  const address = readAddress();
  const [reader, tables] = await Promise.allSettled([loadReader(), servedTables()]);
  if (tables.status === 'fulfilled') fillPick(tables.value);
  const status = $('lib-status');
  if (reader.status === 'rejected') {
    status.textContent = 'Reader not loaded';
    status.classList.add('bad');
    showError(reader.reason, 'Could not load the reader');
    setStatus('The reader could not be loaded.', 'bad');
    return;
  }
  state.ready = true;
  $('open').disabled = false;
  $('latest').disabled = false;
  status.textContent = reader.value.version ? `Reader ${reader.value.version} ready` : 'Reader ready';
  status.classList.add('good');
  document.body.dataset.ready = 'true';
  if (address.filter) ui.filter.value = address.filter;
  if (address.version) ui.version.value = address.version;
  if (address.timestamp) ui.timestamp.value = address.timestamp;
  // The version box takes digits only: a bad version in the address would open the latest,
  // so the address's own text is checked as the form's is.
  try {
    travelOf(address.version, address.timestamp);
  } catch (refused) {
    showError(refused, 'Not opened: the page address');
    setStatus('The page address asks for something the viewer cannot open.', 'bad');
    if (address.url) ui.url.value = address.url;
    return;
  }
  if (address.url) {
    ui.url.value = address.url;
    await open();
  }
}

start();
