// The npm package in headless Chromium: a Vite-built app and a plain <script type="module">
// page, both served by `dar serve` (the site under /www/, corpus tables at the root), each
// reading tables and printing { table: rows }, checked against the native reader's counts.
//
// Run by scripts/test-npm from the folder where `npm install playwright-core` ran:
//
//   DAR_BASE=http://127.0.0.1:PORT/   the `dar serve` root
//   DAR_EXPECT='{"table": {"rows": N}, ...}'
//   DAR_PAGES='vite/index.html,plain/index.html'   pages below /www/
//   DAR_SCREENSHOTS=DIR               optional: a screenshot of each page
//
// Prints one line per page and closes with `browser: N passed, N failed`.
import { chromium } from 'playwright-core';

const BASE = process.env.DAR_BASE?.replace(/\/?$/, '/');
const EXPECT = JSON.parse(process.env.DAR_EXPECT ?? '{}');
const PAGES = (process.env.DAR_PAGES ?? 'vite/index.html,plain/index.html').split(',');
const SHOTS = process.env.DAR_SCREENSHOTS;
if (!BASE) {
  console.error('set DAR_BASE (scripts/test-npm does)');
  process.exit(2);
}
const tables = Object.keys(EXPECT);
const want = Object.fromEntries(tables.map((t) => [t, EXPECT[t].rows]));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
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
});
let passed = 0;
let failed = 0;
try {
  for (const page of PAGES) {
    const t0 = performance.now();
    const tab = await browser.newPage();
    const logs = [];
    tab.on('console', (m) => logs.push(`console.${m.type()}: ${m.text()}`));
    tab.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
    tab.on('requestfailed', (r) => logs.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
    const url = `${BASE}www/${page}?tables=${tables.join(',')}`;
    let problem = null;
    try {
      await tab.goto(url);
      await tab.waitForSelector('#result:not([data-status="running"])', { timeout: 60_000 });
      const status = await tab.getAttribute('#result', 'data-status');
      const text = await tab.textContent('#result');
      if (status !== 'done') {
        problem = `page reported ${status}: ${text}`;
      } else if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(want)) {
        problem = `rows ${text}, expected ${JSON.stringify(want)}`;
      }
      if (SHOTS) {
        await tab.screenshot({ path: `${SHOTS}/${page.replace(/\W+/g, '-')}.png` });
      }
    } catch (error) {
      problem = String(error?.message ?? error);
    }
    const ms = Math.round(performance.now() - t0);
    if (problem) {
      failed++;
      console.log(`FAIL ${page}: ${problem} (${ms} ms)`);
      for (const line of logs) console.log(`     ${line}`);
    } else {
      passed++;
      console.log(`ok   ${page}: ${JSON.stringify(want)} (${ms} ms)`);
    }
    await tab.close();
  }
} finally {
  await browser.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
