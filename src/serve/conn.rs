//! One client connection: read request heads, answer each, keep the connection alive.
//!
//! Any error (a reset, a malformed request, a file that vanishes mid-body) ends this
//! connection only. Requests are answered in order, so pipelined requests work.

use std::fs::Metadata;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use tokio::fs::File;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::config::ServeConfig;
use super::date::http_date;
use super::faults::{Decision, FaultState};
use super::http::{parse_head, HeadError, Request, ResponseHead, Version};
use super::path::{parse_target, raw_path, Resolver};
use super::range::{self, RangeOutcome};
use super::stats::{RequestRecord, ServeStats};

/// Largest request body read and discarded (GET and HEAD carry none in practice).
const MAX_DISCARDED_BODY: u64 = 1024 * 1024;
/// Size of reads from files and of the largest body sent in one write with its head.
const CHUNK: usize = 64 * 1024;

const EXPOSE_HEADERS: &str =
    "Content-Range, Content-Length, Content-Type, ETag, Last-Modified, Accept-Ranges, Date";
const ALLOW_HEADERS: &str = "Range, If-Range, If-Match, If-None-Match, If-Modified-Since, \
     If-Unmodified-Since, Authorization, Cache-Control, Content-Type";
const ALLOW_METHODS: &str = "GET, HEAD, OPTIONS";

/// What every connection of one server shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: ServeConfig,
    pub resolver: Resolver,
    pub faults: FaultState,
    pub stats: ServeStats,
}

/// Whether the connection goes on after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    KeepAlive,
    Close,
}

/// Serves one connection until the client closes it, an error occurs, or it idles.
pub(crate) async fn serve_connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(4096);
    loop {
        let request = match read_head(&mut stream, &mut buf, &shared).await {
            Ok(Some(request)) => request,
            Ok(None) => break,
            Err(err) => {
                let _ = send_error(&mut stream, &shared, None, err).await;
                break;
            }
        };
        let body_ok = match request.body_length() {
            Ok(0) => Ok(()),
            Ok(n) if n <= MAX_DISCARDED_BODY => {
                if discard_body(&mut stream, &mut buf, n, &shared)
                    .await
                    .is_err()
                {
                    break;
                }
                Ok(())
            }
            Ok(_) => Err(HeadError::new(413, "request body too large")),
            Err(err) => Err(err),
        };
        if let Err(err) = body_ok {
            let _ = send_error(&mut stream, &shared, Some(&request), err).await;
            break;
        }
        match respond(&mut stream, &request, &shared).await {
            Ok(Next::KeepAlive) => {}
            Ok(Next::Close) | Err(_) => break,
        }
    }
    let _ = stream.shutdown().await;
}

/// Reads until `buf` holds a whole request head. `Ok(None)`: the client closed (or idled)
/// between requests.
async fn read_head(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    shared: &Shared,
) -> Result<Option<Request>, HeadError> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some((request, used)) = parse_head(buf)? {
            buf.drain(..used);
            return Ok(Some(request));
        }
        let read = tokio::time::timeout(shared.config.idle_timeout, stream.read(&mut chunk));
        match read.await {
            Ok(Ok(0)) | Ok(Err(_)) => return Ok(None),
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
            Err(_elapsed) if buf.iter().all(|b| b.is_ascii_whitespace()) => return Ok(None),
            Err(_elapsed) => return Err(HeadError::new(408, "request head not received in time")),
        }
    }
}

/// Skips a request body of `len` bytes, part of which may already be in `buf`.
async fn discard_body(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    len: u64,
    shared: &Shared,
) -> io::Result<()> {
    let buffered = buf.len().min(usize::try_from(len).unwrap_or(usize::MAX));
    buf.drain(..buffered);
    let mut left = len - buffered as u64;
    let mut chunk = [0u8; 8192];
    while left > 0 {
        let want = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let read =
            tokio::time::timeout(shared.config.idle_timeout, stream.read(&mut chunk[..want]));
        match read.await {
            Ok(Ok(0)) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(Ok(n)) => left -= n as u64,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(io::ErrorKind::TimedOut.into()),
        }
    }
    Ok(())
}

/// The body of a response.
enum Body {
    Empty,
    Text(&'static str),
    File { file: File, start: u64, len: u64 },
}

/// A response about to be sent.
struct Reply {
    head: ResponseHead,
    body: Body,
}

impl Reply {
    fn text(status: u16, text: &'static str) -> Self {
        let mut head = ResponseHead::new(status);
        head.header("Content-Type", "text/plain; charset=utf-8")
            .header("Content-Length", text.len().to_string());
        Reply {
            head,
            body: Body::Text(text),
        }
    }
}

/// Answers one well-formed request.
async fn respond(stream: &mut TcpStream, req: &Request, shared: &Shared) -> io::Result<Next> {
    if !shared.config.latency.is_zero() {
        tokio::time::sleep(shared.config.latency).await;
    }
    let raw = raw_path(&req.target);
    let decision = shared.faults.decide(&req.method, raw);
    let reply = match req.method.as_str() {
        "OPTIONS" => preflight(req),
        "GET" | "HEAD" if decision.fail => {
            let mut reply = Reply::text(503, "injected failure\n");
            reply.head.header("Retry-After", "0");
            reply
        }
        "GET" | "HEAD" => file_reply(req, shared, decision).await,
        _ => {
            let mut reply = Reply::text(405, "method not allowed\n");
            reply.head.header("Allow", ALLOW_METHODS);
            reply
        }
    };
    let keep_alive = req.keep_alive();
    let truncate = decision.truncate.filter(|_| req.method == "GET");
    send(stream, shared, Some(req), reply, keep_alive, truncate).await
}

/// `204` for a CORS preflight (or any `OPTIONS`), whether or not the path exists.
fn preflight(req: &Request) -> Reply {
    let mut head = ResponseHead::new(204);
    let mut allow_headers = ALLOW_HEADERS.to_string();
    if let Some(asked) = req.header("access-control-request-headers") {
        let plain = asked
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_, ".contains(&b));
        if plain && !asked.trim().is_empty() {
            allow_headers.push_str(", ");
            allow_headers.push_str(asked.trim());
        }
    }
    head.header("Allow", ALLOW_METHODS)
        .header("Access-Control-Allow-Methods", ALLOW_METHODS)
        .header("Access-Control-Allow-Headers", allow_headers)
        .header("Access-Control-Max-Age", "600");
    if req
        .header("access-control-request-private-network")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        head.header("Access-Control-Allow-Private-Network", "true");
    }
    Reply {
        head,
        body: Body::Empty,
    }
}

/// The answer to `GET`/`HEAD` of a path: the file (whole or a range), or an error status.
async fn file_reply(req: &Request, shared: &Shared, decision: Decision) -> Reply {
    let target = match parse_target(&req.target) {
        Ok(target) => target,
        Err(_) => return Reply::text(400, "bad request path\n"),
    };
    let path = shared.resolver.resolve(&target.segments);
    let Some((path, file, meta)) = open_file(path, shared.config.index.as_deref()).await else {
        return Reply::text(404, "not found\n");
    };
    let len = meta.len();
    let modified = meta.modified().ok();
    let nanos = modified
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let etag = format!("\"{len:x}-{nanos:x}\"");
    let last_modified = modified.map(http_date);

    let range_header = if decision.ignore_range {
        None
    } else {
        match req.header("if-range") {
            Some(v) if v != etag && Some(v) != last_modified.as_deref() => None,
            _ => req.header("range"),
        }
    };
    let outcome = range::resolve(range_header, len);

    let mut head = ResponseHead::new(200);
    if outcome == RangeOutcome::Unsatisfiable {
        let mut reply = Reply::text(416, "range not satisfiable\n");
        reply.head.header("Content-Range", format!("bytes */{len}"));
        return reply;
    }
    let (start, count) = match outcome {
        RangeOutcome::Partial { start, end } => {
            head.status = 206;
            head.header("Content-Range", format!("bytes {start}-{end}/{len}"));
            (start, end - start + 1)
        }
        _ => (0, len),
    };
    head.header("Content-Type", super::mime::content_type(&path))
        .header("Content-Length", count.to_string())
        .header(
            "Accept-Ranges",
            if decision.ignore_range {
                "none"
            } else {
                "bytes"
            },
        )
        .header("ETag", etag)
        .header("Cache-Control", "no-cache");
    if let Some(lm) = last_modified {
        head.header("Last-Modified", lm);
    }
    Reply {
        head,
        body: Body::File {
            file,
            start,
            len: count,
        },
    }
}

/// Opens a regular file, or a directory's index file if one is configured; returns the
/// path actually opened.
async fn open_file(path: PathBuf, index: Option<&str>) -> Option<(PathBuf, File, Metadata)> {
    let file = File::open(&path).await.ok()?;
    let meta = file.metadata().await.ok()?;
    if meta.is_file() {
        return Some((path, file, meta));
    }
    let index = index?;
    if !meta.is_dir() {
        return None;
    }
    let path = path.join(index);
    let file = File::open(&path).await.ok()?;
    let meta = file.metadata().await.ok()?;
    meta.is_file().then_some((path, file, meta))
}

/// Answers a request that could not be handled, then the connection closes.
async fn send_error(
    stream: &mut TcpStream,
    shared: &Shared,
    req: Option<&Request>,
    err: HeadError,
) -> io::Result<Next> {
    let reply = Reply::text(err.status, err.reason);
    send(stream, shared, req, reply, false, None).await
}

/// Adds the common headers, records the request, writes head and body.
async fn send(
    stream: &mut TcpStream,
    shared: &Shared,
    req: Option<&Request>,
    mut reply: Reply,
    keep_alive: bool,
    truncate: Option<u64>,
) -> io::Result<Next> {
    let is_head = req.is_some_and(|r| r.method == "HEAD");
    let head = &mut reply.head;
    head.header("Date", http_date(std::time::SystemTime::now()))
        .header("Server", "dar-serve")
        .header("Access-Control-Allow-Origin", "*")
        .header("Access-Control-Expose-Headers", EXPOSE_HEADERS);
    if !keep_alive {
        head.header("Connection", "close");
    } else if req.is_some_and(|r| r.version == Version::Http10) {
        head.header("Connection", "keep-alive");
    }
    record(shared, req, &reply);

    let mut out = reply.head.to_bytes();
    let mut next = if keep_alive {
        Next::KeepAlive
    } else {
        Next::Close
    };
    match reply.body {
        Body::Empty => stream.write_all(&out).await?,
        Body::Text(text) => {
            if !is_head {
                shared.stats.add_bytes(text.len() as u64);
                out.extend_from_slice(text.as_bytes());
            }
            stream.write_all(&out).await?;
        }
        Body::File { file, start, len } => {
            if is_head {
                stream.write_all(&out).await?;
            } else {
                let to_send = truncate.map_or(len, |t| t.min(len));
                if to_send < len {
                    next = Next::Close;
                }
                send_file(stream, shared, out, file, start, to_send).await?;
            }
        }
    }
    stream.flush().await?;
    Ok(next)
}

/// Writes the head, then `len` bytes of `file` from `start`; the first chunk goes out with
/// the head in one write.
async fn send_file(
    stream: &mut TcpStream,
    shared: &Shared,
    mut out: Vec<u8>,
    mut file: File,
    start: u64,
    len: u64,
) -> io::Result<()> {
    if start > 0 {
        file.seek(io::SeekFrom::Start(start)).await?;
    }
    let mut left = len;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        if left == 0 {
            if !out.is_empty() {
                stream.write_all(&out).await?;
            }
            return Ok(());
        }
        let want = CHUNK.min(usize::try_from(left).unwrap_or(CHUNK));
        let n = file.read(&mut chunk[..want]).await?;
        if n == 0 {
            // The file shrank under us: the promised length cannot be met.
            if !out.is_empty() {
                stream.write_all(&out).await?;
            }
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        left -= n as u64;
        shared.stats.add_bytes(n as u64);
        out.extend_from_slice(&chunk[..n]);
        stream.write_all(&out).await?;
        out.clear();
    }
}

/// Logs the request in the stats (and on stderr if asked) before anything is written.
fn record(shared: &Shared, req: Option<&Request>, reply: &Reply) {
    let status = reply.head.status;
    let (method, path, range) = match req {
        Some(r) => (
            r.method.clone(),
            raw_path(&r.target).to_string(),
            r.header("range").map(str::to_string),
        ),
        None => ("-".to_string(), "-".to_string(), None),
    };
    if shared.config.log_requests {
        let len = reply.head.get("Content-Length").unwrap_or("-");
        // What a client sent is printed with its control characters escaped.
        let range_note = range
            .as_deref()
            .map(|r| format!(" [{}]", r.escape_debug()))
            .unwrap_or_default();
        let (method, path) = (method.escape_debug(), path.escape_debug());
        eprintln!("{method} {path}{range_note} -> {status} ({len} bytes)");
    }
    shared.stats.record(RequestRecord {
        method,
        path,
        range,
        status,
    });
}
