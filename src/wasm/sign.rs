//! The caller's `signUrl(url) → string | URL | Promise<string | URL>` as the fetch store's
//! [`UrlSigner`] (presigned URLs: S3, GCS, Azure SAS made per request).
//!
//! The fetch store calls it before every attempt, retries included, and checks that the
//! answer is an absolute `http(s)` URL. Messages say what the callback did wrong, with URLs'
//! query strings removed.

use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::error::redact;
use crate::io::UrlSigner;

/// `sign` as a [`UrlSigner`].
pub(crate) fn js_signer(sign: Function) -> UrlSigner {
    Rc::new(move |url: String| {
        let sign = sign.clone();
        Box::pin(async move { call(&sign, &url).await })
    })
}

/// `await sign(url)`: a string, or a URL object (its `href`).
async fn call(sign: &Function, url: &str) -> Result<String, String> {
    let returned = sign
        .call1(&JsValue::UNDEFINED, &JsValue::from_str(url))
        .map_err(|e| format!("signUrl threw: {}", describe(&e)))?;
    let value = JsFuture::from(Promise::resolve(&returned))
        .await
        .map_err(|e| format!("signUrl rejected: {}", describe(&e)))?;
    value
        .as_string()
        .or_else(|| {
            Reflect::get(&value, &JsValue::from_str("href"))
                .ok()
                .and_then(|h| h.as_string())
        })
        .ok_or_else(|| "signUrl must resolve to a URL string".to_string())
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
