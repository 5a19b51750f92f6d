//! The fault matrix: a corpus table (partitioned, deletion vectors, a checkpoint) read over
//! loopback HTTP from a server that misbehaves in one way at a time, natively (object_store's
//! HTTP client). Each fault has one outcome, checked: the right rows (the fault was retried
//! or worked around), or a typed error, within a bound on time; never other rows, never a
//! hang. Files that vanish or change between the log read and the data read are covered
//! too. The figures (outcome, requests, seconds per case) are printed for RELIABILITY.md.

use std::path::Path;
use std::time::{Duration, Instant};

use delta_arrow_reader::serve::{Faults, ServeConfig, SlowBody, StaticServer};
use delta_arrow_reader::{DeltaError, DeltaTableBuilder};

use crate::common;

const TABLE: &str = "golden__dv-partitioned-with-checkpoint";

/// No case may take longer: the client's own timeouts and retry bounds end every fault
/// sooner.
const CASE_BOUND: Duration = Duration::from_secs(45);

/// What a case must come to.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exactly the rows of a clean read.
    Rows,
    /// An error with this code.
    Error(&'static str),
}

struct Case {
    name: &'static str,
    faults: Faults,
    /// Storage options of the read (the client's timeouts and retries).
    options: &'static [(&'static str, &'static str)],
    expect: Expect,
}

/// Retries bounded so that a fault that never clears fails in seconds.
const FEW_RETRIES: &[(&str, &str)] = &[("max_retries", "2"), ("retry_timeout", "3s")];

fn on_data(faults: Faults) -> Faults {
    Faults {
        path_filter: Some(".parquet".into()),
        ..faults
    }
}

fn on_log(faults: Faults) -> Faults {
    Faults {
        path_filter: Some("_delta_log".into()),
        ..faults
    }
}

fn cases() -> Vec<Case> {
    let always = u64::MAX;
    vec![
        Case {
            name: "503 for the first 3 requests",
            faults: Faults {
                fail_first: 3,
                ..Faults::default()
            },
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "429 bursts: 2 of every 7 requests",
            faults: Faults {
                fail_first: 2,
                fail_status: Some(429),
                repeat_every: Some(7),
                ..Faults::default()
            },
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "500 for 1 of every 3 data requests",
            faults: on_data(Faults {
                fail_first: 1,
                fail_status: Some(500),
                repeat_every: Some(3),
                ..Faults::default()
            }),
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "502 on every request",
            faults: Faults {
                fail_first: always,
                fail_status: Some(502),
                ..Faults::default()
            },
            options: FEW_RETRIES,
            expect: Expect::Error("io"),
        },
        Case {
            name: "connection reset for 1 of every 4 requests",
            faults: Faults {
                reset_first: 1,
                repeat_every: Some(4),
                ..Faults::default()
            },
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "connection reset on every data request",
            faults: on_data(Faults {
                reset_first: always,
                ..Faults::default()
            }),
            options: FEW_RETRIES,
            expect: Expect::Error("io"),
        },
        Case {
            name: "slow bodies: 512 bytes every 2 ms",
            faults: Faults {
                slow_body: Some(SlowBody {
                    chunk: 512,
                    pause: Duration::from_millis(2),
                }),
                ..Faults::default()
            },
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "data bodies slower than the 1 s request timeout",
            faults: on_data(Faults {
                slow_body: Some(SlowBody {
                    chunk: 16,
                    pause: Duration::from_millis(300),
                }),
                ..Faults::default()
            }),
            options: &[
                ("timeout", "1s"),
                ("max_retries", "1"),
                ("retry_timeout", "3s"),
            ],
            expect: Expect::Error("io"),
        },
        Case {
            name: "data bodies cut after 100 bytes",
            faults: on_data(Faults {
                truncate_body: Some(100),
                ..Faults::default()
            }),
            options: FEW_RETRIES,
            expect: Expect::Error("io"),
        },
        Case {
            name: "data bodies cut after 100 bytes on 1 of every 3 requests",
            faults: on_data(Faults {
                truncate_body: Some(100),
                truncate_first: Some(1),
                repeat_every: Some(3),
                ..Faults::default()
            }),
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "log bodies cut after 50 bytes",
            faults: on_log(Faults {
                truncate_body: Some(50),
                ..Faults::default()
            }),
            options: FEW_RETRIES,
            expect: Expect::Error("io"),
        },
        Case {
            name: "200 with the whole file for every range",
            faults: Faults {
                ignore_range: true,
                ..Faults::default()
            },
            options: &[],
            expect: Expect::Rows,
        },
        Case {
            name: "deletion vector ranges answered one byte further on (Content-Range says so)",
            faults: Faults {
                shift_range: true,
                path_filter: Some("deletion_vector_".into()),
                ..Faults::default()
            },
            options: FEW_RETRIES,
            expect: Expect::Error("io"),
        },
        Case {
            name: "every missing path answered 200 with a commit (a fallback page)",
            faults: Faults {
                missing_file_fallback: Some(format!("/{TABLE}/_delta_log/{:020}.json", 0)),
                ..Faults::default()
            },
            options: &[],
            expect: Expect::Error("limit_exceeded"),
        },
    ]
}

/// What an error may show: one bounded line, no control characters.
fn check_error_text(case: &str, e: &DeltaError) {
    let text = e.to_string();
    assert!(
        text.len() < 2048,
        "{case}: an error of {} bytes",
        text.len()
    );
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{case}: control characters in {text:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_is_retried_or_a_typed_error() {
    let table = common::table_dir(TABLE);
    let local = common::rows_over(&table.to_string_lossy(), &[])
        .await
        .unwrap_or_else(|e| panic!("clean local read: {e}"));
    assert!(local.len() > 10, "the table has rows");
    let mut lines = Vec::new();
    for case in cases() {
        let config =
            ServeConfig::new(common::corpus_dir().join("tables")).with_faults(case.faults.clone());
        let server = StaticServer::start(config)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let url = server.url_for(&format!("{TABLE}/"));
        let t = Instant::now();
        let got = tokio::time::timeout(CASE_BOUND, common::rows_over(&url, case.options))
            .await
            .unwrap_or_else(|_| panic!("{}: no answer in {CASE_BOUND:?}", case.name));
        let took = t.elapsed();
        let exercised = server
            .stats()
            .entries()
            .iter()
            .filter(|e| {
                let filter = case.faults.path_filter.as_deref();
                filter.is_none_or(|f| e.path.contains(f))
                    && (e.range.is_some() || !(case.faults.shift_range || case.faults.ignore_range))
            })
            .count();
        assert!(exercised > 0, "{}: no request met the fault", case.name);
        let outcome = match (&got, case.expect) {
            (Ok(rows), Expect::Rows) => {
                assert!(
                    *rows == local,
                    "{}: other rows than a clean read",
                    case.name
                );
                format!("{} rows, as read locally", rows.len())
            }
            (Err(e), Expect::Error(code)) => {
                assert_eq!(e.code(), code, "{}: {e}", case.name);
                check_error_text(case.name, e);
                format!("{code} error")
            }
            (Ok(rows), Expect::Error(code)) => {
                panic!(
                    "{}: {} rows where a {code} error was due",
                    case.name,
                    rows.len()
                )
            }
            (Err(e), Expect::Rows) => panic!("{}: {e}", case.name),
        };
        lines.push(format!(
            "{}: {outcome}; {} requests ({exercised} met the fault), {:.2} s",
            case.name,
            server.stats().requests(),
            took.as_secs_f64()
        ));
    }
    common::print_section("fault matrix", &lines);
}

/// Copies the table to a folder of its own, to change it under a loaded snapshot.
fn copy_table(to: &Path) {
    for (rel, from) in common::files_under(&common::table_dir(TABLE), &common::table_dir(TABLE)) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap_or(to)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::copy(&from, &dest).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// How the copy is changed once its snapshot is loaded; `victim` is an active data file.
type Change = fn(dir: &Path, victim: &Path);

fn delete_victim(_: &Path, victim: &Path) {
    std::fs::remove_file(victim).unwrap_or_else(|e| panic!("{e}"));
}

/// Deletes every deletion vector file (the table's active files have some).
fn delete_deletion_vectors(dir: &Path, _: &Path) {
    let mut n = 0;
    for (rel, path) in common::files_under(dir, dir) {
        if rel.ends_with(".bin") {
            std::fs::remove_file(path).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n > 0, "the table has deletion vector files");
}

fn halve_victim(_: &Path, victim: &Path) {
    let bytes = std::fs::read(victim).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(victim, &bytes[..bytes.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
}

/// Writes another valid data file of the table, of another size, in the victim's place.
fn replace_victim(dir: &Path, victim: &Path) {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let other = common::files_under(dir, dir)
        .into_iter()
        .map(|(_, path)| path)
        .find(|p| p.extension().is_some_and(|e| e == "parquet") && size(p) != size(victim))
        .unwrap_or_else(|| panic!("a data file of another size"));
    std::fs::copy(other, victim).unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_that_vanish_or_change_after_the_log_read_are_typed_errors() {
    let changes: [(&str, Change, &[&str]); 4] = [
        ("an active data file deleted", delete_victim, &["not_found"]),
        (
            "the deletion vector files deleted",
            delete_deletion_vectors,
            &["not_found"],
        ),
        (
            "an active data file cut to half its size",
            halve_victim,
            &["io", "parquet"],
        ),
        (
            "an active data file replaced by another of the table's, of another size",
            replace_victim,
            &["io", "parquet"],
        ),
    ];
    let mut lines = Vec::new();
    for (name, change, codes) in changes {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        copy_table(dir.path());
        let server = StaticServer::start(ServeConfig::new(dir.path()))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let table = DeltaTableBuilder::new(server.url_for(""))
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("{name}: load: {e}"));
        let files = table.eager_files().unwrap_or_default();
        let active = files
            .iter()
            .find(|f| f.deletion_vector.is_none())
            .unwrap_or_else(|| panic!("an active file without a deletion vector"));
        change(dir.path(), &dir.path().join(&active.path));
        let scan = async {
            table
                .scan()
                .build()
                .await?
                .into_stream()
                .collect_batches()
                .await
        };
        let got = tokio::time::timeout(CASE_BOUND, scan)
            .await
            .unwrap_or_else(|_| panic!("{name}: no answer in {CASE_BOUND:?}"));
        match got {
            Ok(batches) => panic!(
                "{name}: {} rows instead of an error",
                batches.iter().map(|b| b.num_rows()).sum::<usize>()
            ),
            Err(e) => {
                assert!(codes.contains(&e.code()), "{name}: {e}");
                check_error_text(name, &e);
                lines.push(format!("{name}: {} error", e.code()));
            }
        }
    }
    common::print_section("files changed under a loaded snapshot", &lines);
}
