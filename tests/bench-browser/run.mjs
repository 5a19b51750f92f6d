// The browser benchmark's driver (started by scripts/bench-browser): runs every task with
// every reader in headless Chromium through Playwright, each run in a fresh browser context
// (no cache), and prints one table of medians with what the network did.
//
// Env: BENCH_PAGE (the page's origin, serving bench.html, pkg/, node_modules/), BENCH_TABLES
// (the tables' origin: another port, so every request is cross-origin as on a real site),
// BENCH_LOG (that server's request log, `dar serve --log`), BENCH_TASKS (JSON, below),
// BENCH_REPS, BENCH_CHROMIUM, BENCH_LATENCY_MS.
//
// Per run: time (opening to the last row in JS, measured in the page), requests to the
// tables' origin and round trips (the longest chain of requests each starting after the
// previous one ended), bytes the server sent and CORS preflights it answered (from its log),
// wasm memory after the read. Decoded MB/s: the uncompressed bytes of the column chunks the
// task reads (from the Parquet footer) per second.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const env = process.env;
const pageBase = env.BENCH_PAGE;
const tablesBase = env.BENCH_TABLES;
const logPath = env.BENCH_LOG;
// BENCH_ONLY=dv,first100 runs those tasks only.
const only = (env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const tasks = JSON.parse(env.BENCH_TASKS).filter((t) => only.length === 0 || only.includes(t.name));
const reps = Number(env.BENCH_REPS ?? 3);
const latency = Number(env.BENCH_LATENCY_MS ?? 50);
const RUN_TIMEOUT_MS = 240_000;

/** The length of the longest chain of requests where each starts after the one before ended. */
export function roundTrips(requests) {
  const sorted = [...requests].sort((a, b) => a.start - b.start);
  const depth = [];
  let most = 0;
  sorted.forEach((r, i) => {
    let d = 1;
    for (let j = 0; j < i; j++) {
      if (sorted[j].end <= r.start + 0.5) d = Math.max(d, depth[j] + 1);
    }
    depth.push(d);
    most = Math.max(most, d);
  });
  return most;
}

/** What the tables' server logged since byte `from`: bytes sent, requests, preflights. */
function serverLog(from) {
  const text = readFileSync(logPath, 'utf8').slice(from);
  let bytes = 0;
  let requests = 0;
  let preflights = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+) .* -> (\d+) \((\d+|-) bytes\)$/.exec(line);
    if (!m) continue;
    requests += 1;
    if (m[1] === 'OPTIONS') preflights += 1;
    else if (m[3] !== '-') bytes += Number(m[3]);
  }
  return { bytes, requests, preflights };
}

/** The 25 functions with the most self time in a V8 CPU profile, to stderr. */
function printProfile(profile, path) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url ? f.url.split('/').pop() : ''}`.trim();
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  process.stderr.write(`    profile ${path}: ${(total / 1000).toFixed(0)} ms sampled\n`);
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    process.stderr.write(`    ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}\n`);
  }
}

async function runOnce(browser, task, reader) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const requests = [];
  page.on('requestfinished', (request) => {
    if (!request.url().startsWith(tablesBase)) return;
    const t = request.timing();
    const range = request.headers().range ?? '';
    requests.push({ start: t.startTime, end: t.startTime + Math.max(t.responseEnd, 0), url: request.url().slice(tablesBase.length), range });
  });
  page.on('requestfailed', (request) => {
    if (request.url().startsWith(tablesBase)) requests.push({ start: request.timing().startTime, end: request.timing().startTime, failed: true });
  });
  let logFrom = statSync(logPath).size;
  const query = new URLSearchParams({
    reader,
    task: task.task,
    table: task.table,
    file: task.file ?? '',
    columns: (task.columns ?? []).join(','),
    again: task.again ? '1' : '',
  });
  // BENCH_PROFILE=first100/ours: V8's sampling profiler on the page over the timed part of
  // that cell's runs (`wait=1`: the page waits for the profiler); the profile is written
  // next to the driver and its heaviest functions by self time printed.
  const profiling = !task.again && env.BENCH_PROFILE && `${task.name}/${reader}`.includes(env.BENCH_PROFILE);
  if (profiling) query.set('wait', '1');
  let profiler = null;
  try {
    await page.goto(`${pageBase}bench.html?${query}`);
    if (profiling) {
      await page.waitForFunction(() => typeof window.go === 'function', null, { timeout: RUN_TIMEOUT_MS, polling: 20 });
      profiler = await context.newCDPSession(page);
      await profiler.send('Profiler.enable');
      await profiler.send('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.send('Profiler.start');
      await page.evaluate(() => window.go());
    }
    if (task.again) {
      // The untimed first read's bytes are not the task's: the server's log is counted from
      // the timed read on.
      await page.waitForFunction(() => window.warmedUp === true, null, { timeout: RUN_TIMEOUT_MS, polling: 50 });
      await new Promise((r) => setTimeout(r, 100));
      logFrom = statSync(logPath).size;
      await page.evaluate(() => window.go());
    }
    await page.waitForFunction(() => window.benchResult !== undefined, null, { timeout: RUN_TIMEOUT_MS, polling: 50 });
    const result = await page.evaluate(() => window.benchResult);
    if (profiler) {
      const { profile } = await profiler.send('Profiler.stop');
      const file = new URL(`profile-${task.name}-${reader}-${Date.now()}.cpuprofile`, import.meta.url);
      writeFileSync(file, JSON.stringify(profile));
      printProfile(profile, file.pathname);
    }
    // Let the last responses' log lines land.
    await new Promise((r) => setTimeout(r, 100));
    // Only the timed part's requests: the workers' warm-up before the clock (an open of a
    // missing table) is not the task's.
    if (result.startedAt !== undefined) {
      const before = requests.filter((r) => r.start < result.startedAt - 1).length;
      requests.splice(0, requests.length, ...requests.filter((r) => r.start >= result.startedAt - 1));
      result.untimedRequests = before;
    }
    if (env.BENCH_TRACE && `${task.name}/${reader}`.includes(env.BENCH_TRACE)) {
      // BENCH_TRACE=dv/ours: each request of the run, by start, with its times (ms).
      const t0 = Math.min(...requests.map((r) => r.start));
      for (const r of [...requests].sort((a, b) => a.start - b.start)) {
        process.stderr.write(`    ${(r.start - t0).toFixed(0).padStart(5)} → ${(r.end - t0).toFixed(0).padStart(5)}  ${r.url} ${r.range}\n`);
      }
    }
    return { ...result, requests: requests.length, roundTrips: roundTrips(requests), server: serverLog(logFrom) };
  } catch (error) {
    return { error: String(error?.message ?? error).split('\n')[0] };
  } finally {
    await context.close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};
const ms = (x) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
const mb = (x) => (x >= 1 << 20 ? `${(x / (1 << 20)).toFixed(1)} MiB` : `${(x / 1024).toFixed(1)} KiB`);

const browser = await chromium.launch({
  executablePath: env.BENCH_CHROMIUM ?? '/usr/bin/chromium',
  // BENCH_CHROMIUM_ARGS: more switches, separated by spaces (e.g. `--js-flags=--no-wasm-lazy-compilation`).
  args: ['--no-sandbox', '--enable-precise-memory-info', ...(env.BENCH_CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)],
});
const readersAll = ['ours', 'ours-workers', 'parquet-wasm', 'hyparquet'];
const cells = [];
for (const task of tasks) {
  for (const reader of readersAll) {
    if (!task.readers.includes(reader)) {
      cells.push({ task, reader, note: task.why?.[reader] ?? 'n/a' });
      continue;
    }
    const runs = [];
    for (let i = 0; i < reps; i++) {
      const r = await runOnce(browser, task, reader);
      runs.push(r);
      process.stderr.write(`  ${task.name} / ${reader} #${i + 1}: ${r.error ? `failed: ${r.error}` : `${ms(r.ms)}, ${r.rows} rows, ${r.roundTrips} RT, ${r.requests} requests`}\n`);
      if (r.error) break;
    }
    const failed = runs.find((r) => r.error);
    if (failed) {
      cells.push({ task, reader, note: `failed: ${failed.error}` });
      continue;
    }
    const pick = (f) => median(runs.map(f));
    cells.push({
      task,
      reader,
      ms: pick((r) => r.ms),
      rows: runs[0].rows,
      rowsAgree: runs.every((r) => r.rows === runs[0].rows),
      roundTrips: pick((r) => r.roundTrips),
      requests: pick((r) => r.requests),
      bytes: pick((r) => r.server.bytes),
      preflights: Math.max(...runs.map((r) => r.server.preflights)),
      wasm: Math.max(...runs.map((r) => r.wasmBytes ?? 0)) || null,
      workers: runs[0].workers,
      heap: Math.max(...runs.map((r) => r.jsHeapBytes ?? 0)) || null,
    });
  }
}
await browser.close();

// The table: one row per task, one column per reader, ratios to ours.
const head = ['task', ...readersAll];
const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
for (const task of tasks) {
  const row = [task.label];
  const ours = cells.find((c) => c.task === task && c.reader === 'ours');
  for (const reader of readersAll) {
    const c = cells.find((x) => x.task === task && x.reader === reader);
    if (c.note) {
      row.push(c.note);
      continue;
    }
    const parts = [ms(c.ms)];
    if (reader !== 'ours' && ours?.ms) parts[0] += ` (${(c.ms / ours.ms).toFixed(2)}×)`;
    parts.push(`${c.roundTrips} RT`, `${c.requests} req`, mb(c.bytes));
    if (task.uncompressedBytes) parts.push(`${(task.uncompressedBytes / (1 << 20) / (c.ms / 1000)).toFixed(0)} decoded MB/s`);
    if (c.workers) parts.push(`${c.workers} worker${c.workers === 1 ? '' : 's'}`);
    if (c.wasm) parts.push(`wasm ${mb(c.wasm)}`);
    if (c.preflights) parts.push(`${c.preflights} preflights`);
    row.push(parts.join(', '));
  }
  lines.push(`| ${row.join(' | ')} |`);
}
const mismatches = [];
for (const task of tasks) {
  const got = cells.filter((c) => c.task === task && c.rows !== undefined);
  if (got.some((c) => !c.rowsAgree || c.rows !== task.rows)) {
    mismatches.push(`${task.label}: rows ${got.map((c) => `${c.reader} ${c.rows}`).join(', ')}, expected ${task.rows}`);
  }
}
console.log(`Chromium headless, ${latency} ms added per request by the tables' server, median of ${reps} runs, each in a fresh browser context.`);
console.log('');
console.log(lines.join('\n'));
console.log('');
console.log('RT: round trips (the longest chain of requests each waiting for the one before); req: requests to the tables\' origin; bytes: what the server sent; decoded MB/s: the uncompressed size of the column chunks read (Parquet footer) per second; wasm: the module\'s memory after the read; preflights: CORS OPTIONS requests (shown when any).');
if (mismatches.length) {
  console.log('');
  for (const m of mismatches) console.log(`MISMATCH ${m}`);
}

// The issue's targets, checked against this run.
const cell = (name, reader) => cells.find((c) => c.task.name === name && c.reader === reader);
const checks = [];
const first = cell('first100', 'ours');
if (first?.ms) checks.push([`open + first 100 rows: ≤ 3 round trips and < 350 ms`, first.roundTrips <= 3 && first.ms < 350, `${first.roundTrips} RT, ${ms(first.ms)}`]);
const dv = cell('dv', 'ours');
if (dv?.ms) checks.push(['deletion-vector table, all rows: ≤ 5 round trips', dv.roundTrips <= 5, `${dv.roundTrips} RT`]);
// The full scan's targets, checked on ours on the page and on ours in workers, each named.
const pwFull = cell('full', 'parquet-wasm');
for (const reader of ['ours', 'ours-workers']) {
  const full = cell('full', reader);
  if (!full?.ms) continue;
  const rate = tasks.find((t) => t.name === 'full').uncompressedBytes / (1 << 20) / (full.ms / 1000);
  checks.push([`full scan ≥ 150 decoded MB/s (${reader})`, rate >= 150, `${rate.toFixed(0)} MB/s`]);
  if (pwFull?.ms) checks.push([`full scan ≥ 1.5× parquet-wasm (${reader})`, pwFull.ms / full.ms >= 1.5, `${(pwFull.ms / full.ms).toFixed(2)}×`]);
  checks.push([`full scan: wasm memory < 256 MiB (${reader}${reader === 'ours' ? '' : ', all workers'})`, (full.wasm ?? 0) < 256 * (1 << 20), mb(full.wasm ?? 0)]);
}
const preflights = cells.filter((c) => c.reader.startsWith('ours') && c.preflights !== undefined).reduce((n, c) => n + c.preflights, 0);
checks.push(['0 CORS preflights (ours, no auth headers)', preflights === 0, `${preflights}`]);
console.log('');
console.log('| target | this run | met |');
console.log('|---|---|---|');
for (const [what, ok, value] of checks) console.log(`| ${what} | ${value} | ${ok ? 'yes' : 'no'} |`);
// A failed cell of ours, or rows that differ, fail the run (a peer's failure is printed only).
const oursFailed = cells.filter((c) => c.reader.startsWith('ours') && c.note?.startsWith('failed'));
for (const c of oursFailed) console.log(`FAILED ours: ${c.task.label}: ${c.note}`);
if (mismatches.length || oursFailed.length) process.exitCode = 1;
