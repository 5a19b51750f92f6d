//! One conformance suite that every [`RangeRead`] implementation runs: the same objects, the
//! same questions, the same answers (the trait's contract in `src/io/mod.rs`).
//!
//! Checked per store: whole gets; ranges at the start, middle and end; zero-length ranges;
//! ranges past the end and reversed ranges (errors: an answer must have exactly the range's
//! length); a missing object (`not_found`, for every call); `size` (the length, or "cannot
//! tell"); listing where the store lists (prefixes, `start_after`) and `Ok(None)` where it
//! does not; an object name with a space, `=` and a literal `%3A`; and many reads at once.
//!
//! Stores: [`MemoryStore`] (listing and not), [`ObjectStoreRange`] on a local folder, over HTTP
//! from [`StaticServer`], and over S3 from a loopback `moto_server` (see `s3_moto`).
//!
//! Where a store answers otherwise than the contract, the difference is listed in
//! [`KNOWN_DISAGREEMENTS`] with the reason, printed on every run and never counted as a pass;
//! a listed difference that goes away fails the suite, so the list stays true.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use delta_arrow_reader::io::{MemoryStore, ObjectStoreRange, RangeRead, Store, TableLocation};
use delta_arrow_reader::serve::{ServeConfig, StaticServer};
use futures::StreamExt;

use crate::s3_moto;

/// A name with a space, `=` and a literal `%3A`, as Spark writes partition folders.
const SPECIAL: &str = "dir/x y=1%3A2.txt";
const MISSING: &str = "no/such/object.bin";
const DATA: &str = "data.bin";
const DATA_LEN: u64 = 70_001;

/// (store, check, why): answers that differ from the contract, known and explained.
const KNOWN_DISAGREEMENTS: &[(&str, &str, &str)] = &[
    ("local", "missing_zero_length", ZERO_LENGTH_UNCHECKED),
    ("http", "missing_zero_length", ZERO_LENGTH_UNCHECKED),
    ("s3", "missing_zero_length", ZERO_LENGTH_UNCHECKED),
    ("local", "list", LISTED_NAMES_DECODED),
    ("s3", "list", LISTED_NAMES_DECODED),
    ("local", "list_partial_segment", WHOLE_SEGMENTS),
    ("s3", "list_partial_segment", WHOLE_SEGMENTS),
];

const ZERO_LENGTH_UNCHECKED: &str = "ObjectStoreRange answers an empty range with no bytes \
     without asking the store, so a missing object is not `not_found`";
const LISTED_NAMES_DECODED: &str = "ObjectStoreRange percent-decodes listed names: \
     `x y=1%3A2.txt` is listed as `x y=1:2.txt`, a name `get` does not find";
const WHOLE_SEGMENTS: &str = "object_store lists by whole path segments: prefix `dir/su` finds \
     nothing under `dir/sub/`, and `dir` lists `dir/` but not `dirt.txt`";

/// The objects every store holds (besides [`SPECIAL`]), path and bytes.
fn objects() -> Vec<(&'static str, Vec<u8>)> {
    let data = (0..DATA_LEN).map(|i| (i * 31 + i / 251) as u8).collect();
    vec![
        (DATA, data),
        ("empty.bin", Vec::new()),
        ("dir/one.txt", b"one".to_vec()),
        ("dir/sub/two.txt", b"two!".to_vec()),
        ("dirt.txt", b"not under dir/".to_vec()),
    ]
}

fn all_objects() -> Vec<(&'static str, Vec<u8>)> {
    let mut all = objects();
    all.push((SPECIAL, b"special".to_vec()));
    all
}

fn expected(path: &str) -> Vec<u8> {
    all_objects()
        .into_iter()
        .find(|(p, _)| *p == path)
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no fixture object {path}"))
}

/// Writes every object under `dir`.
fn write_objects(dir: &Path) {
    for (path, bytes) in all_objects() {
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

type Outcome = Result<(), String>;

fn check(ok: bool, what: impl FnOnce() -> String) -> Outcome {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

async fn get_is(store: &Store, path: &str, want: &[u8]) -> Outcome {
    match store.get(path).await {
        Ok(b) => check(b == want, || {
            format!("get {path}: {} bytes, want {}", b.len(), want.len())
        }),
        Err(e) => Err(format!("get {path}: {e}")),
    }
}

async fn range_is(store: &Store, path: &str, range: std::ops::Range<u64>) -> Outcome {
    let all = expected(path);
    let want = &all[range.start as usize..range.end as usize];
    match store.get_range(path, range.clone()).await {
        Ok(b) => check(b == want, || {
            format!("get_range {path} {range:?}: {} bytes differ", b.len())
        }),
        Err(e) => Err(format!("get_range {path} {range:?}: {e}")),
    }
}

/// The error code of `result`, or a complaint that it succeeded with `n` bytes.
fn code_of<T>(
    result: delta_arrow_reader::Result<T>,
    len: impl Fn(&T) -> usize,
) -> Result<&'static str, String> {
    match result {
        Ok(v) => Err(format!("succeeded with {} bytes", len(&v))),
        Err(e) => Ok(e.code()),
    }
}

async fn range_fails(
    store: &Store,
    path: &str,
    range: std::ops::Range<u64>,
    code: &str,
) -> Outcome {
    let got = code_of(store.get_range(path, range.clone()).await, Bytes::len);
    match got {
        Ok(c) => check(c == code, || {
            format!("get_range {path} {range:?}: code {c}, want {code}")
        }),
        Err(e) => Err(format!(
            "get_range {path} {range:?}: {e}, want error {code}"
        )),
    }
}

async fn whole_gets(store: &Store) -> Outcome {
    for (path, bytes) in objects() {
        get_is(store, path, &bytes).await?;
    }
    Ok(())
}

async fn ranges(store: &Store) -> Outcome {
    for range in [
        0..10,
        1000..5000,
        4096..4097,
        DATA_LEN - 10..DATA_LEN,
        0..DATA_LEN,
    ] {
        range_is(store, DATA, range).await?;
    }
    range_is(store, "dir/one.txt", 1..3).await
}

async fn zero_length(store: &Store) -> Outcome {
    for range in [0..0, 500..500, DATA_LEN..DATA_LEN] {
        range_is(store, DATA, range).await?;
    }
    range_is(store, "empty.bin", 0..0).await
}

async fn past_the_end(store: &Store) -> Outcome {
    range_fails(store, DATA, DATA_LEN - 5..DATA_LEN + 5, "io").await?;
    range_fails(store, DATA, DATA_LEN + 10..DATA_LEN + 20, "io").await?;
    range_fails(store, "empty.bin", 0..1, "io").await
}

async fn reversed(store: &Store) -> Outcome {
    #[allow(clippy::reversed_empty_ranges)]
    let range = 10..5;
    range_fails(store, DATA, range, "io").await
}

async fn missing(store: &Store) -> Outcome {
    let get = code_of(store.get(MISSING).await, Bytes::len);
    check(get == Ok("not_found"), || format!("get: {get:?}"))?;
    range_fails(store, MISSING, 0..4, "not_found").await?;
    match store.size(MISSING).await {
        Ok(None) => Ok(()),
        Ok(Some(n)) => Err(format!("size: Some({n})")),
        Err(e) => check(e.code() == "not_found", || format!("size: {e}")),
    }
}

async fn missing_zero_length(store: &Store) -> Outcome {
    range_fails(store, MISSING, 0..0, "not_found").await
}

async fn sizes(store: &Store) -> Outcome {
    for (path, bytes) in all_objects() {
        match store.size(path).await {
            Ok(None) => {}
            Ok(Some(n)) => check(n == bytes.len() as u64, || {
                format!("size {path}: {n}, want {}", bytes.len())
            })?,
            Err(e) => return Err(format!("size {path}: {e}")),
        }
    }
    Ok(())
}

/// `list(prefix, start_after)` as path → size, or `None` when the store cannot list.
async fn listed(
    store: &Store,
    prefix: &str,
    after: Option<&str>,
) -> Result<Option<BTreeMap<String, u64>>, String> {
    let entries = store
        .list(prefix, after)
        .await
        .map_err(|e| format!("list {prefix:?} after {after:?}: {e}"))?;
    Ok(entries.map(|v| v.into_iter().map(|e| (e.path, e.size)).collect()))
}

/// What a listing of `prefix` after `after` must give, by the contract.
fn want_listing(prefix: &str, after: Option<&str>) -> BTreeMap<String, u64> {
    all_objects()
        .into_iter()
        .filter(|(p, _)| p.starts_with(prefix) && after.is_none_or(|a| *p > a))
        .map(|(p, b)| (p.to_string(), b.len() as u64))
        .collect()
}

async fn listing_is(store: &Store, lists: bool, prefix: &str, after: Option<&str>) -> Outcome {
    match (listed(store, prefix, after).await?, lists) {
        (None, false) => Ok(()),
        (Some(got), true) => {
            let want = want_listing(prefix, after);
            check(got == want, || {
                format!("list {prefix:?} after {after:?}: {got:?}, want {want:?}")
            })
        }
        (None, true) => Err(format!("list {prefix:?}: Ok(None) from a store that lists")),
        (Some(got), false) => Err(format!(
            "list {prefix:?}: {got:?} from a store that cannot list"
        )),
    }
}

async fn listing(store: &Store, lists: bool) -> Outcome {
    listing_is(store, lists, "", None).await?;
    listing_is(store, lists, "dir/", None).await?;
    listing_is(store, lists, "dir/", Some("dir/one.txt")).await?;
    listing_is(store, lists, "", Some(DATA)).await?;
    listing_is(store, lists, "nothing/", None).await
}

/// A prefix that ends inside a path segment: "every object whose path starts with prefix".
async fn listing_partial_segment(store: &Store, lists: bool) -> Outcome {
    listing_is(store, lists, "dir/su", None).await?;
    listing_is(store, lists, "dir", None).await
}

async fn special_name(store: &Store) -> Outcome {
    get_is(store, SPECIAL, b"special").await?;
    range_is(store, SPECIAL, 2..5).await?;
    match store.size(SPECIAL).await {
        Ok(None | Some(7)) => Ok(()),
        other => Err(format!("size {SPECIAL}: {other:?}")),
    }
}

/// 256 reads at once, 64 in flight: ranges of every size across the data object and gets.
async fn concurrent(store: &Store) -> Outcome {
    let reads = (0..256u64).map(|i| {
        let start = (i * 7919) % DATA_LEN;
        let end = (start + 1 + i * 37).min(DATA_LEN);
        async move {
            if i % 16 == 0 {
                get_is(store, DATA, &expected(DATA)).await
            } else {
                range_is(store, DATA, start..end).await
            }
        }
    });
    let results: Vec<Outcome> = futures::stream::iter(reads)
        .buffer_unordered(64)
        .collect()
        .await;
    let failed: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    check(failed.is_empty(), || {
        format!("{} of 256 reads failed: {:?}", failed.len(), failed.first())
    })
}

/// Runs every check on `store` and fails with every unexpected answer.
async fn conform(name: &str, store: Store, lists: bool) {
    let mut outcomes: Vec<(&str, Outcome)> = Vec::new();
    let s = &store;
    outcomes.push(("get", whole_gets(s).await));
    outcomes.push(("get_range", ranges(s).await));
    outcomes.push(("zero_length", zero_length(s).await));
    outcomes.push(("past_the_end", past_the_end(s).await));
    outcomes.push(("reversed", reversed(s).await));
    outcomes.push(("missing", missing(s).await));
    outcomes.push(("missing_zero_length", missing_zero_length(s).await));
    outcomes.push(("size", sizes(s).await));
    outcomes.push(("list", listing(s, lists).await));
    outcomes.push((
        "list_partial_segment",
        listing_partial_segment(s, lists).await,
    ));
    outcomes.push(("special_name", special_name(s).await));
    outcomes.push(("concurrent", concurrent(s).await));
    report(name, outcomes);
}

fn report(name: &str, outcomes: Vec<(&str, Outcome)>) {
    let mut failures = Vec::new();
    for (check, outcome) in outcomes {
        let known = KNOWN_DISAGREEMENTS
            .iter()
            .find(|(s, c, _)| *s == name && *c == check);
        match (outcome, known) {
            (Ok(()), None) => println!("{name} {check}: ok"),
            (Err(e), Some((_, _, why))) => {
                println!("{name} {check}: known disagreement ({why}): {e}")
            }
            (Err(e), None) => failures.push(format!("{check}: {e}")),
            (Ok(()), Some(_)) => failures.push(format!(
                "{check}: conforms now; remove it from KNOWN_DISAGREEMENTS"
            )),
        }
    }
    assert!(failures.is_empty(), "{name}:\n  {}", failures.join("\n  "));
}

fn memory() -> MemoryStore {
    let store = MemoryStore::new();
    for (path, bytes) in all_objects() {
        store.put(path, bytes);
    }
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store() {
    conform("memory", Arc::new(memory()), true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_without_listing() {
    conform(
        "memory-no-list",
        Arc::new(memory().without_listing()),
        false,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_folder() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().join("root");
    write_objects(&root);
    let store = store_at(&root.to_string_lossy(), &HashMap::new());
    conform("local", store, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_static_server() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_objects(&dir.path().join("root"));
    let server = StaticServer::start(ServeConfig::new(dir.path()))
        .await
        .unwrap_or_else(|e| panic!("cannot start the static server: {e}"));
    let store = store_at(&server.url_for("root/"), &HashMap::new());
    conform("http", store, false).await;
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
    conform("s3", store, true).await;
}
