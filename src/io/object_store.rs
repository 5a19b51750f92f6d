//! [`ObjectStoreRange`]: a [`RangeRead`] over an `object_store` store (native only).
//!
//! Local paths and `file://` URLs use the local file system; `http(s)://` a plain HTTP store,
//! which cannot list (the log is then probed); with the feature `cloud`, `s3://`, Azure
//! (`az://`, `abfss://`, ...) and `gs://` stores, configured by storage options and their
//! cloud's environment variables (see `cloud`).
//!
//! It keeps the [`RangeRead`] contract where `object_store` alone would not: a zero-length
//! range asks the store (one HEAD) whether the object exists; listed names are the objects'
//! own (never percent-decoded); a list prefix is a string prefix, not whole path segments.
//!
//! Local paths that are not regular files (a FIFO, a device, a socket) are refused before
//! they are opened: opening a FIFO for reading waits for a writer, for ever. Local reads are
//! done on the caller's thread (see `local_read`); listings and sizes go through
//! `object_store`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use percent_encoding::percent_decode_str;

use super::client_options::client_settings;
use super::version_pin::VersionPins;
use super::{
    check_range_len, check_range_order, past_end, phase_for, BoxFuture, ListEntry, RangeRead,
    TableLocation,
};
use crate::error::{redact, store_message, DeltaError, Result};

/// A table root inside an `object_store` store.
#[derive(Debug, Clone)]
pub struct ObjectStoreRange {
    store: Arc<dyn ObjectStore>,
    root: Path,
    can_list: bool,
    /// For local files: the store that maps object names to file paths, to check them.
    local: Option<Arc<object_store::local::LocalFileSystem>>,
    /// For HTTP: a server that answers a range request with the whole object (`200`) has
    /// the range cut out of it, when the object is at most this large (as in the browser,
    /// see `FetchOptions::max_full_body_for_range`).
    whole_for_range: Option<u64>,
    /// For stores over HTTP: how often a body cut short in transit is asked for again, as
    /// the retry settings say (their count and time limit; the first wait doubled each
    /// time, at most their longest).
    cut_body_retries: Option<BodyRetries>,
    /// For remote stores: each object's first answer, against which later ones are checked
    /// (see `version_pin`).
    pins: Option<Arc<VersionPins>>,
    /// Log files found missing: `404`, and `403` taken as missing (`missing_log_answers`).
    missing: Arc<super::MissingLogAnswers>,
    /// For cloud stores: the bucket or container, as a URL (`s3://bucket`), for errors.
    bucket: Option<String>,
}

/// [`ObjectStoreRange::cut_body_retries`].
#[derive(Debug, Clone, Copy)]
struct BodyRetries {
    max: usize,
    within: std::time::Duration,
    first_wait: std::time::Duration,
    longest_wait: std::time::Duration,
}

impl BodyRetries {
    fn from(config: &object_store::RetryConfig) -> Self {
        BodyRetries {
            max: config.max_retries,
            within: config.retry_timeout,
            first_wait: config.backoff.init_backoff,
            longest_wait: config.backoff.max_backoff,
        }
    }
}

/// The scheme, host and port of `url`, without a `user:password@` (sent as a header by
/// [`basic_authorization`] instead: the request's URL never carries it).
fn origin_without_credentials(url: &url::Url) -> String {
    let mut origin = url.clone();
    let _ = origin.set_username("");
    let _ = origin.set_password(None);
    origin[..url::Position::BeforePath].to_string()
}

/// `Authorization: Basic …` for the `user:password@` of an http(s) URL, as curl sends it
/// (percent-escapes in either part decoded); `None` without one. Marked sensitive, so it is
/// never logged; reqwest drops it on a redirect to another host.
fn basic_authorization(url: &url::Url) -> Option<http::HeaderValue> {
    use base64::Engine;
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |text: &str| percent_decode_str(text).decode_utf8_lossy().into_owned();
    let pair = format!(
        "{}:{}",
        decode(url.username()),
        decode(url.password().unwrap_or_default())
    );
    let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
    let mut value = http::HeaderValue::try_from(format!("Basic {encoded}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// The store name under which `pinned_range` hands a replaced object's error on.
const PIN_CHECK: &str = "version_pin";

/// The largest object read whole when an HTTP server ignores `Range` headers.
const MAX_WHOLE_FOR_RANGE: u64 = 16 * 1024 * 1024;

impl ObjectStoreRange {
    /// Wraps `store`; table paths are resolved under `root`. `can_list` says whether the store
    /// supports listing (plain HTTP does not).
    pub fn new(store: Arc<dyn ObjectStore>, root: Path, can_list: bool) -> Self {
        ObjectStoreRange {
            store,
            root,
            can_list,
            local: None,
            whole_for_range: None,
            cut_body_retries: None,
            pins: None,
            missing: Arc::default(),
            bucket: None,
        }
    }

    /// `read()`, asked again (after a wait) while it fails with a body cut short in transit,
    /// as the retry settings allow: object_store resumes such a body only when the server
    /// sent an `ETag`, and a cut without one failed the read. Never for a status or a check
    /// of `http_checks` (those repeat). Asking for the whole again is consistent with or
    /// without an `ETag`: no bytes of two answers are joined.
    async fn asking_again<T, F>(&self, mut read: impl FnMut() -> F) -> object_store::Result<T>
    where
        F: std::future::Future<Output = object_store::Result<T>>,
    {
        let since = std::time::Instant::now();
        let mut attempt = 0usize;
        loop {
            let e = match read().await {
                Ok(done) => return Ok(done),
                Err(e) => e,
            };
            let Some(retries) = self.cut_body_retries else {
                return Err(e);
            };
            if attempt >= retries.max || since.elapsed() >= retries.within || !cut_in_transit(&e) {
                return Err(e);
            }
            let factor = 1u32 << attempt.min(16);
            let wait = retries.first_wait.saturating_mul(factor);
            tokio::time::sleep(wait.min(retries.longest_wait)).await;
            attempt += 1;
        }
    }

    /// Counts a log file that `e` says is missing (see `missing_log_answers`).
    fn count_missing(&self, path: &str, e: &object_store::Error) {
        match e {
            object_store::Error::NotFound { .. } => self.missing.note(path, false),
            object_store::Error::PermissionDenied { .. } if super::forbidden_is_missing(path) => {
                self.missing.note(path, true)
            }
            _ => {}
        }
    }

    /// Bytes `range` of the object `full`, its answer checked against the object's first one
    /// where versions are pinned (see `version_pin`): a replaced object is an `io` error.
    async fn pinned_range(
        &self,
        full: &Path,
        path: &str,
        range: Range<u64>,
    ) -> object_store::Result<Bytes> {
        let Some(pins) = &self.pins else {
            return self.store.get_range(full, range).await;
        };
        let options = object_store::GetOptions::new().with_range(Some(range));
        let answer = self.store.get_opts(full, options).await?;
        if let Err(e) = pins.check(path, &answer.meta) {
            return Err(object_store::Error::Generic {
                store: PIN_CHECK,
                source: Box::new(e),
            });
        }
        answer.bytes().await
    }

    /// A range of an object whose server sends only whole objects: the whole object, if it
    /// is small enough, cut to `range`.
    async fn range_of_whole(&self, full: &Path, path: &str, range: &Range<u64>) -> Result<Bytes> {
        let limit = self.whole_for_range.unwrap_or(0);
        let result = self.store.get(full).await.map_err(|e| map_error(path, e))?;
        if let Some(pins) = &self.pins {
            pins.check(path, &result.meta)?;
        }
        let size = result.meta.size;
        if size > limit {
            return Err(DeltaError::Io {
                path: path.to_string(),
                message: format!(
                    "the server ignores Range headers and the object is {size} bytes, more \
                     than the {limit} bytes read whole in their place; serve the table from a \
                     host that supports byte ranges"
                ),
                phase: phase_for(path),
                transient: false,
            });
        }
        let whole = result.bytes().await.map_err(|e| map_error(path, e))?;
        let len = whole.len() as u64;
        if range.start >= len {
            return Err(past_end(path, range, Some(len)));
        }
        let end = range.end.min(len);
        // Both ends are within `whole`, whose length fits in usize.
        let cut = whole.slice(range.start as usize..end as usize);
        check_range_len(path, range, &cut)?;
        Ok(cut)
    }

    /// For a local store: the file `full` names, checked to be a regular file (or not to
    /// exist, which the read then reports as not found); it is read on the caller's thread
    /// (see `local_read`). `Ok(None)` for other stores.
    fn local_file(&self, full: &Path, path: &str) -> Result<Option<std::path::PathBuf>> {
        let Some(file) = self
            .local
            .as_ref()
            .and_then(|local| local.path_to_filesystem(full).ok())
        else {
            return Ok(None);
        };
        match std::fs::metadata(&file) {
            Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(DeltaError::Io {
                path: path.to_string(),
                message: "not a regular file (FIFOs, devices and sockets are not read)".into(),
                phase: phase_for(path),
                transient: false,
            }),
            _ => Ok(Some(file)),
        }
    }

    /// For a local store: an error when the listed folder holds an entry named as a commit or
    /// checkpoint that is not a regular file, such as a FIFO, a folder named
    /// `00000000000000000001.json` or a symbolic link to nothing. The listing leaves such entries out, so the log
    /// would seem to end before them and an older version pass for the latest.
    fn refuse_unreadable_log_entries(&self, full: &Path, folder: &str, prefix: &str) -> Result<()> {
        let Some(dir) = self
            .local
            .as_ref()
            .and_then(|local| local.path_to_filesystem(full).ok())
        else {
            return Ok(());
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        let name_prefix = &prefix[folder.len()..].trim_start_matches('/');
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.starts_with(name_prefix) {
                continue;
            }
            let path = if folder.is_empty() {
                name.to_string()
            } else {
                format!("{folder}/{name}")
            };
            // Only the names the loader reads: commits and checkpoints (not `.crc`, `.tmp`).
            if !commit_or_checkpoint_name(name) {
                continue;
            }
            // A regular file is told by the folder's own listing, with no call per file (a
            // log of 10,000 commits); symbolic links are followed, as the reads follow them,
            // and one to nothing is refused too.
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let problem = match std::fs::metadata(entry.path()) {
                Ok(meta) if meta.is_file() => continue,
                Ok(_) => "not a regular file (a folder, FIFO, device or socket)",
                Err(_) if entry.file_type().is_ok_and(|t| t.is_symlink()) => {
                    "a symbolic link to nothing"
                }
                Err(_) => continue,
            };
            return Err(DeltaError::Io {
                message: format!("a log file that is {problem}: the log cannot be read past it"),
                phase: phase_for(&path),
                path,
                transient: false,
            });
        }
        Ok(())
    }

    /// The store for a table location, configured by `options`.
    pub fn from_location(
        location: &TableLocation,
        options: &HashMap<String, String>,
    ) -> Result<Self> {
        let url = location.url();
        // Object names are used as they are: `Path::parse` keeps a literal `%` (Spark writes
        // partition folders such as `ts=2020-01-01 08%3A09%3A10`), where building a path
        // part by part would escape it to `%25` and miss the object.
        let mut decoded = percent_decode_str(url.path())
            .decode_utf8_lossy()
            .into_owned();
        // An http(s) path with `//` in it (`https://host/t//table/`, a typo or a joined
        // prefix) names what the same path with one `/` names on every static server (and
        // in the browser package, which sends it as it is): an object path has no empty
        // segments, so the doubled slashes are made one.
        if matches!(url.scheme(), "http" | "https") {
            while decoded.contains("//") {
                decoded = decoded.replace("//", "/");
            }
        }
        let root = Path::parse(&decoded).map_err(|e| DeltaError::InvalidLocation {
            location: location.to_string(),
            reason: e.to_string(),
        })?;
        match url.scheme() {
            "file" => {
                // Client settings mean nothing to local files: passed over, as other
                // stores' options are.
                let own: HashMap<String, String> = options
                    .iter()
                    .filter(|(k, _)| !super::client_options::is_client_option(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                refuse_options(&own, "local file")?;
                // A file named as the table: no folder to look for a log in (its reads would
                // fail as "not a directory").
                let named = url.to_file_path().ok().and_then(|p| {
                    let text = p.to_str()?.trim_end_matches('/').to_string();
                    std::fs::metadata(text).ok()
                });
                if named.is_some_and(|m| m.is_file()) {
                    return Err(DeltaError::NotATable {
                        location: location.to_string(),
                    });
                }
                let store = Arc::new(object_store::local::LocalFileSystem::new());
                let mut range = Self::new(store.clone(), root, true);
                range.local = Some(store);
                Ok(range)
            }
            "http" | "https" => {
                let (mut settings, rest) = client_settings(options)?;
                refuse_options(&rest, "HTTP")?;
                // A token or signature in the table's URL goes on every request.
                settings.connector.query = url.query().filter(|q| !q.is_empty()).map(Into::into);
                settings.connector.whole_for_range = MAX_WHOLE_FOR_RANGE;
                settings.connector.encode_plus = true;
                let origin = origin_without_credentials(url);
                let mut client = settings.client.with_allow_http(true);
                if let Some(basic) = basic_authorization(url) {
                    let mut headers = http::HeaderMap::new();
                    headers.insert(http::header::AUTHORIZATION, basic);
                    client = client.with_default_headers(headers);
                }
                let retries = BodyRetries::from(&settings.retry);
                let store = object_store::http::HttpBuilder::new()
                    .with_url(&origin)
                    .with_client_options(client)
                    .with_retry(settings.retry)
                    .with_http_connector(settings.connector)
                    .build()
                    .map_err(|e| store_config_error(location, e))?;
                let mut range = Self::new(Arc::new(store), root, false);
                range.whole_for_range = Some(MAX_WHOLE_FOR_RANGE);
                range.cut_body_retries = Some(retries);
                range.pins = Some(Arc::default());
                Ok(range)
            }
            other => {
                #[cfg(feature = "cloud")]
                if let Some(built) = super::cloud::cloud_store(location, options) {
                    let cloud = built?;
                    let mut range = Self::new(cloud.store, root, true);
                    range.cut_body_retries = Some(BodyRetries::from(&cloud.retry));
                    range.pins = Some(Arc::default());
                    range.bucket = Some(crate::error::redact(&url[..url::Position::BeforePath]));
                    return Ok(range);
                }
                Err(DeltaError::InvalidLocation {
                    location: location.to_string(),
                    reason: unsupported_scheme(other),
                })
            }
        }
    }

    fn full_path(&self, relative: &str) -> Path {
        self.parsed_path(relative).unwrap_or_else(|| {
            relative
                .split('/')
                .filter(|p| !p.is_empty())
                .fold(self.root.clone(), |path, part| path.join(part))
        })
    }

    /// `relative` under the root, named as it is; `None` when it is not a valid object name
    /// (an empty or `..` segment, a control character).
    fn parsed_path(&self, relative: &str) -> Option<Path> {
        let relative = relative.trim_matches('/');
        let joined = if self.root.as_ref().is_empty() {
            relative.to_string()
        } else {
            format!("{}/{relative}", self.root.as_ref())
        };
        Path::parse(&joined).ok()
    }

    /// The table path of a listed object: its name under the root as it is. Object names
    /// are never percent-decoded: `x%3Ay` is listed as `x%3Ay`, the name `get` takes.
    fn relative(&self, path: &Path) -> Option<String> {
        let parts: Vec<String> = path
            .prefix_match(&self.root)?
            .map(|p| p.as_ref().to_string())
            .collect();
        Some(parts.join("/"))
    }

    /// The error of a listing under `prefix`. A cloud store lists a folder that does not
    /// exist as empty, so a listing answered `404` means the bucket or container itself is
    /// missing: `not_found`, naming it (object_store hands the status on only as text).
    fn list_error(&self, prefix: &str, e: object_store::Error) -> DeltaError {
        let missing_bucket = matches!(&e, object_store::Error::Generic { .. })
            && self.local.is_none()
            && crate::error::store_message::with_causes(&e).contains("status code: 404");
        match (missing_bucket, &self.bucket) {
            (true, Some(bucket)) => DeltaError::NotFound {
                path: format!("{bucket} (the bucket or container does not exist)"),
                phase: phase_for(prefix),
            },
            _ => map_error(prefix, e),
        }
    }

    /// A zero-length range: empty when the object exists and is at least `range.start`
    /// long. One HEAD (a metadata call for local files); a non-empty range costs nothing
    /// extra.
    async fn empty_range(&self, full: &Path, path: &str, range: &Range<u64>) -> Result<Bytes> {
        let meta = self
            .store
            .head(full)
            .await
            .map_err(|e| map_error(path, e))?;
        if range.start > meta.size {
            return Err(past_end(path, range, Some(meta.size)));
        }
        Ok(Bytes::new())
    }
}

/// Refuses the first of `options` that is not another store's (see `for_another_store`).
fn refuse_options(options: &HashMap<String, String>, kind: &str) -> Result<()> {
    let mut own = options
        .keys()
        .filter(|k| !super::client_options::for_another_store(k, None));
    match own.next() {
        None => Ok(()),
        Some(k) => Err(DeltaError::InvalidStorageOptions {
            reason: format!("option '{k}' does not apply to a {kind} location"),
        }),
    }
}

/// Why a location's scheme is refused, naming the schemes this build reads.
fn unsupported_scheme(scheme: &str) -> String {
    let mut known = vec!["file", "http", "https"];
    #[cfg(feature = "cloud")]
    known.extend_from_slice(super::cloud::CLOUD_SCHEMES);
    #[cfg(not(feature = "cloud"))]
    let built = " (cloud stores need the feature `cloud`)";
    #[cfg(feature = "cloud")]
    let built = "";
    format!(
        "the scheme '{scheme}' is not supported: {}{built}",
        known.join(", ")
    )
}

fn store_config_error(location: &TableLocation, e: object_store::Error) -> DeltaError {
    DeltaError::InvalidStorageOptions {
        reason: format!(
            "cannot configure the store for {location}: {}",
            redact(&e.to_string())
        ),
    }
}

/// Whether `name` is named as a commit (`N.json`) or a checkpoint (`N.checkpoint[.…].parquet`
/// or `.json`), `N` being 20 digits: the files a log's load reads. (The log layer parses them
/// fully; this layer only needs to tell them from `.crc` files and writers' temporaries.)
fn commit_or_checkpoint_name(name: &str) -> bool {
    let Some((version, rest)) = name.split_once('.') else {
        return false;
    };
    version.len() == 20
        && version.bytes().all(|b| b.is_ascii_digit())
        && (rest == "json"
            || (rest.starts_with("checkpoint.")
                && (rest.ends_with(".parquet") || rest.ends_with(".json"))))
}

/// The folder a listing prefix ends in (`_delta_log` of `_delta_log/0000`; `""` at the root).
fn folder_of(prefix: &str) -> &str {
    prefix.rsplit_once('/').map_or("", |(folder, _)| folder)
}

fn map_error(path: &str, e: object_store::Error) -> DeltaError {
    // A replaced object (see `pinned_range`) carries its own error through object_store's.
    let e = match e {
        object_store::Error::Generic { store, source } if store == PIN_CHECK => {
            match source.downcast::<DeltaError>() {
                Ok(pinned) => return *pinned,
                Err(source) => object_store::Error::Generic { store, source },
            }
        }
        other => other,
    };
    match e {
        object_store::Error::NotFound { .. } => DeltaError::NotFound {
            path: path.to_string(),
            phase: phase_for(path),
        },
        object_store::Error::PermissionDenied { .. } if super::forbidden_is_missing(path) => {
            DeltaError::NotFound {
                path: path.to_string(),
                phase: phase_for(path),
            }
        }
        other => DeltaError::Io {
            path: path.to_string(),
            message: with_refusal_named(with_timeout_named(store_message(
                &crate::error::store_message::with_causes(&other),
            ))),
            phase: phase_for(path),
            transient: cut_in_transit(&other),
        },
    }
}

/// `message`, with the storage option that set it named when a whole request timed out
/// (reqwest says only "operation timed out"; the idle timeout names itself).
fn with_timeout_named(message: String) -> String {
    if message.contains("operation timed out") && !message.contains("idle_timeout") {
        format!(
            "{message} (storage options: timeout bounds a whole request, connect_timeout a \
             connection)"
        )
    } else {
        message
    }
}

/// `message`, saying what a refused request usually means: the store took the credentials
/// (or their absence) as not allowing the request.
fn with_refusal_named(message: String) -> String {
    let refused = ["401 Unauthorized", "403 Forbidden"]
        .iter()
        .any(|status| message.contains(status));
    if refused {
        format!(
            "{message} (the store refused the request: check the credentials given by the \
             storage options or the environment, their permissions, and their expiry)"
        )
    } else {
        message
    }
}

/// Whether `e` is an answer's body cut short in transit (the connection closed, reset or
/// idle past the timeout while the body came): object_store hands such an error on as it
/// is, where a failed request comes wrapped in its retry error.
fn cut_in_transit(e: &object_store::Error) -> bool {
    use object_store::client::{HttpError, HttpErrorKind};
    let object_store::Error::Generic { source, .. } = e else {
        return false;
    };
    source.downcast_ref::<HttpError>().is_some_and(|h| {
        let resumed = std::error::Error::source(h).is_some_and(|s| {
            s.downcast_ref::<super::http_checks::ResumedByStore>()
                .is_some()
        });
        !resumed
            && matches!(
                h.kind(),
                HttpErrorKind::Connect
                    | HttpErrorKind::Request
                    | HttpErrorKind::Timeout
                    | HttpErrorKind::Interrupted
            )
    })
}

impl RangeRead for ObjectStoreRange {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let full = self.full_path(path);
        let path = path.to_string();
        Box::pin(async move {
            check_range_order(&path, &range)?;
            let local = self.local_file(&full, &path)?;
            if range.start == range.end {
                return self.empty_range(&full, &path, &range).await;
            }
            if let Some(file) = local {
                return super::local_read::read_range(&file, &path, &range);
            }
            let read = self.asking_again(|| self.pinned_range(&full, &path, range.clone()));
            let bytes = match read.await {
                Ok(bytes) => bytes,
                Err(object_store::Error::NotSupported { .. }) if self.whole_for_range.is_some() => {
                    return self.range_of_whole(&full, &path, &range).await;
                }
                Err(e) => return Err(map_error(&path, e)),
            };
            check_range_len(&path, &range, &bytes)?;
            Ok(bytes)
        })
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let full = self.full_path(path);
        let path = path.to_string();
        Box::pin(async move {
            if let Some(file) = self.local_file(&full, &path)? {
                return super::local_read::read_whole(&file, &path);
            }
            self.asking_again(|| async { self.store.get(&full).await?.bytes().await })
                .await
                .map_err(|e| {
                    self.count_missing(&path, &e);
                    map_error(&path, e)
                })
        })
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        let full = self.full_path(path);
        let path = path.to_string();
        Box::pin(async move {
            let meta = self
                .store
                .head(&full)
                .await
                .map_err(|e| map_error(&path, e))?;
            Ok(Some(meta.size))
        })
    }

    fn can_list(&self) -> bool {
        self.can_list
    }

    fn reads_local_files(&self) -> bool {
        self.local.is_some()
    }

    fn missing_log_answers(&self) -> (u64, u64) {
        self.missing.counts()
    }

    fn read_ahead_gap(&self) -> u64 {
        if self.local.is_some() {
            super::NEAR_GAP
        } else {
            super::FAR_GAP
        }
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        if !self.can_list {
            return Box::pin(async { Ok(None) });
        }
        // `object_store` lists whole path segments: list the folder `prefix` ends in and keep
        // the names that start with `prefix` as a string. The log loader's prefix is a folder
        // (`_delta_log/`), so it lists nothing more than it asks for.
        let folder = folder_of(prefix);
        let full_folder = self.full_path(folder);
        // `start-after` narrows the listing where the store supports it; the names are
        // compared again below, so an offset that cannot be expressed is simply left out.
        // (A leading `/` would sort otherwise once trimmed: no offset then.)
        let offset = start_after
            .filter(|s| !s.starts_with('/'))
            .and_then(|s| self.parsed_path(s));
        let prefix = prefix.to_string();
        let start_after = start_after.map(str::to_string);
        Box::pin(async move {
            let stream = match &offset {
                Some(o) => self.store.list_with_offset(Some(&full_folder), o),
                None => self.store.list(Some(&full_folder)),
            };
            let metas: Vec<object_store::ObjectMeta> = stream
                .try_collect()
                .await
                .map_err(|e| self.list_error(&prefix, e))?;
            self.refuse_unreadable_log_entries(&full_folder, folder_of(&prefix), &prefix)?;
            let entries = metas
                .into_iter()
                .filter_map(|m| {
                    let path = self.relative(&m.location)?;
                    let after = start_after.as_deref().is_none_or(|s| path.as_str() > s);
                    (path.starts_with(&prefix) && after).then(|| ListEntry {
                        path,
                        size: m.size,
                        last_modified_ms: Some(m.last_modified.timestamp_millis()),
                    })
                })
                .collect();
            Ok(Some(entries))
        })
    }
}
