//! The [`RangeRead`] conformance suite (`tests/shared/range_read_contract.rs`, the same
//! checks the native stores run) in headless Chromium: against [`FetchStore`] reading corpus
//! files from the plain corpus server (`DAR_TEST_HTTP`, see `scan`), and against
//! [`MemoryStore`] and a [`JsSourceStore`] (over a JS object like the ones a page writes)
//! holding the same files. The fetch store cannot list: every listing must be
//! `Ok(None)`.
//!
//! The expected bytes are the corpus files themselves, compiled into the test. The faulty
//! server is left to `scan`, whose test counts its requests.

use delta_arrow_reader::io::{FetchStore, JsSourceStore, MemoryStore, RangeRead};
use wasm_bindgen::JsValue;
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

/// A JS byte source over `objects` (a `Map` of path to `Uint8Array`), as a page would write
/// one: `read` answers what it has (short past the end, as `Blob.slice` does), a missing
/// object rejects with a `NotFoundError`; `list` only when `lists`. `calls` counts reads.
fn js_source(objects: &[(String, Vec<u8>)], lists: bool) -> (JsValue, js_sys::Array) {
    let map = js_sys::Map::new();
    for (path, bytes) in objects {
        map.set(
            &JsValue::from_str(path),
            &js_sys::Uint8Array::from(bytes.as_slice()),
        );
    }
    let calls = js_sys::Array::new();
    let make = js_sys::Function::new_with_args(
        "objects, lists, calls",
        "const missing = (path) => Object.assign(new Error('no ' + path), { name: 'NotFoundError' });
         const source = {
           read: async (path, start, end) => {
             calls.push(path);
             const b = objects.get(path);
             if (b === undefined) throw missing(path);
             return start === undefined ? b.slice() : b.slice(start, Math.min(end, b.length));
           },
           size: async (path) => {
             const b = objects.get(path);
             if (b === undefined) throw Object.assign(new Error('gone'), { code: 'ENOENT' });
             return b.length;
           },
         };
         if (lists) {
           source.list = async (prefix) => [...objects]
             .filter(([p]) => p.startsWith(prefix.slice(0, prefix.lastIndexOf('/') + 1)))
             .map(([path, b]) => ({ path, size: b.length, lastModified: 0 }));
         }
         return source;",
    );
    let source = make
        .call3(
            &JsValue::UNDEFINED,
            &map,
            &JsValue::from_bool(lists),
            &calls,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    (source, calls)
}

#[wasm_bindgen_test]
async fn js_source_store_keeps_the_range_read_contract() {
    for lists in [true, false] {
        let f = fixture(lists);
        let (source, _) = js_source(&f.objects, lists);
        let store = JsSourceStore::new(&source, "test").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.can_list(), lists);
        conform(
            if lists {
                "js-source"
            } else {
                "js-source-no-list"
            },
            &store,
            &f,
        )
        .await;
    }
}

#[wasm_bindgen_test]
async fn js_source_store_never_asks_for_a_path_outside_its_root() {
    let f = fixture(true);
    let (source, calls) = js_source(&f.objects, true);
    let store = JsSourceStore::new(&source, "test").unwrap_or_else(|e| panic!("{e}"));
    for path in [
        "../secret",
        "a/../../secret",
        "/etc/passwd",
        "a//b",
        "./a",
        "a\\..\\b",
        "https://elsewhere.example/x",
        "",
    ] {
        let whole = store.get(path).await;
        let ranged = store.get_range(path, 0..4).await;
        for result in [whole.map(|_| ()), ranged.map(|_| ())] {
            let err = result.err().unwrap_or_else(|| panic!("{path:?} was read"));
            assert_eq!(err.code(), "io", "{path:?}: {err}");
            assert!(err.to_string().contains("leaves the table root"), "{err}");
        }
    }
    assert_eq!(
        calls.length(),
        0,
        "the source was asked for an escaping path"
    );
    let bad = JsSourceStore::new(&JsValue::from_str("nope"), "test");
    assert_eq!(bad.err().map(|e| e.code()), Some("invalid_argument"));
    let no_read = js_sys::Object::new();
    let bad = JsSourceStore::new(&no_read, "test");
    assert_eq!(bad.err().map(|e| e.code()), Some("invalid_argument"));
}
