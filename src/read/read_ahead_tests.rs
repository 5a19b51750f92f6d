//! Unit tests of read-ahead decisions on a real footer: three row groups of two columns.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::{leaves_of, Ahead, ReadAhead};

fn metadata() -> ParquetMetaData {
    metadata_of(300)
}

/// A file of `rows` rows in row groups of 100.
fn metadata_of(rows: i64) -> ParquetMetaData {
    let ids = Int64Array::from((0..rows).collect::<Vec<i64>>());
    let names = StringArray::from(
        (0..rows)
            .map(|i| format!("n{:04}", i % 1000))
            .collect::<Vec<_>>(),
    );
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(ids) as _), ("name", Arc::new(names) as _)])
            .unwrap_or_else(|e| panic!("{e}"));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(100))
        .build();
    let bytes = crate::fixture::parquet_bytes_with_properties("read-ahead.parquet", &batch, props)
        .unwrap_or_else(|e| panic!("{e}"));
    let reader = SerializedFileReader::new(bytes).unwrap_or_else(|e| panic!("{e}"));
    reader.metadata().clone()
}

fn chunk(m: &ParquetMetaData, rg: usize, leaf: usize) -> std::ops::Range<u64> {
    let (start, len) = m.row_group(rg).column(leaf).byte_range();
    start..start + len
}

fn size(ranges: &[std::ops::Range<u64>]) -> u64 {
    ranges.iter().map(|r| r.end - r.start).sum()
}

#[test]
fn a_whole_row_group_request_brings_the_next_ones_within_the_budget() {
    let m = metadata();
    assert_eq!(m.num_row_groups(), 3);
    let leaves = leaves_of(&m, &[1]);
    assert_eq!(leaves, vec![1]);
    let one = size(&[chunk(&m, 1, 1)]);
    // The first fetch has a quarter of the budget: room for exactly one more row group's
    // chunk.
    let mut ahead =
        ReadAhead::new(&m, &[0, 1, 2], &leaves, one * 4).unwrap_or_else(|| panic!("read-ahead on"));
    let asked = vec![chunk(&m, 0, 1)];
    assert_eq!(
        ahead.on_request(Some(0), asked.clone()),
        Ahead::Fetch(vec![chunk(&m, 0, 1), chunk(&m, 1, 1)])
    );
    // Row group 1 came with 0; the decoder next asks for 2, which comes alone (the last).
    assert_eq!(
        ahead.on_request(Some(2), vec![chunk(&m, 2, 1)]),
        Ahead::Fetch(vec![chunk(&m, 2, 1)])
    );
}

#[test]
fn every_other_request_stops_it() {
    let m = metadata();
    let leaves = leaves_of(&m, &[0, 1]);
    let all = |rg| vec![chunk(&m, rg, 0), chunk(&m, rg, 1)];
    let mut ahead =
        ReadAhead::new(&m, &[0, 1, 2], &leaves, u64::MAX).unwrap_or_else(|| panic!("on"));
    // Part of a chunk (the decoder skips pages): stop, and fetch only what was asked.
    let start = chunk(&m, 0, 0).start;
    let part: Vec<std::ops::Range<u64>> = std::iter::once(start..start + 10).collect();
    assert_eq!(ahead.on_request(Some(0), part.clone()), Ahead::Stop(part));
    // A row group already fetched ahead asked for again: stop.
    let mut ahead =
        ReadAhead::new(&m, &[0, 1, 2], &leaves, u64::MAX).unwrap_or_else(|| panic!("on"));
    let mut expected = all(0);
    expected.extend(all(1));
    expected.extend(all(2));
    // The ranges asked come in any order.
    let reversed: Vec<_> = all(0).into_iter().rev().collect();
    let mut fetched = match ahead.on_request(Some(0), reversed) {
        Ahead::Fetch(r) => r,
        other => panic!("{other:?}"),
    };
    fetched.sort_by_key(|r| r.start);
    assert_eq!(fetched, expected);
    assert_eq!(ahead.on_request(Some(1), all(1)), Ahead::Stop(all(1)));
    // A row group the decoder names that the plan does not read, or none named: stop.
    let mut ahead = ReadAhead::new(&m, &[0, 2], &leaves, u64::MAX).unwrap_or_else(|| panic!("on"));
    assert_eq!(ahead.on_request(Some(1), all(1)), Ahead::Stop(all(1)));
    let mut ahead = ReadAhead::new(&m, &[0, 2], &leaves, u64::MAX).unwrap_or_else(|| panic!("on"));
    assert_eq!(ahead.on_request(None, all(0)), Ahead::Stop(all(0)));
}

#[test]
fn off_without_a_budget_one_row_group_or_columns() {
    let m = metadata();
    let leaves = leaves_of(&m, &[0]);
    assert!(ReadAhead::new(&m, &[0, 1], &leaves, 0).is_none());
    assert!(ReadAhead::new(&m, &[1], &leaves, 1 << 20).is_none());
    assert!(ReadAhead::new(&m, &[0, 1], &[], 1 << 20).is_none());
    // A row group or column the file does not have.
    assert!(ReadAhead::new(&m, &[0, 7], &leaves, 1 << 20).is_none());
    assert!(ReadAhead::new(&m, &[0, 1], &[9], 1 << 20).is_none());
}

#[test]
fn reads_are_started_ahead_when_little_is_buffered_and_waited_for() {
    let m = metadata_of(600);
    assert_eq!(m.num_row_groups(), 6);
    let leaves = leaves_of(&m, &[0, 1]);
    let all = |rg| vec![chunk(&m, rg, 0), chunk(&m, rg, 1)];
    let biggest = (0..6).map(|rg| size(&all(rg))).max().unwrap_or(0);
    let smallest = (0..6).map(|rg| size(&all(rg))).min().unwrap_or(0);
    assert!(smallest * 5 > biggest * 4, "row groups of about one size");
    // Two row groups fit, three do not.
    let budget = biggest * 5 / 2;
    let order = [0, 1, 2, 3, 4, 5];
    let mut ahead = ReadAhead::new(&m, &order, &leaves, budget).unwrap_or_else(|| panic!("on"));
    // The first fetch has a quarter of the budget, which holds no more row group.
    assert_eq!(ahead.on_request(Some(0), all(0)), Ahead::Fetch(all(0)));
    // Planning 0: only 0 is buffered: 1 and 2 are read now, up to the whole budget.
    assert_eq!(ahead.speculate(Some(0)), Some([all(1), all(2)].concat()));
    ahead.arrived();
    // Planning 1: 1 and 2 are buffered, over half the budget: nothing yet.
    assert_eq!(ahead.speculate(Some(1)), None);
    // Planning 2: only 2 is buffered: 3 and 4 are read now.
    let mut next = all(3);
    next.extend(all(4));
    assert_eq!(ahead.speculate(Some(2)), Some(next));
    // One read ahead at a time.
    assert_eq!(ahead.speculate(Some(2)), None);
    // The decoder asks for 3 before that read is in: wait for it.
    assert_eq!(ahead.on_request(Some(3), all(3)), Ahead::Wait);
    ahead.arrived();
    // Asked for again once it is in, 3 was not where the decoder looked: stop.
    assert_eq!(ahead.on_request(Some(3), all(3)), Ahead::Stop(all(3)));
    // Planning past what was fetched: the decoder asks itself, nothing is started ahead.
    let mut ahead = ReadAhead::new(&m, &order, &leaves, budget).unwrap_or_else(|| panic!("on"));
    assert_eq!(ahead.speculate(Some(0)), None);
    let _ = ahead.on_request(Some(0), all(0));
    assert_eq!(ahead.speculate(Some(3)), None);
    assert_eq!(
        ahead.on_request(Some(3), all(3)),
        Ahead::Fetch([all(3), all(4), all(5)].concat())
    );
    // Nothing is left to read ahead.
    assert_eq!(ahead.speculate(Some(5)), None);
}

#[test]
fn the_rest_is_fetched_beside_the_first_request_while_it_is_in_flight() {
    let m = metadata_of(600);
    let leaves = leaves_of(&m, &[0, 1]);
    let all = |rg| vec![chunk(&m, rg, 0), chunk(&m, rg, 1)];
    let biggest = (0..6).map(|rg| size(&all(rg))).max().unwrap_or(0);
    let budget = biggest * 5 / 2;
    let order = [0, 1, 2, 3, 4, 5];
    let mut ahead = ReadAhead::new(&m, &order, &leaves, budget).unwrap_or_else(|| panic!("on"));
    // Before the decoder asks for anything, nothing is known to be wanted.
    assert_eq!(ahead.speculate(None), None);
    assert_eq!(ahead.on_request(Some(0), all(0)), Ahead::Fetch(all(0)));
    // The decoder waits for row group 0 (it names no upcoming one): 1 and 2 go out now.
    assert_eq!(ahead.speculate(None), Some([all(1), all(2)].concat()));
    assert_eq!(ahead.speculate(None), None);
    // The decoder, done with 0, asks for 1 while that read is in flight: wait for it.
    assert_eq!(ahead.on_request(Some(1), all(1)), Ahead::Wait);
    ahead.arrived();
    // Planning 2 with only 2 buffered: 3 and 4.
    assert_eq!(ahead.speculate(Some(2)), Some([all(3), all(4)].concat()));
}

#[test]
fn the_budget_counts_the_gaps_a_remote_read_fetches_between_chunks() {
    // The second column only: between its chunks lie the next row group's first column,
    // which a remote read fetches too.
    let m = metadata();
    let leaves = leaves_of(&m, &[1]);
    let (c1, c2) = (chunk(&m, 1, 1), chunk(&m, 2, 1));
    let chunks_only = size(&[c1.clone(), c2.clone()]);
    let span = c2.end - c1.start;
    assert!(span > chunks_only, "a gap between the chunks");
    // The first fetch has a quarter of the budget; later ones the whole of it.
    let run = |budget: u64| {
        let mut ahead = ReadAhead::new(&m, &[0, 1, 2], &leaves, budget * 4)
            .unwrap_or_else(|| panic!("read-ahead on"));
        ahead.on_request(Some(0), vec![chunk(&m, 0, 1)])
    };
    // Room for both chunks but not for the gap: one row group ahead.
    assert_eq!(
        run(chunks_only),
        Ahead::Fetch(vec![chunk(&m, 0, 1), c1.clone()])
    );
    // Room for the span: both.
    assert_eq!(run(span), Ahead::Fetch(vec![chunk(&m, 0, 1), c1, c2]));
}
