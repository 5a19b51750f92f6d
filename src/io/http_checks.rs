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
//! - **The table URL's query string** (`https://host/t/?token=…`, a shared signature or
//!   access token) goes on every request, as the browser package sends it: object_store's
//!   HTTP store keeps only the path. Errors never show it (see `error::redact`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::header::{ACCEPT_ENCODING, CONTENT_LENGTH, RANGE};
use http::uri::PathAndQuery;
use http::{HeaderValue, Method, StatusCode, Uri};
use http_body::{Body, Frame, SizeHint};
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;

/// Largest answer read for a request without `Range`: 1 GiB. Such requests fetch commit
/// files and `_last_checkpoint` (data files and deletion vectors are read in ranges of the
/// sizes the log gives); the largest real commits (an `add` with statistics for each of
/// 100,000 files) are a few hundred MiB.
pub(crate) const MAX_WHOLE_ANSWER_BYTES: u64 = 1 << 30;

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
        let log_text = {
            let path = req.uri().path();
            !ranged && (path.ends_with(".json") || path.ends_with("_last_checkpoint"))
        };
        let asked = req
            .headers()
            .get(RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(byte_range);
        let get = req.method() == Method::GET;
        let answer = tokio::time::timeout(self.idle, self.inner.execute(req))
            .await
            .map_err(|_| idle_error(self.idle))??;
        let (mut parts, body) = answer.into_parts();
        if !ranged && parts.status == StatusCode::PARTIAL_CONTENT {
            return Err(HttpError::new(
                HttpErrorKind::Decode,
                CheckFailed::PartialForWhole,
            ));
        }
        let body = HttpResponseBody::new(IdleBody::new(body, self.idle));
        let whole_len = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if get && log_text && parts.status == StatusCode::OK {
            if whole_len.is_some_and(|len| len > MAX_WHOLE_ANSWER_BYTES) {
                return Err(HttpError::new(
                    HttpErrorKind::Decode,
                    CheckFailed::WholeTooLong(MAX_WHOLE_ANSWER_BYTES),
                ));
            }
            let text = bytes_at_most(
                body,
                MAX_WHOLE_ANSWER_BYTES,
                whole_len,
                true,
                CheckFailed::WholeTooLong,
            )
            .await?;
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
                    let whole =
                        bytes_at_most(body, cap, None, false, CheckFailed::LongerThanAsked).await?;
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

/// The whole of a body, or `too_long(cap)` once it passes `cap` bytes; `declared` (its
/// `Content-Length`) sizes the first allocation only, up to 64 MiB. With `stop_at_markup`
/// (a log file, JSON text), a body whose first byte other than white space is `<` (an HTML
/// page: a host that answers every path with its index page) is not read past the pieces
/// that show it, which are returned for the log's parser to refuse as it does any HTML:
/// read to its end, a large or endless page took gigabytes (several commits are fetched at
/// once).
async fn bytes_at_most(
    body: HttpResponseBody,
    cap: u64,
    declared: Option<u64>,
    stop_at_markup: bool,
    too_long: fn(u64) -> CheckFailed,
) -> Result<Bytes, HttpError> {
    let mut pieces = body.bytes_stream();
    let hint = declared.unwrap_or(0).min(64 << 20);
    let mut whole = bytes::BytesMut::with_capacity(usize::try_from(hint).unwrap_or(0));
    while let Some(piece) = pieces.next().await {
        let piece = piece?;
        if (whole.len() as u64).saturating_add(piece.len() as u64) > cap {
            return Err(HttpError::new(HttpErrorKind::Decode, too_long(cap)));
        }
        whole.extend_from_slice(&piece);
        if stop_at_markup && super::starts_as_markup(&whole) {
            break;
        }
    }
    Ok(whole.freeze())
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
}

impl IdleBody {
    fn new(inner: HttpResponseBody, idle: Duration) -> Self {
        IdleBody {
            inner,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            last_frame: tokio::time::Instant::now(),
            failed: false,
        }
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
            return Poll::Ready(frame);
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
