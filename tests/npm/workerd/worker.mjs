// The npm package in a Cloudflare Worker (module syntax), run in workerd by Miniflare
// (tests/npm/workerd/run.mjs). It imports the package's browser entry (index.js) and its
// .wasm as a module: workerd compiles an imported .wasm to a WebAssembly.Module (a
// CompiledWasm module), which init() instantiates; the package's default, fetching
// new URL('delta_arrow_reader_bg.wasm', import.meta.url), cannot work in a Worker.
// run.mjs copies this file into the folder where the tarball is installed, hence the
// ./node_modules/ paths (Miniflare follows relative imports only; with wrangler, which
// bundles, `from 'delta-arrow-reader'` and `from 'delta-arrow-reader/delta_arrow_reader_bg.wasm'`).
//
//   GET /count?table=URL[&version=V][&filter=EXPR]
//       opens the table over HTTP, reads it as one IPC stream and batch by batch, decodes
//       both with Flechette and answers JSON { runtime, version, rows, batchedRows, rowsEmitted }
//       (runtime: navigator.userAgent, 'Cloudflare-Workers' in workerd)
//   GET /ipc?table=URL
//       answers the scan's IPC stream itself (new Response(scan.stream())), for the driver
//       to decode
// An error answers 500 with JSON { error, code, name }.
import { DeltaTable, init } from './node_modules/delta-arrow-reader/index.js';
import wasm from './node_modules/delta-arrow-reader/delta_arrow_reader_bg.wasm';
import { tableFromIPC } from './node_modules/@uwdata/flechette/src/index.js';

function concat(chunks) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

async function open(params) {
  await init(wasm);
  const table = params.get('table');
  if (!table) throw Object.assign(new Error('missing ?table=URL'), { code: 'invalid_argument' });
  const version = params.get('version');
  return DeltaTable.open(table, version === null ? {} : { version: Number(version) });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/count') {
        const table = await open(url.searchParams);
        const filter = url.searchParams.get('filter') ?? undefined;
        const scan = table.scan({ filter, batchSize: 4 });
        const pieces = [];
        for await (const piece of scan) pieces.push(piece);
        const rows = tableFromIPC(concat(pieces)).numRows;
        let batchedRows = 0;
        for await (const ipc of table.scan({ filter }).batches()) batchedRows += tableFromIPC(ipc).numRows;
        const body = {
          runtime: navigator.userAgent,
          version: table.version,
          rows,
          batchedRows,
          rowsEmitted: scan.metrics.rowsEmitted,
        };
        table.free();
        return Response.json(body);
      }
      if (url.pathname === '/ipc') {
        const table = await open(url.searchParams);
        return new Response(table.scan().stream(), {
          headers: { 'content-type': 'application/vnd.apache.arrow.stream' },
        });
      }
      return new Response('not found', { status: 404 });
    } catch (error) {
      return Response.json(
        { error: String(error?.stack ?? error), code: error?.code, name: error?.name },
        { status: 500 },
      );
    }
  },
};
