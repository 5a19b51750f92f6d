// A Vite-built app using the npm package: reads the tables named in ?tables=a,b (served by
// `dar serve` at the site root) and prints { table: rows } to #result. Each table is read
// several ways that must agree: the scan as one IPC stream (apache-arrow from the async
// iterable, Flechette from `stream()`), batch by batch, `toIPC()`, and a copy of the table
// in the Origin Private File System read through a FileSystemDirectoryHandle.
import { DeltaTable, openInWorker, toParquetInWorker } from 'delta-arrow-reader';
import { RecordBatchReader, tableFromIPC } from 'apache-arrow';
import { tableFromIPC as flechetteFromIPC } from '@uwdata/flechette';

function agree(name, what, got, want) {
  if (got !== want) throw new Error(`${name}: ${what} gave ${got} rows, the stream ${want}`);
}

/** Copies the table's files (from files.json, next to this site) into OPFS; its handle. */
async function copyToOpfs(name, files) {
  const root = await navigator.storage.getDirectory();
  await root.removeEntry(name, { recursive: true }).catch(() => {});
  const top = await root.getDirectoryHandle(name, { create: true });
  for (const path of files) {
    const parts = path.split('/');
    let dir = top;
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
    const answer = await fetch(`/${name}/${parts.map(encodeURIComponent).join('/')}`);
    if (!answer.ok) throw new Error(`${name}: cannot copy ${path}: HTTP ${answer.status}`);
    const writable = await (await dir.getFileHandle(parts.at(-1), { create: true })).createWritable();
    await writable.write(await answer.arrayBuffer());
    await writable.close();
  }
  return top;
}

/** A folder named as the next commit (in the OPFS copy, and among the files of a picked
 * folder, where it shows as the files inside it) is refused with code io, never passed
 * over: the log would seem to end before it. */
async function aFolderNamedAsTheNextCommitIsRefused(name, handle, files, version) {
  const next = `${String(version + 1).padStart(20, '0')}.json`;
  const refused = async (target, what) => {
    let error = null;
    try {
      await DeltaTable.open(target);
    } catch (e) {
      error = e;
    }
    if (error?.code !== 'io') throw new Error(`${name}: ${what} was not refused (${error?.code ?? 'opened'})`);
  };
  const log = await handle.getDirectoryHandle('_delta_log');
  await log.getDirectoryHandle(next, { create: true });
  try {
    await refused(handle, `a folder _delta_log/${next} in OPFS`);
  } finally {
    await log.removeEntry(next, { recursive: true });
  }
  const picked = async (path) => {
    let dir = handle;
    const parts = path.split('/');
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
    const file = await (await dir.getFileHandle(parts.at(-1))).getFile();
    return Object.defineProperty(new File([file], parts.at(-1)), 'webkitRelativePath', { value: `${name}/${path}` });
  };
  const list = await Promise.all(files.map(picked));
  if ((await DeltaTable.open(list)).version !== version) throw new Error(`${name}: the picked files at another version`);
  list.push(Object.defineProperty(new File(['{}'], 'x'), 'webkitRelativePath', { value: `${name}/_delta_log/${next}/x` }));
  await refused(list, `a folder _delta_log/${next} among picked files`);
}

/** The same table opened and read in a Web Worker: the same rows, progress on this page,
 * and a cancelled scan stops. Returns the longest stall of this page's event loop seen
 * while the worker read (a timer ticking every 5 ms). */
async function inWorker(name, table, rows) {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    const remote = await openInWorker(`/${name}/`);
    if (remote.version !== table.version || remote.numFiles !== table.numFiles) {
      throw new Error(`${name}: the worker opened version ${remote.version} with ${remote.numFiles} files`);
    }
    const events = [];
    const scan = await remote.scan({ batchSize: 3, onProgress: (p) => events.push(p) });
    agree(name, 'the worker stream', (await tableFromIPC(scan)).numRows, rows);
    if (!scan.done || scan.metrics.rowsEmitted !== rows) throw new Error(`${name}: worker metrics ${JSON.stringify(scan.metrics)}`);
    if (events.length === 0 || events.at(-1).filesDone !== events.at(-1).filesTotal) {
      throw new Error(`${name}: worker progress ${JSON.stringify(events.at(-1))}`);
    }
    let batched = 0;
    for await (const chunk of (await remote.scan()).batches()) batched += tableFromIPC(chunk).numRows;
    agree(name, 'the worker batches()', batched, rows);
    // The worker writes a stream as Parquet (its writer's .wasm found through the bundle).
    const parquet = await toParquetInWorker(new Blob([await (await remote.scan()).toIPC()]));
    const magic = (at) => new TextDecoder().decode(parquet.subarray(at, at + 4));
    if (!(parquet instanceof Uint8Array) || magic(0) !== 'PAR1' || magic(parquet.byteLength - 4) !== 'PAR1') {
      throw new Error(`${name}: toParquetInWorker gave no Parquet file`);
    }
    const refused = await toParquetInWorker(new Uint8Array([1, 2, 3])).then(() => 'resolved', (e) => e.code);
    if (refused !== 'invalid_argument') throw new Error(`${name}: toParquetInWorker on 3 bytes: ${refused}`);
    if ((await remote.files()).length !== table.numFiles) throw new Error(`${name}: worker files()`);
    // The worker's scan plans the same files out as one on this thread.
    const part = table.partitionColumns.find((c) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(c));
    if (part !== undefined) {
      const filter = `${part} is null`;
      const local = table.scan({ filter });
      const there = await remote.scan({ filter });
      const [a, b] = [JSON.stringify(local.skippedFiles), JSON.stringify(there.skippedFiles)];
      local.cancel();
      there.cancel();
      if (a !== b || local.skippedFiles === undefined) throw new Error(`${name}: skippedFiles in the worker ${b}, on the page ${a}`);
    }
    const controller = new AbortController();
    const cancelled = await remote.scan({ batchSize: 1, signal: controller.signal });
    await cancelled.next();
    controller.abort();
    // Aborted between reads: every later read is the abort, never a normal end.
    if (!cancelled.done || (await failure(cancelled.next())) !== 'aborted') throw new Error(`${name}: an aborted worker scan goes on`);
    // A signal aborted before the scan: the scan opens, its reads are the abort (was: a
    // TypeError from the scan's own clean-up).
    const early = new AbortController();
    early.abort();
    const never = await remote.scan({ batchSize: 1, signal: early.signal });
    if ((await failure(never.next())) !== 'aborted') throw new Error(`${name}: a worker scan with an aborted signal`);
    // A progress callback that is not a function is refused as on the page (was: accepted,
    // then an error on the page's thread at every progress event).
    if ((await failure(remote.scan({ onProgress: 5 }))) !== 'invalid_argument') throw new Error(`${name}: a worker scan took onProgress: 5`);
    // cancel() is never a normal end either, pending read or not.
    const stopped = await remote.scan({ batchSize: 1 });
    await stopped.next();
    const pending = stopped.next();
    stopped.cancel();
    const [atCancel, afterCancel] = [await failure(pending), await failure(stopped.next())];
    if (afterCancel !== 'aborted' || !['aborted', 'resolved'].includes(atCancel)) {
      throw new Error(`${name}: a cancelled worker scan: pending read ${atCancel}, later read ${afterCancel}`);
    }
    // toIPC() after next(): the rest of the one stream.
    const begun = await remote.scan({ batchSize: 1 });
    const head = await begun.next();
    const tail = await begun.toIPC();
    agree(name, 'the worker next() then toIPC()', tableFromIPC([head.value, tail]).numRows, rows);
    // A worker scan read to its end cannot be read again as if it were empty.
    if ((await failure(tableFromIPC(scan))) !== 'invalid_argument') throw new Error(`${name}: an ended worker scan read again`);
    remote.free();
    await inTwoWorkers(name, rows);
  } finally {
    clearInterval(timer);
  }
  return longest;
}

/** The code `promise` rejects with ('resolved' when it does not). */
async function failure(promise) {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error?.code ?? String(error);
  }
}

/** Every row of an apache-arrow table as text, sorted: two reads hold the same rows when
 * these are equal. */
function rowsText(table) {
  const text = (row) => JSON.stringify(row?.toJSON?.() ?? row, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
  return table.toArray().map(text).sort();
}

/** One scan read by two workers (`parallel: true`, so even a small table is cut in two):
 * the same rows as one worker reads, every way of reading, merged metrics and progress, and
 * cancelling stops both. */
async function inTwoWorkers(name, rows) {
  const pair = await openInWorker(`/${name}/`, {}, { workers: 2 });
  try {
    const single = await pair.scan({ parallel: false });
    if (single.parts !== 1) throw new Error(`${name}: parallel: false read by ${single.parts} workers`);
    const want = rowsText(tableFromIPC(await single.toIPC()));
    const events = [];
    const split = await pair.scan({ parallel: true, batchSize: 3, onProgress: (p) => events.push(p) });
    if (split.parts !== 2) throw new Error(`${name}: parallel: true read by ${split.parts} workers`);
    const got = rowsText(await tableFromIPC(split));
    if (got.length !== rows || JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`${name}: two workers read ${got.length} rows, ${got.filter((r, i) => r !== want[i]).length} unlike one worker's ${want.length}`);
    }
    const m = split.metrics;
    if (!split.done || !m.done || m.rowsEmitted !== rows || m.filesPlanned !== single.metrics.filesPlanned) {
      throw new Error(`${name}: two workers' metrics ${JSON.stringify(m)}`);
    }
    const last = events.at(-1);
    if (!last || last.filesDone !== last.filesTotal || last.bytesDone !== last.bytesTotal || last.filesTotal !== single.metrics.filesToRead) {
      throw new Error(`${name}: two workers' progress ${JSON.stringify(events)}`);
    }
    const streamed = new Uint8Array(await new Response((await pair.scan({ parallel: true })).stream()).arrayBuffer());
    agree(name, 'Flechette on two workers\' stream()', flechetteFromIPC(streamed).numRows, rows);
    agree(name, 'two workers\' toIPC()', tableFromIPC(await (await pair.scan({ parallel: true })).toIPC()).numRows, rows);
    let batched = 0;
    for await (const chunk of (await pair.scan({ parallel: true, batchSize: 2 })).batches()) batched += tableFromIPC(chunk).numRows;
    agree(name, 'two workers\' batches()', batched, rows);
    const controller = new AbortController();
    const cancelled = await pair.scan({ parallel: true, batchSize: 1, signal: controller.signal });
    await cancelled.next();
    controller.abort();
    if (!cancelled.done || (await failure(cancelled.next())) !== 'aborted') throw new Error(`${name}: an aborted two-worker scan goes on`);
    const early = new AbortController();
    early.abort();
    const never = await pair.scan({ parallel: true, batchSize: 1, signal: early.signal });
    if ((await failure(never.next())) !== 'aborted') throw new Error(`${name}: a two-worker scan with an aborted signal`);
    const stopped = await pair.scan({ parallel: true, batchSize: 1 });
    await stopped.next();
    stopped.cancel();
    if ((await failure(stopped.next())) !== 'aborted') throw new Error(`${name}: a cancelled two-worker scan ends normally`);
    const begun = await pair.scan({ parallel: true, batchSize: 1 });
    const head = await begun.next();
    agree(name, 'two workers\' next() then toIPC()', tableFromIPC([head.value, await begun.toIPC()]).numRows, rows);
    // Both workers are still usable after the cancel.
    agree(name, 'two workers after a cancel', (await tableFromIPC(await (await pair.scan({ parallel: true })).toIPC())).numRows, rows);
  } finally {
    pair.free();
  }
}

/** A worker whose script cannot be loaded: every open through it rejects with code `io`,
 * the second as the first (a failed worker kept left later opens pending for ever). */
async function aFailedWorkerIsReported() {
  const broken = new Worker('/no-such-worker.js', { type: 'module' });
  const hung = (promise) => Promise.race([failure(promise), new Promise((resolve) => setTimeout(() => resolve('pending after 5 s'), 5000))]);
  for (const attempt of ['first', 'second']) {
    const got = await hung(openInWorker('/no-such-table/', {}, { worker: broken }));
    if (got !== 'io') throw new Error(`the ${attempt} open in a worker that failed: ${got}`);
  }
  broken.terminate();
}

async function main() {
  const out = document.getElementById('result');
  try {
    await aFailedWorkerIsReported();
    const names = (new URLSearchParams(location.search).get('tables') ?? '').split(',');
    const files = await (await fetch('../files.json')).json();
    const counts = {};
    for (const name of names.filter(Boolean)) {
      // Root-relative: the package resolves it against the page.
      const table = await DeltaTable.open(`/${name}/`);
      const rows = (await tableFromIPC(table.scan({ batchSize: 3 }))).numRows;
      let viaReader = 0;
      for await (const batch of await RecordBatchReader.from(table.scan({ batchSize: 3 }))) viaReader += batch.numRows;
      agree(name, 'RecordBatchReader.from(scan)', viaReader, rows);
      const streamed = new Uint8Array(await new Response(table.scan({ batchSize: 3 }).stream()).arrayBuffer());
      agree(name, 'Flechette on stream()', flechetteFromIPC(streamed).numRows, rows);
      let batched = 0;
      for await (const chunk of table.scan().batches()) batched += tableFromIPC(chunk).numRows;
      agree(name, 'batches()', batched, rows);
      agree(name, 'toIPC()', tableFromIPC(await table.scan().toIPC()).numRows, rows);
      const handle = await copyToOpfs(name, files[name] ?? []);
      const local = await DeltaTable.open(handle);
      if (local.version !== table.version) throw new Error(`${name}: OPFS copy at version ${local.version}`);
      agree(name, 'the OPFS copy', (await tableFromIPC(local.scan())).numRows, rows);
      if (name === names[0]) await aFolderNamedAsTheNextCommitIsRefused(name, handle, files[name] ?? [], table.version);
      await inWorker(name, table, rows);
      counts[name] = rows;
    }
    out.textContent = JSON.stringify(counts);
    out.dataset.status = 'done';
  } catch (error) {
    out.textContent = `${error?.name}: ${error?.message} (code ${error?.code})`;
    out.dataset.status = 'error';
  }
}
main();
