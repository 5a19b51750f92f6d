//! A small static HTTP/1.1 file server on Tokio: what tests use to serve Delta tables over
//! HTTP, and `dar serve`.
//!
//! It serves files under a root directory (and further directories mounted under URL
//! prefixes) on 127.0.0.1 with `GET`, `HEAD` and `OPTIONS`; single byte ranges (206, 416);
//! CORS for browsers (`*` origin, `Range` allowed, `Content-Range`/`Content-Length`/`ETag`
//! exposed, preflights answered 204); keep-alive and pipelining; `ETag` and
//! `Last-Modified`. It never lists a directory and refuses paths that would leave the
//! served directories. For tests it can add latency and inject faults ([`Faults`]), and it
//! counts what it answered ([`ServeStats`]).
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
//! Layout: [`http`](self) framing, `range` byte ranges, `path` target checks and mounts,
//! `conn` one connection, `server` the listener, `faults`, `stats`, `config`, `mime`,
//! `date`.

mod config;
mod conn;
mod date;
mod faults;
mod http;
mod mime;
mod path;
mod range;
mod server;
mod stats;

#[cfg(test)]
mod tests;

pub use config::ServeConfig;
pub use faults::Faults;
pub use server::{run_forever, StaticServer};
pub use stats::{RequestRecord, ServeStats};
