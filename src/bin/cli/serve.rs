//! `dar serve`: a static HTTP server for local tables (byte ranges, CORS, no directory
//! listing), so a browser can preview them; it also serves the previewer page under `/www/`
//! (the one built into dar, or a folder given with `--www`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use delta_arrow_reader::serve::{run_forever, ServeConfig};
use delta_arrow_reader::DeltaError;

/// Arguments of `dar serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Folder to serve (tables below it are read as http://127.0.0.1:PORT/NAME/).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8080, allow_negative_numbers = true)]
    pub port: u16,
    /// Added latency per request, to see how a page behaves on a slow network (at most
    /// 600000, ten minutes).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub latency_ms: u64,
    /// Serve this folder under /www/ (default: the previewer page built into dar, if any).
    #[arg(long)]
    pub www: Option<PathBuf>,
    /// Print one line per request.
    #[arg(long)]
    pub log: bool,
    /// Serve files that symlinks lead to outside the served folders (a folder of links to
    /// tables, a page staged with `www/stage --link`); refused by default.
    #[arg(long)]
    pub follow_symlinks: bool,
    /// Close a connection that moves no byte either way for this many seconds (idle
    /// keep-alive, a client that stops reading).
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=MAX_TIMEOUT_SECONDS))]
    pub idle_timeout: u64,
    /// A request head must arrive within this many seconds, however steadily it trickles.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=MAX_TIMEOUT_SECONDS))]
    pub header_timeout: u64,
    /// Connections served at once; more wait for one to close (at least 1).
    #[arg(long, default_value_t = 4096, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,
    /// Connections one client address may hold; more are answered 503 (at least 1).
    #[arg(long, default_value_t = 1024, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections_per_client: usize,
}

/// The longest `--idle-timeout` and `--header-timeout`, in seconds: the server's bound.
const MAX_TIMEOUT_SECONDS: u64 = delta_arrow_reader::serve::MAX_TIMEOUT.as_secs();

/// Runs the server until the process is stopped.
pub async fn serve(args: &ServeArgs) -> Result<(), DeltaError> {
    let dir = super::view::local_path(&args.dir, "serve")?;
    let mut config = ServeConfig::new(&dir)
        .with_port(args.port)
        .with_latency(Duration::from_millis(args.latency_ms))
        .with_request_log(args.log)
        .with_follow_symlinks(args.follow_symlinks)
        .with_checkpoint_hints(true);
    config.idle_timeout = Duration::from_secs(args.idle_timeout.max(1));
    config.header_timeout = Duration::from_secs(args.header_timeout.max(1));
    config.max_connections = args.max_connections.max(1);
    config.max_connections_per_client = args.max_connections_per_client.max(1);
    if let Some(www) = &args.www {
        config = config.with_mount("/www", www).with_index("index.html");
    } else if !super::view::VIEWER_FILES.is_empty() {
        config = config.with_index("index.html");
        for (name, bytes) in super::view::VIEWER_FILES {
            let kind = super::view::content_type(name);
            config = config.with_memory_file(format!("www/{name}"), *bytes, kind);
        }
    }
    run_forever(config)
        .await
        .map_err(|e| cannot_serve(&args.dir, Some(args.port), &e))
}

/// Why serving `dir` on `port` failed: a port in use, or one this user may not listen on,
/// names the port, not the folder.
pub(super) fn cannot_serve(
    dir: &std::path::Path,
    port: Option<u16>,
    e: &std::io::Error,
) -> DeltaError {
    let (path, message) = match port {
        Some(port) if e.kind() == std::io::ErrorKind::AddrInUse => (
            format!("127.0.0.1:{port}"),
            "the port is in use by another program: choose another with --port (0 picks a \
             free one)"
                .to_string(),
        ),
        Some(port) if e.kind() == std::io::ErrorKind::PermissionDenied => (
            format!("127.0.0.1:{port}"),
            format!(
                "cannot listen on the port: {e} (ports below 1024 need privileges): choose \
                 another with --port (0 picks a free one)"
            ),
        ),
        _ => (dir.display().to_string(), format!("cannot serve: {e}")),
    };
    DeltaError::Io {
        path,
        message,
        phase: delta_arrow_reader::Phase::Load,
        transient: false,
    }
}
