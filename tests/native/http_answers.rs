//! Answers that object_store's HTTP client takes the wrong way on its own, read natively over
//! loopback from a small hand-written HTTP/1.x server (one request per connection), each way
//! checked: legal answers without `Content-Length` (chunked, or HTTP/1.0 ending at the
//! close) give the table's rows; a `206` to a request for a whole file is an error, never a
//! shorter commit; a body that stalls fails after the idle timeout, and one that keeps
//! coming, however slowly, is read to its end; the table URL's query string (a token) goes
//! on every request. A body longer than what was asked for (a `206` that keeps coming, a
//! commit declared past 1 GiB) is an error as soon as it shows, never a read that
//! fills memory. A body cut short by a server without `ETag` is asked for again whole. A data
//! file replaced between two reads (another `ETag` and `Last-Modified`) is an error, never
//! its bytes joined to the first's; `ETag`s that differ by node alone are the same file.
//! A server that closes every connection gets a few requests at once, not a log's worth.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use delta_arrow_reader::DeltaTableBuilder;

use crate::common;

const TABLE: &str = "dat__basic_append";

/// How the server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    /// Bodies in `Transfer-Encoding: chunked`, no `Content-Length`.
    Chunked,
    /// `HTTP/1.0`, no `Content-Length`: the body ends when the connection closes.
    Http10,
    /// A commit asked for whole is answered `206` with its first line only.
    PartialForWhole,
    /// Data files: half the body, then nothing for 20 s.
    Stall,
    /// Data files: 64 bytes every 150 ms.
    Trickle,
    /// `403` for a request whose query string is not `token=s%2Fcret`.
    NeedsToken,
    /// As a server should.
    Plain,
    /// `200` with the whole file for every request, `Range` or not.
    IgnoreRange,
    /// Ranges of data files: a chunked `206` whose body goes on past the range, without end.
    EndlessRange,
    /// Commits: `Content-Length: 5000000000`, then the file and the close.
    HugeLength,
    /// A missing file is answered `200` with an HTML page that never ends (a host's
    /// single-page-app fallback, streamed).
    EndlessPage,
    /// `406` to a request that does not ask for the bytes as stored
    /// (`Accept-Encoding: identity`): such a server would otherwise compress them.
    RequireIdentity,
    /// The path read as S3 reads it: `+` is a space, then `%XX` decoded.
    PlusIsSpace,
    /// `403` for a missing file, as S3 answers a reader without `ListBucket`.
    ForbiddenIfMissing,
    /// `403` for every request (a reader without access).
    ForbidAll,
    /// Data files: the first answer to each request closes its connection halfway through
    /// the body (no `ETag`, so object_store cannot resume it); later ones are whole.
    CutOnce,
    /// Data files: the first request for each file is answered as version 1 (`ETag` and
    /// `Last-Modified`), every later one as version 2 (both changed): the file replaced.
    Replaced,
    /// Data files: an `ETag` of another node on every answer, one `Last-Modified` (a load
    /// balancer over copies of one file).
    ETagByNode,
    /// Data files: every answer has an `ETag` (so object_store resumes it) and is cut halfway.
    CutAlways,
    /// `401` for a request without `Authorization: Basic` of `reader:s/cret`.
    NeedsBasic,
    /// Data files: `Content-Encoding: gzip` on every answer (asked for as stored).
    Gzipped,
    /// `403` for the newest commit (version 1), `404` for other missing files: a reader
    /// that may not read one commit.
    ForbidNewest,
}

/// The data files (port, path) a [`Answer::Replaced`] server has answered once.
static ANSWERED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<String>>> =
    std::sync::LazyLock::new(Default::default);

/// The data file requests (port, path, range) a [`Answer::CutOnce`] server has cut.
static CUT: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<String>>> =
    std::sync::LazyLock::new(Default::default);

/// Connections each server had open at once, at most, by port.
static MOST_OPEN: std::sync::LazyLock<std::sync::Mutex<HashMap<u16, (usize, usize)>>> =
    std::sync::LazyLock::new(Default::default);

/// Notes a connection opened (`+1`) or closed (`-1`) at the server on `port`.
fn note_open(port: u16, change: isize) {
    if let Ok(mut open) = MOST_OPEN.lock() {
        let (now, most) = open.entry(port).or_default();
        *now = now.saturating_add_signed(change);
        *most = (*most).max(*now);
    }
}

/// Requests for data files each server answered, by port.
static DATA_REQUESTS: std::sync::LazyLock<std::sync::Mutex<HashMap<u16, usize>>> =
    std::sync::LazyLock::new(Default::default);

fn data_requests(url: &str) -> usize {
    data_requests_of(port_of(url))
}

/// The port of a [`serve`] URL (`http://127.0.0.1:PORT/t/`).
fn port_of(url: &str) -> u16 {
    url.rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_default()
}

fn data_requests_of(port: u16) -> usize {
    DATA_REQUESTS
        .lock()
        .map(|m| m.get(&port).copied().unwrap_or_default())
        .unwrap_or_default()
}

/// Serves the corpus table's folder at `/t/` with `answer`, on its own threads; its URL.
fn serve(answer: Answer) -> String {
    serve_table(TABLE, answer)
}

/// [`serve`] for the corpus table `table`.
fn serve_table(table: &str, answer: Answer) -> String {
    let root = common::table_dir(table);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            note_open(port, 1);
            std::thread::spawn(move || {
                let _ = respond(stream, &root, answer, port);
                note_open(port, -1);
            });
        }
    });
    format!("http://127.0.0.1:{port}/t/")
}

fn respond(
    mut stream: TcpStream,
    root: &std::path::Path,
    answer: Answer,
    port: u16,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut range = None;
    let mut identity = false;
    let mut authorization = String::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        identity |= lower.trim() == "accept-encoding: identity";
        if lower.starts_with("authorization:") {
            let value = header.split_once(':').map(|(_, v)| v.trim());
            authorization = value.unwrap_or_default().to_string();
        }
        if let Some(value) = lower.strip_prefix("range: bytes=") {
            let (a, b) = value.trim().split_once('-').unwrap_or(("0", ""));
            range = Some((a.parse::<usize>().unwrap_or(0), b.parse::<usize>().ok()));
        }
    }
    let (path, query) = path.split_once('?').unwrap_or((path.as_str(), ""));
    if answer == Answer::NeedsToken && query != "token=s%2Fcret" {
        return empty(&mut stream, "403 Forbidden");
    }
    if answer == Answer::NeedsBasic && authorization != "Basic cmVhZGVyOnMvY3JldA==" {
        return empty(&mut stream, "401 Unauthorized");
    }
    if answer == Answer::ForbidNewest && path.ends_with("00000000000000000001.json") {
        return empty(&mut stream, "403 Forbidden");
    }
    if answer == Answer::ForbidAll {
        return empty(&mut stream, "403 Forbidden");
    }
    if answer == Answer::RequireIdentity && !identity {
        return empty(&mut stream, "406 Not Acceptable");
    }
    let path = match answer {
        Answer::PlusIsSpace => s3_decoded(path),
        _ => path.to_string(),
    };
    if path.ends_with(".parquet") {
        if let Ok(mut counts) = DATA_REQUESTS.lock() {
            *counts.entry(port).or_default() += 1;
        }
    }
    if answer == Answer::IgnoreRange {
        range = None;
    }
    let file: PathBuf = root.join(path.trim_start_matches("/t/"));
    let Ok(bytes) = std::fs::read(&file) else {
        if answer == Answer::ForbiddenIfMissing {
            return empty(&mut stream, "403 Forbidden");
        }
        if answer == Answer::EndlessPage {
            stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n",
            )?;
            let page = b"<!doctype html><html><body><div id=app></div></body></html>\n";
            loop {
                // Until the client hangs up: then the write fails and the thread ends.
                chunk(&mut stream, page)?;
            }
        }
        return empty(&mut stream, "404 Not Found");
    };
    let total = bytes.len();
    let (status, body, content_range) = match range {
        Some((a, b)) => {
            let end = b.map_or(total, |b| (b + 1).min(total));
            let cut = bytes.get(a.min(end)..end).unwrap_or_default().to_vec();
            let cr = format!("bytes {a}-{}/{total}", end.saturating_sub(1));
            ("206 Partial Content", cut, Some(cr))
        }
        None if answer == Answer::PartialForWhole && path.ends_with(".json") => {
            let first = bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(total, |i| i + 1);
            let cr = format!("bytes 0-{}/{total}", first - 1);
            ("206 Partial Content", bytes[..first].to_vec(), Some(cr))
        }
        None => ("200 OK", bytes, None),
    };
    let version = if answer == Answer::Http10 {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    };
    let mut head = format!("{version} {status}\r\nConnection: close\r\n");
    if let Some(cr) = content_range {
        head.push_str(&format!("Content-Range: {cr}\r\n"));
    }
    let data = path.ends_with(".parquet");
    if data && answer == Answer::Replaced {
        let first = ANSWERED
            .lock()
            .is_ok_and(|mut seen| seen.insert(format!("{port} {path}")));
        head.push_str(if first {
            "ETag: \"v1\"\r\nLast-Modified: Mon, 07 Dec 2026 10:00:00 GMT\r\n"
        } else {
            "ETag: \"v2\"\r\nLast-Modified: Mon, 07 Dec 2026 11:00:00 GMT\r\n"
        });
    }
    if data && answer == Answer::Gzipped {
        head.push_str("Content-Encoding: gzip\r\n");
    }
    if data && answer == Answer::CutAlways {
        head.push_str("ETag: \"v1\"\r\n");
    }
    if data && answer == Answer::ETagByNode {
        let node = data_requests_of(port) % 3;
        head.push_str(&format!(
            "ETag: \"node-{node}\"\r\nLast-Modified: Mon, 07 Dec 2026 10:00:00 GMT\r\n"
        ));
    }
    match answer {
        Answer::Chunked => head.push_str("Transfer-Encoding: chunked\r\n\r\n"),
        Answer::EndlessRange if data => head.push_str("Transfer-Encoding: chunked\r\n\r\n"),
        Answer::HugeLength if path.ends_with(".json") => {
            head.push_str("Content-Length: 5000000000\r\n\r\n")
        }
        Answer::Http10 => head.push_str("\r\n"),
        _ => head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len())),
    }
    stream.write_all(head.as_bytes())?;
    match answer {
        Answer::EndlessRange if data => loop {
            // Until the client hangs up: then the write fails and the thread ends.
            for piece in body.chunks(100) {
                chunk(&mut stream, piece)?;
            }
        },
        Answer::Chunked => {
            for piece in body.chunks(100) {
                chunk(&mut stream, piece)?;
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        Answer::Stall if data => {
            stream.write_all(&body[..body.len() / 2])?;
            stream.flush()?;
            std::thread::sleep(Duration::from_secs(20));
        }
        Answer::CutOnce
            if data
                && CUT
                    .lock()
                    .is_ok_and(|mut cut| cut.insert(format!("{port} {path} {range:?}"))) =>
        {
            stream.write_all(&body[..body.len() / 2])?;
            stream.flush()?;
            // Closed at once: the client sees the body end short of its Content-Length.
            let _ = stream.shutdown(std::net::Shutdown::Both);
            return Ok(());
        }
        Answer::CutAlways if data => {
            stream.write_all(&body[..body.len() / 2])?;
            stream.flush()?;
            let _ = stream.shutdown(std::net::Shutdown::Both);
            return Ok(());
        }
        Answer::Trickle if data => {
            for piece in body.chunks(64) {
                stream.write_all(piece)?;
                stream.flush()?;
                std::thread::sleep(Duration::from_millis(150));
            }
        }
        _ => stream.write_all(&body)?,
    }
    stream.flush()?;
    // Let the client see the end before the close (HTTP/1.0 bodies end with it).
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    Ok(())
}

/// An answer of `status` without a body.
fn empty(stream: &mut TcpStream, status: &str) -> std::io::Result<()> {
    stream.write_all(
        format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

/// One piece of a chunked body.
fn chunk(stream: &mut TcpStream, piece: &[u8]) -> std::io::Result<()> {
    stream.write_all(format!("{:x}\r\n", piece.len()).as_bytes())?;
    stream.write_all(piece)?;
    stream.write_all(b"\r\n")
}

/// A URL path as S3 decodes it: `+` a space, `%XX` the byte.
fn s3_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The error of reading the table served with `answer` (no retries), which must come
/// within 20 s: an answer without end is refused as it shows, not read to its end.
async fn refused_quickly(answer: Answer) -> delta_arrow_reader::DeltaError {
    let started = Instant::now();
    let err = common::rows_over(&serve(answer), &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("{answer:?}: the table was read"));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{answer:?}: {:?}",
        started.elapsed()
    );
    err
}

async fn local_rows() -> Vec<String> {
    common::rows_over(&common::table_dir(TABLE).to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_without_content_length_are_read() {
    let local = local_rows().await;
    for answer in [Answer::Chunked, Answer::Http10] {
        let rows = common::rows_over(&serve(answer), &[])
            .await
            .unwrap_or_else(|e| panic!("{answer:?}: {e}"));
        assert_eq!(rows, local, "{answer:?}");
    }
}

/// This server closes every connection (`Connection: close`, as Python's `http.server`,
/// whose listen queue of 5 drops the connections past it): after its first answers the
/// reader sends it 4 requests at once, not a log's 26 commits together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_closes_every_connection_gets_few_at_once() {
    let table = "kernel__cdf-table-with-cdc-and-dvs";
    let url = serve_table(table, Answer::Plain);
    let port = port_of(&url);
    let local = common::rows_over(&common::table_dir(table).to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = common::rows_over(&url, &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, local);
    let most = MOST_OPEN
        .lock()
        .map(|open| open.get(&port).map_or(0, |o| o.1))
        .unwrap_or_default();
    // The first round (`_last_checkpoint` and commits 0 to 5, 7 requests) goes before any
    // answer; later ones wait for a place, 4 of them, while the first round's last answers
    // may still be open.
    assert!(
        (1..=4 + 7).contains(&most),
        "{most} connections at once to a server that closes them"
    );
}

/// `https://host/t//` names what `https://host/t/` names (on every static server, and in
/// the browser package): the doubled slash is no empty object name, nor an invalid location.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_doubled_slash_in_a_table_url_reads_the_table() {
    let url = serve(Answer::Plain);
    let doubled = format!("{}/", url.replacen("/t/", "//t/", 1));
    let rows = common::rows_over(&doubled, &[])
        .await
        .unwrap_or_else(|e| panic!("{doubled}: {e}"));
    assert_eq!(rows, local_rows().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_answer_to_a_whole_file_request_is_an_error_not_fewer_rows() {
    let err = common::rows_over(&serve(Answer::PartialForWhole), &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("a commit cut to its first line was read"));
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("206 Partial Content"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_fails_after_the_idle_timeout_and_a_slow_one_is_read() {
    let options = [
        ("idle_timeout", "1s"),
        ("max_retries", "0"),
        ("retry_timeout", "1s"),
    ];
    let started = Instant::now();
    let err = common::rows_over(&serve(Answer::Stall), &options)
        .await
        .err()
        .unwrap_or_else(|| panic!("a stalled body was read"));
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("idle_timeout"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // 64 bytes every 150 ms: each file takes longer than the idle timeout, and is read.
    let started = Instant::now();
    let rows = common::rows_over(&serve(Answer::Trickle), &options)
        .await
        .unwrap_or_else(|e| panic!("a slow, steady body: {e}"));
    assert_eq!(rows, local_rows().await);
    assert!(
        started.elapsed() > Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_urls_query_goes_on_every_request() {
    let url = format!("{}?token=s%2Fcret", serve(Answer::NeedsToken));
    let rows = common::rows_over(&url, &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, local_rows().await);
    let err = common::rows_over(&serve(Answer::NeedsToken), &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("read without the token"));
    assert!(!err.to_string().contains("s%2Fcret"), "{err}");
    let table = DeltaTableBuilder::new(&url)
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let shown = table.location().to_string();
    assert!(!shown.contains("cret") && shown.ends_with("/t/"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_range_is_asked_once_per_range() {
    // Files of a few MB: read in ranges (smaller ones are fetched whole).
    const RANGED: &str = "deltars__COVID-19_NYT";
    async fn cases(url: &str) -> Vec<String> {
        let table = DeltaTableBuilder::new(url)
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let batches = table
            .scan()
            .with_projection(["cases"])
            .build()
            .await
            .map(|s| s.into_stream())
            .unwrap_or_else(|e| panic!("{e}"))
            .collect_batches()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        common::sorted_rows(&batches)
    }
    let plain = serve_table(RANGED, Answer::Plain);
    let ignoring = serve_table(RANGED, Answer::IgnoreRange);
    let want = cases(&common::table_dir(RANGED).to_string_lossy()).await;
    assert_eq!(cases(&plain).await, want);
    assert_eq!(cases(&ignoring).await, want);
    // Each whole answer is cut to the range asked for: no second request to cut it from.
    let (asked, ignored) = (data_requests(&plain), data_requests(&ignoring));
    assert!(asked > 0, "no data request counted");
    assert_eq!(
        ignored, asked,
        "requests for data files: {ignored} against {asked}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_longer_than_asked_for_is_an_error_as_soon_as_it_shows() {
    let err = refused_quickly(Answer::EndlessRange).await;
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("longer than the"), "{err}");
    let err = common::rows_over(&serve(Answer::HugeLength), &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("a commit declared 5 GB long was read"));
    assert!(
        err.to_string().contains("longer than 1073741824 bytes"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_page_for_a_missing_commit_is_refused_at_its_first_bytes() {
    // The probe past the last commit gets the page: read to its end, it took gigabytes.
    let err = refused_quickly(Answer::EndlessPage).await;
    assert_eq!(err.code(), "invalid_log", "{err}");
    assert!(err.to_string().contains("not JSON lines"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_are_asked_for_as_stored_and_a_plus_in_a_path_is_not_a_space() {
    assert_eq!(
        common::rows_over(&serve(Answer::RequireIdentity), &[])
            .await
            .unwrap_or_else(|e| panic!("{e}")),
        local_rows().await
    );
    let special = "golden__hive-deltatbl-special-chars-in-partition-column";
    let local = common::rows_over(&common::table_dir(special).to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        common::rows_over(&serve_table(special, Answer::PlusIsSpace), &[])
            .await
            .unwrap_or_else(|e| panic!("{e}")),
        local
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_forbids_missing_files_is_probed_and_one_that_forbids_all_is_an_error() {
    // S3 without ListBucket: the probes past the last commit and `_last_checkpoint` are 403.
    for table in [TABLE, "golden__dv-partitioned-with-checkpoint"] {
        let local = common::rows_over(&common::table_dir(table).to_string_lossy(), &[])
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let served = common::rows_over(&serve_table(table, Answer::ForbiddenIfMissing), &[])
            .await
            .unwrap_or_else(|e| panic!("{table}: {e}"));
        assert_eq!(served, local, "{table}");
    }
    // No access at all: the first commit's 403 says so (not "not a table").
    let err = common::rows_over(&serve(Answer::ForbidAll), &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("a table that forbids every request was read"));
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("403"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cut_short_is_asked_for_again() {
    // Without an ETag object_store does not resume a body; the read asks for it again whole.
    let rows = common::rows_over(&serve(Answer::CutOnce), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, local_rows().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_file_replaced_between_reads_is_an_error_not_its_rows() {
    // One table, two scans: the first pins each data file's first answer; the second finds
    // every file replaced (another ETag and time) and must not join its bytes to the first.
    for answer in [Answer::Replaced, Answer::ETagByNode] {
        let table = DeltaTableBuilder::new(serve(answer))
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{answer:?}: {e}"));
        let read = || async {
            let scan = table.scan().build().await?;
            scan.into_stream().collect_batches().await
        };
        let first = read().await.unwrap_or_else(|e| panic!("{answer:?}: {e}"));
        assert_eq!(
            common::sorted_rows(&first),
            local_rows().await,
            "{answer:?}"
        );
        match (answer, read().await) {
            (Answer::Replaced, Err(e)) => {
                assert_eq!(e.code(), "io", "{e}");
                let text = e.to_string();
                assert!(text.contains("changed while it was read"), "{text}");
                assert!(text.contains("\"v1\"") && text.contains("\"v2\""), "{text}");
                // Pinned anew: the table read again gives its rows.
                let again = read().await.unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(common::sorted_rows(&again), local_rows().await);
            }
            (Answer::ETagByNode, Ok(second)) => {
                assert_eq!(common::sorted_rows(&second), local_rows().await)
            }
            (answer, other) => panic!("{answer:?}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_always_cut_is_retried_once_over_not_once_per_retry() {
    // object_store resumes a cut body that has an ETag, `max_retries` times; the read is not
    // asked for again on top of that (the two retry loops together made 11 × 11 requests).
    let url = serve(Answer::CutAlways);
    let err = common::rows_over(&url, &[("max_retries", "2")])
        .await
        .err()
        .unwrap_or_else(|| panic!("a table whose data bodies are always cut was read"));
    assert_eq!(err.code(), "io", "{err}");
    let requests = data_requests(&url);
    // One file read at a time here, each ask resumed at most twice: at most 3 requests a file
    // (the table has 3 data files; 9 was 27 before, and 121 a file with the defaults).
    assert!(
        (1..=9).contains(&requests),
        "{requests} data requests: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_and_password_in_the_url_go_as_basic_authorization() {
    let url = serve(Answer::NeedsBasic);
    let with_user = url.replacen("http://", "http://reader:s%2Fcret@", 1);
    let rows = common::rows_over(&with_user, &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, local_rows().await);
    // Without them: refused, and the error shows no password.
    let err = common::rows_over(&url, &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("read without the password"));
    assert!(err.to_string().contains("401"), "{err}");
    let wrong = url.replacen("http://", "http://reader:wrong@", 1);
    let err = common::rows_over(&wrong, &[("max_retries", "0")])
        .await
        .err()
        .unwrap_or_else(|| panic!("read with a wrong password"));
    assert!(!err.to_string().contains("wrong"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_answer_is_refused_with_its_encoding_named() {
    let err = refused_quickly(Answer::Gzipped).await;
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("Content-Encoding: gzip"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_commit_beside_missing_ones_is_told_apart() {
    // Taken as missing (as S3 answers for missing keys), so version 0 is read; the store
    // says a 403 came beside 404s, for a front end to warn that a newer version may exist.
    let table = DeltaTableBuilder::new(serve(Answer::ForbidNewest))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(table.version(), 0);
    let (not_found, forbidden) = table.store().missing_log_answers();
    assert!(not_found > 0 && forbidden > 0, "{not_found} {forbidden}");
    // A host that answers 404 alone: no 403 counted.
    let plain = DeltaTableBuilder::new(serve(Answer::Plain))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plain.store().missing_log_answers().1, 0);
}
