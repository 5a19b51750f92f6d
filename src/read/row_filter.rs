//! The scan's row predicate as a Parquet `RowFilter`: evaluated while decoding, on the
//! predicate's columns only, so that the other columns are decoded for matching rows alone
//! (late materialisation).
//!
//! The filter's projection covers the top-level file columns the predicate reads (whole
//! structs for nested paths). Its batches are physical (physical names, file types), so a
//! second [`FileTransform`], built for the predicate's columns alone, turns them into the
//! logical columns the predicate is bound to: renamed, cast, partition columns as constants,
//! columns the file lacks as nulls. When none of the predicate's columns is in the file, the
//! predicate is the same on every row: it is evaluated once and either every row or no row of
//! the file is read.

use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter};
use parquet::arrow::ProjectionMask;
use parquet::schema::types::SchemaDescriptor;

use super::transform::{needed_file_columns, FileTransform};
use crate::error::{DeltaError, Phase, Result};
use crate::plan::ReadColumn;
use crate::predicate::{evaluate, BoundExpr};
use crate::schema::ColumnMappingMode;

/// Where the filter leaves an error of its own (a failed cast, say), so that the reader can
/// report it as it is rather than as the Parquet error that wraps its text.
pub(crate) type ErrorSlot = Arc<Mutex<Option<DeltaError>>>;

/// How a file's rows are filtered.
pub(crate) enum FilterPlan {
    /// No row of the file matches.
    NoRows,
    /// Every row of the file matches: no filter.
    AllRows,
    /// Filter while decoding.
    Filter(RowFilter),
}

/// Plans the row filter of one file, or `None` when the predicate's columns are not all among
/// the read columns (then the caller filters after decoding).
///
/// `file_schema` is the Arrow schema the decoder reads the file as, `descr` the file's
/// Parquet schema.
pub(crate) fn plan_row_filter(
    predicate: &Arc<BoundExpr>,
    columns: &[ReadColumn],
    partition_values: &[Option<ArrayRef>],
    file_schema: &Schema,
    descr: &SchemaDescriptor,
    mode: ColumnMappingMode,
    errors: &ErrorSlot,
) -> Result<Option<FilterPlan>> {
    let mut wanted: Vec<usize> = Vec::new();
    for path in predicate.columns() {
        let Some(name) = path.first() else {
            continue;
        };
        let index = columns
            .iter()
            .position(|c| &c.field.name == name)
            .or_else(|| {
                columns
                    .iter()
                    .position(|c| c.field.name.eq_ignore_ascii_case(name))
            });
        match index {
            Some(i) if !wanted.contains(&i) => wanted.push(i),
            Some(_) => {}
            None => return Ok(None),
        }
    }
    wanted.sort_unstable();
    let sub_columns: Vec<ReadColumn> = wanted.iter().map(|&i| columns[i].clone()).collect();
    let sub_values: Vec<Option<ArrayRef>> = wanted
        .iter()
        .map(|&i| partition_values.get(i).cloned().flatten())
        .collect();
    let sub_schema: SchemaRef = Arc::new(Schema::new(
        sub_columns
            .iter()
            .map(|c| Arc::clone(&c.arrow))
            .collect::<Vec<_>>(),
    ));
    let predicate = Arc::clone(predicate);
    let roots = needed_file_columns(file_schema, &sub_columns, mode);
    let projected = Schema::new(
        roots
            .iter()
            .map(|&i| file_schema.field(i).clone())
            .collect::<Vec<_>>(),
    );
    let transform = FileTransform::new(sub_schema, &sub_columns, &sub_values, &projected, mode);
    if roots.is_empty() {
        // Only partition values and missing columns: the same answer on every row.
        let options = RecordBatchOptions::new().with_row_count(Some(1));
        let one = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)
            .map_err(arrow_error)?;
        let keep = evaluate(&predicate, &transform.apply(&one, &sub_columns)?)?;
        let pass = keep.len() == 1 && keep.is_valid(0) && keep.value(0);
        return Ok(Some(if pass {
            FilterPlan::AllRows
        } else {
            FilterPlan::NoRows
        }));
    }
    let mask = ProjectionMask::roots(descr, roots);
    let slot = Arc::clone(errors);
    let filter = ArrowPredicateFn::new(mask, move |batch: RecordBatch| {
        let result = transform
            .apply(&batch, &sub_columns)
            .and_then(|logical| evaluate(&predicate, &logical));
        result.map_err(|e| keep_error(&slot, e))
    });
    Ok(Some(FilterPlan::Filter(RowFilter::new(vec![Box::new(
        filter,
    )]))))
}

/// Records `error` in `slot` (the first one wins) and returns its text as an Arrow error for
/// the decoder.
fn keep_error(slot: &ErrorSlot, error: DeltaError) -> ArrowError {
    let text = error.to_string();
    if let Ok(mut guard) = slot.lock() {
        guard.get_or_insert(error);
    }
    ArrowError::ComputeError(text)
}

/// The error the filter recorded, if any.
pub(crate) fn take_error(slot: &ErrorSlot) -> Option<DeltaError> {
    slot.lock().ok().and_then(|mut guard| guard.take())
}

fn arrow_error(source: ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}

#[cfg(test)]
mod tests {
    //! Scans of small multi-row-group tables: row-group pruning and the decoder's row filter
    //! must return exactly the rows of a full read filtered afterwards.

    use std::sync::Arc;

    use arrow_array::{
        cast::AsArray, types::Int64Type, Int32Array, Int64Array, RecordBatch, StringArray,
        StructArray,
    };
    use arrow_schema::{DataType, Field, Fields, Schema};
    use bytes::Bytes;
    use futures::executor::block_on;
    use futures::StreamExt;
    use serde_json::{json, Value};

    use crate::fixture::TableWriter;
    use crate::predicate::{bind, evaluate, parse_filter};
    use crate::schema::OutputTypes;
    use crate::{DeltaTable, DeltaTableBuilder};

    const ROWS_PER_GROUP: usize = 10;

    fn parquet(batch: &RecordBatch) -> Bytes {
        crate::fixture::parquet_bytes_with_row_groups("test", batch, Some(ROWS_PER_GROUP))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// An inline deletion vector deleting `rows`.
    fn inline_dv(rows: &[u64]) -> Value {
        let map: roaring::RoaringTreemap = rows.iter().copied().collect();
        let mut bitmap = 1_681_511_377u32.to_le_bytes().to_vec();
        map.serialize_into(&mut bitmap)
            .unwrap_or_else(|e| panic!("{e}"));
        let size = bitmap.len();
        bitmap.resize(size.div_ceil(4) * 4, 0);
        json!({
            "storageType": "i",
            "pathOrInlineDv": z85::encode(&bitmap),
            "sizeInBytes": size,
            "cardinality": rows.len(),
        })
    }

    struct DataFile {
        path: &'static str,
        batch: RecordBatch,
        partition_values: Value,
        deleted: Option<Vec<u64>>,
    }

    fn file(path: &'static str, batch: RecordBatch) -> DataFile {
        DataFile {
            path,
            batch,
            partition_values: json!({}),
            deleted: None,
        }
    }

    /// A table of `files` (written with 10 rows per row group; statistics give only
    /// `numRecords`, so no file is skipped by statistics and row groups do the pruning).
    fn table(schema: Value, partitions: &[&str], files: Vec<DataFile>) -> DeltaTable {
        let mut w = TableWriter::new();
        let protocol = if files.iter().any(|f| f.deleted.is_some()) {
            json!({"minReaderVersion": 3, "minWriterVersion": 7,
                   "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]})
        } else {
            json!({"minReaderVersion": 1, "minWriterVersion": 2})
        };
        let mut actions = TableWriter::create_actions(&schema, partitions, json!({}), protocol);
        for f in files {
            let data = parquet(&f.batch);
            let size = data.len();
            w.store().put(f.path, data);
            let mut add = json!({
                "path": f.path,
                "partitionValues": f.partition_values,
                "size": size,
                "modificationTime": 1_704_067_200_000i64,
                "dataChange": true,
                "stats": json!({"numRecords": f.batch.num_rows()}).to_string(),
            });
            if let Some(rows) = &f.deleted {
                add["deletionVector"] = inline_dv(rows);
            }
            actions.push(json!({ "add": add }));
        }
        w.commit("WRITE", actions);
        block_on(
            DeltaTableBuilder::new("memory://t/")
                .with_store(Arc::new(w.store().clone()))
                .load_table_with_eager_scan_metadata(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The rows of a scan (one batch, in log order: one partition) and the row groups it
    /// pruned.
    fn scan(table: &DeltaTable, filter: Option<&str>, limit: Option<usize>) -> (RecordBatch, u64) {
        // Plain strings, as the hand-built contexts below decode them.
        let mut builder = table
            .scan()
            .with_batch_size(7)
            .with_target_partitions(1)
            .with_output_types(OutputTypes::PLAIN);
        if let Some(f) = filter {
            builder = builder.with_filter(f);
        }
        if let Some(n) = limit {
            builder = builder.with_limit(n);
        }
        let scan = block_on(builder.build()).unwrap_or_else(|e| panic!("{filter:?}: {e}"));
        let schema = scan.schema();
        let mut stream = scan.into_stream();
        let mut batches = Vec::new();
        while let Some(b) = block_on(stream.next()) {
            batches.push(b.unwrap_or_else(|e| panic!("{filter:?}: {e}")));
        }
        let all = arrow_select::concat::concat_batches(&schema, &batches)
            .unwrap_or_else(|e| panic!("{e}"));
        (all, stream.row_groups_pruned())
    }

    /// The values of the string column `column`, the only one output, under `filter`.
    fn strings(table: &DeltaTable, column: &str, filter: &str) -> Vec<Option<String>> {
        let scan = table
            .scan()
            .with_target_partitions(1)
            .with_output_types(OutputTypes::PLAIN)
            .with_projection([column])
            .with_filter(filter)
            .build();
        let scan = block_on(scan).unwrap_or_else(|e| panic!("{filter}: {e}"));
        let batches =
            block_on(scan.into_stream().collect_batches()).unwrap_or_else(|e| panic!("{e}"));
        assert!(batches.iter().all(|b| b.num_columns() == 1));
        batches
            .iter()
            .flat_map(|b| b.column(0).as_string::<i32>().iter())
            .map(|v| v.map(str::to_string))
            .collect()
    }

    /// A full read filtered afterwards.
    fn expected(table: &DeltaTable, filter: &str) -> RecordBatch {
        let (full, pruned) = scan(table, None, None);
        assert_eq!(pruned, 0);
        let expr = parse_filter(filter).unwrap_or_else(|e| panic!("{e}"));
        let bound = bind(&expr, table.delta_schema()).unwrap_or_else(|e| panic!("{e}"));
        let keep = evaluate(&bound, &full).unwrap_or_else(|e| panic!("{e}"));
        arrow_select::filter::filter_record_batch(&full, &keep).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Checks `filter` against a filtered full read; returns the row groups pruned.
    fn check(table: &DeltaTable, filter: &str) -> u64 {
        let (got, pruned) = scan(table, Some(filter), None);
        assert_eq!(got, expected(table, filter), "{filter}");
        pruned
    }

    fn ids(batch: &RecordBatch) -> Vec<i64> {
        batch
            .column(0)
            .as_primitive::<Int64Type>()
            .values()
            .to_vec()
    }

    /// `id`, `name` (null every fifth row), `s` {`a`: id % 7, `b`: 'b' + id % 3}.
    fn rows(range: std::ops::Range<i64>) -> RecordBatch {
        let inner = Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
        ]);
        let s = StructArray::try_new(
            inner.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(range.clone().map(|i| i % 7))),
                Arc::new(StringArray::from_iter_values(
                    range.clone().map(|i| format!("b{}", i % 3)),
                )),
            ],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("s", DataType::Struct(inner), true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(range.clone())),
                Arc::new(StringArray::from_iter(
                    range.map(|i| (i % 5 != 0).then(|| format!("n{i}"))),
                )),
                Arc::new(s),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn two_file_table() -> DeltaTable {
        let schema = json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": false, "metadata": {}},
            {"name": "name", "type": "string", "nullable": true, "metadata": {}},
            {"name": "s", "type": {"type": "struct", "fields": [
                {"name": "a", "type": "long", "nullable": true, "metadata": {}},
                {"name": "b", "type": "string", "nullable": true, "metadata": {}}]},
             "nullable": true, "metadata": {}},
            {"name": "grp", "type": "string", "nullable": true, "metadata": {}},
        ]});
        let mut a = file("grp=a/a.parquet", rows(0..100));
        a.partition_values = json!({"grp": "a"});
        let mut b = file("grp=b/b.parquet", rows(100..200));
        b.partition_values = json!({"grp": "b"});
        table(schema, &["grp"], vec![a, b])
    }

    #[test]
    fn pruning_and_row_filter_match_a_filtered_full_read() {
        let t = two_file_table();
        // File a keeps row groups 3..=5; every row group of file b is pruned.
        assert_eq!(check(&t, "id >= 35 and id < 52"), 17);
        // File a is skipped by its partition value; b keeps its first row group.
        assert_eq!(check(&t, "grp = 'b' and id < 105"), 9);
        assert_eq!(check(&t, "grp = 'a' or id > 195"), 9);
        assert_eq!(check(&t, "not (id between 10 and 189)"), 18);
        assert_eq!(check(&t, "id > 1000"), 20);
        // Nested columns: filtered by the row filter (whole structs decoded), not pruned.
        assert_eq!(check(&t, "s.a = 3 and id > 150"), 15);
        assert_eq!(check(&t, "s.b = 'b1' or name is null"), 0);
        for filter in [
            "name is null",
            "name is not null and s.a < 2",
            "id = s.a",
            "name in ('n3', 'n133', 'n5')",
            "grp = 'b'",
            "grp is null",
        ] {
            check(&t, filter);
        }
        let (got, _) = scan(&t, Some("id = 42"), None);
        assert_eq!(ids(&got), vec![42]);
        assert_eq!(got.num_columns(), 4);
        // Predicate-only columns are read but not output.
        let names = strings(&t, "name", "id between 98 and 101");
        let want = [Some("n98"), Some("n99"), None, Some("n101")];
        assert_eq!(names, want.map(|v| v.map(String::from)));
        // Only a partition column is output: no file column is decoded after the filter.
        let groups = strings(&t, "grp", "id < 3 or (id > 100 and s.a = 6)");
        let mut want = vec![Some("a".to_string()); 3];
        want.extend(vec![
            Some("b".to_string());
            (101..200).filter(|i| i % 7 == 6).count()
        ]);
        assert_eq!(groups, want);
    }

    #[test]
    fn limits_apply_after_the_row_filter() {
        let t = two_file_table();
        let (got, _) = scan(&t, Some("id >= 15 and s.a = 0"), Some(4));
        assert_eq!(ids(&got), vec![21, 28, 35, 42]);
        let (got, _) = scan(&t, Some("id >= 95 and id < 130"), Some(8));
        assert_eq!(ids(&got), vec![95, 96, 97, 98, 99, 100, 101, 102]);
        let (got, _) = scan(&t, Some("id > 198"), Some(8));
        assert_eq!(ids(&got), vec![199]);
    }

    #[test]
    fn deletion_vectors_with_pruning() {
        let schema = json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": false, "metadata": {}},
            {"name": "name", "type": "string", "nullable": true, "metadata": {}},
            {"name": "s", "type": {"type": "struct", "fields": [
                {"name": "a", "type": "long", "nullable": true, "metadata": {}},
                {"name": "b", "type": "string", "nullable": true, "metadata": {}}]},
             "nullable": true, "metadata": {}},
        ]});
        let mut deleted: Vec<u64> = vec![5, 36, 37, 95];
        deleted.extend(50..60);
        let mut f = file("f.parquet", rows(0..100));
        f.deleted = Some(deleted.clone());
        let t = table(schema, &[], vec![f]);
        let visible = |range: std::ops::Range<i64>| -> Vec<i64> {
            range.filter(|&i| !deleted.contains(&(i as u64))).collect()
        };
        let (all, _) = scan(&t, None, None);
        assert_eq!(ids(&all), visible(0..100));
        // Row groups 3..=5 kept by statistics; 5 is wholly deleted.
        let (got, pruned) = scan(&t, Some("id >= 30 and id < 60"), None);
        assert_eq!(ids(&got), visible(30..60));
        assert_eq!(pruned, 7);
        let (got, pruned) = scan(&t, Some("id >= 50 and id < 60"), None);
        assert_eq!(got.num_rows(), 0);
        assert_eq!(pruned, 9);
        let (got, _) = scan(&t, Some("id >= 90 or id < 8"), None);
        assert_eq!(ids(&got), [visible(0..8), visible(90..100)].concat());
        let (got, _) = scan(&t, Some("id >= 30 and s.a != 1"), Some(6));
        assert_eq!(ids(&got), vec![30, 31, 32, 33, 34, 35]);
        let (got, _) = scan(&t, Some("id >= 30"), Some(8));
        assert_eq!(ids(&got), vec![30, 31, 32, 33, 34, 35, 38, 39]);
        for filter in [
            "name is null",
            "s.b = 'b2' and id > 40",
            "id in (5, 6, 95, 96)",
        ] {
            check(&t, filter);
        }
    }

    #[test]
    fn a_column_missing_from_older_files_reads_as_null() {
        let schema = json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": false, "metadata": {}},
            {"name": "extra", "type": "integer", "nullable": true, "metadata": {}},
        ]});
        let old = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
            vec![Arc::new(Int64Array::from_iter_values(0..30))],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let new = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("extra", DataType::Int32, true),
            ])),
            vec![
                Arc::new(Int64Array::from_iter_values(30..60)),
                Arc::new(Int32Array::from_iter(
                    (30..60).map(|i| (i % 5 != 0).then_some(i % 4)),
                )),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let t = table(
            schema.clone(),
            &[],
            vec![
                file("old.parquet", old.clone()),
                file("new.parquet", new.clone()),
            ],
        );
        let (got, pruned) = scan(&t, Some("extra is null"), None);
        let want: Vec<i64> = (0..30).chain((30..60).filter(|i| i % 5 == 0)).collect();
        assert_eq!(ids(&got), want);
        assert_eq!(got.column(1).null_count(), want.len());
        assert_eq!(pruned, 0);
        // The old file's row groups are all null: pruned.
        assert_eq!(check(&t, "extra = 1"), 3);
        assert_eq!(check(&t, "extra is not null and id < 40"), 5);
        assert_eq!(check(&t, "extra is null and id < 5"), 5);
        for filter in ["extra is null or id > 50", "not (extra = 2)", "extra > id"] {
            check(&t, filter);
        }
        // With a deletion vector, row groups are not known to be all null: the row filter
        // finds that `extra = 1` is false on every row of the old file and reads nothing.
        let mut old_dv = file("old.parquet", old);
        old_dv.deleted = Some(vec![3]);
        let t = table(schema, &[], vec![old_dv, file("new.parquet", new)]);
        assert_eq!(check(&t, "extra = 1"), 0);
        let (got, _) = scan(&t, Some("extra is null and id < 5"), None);
        assert_eq!(ids(&got), vec![0, 1, 2, 4]);
        for filter in ["extra is null", "extra is not null", "extra > id or id = 7"] {
            check(&t, filter);
        }
    }

    #[test]
    fn without_pushdown_the_batches_are_filtered_after_decoding() {
        use crate::plan::{plan_columns, plan_tasks, select_files, ScanRequest, TableFacts};
        use crate::read::file::read_file;
        use crate::read::{ReadContext, ReadSpec};

        let t = two_file_table();
        let facts = TableFacts {
            root: t.location().url(),
            schema: t.delta_schema(),
            partition_columns: t.partition_columns(),
            mode: t.column_mapping_mode(),
        };
        let filter = "s.a = 3 and id > 150";
        let bound = Arc::new(
            bind(
                &parse_filter(filter).unwrap_or_else(|e| panic!("{e}")),
                facts.schema,
            )
            .unwrap_or_else(|e| panic!("{e}")),
        );
        let request = ScanRequest {
            projection: None,
            predicate_columns: vec!["s".into(), "id".into()],
            output_types: Default::default(),
        };
        let columns = plan_columns(facts, &request).unwrap_or_else(|e| panic!("{e}"));
        let selected = select_files(facts, t.eager_files().unwrap_or_default(), None)
            .unwrap_or_else(|e| panic!("{e}"));
        let tasks = plan_tasks(facts, selected.files, None).unwrap_or_else(|e| panic!("{e}"));
        let output_schema = Arc::clone(&columns.output_schema);
        let ctx = ReadContext {
            store: Arc::clone(t.store()),
            location: t.location().clone(),
            spec: Arc::new(ReadSpec {
                columns,
                mode: facts.mode,
                batch_size: 16,
                predicate: Some(bound),
                pushdown: false,
                output_types: Default::default(),
                max_page_bytes: crate::limits::DEFAULT_MAX_PAGE_BYTES,
                read_ahead_bytes: 0,
            }),
            row_groups_pruned: Default::default(),
        };
        let mut batches = Vec::new();
        for task in tasks {
            let mut stream = read_file(ctx.clone(), task);
            while let Some(b) = block_on(stream.next()) {
                batches.push(b.unwrap_or_else(|e| panic!("{e}")));
            }
        }
        let got = arrow_select::concat::concat_batches(&output_schema, &batches)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, expected(&t, filter));
        assert_eq!(
            ctx.row_groups_pruned
                .load(std::sync::atomic::Ordering::Relaxed),
            0
        );
    }
}
