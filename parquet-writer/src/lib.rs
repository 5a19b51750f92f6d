//! An Arrow IPC stream rewritten as a Parquet file: the schema and record batches of the
//! stream, in order, snappy-compressed, with row groups of at most `row_group_rows` rows and
//! the Arrow schema embedded (so readers get the same Arrow types back). What the package's
//! `toParquet` runs in its own WebAssembly module; natively the same function is tested.

use std::io::Cursor;

use arrow_ipc::reader::StreamReader;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

/// Rows per row group when the caller does not say.
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1024 * 1024;

/// Why a stream could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// The bytes are not an Arrow IPC stream (or it is cut short).
    Ipc(arrow_schema::ArrowError),
    /// The stream holds something Parquet cannot store.
    Parquet(parquet::errors::ParquetError),
    /// `row_group_rows` was 0.
    RowGroupRows,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Ipc(e) => write!(f, "not a readable Arrow IPC stream: {e}"),
            WriteError::Parquet(e) => write!(f, "cannot write it as Parquet: {e}"),
            WriteError::RowGroupRows => write!(f, "rowGroupRows must be at least 1"),
        }
    }
}

impl std::error::Error for WriteError {}

/// The Parquet file of the IPC stream `ipc`.
pub fn ipc_to_parquet(ipc: &[u8], row_group_rows: Option<usize>) -> Result<Vec<u8>, WriteError> {
    let rows = row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS);
    if rows == 0 {
        return Err(WriteError::RowGroupRows);
    }
    let reader = StreamReader::try_new(Cursor::new(ipc), None).map_err(WriteError::Ipc)?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(rows))
        .build();
    let mut writer = ArrowWriter::try_new(Vec::new(), reader.schema(), Some(properties))
        .map_err(WriteError::Parquet)?;
    for batch in reader {
        writer
            .write(&batch.map_err(WriteError::Ipc)?)
            .map_err(WriteError::Parquet)?;
    }
    writer.into_inner().map_err(WriteError::Parquet)
}

/// The module's plain ABI (no wasm-bindgen): the package instantiates the module afresh for
/// every call, because some malformed streams make arrow-ipc panic, which with `panic =
/// "abort"` traps and leaves an instance unusable; a fresh instance per call also returns
/// all its memory when the call ends. JS calls `dar_alloc(len)`, writes the stream there,
/// calls `dar_ipc_to_parquet(ptr, len, rowGroupRows or 0)` (0: the file; 1: an error
/// message), then reads `dar_result_len()` bytes at `dar_result_ptr()`.
#[cfg(target_arch = "wasm32")]
mod abi {
    use std::sync::Mutex;

    static RESULT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

    /// Room for `len` bytes, owned by the next `dar_ipc_to_parquet`.
    #[no_mangle]
    pub extern "C" fn dar_alloc(len: usize) -> *mut u8 {
        let mut room = std::mem::ManuallyDrop::new(Vec::<u8>::with_capacity(len));
        room.as_mut_ptr()
    }

    /// Writes the stream of `len` bytes at `ptr` (from `dar_alloc(len)`) as Parquet.
    ///
    /// # Safety
    /// `ptr` must come from `dar_alloc(len)` with the same `len`, all of it written.
    #[no_mangle]
    pub unsafe extern "C" fn dar_ipc_to_parquet(ptr: *mut u8, len: usize, rows: u32) -> u32 {
        // SAFETY: the caller passes what dar_alloc(len) returned, filled.
        let input = unsafe { Vec::from_raw_parts(ptr, len, len) };
        let rows = (rows > 0).then_some(rows as usize);
        let (status, out) = match super::ipc_to_parquet(&input, rows) {
            Ok(file) => (0, file),
            Err(e) => (1, e.to_string().into_bytes()),
        };
        drop(input);
        if let Ok(mut result) = RESULT.lock() {
            *result = out;
        }
        status
    }

    /// Where the last call's result is.
    #[no_mangle]
    pub extern "C" fn dar_result_ptr() -> *const u8 {
        RESULT.lock().map_or(std::ptr::null(), |r| r.as_ptr())
    }

    /// How long the last call's result is.
    #[no_mangle]
    pub extern "C" fn dar_result_len() -> usize {
        RESULT.lock().map_or(0, |r| r.len())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Int32Builder, ListBuilder};
    use arrow_array::{
        ArrayRef, BooleanArray, Decimal128Array, Int64Array, RecordBatch, StringArray, StructArray,
        TimestampMicrosecondArray,
    };
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field, Fields, Schema};
    use bytes::Bytes;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::*;

    fn batches(rows: usize, parts: usize) -> Vec<RecordBatch> {
        let point = Fields::from(vec![
            Field::new("x", DataType::Int64, false),
            Field::new("label", DataType::Utf8, true),
        ]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("ok", DataType::Boolean, true),
            Field::new(
                "at",
                DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new("amount", DataType::Decimal128(12, 2), true),
            Field::new("point", DataType::Struct(point.clone()), true),
            Field::new(
                "tags",
                DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
                true,
            ),
        ]));
        (0..parts)
            .map(|p| {
                let ids: Vec<i64> = (0..rows).map(|i| (p * rows + i) as i64).collect();
                let mut tags = ListBuilder::new(Int32Builder::new());
                for &id in &ids {
                    if id % 5 == 0 {
                        tags.append_null();
                    } else {
                        tags.values().append_value(id as i32);
                        tags.values().append_null();
                        tags.append(true);
                    }
                }
                let x: ArrayRef = Arc::new(Int64Array::from(ids.clone()));
                let label: ArrayRef = Arc::new(StringArray::from_iter(
                    ids.iter().map(|i| (i % 3 != 0).then(|| format!("p{i}"))),
                ));
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int64Array::from(ids.clone())),
                    Arc::new(StringArray::from_iter(
                        ids.iter()
                            .map(|i| (i % 4 != 0).then(|| format!("név {i} ✓"))),
                    )),
                    Arc::new(BooleanArray::from_iter(
                        ids.iter().map(|i| (i % 7 != 0).then_some(i % 2 == 0)),
                    )),
                    Arc::new(
                        TimestampMicrosecondArray::from_iter(
                            ids.iter().map(|i| (i % 6 != 0).then_some(i * 1_000_003)),
                        )
                        .with_timezone("UTC"),
                    ),
                    Arc::new(
                        Decimal128Array::from_iter(
                            ids.iter().map(|i| (i % 8 != 0).then_some(*i as i128 * 101)),
                        )
                        .with_precision_and_scale(12, 2)
                        .unwrap(),
                    ),
                    Arc::new(StructArray::new(point.clone(), vec![x, label], None)),
                    Arc::new(tags.finish()),
                ];
                RecordBatch::try_new(Arc::clone(&schema), columns).unwrap()
            })
            .collect()
    }

    fn stream(batches: &[RecordBatch], schema: &Schema) -> Vec<u8> {
        let mut writer = StreamWriter::try_new(Vec::new(), schema).unwrap();
        for b in batches {
            writer.write(b).unwrap();
        }
        writer.finish().unwrap();
        writer.into_inner().unwrap()
    }

    fn read_back(file: Vec<u8>) -> (Arc<Schema>, Vec<RecordBatch>, usize) {
        let builder = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(file)).unwrap();
        let groups = builder.metadata().num_row_groups();
        let schema = Arc::clone(builder.schema());
        let batches = builder
            .build()
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        (schema, batches, groups)
    }

    #[test]
    fn every_row_and_type_comes_back() {
        let written = batches(1000, 3);
        let schema = written[0].schema();
        let file = ipc_to_parquet(&stream(&written, &schema), Some(1200)).unwrap();
        assert_eq!(&file[..4], b"PAR1");
        let (back_schema, back, groups) = read_back(file);
        assert_eq!(back_schema.fields(), schema.fields());
        assert_eq!(groups, 3, "3000 rows in row groups of at most 1200");
        let want = arrow_select_concat(&written);
        let got = arrow_select_concat(&back);
        assert_eq!(got, want);
    }

    /// The batches as one list of rows of each column, compared as Arrow arrays.
    fn arrow_select_concat(batches: &[RecordBatch]) -> Vec<Vec<ArrayRef>> {
        let columns = batches[0].num_columns();
        (0..columns)
            .map(|c| {
                let mut out = Vec::new();
                for b in batches {
                    let col = b.column(c);
                    for i in 0..col.len() {
                        out.push(col.slice(i, 1));
                    }
                }
                out
            })
            .collect()
    }

    #[test]
    fn a_stream_without_batches_is_an_empty_file_with_the_schema() {
        let schema = batches(1, 1)[0].schema();
        let file = ipc_to_parquet(&stream(&[], &schema), None).unwrap();
        let (back_schema, back, _) = read_back(file);
        assert_eq!(back_schema.fields(), schema.fields());
        assert_eq!(back.iter().map(RecordBatch::num_rows).sum::<usize>(), 0);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let good = {
            let b = batches(50, 2);
            stream(&b, &b[0].schema())
        };
        assert!(matches!(
            ipc_to_parquet(b"not arrow at all", None),
            Err(WriteError::Ipc(_))
        ));
        assert!(matches!(ipc_to_parquet(&[], None), Err(WriteError::Ipc(_))));
        assert!(matches!(
            ipc_to_parquet(&good, Some(0)),
            Err(WriteError::RowGroupRows)
        ));
        // Cut anywhere: an error or (cut at a message boundary) fewer rows, never a panic.
        for cut in (0..good.len()).step_by(37) {
            if let Ok(file) = ipc_to_parquet(&good[..cut], None) {
                let (_, back, _) = read_back(file);
                assert!(back.iter().map(RecordBatch::num_rows).sum::<usize>() <= 100);
            }
        }
        // Flipped bytes can make arrow-ipc panic or ask for absurd allocations (which abort a
        // native process): the package's Node test feeds them to the wasm module, where both
        // are traps that it turns into errors, with a fresh instance for the next call.
    }
}
