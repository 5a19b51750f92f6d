//! The log replay in headless Chromium (wasm-bindgen-test): the same sans-io core replays
//! the demo table and a real corpus table (classic parquet checkpoint, deletion vectors,
//! partitions) from the in-memory store, by listing and by probing.

use std::sync::Arc;

use delta_arrow_reader::fixture::demo_table;
use delta_arrow_reader::io::MemoryStore;
use delta_arrow_reader::log::Discovery;
use delta_arrow_reader::DeltaTableBuilder;
use wasm_bindgen_test::wasm_bindgen_test;

macro_rules! corpus_file {
    ($name:literal) => {
        (
            concat!("_delta_log/", $name),
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../shared/corpus/tables/golden__dv-partitioned-with-checkpoint/_delta_log/",
                $name
            )) as &[u8],
        )
    };
}

/// The log of `golden__dv-partitioned-with-checkpoint`, compiled into the test.
const DV_TABLE_LOG: &[(&str, &[u8])] = &[
    corpus_file!("_last_checkpoint"),
    corpus_file!("00000000000000000010.checkpoint.parquet"),
    corpus_file!("00000000000000000000.json"),
    corpus_file!("00000000000000000001.json"),
    corpus_file!("00000000000000000002.json"),
    corpus_file!("00000000000000000003.json"),
    corpus_file!("00000000000000000004.json"),
    corpus_file!("00000000000000000005.json"),
    corpus_file!("00000000000000000006.json"),
    corpus_file!("00000000000000000007.json"),
    corpus_file!("00000000000000000008.json"),
    corpus_file!("00000000000000000009.json"),
    corpus_file!("00000000000000000010.json"),
    corpus_file!("00000000000000000011.json"),
    corpus_file!("00000000000000000012.json"),
    corpus_file!("00000000000000000013.json"),
    corpus_file!("00000000000000000014.json"),
    corpus_file!("00000000000000000015.json"),
];

fn dv_table() -> MemoryStore {
    let store = MemoryStore::new();
    for (path, data) in DV_TABLE_LOG {
        store.put(*path, data.to_vec());
    }
    store
}

#[wasm_bindgen_test]
async fn replays_the_demo_table_in_the_browser() {
    let store = demo_table().unwrap_or_else(|e| panic!("{e}"));
    for listing in [true, false] {
        let s = if listing {
            store.clone()
        } else {
            store.without_listing()
        };
        let table = DeltaTableBuilder::new("memory://demo/")
            .with_store(Arc::new(s))
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(table.version(), 3);
        assert_eq!(table.eager_files().unwrap_or_default().len(), 3);
        assert_eq!(table.partition_columns(), ["country".to_string()]);
        assert_eq!(table.schema().fields().len(), 6);
        let expected = if listing {
            Discovery::Listing
        } else {
            Discovery::Probing
        };
        assert_eq!(table.load_info().discovery, expected);
    }
}

#[wasm_bindgen_test]
async fn replays_a_checkpointed_table_with_deletion_vectors() {
    let store = dv_table();
    for listing in [true, false] {
        let s = if listing {
            store.clone()
        } else {
            store.without_listing()
        };
        let table = DeltaTableBuilder::new("memory://dv/")
            .with_store(Arc::new(s))
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(table.version(), 15);
        assert_eq!(table.eager_files().unwrap_or_default().len(), 15);
        assert_eq!(table.load_info().checkpoint_version, Some(10));
        assert!(table
            .eager_files()
            .unwrap_or_default()
            .iter()
            .any(|f| f.deletion_vector.is_some()));
        let old = DeltaTableBuilder::new("memory://dv/")
            .with_store(Arc::new(store.clone()))
            .with_version(5)
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(old.version(), 5);
        assert_eq!(old.load_info().checkpoint_version, None);
    }
}

#[wasm_bindgen_test]
async fn refuses_a_missing_table_with_a_typed_error() {
    let err = DeltaTableBuilder::new("memory://none/")
        .with_store(Arc::new(MemoryStore::new().without_listing()))
        .load_table_with_eager_scan_metadata()
        .await
        .err()
        .map(|e| e.code());
    assert_eq!(err, Some("not_a_table"));
}
