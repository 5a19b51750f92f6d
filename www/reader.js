// The previewer's view of the `delta-arrow-reader` package: loads it (and apache-arrow),
// and turns a DeltaTable, its progress reports and its metrics into plain objects the page
// renders. Everything that depends on the exact shape of the package's JS API lives here.

/** Loads the reader and apache-arrow; throws an Error with a `code` when they are missing. */
export async function loadLibraries() {
  let lib;
  let arrow;
  try {
    lib = await import('delta-arrow-reader');
  } catch (e) {
    throw coded(
      'package_missing',
      `the delta-arrow-reader package is not next to this page (${e.message}); stage the page with www/stage, see www/README.md`,
    );
  }
  try {
    arrow = await import('apache-arrow');
  } catch (e) {
    throw coded(
      'package_missing',
      `apache-arrow is not next to this page (${e.message}); stage the page with www/stage, see www/README.md`,
    );
  }
  if (typeof lib.DeltaTable?.open !== 'function') {
    throw coded('package_missing', 'the delta-arrow-reader package has no DeltaTable.open');
  }
  // DeltaTable.open would load the .wasm on first use; loading it now reports a missing or
  // broken .wasm before anyone opens a table.
  if (typeof lib.init === 'function') await lib.init();
  return { DeltaTable: lib.DeltaTable, arrow, version: await packageVersion() };
}

async function packageVersion() {
  try {
    const res = await fetch(new URL('./pkg/package.json', document.baseURI), { cache: 'no-store' });
    return res.ok ? (await res.json()).version ?? null : null;
  } catch {
    return null;
  }
}

/** An Error with a stable `code`, like the package's own errors. */
export function coded(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

/** True when `err` reports an aborted operation (our Cancel button), not a failure. */
export function isAbort(err) {
  return Boolean(err) && (err.name === 'AbortError' || err.code === 'aborted');
}

/** Maps, wasm-bindgen objects and bigints as plain JS objects and numbers. */
export function plain(value, depth = 0) {
  if (depth > 12 || value === null || value === undefined) return value;
  if (typeof value === 'bigint') {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  if (typeof value !== 'object') return value;
  if (value instanceof Map) {
    const out = {};
    for (const [k, v] of value) out[k] = plain(v, depth + 1);
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => plain(v, depth + 1));
  if (ArrayBuffer.isView(value)) return value;
  if (typeof value.toJSON === 'function') {
    const json = value.toJSON();
    if (json !== value) return plain(json, depth + 1);
  }
  const out = {};
  for (const k of Object.keys(value)) out[k] = plain(value[k], depth + 1);
  return out;
}

const pick = (obj, ...names) => {
  for (const n of names) if (obj && obj[n] !== undefined && obj[n] !== null) return obj[n];
  return undefined;
};

/** Reads a property that may be a getter, a field or a method. */
async function prop(obj, name) {
  const v = obj[name];
  return typeof v === 'function' ? await v.call(obj) : v;
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

function arrowTypeText(t) {
  if (t === null || t === undefined) return '';
  return typeof t === 'string' ? t : JSON.stringify(t);
}

/** Everything the page shows about an opened table (the file list comes from listFiles). */
export async function describeTable(table) {
  const schema = plain(await prop(table, 'schema'));
  const rawFields = Array.isArray(schema) ? schema : schema?.fields ?? [];
  const partitionColumns = plain(await prop(table, 'partitionColumns')) ?? [];
  const fields = rawFields.map((f) => ({
    name: f.name,
    deltaType: deltaTypeText(pick(f, 'type', 'deltaType')),
    arrowType: arrowTypeText(pick(f, 'arrowType', 'dataType')),
    nullable: f.nullable !== false,
    partition: partitionColumns.includes(f.name),
  }));
  const p = plain(await prop(table, 'protocol')) ?? {};
  const protocol = {
    reader: pick(p, 'minReaderVersion', 'readerVersion'),
    writer: pick(p, 'minWriterVersion', 'writerVersion'),
    readerFeatures: pick(p, 'readerFeatures') ?? [],
    writerFeatures: pick(p, 'writerFeatures') ?? [],
  };
  let numFiles = plain(await prop(table, 'numFiles'));
  let sizeBytes = plain(await prop(table, 'sizeBytes'));
  if (numFiles === undefined || sizeBytes === undefined) {
    const files = listFiles(table);
    numFiles = files.length;
    sizeBytes = files.reduce((sum, f) => sum + f.size, 0);
  }
  const metadata = plain(await prop(table, 'metadata')) ?? {};
  const loadInfo = plain(await prop(table, 'loadInfo')) ?? null;
  const timestamp = plain(await prop(table, 'timestamp'));
  return {
    version: Number(plain(await prop(table, 'version'))),
    timestamp: timestamp === undefined || timestamp === null ? null : timestamp,
    fields,
    partitionColumns,
    protocol,
    numFiles: Number(numFiles),
    totalBytes: Number(sizeBytes),
    name: metadata.name ?? null,
    description: metadata.description ?? null,
    columnMapping: metadata.columnMapping ?? null,
    loadInfo,
  };
}

/** The active files as `[{ path, size, partitionValues, deletionVector, records }]`. */
export function listFiles(table) {
  // Already plain objects (one per file, possibly very many): no deep copy.
  const raw = typeof table.files === 'function' ? table.files() : table.files;
  return (raw ?? []).map((f) => ({
    path: pick(f, 'path') ?? '',
    size: Number(pick(f, 'size', 'sizeInBytes') ?? 0),
    partitionValues: pick(f, 'partitionValues') ?? {},
    deletionVector: Boolean(pick(f, 'deletionVector')),
    records: pick(f, 'numRecords'),
  }));
}

const num = (v) => (v === undefined || v === null ? undefined : Number(v));

/** A progress report as `{ filesDone, filesTotal, bytesDone, bytesTotal }`. */
export function normaliseProgress(raw) {
  const p = plain(raw) ?? {};
  return {
    filesDone: num(p.filesDone),
    filesTotal: num(p.filesTotal),
    bytesDone: num(p.bytesDone),
    bytesTotal: num(p.bytesTotal),
  };
}

/**
 * Metrics of a scan (`scan.metrics`) or of a table (`table.metrics`: its requests so far)
 * as `{ requests, bytes, filesTotal, filesSkipped, rowGroupsSkipped }`.
 */
export function normaliseMetrics(raw) {
  const m = plain(raw);
  if (!m || typeof m !== 'object') return null;
  return {
    requests: num(m.requests),
    bytes: num(pick(m, 'bytesReceived', 'bytes')),
    filesTotal: num(m.filesTotal),
    filesSkipped: num(m.filesSkipped),
    rowGroupsSkipped: num(m.rowGroupsSkipped),
  };
}

/** Reads `obj.metrics` whether it is a getter, a field or a method; null when absent. */
export async function metricsOf(obj) {
  if (!obj) return null;
  try {
    return normaliseMetrics(await prop(obj, 'metrics'));
  } catch {
    return null;
  }
}

/**
 * Iterates a scan's batches (Arrow IPC stream bytes): `for await` when the scan is async
 * iterable, else repeated `next()`, else one `toIPC()`.
 */
export async function* batchesOf(scan) {
  if (typeof scan[Symbol.asyncIterator] === 'function') {
    yield* scan;
  } else if (typeof scan.next === 'function') {
    for (;;) {
      const step = await scan.next();
      if (step === undefined || step === null) return;
      if (typeof step === 'object' && 'done' in step) {
        if (step.done) return;
        yield step.value;
      } else {
        yield step;
      }
    }
  } else {
    yield await scan.toIPC();
  }
}
