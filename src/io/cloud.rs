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
use object_store::{ClientConfigKey, ObjectStore};

use super::client_options::{client_settings, for_another_store};
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
    if let Err(e) = check_location(location) {
        return Some(Err(e));
    }
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

/// Refuses what a cloud location cannot mean: a `#` (an object name writes it `%23`), and a
/// query string but for an Azure SAS (`sig=…`), which signs every request.
fn check_location(location: &TableLocation) -> Result<()> {
    let url = location.url();
    let refuse = |reason: &str| {
        Err(DeltaError::InvalidLocation {
            location: location.to_string(),
            reason: reason.into(),
        })
    };
    if url.fragment().is_some() {
        return refuse(
            "a '#' is not part of a cloud location: in an object name it is written %23",
        );
    }
    let azure = !matches!(location.scheme(), "s3" | "s3a" | "gs" | "gcs");
    match url.query() {
        Some(q) if !(azure && q.split('&').any(|p| p.starts_with("sig="))) => refuse(
            "a cloud location has no query string (but for an Azure SAS token): in an object \
             name a '?' is written %3F",
        ),
        _ => Ok(()),
    }
}

/// A storage option that names an endpoint: an http(s) URL with a host, given without its
/// trailing `/` (object_store joins paths to it). Refused by name otherwise, before any
/// request (object_store would stop the process on it).
fn endpoint(key: &str, value: &str) -> Result<String> {
    let trimmed = value.trim().trim_end_matches('/');
    let parsed = url::Url::parse(trimmed).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    });
    match parsed {
        Some(_) => Ok(trimmed.to_string()),
        None => Err(DeltaError::InvalidStorageOptions {
            reason: format!(
                "storage option '{key}' must be an http(s) URL such as http://127.0.0.1:10000 \
                 (given: '{}')",
                redact(trimmed)
            ),
        }),
    }
}

/// Whether plain HTTP is allowed without being asked: when the endpoint given is an
/// `http://` URL (an emulator, a server on the same network) and `allow_http` is not set
/// either way. object_store would otherwise refuse every request to it.
#[derive(Default)]
struct PlainHttp {
    http_endpoint: bool,
    set: bool,
}

impl PlainHttp {
    fn note<K: PartialEq + AsRef<str>>(&mut self, key: &K, endpoint_key: &K, value: &str) {
        if key == endpoint_key {
            self.http_endpoint = value.starts_with("http://");
        }
        if key.as_ref().ends_with("allow_http") {
            self.set = true;
        }
    }

    fn allow(&self) -> bool {
        self.http_endpoint && !self.set
    }
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
    let mut plain_http = PlainHttp::default();
    for (key, value) in &rest {
        if for_another_store(key, Some("aws_")) {
            continue;
        }
        let name = match key.to_ascii_lowercase().as_str() {
            "anonymous" => "aws_skip_signature".to_string(),
            "endpoint_url" => "aws_endpoint".to_string(),
            other => other.to_string(),
        };
        let config: AmazonS3ConfigKey = parse_key(&name, key, "S3")?;
        let value = match config {
            AmazonS3ConfigKey::Endpoint => endpoint(key, value)?,
            _ => value.clone(),
        };
        plain_http.note(&config, &AmazonS3ConfigKey::Endpoint, &value);
        builder = builder.with_config(config, value);
    }
    if plain_http.allow() {
        builder = builder.with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
            "true",
        );
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
    // Host names are case-insensitive; object_store matches Azure's in lower case.
    if let Some(host) = url.host_str().map(str::to_ascii_lowercase) {
        let _ = for_store.set_host(Some(&host));
    }
    let _ = for_store.set_password(None);
    let store_url = format!("{scheme}{}", &for_store[url::Position::AfterScheme..]);
    let (settings, given) = client_settings(options)?;
    let mut rest = HashMap::new();
    for (key, value) in &given {
        if key.eq_ignore_ascii_case(AZURE_CONNECTION_STRING) {
            rest.extend(connection_string(value)?);
        } else if !for_another_store(key, Some("azure_")) {
            let key = key.to_ascii_lowercase();
            let key = if key == "anonymous" {
                "azure_skip_signature".into()
            } else {
                key
            };
            rest.insert(key, value.clone());
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
    let mut plain_http = PlainHttp::default();
    for (key, value) in &rest {
        let config: AzureConfigKey = parse_key(key, key, "Azure")?;
        let value = match config {
            AzureConfigKey::Endpoint => endpoint(key, value)?,
            AzureConfigKey::UseEmulator => {
                // object_store reads the emulator's address from this variable itself.
                if let Ok(at) = std::env::var("AZURITE_BLOB_STORAGE_URL") {
                    endpoint("AZURITE_BLOB_STORAGE_URL", &at)?;
                }
                value.clone()
            }
            _ => value.clone(),
        };
        plain_http.note(&config, &AzureConfigKey::Endpoint, &value);
        builder = builder.with_config(config, value);
    }
    if plain_http.allow() {
        builder = builder.with_config(AzureConfigKey::Client(ClientConfigKey::AllowHttp), "true");
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
        .filter(|(k, _)| !for_another_store(k, Some("google_")))
        .map(|(k, v)| {
            let k = k.to_ascii_lowercase();
            let k = match k.as_str() {
                "anonymous" => "google_skip_signature".to_string(),
                "endpoint" | "endpoint_url" => "google_base_url".to_string(),
                _ => k,
            };
            (k, v)
        })
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
    let mut plain_http = PlainHttp::default();
    for (key, value) in &all {
        let config: GoogleConfigKey = parse_key(key, key, "Google Cloud Storage")?;
        let value = match config {
            GoogleConfigKey::BaseUrl => endpoint(key, value)?,
            GoogleConfigKey::ServiceAccount | GoogleConfigKey::ApplicationCredentials => {
                key_file_base_url(key, value)?;
                value.clone()
            }
            GoogleConfigKey::ServiceAccountKey => {
                key_json_base_url(key, value)?;
                value.clone()
            }
            _ => value.clone(),
        };
        plain_http.note(&config, &GoogleConfigKey::BaseUrl, &value);
        builder = builder.with_config(config, value);
    }
    if plain_http.allow() {
        builder = builder.with_config(GoogleConfigKey::Client(ClientConfigKey::AllowHttp), "true");
    }
    let store = builder
        .build()
        .map_err(|e| config_error(location, e, GCS_HINT))?;
    Ok(CloudStore {
        store: Arc::new(store),
        retry,
    })
}

/// Checks the `gcs_base_url` an emulator's service-account key may give (see [`endpoint`]);
/// a key file that cannot be read is left to object_store, which names it.
fn key_file_base_url(key: &str, path: &str) -> Result<()> {
    match std::fs::read_to_string(path) {
        Ok(text) => key_json_base_url(key, &text),
        Err(_) => Ok(()),
    }
}

/// [`key_file_base_url`] for a key given as JSON text (never shown: it holds a private key).
fn key_json_base_url(key: &str, json: &str) -> Result<()> {
    let parsed: Option<serde_json::Value> = serde_json::from_str(json).ok();
    let base = parsed
        .as_ref()
        .and_then(|v| v.get("gcs_base_url"))
        .and_then(|v| v.as_str());
    match base {
        Some(url) => endpoint(&format!("{key} (its gcs_base_url)"), url).map(|_| ()),
        None => Ok(()),
    }
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
    use super::super::client_options::tests::options;
    use super::*;

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
    fn endpoints_must_be_http_urls_and_lose_their_trailing_slash() {
        assert_eq!(
            endpoint("aws_endpoint", " http://127.0.0.1:9000/ ")
                .ok()
                .as_deref(),
            Some("http://127.0.0.1:9000")
        );
        for bad in [
            "127.0.0.1:9000",
            "localhost:1",
            "http://",
            "",
            "not a url",
            "ftp://h/",
            "http://[::1",
        ] {
            let e = endpoint("google_base_url", bad).err().map(|e| e.code());
            assert_eq!(e, Some("invalid_storage_options"), "{bad}");
        }
        for (key, value) in [
            ("google_base_url", "127.0.0.1:4443"),
            ("azure_storage_endpoint", "localhost:10000"),
        ] {
            let location = if key.starts_with("google") {
                "gs://b/t"
            } else {
                "az://c/t"
            };
            let e = build(location, &[(key, value), ("anonymous", "true")]).err();
            let text = e.map(|e| e.to_string()).unwrap_or_default();
            assert!(text.contains(key) && text.contains("http(s) URL"), "{text}");
        }
        let key = r#"{"gcs_base_url": "localhost:4443", "private_key": "SECRET"}"#;
        let e = build("gs://b/t", &[("google_service_account_key", key)]).err();
        let text = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("gcs_base_url") && !text.contains("SECRET"),
            "{text}"
        );
    }

    #[test]
    fn cloud_locations_take_no_query_or_fragment_but_a_sas() {
        let code = |l: &str| build(l, &[("anonymous", "true")]).err().map(|e| e.code());
        assert_eq!(code("gs://b/q?x/t"), Some("invalid_location"));
        assert_eq!(code("s3://b/t?versionId=1"), Some("invalid_location"));
        assert_eq!(code("az://c/h#x"), Some("invalid_location"));
        assert_eq!(code("az://c/t?foo=bar"), Some("invalid_location"));
        let sas = build("az://c/t?sv=2021&sig=abc", &[(ACCOUNT_NAME, "a")]);
        assert!(sas.is_ok(), "{:?}", sas.err());
    }

    #[test]
    fn options_of_other_stores_are_passed_over() {
        let mixed = [
            ("anonymous", "true"),
            ("aws_region", "eu-west-1"),
            ("azure_storage_account_name", "a"),
            ("timeout", "5s"),
        ];
        assert!(build("gs://b/t", &mixed).is_ok());
        let mixed = [
            (ACCOUNT_NAME, "a"),
            ("google_base_url", "x"),
            ("aws_region", "y"),
        ];
        assert!(build("az://c/t", &mixed).is_ok());
        let typo = build(
            "az://c/t",
            &[(ACCOUNT_NAME, "a"), ("azure_storage_acount_name", "a")],
        );
        assert_eq!(
            typo.err().map(|e| e.code()),
            Some("invalid_storage_options")
        );
    }

    #[test]
    fn a_public_gcs_bucket_needs_no_credentials() {
        let built = build("gs://bucket/t", &[("anonymous", "true")]);
        assert!(built.is_ok(), "{:?}", built.err());
    }
}
