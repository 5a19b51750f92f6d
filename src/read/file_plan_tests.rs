//! Unit tests of [`plan_file`] and [`FileRead`], without a store: the footer comes from an
//! in-memory Parquet file, and the decoder a plan builds is fed that file's bytes directly.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::PageIndexPolicy;
use parquet::DecodeResult;
use serde_json::json;
use url::Url;

use super::{plan_file, Deletes, FileRead, ReadSpec};
use crate::log::{Add, DeletionVectorDescriptor};
use crate::plan::{plan_columns, plan_tasks, select_files, FileTask, ScanRequest, TableFacts};
use crate::predicate::{bind, parse_filter};
use crate::read::deletion_vector::DeletionVector;
use crate::schema::{ColumnMappingMode, PrimitiveType, StructField, StructType};

/// Rows in the file, in row groups of `GROUP` rows: `id` is the row number.
const ROWS: i64 = 500;
const GROUP: usize = 100;

fn file_bytes() -> Bytes {
    file_of(ROWS, GROUP)
}

/// A file of `rows` rows in row groups of `group` rows (`id` the row number, `v` its text).
fn file_of(rows: i64, group: usize) -> Bytes {
    let ids = Int64Array::from_iter_values(0..rows);
    let v = StringArray::from_iter_values((0..rows).map(|i| format!("v{i}")));
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::Utf8, false),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids), Arc::new(v)])
        .unwrap_or_else(|e| panic!("{e}"));
    crate::fixture::parquet_bytes_with_row_groups("f.parquet", &batch, Some(group))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn metadata(bytes: &Bytes) -> ArrowReaderMetadata {
    ArrowReaderMetadata::load(bytes, ArrowReaderOptions::new()).unwrap_or_else(|e| panic!("{e}"))
}

fn schema() -> StructType {
    StructType::new([
        StructField::new("id", PrimitiveType::Long, false),
        StructField::new("v", PrimitiveType::String, false),
        StructField::new("p", PrimitiveType::String, true),
    ])
}

/// The spec and the task of a scan of the file (partition `p = 'a'`) with `filter`.
fn scan(filter: Option<&str>, limit: Option<usize>, pushdown: bool) -> (ReadSpec, FileTask) {
    let schema = schema();
    let root = Url::parse("memory:///t/").unwrap_or_else(|e| panic!("{e}"));
    let partition_columns = vec!["p".to_string()];
    let facts = TableFacts {
        root: &root,
        schema: &schema,
        partition_columns: &partition_columns,
        mode: ColumnMappingMode::None,
    };
    let predicate = filter.map(|f| {
        let expr = parse_filter(f).unwrap_or_else(|e| panic!("{e}"));
        Arc::new(bind(&expr, &schema).unwrap_or_else(|e| panic!("{e}")))
    });
    let request = ScanRequest {
        projection: Some(vec!["v".into()]),
        predicate_columns: predicate
            .as_ref()
            .map(|p| {
                p.columns()
                    .into_iter()
                    .filter_map(|c| c.first().cloned())
                    .collect()
            })
            .unwrap_or_default(),
        output_types: Default::default(),
    };
    let columns = plan_columns(facts, &request).unwrap_or_else(|e| panic!("{e}"));
    let add: Add = serde_json::from_value(json!({
        "path": "f.parquet",
        "partitionValues": {"p": "a"},
        "size": file_bytes().len(),
        "modificationTime": 0,
        "dataChange": true,
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    let adds = [add];
    let selected = select_files(facts, &adds, None).unwrap_or_else(|e| panic!("{e}"));
    let mut tasks = plan_tasks(facts, selected.files, limit).unwrap_or_else(|e| panic!("{e}"));
    let spec = ReadSpec {
        columns,
        mode: ColumnMappingMode::None,
        batch_size: 7,
        predicate,
        pushdown,
        output_types: Default::default(),
        max_page_bytes: crate::limits::DEFAULT_MAX_PAGE_BYTES,
        read_ahead_bytes: 0,
    };
    (spec, tasks.remove(0))
}

/// The plan of the file for `spec` and `task`: (row groups pruned, the read).
fn plan(spec: &ReadSpec, task: &FileTask) -> (usize, Option<FileRead>) {
    let plan = plan_file(spec, task, &metadata(&file_bytes())).unwrap_or_else(|e| panic!("{e}"));
    (plan.row_groups_pruned, plan.read)
}

/// The `v` values the decoder of `read` returns, after its output conversion (the predicate
/// applied when the decoder does not), as row numbers.
fn decode(spec: &ReadSpec, read: FileRead) -> Vec<i64> {
    let bytes = file_bytes();
    decode_file(spec, read, &bytes, metadata(&bytes))
}

/// As `decode`, for the file `bytes` whose footer is `meta`.
fn decode_file(
    spec: &ReadSpec,
    read: FileRead,
    bytes: &Bytes,
    meta: ArrowReaderMetadata,
) -> Vec<i64> {
    let (mut decoder, masked, _, output) = read
        .decoder(meta, spec.batch_size, "f.parquet")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        masked.is_none(),
        "masked deletes are applied by the reader, not here"
    );
    let mut rows = Vec::new();
    let mut limit = crate::read::file::RowLimit::new(None);
    let finish = crate::read::file::BatchFinish {
        spec,
        output: &output,
    };
    loop {
        match decoder.try_decode().unwrap_or_else(|e| panic!("{e}")) {
            DecodeResult::NeedsData(ranges) => {
                let data = ranges
                    .iter()
                    .map(|r| bytes.slice(r.start as usize..r.end as usize))
                    .collect();
                decoder
                    .push_ranges(ranges, data)
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            DecodeResult::Data(batch) => {
                let Some(out) = finish
                    .apply(batch, &mut limit)
                    .unwrap_or_else(|e| panic!("{e}"))
                else {
                    continue;
                };
                let v = out.column(0).as_string::<i32>();
                rows.extend(v.iter().flatten().map(|s| {
                    s.trim_start_matches('v')
                        .parse::<i64>()
                        .unwrap_or_else(|e| panic!("{e}"))
                }));
            }
            DecodeResult::Finished => return rows,
        }
    }
}

#[test]
fn without_a_predicate_every_row_group_is_read() {
    let (spec, task) = scan(None, None, true);
    let (pruned, read) = plan(&spec, &task);
    let read = read.unwrap_or_else(|| panic!("the file has rows"));
    assert_eq!(pruned, 0);
    assert_eq!(read.row_groups(), &[0, 1, 2, 3, 4]);
    assert!(read.read_ahead());
    assert_eq!(decode(&spec, read), (0..ROWS).collect::<Vec<_>>());
}

#[test]
fn statistics_prune_row_groups_and_the_row_filter_selects_rows() {
    let (spec, task) = scan(Some("id >= 250 and id < 320"), None, true);
    let (pruned, read) = plan(&spec, &task);
    let read = read.unwrap_or_else(|| panic!("rows 250..320 match"));
    assert_eq!(pruned, 3);
    assert_eq!(read.row_groups(), &[2, 3]);
    assert_eq!(decode(&spec, read), (250..320).collect::<Vec<_>>());
}

#[test]
fn a_predicate_no_row_group_can_match_reads_nothing() {
    let (spec, task) = scan(Some("id > 1000"), None, true);
    let (pruned, read) = plan(&spec, &task);
    assert_eq!(pruned, 5);
    assert!(read.is_none());
}

#[test]
fn a_false_partition_predicate_reads_nothing() {
    let (spec, task) = scan(Some("p = 'b'"), None, true);
    assert!(plan(&spec, &task).1.is_none());
    let (spec, task) = scan(Some("p = 'a'"), None, true);
    let (pruned, read) = plan(&spec, &task);
    assert_eq!(pruned, 0);
    let read = read.unwrap_or_else(|| panic!("p = 'a' holds for the whole file"));
    assert_eq!(decode(&spec, read).len(), ROWS as usize);
}

#[test]
fn a_ranged_task_reads_the_row_groups_its_range_owns() {
    let (spec, mut task) = scan(None, None, true);
    let meta = metadata(&file_bytes());
    let start = |i: usize| crate::read::ranges::row_group_start(meta.metadata().row_group(i));
    task.range = Some(start(1)..start(3));
    let (pruned, read) = plan(&spec, &task);
    let read = read.unwrap_or_else(|| panic!("the range owns row groups 1 and 2"));
    assert_eq!(pruned, 0);
    assert_eq!(read.row_groups(), &[1, 2]);
    assert_eq!(decode(&spec, read), (100..300).collect::<Vec<_>>());
    // A range inside one row group's data owns none.
    task.range = Some(start(1) + 1..start(2));
    assert!(plan(&spec, &task).1.is_none());
}

/// `file_of(rows, group)`, its footer loaded with the page index, and its size.
fn with_page_index(rows: i64, group: usize) -> (Bytes, ArrowReaderMetadata, u64) {
    let bytes = file_of(rows, group);
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let meta = ArrowReaderMetadata::load(&bytes, options).unwrap_or_else(|e| panic!("{e}"));
    let size = bytes.len() as u64;
    (bytes, meta, size)
}

#[test]
fn ranges_share_row_groups_by_rows_with_a_page_index_and_count_a_pruned_one_once() {
    // Two row groups of 20,000 rows.
    let (bytes, meta, size) = with_page_index(40_000, 20_000);
    for (filter, expected, pruned) in [
        (None, (0..40_000).collect::<Vec<i64>>(), 0),
        (Some("id >= 30000"), (30_000..40_000).collect(), 1),
    ] {
        for parts in 1..=5u64 {
            let (spec, mut task) = scan(filter, None, true);
            let mut got = Vec::new();
            let mut pruned_in_all = 0;
            let mut reading = 0;
            for k in 0..parts {
                task.range = Some(size * k / parts..size * (k + 1) / parts);
                let plan = plan_file(&spec, &task, &meta).unwrap_or_else(|e| panic!("{e}"));
                pruned_in_all += plan.row_groups_pruned;
                if let Some(read) = plan.read {
                    reading += 1;
                    // Sharing a row group reads pages, not whole chunks ahead.
                    if !read.reads_whole_row_groups() {
                        assert!(read.ahead(meta.metadata(), 1 << 20).is_none());
                    }
                    got.extend(decode_file(&spec, read, &bytes, meta.clone()));
                }
            }
            got.sort_unstable();
            assert_eq!(got, expected, "{filter:?}, {parts} ranges: every row once");
            assert_eq!(pruned_in_all, pruned, "{filter:?}, {parts} ranges");
            // Up to 4 ranges each get rows; with 5, one of them would get fewer than half of
            // CUT_ROWS of a row group, so it gets none.
            if filter.is_none() && parts <= 4 {
                assert_eq!(reading, parts, "{parts} ranges: each decodes rows");
            }
        }
    }
}

#[test]
fn a_limited_range_that_shares_a_row_group_reads_the_first_rows_it_owns() {
    let (bytes, meta, size) = with_page_index(40_000, 40_000);
    let (spec, mut task) = scan(None, Some(5), true);
    let mut firsts = Vec::new();
    for range in [0..size / 2, size / 2..size] {
        task.range = Some(range);
        let plan = plan_file(&spec, &task, &meta).unwrap_or_else(|e| panic!("{e}"));
        let read = plan.read.unwrap_or_else(|| panic!("each half owns rows"));
        assert!(!read.reads_whole_row_groups());
        let first = read.groups[0].rows.start as i64;
        firsts.push(first);
        assert_eq!(
            decode_file(&spec, read, &bytes, meta.clone()),
            (first..first + 5).collect::<Vec<_>>()
        );
    }
    assert_eq!(firsts[0], 0);
    assert!(firsts[1] > 0 && firsts[1] < 40_000, "{firsts:?}");
}

#[test]
fn without_pushdown_the_predicate_filters_decoded_batches_and_the_limit_stays_with_the_reader() {
    let (spec, task) = scan(Some("id >= 250"), Some(3), false);
    let (pruned, read) = plan(&spec, &task);
    let read = read.unwrap_or_else(|| panic!("no pruning without pushdown"));
    assert_eq!(pruned, 0);
    assert_eq!(read.row_groups(), &[0, 1, 2, 3, 4]);
    assert_eq!(read.decoder_limit(), None);
    assert!(!read.read_ahead());
    assert_eq!(decode(&spec, read), (250..ROWS).collect::<Vec<_>>());
}

#[test]
fn with_pushdown_the_decoder_applies_the_limit() {
    let (spec, task) = scan(Some("id >= 250"), Some(3), true);
    let read = plan(&spec, &task).1.unwrap_or_else(|| panic!("rows match"));
    assert_eq!(read.decoder_limit(), Some(3));
    assert!(read.read_ahead());
    assert_eq!(decode(&spec, read), vec![250, 251, 252]);
}

/// The read of the whole file with `limit`, after a deletion vector of `rows`.
fn with_deletes(rows: impl IntoIterator<Item = u64>, limit: Option<usize>) -> Option<FileRead> {
    let (spec, mut task) = scan(None, limit, true);
    task.deletion_vector = Some(DeletionVectorDescriptor {
        storage_type: "i".into(),
        path_or_inline_dv: String::new(),
        offset: None,
        size_in_bytes: 0,
        cardinality: 0,
    });
    let read = plan(&spec, &task).1.unwrap_or_else(|| panic!("rows"));
    read.with_deleted_rows(DeletionVector::from_rows(rows))
}

#[test]
fn a_deletion_vector_of_every_row_reads_nothing_and_rows_past_the_end_do_not_count() {
    assert!(with_deletes(0..ROWS as u64, None).is_none());
    // Rows the file does not have are ignored: they must not hide it.
    let read = with_deletes((1..ROWS as u64).chain(1000..1100), None);
    assert!(read.is_some_and(|r| r.row_groups() == [0]));
}

#[test]
fn row_groups_whose_rows_are_all_deleted_are_not_read() {
    let read = with_deletes(100..300, Some(100)).unwrap_or_else(|| panic!("rows are left"));
    assert_eq!(read.row_groups(), &[0, 3, 4]);
    assert!(matches!(read.deletes, Deletes::Selection(_)));
    assert_eq!(read.decoder_limit(), Some(100));
}

#[test]
fn long_runs_of_deletes_are_a_selection_and_scattered_ones_a_mask() {
    let long = with_deletes((0..50).chain(400..450), None).unwrap_or_else(|| panic!("rows"));
    assert!(matches!(long.deletes, Deletes::Selection(_)));
    let (spec, _) = scan(None, None, true);
    assert_eq!(
        decode(&spec, long),
        (50..400).chain(450..ROWS).collect::<Vec<_>>()
    );
    // Every other row deleted: runs of one row.
    let scattered =
        with_deletes((0..ROWS as u64).step_by(2), Some(10)).unwrap_or_else(|| panic!("rows"));
    assert!(matches!(scattered.deletes, Deletes::Masked(_)));
    assert_eq!(scattered.row_groups(), &[0, 1, 2, 3, 4]);
    // Masked rows are dropped after decoding: the decoder may not stop at the limit.
    assert_eq!(scattered.decoder_limit(), None);
    assert!(!scattered.read_ahead());
}

#[test]
fn the_plan_reads_only_the_columns_the_output_and_the_filter_need() {
    // Output `v`, predicate on `id`: the decoder projects both file columns, and the output
    // is `v` alone once the filter ran inside the decoder.
    let (spec, task) = scan(Some("id = 3"), None, true);
    let read = plan(&spec, &task).1.unwrap_or_else(|| panic!("row 3"));
    assert_eq!(decode(&spec, read), vec![3]);
    let (spec, task) = scan(None, None, true);
    let read = plan(&spec, &task).1.unwrap_or_else(|| panic!("rows"));
    let bytes = file_bytes();
    let (mut decoder, ..) = read
        .decoder(metadata(&bytes), 64, "f.parquet")
        .unwrap_or_else(|e| panic!("{e}"));
    let DecodeResult::NeedsData(ranges) = decoder.try_decode().unwrap_or_else(|e| panic!("{e}"))
    else {
        panic!("the decoder asks for data first");
    };
    // One column chunk of the first row group: `v`, never `id`.
    let meta = metadata(&bytes);
    let v = meta.metadata().row_group(0).column(1).byte_range();
    let id = meta.metadata().row_group(0).column(0).byte_range();
    assert!(ranges.iter().all(|r| r.start >= v.0 && r.end <= v.0 + v.1));
    assert!(ranges
        .iter()
        .all(|r| r.end <= id.0 || r.start >= id.0 + id.1));
}

#[test]
fn a_negative_row_count_in_the_footer_is_a_parquet_error_naming_the_file() {
    let meta = metadata(&file_bytes());
    let parquet = meta.metadata().as_ref().clone();
    let mut groups: Vec<_> = parquet.row_groups().to_vec();
    groups[1] = groups[1]
        .clone()
        .into_builder()
        .set_num_rows(-5)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let corrupt =
        parquet::file::metadata::ParquetMetaData::new(parquet.file_metadata().clone(), groups);
    let err = super::row_group_rows(&corrupt, "f.parquet")
        .err()
        .unwrap_or_else(|| panic!("a negative count must not read as 0"));
    assert_eq!(err.code(), "parquet");
    assert!(err.to_string().contains("f.parquet"), "{err}");
    assert!(err.to_string().contains("row group 1"), "{err}");
    let rows =
        super::row_group_rows(parquet_ref(&meta), "f.parquet").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[4], (400, 100));
}

fn parquet_ref(meta: &ArrowReaderMetadata) -> &parquet::file::metadata::ParquetMetaData {
    meta.metadata().as_ref()
}
