//! The wasm32 integration tests, linked into one test binary run by wasm-bindgen-test in
//! headless Chromium (`scripts/test test-wasm`); natively this crate is empty.
//!
//! `scan` reads corpus tables over HTTP from the server whose URLs `scripts/test test-wasm`
//! passes at build time (`DAR_TEST_HTTP`, `DAR_TEST_HTTP_FAULTY`, `DAR_TEST_HTTP_TRUNCATING`);
//! `fault_matrix` reads one table from a server per fault (`DAR_TEST_HTTP_MATRIX`); `load`
//! runs 32 scans at once with cancellations; `replay` compiles a corpus table's log into the
//! test; `range_read` runs the `RangeRead` conformance checks shared with the native binary
//! (`tests/shared/range_read_contract.rs`) against the fetch store and the memory store.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod fault_matrix;
mod hostile;
mod load;
mod range_read;
#[path = "../shared/range_read_contract.rs"]
mod range_read_contract;
mod replay;
mod scan;
mod scheduling;
#[path = "../shared/sorted_rows.rs"]
mod sorted_rows;
