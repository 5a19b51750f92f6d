//! Byte-range file tasks: which rows of a file a range of its bytes owns.
//!
//! A file may be read as several tasks, each over a byte range of it (ranges that tile the
//! file). Each row group has a byte span: from its first column page (the smallest dictionary
//! or data page offset over its column chunks) to the end of its last column chunk.
//!
//! - A row group with an offset index (page locations for every column) is shared by the
//!   ranges its span crosses: a cut at byte `x` of the span falls at the row in the same
//!   proportion, rounded to [`CUT_ROWS`]. Each task's decoder then reads only the pages of its
//!   rows, so one large row group decodes on as many cores as ranges cross it.
//! - Without an offset index a part would have to fetch and decompress the whole column
//!   chunks to skip rows, so such a row group belongs whole to the range that contains its
//!   first page.
//!
//! Either rule is a function of the footer and the cut points alone, so ranges that tile the
//! file own every row exactly once, and reading all ranged tasks of a file returns the same
//! rows as reading it whole. Row positions stay file-global (deletion vectors index rows of
//! the whole file): the reader selects rows rather than slicing bytes.

use std::ops::Range;

use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};

use super::deletion_vector::DeletionVector;

/// Cuts inside a row group fall on multiples of this many rows (and a row group of fewer
/// rows than half of it is never cut), so no task gets a sliver of a few rows that costs a
/// page of every column to decode.
pub const CUT_ROWS: u64 = 8192;

/// The rows of one row group that a task owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRows {
    /// The row group's index in the file.
    pub row_group: usize,
    /// File-global row positions, within the row group's rows (never empty from
    /// [`owned_rows`]; a whole-file read lists every row group, empty ones too).
    pub rows: Range<u64>,
}

/// The byte offset of a column chunk's first page (its dictionary page when it has one).
fn chunk_start(chunk: &parquet::file::metadata::ColumnChunkMetaData) -> u64 {
    let data = chunk.data_page_offset();
    let first = chunk.dictionary_page_offset().map_or(data, |d| d.min(data));
    u64::try_from(first).unwrap_or(0)
}

/// The byte offset where a row group's data starts: the smallest dictionary or data page
/// offset of its column chunks (0 for a row group with no columns).
pub fn row_group_start(row_group: &RowGroupMetaData) -> u64 {
    row_group
        .columns()
        .iter()
        .map(chunk_start)
        .min()
        .unwrap_or(0)
}

/// The end of a row group's bytes: the largest end of its column chunks (at least its start).
fn row_group_end(row_group: &RowGroupMetaData) -> u64 {
    row_group
        .columns()
        .iter()
        .map(|c| {
            let len = u64::try_from(c.compressed_size()).unwrap_or(0);
            chunk_start(c).saturating_add(len)
        })
        .max()
        .unwrap_or(0)
        .max(row_group_start(row_group))
}

/// Whether row group `i` has page locations for every column, so that a task can read some
/// of its rows without the others'.
fn has_page_locations(metadata: &ParquetMetaData, i: usize) -> bool {
    metadata
        .offset_index()
        .and_then(|index| index.get(i))
        .is_some_and(|columns| {
            !columns.is_empty() && columns.iter().all(|c| !c.page_locations().is_empty())
        })
}

/// The row (within a row group of `rows` rows spanning bytes `span`) where a cut at byte
/// `at` falls: 0 at or before the span, `rows` at or after its end, else the proportional
/// row rounded to [`CUT_ROWS`] (or `rows`, when fewer than half of it would be left).
/// Non-decreasing in `at`.
fn cut_row(rows: u64, span: &Range<u64>, at: u64) -> u64 {
    if at <= span.start {
        return 0;
    }
    if at >= span.end {
        return rows;
    }
    let into = u128::from(at - span.start);
    let width = u128::from(span.end - span.start);
    let row = u128::from(rows) * into / width;
    let row = u64::try_from(row).unwrap_or(rows);
    let snapped = (row.saturating_add(CUT_ROWS / 2) / CUT_ROWS).saturating_mul(CUT_ROWS);
    // Nor a sliver at the end.
    if rows.saturating_sub(snapped) < CUT_ROWS / 2 {
        rows
    } else {
        snapped
    }
}

/// The rows a task over `range` owns, by row group in file order (see the module doc).
pub fn owned_rows(metadata: &ParquetMetaData, range: &Range<u64>) -> Vec<OwnedRows> {
    let mut first = 0u64;
    let mut owned = Vec::new();
    for (i, rg) in metadata.row_groups().iter().enumerate() {
        let rows = u64::try_from(rg.num_rows()).unwrap_or(0);
        let span = row_group_start(rg)..row_group_end(rg);
        let (from, to) = if has_page_locations(metadata, i) {
            (
                cut_row(rows, &span, range.start),
                cut_row(rows, &span, range.end),
            )
        } else if range.contains(&span.start) {
            (0, rows)
        } else {
            (0, 0)
        };
        if from < to {
            owned.push(OwnedRows {
                row_group: i,
                rows: first.saturating_add(from)..first.saturating_add(to),
            });
        }
        first = first.saturating_add(rows);
    }
    owned
}

/// The rows of `deleted` a task is answerable for: all of them for a whole-file task
/// (`range` `None`), else those among the rows its range owns, so the tasks of a file read
/// in ranges count each deleted row once between them.
pub fn deleted_rows_owned(
    metadata: &ParquetMetaData,
    range: Option<&Range<u64>>,
    deleted: &DeletionVector,
) -> u64 {
    let Some(range) = range else {
        return deleted.cardinality();
    };
    owned_rows(metadata, range)
        .iter()
        .map(|o| deleted.deleted_in(o.rows.start, o.rows.end - o.rows.start))
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

    use super::*;

    fn metadata(rows: i64, per_group: usize) -> (ParquetMetaData, u64) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..rows)),
                Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|i| format!("v{}", i % 7)),
                )),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let buf = crate::fixture::parquet_bytes_with_row_groups("t", &batch, Some(per_group))
            .unwrap_or_else(|e| panic!("{e}"));
        let meta = ParquetMetaDataReader::new()
            .parse_and_finish(&buf)
            .unwrap_or_else(|e| panic!("{e}"));
        (meta, buf.len() as u64)
    }

    /// As `metadata`, with the page indexes the writer wrote loaded.
    fn metadata_with_pages(rows: i64, per_group: usize) -> (ParquetMetaData, u64) {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let ids = Arc::new(Int64Array::from_iter_values(0..rows));
        let batch = RecordBatch::try_new(schema, vec![ids]).unwrap_or_else(|e| panic!("{e}"));
        let buf = crate::fixture::parquet_bytes_with_row_groups("t", &batch, Some(per_group))
            .unwrap_or_else(|e| panic!("{e}"));
        let meta = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Required)
            .parse_and_finish(&buf)
            .unwrap_or_else(|e| panic!("{e}"));
        (meta, buf.len() as u64)
    }

    #[test]
    fn starts_are_increasing_and_inside_the_file() {
        let (meta, size) = metadata(1000, 100);
        assert_eq!(meta.num_row_groups(), 10);
        let starts: Vec<u64> = meta.row_groups().iter().map(row_group_start).collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
        // After the 4-byte magic, before the footer.
        assert!(starts[0] >= 4 && starts[9] < size);
        // The first page of a chunk may be a dictionary page, before the data page.
        let first = &meta.row_groups()[0];
        let data_min = first
            .columns()
            .iter()
            .map(|c| c.data_page_offset() as u64)
            .min();
        assert!(Some(starts[0]) <= data_min);
    }

    /// The rows each range of `bounds` owns, checked to tile the file's rows: every row
    /// owned once, by ranges in order, each piece inside its row group. Returns the pieces.
    fn tile(meta: &ParquetMetaData, bounds: &[u64]) -> Vec<Vec<OwnedRows>> {
        let total: u64 = meta
            .row_groups()
            .iter()
            .map(|rg| rg.num_rows().max(0) as u64)
            .fold(0, u64::saturating_add);
        let starts: Vec<u64> = meta
            .row_groups()
            .iter()
            .scan(0u64, |first, rg| {
                let at = *first;
                *first += rg.num_rows() as u64;
                Some(at)
            })
            .collect();
        let pieces: Vec<Vec<OwnedRows>> = bounds
            .windows(2)
            .map(|w| owned_rows(meta, &(w[0]..w[1])))
            .collect();
        let mut next = 0u64;
        for piece in pieces.iter().flatten() {
            assert_eq!(piece.rows.start, next, "{bounds:?}: {pieces:?}");
            assert!(piece.rows.start < piece.rows.end);
            let rg = piece.row_group;
            let end = starts[rg] + meta.row_group(rg).num_rows() as u64;
            assert!(starts[rg] <= piece.rows.start && piece.rows.end <= end);
            next = piece.rows.end;
        }
        assert_eq!(next, total, "{bounds:?}: {pieces:?}");
        pieces
    }

    /// Cut points: 1..=12 parts at regular points, and at every row group start ± 1.
    fn splits(meta: &ParquetMetaData, size: u64) -> Vec<Vec<u64>> {
        let mut splits: Vec<Vec<u64>> = (1..=12u64)
            .map(|parts| (1..parts).map(|k| size * k / parts).collect())
            .collect();
        for rg in meta.row_groups() {
            let s = row_group_start(rg);
            splits.push(vec![s]);
            splits.push(vec![s.saturating_sub(1), s + 1]);
        }
        splits
            .into_iter()
            .map(|cuts| {
                let mut bounds = vec![0];
                bounds.extend(cuts);
                bounds.push(size);
                bounds
            })
            .collect()
    }

    #[test]
    fn without_page_locations_every_row_group_has_exactly_one_owner_for_any_split() {
        let (meta, size) = metadata(1000, 70);
        assert!(meta.offset_index().is_none());
        for bounds in splits(&meta, size) {
            for piece in tile(&meta, &bounds).iter().flatten() {
                // Whole row groups only.
                let rows = meta.row_group(piece.row_group).num_rows() as u64;
                assert_eq!(piece.rows.end - piece.rows.start, rows, "{bounds:?}");
            }
        }
        // A range before the first row group owns nothing; the whole file owns all.
        assert!(owned_rows(&meta, &(0..4)).is_empty());
        assert_eq!(owned_rows(&meta, &(0..size)).len(), meta.num_row_groups());
    }

    #[test]
    fn with_page_locations_ranges_share_a_row_group_by_rows() {
        // Three row groups of 40,000, 40,000 and 20,000 rows, with their page indexes.
        let (meta, size) = metadata_with_pages(100_000, 40_000);
        assert_eq!(meta.num_row_groups(), 3);
        for bounds in splits(&meta, size) {
            tile(&meta, &bounds);
        }
        // Two halves: the middle row group is cut at a multiple of CUT_ROWS near its middle.
        let halves = tile(&meta, &[0, size / 2, size]);
        let first = halves[0].last().unwrap_or_else(|| panic!("{halves:?}"));
        assert_eq!(first.row_group, 1);
        assert!(
            first.rows.end > 40_000 && first.rows.end < 80_000,
            "{halves:?}"
        );
        assert_eq!((first.rows.end - 40_000) % CUT_ROWS, 0);
        assert_eq!(halves[1][0].row_group, 1);
        // One row group split 8 ways: each part owns rows of it.
        let (one, size) = metadata_with_pages(100_000, 100_000);
        let bounds: Vec<u64> = (0..=8).map(|k| size * k / 8).collect();
        let parts = tile(&one, &bounds);
        assert!(parts.iter().all(|p| p.len() == 1), "{parts:?}");
    }

    #[test]
    fn a_cut_row_is_proportional_rounded_and_never_decreasing() {
        let span = 1000..2000;
        assert_eq!(cut_row(100_000, &span, 0), 0);
        assert_eq!(cut_row(100_000, &span, 1000), 0);
        assert_eq!(cut_row(100_000, &span, 1500), 6 * CUT_ROWS);
        assert_eq!(cut_row(100_000, &span, 1900), 11 * CUT_ROWS);
        // No sliver at the end either: 95,000 rounds to 98,304, with 1,696 rows left.
        assert_eq!(cut_row(100_000, &span, 1950), 100_000);
        assert_eq!(cut_row(100_000, &span, 2000), 100_000);
        // A row group under half of CUT_ROWS is never cut.
        assert!((1000..=2000).all(|at| [0, 3000].contains(&cut_row(3000, &span, at))));
        let mut last = 0;
        for at in 900..2100 {
            let row = cut_row(54_321, &span, at);
            assert!(row >= last && row <= 54_321);
            last = row;
        }
        // An empty span (a row group of no bytes) goes whole to the range holding its start.
        assert_eq!(cut_row(10, &(5..5), 5), 0);
        assert_eq!(cut_row(10, &(5..5), 6), 10);
    }

    #[test]
    fn the_ranges_of_a_file_count_each_deleted_row_once() {
        let (meta, size) = metadata(1000, 100);
        let deleted = DeletionVector::from_rows([0, 99, 100, 450, 451, 999]);
        assert_eq!(deleted_rows_owned(&meta, None, &deleted), 6);
        for parts in 1..=7u64 {
            let bounds: Vec<u64> = (0..=parts).map(|k| size * k / parts).collect();
            let total: u64 = bounds
                .windows(2)
                .map(|w| deleted_rows_owned(&meta, Some(&(w[0]..w[1])), &deleted))
                .sum();
            assert_eq!(total, 6, "{parts} ranges");
        }
        // The row group of rows 400..500 alone.
        let rg = &meta.row_groups()[4];
        let start = row_group_start(rg);
        let end = row_group_start(&meta.row_groups()[5]);
        assert_eq!(deleted_rows_owned(&meta, Some(&(start..end)), &deleted), 2);
    }
}
