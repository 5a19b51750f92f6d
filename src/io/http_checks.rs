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
//!   answers, which are legal HTTP.
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
use http::header::{CONTENT_LENGTH, RANGE};
use http::uri::PathAndQuery;
use http::{HeaderValue, Method, StatusCode, Uri};
use http_body::{Body, Frame, SizeHint};
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;

/// Makes reqwest clients whose requests go through [`Checked`].
#[derive(Clone)]
pub(crate) struct CheckedConnector {
    pub idle: Duration,
    /// The query string of the table's URL, added to every request.
    pub query: Option<Arc<str>>,
}

impl fmt::Debug for CheckedConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The query may hold a secret.
        f.debug_struct("CheckedConnector")
            .field("idle", &self.idle)
            .field("query", &self.query.as_ref().map(|_| "[redacted]"))
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
        }))
    }
}

/// An HTTP client with the module's checks.
struct Checked {
    inner: HttpClient,
    idle: Duration,
    query: Option<Arc<str>>,
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
        let ranged = req.headers().contains_key(RANGE);
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
        if get && parts.status.is_success() && !parts.headers.contains_key(CONTENT_LENGTH) {
            let whole = body.bytes().await?;
            parts
                .headers
                .insert(CONTENT_LENGTH, HeaderValue::from(whole.len()));
            return Ok(HttpResponse::from_parts(parts, whole.into()));
        }
        Ok(HttpResponse::from_parts(parts, body))
    }
}

fn idle_error(idle: Duration) -> HttpError {
    HttpError::new(HttpErrorKind::Timeout, CheckFailed::Idle(idle))
}

/// A body that fails once no frame has come for `idle`.
struct IdleBody {
    inner: HttpResponseBody,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    failed: bool,
}

impl IdleBody {
    fn new(inner: HttpResponseBody, idle: Duration) -> Self {
        IdleBody {
            inner,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
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
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + self.idle;
                self.timer.as_mut().reset(next);
                Poll::Ready(frame)
            }
            Poll::Pending => match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    self.failed = true;
                    Poll::Ready(Some(Err(idle_error(self.idle))))
                }
                Poll::Pending => Poll::Pending,
            },
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
}
