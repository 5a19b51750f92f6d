//! Reading a Parquet footer over a [`RangeRead`](crate::io::RangeRead): one ranged read of the
//! file's tail (its size is known from `add.size`, so there is no HEAD and no suffix range),
//! more only if the footer or the page index is larger than the first guess.

use std::sync::Arc;

use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataPushDecoder};
use parquet::DecodeResult;

use crate::error::{DeltaError, Phase, Result};
use crate::io::RangeRead;
use crate::limits::pages::check_chunk_bounds;

/// Bytes read from the end of a file in the first request, natively.
#[cfg(not(target_arch = "wasm32"))]
pub const FOOTER_HINT: u64 = 64 * 1024;

/// Bytes read from the end of a file in the first request on wasm32, where each further
/// request is a round trip: enough for the footer and page index of a file of a hundred row
/// groups (a 4M-row file's took three requests with 64 KiB).
#[cfg(target_arch = "wasm32")]
pub const FOOTER_HINT: u64 = 256 * 1024;

pub(crate) use crate::limits::parquet_tail::MIN_PARQUET_SIZE;

fn parquet_error(path: &str, source: parquet::errors::ParquetError) -> DeltaError {
    DeltaError::Parquet {
        path: path.to_string(),
        phase: Phase::Read,
        source,
    }
}

/// Reads and decodes the footer (and page index, when present) of the file at `path` of
/// `size` bytes.
pub async fn read_metadata(
    store: &dyn RangeRead,
    path: &str,
    size: u64,
) -> Result<Arc<ParquetMetaData>> {
    if size < MIN_PARQUET_SIZE {
        return Err(DeltaError::Parquet {
            path: path.to_string(),
            phase: Phase::Read,
            source: parquet::errors::ParquetError::General(format!(
                "file of {size} bytes is too small to be Parquet"
            )),
        });
    }
    let mut decoder = ParquetMetaDataPushDecoder::try_new(size)
        .map_err(|e| parquet_error(path, e))?
        .with_page_index_policy(PageIndexPolicy::Optional);
    let start = size.saturating_sub(FOOTER_HINT);
    let tail = store.get_range(path, start..size).await?;
    check_footer_length(path, &tail, size)?;
    decoder
        .push_range(start..size, tail.clone())
        .map_err(|e| parquet_error(path, e))?;
    loop {
        match decoder.try_decode().map_err(|e| parquet_error(path, e))? {
            DecodeResult::Data(metadata) => {
                check_chunk_bounds(&metadata, size, path, Phase::Read)?;
                return Ok(Arc::new(metadata));
            }
            DecodeResult::NeedsData(ranges) => {
                // A range that ends inside the tail already read (a page index or footer
                // that starts before it) fetches only the bytes before the tail.
                let fetches = ranges.iter().map(|r| async {
                    if r.end <= start || r.start >= start {
                        return store.get_range(path, r.clone()).await;
                    }
                    let head = store.get_range(path, r.start..start).await?;
                    let held = usize::try_from(r.end.min(size) - start).unwrap_or(usize::MAX);
                    let mut joined = Vec::with_capacity(head.len() + held);
                    joined.extend_from_slice(&head);
                    joined.extend_from_slice(tail.get(..held).unwrap_or(&tail));
                    Ok(bytes::Bytes::from(joined))
                });
                let data = futures::future::try_join_all(fetches).await?;
                decoder
                    .push_ranges(ranges, data)
                    .map_err(|e| parquet_error(path, e))?;
            }
            DecodeResult::Finished => {
                return Err(parquet_error(
                    path,
                    parquet::errors::ParquetError::General("no footer decoded".into()),
                ))
            }
        }
    }
}

/// Refuses a file whose end (`tail`, of a file of `size` bytes) is not a Parquet footer that
/// fits in it (see [`parquet_tail`](crate::limits::parquet_tail)): the decoder would compute
/// the footer's start from it.
fn check_footer_length(path: &str, tail: &[u8], size: u64) -> Result<()> {
    match crate::limits::parquet_tail::problem(tail, size) {
        Some(problem) => Err(parquet_error(
            path,
            parquet::errors::ParquetError::General(problem),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // tests: block_on
    use std::ops::Range;
    use std::sync::{Arc, Mutex};

    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use bytes::Bytes;
    use futures::executor::block_on;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    use super::*;
    use crate::io::{BoxFuture, MemoryStore};

    /// A store that notes every range asked for.
    #[derive(Debug)]
    struct Noting {
        inner: MemoryStore,
        ranges: Mutex<Vec<Range<u64>>>,
    }

    impl RangeRead for Noting {
        fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
            if let Ok(mut r) = self.ranges.lock() {
                r.push(range.clone());
            }
            self.inner.get_range(path, range)
        }
        fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
            self.inner.get(path)
        }
    }

    /// A file of `columns` Int64 columns and `row_groups` row groups, with page statistics
    /// (so a column and offset index), whose metadata is larger than [`FOOTER_HINT`].
    fn wide_file(columns: usize, row_groups: usize) -> Bytes {
        let fields: Vec<Field> = (0..columns)
            .map(|i| {
                Field::new(
                    format!("column_with_a_long_name_{i:05}"),
                    DataType::Int64,
                    true,
                )
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_max_row_group_row_count(Some(10))
            .build();
        let mut out = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut out, Arc::clone(&schema), Some(props))
            .unwrap_or_else(|e| panic!("{e}"));
        let arrays: Vec<ArrayRef> = (0..columns)
            .map(|c| {
                Arc::new(Int64Array::from_iter_values(
                    (0..10).map(|r| (r * c) as i64),
                )) as ArrayRef
            })
            .collect();
        let batch = RecordBatch::try_new(schema, arrays).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..row_groups {
            writer.write(&batch).unwrap_or_else(|e| panic!("{e}"));
        }
        writer.close().unwrap_or_else(|e| panic!("{e}"));
        Bytes::from(out)
    }

    #[test]
    fn a_footer_longer_than_the_first_read_fetches_only_the_bytes_before_it() {
        let file = wide_file(400, 4);
        let size = file.len() as u64;
        let footer_len = u64::from(u32::from_le_bytes(
            file[file.len() - 8..file.len() - 4]
                .try_into()
                .unwrap_or_default(),
        ));
        assert!(
            footer_len > FOOTER_HINT,
            "the test needs a footer over the first read"
        );
        let store = Noting {
            inner: MemoryStore::new(),
            ranges: Mutex::new(Vec::new()),
        };
        store.inner.put("f.parquet", file.clone());
        let metadata =
            block_on(read_metadata(&store, "f.parquet", size)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(metadata.num_row_groups(), 4);
        assert_eq!(metadata.file_metadata().schema_descr().num_columns(), 400);
        assert!(metadata.column_index().is_some() && metadata.offset_index().is_some());
        let ranges = store.ranges.lock().map(|r| r.clone()).unwrap_or_default();
        // No byte is asked for twice.
        let mut sorted = ranges.clone();
        sorted.sort_by_key(|r| r.start);
        for pair in sorted.windows(2) {
            assert!(
                pair[0].end <= pair[1].start,
                "overlapping reads: {ranges:?}"
            );
        }
        let asked: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        assert!(asked < size, "{asked} bytes asked of {size}");
    }
}
