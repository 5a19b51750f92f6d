//! The cloud object stores (feature `cloud`, native only): Amazon S3 and S3-compatible
//! servers (`s3://`, `s3a://`), Azure Blob Storage and ADLS Gen2 (`az://`, `azure://`,
//! `adl://`, `abfs[s]://`, `wasb[s]://`), and Google Cloud Storage (`gs://`, `gcs://`).
//!
//! Each store is configured from the table's storage options under object_store's names for
//! them (`aws_region`, `azure_storage_account_name`, `google_service_account`, ...), then from
//! its cloud's standard environment variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`) for what the
//! options leave out. Credentials given as options are never joined to credentials from the
//! environment: a key from one place and a token from another would sign for nobody.
//!
//! What the URL says wins over the options: the bucket, container or account it names.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::ObjectStore;

use super::client_options::client_settings;
use super::TableLocation;
use crate::error::{redact, DeltaError, Result};

/// The schemes of the stores here.
pub(super) const CLOUD_SCHEMES: &[&str] = &[
    "s3", "s3a", "az", "azure", "adl", "abfs", "abfss", "wasb", "wasbs", "gs", "gcs",
];

/// A configured cloud store and the client settings it was built with.
pub(super) struct CloudStore {
    pub store: Arc<dyn ObjectStore>,
    pub retry: object_store::RetryConfig,
}

/// The store for a location whose scheme is one of [`CLOUD_SCHEMES`] (`None` for others).
pub(super) fn cloud_store(
    location: &TableLocation,
    options: &HashMap<String, String>,
) -> Option<Result<CloudStore>> {
    let built = match location.scheme() {
        "s3" | "s3a" => s3_store(location, options),
        "az" | "azure" | "adl" | "abfs" | "abfss" | "wasb" | "wasbs" => {
            azure_store(location, options)
        }
        "gs" | "gcs" => gcs_store(location, options),
        _ => return None,
    };
    Some(built)
}

/// The name of the bucket or container the URL's host gives, refused when empty.
fn host_named(location: &TableLocation, what: &str) -> Result<String> {
    match location.url().host_str() {
        Some(host) if !host.is_empty() => Ok(host.to_string()),
        _ => Err(DeltaError::InvalidLocation {
            location: location.to_string(),
            reason: format!("a {}:// location needs {what}", location.scheme()),
        }),
    }
}

fn s3_store(location: &TableLocation, options: &HashMap<String, String>) -> Result<CloudStore> {
    let bucket = host_named(location, "a bucket name")?;
    let (settings, mut rest) = client_settings(options)?;
    let credentials = [
        AmazonS3ConfigKey::AccessKeyId,
        AmazonS3ConfigKey::SecretAccessKey,
        AmazonS3ConfigKey::Token,
    ];
    for (key, value) in environment::<AmazonS3ConfigKey>("AWS_", &[], &rest, &credentials) {
        rest.insert(key, value);
    }
    let retry = settings.retry.clone();
    let mut builder = AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_client_options(settings.client)
        .with_retry(settings.retry)
        .with_http_connector(settings.connector);
    for (key, value) in &rest {
        let name = match key.to_ascii_lowercase().as_str() {
            "anonymous" => "aws_skip_signature".to_string(),
            "endpoint_url" => "aws_endpoint".to_string(),
            other => other.to_string(),
        };
        builder = builder.with_config(parse_key(&name, key, "S3")?, value);
    }
    let store = builder
        .build()
        .map_err(|e| config_error(location, e, S3_HINT))?;
    Ok(CloudStore {
        store: Arc::new(store),
        retry,
    })
}

const S3_HINT: &str = "S3 is configured by aws_region, aws_endpoint, aws_access_key_id and \
                       aws_secret_access_key (or AWS_* variables), or anonymous=true";

/// Azure: `az://container/path`, `azure://container/path`, `adl://container/path`,
/// `abfs[s]://container/path`, `abfs[s]://container@account.dfs.core.windows.net/path`
/// (also `blob.core.windows.net` and Fabric hosts), and the older
/// `wasb[s]://container@account.blob.core.windows.net/path`.
fn azure_store(location: &TableLocation, options: &HashMap<String, String>) -> Result<CloudStore> {
    host_named(location, "a container name")?;
    let url = location.url();
    // object_store reads the container and account from the URL; wasb(s) URLs name them as
    // abfs(s) URLs do.
    let scheme = match url.scheme() {
        "wasb" => "abfs",
        "wasbs" => "abfss",
        other => other,
    };
    let mut for_store = url.clone();
    for_store.set_query(None);
    let _ = for_store.set_password(None);
    let store_url = format!("{scheme}{}", &for_store[url::Position::AfterScheme..]);
    let (settings, given) = client_settings(options)?;
    let mut rest = HashMap::new();
    for (key, value) in &given {
        if key.eq_ignore_ascii_case(AZURE_CONNECTION_STRING) {
            rest.extend(connection_string(value)?);
        } else {
            rest.insert(key.to_ascii_lowercase(), value.clone());
        }
    }
    let credentials = [
        AzureConfigKey::AccessKey,
        AzureConfigKey::SasKey,
        AzureConfigKey::Token,
        AzureConfigKey::ClientId,
        AzureConfigKey::ClientSecret,
        AzureConfigKey::FederatedTokenFile,
        AzureConfigKey::UseAzureCli,
        AzureConfigKey::SkipSignature,
    ];
    // The names the Azure CLI and SDKs read, beside object_store's own.
    let aliases = [
        ("AZURE_STORAGE_ACCOUNT", "azure_storage_account_name"),
        ("AZURE_STORAGE_KEY", "azure_storage_account_key"),
    ];
    let from_env = environment::<AzureConfigKey>("AZURE_", &aliases, &rest, &credentials);
    let env_string = std::env::var("AZURE_STORAGE_CONNECTION_STRING").ok();
    match env_string.filter(|s| !s.trim().is_empty()) {
        // A connection string in the environment gives the account and its credential
        // together: used only when the options give neither.
        Some(text) if !gives_any(&rest, &credentials) && !rest.contains_key(ACCOUNT_NAME) => {
            for (key, value) in connection_string(&text)? {
                rest.entry(key).or_insert(value);
            }
        }
        _ => {}
    }
    for (key, value) in from_env {
        rest.entry(key).or_insert(value);
    }
    let retry = settings.retry.clone();
    let mut builder = MicrosoftAzureBuilder::new()
        .with_client_options(settings.client)
        .with_retry(settings.retry)
        .with_http_connector(settings.connector)
        .with_url(store_url);
    // A SAS token in the URL's query signs every request, as it does over https.
    if let Some(query) = url.query().filter(|q| !q.is_empty()) {
        builder = builder.with_config(AzureConfigKey::SasKey, query);
    }
    for (key, value) in &rest {
        let name = match key.as_str() {
            "anonymous" => "azure_skip_signature",
            other => other,
        };
        builder = builder.with_config(parse_key(name, key, "Azure")?, value);
    }
    let store = builder
        .build()
        .map_err(|e| config_error(location, e, AZURE_HINT))?;
    Ok(CloudStore {
        store: Arc::new(store),
        retry,
    })
}

const AZURE_HINT: &str = "Azure is configured by azure_storage_account_name and one of \
                          azure_storage_account_key, azure_storage_sas_token, a service \
                          principal (azure_client_id, azure_client_secret, azure_tenant_id) or \
                          azure_storage_connection_string (or AZURE_* variables); \
                          azure_storage_use_emulator=true for Azurite";

/// The storage option (and environment variable) holding an Azure connection string.
const AZURE_CONNECTION_STRING: &str = "azure_storage_connection_string";

const ACCOUNT_NAME: &str = "azure_storage_account_name";

/// The options an Azure connection string gives (`AccountName=…;AccountKey=…;…`, as the
/// portal and Azurite write them). Its values are never shown in an error.
fn connection_string(text: &str) -> Result<Vec<(String, String)>> {
    let mut parts: HashMap<String, String> = HashMap::new();
    for (i, segment) in text.split(';').enumerate() {
        let segment = segment.trim();
        if segment.is_empty() {
            continue;
        }
        let (key, value) =
            segment
                .split_once('=')
                .ok_or_else(|| DeltaError::InvalidStorageOptions {
                    reason: format!(
                    "{AZURE_CONNECTION_STRING}: part {} is not Key=Value (its text is not shown)",
                    i + 1
                ),
                })?;
        parts.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    let mut out = Vec::new();
    if parts
        .get("usedevelopmentstorage")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        out.push(("azure_storage_use_emulator".into(), "true".into()));
    }
    for (part, option) in [
        ("accountname", ACCOUNT_NAME),
        ("accountkey", "azure_storage_account_key"),
        ("sharedaccesssignature", "azure_storage_sas_token"),
    ] {
        if let Some(value) = parts.get(part) {
            out.push((option.into(), value.clone()));
        }
    }
    let endpoint = match (parts.get("blobendpoint"), parts.get("endpointsuffix")) {
        (Some(blob), _) => Some(blob.trim_end_matches('/').to_string()),
        (None, Some(suffix)) if suffix != "core.windows.net" => {
            let protocol = parts
                .get("defaultendpointsprotocol")
                .map_or("https", String::as_str);
            let account = parts.get("accountname").map_or("", String::as_str);
            Some(format!("{protocol}://{account}.blob.{suffix}"))
        }
        _ => None,
    };
    if let Some(endpoint) = endpoint {
        if endpoint.starts_with("http://") {
            out.push(("azure_allow_http".into(), "true".into()));
        }
        out.push(("azure_storage_endpoint".into(), endpoint));
    }
    if out.is_empty() {
        return Err(DeltaError::InvalidStorageOptions {
            reason: format!(
                "{AZURE_CONNECTION_STRING} names no account, key, signature or endpoint \
                 (AccountName=…;AccountKey=…)"
            ),
        });
    }
    Ok(out)
}

/// Google Cloud Storage: `gs://bucket/path`.
fn gcs_store(location: &TableLocation, options: &HashMap<String, String>) -> Result<CloudStore> {
    let bucket = host_named(location, "a bucket name")?;
    let (settings, given) = client_settings(options)?;
    let rest: HashMap<String, String> = given
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let credentials = [
        GoogleConfigKey::ServiceAccount,
        GoogleConfigKey::ServiceAccountKey,
        GoogleConfigKey::ApplicationCredentials,
        GoogleConfigKey::SkipSignature,
    ];
    let mut all = rest.clone();
    for (key, value) in environment::<GoogleConfigKey>("GOOGLE_", &[], &rest, &credentials) {
        all.entry(key).or_insert(value);
    }
    let retry = settings.retry.clone();
    let mut builder = GoogleCloudStorageBuilder::new()
        .with_client_options(settings.client)
        .with_retry(settings.retry)
        .with_http_connector(settings.connector)
        .with_bucket_name(bucket);
    for (key, value) in &all {
        let name = match key.as_str() {
            "anonymous" => "google_skip_signature",
            "endpoint" | "endpoint_url" => "google_base_url",
            other => other,
        };
        builder = builder.with_config(parse_key(name, key, "Google Cloud Storage")?, value);
    }
    let store = builder
        .build()
        .map_err(|e| config_error(location, e, GCS_HINT))?;
    Ok(CloudStore {
        store: Arc::new(store),
        retry,
    })
}

const GCS_HINT: &str = "Google Cloud Storage is configured by google_service_account (a key \
                        file), google_service_account_key (its JSON) or \
                        google_application_credentials (or GOOGLE_* variables), or \
                        anonymous=true for a public bucket";

/// The config key named `name` (the option was given as `given`).
fn parse_key<K: FromStr>(name: &str, given: &str, store: &str) -> Result<K> {
    name.parse().map_err(|_| DeltaError::InvalidStorageOptions {
        reason: format!("unknown {store} storage option '{given}'"),
    })
}

/// Whether `options` name any of `keys`.
fn gives_any<K: FromStr + PartialEq>(options: &HashMap<String, String>, keys: &[K]) -> bool {
    options
        .keys()
        .filter_map(|k| k.to_ascii_lowercase().parse::<K>().ok())
        .any(|k| keys.contains(&k))
}

/// The settings of the environment variables starting with `prefix` that name a config key
/// of the store (lower-cased, object_store's names; `aliases` maps other common names to
/// them) and that `options` do not give. When `options` give any of `credentials`, none of
/// them is taken from the environment.
fn environment<K: FromStr + PartialEq>(
    prefix: &str,
    aliases: &[(&str, &str)],
    options: &HashMap<String, String>,
    credentials: &[K],
) -> Vec<(String, String)> {
    let key_of = |name: &str| name.to_ascii_lowercase().parse::<K>().ok();
    let given: Vec<K> = options.keys().filter_map(|k| key_of(k)).collect();
    let own_credentials = given.iter().any(|k| credentials.contains(k));
    std::env::vars()
        .filter(|(name, _)| name.starts_with(prefix) && !name.ends_with("CONNECTION_STRING"))
        .filter_map(|(name, value)| {
            let name = aliases
                .iter()
                .find(|(alias, _)| *alias == name)
                .map_or(name.to_ascii_lowercase(), |(_, to)| to.to_string());
            let key = key_of(&name)?;
            let skip = given.contains(&key) || (own_credentials && credentials.contains(&key));
            (!skip).then_some((name, value))
        })
        .collect()
}

fn config_error(location: &TableLocation, e: object_store::Error, hint: &str) -> DeltaError {
    DeltaError::InvalidStorageOptions {
        reason: format!(
            "cannot configure the store for {location}: {} ({hint})",
            redact(&e.to_string())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn build(location: &str, pairs: &[(&str, &str)]) -> Result<CloudStore> {
        let location = TableLocation::parse(location)?;
        cloud_store(&location, &options(pairs)).unwrap_or_else(|| panic!("not a cloud scheme"))
    }

    #[test]
    fn connection_strings_give_account_key_and_endpoint() {
        let azurite = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;\
                       AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";
        let got: HashMap<String, String> = connection_string(azurite)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .collect();
        assert_eq!(
            got.get(ACCOUNT_NAME).map(String::as_str),
            Some("devstoreaccount1")
        );
        assert_eq!(
            got.get("azure_storage_account_key").map(String::as_str),
            Some("a2V5")
        );
        assert_eq!(
            got.get("azure_storage_endpoint").map(String::as_str),
            Some("http://127.0.0.1:10000/devstoreaccount1")
        );
        assert_eq!(
            got.get("azure_allow_http").map(String::as_str),
            Some("true")
        );
        let china = "AccountName=a;AccountKey=k;EndpointSuffix=core.chinacloudapi.cn";
        let got: HashMap<String, String> = connection_string(china)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .collect();
        assert_eq!(
            got.get("azure_storage_endpoint").map(String::as_str),
            Some("https://a.blob.core.chinacloudapi.cn")
        );
        let dev = connection_string("UseDevelopmentStorage=true").unwrap_or_default();
        assert_eq!(
            dev,
            vec![("azure_storage_use_emulator".into(), "true".into())]
        );
    }

    #[test]
    fn bad_connection_strings_are_refused_without_their_text() {
        for text in ["AccountKey", "Foo=bar", "secret-value"] {
            let err = connection_string(text).err().map(|e| e.to_string());
            let err = err.unwrap_or_else(|| panic!("{text} accepted"));
            assert!(err.contains(AZURE_CONNECTION_STRING), "{err}");
            assert!(
                !err.contains("secret-value") && !err.contains("bar"),
                "{err}"
            );
        }
    }

    #[test]
    fn azure_urls_of_every_form_configure_a_store() {
        let key = ("azure_storage_account_key", "a2V5");
        for url in [
            "az://container/tables/t",
            "azure://container/t",
            "adl://container/t",
            "abfs://container/t",
            "abfss://container@account.dfs.core.windows.net/t",
            "abfss://container@account.blob.core.windows.net/t",
            "wasbs://container@account.blob.core.windows.net/t",
        ] {
            let built = build(url, &[(ACCOUNT_NAME, "account"), key]);
            assert!(built.is_ok(), "{url}: {:?}", built.err());
        }
    }

    #[test]
    fn unknown_and_missing_settings_are_named() {
        let e = build("az://c/t", &[(ACCOUNT_NAME, "a"), ("azure_colour", "blue")]);
        let text = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("unknown Azure storage option 'azure_colour'"),
            "{text}"
        );
        assert!(!text.contains("blue"), "{text}");
        let e = build("gs://b/t", &[("google_flavour", "x")]);
        let text = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("Google Cloud Storage"), "{text}");
        let e = build("az:///t", &[]);
        let text = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("container"), "{text}");
    }

    #[test]
    fn a_public_gcs_bucket_needs_no_credentials() {
        let built = build("gs://bucket/t", &[("anonymous", "true")]);
        assert!(built.is_ok(), "{:?}", built.err());
    }
}
