//! [`DeltaTableBuilder`]: where a table is and which version to open.

use std::collections::HashMap;
use std::sync::Arc;

#[cfg(not(target_arch = "wasm32"))]
use super::kept_log::{keeping, KeptLog};
use super::load::{load_log, DEFAULT_LOG_CONCURRENCY};
use super::table::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::io::{MeteredStore, Store, TableLocation};
use crate::limits::DEFAULT_MAX_COMMITS_PER_LOAD;
use crate::log::{LoadScope, VersionTarget};

/// Opens a Delta table: `DeltaTableBuilder::new(location).with_version(3).load_table().await`.
#[derive(Debug, Clone)]
pub struct DeltaTableBuilder {
    location: String,
    storage_options: HashMap<String, String>,
    target: VersionTarget,
    store: Option<Store>,
    log_concurrency: usize,
    max_commits: u64,
}

impl DeltaTableBuilder {
    /// A builder for the table at `location`: a local path or a URL (`file://`, `http(s)://`,
    /// and with the feature `cloud` `s3://`, `az://`, `abfss://`, `gs://`, ...).
    pub fn new(location: impl Into<String>) -> Self {
        DeltaTableBuilder {
            location: location.into(),
            storage_options: HashMap::new(),
            target: VersionTarget::Latest,
            store: None,
            log_concurrency: DEFAULT_LOG_CONCURRENCY,
            max_commits: DEFAULT_MAX_COMMITS_PER_LOAD,
        }
    }

    /// Storage options for the location's store: object_store's names (for `s3://`:
    /// `aws_region`, `aws_endpoint`, `aws_access_key_id`, `aws_secret_access_key`,
    /// `aws_allow_http`, `anonymous`, ...; for Azure: `azure_storage_account_name`,
    /// `azure_storage_account_key`, `azure_storage_sas_token`,
    /// `azure_storage_connection_string`, ...; for `gs://`: `google_service_account`,
    /// `google_service_account_key`, `anonymous`, ...), and the client settings every remote
    /// store takes (`timeout`, `idle_timeout`, `max_retries`, ...).
    pub fn with_storage_options(mut self, options: HashMap<String, String>) -> Self {
        self.storage_options.extend(options);
        self
    }

    /// One storage option.
    pub fn with_storage_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.storage_options.insert(key.into(), value.into());
        self
    }

    /// Opens exactly this version.
    pub fn with_version(mut self, version: u64) -> Self {
        self.target = VersionTarget::Version(version);
        self
    }

    /// Opens the newest version committed at or before `timestamp`.
    pub fn with_timestamp(mut self, timestamp: chrono::DateTime<chrono::Utc>) -> Self {
        self.target = VersionTarget::Timestamp(timestamp.timestamp_millis());
        self
    }

    /// Opens the newest version committed at or before a timestamp given as text: RFC 3339
    /// (`2024-01-31T10:00:00Z`), a date-time taken as UTC (`2024-01-31 10:00:00`), or a date
    /// (`2024-01-31`, midnight UTC).
    pub fn with_timestamp_str(self, timestamp: &str) -> Result<Self> {
        Ok(self.with_timestamp(parse_timestamp(timestamp)?))
    }

    /// Reads through this store instead of one made from the location (for in-memory tables,
    /// custom transports, and the browser's fetch store). The location is then used in
    /// messages and to resolve absolute paths.
    pub fn with_store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }

    /// At most this many log requests in flight at once, when the log is loaded and when a
    /// lazily loaded table replays it for a scan (default [`DEFAULT_LOG_CONCURRENCY`]; 0 is
    /// taken as 1). Lower it for a store that throttles; a log of many commits and no
    /// checkpoint loads in about `commits / concurrency` request times.
    pub fn with_log_concurrency(mut self, requests: usize) -> Self {
        self.log_concurrency = requests.max(1);
        self
    }

    /// Replays at most `max` commits after the checkpoint (default
    /// [`DEFAULT_MAX_COMMITS_PER_LOAD`]): a log of more is refused with
    /// [`DeltaError::LimitExceeded`] before they are read, as is a store that answers every
    /// commit path probed. 0 is taken as 1.
    pub fn with_max_commits(mut self, max: u64) -> Self {
        self.max_commits = max.max(1);
        self
    }

    /// Loads the snapshot lazily: protocol, metadata and the list of log files; each scan
    /// build replays those log files (or checkpoint) again before applying its predicate, so
    /// the table holds no per-file metadata between scans. Natively, the log files the load
    /// fetched whole (commits, a small checkpoint) are kept, up to `KEPT_LOG_BYTES` (4 MiB)
    /// in all, so a replay fetches only what did not fit.
    pub async fn load_table(self) -> Result<DeltaTable> {
        self.load(false).await
    }

    /// Loads the snapshot and keeps its scan metadata: the log is replayed once here and the
    /// reconciled, query-unfiltered active `add` actions (with all statistics) stay in memory
    /// for the table's lifetime (no refresh: load again for a newer snapshot). Scan builds
    /// then select files with no log or checkpoint reads.
    pub async fn load_table_with_eager_scan_metadata(self) -> Result<DeltaTable> {
        self.load(true).await
    }

    // On wasm32 stores are not `Send`: the `Arc` is shared on one thread only.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    async fn load(self, eager: bool) -> Result<DeltaTable> {
        let location = TableLocation::parse(&self.location)?;
        let inner = match self.store {
            Some(store) => store,
            None => store_for(&location, &self.storage_options)?,
        };
        let metered = MeteredStore::new(inner);
        let counters = metered.counters();
        let store: Store = Arc::new(metered);
        let scope = if eager {
            LoadScope::ActiveFiles
        } else {
            LoadScope::TableOnly
        };
        // Natively, a lazy table replays its log at each scan: what the load fetches whole is
        // kept (see `kept_log`). The npm package loads eagerly.
        #[cfg(not(target_arch = "wasm32"))]
        let kept = Arc::new(KeptLog::default());
        #[cfg(not(target_arch = "wasm32"))]
        let store = if eager { store } else { keeping(&store, &kept) };
        let log = load_log(
            store.as_ref(),
            &location.to_string(),
            self.target,
            scope,
            self.log_concurrency,
            self.max_commits,
        )
        .await?;
        DeltaTable::from_log(location, store, counters, log, eager, self.log_concurrency)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn store_for(location: &TableLocation, options: &HashMap<String, String>) -> Result<Store> {
    Ok(Arc::new(crate::io::ObjectStoreRange::from_location(
        location, options,
    )?))
}

#[cfg(target_arch = "wasm32")]
fn store_for(location: &TableLocation, _options: &HashMap<String, String>) -> Result<Store> {
    Err(DeltaError::InvalidLocation {
        location: location.to_string(),
        reason: "on wasm32 a store must be given with `with_store`".into(),
    })
}

/// Parses a timestamp for time travel (see [`DeltaTableBuilder::with_timestamp_str`]).
pub fn parse_timestamp(text: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    let t = text.trim();
    let at = crate::schema::time_text::parse_timestamp(t)
        .and_then(|p| chrono::DateTime::from_timestamp_micros(p.micros));
    if let Some(at) = at {
        return Ok(at);
    }
    Err(DeltaError::InvalidArgument {
        reason: format!(
            "'{t}' is not a timestamp: use RFC 3339 (2024-01-31T10:00:00Z), \
             '2024-01-31 10:00:00' (UTC) or a date"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_timestamps() {
        let ms = |s: &str| parse_timestamp(s).map(|t| t.timestamp_millis()).ok();
        assert_eq!(ms("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(ms("1970-01-01T01:00:01+01:00"), Some(1000));
        assert_eq!(ms("1970-01-01 00:00:01.5"), Some(1500));
        assert_eq!(ms("1970-01-02"), Some(86_400_000));
        assert_eq!(
            parse_timestamp("yesterday").err().map(|e| e.code()),
            Some("invalid_argument")
        );
    }
}
