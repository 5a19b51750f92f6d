// The first read's compile, hidden behind its first round trip. V8 compiles a WebAssembly
// function when it is first called, not when the module is loaded: the first open and scan
// of a table spend tens of milliseconds compiling the log replay, the Parquet footer and
// column decoders and the Arrow IPC writer, on the page's thread, between their requests.
// warmUp reads a tiny table held here (one commit, one Parquet file of 3 rows with the
// common column types, a partition column, statistics and an inline deletion vector that
// deletes its second row) through the same open and scan,
// so that those functions are compiled while the first open over http(s) waits for its
// first answers (api.js starts it right after that open's requests). It reads nothing from
// the network and keeps nothing; a failure only means no warm-up.
//
// The Parquet file was written by pyarrow 26 (`pq.write_table(t, path, compression='snappy',
// write_statistics=False, use_dictionary=True, store_schema=False)`) from the columns of
// TINY_COLUMNS: i int64 [1, 2, null], n int32 [1, 2, 3], d float64 [1.5, null, 2.5],
// s string ['a', 'b', null], b bool [true, false, null], t timestamp(us, UTC) [1, 2, 3],
// e date32 [1, 2, 3], m decimal(10, 2) [1.10, null, 2.20].

/** Delta types of the tiny file's columns, in its order; `p` is the partition column. */
const TINY_COLUMNS = [
  ['i', 'long'], ['n', 'integer'], ['d', 'double'], ['s', 'string'], ['b', 'boolean'],
  ['t', 'timestamp'], ['e', 'date'], ['m', 'decimal(10,2)'], ['p', 'string'],
];

const TINY_PARQUET =
  'UEFSMRUEFSAVJEwVBBUAEgAAEDwBAAAAAAAAAAIAAAAAAAAAFQAVEhUWLBUGFRAVBhUGHAAAAAkgAgAAAAMDAQMCFQQVGBUc' +
  'TBUGFQASAAAMLAEAAAACAAAAAwAAABUAFRQVGCwVBhUQFQYVBhwAAAAKJAIAAAAGAQIDJAAVBBUgFSRMFQQVABIAABA8AAAA' +
  'AAAA+D8AAAAAAAAEQBUAFRIVFiwVBhUQFQYVBhwAAAAJIAIAAAADBQEDAhUEFRQVGEwVBBUAEgAACiQBAAAAYQEAAABiFQAV' +
  'EhUWLBUGFRAVBhUGHAAAAAkgAgAAAAMDAQMCFQAVDhUSLBUGFQAVBhUGHAAAAAcYAgAAAAMDARUEFTAVLkwVBhUAEgAAGAQB' +
  'AAkBPAIAAAAAAAAAAwAAAAAAAAAVABUUFRgsFQYVEBUGFQYcAAAACiQCAAAABgECAyQAFQQVGBUcTBUGFQASAAAMLAEAAAAC' +
  'AAAAAwAAABUAFRQVGCwVBhUQFQYVBhwAAAAKJAIAAAAGAQIDJAAVBBUUFRhMFQQVABIAAAokAAAAAG4AAAAA3BUAFRIVFiwV' +
  'BhUQFQYVBhwAAAAJIAIAAAADBQEDAhUEGZw1ABgGc2NoZW1hFRAAFQQlAhgBaQAVAiUCGAFuABUKJQIYAWQAFQwlAhgBcyUA' +
  'TBwAAAAVACUCGAFiABUEJQIYAXQlFEyMERwsAAAAAAAVAiUCGAFlJQxMbAAAABUOFQoVAhgBbSUKFQQVFCxcFQQVFAAAABYG' +
  'GRwZjCYAHBUEGTUABhAZGAFpFQIWBhZ0FnwmSCYIKSwVBBUAFQIAFQAVEBUCADwpBhkmAgQAAAAmABwVAhk1AAYQGRgBbhUC' +
  'FgYWbhZ2JrwBJoQBKSwVBBUAFQIAFQAVEBUCADwpBhkmAAYAAAAmABwVChk1AAYQGRgBZBUCFgYWdBZ8JroCJvoBKSwVBBUA' +
  'FQIAFQAVEBUCADwpBhkmAgQAAAAmABwVDBk1AAYQGRgBcxUCFgYWaBZwJqoDJvYCKSwVBBUAFQIAFQAVEBUCADwWBBkGGSYC' +
  'BAAAACYAHBUAGSUGABkYAWIVAhYGFjQWOCbmA0kcFQAVABUCADwpBhkmAgQAAAAmABwVBBk1AAYQGRgBdBUCFgYWhgEWiAEm' +
  '6AQmngQpLBUEFQAVAgAVABUQFQIAPCkGGSYABgAAACYAHBUCGTUABhAZGAFlFQIWBhZuFnYm3gUmpgUpLBUEFQAVAgAVABUQ' +
  'FQIAPCkGGSYABgAAACYAHBUOGTUABhAZGAFtFQIWBhZoFnAm0AYmnAYpLBUEFQAVAgAVABUQFQIAPCkGGSYCBAAAABbOBhYG' +
  'JggWhAcAKCBwYXJxdWV0LWNwcC1hcnJvdyB2ZXJzaW9uIDI2LjAuMRmMHAAAHAAAHAAAHAAAHAAAHAAAHAAAHAAAAG0CAABQ' +
  'QVIx';

const DATA_PATH = 'p=a/0.parquet';

/** The deletion vector of row 1 alone, inline: the magic number 1681511377, then a
 * 64-bit roaring bitmap of one 32-bit bitmap (key 0) of one array container ([1]), 34 bytes,
 * padded to 36 and Z85-encoded. */
const INLINE_DV = { storageType: 'i', pathOrInlineDv: '^Bg9^0rr910000000000iXQKl0rr91000005c8Xg0rr91', sizeInBytes: 34, cardinality: 1 };

function bytesOfBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The tiny table's objects, by path. */
function tinyTable() {
  const data = bytesOfBase64(TINY_PARQUET);
  const schema = {
    type: 'struct',
    fields: TINY_COLUMNS.map(([name, type]) => ({ name, type, nullable: true, metadata: {} })),
  };
  const stats = { numRecords: 3, minValues: { n: 1 }, maxValues: { n: 3 }, nullCount: { n: 0 } };
  const commit = [
    {
      protocol: {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['deletionVectors'],
      },
    },
    {
      metaData: {
        id: 'warm-up',
        format: { provider: 'parquet', options: {} },
        schemaString: JSON.stringify(schema),
        partitionColumns: ['p'],
        configuration: {},
        createdTime: 0,
      },
    },
    {
      add: {
        path: DATA_PATH,
        partitionValues: { p: 'a' },
        size: data.length,
        modificationTime: 0,
        dataChange: true,
        stats: JSON.stringify(stats),
        deletionVector: INLINE_DV,
      },
    },
  ].map((action) => JSON.stringify(action)).join('\n');
  return new Map([
    ['_delta_log/00000000000000000000.json', new TextEncoder().encode(`${commit}\n`)],
    [DATA_PATH, data],
  ]);
}

/**
 * Opens and scans the tiny table with the module's `openSource` (as `DeltaTable.open` does
 * for a byte source) and resolves to the number of rows read (2 of its 3), or rejects.
 * Between the open and the scan it lets the page run (one task), so the compiling is not
 * one long stall and the first open's answers, if they are in, are handled.
 */
export async function warmUp(openSource) {
  const objects = tinyTable();
  const source = {
    async read(path, start, end) {
      const bytes = objects.get(path);
      if (bytes === undefined) {
        throw Object.assign(new Error(`no ${path}`), { code: 'not_found' });
      }
      return bytes.slice(start ?? 0, end ?? bytes.length);
    },
  };
  const table = await openSource(source, 'custom', 'source:///warm-up/', {});
  try {
    await new Promise((resolve) => setTimeout(resolve, 0));
    // As DeltaTable's scans are read: the pieces of one IPC stream.
    const scan = table.scan({});
    try {
      while ((await scan.next()) !== null);
      return scan.metrics.rowsEmitted;
    } finally {
      scan.free();
    }
  } finally {
    table.free();
  }
}
