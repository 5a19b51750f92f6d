// One page's code, bundled by webpack 5, esbuild and Rollup in turn (tests/npm/bundlers/):
// reads the tables named in ?tables=a,b from the `dar serve` root and prints { table: rows }
// to #result, reading each table as one IPC stream and batch by batch (they must agree).
import { DeltaTable } from 'delta-arrow-reader';
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
