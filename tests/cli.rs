//! The `dar` binary end to end: the default preview of the demo table, `head` with a filter,
//! `export` in every format read back, and one-line errors with a non-zero exit code.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::process::{Command, Output};

fn dar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run dar: {e}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn no_argument_previews_the_demo_table() {
    let out = dar(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    for needle in [
        "Amsterdam",
        "Tokyo",
        "census_date",
        "7 rows shown",
        "version 3",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(
        !text.contains("Eindhoven"),
        "a removed file's rows must not show"
    );
}

#[test]
fn head_with_columns_filter_and_time_travel() {
    let table = common::table_dir("dat__basic_partitioned");
    let table = table.to_string_lossy();
    let out = dar(&[
        "head",
        &table,
        "--columns",
        "letter,number",
        "--filter",
        "number >= 4",
        "-n",
        "10",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("| letter | number |"), "{text}");
    assert!(!text.contains("a_float"), "{text}");
    assert!(text.contains("3 rows shown"), "{text}");
    let v0 = dar(&["head", &table, "--version", "0"]);
    assert!(stdout(&v0).contains("version 0"), "{}", stdout(&v0));
}

#[test]
fn export_every_format_and_read_back() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = common::table_dir("golden__data-reader-primitives");
    let table = table.to_string_lossy();
    for (ext, format) in [
        ("parquet", "parquet"),
        ("arrow", "ipc"),
        ("csv", "csv"),
        ("jsonl", "json"),
    ] {
        let path = dir.path().join(format!("out.{ext}"));
        let path_text = path.to_string_lossy();
        let out = dar(&["export", &table, "--out", &path_text, "--format", format]);
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let rows = match format {
            "parquet" => {
                let reader =
                    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                        bytes::Bytes::from(bytes),
                    )
                    .and_then(|b| b.build())
                    .unwrap_or_else(|e| panic!("{e}"));
                reader
                    .map(|b| b.map(|b| b.num_rows()).unwrap_or(0))
                    .sum::<usize>()
            }
            "ipc" => {
                let reader =
                    arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
                        .unwrap_or_else(|e| panic!("{e}"));
                reader
                    .map(|b| b.map(|b| b.num_rows()).unwrap_or(0))
                    .sum::<usize>()
            }
            "csv" => String::from_utf8_lossy(&bytes).lines().count() - 1,
            _ => String::from_utf8_lossy(&bytes).lines().count(),
        };
        assert_eq!(rows, 11, "{format}");
        assert!(
            !dir.path().join("out.dar-partial").exists(),
            "no partial file is left behind"
        );
    }
}

#[test]
fn errors_are_one_line_with_a_code_and_exit_1() {
    for (args, code) in [
        (vec!["info", "/no/such/table"], "[not_a_table]"),
        (vec!["head", "--filter", "nope = 1"], "[invalid_argument]"),
        (vec!["info", "--version", "99"], "[version_not_found]"),
    ] {
        let out = dar(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(code), "{args:?}: {err}");
    }
    let table = common::table_dir("kernel__table-with-geo");
    let out = dar(&["head", &table.to_string_lossy()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[unsupported_feature]") && err.contains("geospatial"),
        "{err}"
    );
}

#[cfg(feature = "datafusion")]
#[test]
fn sql_over_two_named_tables() {
    let letters = common::table_dir("dat__basic_partitioned");
    let letters = format!("l={}", letters.to_string_lossy());
    let dv = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let dv = format!("d={}", dv.to_string_lossy());
    let out = dar(&[
        "sql",
        "SELECT l.letter, count(*) AS n FROM l JOIN d ON d.part = l.number \
         GROUP BY l.letter ORDER BY l.letter",
        "--table",
        &letters,
        "--table",
        &dv,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("| letter |"), "{text}");
    assert!(text.contains(" row"), "{text}");

    let out = dar(&[
        "sql",
        "SELECT count(*) AS n FROM d WHERE part = 1",
        "--table",
        &dv,
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    let n = json["n"].as_i64().unwrap_or(-1);
    assert!(n > 0 && n < 35, "{json}");

    let out = dar(&["sql", "SELECT 1 FROM missing", "--table", &dv, "--csv"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("dar: error ["));
    let out = dar(&["sql", "SELECT 1", "--table", "no-equals-sign"]);
    assert!(!out.status.success());
}
