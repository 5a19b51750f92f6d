//! Byte-range file tasks: which row groups of a file a range of its bytes owns.
//!
//! A file may be read as several tasks, each over a byte range of it (ranges that tile the
//! file). A ranged task owns a row group iff its range contains the row group's first
//! column-page offset: the smallest dictionary or data page offset over the row group's
//! column chunks. Each row group has one such offset, so ranges that tile the file own every
//! row group exactly once, and reading all ranged tasks of a file returns the same rows as
//! reading it whole. Row positions stay file-global (deletion vectors index rows of the
//! whole file), which the reader keeps by selecting row groups rather than slicing bytes.

use std::ops::Range;

use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};

use super::deletion_vector::DeletionVector;

/// The byte offset where a row group's data starts: the smallest dictionary or data page
/// offset of its column chunks (0 for a row group with no columns).
pub fn row_group_start(row_group: &RowGroupMetaData) -> u64 {
    row_group
        .columns()
        .iter()
        .map(|c| {
            let data = c.data_page_offset();
            let first = c.dictionary_page_offset().map_or(data, |d| d.min(data));
            u64::try_from(first).unwrap_or(0)
        })
        .min()
        .unwrap_or(0)
}

/// Whether a task over `range` owns a row group starting at `start`.
pub fn owns_row_group(range: &Range<u64>, start: u64) -> bool {
    range.contains(&start)
}

/// The indexes of the row groups a task over `range` owns, in file order.
pub fn owned_row_groups(metadata: &ParquetMetaData, range: &Range<u64>) -> Vec<usize> {
    metadata
        .row_groups()
        .iter()
        .enumerate()
        .filter(|(_, rg)| owns_row_group(range, row_group_start(rg)))
        .map(|(i, _)| i)
        .collect()
}

/// The rows of `deleted` a task is answerable for: all of them for a whole-file task
/// (`range` `None`), else those in the row groups its range owns, so the tasks of a file read
/// in ranges count each deleted row once between them.
pub fn deleted_rows_owned(
    metadata: &ParquetMetaData,
    range: Option<&Range<u64>>,
    deleted: &DeletionVector,
) -> u64 {
    let Some(range) = range else {
        return deleted.cardinality();
    };
    let mut first = 0u64;
    let mut count = 0u64;
    for rg in metadata.row_groups() {
        let rows = u64::try_from(rg.num_rows()).unwrap_or(0);
        if owns_row_group(range, row_group_start(rg)) {
            count = count.saturating_add(deleted.deleted_in(first, rows));
        }
        first = first.saturating_add(rows);
    }
    count
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::file::metadata::ParquetMetaDataReader;

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

    #[test]
    fn every_row_group_has_exactly_one_owner_for_any_split() {
        let (meta, size) = metadata(1000, 70);
        let groups = meta.num_row_groups();
        // Splits into 1..=12 parts at regular points, and at every start ± 1.
        let mut splits: Vec<Vec<u64>> = (1..=12u64)
            .map(|parts| (1..parts).map(|k| size * k / parts).collect())
            .collect();
        for rg in meta.row_groups() {
            let s = row_group_start(rg);
            splits.push(vec![s]);
            splits.push(vec![s.saturating_sub(1), s + 1]);
        }
        for cuts in splits {
            let mut bounds = vec![0];
            bounds.extend(cuts);
            bounds.push(size);
            let mut owners = vec![0usize; groups];
            for w in bounds.windows(2) {
                for rg in owned_row_groups(&meta, &(w[0]..w[1])) {
                    owners[rg] += 1;
                }
            }
            assert!(owners.iter().all(|&n| n == 1), "{bounds:?}: {owners:?}");
        }
        // A range before the first row group owns nothing; the whole file owns all.
        assert!(owned_row_groups(&meta, &(0..4)).is_empty());
        assert_eq!(owned_row_groups(&meta, &(0..size)).len(), groups);
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
