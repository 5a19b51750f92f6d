//! [`FetchStore`]: a table read over HTTP(S) with the JavaScript `fetch` API (wasm32 only).
//!
//! It calls the global `fetch` function directly, so it works wherever one exists: a page
//! (`Window`), a Web Worker (`WorkerGlobalScope`) and Node.js 20+. The store is rooted at a
//! base URL, the table root; store paths are joined to it with every segment
//! percent-encoded (object names may hold spaces, `=`, `%`, `:`), and a query string on the
//! base URL (a SAS token, say) is added to every request.
//!
//! What it sends, and why (see the browser HTTP facts in `DESIGN.md`):
//!
//! - only `GET`: never `HEAD` (presigned URLs often reject it), and sizes come from the log;
//!   a zero-length range costs a one-byte `GET` (the byte before it, or the first byte), so
//!   that a missing object is [`DeltaError::NotFound`] there too (the [`RangeRead`]
//!   contract); every other range costs exactly one request;
//! - ranged reads send `Range: bytes=a-b`, never a suffix range (`bytes=-n`), which costs a
//!   CORS preflight; whole reads ([`RangeRead::get`]) send no `Range` header;
//! - `cache: 'no-store'`: Chromium's HTTP cache serialises concurrent range requests to one
//!   URL, and without the cache they run in parallel;
//! - caller headers ([`FetchOptions::headers`]) on every request. Any header other than
//!   `Range` makes the browser send one CORS preflight per URL.
//!
//! What it accepts: `206` with exactly the bytes asked for; `200` to a range request (some
//! servers ignore `Range`) only if the whole body is at most
//! [`FetchOptions::max_full_body_for_range`], and then the range is cut out of it; `404` is
//! [`DeltaError::NotFound`]. A body shorter than asked for is an error, never data. Network
//! errors, `408`, `429` and `5xx` are retried with exponential backoff
//! ([`FetchOptions::retries`], [`FetchOptions::retry_base_delay`]). Dropping a request's
//! future aborts the fetch.
//!
//! A caller's own `fetch` function ([`FetchStore::with_fetch`]) may stand in for the global
//! one, and a caller's `RequestInit` properties ([`FetchStore::with_request_init`]:
//! `credentials`, `cache`, `mode`, `referrerPolicy`, ...) go on every request; the store's
//! own `method`, headers and abort signal always win.
//!
//! Two hooks run on the request path. A [`UrlSigner`] ([`FetchStore::with_url_signer`])
//! turns the plain URL into the one fetched (a presigned URL) before *every* attempt, so a
//! retry never reuses a signature that may have expired. An `AbortSignal`
//! ([`FetchStore::with_abort_signal`]) stops every request of the store at once when it
//! fires, whatever it is waiting on (the signer, `fetch`, the body, a backoff timer): the
//! request is aborted and the call ends with [`DeltaError::Aborted`].
//!
//! Errors name the store path (an absolute URL without its query string), never a signed
//! URL or a credential.
//!
//! A static HTTP host cannot list, so [`RangeRead::list`] answers `Ok(None)` and the log is
//! found by probing (`_last_checkpoint`, then `NNN.json` files).

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use js_sys::Promise;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, Headers, Request, RequestCache, RequestInit, RequestMode,
    Response,
};

use super::fetch_body::{read_body, BodyError};
use super::fetch_wait::{AbortOnDrop, Sleep, StoreSignal};
use super::js_text::js_message;
use super::link_estimate::LinkEstimate;
use super::{check_range_len, check_range_order, phase_for, BoxFuture, RangeRead};
use crate::error::{redact, store_message, DeltaError, Result};

/// Characters left as they are in a path segment: RFC 3986 "unreserved". Everything else,
/// `%` included, is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The most a whole read's `Content-Length` may reserve up front (it is only a hint).
const WHOLE_BODY_HINT_MAX: u64 = 64 << 20;

/// The largest answer read for a request without a range: 256 MiB. Such requests fetch the
/// log's commits and `_last_checkpoint` (data files and deletion vectors are read in ranges
/// of the sizes the log gives), several at once; wasm memory ends at 4 GiB, and a body that
/// never ended was read until the module ran out of it and aborted.
const MAX_WHOLE_BODY: u64 = 256 << 20;

/// The longest wait between two attempts, whatever the backoff says.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(10);

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window, worker or Node.js).
    #[wasm_bindgen(js_name = fetch, catch)]
    fn js_fetch(request: &Request) -> std::result::Result<Promise, JsValue>;
}

/// Settings of a [`FetchStore`]. `FetchOptions::default()` gives the documented defaults;
/// change them with the `with_*` methods or by setting the fields.
#[derive(Clone, PartialEq, Eq)]
pub struct FetchOptions {
    /// Headers added to every request, e.g. `("Authorization", "Bearer …")`. Default: none.
    /// A browser sends a CORS preflight per URL for any header other than `Range`. The
    /// `Range` header is the store's own and may not be given here.
    pub headers: Vec<(String, String)>,
    /// How many times a request is retried after a network error, `408`, `429` or `5xx`.
    /// Default: 3 (so at most 4 attempts).
    pub retries: u32,
    /// The wait before the first retry; each further retry waits twice as long (at most
    /// 10 s), scaled by a random factor between 0.5 and 1. Default: 100 ms.
    pub retry_base_delay: Duration,
    /// The largest body accepted when a server answers a range request with `200` and the
    /// whole object; a larger one is an error. Default: 16 MiB.
    pub max_full_body_for_range: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            headers: Vec::new(),
            retries: 3,
            retry_base_delay: Duration::from_millis(100),
            max_full_body_for_range: 16 * 1024 * 1024,
        }
    }
}

impl FetchOptions {
    /// Adds a header to every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets how many times a failed request is retried.
    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// Sets the wait before the first retry.
    pub fn with_retry_base_delay(mut self, delay: Duration) -> Self {
        self.retry_base_delay = delay;
        self
    }

    /// Sets the largest whole body accepted in answer to a range request.
    pub fn with_max_full_body_for_range(mut self, bytes: u64) -> Self {
        self.max_full_body_for_range = bytes;
        self
    }

    /// The wait before retry number `attempt + 1`, without jitter.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.retry_base_delay
            .checked_mul(factor)
            .unwrap_or(MAX_RETRY_DELAY)
            .min(MAX_RETRY_DELAY)
    }
}

impl fmt::Debug for FetchOptions {
    /// Header names only: values may be credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("FetchOptions")
            .field("headers", &names)
            .field("retries", &self.retries)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("max_full_body_for_range", &self.max_full_body_for_range)
            .finish()
    }
}

/// An async URL signer: given the plain URL of a request, the URL to fetch instead (a
/// presigned URL), or a message saying why it cannot be signed. Called before every attempt.
pub type UrlSigner = Rc<dyn Fn(String) -> BoxFuture<'static, std::result::Result<String, String>>>;

/// A table root reached with `fetch`: `https://host/tables/people/`.
#[derive(Clone)]
pub struct FetchStore {
    /// The base URL without query or fragment, ending with `/`.
    base: String,
    /// The base URL's query with its `?`, or empty; added to every request.
    query: String,
    options: FetchOptions,
    signer: Option<UrlSigner>,
    signal: Option<StoreSignal>,
    /// The caller's `fetch`, used instead of the global one.
    fetch_fn: Option<js_sys::Function>,
    /// The caller's `RequestInit` properties, set on every request before the store's own.
    request_init: Option<js_sys::Object>,
    /// What the requests so far showed of the link (shared by clones).
    link: Rc<LinkEstimate>,
    /// Log files answered missing, `404`/`410` and `403` (see `missing_log_answers`; shared
    /// by clones).
    missing: Rc<super::MissingLogAnswers>,
}

impl fmt::Debug for FetchStore {
    /// No query string and no header values: they may hold credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FetchStore")
            .field("base", &redact(&self.base))
            .field("has_query", &!self.query.is_empty())
            .field("options", &self.options)
            .field("signs_urls", &self.signer.is_some())
            .field("has_abort_signal", &self.signal.is_some())
            .field("custom_fetch", &self.fetch_fn.is_some())
            .field("has_request_init", &self.request_init.is_some())
            .finish()
    }
}

impl FetchStore {
    /// A store rooted at `base_url` with default [`FetchOptions`].
    ///
    /// `base_url` is an `http(s)` URL of the table root; a missing trailing `/` is added. In
    /// a page or worker a relative URL (`tables/people/`) is resolved against the page's
    /// location.
    pub fn new(base_url: &str) -> Result<Self> {
        Self::with_options(base_url, FetchOptions::default())
    }

    /// A store rooted at `base_url` with `options`.
    pub fn with_options(base_url: &str, options: FetchOptions) -> Result<Self> {
        let invalid = |reason: String| DeltaError::InvalidLocation {
            location: redact(base_url),
            reason,
        };
        let mut url = match url::Url::parse(base_url) {
            Ok(url) => url,
            Err(url::ParseError::RelativeUrlWithoutBase) => {
                let page = page_location().ok_or_else(|| {
                    invalid("a relative URL needs a page location to resolve against".into())
                })?;
                url::Url::parse(&page)
                    .and_then(|page| page.join(base_url))
                    .map_err(|e| invalid(e.to_string()))?
            }
            Err(e) => return Err(invalid(e.to_string())),
        };
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "the fetch store reads http(s) URLs, not {}:",
                url.scheme()
            )));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid(
                "fetch refuses URLs with user:password; send an Authorization header".into(),
            ));
        }
        url.set_fragment(None);
        let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
        url.set_query(None);
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        for (name, _) in &options.headers {
            if name.eq_ignore_ascii_case("range") {
                return Err(DeltaError::InvalidStorageOptions {
                    reason: "the Range header is set by the fetch store and cannot be given".into(),
                });
            }
        }
        // Let the JS engine check header names and values once, up front.
        build_headers(&options.headers, None)?;
        Ok(FetchStore {
            base: url.to_string(),
            query,
            options,
            signer: None,
            signal: None,
            fetch_fn: None,
            request_init: None,
            link: Rc::default(),
            missing: Rc::default(),
        })
    }

    /// The same store, with every request URL signed by `signer` before each attempt
    /// (retries included). The signed URL must be an absolute `http(s)` URL.
    pub fn with_url_signer(mut self, signer: UrlSigner) -> Self {
        self.signer = Some(signer);
        self
    }

    /// The same store, calling `fetch` (a function like the global `fetch`: given a
    /// `Request`, it returns a `Response` or a promise of one) instead of the global `fetch`.
    pub fn with_fetch(mut self, fetch: js_sys::Function) -> Self {
        self.fetch_fn = Some(fetch);
        self
    }

    /// The same store, with the properties of `init` (a `RequestInit`: `credentials`,
    /// `cache`, `mode`, `referrerPolicy`, `priority`, ...) set on every request. The store's
    /// own `method` (`GET`), headers ([`FetchOptions::headers`] and `Range`) and abort
    /// signal replace any given here; `cache` and `mode` replace the store's defaults
    /// (`no-store`, `cors`).
    pub fn with_request_init(mut self, init: js_sys::Object) -> Self {
        self.request_init = Some(init);
        self
    }

    /// The same store, whose requests stop as soon as `signal` fires (or fail at once if it
    /// already has) with [`DeltaError::Aborted`]. `None` removes the signal.
    pub fn with_abort_signal(mut self, signal: Option<AbortSignal>) -> Self {
        self.signal = signal.map(StoreSignal::new);
        self
    }

    /// The table root this store reads, without any query string.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The options in use.
    pub fn options(&self) -> &FetchOptions {
        &self.options
    }

    /// The URL fetched for a store path: the base URL, the path with every segment
    /// percent-encoded, then the base URL's query. An absolute `http(s)` URL (a deletion
    /// vector stored elsewhere) is used as it is.
    pub fn url_for(&self, path: &str) -> String {
        if is_http_url(path) {
            return path.to_string();
        }
        let mut url = self.base.clone();
        for (i, segment) in path.trim_start_matches('/').split('/').enumerate() {
            if i > 0 {
                url.push('/');
            }
            url.extend(utf8_percent_encode(segment, SEGMENT));
        }
        url.push_str(&self.query);
        url
    }

    /// One object or range, with retries; ends early when the abort signal fires.
    async fn fetch(&self, path: &str, range: Option<&Range<u64>>) -> Result<Bytes> {
        match self.fetch_or_past_end(path, range).await? {
            Some(bytes) => Ok(bytes),
            None => Err(past_end_error(path, range)),
        }
    }

    /// A zero-length range, `at..at`: empty if the object exists and has at least `at`
    /// bytes. A `GET` of one byte finds out (never `HEAD`): the byte before `at` or, at 0,
    /// the first byte, where "beyond the end" means the object exists and is empty.
    async fn empty_range(&self, path: &str, at: u64) -> Result<Bytes> {
        let probe = at.saturating_sub(1)..at.max(1);
        match self.fetch_or_past_end(path, Some(&probe)).await? {
            Some(_) => Ok(Bytes::new()),
            None if at == 0 => Ok(Bytes::new()),
            None => Err(past_end_error(path, Some(&(at..at)))),
        }
    }

    /// [`FetchStore::fetch`], with `None` for a range that starts at or beyond the end of
    /// the object (`416`).
    async fn fetch_or_past_end(
        &self,
        path: &str,
        range: Option<&Range<u64>>,
    ) -> Result<Option<Bytes>> {
        let mut attempt = 0u32;
        loop {
            match self.unless_aborted(path, self.attempt(path, range)).await? {
                Ok(bytes) => return Ok(Some(bytes)),
                Err(Failure::PastEnd) => return Ok(None),
                Err(Failure::Final(err)) => return Err(err),
                Err(Failure::Transient(_, asked)) if attempt < self.options.retries => {
                    let jitter = 0.5 + js_sys::Math::random() / 2.0;
                    let backoff = self.options.backoff(attempt).mul_f64(jitter);
                    // A server that says when to come back (`Retry-After`, within the
                    // longest wait) is waited for that long.
                    let delay = asked.map_or(backoff, |wait| wait.max(backoff));
                    self.unless_aborted(path, Sleep::new(delay)).await?;
                    attempt += 1;
                }
                Err(Failure::Transient(message, _)) => {
                    let attempts = attempt + 1;
                    let s = if attempts == 1 { "" } else { "s" };
                    return Err(io_error(
                        path,
                        format!("{message} ({attempts} attempt{s})"),
                        true,
                    ));
                }
            }
        }
    }

    /// `work`'s output, or [`DeltaError::Aborted`] as soon as the store's signal fires (then
    /// `work` is dropped, which aborts a request in it).
    async fn unless_aborted<T>(&self, path: &str, work: impl Future<Output = T>) -> Result<T> {
        match &self.signal {
            Some(signal) => signal.unless_aborted(path, work).await,
            None => Ok(work.await),
        }
    }

    /// One attempt: signs the URL (when there is a signer), then fetches it. The fetch is
    /// aborted if this future is dropped before it ends.
    async fn attempt(
        &self,
        path: &str,
        range: Option<&Range<u64>>,
    ) -> std::result::Result<Bytes, Failure> {
        let plain = self.url_for(path);
        let url = match &self.signer {
            Some(sign) => self.sign(sign, path, plain).await?,
            None => plain,
        };
        let mut guard = AbortOnDrop(AbortController::new().ok());
        let sent = js_sys::Date::now();
        let result = self.exchange(&url, path, range, guard.0.as_ref()).await;
        guard.0 = None;
        if let Ok(bytes) = &result {
            self.link.note(bytes.len(), js_sys::Date::now() - sent);
        }
        result
    }

    /// `signer(url)`, checked to be an absolute `http(s)` URL; a failure is final.
    async fn sign(
        &self,
        signer: &UrlSigner,
        path: &str,
        url: String,
    ) -> std::result::Result<String, Failure> {
        let signed = signer(url)
            .await
            .map_err(|message| Failure::Final(io_error(path, message, false)))?;
        if !is_http_url(&signed) {
            return Err(Failure::Final(io_error(
                path,
                "the URL signer must give an absolute http(s) URL".into(),
                false,
            )));
        }
        Ok(signed)
    }

    /// Sends the request and turns the answer into bytes or a failure.
    async fn exchange(
        &self,
        url: &str,
        path: &str,
        range: Option<&Range<u64>>,
        controller: Option<&AbortController>,
    ) -> std::result::Result<Bytes, Failure> {
        let headers = build_headers(&self.options.headers, range).map_err(Failure::Final)?;
        let init = RequestInit::new();
        init.set_mode(RequestMode::Cors);
        init.set_cache(RequestCache::NoStore);
        if let Some(given) = &self.request_init {
            js_sys::Object::assign(init.unchecked_ref(), given);
        }
        init.set_method("GET");
        init.set_headers(&headers);
        let signal: Option<AbortSignal> = controller.map(|c| c.signal());
        init.set_signal(signal.as_ref());
        let request = Request::new_with_str_and_init(url, &init).map_err(|e| {
            Failure::Final(io_error(
                path,
                format!("cannot build the request: {}", js_message(&e)),
                false,
            ))
        })?;
        let promise = match &self.fetch_fn {
            Some(fetch) => fetch
                .call1(&JsValue::UNDEFINED, &request)
                .map(|answer| Promise::resolve(&answer)),
            None => js_fetch(&request),
        }
        .map_err(|e| network_failure(path, &e))?;
        let answer = JsFuture::from(promise)
            .await
            .map_err(|e| network_failure(path, &e))?;
        let has_status = js_sys::Reflect::has(&answer, &JsValue::from_str("status"));
        if !answer.is_object() || !has_status.unwrap_or(false) {
            return Err(Failure::Final(io_error(
                path,
                "the fetch function did not resolve to a Response".into(),
                false,
            )));
        }
        let response: Response = answer.unchecked_into();

        let status = response.status();
        let missing =
            matches!(status, 404 | 410) || (status == 403 && super::forbidden_is_missing(path));
        match status {
            _ if missing => {
                self.missing.note(path, status == 403);
                return Err(Failure::Final(DeltaError::NotFound {
                    path: redact(path),
                    phase: phase_for(path),
                }));
            }
            408 | 429 | 500..=599 => {
                return Err(Failure::Transient(
                    status_text(&response),
                    retry_after(&response),
                ))
            }
            _ => {}
        }
        let Some(range) = range else {
            if !response.ok() || status == 206 {
                return Err(unexpected_status(path, &response));
            }
            // A hint only: a hostile `Content-Length` must not reserve memory.
            let declared = content_length(&response);
            if let Some(declared) = declared.filter(|&n| n > MAX_WHOLE_BODY) {
                if let Some(c) = controller {
                    c.abort();
                }
                return Err(Failure::Final(whole_too_long(path, declared.to_string())));
            }
            let expected = declared.map(|n| n.min(WHOLE_BODY_HINT_MAX) as usize);
            let json = path.ends_with(".json") || path.ends_with("_last_checkpoint");
            return match read_body(&response, expected, MAX_WHOLE_BODY as usize, json).await {
                Ok(body) => Ok(Bytes::from(body)),
                Err(BodyError::TooLong { .. }) => Err(Failure::Final(whole_too_long(
                    path,
                    format!("more than {MAX_WHOLE_BODY}"),
                ))),
                Err(e) => Err(body_failure(path, e)),
            };
        };
        match status {
            206 => {
                if let Some((start, total)) = content_range(&response) {
                    // `bytes 0-0/0` (tower-http, for an empty file): no bytes from the start.
                    if total.is_some_and(|n| range.start >= n) {
                        return Err(Failure::PastEnd);
                    }
                    if start != range.start {
                        return Err(Failure::Final(io_error(
                            path,
                            format!(
                                "asked for bytes {}..{}, the server answered from byte {start}",
                                range.start, range.end
                            ),
                            false,
                        )));
                    }
                }
                // A range is at most a u32's worth on wasm32 (memory's limit).
                let want = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
                let body = read_body(&response, Some(want), want, false).await;
                let bytes = Bytes::from(body.map_err(|e| body_failure(path, e))?);
                check_range_len(path, range, &bytes).map_err(Failure::Final)?;
                Ok(bytes)
            }
            200 => {
                self.cut_from_whole(&response, path, range, controller)
                    .await
            }
            416 => Err(Failure::PastEnd),
            _ => Err(unexpected_status(path, &response)),
        }
    }

    /// A `200` answer to a range request: takes the range out of the whole body, if the
    /// body is small enough.
    async fn cut_from_whole(
        &self,
        response: &Response,
        path: &str,
        range: &Range<u64>,
        controller: Option<&AbortController>,
    ) -> std::result::Result<Bytes, Failure> {
        let limit = self.options.max_full_body_for_range;
        let too_big = |size: String| {
            Failure::Final(io_error(
                path,
                format!(
                    "the server ignored Range and sent the whole object ({size} bytes, over \
                     the {limit} bytes read whole to cut a range from); serve the table from \
                     a host that supports byte ranges"
                ),
                false,
            ))
        };
        let declared = content_length(response);
        if let Some(declared) = declared.filter(|&d| d > limit) {
            if let Some(c) = controller {
                c.abort();
            }
            return Err(too_big(declared.to_string()));
        }
        let cap = usize::try_from(limit).unwrap_or(usize::MAX);
        let whole = match read_body(response, declared.map(|d| d as usize), cap, false).await {
            Ok(whole) => whole,
            Err(BodyError::TooLong { .. }) => return Err(too_big(format!("more than {limit}"))),
            Err(e) => return Err(body_failure(path, e)),
        };
        let len = whole.len() as u64;
        if range.start >= len && range.end > len {
            return Err(Failure::PastEnd);
        }
        if range.end > len {
            return Err(Failure::Final(io_error(
                path,
                format!(
                    "short read: asked for bytes {}..{}, the object has {len} bytes",
                    range.start, range.end
                ),
                false,
            )));
        }
        // Both ends are at most `len`, a usize.
        let bytes = Bytes::copy_from_slice(&whole[range.start as usize..range.end as usize]);
        check_range_len(path, range, &bytes).map_err(Failure::Final)?;
        Ok(bytes)
    }
}

impl RangeRead for FetchStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let path = path.to_string();
        Box::pin(async move {
            check_range_order(&redact(&path), &range)?;
            if range.start == range.end {
                return self.empty_range(&path, range.start).await;
            }
            self.fetch(&path, Some(&range)).await
        })
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let path = path.to_string();
        Box::pin(async move { self.fetch(&path, None).await })
    }

    fn read_ahead_gap(&self) -> u64 {
        self.link.gap()
    }

    fn can_list(&self) -> bool {
        false
    }

    fn missing_log_answers(&self) -> (u64, u64) {
        self.missing.counts()
    }
}

/// Why one attempt failed.
enum Failure {
    /// Worth another attempt (network error, 408, 429, 5xx); the text says what happened,
    /// and the wait the server asked for (`Retry-After`), if any.
    Transient(String, Option<Duration>),
    /// The range starts at or beyond the end of the object (`416`, or a whole body that
    /// ends before the range starts).
    PastEnd,
    /// The answer is final.
    Final(DeltaError),
}

/// The request headers: the caller's, then `Range` for a ranged read.
fn build_headers(given: &[(String, String)], range: Option<&Range<u64>>) -> Result<Headers> {
    let js_error = |what: String, e: JsValue| DeltaError::InvalidStorageOptions {
        reason: format!("{what}: {}", redact(&js_message(&e))),
    };
    let headers = Headers::new().map_err(|e| js_error("cannot create Headers".into(), e))?;
    for (name, value) in given {
        // The value is never put in a message: it may be a credential.
        headers
            .append(name, value)
            .map_err(|_| DeltaError::InvalidStorageOptions {
                reason: format!("invalid HTTP header '{}' or value", redact(name)),
            })?;
    }
    if let Some(range) = range {
        let value = format!("bytes={}-{}", range.start, range.end.saturating_sub(1));
        headers
            .set("Range", &value)
            .map_err(|e| js_error("cannot set the Range header".into(), e))?;
    }
    Ok(headers)
}

/// What a body that could not be read means for the attempt.
fn body_failure(path: &str, e: BodyError) -> Failure {
    match e {
        BodyError::Failed(text) => Failure::Transient(text, None),
        BodyError::TooLong { limit } => Failure::Final(io_error(
            path,
            format!("the server sent more than the {limit} bytes asked for"),
            false,
        )),
    }
}

/// A whole object (a log file) over [`MAX_WHOLE_BODY`]: refused, as a body that does not end.
fn whole_too_long(path: &str, size: String) -> DeltaError {
    io_error(
        path,
        format!(
            "the answer is {size} bytes, over the {MAX_WHOLE_BODY} bytes read for a log file in \
             the browser (a server that answers a missing file with an endless page?)"
        ),
        false,
    )
}

/// The wait a `Retry-After` header asks for, in seconds (the HTTP-date form is not read),
/// when it is at most [`MAX_RETRY_DELAY`]; a longer one is not waited for.
fn retry_after(response: &Response) -> Option<Duration> {
    let seconds: u64 = response
        .headers()
        .get("retry-after")
        .ok()
        .flatten()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds)).filter(|&wait| wait <= MAX_RETRY_DELAY)
}

/// The `Content-Length` header, when present and a number.
fn content_length(response: &Response) -> Option<u64> {
    response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// The first byte and the total length (unless `*`) of a `Content-Range: bytes a-b/n`
/// header, when present and readable.
fn content_range(response: &Response) -> Option<(u64, Option<u64>)> {
    let value = response.headers().get("content-range").ok()??;
    let spec = value.trim().strip_prefix("bytes")?.trim_start();
    let (first, rest) = spec.split_once('-')?;
    let total = rest
        .split_once('/')
        .and_then(|(_, n)| n.trim().parse().ok());
    Some((first.trim().parse().ok()?, total))
}

/// `HTTP 503 Service Unavailable`.
fn status_text(response: &Response) -> String {
    let text = response.status_text();
    if text.is_empty() {
        format!("HTTP {}", response.status())
    } else {
        format!("HTTP {} {text}", response.status())
    }
}

fn unexpected_status(path: &str, response: &Response) -> Failure {
    Failure::Final(io_error(
        path,
        format!("unexpected answer: {}", status_text(response)),
        false,
    ))
}

/// A rejected `fetch`: the network failed, the server is unreachable, or CORS refused; or
/// the answer timed out (`answerTimeoutMs`: a `TimeoutError`, whose text says so). Node.js,
/// Deno and Bun give the reason as the error's `cause` (a browser gives none, and may not
/// say that CORS refused): with a cause, CORS is not suggested, and a refused TLS
/// certificate fails at once (a certificate does not change between tries).
fn network_failure(path: &str, e: &JsValue) -> Failure {
    let timed_out = js_sys::Reflect::get(e, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string())
        .is_some_and(|n| n == "TimeoutError");
    let has_cause = js_sys::Reflect::get(e, &JsValue::from_str("cause"))
        .is_ok_and(|c| !c.is_undefined() && !c.is_null());
    let message = js_message(e);
    if has_cause && message.to_ascii_lowercase().contains("certificate") {
        return Failure::Final(io_error(
            path,
            format!(
                "the server's TLS certificate was refused, not retried ({message}; Node.js \
                 trusts a private CA named in NODE_EXTRA_CA_CERTS)"
            ),
            false,
        ));
    }
    let text = if timed_out {
        format!("timed out: {message}")
    } else if has_cause {
        format!("network error: {message}")
    } else {
        format!(
            "network error (server unreachable, connection lost, or the answer lacks CORS \
             headers): {message}"
        )
    };
    Failure::Transient(text, None)
}

/// A range (never a whole get) that starts at or beyond the end of the object, as the
/// server has it: it answered `416`, or a whole body that ends before the range.
fn past_end_error(path: &str, range: Option<&Range<u64>>) -> DeltaError {
    let range = range.cloned().unwrap_or_default();
    io_error(
        path,
        format!(
            "the server has no bytes {}..{} (it answered 416 Range Not Satisfiable, or a \
             whole body that ends before them): the object is shorter than the Delta log \
             says (truncated or replaced), or the server does not serve byte ranges",
            range.start, range.end
        ),
        false,
    )
}

fn io_error(path: &str, message: String, transient: bool) -> DeltaError {
    DeltaError::Io {
        path: redact(path),
        message: store_message(&message),
        phase: phase_for(path),
        transient,
    }
}

fn is_http_url(path: &str) -> bool {
    let lower = path.get(..8).unwrap_or(path).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// `location.href` of the page or worker, if there is one.
fn page_location() -> Option<String> {
    let global = js_sys::global();
    let location = js_sys::Reflect::get(&global, &JsValue::from_str("location")).ok()?;
    if location.is_undefined() || location.is_null() {
        return None;
    }
    js_sys::Reflect::get(&location, &JsValue::from_str("href"))
        .ok()?
        .as_string()
}
