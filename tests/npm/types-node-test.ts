// Compiled with `tsc --noEmit --strict` and Node's types alone (no DOM lib) by
// scripts/test-npm: the shipped types serve a Node.js-only project too.
import { DeltaTable, init } from 'delta-arrow-reader';
import type { DeltaReaderError } from 'delta-arrow-reader';
import { toParquet } from 'delta-arrow-reader/parquet';
import wasmModule from 'delta-arrow-reader/delta_arrow_reader_bg.wasm';

export async function rowsOf(path: string): Promise<number> {
  await init();
  const table = await DeltaTable.open(path, { version: 0 });
  const scan = table.scan({ columns: ['id'], filter: 'id > 1', batchSize: 1024 });
  let bytes = 0;
  for await (const piece of scan) bytes += piece.byteLength;
  const parquet: Uint8Array = await toParquet(table.scan());
  table.free();
  return bytes + parquet.byteLength;
}

export function codeOf(error: unknown): string | undefined {
  return (error as DeltaReaderError).code;
}

export const compiled: WebAssembly.Module = wasmModule;
