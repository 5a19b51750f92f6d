//! The listening side: bind 127.0.0.1, accept connections, serve each with hyper's HTTP/1.1
//! in a task of its own, stop on drop or [`StaticServer::shutdown`].
//!
//! Connection tasks live in a `JoinSet` owned by the accept task, so aborting that one
//! task closes the listener and every open connection. A connection that errors or panics
//! ends alone; the accept loop goes on. Slow and greedy clients are bounded: a request head
//! has `header_timeout` to arrive, a connection that moves no byte for `idle_timeout` is
//! closed (see `progress`), at most `max_connections` are served at once and at most
//! `max_connections_per_client` per client address (see `clients`).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdTcpListener};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};

use super::clients::{ClientSlot, Clients};
use super::config::{ServeConfig, MAX_TIMEOUT};
use super::progress::{LastProgress, Watched};
use super::service::{handle, Shared};
use super::stats::ServeStats;

/// Largest request head accepted (request line and headers); hyper answers 431 past it.
const MAX_HEAD: usize = 16 * 1024;
/// Most headers accepted in one request.
const MAX_HEADERS: usize = 100;
/// Most bytes hyper holds for one connection, read or waiting to be written (its default,
/// about 400 KB, let 4,000 connections that asked for a large file and read nothing hold
/// 1.5-2 GB); a body is read from its file as the socket takes it.
const MAX_CONNECTION_BUFFER: usize = 64 * 1024;

/// A running static file server on 127.0.0.1. Stops when dropped.
#[derive(Debug)]
pub struct StaticServer {
    addr: SocketAddr,
    stats: ServeStats,
    abort: AbortHandle,
    join: Option<Joiner>,
}

#[derive(Debug)]
enum Joiner {
    /// Accept task on the caller's runtime.
    Task(JoinHandle<()>),
    /// Accept task on a runtime of its own, driven by this thread.
    Thread(std::thread::JoinHandle<()>),
}

impl StaticServer {
    /// Binds 127.0.0.1:`config.port` and serves on the current Tokio runtime.
    ///
    /// Fails if the port cannot be bound or if `root` or a mounted directory is not a
    /// directory.
    pub async fn start(config: ServeConfig) -> io::Result<StaticServer> {
        let (listener, shared) = prepare(config)?;
        let addr = listener.local_addr()?;
        let stats = shared.stats.clone();
        let listener = TcpListener::from_std(listener)?;
        let task = tokio::spawn(accept_loop(listener, shared));
        Ok(StaticServer {
            addr,
            stats,
            abort: task.abort_handle(),
            join: Some(Joiner::Task(task)),
        })
    }

    /// Like [`start`](Self::start), but on a thread with its own runtime: for synchronous
    /// tests, or callers whose runtime may block.
    pub fn start_background(config: ServeConfig) -> io::Result<StaticServer> {
        let (listener, shared) = prepare(config)?;
        let addr = listener.local_addr()?;
        let stats = shared.stats.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let task = runtime.spawn(async move {
            match TcpListener::from_std(listener) {
                Ok(listener) => accept_loop(listener, shared).await,
                Err(err) => {
                    let _ = io::Write::write_fmt(
                        &mut io::stderr(),
                        format_args!("dar serve: cannot listen: {err}\n"),
                    );
                }
            }
        });
        let abort = task.abort_handle();
        let thread = std::thread::Builder::new()
            .name(format!("dar-serve-{}", addr.port()))
            .spawn(move || {
                let _ = runtime.block_on(task);
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok(StaticServer {
            addr,
            stats,
            abort,
            join: Some(Joiner::Thread(thread)),
        })
    }

    /// The bound address (127.0.0.1 and the actual port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URL of `path` on this server (`path` with or without a leading `/`).
    pub fn url_for(&self, path: &str) -> String {
        format!("{}/{}", self.url(), path.trim_start_matches('/'))
    }

    /// Request counts and log, shared with the running server.
    pub fn stats(&self) -> ServeStats {
        self.stats.clone()
    }

    /// Serves until the process ends (or the server's task fails).
    pub async fn wait(mut self) -> io::Result<()> {
        match self.join.take() {
            Some(Joiner::Task(task)) => task
                .await
                .map_err(|e| io::Error::other(format!("server task ended: {e}"))),
            Some(Joiner::Thread(thread)) => thread
                .join()
                .map_err(|_| io::Error::other("server thread ended")),
            None => Ok(()),
        }
    }

    /// Stops accepting, closes all connections, and waits until the port is released.
    pub async fn shutdown(mut self) {
        self.abort.abort();
        match self.join.take() {
            Some(Joiner::Task(task)) => {
                let _ = task.await;
            }
            Some(Joiner::Thread(thread)) => {
                let _ = thread.join();
            }
            None => {}
        }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.abort.abort();
    }
}

/// Serves `config` until the process ends, printing the URL (and mounts) to stdout first.
/// For `dar serve`.
pub async fn run_forever(config: ServeConfig) -> io::Result<()> {
    let root = config.root.clone();
    let mounts = config.mounts.clone();
    let picked = config.port == 0;
    let server = StaticServer::start(config).await?;
    let mut text = format!("Serving {} at {}/\n", root.display(), server.url());
    for (prefix, dir) in &mounts {
        let prefix = prefix.trim_matches('/');
        text.push_str(&format!(
            "  {} at {}/{prefix}/\n",
            dir.display(),
            server.url()
        ));
    }
    // The server serves on whether or not anyone reads this (a closed pipe, a full disk),
    // unless its port was picked at random: then nobody could learn where it is.
    let mut out = io::stdout().lock();
    let printed =
        io::Write::write_all(&mut out, text.as_bytes()).and_then(|()| io::Write::flush(&mut out));
    drop(out);
    if let (Err(e), true) = (printed, picked) {
        return Err(io::Error::new(
            e.kind(),
            format!("cannot print the server's address, whose port was picked at random: {e}"),
        ));
    }
    server.wait().await
}

/// Checks the directories and binds the listener.
fn prepare(config: ServeConfig) -> io::Result<(StdTcpListener, Arc<Shared>)> {
    let shared = Arc::new(Shared::new(config)?);
    let listener = StdTcpListener::bind((Ipv4Addr::LOCALHOST, shared.config.port))?;
    listener.set_nonblocking(true)?;
    Ok((listener, shared))
}

/// Accepts connections forever; runs each in the `JoinSet` it owns.
async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut conns = JoinSet::new();
    let clients = Clients::default();
    let max = shared.config.max_connections.max(1);
    let per_client = shared.config.max_connections_per_client.max(1);
    loop {
        tokio::select! {
            accepted = listener.accept(), if conns.len() < max => match accepted {
                Ok((stream, peer)) => match clients.admit(peer.ip(), per_client) {
                    Some(slot) => {
                        conns.spawn(serve_connection(stream, Arc::clone(&shared), slot));
                    }
                    None => refuse(stream, &shared),
                },
                // Out of file descriptors and the like: back off, never give up.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            Some(_finished) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// Answers a connection past its client's bound `503` (if the socket takes the bytes at
/// once) and closes it.
fn refuse(stream: TcpStream, shared: &Shared) {
    shared.stats.connection_refused();
    let busy = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";
    let _ = stream.try_write(busy);
}

/// Serves one connection with hyper until the client closes it, an error occurs, its
/// request head takes longer than `header_timeout`, or it moves no byte for `idle_timeout`.
async fn serve_connection(stream: TcpStream, shared: Arc<Shared>, slot: ClientSlot) {
    let _open = (slot, shared.stats.connection());
    let _ = stream.set_nodelay(true);
    let (idle, head) = (
        shared.config.idle_timeout.min(MAX_TIMEOUT),
        shared.config.header_timeout.min(MAX_TIMEOUT),
    );
    let progress = LastProgress::new();
    let stream = Watched::new(stream, progress.clone());
    let held = progress.clone();
    let service =
        hyper::service::service_fn(move |req| handle(Arc::clone(&shared), req, held.clone()));
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(head.min(idle))
        .max_header_size(MAX_HEAD)
        .max_headers(MAX_HEADERS)
        .max_buf_size(MAX_CONNECTION_BUFFER)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = conn => {}
        () = progress.stalled(idle) => {}
    }
}
