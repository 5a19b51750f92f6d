// The previewer's view of the `delta-arrow-reader` package: loads it (and apache-arrow),
// and turns an opened DeltaTable and its files into what the page renders, using the package
// as its `index.d.ts` documents it.

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
  // DeltaTable.open would load the .wasm on first use; loading it now reports a missing or
  // broken .wasm before anyone opens a table.
  await lib.init();
  return { DeltaTable: lib.DeltaTable, openInWorker: lib.openInWorker, arrow, version: await packageVersion() };
}

/**
 * Opens the table in the package's Web Worker, so that reading never blocks this page;
 * on the page's thread where there are no module workers.
 */
export function openTableOffThread(lib, url, options) {
  if (typeof Worker === 'function' && typeof lib.openInWorker === 'function') {
    return lib.openInWorker(url, options);
  }
  return lib.DeltaTable.open(url, options);
}

/** A table's request counts: asked of the worker, or read from a table on this thread. */
export async function tableMetrics(table) {
  return typeof table.metrics === 'function' ? table.metrics() : table.metrics;
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

/** Everything the page shows about an opened table (the file list comes from listFiles):
 * the column statistics come from the log (`columnProfile`), before any data is read. */
export async function describeTable(table) {
  const { partitionColumns } = table;
  let profile = null;
  try {
    profile = await table.columnProfile();
  } catch {
    // A package without columnProfile, or statistics it cannot read: no profile shown.
  }
  const stats = new Map((profile?.columns ?? []).map((c) => [c.name, c]));
  const fields = table.schema.fields.map((f) => ({
    name: f.name,
    deltaType: deltaTypeText(f.type),
    arrowType: f.arrowType,
    nullable: f.nullable,
    partition: partitionColumns.includes(f.name),
    stats: stats.get(f.name) ?? null,
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
