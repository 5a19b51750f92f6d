//! Reading a `fetch` answer's body into wasm memory (wasm32 only).
//!
//! [`read_body`] takes the body's chunks from its stream as they arrive and copies each into
//! one buffer in wasm memory, sized once when the length is known, instead of having
//! `Response.arrayBuffer()` gather the whole body into a fresh JS buffer first. Chromium's
//! own handling of the body (`DidFinishLoadingBody` in a trace) stays about as costly
//! either way; what the stream adds is that a body running past what was asked for is cut
//! off at once instead of held whole.
//!
//! A response without a readable stream (a `null` body, or a caller's `fetch` that answers
//! with a `Response`-like object) is read with `arrayBuffer()` as before.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

use super::js_text::js_message;

/// Why a body could not be read.
pub(super) enum BodyError {
    /// The body failed or was cut short (worth another attempt); the text says how.
    Failed(String),
    /// The body held more than the `limit` bytes the caller accepts.
    TooLong { limit: usize },
}

/// The whole body in wasm memory. `expected`: its length when known (a range's length), to
/// size the buffer once; `limit`: the most bytes accepted, beyond which reading stops.
/// `json`: the body must be JSON text (a log file); one whose first byte other than white
/// space is `<` (an HTML page: a host that answers every path with its index page) is not
/// read past its first piece, which is returned for the log's parser to refuse as it does
/// any HTML, instead of being read to its end (a large or endless page filled memory).
pub(super) async fn read_body(
    response: &Response,
    expected: Option<usize>,
    limit: usize,
    json: bool,
) -> Result<Vec<u8>, BodyError> {
    let Some(reader) = stream_reader(response) else {
        let whole = read_body_array(response).await?;
        if whole.length() as usize > limit {
            return Err(BodyError::TooLong { limit });
        }
        return Ok(whole.to_vec());
    };
    let mut out = Vec::with_capacity(expected.unwrap_or(0).min(limit));
    loop {
        let promise = reader.read();
        let result = JsFuture::from(promise).await.map_err(cut_short)?;
        let done = Reflect::get(&result, &JsValue::from_str("done"))
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            return Ok(out);
        }
        let value = Reflect::get(&result, &JsValue::from_str("value")).map_err(cut_short)?;
        let Some(chunk) = value.dyn_ref::<Uint8Array>() else {
            return Err(BodyError::Failed(
                "the body's stream gave something other than bytes".into(),
            ));
        };
        let at = out.len();
        let len = chunk.length() as usize;
        if at.saturating_add(len) > limit {
            // Nothing more is wanted: let the rest go unread.
            let _ = reader.cancel();
            return Err(BodyError::TooLong { limit });
        }
        out.resize(at + len, 0);
        chunk.copy_to(&mut out[at..]);
        if json && super::starts_as_markup(&out) {
            let _ = reader.cancel();
            return Ok(out);
        }
    }
}

/// The whole body as a JS array (not copied into wasm memory).
pub(super) async fn read_body_array(response: &Response) -> Result<Uint8Array, BodyError> {
    let promise = response
        .array_buffer()
        .map_err(|e| BodyError::Failed(format!("cannot read the body: {}", js_message(&e))))?;
    let buffer = JsFuture::from(promise).await.map_err(cut_short)?;
    Ok(Uint8Array::new(&buffer))
}

/// A reader of the body's stream, when the response has one that is not yet read.
fn stream_reader(response: &Response) -> Option<ReadableStreamDefaultReader> {
    // A caller's `fetch` may answer with an object that only looks like a `Response`.
    let body = Reflect::get(response, &JsValue::from_str("body")).ok()?;
    if body.is_null() || body.is_undefined() || response.body_used() {
        return None;
    }
    let stream: web_sys::ReadableStream = body.dyn_into().ok()?;
    // `getReader` throws on a locked stream; `arrayBuffer` then fails as a promise instead.
    if stream.locked() {
        return None;
    }
    stream.get_reader().dyn_into().ok()
}

fn cut_short(e: JsValue) -> BodyError {
    BodyError::Failed(format!(
        "the body was cut short or failed: {}",
        js_message(&e)
    ))
}
