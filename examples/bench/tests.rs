//! A smoke test of the bench code that CI runs (`cargo test --example bench`): the table
//! generator at a tiny scale, then our streaming reader, `delta_kernel` and the arrow-rs
//! limit on it, which must return the same rows (and the rows the generator wrote).

use crate::cell::CellResult;
use crate::lineitem::Layout;
use crate::scenario::Scenario;
use crate::{kernel, limit, ours, tables};

const TINY: Layout = Layout {
    files_per_year: 1,
    rows_per_file: 2_500,
    rows_per_group: 1_000,
};

fn scenario(name: &str) -> Scenario {
    crate::scenario::all(TINY, 10)
        .into_iter()
        .find(|s| s.name == name)
        .unwrap()
}

fn check(name: &str, ours: &CellResult, other: &CellResult) {
    assert_eq!(
        (ours.rows, ours.checksum),
        (other.rows, other.checksum),
        "{name}: rows or checksum differ"
    );
}

#[test]
fn tiny_tables_read_the_same_with_every_rust_reader() {
    let root = tempfile::tempdir().unwrap();
    let adds = tables::write_lineitem(&root.path().join("lineitem"), TINY).unwrap();
    assert_eq!(adds.len(), TINY.files());
    tables::write_lineitem_dv(root.path(), TINY, &adds).unwrap();
    tables::write_lineitem_onefile(&root.path().join("lineitem_onefile"), TINY).unwrap();
    tables::write_lineitem_onerowgroup(&root.path().join("lineitem_onerowgroup"), TINY).unwrap();
    tables::write_commits(&root.path().join("commits10k"), 10).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let all_keys: i64 = (0..TINY.files())
        .flat_map(|f| (0..TINY.rows_per_file).map(move |r| TINY.orderkey(f, r)))
        .sum();
    let one = TINY.one_file();
    let one_file_keys: i64 = (0..one.rows_per_file).map(|r| one.orderkey(0, r)).sum();
    for name in [
        "full",
        "projection",
        "selective",
        "partition",
        "dv",
        "onefile",
        "onegroup",
    ] {
        let s = scenario(name);
        let dir = root.path().join(s.table);
        let loc = dir.to_string_lossy().into_owned();
        let ours = runtime.block_on(ours::streaming(&loc, &s)).unwrap();
        let url = url::Url::from_directory_path(&dir).unwrap();
        check(name, &ours, &kernel::run(&url, &s).unwrap());
        check(name, &ours, &limit::run(&dir, &s, 1, 0).unwrap());
        check(name, &ours, &limit::run(&dir, &s, 2, 0).unwrap());
        // The diagnostic that keeps batches alive reads the same rows.
        check(name, &ours, &limit::run(&dir, &s, 2, 3).unwrap());
        match name {
            "full" | "projection" => {
                assert_eq!(ours.rows, TINY.rows());
                assert_eq!(ours.checksum, all_keys);
            }
            "selective" => {
                let (lo, hi) = TINY.selective_orderkeys();
                let expected = (0..TINY.rows())
                    .filter(|r| (lo..hi).contains(&((r / 4 + 1) as i64)))
                    .count();
                assert_eq!(ours.rows, expected as u64);
                let (matching, all, _) = limit::matching_row_groups(&dir, &s).unwrap();
                assert!(matching < all, "{matching} of {all} row groups match");
            }
            "partition" => assert_eq!(ours.rows, TINY.rows_per_file as u64),
            "onefile" | "onegroup" => {
                assert_eq!(ours.rows, one.rows_per_file as u64);
                assert_eq!(ours.checksum, one_file_keys);
            }
            _ => {
                let deleted: usize = (0..TINY.files())
                    .map(|f| tables::deleted_rows(TINY, f).len())
                    .sum();
                assert!(deleted > 0);
                assert_eq!(ours.rows, TINY.rows() - deleted as u64);
            }
        }
    }
    let s = scenario("log10k");
    let dir = root.path().join("commits10k");
    let ours = runtime
        .block_on(ours::streaming(&dir.to_string_lossy(), &s))
        .unwrap();
    assert_eq!(ours.rows, 9);
    let url = url::Url::from_directory_path(&dir).unwrap();
    check("log10k", &ours, &kernel::run(&url, &s).unwrap());
}
