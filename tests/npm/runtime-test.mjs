// The npm package in other JavaScript runtimes: run by scripts/test-npm with Bun and with Deno
// (both installed from the npm registry) in the folder where the tarball is installed. Reads
// a corpus table over HTTP and from its folder on disk, as one IPC stream and batch by batch,
// and checks the rows against the native reader's count.
//
//   DAR_BASE, DAR_CORPUS, DAR_EXPECT   as for node-test.mjs
//   DAR_RUNTIME                        the name printed in the closing line
//
// Closes with `NAME: N passed, N failed`.
import process from 'node:process';
import { join } from 'node:path';
import { DeltaTable } from 'delta-arrow-reader';
import { tableFromIPC } from 'apache-arrow';

const BASE = process.env.DAR_BASE?.replace(/\/?$/, '/');
const CORPUS = process.env.DAR_CORPUS;
const EXPECT = JSON.parse(process.env.DAR_EXPECT ?? '{}');
const NAME = process.env.DAR_RUNTIME ?? 'runtime';
let passed = 0;
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${NAME}: ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${NAME}: ${name}: ${error?.stack ?? error} (code ${error?.code})`);
  }
}
function assertEq(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${expected}, got ${actual}`);
}

for (const [name, expected] of Object.entries(EXPECT)) {
  await check(`${name} over HTTP: ${expected.rows} rows`, async () => {
    const table = await DeltaTable.open(`${BASE}${name}/`);
    assertEq(table.version, expected.version, 'version');
    assertEq((await tableFromIPC(table.scan({ batchSize: 4 }))).numRows, expected.rows, 'rows as one stream');
    let batched = 0;
    for await (const chunk of table.scan().batches()) batched += tableFromIPC(chunk).numRows;
    assertEq(batched, expected.rows, 'rows batch by batch');
  });
  await check(`${name} from its folder: ${expected.rows} rows`, async () => {
    const table = await DeltaTable.open(join(CORPUS, name));
    assertEq(table.loadInfo.discovery, 'listing', 'discovery');
    assertEq((await tableFromIPC(table.scan())).numRows, expected.rows, 'rows');
  });
}

console.log(`${NAME}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
