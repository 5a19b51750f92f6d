// End-to-end test of the www/ previewer in Debian's Chromium, driven by playwright-core.
// `run` builds and stages everything and starts the servers; this file gets them from the
// environment:
//   E2E_BASE        http://127.0.0.1:P/ : `dar serve` over the corpus tables, page at /www/
//   E2E_SLOW        the same tables behind a second server with --latency-ms
//   E2E_PROFILE     a fresh, empty Chromium user-data-dir
//   E2E_SCREENSHOT  where to save the screenshot (www/screenshot.png)
//   E2E_CHROMIUM    the browser (default /usr/bin/chromium)
// Prints one line per test and `e2e: N passed, N failed` last; exits 1 on any failure.

import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const BASE = need('E2E_BASE');
const SLOW = need('E2E_SLOW');
const PROFILE = need('E2E_PROFILE');
const SCREENSHOT = process.env.E2E_SCREENSHOT ?? '';
const PAGE = new URL('www/', BASE).href;

// golden__dv-partitioned-with-checkpoint: 16 commits (0–15), a checkpoint at 10, deletion
// vectors, partitioned by `part`. Row counts per version are those of `dar head` and of the
// corpus' expected rows (expected/golden__dv-partitioned-with-checkpoint).
const DV_TABLE = 'golden__dv-partitioned-with-checkpoint';
const DV = { latest: 15, rows: 35, files: 15, rowsAt: { 0: 50, 5: 45, 10: 40, 12: 38 } };
// 101 data files, 1,233 rows, v2 checkpoint with sidecars: long enough to cancel when slow.
const BIG_TABLE = 'kernel__v2-checkpoints-parquet-with-sidecars';

const TIMEOUT = 20_000;

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`previewer.mjs: ${name} is not set (run tests/e2e/run)`);
    process.exit(2);
  }
  return v;
}

// ---------------------------------------------------------------- a tiny runner

const results = [];
let fatal = null; // set when the page cannot load the reader: later tests fail at once
async function test(name, fn) {
  const t0 = Date.now();
  if (fatal) {
    results.push({ name, ok: false });
    console.log(`not ok ${results.length} - ${name} (not run: ${fatal})`);
    return;
  }
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok ${results.length} - ${name} (${Date.now() - t0} ms)`);
  } catch (err) {
    results.push({ name, ok: false });
    console.log(`not ok ${results.length} - ${name} (${Date.now() - t0} ms)`);
    console.log(`  ${String(err?.stack ?? err).split('\n').slice(0, 6).join('\n  ')}`);
    try {
      const state = await pageState();
      console.log(`  page: ${JSON.stringify(state)}`);
    } catch {
      // the page itself may be gone
    }
  }
}

// ---------------------------------------------------------------- browser

const context = await chromium.launchPersistentContext(PROFILE, {
  executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
  viewport: { width: 1280, height: 800 },
  colorScheme: 'light',
});
context.setDefaultTimeout(TIMEOUT);
const page = context.pages()[0] ?? (await context.newPage());
const pageErrors = [];
page.on('pageerror', (err) => pageErrors.push(String(err?.message ?? err)));

// ---------------------------------------------------------------- page helpers

const text = (sel) => page.locator(sel).innerText();
/** The error box as `[code] message`. */
const errorText = () =>
  page.evaluate(() => {
    const e = document.getElementById('error');
    return e.hidden ? null : `${e.querySelector('strong')?.textContent ?? ''}[${e.dataset.code}] ${e.querySelector('.message')?.textContent ?? ''}`;
  });

async function gotoPage(query = '') {
  await page.goto(`${PAGE}${query}`);
  await page.waitForFunction(
    () => document.body.dataset.ready === 'true' || !document.getElementById('error').hidden,
  );
  if (!(await page.locator('#error').isHidden())) {
    fatal = 'the page could not load the reader';
    throw new Error(`the page did not load the reader: ${await errorText()}`);
  }
}

/** Waits until no open or read is running (the busy class is set synchronously on click). */
async function idle(timeout = TIMEOUT) {
  await page.waitForFunction(() => !document.body.classList.contains('busy'), null, { timeout });
}

async function pageState() {
  return page.evaluate(() => ({
    version: document.getElementById('info-version').textContent,
    rows: document.getElementById('row-count').dataset.rows ?? null,
    status: document.getElementById('status').textContent,
    error: document.getElementById('error').hidden
      ? null
      : `[${document.getElementById('error').dataset.code}] ${document.getElementById('error').querySelector('.message')?.textContent}`,
    metrics: document.getElementById('metrics').innerText,
    progress: document.getElementById('progress-text').textContent,
  }));
}

/** Asserts that the last action succeeded (no error shown) and returns the row count. */
async function rowCount() {
  const s = await pageState();
  assert.equal(s.error, null, `an error is shown: ${s.error}`);
  assert.match(s.status, /rows? read/, `status: ${s.status}`);
  return Number(s.rows);
}

/** The grid: column names and cell texts of every rendered row. */
async function grid() {
  return page.evaluate(() => {
    const g = document.getElementById('grid');
    const names = [...g.querySelectorAll('thead th .colname')].map((e) => e.textContent);
    const rows = [...g.querySelectorAll('tbody tr')]
      .filter((tr) => !tr.querySelector('td.empty'))
      .map((tr) => [...tr.querySelectorAll('td:not(.fill)')].map((td) => td.textContent));
    return { names, rows };
  });
}

const column = (g, name) => {
  const j = g.names.indexOf(name);
  assert.ok(j >= 0, `no column ${name} in ${g.names}`);
  return g.rows.map((r) => r[j]);
};

async function openUrl(url, { version = '', timestamp = '', filter = '' } = {}) {
  await page.fill('#url', url);
  await page.fill('#filter', filter);
  await page.fill('#version', String(version));
  await page.fill('#timestamp', String(timestamp));
  await page.click('#open');
  await idle();
}

async function readWith({ filter, limit } = {}) {
  if (filter !== undefined) await page.fill('#filter', filter);
  if (limit !== undefined) await page.fill('#limit', String(limit));
  await page.click('#read');
  await idle();
}

// ---------------------------------------------------------------- tests

let unfiltered = null; // the grid of DV_TABLE at its latest version

await test('page loads the reader and lists the served tables', async () => {
  await gotoPage();
  assert.match(await text('#lib-status'), /ready/i);
  const options = await page.locator('#table-pick option').evaluateAll((os) => os.map((o) => o.textContent));
  assert.ok(options.includes(DV_TABLE), `the table list has ${options.length} entries, not ${DV_TABLE}`);
  assert.ok(options.length > 100, `only ${options.length} tables listed`);
});

await test(`opens ${DV_TABLE} from the list: version, protocol, partitions, files, rows`, async () => {
  await page.selectOption('#table-pick', { label: DV_TABLE });
  await idle();
  assert.equal(await rowCount(), DV.rows);
  assert.equal(await text('#info-version'), String(DV.latest));
  assert.match(await text('#info-version-note'), /latest/);
  assert.match(await text('#info-protocol'), /reader 3 · writer 7/);
  assert.match(await text('#info-protocol'), /deletionVectors/);
  assert.equal((await text('#info-partitions')).trim(), 'part');
  assert.match(await text('#info-files'), new RegExp(`^${DV.files} files · \\d`));
  const schema = await page.locator('#schema-body tr').count();
  assert.equal(schema, 3, 'three schema rows (part, col1, col2)');
  // The column profile comes from the log: bounds and null counts before any data is read.
  const col1Stats = await page.locator('#schema-body tr:has(input[value="col1"]) td.stat').allTextContents();
  assert.equal(col1Stats.length, 3, 'min, max and nulls cells');
  assert.ok(col1Stats[0] !== '' && col1Stats[1] !== '' && col1Stats[2] !== '', `col1 statistics from the log: ${col1Stats}`);
  assert.match(await text('#info-rows'), /from the log/);
  unfiltered = await grid();
  assert.deepEqual([...unfiltered.names].sort(), ['col1', 'col2', 'part']);
  assert.equal(unfiltered.rows.length, DV.rows, 'every row is in the grid');
  assert.match(await text('#metrics'), /Last open: .*\d+ requests? · .* fetched/);
  assert.match(await text('#metrics'), /Last read: .*\d+ requests? · .* fetched · 0 of \d+ files skipped · \d+ row groups? skipped/);
  assert.equal(await page.inputValue('#url'), `${BASE}${DV_TABLE}/`);
  // The data files panel lists the files when opened: partition values, deletion vectors.
  await page.click('#files-details summary');
  // The details element's `toggle` event fires after the click, in its own task: wait for
  // the rows it renders rather than racing it.
  await page.waitForFunction(() => document.querySelectorAll('#files-body tr').length > 0);
  const files = await page.locator('#files-body tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  await page.click('#files-details summary');
  assert.equal(files.length, DV.files);
  assert.ok(files.every((f) => /^part=\d$/.test(f[2])), JSON.stringify(files[0]));
  assert.ok(files.some((f) => f[3] === 'yes'), 'some files have deletion vectors');
});

await test('a partition filter reads only matching rows and skips files', async () => {
  await readWith({ filter: 'part = 3' });
  const g = await grid();
  const want = column(unfiltered, 'part').filter((p) => p === '3').length;
  assert.equal(want, 5);
  assert.equal(await rowCount(), want);
  assert.deepEqual([...new Set(column(g, 'part'))], ['3']);
  assert.deepEqual(column(g, 'col1').sort(), column(unfiltered, 'col1').filter((_, i) => unfiltered.rows[i][unfiltered.names.indexOf('part')] === '3').sort());
  assert.match(await text('#status'), /matching the filter/);
  // Only the two files of partition 3 are read (as `dar head --filter` reports).
  const metrics = await text('#metrics');
  const skipped = metrics.match(/(\d+) of (\d+) files? skipped/);
  assert.ok(skipped, metrics);
  assert.deepEqual([Number(skipped[1]), Number(skipped[2])], [DV.files - 2, DV.files], metrics);
});

await test('a data filter and the column picker', async () => {
  // Untick col2: the grid then shows part and col1 only.
  await page.locator('#schema-body input[value="col2"]').uncheck();
  await readWith({ filter: 'col1 > 40' });
  const g = await grid();
  const want = column(unfiltered, 'col1').filter((v) => Number(v) > 40).length;
  assert.equal(want, 9);
  assert.equal(await rowCount(), want);
  assert.deepEqual([...g.names].sort(), ['col1', 'part']);
  assert.ok(column(g, 'col1').every((v) => Number(v) > 40));
  await page.click('#cols-all');
  await readWith({ filter: "col2 = 'foo3' and part <> 8" });
  const col2 = column(unfiltered, 'col2');
  const part = column(unfiltered, 'part');
  assert.equal(await rowCount(), col2.filter((v, i) => v === 'foo3' && part[i] !== '8').length);
});

await test('an invalid filter shows a readable error with its code', async () => {
  await readWith({ filter: 'col1 >' });
  assert.ok(await page.locator('#error').isVisible(), 'the error box is shown');
  const code = await page.locator('#error').getAttribute('data-code');
  assert.ok(code && code !== 'error', `a specific error code, not ${code}`);
  assert.match(await text('#error .message'), /\S{3,}/);
  await readWith({ filter: '' });
  assert.equal(await rowCount(), DV.rows);
  assert.ok(await page.locator('#error').isHidden(), 'the next good read clears the error');
});

await test('time travel by version shows older versions', async () => {
  for (const v of [5, 0, 12]) {
    await openUrl(`${BASE}${DV_TABLE}/`, { version: v });
    assert.equal(await text('#info-version'), String(v));
    assert.equal(await rowCount(), DV.rowsAt[v], `rows at version ${v}`);
    assert.match(await text('#info-version-note'), new RegExp(`latest is ${DV.latest}`));
  }
  // The version survives in the page URL, so a reload opens the same one.
  assert.match(page.url(), /version=12/);
  await page.click('#latest');
  await idle();
  assert.equal(await text('#info-version'), String(DV.latest));
  assert.equal(await rowCount(), DV.rows);
});

await test('time travel by timestamp', async () => {
  await openUrl(`${BASE}${DV_TABLE}/`, { timestamp: '2999-01-01T00:00:00Z' });
  assert.equal(await text('#info-version'), String(DV.latest));
  await openUrl(`${BASE}${DV_TABLE}/`, { timestamp: '2000-01-01T00:00:00Z' });
  assert.ok(await page.locator('#error').isVisible(), 'a time before the first commit is an error');
  assert.match(await errorText(), /timestamp/i);
});

await test('Cancel stops a slow read; the next read works', async () => {
  const url = `${SLOW}${BIG_TABLE}/`;
  await page.fill('#filter', '');
  await page.fill('#limit', '1000');
  await page.fill('#url', url);
  await page.fill('#version', '');
  await page.fill('#timestamp', '');
  await page.click('#open');
  // Wait for the read (after the open) to be under way, with some progress shown.
  await page.waitForFunction(
    () => document.body.classList.contains('busy') && /^Reading/.test(document.getElementById('status').textContent),
  );
  await page.waitForTimeout(400);
  assert.ok(await page.locator('#cancel').isEnabled(), 'Cancel is enabled during a read');
  assert.ok(await page.locator('#progress').isVisible(), 'the progress bar shows during a read');
  const t0 = Date.now();
  await page.click('#cancel');
  await idle(5_000);
  const cancelMs = Date.now() - t0;
  const s = await pageState();
  assert.match(s.status, /Cancelled/, `status: ${s.status}`);
  assert.equal(s.error, null, 'a cancel is not shown as an error');
  assert.ok(await page.locator('#cancel').isDisabled(), 'Cancel is disabled again');
  assert.ok(cancelMs < 3_000, `the read stopped ${cancelMs} ms after Cancel`);
  // A following read of the same (slow) table works; a limit stops reading early.
  await readWith({ limit: 20 });
  assert.equal(await rowCount(), 20);
  assert.match(await text('#row-count'), /limit reached/);
  assert.equal(await text('#info-version'), '6');
  await page.fill('#limit', '1000');
});

await test('values are formatted by their Arrow type (golden__parquet-all-types)', async () => {
  await openUrl(`${BASE}golden__parquet-all-types/`);
  assert.equal(await rowCount(), 200);
  const g = await grid();
  const row = (i) => Object.fromEntries(g.names.map((n, j) => [n, g.rows[i][j]]));
  assert.equal(g.rows.length, 200);
  // Row 0 is all null; row 1 has the values 1, 2, ... (as `dar head` shows them).
  assert.ok(Object.values(row(0)).every((v) => v === 'null'), JSON.stringify(row(0)));
  const r = row(1);
  const want = {
    ByteType: '1',
    LongType: '2',
    FloatType: '0.234',
    decimal: '123.52',
    BooleanType: 'false',
    StringType: '1',
    BinaryType: '0x31',
    DateType: '1970-01-01',
    TimestampType: '1970-01-01 06:30:23.523Z',
    TimestampNTZType: '1970-01-03 17:03:54.000200',
    nested_struct: '{"aa":"1","ac":{"aca":1}}',
  };
  for (const [k, v] of Object.entries(want)) assert.equal(r[k], v, `${k} in ${JSON.stringify(r)}`);
  // Lists and maps are null throughout that table: dat__nested_types has them.
  await openUrl(`${BASE}dat__nested_types/`);
  assert.equal(await rowCount(), 5);
  const n = await grid();
  const byPk = Object.fromEntries(n.rows.map((x) => [x[n.names.indexOf('pk')], Object.fromEntries(n.names.map((k, j) => [k, x[j]]))]));
  assert.deepEqual(byPk['2'], { pk: '2', struct: '{"float64":2,"bool":true}', array: '[0,1,2]', map: '{"0":0,"1":1}' });
  assert.equal(byPk['0'].map, '{}');
});

await test('a missing table shows a readable error, not a console message', async () => {
  await openUrl(`${BASE}no-such-table/`);
  assert.ok(await page.locator('#error').isVisible(), 'the error box is shown');
  const code = await page.locator('#error').getAttribute('data-code');
  assert.ok(code && code !== 'error', `a specific error code, not ${code}`);
  const message = await errorText();
  assert.match(message, /Could not open the table/);
  assert.match(message, /no-such-table/, 'the message names the table');
  assert.match(await text('#status'), /Could not open/);
});

await test('the page URL reopens a table, filter and version included', async () => {
  await gotoPage(`?url=${encodeURIComponent(`${BASE}${DV_TABLE}/`)}&version=5&filter=${encodeURIComponent('part = 3')}`);
  await idle();
  assert.equal(await text('#info-version'), '5');
  assert.equal(await page.inputValue('#filter'), 'part = 3');
  const g = await grid();
  assert.ok(g.rows.length > 0 && column(g, 'part').every((p) => p === '3'));
});

await test('screenshot for the README', async () => {
  if (!SCREENSHOT) return;
  // The table with deletion vectors, filtered on its partition column: rows and skipped files.
  const filter = 'part >= 5';
  await gotoPage(`?url=${encodeURIComponent(`${BASE}${DV_TABLE}/`)}&filter=${encodeURIComponent(filter)}`);
  await idle();
  const parts = column(unfiltered, 'part');
  assert.equal(await rowCount(), parts.filter((p) => Number(p) >= 5).length);
  assert.match(await text('#metrics'), /files skipped/);
  await page.screenshot({ path: SCREENSHOT });
});

await test('no uncaught errors in the page', async () => {
  assert.deepEqual(pageErrors, []);
});

await context.close();
if (process.env.E2E_STARTED) {
  console.log(`e2e: took ${Math.round(Date.now() / 1000 - Number(process.env.E2E_STARTED))} s in all`);
}
const passed = results.filter((r) => r.ok).length;
console.log(`e2e: ${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length ? 0 : 1);
