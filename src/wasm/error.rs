//! JS errors: a [`DeltaError`] becomes an `Error` whose `code` is [`DeltaError::code`], and an
//! abort becomes an `Error` named `AbortError` with code `aborted`.

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use crate::error::{DeltaError, Phase};

/// The `code` of the error a scan or an open rejects with when it is aborted.
pub(crate) const ABORTED: &str = "aborted";

/// `DeltaError` → `Error { name: "DeltaError", message, code, phase, transient }`.
/// A [`DeltaError::Aborted`] is named `AbortError`, like every other abort.
pub(crate) fn js_error(e: &DeltaError) -> JsValue {
    let name = match e {
        DeltaError::Aborted { .. } => "AbortError",
        _ => "DeltaError",
    };
    let error = new_error(name, &e.to_string(), e.code());
    set(&error, "phase", &JsValue::from_str(e.phase().as_str()));
    set(&error, "transient", &JsValue::from_bool(e.is_transient()));
    error
}

/// `DeltaError` → JS error, for what opening a table met: its phase is `load`, an invalid
/// argument too (an option of `open`, not of a scan).
pub(crate) fn load_error(e: &DeltaError) -> JsValue {
    let error = js_error(e);
    if matches!(e, DeltaError::InvalidArgument { .. }) {
        set(&error, "phase", &JsValue::from_str(Phase::Load.as_str()));
    }
    error
}

/// A `DeltaError::InvalidArgument` of `open`'s options as a JS error (phase `load`).
pub(crate) fn invalid_open_argument(reason: impl Into<String>) -> JsValue {
    load_error(&DeltaError::InvalidArgument {
        reason: reason.into(),
    })
}

/// `Error { name: "AbortError", code: "aborted", cause: reason }`, as `fetch` rejects with a
/// `DOMException` named `AbortError`.
pub(crate) fn abort_error(reason: &JsValue) -> JsValue {
    let error = new_error("AbortError", "the read was aborted", ABORTED);
    if !reason.is_undefined() && !reason.is_null() {
        set(&error, "cause", reason);
    }
    error
}

/// A `DeltaError::InvalidArgument` as a JS error.
pub(crate) fn invalid_argument(reason: impl Into<String>) -> JsValue {
    js_error(&DeltaError::InvalidArgument {
        reason: reason.into(),
    })
}

fn new_error(name: &str, message: &str, code: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name(name);
    let error = JsValue::from(error);
    set(&error, "code", &JsValue::from_str(code));
    error
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    // Setting a property on a fresh Error cannot fail; if it did, the error stays usable.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}
