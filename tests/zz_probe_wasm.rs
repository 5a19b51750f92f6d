//! Throwaway probe: one wasm-bindgen test in headless Chromium.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn probe_runs_in_browser() {
    let ua = js_sys::eval("navigator.userAgent").unwrap().as_string().unwrap();
    assert!(ua.contains("Chrome"), "{ua}");
}
