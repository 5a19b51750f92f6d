//! [`SigningStore`]: a [`FetchStore`] whose request URLs first go through the caller's async
//! `signUrl(url) → Promise<string>` (presigned URLs: S3, GCS, Azure SAS made per request).
//!
//! The fetch store has no signing hook, so this store asks it for the plain URL of a path
//! ([`FetchStore::url_for`]), has it signed, and hands the signed absolute URL back to the
//! fetch store, which fetches absolute `http(s)` URLs as they are, with its ranges, retries
//! and body checks. Errors name the table path, never the signed URL.

use std::ops::Range;

use bytes::Bytes;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::error::{redact, DeltaError, Result};
use crate::io::{phase_for, BoxFuture, FetchStore, RangeRead};

/// A fetch store that signs every request URL with a JS callback.
pub(crate) struct SigningStore {
    inner: FetchStore,
    sign: Function,
}

impl std::fmt::Debug for SigningStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningStore")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl SigningStore {
    pub(crate) fn new(inner: FetchStore, sign: Function) -> Self {
        SigningStore { inner, sign }
    }

    /// The signed URL of `path`: `await signUrl(plainUrl)`.
    async fn signed(&self, path: &str) -> Result<String> {
        let plain = self.inner.url_for(path);
        let failed = |what: String| DeltaError::Io {
            path: path.to_string(),
            message: redact(&format!("signUrl {what}")),
            phase: phase_for(path),
            transient: false,
        };
        let returned = self
            .sign
            .call1(&JsValue::UNDEFINED, &JsValue::from_str(&plain))
            .map_err(|e| failed(format!("threw: {}", describe(&e))))?;
        let value = JsFuture::from(Promise::resolve(&returned))
            .await
            .map_err(|e| failed(format!("rejected: {}", describe(&e))))?;
        // A string, or a URL object (its `href`).
        let url = value
            .as_string()
            .or_else(|| {
                Reflect::get(&value, &JsValue::from_str("href"))
                    .ok()
                    .and_then(|h| h.as_string())
            })
            .ok_or_else(|| failed("must resolve to a URL string".into()))?;
        let lower = url.get(..8).unwrap_or(&url).to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(failed(
                "must resolve to an absolute http(s) URL".to_string(),
            ));
        }
        Ok(url)
    }
}

/// The message of a thrown value, without URLs' query strings.
fn describe(e: &JsValue) -> String {
    let text = match Reflect::get(e, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
    {
        Some(message) => message,
        None => e.as_string().unwrap_or_else(|| "a non-Error value".into()),
    };
    redact(&text)
}

/// Puts the table path back into a store error about the signed URL.
fn with_path(error: DeltaError, path: &str) -> DeltaError {
    match error {
        DeltaError::NotFound { phase, .. } => DeltaError::NotFound {
            path: path.to_string(),
            phase,
        },
        DeltaError::Io {
            message,
            phase,
            transient,
            ..
        } => DeltaError::Io {
            path: path.to_string(),
            message: redact(&message),
            phase,
            transient,
        },
        other => other,
    }
}

impl RangeRead for SigningStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let path = path.to_string();
        Box::pin(async move {
            if range.start >= range.end {
                // Nothing to fetch (or an invalid range): let the fetch store answer.
                return self.inner.get_range(&path, range).await;
            }
            let url = self.signed(&path).await?;
            self.inner
                .get_range(&url, range)
                .await
                .map_err(|e| with_path(e, &path))
        })
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let path = path.to_string();
        Box::pin(async move {
            let url = self.signed(&path).await?;
            self.inner.get(&url).await.map_err(|e| with_path(e, &path))
        })
    }
}
