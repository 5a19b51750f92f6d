//! Benchmark: lazy vs eager scan metadata, six queries over loopback HTTP with added latency.
//!
//! ```text
//! cargo run --release --example bench_scan_metadata -- [--latency-ms 10] [--commits 60]
//!     [--files-per-commit 4] [--rows-per-file 2000] [--reps 5]
//! ```
//!
//! Writes a partitioned table (one commit per append, no checkpoint) to a temporary folder,
//! serves it with `dar serve`'s server on a loopback port with the given latency per request,
//! then runs one session per mode: a lazy one (`load_table`: every scan build replays the log)
//! and an eager one (`load_table_with_eager_scan_metadata`: the log is replayed once at load).
//! Each session runs the same six scans `--reps` times. Prints, side by side, the median time
//! and requests of each query, the load time, and the heap each table holds after its six
//! queries (measured with a counting allocator: the bytes freed when the table is dropped,
//! its store included). Rows are checked to be equal in both modes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::serve::{ServeConfig, StaticServer};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use serde_json::json;

/// Counts the bytes currently allocated.
struct CountingAlloc;

static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as i64, Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// One query: name, projection, filter, limit.
type Query = (
    &'static str,
    Option<&'static [&'static str]>,
    Option<&'static str>,
    Option<usize>,
);

/// The six queries.
const QUERIES: [Query; 6] = [
    ("one partition", None, Some("day = 'd03'"), None),
    (
        "id range (stats)",
        None,
        Some("id between 10000 and 10999"),
        None,
    ),
    ("first 100 rows", None, None, Some(100)),
    (
        "partitions and value",
        Some(&["id", "value"]),
        Some("day in ('d01', 'd07') and value > 0.9"),
        None,
    ),
    (
        "name equals (stats)",
        Some(&["name", "day"]),
        Some("name = 'n-000042'"),
        None,
    ),
    (
        "count of a projection",
        Some(&["id"]),
        Some("id < 50000"),
        None,
    ),
];

struct Args {
    latency_ms: u64,
    commits: usize,
    files_per_commit: usize,
    rows_per_file: usize,
    reps: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        latency_ms: 10,
        commits: 60,
        files_per_commit: 4,
        rows_per_file: 2000,
        reps: 5,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n: u64 = value
            .parse()
            .map_err(|_| format!("{flag}: '{value}' is not a number"))?;
        match flag.as_str() {
            "--latency-ms" => a.latency_ms = n,
            "--commits" => a.commits = n.max(1) as usize,
            "--files-per-commit" => a.files_per_commit = n.max(1) as usize,
            "--rows-per-file" => a.rows_per_file = n.max(1) as usize,
            "--reps" => a.reps = n.max(1) as usize,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// Writes the table: `commits` appends of `files_per_commit` files, partitioned by `day`.
fn write_table(a: &Args, dir: &std::path::Path) -> Result<usize, String> {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}},
        {"name": "value", "type": "double", "nullable": true, "metadata": {}},
        {"name": "name", "type": "string", "nullable": true, "metadata": {}},
        {"name": "day", "type": "string", "nullable": true, "metadata": {}},
    ]});
    let arrow = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("value", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let mut w = TableWriter::new();
    let mut actions = TableWriter::create_actions(
        &schema,
        &["day"],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    let mut file = 0usize;
    let mut next_id = 0i64;
    for _ in 0..a.commits {
        for _ in 0..a.files_per_commit {
            let n = a.rows_per_file as i64;
            let ids: Vec<i64> = (next_id..next_id + n).collect();
            let values: Vec<f64> = ids
                .iter()
                .map(|i| ((i * 7919) % 1000) as f64 / 1000.0)
                .collect();
            let names: Vec<String> = ids
                .iter()
                .map(|i| format!("n-{:06}", i % 100_000))
                .collect();
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Float64Array::from(values)),
                Arc::new(StringArray::from(names.clone())),
            ];
            let batch =
                RecordBatch::try_new(Arc::clone(&arrow), columns).map_err(|e| e.to_string())?;
            let day = format!("d{:02}", file % 12);
            let path = format!("day={day}/part-{file:05}.parquet");
            let min_name = names.iter().min().cloned().unwrap_or_default();
            let max_name = names.iter().max().cloned().unwrap_or_default();
            let stats = json!({
                "minValues": {"id": next_id, "value": 0.0, "name": min_name},
                "maxValues": {"id": next_id + n - 1, "value": 0.999, "name": max_name},
                "nullCount": {"id": 0, "value": 0, "name": 0},
            });
            let add = w
                .write_data_file(&path, &batch, json!({"day": day}), Some(stats))
                .map_err(|e| e.to_string())?;
            actions.push(add);
            next_id += n;
            file += 1;
        }
        w.commit("WRITE", std::mem::take(&mut actions));
    }
    w.write_to_dir(dir).map_err(|e| e.to_string())?;
    Ok(file)
}

struct QueryRun {
    rows: usize,
    elapsed: Duration,
    requests: u64,
}

async fn run_query(table: &DeltaTable, q: &Query) -> Result<QueryRun, String> {
    let counters = table.io_counters();
    let before = counters.snapshot().requests;
    let start = Instant::now();
    let mut scan = table.scan();
    if let Some(columns) = q.1 {
        scan = scan.with_projection(columns.iter().copied());
    }
    if let Some(filter) = q.2 {
        scan = scan.with_filter(filter);
    }
    if let Some(n) = q.3 {
        scan = scan.with_limit(n);
    }
    let batches = scan
        .build()
        .await
        .map_err(|e| e.to_string())?
        .into_stream()
        .collect_batches()
        .await
        .map_err(|e| e.to_string())?;
    Ok(QueryRun {
        rows: batches.iter().map(RecordBatch::num_rows).sum(),
        elapsed: start.elapsed(),
        requests: counters.snapshot().requests - before,
    })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

struct Session {
    load: Duration,
    held_bytes: i64,
    medians: Vec<Duration>,
    requests: Vec<u64>,
    rows: Vec<usize>,
}

async fn session(url: &str, eager: bool, reps: usize) -> Result<Session, String> {
    let start = Instant::now();
    let builder = DeltaTableBuilder::new(url);
    let table = if eager {
        builder.load_table_with_eager_scan_metadata().await
    } else {
        builder.load_table().await
    }
    .map_err(|e| e.to_string())?;
    let load = start.elapsed();
    let mut medians = Vec::new();
    let mut requests = Vec::new();
    let mut rows = Vec::new();
    for q in &QUERIES {
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..reps {
            let run = run_query(&table, q).await?;
            times.push(run.elapsed);
            last = Some(run);
        }
        let last = last.ok_or("no repetition ran")?;
        medians.push(median(times));
        requests.push(last.requests);
        rows.push(last.rows);
    }
    // What the table holds is what dropping it frees (its store and connections included,
    // the same in both modes).
    let before_drop = LIVE_BYTES.load(Ordering::Relaxed);
    drop(table);
    let held_bytes = before_drop - LIVE_BYTES.load(Ordering::Relaxed);
    Ok(Session {
        load,
        held_bytes,
        medians,
        requests,
        rows,
    })
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() -> Result<(), String> {
    let a = parse_args()?;
    let dir = std::env::temp_dir().join(format!("dar-bench-scan-metadata-{}", std::process::id()));
    let files = write_table(&a, &dir)?;
    let server = StaticServer::start_background(
        ServeConfig::new(&dir).with_latency(Duration::from_millis(a.latency_ms)),
    )
    .map_err(|e| e.to_string())?;
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    println!(
        "table: {} commits, {files} files, {} rows, served at {url} with {} ms latency per request; {} reps per query",
        a.commits,
        files * a.rows_per_file,
        a.latency_ms,
        a.reps
    );
    let lazy = runtime.block_on(session(&url, false, a.reps))?;
    let eager = runtime.block_on(session(&url, true, a.reps))?;
    let _ = std::fs::remove_dir_all(&dir);

    println!();
    println!(
        "{:<24} {:>8} {:>12} {:>12} {:>10} {:>10}",
        "query", "rows", "lazy ms", "eager ms", "lazy req", "eager req"
    );
    for (i, q) in QUERIES.iter().enumerate() {
        println!(
            "{:<24} {:>8} {:>12} {:>12} {:>10} {:>10}",
            q.0,
            eager.rows[i],
            ms(lazy.medians[i]),
            ms(eager.medians[i]),
            lazy.requests[i],
            eager.requests[i]
        );
    }
    let total = |s: &Session| s.medians.iter().sum::<Duration>();
    println!(
        "{:<24} {:>8} {:>12} {:>12}",
        "sum of medians",
        "",
        ms(total(&lazy)),
        ms(total(&eager))
    );
    println!(
        "{:<24} {:>8} {:>12} {:>12}",
        "load",
        "",
        ms(lazy.load),
        ms(eager.load)
    );
    println!(
        "{:<24} {:>8} {:>12} {:>12}",
        "heap held by the table",
        "",
        format!("{} KiB", lazy.held_bytes / 1024),
        format!("{} KiB", eager.held_bytes / 1024)
    );
    if lazy.rows != eager.rows {
        return Err(format!(
            "rows differ: lazy {:?}, eager {:?}",
            lazy.rows, eager.rows
        ));
    }
    Ok(())
}
