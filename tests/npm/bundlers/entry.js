// One page's code, bundled by webpack 5, esbuild and Rollup in turn (tests/npm/bundlers/):
// reads the tables named in ?tables=a,b from the `dar serve` root and prints { table: rows }
// to #result, reading each table as one IPC stream, batch by batch, and in the package's Web
// Worker (openInWorker: the worker script and the .wasm it loads must be where the bundle
// looks for them); the three must agree.
import { DeltaTable, openInWorker } from 'delta-arrow-reader';
import { tableFromIPC } from 'apache-arrow';

async function main() {
  const out = document.getElementById('result');
  try {
    const names = (new URLSearchParams(location.search).get('tables') ?? '').split(',');
    const counts = {};
    for (const name of names.filter(Boolean)) {
      const table = await DeltaTable.open(`/${name}/`);
      const rows = (await tableFromIPC(table.scan({ batchSize: 5 }))).numRows;
      let batched = 0;
      for await (const chunk of table.scan().batches()) batched += tableFromIPC(chunk).numRows;
      if (batched !== rows) throw new Error(`${name}: batches() gave ${batched} rows, the stream ${rows}`);
      const remote = await openInWorker(`/${name}/`);
      const inWorker = (await tableFromIPC(await remote.scan())).numRows;
      if (inWorker !== rows) throw new Error(`${name}: the worker read ${inWorker} rows, the page ${rows}`);
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
