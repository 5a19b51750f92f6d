//! Loopback tests: start a server on 127.0.0.1 and talk raw HTTP/1.1 to it over a Tokio
//! `TcpStream` (no HTTP client crate), checking bytes, headers, faults and counts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Faults, ServeConfig, SlowBody, StaticServer};

mod faults;

/// A response as read off the wire.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A raw client connection with a read buffer, for keep-alive and pipelining.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    async fn connect(server: &StaticServer) -> Client {
        Client {
            stream: TcpStream::connect(server.addr()).await.unwrap(),
            buf: Vec::new(),
        }
    }

    async fn send(&mut self, raw: &str) {
        self.stream.write_all(raw.as_bytes()).await.unwrap();
    }

    /// Reads one response; `head_only` for answers to HEAD.
    async fn read(&mut self, head_only: bool) -> Resp {
        let end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            self.fill()
                .await
                .expect("connection closed before response head");
        };
        let head = String::from_utf8(self.buf[..end].to_vec()).unwrap();
        self.buf.drain(..end);
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        assert!(status_line.starts_with("HTTP/1."), "{status_line}");
        let status: u16 = status_line[9..12].parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap();
                (n.to_string(), v.trim().to_string())
            })
            .collect();
        let mut resp = Resp {
            status,
            headers,
            body: Vec::new(),
        };
        let len: usize = match resp.header("content-length") {
            Some(v) if !head_only => v.parse().unwrap(),
            _ => 0,
        };
        while self.buf.len() < len {
            if self.fill().await.is_none() {
                break; // short body: leave it to the caller to notice
            }
        }
        let take = len.min(self.buf.len());
        resp.body = self.buf.drain(..take).collect();
        resp
    }

    async fn fill(&mut self) -> Option<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let n = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut chunk))
            .await
            .expect("read timed out")
            .ok()?;
        if n == 0 {
            return None;
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Some(n)
    }

    /// True if the server closed the connection (EOF with nothing more buffered).
    async fn closed(&mut self) -> bool {
        self.buf.is_empty() && self.fill().await.is_none()
    }
}

/// One request on a fresh connection.
async fn request(server: &StaticServer, method: &str, path: &str, extra: &str) -> Resp {
    let mut c = Client::connect(server).await;
    c.send(&format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n"
    ))
    .await;
    c.read(method == "HEAD").await
}

async fn get(server: &StaticServer, path: &str) -> Resp {
    request(server, "GET", path, "").await
}

async fn get_range(server: &StaticServer, path: &str, range: &str) -> Resp {
    request(server, "GET", path, &format!("Range: {range}\r\n")).await
}

/// A temp dir: `root/` with files, `tables/t/…`, and `secret.txt` beside `root/`.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    tables: PathBuf,
}

const DIGITS: &[u8] = b"0123456789";

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let tables = dir.path().join("tables");
    let write = |p: &Path, data: &[u8]| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    };
    write(&root.join("digits.bin"), DIGITS);
    write(&root.join("index.html"), b"<h1>hi</h1>");
    write(&root.join("app.wasm"), b"\0asm");
    write(&root.join("a b+c.txt"), b"spaced");
    write(&root.join("empty.json"), b"");
    write(&root.join("sub/inner.js"), b"export {}");
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    write(&root.join("big.parquet"), &big);
    write(
        &tables.join("t/_delta_log/00000000000000000000.json"),
        b"{\"protocol\":{}}\n",
    );
    write(&tables.join("t/part-0.parquet"), b"PAR1....PAR1");
    write(&dir.path().join("secret.txt"), b"TOP SECRET");
    Fixture {
        root,
        tables,
        _dir: dir,
    }
}

async fn serve(f: &Fixture) -> StaticServer {
    StaticServer::start(ServeConfig::new(&f.root).with_mount("/tables", &f.tables))
        .await
        .unwrap()
}

#[tokio::test]
async fn get_whole_file_with_headers() {
    let f = fixture();
    let s = serve(&f).await;
    assert!(s.url().starts_with("http://127.0.0.1:"));
    let r = get(&s, "/digits.bin").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, DIGITS);
    assert_eq!(r.header("content-length"), Some("10"));
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let expose = r
        .header("access-control-expose-headers")
        .unwrap()
        .to_ascii_lowercase();
    for h in ["content-range", "content-length"] {
        assert!(expose.contains(h), "{expose}");
    }
    assert!(r.header("last-modified").unwrap().ends_with(" GMT"));
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert!(r.header("date").is_some());
    assert_eq!(r.header("connection"), Some("close"));

    assert_eq!(
        get(&s, "/app.wasm").await.header("content-type"),
        Some("application/wasm")
    );
    assert_eq!(
        get(&s, "/sub/inner.js").await.header("content-type"),
        Some("text/javascript")
    );
    let empty = get(&s, "/empty.json").await;
    assert_eq!((empty.status, empty.body.len()), (200, 0));
    assert_eq!(empty.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn byte_ranges() {
    let f = fixture();
    let s = serve(&f).await;
    let r = get_range(&s, "/digits.bin", "bytes=2-5").await;
    assert_eq!(r.status, 206);
    assert_eq!(r.body, b"2345");
    assert_eq!(r.header("content-range"), Some("bytes 2-5/10"));
    assert_eq!(r.header("content-length"), Some("4"));

    let r = get_range(&s, "/digits.bin", "bytes=7-").await;
    assert_eq!((r.status, r.body.as_slice()), (206, &b"789"[..]));
    assert_eq!(r.header("content-range"), Some("bytes 7-9/10"));

    let r = get_range(&s, "/digits.bin", "bytes=-3").await;
    assert_eq!((r.status, r.body.as_slice()), (206, &b"789"[..]));

    let r = get_range(&s, "/digits.bin", "bytes=8-100").await;
    assert_eq!(r.body, b"89");
    assert_eq!(r.header("content-range"), Some("bytes 8-9/10"));

    // A range across several file chunks of a larger file.
    let r = get_range(&s, "/big.parquet", "bytes=70000-200001").await;
    assert_eq!(r.status, 206);
    assert_eq!(r.body.len(), 130_002);
    assert!(r
        .body
        .iter()
        .enumerate()
        .all(|(i, &b)| b == ((i + 70_000) % 251) as u8));

    // Multi-range, other units and malformed ranges are ignored: the whole body, 200.
    for range in ["bytes=0-1,3-4", "items=0-1", "bytes=a-b", "bytes="] {
        let r = get_range(&s, "/digits.bin", range).await;
        assert_eq!((r.status, r.body.as_slice()), (200, DIGITS), "{range}");
    }
}

#[tokio::test]
async fn unsatisfiable_range_is_416() {
    let f = fixture();
    let s = serve(&f).await;
    // `bytes=-0`, the last 0 bytes, is valid and satisfied by no byte (RFC 9110 §14.1.1).
    let digits =
        ["bytes=10-", "bytes=10-20", "bytes=5-3", "bytes=-0"].map(|r| ("/digits.bin", r, "10"));
    // No range of an empty file is satisfiable (tower-http alone answers `206`, no bytes).
    let empty = ["bytes=0-0", "bytes=0-"].map(|r| ("/empty.json", r, "0"));
    for (path, range, len) in digits.into_iter().chain(empty) {
        let r = get_range(&s, path, range).await;
        assert_eq!(r.status, 416, "{path} {range}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{len}").as_str())
        );
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    }
}

#[tokio::test]
async fn if_range_keeps_the_range_only_for_the_current_entity_tag() {
    // A browser resuming a cached part of a file sends the entity tag it was given: the range
    // is answered. A date (not a strong validator here) or another tag gets the whole file.
    let f = fixture();
    let s = serve(&f).await;
    let whole = get(&s, "/digits.bin").await;
    let modified = whole.header("last-modified").unwrap().to_string();
    let etag = whole.header("etag").unwrap().to_string();
    let extra = format!("Range: bytes=0-1\r\nIf-Range: {etag}\r\n");
    let r = request(&s, "GET", "/digits.bin", &extra).await;
    assert_eq!((r.status, r.body.as_slice()), (206, &DIGITS[..2]));
    for validator in [modified.as_str(), "\"other\"", "W/\"weak\""] {
        let extra = format!("Range: bytes=0-1\r\nIf-Range: {validator}\r\n");
        let r = request(&s, "GET", "/digits.bin", &extra).await;
        assert_eq!((r.status, r.body.as_slice()), (200, DIGITS), "{validator}");
    }
}

#[tokio::test]
async fn head_and_keep_alive() {
    let f = fixture();
    let s = serve(&f).await;
    let mut c = Client::connect(&s).await;
    c.send("HEAD /digits.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await;
    let r = c.read(true).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("10"));
    assert!(r.body.is_empty());
    assert_eq!(r.header("connection"), None);

    c.send("HEAD /digits.bin HTTP/1.1\r\nRange: bytes=-4\r\n\r\n")
        .await;
    let r = c.read(true).await;
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-length"), Some("4"));
    assert_eq!(r.header("content-range"), Some("bytes 6-9/10"));

    // Same connection, a GET after the HEADs: nothing stray was sent.
    c.send("GET /digits.bin HTTP/1.1\r\nRange: bytes=0-0\r\n\r\n")
        .await;
    let r = c.read(false).await;
    assert_eq!((r.status, r.body.as_slice()), (206, &b"0"[..]));
    assert_eq!(s.stats().requests(), 3);
    assert_eq!(s.stats().requests_by_method("HEAD"), 2);
}

#[tokio::test]
async fn pipelined_requests_answer_in_order() {
    let f = fixture();
    let s = serve(&f).await;
    let mut c = Client::connect(&s).await;
    c.send(
        "GET /digits.bin HTTP/1.1\r\nRange: bytes=0-1\r\n\r\n\
         GET /missing HTTP/1.1\r\n\r\n\
         GET /digits.bin HTTP/1.1\r\nRange: bytes=8-9\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(c.read(false).await.body, b"01");
    assert_eq!(c.read(false).await.status, 404);
    assert_eq!(c.read(false).await.body, b"89");
    assert!(c.closed().await);
}

#[tokio::test]
async fn http10_closes_unless_keep_alive() {
    let f = fixture();
    let s = serve(&f).await;
    let mut c = Client::connect(&s).await;
    c.send("GET /digits.bin HTTP/1.0\r\n\r\n").await;
    let r = c.read(false).await;
    // HTTP/1.0 closes by default: no `Connection` header needed.
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    assert!(c.closed().await);

    let mut c = Client::connect(&s).await;
    c.send("GET /digits.bin HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .await;
    let r = c.read(false).await;
    assert_eq!(r.header("connection"), Some("keep-alive"));
    c.send("GET /digits.bin HTTP/1.0\r\n\r\n").await;
    assert_eq!(c.read(false).await.body, DIGITS);
}

#[tokio::test]
async fn options_preflight() {
    let f = fixture();
    let s = serve(&f).await;
    let extra = "Origin: http://example.test\r\n\
                 Access-Control-Request-Method: GET\r\n\
                 Access-Control-Request-Headers: range, x-custom\r\n";
    for path in ["/digits.bin", "/does/not/exist", "*"] {
        let r = request(&s, "OPTIONS", path, extra).await;
        assert_eq!(r.status, 204, "{path}");
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        let allow = r
            .header("access-control-allow-headers")
            .unwrap()
            .to_ascii_lowercase();
        assert!(
            allow.contains("range") && allow.contains("x-custom"),
            "{allow}"
        );
        let methods = r.header("access-control-allow-methods").unwrap();
        assert!(methods.contains("GET") && methods.contains("HEAD"));
        assert_eq!(r.header("content-length"), None);
        assert!(r.body.is_empty());
    }
    assert_eq!(s.stats().requests_by_method("OPTIONS"), 3);
}

#[tokio::test]
async fn directories_and_missing_files_are_404() {
    let f = fixture();
    let s = serve(&f).await;
    for path in ["/", "/sub", "/sub/", "/nope.txt", "/tables", "/tables/t/"] {
        let r = get(&s, path).await;
        assert_eq!(r.status, 404, "{path}");
        assert!(!String::from_utf8_lossy(&r.body).contains("inner.js"));
    }
    assert_eq!(request(&s, "HEAD", "/sub", "").await.status, 404);
}

#[tokio::test]
async fn index_file_when_configured() {
    let f = fixture();
    let s = StaticServer::start(ServeConfig::new(&f.root).with_index("index.html"))
        .await
        .unwrap();
    let r = get(&s, "/").await;
    assert_eq!((r.status, r.body.as_slice()), (200, &b"<h1>hi</h1>"[..]));
    assert_eq!(r.header("content-type"), Some("text/html"));
    assert_eq!(get(&s, "/sub/").await.status, 404);
}

#[tokio::test]
async fn memory_files_come_first_and_whole() {
    let f = fixture();
    let config = ServeConfig::new(&f.root)
        .with_mount("/tables", &f.tables)
        .with_index("index.html")
        .with_memory_file(
            "index.html",
            &b"<p>embedded</p>"[..],
            "text/html; charset=utf-8",
        )
        .with_memory_file("/app/viewer.wasm", &b"\0asm\x01"[..], "application/wasm");
    let s = StaticServer::start(config).await.unwrap();
    // The in-memory index wins over the root's index.html, at `/` and by name.
    for path in ["/", "/index.html", "/?url=x"] {
        let r = get(&s, path).await;
        assert_eq!(
            (r.status, r.body.as_slice()),
            (200, &b"<p>embedded</p>"[..]),
            "{path}"
        );
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    }
    // Whole even when a range is asked for; HEAD has the length and no body.
    let r = get_range(&s, "/app/viewer.wasm", "bytes=0-1").await;
    assert_eq!((r.status, r.body.as_slice()), (200, &b"\0asm\x01"[..]));
    assert_eq!(r.header("content-type"), Some("application/wasm"));
    let r = request(&s, "HEAD", "/app/viewer.wasm", "").await;
    assert_eq!((r.status, r.header("content-length")), (200, Some("5")));
    assert!(r.body.is_empty());
    // Everything else is still found on disk, and a directory without an embedded index is
    // not answered with one.
    assert_eq!(get(&s, "/digits.bin").await.body, DIGITS);
    assert_eq!(get(&s, "/tables/t/part-0.parquet").await.status, 200);
    assert_eq!(get(&s, "/app/").await.status, 404);
    assert_eq!(get(&s, "/app/missing.js").await.status, 404);
    assert_eq!(get(&s, "/../index.html").await.status, 400);
}

#[tokio::test]
async fn path_traversal_is_refused() {
    let f = fixture();
    let s = serve(&f).await;
    for path in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt",
        "/sub/../../secret.txt",
        "/.%2e/secret.txt",
        "/tables/../../secret.txt",
        "/tables/%2e%2e/%2e%2e/secret.txt",
        "//etc/passwd",
        "/%2Fetc/passwd",
        "/sub%5c..%5c..%5csecret.txt",
    ] {
        let r = get(&s, path).await;
        assert_eq!(r.status, 400, "{path}");
        assert!(
            !String::from_utf8_lossy(&r.body).contains("SECRET"),
            "{path}"
        );
    }
    // Origin-form only (or absolute-form): a bare relative target is refused.
    assert_eq!(get(&s, "secret.txt").await.status, 400);
    // The server is still up.
    assert_eq!(get(&s, "/digits.bin").await.status, 200);
}

#[tokio::test]
async fn percent_decoding_and_query() {
    let f = fixture();
    let s = serve(&f).await;
    let r = get(&s, "/a%20b%2Bc.txt").await;
    assert_eq!((r.status, r.body.as_slice()), (200, &b"spaced"[..]));
    let r = get(&s, "/digits.bin?X-Amz-Signature=abc&x=/../../secret.txt").await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    let r = get(&s, "/sub/./inner.js").await;
    assert_eq!(r.status, 200);
    let r = get(&s, &format!("{}/digits.bin", s.url())).await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    let log = s.stats().entries();
    assert_eq!(log[0].path, "/a%20b%2Bc.txt");
    assert_eq!(log[1].path, "/digits.bin");
}

#[tokio::test]
async fn mounts_serve_tables_beside_www() {
    let f = fixture();
    let s = serve(&f).await;
    let r = get(&s, "/tables/t/_delta_log/00000000000000000000.json").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"{\"protocol\":{}}\n");
    let r = get_range(&s, "/tables/t/part-0.parquet", "bytes=-4").await;
    assert_eq!((r.status, r.body.as_slice()), (206, &b"PAR1"[..]));
    assert_eq!(get(&s, "/index.html").await.status, 200);
    // The mount does not leak into the root and vice versa.
    assert_eq!(get(&s, "/t/part-0.parquet").await.status, 404);
    assert_eq!(get(&s, "/tables/digits.bin").await.status, 404);
}

#[tokio::test]
async fn longest_mount_prefix_wins() {
    let f = fixture();
    let config = ServeConfig::new(&f.root)
        .with_mount("/tables", &f.tables)
        .with_mount("/tables/t/", &f.root);
    let s = StaticServer::start(config).await.unwrap();
    assert_eq!(get(&s, "/tables/t/digits.bin").await.body, DIGITS);
    assert_eq!(get(&s, "/tables/t/part-0.parquet").await.status, 404);
    let r = get(&s, "/tables/t/sub/inner.js").await;
    assert_eq!((r.status, r.body.as_slice()), (200, &b"export {}"[..]));
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_out_of_the_served_directories_are_refused() {
    use std::os::unix::fs::symlink;
    let f = fixture();
    let outside = f.root.parent().unwrap();
    symlink(outside.join("secret.txt"), f.root.join("leak.txt")).unwrap();
    symlink(outside, f.root.join("up")).unwrap();
    symlink(f.root.join("digits.bin"), f.root.join("same.bin")).unwrap();
    symlink(&f.tables, f.root.join("to-tables")).unwrap();
    let s = serve(&f).await;
    for path in ["/leak.txt", "/up/secret.txt"] {
        let r = get(&s, path).await;
        assert_eq!(r.status, 403, "{path}");
        assert!(!String::from_utf8_lossy(&r.body).contains("SECRET"));
    }
    // Links that stay inside what is served are followed.
    assert_eq!(get(&s, "/same.bin").await.body, DIGITS);
    assert_eq!(get(&s, "/up/root/digits.bin").await.body, DIGITS);
    let r = get(&s, "/to-tables/t/part-0.parquet").await;
    assert_eq!((r.status, r.body.as_slice()), (200, &b"PAR1....PAR1"[..]));
    // Unless told to follow them anywhere.
    let open = ServeConfig::new(&f.root).with_follow_symlinks(true);
    let s = StaticServer::start(open).await.unwrap();
    assert_eq!(get(&s, "/leak.txt").await.body, b"TOP SECRET");
}

#[cfg(unix)]
#[tokio::test]
async fn only_regular_files_are_served() {
    let f = fixture();
    let fifo = f.root.join("pipe.parquet");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let socket = std::os::unix::net::UnixListener::bind(f.root.join("s.sock")).unwrap();
    let config = ServeConfig::new(&f.root).with_index("pipe.parquet");
    let s = StaticServer::start(config).await.unwrap();
    let t = Instant::now();
    for (method, path) in [
        ("GET", "/pipe.parquet"),
        ("HEAD", "/pipe.parquet"),
        ("GET", "/s.sock"),
        // The index file is checked the same way.
        ("GET", "/"),
    ] {
        let r = request(&s, method, path, "Range: bytes=0-3\r\n").await;
        assert_eq!(r.status, 403, "{method} {path}");
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(get(&s, "/digits.bin").await.body, DIGITS);
    drop(socket);
}

#[tokio::test]
async fn idle_connections_are_closed() {
    let f = fixture();
    let config = ServeConfig {
        idle_timeout: Duration::from_millis(200),
        ..ServeConfig::new(&f.root)
    };
    let s = StaticServer::start(config).await.unwrap();
    let mut c = Client::connect(&s).await;
    c.send("GET /digits.bin HTTP/1.1\r\n\r\n").await;
    assert_eq!(c.read(false).await.body, DIGITS);
    let t = Instant::now();
    assert!(c.closed().await);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[tokio::test]
async fn other_methods_are_405() {
    let f = fixture();
    let s = serve(&f).await;
    let mut c = Client::connect(&s).await;
    c.send("POST /digits.bin HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        .await;
    let r = c.read(false).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"));
    // The body was skipped: the connection is still in sync.
    c.send("DELETE /digits.bin HTTP/1.1\r\n\r\nGET /digits.bin HTTP/1.1\r\n\r\n")
        .await;
    assert_eq!(c.read(false).await.status, 405);
    assert_eq!(c.read(false).await.body, DIGITS);
}

#[tokio::test]
async fn malformed_requests_get_4xx_and_server_survives() {
    let f = fixture();
    let s = serve(&f).await;
    for raw in [
        "garbage\r\n\r\n",
        "GET / HTTP/9.9\r\n\r\n",
        "GET /digits.bin HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\n",
    ] {
        let mut c = Client::connect(&s).await;
        c.send(raw).await;
        let r = c.read(false).await;
        assert!((400..=505).contains(&r.status), "{raw:?} -> {}", r.status);
        assert!(c.closed().await, "{raw:?}");
    }
    // Oversized head.
    let mut c = Client::connect(&s).await;
    c.send(&format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(20_000)))
        .await;
    assert_eq!(c.read(false).await.status, 431);
    let mut c = Client::connect(&s).await;
    c.send(&format!(
        "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(20_000)
    ))
    .await;
    assert_eq!(c.read(false).await.status, 431);
    // Connections that vanish mid-request, or announce a body they never send.
    for partial in [
        "GET /digits.bin HT",
        "GET /digits.bin HTTP/1.1\r\nContent-Length: 9\r\n\r\nab",
        "GET /digits.bin HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET /digits.bin HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
    ] {
        let mut c = Client::connect(&s).await;
        c.send(partial).await;
        drop(c);
    }
    // A client that disconnects while a big body is being sent.
    let mut c = Client::connect(&s).await;
    c.send("GET /big.parquet HTTP/1.1\r\n\r\n").await;
    c.fill().await;
    drop(c);
    assert_eq!(get(&s, "/digits.bin").await.body, DIGITS);
}

#[tokio::test]
async fn latency_is_added_per_request() {
    let f = fixture();
    let config = ServeConfig::new(&f.root).with_latency(Duration::from_millis(150));
    let s = StaticServer::start(config).await.unwrap();
    let mut c = Client::connect(&s).await;
    let t = Instant::now();
    c.send("GET /digits.bin HTTP/1.1\r\n\r\n").await;
    c.read(false).await;
    c.send("HEAD /digits.bin HTTP/1.1\r\n\r\n").await;
    c.read(true).await;
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn stats_count_requests_and_bytes() {
    let f = fixture();
    let s = serve(&f).await;
    let stats = s.stats();
    get(&s, "/digits.bin").await;
    get_range(&s, "/digits.bin", "bytes=0-3").await;
    request(&s, "HEAD", "/digits.bin", "").await;
    request(&s, "OPTIONS", "/digits.bin", "").await;
    get(&s, "/nope").await;
    assert_eq!(stats.requests(), 5);
    assert_eq!(stats.requests_by_method("GET"), 3);
    assert_eq!(stats.requests_by_method("HEAD"), 1);
    assert_eq!(stats.requests_by_method("OPTIONS"), 1);
    assert_eq!(stats.bytes_sent(), 10 + 4 + "not found\n".len() as u64);
    assert_eq!(stats.count_path_suffix(".bin"), 4);
    let e = &stats.entries()[1];
    assert_eq!(
        (
            e.method.as_str(),
            e.path.as_str(),
            e.range.as_deref(),
            e.status
        ),
        ("GET", "/digits.bin", Some("bytes=0-3"), 206)
    );
    stats.reset();
    assert_eq!(s.stats().requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_connections() {
    let f = fixture();
    let s = serve(&f).await;
    let addr = s.addr();
    let mut tasks = Vec::new();
    for i in 0..64u64 {
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let start = i * 1000;
            let req = format!(
                "GET /big.parquet HTTP/1.1\r\nRange: bytes={start}-{}\r\nConnection: close\r\n\r\n",
                start + 4095
            );
            stream.write_all(req.as_bytes()).await.unwrap();
            let mut all = Vec::new();
            stream.read_to_end(&mut all).await.unwrap();
            let head_end = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let body = &all[head_end..];
            assert!(all.starts_with(b"HTTP/1.1 206 "));
            assert_eq!(body.len(), 4096);
            assert!(body
                .iter()
                .enumerate()
                .all(|(j, &b)| b == ((start as usize + j) % 251) as u8));
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(s.stats().requests(), 64);
}

#[tokio::test]
async fn shutdown_releases_the_port() {
    let f = fixture();
    let s = serve(&f).await;
    let addr = s.addr();
    let mut idle = Client::connect(&s).await;
    s.shutdown().await;
    assert!(TcpStream::connect(addr).await.is_err());
    // Open connections are closed too.
    assert!(idle.closed().await);
}

#[tokio::test]
async fn drop_stops_the_server() {
    let f = fixture();
    let s = serve(&f).await;
    let addr = s.addr();
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(addr).await.is_ok() {
        assert!(Instant::now() < deadline, "still accepting after drop");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn background_server_for_sync_callers() {
    use std::io::{Read, Write};
    let f = fixture();
    let s = StaticServer::start_background(ServeConfig::new(&f.root)).unwrap();
    let mut stream = std::net::TcpStream::connect(s.addr()).unwrap();
    stream
        .write_all(b"GET /digits.bin HTTP/1.1\r\nRange: bytes=5-\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut all = Vec::new();
    stream.read_to_end(&mut all).unwrap();
    assert!(all.starts_with(b"HTTP/1.1 206 "));
    assert!(all.ends_with(b"\r\n\r\n56789"));
    assert_eq!(s.stats().requests(), 1);
    let addr = s.addr();
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(addr).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after drop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
async fn start_fails_for_missing_root() {
    let err = StaticServer::start(ServeConfig::new("/definitely/not/here"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    let f = fixture();
    let bad = ServeConfig::new(&f.root).with_mount("/x", f.root.join("digits.bin"));
    assert!(StaticServer::start(bad).await.is_err());
}

#[tokio::test]
async fn a_suffix_longer_than_the_file_is_the_whole_file_as_a_range() {
    // RFC 9110 §14.1.3: footer readers ask for a fixed suffix whatever the file's size.
    let f = fixture();
    let s = serve(&f).await;
    for range in ["bytes=-65536", "bytes=-11", "bytes=-10"] {
        let r = get_range(&s, "/digits.bin", range).await;
        assert_eq!((r.status, r.body.as_slice()), (206, DIGITS), "{range}");
        assert_eq!(r.header("content-range"), Some("bytes 0-9/10"), "{range}");
    }
    let r = get_range(&s, "/digits.bin", "bytes=-3").await;
    assert_eq!((r.status, r.body.as_slice()), (206, &DIGITS[7..]));
    // Still nothing of an empty file.
    assert_eq!(get_range(&s, "/empty.json", "bytes=-5").await.status, 416);
}

#[tokio::test]
async fn entity_tag_preconditions() {
    let f = fixture();
    let s = serve(&f).await;
    let whole = get(&s, "/digits.bin").await;
    let etag = whole.header("etag").unwrap().to_string();
    let modified = whole.header("last-modified").unwrap().to_string();
    let ask = |extra: String| {
        let s = &s;
        async move { request(s, "GET", "/digits.bin", &extra).await }
    };
    // If-None-Match naming the current tag (weakly too, or `*`) is 304 with the tag.
    for tag in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"x\", {etag}"),
        "*".into(),
    ] {
        let r = ask(format!("If-None-Match: {tag}\r\n")).await;
        assert_eq!(r.status, 304, "{tag}");
        assert_eq!(r.header("etag"), Some(etag.as_str()), "{tag}");
        assert!(r.body.is_empty());
    }
    // Another tag is the file, even with a date that alone would say 304: If-None-Match
    // makes If-Modified-Since ignored (a file rewritten within its second).
    let r = ask(format!(
        "If-None-Match: \"old\"\r\nIf-Modified-Since: {modified}\r\n"
    ))
    .await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    // If-Match: only the current strong tag (or `*`) holds.
    for (tag, status) in [
        ("\"nope\"".to_string(), 412),
        (format!("W/{etag}"), 412),
        (etag.clone(), 200),
        ("*".into(), 200),
    ] {
        assert_eq!(
            ask(format!("If-Match: {tag}\r\n")).await.status,
            status,
            "{tag}"
        );
    }
    // The date alone still works as before.
    let r = ask(format!("If-Modified-Since: {modified}\r\n")).await;
    assert_eq!(r.status, 304);
    assert_eq!(r.header("etag"), Some(etag.as_str()));
}

#[tokio::test]
async fn a_directory_with_an_index_is_redirected_to_its_slash() {
    let f = fixture();
    let config = ServeConfig::new(&f.tables)
        .with_mount("/www", &f.root)
        .with_index("index.html")
        .with_memory_file("app/index.html", &b"<p>app</p>"[..], "text/html");
    let s = StaticServer::start(config).await.unwrap();
    for (path, to) in [
        ("/www", "/www/"),
        ("/app", "/app/"),
        ("/www?x=1", "/www/?x=1"),
    ] {
        let r = get(&s, path).await;
        assert_eq!((r.status, r.header("location")), (308, Some(to)), "{path}");
    }
    assert_eq!(get(&s, "/www/").await.body, b"<h1>hi</h1>");
    assert_eq!(get(&s, "/app/").await.body, b"<p>app</p>");
    // A folder without an index is still 404, not a redirect.
    assert_eq!(get(&s, "/t").await.status, 404);
}

#[tokio::test]
async fn latency_longer_than_the_idle_timeout_is_not_idleness() {
    let f = fixture();
    let config = ServeConfig {
        idle_timeout: Duration::from_millis(200),
        ..ServeConfig::new(&f.root).with_latency(Duration::from_millis(600))
    };
    let s = StaticServer::start(config).await.unwrap();
    let r = get(&s, "/digits.bin").await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
}

/// A request with `host` as its `Host` header (`None`: an HTTP/1.0 request without one).
async fn get_as_host(server: &StaticServer, host: Option<&str>, extra: &str) -> Resp {
    let mut c = Client::connect(server).await;
    let raw = match host {
        Some(host) => {
            format!("GET /digits.bin HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n")
        }
        None => format!("GET /digits.bin HTTP/1.0\r\n{extra}\r\n"),
    };
    c.send(&raw).await;
    c.read(false).await
}

#[tokio::test]
async fn only_loopback_host_names_are_answered() {
    let f = fixture();
    let s = serve(&f).await;
    for host in [
        Some("127.0.0.1"),
        Some("127.0.0.1:8080"),
        Some("localhost"),
        Some("LOCALHOST:1"),
        Some("localhost."),
        Some("viewer.localhost:8080"),
        Some("[::1]:80"),
        Some("127.1.2.3"),
        None,
    ] {
        let r = get_as_host(&s, host, "").await;
        assert_eq!((r.status, r.body.as_slice()), (200, DIGITS), "{host:?}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
    // A site's own name resolved to 127.0.0.1 (DNS rebinding) is refused, files unread.
    for host in [
        "evil.example",
        "evil.example:8080",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "[::2]",
        "",
    ] {
        let r = get_as_host(&s, Some(host), "Origin: http://evil.example\r\n").await;
        assert_eq!(r.status, 403, "{host}");
        assert!(!r.body.windows(DIGITS.len()).any(|w| w == DIGITS));
        assert_eq!(r.header("access-control-allow-origin"), None, "{host}");
    }
}

#[tokio::test]
async fn a_second_host_or_a_foreign_url_target_is_refused() {
    let f = fixture();
    let s = serve(&f).await;
    let ask = |raw: &'static str| {
        let s = &s;
        async move {
            let mut c = Client::connect(s).await;
            c.send(raw).await;
            c.read(false).await
        }
    };
    let twice = "GET /digits.bin HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\
                 Connection: close\r\n\r\n";
    assert_eq!(ask(twice).await.status, 403);
    let foreign = "GET http://evil.example/digits.bin HTTP/1.1\r\nHost: localhost\r\n\
                   Connection: close\r\n\r\n";
    assert_eq!(ask(foreign).await.status, 403);
    let own = "GET http://localhost/digits.bin HTTP/1.1\r\nHost: localhost\r\n\
               Connection: close\r\n\r\n";
    let r = ask(own).await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
}

#[tokio::test]
async fn hidden_files_and_folders_are_not_served() {
    let f = fixture();
    std::fs::write(f.root.join(".env"), b"TOKEN=x").unwrap();
    std::fs::create_dir_all(f.root.join(".git")).unwrap();
    std::fs::write(f.root.join(".git/config"), b"[core]").unwrap();
    std::fs::write(f.root.join("sub/.part-0.parquet.crc"), b"crc").unwrap();
    let s = serve(&f).await;
    for path in [
        "/.env",
        "/.git/config",
        "/sub/.part-0.parquet.crc",
        "/%2Eenv",
        "/.git/",
    ] {
        assert_eq!(get(&s, path).await.status, 404, "{path}");
    }
    assert_eq!(get(&s, "/sub/inner.js").await.status, 200);
}

#[tokio::test]
async fn cross_origin_answers_can_be_turned_off() {
    let f = fixture();
    let s = StaticServer::start(ServeConfig::new(&f.root).with_cross_origin(false))
        .await
        .unwrap();
    let r = get_as_host(&s, Some("127.0.0.1"), "Origin: http://evil.example\r\n").await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    assert_eq!(r.header("access-control-allow-origin"), None);
    let extra = "Origin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\n";
    let r = request(&s, "OPTIONS", "/digits.bin", extra).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("access-control-allow-origin"), None);
    assert_eq!(r.header("access-control-allow-methods"), None);
}

/// A missing `_last_checkpoint` is answered from the log folder when asked for (`dar serve`,
/// `dar view`), and stays a 404 otherwise, and for a log without a checkpoint.
#[tokio::test]
async fn a_missing_checkpoint_hint_is_answered_from_the_log_folder() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/tables");
    assert!(corpus.is_dir(), "the corpus (../shared/corpus)");
    let hint = "/deltars__checkpoints_vacuumed/_delta_log/_last_checkpoint";
    let plain = StaticServer::start(ServeConfig::new(&corpus))
        .await
        .unwrap();
    assert_eq!(get(&plain, hint).await.status, 404);
    plain.shutdown().await;
    let s = StaticServer::start(ServeConfig::new(&corpus).with_checkpoint_hints(true))
        .await
        .unwrap();
    let r = get(&s, hint).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let json: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(json["version"], 10);
    assert_eq!(json["size"], 12);
    let none = "/dat__basic_append/_delta_log/_last_checkpoint";
    assert_eq!(get(&s, none).await.status, 404);
    // A name that only looks like it, or a path out of the folder, is not answered.
    assert_eq!(get(&s, "/_delta_log/_last_checkpoint").await.status, 404);
    assert_eq!(
        get(&s, "/../secret/_delta_log/_last_checkpoint")
            .await
            .status,
        400
    );
    s.shutdown().await;
}

/// A hint is computed once per state of its log folder: asked again, the same answer; once
/// a newer checkpoint is written into the folder, that one.
#[tokio::test]
async fn a_checkpoint_hint_follows_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/tables/deltars__checkpoints_vacuumed/_delta_log");
    let log = table.join("_delta_log");
    std::fs::create_dir_all(&log).unwrap();
    for entry in std::fs::read_dir(&source).unwrap().flatten() {
        let name = entry.file_name();
        if name != "_last_checkpoint" {
            std::fs::copy(entry.path(), log.join(&name)).unwrap();
        }
    }
    let s = StaticServer::start(ServeConfig::new(dir.path()).with_checkpoint_hints(true))
        .await
        .unwrap();
    let version = |r: Resp| -> serde_json::Value {
        assert_eq!(r.status, 200);
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["version"].clone()
    };
    let hint = "/t/_delta_log/_last_checkpoint";
    assert_eq!(version(get(&s, hint).await), 10);
    assert_eq!(version(get(&s, hint).await), 10);
    // A later checkpoint (a copy of the one at 10, named for 12) changes the folder.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::copy(
        log.join("00000000000000000010.checkpoint.parquet"),
        log.join("00000000000000000012.checkpoint.parquet"),
    )
    .unwrap();
    assert_eq!(version(get(&s, hint).await), 12);
    s.shutdown().await;
}
