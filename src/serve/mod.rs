//! A static HTTP/1.1 file server on hyper and tower-http: what tests use to serve Delta
//! tables over HTTP, and `dar serve`. Native only, behind the `serve` feature.
//!
//! It serves files under a root directory (and further directories mounted under URL
//! prefixes) on 127.0.0.1 with `GET`, `HEAD` and `OPTIONS`; single byte ranges (206, 416);
//! CORS for browsers (`*` origin, request headers such as `Range` allowed,
//! `Content-Range`/`Content-Length` exposed, preflights answered 204); keep-alive and
//! pipelining; `Last-Modified`. It never lists a directory, serves regular files only and
//! refuses paths that would leave the served directories, symlinks included. For tests it
//! can add latency and inject faults ([`Faults`]), and it counts what it answered
//! ([`ServeStats`]).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use delta_arrow_reader::serve::{ServeConfig, StaticServer};
//! let server = StaticServer::start(ServeConfig::new("www").with_mount("/tables", "tables")).await?;
//! println!("{}", server.url_for("tables/people/_delta_log/00000000000000000000.json"));
//! assert_eq!(server.stats().requests(), 0);
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Layout: `server` the listener and hyper connections, `service` one request (tower-http's
//! CORS and file serving), `path` from a URL path to a file, `body` counting and cutting
//! bodies, `faults`, `stats`, `config`.

mod body;
mod checkpoint_hint;
mod clients;
mod config;
mod faults;
mod path;
mod progress;
mod request_log;
mod server;
mod service;
mod stats;

#[cfg(test)]
mod tests;

pub use config::{MemoryFile, ServeConfig, MAX_TIMEOUT};
pub use faults::{Faults, SlowBody};
pub use server::{run_forever, StaticServer};
pub use stats::{RequestRecord, ServeStats};
