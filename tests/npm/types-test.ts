// Compiled with `tsc --noEmit --strict` by scripts/test-npm against the installed package:
// the shipped types (index.d.ts) describe the API as the tests use it.
import { DeltaTable, DeltaScan, init } from 'delta-arrow-reader';
import wasmModule from 'delta-arrow-reader/delta_arrow_reader_bg.wasm';
import type {
  ByteSource,
  DeltaReaderError,
  ScanMetrics,
  ScanProgress,
  SchemaField,
  TableMetrics,
  TableSource,
} from 'delta-arrow-reader';

export async function typed(url: string): Promise<number> {
  await init();
  const controller = new AbortController();
  const table: DeltaTable = await DeltaTable.open(url, {
    headers: { Authorization: 'Bearer x' },
    version: 3,
    signUrl: async (plain: string) => `${plain}?sig=1`,
    signal: controller.signal,
  });
  const v: number = table.version;
  const fields: SchemaField[] = table.schema.fields;
  const arrowTypes: string[] = fields.map((f) => f.arrowType);
  const features: string[] | undefined = table.protocol.readerFeatures;
  const parts: string[] = table.partitionColumns;
  const sizes: number = table.files().reduce((s, f) => s + f.size, 0);
  const scan: DeltaScan = table.scan({
    columns: ['a'],
    filter: 'a > 1',
    limit: 10,
    batchSize: 100,
    signal: controller.signal,
    onProgress: (p: ScanProgress) => void (p.filesDone / p.filesTotal + p.bytesDone / p.bytesTotal),
  });
  let bytes = 0;
  for await (const chunk of scan) {
    const c: Uint8Array = chunk;
    bytes += c.byteLength;
  }
  const whole: Uint8Array = await table.scan().toIPC();
  const stream: ReadableStream<Uint8Array> = table.scan().stream();
  for await (const one of table.scan().batches()) {
    const c: Uint8Array = one;
    bytes += c.byteLength;
  }
  const m: ScanMetrics = scan.metrics;
  const skipped: number = m.filesInSnapshot - m.filesPlanned + m.rowGroupsPruned + m.filesSkippedByStats;
  const read: number = m.rowsEmitted + m.batchesEmitted + m.bytesDone / m.bytesTotal + m.filesDone / m.filesToRead;
  const firstBatch: number | null = m.timeToFirstBatchUs;
  const ended: boolean = m.done;
  const io: TableMetrics = table.metrics;
  const fetched: number = io.getRequests + io.rangeRequests + io.bytesReceived + io.notFound;
  try {
    await DeltaTable.open(url, { timestamp: new Date() });
  } catch (e) {
    const code: string = (e as DeltaReaderError).code;
    void code;
  }
  // Other byte sources and fetch options.
  const own: ByteSource = {
    read: async (path: string, start?: number, end?: number) => new Uint8Array((end ?? 0) - (start ?? 0) + path.length),
    size: async () => 0,
    list: async (prefix: string) => [{ path: `${prefix}x`, size: 1, lastModified: 0 }],
  };
  const sources: TableSource[] = [url, new URL(url), '/abs/path', own];
  for (const source of sources) await DeltaTable.open(source, { version: 1 });
  await DeltaTable.open(url, {
    requestInit: { credentials: 'include', cache: 'no-cache', mode: 'cors', headers: new Headers({ a: 'b' }) },
    fetch: (request: Request) => fetch(request),
  });
  const handle: FileSystemDirectoryHandle = await navigator.storage.getDirectory();
  await DeltaTable.open(handle);
  void [v, arrowTypes, features, parts, sizes, whole, skipped, read, firstBatch, ended, fetched, stream];
  return bytes;
}

// The Parquet writer, the workers' options and a scan part.
import { toParquet, initParquet } from 'delta-arrow-reader/parquet';
import { openInWorker, toParquetInWorker, wasmMemoryBytes } from 'delta-arrow-reader';
import type { RemoteDeltaScan, RemoteDeltaTable } from 'delta-arrow-reader';

export async function parquetAndWorkers(table: DeltaTable, worker: Worker): Promise<number> {
  await initParquet();
  const file: Uint8Array = await toParquet(table.scan({ part: { index: 0, count: 2 } }), { rowGroupRows: 1000 });
  const again: Uint8Array = await toParquet(await table.scan().toIPC());
  const remote: RemoteDeltaTable = await openInWorker('/t/', {}, { workers: [worker] });
  const two: RemoteDeltaTable = await openInWorker('/t/', {}, { workers: 2 });
  const scan: RemoteDeltaScan = await two.scan({ parallel: true });
  const parts: number = scan.parts;
  const memory: number[] = await remote.memory();
  const inWorker: Uint8Array = await toParquetInWorker(file, { rowGroupRows: 10 }, { worker });
  void inWorker;
  return file.byteLength + again.byteLength + parts + memory.length + wasmMemoryBytes();
}

/** The `.wasm` imported as a compiled module (Cloudflare Workers, the README's sample). */
export async function withCompiledModule(): Promise<WebAssembly.Module> {
  await init(wasmModule);
  return wasmModule;
}

/** The bytes handed out go where the DOM takes its own buffers (TypeScript 5.7 and later
 * type those as `Uint8Array<ArrayBuffer>`). */
export async function bytesWhereTheDomTakesThem(table: DeltaTable): Promise<number> {
  const ipc = await table.scan().toIPC();
  const blob = new Blob([ipc], { type: 'application/vnd.apache.arrow.stream' });
  const response = new Response(ipc);
  const digest = await crypto.subtle.digest('SHA-256', ipc);
  const zipped = table.scan().stream().pipeThrough(new CompressionStream('gzip'));
  for await (const piece of table.scan()) await crypto.subtle.digest('SHA-256', piece);
  return blob.size + (await response.arrayBuffer()).byteLength + digest.byteLength + (zipped.locked ? 1 : 0);
}
