//! Parquet page headers checked before their bytes reach a decoder.
//!
//! A page header declares its uncompressed size, and the decoder allocates that much before
//! decompressing; a dictionary page declares its value count, and the decoder sizes its
//! dictionary by it. Both come from the file, so a 750-byte file can ask for gigabytes.
//! [`check_pages`] walks the page headers in bytes fetched from a column chunk and refuses,
//! with [`DeltaError::LimitExceeded`], a page whose uncompressed size is over the column
//! chunk's own total or the maximum, or a dictionary page with more values than its
//! uncompressed bytes can hold. [`ChunkIndex`] finds the column chunk a fetched range belongs
//! to, and a chunk with an offset index has its pages checked where the index places them.
//! The walk also refuses a dictionary-encoded page the chunk has no dictionary for, page
//! values past the row group's rows, and (through [`super::page_contents`]) contents a
//! decoder would trust.
//!
//! Headers are read with a bounded compact-protocol reader ([`super::page_header`],
//! [`super::thrift`]). A header that cannot be read in bytes that hold it whole is refused:
//! arrow-rs's own header reader can spin for a minute skipping what such a header declares.

use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::basic::{Compression, Type as PhysicalType};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

use super::page_contents::{
    check_data_page, encoding, v1_levels_len, values_checked, DataPage, LevelLayout, MaxLevels,
};
use super::page_header::{read_header, DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE};
use super::thrift::ThriftError;
use crate::error::{DeltaError, Phase, Result};

/// What the check needs to know of a column chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkFacts {
    /// Sum of the uncompressed sizes of its pages, as its metadata declares.
    total_uncompressed: u64,
    /// Fewest bytes one PLAIN-encoded value of its type takes, in eighths of a byte (a boolean
    /// takes one bit).
    value_eighths: u64,
    /// The column's highest levels, to check a data page's level runs.
    levels: MaxLevels,
    /// Its codec, to decompress page contents where they are checked decompressed.
    /// `UNCOMPRESSED`: its pages' bytes are their data, whatever their headers say the
    /// uncompressed size is.
    codec: Compression,
    /// Rows of its row group: a page of a column that does not repeat has at most one
    /// value per row, and a V2 page states its rows.
    rows: u64,
    /// Compressed page contents are decompressed to be checked: a decoder's panic cannot be
    /// contained on this thread ([`super::decoder_panics::contained`]).
    decompress: bool,
    /// Bytes of one value, for the types whose values all take the same (0 for booleans and
    /// byte arrays).
    value_width: u64,
}

impl ChunkFacts {
    /// Stored without a codec.
    fn uncompressed_codec(&self) -> bool {
        self.codec == Compression::UNCOMPRESSED
    }

    /// The facts of `chunk`, a column chunk of a row group of `rows` rows.
    pub(crate) fn of(chunk: &ColumnChunkMetaData, rows: i64) -> ChunkFacts {
        let descr = chunk.column_descr();
        let bytes = match descr.physical_type() {
            PhysicalType::BOOLEAN => 0,
            PhysicalType::INT32 | PhysicalType::FLOAT | PhysicalType::BYTE_ARRAY => 4,
            PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
            PhysicalType::INT96 => 12,
            PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                u64::try_from(descr.type_length()).unwrap_or(0).max(1)
            }
        };
        ChunkFacts {
            total_uncompressed: u64::try_from(chunk.uncompressed_size()).unwrap_or(0),
            value_eighths: if bytes == 0 { 1 } else { bytes * 8 },
            levels: MaxLevels {
                repetition: descr.max_rep_level(),
                definition: descr.max_def_level(),
            },
            codec: chunk.compression(),
            rows: u64::try_from(rows).unwrap_or(0),
            decompress: !super::decoder_panics::contained(),
            value_width: match descr.physical_type() {
                PhysicalType::BOOLEAN | PhysicalType::BYTE_ARRAY => 0,
                _ => bytes,
            },
        }
    }
}

/// Checks the pages whose headers are in `bytes`, fetched from a column chunk with `facts`
/// starting at a page boundary (a whole chunk, its dictionary page, or pages the offset index
/// names). Pages larger than `max_page_bytes` uncompressed, or than the chunk's declared
/// total, and dictionaries of more values than their page can hold are refused; `path`
/// names the file in the error.
pub(crate) fn check_pages(
    bytes: &[u8],
    facts: ChunkFacts,
    max_page_bytes: u64,
    path: &str,
    phase: Phase,
) -> Result<()> {
    let walk = PageWalk::new(facts, max_page_bytes, path, phase, Some(false));
    walk_pages(bytes, walk, true)
}

/// Walks the pages whose headers follow one another in `bytes` with `walk`'s checks;
/// `to_chunk_end` says the bytes run to the end of the column chunk.
fn walk_pages(bytes: &[u8], mut walk: PageWalk<'_>, to_chunk_end: bool) -> Result<()> {
    let mut at = 0usize;
    while at < bytes.len() {
        match bytes
            .get(at..)
            .map(|rest| walk.page(rest, to_chunk_end))
            .transpose()?
        {
            Some(Some(len)) => at = at.saturating_add(len),
            // A header cut short by the end of the bytes fetched, or one with a field
            // missing: the decoder's own error.
            _ => return Ok(()),
        }
    }
    Ok(())
}

/// The checks of one column chunk's pages, one page at a time: what they carry from page to
/// page is the values of the data pages so far and whether a dictionary page was read.
struct PageWalk<'a> {
    facts: ChunkFacts,
    max_page_bytes: u64,
    path: &'a str,
    phase: Phase,
    values_seen: u64,
    /// Whether the chunk has a dictionary page the decoder reads before the pages walked:
    /// `None` when not known (the walk starts inside the chunk).
    dictionary: Option<bool>,
}

impl<'a> PageWalk<'a> {
    fn new(
        facts: ChunkFacts,
        max_page_bytes: u64,
        path: &'a str,
        phase: Phase,
        dictionary: Option<bool>,
    ) -> Self {
        PageWalk {
            facts,
            max_page_bytes,
            path,
            phase,
            values_seen: 0,
            dictionary,
        }
    }

    /// Checks the page whose header starts `bytes`; its length in bytes (header and body),
    /// or `None` when its header lacks a field the checks need (the decoder refuses it) or
    /// is cut short by the end of bytes that do not run to the end of the page (`complete`
    /// false: they were fetched in part). A header that cannot be read in bytes that hold
    /// it whole is refused: arrow-rs's header reader can spin for minutes skipping what a
    /// malformed header declares. A body that `bytes` does not hold whole is not read.
    fn page(&mut self, bytes: &[u8], complete: bool) -> Result<Option<usize>> {
        let (facts, path, phase) = (self.facts, self.path, self.phase);
        let (header, len) = match read_header(bytes) {
            Ok(read) => read,
            Err(ThriftError::Truncated) if !complete => return Ok(None),
            Err(e) => {
                let why = match e {
                    ThriftError::Truncated => "runs past the page's bytes",
                    ThriftError::Malformed => "is not a valid Thrift struct",
                };
                return Err(corrupt(path, phase, format!("a page header that {why}")));
            }
        };
        let (Some(uncompressed), Some(compressed)) = (header.uncompressed, header.compressed)
        else {
            return Ok(None);
        };
        let (Ok(uncompressed), Ok(compressed)) =
            (u64::try_from(uncompressed), usize::try_from(compressed))
        else {
            return Ok(None);
        };
        let limit =
            |name, found, max| DeltaError::limit_exceeded(name, found, max, Some(path), phase);
        if uncompressed > self.max_page_bytes {
            return Err(limit(
                "page uncompressed size",
                uncompressed,
                self.max_page_bytes,
            ));
        }
        if uncompressed > facts.total_uncompressed {
            return Err(limit(
                "page uncompressed size (against its column chunk's total)",
                uncompressed,
                facts.total_uncompressed,
            ));
        }
        // arrow-rs unwraps the header struct of a data page's type (a panic).
        if header.lacks_its_data_header() {
            return Err(corrupt(
                path,
                phase,
                "a data page without the data page header (V1 or V2) of its type".into(),
            ));
        }
        if let Some(values) = header.dictionary_values {
            // No values in bytes: arrow-rs divides the bytes by the count (a panic).
            // (A codec frames even no bytes, so only the uncompressed size counts, or the
            // stored bytes when there is no codec.)
            let holds = if facts.uncompressed_codec() {
                compressed as u64
            } else {
                uncompressed
            };
            if values <= 0 && holds > 0 {
                return Err(corrupt(
                    path,
                    phase,
                    format!("a dictionary page of {values} values holds {uncompressed} bytes"),
                ));
            }
            let values = u64::try_from(values).unwrap_or(0);
            let room = uncompressed.saturating_mul(8) / facts.value_eighths;
            if values > room {
                return Err(limit("dictionary page num_values", values, room));
            }
        }
        if header.page_type == Some(DICTIONARY_PAGE) {
            self.dictionary = Some(true);
        }
        let is_data = matches!(header.page_type, Some(DATA_PAGE | DATA_PAGE_V2));
        let data = header.data.as_ref().filter(|_| is_data);
        if let Some(page) = data {
            let by_dictionary = matches!(
                page.encoding,
                encoding::PLAIN_DICTIONARY | encoding::RLE_DICTIONARY
            );
            // arrow-rs asserts its dictionary decoder was set by a dictionary page.
            if by_dictionary && self.dictionary == Some(false) {
                return Err(corrupt(
                    path,
                    phase,
                    "a dictionary-encoded data page in a column chunk without a dictionary page"
                        .into(),
                ));
            }
            let values = check_page_rows(page, facts, path, phase)?;
            self.values_seen = self.values_seen.saturating_add(values);
            if facts.levels.repetition == 0 && self.values_seen > facts.rows {
                return Err(corrupt(
                    path,
                    phase,
                    format!(
                        "data pages of {} values in a column of a row group of {} rows",
                        self.values_seen, facts.rows
                    ),
                ));
            }
        }
        let body_end = len.saturating_add(compressed);
        if let (Some(page), Some(body)) = (data, bytes.get(len..body_end)) {
            let decompressed = if facts.decompress && !facts.uncompressed_codec() {
                checked_body(page, body, uncompressed, facts)
            } else {
                None
            };
            let (body, plain) = match &decompressed {
                Some(d) => (d.as_slice(), true),
                None => (body, facts.uncompressed_codec()),
            };
            check_data_page(page, body, facts.levels, plain, facts.value_width)
                .map_err(|reason| corrupt(path, phase, format!("a data page holds {reason}")))?;
        }
        Ok(Some(body_end))
    }
}

/// Checks the pages of a column chunk that has an offset index, in `bytes` fetched from
/// `start`: the dictionary page (before the first page the index names) and each page of
/// `pages` that `bytes` holds whole, read where the index places it, as the decoder reads it.
/// A page whose header and body do not fill the size the index gives it is refused: the
/// decoder hands the index's bytes to the page's decoder whatever the header says.
fn check_indexed_pages(
    bytes: &[u8],
    start: u64,
    chunk_start: u64,
    pages: &[(u64, u64)],
    mut walk: PageWalk<'_>,
) -> Result<()> {
    let end = start.saturating_add(bytes.len() as u64);
    let slice = |from: u64, to: u64| {
        let from = usize::try_from(from.checked_sub(start)?).ok()?;
        let to = usize::try_from(to.checked_sub(start)?).ok()?;
        bytes.get(from..to)
    };
    let first = pages.first().map_or(end, |&(offset, _)| offset);
    if chunk_start >= start && chunk_start < first {
        if let Some(dictionary) = slice(chunk_start, first.min(end)) {
            walk.page(dictionary, first <= end)?;
        }
    }
    for &(offset, size) in pages {
        let Some(page) = offset
            .checked_add(size)
            .filter(|&to| offset >= start && to <= end)
            .and_then(|to| slice(offset, to))
        else {
            continue;
        };
        if let Some(len) = walk.page(page, true)? {
            if len as u64 != size {
                return Err(corrupt(
                    walk.path,
                    walk.phase,
                    format!(
                        "the page at byte {offset} takes {len} bytes (its header and body), \
                         the page index gives it {size}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The values of a data page, checked against its row group's rows: a V2 page's `num_rows`
/// at most the rows, as is a page's `num_values` in a column that does not repeat (one
/// value, or null, per row). Levels are run-length encoded, so a few bytes can declare
/// billions of values; a decoder would produce rows the row group does not have.
fn check_page_rows(page: &DataPage, facts: ChunkFacts, path: &str, phase: Phase) -> Result<u64> {
    let values = u64::try_from(page.num_values).map_err(|_| {
        corrupt(
            path,
            phase,
            format!("a data page of {} values", page.num_values),
        )
    })?;
    let rows = match page.levels {
        LevelLayout::V2 { num_rows, .. } => Some(num_rows),
        LevelLayout::V1 { .. } => None,
    };
    if let Some(rows) = rows {
        if u64::try_from(rows).map_or(true, |r| r > facts.rows) {
            return Err(corrupt(
                path,
                phase,
                format!(
                    "a data page of {rows} rows in a row group of {}",
                    facts.rows
                ),
            ));
        }
    }
    Ok(values)
}

/// What the content checks read of a data page whose contents are compressed, decompressed:
/// the whole body when its values are checked, else only the level sections of a V1 page
/// (its first bytes; a V2 page's are never compressed). `None`: nothing compressed is read
/// (or it does not decompress), and the check reads the stored bytes as they are.
fn checked_body(
    page: &DataPage,
    body: &[u8],
    uncompressed: u64,
    facts: ChunkFacts,
) -> Option<Vec<u8>> {
    if values_checked(page, facts.value_width) {
        return decompressed_body(page, body, uncompressed, facts.codec);
    }
    let size = usize::try_from(uncompressed).ok()?;
    let contents = super::page_codecs::Prefixes::new(facts.codec, body, size);
    let levels = v1_levels_len(page, facts.levels, |n| contents.first(n))?;
    contents.first(levels)
}

/// A data page's body with its compressed contents decompressed (a V2 page's level sections
/// are never compressed and are kept as they are), for the checks of its contents; `None`
/// when nothing in it is compressed, or it does not decompress to its declared size (the
/// decoder then fails on it the same way).
fn decompressed_body(
    page: &DataPage,
    body: &[u8],
    uncompressed: u64,
    codec: Compression,
) -> Option<Vec<u8>> {
    let plain_prefix = match page.levels {
        LevelLayout::V1 { .. } => 0,
        LevelLayout::V2 {
            values_compressed: false,
            ..
        } => return None,
        LevelLayout::V2 {
            repetition_bytes,
            definition_bytes,
            ..
        } => usize::try_from(repetition_bytes.checked_add(definition_bytes)?).ok()?,
    };
    // At most the page limit, checked before this is called.
    let uncompressed = usize::try_from(uncompressed).ok()?;
    let values_size = uncompressed.checked_sub(plain_prefix)?;
    let mut out = Vec::with_capacity(uncompressed);
    out.extend_from_slice(body.get(..plain_prefix)?);
    // No values (a page of nulls): nothing is decompressed, as in the decoder.
    if values_size > 0 {
        out.extend(super::page_codecs::decompress(
            codec,
            body.get(plain_prefix..)?,
            values_size,
        )?);
    }
    Some(out)
}

/// Options for every Parquet decoder of ours (data files and checkpoints): the Arrow
/// schema a writer may embed in the footer (`ARROW:schema`) is left out. The Delta schema
/// (or the checkpoint's protocol types) decides every column's type, and arrow-ipc panics on
/// some malformed embedded schemas (an integer of bit width 0, an unknown type id), which a
/// hostile file can carry. The Parquet types and annotations alone give the decoded types.
pub(crate) fn reader_options() -> ArrowReaderOptions {
    ArrowReaderOptions::new().with_skip_arrow_metadata(true)
}

/// Where a column chunk starts (its dictionary page, else its first data page) and its
/// length in bytes, as its metadata declares them; `None` when either is negative.
fn chunk_span(c: &ColumnChunkMetaData) -> Option<(u64, u64)> {
    let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
    Some((
        u64::try_from(start).ok()?,
        u64::try_from(c.compressed_size()).ok()?,
    ))
}

/// Refuses a footer whose column chunks do not lie inside the file's `size` bytes: a
/// negative offset or length (arrow-rs asserts they are not), or a chunk that runs past the
/// end; and a page index whose page locations do not (see [`check_page_locations`]).
/// Checked once per footer, before anything computes a range from them.
pub(crate) fn check_chunk_bounds(
    metadata: &ParquetMetaData,
    size: u64,
    path: &str,
    phase: Phase,
) -> Result<()> {
    for (g, rg) in metadata.row_groups().iter().enumerate() {
        for (i, c) in rg.columns().iter().enumerate() {
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            let fits = chunk_span(c).is_some_and(|(start, len)| {
                u64::try_from(c.data_page_offset()).is_ok()
                    && start.checked_add(len).is_some_and(|end| end <= size)
            });
            if !fits {
                return Err(corrupt(
                    path,
                    phase,
                    format!(
                        "column chunk {i} of row group {g} (offset {start}, {} bytes) does not \
                         lie inside the file of {size} bytes",
                        c.compressed_size()
                    ),
                ));
            }
        }
    }
    check_page_locations(metadata, size, path, phase)
}

/// Refuses an offset index (the page index's page locations) whose pages do not lie, in
/// order and without overlapping, inside their column chunk (from its first data page to its
/// end), or whose first row indexes do not start at 0 and rise within the row group: arrow-rs
/// computes page ranges and row counts from them unchecked (a slice past the chunk's bytes,
/// an overflow, or in a release build a wrapped count that selects other rows).
fn check_page_locations(
    metadata: &ParquetMetaData,
    size: u64,
    path: &str,
    phase: Phase,
) -> Result<()> {
    let Some(index) = metadata.offset_index() else {
        return Ok(());
    };
    for (g, (columns, rg)) in index.iter().zip(metadata.row_groups()).enumerate() {
        let rows = rg.num_rows();
        for (i, column) in columns.iter().enumerate() {
            // Where the pages may lie: from the chunk's first data page to its end (inside
            // the file: checked before this is called).
            let bounds = rg.columns().get(i).and_then(|chunk| {
                let (start, len) = chunk_span(chunk)?;
                let first_data = u64::try_from(chunk.data_page_offset()).ok()?;
                Some((first_data.max(start), start.checked_add(len)?.min(size)))
            });
            let Some((low, high)) = bounds else {
                return Err(corrupt(
                    path,
                    phase,
                    format!(
                        "the page index has column {i} in row group {g}, which has no such column"
                    ),
                ));
            };
            let mut previous: Option<(i64, u64)> = None;
            for (p, page) in column.page_locations().iter().enumerate() {
                let span = match (
                    u64::try_from(page.offset),
                    u64::try_from(page.compressed_page_size),
                ) {
                    (Ok(start), Ok(len)) => start.checked_add(len).map(|end| (start, end)),
                    _ => None,
                };
                let after = previous.map_or(low, |(_, end)| end);
                let inside = span.is_some_and(|(start, end)| start >= after && end <= high);
                let first = page.first_row_index;
                let rises = match previous {
                    None => first == 0,
                    Some((before, _)) => first > before && first < rows,
                };
                if !inside || !rises {
                    return Err(corrupt(
                        path,
                        phase,
                        format!(
                            "page {p} of column {i} in row group {g} of the page index (offset \
                             {}, {} bytes, first row {first}) does not follow the page before \
                             it inside its column chunk (bytes {low} to {high}) and the row \
                             group of {rows} rows",
                            page.offset, page.compressed_page_size
                        ),
                    ));
                }
                previous = span.map(|(_, end)| (first, end));
            }
        }
    }
    Ok(())
}

fn corrupt(path: &str, phase: Phase, reason: String) -> DeltaError {
    DeltaError::Parquet {
        path: path.to_string(),
        phase,
        source: parquet::errors::ParquetError::General(reason),
    }
}

/// The column chunks of a file by where they start, to find the one a fetched range is in.
#[derive(Debug, Default)]
pub(crate) struct ChunkIndex {
    /// Sorted by first byte.
    chunks: Vec<IndexedChunk>,
}

/// A column chunk of a [`ChunkIndex`].
#[derive(Debug)]
struct IndexedChunk {
    /// Its first byte and its end (one past its last byte).
    start: u64,
    end: u64,
    facts: ChunkFacts,
    /// Where the offset index places its data pages and their sizes (headers included), in
    /// order; empty without an offset index.
    pages: Vec<(u64, u64)>,
}

impl IndexedChunk {
    /// Whether the decoder, reading this chunk by its offset index, has a dictionary page:
    /// the bytes before the first page the index names, when there are some, read from the
    /// fetched `ranges` (sorted by start); `None` when they were not fetched.
    fn dictionary_in(&self, ranges: &[(u64, &[u8])]) -> Option<bool> {
        let first = self.pages.first().map_or(self.end, |&(offset, _)| offset);
        if first <= self.start {
            return Some(false);
        }
        let i = ranges
            .partition_point(|&(start, _)| start <= self.start)
            .checked_sub(1)?;
        let &(start, bytes) = ranges.get(i)?;
        let at = usize::try_from(self.start - start).ok()?;
        let (header, _) = read_header(bytes.get(at..)?).ok()?;
        Some(header.page_type == Some(DICTIONARY_PAGE))
    }
}

impl ChunkIndex {
    /// The column chunks of every row group of `metadata`.
    pub(crate) fn new(metadata: &ParquetMetaData) -> ChunkIndex {
        Self::of_leaves(metadata, |_| true)
    }

    /// The same chunks, their compressed page contents checked decompressed: for a decoder
    /// whose panics nothing here contains (another engine's: the kernel backend).
    #[cfg(all(feature = "kernel", not(target_arch = "wasm32")))]
    pub(crate) fn with_decompressed_checks(mut self) -> ChunkIndex {
        for chunk in &mut self.chunks {
            chunk.facts.decompress = true;
        }
        self
    }

    /// The column chunks of the leaf columns `leaf` accepts (by index) in every row group.
    fn of_leaves(metadata: &ParquetMetaData, leaf: impl Fn(usize) -> bool) -> ChunkIndex {
        let offset_index = metadata.offset_index();
        let mut chunks: Vec<IndexedChunk> = Vec::new();
        for (g, rg) in metadata.row_groups().iter().enumerate() {
            for (i, c) in rg.columns().iter().enumerate() {
                let Some((start, len)) = chunk_span(c).filter(|_| leaf(i)) else {
                    continue;
                };
                let pages = offset_index
                    .and_then(|index| index.get(g)?.get(i))
                    .map(|column| {
                        column
                            .page_locations()
                            .iter()
                            .filter_map(|p| {
                                Some((
                                    u64::try_from(p.offset).ok()?,
                                    u64::try_from(p.compressed_page_size).ok()?,
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                chunks.push(IndexedChunk {
                    start,
                    end: start.saturating_add(len),
                    facts: ChunkFacts::of(c, rg.num_rows()),
                    pages,
                });
            }
        }
        chunks.sort_unstable_by_key(|chunk| chunk.start);
        ChunkIndex { chunks }
    }

    /// Checks the pages of each fetched range (`ranges[i]` holds `data[i]`) in the column
    /// chunks it covers; a range starts at a page boundary (a chunk's start, or a page the
    /// offset index names). A chunk with an offset index has its pages checked where the
    /// index places them, as the decoder reads them.
    pub(crate) fn check_ranges<'a>(
        &self,
        ranges: impl IntoIterator<Item = (u64, &'a [u8])>,
        max_page_bytes: u64,
        path: &str,
        phase: Phase,
    ) -> Result<()> {
        let mut ranges: Vec<(u64, &[u8])> = ranges.into_iter().collect();
        ranges.sort_unstable_by_key(|&(start, _)| start);
        for &(start, bytes) in &ranges {
            let end = start.saturating_add(bytes.len() as u64);
            // The chunk holding `start`, then each chunk starting inside the range (ranges
            // are coalesced across chunks): each part is checked with its own chunk's facts
            // and only up to that chunk's end.
            let first = self
                .chunks
                .partition_point(|chunk| chunk.start <= start)
                .saturating_sub(1);
            for chunk in self.chunks.get(first..).unwrap_or_default() {
                if chunk.start >= end {
                    break;
                }
                if chunk.end <= start {
                    continue;
                }
                let from = chunk.start.max(start);
                let to = chunk.end.min(end);
                let (Ok(from_at), Ok(to_at)) =
                    (usize::try_from(from - start), usize::try_from(to - start))
                else {
                    continue;
                };
                let Some(part) = bytes.get(from_at..to_at) else {
                    continue;
                };
                let dictionary = if chunk.pages.is_empty() {
                    // Fetched whole: a walk from the chunk's start meets its dictionary first.
                    (from == chunk.start).then_some(false)
                } else {
                    chunk.dictionary_in(&ranges)
                };
                let walk = PageWalk::new(chunk.facts, max_page_bytes, path, phase, dictionary);
                if chunk.pages.is_empty() {
                    walk_pages(part, walk, to == chunk.end)?;
                } else {
                    check_indexed_pages(part, from, chunk.start, &chunk.pages, walk)?;
                }
            }
        }
        Ok(())
    }
}

/// Checks the pages of the column chunks of the leaf columns `leaves` (all when `None`) in
/// the Parquet file `data`, held whole, whose footer is `metadata` (the tests' way in; the
/// readers check chunks as their bytes arrive).
#[cfg(test)]
pub(crate) fn check_file(
    data: &[u8],
    metadata: &ParquetMetaData,
    leaves: Option<&[usize]>,
    max_page_bytes: u64,
    path: &str,
) -> Result<()> {
    let index = ChunkIndex::of_leaves(metadata, |i| leaves.is_none_or(|l| l.contains(&i)));
    let phase = Phase::Load;
    let chunks = index.chunks.iter().filter_map(|chunk| {
        let end = usize::try_from(chunk.end).ok()?.min(data.len());
        Some((
            chunk.start,
            data.get(usize::try_from(chunk.start).ok()?..end)?,
        ))
    });
    index.check_ranges(chunks, max_page_bytes, path, phase)
}

#[cfg(test)]
#[path = "pages_tests.rs"]
mod tests;
