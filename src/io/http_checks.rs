//! What every native HTTP request (the http(s) and S3 stores) goes through between
//! object_store and reqwest: checks that object_store does not make, and an idle timeout in
//! place of a limit on the whole request.
//!
//! - **Idle timeout.** A request fails when no byte of its answer (status line and headers,
//!   or the next piece of the body) comes for `idle_timeout` (default 30 s). A slow link
//!   that keeps bytes flowing is never cut off, however large the range; a server that
//!   stops answering is. (A limit on the whole request, object_store's `timeout`, is off
//!   unless the storage options set it.) An idle timeout is retried like a network error.
//! - **A `206` to a request for the whole object** is refused: object_store takes the body
//!   as the whole object whatever the status, so a commit cut short by such a server would
//!   be read as a shorter commit, with rows missing.
//! - **An answer without `Content-Length`** (chunked, or HTTP/1.0 ending at the close) to a
//!   `GET` is read to its end and given the length it has: object_store refuses such
//!   answers, which are legal HTTP. It is read only up to what was asked for: a `206`
//!   longer than its range, or a whole object past [`MAX_WHOLE_ANSWER_BYTES`], is an error
//!   as soon as the extra byte comes (a server that never ends its body would otherwise
//!   fill memory, since bytes that keep coming never trip the idle timeout). A whole
//!   object whose `Content-Length` is past that bound is refused before its body is read.
//! - **A `200` with the whole object to a range request** (a server that ignores `Range`)
//!   is cut to the range here when the object is at most `whole_for_range` bytes, and
//!   handed on as the `206` asked for: object_store refuses the `200`, and the store then
//!   fetched the whole object a second time to cut it.
//! - **A compressed answer** (`Content-Encoding` other than `identity`, though every request
//!   asks for the bytes as stored) is refused with the encoding named: it read as a short
//!   body, or as a commit that is not JSON.
//! - **A server that closes every connection** (`HTTP/1.0`, `Connection: close`) is sent
//!   only a few requests at once from its first such answer on (see [`ClosingServer`]).
//! - **The table URL's query string** (`https://host/t/?token=…`, a shared signature or
//!   access token) goes on every request, as the browser package sends it: object_store's
//!   HTTP store keeps only the path. Errors never show it (see `error::redact`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, ETAG, RANGE};
use http::uri::PathAndQuery;
use http::{HeaderValue, Method, StatusCode, Uri};
use http_body::{Body, Frame, SizeHint};
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;
use tokio::sync::OwnedSemaphorePermit;

use super::closing_server::ClosingServer;

/// Largest answer read for a request without `Range`: 1 GiB. Such requests fetch commit
/// files and `_last_checkpoint` (data files and deletion vectors are read in ranges of the
/// sizes the log gives); the largest real commits (an `add` with statistics for each of
/// 100,000 files) are a few hundred MiB.
pub(crate) const MAX_WHOLE_ANSWER_BYTES: u64 = 1 << 30;

/// The most bytes of log answers one store holds while they are read, over all its requests
/// at once: a load reads many commits together (up to its log concurrency), and a server
/// answering each with an endless body would otherwise hold up to
/// [`MAX_WHOLE_ANSWER_BYTES`] per request.
pub(crate) const MAX_LOG_BYTES_IN_FLIGHT: u64 = 2 << 30;

/// The longest line a log answer may hold, checked as its body comes: the log layer's own
/// bound on a line, which it can check only once the whole body is read (a body of one
/// endless line was read to 1 GiB).
const MAX_LOG_LINE_BYTES: u64 = crate::limits::MAX_LOG_LINE_BYTES as u64;

/// The largest `_last_checkpoint` read: a few hundred bytes, or a few MiB with a v2
/// checkpoint's actions and a wide schema in it.
const MAX_LAST_CHECKPOINT_BYTES: u64 = 64 << 20;

/// Makes reqwest clients whose requests go through [`Checked`].
#[derive(Clone)]
pub(crate) struct CheckedConnector {
    pub idle: Duration,
    /// The query string of the table's URL, added to every request.
    pub query: Option<Arc<str>>,
    /// The largest whole object cut to the range asked for when a server ignores `Range`
    /// (0: none, the `200` is handed on).
    pub whole_for_range: u64,
    /// Write each `+` of a request's path as `%2B` (the plain HTTP store only: the cloud
    /// stores sign their paths, and encode `+` themselves).
    pub encode_plus: bool,
    /// Bytes of log answers being read, by every client of the store (see
    /// [`MAX_LOG_BYTES_IN_FLIGHT`]).
    pub log_bytes: Arc<AtomicU64>,
    /// Whether the server closes its connections, for every client of the store.
    pub closing: Arc<ClosingServer>,
}

impl fmt::Debug for CheckedConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The query may hold a secret.
        f.debug_struct("CheckedConnector")
            .field("idle", &self.idle)
            .field("query", &self.query.as_ref().map(|_| "[redacted]"))
            .field("whole_for_range", &self.whole_for_range)
            .field("encode_plus", &self.encode_plus)
            .finish()
    }
}

impl HttpConnector for CheckedConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(Checked {
            inner,
            idle: self.idle,
            query: self.query.clone(),
            whole_for_range: self.whole_for_range,
            encode_plus: self.encode_plus,
            log_bytes: Arc::clone(&self.log_bytes),
            closing: Arc::clone(&self.closing),
        }))
    }
}

/// An HTTP client with the module's checks.
struct Checked {
    inner: HttpClient,
    idle: Duration,
    query: Option<Arc<str>>,
    whole_for_range: u64,
    encode_plus: bool,
    log_bytes: Arc<AtomicU64>,
    closing: Arc<ClosingServer>,
}

impl fmt::Debug for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checked").field("idle", &self.idle).finish()
    }
}

/// `uri` with `query` added to its own.
fn with_query(uri: &Uri, query: &str) -> Option<Uri> {
    let joined = match uri.query() {
        Some(own) if !own.is_empty() => format!("{}?{own}&{query}", uri.path()),
        _ => format!("{}?{query}", uri.path()),
    };
    with_path_and_query(uri, joined)
}

/// `uri` with its path and query replaced by `joined` (`path?query`).
fn with_path_and_query(uri: &Uri, joined: String) -> Option<Uri> {
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(PathAndQuery::try_from(joined).ok()?);
    Uri::from_parts(parts).ok()
}

/// Why a request failed here.
#[derive(Debug, thiserror::Error)]
enum CheckFailed {
    #[error(
        "no byte of the answer came for {} (storage option idle_timeout)",
        humantime::format_duration(*.0)
    )]
    Idle(Duration),
    #[error(
        "the server answered 206 Partial Content to a request for the whole object (no \
         Range was asked for): its body may be only part of the object"
    )]
    PartialForWhole,
    #[error("the answer is longer than the {0} bytes asked for")]
    LongerThanAsked(u64),
    #[error(
        "the answer is longer than {0} bytes, the most read for a log file (a server that \
         answers a missing file with an endless page?)"
    )]
    WholeTooLong(u64),
    #[error(
        "the server sent the bytes compressed (Content-Encoding: {0}) though they were asked \
         for as stored (Accept-Encoding: identity): neither a byte range nor a size from the \
         log fits a compressed body; serve the files without compression"
    )]
    Encoded(String),
    #[error(
        "a line of the log file is longer than {0} bytes, the most a log line may be (a \
         server that answers with an endless body?)"
    )]
    LineTooLong(u64),
    #[error(
        "the log files being read at once hold more than {0} bytes (a server that answers \
         with endless bodies?)"
    )]
    LogBytesInFlight(u64),
    #[error(
        "the server's TLS certificate was refused ({0}); not retried: a certificate does not \
         change between tries (to trust a private CA, name its PEM file in SSL_CERT_FILE)"
    )]
    Certificate(String),
}

/// A connection refused for the server's TLS certificate (unknown issuer, expired, another
/// name), which object_store would retry as a connection error for minutes: an error it
/// does not retry. Other errors pass unchanged.
fn certificate_is_final(e: HttpError) -> HttpError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    let mut certificate = None;
    while let Some(c) = cause {
        let text = c.to_string();
        if text.to_ascii_lowercase().contains("certificate") {
            certificate = Some(text);
        }
        cause = c.source();
    }
    match certificate {
        Some(text) => HttpError::new(HttpErrorKind::Unknown, CheckFailed::Certificate(text)),
        None => e,
    }
}

// The trait is declared with `async_trait`; its method written out by hand.
impl HttpService for Checked {
    fn call<'a, 'b>(
        &'a self,
        req: HttpRequest,
    ) -> Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(self.checked_call(req))
    }
}

impl Checked {
    async fn checked_call(&self, mut req: HttpRequest) -> Result<HttpResponse, HttpError> {
        if let Some(uri) = self.query.as_deref().and_then(|q| with_query(req.uri(), q)) {
            *req.uri_mut() = uri;
        }
        if let Some(uri) = with_plus_encoded(req.uri()).filter(|_| self.encode_plus) {
            *req.uri_mut() = uri;
        }
        // Bytes as stored: without it a server may compress (no Accept-Encoding means any
        // coding is acceptable), and neither a range nor a size from the log fits a
        // compressed body.
        req.headers_mut()
            .entry(ACCEPT_ENCODING)
            .or_insert(HeaderValue::from_static("identity"));
        let ranged = req.headers().contains_key(RANGE);
        // A log answer: the most bytes it may have.
        let log_text = {
            let path = req.uri().path();
            if ranged {
                None
            } else if path.ends_with("_last_checkpoint") {
                Some(MAX_LAST_CHECKPOINT_BYTES)
            } else if path.ends_with(".json") {
                Some(MAX_WHOLE_ANSWER_BYTES)
            } else {
                None
            }
        };
        let asked = req
            .headers()
            .get(RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(byte_range);
        let get = req.method() == Method::GET;
        let place = self.closing.place().await;
        let answer = tokio::time::timeout(self.idle, self.inner.execute(req))
            .await
            .map_err(|_| idle_error(self.idle))?
            .map_err(certificate_is_final)?;
        let (mut parts, body) = answer.into_parts();
        self.closing.note_answer(parts.version, &parts.headers);
        let encoding = parts
            .headers
            .get(CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"));
        if let Some(encoding) = encoding.filter(|_| get && parts.status.is_success()) {
            return Err(HttpError::new(
                HttpErrorKind::Decode,
                CheckFailed::Encoded(encoding.to_string()),
            ));
        }
        if !ranged && parts.status == StatusCode::PARTIAL_CONTENT {
            return Err(HttpError::new(
                HttpErrorKind::Decode,
                CheckFailed::PartialForWhole,
            ));
        }
        // object_store resumes a `GET`'s body cut short when its answer has an `ETag`.
        let resumed = get && parts.headers.contains_key(ETAG);
        let body = HttpResponseBody::new(IdleBody::new(body, self.idle, resumed, place));
        let whole_len = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(cap) = log_text.filter(|_| get && parts.status == StatusCode::OK) {
            if whole_len.is_some_and(|len| len > cap) {
                return Err(HttpError::new(
                    HttpErrorKind::Decode,
                    CheckFailed::WholeTooLong(cap),
                ));
            }
            let text = log_text_at_most(body, cap, whole_len, &self.log_bytes).await?;
            parts
                .headers
                .insert(CONTENT_LENGTH, HeaderValue::from(text.len()));
            return Ok(HttpResponse::from_parts(parts, text.into()));
        }
        if let (true, StatusCode::OK, Some(asked), Some(len)) =
            (get, parts.status, asked, whole_len)
        {
            if len <= self.whole_for_range {
                return cut_to_range(parts, body.bytes().await?, asked);
            }
        }
        // What this answer may hold: the range asked for in a `206`, else a whole object.
        let cap = match (parts.status, asked) {
            (StatusCode::PARTIAL_CONTENT, Some((start, Some(last)))) => {
                last.saturating_sub(start).saturating_add(1)
            }
            _ => MAX_WHOLE_ANSWER_BYTES,
        };
        if get && parts.status.is_success() {
            match whole_len {
                Some(len) if len > cap => {
                    return Err(HttpError::new(
                        HttpErrorKind::Decode,
                        CheckFailed::LongerThanAsked(cap),
                    ))
                }
                Some(_) => {}
                None => {
                    let whole = bytes_at_most(body, cap).await?;
                    if let (StatusCode::OK, Some(asked)) = (parts.status, asked) {
                        if whole.len() as u64 <= self.whole_for_range {
                            return cut_to_range(parts, whole, asked);
                        }
                    }
                    parts
                        .headers
                        .insert(CONTENT_LENGTH, HeaderValue::from(whole.len()));
                    return Ok(HttpResponse::from_parts(parts, whole.into()));
                }
            }
        }
        Ok(HttpResponse::from_parts(parts, body))
    }
}

/// `uri` with each `+` of its path written `%2B`: S3 and some other servers read a `+` in a
/// path as a space, so a file whose name holds one (a partition value) was not found. The
/// two spellings are the same path to every other server.
fn with_plus_encoded(uri: &Uri) -> Option<Uri> {
    let path = uri.path();
    if !path.contains('+') {
        return None;
    }
    let path = path.replace('+', "%2B");
    let joined = match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path,
    };
    with_path_and_query(uri, joined)
}

/// The whole of a body, or [`CheckFailed::LongerThanAsked`] once it passes `cap` bytes.
async fn bytes_at_most(body: HttpResponseBody, cap: u64) -> Result<Bytes, HttpError> {
    let mut pieces = body.bytes_stream();
    let mut whole = bytes::BytesMut::new();
    while let Some(piece) = pieces.next().await {
        let piece = piece?;
        if (whole.len() as u64).saturating_add(piece.len() as u64) > cap {
            return Err(HttpError::new(
                HttpErrorKind::Decode,
                CheckFailed::LongerThanAsked(cap),
            ));
        }
        whole.extend_from_slice(&piece);
    }
    Ok(whole.freeze())
}

/// The whole of a log answer's body (JSON lines), or an error as soon as it passes `cap`
/// bytes, holds a line longer than [`MAX_LOG_LINE_BYTES`], or would take the store's log
/// answers being read (`held`) past [`MAX_LOG_BYTES_IN_FLIGHT`]; `declared` (its
/// `Content-Length`) sizes the first allocation only, up to 64 MiB. A body whose first byte
/// other than white space is `<` (an HTML page: a host that answers every path with its
/// index page) is not read past the pieces that show it, which are returned for the log's
/// parser to refuse as it does any HTML: read to its end, a large or endless page took
/// gigabytes (several commits are fetched at once).
async fn log_text_at_most(
    body: HttpResponseBody,
    cap: u64,
    declared: Option<u64>,
    held: &AtomicU64,
) -> Result<Bytes, HttpError> {
    let failed = |why| Err(HttpError::new(HttpErrorKind::Decode, why));
    let mut pieces = body.bytes_stream();
    let hint = declared.unwrap_or(0).min(64 << 20);
    let mut whole = bytes::BytesMut::with_capacity(usize::try_from(hint).unwrap_or(0));
    let mut counted = Held { held, bytes: 0 };
    // Where the line being read starts.
    let mut line_start = 0usize;
    while let Some(piece) = pieces.next().await {
        let piece = piece?;
        if (whole.len() as u64).saturating_add(piece.len() as u64) > cap {
            return failed(CheckFailed::WholeTooLong(cap));
        }
        if !counted.add(piece.len() as u64) {
            return failed(CheckFailed::LogBytesInFlight(MAX_LOG_BYTES_IN_FLIGHT));
        }
        if let Some(last) = piece.iter().rposition(|&b| b == b'\n') {
            line_start = whole.len() + last + 1;
        }
        whole.extend_from_slice(&piece);
        if (whole.len() - line_start) as u64 > MAX_LOG_LINE_BYTES {
            return failed(CheckFailed::LineTooLong(MAX_LOG_LINE_BYTES));
        }
        if super::starts_as_markup(&whole) {
            break;
        }
    }
    Ok(whole.freeze())
}

/// Bytes one log answer adds to its store's count while it is read; taken off when dropped
/// (the answer read, failed or abandoned).
struct Held<'a> {
    held: &'a AtomicU64,
    bytes: u64,
}

impl Held<'_> {
    /// Counts `n` more bytes; `false` (nothing counted) when that takes the store's count past
    /// [`MAX_LOG_BYTES_IN_FLIGHT`].
    fn add(&mut self, n: u64) -> bool {
        let before = self.held.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > MAX_LOG_BYTES_IN_FLIGHT {
            self.held.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        self.bytes += n;
        true
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.held.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A `Range` header's single byte range: `(start, last)` of `bytes=start-last` or
/// `bytes=start-` (to the end); `None` for anything else (suffixes, several ranges).
fn byte_range(header: &str) -> Option<(u64, Option<u64>)> {
    let (start, last) = header.trim().strip_prefix("bytes=")?.split_once('-')?;
    let start = start.trim().parse().ok()?;
    let last = match last.trim() {
        "" => None,
        text => Some(text.parse().ok()?),
    };
    Some((start, last))
}

/// The `206` answer for `asked` cut out of `whole` (a `200` answer's body, `parts` its
/// head); `416` when the range starts past the end.
fn cut_to_range(
    mut parts: http::response::Parts,
    whole: Bytes,
    (start, last): (u64, Option<u64>),
) -> Result<HttpResponse, HttpError> {
    let total = whole.len() as u64;
    if start >= total {
        parts.status = StatusCode::RANGE_NOT_SATISFIABLE;
        parts.headers.insert(CONTENT_LENGTH, HeaderValue::from(0));
        return Ok(HttpResponse::from_parts(parts, Bytes::new().into()));
    }
    let end = last.map_or(total, |l| l.saturating_add(1).min(total));
    // Both ends are within `whole`, whose length fits in usize.
    let cut = whole.slice(start as usize..end as usize);
    let content_range = format!("bytes {start}-{}/{total}", end - 1);
    parts.status = StatusCode::PARTIAL_CONTENT;
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(cut.len()));
    if let Ok(value) = HeaderValue::try_from(content_range) {
        parts.headers.insert(http::header::CONTENT_RANGE, value);
    }
    Ok(HttpResponse::from_parts(parts, cut.into()))
}

fn idle_error(idle: Duration) -> HttpError {
    HttpError::new(HttpErrorKind::Timeout, CheckFailed::Idle(idle))
}

/// A body that fails once no frame has come for `idle`. The timer is not moved on each
/// frame (a body of many small frames would touch the timer wheel for each): when it fires,
/// it is set again from the last frame's time if one came since.
struct IdleBody {
    inner: HttpResponseBody,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    last_frame: tokio::time::Instant,
    failed: bool,
    /// Whether object_store resumes this body when it is cut (see [`ResumedByStore`]).
    resumed: bool,
    /// The request's place at a server that closes its connections (see
    /// [`ClosingServer`]): the connection lives until the body is read.
    _place: Option<OwnedSemaphorePermit>,
}

impl IdleBody {
    fn new(
        inner: HttpResponseBody,
        idle: Duration,
        resumed: bool,
        place: Option<OwnedSemaphorePermit>,
    ) -> Self {
        IdleBody {
            inner,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            last_frame: tokio::time::Instant::now(),
            failed: false,
            resumed,
            _place: place,
        }
    }

    /// `frame`, its error marked [`ResumedByStore`] when object_store resumes this body.
    fn marked(
        &self,
        frame: Option<Result<Frame<Bytes>, HttpError>>,
    ) -> Option<Result<Frame<Bytes>, HttpError>> {
        match frame {
            Some(Err(e)) if self.resumed => Some(Err(HttpError::new(e.kind(), ResumedByStore(e)))),
            other => other,
        }
    }
}

/// A body error of an answer that object_store resumes itself (it has an `ETag`): by the
/// time the read fails with it, the store's own retries of the body are spent, so the read
/// is not asked for again on top of them (see `ObjectStoreRange::asking_again`: the two
/// together asked for a body that was always cut about 121 times). Shows as the error it
/// marks.
#[derive(Debug)]
pub(crate) struct ResumedByStore(HttpError);

impl fmt::Display for ResumedByStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::error::Error::source(&self.0) {
            Some(cause) => write!(f, "{cause}"),
            None => write!(f, "{}", self.0),
        }
    }
}

impl std::error::Error for ResumedByStore {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0).and_then(std::error::Error::source)
    }
}

impl Body for IdleBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            self.last_frame = tokio::time::Instant::now();
            return Poll::Ready(self.marked(frame));
        }
        loop {
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let deadline = self.last_frame + self.idle;
            if deadline <= tokio::time::Instant::now() {
                self.failed = true;
                return Poll::Ready(Some(Err(idle_error(self.idle))));
            }
            // A frame came since the timer was set: wait out the rest from it.
            self.timer.as_mut().reset(deadline);
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`log_text_at_most`] of `body`, with `held` bytes of other log answers being read.
    fn log_text(body: Vec<u8>, held: &AtomicU64) -> Result<Bytes, String> {
        futures::executor::block_on(log_text_at_most(
            body.into(),
            MAX_WHOLE_ANSWER_BYTES,
            None,
            held,
        ))
        .map_err(|e| format!("{e} {:?}", std::error::Error::source(&e)))
    }

    #[test]
    fn log_answers_are_bounded_by_line_and_by_what_the_store_reads_at_once() {
        let held = AtomicU64::new(0);
        let line = MAX_LOG_LINE_BYTES as usize;
        // Lines up to the bound, together past it: read.
        let mut lines = vec![b'x'; line];
        lines.push(b'\n');
        lines.extend(std::iter::repeat_n(b'y', line / 2));
        let read = log_text(lines, &held).map(|b| b.len());
        assert_eq!(read, Ok(line + 1 + line / 2));
        assert_eq!(held.load(Ordering::Relaxed), 0, "nothing left counted");
        // One line past the bound (a body of one endless line): refused.
        let err = log_text(vec![b'{'; line + 1], &held)
            .err()
            .unwrap_or_default();
        assert!(err.contains("longer than 67108864 bytes"), "{err}");
        assert_eq!(held.load(Ordering::Relaxed), 0);
        // Other answers hold nearly all a store may: a small one more is refused, and the
        // count is left as it was.
        held.store(MAX_LOG_BYTES_IN_FLIGHT - 10, Ordering::Relaxed);
        let err = log_text(vec![b'{'; 100], &held).err().unwrap_or_default();
        assert!(err.contains("being read at once"), "{err}");
        assert_eq!(held.load(Ordering::Relaxed), MAX_LOG_BYTES_IN_FLIGHT - 10);
        assert!(log_text(vec![b'{'; 10], &held).is_ok());
    }

    #[test]
    fn a_refused_certificate_is_not_retried_other_connect_errors_are() {
        let refused = std::io::Error::other("invalid peer certificate: UnknownIssuer");
        let e = certificate_is_final(HttpError::new(HttpErrorKind::Connect, refused));
        assert_eq!(e.kind(), HttpErrorKind::Unknown);
        assert!(e.to_string().contains("UnknownIssuer"), "{e}");
        assert!(e.to_string().contains("SSL_CERT_FILE"), "{e}");
        let reset = std::io::Error::other("connection reset by peer");
        let e = certificate_is_final(HttpError::new(HttpErrorKind::Connect, reset));
        assert_eq!(e.kind(), HttpErrorKind::Connect);
    }

    #[test]
    fn range_headers_are_read() {
        assert_eq!(byte_range("bytes=5-9"), Some((5, Some(9))));
        assert_eq!(byte_range("bytes=5-"), Some((5, None)));
        assert_eq!(byte_range("bytes=-5"), None);
        assert_eq!(byte_range("bytes=1-2,4-5"), None);
        assert_eq!(byte_range("items=1-2"), None);
    }

    #[test]
    fn the_query_is_added_to_each_request() {
        let uri = |s: &str| Uri::try_from(s).unwrap_or_else(|e| panic!("{e}"));
        let got = with_query(&uri("http://h:1/t/_delta_log/0.json"), "token=a%2Fb&x=1");
        assert_eq!(
            got,
            Some(uri("http://h:1/t/_delta_log/0.json?token=a%2Fb&x=1"))
        );
        let got = with_query(&uri("http://h/t/p?list-type=2"), "sig=1");
        assert_eq!(got, Some(uri("http://h/t/p?list-type=2&sig=1")));
    }

    #[test]
    fn a_plus_in_a_path_is_written_percent_encoded() {
        let uri = |s: &str| Uri::try_from(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            with_plus_encoded(&uri("http://h/t/c=a+b%20c/f.parquet?x=1+2")),
            Some(uri("http://h/t/c=a%2Bb%20c/f.parquet?x=1+2"))
        );
        assert_eq!(with_plus_encoded(&uri("http://h/t/c=a%2Bb/f")), None);
    }
}
