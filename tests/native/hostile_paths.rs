//! Path confinement (issue 11): a path the log names (a data file, a checkpoint sidecar)
//! that resolves outside the table root is a `path_outside_table` error, never a read of the
//! file it points at, on every store: a local folder, a loopback HTTP server serving the
//! folder above the table (so the escaped file really is reachable), and memory. A real
//! file outside the table holds rows, so a read that escaped would return them.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::serve::{ServeConfig, StaticServer};
use delta_arrow_reader::{DeltaTableBuilder, Result};
use serde_json::json;

use crate::common;

/// A table in `t/` whose one add names `add_path`, and a valid data file of ten rows at
/// `outside/part-0.parquet`, beside the table, in `root`.
fn escaping_table(root: &Path, add_path: &str) {
    let arrow = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(arrow, vec![Arc::new(Int64Array::from_iter_values(0..10))])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = TableWriter::new();
    let mut add = w
        .write_data_file("part-0.parquet", &batch, json!({}), None)
        .unwrap_or_else(|e| panic!("{e}"));
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}}]});
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    add["add"]["path"] = json!(add_path);
    actions.push(add);
    w.commit("WRITE", actions);
    w.write_to_dir(&root.join("t"))
        .unwrap_or_else(|e| panic!("{e}"));
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(
        root.join("t/part-0.parquet"),
        outside.join("part-0.parquet"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// The status code a plain `GET path` gets from the server at `addr`.
fn status_of(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut head = [0u8; 12];
    stream
        .read_exact(&mut head)
        .unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8_lossy(&head[9..12]).into_owned()
}

/// The rows of a full read of the table at `location`.
async fn read(location: &str) -> Result<usize> {
    read_from(DeltaTableBuilder::new(location)).await
}

/// The table folder `dir` copied into a memory store, as a builder for it.
fn in_memory(dir: &std::path::Path) -> DeltaTableBuilder {
    let memory = delta_arrow_reader::io::MemoryStore::new();
    for (path, file) in common::files_under(dir, dir) {
        memory.put(&path, std::fs::read(file).unwrap_or_else(|e| panic!("{e}")));
    }
    DeltaTableBuilder::new("memory://bucket/t/").with_store(Arc::new(memory))
}

/// The rows of a full read of the table `builder` opens.
async fn read_from(builder: DeltaTableBuilder) -> Result<usize> {
    let table = builder.load_table_with_eager_scan_metadata().await?;
    let batches = table
        .scan()
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    Ok(batches.iter().map(RecordBatch::num_rows).sum())
}

/// The error code of `r`, or its rows when it read (a test failure).
fn code_of(r: Result<usize>) -> String {
    match r {
        Ok(rows) => format!("read {rows} rows"),
        Err(e) => {
            assert!(e.to_string().contains("outside the table"), "{e}");
            e.code().to_string()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_file_path_out_of_the_table_is_refused_on_every_store() {
    let relative = [
        "../outside/part-0.parquet",
        "a/../../outside/part-0.parquet",
        "a/%2E%2E/%2e%2e/outside/part-0.parquet",
        "a%2F..%2F..%2Foutside%2Fpart-0.parquet",
        "..%5Coutside%5Cpart-0.parquet",
    ];
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let server = StaticServer::start(ServeConfig::new(dir.path()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let file_url = url::Url::from_directory_path(dir.path())
        .unwrap_or_else(|()| panic!("not absolute"))
        .join("outside/part-0.parquet")
        .unwrap_or_else(|e| panic!("{e}"));
    let http_outside = server.url_for("outside/part-0.parquet");
    let absolute = [file_url.to_string(), http_outside.clone()];
    let mut checked = 0;
    for add_path in relative.iter().map(|p| p.to_string()).chain(absolute) {
        // A fresh table per path: the server serves the same folder throughout.
        let _ = std::fs::remove_dir_all(dir.path().join("t"));
        let _ = std::fs::remove_dir_all(dir.path().join("outside"));
        escaping_table(dir.path(), &add_path);
        // The escaped file is there to be read: over HTTP it is one GET away.
        assert_eq!(status_of(server.addr(), "/outside/part-0.parquet"), "200");
        let local = dir.path().join("t").to_string_lossy().into_owned();
        let http = server.url_for("t/");
        for location in [local, http] {
            let got = code_of(read(&location).await);
            assert_eq!(got, "path_outside_table", "{add_path} at {location}");
            checked += 1;
        }
        let table = in_memory(&dir.path().join("t"))
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let planned = table.scan().build().await.err().map(|e| e.code());
        assert_eq!(planned, Some("path_outside_table"), "{add_path} in memory");
    }
    assert_eq!(checked, 14);
    // A name holding dots is a name: it reads.
    let _ = std::fs::remove_dir_all(dir.path().join("t"));
    let _ = std::fs::remove_dir_all(dir.path().join("outside"));
    escaping_table(dir.path(), "..part-0.parquet");
    std::fs::rename(
        dir.path().join("outside/part-0.parquet"),
        dir.path().join("t/..part-0.parquet"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let local = dir.path().join("t").to_string_lossy().into_owned();
    assert_eq!(read(&local).await.ok(), Some(10));
    assert_eq!(
        read_from(in_memory(&dir.path().join("t"))).await.ok(),
        Some(10)
    );
    // Over HTTP the name is asked for as it is; `dar serve` serves no hidden file (a name
    // starting with `.`), so the file is missing there, not out of the table.
    let served = read(&server.url_for("t/")).await.err().map(|e| e.code());
    assert_eq!(served, Some("not_found"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecar_path_out_of_the_table_is_refused() {
    let source = common::table_dir("kernel__v2-checkpoints-json-with-sidecars");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = dir.path().join("t");
    for (path, file) in common::files_under(&source, &source) {
        let to = table.join(&path);
        std::fs::create_dir_all(to.parent().unwrap_or(&table)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::copy(file, to).unwrap_or_else(|e| panic!("{e}"));
    }
    let log = table.join("_delta_log");
    let checkpoint = std::fs::read_dir(&log)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| {
                n.starts_with("00000000000000000006.checkpoint.") && n.ends_with(".json")
            })
        })
        .unwrap_or_else(|| panic!("no v2 checkpoint at version 6"));
    let text = std::fs::read_to_string(&checkpoint).unwrap_or_else(|e| panic!("{e}"));
    let sidecar = text
        .split("\"sidecar\":{\"path\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no sidecar in {}", checkpoint.display()))
        .to_string();
    let local = table.to_string_lossy().into_owned();
    assert!(
        read(&local).await.is_ok(),
        "the copy reads before the change"
    );
    // The sidecar moves beside the table and the checkpoint names it there.
    std::fs::create_dir_all(dir.path().join("outside")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(
        log.join("_sidecars").join(&sidecar),
        dir.path().join("outside").join(&sidecar),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let server = StaticServer::start(ServeConfig::new(dir.path()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let file_url = url::Url::from_directory_path(dir.path())
        .unwrap_or_else(|()| panic!("not absolute"))
        .join(&format!("outside/{sidecar}"))
        .unwrap_or_else(|e| panic!("{e}"));
    for named in [
        format!("../../../outside/{sidecar}"),
        format!("%2E%2E/%2E%2E/%2E%2E/outside/{sidecar}"),
        file_url.to_string(),
        server.url_for(&format!("outside/{sidecar}")),
    ] {
        let changed = text.replacen(&sidecar, &named, 1);
        std::fs::write(&checkpoint, changed).unwrap_or_else(|e| panic!("{e}"));
        for location in [local.clone(), server.url_for("t/")] {
            let got = code_of(read(&location).await);
            assert_eq!(got, "path_outside_table", "{named} at {location}");
        }
    }
}
