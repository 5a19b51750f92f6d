//! Serves a directory of Delta tables over HTTP on 127.0.0.1, with CORS and byte ranges, for
//! the browser tests (`scripts/test test-wasm` starts it; `tests/wasm_scan.rs` reads from it).
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
//! It runs until killed.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    use std::process::ExitCode;

    use delta_arrow_reader::serve::{run_forever, Faults, ServeConfig, StaticServer};

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
        // Kept alive until the main server ends (never, unless it fails).
        let mut fault_servers = Vec::new();
        if let Some((faulty, truncating)) = fault_ports {
            let faults = Faults {
                fail_first: 2,
                ignore_range: true,
                ..Faults::default()
            };
            let config = ServeConfig::new(&dir).with_port(faulty).with_faults(faults);
            fault_servers.push(StaticServer::start(config).await?);

            let faults = Faults {
                truncate_body: Some(10),
                path_filter: Some("/part-".into()),
                ..Faults::default()
            };
            let config = ServeConfig::new(&dir)
                .with_port(truncating)
                .with_faults(faults);
            fault_servers.push(StaticServer::start(config).await?);
            for server in &fault_servers {
                println!("Serving {dir} with faults at {}/", server.url());
            }
        }
        let served = run_forever(ServeConfig::new(&dir).with_port(main_port)).await;
        drop(fault_servers);
        served
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve_corpus: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {}
