//! How a [`StaticServer`](super::StaticServer) is set up: what it serves and how it behaves.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;

use super::faults::Faults;

/// The longest `idle_timeout` and `header_timeout` a server uses: a day (longer ones are
/// bounded to it; `Duration::MAX` overflowed the clock's arithmetic and every connection
/// panicked).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// A file the server holds in memory (a page embedded in a binary), served at a fixed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// The file's bytes.
    pub bytes: Bytes,
    /// Its `Content-Type` (e.g. `application/wasm`, which browsers need to compile a module
    /// as it streams in).
    pub content_type: String,
}

/// Settings of a static file server.
///
/// Construct with [`ServeConfig::new`] and the `with_*` methods, or with struct update
/// syntax: `ServeConfig { latency, ..ServeConfig::new(root) }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Directory served at `/`.
    pub root: PathBuf,
    /// Further directories served under URL prefixes, e.g. `("/tables".into(), dir)`. A
    /// request goes to the mount with the longest prefix that its path starts with (whole
    /// segments), else to `root`.
    pub mounts: Vec<(String, PathBuf)>,
    /// Files held in memory, by URL path without its leading `/` (`"index.html"`,
    /// `"app/main.js"`). They are answered before any directory is looked at, whole (a
    /// `Range` is ignored, as HTTP allows). With [`index`](Self::index) set, `/` (or any
    /// path ending in `/`) also finds the index file here.
    pub memory_files: BTreeMap<String, MemoryFile>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Added to every request before it is answered (a slow network, for tests and demos).
    pub latency: Duration,
    /// File served for a request naming a directory (e.g. `index.html`); `None` answers
    /// 404 for directories. There is never a directory listing.
    pub index: Option<String>,
    /// Faults to inject (tests only; none by default).
    pub faults: Faults,
    /// Print one line per request to stderr.
    pub log_requests: bool,
    /// A connection that moves no byte either way for this long is closed: a keep-alive
    /// connection between requests, a client sending its request head slowly, a client
    /// that stops reading its response. Default: 30 s.
    pub idle_timeout: Duration,
    /// A request head (request line and headers) must arrive within this long of the
    /// connection's first byte or of the previous response, however steadily it trickles
    /// in. Default: 10 s.
    pub header_timeout: Duration,
    /// Connections served at once; further ones wait in the listen backlog. Default: 4096.
    pub max_connections: usize,
    /// Connections one client address may hold open; past it, a new connection is
    /// answered `503` and closed. Default: 1024 (a native reader loading a large log opens
    /// a few more than its 512 requests in flight; a browser opens 6).
    pub max_connections_per_client: usize,
    /// Serve files whose real path (symlinks resolved) lies outside the served
    /// directories. Off by default: a table's symlink to `~/.ssh/id_rsa` is refused (403).
    pub follow_symlinks: bool,
    /// Answer pages of other origins (CORS: `Access-Control-Allow-Origin: *`, preflights).
    /// On by default, for pages that read the tables from elsewhere (`dar serve`); off
    /// where the only page is served beside the tables (`dar view`), so no other site's
    /// page can read them.
    pub cross_origin: bool,
    /// Answer a table's missing `_delta_log/_last_checkpoint` from its log folder (see
    /// `checkpoint_hint`), so that readers that cannot list open logs whose early commits
    /// are gone. Off by default (a missing file is a 404); on in `dar serve` and `dar view`.
    pub checkpoint_hints: bool,
}

impl ServeConfig {
    /// Serve `root` on an ephemeral port, no latency, no faults, no index file.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ServeConfig {
            root: root.into(),
            mounts: Vec::new(),
            memory_files: BTreeMap::new(),
            port: 0,
            latency: Duration::ZERO,
            index: None,
            faults: Faults::default(),
            log_requests: false,
            idle_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            max_connections: 4096,
            max_connections_per_client: 1024,
            follow_symlinks: false,
            cross_origin: true,
            checkpoint_hints: false,
        }
    }

    /// Also serve `dir` under the URL prefix `prefix` (e.g. `"/tables"`).
    pub fn with_mount(mut self, prefix: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.mounts.push((prefix.into(), dir.into()));
        self
    }

    /// Also serve `bytes` at `/path` (see [`memory_files`](Self::memory_files)).
    pub fn with_memory_file(
        mut self,
        path: impl Into<String>,
        bytes: impl Into<Bytes>,
        content_type: impl Into<String>,
    ) -> Self {
        let path: String = path.into();
        self.memory_files.insert(
            path.trim_start_matches('/').to_string(),
            MemoryFile {
                bytes: bytes.into(),
                content_type: content_type.into(),
            },
        );
        self
    }

    /// Listen on `port` (0: any free port).
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Delay every answer by `latency`.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Serve `name` (e.g. `"index.html"`) for requests naming a directory.
    pub fn with_index(mut self, name: impl Into<String>) -> Self {
        self.index = Some(name.into());
        self
    }

    /// Inject `faults`.
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Print one line per request to stderr.
    pub fn with_request_log(mut self, on: bool) -> Self {
        self.log_requests = on;
        self
    }

    /// Follow symlinks out of the served directories (e.g. a folder of links to tables).
    pub fn with_follow_symlinks(mut self, on: bool) -> Self {
        self.follow_symlinks = on;
        self
    }

    /// Answer missing `_last_checkpoint` files from the log folder (see
    /// [`checkpoint_hints`](Self::checkpoint_hints)).
    pub fn with_checkpoint_hints(mut self, on: bool) -> Self {
        self.checkpoint_hints = on;
        self
    }

    /// Answer pages of other origins (see [`cross_origin`](Self::cross_origin)).
    pub fn with_cross_origin(mut self, on: bool) -> Self {
        self.cross_origin = on;
        self
    }
}

impl Default for ServeConfig {
    /// Serves the current directory.
    fn default() -> Self {
        ServeConfig::new(".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_and_defaults() {
        let c = ServeConfig::new("www")
            .with_mount("/tables", "/data")
            .with_port(8080)
            .with_latency(Duration::from_millis(5))
            .with_index("index.html")
            .with_request_log(true)
            .with_follow_symlinks(true)
            .with_cross_origin(false);
        assert!(!c.cross_origin);
        assert!(ServeConfig::default().cross_origin);
        assert_eq!(c.root, PathBuf::from("www"));
        assert_eq!(
            c.mounts,
            vec![("/tables".to_string(), PathBuf::from("/data"))]
        );
        assert_eq!(c.port, 8080);
        assert_eq!(c.latency, Duration::from_millis(5));
        assert_eq!(c.index.as_deref(), Some("index.html"));
        assert!(c.log_requests);
        assert!(c.follow_symlinks);
        assert!(!ServeConfig::default().follow_symlinks);
        assert!(ServeConfig::default().faults.is_none());
        let d = ServeConfig {
            port: 1,
            ..ServeConfig::new("x")
        };
        assert_eq!(d.port, 1);
    }
}
