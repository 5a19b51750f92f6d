// A Vite-built app using the npm package: reads the tables named in ?tables=a,b (served by
// `dar serve` at the site root) and prints { table: rows } to #result.
import { DeltaTable } from 'delta-arrow-reader';
import { tableFromIPC } from 'apache-arrow';

async function main() {
  const out = document.getElementById('result');
  try {
    const names = (new URLSearchParams(location.search).get('tables') ?? '').split(',');
    const counts = {};
    for (const name of names.filter(Boolean)) {
      // Root-relative: the package resolves it against the page.
      const table = await DeltaTable.open(`/${name}/`);
      let rows = 0;
      for await (const chunk of table.scan()) rows += tableFromIPC(chunk).numRows;
      const whole = tableFromIPC(await table.scan().toIPC()).numRows;
      if (whole !== rows) throw new Error(`${name}: toIPC gave ${whole} rows, iteration ${rows}`);
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
