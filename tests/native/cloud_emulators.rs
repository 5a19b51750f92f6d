//! Azure (`az://`, `abfs[s]://`, `wasbs://`) and Google Cloud Storage (`gs://`) tables
//! against loopback emulators started by the tests: Azurite's blob service (npm) and
//! fake-gcs-server (a static binary from PyPI), both installed by `.ci/setup` and linked into
//! `$HOME/.cache/dar-bin`. Every table read through a cloud store has the rows it has on
//! disk; `dar` takes the same settings from the standard `AZURE_*`/`GOOGLE_*` variables, a
//! connection string or a key file, options on the command line winning.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use delta_arrow_reader::DeltaTableBuilder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An emulator process; killed on drop.
pub(crate) struct Emulator {
    child: Child,
    pub(crate) port: u16,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `name` in `$HOME/.cache/dar-bin` (where `.ci/setup` links the emulators), else on PATH.
pub(crate) fn installed(name: &str) -> PathBuf {
    let linked =
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/dar-bin").join(name));
    linked
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// One HTTP/1.1 request on a fresh connection: the whole answer as text.
pub(crate) async fn http(port: u16, request: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await?;
    s.write_all(request.as_bytes()).await?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).await?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Starts `program` with `args` on a free port (`{port}` in an argument) and waits, at most a
/// minute, until `ready` says yes to what `probe` answers.
pub(crate) async fn start(
    program: &str,
    args: &[&str],
    probe: impl Fn(u16) -> String,
    ready: impl Fn(&str) -> bool,
) -> Emulator {
    let port = free_port();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{port}", &port.to_string()))
        .collect();
    let child = Command::new(installed(program))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program} ({e}); run `bash .ci/setup`"));
    let emulator = Emulator { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match http(port, &probe(port)).await {
            Ok(answer) if ready(&answer) => return emulator,
            Ok(answer) if Instant::now() >= deadline => panic!("{program} not ready: {answer}"),
            Err(e) if Instant::now() >= deadline => panic!("{program} did not start: {e}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

// ---- Azure (Azurite) ----

/// Azurite's well-known development account and key.
pub(crate) const AZ_ACCOUNT: &str = "devstoreaccount1";
const AZ_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
pub(crate) const CONTAINER: &str = "dar-test";

/// Azurite's blob service, in memory, with the container [`CONTAINER`].
pub(crate) async fn start_azurite() -> Emulator {
    let args = [
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        "{port}",
        "--inMemoryPersistence",
        "--silent",
        "--skipApiVersionCheck",
        "--disableTelemetry",
    ];
    let azurite = start(
        "azurite-blob",
        &args,
        |port| signed_request("GET", port, "", "comp=list", 0),
        |answer| answer.starts_with("HTTP/1.1"),
    )
    .await;
    let create = signed_request("PUT", azurite.port, CONTAINER, "restype=container", 0);
    let answer = http(azurite.port, &create)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    azurite
}

/// A request to Azurite signed with the development key (SharedKey): `path` under the
/// account, `query` of one `name=value` pair at most, and an empty body of `length` bytes.
fn signed_request(method: &str, port: u16, path: &str, query: &str, length: usize) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let date = chrono::Utc::now()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let version = "2021-08-06";
    let length_text = if length > 0 {
        length.to_string()
    } else {
        String::new()
    };
    let canonical_query: String = query
        .split('&')
        .filter(|q| !q.is_empty())
        .map(|q| {
            let (k, v) = q.split_once('=').unwrap_or((q, ""));
            format!("\n{k}:{v}")
        })
        .collect();
    let to_sign = format!(
        "{method}\n\n\n{length_text}\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n\
         /{AZ_ACCOUNT}/{AZ_ACCOUNT}/{path}{canonical_query}"
    );
    let key_bytes = b64.decode(AZ_KEY).unwrap_or_else(|e| panic!("{e}"));
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key_bytes);
    let signature = b64.encode(ring::hmac::sign(&key, to_sign.as_bytes()).as_ref());
    let target = match query {
        "" => format!("/{AZ_ACCOUNT}/{path}"),
        q => format!("/{AZ_ACCOUNT}/{path}?{q}"),
    };
    format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-date: {date}\r\n\
         x-ms-version: {version}\r\nAuthorization: SharedKey {AZ_ACCOUNT}:{signature}\r\n\
         Content-Length: {length}\r\nConnection: close\r\n\r\n"
    )
}

/// Storage options that reach Azurite at `port` with the development account's key.
pub(crate) fn azure_options(port: u16) -> HashMap<String, String> {
    [
        ("azure_storage_account_name", AZ_ACCOUNT.to_string()),
        ("azure_storage_account_key", AZ_KEY.to_string()),
        (
            "azure_storage_endpoint",
            format!("http://127.0.0.1:{port}/{AZ_ACCOUNT}"),
        ),
        ("azure_allow_http", "true".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The connection string Azurite's documentation gives, for `port`.
fn azure_connection_string(port: u16) -> String {
    format!(
        "DefaultEndpointsProtocol=http;AccountName={AZ_ACCOUNT};AccountKey={AZ_KEY};\
         BlobEndpoint=http://127.0.0.1:{port}/{AZ_ACCOUNT};"
    )
}

/// Uploads every file under `dir` to the container under `prefix`, through object_store.
pub(crate) async fn upload_to_azure(port: u16, dir: &Path, prefix: &str) {
    use object_store::azure::MicrosoftAzureBuilder;
    let store: std::sync::Arc<dyn object_store::ObjectStore> = std::sync::Arc::new(
        MicrosoftAzureBuilder::new()
            .with_account(AZ_ACCOUNT)
            .with_access_key(AZ_KEY)
            .with_container_name(CONTAINER)
            .with_endpoint(format!("http://127.0.0.1:{port}/{AZ_ACCOUNT}"))
            .with_allow_http(true)
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    crate::s3_moto::upload(&store, dir, prefix).await;
}

// ---- Google Cloud Storage (fake-gcs-server) ----

pub(crate) const GCS_BUCKET: &str = "dar-gcs";

/// fake-gcs-server in memory, holding what `seed` holds (each folder a bucket).
pub(crate) async fn start_fake_gcs(seed: &Path) -> Emulator {
    let seed = seed.to_string_lossy().into_owned();
    let args = [
        "-scheme",
        "http",
        "-host",
        "127.0.0.1",
        "-port",
        "{port}",
        // Without it the XML API's path-style routes (GET /bucket/object, the listing)
        // answer 404.
        "-public-host",
        "127.0.0.1",
        "-backend",
        "memory",
        "-log-level",
        "error",
        "-data",
        &seed,
    ];
    start(
        "fake-gcs-server",
        &args,
        |port| {
            format!(
                "GET /_internal/healthcheck HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                 Connection: close\r\n\r\n"
            )
        },
        |answer| answer.starts_with("HTTP/1.1 200"),
    )
    .await
}

/// Copies every file under `dir` into `seed/GCS_BUCKET/prefix`.
pub(crate) fn seed_gcs(seed: &Path, dir: &Path, prefix: &str) {
    for (rel, path) in common::files_under(dir, dir) {
        let to = seed.join(GCS_BUCKET).join(prefix).join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::copy(&path, &to).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
}

/// Storage options that reach fake-gcs-server at `port`, unsigned.
pub(crate) fn gcs_options(port: u16) -> HashMap<String, String> {
    [
        // (An http:// endpoint allows plain HTTP by itself.)
        ("google_base_url", format!("http://127.0.0.1:{port}/")),
        ("anonymous", "true".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

// ---- The tests ----

/// Tables of every kind the log and the read path know: partitions with escaped characters,
/// deletion vectors, v2 checkpoints with sidecars, column mapping, several commits.
const TABLES: &[&str] = &[
    "dat__basic_partitioned",
    "golden__hive-deltatbl-special-chars-in-partition-column",
    "golden__dv-partitioned-with-checkpoint",
    "kernel__v2-checkpoints-parquet-with-sidecars",
    "deltars__table_with_column_mapping",
];

fn pairs(options: &HashMap<String, String>) -> Vec<(&str, &str)> {
    options
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// Every table in `TABLES`, read from `url_of(name)` with `options`, has its rows on disk and
/// its file set at the version before the last.
async fn same_as_on_disk(
    cloud: &str,
    url_of: impl Fn(&str) -> String,
    options: &HashMap<String, String>,
) {
    for name in TABLES {
        let dir = common::table_dir(name);
        let local = common::rows_over(&dir.to_string_lossy(), &[])
            .await
            .unwrap_or_else(|e| panic!("{name} on disk: {e}"));
        let remote = common::rows_over(&url_of(name), &pairs(options))
            .await
            .unwrap_or_else(|e| panic!("{name} from {cloud}: {e}"));
        assert!(!local.is_empty(), "{name}: no rows to compare");
        assert_eq!(remote, local, "{name} from {cloud}");
        let on_disk = DeltaTableBuilder::new(dir.to_string_lossy())
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if on_disk.version() > 0 {
            let before = on_disk.version() - 1;
            let at = |location: String, options: HashMap<String, String>| async move {
                DeltaTableBuilder::new(location)
                    .with_storage_options(options)
                    .with_version(before)
                    .load_table_with_eager_scan_metadata()
                    .await
                    .unwrap_or_else(|e| panic!("{name} at v-1 from {cloud}: {e}"))
            };
            let old_remote = at(url_of(name), options.clone()).await;
            let old_local = at(dir.to_string_lossy().into_owned(), HashMap::new()).await;
            assert_eq!(
                common::file_set(&old_remote),
                common::file_set(&old_local),
                "{name} at v-1 from {cloud}"
            );
        }
        println!("{cloud} {name}: {} rows as on disk", local.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_tables_from_azurite() {
    let azurite = start_azurite().await;
    for name in TABLES {
        upload_to_azure(
            azurite.port,
            &common::table_dir(name),
            &format!("tables/{name}"),
        )
        .await;
    }
    let options = azure_options(azurite.port);
    same_as_on_disk(
        "azure",
        |n| format!("az://{CONTAINER}/tables/{n}"),
        &options,
    )
    .await;

    // Every URL form names the same table.
    let name = TABLES[0];
    let expected = common::rows_over(&common::table_dir(name).to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for url in [
        format!("azure://{CONTAINER}/tables/{name}"),
        format!("abfs://{CONTAINER}/tables/{name}"),
        format!("abfss://{CONTAINER}@{AZ_ACCOUNT}.dfs.core.windows.net/tables/{name}"),
        format!("wasbs://{CONTAINER}@{AZ_ACCOUNT}.blob.core.windows.net/tables/{name}"),
    ] {
        let rows = common::rows_over(&url, &pairs(&options))
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(rows, expected, "{url}");
    }
    // A connection string alone (as the portal and Azurite give it).
    let connection = azure_connection_string(azurite.port);
    let url = format!("az://{CONTAINER}/tables/{name}");
    let rows = common::rows_over(&url, &[("azure_storage_connection_string", &connection)])
        .await
        .unwrap_or_else(|e| panic!("connection string: {e}"));
    assert_eq!(rows, expected);

    // A wrong key: a typed error, never the key, never an empty table.
    let mut wrong = options.clone();
    wrong.insert(
        "azure_storage_account_key".into(),
        "d3Jvbmcta2V5LXNlY3JldA==".into(),
    );
    wrong.insert("max_retries".into(), "0".into());
    let err = common::rows_over(&url, &pairs(&wrong)).await.err();
    let err = err.unwrap_or_else(|| panic!("a wrong key read the table"));
    assert!(matches!(err.code(), "io" | "not_a_table"), "{err}");
    assert!(!err.to_string().contains("d3Jvbmcta2V5"), "{err}");

    // No table there, and no such container.
    let missing =
        common::rows_over(&format!("az://{CONTAINER}/no/such/table"), &pairs(&options)).await;
    assert_eq!(missing.err().map(|e| e.code()), Some("not_a_table"));
    let no_container = common::rows_over("az://no-such-container/t", &pairs(&options)).await;
    let err = no_container
        .err()
        .unwrap_or_else(|| panic!("no container, yet a table"));
    assert_eq!(err.code(), "not_found", "{err}");
    assert!(
        err.to_string()
            .contains("az://no-such-container (the bucket or container does not exist)"),
        "{err}"
    );

    // An option Azure does not know: named, its value never shown. Another cloud's options
    // are passed over (one set of options serves tables in several stores).
    let mut unknown = options.clone();
    unknown.insert("azure_storage_acount_name".into(), "secret-value".into());
    let err = common::rows_over(&url, &pairs(&unknown)).await.err();
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.contains("unknown Azure storage option 'azure_storage_acount_name'"),
        "{text}"
    );
    assert!(!text.contains("secret-value"), "{text}");
    let mut mixed = options.clone();
    mixed.insert("aws_region".into(), "eu-west-1".into());
    mixed.insert("google_base_url".into(), "not used".into());
    let rows = common::rows_over(&url, &pairs(&mixed))
        .await
        .unwrap_or_else(|e| panic!("other clouds' options: {e}"));
    assert_eq!(rows, expected);

    // A table whose log names its files by absolute URIs in another form of the same
    // location (Spark writes abfss://container@account.dfs.core.windows.net/…).
    let spark = crate::common::table_dir("dat__basic_append");
    let copy = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    absolute_paths(
        &spark,
        copy.path(),
        &format!("abfss://{CONTAINER}@{AZ_ACCOUNT}.dfs.core.windows.net/absolute"),
    );
    upload_to_azure(azurite.port, copy.path(), "absolute").await;
    let expected_append = common::rows_over(&spark.to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for url in [
        format!("az://{CONTAINER}/absolute"),
        format!("abfss://{CONTAINER}@{AZ_ACCOUNT}.dfs.core.windows.net/absolute"),
    ] {
        let rows = common::rows_over(&url, &pairs(&options))
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(rows, expected_append, "{url}");
    }
}

/// Copies the table at `from` to `to` with every `add.path` of its commits made the absolute
/// URI `{prefix}/{path}`.
fn absolute_paths(from: &Path, to: &Path, prefix: &str) {
    for (rel, path) in common::files_under(from, from) {
        let target = to.join(&rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        if !rel.ends_with(".json") || !rel.starts_with("_delta_log/") {
            std::fs::copy(&path, &target).unwrap_or_else(|e| panic!("{e}"));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        let lines: Vec<String> = text
            .lines()
            .map(|line| {
                let mut action: serde_json::Value =
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}"));
                for kind in ["add", "remove"] {
                    if let Some(p) = action[kind]["path"].as_str() {
                        action[kind]["path"] = format!("{prefix}/{p}").into();
                    }
                }
                action.to_string()
            })
            .collect();
        std::fs::write(&target, lines.join("\n")).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `dar info` on an `az://` table with `args`, the `AZURE_*` variables of this process
/// removed and `env` set: whether it succeeded, its output and its errors.
fn dar_info(url: &str, env: &[(&str, String)], args: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dar"));
    command.args(["info", url, "--json"]).args(args);
    for (key, _) in
        std::env::vars().filter(|(k, _)| k.starts_with("AZURE_") || k.starts_with("GOOGLE_"))
    {
        command.env_remove(key);
    }
    command.env_remove("DAR_STORAGE_OPTIONS");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dar_takes_azure_settings_from_the_environment() {
    let azurite = start_azurite().await;
    let name = "dat__basic_partitioned";
    upload_to_azure(azurite.port, &common::table_dir(name), "env").await;
    let url = format!("az://{CONTAINER}/env");
    let options = azure_options(azurite.port);
    let endpoint = format!(
        "azure_storage_endpoint={}",
        options["azure_storage_endpoint"]
    );
    // The connection string in its standard variable.
    let connection = azure_connection_string(azurite.port);
    let (ok, text, err) = dar_info(
        &url,
        &[("AZURE_STORAGE_CONNECTION_STRING", connection.clone())],
        &[],
    );
    assert!(ok, "{err}");
    assert!(text.contains("\"numFiles\""), "{text}");
    // The Azure CLI's names for account and key, the endpoint as an option.
    let env = [
        ("AZURE_STORAGE_ACCOUNT", AZ_ACCOUNT.to_string()),
        (
            "AZURE_STORAGE_KEY",
            options["azure_storage_account_key"].clone(),
        ),
        ("AZURE_ALLOW_HTTP", "true".to_string()),
    ];
    let (ok, text, err) = dar_info(&url, &env, &["-o", &endpoint]);
    assert!(ok, "{err}");
    assert!(text.contains("\"numFiles\""), "{text}");
    // A key on the command line wins over the environment's, and is never printed.
    let (ok, _, err) = dar_info(
        &url,
        &env,
        &[
            "-o",
            &endpoint,
            "-o",
            "azure_storage_account_key=d3Jvbmc=",
            "-o",
            "max_retries=0",
        ],
    );
    assert!(!ok, "a wrong key given on the command line was not used");
    assert!(!err.contains("d3Jvbmc="), "{err}");
    // A SAS token given as an option is not mixed with the environment's key.
    let (ok, _, err) = dar_info(
        &url,
        &[("AZURE_STORAGE_CONNECTION_STRING", connection)],
        &[
            "-o",
            "azure_storage_sas_token=sv=2021-08-06&sig=bm9wZQ%3D%3D",
            "-o",
            "max_retries=0",
        ],
    );
    assert!(
        !ok,
        "the environment's key signed for a SAS given as an option"
    );
    assert!(!err.contains("bm9wZQ"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_tables_from_fake_gcs_server() {
    let seed = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for name in TABLES {
        seed_gcs(
            seed.path(),
            &common::table_dir(name),
            &format!("tables/{name}"),
        );
    }
    let gcs = start_fake_gcs(seed.path()).await;
    let options = gcs_options(gcs.port);
    same_as_on_disk("gcs", |n| format!("gs://{GCS_BUCKET}/tables/{n}"), &options).await;

    // A service-account key file pointing at the emulator, as object_store documents it.
    let key = seed.path().join("key.json");
    let key_json = serde_json::json!({
        "gcs_base_url": format!("http://127.0.0.1:{}", gcs.port),
        "disable_oauth": true,
        "client_email": "",
        "private_key": "",
        "private_key_id": "",
    });
    std::fs::write(&key, key_json.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let name = TABLES[0];
    let url = format!("gcs://{GCS_BUCKET}/tables/{name}");
    let key_path = key.to_string_lossy().into_owned();
    let rows = common::rows_over(
        &url,
        &[
            ("google_service_account", &key_path),
            ("google_allow_http", "true"),
        ],
    )
    .await
    .unwrap_or_else(|e| panic!("key file: {e}"));
    let expected = common::rows_over(&common::table_dir(name).to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, expected);

    // No table there, and no such bucket.
    let missing = common::rows_over(&format!("gs://{GCS_BUCKET}/no/such"), &pairs(&options)).await;
    assert_eq!(missing.err().map(|e| e.code()), Some("not_a_table"));
    // (fake-gcs-server answers a missing bucket's listing 500 where GCS answers 404.)
    let mut once = options.clone();
    once.insert("max_retries".into(), "0".into());
    let no_bucket = common::rows_over("gs://no-such-bucket/t", &pairs(&once)).await;
    let err = no_bucket
        .err()
        .unwrap_or_else(|| panic!("no bucket, yet a table"));
    assert!(err.to_string().contains("no-such-bucket"), "{err}");

    // An endpoint without its scheme: refused by name, before any request.
    let mut typo = options.clone();
    typo.insert("google_base_url".into(), format!("127.0.0.1:{}", gcs.port));
    let err = common::rows_over(&url, &pairs(&typo)).await.err();
    assert_eq!(err.map(|e| e.code()), Some("invalid_storage_options"));

    // `dar` with the emulator from GOOGLE_* variables.
    let env = [
        ("GOOGLE_BASE_URL", options["google_base_url"].clone()),
        ("GOOGLE_SKIP_SIGNATURE", "true".to_string()),
        ("GOOGLE_ALLOW_HTTP", "true".to_string()),
    ];
    let (ok, text, err) = dar_info(&format!("gs://{GCS_BUCKET}/tables/{name}"), &env, &[]);
    assert!(ok, "{err}");
    assert!(text.contains("\"numFiles\""), "{text}");
}
