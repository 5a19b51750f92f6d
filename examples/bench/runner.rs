//! The parent side: runs each cell in a child process of its own (this program again with
//! `--cell READER SCENARIO`, or the Python script for delta-rs), with a time limit, and keeps
//! every run's result. A child's peak RSS is its own `VmHWM`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cell::{CellResult, Outcome, RESULT_PREFIX};
use crate::scenario::{Kind, Scenario};

/// The readers, in column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// Our streaming API.
    Ours,
    /// Our DataFusion adapter.
    DataFusion,
    /// `delta_kernel`'s default engine.
    Kernel,
    /// delta-rs from PyPI (`deltalake`).
    DeltaRs,
    /// arrow-rs on one thread.
    LimitOne,
    /// arrow-rs on one thread per core.
    LimitAll,
}

/// Every reader.
pub const READERS: [Reader; 6] = [
    Reader::Ours,
    Reader::DataFusion,
    Reader::Kernel,
    Reader::DeltaRs,
    Reader::LimitOne,
    Reader::LimitAll,
];

impl Reader {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Reader::Ours => "ours",
            Reader::DataFusion => "datafusion",
            Reader::Kernel => "kernel",
            Reader::DeltaRs => "delta-rs",
            Reader::LimitOne => "arrow-rs-1",
            Reader::LimitAll => "arrow-rs-all",
        }
    }

    /// The reader named `name`.
    pub fn parse(name: &str) -> Option<Reader> {
        READERS.into_iter().find(|r| r.name() == name)
    }

    /// Why this reader has no cell for `s`, if it has none.
    pub fn not_applicable(self, s: &Scenario) -> Option<&'static str> {
        match self {
            Reader::DataFusion if s.kind == Kind::LogLoad => {
                Some("registers a table loaded by our log replay: the same as ours")
            }
            Reader::LimitOne | Reader::LimitAll if s.kind == Kind::LogLoad => {
                Some("the limit decodes data files; there is no log reader to compare")
            }
            Reader::LimitOne | Reader::LimitAll if s.http => {
                Some("the limit reads local files with arrow-rs's synchronous reader")
            }
            _ => None,
        }
    }
}

/// How to run children.
#[derive(Debug, Clone)]
pub struct Runner {
    /// Arguments every `--cell` child gets (size, cache, corpus, server URL).
    pub child_args: Vec<String>,
    /// The Python of the delta-rs virtual environment, and the script.
    pub python: Option<(PathBuf, PathBuf)>,
    /// A cell that runs longer is stopped and reported failed.
    pub timeout: Duration,
}

fn parse_output(stdout: &str, stderr: &str, status: &str) -> Outcome {
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX));
    match line.map(serde_json::from_str::<Outcome>) {
        Some(Ok(outcome)) => outcome,
        Some(Err(e)) => Outcome::Failed(format!("unreadable result: {e}")),
        None => {
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            Outcome::Failed(format!("{status}: {last}"))
        }
    }
}

impl Runner {
    /// Runs one cell: `location` is the table's path or URL for the reader.
    pub fn run(&self, reader: Reader, s: &Scenario, location: &str) -> Outcome {
        let mut cmd = match (reader, &self.python) {
            (Reader::DeltaRs, Some((python, script))) => {
                let mut c = Command::new(python);
                c.arg(script).arg("--table").arg(location);
                match s.kind {
                    Kind::LogLoad => c.args(["--mode", "log"]),
                    Kind::Scan => c.args(["--mode", "scan", "--sql", &s.sql()]),
                };
                c
            }
            (Reader::DeltaRs, None) => {
                return Outcome::Failed("no Python environment (run through scripts/bench)".into())
            }
            _ => {
                let exe = match std::env::current_exe() {
                    Ok(exe) => exe,
                    Err(e) => return Outcome::Failed(e.to_string()),
                };
                let mut c = Command::new(exe);
                c.args(["--cell", reader.name(), s.name, "--location", location]);
                c.args(&self.child_args);
                c
            }
        };
        self.spawn(&mut cmd)
    }

    fn spawn(&self, cmd: &mut Command) -> Outcome {
        let dir = std::env::temp_dir();
        let tag = format!("dar-bench-{}-{}", std::process::id(), next_id());
        let (out_path, err_path) = (
            dir.join(format!("{tag}.out")),
            dir.join(format!("{tag}.err")),
        );
        let files = std::fs::File::create(&out_path)
            .and_then(|o| std::fs::File::create(&err_path).map(|e| (o, e)));
        let (out, err) = match files {
            Ok(f) => f,
            Err(e) => return Outcome::Failed(format!("cannot create output files: {e}")),
        };
        let mut child = match cmd
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("cannot start: {e}")),
        };
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let _ = std::fs::remove_file(&out_path);
                    let _ = std::fs::remove_file(&err_path);
                    return Outcome::Failed(format!(
                        "timed out after {} s",
                        self.timeout.as_secs()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Outcome::Failed(e.to_string()),
            }
        };
        let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_file(&err_path);
        parse_output(&stdout, &stderr, &status)
    }
}

fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The runs of one cell, summarised.
#[derive(Debug, Clone)]
pub enum Summary {
    /// Median time (and first batch), peak RSS over the runs, bytes of the median run.
    Ok {
        /// The median run (its `secs`, `ttfb_secs`, `bytes`).
        median: CellResult,
        /// The largest peak RSS of any run, in KiB.
        rss_kib: u64,
        /// Runs that returned other rows than the first run.
        unstable: bool,
    },
    /// A run failed.
    Failed(String),
    /// The reader cannot do the scenario.
    NotApplicable(String),
}

/// Summarises the outcomes of one cell's runs (the first failure wins).
pub fn summarise(runs: Vec<Outcome>) -> Summary {
    let mut ok = Vec::new();
    for run in runs {
        match run {
            Outcome::Ok(r) => ok.push(r),
            Outcome::Failed(e) => return Summary::Failed(e),
            Outcome::NotApplicable(why) => return Summary::NotApplicable(why),
        }
    }
    let rss_kib = ok.iter().map(|r| r.rss_kib).max().unwrap_or(0);
    let unstable = ok
        .windows(2)
        .any(|w| (w[0].rows, w[0].checksum) != (w[1].rows, w[1].checksum));
    ok.sort_by(|a, b| a.secs.total_cmp(&b.secs));
    let mut median = ok.get(ok.len() / 2).cloned().unwrap_or_default();
    let mut ttfbs: Vec<f64> = ok.iter().filter_map(|r| r.ttfb_secs).collect();
    ttfbs.sort_by(f64::total_cmp);
    median.ttfb_secs = ttfbs.get(ttfbs.len() / 2).copied();
    Summary::Ok {
        median,
        rss_kib,
        unstable,
    }
}
