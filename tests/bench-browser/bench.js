// One task of the browser benchmark, run by one reader, in a fresh page: the address says
// which (`?reader=ours|ours-workers|parquet-wasm|hyparquet&task=first100|columns2|full|dv&table=URL
// &file=URL&columns=a,b`). The reader's module is loaded (and its wasm compiled) before the
// clock starts; the timed part opens the table or file and reads the task's rows. The
// result goes to `window.benchResult`: milliseconds, rows, the wasm memory after the read
// and the JS heap, or the error.

const params = new URLSearchParams(location.search);
const reader = params.get('reader');
const task = params.get('task');
const tableUrl = params.get('table');
const fileUrl = params.get('file');
const columns = (params.get('columns') ?? '').split(',').filter(Boolean);

/** Each reader: `load()` before the clock, `run()` timed, `memory()` after. */
/** The pieces of a scan (one Arrow IPC stream, each piece whole messages) and their bytes:
 * Flechette reads the array of pieces as it is, so they are not joined. */
async function piecesOf(scan) {
  const pieces = [];
  for await (const piece of scan) pieces.push(piece);
  return { pieces, bytes: pieces.reduce((n, p) => n + p.byteLength, 0) };
}

const readers = {
  async ours() {
    const lib = await import('delta-arrow-reader');
    const { tableFromIPC } = await import('@uwdata/flechette');
    await lib.init();
    // wasm-bindgen's init hands back the instance's exports once it is loaded.
    const glue = await import('./pkg/delta_arrow_reader.js');
    const exports = await glue.default();
    return {
      async run() {
        const table = await lib.DeltaTable.open(tableUrl);
        const options = task === 'first100' ? { limit: 100 } : task === 'columns2' ? { columns } : {};
        // The result as Arrow IPC bytes in JS, as parquet-wasm's below; the rows are counted
        // by decoding the stream's batches with Flechette (mostly views over the bytes),
        // which takes the scan's pieces as they come.
        const { pieces, bytes } = await piecesOf(table.scan(options));
        table.free?.();
        return { rows: tableFromIPC(pieces).numRows, ipcBytes: bytes };
      },
      memory: () => exports.memory.buffer.byteLength,
    };
  },
  // The package's Web Worker reader: the table opened in one worker, a big scan read by one
  // worker per core (each a part of its files), the pieces merged on the page.
  async 'ours-workers'() {
    const lib = await import('delta-arrow-reader');
    const { tableFromIPC } = await import('@uwdata/flechette');
    const count = Math.max(1, Math.min(4, navigator.hardwareConcurrency ?? 1));
    const workers = Array.from({ length: count }, () => new Worker(new URL('./pkg/worker.js', location.href), { type: 'module' }));
    // Each worker loads and compiles its wasm before the clock (an open of a missing table
    // fails at once, after the load).
    const missing = new URL('missing-table/', tableUrl).href;
    await Promise.all(workers.map((worker) => lib.openInWorker(missing, {}, { worker }).catch(() => null)));
    let table = null;
    return {
      async run() {
        table = await lib.openInWorker(tableUrl, {}, { workers });
        const options = task === 'first100' ? { limit: 100 } : task === 'columns2' ? { columns } : {};
        const scan = await table.scan(options);
        const { pieces, bytes } = await piecesOf(scan);
        return { rows: tableFromIPC(pieces).numRows, ipcBytes: bytes, workers: scan.parts };
      },
      // The wasm memory of every worker that read, summed.
      memory: async () => (await table.memory()).reduce((a, b) => a + b, 0),
    };
  },
  async 'parquet-wasm'() {
    const pw = await import('parquet-wasm');
    const { tableFromIPC } = await import('@uwdata/flechette');
    await pw.default();
    return {
      async run() {
        const file = await pw.ParquetFile.fromUrl(fileUrl);
        const options = task === 'first100' ? { limit: 100 } : task === 'columns2' ? { columns } : {};
        const table = await file.read(options);
        // Into JS as Arrow IPC bytes, as ours; rows counted the same way.
        const ipc = table.intoIPCStream();
        file.free();
        return { rows: tableFromIPC(ipc).numRows, ipcBytes: ipc.byteLength };
      },
      memory: () => pw.wasmMemory().buffer.byteLength,
    };
  },
  async hyparquet() {
    const hp = await import('hyparquet');
    return {
      async run() {
        const file = await hp.asyncBufferFromUrl({ url: fileUrl });
        const metadata = await hp.parquetMetadataAsync(file);
        if (task === 'first100') {
          const rows = await hp.parquetReadObjects({ file, metadata, rowStart: 0, rowEnd: 100 });
          return { rows: rows.length, ipcBytes: null };
        }
        // Columnar chunks, not row objects: the least a full read can cost in hyparquet.
        let rows = 0;
        await hp.parquetRead({
          file,
          metadata,
          columns: task === 'columns2' ? columns : undefined,
          onChunk: (chunk) => {
            if (chunk.columnName === (task === 'columns2' ? columns[0] : metadata.schema[1].name)) {
              rows += chunk.rowEnd - chunk.rowStart;
            }
          },
        });
        return { rows, ipcBytes: null };
      },
      memory: () => null,
    };
  },
};

async function main() {
  const make = readers[reader];
  if (!make) throw new Error(`unknown reader ${reader}`);
  const r = await make();
  // `&wait=1`: start when told (`window.go()`), e.g. once a profiler runs.
  if (params.get('wait')) await new Promise((resolve) => { window.go = resolve; });
  // `&again=1`: the task once untimed first, in the same page (the code the read runs is
  // then compiled at the engine's top tier, and the reader's memory grown, as on a page
  // that has read before).
  if (params.get('again')) {
    await r.run();
    // The driver counts the server's bytes from here on: it says when to start.
    await new Promise((resolve) => { window.go = resolve; window.warmedUp = true; });
  }
  performance.clearResourceTimings();
  const started = performance.now();
  const { rows, ipcBytes, workers } = await r.run();
  const ms = performance.now() - started;
  return { ms, rows, ipcBytes, workers, wasmBytes: await r.memory(), jsHeapBytes: performance.memory?.usedJSHeapSize ?? null, started,
    // The clock's start as wall time, so the driver counts only the timed part's requests.
    startedAt: performance.timeOrigin + started };
}

main().then(
  (result) => {
    window.benchResult = result;
    document.getElementById('status').textContent = 'done';
  },
  (error) => {
    window.benchResult = { error: `${error?.code ? `${error.code}: ` : ''}${error?.message ?? error}` };
    document.getElementById('status').textContent = 'failed';
  },
);
