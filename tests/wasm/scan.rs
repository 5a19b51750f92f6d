//! Whole scans in headless Chromium through [`FetchStore`]: corpus tables read over HTTP from
//! a loopback server, with the log found by probing (HTTP cannot list).
//!
//! `scripts/test test-wasm` starts `examples/serve_corpus.rs` on `../shared/corpus/tables`
//! and passes its URLs in at compile time: `DAR_TEST_HTTP` (a plain server with CORS and
//! byte ranges), `DAR_TEST_HTTP_FAULTY` (first two requests `503`, `Range` ignored) and
//! `DAR_TEST_HTTP_TRUNCATING` (data file bodies cut short). The expected numbers were taken
//! from the native reader (`dar export TABLE --out rows.json`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use delta_arrow_reader::io::{FetchOptions, FetchStore, RangeRead, UrlSigner};
use delta_arrow_reader::log::Discovery;
use delta_arrow_reader::{DeltaError, DeltaTable, DeltaTableBuilder};
use futures::StreamExt;
use wasm_bindgen_test::wasm_bindgen_test;

const MSG: &str =
    "run the wasm tests with `scripts/test test-wasm`, which starts the corpus server";
/// The plain corpus server (also read by the fault matrix and the load test).
pub(crate) const SERVER: &str = env!(
    "DAR_TEST_HTTP",
    "run the wasm tests with `scripts/test test-wasm`, which starts the corpus server"
);
const FAULTY: &str = env!(
    "DAR_TEST_HTTP_FAULTY",
    "run the wasm tests with `scripts/test test-wasm`, which starts the corpus server"
);
const TRUNCATING: &str = env!(
    "DAR_TEST_HTTP_TRUNCATING",
    "run the wasm tests with `scripts/test test-wasm`, which starts the corpus server"
);

fn ok<T>(r: Result<T, DeltaError>) -> T {
    r.unwrap_or_else(|e| panic!("{} ({MSG} if the server is missing)", e))
}

fn table_url(server: &str, table: &str) -> String {
    format!("{}/{table}/", server.trim_end_matches('/'))
}

async fn load_with(server: &str, table: &str, options: FetchOptions) -> DeltaTable {
    let url = table_url(server, table);
    let store = ok(FetchStore::with_options(&url, options));
    let table = ok(DeltaTableBuilder::new(url)
        .with_store(Arc::new(store))
        .load_table_with_eager_scan_metadata()
        .await);
    assert_eq!(table.load_info().discovery, Discovery::Probing);
    table
}

async fn load(table: &str) -> DeltaTable {
    load_with(SERVER, table, FetchOptions::default()).await
}

async fn scan(table: &DeltaTable, columns: Option<&[&str]>) -> Vec<RecordBatch> {
    let mut builder = table.scan();
    if let Some(columns) = columns {
        builder = builder.with_projection(columns.iter().copied());
    }
    ok(ok(builder.build().await)
        .into_stream()
        .collect_batches()
        .await)
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

/// Every value of an integer column, as i64.
fn ints(batches: &[RecordBatch], column: &str) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    for batch in batches {
        let array = batch
            .column_by_name(column)
            .unwrap_or_else(|| panic!("no column {column}"));
        let array = arrow_cast::cast(array, &DataType::Int64).unwrap_or_else(|e| panic!("{e}"));
        out.extend(array.as_primitive::<Int64Type>().iter());
    }
    out
}

/// Every value of a column, as text.
fn strings(batches: &[RecordBatch], column: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for batch in batches {
        let array = batch
            .column_by_name(column)
            .unwrap_or_else(|| panic!("no column {column}"));
        let array = arrow_cast::cast(array, &DataType::Utf8).unwrap_or_else(|e| panic!("{e}"));
        let array = array.as_string::<i32>();
        out.extend(array.iter().map(|s| s.map(str::to_string)));
    }
    out.sort();
    out
}

fn sum(values: &[Option<i64>]) -> i64 {
    values.iter().flatten().sum()
}

#[wasm_bindgen_test]
async fn scans_deletion_vectors_partitions_and_a_checkpoint() {
    let table = load("golden__dv-partitioned-with-checkpoint").await;
    assert_eq!(table.version(), 15);
    assert_eq!(table.load_info().checkpoint_version, Some(10));
    assert_eq!(table.eager_files().unwrap_or_default().len(), 15);
    assert!(table
        .eager_files()
        .unwrap_or_default()
        .iter()
        .any(|f| f.deletion_vector.is_some()));
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 35);
    assert_eq!(sum(&ints(&batches, "col1")), 1015);
    let parts = ints(&batches, "part");
    assert_eq!(sum(&parts), 165);
    // Rows per partition, after deletion vectors: 2 in even partitions, 5 in odd ones.
    for part in 0..10 {
        let n = parts.iter().filter(|p| **p == Some(part)).count();
        assert_eq!(n, if part % 2 == 0 { 2 } else { 5 }, "partition {part}");
    }
    // Seven rows each of foo0 … foo4.
    let names = strings(&batches, "col2");
    for i in 0..5 {
        let name = format!("foo{i}");
        let n = names.iter().filter(|s| s.as_deref() == Some(&name)).count();
        assert_eq!(n, 7, "{name}");
    }
}

#[wasm_bindgen_test]
async fn scans_column_mapping_by_name() {
    let table = load("golden__table-with-columnmapping-mode-name").await;
    assert_eq!(table.version(), 0);
    assert_eq!(table.schema().fields().len(), 19);
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 6);
    let ints_col = ints(&batches, "IntegerType");
    assert_eq!(sum(&ints_col), 10);
    assert_eq!(ints_col.iter().filter(|v| v.is_none()).count(), 1);
    assert_eq!(sum(&ints(&batches, "LongType")), 10);
    let text = strings(&batches, "StringType");
    let want: Vec<Option<String>> = [None, Some("0"), Some("1"), Some("2"), Some("3"), Some("4")]
        .into_iter()
        .map(|s| s.map(str::to_string))
        .collect();
    assert_eq!(text, want);
    // A projection by logical names reads the physical columns.
    let batches = scan(&table, Some(&["StringType", "ByteType"])).await;
    assert_eq!(batches.first().map(|b| b.num_columns()), Some(2));
    assert_eq!(sum(&ints(&batches, "ByteType")), 10);
}

#[wasm_bindgen_test]
async fn scans_a_v2_checkpoint_with_sidecars() {
    let table = load("kernel__v2-checkpoints-parquet-with-sidecars").await;
    assert_eq!(table.version(), 6);
    assert_eq!(table.load_info().checkpoint_version, Some(6));
    assert_eq!(table.eager_files().unwrap_or_default().len(), 101);
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 1233);
    let ids = ints(&batches, "id");
    assert_eq!(sum(&ids), 509_835);
    assert_eq!(ids.iter().flatten().min(), Some(&0));
    assert_eq!(ids.iter().flatten().max(), Some(&999));
}

#[wasm_bindgen_test]
async fn scans_zstd_pages_and_a_partition_column_with_spaces() {
    let table = load("deltars__table_with_column_mapping").await;
    assert_eq!(table.version(), 0);
    assert_eq!(
        table.partition_columns(),
        ["Company Very Short".to_string()]
    );
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 5);
    let companies = strings(&batches, "Company Very Short");
    let bms = companies
        .iter()
        .filter(|c| c.as_deref() == Some("BMS"))
        .count();
    let bme = companies
        .iter()
        .filter(|c| c.as_deref() == Some("BME"))
        .count();
    assert_eq!((bms, bme), (4, 1));
    let names = strings(&batches, "Super Name");
    assert!(
        names.contains(&Some("Timothy Lamb".to_string())),
        "{names:?}"
    );
    assert!(names.contains(&Some("Mr. Daniel Ferguson MD".to_string())));
}

#[wasm_bindgen_test]
async fn encodes_object_names_with_spaces_equals_and_percent() {
    // Partition directories like `col-…=2013-07-05 17%3A01%3A00.123456` (a literal `%3A` in
    // the directory name) and a space.
    let table = load("golden__data-reader-timestamp_ntz-id-mode").await;
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 9);
    assert_eq!(sum(&ints(&batches, "id")), 36);
    // Data files named `test%file%prefix-part-….parquet`.
    let table = load("kernel__v2-parquet-sidecars-struct-stats-only").await;
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 5);
    assert_eq!(sum(&ints(&batches, "id")), 15);
}

#[wasm_bindgen_test]
async fn ranges_and_whole_objects_agree() {
    let store = ok(FetchStore::new(&table_url(
        SERVER,
        "golden__dv-partitioned-with-checkpoint",
    )));
    let path = "_delta_log/00000000000000000000.json";
    let whole = ok(store.get(path).await);
    assert!(whole.len() > 100, "{}", whole.len());
    let part = ok(store.get_range(path, 10..90).await);
    assert_eq!(&part[..], &whole[10..90]);
    let tail = ok(store.get_range(path, 1..whole.len() as u64).await);
    assert_eq!(&tail[..], &whole[1..]);
    assert!(ok(store.get_range(path, 5..5).await).is_empty());
    assert_eq!(ok(store.size(path).await), None);
    assert_eq!(ok(store.list("_delta_log/", None).await), None);

    let past_end = store
        .get_range(path, whole.len() as u64 + 10..whole.len() as u64 + 20)
        .await
        .err()
        .unwrap_or_else(|| panic!("a range past the end gave data"));
    assert_eq!(past_end.code(), "io");
    let missing = store
        .get("_delta_log/99999999999999999999.json")
        .await
        .err();
    assert_eq!(missing.map(|e| e.code()), Some("not_found"));
    let missing = store.get_range("no such file.parquet", 0..4).await.err();
    assert_eq!(missing.map(|e| e.code()), Some("not_found"));
}

#[wasm_bindgen_test]
async fn a_missing_table_is_not_a_table() {
    let url = table_url(SERVER, "no-such-table");
    let err = DeltaTableBuilder::new(url.as_str())
        .with_store(Arc::new(ok(FetchStore::new(&url))))
        .load_table_with_eager_scan_metadata()
        .await
        .err()
        .map(|e| e.code());
    assert_eq!(err, Some("not_a_table"));
}

#[wasm_bindgen_test]
async fn unreachable_server_is_a_transient_io_error() {
    // Port 9 (discard) on loopback: nothing listens there.
    let options = FetchOptions::default()
        .with_retries(1)
        .with_retry_base_delay(Duration::from_millis(5));
    let store = ok(FetchStore::with_options("http://127.0.0.1:9/t/", options));
    match store.get("_delta_log/_last_checkpoint").await {
        Err(DeltaError::Io {
            transient, message, ..
        }) => {
            assert!(transient);
            assert!(message.contains("2 attempts"), "{message}");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[wasm_bindgen_test]
fn urls_encode_segments_and_keep_the_query() {
    let store = ok(FetchStore::new(
        "http://127.0.0.1:1/tables/t?sv=1&sig=secret#frag",
    ));
    assert_eq!(store.base_url(), "http://127.0.0.1:1/tables/t/");
    assert_eq!(
        store.url_for("p=a b/x%3A1 é.parquet"),
        "http://127.0.0.1:1/tables/t/p%3Da%20b/x%253A1%20%C3%A9.parquet?sv=1&sig=secret"
    );
    assert_eq!(
        store.url_for("https://elsewhere.example/dv.bin"),
        "https://elsewhere.example/dv.bin"
    );
    assert!(!format!("{store:?}").contains("secret"));

    let with_header = FetchStore::with_options(
        "http://127.0.0.1:1/t/",
        FetchOptions::default().with_header("Authorization", "Bearer hidden"),
    );
    assert!(!format!("{:?}", ok(with_header)).contains("hidden"));
    let range = FetchStore::with_options(
        "http://127.0.0.1:1/t/",
        FetchOptions::default().with_header("range", "bytes=0-1"),
    );
    assert_eq!(
        range.err().map(|e| e.code()),
        Some("invalid_storage_options")
    );
    let bad = FetchStore::with_options(
        "http://127.0.0.1:1/t/",
        FetchOptions::default().with_header("bad header", "x"),
    );
    assert_eq!(bad.err().map(|e| e.code()), Some("invalid_storage_options"));
    let scheme = FetchStore::new("s3://bucket/t/").err().map(|e| e.code());
    assert_eq!(scheme, Some("invalid_location"));
    let userinfo = FetchStore::new("http://user:pw@127.0.0.1:1/t/").err();
    assert_eq!(
        userinfo.as_ref().map(|e| e.code()),
        Some("invalid_location")
    );
    assert!(!format!("{userinfo:?}").contains("pw"), "{userinfo:?}");
    let defaults = FetchOptions::default();
    assert_eq!(defaults.retries, 3);
    assert_eq!(defaults.retry_base_delay, Duration::from_millis(100));
    assert_eq!(defaults.max_full_body_for_range, 16 * 1024 * 1024);
}

/// The faulty server answers its first two requests `503` and ignores `Range`. This is the
/// only test that talks to it, so the order of its requests is known.
#[wasm_bindgen_test]
async fn retries_server_errors_and_cuts_ranges_from_whole_bodies() {
    let table_name = "golden__dv-partitioned-with-checkpoint";
    let url = table_url(FAULTY, table_name);
    let fast = FetchOptions::default().with_retry_base_delay(Duration::from_millis(5));

    // First 503: no retries, so it is the answer.
    let once = ok(FetchStore::with_options(&url, fast.clone().with_retries(0)));
    match once.get("_delta_log/00000000000000000000.json").await {
        Err(DeltaError::Io {
            transient, message, ..
        }) => {
            assert!(transient);
            assert!(message.contains("503"), "{message}");
        }
        other => panic!("expected a 503 I/O error, got {other:?}"),
    }

    // Second 503 is retried, with a URL signed afresh; then every range is cut out of a
    // whole-body 200.
    let signed: Rc<RefCell<Vec<String>>> = Rc::default();
    let log = Rc::clone(&signed);
    let signer: UrlSigner = Rc::new(move |plain: String| {
        log.borrow_mut().push(plain.clone());
        let n = log.borrow().len();
        Box::pin(async move { Ok(format!("{plain}?sig={n}")) })
    });
    let store = ok(FetchStore::with_options(&url, fast.clone())).with_url_signer(signer);
    let table = ok(DeltaTableBuilder::new(url.clone())
        .with_store(Arc::new(store))
        .load_table()
        .await);
    assert_eq!(table.version(), 15);
    // One request of the first round (they go out together: `_last_checkpoint` and the
    // first commits) met the second 503: its retry was signed again.
    let signed = signed.borrow().clone();
    assert!(signed.len() >= 2, "{signed:?}");
    let signed_twice = signed
        .iter()
        .enumerate()
        .filter(|(i, u)| signed[i + 1..].contains(u))
        .count();
    assert_eq!(signed_twice, 1, "the retry is signed afresh: {signed:?}");
    assert!(signed.iter().all(|u| u.starts_with(&url)), "{signed:?}");
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 35);
    assert_eq!(sum(&ints(&batches, "col1")), 1015);

    // A whole body above the limit is refused, not cut.
    let strict = ok(FetchStore::with_options(
        &url,
        fast.with_max_full_body_for_range(64),
    ));
    let err = strict
        .get_range("_delta_log/00000000000000000000.json", 0..10)
        .await
        .err()
        .unwrap_or_else(|| panic!("a whole body above the limit was accepted"));
    match err {
        DeltaError::Io {
            transient, message, ..
        } => {
            assert!(!transient);
            assert!(
                message.contains("ignored Range") && message.contains("64 bytes"),
                "{message}"
            );
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

/// The truncating server cuts every data file body (`…/part-…`) after 10 bytes: the scan must fail,
/// never return rows made of partial data.
#[wasm_bindgen_test]
async fn bodies_cut_short_are_errors_never_data() {
    let fast = FetchOptions::default()
        .with_retries(1)
        .with_retry_base_delay(Duration::from_millis(5));
    let table = load_with(TRUNCATING, "golden__dv-partitioned-with-checkpoint", fast).await;
    assert_eq!(table.version(), 15);
    let result = ok(table.scan().build().await)
        .into_stream()
        .collect_batches()
        .await;
    let err = result
        .err()
        .unwrap_or_else(|| panic!("cut bodies gave rows"));
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains(".parquet"), "{err}");

    let store = ok(FetchStore::new(&table_url(
        TRUNCATING,
        "golden__dv-partitioned-with-checkpoint",
    )));
    let file = table
        .eager_files()
        .unwrap_or_default()
        .first()
        .map(|f| f.path.clone())
        .unwrap_or_default();
    let path = percent_encoding::percent_decode_str(&file)
        .decode_utf8_lossy()
        .into_owned();
    assert!(store.get(&path).await.is_err());
}

/// Aborting a scan's signal after its first batch ends the scan at once with an `aborted`
/// error, before the rest of its batches; its reads and permits are released, and the next
/// scan of the same table reads every row.
#[wasm_bindgen_test]
async fn an_aborted_scan_stops_and_the_next_scan_reads_everything() {
    let name = "golden__dv-partitioned-with-checkpoint";
    let table = load(name).await;
    let full = ok(ok(table.scan().with_batch_size(1).build().await)
        .into_stream()
        .collect_batches()
        .await);
    assert_eq!(rows(&full), 35);

    let controller =
        web_sys::AbortController::new().unwrap_or_else(|e| panic!("AbortController: {e:?}"));
    let store =
        ok(FetchStore::new(&table_url(SERVER, name))).with_abort_signal(Some(controller.signal()));
    let aborting = table.with_store(Arc::new(store));
    let mut stream = ok(aborting.scan().with_batch_size(1).build().await).into_stream();
    match stream.next().await {
        Some(Ok(batch)) => assert_eq!(batch.num_rows(), 1),
        other => panic!("expected a first batch, got {other:?}"),
    }
    controller.abort();
    let mut batches = 1;
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(_) => batches += 1,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let error = error.unwrap_or_else(|| panic!("the aborted scan read all {batches} batches"));
    assert_eq!(error.code(), "aborted", "{error}");
    assert!(batches < full.len(), "{batches} of {} batches", full.len());
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the abort"
    );
    let metrics = stream.metrics();
    drop(stream);
    assert!(
        metrics.file_tasks_completed() < 15,
        "files read to the end after the abort: {}",
        metrics.file_tasks_completed()
    );

    // A store whose signal has fired fails at once.
    let again = aborting.scan().build().await;
    let refused = ok(again).into_stream().collect_batches().await;
    assert_eq!(refused.err().map(|e| e.code()), Some("aborted"));

    // Nothing is held: the same table reads everything again.
    let batches = scan(&table, None).await;
    assert_eq!(rows(&batches), 35);
    assert_eq!(sum(&ints(&batches, "col1")), 1015);
}

/// A missing object named by an absolute URL is `not_found` without the URL's query string.
#[wasm_bindgen_test]
async fn not_found_urls_lose_their_query_string() {
    let store = ok(FetchStore::new(&table_url(
        SERVER,
        "golden__dv-partitioned-with-checkpoint",
    )));
    let url = format!(
        "{}/no-such-object.bin?sig=secret",
        SERVER.trim_end_matches('/')
    );
    let err = store
        .get(&url)
        .await
        .err()
        .unwrap_or_else(|| panic!("a missing object was found"));
    assert_eq!(err.code(), "not_found", "{err}");
    assert!(!err.to_string().contains("secret"), "{err}");
    assert!(!format!("{err:?}").contains("secret"), "{err:?}");
}

/// Map columns in the browser, where a decoder's panic cannot be contained: the maps are
/// decoded from their Parquet groups and rebuilt (`limits::map_groups`). In
/// `dat__nested_types` the row `pk = n` holds the map `{"0": 0, …, "n-1": n-1}`.
#[wasm_bindgen_test]
async fn scans_map_columns() {
    let table = load("dat__nested_types").await;
    let batches = scan(&table, Some(&["pk", "map"])).await;
    assert_eq!(rows(&batches), 5);
    let mut seen = Vec::new();
    for batch in &batches {
        let pks =
            arrow_cast::cast(batch.column(0), &DataType::Int64).unwrap_or_else(|e| panic!("{e}"));
        let maps = batch.column(1);
        assert!(
            matches!(maps.data_type(), DataType::Map(_, _)),
            "{}",
            maps.data_type()
        );
        let maps = maps.as_map();
        let keys = arrow_cast::cast(maps.keys(), &DataType::Utf8).unwrap_or_else(|e| panic!("{e}"));
        let values =
            arrow_cast::cast(maps.values(), &DataType::Int64).unwrap_or_else(|e| panic!("{e}"));
        let (keys, values) = (keys.as_string::<i32>(), values.as_primitive::<Int64Type>());
        for row in 0..batch.num_rows() {
            let pk = pks.as_primitive::<Int64Type>().value(row);
            let range = maps.value_offsets()[row] as usize..maps.value_offsets()[row + 1] as usize;
            let entries: Vec<(String, i64)> = range
                .map(|i| (keys.value(i).to_string(), values.value(i)))
                .collect();
            let want: Vec<(String, i64)> = (0..pk).map(|i| (i.to_string(), i)).collect();
            assert_eq!(entries, want, "pk {pk}");
            seen.push(pk);
        }
    }
    seen.sort_unstable();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
}
