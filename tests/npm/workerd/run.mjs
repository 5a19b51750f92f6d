// The npm package in a Cloudflare-Workers-like module environment: starts workerd through
// Miniflare with worker.mjs (the package's index.js and its .wasm imported as a
// CompiledWasm module), sends it requests naming tables served over HTTP, and checks what
// it answers against the native reader's counts. scripts/test-npm copies run.mjs and
// worker.mjs into a folder where the tarball, miniflare and @uwdata/flechette@2.6 are
// installed (worker.mjs imports ./node_modules/ paths).
//
//   DAR_BASE, DAR_EXPECT   as for node-test.mjs and runtime-test.mjs
//   DAR_WORKER_SCRIPT      the Worker to run (default worker.mjs here): scripts/test-npm also
//                          runs the bundle `wrangler deploy --dry-run` makes of worker.mjs
//                          with the package's own names in its imports
//   DAR_WORKERD_LABEL      the name in the result lines (default workerd)
//
// Closes with `LABEL: N passed, N failed`.
import process from 'node:process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { tableFromIPC } from '@uwdata/flechette';

const BASE = process.env.DAR_BASE?.replace(/\/?$/, '/');
const LABEL = process.env.DAR_WORKERD_LABEL ?? 'workerd';
const EXPECT = JSON.parse(process.env.DAR_EXPECT ?? '{}');
let passed = 0;
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${LABEL}: ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${LABEL}: ${name}: ${error?.stack ?? error}`);
  }
}
function assertEq(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${expected}, got ${actual}`);
}

if (!BASE) {
  console.log(`FAIL ${LABEL}: DAR_BASE is not set`);
  console.log(`${LABEL}: 0 passed, 1 failed`);
  process.exit(1);
}

const HERE = dirname(fileURLToPath(import.meta.url));
const SCRIPT = resolve(process.env.DAR_WORKER_SCRIPT ?? `${HERE}/worker.mjs`);
const mf = new Miniflare({
  modules: true,
  scriptPath: SCRIPT,
  modulesRoot: dirname(SCRIPT),
  // The package is ESM throughout ("type": "module"); Miniflare's default takes .js as
  // CommonJS.
  modulesRules: [
    { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
    { type: 'CompiledWasm', include: ['**/*.wasm'] },
  ],
  compatibilityDate: '2025-09-01',
  // Outbound fetch goes to workerd's "internet" service, which Miniflare lets reach private
  // addresses (127.0.0.1 included).
});

async function ask(path, params) {
  const res = await mf.dispatchFetch(`http://worker${path}?${new URLSearchParams(params)}`);
  if (res.headers.get('content-type')?.startsWith('application/json')) {
    const body = await res.json();
    if (!res.ok) throw Object.assign(new Error(`${res.status}: ${body.code}: ${body.error}`), body);
    return body;
  }
  if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

try {
  for (const [name, expected] of Object.entries(EXPECT)) {
    const table = `${BASE}${name}/`;
    await check(`${name} over HTTP: ${expected.rows} rows`, async () => {
      const r = await ask('/count', { table });
      assertEq(r.runtime, 'Cloudflare-Workers', 'navigator.userAgent in the Worker');
      assertEq(r.version, expected.version, 'version');
      assertEq(r.rows, expected.rows, 'rows as one stream');
      assertEq(r.batchedRows, expected.rows, 'rows batch by batch');
      assertEq(r.rowsEmitted, expected.rows, 'scan.metrics.rowsEmitted');
    });
    await check(`${name}: the Worker answers the IPC stream: ${expected.rows} rows`, async () => {
      const bytes = await ask('/ipc', { table });
      assertEq(tableFromIPC(bytes).numRows, expected.rows, 'rows decoded in Node');
    });
    for (const [version, rows] of Object.entries(expected.versions ?? {})) {
      await check(`${name} at version ${version}: ${rows} rows`, async () => {
        const r = await ask('/count', { table, version });
        assertEq(r.version, Number(version), 'version');
        assertEq(r.rows, rows, 'rows');
      });
    }
    if (expected.filtered !== undefined) {
      await check(`${name} with part = 0: ${expected.filtered} rows`, async () => {
        const r = await ask('/count', { table, filter: 'part = 0' });
        assertEq(r.rows, expected.filtered, 'rows');
        assertEq(r.batchedRows, expected.filtered, 'rows batch by batch');
      });
    }
  }
  await check('a missing table: not_a_table', async () => {
    let error;
    await ask('/count', { table: `${BASE}no-such-table/` }).catch((e) => (error = e));
    assertEq(error?.code, 'not_a_table', 'code');
  });
} finally {
  await mf.dispose();
}
console.log(`${LABEL}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
