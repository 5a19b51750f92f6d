// The viewer's view of the `delta-arrow-reader` package: opens tables in its Web Worker
// (`openInWorker`, from the package's remote.js, bundled into viewer.js by
// scripts/build-viewer: the page's thread never loads the WebAssembly), and turns an opened
// table and its files into what the page renders, as the package's index.d.ts documents them.

import { openInWorker } from 'delta-arrow-reader/remote.js';

/** The package version, written in by scripts/build-viewer (esbuild --define). */
// eslint-disable-next-line no-undef
const PACKAGE_VERSION = typeof __DAR_VERSION__ === 'string' ? __DAR_VERSION__ : null;

/** An Error with a stable `code`, like the package's own errors. */
export function coded(code, message) {
  return Object.assign(new Error(message), { code });
}

/** True when `err` reports an aborted operation (our Cancel button), not a failure. */
export function isAbort(err) {
  return Boolean(err) && (err.name === 'AbortError' || err.code === 'aborted');
}

/** The files the worker needs, next to viewer.js (scripts/build-viewer puts them there). */
const WASM_URL = new URL('./delta_arrow_reader_bg.wasm', import.meta.url);

/**
 * Checks that the reader is there before anyone opens a table: module workers, and the
 * .wasm next to this script (its first bytes, `\0asm`). Rejects with code `package_missing`.
 */
export async function loadReader() {
  if (typeof Worker !== 'function') throw coded('unsupported', 'this browser has no Web Workers');
  let head;
  try {
    const res = await fetch(WASM_URL, { headers: { Range: 'bytes=0-3' }, cache: 'no-store' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    head = new Uint8Array(await res.arrayBuffer()).subarray(0, 4);
  } catch (e) {
    throw coded('package_missing', `the reader's WebAssembly (${WASM_URL.pathname}) could not be loaded: ${e.message}; build the viewer with scripts/build-viewer (see www/README.md)`);
  }
  if (String.fromCharCode(...head) !== '\0asm') throw coded('package_missing', `${WASM_URL.pathname} is not WebAssembly`);
  return { version: PACKAGE_VERSION };
}

/** Opens the table in the package's Web Worker, so that reading never blocks this page. */
export function openTable(url, options) {
  return openInWorker(url, options);
}

/** A table's request counts: asked of the worker, or read from a table on this thread. */
export async function tableMetrics(table) {
  return typeof table.metrics === 'function' ? table.metrics() : table.metrics;
}

/** A Delta type (a name or the protocol's JSON for nested types) as short text. */
export function deltaTypeText(t) {
  if (t === null || t === undefined) return '';
  if (typeof t === 'string') return t;
  switch (t.type) {
    case 'struct':
      return `struct<${(t.fields ?? []).map((f) => `${f.name}: ${deltaTypeText(f.type)}`).join(', ')}>`;
    case 'array':
      return `array<${deltaTypeText(t.elementType)}>`;
    case 'map':
      return `map<${deltaTypeText(t.keyType)}, ${deltaTypeText(t.valueType)}>`;
    default:
      return typeof t.type === 'string' ? t.type : JSON.stringify(t);
  }
}

/** Everything the page shows about an opened table (the file list comes from listFiles);
 * the column statistics come from the log (`columnProfile`), before any data is read. */
export async function describeTable(table) {
  const { partitionColumns } = table;
  let profile = null;
  try {
    profile = await table.columnProfile();
  } catch {
    // Statistics the package cannot read: no profile shown.
  }
  const stats = new Map((profile?.columns ?? []).map((c) => [c.name, c]));
  const fields = table.schema.fields.map((f) => ({
    name: f.name,
    deltaType: deltaTypeText(f.type),
    arrowType: f.arrowType,
    nullable: f.nullable,
    partition: partitionColumns.includes(f.name),
    stats: stats.get(f.name) ?? null,
    // The statistics of fields inside a struct (`s.a`, `s.t.x`), shown under it.
    nested: (profile?.columns ?? []).filter((c) => c.path.length > 1 && c.path[0] === f.name),
  }));
  const p = table.protocol;
  const metadata = table.metadata;
  return {
    version: table.version,
    timestamp: table.timestamp ?? null,
    fields,
    partitionColumns,
    protocol: {
      reader: p.minReaderVersion,
      writer: p.minWriterVersion,
      readerFeatures: p.readerFeatures ?? [],
      writerFeatures: p.writerFeatures ?? [],
    },
    numFiles: table.numFiles,
    totalBytes: table.sizeBytes,
    name: metadata.name,
    description: metadata.description,
    configuration: metadata.configuration ?? {},
    profile,
    columnMapping: metadata.columnMapping,
    loadInfo: table.loadInfo,
  };
}

/** The active files as `[{ path, size, partitionValues, deletionVector, records }]`. */
export async function listFiles(table) {
  return (await table.files()).map((f) => ({
    path: f.path,
    size: f.size,
    partitionValues: f.partitionValues,
    deletionVector: f.deletionVector !== null,
    records: f.numRecords,
  }));
}
