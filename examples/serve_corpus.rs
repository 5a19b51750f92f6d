//! Serves a directory of Delta tables over HTTP on 127.0.0.1, with CORS and byte ranges, for
//! the browser tests (`scripts/test test-wasm` starts it; `tests/wasm/scan.rs` reads from it).
//!
//! ```text
//! cargo run --example serve_corpus -- DIR PORT [FAULTY_PORT TRUNCATING_PORT]
//! ```
//!
//! `DIR` is served at `http://127.0.0.1:PORT/`. With the two further ports, the same directory
//! is also served with injected faults:
//!
//! - `FAULTY_PORT`: answers its first two requests `503`, and ignores `Range` headers (always
//!   `200` with the whole file), like some servers and CDNs;
//! - `TRUNCATING_PORT`: sends the bodies of data files (`…/part-…`) cut short after 10 bytes
//!   (with the full `Content-Length`), and the log intact.
//!
//! A port of `0` lets the system pick a free one. Once every server listens, the first line
//! on stdout is `urls MAIN_URL [FAULTY_URL TRUNCATING_URL]`, so a script that passes `0` reads
//! the addresses from there instead of racing other processes for a port it chose earlier.
//!
//! With the fault ports, the browser's fault matrix (`tests/wasm/fault_matrix.rs`) is served
//! too: one server per fault of [`matrix`], each on a port of its own, printed on the second
//! line as `matrix NAME=URL NAME=URL …`.
//!
//! It runs until killed.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    use std::io::Write;
    use std::process::ExitCode;

    use delta_arrow_reader::serve::{Faults, ServeConfig, StaticServer};

    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: serve_corpus DIR PORT [FAULTY_PORT TRUNCATING_PORT]";
    let port = |i: usize| args.get(i).map(|p| p.parse::<u16>());
    let (dir, main_port) = match (args.first(), port(1)) {
        (Some(dir), Some(Ok(p))) if args.len() == 2 || args.len() == 4 => (dir.clone(), p),
        _ => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    let fault_ports = match (port(2), port(3)) {
        (Some(Ok(faulty)), Some(Ok(truncating))) => Some((faulty, truncating)),
        (None, None) => None,
        _ => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("serve_corpus: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let main = StaticServer::start(ServeConfig::new(&dir).with_port(main_port)).await?;
        let mut servers = vec![main];
        if let Some((faulty, truncating)) = fault_ports {
            let faults = Faults {
                fail_first: 2,
                ignore_range: true,
                ..Faults::default()
            };
            let config = ServeConfig::new(&dir).with_port(faulty).with_faults(faults);
            servers.push(StaticServer::start(config).await?);

            let faults = Faults {
                truncate_body: Some(10),
                path_filter: Some("/part-".into()),
                ..Faults::default()
            };
            let config = ServeConfig::new(&dir)
                .with_port(truncating)
                .with_faults(faults);
            servers.push(StaticServer::start(config).await?);
        }
        let urls: Vec<String> = servers.iter().map(|s| format!("{}/", s.url())).collect();
        let mut named = Vec::new();
        if fault_ports.is_some() {
            for (name, faults) in matrix() {
                let server =
                    StaticServer::start(ServeConfig::new(&dir).with_faults(faults)).await?;
                named.push(format!("{name}={}/", server.url()));
                servers.push(server);
            }
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "urls {}", urls.join(" "))?;
        if !named.is_empty() {
            writeln!(out, "matrix {}", named.join(" "))?;
        }
        out.flush()?;
        drop(out);
        // The servers run as tasks on this runtime; they are kept alive until the process is
        // killed.
        std::future::pending::<()>().await;
        drop(servers);
        Ok::<(), std::io::Error>(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve_corpus: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The faults of the browser's fault matrix, one server each, by the name
/// `tests/wasm/fault_matrix.rs` expects an outcome for: the classes of the native matrix
/// (`tests/native/fault_matrix.rs`) that the fetch store meets (it has no request timeout of
/// its own: the browser's and the caller's signal bound a request).
#[cfg(not(target_arch = "wasm32"))]
fn matrix() -> Vec<(&'static str, delta_arrow_reader::serve::Faults)> {
    use std::time::Duration;

    use delta_arrow_reader::serve::{Faults, SlowBody};

    let always = u64::MAX;
    let on = |filter: &str, faults: Faults| Faults {
        path_filter: Some(filter.into()),
        ..faults
    };
    vec![
        (
            "503-first-3",
            Faults {
                fail_first: 3,
                ..Faults::default()
            },
        ),
        (
            "429-bursts",
            Faults {
                fail_first: 2,
                fail_status: Some(429),
                repeat_every: Some(7),
                ..Faults::default()
            },
        ),
        (
            "500-1-of-3-data",
            on(
                ".parquet",
                Faults {
                    fail_first: 1,
                    fail_status: Some(500),
                    repeat_every: Some(3),
                    ..Faults::default()
                },
            ),
        ),
        (
            "502-always",
            Faults {
                fail_first: always,
                fail_status: Some(502),
                ..Faults::default()
            },
        ),
        (
            "reset-1-of-4",
            Faults {
                reset_first: 1,
                repeat_every: Some(4),
                ..Faults::default()
            },
        ),
        (
            "reset-every-data",
            on(
                ".parquet",
                Faults {
                    reset_first: always,
                    ..Faults::default()
                },
            ),
        ),
        (
            "slow-bodies",
            Faults {
                slow_body: Some(SlowBody {
                    chunk: 512,
                    pause: Duration::from_millis(2),
                }),
                ..Faults::default()
            },
        ),
        (
            "cut-1-of-3-data",
            on(
                ".parquet",
                Faults {
                    truncate_body: Some(100),
                    truncate_first: Some(1),
                    repeat_every: Some(3),
                    ..Faults::default()
                },
            ),
        ),
        (
            "cut-every-data",
            on(
                ".parquet",
                Faults {
                    truncate_body: Some(100),
                    ..Faults::default()
                },
            ),
        ),
        (
            "cut-every-log",
            on(
                "_delta_log",
                Faults {
                    truncate_body: Some(50),
                    ..Faults::default()
                },
            ),
        ),
        (
            "whole-body-for-ranges",
            Faults {
                ignore_range: true,
                ..Faults::default()
            },
        ),
        (
            "shifted-dv-ranges",
            on(
                "deletion_vector_",
                Faults {
                    shift_range: true,
                    ..Faults::default()
                },
            ),
        ),
        (
            "fallback-page",
            Faults {
                missing_file_fallback: Some(
                    "/golden__dv-partitioned-with-checkpoint/_delta_log/00000000000000000000.json"
                        .into(),
                ),
                ..Faults::default()
            },
        ),
    ]
}

#[cfg(target_arch = "wasm32")]
fn main() {}
