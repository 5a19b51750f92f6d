//! Pages skipped by the page index give the same rows as a read of every page: a file of two
//! row groups with pages of 1,000 rows, ids sorted in `id` and reversed in `k`, read with
//! filters on one column, on both, with `or`, with a limit, in byte-range tasks that share
//! its row groups, and with a deletion vector (long runs: a row selection the page
//! selection must be combined with), and 300 generated predicates (comparisons, ranges,
//! `in`, nulls, `and`/`or`/`not` over three columns, one with pages all null) against the
//! full scan filtered afterwards. A narrow range fetches a few pages' bytes, not whole
//! column chunks.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::{DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder};
use serde_json::json;

use crate::common;

const ROWS: i64 = 100_000;

/// A filter and which ids it keeps.
type Case = (&'static str, fn(i64) -> bool);

/// `id` 0..100,000, `k` = 99,999 − id, a name; deleting `deleted` rows (by a deletion
/// vector) when not empty.
async fn table(deleted: &[std::ops::Range<u64>]) -> DeltaTable {
    let ids = Int64Array::from_iter_values(0..ROWS);
    let ks = Int64Array::from_iter_values((0..ROWS).map(|i| ROWS - 1 - i));
    let names = StringArray::from_iter_values((0..ROWS).map(|i| format!("name {i:06}")));
    // Whole pages of nulls (every third page), else null on every seventh row.
    let n = Int64Array::from_iter(
        (0..ROWS).map(|i| ((i / 1_000) % 3 != 0 && i % 7 != 0).then_some(i % 5_000)),
    );
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as _),
        ("k", Arc::new(ks) as _),
        ("name", Arc::new(names) as _),
        ("n", Arc::new(n) as _),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let bytes = crate::common::paged_parquet(&batch);
    let mut w = TableWriter::new();
    let size = bytes.len() as u64;
    w.store().put("part-0.parquet", bytes);
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}},
        {"name": "k", "type": "long", "nullable": false, "metadata": {}},
        {"name": "name", "type": "string", "nullable": false, "metadata": {}},
        {"name": "n", "type": "long", "nullable": true, "metadata": {}}]});
    let protocol = json!({"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]});
    let mut actions = TableWriter::create_actions(&schema, &[], json!({}), protocol);
    let mut add = w.add_action("part-0.parquet", size, ROWS as usize, json!({}), None);
    let rows: Vec<u64> = deleted.iter().flat_map(|r| r.clone()).collect();
    if !rows.is_empty() {
        let (bytes, size) = common::dv_file(rows.iter().copied());
        w.store().put("dv.bin", bytes);
        add["add"]["deletionVector"] = json!({"storageType": "p",
            "pathOrInlineDv": "memory://bucket/pages/dv.bin", "offset": 1,
            "sizeInBytes": size, "cardinality": rows.len()});
    }
    actions.push(add);
    w.commit("WRITE", actions);
    DeltaTableBuilder::new("memory://bucket/pages/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The sorted ids of a scan with `filter` (by ranges unless `whole`, `partitions` targets,
/// an optional limit), and the bytes it received.
async fn ids(
    table: &DeltaTable,
    filter: &str,
    partitions: usize,
    limit: Option<usize>,
) -> (Vec<i64>, u64) {
    let mut scan = table
        .scan()
        .with_filter(filter)
        .with_target_partitions(partitions)
        .with_batch_size(777)
        .with_execution_options(DeltaScanExecutionOptions {
            parquet_full_file_read_threshold_bytes: None,
            ..Default::default()
        });
    if let Some(n) = limit {
        scan = scan.with_limit(n);
    }
    let (batches, io) = common::scan_to_end(scan).await;
    let mut ids = common::ids(&batches);
    ids.sort_unstable();
    (ids, io.bytes_received)
}

fn expected(keep: impl Fn(i64) -> bool, deleted: &[std::ops::Range<u64>]) -> Vec<i64> {
    (0..ROWS)
        .filter(|&i| keep(i) && !deleted.iter().any(|r| r.contains(&(i as u64))))
        .collect()
}

#[tokio::test]
async fn pages_skipped_by_the_index_leave_the_same_rows() {
    let deletes: [&[std::ops::Range<u64>]; 2] = [&[], &[20_500..23_700, 49_000..51_500]];
    for deleted in deletes {
        let t = table(deleted).await;
        let cases: [Case; 6] = [
            ("id >= 20250 and id < 24420", |i| {
                (20_250..24_420).contains(&i)
            }),
            ("k < 1500", |i| ROWS - 1 - i < 1_500),
            ("id < 700 or k < 2100", |i| i < 700 || ROWS - 1 - i < 2_100),
            ("id between 49500 and 50600 and k > 49000", |i| {
                (49_500..=50_600).contains(&i) && ROWS - 1 - i > 49_000
            }),
            ("id = 73123 or name = 'name 000005'", |i| {
                i == 73_123 || i == 5
            }),
            ("id > 99999", |_| false),
        ];
        for (filter, keep) in cases {
            let want = expected(keep, deleted);
            for partitions in [1, 3] {
                let (got, _) = ids(&t, filter, partitions, None).await;
                assert_eq!(
                    got.len(),
                    want.len(),
                    "{filter}, {partitions} partitions, deleted {deleted:?}"
                );
                assert_eq!(got, want, "{filter}, {partitions} partitions");
            }
            // A limit counts rows after the pages and the filter.
            let (got, _) = ids(&t, filter, 1, Some(1_500)).await;
            assert_eq!(got.len(), want.len().min(1_500), "{filter} limit 1500");
        }
    }
}

#[tokio::test]
async fn a_narrow_range_fetches_its_pages_not_its_column_chunks() {
    let t = table(&[]).await;
    let (narrow, narrow_bytes) = ids(&t, "id >= 20250 and id < 21250", 1, None).await;
    assert_eq!(narrow.len(), 1_000);
    let (_, chunk_bytes) = ids(&t, "id < 50000 and name >= ''", 1, None).await;
    assert!(
        narrow_bytes * 5 < chunk_bytes,
        "a 2-page range read {narrow_bytes} bytes, a whole row group {chunk_bytes}"
    );
}

/// One generated condition on a column: a comparison, a range, a list or a null test.
fn condition(next: &mut impl FnMut(u64) -> u64) -> String {
    let column = ["id", "k", "n"][next(3) as usize];
    let value = |next: &mut dyn FnMut(u64) -> u64| next(ROWS as u64 + 2_000) as i64 - 1_000;
    match next(7) {
        0 => format!("{column} < {}", value(next)),
        1 => format!("{column} >= {}", value(next)),
        2 => format!("{column} = {}", value(next)),
        3 => {
            let a = value(next);
            format!("{column} between {a} and {}", a + next(5_000) as i64)
        }
        4 => format!(
            "{column} in ({}, {}, {})",
            value(next),
            value(next),
            next(5_000)
        ),
        5 => format!("{column} is null"),
        _ => format!("{column} is not null"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_predicates_give_the_rows_of_the_full_scan_filtered() {
    use delta_arrow_reader::predicate::{bind, evaluate, parse_filter};
    let mut state = 0x5eed_u64;
    let mut next = move |bound: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % bound.max(1)
    };
    let deletes: [&[std::ops::Range<u64>]; 2] = [&[], &[20_500..23_700, 49_000..51_500]];
    for deleted in deletes {
        let t = table(deleted).await;
        let (full, _) = common::scan_to_end(t.scan()).await;
        for case in 0..150 {
            let filter = match next(4) {
                0 => condition(&mut next),
                1 => format!("{} and {}", condition(&mut next), condition(&mut next)),
                2 => format!("{} or {}", condition(&mut next), condition(&mut next)),
                _ => format!(
                    "not ({} or {}) or {}",
                    condition(&mut next),
                    condition(&mut next),
                    condition(&mut next)
                ),
            };
            let bound = parse_filter(&filter)
                .and_then(|e| bind(&e, t.delta_schema()))
                .unwrap_or_else(|e| panic!("{filter}: {e}"));
            let mut want: Vec<i64> = Vec::new();
            for b in &full {
                let keep = evaluate(&bound, b).unwrap_or_else(|e| panic!("{filter}: {e}"));
                let kept = arrow_select::filter::filter_record_batch(b, &keep)
                    .unwrap_or_else(|e| panic!("{e}"));
                want.extend(common::ids(&[kept]));
            }
            want.sort_unstable();
            let partitions = 1 + case % 3;
            let (got, _) = ids(&t, &filter, partitions, None).await;
            assert_eq!(
                got.len(),
                want.len(),
                "{filter}, {partitions} partitions, deleted {deleted:?}"
            );
            assert_eq!(got, want, "{filter}");
        }
    }
}
