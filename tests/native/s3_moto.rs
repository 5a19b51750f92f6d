//! `s3://` tables against a loopback S3-compatible server (moto's `moto_server`, installed
//! by `.ci/setup`), started by the test, with endpoint and credentials given as storage
//! options. The table read from S3 equals the same table read from disk. `dar` takes the
//! same settings from the standard `AWS_*` variables and from `$DAR_STORAGE_OPTIONS` (secrets
//! off the command line), options on the command line winning.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use delta_arrow_reader::DeltaTableBuilder;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::cloud_emulators::{start, Emulator};

pub(crate) const BUCKET: &str = "dar-test";

/// The `moto_server` process; killed on drop.
pub(crate) type Moto = Emulator;

/// `moto_server` on a free port, with the bucket [`BUCKET`] (created as the readiness probe).
pub(crate) async fn start_moto() -> Moto {
    start(
        "moto_server",
        &["-H", "127.0.0.1", "-p", "{port}"],
        |port| {
            format!(
                "PUT /{BUCKET} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\
                 Connection: close\r\n\r\n"
            )
        },
        |answer| answer.starts_with("HTTP/1.1 200"),
    )
    .await
}

pub(crate) fn options(port: u16) -> HashMap<String, String> {
    [
        ("aws_endpoint", format!("http://127.0.0.1:{port}")),
        ("aws_access_key_id", "testing-key".into()),
        ("aws_secret_access_key", "testing-secret".into()),
        ("aws_region", "us-east-1".into()),
        ("aws_allow_http", "true".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub(crate) async fn upload(store: &Arc<dyn ObjectStore>, dir: &Path, prefix: &str) {
    for (rel, path) in common::files_under(dir, dir) {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        // Object names as they are (a literal `%` stays one), as the reader asks for them.
        let key = object_store::path::Path::parse(format!("{prefix}/{rel}"))
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        store
            .put(&key, PutPayload::from(data))
            .await
            .unwrap_or_else(|e| panic!("upload {rel}: {e}"));
    }
}

/// The test bucket on the moto server at `port`, for uploads.
pub(crate) fn bucket(port: u16) -> Arc<dyn ObjectStore> {
    Arc::new(
        AmazonS3Builder::new()
            .with_bucket_name(BUCKET)
            .with_endpoint(format!("http://127.0.0.1:{port}"))
            .with_access_key_id("testing-key")
            .with_secret_access_key("testing-secret")
            .with_region("us-east-1")
            .with_allow_http(true)
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_tables_from_s3_with_storage_options() {
    let moto = start_moto().await;
    let store = bucket(moto.port);
    let tables = [
        "dat__basic_partitioned",
        "deltars__simple_table_with_checkpoint",
        "kernel__v2-checkpoints-parquet-with-sidecars",
        "golden__dv-partitioned-with-checkpoint",
    ];
    for name in tables {
        let dir = common::table_dir(name);
        upload(&store, &dir, &format!("tables/{name}")).await;
        let local = DeltaTableBuilder::new(dir.to_string_lossy())
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{name} locally: {e}"));
        let remote = DeltaTableBuilder::new(format!("s3://{BUCKET}/tables/{name}"))
            .with_storage_options(options(moto.port))
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{name} from S3: {e}"));
        assert_eq!(remote.version(), local.version(), "{name}");
        assert_eq!(remote.schema(), local.schema(), "{name}");
        assert_eq!(
            common::file_set(&remote),
            common::file_set(&local),
            "{name}"
        );
        let io = remote.io_counters().snapshot();
        println!(
            "s3 {name}: version {} in {} requests ({} lists)",
            remote.version(),
            io.requests,
            io.list_requests
        );
        // Time travel through S3 as well.
        if local.version() > 0 {
            let old = DeltaTableBuilder::new(format!("s3://{BUCKET}/tables/{name}"))
                .with_storage_options(options(moto.port))
                .with_version(local.version() - 1)
                .load_table_with_eager_scan_metadata()
                .await
                .unwrap_or_else(|e| panic!("{name} from S3 at v-1: {e}"));
            assert_eq!(old.version(), local.version() - 1);
        }
    }

    // Wrong storage options: a typed error that names the option but never its value.
    let bad = DeltaTableBuilder::new(format!("s3://{BUCKET}/tables/x"))
        .with_storage_option("aws_no_such_option", "very-secret-value")
        .load_table_with_eager_scan_metadata()
        .await;
    let err = bad
        .err()
        .unwrap_or_else(|| panic!("an unknown option must fail"));
    assert_eq!(err.code(), "invalid_storage_options");
    assert!(err.to_string().contains("aws_no_such_option"));
    assert!(!err.to_string().contains("very-secret-value"));

    // A location that is not a table.
    let missing = DeltaTableBuilder::new(format!("s3://{BUCKET}/no/such/table"))
        .with_storage_options(options(moto.port))
        .load_table_with_eager_scan_metadata()
        .await;
    assert_eq!(missing.err().map(|e| e.code()), Some("not_a_table"));

    // No such bucket: `not_found`, naming it.
    let no_bucket = DeltaTableBuilder::new("s3://no-such-bucket/t")
        .with_storage_options(options(moto.port))
        .load_table_with_eager_scan_metadata()
        .await;
    let err = no_bucket
        .err()
        .unwrap_or_else(|| panic!("no bucket, yet a table"));
    assert_eq!(err.code(), "not_found", "{err}");
    assert!(
        err.to_string().contains("s3://no-such-bucket (the bucket"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dar_takes_s3_settings_from_the_environment() {
    let moto = start_moto().await;
    let name = "dat__basic_partitioned";
    upload(&bucket(moto.port), &common::table_dir(name), "env").await;
    let url = format!("s3://{BUCKET}/env");
    let settings = options(moto.port);
    let info = |env: Vec<(String, String)>, args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dar"));
        command.args(["info", &url, "--json"]).args(args);
        for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
            command.env_remove(key);
        }
        command.env_remove("DAR_STORAGE_OPTIONS").envs(env);
        let out = command.output().unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), text, err)
    };
    let as_env = |keys: &[&str]| -> Vec<(String, String)> {
        keys.iter()
            .map(|k| (k.to_ascii_uppercase(), settings[*k].clone()))
            .collect()
    };
    // Everything from AWS_* (the endpoint as AWS_ENDPOINT_URL, as the AWS tools spell it).
    let mut env = as_env(&["aws_access_key_id", "aws_secret_access_key", "aws_region"]);
    env.push(("AWS_ENDPOINT_URL".into(), settings["aws_endpoint"].clone()));
    env.push(("AWS_ALLOW_HTTP".into(), "true".into()));
    env.push(("AWS_PAGER".into(), "less".into()));
    let (ok, text, err) = info(env.clone(), &[]);
    assert!(ok, "{err}");
    assert!(text.contains("\"numFiles\""), "{text}");
    // An option on the command line wins over the environment: a wrong endpoint given.
    let (ok, _, err) = info(
        env,
        &[
            "-o",
            "aws_endpoint=http://127.0.0.1:9",
            "-o",
            "max_retries=0",
        ],
    );
    assert!(!ok && err.contains("127.0.0.1:9"), "{err}");
    // Everything from $DAR_STORAGE_OPTIONS.
    let json = serde_json::to_string(&settings).unwrap_or_else(|e| panic!("{e}"));
    let (ok, text, err) = info(vec![("DAR_STORAGE_OPTIONS".into(), json)], &[]);
    assert!(ok, "{err}");
    assert!(text.contains("\"numFiles\""), "{text}");
    // A value that is not a JSON object names the variable.
    let (ok, _, err) = info(
        vec![("DAR_STORAGE_OPTIONS".into(), "aws_region=x".into())],
        &[],
    );
    assert!(!ok && err.contains("DAR_STORAGE_OPTIONS"), "{err}");
}
