//! The text of a JavaScript error or rejection value, for the messages of the wasm32 stores
//! (`fetch` and JS byte sources): `Name: message`, with its `cause` where there is one.

use wasm_bindgen::{JsCast, JsValue};

/// The text of a JS exception or rejection value, with its `cause` (Node.js puts the
/// real reason there: `fetch failed (connect ECONNREFUSED …)`).
pub(super) fn js_message(e: &JsValue) -> String {
    let text = js_text(e);
    let cause = js_sys::Reflect::get(e, &JsValue::from_str("cause"))
        .ok()
        .filter(|c| !c.is_undefined() && !c.is_null());
    match cause {
        Some(cause) => format!("{text} ({})", js_text(&cause)),
        None => text,
    }
}

/// `Name: message` of a JS error (the message alone for a plain `Error`), or the value as
/// a string.
fn js_text(e: &JsValue) -> String {
    match e.dyn_ref::<js_sys::Error>() {
        Some(error) => {
            let name = String::from(error.name());
            let message = String::from(error.message());
            if name == "Error" {
                message
            } else {
                format!("{name}: {message}")
            }
        }
        None => e
            .as_string()
            .unwrap_or_else(|| "unknown JavaScript error".into()),
    }
}
