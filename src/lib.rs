//! Delta Arrow Reader: read Delta Lake tables into Apache Arrow record batches.
//!
//! One core serves native Rust programs (on Tokio), the `dar` command line tool, and the
//! WebAssembly build for browsers and Node.js. Data flows one way:
//!
//! ```text
//! io (RangeRead) ─► log (sans-io replay ─► Snapshot) ─► plan ─► read ─► front ends
//! ```
//!
//! `log`, `schema` and the planning code do no I/O and never await: they are state machines
//! and functions fed with bytes, driven by a thin async driver over an
//! [`io::RangeRead`] store.

pub mod api;
#[cfg(all(feature = "datafusion", not(target_arch = "wasm32")))]
pub mod datafusion;
pub mod error;
pub mod fixture;
pub mod io;
pub mod log;
pub mod metrics;
pub mod plan;
pub mod predicate;
pub mod read;
pub mod schema;
#[cfg(all(feature = "serve", not(target_arch = "wasm32")))]
pub mod serve;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use api::{DeltaTable, DeltaTableBuilder};
pub use error::{DeltaError, Phase, Result};
