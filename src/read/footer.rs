//! Reading a Parquet footer over a [`RangeRead`](crate::io::RangeRead): one ranged read of the
//! file's tail (its size is known from `add.size`, so there is no HEAD and no suffix range),
//! more only if the footer or the page index is larger than the first guess.

use std::sync::Arc;

use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataPushDecoder};
use parquet::DecodeResult;

use crate::error::{DeltaError, Phase, Result};
use crate::io::RangeRead;

/// Bytes read from the end of a file in the first request.
pub const FOOTER_HINT: u64 = 64 * 1024;

/// The smallest Parquet file: magic, footer length, magic (4 + 4 + 4 bytes).
pub const MIN_PARQUET_SIZE: u64 = 12;

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
        .push_range(start..size, tail)
        .map_err(|e| parquet_error(path, e))?;
    loop {
        match decoder.try_decode().map_err(|e| parquet_error(path, e))? {
            DecodeResult::Data(metadata) => return Ok(Arc::new(metadata)),
            DecodeResult::NeedsData(ranges) => {
                let fetches = ranges.iter().map(|r| store.get_range(path, r.clone()));
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

/// Refuses a footer whose declared length does not fit in the file (`tail` ends the file of
/// `size` bytes): the decoder would compute the footer's start from it.
fn check_footer_length(path: &str, tail: &[u8], size: u64) -> Result<()> {
    let Some(len_bytes) = tail
        .len()
        .checked_sub(8)
        .and_then(|at| tail.get(at..at + 4))
    else {
        return Ok(());
    };
    let mut len = [0u8; 4];
    len.copy_from_slice(len_bytes);
    let declared = u64::from(u32::from_le_bytes(len));
    if declared + MIN_PARQUET_SIZE > size {
        return Err(parquet_error(
            path,
            parquet::errors::ParquetError::General(format!(
                "the footer declares {declared} bytes of metadata, more than the file of \
                 {size} bytes holds"
            )),
        ));
    }
    Ok(())
}
