//! The [`RangeRead`] conformance suite (`tests/shared/range_read_contract.rs`) against every
//! native store: the same objects, the same questions, the same answers.
//!
//! Stores: [`MemoryStore`] (listing and not), [`ObjectStoreRange`] on a local folder, over HTTP
//! from [`StaticServer`] (`dar serve`, which cannot list), over S3 from a loopback
//! `moto_server` (see `s3_moto`), over Azure from Azurite and over Google Cloud Storage from
//! fake-gcs-server (see `cloud_emulators`). Every store passes every check.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use delta_arrow_reader::io::{MemoryStore, ObjectStoreRange, RangeRead, Store, TableLocation};
use delta_arrow_reader::serve::{ServeConfig, StaticServer};

use crate::cloud_emulators;
use crate::range_read_contract::{conform, Fixture};
use crate::s3_moto;

/// A name with a space, `=` and a literal `%3A`, as Spark writes partition folders.
const SPECIAL: &str = "dir/x y=1%3A2.txt";
const DATA: &str = "data.bin";
const DATA_LEN: u64 = 70_001;

/// The objects every store holds, path and bytes.
fn objects() -> Vec<(String, Vec<u8>)> {
    let data = (0..DATA_LEN).map(|i| (i * 31 + i / 251) as u8).collect();
    [
        (DATA, data),
        ("empty.bin", Vec::new()),
        ("dir/one.txt", b"one".to_vec()),
        ("dir/sub/two.txt", b"two!".to_vec()),
        ("dirt.txt", b"not under dir/".to_vec()),
        (
            "_delta_log/00000000000000000010.checkpoint.parquet",
            b"cp".to_vec(),
        ),
        ("_delta_log/00000000000000000011.json", b"{}".to_vec()),
        (SPECIAL, b"special".to_vec()),
    ]
    .into_iter()
    .map(|(p, b)| (p.to_string(), b))
    .collect()
}

/// The objects and the questions; `lists` says whether the store lists.
fn fixture(lists: bool) -> Fixture {
    let listing =
        |prefix: &str, after: Option<&str>| (prefix.to_string(), after.map(str::to_string));
    Fixture {
        objects: objects(),
        data: DATA.into(),
        empty: "empty.bin".into(),
        special: SPECIAL.into(),
        missing: "no/such/object.bin".into(),
        missing_log: "_delta_log/00000000000000000999.json".into(),
        lists,
        listings: vec![
            listing("", None),
            listing("dir/", None),
            listing("dir/", Some("dir/one.txt")),
            listing("", Some(DATA)),
            listing("nothing/", None),
            // Prefixes that end inside a path segment.
            listing("dir/su", None),
            listing("dir", None),
            listing("dir/x y=1%3A", None),
            // As the log loader asks after reading `_last_checkpoint`: a name of no object.
            listing("_delta_log/", Some("_delta_log/00000000000000000010")),
            listing("_delta_log/", Some("_delta_log/00000000000000000011.json")),
        ],
    }
}

/// Writes every object under `dir`.
fn write_objects(dir: &Path) {
    for (path, bytes) in objects() {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&file, bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

/// A store at a location, as the reader opens it.
fn store_at(location: &str, options: &HashMap<String, String>) -> Store {
    let location = TableLocation::parse(location).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(ObjectStoreRange::from_location(&location, options).unwrap_or_else(|e| panic!("{e}")))
}

fn memory() -> MemoryStore {
    let store = MemoryStore::new();
    for (path, bytes) in objects() {
        store.put(path, bytes);
    }
    store
}

async fn run(name: &str, store: &dyn RangeRead, lists: bool) {
    conform(name, store, &fixture(lists)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store() {
    run("memory", &memory(), true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_without_listing() {
    run("memory-no-list", &memory().without_listing(), false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_folder() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().join("root");
    write_objects(&root);
    let store = store_at(&root.to_string_lossy(), &HashMap::new());
    // Local files are read on the caller's thread: scans open no files ahead there.
    assert!(store.reads_local_files());
    run("local", &store, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_static_server() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_objects(&dir.path().join("root"));
    let server = StaticServer::start(ServeConfig::new(dir.path()))
        .await
        .unwrap_or_else(|e| panic!("cannot start the static server: {e}"));
    let store = store_at(&server.url_for("root/"), &HashMap::new());
    assert!(!store.reads_local_files());
    run("http", &store, false).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_moto_server() {
    let moto = s3_moto::start_moto().await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_objects(dir.path());
    s3_moto::upload(&s3_moto::bucket(moto.port), dir.path(), "conformance").await;
    let location = format!("s3://{}/conformance", s3_moto::BUCKET);
    let store = store_at(&location, &s3_moto::options(moto.port));
    assert!(!store.reads_local_files());
    run("s3", &store, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_azurite() {
    let azurite = cloud_emulators::start_azurite().await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_objects(dir.path());
    cloud_emulators::upload_to_azure(azurite.port, dir.path(), "conformance").await;
    let location = format!("az://{}/conformance", cloud_emulators::CONTAINER);
    let store = store_at(&location, &cloud_emulators::azure_options(azurite.port));
    assert!(!store.reads_local_files());
    run("azure", &store, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_fake_gcs_server() {
    let seed = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_objects(dir.path());
    cloud_emulators::seed_gcs(seed.path(), dir.path(), "conformance");
    let gcs = cloud_emulators::start_fake_gcs(seed.path()).await;
    let location = format!("gs://{}/conformance", cloud_emulators::GCS_BUCKET);
    let store = store_at(&location, &cloud_emulators::gcs_options(gcs.port));
    assert!(!store.reads_local_files());
    run("gcs", &store, true).await;
}
