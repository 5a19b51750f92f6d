//! Answering one request: latency, faults, CORS, the file, and the record of it.
//!
//! tower-http does the HTTP work: [`CorsLayer`] answers preflights and adds the CORS
//! headers, [`ServeFile`] sends a file whole or as one byte range (206, 416), answers `HEAD`,
//! sets `Content-Type`, `Last-Modified` and `Accept-Ranges`. What is ours: finding the file
//! (see `path`), the faults, a `Range` header that tower-http would refuse but HTTP says to
//! ignore (another unit, several ranges, bad syntax, an `If-Range` other than the file's
//! current entity tag) is dropped so the whole file goes out with 200, and the request is
//! recorded before hyper writes the response head.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tower::{Layer, ServiceExt};
use tower_http::cors::{AllowHeaders, Any, CorsLayer};
use tower_http::services::ServeFile;

use super::body::{Inner, Metered};
use super::config::{MemoryFile, ServeConfig};
use super::faults::{Decision, FaultState};
use super::path::{segments, Lookup, Resolver};
use super::progress::LastProgress;
use super::stats::{RequestRecord, ServeStats};

/// What every connection of one server shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: ServeConfig,
    pub resolver: Resolver,
    pub faults: FaultState,
    pub stats: ServeStats,
    pub cors: CorsLayer,
    /// The lines of `--log`, when on.
    pub log: Option<super::request_log::RequestLog>,
    /// `_last_checkpoint` hints computed for log folders.
    pub hints: super::checkpoint_hint::HintCache,
}

impl Shared {
    pub(crate) fn new(config: ServeConfig) -> io::Result<Self> {
        Ok(Shared {
            resolver: Resolver::new(&config)?,
            faults: FaultState::new(config.faults.clone()),
            stats: ServeStats::default(),
            cors: cors(),
            log: if config.log_requests {
                Some(super::request_log::RequestLog::to_stderr()?)
            } else {
                None
            },
            hints: super::checkpoint_hint::HintCache::default(),
            config,
        })
    }
}

/// CORS for pages on any origin: `*`, preflights cached 10 minutes, the headers a reader
/// of ranges needs exposed.
fn cors() -> CorsLayer {
    use header::{
        ACCEPT_RANGES, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, DATE, ETAG, LAST_MODIFIED,
    };
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::HEAD, Method::OPTIONS])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([
            CONTENT_RANGE,
            CONTENT_LENGTH,
            CONTENT_TYPE,
            LAST_MODIFIED,
            ACCEPT_RANGES,
            DATE,
            ETAG,
        ])
        .max_age(Duration::from_secs(600))
        .allow_private_network(true)
}

/// Answers one request (hyper's service).
///
/// Fails only for the `reset_first` fault: hyper then closes the connection unanswered.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    progress: LastProgress,
) -> Result<Response<Metered>, io::Error> {
    if !shared.config.latency.is_zero() {
        // The delay is ours, not the client's idling: the connection stays open through it.
        let _held = progress.hold();
        tokio::time::sleep(shared.config.latency).await;
    }
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let range = req
        .headers()
        .get(header::RANGE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let decision = shared.faults.decide(method.as_str(), &path);
    if decision.reset {
        shared.stats.record(RequestRecord {
            method: method.to_string(),
            path,
            range,
            status: 0,
        });
        return Err(io::Error::other("connection reset (injected fault)"));
    }
    let inner = {
        let shared = Arc::clone(&shared);
        tower::service_fn(move |req| answer(Arc::clone(&shared), decision, req))
    };
    let cross_origin = shared.config.cross_origin;
    let refused = !loopback_host(&req);
    let Ok(mut resp) = if refused {
        Ok(text(
            StatusCode::FORBIDDEN,
            "this server answers requests for 127.0.0.1 or localhost only\n",
        ))
    } else if cross_origin {
        shared.cors.layer(inner).oneshot(req).await
    } else {
        inner.oneshot(req).await
    };
    if method == Method::OPTIONS && cross_origin && !refused {
        *resp.status_mut() = StatusCode::NO_CONTENT;
    }
    record(&shared, &method, path, range, &resp);
    let cut = resp.status().is_success() && method == Method::GET;
    let truncate = decision.truncate.filter(|_| cut);
    let slow = decision.slow.filter(|_| method == Method::GET);
    Ok(resp.map(|body| Metered::new(body, shared.stats.clone(), truncate, slow)))
}

/// Whether the request names this server by a loopback name: in its one `Host` (or none, as
/// an HTTP/1.0 client may send) and in its target when that is a whole URL. The
/// server listens on 127.0.0.1 only; a page of another site that has its own name resolve to
/// 127.0.0.1 (DNS rebinding) sends its own name, and is refused.
fn loopback_host<B>(req: &Request<B>) -> bool {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let (host, another) = (hosts.next(), hosts.next());
    if another.is_some() {
        return false;
    }
    if let Some(target) = req
        .uri()
        .authority()
        .filter(|_| req.uri().scheme().is_some())
    {
        if !loopback_name(target.as_str()) {
            return false;
        }
    }
    match host {
        None => true,
        Some(host) => host.to_str().is_ok_and(loopback_name),
    }
}

/// Whether `host` (`name[:port]`) is a loopback name or address.
fn loopback_name(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name == "[::1]"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The answer to anything but a preflight.
async fn answer(
    shared: Arc<Shared>,
    decision: Decision,
    req: Request<Incoming>,
) -> Result<Response<Inner>, Infallible> {
    let method = req.method();
    if method != Method::GET && method != Method::HEAD {
        let mut resp = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        let allow = HeaderValue::from_static("GET, HEAD, OPTIONS");
        resp.headers_mut().insert(header::ALLOW, allow);
        return Ok(resp);
    }
    if let Some(status) = decision.fail {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
        let mut resp = text(status, "injected failure\n");
        let zero = HeaderValue::from_static("0");
        resp.headers_mut().insert(header::RETRY_AFTER, zero);
        return Ok(resp);
    }
    let Some(segments) = segments(req.uri().path()) else {
        return Ok(text(StatusCode::BAD_REQUEST, "bad request path\n"));
    };
    // Hidden files and folders (`.env`, `.git/`, Hadoop's `.crc` files) are never a table's:
    // not served, so that a page on any origin cannot read them while the server runs.
    if segments.iter().any(|s| s.starts_with('.')) {
        return Ok(text(StatusCode::NOT_FOUND, "not found\n"));
    }
    match memory_file(&shared.config, req.uri().path(), &segments) {
        Some(MemoryHit::Index(_)) if !req.uri().path().ends_with('/') => {
            return Ok(to_directory(req.uri()))
        }
        Some(MemoryHit::File(file) | MemoryHit::Index(file)) => {
            return Ok(memory_answer(file, method == Method::HEAD))
        }
        None => {}
    }
    let mut found = shared.resolver.lookup(&segments).await;
    let fallback = shared.config.faults.missing_file_fallback.as_deref();
    if let (Lookup::Missing, Some(fallback)) = (&found, fallback.and_then(super::path::segments)) {
        found = shared.resolver.lookup(&fallback).await;
    }
    let file = match found {
        Lookup::File(file) => file,
        Lookup::Index(_) if !req.uri().path().ends_with('/') => return Ok(to_directory(req.uri())),
        Lookup::Index(file) => file,
        Lookup::Missing => {
            if shared.config.checkpoint_hints && super::checkpoint_hint::names_hint(&segments) {
                let log = &segments[..segments.len() - 1];
                if let Some(dir) = shared.resolver.directory(log).await {
                    if let Some(json) = shared.hints.hint(dir).await {
                        return Ok(hint_answer(json, method == Method::HEAD));
                    }
                }
            }
            return Ok(text(StatusCode::NOT_FOUND, "not found\n"));
        }
        Lookup::Refused => return Ok(text(StatusCode::FORBIDDEN, "forbidden\n")),
    };
    let (mut parts, body) = req.into_parts();
    let meta = tokio::fs::metadata(&file).await.ok();
    let etag = meta.as_ref().and_then(entity_tag);
    if let Some(resp) = preconditions(&mut parts.headers, etag.as_ref()) {
        return Ok(resp);
    }
    if let Some(len) = meta.as_ref().map(std::fs::Metadata::len) {
        if empty_suffix(&parts.headers) {
            // `bytes=-0`: the last 0 bytes, a range no byte satisfies.
            let mut resp = text(StatusCode::RANGE_NOT_SATISFIABLE, "");
            if let Ok(all) = HeaderValue::from_str(&format!("bytes */{len}")) {
                resp.headers_mut().insert(header::CONTENT_RANGE, all);
            }
            return Ok(resp);
        }
        whole_for_long_suffix(&mut parts.headers, len);
    }
    let usable_range = parts
        .headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.contains(',') && http_range_header::parse_range_header(v).is_ok());
    // `If-Range` keeps the range only when it names the file as it is now: our strong entity
    // tag (a browser resuming a cached part sends it). A date, or another tag, gets the
    // whole file, which is always correct.
    let if_range_ok = parts.headers.get(header::IF_RANGE).is_none_or(|v| {
        etag.as_ref()
            .is_some_and(|tag| tag.as_bytes() == v.as_bytes())
    });
    if decision.ignore_range || !usable_range || !if_range_ok {
        parts.headers.remove(header::RANGE);
    } else if decision.shift_range {
        shift_range(&mut parts.headers);
    }
    parts.headers.remove(header::IF_RANGE);
    let req = Request::from_parts(parts, body);
    let Ok(resp) = ServeFile::new(file).oneshot(req).await;
    let mut resp = resp.map(|body| body.boxed_unsync());
    let tagged = resp.status().is_success() || resp.status() == StatusCode::NOT_MODIFIED;
    if let Some(tag) = etag.filter(|_| tagged) {
        resp.headers_mut().insert(header::ETAG, tag);
    }
    if is_empty_partial(&resp) {
        // tower-http answers a range of an empty file `206` with `bytes 0-0/0` and no bytes;
        // HTTP says no range of it is satisfiable.
        resp = text(StatusCode::RANGE_NOT_SATISFIABLE, "");
        let all = HeaderValue::from_static("bytes */0");
        resp.headers_mut().insert(header::CONTENT_RANGE, all);
    }
    let headers = resp.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // A file is what its extension says, never sniffed into a page or a script.
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if decision.ignore_range {
        headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("none"));
    }
    Ok(resp)
}

/// What an in-memory lookup found, as [`Lookup`] says it of files on disk.
enum MemoryHit<'a> {
    /// The file the path names.
    File(&'a MemoryFile),
    /// The index file of the directory the path names: served for a path ending in `/`,
    /// a path without it is redirected there.
    Index(&'a MemoryFile),
}

/// The in-memory file a request path names: by its segments, or the index file for a path
/// naming a directory (`/`, `/docs/`, and `/docs` when no file has that name).
fn memory_file<'a>(
    config: &'a ServeConfig,
    raw_path: &str,
    segments: &[String],
) -> Option<MemoryHit<'a>> {
    if config.memory_files.is_empty() {
        return None;
    }
    let joined = segments.join("/");
    let by_name = || config.memory_files.get(&joined).map(MemoryHit::File);
    let index_of = |index: &str| {
        let name = if joined.is_empty() {
            index.to_string()
        } else {
            format!("{joined}/{index}")
        };
        config.memory_files.get(&name).map(MemoryHit::Index)
    };
    let names_directory = segments.is_empty() || raw_path.ends_with('/');
    match (&config.index, names_directory) {
        (Some(index), true) => index_of(index),
        (Some(index), false) => by_name().or_else(|| index_of(index)),
        (None, _) => by_name(),
    }
}

/// A `_last_checkpoint` made from the log folder (`checkpoint_hint`), whole (not cached).
fn hint_answer(json: Vec<u8>, head: bool) -> Response<Inner> {
    let file = MemoryFile {
        bytes: json.into(),
        content_type: "application/json".into(),
    };
    memory_answer(&file, head)
}

/// An in-memory file, whole: its type and length, no body for `HEAD`.
fn memory_answer(file: &MemoryFile, head: bool) -> Response<Inner> {
    let bytes = if head {
        Bytes::new()
    } else {
        file.bytes.clone()
    };
    let body = Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut resp = Response::new(body);
    let headers = resp.headers_mut();
    if let Ok(kind) = HeaderValue::from_str(&file.content_type) {
        headers.insert(header::CONTENT_TYPE, kind);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(file.bytes.len()));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// A strong entity tag of the file as it is now, from its size and modification time (as
/// nginx makes them): a client that lost a body midway asks for the rest with the same tag
/// and is told if the file changed meanwhile. `None` without a modification time.
fn entity_tag(meta: &std::fs::Metadata) -> Option<HeaderValue> {
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let tag = format!(
        "\"{:x}.{:x}-{:x}\"",
        modified.as_secs(),
        modified.subsec_nanos(),
        meta.len()
    );
    HeaderValue::from_str(&tag).ok()
}

/// The entity tags of an `If-Match` or `If-None-Match` header: `None` for `*` (any), else
/// each tag with whether it is weak (`W/"..."`).
fn listed_tags(value: &HeaderValue) -> Option<Vec<(bool, &[u8])>> {
    let text = value.as_bytes().trim_ascii();
    if text == b"*" {
        return None;
    }
    Some(
        text.split(|&b| b == b',')
            .map(<[u8]>::trim_ascii)
            .filter(|t| !t.is_empty())
            .map(|t| match t.strip_prefix(b"W/") {
                Some(opaque) => (true, opaque),
                None => (false, t),
            })
            .collect(),
    )
}

/// The entity-tag preconditions (RFC 9110 §13.2.2), which tower-http leaves out since it
/// makes no tags: `If-Match` that names no current strong tag is `412`; `If-None-Match`
/// that names the current tag (weakly) is `304` for `GET` and `HEAD`. Each one present
/// makes its date counterpart (`If-Unmodified-Since`, `If-Modified-Since`) ignored, as HTTP
/// says, so a file rewritten within the second is not answered `304` by its date.
fn preconditions(
    headers: &mut hyper::HeaderMap,
    etag: Option<&HeaderValue>,
) -> Option<Response<Inner>> {
    let current = etag.map(HeaderValue::as_bytes);
    if let Some(value) = headers.get(header::IF_MATCH) {
        let holds = match listed_tags(value) {
            None => true,
            Some(tags) => tags
                .iter()
                .any(|&(weak, tag)| !weak && Some(tag) == current),
        };
        if !holds {
            return Some(text(StatusCode::PRECONDITION_FAILED, ""));
        }
        headers.remove(header::IF_UNMODIFIED_SINCE);
    }
    if let Some(value) = headers.get(header::IF_NONE_MATCH) {
        let matches = match listed_tags(value) {
            None => true,
            Some(tags) => tags.iter().any(|&(_, tag)| Some(tag) == current),
        };
        if matches {
            let mut resp = text(StatusCode::NOT_MODIFIED, "");
            resp.headers_mut().remove(header::CONTENT_TYPE);
            if let Some(tag) = etag {
                resp.headers_mut().insert(header::ETAG, tag.clone());
            }
            resp.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            return Some(resp);
        }
        headers.remove(header::IF_MODIFIED_SINCE);
    }
    None
}

/// Whether the request asks for a suffix of length 0 (`bytes=-0`).
fn empty_suffix(headers: &hyper::HeaderMap) -> bool {
    headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().strip_prefix("bytes=-"))
        .and_then(|n| n.trim().parse::<u64>().ok())
        == Some(0)
}

/// A suffix range longer than the file (`bytes=-65536` of a 500-byte file) is the whole
/// file as a range (RFC 9110 §14.1.3), which tower-http would refuse with `416`: footer
/// readers ask for a fixed suffix whatever the file's size.
fn whole_for_long_suffix(headers: &mut hyper::HeaderMap, len: u64) {
    let long = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().strip_prefix("bytes=-"))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .is_some_and(|n| n > len && len > 0);
    if long {
        headers.insert(header::RANGE, HeaderValue::from_static("bytes=0-"));
    }
}

/// A path naming a directory without its closing slash, redirected to it (`/www` to
/// `/www/`), query kept.
fn to_directory(uri: &hyper::Uri) -> Response<Inner> {
    let location = match uri.query() {
        Some(q) => format!("{}/?{q}", uri.path()),
        None => format!("{}/", uri.path()),
    };
    let mut resp = text(StatusCode::PERMANENT_REDIRECT, "");
    if let Ok(value) = HeaderValue::from_str(&location) {
        resp.headers_mut().insert(header::LOCATION, value);
    }
    resp
}

/// Moves a `bytes=a-b` range one byte on (`bytes=a+1-b+1`), for the `shift_range` fault;
/// other forms (`bytes=a-`, `bytes=-n`) move their start only.
fn shift_range(headers: &mut hyper::HeaderMap) {
    let Some(spec) = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes="))
    else {
        return;
    };
    let Some((start, end)) = spec.split_once('-') else {
        return;
    };
    let bump = |n: &str| n.trim().parse::<u64>().ok().map(|n| n.saturating_add(1));
    let shifted = match (bump(start), end.trim()) {
        (Some(a), "") => format!("bytes={a}-"),
        (Some(a), end) => match bump(end) {
            Some(b) => format!("bytes={a}-{b}"),
            None => return,
        },
        (None, _) => return,
    };
    if let Ok(value) = HeaderValue::from_str(&shifted) {
        headers.insert(header::RANGE, value);
    }
}

/// A `206` of no bytes: every satisfiable range holds at least one.
fn is_empty_partial(resp: &Response<Inner>) -> bool {
    resp.status() == StatusCode::PARTIAL_CONTENT
        && resp
            .headers()
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() == b"0")
}

/// A short plain-text answer.
fn text(status: StatusCode, text: &'static str) -> Response<Inner> {
    let body = Full::new(Bytes::from_static(text.as_bytes()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    let plain = HeaderValue::from_static("text/plain; charset=utf-8");
    resp.headers_mut().insert(header::CONTENT_TYPE, plain);
    resp
}

/// Counts the request in the stats (and logs it on stderr if asked) before hyper writes
/// anything.
fn record(
    shared: &Shared,
    method: &Method,
    path: String,
    range: Option<String>,
    resp: &Response<Inner>,
) {
    let status = resp.status().as_u16();
    if let Some(log) = &shared.log {
        let len = match resp.headers().get(header::CONTENT_LENGTH) {
            Some(v) => String::from_utf8_lossy(v.as_bytes()).into_owned(),
            None => resp
                .body()
                .size_hint()
                .exact()
                .map_or_else(|| "-".to_string(), |n| n.to_string()),
        };
        // What a client sent is printed with its control characters escaped.
        let range_note = range
            .as_deref()
            .map(|r| format!(" [{}]", r.escape_debug()))
            .unwrap_or_default();
        let (method, path) = (method.as_str().escape_debug(), path.escape_debug());
        log.line(format!(
            "{method} {path}{range_note} -> {status} ({len} bytes)"
        ));
    }
    shared.stats.record(RequestRecord {
        method: method.to_string(),
        path,
        range,
        status,
    });
}
