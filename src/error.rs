//! The one error type of the crate.
//!
//! Every failure is a [`DeltaError`] variant with fields a caller can act on, a stable
//! machine-readable [`DeltaError::code`] and the [`Phase`] it happened in. Messages never carry
//! credentials or signed query strings: text that comes from outside (store errors, URLs) goes
//! through [`redact`] before it is kept.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = DeltaError> = std::result::Result<T, E>;

/// Where in the life of a read an error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// Opening the table: discovering and replaying the log.
    Load,
    /// Planning a scan: projection, predicate, file selection.
    Plan,
    /// Reading data files.
    Read,
}

impl Phase {
    /// Lower-case name of the phase (`load`, `plan`, `read`).
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Plan => "plan",
            Phase::Read => "read",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// All errors of Delta Arrow Reader.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaError {
    /// An object that must exist does not.
    #[error("not found: {path}")]
    NotFound {
        /// Path of the object, relative to the table root where possible.
        path: String,
        /// Phase in which the object was needed.
        phase: Phase,
    },
    /// The store failed to answer.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// Path of the object.
        path: String,
        /// What the store said, with credentials and query strings removed.
        message: String,
        /// Phase in which the object was needed.
        phase: Phase,
        /// Whether retrying the same request may succeed.
        transient: bool,
    },
    /// The table location cannot be understood.
    #[error("invalid table location '{location}': {reason}")]
    InvalidLocation {
        /// The location as given (redacted).
        location: String,
        /// Why it was refused.
        reason: String,
    },
    /// Storage options are wrong or incomplete.
    #[error("invalid storage options: {reason}")]
    InvalidStorageOptions {
        /// Why they were refused (never the secret values).
        reason: String,
    },
    /// The location has no `_delta_log` holding a commit or checkpoint (none at all, or only
    /// other files).
    #[error(
        "not a Delta table: {location} has no _delta_log with a commit or checkpoint{}",
        inside_the_log(location)
    )]
    NotATable {
        /// The table location (redacted).
        location: String,
    },
    /// A log file is malformed, or a file the log points at contradicts it (a deletion
    /// vector that is corrupt or names rows its data file does not have).
    #[error("invalid Delta log at {path}: {reason}")]
    InvalidLog {
        /// Path of the log file (or of the deletion vector or data file in question).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Log versions have a gap.
    #[error(
        "Delta log versions are not contiguous: expected version {expected}, found {found}{}",
        gap_hint(*expected)
    )]
    NonContiguousLog {
        /// The version that should have come next.
        expected: u64,
        /// The version that came instead.
        found: u64,
    },
    /// The log has no `protocol` action for the snapshot.
    #[error("the Delta log has no protocol action for version {version}")]
    MissingProtocol {
        /// Snapshot version.
        version: u64,
    },
    /// The log has no `metaData` action for the snapshot.
    #[error("the Delta log has no metaData action for version {version}")]
    MissingMetadata {
        /// Snapshot version.
        version: u64,
    },
    /// The table needs a reader feature this reader does not implement.
    #[error("the table needs the reader feature '{feature}', which this reader does not support")]
    UnsupportedFeature {
        /// Name of the feature, as in `protocol.readerFeatures`.
        feature: String,
    },
    /// The table needs a newer reader protocol version (or names one below 1, which none is).
    #[error("{}", reader_version_message(*.version))]
    UnsupportedReaderVersion {
        /// `protocol.minReaderVersion`.
        version: i64,
    },
    /// Something this reader does not do yet (other than a protocol feature).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What was asked for.
        what: String,
    },
    /// The requested version does not exist or can no longer be reconstructed.
    #[error("version {requested} of the table cannot be read: {reason}")]
    VersionNotFound {
        /// The version asked for.
        requested: u64,
        /// Why (latest version, or history removed).
        reason: String,
    },
    /// No version of the table was committed at or before the requested timestamp.
    #[error("no version of the table was committed at or before {timestamp}: {reason}")]
    TimestampNotFound {
        /// The timestamp asked for, RFC 3339.
        timestamp: String,
        /// Earliest commit time, or why it cannot be found.
        reason: String,
    },
    /// A range of versions cannot be read as a change data feed: the feed was not enabled
    /// at a version of it, or the schema changed within it.
    #[error("the change data feed cannot be read at version {version}: {reason}")]
    ChangeDataFeedUnavailable {
        /// The first version of the range where it cannot.
        version: u64,
        /// Why.
        reason: String,
    },
    /// The table schema is malformed or uses an unknown type.
    #[error("invalid table schema: {reason}")]
    InvalidSchema {
        /// What is wrong.
        reason: String,
    },
    /// A Parquet file (checkpoint or data) cannot be decoded.
    #[error("cannot decode parquet file {path}: {source}")]
    Parquet {
        /// Path of the file.
        path: String,
        /// Phase in which the file was read.
        phase: Phase,
        /// The decoder's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// An Arrow computation failed.
    #[error("arrow error: {source}")]
    Arrow {
        /// Phase in which it happened.
        phase: Phase,
        /// Arrow's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// The caller aborted the read (an `AbortSignal` fired) while `path` was being fetched.
    #[error("aborted while reading {path}")]
    Aborted {
        /// Path of the object being fetched (redacted).
        path: String,
        /// Phase in which the object was needed.
        phase: Phase,
    },
    /// The caller used the API in a way it does not allow.
    #[error("invalid argument: {reason}")]
    InvalidArgument {
        /// What was wrong with the call.
        reason: String,
    },
    /// A Parquet backend other than our own decoder (the `DeltaKernel` one) failed, for a
    /// reason that is not one of ours; its error is kept as the source.
    #[error("{backend} failed to read {path}: {}", store_message(&source.to_string()))]
    Backend {
        /// The backend, e.g. `delta_kernel`.
        backend: &'static str,
        /// Path of the data file.
        path: String,
        /// Phase in which it failed.
        phase: Phase,
        /// The backend's own error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The input declares more than a limit of this reader allows (see [`crate::limits`]): a
    /// page larger than its column chunk or the maximum, a dictionary with more values than
    /// its page holds, nesting deeper than a parser goes. Nothing was allocated for it.
    #[error(
        "limit exceeded: {limit} is {found}, over the maximum of {max}{}",
        in_path(path)
    )]
    LimitExceeded {
        /// The limit, e.g. `page uncompressed size`.
        limit: &'static str,
        /// The value found (for a depth: the first depth past the maximum).
        found: u64,
        /// The largest value allowed.
        max: u64,
        /// The file it was found in (redacted), when there is one.
        path: Option<String>,
        /// Phase in which it was found.
        phase: Phase,
    },
    /// A path the log names (a data file, a deletion vector, a checkpoint sidecar) resolves
    /// outside the table root: a `..` segment, or an absolute URI of another location, scheme
    /// or origin. Nothing was read from it.
    #[error("path outside the table: {path}: {reason}")]
    PathOutsideTable {
        /// The path as the log names it (redacted).
        path: String,
        /// Why it is outside, e.g. `a '..' segment`.
        reason: &'static str,
        /// Phase in which it was resolved.
        phase: Phase,
    },
    /// A bug of this library stopped the work: an invariant of its own that did not hold, or
    /// a panic inside a scan's task (reported rather than ending the stream early). Misuse of
    /// an API by its caller is [`DeltaError::InvalidArgument`] instead.
    #[error("internal error (please report it): {reason}")]
    Internal {
        /// What failed.
        reason: String,
        /// Phase in which it failed.
        phase: Phase,
    },
}

impl DeltaError {
    /// A stable, snake_case code naming the kind of error, for programs and for JS `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            DeltaError::NotFound { .. } => "not_found",
            DeltaError::Io { .. } => "io",
            DeltaError::InvalidLocation { .. } => "invalid_location",
            DeltaError::InvalidStorageOptions { .. } => "invalid_storage_options",
            DeltaError::NotATable { .. } => "not_a_table",
            DeltaError::InvalidLog { .. } => "invalid_log",
            DeltaError::NonContiguousLog { .. } => "non_contiguous_log",
            DeltaError::MissingProtocol { .. } => "missing_protocol",
            DeltaError::MissingMetadata { .. } => "missing_metadata",
            DeltaError::UnsupportedFeature { .. } => "unsupported_feature",
            DeltaError::UnsupportedReaderVersion { .. } => "unsupported_reader_version",
            DeltaError::Unsupported { .. } => "unsupported",
            DeltaError::VersionNotFound { .. } => "version_not_found",
            DeltaError::TimestampNotFound { .. } => "timestamp_not_found",
            DeltaError::InvalidSchema { .. } => "invalid_schema",
            DeltaError::ChangeDataFeedUnavailable { .. } => "change_data_feed_unavailable",
            DeltaError::Parquet { .. } => "parquet",
            DeltaError::Arrow { .. } => "arrow",
            DeltaError::Aborted { .. } => "aborted",
            DeltaError::InvalidArgument { .. } => "invalid_argument",
            DeltaError::Internal { .. } => "internal",
            DeltaError::Backend { .. } => "backend",
            DeltaError::LimitExceeded { .. } => "limit_exceeded",
            DeltaError::PathOutsideTable { .. } => "path_outside_table",
        }
    }

    /// The phase the error happened in.
    pub fn phase(&self) -> Phase {
        match self {
            DeltaError::NotFound { phase, .. }
            | DeltaError::Io { phase, .. }
            | DeltaError::Aborted { phase, .. }
            | DeltaError::Internal { phase, .. }
            | DeltaError::Backend { phase, .. }
            | DeltaError::Parquet { phase, .. }
            | DeltaError::Arrow { phase, .. }
            | DeltaError::LimitExceeded { phase, .. }
            | DeltaError::PathOutsideTable { phase, .. } => *phase,
            DeltaError::InvalidArgument { .. } => Phase::Plan,
            _ => Phase::Load,
        }
    }

    /// Whether retrying the same operation may succeed (network trouble, throttling).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            DeltaError::Io {
                transient: true,
                ..
            }
        )
    }

    /// The same error, made anew from a reference (one shared by several holders, as
    /// DataFusion shares an error between the outputs of a repartition): every field is
    /// kept, but the source of a Parquet, Arrow or backend error, which cannot be copied,
    /// is kept as its text.
    pub fn copied(&self) -> DeltaError {
        use DeltaError as E;
        match self {
            E::NotFound { path, phase } => E::NotFound {
                path: path.clone(),
                phase: *phase,
            },
            E::Io {
                path,
                message,
                phase,
                transient,
            } => E::Io {
                path: path.clone(),
                message: message.clone(),
                phase: *phase,
                transient: *transient,
            },
            E::InvalidLocation { location, reason } => E::InvalidLocation {
                location: location.clone(),
                reason: reason.clone(),
            },
            E::InvalidStorageOptions { reason } => E::InvalidStorageOptions {
                reason: reason.clone(),
            },
            E::NotATable { location } => E::NotATable {
                location: location.clone(),
            },
            E::InvalidLog { path, reason } => E::InvalidLog {
                path: path.clone(),
                reason: reason.clone(),
            },
            E::NonContiguousLog { expected, found } => E::NonContiguousLog {
                expected: *expected,
                found: *found,
            },
            E::MissingProtocol { version } => E::MissingProtocol { version: *version },
            E::MissingMetadata { version } => E::MissingMetadata { version: *version },
            E::UnsupportedFeature { feature } => E::UnsupportedFeature {
                feature: feature.clone(),
            },
            E::UnsupportedReaderVersion { version } => {
                E::UnsupportedReaderVersion { version: *version }
            }
            E::Unsupported { what } => E::Unsupported { what: what.clone() },
            E::VersionNotFound { requested, reason } => E::VersionNotFound {
                requested: *requested,
                reason: reason.clone(),
            },
            E::TimestampNotFound { timestamp, reason } => E::TimestampNotFound {
                timestamp: timestamp.clone(),
                reason: reason.clone(),
            },
            E::InvalidSchema { reason } => E::InvalidSchema {
                reason: reason.clone(),
            },
            E::ChangeDataFeedUnavailable { version, reason } => E::ChangeDataFeedUnavailable {
                version: *version,
                reason: reason.clone(),
            },
            E::Parquet {
                path,
                phase,
                source,
            } => E::Parquet {
                path: path.clone(),
                phase: *phase,
                source: parquet::errors::ParquetError::General({
                    // `General` prints as "Parquet error: {text}": not twice.
                    let text = source.to_string();
                    match text.strip_prefix("Parquet error: ") {
                        Some(rest) => rest.to_string(),
                        None => text,
                    }
                }),
            },
            E::Arrow { phase, source } => E::Arrow {
                phase: *phase,
                source: arrow_schema::ArrowError::ComputeError(source.to_string()),
            },
            E::Aborted { path, phase } => E::Aborted {
                path: path.clone(),
                phase: *phase,
            },
            E::InvalidArgument { reason } => E::InvalidArgument {
                reason: reason.clone(),
            },
            E::Backend {
                backend,
                path,
                phase,
                source,
            } => E::Backend {
                backend,
                path: path.clone(),
                phase: *phase,
                source: source.to_string().into(),
            },
            E::LimitExceeded {
                limit,
                found,
                max,
                path,
                phase,
            } => E::LimitExceeded {
                limit,
                found: *found,
                max: *max,
                path: path.clone(),
                phase: *phase,
            },
            E::PathOutsideTable {
                path,
                reason,
                phase,
            } => E::PathOutsideTable {
                path: path.clone(),
                reason,
                phase: *phase,
            },
            E::Internal { reason, phase } => E::Internal {
                reason: reason.clone(),
                phase: *phase,
            },
        }
    }

    /// Shorthand for [`DeltaError::InvalidLog`].
    pub(crate) fn invalid_log(path: impl Into<String>, reason: impl Into<String>) -> Self {
        DeltaError::InvalidLog {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`DeltaError::LimitExceeded`]; `path` is redacted.
    pub(crate) fn limit_exceeded(
        limit: &'static str,
        found: u64,
        max: u64,
        path: Option<&str>,
        phase: Phase,
    ) -> Self {
        DeltaError::LimitExceeded {
            limit,
            found,
            max,
            path: path.map(redact),
            phase,
        }
    }

    /// Shorthand for [`DeltaError::InvalidSchema`].
    pub(crate) fn invalid_schema(reason: impl Into<String>) -> Self {
        DeltaError::InvalidSchema {
            reason: reason.into(),
        }
    }
}

/// What a gap from version 0 most likely is.
fn gap_hint(expected: u64) -> &'static str {
    if expected == 0 {
        " (the log's first commits were removed, as log cleanup does once a checkpoint \
         covers them, and no checkpoint was found to start from; a store that cannot list \
         finds only the one _last_checkpoint names)"
    } else {
        ""
    }
}

/// ` in PATH` for an error message, or nothing.
fn in_path(path: &Option<String>) -> String {
    path.as_ref()
        .map(|p| format!(" in {p}"))
        .unwrap_or_default()
}

pub(crate) mod store_message;
pub(crate) use store_message::store_message;

/// Removes what must never appear in an error message: the query string of every URL (signed
/// URLs carry their signature there) and the user-info part (`user:password@`).
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (before, after) = rest.split_at(pos + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | '>' | ','))
            .unwrap_or(after.len());
        let (url, tail) = after.split_at(end);
        let url = match url.find('?') {
            Some(q) => &url[..q],
            None => url,
        };
        // In an Azure `abfss://container@account.dfs.core.windows.net/` URL the part before
        // `@` is the container, not a credential (one with a `:` in it is still dropped).
        let scheme = before[..pos]
            .rsplit(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let container_at = matches!(scheme.as_str(), "abfs" | "abfss" | "wasb" | "wasbs");
        let url = match (url.find('@'), url.find('/')) {
            (Some(at), _) if container_at && !url[..at].contains(':') => url,
            (Some(at), Some(slash)) if at < slash => &url[at + 1..],
            (Some(at), None) => &url[at + 1..],
            _ => url,
        };
        out.push_str(url);
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A hint for a location inside a table's log (`…/t/_delta_log/` or a commit in it): the
/// table is the folder that holds `_delta_log`.
fn inside_the_log(location: &str) -> &'static str {
    let path = location.split(['?', '#']).next().unwrap_or_default();
    if path.trim_end_matches('/').ends_with("_delta_log") || path.contains("/_delta_log/") {
        " (this location is inside a table's log: the table is the folder that holds _delta_log)"
    } else {
        ""
    }
}

/// The message of [`DeltaError::UnsupportedReaderVersion`]: versions start at 1, so one
/// below that is the log's fault, not a newer protocol.
fn reader_version_message(version: i64) -> String {
    if version < 1 {
        format!("the table's protocol names reader version {version}, which is not a version (they start at 1)")
    } else {
        format!("the table needs reader version {version}; this reader supports versions 1 to 3")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_removes_query_and_userinfo() {
        let s = "GET https://user:secret@host.example/a/b.parquet?X-Amz-Signature=abc failed";
        assert_eq!(redact(s), "GET https://host.example/a/b.parquet failed");
        assert_eq!(redact("no url here"), "no url here");
        assert_eq!(
            redact("at abfss://c@acct.dfs.core.windows.net/t?sv=1&sig=2 and wasbs://u:p@h/x"),
            "at abfss://c@acct.dfs.core.windows.net/t and wasbs://h/x"
        );
        assert_eq!(
            redact("s3://bucket/key?sig=1, http://h/x"),
            "s3://bucket/key, http://h/x"
        );
    }

    #[test]
    fn codes_and_phases() {
        let e = DeltaError::UnsupportedFeature {
            feature: "catalogOwned".into(),
        };
        assert_eq!(e.code(), "unsupported_feature");
        assert_eq!(e.phase(), Phase::Load);
        assert!(e.to_string().contains("catalogOwned"));
        let e = DeltaError::Io {
            path: "x".into(),
            message: "503".into(),
            phase: Phase::Read,
            transient: true,
        };
        assert_eq!(e.phase(), Phase::Read);
        assert!(e.is_transient());
        let e = DeltaError::limit_exceeded(
            "page uncompressed size",
            1 << 31,
            1 << 28,
            Some("https://h/t/part-0.parquet?sig=x"),
            Phase::Read,
        );
        assert_eq!(e.code(), "limit_exceeded");
        assert_eq!(e.phase(), Phase::Read);
        assert_eq!(
            e.to_string(),
            "limit exceeded: page uncompressed size is 2147483648, over the maximum of \
             268435456 in https://h/t/part-0.parquet"
        );
    }

    #[test]
    fn a_location_inside_a_log_is_pointed_to_its_table() {
        let inside = |location: &str| {
            DeltaError::NotATable {
                location: location.into(),
            }
            .to_string()
        };
        for location in [
            "/d/t/_delta_log",
            "/d/t/_delta_log/",
            "s3://b/t/_delta_log/0.json",
        ] {
            assert!(
                inside(location).contains("the folder that holds"),
                "{location}"
            );
        }
        assert!(!inside("/d/t").contains("the folder that holds"));
    }

    #[test]
    fn a_reader_version_below_1_is_not_called_newer() {
        let old = DeltaError::UnsupportedReaderVersion { version: 0 }.to_string();
        assert!(old.contains("not a version"), "{old}");
        let new = DeltaError::UnsupportedReaderVersion { version: 4 }.to_string();
        assert!(new.contains("needs reader version 4"), "{new}");
    }
}
