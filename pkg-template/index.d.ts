// Types of delta-arrow-reader: read Delta Lake tables into Apache Arrow over HTTP(S), from
// local folders (Node.js) and picked folders (browsers), in browsers, web workers and
// Node.js 20+.

// Browser types this file names, declared empty for a project whose lib has no DOM (Node.js
// with @types/node alone): where the DOM is present, these merge with its own.
declare global {
  interface FileSystemDirectoryHandle {}
  interface FileList {}
  interface Worker {}
  namespace WebAssembly {
    interface Module {}
  }
}

/** The bytes the reader hands out: a `Uint8Array` over a plain `ArrayBuffer` of its own
 * (`Uint8Array<ArrayBuffer>` from TypeScript 5.7 on, which `Blob`, `Response`,
 * `crypto.subtle` and `CompressionStream` take; plain `Uint8Array` before). */
export type OwnBytes = ReturnType<Uint8Array['slice']>;

/** Loads the WebAssembly module. Optional: `DeltaTable.open` calls it. `input` is the .wasm
 * file's URL, a `Response`, its bytes or a compiled `WebAssembly.Module`. */
export function init(
  input?: string | URL | Request | Response | ArrayBuffer | ArrayBufferView | WebAssembly.Module | Promise<unknown>,
): Promise<void>;

/** The stable codes of {@link DeltaReaderError}: a table or file that is not there
 * (`not_a_table`, `not_found`, `version_not_found`, `timestamp_not_found`), the network or a
 * byte source (`io`), bad arguments (`invalid_argument`, `invalid_location`,
 * `invalid_storage_options`), a log or file that breaks the protocol (`invalid_log`,
 * `non_contiguous_log`, `missing_protocol`, `missing_metadata`, `invalid_schema`,
 * `parquet`, `path_outside_table`), what this reader does not read (`unsupported_feature`,
 * `unsupported_reader_version`, `unsupported`), a bound on hostile input
 * (`limit_exceeded`), a stop (`aborted`), and this reader's own faults (`internal`,
 * `arrow`, `backend`). Other strings may be added. */
export type DeltaErrorCode =
  | 'not_a_table'
  | 'not_found'
  | 'version_not_found'
  | 'timestamp_not_found'
  | 'io'
  | 'invalid_argument'
  | 'invalid_location'
  | 'invalid_storage_options'
  | 'invalid_log'
  | 'non_contiguous_log'
  | 'missing_protocol'
  | 'missing_metadata'
  | 'invalid_schema'
  | 'parquet'
  | 'path_outside_table'
  | 'unsupported_feature'
  | 'unsupported_reader_version'
  | 'unsupported'
  | 'limit_exceeded'
  | 'aborted'
  | 'internal'
  | 'arrow'
  | 'backend'
  | (string & {});

/** An error from the reader: an `Error` named `DeltaError` (`AbortError` for aborts) with a
 * stable `code` ({@link DeltaErrorCode}). Aborts reject with `name === 'AbortError'`,
 * `code === 'aborted'`, and the signal's reason as `cause`. */
export interface DeltaReaderError extends Error {
  code: DeltaErrorCode;
  /** `load` (`open` and its options), `plan` (`scan` and its options), `read`, or `write`
   * (`toParquet`); not set for aborts. */
  phase?: 'load' | 'plan' | 'read' | 'write';
  /** Whether trying again may succeed (network trouble, throttling). */
  transient?: boolean;
}

export interface OpenOptions {
  /** Headers sent with every request (e.g. `Authorization`). Any header other than `Range`
   * costs one CORS preflight per URL in a browser. http(s) tables only. */
  headers?: Record<string, string> | [string, string][] | Headers;
  /** `fetch` options for every request (http(s) tables only): `credentials`, `cache`,
   * `mode`, `referrerPolicy`, `priority`, ... and `headers` (joined with `headers`, which
   * win). The reader only sends `GET`s with its own abort signal: `method` (other than
   * `GET`), `body` and `signal` are refused (use `signal` below). Defaults: `mode: 'cors'`,
   * `cache: 'no-store'`. */
  requestInit?: Omit<RequestInit, 'method' | 'body' | 'signal'> & { method?: 'GET' };
  /** A function used instead of the global `fetch` (http(s) tables only): given a
   * `Request`, it returns a `Response` or a promise of one. */
  fetch?: (request: Request) => Response | Promise<Response>;
  /** Open exactly this version (time travel). */
  version?: number | bigint;
  /** Open the newest version committed at or before this time: a `Date`, ms since the
   * epoch, RFC 3339 text (`2024-01-31T10:00:00Z`), `YYYY-MM-DD HH:MM:SS` (UTC) or a date. */
  timestamp?: Date | number | string;
  /** Called with the plain URL of every request; resolves to the URL to fetch (presigned).
   * http(s) tables only. */
  signUrl?: (url: string) => string | URL | Promise<string | URL>;
  /** Aborts opening: the promise rejects with an AbortError. */
  signal?: AbortSignal;
  /** Retries of a request after a network error, 408, 429 or 5xx (default 3). http(s)
   * tables only. */
  retries?: number;
  /** How long a request waits for its answer's status and headers, and then for each next
   * piece of its body, before it fails and is retried like a network error (default 30000
   * ms; 0: as long as the runtime lets it). A body may come as slowly as the link is, as
   * long as it moves. http(s) tables only. */
  answerTimeoutMs?: number;
  /** Refuse a log of more than this many commits after its checkpoint (default 100000): the
   * open rejects with code `limit_exceeded` before reading them, also when a server answers
   * every path it is asked for. */
  maxCommits?: number;
}

/** An object listed by a {@link ByteSource}. */
export interface ByteSourceEntry {
  /** Relative to the table root, `/`-separated. */
  path: string;
  size: number;
  /** ms since the epoch */
  lastModified?: number;
}

/** Where a table's bytes come from when they are not fetched over http(s): give one to
 * `DeltaTable.open`. Paths are relative to the table root, `/`-separated, the objects' own
 * names (nothing percent-encoded); paths that would leave the root (`..`, absolute) are
 * refused before the source is asked. */
export interface ByteSource {
  /** Bytes `start..end` (end excluded) of the object at `path`, or the whole object when
   * both are undefined. A missing object rejects with an error whose `code` is
   * `'not_found'` or `'ENOENT'`, or whose `name` is `'NotFoundError'`. */
  read(path: string, start?: number, end?: number): Promise<Uint8Array | ArrayBuffer>;
  /** The object's size (optional). */
  size?(path: string): Promise<number>;
  /** Objects whose path starts with `prefix`, at any depth (more is fine). Without it the
   * log is found by probing, as over static HTTP. */
  list?(prefix: string): Promise<ByteSourceEntry[]>;
  /** The URL the table reports as its `location` (default `source:///table/`). */
  location?: string;
}

/** What `DeltaTable.open` reads: an http(s) URL of the table root (in a page it may be
 * relative); in Node.js a folder path or `file://` URL; a `FileSystemDirectoryHandle`
 * (`showDirectoryPicker()`, a drop's `getAsFileSystemHandle()`, the Origin Private File
 * System); the files of a picked folder (`<input type="file" webkitdirectory>`); or a
 * {@link ByteSource}. */
export type TableSource = string | URL | FileSystemDirectoryHandle | FileList | File[] | ByteSource;

export interface ScanOptions {
  /** Output only these top-level columns, in this order. */
  columns?: string[];
  /** SQL-like filter: `country = 'NL' and amount >= 10.5`, `day between '2024-01-01' and
   * '2024-01-31'`, `id in (1, 2, 3)`, `name is not null`, `not (a < 3 or b = 'x')`. Files
   * whose partition values or statistics rule out every row are not read. */
  filter?: string;
  /** Stop after this many rows. */
  limit?: number;
  /** Rows per batch, at most (default 8192). */
  batchSize?: number;
  /** Arrow type of string columns, at every depth (default `'Utf8'`, which every
   * `apache-arrow` version reads). `'Utf8View'` needs a reader of Arrow view types. */
  stringType?: 'Utf8' | 'LargeUtf8' | 'Utf8View';
  /** Arrow type of binary columns, at every depth (default `'Binary'`). */
  binaryType?: 'Binary' | 'LargeBinary' | 'BinaryView';
  /** The largest uncompressed Parquet page a data file may declare, in bytes (default 256
   * MiB); a larger one fails the scan with code `limit_exceeded` before anything is
   * allocated. */
  maxPageBytes?: number;
  /** Read only part `index` of `count` (1 to 256) disjoint parts of the scan: its files laid
   * end to end and cut into byte ranges of about equal size, each range reading the row
   * groups that start in it. Scans of the same version with the same options and every
   * `index` read every row once between them, so that several workers share one scan
   * (`openInWorker` does this itself). Not with `limit`. */
  part?: { index: number; count: number };
  /** Aborts the scan: reading stops, everything is released, and a pending read and every
   * later one reject with an AbortError (also when it fires between reads: an aborted scan
   * never ends as if its rows were all read). */
  signal?: AbortSignal;
  /** Called as data files are read. What it throws does not stop the read; it goes to
   * `reportError` (in a page) or `console.error`. */
  onProgress?: (progress: ScanProgress) => void;
}

export interface ScanProgress {
  /** Data files read to their end; all of them in the last event, sent once the scan has
   * read everything it needs (a `limit` may end it before some files are read: the last
   * event still ends full, and `scan.metrics` keeps what was read). */
  filesDone: number;
  /** Data files the scan reads (after skipping). */
  filesTotal: number;
  /** Bytes of the data files done: each file's bytes received (at most its size), and its
   * whole size once it is read to its end; equal to `bytesTotal` once the scan has read
   * everything. */
  bytesDone: number;
  /** Size of the data files the scan reads (a projection reads only part of it). */
  bytesTotal: number;
}

/** A file a scan's filter ruled out before reading (`scan.skippedFiles`). */
export interface SkippedFile {
  /** The file's path as written in the log (as in `table.files()`). */
  path: string;
  /** Its size in bytes: what skipping it saved. */
  size: number;
  /** `'partition'`: its partition values cannot match; `'stats'`: its statistics show no row
   * can match; `'filter'`: the filter is false for every row, whatever a file holds
   * (`int_col = 1.5`), so no file is read. */
  reason: 'partition' | 'stats' | 'filter';
}

/** What a scan did so far (`scan.metrics`): the Rust `ScanMetricsSnapshot` under its
 * camelCase names, then the progress of its reads. Counts are
 * numbers; I/O counts cover the table's store since the scan was planned (other scans of the
 * same table running at the same time are counted too). */
export interface ScanMetrics {
  /** Partitions the scan was planned into. */
  partitionsPlanned: number;
  /** Partitions polled at least once. */
  partitionsStarted: number;
  /** Partitions that read all their files (an error or a drop does not complete one). */
  partitionsCompleted: number;
  /** Active files in the snapshot the scan reads. */
  filesInSnapshot: number;
  /** Files the scan planned to read (after skipping). */
  filesPlanned: number;
  /** Files left out by their partition values. */
  filesSkippedByPartition: number;
  /** Files left out by their statistics. */
  filesSkippedByStats: number;
  /** Files left out because the filter is false for every row (`int_col = 1.5`). */
  filesSkippedByFilter: number;
  /** Row groups left out by their Parquet statistics. */
  rowGroupsPruned: number;
  /** File tasks admitted (both permits held, the file stream created). */
  fileTasksStarted: number;
  /** File tasks whose stream ended without error. */
  fileTasksCompleted: number;
  /** Bytes of the data files read so far: each file's bytes as they arrive (at most its
   * size), and all of its size once it is read to its end. */
  fileBytesDone: number;
  /** File tasks skipped just before admission (a dynamic filter ruled them out). */
  fileTasksSkipped: number;
  /** Batches handed to the caller (empty ones too, which the JS scan does not yield). */
  batchesEmitted: number;
  /** Rows handed to the caller. */
  rowsEmitted: number;
  /** Deletion vectors loaded (inline or from a file). */
  deletionVectorsLoaded: number;
  /** Rows the loaded deletion vectors mark as deleted, each counted once (a file read in
   * byte ranges counts, in each range, the rows of the row groups that range owns). */
  rowsDeleted: number;
  /** Requests made through the table's store since the scan started. */
  requests: number;
  /** Bytes asked for since the scan started. */
  bytesRequested: number;
  /** Bytes received since the scan started. */
  bytesReceived: number;
  /** Log files the scan itself read: 0 for a scan of a table already open (the log was read
   * by `open`: see `table.loadInfo.logFilesRead`). */
  logFilesRead: number;
  /** Time from the first poll to the first batch handed out, in microseconds; `null`
   * before the first batch. */
  timeToFirstBatchUs: number | null;
  /** File reads holding their permits now (a gauge). */
  fileReadsOpen: number;
  /** Partitions running as their own runtime task now (a gauge; always 0 in wasm). */
  partitionTasksRunning: number;
  /** Data files (or file ranges) the scan reads: `onProgress`'s `filesTotal` (a limit may
   * end the scan before all are read). */
  filesToRead: number;
  /** Of those, the ones read to their end (as `onProgress`'s `filesDone`, but not made
   * whole at the end of a scan a `limit` cut short). */
  filesDone: number;
  /** Size of the data files the scan reads: `onProgress`'s `bytesTotal`. */
  bytesTotal: number;
  /** Bytes of those files received (as `onProgress`'s `bytesDone`, but not made whole at
   * the end of a scan a `limit` cut short). */
  bytesDone: number;
  /** Whether the scan has ended (read to the end, failed, cancelled or aborted). */
  done: boolean;
}

/** A Delta type as in the Delta schema JSON. */
export type DeltaType =
  | string
  | { type: 'struct'; fields: DeltaField[] }
  | { type: 'array'; elementType: DeltaType; containsNull: boolean }
  | { type: 'map'; keyType: DeltaType; valueType: DeltaType; valueContainsNull: boolean };

export interface DeltaField {
  name: string;
  type: DeltaType;
  nullable: boolean;
  metadata: Record<string, unknown>;
}

export interface SchemaField extends DeltaField {
  /** The Arrow type the column is read as, e.g. `Int64`, `Utf8`, `Timestamp(µs, "UTC")`. */
  arrowType: string;
}

export interface TableSchema {
  fields: SchemaField[];
}

export interface ScanSchema {
  fields: { name: string; arrowType: string; nullable: boolean }[];
}

export interface Protocol {
  minReaderVersion: number;
  minWriterVersion: number;
  readerFeatures?: string[];
  writerFeatures?: string[];
}

export interface TableMetadata {
  id: string;
  name: string | null;
  description: string | null;
  partitionColumns: string[];
  configuration: Record<string, string>;
  /** ms since the epoch */
  createdTime: number | null;
  /** `none`, `name` or `id`. */
  columnMapping: string;
}

export interface DeletionVector {
  storageType: 'u' | 'i' | 'p' | string;
  pathOrInlineDv: string;
  offset?: number;
  sizeInBytes: number;
  cardinality: number;
}

export interface DataFile {
  /** As written in the log (relative and percent-encoded, or an absolute URI). */
  path: string;
  size: number;
  /** By logical column name; `null` for a null partition value. */
  partitionValues: Record<string, string | null>;
  deletionVector: DeletionVector | null;
  /** ms since the epoch */
  modificationTime: number;
  /** From the file statistics, when present. */
  numRecords: number | null;
}

export interface LoadInfo {
  /** `listing` or `probing` (a static HTTP host cannot list). */
  discovery: string;
  checkpointVersion: number | null;
  logFilesRead: number;
  /** Bytes of the log read: whole files and the ranges of Parquet checkpoints. */
  logBytesRead: number;
  roundTrips: number;
  /** Log files the host answered `404 Not Found` (or `410`) while loading (over http(s)). */
  logFilesNotFound: number;
  /** Log files the host answered `403 Forbidden`, taken as missing as S3 answers `403` for
   * a missing key to a reader without `ListBucket`. With `logFilesNotFound` above 0 too, a
   * commit this reader may not read may be hiding the versions from it on: warn your user. */
  logFilesForbidden: number;
}

/** One column's statistics summed over the active files (from the log alone). */
export interface ColumnProfile {
  /** The column path joined with `.` (`address.city`). */
  name: string;
  path: string[];
  /** The smallest file minimum, in the filter syntax (`5`, `'text'`, `date '2024-01-31'`);
   * a string bound may be a truncated prefix. */
  min: string | null;
  /** The largest file maximum, in the filter syntax. Statistics have the writer's precision:
   * a timestamp maximum is often cut to milliseconds (the values may run up to 999 µs past
   * it), and a column whose type was widened keeps the bounds written for its old type. */
  max: string | null;
  /** The sum of the files' null counts; `null` when a file has none. */
  nullCount: number | null;
  /** Files with both bounds for the column. */
  filesWithBounds: number;
  /** Whether every file has both bounds, so `min` and `max` bound the whole table (to the
   * statistics' precision, see `max`). */
  complete: boolean;
}

/** What the log's file statistics say about a table. */
export interface TableProfile {
  files: number;
  filesWithStats: number;
  /** The rows a full scan returns: the sum of the files' `numRecords` less the rows their
   * deletion vectors delete; `null` when a file has no `numRecords`. */
  numRecords: number | null;
  /** Whether the null counts are exact; `false` when deletion vectors or loose bounds may
   * make them count deleted rows. */
  countsExact: boolean;
  columns: ColumnProfile[];
}

/** Every request made through the table's store so far (`table.metrics`): the Rust
 * `IoSnapshot` under its camelCase names. */
export interface TableMetrics {
  /** All requests (lists, whole gets, ranged gets, size queries). */
  requests: number;
  /** Listing requests. */
  listRequests: number;
  /** Whole-object gets. */
  getRequests: number;
  /** Ranged gets. */
  rangeRequests: number;
  /** Bytes asked for by ranged gets (whole gets ask for what they receive). */
  bytesRequested: number;
  /** Bytes received. */
  bytesReceived: number;
  /** Requests answered "not found". */
  notFound: number;
}

/** One version (snapshot) of a Delta table. */
export class DeltaTable {
  private constructor();
  /** Opens the table at `source`: see {@link TableSource}. */
  static open(source: TableSource, options?: OpenOptions): Promise<DeltaTable>;
  readonly version: number;
  /** Commit time of this version (ms since the epoch), where known. */
  readonly timestamp: number | undefined;
  /** The table root URL, without query string. */
  readonly location: string;
  readonly schema: TableSchema;
  readonly partitionColumns: string[];
  readonly protocol: Protocol;
  readonly metadata: TableMetadata;
  readonly numFiles: number;
  /** Total size of the active files in bytes. */
  readonly sizeBytes: number;
  readonly loadInfo: LoadInfo;
  /** Every request made for this table so far (opening and scans). */
  readonly metrics: TableMetrics;
  /** The active files. */
  files(): DataFile[];
  /** Per column, from the log alone (no data file is read): see {@link TableProfile}. */
  columnProfile(): TableProfile;
  /** Plans a scan (throws for unknown columns or a filter that does not parse); reading
   * starts when it is iterated. */
  scan(options?: ScanOptions): DeltaScan;
  /** Releases the snapshot's memory now rather than at garbage collection. */
  free(): void;
}

/** A scan. Iterated (`for await`), it yields the pieces of one continuous Arrow IPC stream
 * (the schema with the first batch, one piece per further batch, the end marker), so Arrow
 * readers take the scan itself: `await tableFromIPC(scan)` and `RecordBatchReader.from(scan)`
 * from `apache-arrow` read the whole result. A scan is read one way only: as that stream
 * (iteration, `stream()`, `toIPC()`) or batch by batch (`batches()`); reading it the other
 * way is refused (`invalid_argument`) and costs that call only. Steps asked for at once are
 * served in turn, as an async generator's. Once the scan has ended (read to its end or
 * failed), a new read of it (iteration, `stream()`, `batches()`, `toIPC()`) is refused with
 * `invalid_argument`, never an empty result: start a new scan. A cancelled or aborted scan's
 * pending and later reads reject with an `AbortError` (code `aborted`), never as an end. */
export class DeltaScan implements AsyncIterableIterator<OwnBytes> {
  private constructor();
  /** The output columns and their Arrow types. (Not `schema`: apache-arrow reads any object
   * with a `schema` property as Arrow JSON, not as the stream the scan is.) */
  readonly outputSchema: ScanSchema;
  /** The files the filter ruled out, in the log's order (empty without a filter). */
  readonly skippedFiles: SkippedFile[];
  readonly metrics: ScanMetrics;
  readonly done: boolean;
  next(): Promise<IteratorResult<OwnBytes, undefined>>;
  return(value?: unknown): Promise<IteratorResult<OwnBytes, undefined>>;
  [Symbol.asyncIterator](): DeltaScan;
  /** The same bytes as iteration, as a stream (`new Response(scan.stream())`, `pipeTo`);
   * cancelling the stream cancels the scan. */
  stream(): ReadableStream<OwnBytes>;
  /** One complete Arrow IPC stream (schema, batch, end marker) per record batch, each
   * readable on its own (`tableFromIPC(chunk)`); `break` cancels the scan. */
  batches(): AsyncIterableIterator<OwnBytes>;
  /** Everything not yet read as one Arrow IPC stream (schema only when there are no rows). */
  toIPC(): Promise<OwnBytes>;
  /** Stops reading and releases the scan; a pending `next()`, and every later read,
   * rejects with an AbortError (code `aborted`). Nothing happens to a scan that has ended. */
  cancel(): void;
}

/** A table opened in a Web Worker by {@link openInWorker}: the same description as a
 * {@link DeltaTable}; what the worker must be asked for is asynchronous. */
export interface RemoteDeltaTable {
  readonly version: number;
  readonly timestamp: number | undefined;
  readonly location: string;
  readonly schema: TableSchema;
  readonly partitionColumns: string[];
  readonly protocol: Protocol;
  readonly metadata: TableMetadata;
  readonly numFiles: number;
  readonly sizeBytes: number;
  readonly loadInfo: LoadInfo;
  /** The active files. */
  files(): Promise<DataFile[]>;
  /** See {@link DeltaTable.columnProfile}. */
  columnProfile(): Promise<TableProfile>;
  /** Every request made for this table so far. */
  metrics(): Promise<TableMetrics>;
  /** Plans a scan in the worker; rejects for unknown columns or a bad filter. `onProgress`
   * is called on this thread; `signal` cancels the worker's read. A scan without `limit`
   * that reads at least 32 MiB is read by several workers at once when the table has more
   * than one (`openInWorker`'s `workers`): at most one per 16 MiB it reads, each decoding a
   * part of its files (see `ScanOptions.part`), their results merged into one. Its batches
   * then come in the order the workers finish them; `parallel: false` keeps the scan on one
   * worker, in file order; `parallel: true` uses every worker whatever the scan's size. */
  scan(options?: ScanOptions & { parallel?: boolean }): Promise<RemoteDeltaScan>;
  /** The wasm memory of each worker holding this table, in bytes. */
  memory(): Promise<number[]>;
  /** Opens this version in every worker that may read its scans, in the background (done at
   * open when `openInWorker` was given `workers`; otherwise when a big scan first needs them). */
  prepareHelpers(): void;
  free(): void;
}

/** A scan running in a Web Worker: read like a {@link DeltaScan}; its pieces are
 * transferred from the worker. `metrics` is as of the last piece. */
export interface RemoteDeltaScan extends AsyncIterableIterator<OwnBytes> {
  readonly outputSchema: ScanSchema;
  /** The files the filter ruled out, in the log's order (empty without a filter). */
  readonly skippedFiles: SkippedFile[];
  readonly metrics: ScanMetrics;
  readonly done: boolean;
  /** How many workers read this scan. */
  readonly parts: number;
  stream(): ReadableStream<OwnBytes>;
  batches(): AsyncIterableIterator<OwnBytes>;
  toIPC(): Promise<OwnBytes>;
  cancel(): void;
}

/** Opens a table in a Web Worker (browsers): `source` and `options` as for
 * `DeltaTable.open`, but only what can be sent to a worker (no custom byte source, no
 * `signUrl` or `fetch` function; `signal` works). `worker`: a worker running the
 * package's `worker.js` (default: the first of the workers the package starts).
 * `workers`: how many workers may read one big scan (1 to 16; default: the machine's
 * cores, at most 4, or 1 when `worker` is given), the others started by the package when a
 * scan first needs them, each opening the same version; or the workers themselves, each
 * running `worker.js`, the first opening the table (then without `worker`). */
export function openInWorker(
  source: string | URL | FileSystemDirectoryHandle | FileList | File[],
  options?: OpenOptions,
  settings?: { worker?: Worker; workers?: number | Worker[] },
): Promise<RemoteDeltaTable>;

/** The bytes of the WebAssembly module's memory in this thread (0 before it is loaded). */
export function wasmMemoryBytes(): number;

/** `toParquet` (see `delta-arrow-reader/parquet`) run in a Web Worker (browsers), so the
 * page's thread only hands the stream over: `input` is the bytes of an Arrow IPC stream or a
 * Blob of them; resolves to the Parquet file's bytes. `worker`: one running the package's
 * `worker.js` (default: the package's first worker). Rejects with `invalid_argument` for
 * other input, `unsupported_feature` in Node.js. */
export function toParquetInWorker(
  input: Uint8Array | ArrayBuffer | Blob,
  options?: { rowGroupRows?: number },
  settings?: { worker?: Worker },
): Promise<OwnBytes>;
