//! The HTTP client settings a user may give with a table's storage options, for every remote
//! store (http(s), S3, Azure, GCS): request and connect timeouts, the connection pool, a proxy, and how
//! failed requests are retried.
//!
//! | option | meaning | default |
//! |---|---|---|
//! | `idle_timeout` | a request fails when no byte of its answer comes for this long (see `http_checks`) | 30 s |
//! | `timeout` | one request, from sending to the last body byte, however steadily it comes | none |
//! | `connect_timeout` | opening a connection | 5 s |
//! | `pool_idle_timeout` | idle pooled connections are closed after | 90 s |
//! | `pool_max_idle_per_host` | idle pooled connections kept per host | no bound |
//! | `proxy_url`, `user_agent`, `allow_invalid_certificates` | as their names say | none |
//! | `max_retries` | retries after a network error, `429` or `5xx` | 10 |
//! | `retry_timeout` | no retry starts later than this after the first attempt | 3 min |
//!
//! Durations are written as `30s`, `500ms`, `2m` and the like. Values and their errors are
//! object_store's, which does the requests.

use std::collections::HashMap;
use std::time::Duration;

use object_store::{ClientConfigKey, ClientOptions, RetryConfig};

use crate::error::{DeltaError, Result};

/// The client options recognised here (besides `max_retries` and `retry_timeout`).
const CLIENT_KEYS: &[&str] = &[
    "timeout",
    "connect_timeout",
    "pool_idle_timeout",
    "pool_max_idle_per_host",
    "proxy_url",
    "user_agent",
    "allow_invalid_certificates",
];

/// The prefixes of the cloud stores' own options.
const CLOUD_PREFIXES: &[&str] = &["aws_", "azure_", "google_"];

/// Whether `key` is an option of another kind of store than the one being configured (whose
/// own prefix is `own`: `Some("aws_")` for S3, `None` for local files and plain HTTP): an
/// option of another cloud, or `anonymous` where no cloud is. Such options are passed over,
/// so that one set of options (`$DAR_STORAGE_OPTIONS`, `dar sql` over tables in several
/// stores) serves every location; any other option a store does not know is refused.
pub(crate) fn for_another_store(key: &str, own: Option<&str>) -> bool {
    let key = key.to_ascii_lowercase();
    let cloud = CLOUD_PREFIXES
        .iter()
        .any(|p| key.starts_with(p) && Some(*p) != own);
    cloud || (own.is_none() && key == "anonymous")
}

/// Whether `key` is one of the client settings taken out by [`client_settings`].
pub(crate) fn is_client_option(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    CLIENT_KEYS.contains(&key.as_str())
        || matches!(
            key.as_str(),
            "max_retries" | "retry_timeout" | "idle_timeout"
        )
}

/// Default of `idle_timeout`.
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Client and retry settings taken out of a location's storage options.
#[derive(Debug)]
pub(crate) struct ClientSettings {
    pub client: ClientOptions,
    pub retry: RetryConfig,
    /// The requests' checks and idle timeout.
    pub connector: super::http_checks::CheckedConnector,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            // A large range on a slow link must not fail while its bytes still come: the
            // idle timeout stops a server that stalls.
            client: ClientOptions::new().with_timeout_disabled(),
            retry: RetryConfig::default(),
            connector: super::http_checks::CheckedConnector {
                idle: DEFAULT_IDLE_TIMEOUT,
                query: None,
                whole_for_range: 0,
                encode_plus: false,
                log_bytes: Default::default(),
                closing: Default::default(),
            },
        }
    }
}

/// Splits `options` into the client settings and the options left for the store itself.
pub(crate) fn client_settings(
    options: &HashMap<String, String>,
) -> Result<(ClientSettings, HashMap<String, String>)> {
    let mut settings = ClientSettings::default();
    let mut rest = HashMap::new();
    for (key, value) in options {
        let lower = key.to_ascii_lowercase();
        match lower.as_str() {
            "max_retries" => {
                settings.retry.max_retries = value
                    .trim()
                    .parse()
                    .map_err(|_| invalid(key, value, "a whole number of retries, e.g. 3"))?;
            }
            "retry_timeout" => settings.retry.retry_timeout = duration(key, value)?,
            "idle_timeout" => {
                settings.connector.idle = duration(key, value)?;
                if settings.connector.idle.is_zero() {
                    return Err(invalid(key, value, "a duration above zero, e.g. 30s"));
                }
            }
            name if CLIENT_KEYS.contains(&name) => {
                let config: ClientConfigKey = name
                    .parse()
                    .map_err(|_| invalid(key, value, "a client option"))?;
                if name.ends_with("timeout") {
                    duration(key, value)?;
                }
                settings.client = settings.client.with_config(config, value.clone());
            }
            _ => {
                rest.insert(key.clone(), value.clone());
            }
        }
    }
    Ok((settings, rest))
}

/// A duration such as `30s` or `500ms`.
fn duration(key: &str, value: &str) -> Result<Duration> {
    humantime::parse_duration(value.trim())
        .map_err(|_| invalid(key, value, "a duration such as 30s or 500ms"))
}

/// An option whose value is not what it takes (the value is not shown: it could be a
/// secret given under the wrong name).
fn invalid(key: &str, value: &str, wanted: &str) -> DeltaError {
    DeltaError::InvalidStorageOptions {
        reason: format!(
            "storage option '{key}' takes {wanted} (the value given has {} characters)",
            value.chars().count()
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Storage options from pairs.
    pub(crate) fn options(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn client_and_retry_options_are_taken_out() {
        let given = options(&[
            ("timeout", "2s"),
            ("max_retries", "1"),
            ("retry_timeout", "1500ms"),
            ("aws_region", "eu-west-1"),
        ]);
        let (settings, rest) = client_settings(&given).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(settings.retry.max_retries, 1);
        assert_eq!(settings.retry.retry_timeout, Duration::from_millis(1500));
        assert_eq!(rest, options(&[("aws_region", "eu-west-1")]));
    }

    #[test]
    fn bad_values_are_refused_without_echoing_them() {
        for (key, value) in [
            ("max_retries", "many"),
            ("retry_timeout", "soon"),
            ("timeout", "hunter2"),
        ] {
            let err = client_settings(&options(&[(key, value)]))
                .err()
                .unwrap_or_else(|| panic!("{key}={value} accepted"));
            let text = err.to_string();
            assert!(text.contains(key) && !text.contains(value), "{text}");
        }
    }
}
