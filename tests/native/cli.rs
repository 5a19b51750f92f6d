//! The `dar` binary end to end: the default preview of the demo table, `head` with a filter,
//! `export` in every format read back, and one-line errors with a non-zero exit code.

use crate::common;

use std::process::{Command, Output};

fn dar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run dar: {e}"))
}

/// `dar ARGS`, which must succeed (the failure names its standard error).
fn dar_ok(args: &[&str]) -> Output {
    let out = dar(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Conventions of the command line: `--version` alone after a command is the tool's version;
/// a negative count is refused as a bad value (not as an unknown argument with a tip that
/// does not work); a table path is taken as written, a space at its end included.
#[test]
fn command_line_conventions() {
    let tool = stdout(&dar_ok(&["--version"]));
    assert!(tool.starts_with("dar "), "{tool}");
    for command in ["info", "head", "export", "files"] {
        assert_eq!(stdout(&dar_ok(&[command, "--version"])), tool, "{command}");
    }
    for args in [
        ["head", "-n", "-1"],
        ["head", "--version", "-2"],
        ["export", "--limit", "-3"],
    ] {
        let out = dar(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("invalid value '-"), "{args:?}: {err}");
    }
    // A single-valued option given twice takes its last value (POSIX, GNU); options given
    // to be repeated still gather every value.
    let text = stdout(&dar_ok(&["head", "-n", "1", "-n", "2"]));
    assert!(text.contains("2 rows shown"), "{text}");
    let text = stdout(&dar_ok(&[
        "head",
        "--columns",
        "id",
        "--columns",
        "city",
        "--json",
    ]));
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.contains("\"id\"") && first.contains("\"city\""),
        "{text}"
    );
    // Help that cannot be written is a failure, not exit 0.
    if std::path::Path::new("/dev/full").exists() {
        for flag in ["--help", "--version"] {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap_or_else(|e| panic!("{e}"));
            let out = Command::new(env!("CARGO_BIN_EXE_dar"))
                .arg(flag)
                .stdout(full)
                .output()
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(out.status.code(), Some(1), "{flag}");
        }
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    copy_dir(
        &common::table_dir("dat__basic_append"),
        &dir.path().join("sales"),
    );
    let spaced = dir.path().join("sales ").to_string_lossy().into_owned();
    let out = dar(&["info", &spaced]);
    assert_eq!(out.status.code(), Some(1), "'sales ' is not 'sales'");
    assert!(String::from_utf8_lossy(&out.stderr).contains("[not_a_table]"));
}

/// An export is in the table's order: the same snapshot gives the same bytes every time,
/// as a read of one partition gives them (here 101 files, read on every core).
#[test]
fn export_is_in_the_log_order_every_time() {
    let table = common::table_dir("kernel__v2-checkpoints-json-with-sidecars");
    let table = table.to_string_lossy();
    let csv = || {
        stdout(&dar_ok(&[
            "export", &table, "--out", "-", "--format", "csv",
        ]))
    };
    let first = csv();
    assert!(first.lines().count() > 100, "{first}");
    for _ in 0..3 {
        assert_eq!(csv(), first, "another order");
    }
    // A format the file's name contradicts is written as asked, with a note.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let named = dir.path().join("rows.csv");
    let out = dar_ok(&[
        "export",
        &table,
        "--out",
        &named.to_string_lossy(),
        "--format",
        "json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: writing Json") && err.contains("names Csv"),
        "{err}"
    );
    let text = std::fs::read_to_string(&named).unwrap_or_default();
    assert!(text.starts_with('{'), "{text}");
    // A limit reads in the log's order too: its rows are the first of the export.
    let limited = stdout(&dar_ok(&[
        "export", &table, "--out", "-", "--format", "csv", "--limit", "50",
    ]));
    assert!(first.starts_with(&limited), "{limited}");
}

#[test]
fn no_argument_previews_the_demo_table() {
    let out = dar_ok(&[]);
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
fn head_shows_a_null_as_null_not_as_an_empty_cell() {
    // One row of the table is null in every column; nulls inside a list too.
    let out = dar_ok(&["head", &primitives(), "--columns", "as_int,as_string"]);
    let text = stdout(&out);
    let nulls = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains("as_int"))
        .filter(|l| l.split('|').filter(|c| c.trim() == "null").count() == 2)
        .count();
    assert_eq!(nulls, 1, "{text}");
    assert!(!text.contains("|  "), "no empty cell: {text}");
    let lists = common::table_dir("golden__data-reader-nullable-field-invalid-schema-key");
    let text = stdout(&dar_ok(&["head", &lists.to_string_lossy()]));
    assert!(text.contains("[null, null, null]"), "{text}");
}

#[test]
fn head_with_columns_filter_and_time_travel() {
    let table = common::table_dir("dat__basic_partitioned");
    let table = table.to_string_lossy();
    let out = dar_ok(&[
        "head",
        &table,
        "--columns",
        "letter,number",
        "--filter",
        "number >= 4",
        "-n",
        "10",
    ]);
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
        assert_no_partial_files(dir.path());
    }
}

/// Variants in text formats: the JSON they encode, at any depth (in a list, a struct, a map
/// and a list in a struct), in JSON lines, CSV and the `head` grid; Parquet keeps the two
/// binaries.
#[test]
fn variants_read_as_the_json_they_encode_in_text_outputs() {
    let table = common::table_dir("deltars__spark-variant-checkpoint");
    let table = table.to_string_lossy();
    let out = dar(&["export", &table, "--out", "-", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let one = rows
        .iter()
        .find(|r| r["id"] == serde_json::json!(1))
        .unwrap_or_else(|| panic!("no row 1"));
    assert_eq!(one["v"], serde_json::json!({"key": 1}));
    assert_eq!(
        one["array_of_variants"],
        serde_json::json!([{"key": 1}, null, {"key": 1}, null, {"key": 1}])
    );
    assert_eq!(
        one["struct_of_variants"],
        serde_json::json!({"v": {"key": 1}})
    );
    assert_eq!(one["map_of_variants"]["1"], serde_json::json!({"key": 1}));
    assert_eq!(
        one["struct_of_array_of_variants"],
        serde_json::json!({"v": [null, {"key": 1}]})
    );
    let csv = dar(&["export", &table, "--out", "-", "--format", "csv"]);
    assert!(String::from_utf8_lossy(&csv.stdout).contains(r#""{""key"":1}""#));
    let head = dar(&["head", &table, "-n", "100"]);
    let grid = String::from_utf8_lossy(&head.stdout);
    assert!(grid.contains(r#"| {"key":1} "#), "{grid}");
    assert!(!grid.contains("metadata"), "{grid}");
}

/// Nested columns in text formats: a table with lists of `map<int,int>` and deeper lists
/// exports to CSV (each nested value one field of JSON text) and to JSON lines (maps keyed
/// by the keys' text), and both say the same of every row.
#[test]
fn nested_columns_and_int_keyed_maps_export_as_text() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = common::table_dir("golden__data-reader-array-complex-objects");
    let table = table.to_string_lossy();
    let mut exported = std::collections::HashMap::new();
    for format in ["csv", "json"] {
        let path = dir.path().join(format!("out.{format}"));
        let out = dar(&[
            "export",
            &table,
            "--out",
            &path.to_string_lossy(),
            "--format",
            format,
        ]);
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        exported.insert(
            format,
            std::fs::read(&path).unwrap_or_else(|e| panic!("{e}")),
        );
    }
    // JSON lines: one object per row, by `i`.
    let mut by_id = std::collections::BTreeMap::new();
    for line in String::from_utf8_lossy(&exported["json"]).lines() {
        let row: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let id = row["i"]
            .as_i64()
            .unwrap_or_else(|| panic!("no i in {line}"));
        by_id.insert(id, row);
    }
    assert_eq!(by_id.len(), 10);
    let five = &by_id[&5];
    assert_eq!(
        five["list_of_maps"],
        serde_json::json!([{"5": 5}, {"5": 5}])
    );
    assert_eq!(five["3d_int_list"][1][0], serde_json::json!([5, 5, 5]));
    // CSV, read back as text: the nested fields hold the same JSON.
    let header: Vec<String> = String::from_utf8_lossy(&exported["csv"])
        .lines()
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::to_string)
        .collect();
    let fields: Vec<arrow_schema::Field> = header
        .iter()
        .map(|n| arrow_schema::Field::new(n, arrow_schema::DataType::Utf8, true))
        .collect();
    let reader =
        arrow_csv::ReaderBuilder::new(std::sync::Arc::new(arrow_schema::Schema::new(fields)))
            .with_header(true)
            .build(std::io::Cursor::new(exported["csv"].clone()))
            .unwrap_or_else(|e| panic!("{e}"));
    let mut rows = 0;
    for batch in reader {
        let batch = batch.unwrap_or_else(|e| panic!("{e}"));
        for r in 0..batch.num_rows() {
            rows += 1;
            let text = |name: &str| {
                let column = batch
                    .column_by_name(name)
                    .unwrap_or_else(|| panic!("no column {name}"));
                arrow_array::cast::AsArray::as_string::<i32>(column)
                    .value(r)
                    .to_string()
            };
            let id: i64 = text("i").parse().unwrap_or_else(|e| panic!("{e}"));
            for name in &header[1..] {
                let value: serde_json::Value = serde_json::from_str(&text(name))
                    .unwrap_or_else(|e| panic!("{name} of row {id}: {e}"));
                assert_eq!(value, by_id[&id][name.as_str()], "{name} of row {id}");
            }
        }
    }
    assert_eq!(rows, 10);
}

/// No temporary file of an export is left in `dir`.
fn assert_no_partial_files(dir: &std::path::Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("dar-partial"))
        .collect();
    assert!(left.is_empty(), "partial files left behind: {left:?}");
}

fn primitives() -> String {
    common::table_dir("golden__data-reader-primitives")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn export_to_stdout_writes_every_row() {
    let table = primitives();
    let out = dar_ok(&["export", &table, "--out", "-", "--format", "csv"]);
    assert_eq!(stdout(&out).lines().count(), 12, "a header and 11 rows");
    let out = dar_ok(&["export", &table, "--out", "-", "--format", "parquet"]);
    let rows: usize = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::from(out.stdout),
    )
    .and_then(|b| b.build())
    .unwrap_or_else(|e| panic!("{e}"))
    .map(|b| b.map(|b| b.num_rows()).unwrap_or(0))
    .sum();
    assert_eq!(rows, 11);
}

/// Output the user asked for that cannot be written (a full device) is an error, from
/// every command: never a success with the data lost.
#[cfg(target_os = "linux")]
#[test]
fn output_that_cannot_be_written_is_an_error() {
    let table = primitives();
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full");
    let sql_table = format!("t={table}");
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["head", &table],
        vec!["info", &table],
        vec!["schema", &table, "--json"],
        vec!["files", &table],
        vec!["stats", &table],
        vec!["export", &table, "--out", "-", "--format", "json"],
        vec!["export", &table, "--out", "/dev/full", "--format", "csv"],
    ];
    if cfg!(feature = "datafusion") {
        commands.push(vec![
            "sql",
            "--table",
            &sql_table,
            "select * from t",
            "--csv",
        ]);
    }
    for args in commands {
        let device = full().unwrap_or_else(|e| panic!("/dev/full: {e}"));
        let out = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args(&args)
            .stdout(device)
            .output()
            .unwrap_or_else(|e| panic!("cannot run dar: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}

/// A reader that closes the pipe early (`dar export ... --out - | head`) ends the export
/// quietly, as it ends `dar files | head`: exit status 0, nothing on standard error.
#[cfg(unix)]
#[test]
fn a_pipe_closed_by_its_reader_ends_the_export_quietly() {
    use std::io::Read;
    // About 45 MB of CSV: far more than a pipe holds.
    let table = common::table_dir("deltars__COVID-19_NYT");
    for format in ["csv", "parquet"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args([
                "export",
                &table.to_string_lossy(),
                "--out",
                "-",
                "--format",
                format,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run dar: {e}"));
        let mut first = [0u8; 4096];
        let mut pipe = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        pipe.read_exact(&mut first)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        drop(pipe);
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{format}: {:?} {stderr}", out.status);
        assert!(stderr.is_empty(), "{format}: {stderr}");
    }
}

#[cfg(unix)]
#[test]
fn export_to_special_files_writes_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let table = primitives();
    // A device: written, still a device.
    if std::fs::metadata("/dev/null").is_ok_and(|m| m.file_type().is_char_device()) {
        dar_ok(&["export", &table, "--out", "/dev/null", "--format", "ipc"]);
        let meta = std::fs::metadata("/dev/null").unwrap_or_else(|e| panic!("{e}"));
        assert!(
            meta.file_type().is_char_device(),
            "/dev/null is still a device"
        );
        assert!(!std::path::Path::new("/dev/null.dar-partial").exists());
    }
    // A FIFO: its reader gets every row, and it stays a FIFO.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("rows.csv");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap_or_else(|e| panic!("{e}")))
    };
    dar_ok(&["export", &table, "--out", &fifo.to_string_lossy()]);
    let text = reader.join().unwrap_or_else(|_| panic!("reader thread"));
    assert_eq!(text.lines().count(), 12, "{text}");
    let meta = std::fs::symlink_metadata(&fifo).unwrap_or_else(|e| panic!("{e}"));
    assert!(meta.file_type().is_fifo(), "the FIFO is still a FIFO");
    assert_no_partial_files(dir.path());
    // A FIFO whose reader goes away after 10 bytes holds a cut export: an error, not the
    // quiet end of `--out - | head`. (More rows than a pipe holds: the write waits on it.)
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut first = [0u8; 10];
            let mut f = std::fs::File::open(fifo).unwrap_or_else(|e| panic!("{e}"));
            f.read_exact(&mut first).unwrap_or_else(|e| panic!("{e}"));
        })
    };
    let big = common::table_dir("deltars__COVID-19_NYT");
    let big = big.to_string_lossy();
    let out = dar(&[
        "export",
        &big,
        "--out",
        &fifo.to_string_lossy(),
        "--format",
        "csv",
    ]);
    reader.join().unwrap_or_else(|_| panic!("reader thread"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("its reader closed it after"), "{err}");
    // A directory is refused and left alone.
    let out = dar(&["export", &table, "--out", &dir.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(dir.path().is_dir());
}

/// `/dev/stdout`, `/dev/stderr` and `/dev/fd/N` (under any spelling) are written through the
/// inherited descriptor: what the shell wrote before (`>>`) stays, a pipe gets every row; a
/// descriptor open for reading only, or not open, is refused; a write-protected file is not
/// replaced.
#[cfg(unix)]
#[test]
fn export_to_descriptors_and_protected_files() {
    use std::os::unix::fs::PermissionsExt;
    let table = primitives();
    let binary = env!("CARGO_BIN_EXE_dar");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sh = |script: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(binary)
            .arg(&table)
            .current_dir(dir.path())
            .output()
            .unwrap_or_else(|e| panic!("sh: {e}"))
    };
    for (target, script) in [
        (
            "/dev/stdout",
            r#"echo HEADER > f; "$1" export "$2" --out /dev/stdout --format csv >> f"#,
        ),
        (
            "/dev/fd/3",
            r#"echo HEADER > f; "$1" export "$2" --out /dev/fd/3 --format csv 3>> f"#,
        ),
        (
            "/dev/stderr",
            r#"echo HEADER > f; "$1" export "$2" --out /dev/stderr --format csv 2>> f"#,
        ),
        (
            "a group",
            r#"{ echo HEADER; "$1" export "$2" --out /dev/stdout --format csv; echo AFTER; } > f"#,
        ),
        (
            "//dev/./stdout",
            r#"echo HEADER > f; "$1" export "$2" --out //dev/./stdout --format csv >> f"#,
        ),
        (
            "a link to /dev/stdout",
            r#"echo HEADER > f; ln -sf /dev/stdout lnk; "$1" export "$2" --out lnk --format csv >> f"#,
        ),
    ] {
        let out = sh(script);
        assert!(
            out.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(dir.path().join("f")).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.starts_with("HEADER\n"), "{target}: {text}");
        // (The closing summary goes to standard error: into `f` when that is the target.)
        let rows = text
            .lines()
            .filter(|l| *l != "HEADER" && *l != "AFTER" && !l.starts_with("wrote "))
            .count();
        assert_eq!(
            rows, 12,
            "{target}: a CSV header and 11 rows after HEADER: {text}"
        );
        assert_no_partial_files(dir.path());
    }
    // A pipe: every row, where following the link found nothing before.
    let out = sh(r#""$1" export "$2" --out /dev/stdout --format csv | wc -l"#);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "12");
    // Standard input, a descriptor open for reading only, or one not open: refused, the
    // file behind them unchanged.
    for script in [
        r#"echo KEEP > r; "$1" export "$2" --out /dev/stdin --format csv < r"#,
        r#"echo KEEP > r; "$1" export "$2" --out /dev/fd/9 --format csv 9< r"#,
        r#"echo KEEP > r; "$1" export "$2" --out /dev/fd/9 --format csv"#,
    ] {
        let out = sh(script);
        assert_eq!(out.status.code(), Some(1), "{script}");
        let kept = std::fs::read_to_string(dir.path().join("r")).unwrap_or_default();
        assert_eq!(kept, "KEEP\n", "{script}");
    }
    // Standard output closed (`>&-`): the runtime puts /dev/null there; the export fails
    // instead of saying it wrote rows nobody got. `>/dev/null` is still written.
    let out = sh(r#""$1" export "$2" --out - --format csv >&-"#);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("closed when dar started") && !err.contains("wrote"),
        "{err}"
    );
    let out = sh(r#""$1" export "$2" --out - --format csv >/dev/null"#);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A write-protected file keeps its contents.
    let kept = dir.path().join("keep.csv");
    std::fs::write(&kept, "IMPORTANT\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o444))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = dar(&["export", &table, "--out", &kept.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("write-protected"));
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap_or_default(),
        "IMPORTANT\n"
    );
    assert_no_partial_files(dir.path());
}

/// Arguments that mean nothing, or that a command would follow wrongly, are refused naming
/// what is wrong (probe of 2026-12-06): `--max-commits 0` (was: taken as 1 and reported as
/// "over the maximum of 1"), an export into a missing folder (was: named its temporary
/// file), a SQL table name with a dot, `--partitions` without a cluster (was: ignored).
#[test]
fn refused_arguments_name_what_is_wrong() {
    let table = primitives();
    let refused = |args: &[&str], expected: &str| {
        let out = dar(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("dar-partial"), "{args:?}: {stderr}");
    };
    refused(&["info", &table, "--max-commits", "0"], "at least 1");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let missing = dir.path().join("no").join("such").join("x.csv");
    refused(
        &["export", &table, "--out", &missing.to_string_lossy()],
        "does not exist",
    );
    #[cfg(feature = "datafusion")]
    refused(
        &["sql", "--table", &format!("t.x={table}"), "select 1"],
        "letters, digits and _",
    );
    #[cfg(feature = "distributed")]
    refused(
        &[
            "sql",
            "--partitions",
            "3",
            "--table",
            &format!("t={table}"),
            "select 1",
        ],
        "--partitions applies to a cluster",
    );
}

/// `dar schema` names each column's Delta type beside its Arrow type, as its help says.
#[test]
fn schema_shows_delta_and_arrow_types() {
    let out = dar_ok(&[
        "schema",
        &common::table_dir("dat__basic_partitioned").to_string_lossy(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("delta type") && text.contains("arrow type"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("number"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("long") && row.contains("Int64"), "{row}");
}

/// A write that fails (a full disk) is an `io` error on the output in every format (was:
/// `arrow` for CSV, IPC and JSON, "cannot decode parquet file" for Parquet).
#[test]
fn write_failures_are_io_errors_on_the_output() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let table = primitives();
    for format in ["csv", "ipc", "json", "parquet"] {
        let out = dar(&["export", &table, "--out", "/dev/full", "--format", format]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}: {stderr}");
        assert!(
            stderr.contains("[io]") && stderr.contains("No space left"),
            "{format}: {stderr}"
        );
    }
}

/// `head` is the default command: `dar TABLE -n 1` and `dar -n 1 TABLE` print what
/// `dar head TABLE -n 1` prints; a misspelt command is still an error naming the right one.
#[test]
fn head_is_the_default_command() {
    let table = primitives();
    let head = dar_ok(&["head", &table, "-n", "1"]).stdout;
    assert_eq!(dar_ok(&[&table, "-n", "1"]).stdout, head);
    assert_eq!(dar_ok(&["-n", "1", &table]).stdout, head);
    // `--version` with more after it is head's option, not the tool's version.
    let at_zero = dar_ok(&["--version", "0", &table, "-n", "1"]).stdout;
    assert_eq!(
        at_zero,
        dar_ok(&["head", &table, "--version", "0", "-n", "1"]).stdout
    );
    let out = dar(&["inof", &table]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'info'"));
}

/// The format comes from `--format`, else from the extension in any case; an extension
/// that names no format is refused (nothing written) rather than given Parquet bytes; with
/// `--json` the closing summary is one JSON object.
#[test]
fn export_formats_by_extension_and_a_json_summary() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = primitives();
    let upper = dir.path().join("OUT.CSV");
    let out = dar_ok(&[
        "export",
        &table,
        "--out",
        &upper.to_string_lossy(),
        "--json",
    ]);
    let text = std::fs::read_to_string(&upper).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text.lines().count(), 12, "a CSV header and 11 rows: {text}");
    let summary: serde_json::Value = serde_json::from_slice(out.stderr.trim_ascii())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(summary["rows"], 11);
    assert_eq!(summary["format"], "csv");
    for name in ["out.tsv", "out.csv.gz"] {
        let path = dir.path().join(name);
        let out = dar(&["export", &table, "--out", &path.to_string_lossy()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("[invalid_argument]") && stderr.contains("--format"),
            "{stderr}"
        );
        assert!(!path.exists(), "{name} was written");
        // Told the format, the same name is fine.
        dar_ok(&[
            "export",
            &table,
            "--out",
            &path.to_string_lossy(),
            "--format",
            "csv",
        ]);
    }
}

/// An export never changes the local table it reads: not over a data file, a commit or a
/// link to one, nor a new file in its log (which could become a commit). Each is refused and
/// the table reads as before; a new file beside the data files is not the table's and is
/// written.
#[cfg(unix)]
#[test]
fn export_refuses_to_write_inside_the_table_it_reads() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = dir.path().join("t");
    copy_dir(&common::table_dir("golden__data-reader-primitives"), &table);
    let rows_as_json = || {
        dar_ok(&[
            "export",
            &table.to_string_lossy(),
            "--out",
            "-",
            "--format",
            "json",
        ])
    };
    let before = rows_as_json();
    let data = std::fs::read_dir(&table)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "parquet"))
        .unwrap_or_else(|| panic!("no data file"));
    let commit = table.join("_delta_log/00000000000000000000.json");
    let link = dir.path().join("link.parquet");
    std::os::unix::fs::symlink(&data, &link).unwrap_or_else(|e| panic!("{e}"));
    let bytes = |p: &std::path::Path| std::fs::read(p).unwrap_or_else(|e| panic!("{e}"));
    let (data_bytes, commit_bytes) = (bytes(&data), bytes(&commit));
    let new_commit = table.join("_delta_log/00000000000000000001.json");
    for target in [data.clone(), commit.clone(), link, new_commit.clone()] {
        let out = dar(&[
            "export",
            &table.to_string_lossy(),
            "--out",
            &target.to_string_lossy(),
            "--format",
            "parquet",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", target.display());
        assert!(stderr.contains("would change the table"), "{stderr}");
    }
    assert_eq!(bytes(&data), data_bytes);
    assert_eq!(bytes(&commit), commit_bytes);
    assert!(!new_commit.exists());
    let beside = table.join("export.csv");
    dar_ok(&[
        "export",
        &table.to_string_lossy(),
        "--out",
        &beside.to_string_lossy(),
    ]);
    let after = rows_as_json();
    // The same rows (their order follows the partitions' timing).
    let sorted = |o: &Output| {
        let mut lines: Vec<String> = stdout(o).lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&after), sorted(&before));
}

/// `dar head --json` prints the rows as JSON lines and nothing else; a grid of no rows still
/// names the columns.
#[test]
fn head_json_rows_and_an_empty_grid_with_its_header() {
    let table = primitives();
    let out = dar_ok(&["head", &table, "--json", "-n", "3"]);
    let rows: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(serde_json::Value::is_object));
    let out = dar_ok(&["head", &table, "-n", "0"]);
    let text = stdout(&out);
    for column in ["as_int", "as_string", "as_binary"] {
        assert!(text.contains(column), "{column} missing from {text}");
    }
    assert!(text.contains("0 rows shown"), "{text}");
}

/// A closed standard error (`2>&1 | true`) never turns a command into a panic: an error
/// still exits 1, a success 0.
#[test]
fn a_closed_standard_error_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out_file = dir.path().join("out.csv");
    let table = primitives();
    let runs: [(&[&str], i32); 3] = [
        (&["info", "/nonexistent/table"], 1),
        (&["export", &table, "--out", &out_file.to_string_lossy()], 0),
        (&["head", &table], 0),
    ];
    for (args, code) in runs {
        let (reader, writer) = std::io::pipe().unwrap_or_else(|e| panic!("{e}"));
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(writer)
            .output()
            .unwrap_or_else(|e| panic!("cannot run dar: {e}"));
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
    assert!(out_file.is_file());
}

#[cfg(unix)]
#[test]
fn export_replaces_a_regular_file_only_on_success() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let target = dir.path().join("out.csv");
    std::fs::write(&target, "precious\n").unwrap_or_else(|e| panic!("{e}"));
    let target_text = target.to_string_lossy().into_owned();

    // A table whose data file is corrupt: the export fails and the target is untouched.
    let broken = dir.path().join("broken");
    copy_dir(
        &common::table_dir("golden__data-reader-primitives"),
        &broken,
    );
    let data = std::fs::read_dir(&broken)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "parquet"))
        .unwrap_or_else(|| panic!("a data file"));
    let len = std::fs::metadata(&data).map(|m| m.len()).unwrap_or(0);
    std::fs::write(&data, vec![7u8; len as usize]).unwrap_or_else(|e| panic!("{e}"));
    let out = dar(&["export", &broken.to_string_lossy(), "--out", &target_text]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("precious\n")
    );
    assert_no_partial_files(dir.path());

    // A planted link where a temporary file could go is neither followed nor overwritten.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&victim, dir.path().join(".out.csv.dar-partial"))
        .unwrap_or_else(|e| panic!("{e}"));
    // Through a link to the target: the target is replaced, the link stays a link.
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap_or_else(|e| panic!("{e}"));
    dar_ok(&["export", &primitives(), "--out", &link.to_string_lossy()]);
    assert_eq!(
        std::fs::read_to_string(&target)
            .map(|t| t.lines().count())
            .ok(),
        Some(12)
    );
    let link_meta = std::fs::symlink_metadata(&link).unwrap_or_else(|e| panic!("{e}"));
    assert!(link_meta.file_type().is_symlink());
    assert_eq!(
        std::fs::read_to_string(&victim).ok().as_deref(),
        Some("keep")
    );
    std::fs::remove_file(dir.path().join(".out.csv.dar-partial")).unwrap_or_else(|e| panic!("{e}"));

    // Zero rows still give the CSV header.
    dar_ok(&[
        "export",
        &primitives(),
        "--out",
        &target_text,
        "--filter",
        "as_int is null and as_int is not null",
    ]);
    let text = std::fs::read_to_string(&target).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("as_int,"), "{text}");
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn errors_are_one_line_with_a_code_and_exit_1() {
    // A file named as the table (was: an I/O error, "not a directory").
    let commit = common::table_dir("dat__multi_partitioned")
        .join("_delta_log")
        .join("00000000000000000000.json");
    let commit = commit.to_string_lossy().into_owned();
    for (args, code) in [
        (vec!["info", "/no/such/table"], "[not_a_table]"),
        (vec!["head", commit.as_str()], "[not_a_table]"),
        (vec!["files", commit.as_str()], "[not_a_table]"),
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

/// A table whose partition value, data value and file path carry terminal escapes (an OSC
/// title change, a screen clear, a bidi override), in a fresh directory.
fn hostile_table(missing_file: bool) -> tempfile::TempDir {
    use std::sync::Arc;

    use arrow_array::{RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use delta_arrow_reader::fixture::TableWriter;
    use serde_json::json;

    let evil = "x\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}y";
    let schema = json!({"type": "struct", "fields": [
        {"name": "s", "type": "string", "nullable": true, "metadata": {}},
        {"name": "p", "type": "string", "nullable": true, "metadata": {}}]});
    let mut w = TableWriter::new();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)])),
        vec![Arc::new(StringArray::from(vec![Some(evil)]))],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // (The file's own path stays printable: object stores refuse control characters.)
    let path = "p=evil/part-0.parquet";
    let mut add = w
        .write_data_file(path, &batch, json!({"p": evil}), None)
        .unwrap_or_else(|e| panic!("{e}"));
    if missing_file {
        add["add"]["path"] = json!(format!("gone-{evil}.parquet"));
    }
    let mut actions = TableWriter::create_actions(
        &schema,
        &["p"],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    actions.push(add);
    w.commit("WRITE", actions);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    w.write_to_dir(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    dir
}

#[test]
fn table_strings_reach_the_terminal_escaped() {
    let raw = |b: &[u8]| {
        b.iter().any(|&c| c == 0x1b || c == 0x07)
            || b.windows(3).any(|w| w == "\u{202e}".as_bytes())
    };
    let dir = hostile_table(false);
    let table = dir.path().to_string_lossy().into_owned();
    for args in [
        vec!["head", &table],
        vec!["files", &table],
        vec!["info", &table],
        vec!["schema", &table],
    ] {
        let out = dar(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !raw(&out.stdout) && !raw(&out.stderr),
            "{args:?}: {}",
            stdout(&out)
        );
    }
    let head = stdout(&dar(&["head", &table]));
    assert!(head.contains("\\u{1b}]0;pwned\\u{7}"), "{head}");
    // An error naming a file of the table.
    let dir = hostile_table(true);
    let out = dar(&["head", &dir.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!raw(&out.stderr) && err.contains("gone-x\\u{1b}"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// `dar sql` prints CSV and JSON lines as the rows come (every row, a header even for none)
/// and a grid of at most 10,000 rows that counts the rest; `dar head -n` past that stops at
/// 10,000 in a grid and says so.
#[cfg(feature = "datafusion")]
#[test]
fn large_results_stream_and_grids_are_bounded() {
    let table = format!("t={}", primitives());
    let query = "select value from generate_series(1, 25000)";
    let lines = |extra: &[&str]| {
        let mut args = vec!["sql", "--table", &table];
        args.extend_from_slice(extra);
        let out = dar_ok(&args);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let csv = lines(&["--csv", query]);
    assert_eq!(csv.lines().count(), 25_001);
    assert_eq!(csv.lines().nth(1), Some("1"));
    assert_eq!(lines(&["--json", query]).lines().count(), 25_000);
    let grid = lines(&[query]);
    assert!(
        grid.trim_end()
            .ends_with("25000 rows, the first 10000 shown (--csv or --json print them all)"),
        "{grid}"
    );
    assert_eq!(
        lines(&["--csv", "select value from generate_series(1, 0)"]).trim(),
        "value"
    );
    let head = dar_ok(&["head", &primitives(), "-n", "20000"]);
    assert!(!String::from_utf8_lossy(&head.stdout).contains("at most 10000"));
}

#[cfg(feature = "datafusion")]
#[test]
fn sql_over_two_named_tables() {
    let letters = common::table_dir("dat__basic_partitioned");
    let letters = format!("l={}", letters.to_string_lossy());
    let dv = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let dv = format!("d={}", dv.to_string_lossy());
    let out = dar_ok(&[
        "sql",
        "SELECT l.letter, count(*) AS n FROM l JOIN d ON d.part = l.number \
         GROUP BY l.letter ORDER BY l.letter",
        "--table",
        &letters,
        "--table",
        &dv,
    ]);
    let text = stdout(&out);
    assert!(text.contains("| letter |"), "{text}");
    assert!(text.contains(" row"), "{text}");

    let out = dar_ok(&[
        "sql",
        "SELECT count(*) AS n FROM d WHERE part = 1",
        "--table",
        &dv,
        "--json",
    ]);
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

#[cfg(feature = "datafusion")]
#[test]
fn sql_refuses_expressions_nested_past_the_limit_instead_of_overflowing_the_stack() {
    let dv = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let dv = format!("d={}", dv.to_string_lossy());
    let chain = |terms: usize, op: &str| -> String {
        let mut q = String::from("SELECT count(*) AS n FROM d WHERE part >= -1");
        for i in 1..terms {
            q.push_str(&format!(" {op} part >= -{i}"));
        }
        q
    };
    // 5,500 ANDs aborted the process on a stack overflow inside DataFusion's optimizer.
    for (terms, op) in [(5500, "AND"), (3000, "OR")] {
        let out = dar(&["sql", &chain(terms, op), "--table", &dv, "--json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{terms} {op}: {err}");
        assert!(
            err.starts_with("dar: error [limit_exceeded]") && err.contains("nesting depth"),
            "{terms} {op}: {err}"
        );
    }
    // Under the limit the query runs: every row has part >= -1.
    let out = dar_ok(&["sql", &chain(1500, "AND"), "--table", &dv, "--json"]);
    let all = dar_ok(&[
        "sql",
        "SELECT count(*) AS n FROM d",
        "--table",
        &dv,
        "--json",
    ]);
    assert_eq!(stdout(&out), stdout(&all));
}

#[cfg(feature = "datafusion")]
#[test]
fn sql_errors_keep_their_code_under_any_operator() {
    // The table's log names data files that are not in the corpus: a read fails `not_found`
    // whether the scan feeds the output directly or a repartition under an aggregate (which
    // shares the error between its outputs; it was `invalid_argument` there).
    let table = common::table_dir("deltars__checkpoints");
    let table = format!("t={}", table.to_string_lossy());
    for query in [
        "SELECT * FROM t",
        "SELECT date, count(*) FROM t GROUP BY date",
        "SELECT count(*) FROM t a JOIN t b ON a.date = b.date",
    ] {
        let out = dar(&["sql", query, "--table", &table, "--csv"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("dar: error [not_found]"), "{query}: {err}");
    }
}

#[cfg(feature = "datafusion")]
#[test]
fn sql_is_read_only() {
    let dv = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let dv = format!("d={}", dv.to_string_lossy());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let written = dir.path().join("out.csv");
    let statements = [
        format!("COPY (SELECT * FROM d) TO '{}'", written.display()),
        format!(
            "COPY d TO '{}' STORED AS CSV",
            dir.path().join("out2.csv").display()
        ),
        format!(
            "CREATE EXTERNAL TABLE x STORED AS CSV LOCATION '{}'",
            dir.path().display()
        ),
        "CREATE TABLE t AS SELECT * FROM d".to_string(),
        "INSERT INTO d VALUES (1, 2, 3)".to_string(),
        "DROP TABLE d".to_string(),
        "SET datafusion.execution.batch_size = 1".to_string(),
    ];
    for sql in &statements {
        let out = dar(&["sql", sql, "--table", &dv]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{sql}: {err}");
        assert!(
            err.starts_with("dar: error [invalid_argument]"),
            "{sql}: {err}"
        );
        assert!(err.to_lowercase().contains("not"), "{sql}: {err}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "files written: {left:?}");
    // Queries still run.
    dar_ok(&[
        "sql",
        "WITH x AS (SELECT part FROM d) SELECT count(*) AS n FROM x",
        "--table",
        &dv,
        "--csv",
    ]);
}

#[test]
fn stats_come_from_the_log_and_bound_the_data() {
    let dir = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let table = dir.to_string_lossy();
    let out = dar_ok(&["stats", &table, "--json"]);
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    let info: serde_json::Value = serde_json::from_str(&stdout(&dar(&["info", &table, "--json"])))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json["files"], info["numFiles"], "{json}");
    assert_eq!(json["countsExact"], false, "deletion vectors: {json}");
    let col1 = json["columns"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "col1"))
        .unwrap_or_else(|| panic!("no col1: {json}"));
    let (min, max) = (
        col1["min"].as_str().and_then(|v| v.parse::<i64>().ok()),
        col1["max"].as_str().and_then(|v| v.parse::<i64>().ok()),
    );
    let (Some(min), Some(max)) = (min, max) else {
        panic!("bounds of col1: {col1}");
    };
    // Every value read lies within the bounds the log gives.
    let csv = stdout(&dar(&[
        "export",
        &table,
        "--columns",
        "col1",
        "--format",
        "csv",
        "--out",
        "-",
    ]));
    let values: Vec<i64> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert!(!values.is_empty(), "{csv}");
    assert!(
        values.iter().all(|v| (min..=max).contains(v)),
        "{min}..{max}: {values:?}"
    );
    // The row count subtracts the deleted rows: it is the rows a scan returns.
    assert_eq!(
        json["numRecords"].as_u64(),
        Some(csv.lines().skip(1).count() as u64),
        "{json}"
    );
    let text = stdout(&dar(&["stats", &table]));
    let rows = format!("{} rows;", csv.lines().skip(1).count());
    assert!(text.contains(&rows), "{rows} in {text}");
    assert!(
        text.contains("| col1 ") && text.contains("from the log"),
        "{text}"
    );
}

#[test]
fn stats_show_wide_decimals_and_say_timestamps_are_to_the_millisecond() {
    // decimal(20,5) bounds of 20 digits, exactly as the log writes them.
    let decimals = common::table_dir("golden__parquet-decimal-type");
    let text = stdout(&dar_ok(&["stats", &decimals.to_string_lossy()]));
    assert!(
        text.contains("-999929997299970.99990") && text.contains("999999999399991.99997"),
        "{text}"
    );
    assert!(!text.contains("999 µs"), "no timestamp column: {text}");
    // A timestamp maximum cut to the millisecond (the data holds 00:00:04.000500 at version 1).
    let cut = common::table_dir("kernel__timestamp-truncation-stats");
    let text = stdout(&dar_ok(&[
        "stats",
        &cut.to_string_lossy(),
        "--version",
        "1",
    ]));
    assert!(
        text.contains("'1970-01-01 00:00:04Z'") && text.contains("up to 999 µs past it"),
        "{text}"
    );
}

#[test]
fn a_storage_option_without_equals_is_refused_without_echoing_it() {
    let table = common::table_dir("dat__basic_append");
    let table = table.to_string_lossy();
    for (option, key) in [
        (
            "aws_secret_access_key:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            Some("aws_secret_access_key"),
        ),
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None),
        (
            "aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            Some("aws_secret_access_key"),
        ),
    ] {
        let out = dar(&["info", &table, "-o", "region=eu-west-1", "-o", option]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            !err.contains("wJalrXUtnFEMI"),
            "the secret was echoed: {err}"
        );
        assert!(err.contains("storage option 2"), "{err}");
        if let Some(key) = key {
            assert!(err.contains(key), "{err}");
        }
    }
}

/// A table served with 1 s added to every request, so that an export from it is still
/// running when the test acts on it.
#[cfg(all(unix, feature = "serve"))]
fn slow_primitives_server() -> delta_arrow_reader::serve::StaticServer {
    use delta_arrow_reader::serve::{ServeConfig, StaticServer};
    StaticServer::start_background(
        ServeConfig::new(common::table_dir("golden__data-reader-primitives"))
            .with_latency(std::time::Duration::from_millis(1000)),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// `dar export URL --out TARGET` started in the background (its standard error `stderr`),
/// once its temporary file (`.NAME.dar-partial` beside `target`) exists; that file's path.
#[cfg(all(unix, feature = "serve"))]
fn export_under_way(
    url: &str,
    target: &std::path::Path,
    stderr: std::process::Stdio,
) -> (std::process::Child, std::path::PathBuf) {
    let child = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(["export", url, "--out", &target.to_string_lossy()])
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run dar: {e}"));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let partial = target.with_file_name(format!(".{name}.dar-partial"));
    for _ in 0..600 {
        if partial.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(
        partial.exists(),
        "the export writes its temporary file first"
    );
    (child, partial)
}

#[cfg(all(unix, feature = "serve"))]
#[test]
fn an_interrupted_export_leaves_nothing_behind_and_dies_of_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    // A slow server: every request waits 1 s, so the export is still running when
    // interrupted.
    let server = slow_primitives_server();
    for (signal, number) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let target = dir.path().join("out.csv");
        let (mut child, _) = export_under_way(&server.url(), &target, std::process::Stdio::piped());
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill: {e}"));
        assert!(killed.success());
        let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
        // Ended by the signal itself, as a shell expects (it prints 128 + the number).
        assert_eq!(status.signal(), Some(number), "SIG{signal}: {status:?}");
        assert!(
            !target.exists(),
            "nothing was written under the target's name (SIG{signal})"
        );
        assert_no_partial_files(dir.path());
    }
}

#[cfg(all(unix, feature = "serve"))]
#[test]
fn a_temporary_file_left_by_a_killed_export_is_removed_by_the_next_one() {
    let server = slow_primitives_server();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let target = dir.path().join("out.csv");
    let target_text = target.to_string_lossy().into_owned();
    std::fs::write(&target, "precious\n").unwrap_or_else(|e| panic!("{e}"));
    let (mut child, partial) =
        export_under_way(&server.url(), &target, std::process::Stdio::null());
    // While that export runs, another to the same target leaves its file alone (it is
    // locked) and writes beside it.
    dar_ok(&["export", &primitives(), "--out", &target_text]);
    assert!(
        partial.exists(),
        "a running export's temporary file is kept"
    );
    // SIGKILL: no handler runs, the temporary file stays.
    child.kill().unwrap_or_else(|e| panic!("{e}"));
    child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(partial.exists(), "SIGKILL leaves the temporary file");
    std::fs::write(&target, "precious\n").unwrap_or_else(|e| panic!("{e}"));
    // A failed export leaves the target as it was.
    let missing = dir.path().join("no-such-table");
    let failed = dar(&["export", &missing.to_string_lossy(), "--out", &target_text]);
    assert!(!failed.status.success());
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("precious\n")
    );
    // The next export removes it, writes the target, and leaves nothing behind.
    dar_ok(&["export", &primitives(), "--out", &target_text]);
    assert_eq!(
        std::fs::read_to_string(&target)
            .map(|t| t.lines().count())
            .ok(),
        Some(12)
    );
    assert_no_partial_files(dir.path());
    // A file of that name locked by another process (an export still writing) is kept.
    let held = std::fs::File::create(&partial).unwrap_or_else(|e| panic!("{e}"));
    let mut locker = Command::new("flock")
        .args(["-x", &partial.to_string_lossy(), "sleep", "30"])
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flock: {e}"));
    drop(held);
    for _ in 0..200 {
        if std::fs::File::open(&partial).is_ok_and(|f| f.try_lock().is_err()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    dar_ok(&["export", &primitives(), "--out", &target_text]);
    assert!(partial.exists(), "a locked temporary file is kept");
    let _ = locker.kill();
    let _ = locker.wait();
}

/// A table whose one data file is a snappy-compressed file whose page, once decompressed,
/// holds definition levels shorter than a bit-packed run claims (a fuzzing finding: arrow-rs
/// panics on it; the page checks cannot see inside compressed pages).
fn corrupt_contents_table() -> tempfile::TempDir {
    use delta_arrow_reader::fixture::TableWriter;
    use serde_json::json;

    let finding = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/parquet_scan/crash-622868c9a0d469c166b601165fd53fd34e054bb8");
    let data = std::fs::read(&finding).unwrap_or_else(|e| panic!("{}: {e}", finding.display()));
    // The fuzzed table's schema (`fuzzing::FUZZ_TABLE_SCHEMA`).
    let int = |name: &str, kind: &str| json!({"name": name, "type": kind, "nullable": true, "metadata": {}});
    let tags = json!({"type": "array", "elementType": "string", "containsNull": true});
    let point = json!({"type": "struct", "fields": [int("x", "integer"), int("y", "integer")]});
    let schema = json!({"type": "struct", "fields": [
        int("id", "long"), int("name", "string"), int("price", "double"), int("day", "date"),
        {"name": "tags", "type": tags, "nullable": true, "metadata": {}},
        {"name": "point", "type": point, "nullable": true, "metadata": {}}]});
    let mut w = TableWriter::new();
    w.store().put("part-0.parquet", data.clone());
    let add = w.add_action("part-0.parquet", data.len() as u64, 60, json!({}), None);
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    actions.push(add);
    w.commit("WRITE", actions);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    w.write_to_dir(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    dir
}

#[test]
fn a_decoder_panic_on_corrupt_page_contents_is_the_files_error() {
    let dir = corrupt_contents_table();
    let table = dir.path().to_string_lossy().into_owned();
    let out_file = dir.path().join("out.csv");
    let out_path = out_file.to_string_lossy().into_owned();
    for args in [
        vec!["head", table.as_str()],
        vec![
            "export",
            table.as_str(),
            "--format",
            "csv",
            "--out",
            out_path.as_str(),
        ],
    ] {
        let out = dar(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("[parquet]") && err.contains("part-0.parquet"),
            "{args:?}: {err}"
        );
        // (A head stops before the panicking page, at another error of the same file.)
        if args[0] == "export" {
            assert!(err.contains("failed on the file's contents"), "{err}");
        }
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!out_file.exists(), "a failed export leaves no file");
}

#[test]
fn max_commits_refuses_a_longer_log_with_a_typed_error() {
    // The demo table: versions 0 to 3, no checkpoint.
    let out = dar(&["info", "--max-commits", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("dar: error [limit_exceeded]"), "{err}");
    assert!(err.contains("commits replayed in one load"), "{err}");
    assert!(err.contains('4') && err.contains('3'), "{err}");
    dar_ok(&["info", "--max-commits", "4", "--json"]);
    // An older version needs fewer commits.
    dar_ok(&["info", "--max-commits", "3", "--version", "2"]);
}

#[test]
fn sql_memory_limit_bounds_the_query_and_says_so() {
    let dir = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let table = format!("t={}", dir.to_string_lossy());
    // Within a generous limit the rows are those of an unlimited query.
    let query = "SELECT col1 FROM t ORDER BY col1";
    let unlimited = stdout(&dar_ok(&["sql", query, "--table", &table, "--csv"]));
    let limited = stdout(&dar_ok(&[
        "sql",
        query,
        "--table",
        &table,
        "--csv",
        "--memory-limit",
        "512M",
    ]));
    assert_eq!(limited, unlimited);
    // A sort that cannot fit in 1 KiB fails as a limit, not as a bad argument.
    let out = dar(&["sql", query, "--table", &table, "--memory-limit", "1K"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[limit_exceeded]") && err.contains("--memory-limit"),
        "{err}"
    );
    // A limit that is not a byte count is refused by the argument parser.
    for bad in ["12X", "0", "-1", "99999999999T"] {
        let out = dar(&["sql", "SELECT 1", "--table", &table, "--memory-limit", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}

/// `dar files` names partition values by their logical column, as the npm package's
/// `files()` does, also under column mapping (where the log keys them by physical name).
#[test]
fn files_show_partition_values_by_logical_name() {
    let table = common::table_dir("deltars__table_with_column_mapping")
        .to_string_lossy()
        .into_owned();
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&dar_ok(&["files", &table, "--json"])))
            .unwrap_or_else(|e| panic!("{e}"));
    let files = json.as_array().cloned().unwrap_or_default();
    assert!(!files.is_empty());
    for file in &files {
        let values = file["partitionValues"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let keys: Vec<&String> = values.keys().collect();
        assert_eq!(keys, ["Company Very Short"], "{file}");
    }
    let grid = stdout(&dar_ok(&["files", &table]));
    assert!(grid.contains("Company Very Short=BME"), "{grid}");
    assert!(!grid.contains("col-"), "{grid}");
}

/// The README's `--timestamp` example works on the demo table read locally: its commit files
/// carry the times its commits record, so a local read (file times) and a read over HTTP
/// (`commitInfo.timestamp`) agree.
#[test]
fn the_demo_table_answers_the_readme_timestamp_example() {
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(["info", "--timestamp", "2024-01-01T00:02:00Z"])
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run dar: {e}"));
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("version:           2"), "{text}");
    assert!(text.contains("2024-01-01T00:02:00"), "{text}");
}

/// `dar view` serves local folders: a `file://` URL is one, an `https://` table is refused
/// with what to do instead (before: "not found: https://…").
#[test]
fn view_refuses_remote_tables_with_what_to_do() {
    let out = dar(&["view", "https://example.com/tables/t/", "--no-browser"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("dar: error [invalid_argument]"), "{err}");
    assert!(
        err.contains("dar head https://example.com/tables/t/"),
        "{err}"
    );
    let out = dar(&["view", "file:///no/such/folder/anywhere", "--no-browser"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/no/such/folder/anywhere"), "{err}");
    assert!(
        !err.contains("file://"),
        "the URL is taken as its path: {err}"
    );
}

/// A filter may start with `-` (a negative number first): it is the filter, not a flag.
#[test]
fn a_filter_may_start_with_a_minus() {
    let table = common::table_dir("dat__basic_append");
    let table = table.to_string_lossy();
    let out = dar_ok(&["head", &table, "--filter", "-5 < number", "--json"]);
    assert_eq!(stdout(&out).lines().count(), 5, "{}", stdout(&out));
    let out = dar_ok(&[
        "export",
        &table,
        "--out",
        "-",
        "--format",
        "csv",
        "--filter",
        "-1 >= number",
    ]);
    assert_eq!(
        stdout(&out).lines().count(),
        1,
        "the header alone: {}",
        stdout(&out)
    );
}

/// `dar sql QUERY --json` over `tables` (`NAME=TABLE` each, NAME may carry `@VERSION`): its
/// output, trimmed; the command must succeed.
fn sql_json(query: &str, tables: &[(&str, &std::path::Path)]) -> String {
    let specs: Vec<String> = tables
        .iter()
        .map(|(name, path)| format!("{name}={}", path.to_string_lossy()))
        .collect();
    let mut args = vec!["sql", query, "--json"];
    for spec in &specs {
        args.extend(["--table", spec.as_str()]);
    }
    stdout(&dar_ok(&args)).trim().to_string()
}

/// A decimal literal is the decimal it spells (DataFusion's default read it as a double, and
/// `decimal_col = 22222.22222` found no row); a column two joined tables share keeps both
/// values, each under a name of its own (`--json` wrote the key twice).
#[test]
fn sql_decimal_literals_are_exact_and_join_columns_keep_their_names() {
    let decimals = common::table_dir("golden__basic-decimal-table");
    let n = sql_json(
        "SELECT count(*) AS n FROM t WHERE col2 = 22222.22222",
        &[("t", &decimals)],
    );
    assert_eq!(n, r#"{"n":1}"#);
    let letters = common::table_dir("dat__basic_append");
    let joined = sql_json(
        "SELECT a.letter, b.letter FROM a JOIN b ON a.number + 1 = b.number \
         ORDER BY a.number LIMIT 1",
        &[("a", &letters), ("b", &letters)],
    );
    assert_eq!(joined, r#"{"a.letter":"a","b.letter":"b"}"#);
}

/// `--table NAME@N=TABLE` opens version N: one query compares two versions of a table.
#[test]
fn sql_tables_open_at_a_version() {
    let path = common::table_dir("dat__basic_append");
    let counts = sql_json(
        "SELECT (SELECT count(*) FROM old) AS o, (SELECT count(*) FROM new) AS n",
        &[("old@0", &path), ("new", &path)],
    );
    assert_eq!(counts, r#"{"o":3,"n":5}"#);
    let missing = format!("old@99={}", path.to_string_lossy());
    let out = dar(&["sql", "SELECT 1", "--table", &missing]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("version_not_found"));
}
