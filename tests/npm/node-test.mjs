// The npm package in Node.js 20 ESM, installed from the packed tarball: opens corpus tables
// served by `dar serve`, from local folders and through byte sources, and checks rows,
// schema, the one continuous IPC stream (apache-arrow and Flechette), filters, time travel,
// signing, fetch options, progress, errors and aborts against numbers from the native reader.
//
// Run by scripts/test-npm from a fresh folder where `npm install <tgz> apache-arrow
// @uwdata/flechette` ran (this file is copied there so that the bare imports resolve to
// that install):
//
//   DAR_BASE=http://127.0.0.1:PORT/   the `dar serve` root (corpus tables below it)
//   DAR_CORPUS=/path/to/corpus/tables  the same tables on disk
//   DAR_EXPECT='{"table": {"rows": N, "versions": {"0": N}}, ...}'  from `dar head`
//
// Prints one line per check and closes with `node: N passed, N failed`; exits 1 on failure.
import { DeltaTable, DeltaScan, openInWorker, toParquetInWorker } from 'delta-arrow-reader';
import { RecordBatchReader, tableFromIPC } from 'apache-arrow';
import { tableFromIPC as flechetteFromIPC } from '@uwdata/flechette';
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const BASE = process.env.DAR_BASE?.replace(/\/?$/, '/');
const CORPUS = process.env.DAR_CORPUS;
const EXPECT = JSON.parse(process.env.DAR_EXPECT ?? '{}');
if (!BASE || !CORPUS || Object.keys(EXPECT).length === 0) {
  console.error('set DAR_BASE, DAR_CORPUS and DAR_EXPECT (scripts/test-npm does)');
  process.exit(2);
}
const DV = 'golden__dv-partitioned-with-checkpoint';
const CM = 'golden__table-with-columnmapping-mode-name';
const url = (name) => `${BASE}${name}/`;

let passed = 0;
let failed = 0;
async function check(name, fn) {
  const t0 = performance.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Math.round(performance.now() - t0)} ms)`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
    if (error?.code) console.log(`     code: ${error.code}`);
  }
}
function assert(condition, message) {
  if (!condition) throw new Error(message);
}
function assertEq(actual, expected, what) {
  if (actual !== expected) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}
async function rejects(promiseOrFn, test, what) {
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (error) {
    test(error);
    return error;
  }
  throw new Error(`${what}: expected an error`);
}
/** Rows of a scan, read by apache-arrow from the scan's async iterable (one IPC stream). */
async function countRows(scan) {
  return (await tableFromIPC(scan)).numRows;
}
/** The chunks of a scan's stream, each checked to be a Uint8Array, joined. */
async function streamBytes(scan) {
  const chunks = [];
  for await (const chunk of scan) {
    assert(chunk instanceof Uint8Array, 'chunks are Uint8Array');
    chunks.push(chunk);
  }
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return { bytes: out, chunks: chunks.length };
}

/** `{ field: type }` of `export interface NAME { ... }` in the shipped index.d.ts text. */
function interfaceFields(dts, name) {
  const body = dts.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`))?.[1];
  assert(body !== undefined, `index.d.ts has no interface ${name}`);
  const fields = {};
  for (const [, key, type] of body.replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/^\s*(\w+)\??:\s*([^;]+);/gm)) {
    fields[key] = type.trim();
  }
  return fields;
}
/** Whether `value` is of the TypeScript `type` (`number`, `boolean`, `number | null`, ...). */
function isOfType(value, type) {
  return type.split('|').some((t) => {
    t = t.trim();
    return t === 'null' ? value === null : typeof value === t;
  });
}
/** `object` has exactly the fields of interface `name` in index.d.ts, each of its type. */
function matchesInterface(dts, name, object) {
  const fields = interfaceFields(dts, name);
  assertEq(JSON.stringify(Object.keys(object).sort()), JSON.stringify(Object.keys(fields).sort()), `${name} keys`);
  for (const [key, type] of Object.entries(fields)) {
    assert(isOfType(object[key], type), `${name}.${key}: ${JSON.stringify(object[key])} is not ${type}`);
  }
}
const DTS = await readFile(new URL('./index.d.ts', import.meta.resolve('delta-arrow-reader/package.json')), 'utf8');

// First of all (the module's first open): the warm-up of warm-up.js runs beside it.
await check('the first open over http starts the warm-up: it reads 2 of its tiny table\'s 3 rows and asks the server nothing', async () => {
  const first = await DeltaTable.open(url(CM));
  const second = await DeltaTable.open(url(CM));
  assertEq(JSON.stringify(first.metrics), JSON.stringify(second.metrics), 'requests of the first open (warm-up beside it) and of the second');
  const pkgDir = new URL('./node_modules/delta-arrow-reader/', import.meta.url);
  const { warmUp } = await import(new URL('warm-up.js', pkgDir));
  const { openSource } = await import(new URL('delta_arrow_reader.js', pkgDir));
  assertEq(await warmUp(openSource), 2, 'rows of the warm-up table (its second row deleted)');
});

for (const [name, expected] of Object.entries(EXPECT)) {
  await check(`${name}: rows by iteration = ${expected.rows}`, async () => {
    const table = await DeltaTable.open(url(name));
    assert(table instanceof DeltaTable, 'DeltaTable instance');
    assertEq(table.version, expected.version, 'version');
    const scan = table.scan();
    assert(scan instanceof DeltaScan, 'DeltaScan instance');
    assertEq(await countRows(scan), expected.rows, 'rows');
    assertEq(scan.metrics.rowsEmitted, expected.rows, 'metrics.rowsEmitted');
    assert(scan.done, 'scan done');
  });
  await check(`${name}: toIPC = ${expected.rows} rows, logical column names`, async () => {
    const table = await DeltaTable.open(url(name));
    const arrow = tableFromIPC(await table.scan().toIPC());
    assertEq(arrow.numRows, expected.rows, 'rows');
    const names = table.schema.fields.map((f) => f.name);
    assertEq(JSON.stringify(arrow.schema.fields.map((f) => f.name)), JSON.stringify(names), 'columns');
  });
  for (const [version, rows] of Object.entries(expected.versions ?? {})) {
    await check(`${name}: version ${version} has ${rows} rows`, async () => {
      const table = await DeltaTable.open(url(name), { version: Number(version) });
      assertEq(table.version, Number(version), 'version');
      assertEq(tableFromIPC(await table.scan().toIPC()).numRows, rows, 'rows');
    });
  }
}

await check('describe: schema, protocol, partitions, files, metadata, metrics', async () => {
  const table = await DeltaTable.open(url(DV));
  assertEq(JSON.stringify(table.partitionColumns), '["part"]', 'partitionColumns');
  const part = table.schema.fields.find((f) => f.name === 'part');
  assertEq(part?.type, 'integer', 'Delta type of part');
  assertEq(part?.arrowType, 'Int32', 'Arrow type of part');
  assertEq(part?.nullable, true, 'nullable');
  assert(table.protocol.readerFeatures.includes('deletionVectors'), 'deletionVectors feature');
  assertEq(table.protocol.minReaderVersion, 3, 'minReaderVersion');
  const files = table.files();
  assertEq(files.length, table.numFiles, 'files().length');
  assertEq(files.reduce((s, f) => s + f.size, 0), table.sizeBytes, 'sizeBytes');
  assert(files.some((f) => f.deletionVector?.cardinality > 0), 'a file with a deletion vector');
  assert(files.every((f) => 'part' in f.partitionValues), 'partitionValues by logical name');
  assertEq(table.loadInfo.discovery, 'probing', 'discovery over HTTP');
  assert(table.metrics.requests > 0 && table.metrics.bytesReceived > 0, 'table metrics');
  // Nothing but the load has read from this table yet.
  assertEq(table.loadInfo.logBytesRead, table.metrics.bytesReceived, 'loadInfo.logBytesRead');
  assertEq(typeof table.metadata.id, 'string', 'metadata.id');
  assert(typeof table.timestamp === 'number', 'timestamp');
  table.free();
});

await check('columnProfile: min, max and null counts from the log, agreeing with the data', async () => {
  const table = await DeltaTable.open(url(DV));
  const profile = table.columnProfile();
  assertEq(profile.files, table.numFiles, 'files');
  assertEq(profile.filesWithStats, table.numFiles, 'every file has statistics');
  assertEq(profile.countsExact, false, 'deletion vectors: null counts may include deleted rows');
  assertEq(profile.numRecords, EXPECT[DV].rows, 'numRecords: the rows a scan returns (deleted rows subtracted)');
  // A partition column's figures come from the partition values.
  const part = profile.columns.find((c) => c.name === 'part');
  assert(part && part.complete && part.min !== null && part.max !== null, JSON.stringify(part));
  const col1 = profile.columns.find((c) => c.name === 'col1');
  assert(col1 && col1.complete && col1.min !== null && col1.max !== null, JSON.stringify(col1));
  // The bounds hold every value read.
  const arrow = await tableFromIPC(table.scan({ columns: ['col1'] }));
  const values = [...arrow.getChild('col1')].filter((v) => v !== null).map(Number);
  assert(Math.min(...values) >= Number(col1.min) && Math.max(...values) <= Number(col1.max), `${col1.min}..${col1.max}`);
  const cm = (await DeltaTable.open(url(CM))).columnProfile();
  assert(cm.columns.every((c) => !c.name.startsWith('col-')), 'logical names under column mapping');
});

await check('column mapping: logical partition values and names', async () => {
  const table = await DeltaTable.open(url(CM));
  assertEq(table.metadata.columnMapping, 'name', 'columnMapping');
  const physical = table.schema.fields[0].metadata['delta.columnMapping.physicalName'];
  assert(typeof physical === 'string', 'physical name in field metadata');
  const arrow = tableFromIPC(await table.scan({ columns: [table.schema.fields[0].name] }).toIPC());
  assertEq(arrow.schema.fields[0].name, table.schema.fields[0].name, 'logical name');
});

await check('filter, columns, limit, batchSize, metrics', async () => {
  const table = await DeltaTable.open(url(DV));
  const scan = table.scan({ columns: ['col1', 'part'], filter: 'part = 0', batchSize: 1 });
  const arrow = tableFromIPC(await scan.toIPC());
  assertEq(arrow.numRows, EXPECT[DV].filtered, 'rows with part = 0');
  assertEq(JSON.stringify(arrow.schema.fields.map((f) => f.name)), '["col1","part"]', 'columns');
  const m = scan.metrics;
  assertEq(m.filesInSnapshot, table.numFiles, 'metrics.filesInSnapshot');
  assert(m.filesPlanned < m.filesInSnapshot && m.filesSkippedByPartition > 0, `files skipped: ${JSON.stringify(m)}`);
  assertEq(m.filesPlanned + m.filesSkippedByPartition + m.filesSkippedByStats, m.filesInSnapshot, 'every file of the snapshot is planned or skipped once');
  // skippedFiles names what the counts count: files of the snapshot, none twice, none read.
  const skipped = scan.skippedFiles;
  assertEq(skipped.filter((f) => f.reason === 'partition').length, m.filesSkippedByPartition, 'skippedFiles by partition');
  assertEq(skipped.filter((f) => f.reason === 'stats').length, m.filesSkippedByStats, 'skippedFiles by stats');
  const active = new Map((await table.files()).map((f) => [f.path, f]));
  assertEq(new Set(skipped.map((f) => f.path)).size, skipped.length, 'each skipped file once');
  for (const f of skipped) {
    assert(active.has(f.path), `a skipped file is an active file: ${f.path}`);
    assertEq(f.size, active.get(f.path).size, `size of ${f.path}`);
    assert(active.get(f.path).partitionValues.part !== '0', `a skipped file cannot match part = 0: ${JSON.stringify(active.get(f.path).partitionValues)}`);
  }
  assertEq(table.scan().skippedFiles.length, 0, 'no filter, no skipped file');
  assert(m.requests > 0 && m.bytesReceived > 0, 'requests and bytes');
  assertEq(m.rowsEmitted, EXPECT[DV].filtered, 'rowsEmitted');
  assert(m.batchesEmitted >= EXPECT[DV].filtered, `batchSize 1: a batch per row at least: ${m.batchesEmitted}`);
  assert(m.done && m.filesDone === m.filesToRead && m.bytesDone === m.bytesTotal, `done: ${JSON.stringify(m)}`);
  assert(m.timeToFirstBatchUs !== null, 'time to the first batch');
  const limited = tableFromIPC(await table.scan({ limit: 3 }).toIPC());
  assertEq(limited.numRows, 3, 'limit 3');
  const none = tableFromIPC(await table.scan({ filter: 'part = 12345' }).toIPC());
  assertEq(none.numRows, 0, 'no rows: schema-only stream');
  assertEq(none.schema.fields.length, 3, 'schema of an empty result');
  // A filter false for every row (an integer equal to 1.5) reads no file, and says so.
  const never = table.scan({ filter: 'col1 = 1.5' });
  assertEq(tableFromIPC(await never.toIPC()).numRows, 0, 'col1 = 1.5: no rows');
  assertEq(never.metrics.filesSkippedByFilter, table.numFiles, 'every file skipped: the filter is false for every row');
  assertEq(never.metrics.filesSkippedByPartition + never.metrics.filesSkippedByStats, 0, 'none by partition values or statistics');
  assert(never.skippedFiles.length === table.numFiles && never.skippedFiles.every((f) => f.reason === 'filter'), `reasons: ${JSON.stringify(never.skippedFiles.slice(0, 2))}`);
  assertEq(m.filesSkippedByFilter, 0, 'part = 0 is not false for every row');
});

await check('the worker functions in Node.js are typed errors that say what to use instead', async () => {
  for (const [call, phase, instead] of [[() => openInWorker('/t/'), 'load', /DeltaTable\.open/], [() => toParquetInWorker(null), 'write', /toParquet/]]) {
    await rejects(call(), (e) => {
      assertEq(`${e.name} ${e.code} ${e.phase}`, `DeltaError unsupported_feature ${phase}`, 'name, code, phase');
      assert(instead.test(e.message), e.message);
    }, 'a worker function in Node.js');
  }
});

await check('a scan aborted while a read is under way reports done in its metrics, as one stopped between reads does', async () => {
  const table = await DeltaTable.open(join(CORPUS, DV));
  for (const stop of ['while reading', 'between reads']) {
    const controller = new AbortController();
    const scan = table.scan({ batchSize: 1, signal: controller.signal });
    if (stop === 'between reads') await scan.next();
    const pending = scan.next();
    controller.abort();
    await rejects(pending, (e) => assertEq(e.name, 'AbortError', 'name'), `a read aborted ${stop}`);
    assert(scan.done && scan.metrics.done, `${stop}: done ${scan.done}, metrics.done ${scan.metrics.done}`);
  }
});

await check('scan.metrics and table.metrics have exactly the fields of ScanMetrics and TableMetrics in index.d.ts', async () => {
  const table = await DeltaTable.open(url(DV));
  matchesInterface(DTS, 'TableMetrics', table.metrics);
  const scan = table.scan({ filter: 'part = 0' });
  matchesInterface(DTS, 'ScanMetrics', scan.metrics);
  assertEq(await countRows(scan), EXPECT[DV].filtered, 'rows');
  matchesInterface(DTS, 'ScanMetrics', scan.metrics);
  matchesInterface(DTS, 'TableMetrics', table.metrics);
});

await check('onProgress reaches filesTotal and bytesTotal', async () => {
  const table = await DeltaTable.open(url(DV));
  const events = [];
  const scan = table.scan({ onProgress: (p) => events.push(p) });
  await countRows(scan);
  assert(events.length > 1, `progress events: ${events.length}`);
  const last = events.at(-1);
  assertEq(last.filesDone, last.filesTotal, 'filesDone at the end');
  assertEq(last.filesTotal, table.numFiles, 'filesTotal');
  assertEq(last.bytesDone, last.bytesTotal, 'bytesDone at the end');
  assertEq(last.bytesTotal, table.sizeBytes, 'bytesTotal');
  for (let i = 1; i < events.length; i++) {
    assert(events[i].filesDone >= events[i - 1].filesDone, 'filesDone never decreases');
  }
  // A limit ends the scan early: the last event still ends full (a bar completes), while
  // scan.metrics keeps what was read.
  const limitedEvents = [];
  const limited = table.scan({ limit: 1, onProgress: (p) => limitedEvents.push(p) });
  assertEq(await countRows(limited), 1, 'limit 1');
  const end = limitedEvents.at(-1);
  assert(end && end.filesDone === end.filesTotal && end.bytesDone === end.bytesTotal, `last event: ${JSON.stringify(end)}`);
  const lm = limited.metrics;
  assert(lm.done && lm.filesDone < lm.filesToRead && lm.bytesDone < lm.bytesTotal, `metrics of a limited scan: ${JSON.stringify(lm)}`);
});

await check('signUrl signs every request; headers are sent', async () => {
  const signed = [];
  const table = await DeltaTable.open(url(DV), {
    headers: { 'x-test': 'yes' },
    signUrl: async (plain) => {
      signed.push(plain);
      return `${plain}?sig=secret-signature`;
    },
  });
  // Every GET (whole or ranged) is signed; size queries and listings send no request.
  const fetched = () => table.metrics.getRequests + table.metrics.rangeRequests;
  assertEq(signed.length, fetched(), 'one signature per request while loading');
  assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'rows');
  assertEq(signed.length, fetched(), 'one signature per request');
  assert(signed.every((u) => u.startsWith(url(DV))), 'plain URLs under the table root');
  // A signer's failure is a clear error without the signed query string.
  const err = await rejects(
    DeltaTable.open(url(DV), { signUrl: () => Promise.reject(new Error('no token')) }),
    (e) => assertEq(e.code, 'io', 'code'),
    'failing signer',
  );
  assert(err.message.includes('no token'), err.message);
});

await check('time travel by timestamp', async () => {
  const latest = await DeltaTable.open(url(DV));
  const t = await DeltaTable.open(url(DV), { timestamp: new Date(latest.timestamp) });
  assertEq(t.version, latest.version, 'version at the latest commit time');
  await rejects(
    DeltaTable.open(url(DV), { timestamp: '1970-01-01' }),
    (e) => assertEq(e.code, 'timestamp_not_found', 'code'),
    'timestamp before the first commit',
  );
});

await check('errors carry codes', async () => {
  await rejects(
    DeltaTable.open(`${BASE}no-such-table/`),
    (e) => {
      assert(e instanceof Error, 'an Error');
      assertEq(e.code, 'not_a_table', 'code');
      assertEq(e.phase, 'load', 'phase');
    },
    'missing table',
  );
  await rejects(
    DeltaTable.open(url(DV), { version: 999 }),
    (e) => assertEq(e.code, 'version_not_found', 'code'),
    'missing version',
  );
  const table = await DeltaTable.open(url(DV));
  await rejects(() => table.scan({ columns: ['nope'] }), (e) => assert(e.code, 'has a code'), 'bad column');
  await rejects(() => table.scan({ filter: 'col1 = = 1' }), (e) => assert(e.code, 'has a code'), 'bad filter');
  await rejects(() => table.scan({ limit: -1 }), (e) => assertEq(e.code, 'invalid_argument', 'code'), 'bad limit');
  await rejects(
    DeltaTable.open('http://127.0.0.1:9/t/', { retries: 0 }),
    (e) => assertEq(e.code, 'io', 'code'),
    'unreachable server',
  );
});

await check('a server that takes the connection and never answers fails the open after answerTimeoutMs', async () => {
  const sockets = [];
  const silent = createTcpServer((socket) => sockets.push(socket));
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const at = `http://127.0.0.1:${silent.address().port}/t/`;
    const t0 = performance.now();
    const err = await rejects(
      DeltaTable.open(at, { answerTimeoutMs: 300, retries: 1 }),
      (e) => assertEq(e.code, 'io', 'code'),
      'a silent server',
    );
    const took = performance.now() - t0;
    assert(took < 10_000, `failed after ${Math.round(took)} ms`);
    assert(/answerTimeoutMs/.test(`${err.message} ${err.cause?.message ?? ''}`), err.message);
    await rejects(
      DeltaTable.open(at, { answerTimeoutMs: -1 }),
      (e) => assertEq(e.code, 'invalid_argument', 'code'),
      'a negative answerTimeoutMs',
    );
  } finally {
    sockets.forEach((s) => s.destroy());
    silent.close();
  }
  // The default bound leaves a table that answers alone: it reads as before.
  assertEq(await countRows((await DeltaTable.open(url(DV), { answerTimeoutMs: 5000 })).scan()), EXPECT[DV].rows, 'rows');
});

/** A server of the table folder `root` at `/t/` (ranges answered `206`, missing files `404`),
 * on a free port, whose answers `before(req, res, missing)` may take over (it returns true
 * when it answered). */
async function serveFolder(root, before) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/t\//, '');
    const bytes = await readFile(join(root, path)).catch(() => null);
    if (before(req, res, bytes === null)) return;
    if (bytes === null) {
      res.writeHead(404, { 'Content-Length': '0' });
      res.end();
      return;
    }
    const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
    if (range) {
      const [start, end] = [Number(range[1]), Math.min(Number(range[2]), bytes.length - 1)];
      res.writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${bytes.length}`, 'Content-Length': String(end - start + 1) });
      res.end(bytes.subarray(start, end + 1));
    } else {
      res.writeHead(200, { 'Content-Length': String(bytes.length) });
      res.end(bytes);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Runs `use(url)` against [`serveFolder`]`(root, before)` at its `/t/` URL, and stops the
 * server after it. */
async function withFolderServer(root, before, use) {
  const server = await serveFolder(root, before);
  try {
    return await use(`http://127.0.0.1:${server.address().port}/t/`);
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
}

await check('a server that answers 429 with Retry-After is waited for as it asks', async () => {
  // Every request is refused for the first 1.5 s with Retry-After: 1; the default retries
  // (3, with backoff from 100 ms: 0.7 s in all) gave up inside that window.
  const opened = performance.now();
  const busy = (req, res) => {
    if (performance.now() - opened >= 1500) return false;
    res.writeHead(429, { 'Retry-After': '1', 'Content-Length': '0' });
    res.end();
    return true;
  };
  await withFolderServer(join(CORPUS, DV), busy, async (at) => {
    const table = await DeltaTable.open(at);
    assert(performance.now() - opened >= 1000, 'the open waited');
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'rows');
  });
});

await check('a host that answers 403 for missing files (S3 without ListBucket) is probed; one that forbids all says 403', async () => {
  const forbid = (all) => (req, res, missing) => {
    if (!all && !missing) return false;
    res.writeHead(403, { 'Content-Length': '0' });
    res.end();
    return true;
  };
  for (const name of [DV, 'kernel__cdf-table-with-cdc-and-dvs']) {
    await withFolderServer(join(CORPUS, name), forbid(false), async (at) => {
      const table = await DeltaTable.open(at);
      assertEq(await countRows(table.scan()), EXPECT[name].rows, `rows of ${name}`);
      assert(table.loadInfo.logFilesForbidden > 0, `403s counted: ${JSON.stringify(table.loadInfo)}`);
      assertEq(table.loadInfo.logFilesNotFound, 0, 'no 404 from a host that forbids every missing file');
    });
  }
  // A host that answers 404 for missing files and 403 for the newest commit: the load
  // takes that commit as missing (an older version), and loadInfo shows both answers, so an
  // application can warn its user.
  const newest = `${String(EXPECT[DV].version).padStart(20, '0')}.json`;
  const forbidNewest = (req, res) => {
    if (!req.url.endsWith(newest)) return false;
    res.writeHead(403, { 'Content-Length': '0' });
    res.end();
    return true;
  };
  await withFolderServer(join(CORPUS, DV), forbidNewest, async (at) => {
    const table = await DeltaTable.open(at);
    assertEq(table.version, EXPECT[DV].version - 1, 'the version before the forbidden commit');
    assertEq(table.loadInfo.logFilesForbidden, 1, 'the forbidden commit');
    assert(table.loadInfo.logFilesNotFound > 0, `404s counted: ${JSON.stringify(table.loadInfo)}`);
  });
  await withFolderServer(join(CORPUS, DV), forbid(true), (at) =>
    rejects(
      DeltaTable.open(at, { retries: 0 }),
      (e) => {
        assertEq(e.code, 'io', 'code');
        assert(/403/.test(e.message), e.message);
      },
      'a host that forbids every request',
    ),
  );
});

await check('an https host whose certificate Node refuses: io at once, naming NODE_EXTRA_CA_CERTS, not retried', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dar-tls-'));
  try {
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const { createServer: createHttpsServer } = await import('node:https');
    const server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => {
      res.writeHead(404, { 'Content-Length': '0' });
      res.end();
    });
    let connections = 0;
    server.on('connection', () => connections++);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const err = await rejects(
        DeltaTable.open(`https://127.0.0.1:${server.address().port}/t/`),
        (e) => assertEq(e.code, 'io', 'code'),
        'a refused certificate',
      );
      assert(/certificate/.test(err.message) && /NODE_EXTRA_CA_CERTS/.test(err.message), err.message);
      assert(!/CORS/.test(err.message), `no CORS hint in Node: ${err.message}`);
      // The first round's 7 requests once each (retried, each would have been tried 4 times).
      assert(connections <= 8, `${connections} connections: the refusal was retried`);
    } finally {
      server.closeAllConnections?.();
      server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

await check('a data file replaced between two reads is an io error, not its bytes joined to the first; ETags by node alone are one file', async () => {
  // Each data file's first answer is version 1, every later one version 2 (both ETag and
  // Last-Modified changed): one table read twice finds every file replaced.
  const replaced = (byNode) => {
    const seen = new Set();
    let n = 0;
    return (req, res) => {
      if (!req.url.includes('.parquet')) return false;
      const first = !seen.has(req.url.split('?')[0]);
      seen.add(req.url.split('?')[0]);
      n += 1;
      res.setHeader('ETag', byNode ? `"node-${n % 3}"` : first ? '"v1"' : '"v2"');
      res.setHeader('Last-Modified', byNode || first ? 'Mon, 07 Dec 2026 10:00:00 GMT' : 'Mon, 07 Dec 2026 11:00:00 GMT');
      return false;
    };
  };
  await withFolderServer(join(CORPUS, DV), replaced(false), async (at) => {
    const table = await DeltaTable.open(at, { retries: 0 });
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'the first read');
    await rejects(
      countRows(table.scan()),
      (e) => {
        assertEq(e.code, 'io', 'code');
        assert(/changed while it was read/.test(e.message) && /"v1"/.test(e.message) && /"v2"/.test(e.message), e.message);
      },
      'a read of replaced files',
    );
    // Pinned anew: the table read again reads the files as they are now.
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'the read after');
  });
  await withFolderServer(join(CORPUS, DV), replaced(true), async (at) => {
    const table = await DeltaTable.open(at);
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'the first read');
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'ETags that differ by node, one time');
  });
});

await check('a host that answers every missing file with an endless or huge page: a typed error, memory bounded', async () => {
  // The table's own files as they are; any other path (the probe past the last commit,
  // _last_checkpoint) a 200 HTML page that never ends, or one that declares 700 MB. Read to
  // its end, such a page filled the module's memory and it aborted (an uncaught
  // RuntimeError, the open's promise never settled).
  const page = '<!doctype html><html><body><div id="app"></div></body></html>\n';
  const pageFor = (huge) => (req, res, missing) => {
    if (!missing) return false;
    res.writeHead(200, { 'Content-Type': 'text/html', ...(huge ? { 'Content-Length': String(700 << 20) } : {}) });
    const more = () => {
      while (!res.destroyed && res.write(page.repeat(1000)));
      if (!res.destroyed) res.once('drain', more);
    };
    more();
    return true;
  };
  for (const huge of [false, true]) {
    const kind = huge ? 'huge' : 'endless';
    const t0 = performance.now();
    await withFolderServer(join(CORPUS, DV), pageFor(huge), (at) =>
      rejects(
        DeltaTable.open(at),
        (e) => {
          assertEq(e.name, 'DeltaError', 'name');
          assert(['invalid_log', 'io'].includes(e.code), `code ${e.code}: ${e.message}`);
        },
        `a ${kind} page`,
      ),
    );
    const took = performance.now() - t0;
    assert(took < 10_000, `${kind}: failed after ${Math.round(took)} ms`);
  }
  assert(process.memoryUsage().rss < 1.5 * 2 ** 30, `rss ${process.memoryUsage().rss}`);
  // The module lives on.
  assertEq(await countRows((await DeltaTable.open(url(DV))).scan()), EXPECT[DV].rows, 'rows after');
});

await check('a body that stops midway fails the read after answerTimeoutMs, and a slow body that moves reads', async () => {
  // Every answer: headers and the first 10 of 100,000 bytes, then nothing (the socket open).
  const held = [];
  const stalling = createServer((req, res) => {
    held.push(res);
    res.writeHead(200, { 'Content-Length': '100000', 'Access-Control-Allow-Origin': '*' });
    res.write('x'.repeat(10));
  });
  await new Promise((resolve) => stalling.listen(0, '127.0.0.1', resolve));
  try {
    const at = `http://127.0.0.1:${stalling.address().port}/t/`;
    const t0 = performance.now();
    const err = await rejects(
      DeltaTable.open(at, { answerTimeoutMs: 300, retries: 1 }),
      (e) => assertEq(e.code, 'io', 'code'),
      'a stalled body',
    );
    const took = performance.now() - t0;
    assert(took < 10_000, `failed after ${Math.round(took)} ms`);
    assert(/answerTimeoutMs/.test(`${err.message} ${err.cause?.message ?? ''}`), err.message);
  } finally {
    held.forEach((res) => res.destroy());
    stalling.closeAllConnections?.();
    stalling.close();
  }
  // A table whose every body comes in pieces 150 ms apart, under a bound of 400 ms a piece
  // (each piece well within it, each body longer than it): read whole.
  const root = join(CORPUS, DV);
  const slow = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/t\//, '');
    let bytes;
    try {
      bytes = await readFile(join(root, path));
    } catch {
      res.writeHead(404).end();
      return;
    }
    const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    let start = 0;
    let end = bytes.length;
    if (range) {
      start = Number(range[1]);
      end = range[2] ? Math.min(Number(range[2]) + 1, bytes.length) : bytes.length;
      if (start >= bytes.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` }).end();
        return;
      }
      res.writeHead(206, { 'Content-Length': String(end - start), 'Content-Range': `bytes ${start}-${end - 1}/${bytes.length}` });
    } else {
      res.writeHead(200, { 'Content-Length': String(bytes.length) });
    }
    const body = bytes.subarray(start, end);
    const third = Math.ceil(body.length / 3);
    for (let at = 0; at < body.length; at += third) {
      res.write(body.subarray(at, at + third));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    res.end();
  });
  await new Promise((resolve) => slow.listen(0, '127.0.0.1', resolve));
  try {
    const table = await DeltaTable.open(`http://127.0.0.1:${slow.address().port}/t/`, { answerTimeoutMs: 400, retries: 0 });
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'rows of a slow table');
  } finally {
    slow.closeAllConnections?.();
    slow.close();
  }
});

await check('API misuse: unknown options, a second reader, malformed fetch answers, timers, frozen descriptions, long in-lists', async () => {
  const invalid = (e) => assertEq(e.code, 'invalid_argument', 'code');
  // A misspelt option is refused with the nearest name, never ignored (which read other rows).
  let err = await rejects(DeltaTable.open(url(DV), { versio: 0 }), invalid, 'open({ versio })');
  assert(/'versio'.*did you mean 'version'/.test(err.message), err.message);
  const table = await DeltaTable.open(url(DV));
  for (const bad of [{ filtr: 'value = 1' }, { colums: ['value'] }, { limt: 1 }, { batchsize: 1 }, { Columns: ['value'] }]) {
    err = await rejects(async () => table.scan(bad), invalid, JSON.stringify(bad));
    assert(/unknown option/.test(err.message) && /did you mean/.test(err.message), err.message);
  }
  await rejects(async () => table.scan(['value']), invalid, 'an array as the options');
  await rejects(async () => table.scan({ maxPageBytes: 0 }), invalid, 'maxPageBytes 0');
  // An option of open() with a bad value is refused in phase 'load', whichever side checks it.
  const invalidLoad = (e) => {
    invalid(e);
    assertEq(e.name, 'DeltaError', 'name');
    assertEq(e.phase, 'load', 'phase');
  };
  for (const bad of [{ retries: 1e9 }, { maxCommits: 0 }, { version: -1 }, { version: 'x' }, { timestamp: 'nope' },
    { headers: 5 }, { signal: 5 }, { fetch: 5 }, { signUrl: 5 }, { requestInit: 5 }, { answerTimeoutMs: 'x' },
    { version: 1, timestamp: '2024-01-01' }]) {
    await rejects(DeltaTable.open(url(DV), bad), invalidLoad, `open(${JSON.stringify(bad)})`);
  }
  await rejects(DeltaTable.open(url(DV), { timestamp: new Date(8.64e15) }), invalidLoad, 'a timestamp out of range');
  // A freed table refuses every use with a typed error.
  const freed = await DeltaTable.open(url(DV));
  freed.free();
  freed.free();
  for (const [what, use, phase] of [['version', () => freed.version, 'load'], ['files()', () => freed.files(), 'load'],
    ['metrics', () => freed.metrics, 'load'], ['scan()', () => freed.scan(), 'plan']]) {
    err = await rejects(async () => use(), invalid, `${what} of a freed table`);
    assertEq(`${err.name} ${err.phase}`, `DeltaError ${phase}`, `the error of ${what} of a freed table`);
    assert(/freed/.test(err.message), err.message);
  }
  // One reader per scan: a second stream() (or iteration, or toIPC()) beside the first is
  // refused; the first reads every row.
  const scan = table.scan({ batchSize: 2 });
  const first = scan.stream();
  await rejects(async () => scan.stream(), invalid, 'a second stream()');
  await rejects(async () => scan[Symbol.asyncIterator](), invalid, 'iteration beside stream()');
  await rejects(async () => scan.toIPC(), invalid, 'toIPC() beside stream()');
  const whole = new Uint8Array(await new Response(first).arrayBuffer());
  assertEq(tableFromIPC(whole).numRows, EXPECT[DV].rows, 'rows of the first reader');
  // A fetch answer that is not a Response, or whose arrayBuffer() gives a value, not a
  // promise: a typed rejection, never an exception outside the read.
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  try {
    for (const answer of [{ status: '200' }, { status: 200, arrayBuffer: () => new ArrayBuffer(0) }, { status: 200, arrayBuffer: () => 42 }]) {
      await rejects(
        DeltaTable.open(url(DV), { fetch: () => answer, retries: 0 }),
        (e) => assert(e.code, `a code for ${JSON.stringify(answer)}`),
        JSON.stringify(answer),
      );
    }
    // A fetch that never settles and ignores its request's signal: bounded by answerTimeoutMs.
    const t0 = performance.now();
    await rejects(
      DeltaTable.open(url(DV), { fetch: () => new Promise(() => {}), answerTimeoutMs: 200, retries: 0 }),
      (e) => assertEq(e.code, 'io', 'code'),
      'a fetch that never answers',
    );
    assert(performance.now() - t0 < 5000, 'bounded by answerTimeoutMs');
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.off('uncaughtException', onUncaught);
  }
  assertEq(uncaught.length, 0, `uncaught exceptions: ${uncaught.map(String).join('; ')}`);
  // A local path that is not there, or a file given as the table, is named as such.
  const missing = await rejects(DeltaTable.open(join(tmpdir(), 'dar-no-such-folder', 'x')), (e) => assertEq(e.code, 'not_a_table', 'code'), 'a missing folder');
  assert(/no such folder/.test(missing.message), missing.message);
  await rejects(
    DeltaTable.open(join(CORPUS, DV, '_delta_log', '00000000000000000000.json')),
    (e) => assertEq(e.code, 'not_a_table', 'code'),
    'a file as the table',
  );
  // A bound too long for a timer is no bound (was: every request timed out at once).
  const unbounded = await DeltaTable.open(url(DV), { answerTimeoutMs: Infinity });
  assertEq(await countRows(unbounded.scan()), EXPECT[DV].rows, 'rows with answerTimeoutMs: Infinity');
  const longer = await DeltaTable.open(url(DV), { answerTimeoutMs: 3e9 });
  assertEq(longer.version, table.version, 'version with answerTimeoutMs: 3e9');
  // What a table describes is frozen: one caller cannot edit it under another.
  assert(Object.isFrozen(table.schema) && Object.isFrozen(table.schema.fields), 'schema frozen');
  assert(Object.isFrozen(table.partitionColumns), 'partitionColumns frozen');
  // An in-list of 50,000 values plans and reads in linear time (was: quadratic, seconds).
  const column = table.schema.fields.find((f) => f.type === 'integer' || f.type === 'long')?.name;
  assert(column, 'an integer column');
  const values = Array.from({ length: 50_000 }, (_, i) => i - 25_000).join(', ');
  const t1 = performance.now();
  const rows = await countRows(table.scan({ filter: `${column} in (${values})` }));
  assert(performance.now() - t1 < 5000, `a 50,000-value in-list took ${Math.round(performance.now() - t1)} ms`);
  assert(rows >= 0, 'rows');
});

await check('abort: a signal on an open of 26 commits holds one listener, not one per request', async () => {
  // Node.js warns (MaxListenersExceededWarning) past 10 listeners on one signal; the log's
  // commits are fetched side by side, each request waiting on the signal.
  const { getEventListeners } = await import('node:events');
  const controller = new AbortController();
  let most = 0;
  let requests = 0;
  const counting = (request) => {
    requests++;
    most = Math.max(most, getEventListeners(controller.signal, 'abort').length);
    return fetch(request);
  };
  const warnings = [];
  const onWarning = (w) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    const table = await DeltaTable.open(url('kernel__cdf-table-with-cdc-and-dvs'), { signal: controller.signal, fetch: counting });
    assert(table.version >= 25, `version ${table.version}`);
    assertEq(await countRows(table.scan({ signal: controller.signal })), EXPECT['kernel__cdf-table-with-cdc-and-dvs'].rows, 'rows');
    await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    process.off('warning', onWarning);
  }
  assert(requests > 20, `requests: ${requests}`);
  // A fixed few, however many requests run: the scan's own watch on the page, the reader's,
  // and the store's one for its requests.
  assert(most >= 1 && most <= 3, `listeners on the signal while requests ran: ${most}`);
  assertEq(getEventListeners(controller.signal, 'abort').length, 0, 'listeners left after the open and the scan');
  assertEq(warnings.join('; '), '', 'warnings');
  // The same through the local folder's byte source, which waits on the signal the same way.
  const local = new AbortController();
  process.on('warning', onWarning);
  try {
    const table = await DeltaTable.open(join(CORPUS, 'kernel__cdf-table-with-cdc-and-dvs'), { signal: local.signal });
    assertEq(await countRows(table.scan({ signal: local.signal })), EXPECT['kernel__cdf-table-with-cdc-and-dvs'].rows, 'rows from the folder');
    await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    process.off('warning', onWarning);
  }
  assertEq(getEventListeners(local.signal, 'abort').length, 0, 'listeners left after a local open and scan');
  assertEq(warnings.join('; '), '', 'warnings of the local read');
  // Aborted while its requests run, the open still rejects with the abort.
  const late = new AbortController();
  const slow = (request) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => fetch(request).then(resolve, reject), 30);
    request.signal.addEventListener('abort', () => { clearTimeout(timer); reject(request.signal.reason); });
  });
  const opening = DeltaTable.open(url('kernel__cdf-table-with-cdc-and-dvs'), { signal: late.signal, fetch: slow });
  setTimeout(() => late.abort(new Error('stop')), 45);
  await rejects(opening, (e) => assertEq(e.name, 'AbortError', 'name'), 'an open aborted part way');
  assertEq(getEventListeners(late.signal, 'abort').length, 0, 'listeners left after the aborted open');
});

await check('abort: an open and a scan reject with AbortError; a second scan works', async () => {
  await rejects(
    DeltaTable.open(url(DV), { signal: AbortSignal.abort() }),
    (e) => {
      assertEq(e.name, 'AbortError', 'name');
      assertEq(e.code, 'aborted', 'code');
    },
    'pre-aborted open',
  );
  const table = await DeltaTable.open(url(DV));
  const controller = new AbortController();
  const scan = table.scan({ batchSize: 1, signal: controller.signal });
  const first = await scan.next();
  assert(!first.done, 'a first batch');
  const pending = scan.next();
  controller.abort(new Error('user cancelled'));
  const err = await rejects(pending, (e) => assertEq(e.code, 'aborted', 'code'), 'aborted next');
  assertEq(err.cause?.message, 'user cancelled', 'cause');
  assert(scan.done, 'the aborted scan is done');
  const aborted = (e) => assertEq(e.name, 'AbortError', 'every later read is the abort');
  await rejects(() => scan.next(), aborted, 'next after abort');
  await rejects(() => scan.toIPC(), aborted, 'toIPC after abort');
  await rejects(() => tableFromIPC(scan), aborted, 'tableFromIPC after abort');
  // An abort while no read is pending (in a for-await body, between reads) ends the scan
  // just the same: never a normal end with the rows read so far.
  const between = new AbortController();
  const scan3 = table.scan({ batchSize: 1, signal: between.signal });
  let pieces = 0;
  await rejects(
    async () => {
      for await (const _ of scan3) {
        if (++pieces === 2) between.abort();
      }
    },
    aborted,
    'abort between reads',
  );
  await rejects(() => tableFromIPC(table.scan({ signal: AbortSignal.abort() })), aborted, 'a pre-aborted scan');
  // break in for await cancels too
  const scan2 = table.scan({ batchSize: 1 });
  for await (const _ of scan2) break;
  assert(scan2.done, 'break ends the scan');
  assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'a later scan reads everything');
});

await check('cancel() is never a normal end: a pending and every later read reject; toIPC() after next() gives the rest', async () => {
  const table = await DeltaTable.open(url(DV));
  const aborted = (e) => {
    assertEq(e.name, 'AbortError', 'name');
    assertEq(e.code, 'aborted', 'code');
  };
  // cancel() in a for-await body: the loop ends with an error, not with the rows so far.
  const scan = table.scan({ batchSize: 1 });
  let pieces = 0;
  await rejects(
    async () => {
      for await (const _ of scan) {
        if (++pieces === 2) scan.cancel();
      }
    },
    aborted,
    'cancel between reads',
  );
  assert(scan.done, 'a cancelled scan is done');
  await rejects(() => scan.next(), aborted, 'next after cancel');
  // cancel() while a next() is pending.
  const scan2 = table.scan({ batchSize: 1 });
  await scan2.next();
  const pending = scan2.next();
  scan2.cancel();
  await rejects(pending, aborted, 'pending next at cancel');
  await rejects(() => tableFromIPC(scan2), aborted, 'tableFromIPC after cancel');
  // cancel() of a scan read to its end changes nothing.
  const whole = table.scan();
  assertEq(await countRows(whole), EXPECT[DV].rows, 'a whole read');
  whole.cancel();
  // toIPC() after next(): the rest of the one stream, and nothing lost on the way.
  const scan3 = table.scan({ batchSize: 1 });
  const first = await scan3.next();
  const second = await scan3.next();
  const rest = await scan3.toIPC();
  assert(scan3.done, 'toIPC reads to the end');
  const rows = tableFromIPC([first.value, second.value, rest]).numRows;
  assertEq(rows, EXPECT[DV].rows, 'first pieces + toIPC()');
  // A refused toIPC() (the scan is read batch by batch) costs that call only.
  const scan4 = table.scan({ batchSize: 1 });
  const batches = scan4.batches();
  let batchRows = (await tableFromIPC((await batches.next()).value)).numRows;
  await rejects(() => scan4.toIPC(), (e) => assertEq(e.code, 'invalid_argument', 'code'), 'toIPC of batches()');
  for await (const one of batches) batchRows += tableFromIPC(one).numRows;
  assertEq(batchRows, EXPECT[DV].rows, 'batches() after a refused toIPC()');
});

await check('a throwing onProgress does not break the read and is reported, not lost', async () => {
  const table = await DeltaTable.open(url(DV));
  const reported = [];
  const original = console.error;
  const originalReport = globalThis.reportError;
  globalThis.reportError = undefined;
  console.error = (...args) => reported.push(args);
  try {
    const scan = table.scan({
      onProgress: () => {
        throw new Error('progress bar broke');
      },
    });
    assertEq(await countRows(scan), EXPECT[DV].rows, 'rows');
  } finally {
    console.error = original;
    globalThis.reportError = originalReport;
  }
  assert(reported.length > 0, 'the error was reported');
  assert(reported.some((args) => args.some((a) => a?.message === 'progress bar broke')), 'the thrown error itself');
});

await check('one continuous IPC stream: apache-arrow and Flechette read every row, by iteration and stream()', async () => {
  const table = await DeltaTable.open(url(DV));
  const rows = EXPECT[DV].rows;
  assert(table.numFiles > 1, 'a multi-file table');
  const whole = await tableFromIPC(table.scan({ batchSize: 2 }));
  assertEq(whole.numRows, rows, 'await tableFromIPC(scan)');
  assert(whole.batches.length > 2, `several batches: ${whole.batches.length}`);
  let viaReader = 0;
  for await (const batch of await RecordBatchReader.from(table.scan({ batchSize: 2 }))) {
    viaReader += batch.numRows;
  }
  assertEq(viaReader, rows, 'RecordBatchReader.from(scan)');
  const { bytes, chunks } = await streamBytes(table.scan({ batchSize: 2 }));
  assert(chunks > 3, `a piece per batch and the end marker: ${chunks}`);
  assertEq(tableFromIPC(bytes).numRows, rows, 'tableFromIPC(the joined pieces)');
  assertEq(flechetteFromIPC(bytes).numRows, rows, 'Flechette, the joined pieces');
  // Each piece holds whole messages, so Flechette takes the pieces as they are (no join).
  const pieces = [];
  for await (const piece of table.scan({ batchSize: 2 })) pieces.push(piece);
  assert(pieces.length > 3, `several pieces: ${pieces.length}`);
  assertEq(flechetteFromIPC(pieces).numRows, rows, 'Flechette, the pieces as an array');
  const streamed = new Uint8Array(await new Response(table.scan({ batchSize: 2 }).stream()).arrayBuffer());
  assertEq(streamed.length, bytes.length, 'stream() gives the bytes iteration gives');
  assertEq(tableFromIPC(streamed).numRows, rows, 'new Response(scan.stream())');
  assertEq(flechetteFromIPC(streamed).numRows, rows, 'Flechette, stream()');
  const empty = await tableFromIPC(table.scan({ filter: 'part = 12345' }));
  assertEq(empty.numRows, 0, 'no rows');
  assertEq(empty.schema.fields.length, 3, 'the schema of an empty result');
  // Cancelling the stream cancels the scan.
  const scan = table.scan({ batchSize: 1 });
  const reader = scan.stream().getReader();
  assert(!(await reader.read()).done, 'a first piece');
  await reader.cancel();
  assert(scan.done, 'stream cancel ends the scan');
});

await check('batches(): one complete stream per batch; a scan is read one way only', async () => {
  const table = await DeltaTable.open(url(DV));
  let rows = 0;
  let count = 0;
  for await (const chunk of table.scan({ batchSize: 2 }).batches()) {
    rows += tableFromIPC(chunk).numRows;
    count++;
  }
  assertEq(rows, EXPECT[DV].rows, 'rows');
  assert(count > 2, `batches: ${count}`);
  const oneWay = (e) => assertEq(e.code, 'invalid_argument', 'code');
  const streamed = table.scan();
  await streamed.next();
  await rejects(() => streamed.batches().next(), oneWay, 'batches() after next()');
  const batched = table.scan();
  await batched.batches().next();
  await rejects(() => batched.next(), oneWay, 'next() after batches()');
  const third = table.scan();
  const head = await third.next();
  const tail = await third.toIPC();
  assertEq(tableFromIPC(concat([head.value, tail])).numRows, EXPECT[DV].rows, 'toIPC() after next(): the rest of the stream');
  const broken = table.scan({ batchSize: 1 });
  for await (const _ of broken.batches()) break;
  assert(broken.done, 'break in batches() ends the scan');
  // A refused call costs that call only: the scan reads on, every row.
  const goesOn = table.scan({ batchSize: 2 });
  const first = await goesOn.next();
  await rejects(() => goesOn.batches().next(), oneWay, 'batches() refused');
  const rest = [first.value];
  for await (const piece of goesOn) rest.push(piece);
  assertEq(tableFromIPC(concat(rest)).numRows, EXPECT[DV].rows, 'every row after a refused call');
  // Steps asked for at once are served in turn, as an async generator's.
  const together = table.scan({ batchSize: 2 });
  const steps = await Promise.all([together.next(), together.next(), together.next()]);
  assert(steps.every((step) => !step.done), 'three pieces');
  const all = steps.map((step) => step.value);
  for await (const piece of together) all.push(piece);
  assertEq(tableFromIPC(concat(all)).numRows, EXPECT[DV].rows, 'every row, in order');
  // A scan read to its end cannot be read again as if it were empty.
  const once = table.scan();
  assertEq((await tableFromIPC(once)).numRows, EXPECT[DV].rows, 'first read');
  await rejects(() => tableFromIPC(once), oneWay, 'a second read of an ended scan');
  await rejects(async () => once.stream(), oneWay, 'stream() of an ended scan');
});

/** Pieces joined into one byte array. */
function concat(pieces) {
  return new Uint8Array(Buffer.concat(pieces));
}

await check('local folder: a path, a file:// URL and a relative path read what HTTP reads', async () => {
  const folder = join(CORPUS, DV);
  const targets = [folder, `${folder}/`, pathToFileURL(`${folder}/`).href, pathToFileURL(folder)];
  for (const target of targets) {
    const table = await DeltaTable.open(target);
    assertEq(table.version, EXPECT[DV].version, `version of ${target}`);
    assertEq(table.loadInfo.discovery, 'listing', 'a folder lists');
    assert(table.location.startsWith('file:///') && table.location.endsWith('/'), table.location);
    assertEq(await countRows(table.scan()), EXPECT[DV].rows, `rows of ${target}`);
  }
  const old = await DeltaTable.open(folder, { version: 3 });
  assertEq(await countRows(old.scan()), EXPECT[DV].versions['3'], 'version 3 from disk');
  const filtered = await DeltaTable.open(folder);
  assertEq(await countRows(filtered.scan({ filter: 'part = 0' })), EXPECT[DV].filtered, 'filter from disk');
  const cwd = process.cwd();
  try {
    process.chdir(CORPUS);
    assertEq(await countRows((await DeltaTable.open(DV)).scan()), EXPECT[DV].rows, 'relative path');
  } finally {
    process.chdir(cwd);
  }
  // A relative path whose first folder has a colon in its name (`colon:dir/T`): a path, as
  // the shell reads it, not a URL of scheme `colon`.
  const colonDir = await mkdtemp(join(tmpdir(), 'dar-colon-'));
  try {
    await cp(folder, join(colonDir, 'at:home', DV), { recursive: true });
    process.chdir(colonDir);
    assertEq(await countRows((await DeltaTable.open(`at:home/${DV}`)).scan()), EXPECT[DV].rows, 'relative path with a colon');
  } finally {
    process.chdir(cwd);
    await rm(colonDir, { recursive: true, force: true });
  }
  await rejects(DeltaTable.open(join(CORPUS, 'no-such-table')), (e) => assertEq(e.code, 'not_a_table', 'code'), 'missing folder');
  const notTables = [join(folder, '_delta_log', '00000000000000000000.json'), '/dev/null'];
  for (const file of notTables) {
    await rejects(DeltaTable.open(file), (e) => assertEq(e.code, 'not_a_table', 'code'), `a file: ${file}`);
  }
  // As natively: another host's file URL and an empty location are invalid locations (the
  // empty one is not the current folder).
  for (const [target, what] of [['file://otherhost/tmp/t/', 'a file URL of another host'], ['', 'an empty location'], ['  ', 'spaces']]) {
    await rejects(
      DeltaTable.open(target),
      (e) => {
        assertEq(e.code, 'invalid_location', 'code');
        assertEq(e.name, 'DeltaError', 'name');
        assertEq(e.phase, 'load', 'phase');
      },
      what,
    );
  }
  for (const options of [5, 'x', [1]]) {
    await rejects(
      DeltaTable.open(folder, options),
      (e) => assertEq(e.code, 'invalid_argument', 'code'),
      `open options ${JSON.stringify(options)}`,
    );
  }
  await rejects(
    DeltaTable.open(folder, { headers: { a: 'b' } }),
    (e) => assertEq(e.code, 'invalid_argument', 'code'),
    'headers on a local table',
  );
  await rejects(
    DeltaTable.open(folder, { answerTimeoutMs: 5 }),
    (e) => assertEq(e.code, 'invalid_argument', 'code'),
    'answerTimeoutMs on a local table',
  );
});

await check('local folder: a FIFO in a table is refused, never opened (no hang)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dar-fifo-'));
  try {
    await cp(join(CORPUS, DV), dir, { recursive: true });
    const table = await DeltaTable.open(dir);
    const victim = table.files()[0].path;
    const onDisk = join(dir, ...decodeURIComponent(victim).split('/'));
    await rm(onDisk);
    execFileSync('mkfifo', [onDisk]);
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('the read waited on the FIFO')), 20_000));
    const err = await rejects(
      Promise.race([countRows(table.scan()), timeout]),
      (e) => assertEq(e.code, 'io', 'code'),
      'FIFO data file',
    );
    assert(err.message.includes('not a regular file'), err.message);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

await check('local folder: a folder or a link to nothing named as the next commit is refused, not skipped', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dar-nextcommit-'));
  try {
    await cp(join(CORPUS, DV), dir, { recursive: true });
    const before = await DeltaTable.open(dir);
    const next = join(dir, '_delta_log', `${String(before.version + 1).padStart(20, '0')}.json`);
    // Merely named after a version: not a log file, the table opens as before.
    await mkdir(`${next}.tmp`);
    assertEq((await DeltaTable.open(dir)).version, before.version, 'a folder NEXT.json.tmp is not a commit');
    await mkdir(next);
    const err = await rejects(DeltaTable.open(dir), (e) => assertEq(e.code, 'io', 'code'), 'a folder named as the next commit');
    assert(err.message.includes('not a regular file'), err.message);
    await rm(next, { recursive: true });
    await symlink(join(dir, 'gone.json'), next);
    const link = await rejects(DeltaTable.open(dir), (e) => assertEq(e.code, 'io', 'code'), 'a link to nothing named as the next commit');
    assert(link.message.includes('symbolic link to nothing'), link.message);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

await check('a byte source object: read and size, found by probing; short answers are errors', async () => {
  const root = join(CORPUS, DV);
  const reads = [];
  const own = {
    read: async (path, start, end) => {
      reads.push(path);
      const bytes = await readFile(join(root, ...path.split('/')));
      return start === undefined ? bytes : bytes.subarray(start, end);
    },
    size: async (path) => (await stat(join(root, ...path.split('/')))).size,
    location: 'memory:///own/',
  };
  const table = await DeltaTable.open(own);
  assertEq(table.loadInfo.discovery, 'probing', 'no list(): probing');
  assertEq(table.location, 'memory:///own/', 'location');
  assertEq(await countRows(table.scan()), EXPECT[DV].rows, 'rows');
  assert(reads.every((p) => !p.startsWith('/') && !p.split('/').includes('..')), 'paths below the root');
  const listing = await DeltaTable.open({
    ...own,
    list: async (prefix) => {
      const dir = join(root, '_delta_log');
      const { readdir } = await import('node:fs/promises');
      const names = await readdir(dir);
      return Promise.all(names.map(async (n) => ({ path: `_delta_log/${n}`, size: (await stat(join(dir, n))).size })));
    },
  });
  assertEq(listing.loadInfo.discovery, 'listing', 'with list(): listing');
  assertEq(await countRows(listing.scan()), EXPECT[DV].rows, 'rows when listed');
  const short = { ...own, read: async (...args) => (await own.read(...args)).subarray(1) };
  await rejects(
    (async () => countRows((await DeltaTable.open(short)).scan()))(),
    (e) => assert(typeof e.code === 'string' && e.code !== 'internal', `a typed error: ${e.code}`),
    'a source that answers short',
  );
  await rejects(DeltaTable.open({ read: 'nope' }), (e) => assertEq(e.code, 'invalid_argument', 'code'), 'not a source');
});

await check('requestInit and fetch: a table behind an Authorization header', async () => {
  const TOKEN = 'Bearer t0ken-secret';
  const proxy = createServer(async (req, res) => {
    if (req.headers.authorization !== TOKEN) {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('unauthorized');
      return;
    }
    const upstream = await fetch(new URL(req.url.slice(1), BASE), {
      headers: req.headers.range ? { range: req.headers.range } : {},
    });
    const headers = { 'content-type': 'application/octet-stream' };
    const range = upstream.headers.get('content-range');
    if (range) headers['content-range'] = range;
    res.writeHead(upstream.status, headers);
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise((done) => proxy.listen(0, '127.0.0.1', done));
  const behind = `http://127.0.0.1:${proxy.address().port}/${DV}/`;
  try {
    const err = await rejects(DeltaTable.open(behind, { retries: 0 }), (e) => assertEq(e.code, 'io', 'code'), 'no token');
    assert(err.message.includes('401'), err.message);
    const viaInit = await DeltaTable.open(behind, {
      requestInit: { headers: new Headers({ Authorization: TOKEN }), cache: 'no-cache', credentials: 'omit' },
    });
    assertEq(await countRows(viaInit.scan()), EXPECT[DV].rows, 'rows with requestInit.headers');
    const seen = [];
    const viaFetch = await DeltaTable.open(behind, {
      fetch: (request) => {
        seen.push(request.url);
        const headers = new Headers(request.headers);
        headers.set('authorization', TOKEN);
        return fetch(new Request(request, { headers }));
      },
    });
    assertEq(await countRows(viaFetch.scan()), EXPECT[DV].rows, 'rows through the caller fetch');
    const fetched = viaFetch.metrics.getRequests + viaFetch.metrics.rangeRequests;
    assertEq(seen.length, fetched, 'every request went through the caller fetch');
    const refused = (e) => assertEq(e.code, 'invalid_argument', 'code');
    await rejects(DeltaTable.open(behind, { requestInit: { method: 'POST' } }), refused, 'method POST');
    await rejects(DeltaTable.open(behind, { requestInit: { signal: AbortSignal.timeout(1000) } }), refused, 'signal in requestInit');
    await rejects(DeltaTable.open(behind, { fetch: 'nope' }), refused, 'fetch not a function');
    const notResponse = await rejects(
      DeltaTable.open(behind, { fetch: async () => ({ nope: true }), retries: 0 }),
      (e) => assertEq(e.code, 'io', 'code'),
      'a fetch that gives no Response',
    );
    assert(!notResponse.message.includes('t0ken'), 'no token in errors');
    // A partial mock (no statusText, no body) is an answer or a typed error, never an
    // exception thrown outside the read.
    for (const answer of [{ status: 500, ok: false, headers: new Headers() }, { status: 200 }]) {
      await rejects(
        DeltaTable.open(behind, { fetch: async () => answer, retries: 0 }),
        (e) => assertEq(e.code, 'io', 'code'),
        `a fetch resolving to ${JSON.stringify(answer)}`,
      );
    }
    // `headers` win over the same header in requestInit.headers: sent once, theirs.
    const both = await DeltaTable.open(behind, {
      requestInit: { headers: { Authorization: 'Bearer stale' } },
      headers: { authorization: TOKEN },
    });
    assertEq(await countRows(both.scan()), EXPECT[DV].rows, 'rows with headers over requestInit.headers');
    // Bodies are read from their stream; a Response-like object without one is read with
    // arrayBuffer(), and a body whose stream the caller locked fails cleanly.
    const authorized = (request) => {
      const headers = new Headers(request.headers);
      headers.set('authorization', TOKEN);
      return fetch(new Request(request, { headers }));
    };
    const likeResponse = await DeltaTable.open(behind, {
      fetch: async (request) => {
        const r = await authorized(request);
        const body = await r.arrayBuffer();
        return { status: r.status, ok: r.ok, statusText: r.statusText, headers: r.headers, arrayBuffer: async () => body };
      },
    });
    assertEq(await countRows(likeResponse.scan()), EXPECT[DV].rows, 'rows through Response-like objects');
    const locked = await rejects(
      DeltaTable.open(behind, {
        retries: 0,
        fetch: async (request) => {
          const r = await authorized(request);
          r.body?.getReader();
          return r;
        },
      }),
      (e) => assertEq(e.code, 'io', 'code'),
      'a body locked by the caller',
    );
    assert(locked.message.length > 0, 'a message');
  } finally {
    proxy.close();
  }
});

/** Every row of an apache-arrow table as text, in order. */
function rowsText(table) {
  return table.toArray().map((row) => JSON.stringify(row?.toJSON?.() ?? row, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
}

/** A one-file Delta table in a new folder around `parquet` (bytes), with `table`'s columns
 * (their column-mapping metadata dropped: the file holds the logical names). */
async function oneFileTable(table, parquet) {
  const dir = await mkdtemp(join(tmpdir(), 'dar-parquet-'));
  await mkdir(join(dir, '_delta_log'));
  await writeFile(join(dir, 'part-0.parquet'), parquet);
  const plain = (field) => ({
    name: field.name,
    type: field.type,
    nullable: field.nullable,
    metadata: Object.fromEntries(Object.entries(field.metadata ?? {}).filter(([k]) => !k.startsWith('delta.columnMapping'))),
  });
  const schema = { type: 'struct', fields: table.schema.fields.map(plain) };
  const actions = [
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    { metaData: { id: 'toParquet', format: { provider: 'parquet', options: {} }, schemaString: JSON.stringify(schema), partitionColumns: [], configuration: {}, createdTime: 0 } },
    { add: { path: 'part-0.parquet', partitionValues: {}, size: parquet.byteLength, modificationTime: 0, dataChange: true } },
  ];
  await writeFile(join(dir, '_delta_log', '00000000000000000000.json'), actions.map((a) => JSON.stringify(a)).join('\n'));
  return dir;
}

await check('toParquet: a scan written as Parquet reads back the same rows, here and in hyparquet', async () => {
  const { toParquet } = await import('delta-arrow-reader/parquet');
  const { parquetMetadata, parquetReadObjects } = await import('hyparquet');
  for (const name of [DV, CM, 'golden__parquet-all-types', 'deltars__simple_table']) {
    const table = await DeltaTable.open(join(CORPUS, name));
    const want = rowsText(tableFromIPC(await table.scan().toIPC()));
    const file = await toParquet(table.scan({ batchSize: 7 }), { rowGroupRows: 16 });
    assert(file instanceof Uint8Array && new TextDecoder().decode(file.subarray(0, 4)) === 'PAR1', `${name}: a Parquet file`);
    const buffer = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
    const metadata = parquetMetadata(buffer);
    assertEq(Number(metadata.num_rows), want.length, `${name}: rows in the footer`);
    assertEq(metadata.row_groups.length, Math.max(1, Math.ceil(want.length / 16)), `${name}: row groups of 16 rows`);
    assertEq((await parquetReadObjects({ file: buffer, metadata })).length, want.length, `${name}: rows hyparquet reads`);
    const dir = await oneFileTable(table, file);
    try {
      const back = await DeltaTable.open(dir);
      const got = rowsText(tableFromIPC(await back.scan({ columns: table.schema.fields.map((f) => f.name) }).toIPC()));
      assertEq(got.length, want.length, `${name}: rows read back`);
      const differ = got.findIndex((row, i) => row !== want[i]);
      assert(differ < 0, `${name}: row ${differ} read back as ${got[differ]}, written ${want[differ]}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
});

await check('delta-arrow-reader/parquet.js is the Node build in Node, as delta-arrow-reader/parquet is', async () => {
  const byName = await import('delta-arrow-reader/parquet.js');
  const table = await DeltaTable.open(join(CORPUS, 'deltars__simple_table'));
  const file = await byName.toParquet(table.scan());
  assert(new TextDecoder().decode(file.subarray(0, 4)) === 'PAR1', 'a Parquet file');
});

await check('toParquet: the pieces of scan.batches() (whole streams end to end) are joined, not cut at the first', async () => {
  const { toParquet } = await import('delta-arrow-reader/parquet');
  const { parquetMetadata } = await import('hyparquet');
  const rowsIn = (file) => Number(parquetMetadata(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength)).num_rows);
  const table = await DeltaTable.open(join(CORPUS, DV));
  const rows = EXPECT[DV].rows;
  assertEq(rowsIn(await toParquet(table.scan({ batchSize: 4 }).batches())), rows, 'batches() as the input');
  const pieces = [];
  for await (const piece of table.scan({ batchSize: 4 }).batches()) pieces.push(piece);
  assert(pieces.length > 2, `several pieces (${pieces.length})`);
  assertEq(rowsIn(await toParquet(new Blob(pieces))), rows, 'a Blob of the pieces');
  // Streams of different schemas cannot be one: refused, not cut.
  const other = await (await DeltaTable.open(join(CORPUS, 'deltars__simple_table'))).scan().toIPC();
  const mixed = new Uint8Array([...pieces[0], ...other]);
  await rejects(toParquet(mixed), (e) => {
    assertEq(e.code, 'invalid_argument', 'code');
    assert(/schemas differ/.test(e.message), e.message);
  }, 'two schemas');
  await rejects(toParquet(pieces[0], { rowGroupRow: 2 }), (e) => {
    assertEq(e.code, 'invalid_argument', 'code');
    assert(/rowGroupRows/.test(e.message), e.message);
  }, 'a misspelt option');
});

await check('toParquet: bad input is a typed error, and a stream that traps the writer costs that call only', async () => {
  const { toParquet } = await import('delta-arrow-reader/parquet');
  const refused = (e) => assertEq(e.code, 'invalid_argument', 'code');
  await rejects(toParquet(new Uint8Array([1, 2, 3])), refused, 'three bytes');
  await rejects(toParquet(42), refused, 'a number');
  await rejects(toParquet(new Uint8Array(8), { rowGroupRows: 0 }), refused, 'rowGroupRows 0');
  const table = await DeltaTable.open(join(CORPUS, DV));
  const good = await table.scan().toIPC();
  const rows = EXPECT[DV].rows;
  let traps = 0;
  let errors = 0;
  for (let at = 0; at < good.byteLength; at += 11) {
    const bad = good.slice();
    bad[at] ^= 0x5a;
    try {
      const file = await toParquet(bad);
      assert(new TextDecoder().decode(file.subarray(0, 4)) === 'PAR1', `flipped byte ${at}: not a Parquet file`);
    } catch (error) {
      refused(error);
      if (error.cause instanceof WebAssembly.RuntimeError) traps++;
      else errors++;
    }
  }
  // After every trap, the next call gets a fresh writer.
  const file = await toParquet(good);
  const buffer = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
  const { parquetMetadata } = await import('hyparquet');
  assertEq(Number(parquetMetadata(buffer).num_rows), rows, 'rows after the hostile streams');
  console.log(`     flipped bytes: ${errors} errors, ${traps} traps`);
});

console.log(`node: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
