//! The [`RangeRead`] conformance suite (`tests/shared/range_read_contract.rs`, the same
//! checks the native stores run) in headless Chromium: against [`FetchStore`] reading corpus
//! files from the plain corpus server (`DAR_TEST_HTTP`, see `scan`), and against
//! [`MemoryStore`] holding the same files. The fetch store cannot list: every listing must be
//! `Ok(None)`.
//!
//! The expected bytes are the corpus files themselves, compiled into the test. The faulty
//! server is left to `scan`, whose test counts its requests.

use delta_arrow_reader::io::{FetchStore, MemoryStore, RangeRead};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::range_read_contract::{conform, Fixture};

/// A corpus file: its path under `corpus/tables/` and its bytes.
macro_rules! corpus {
    ($path:literal) => {
        (
            $path,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../shared/corpus/tables/",
                $path
            )) as &[u8],
        )
    };
}

const TABLE: &str = "golden__dv-partitioned-with-checkpoint";
/// 20 KiB of Parquet: the object ranges are cut from.
const DATA: (&str, &[u8]) = corpus!(
    "golden__dv-partitioned-with-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet"
);
const COMMIT: (&str, &[u8]) =
    corpus!("golden__dv-partitioned-with-checkpoint/_delta_log/00000000000000000000.json");
/// An empty `_last_checkpoint`.
const EMPTY: (&str, &[u8]) =
    corpus!("golden__corrupted-last-checkpoint-kernel/_delta_log/_last_checkpoint");
/// A Spark partition folder with a space, `=` and a literal `%3A` in its name.
const SPECIAL: (&str, &[u8]) = corpus!(
    "golden__kernel-timestamp-timestamp_micros/part=2020-01-01 08%3A09%3A10.001/part-00000-3cac2575-d0b4-4647-a7a3-b4a9d910cb32.c000.snappy.parquet"
);

fn fixture(lists: bool) -> Fixture {
    let log = format!("{TABLE}/_delta_log/");
    Fixture {
        objects: [DATA, COMMIT, EMPTY, SPECIAL]
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect(),
        data: DATA.0.into(),
        empty: EMPTY.0.into(),
        special: SPECIAL.0.into(),
        missing: format!("{TABLE}/no/such/object.bin"),
        missing_log: format!("{log}00000000000000000999.json"),
        lists,
        listings: vec![
            (String::new(), None),
            (log.clone(), None),
            (log.clone(), Some(format!("{log}00000000000000000000"))),
            (format!("{TABLE}/_delta"), None),
        ],
    }
}

fn server() -> String {
    let server = env!(
        "DAR_TEST_HTTP",
        "run the wasm tests with `scripts/test test-wasm`, which starts the corpus server"
    );
    format!("{}/", server.trim_end_matches('/'))
}

#[wasm_bindgen_test]
async fn fetch_store_keeps_the_range_read_contract() {
    let store = FetchStore::new(&server()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.list("", None).await.ok(), Some(None));
    conform("fetch", &store, &fixture(false)).await;
}

#[wasm_bindgen_test]
async fn memory_store_keeps_the_range_read_contract_in_the_browser() {
    let f = fixture(true);
    let store = MemoryStore::new();
    for (path, bytes) in &f.objects {
        store.put(path.clone(), bytes.clone());
    }
    conform("memory", &store, &f).await;
    conform("memory-no-list", &store.without_listing(), &fixture(false)).await;
}
