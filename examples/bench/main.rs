//! `scripts/bench`: one benchmark command. Generates (once, cached) a lineitem-like table, a
//! variant with deletion vectors and a 10,000-commit log with the project's fixture writer,
//! then runs every scenario with every reader — ours, ours through DataFusion,
//! `delta_kernel`'s default engine, delta-rs (Python `deltalake`, through
//! `scripts/bench_deltars.py`) and the arrow-rs limit on one thread and on all cores — each
//! run in a process of its own, and prints the side-by-side table (Markdown).
//!
//! ```text
//! cargo run --release --example bench --features kernel,datafusion -- [--quick]
//!     [--only SCENARIO]... [--reps N] [--python VENV_PYTHON --deltars-script PATH]
//! ```
//!
//! Layout: `lineitem` (rows), `tables` (writing and caching the tables), `scenario`, `cell`
//! (one measured run), `runner` (child processes), `ours`, `kernel`, `limit` (the readers),
//! `report`, `rng`.

mod cell;
mod kernel;
mod limit;
mod lineitem;
mod ours;
mod report;
mod rng;
mod runner;
mod scenario;
mod tables;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use delta_arrow_reader::serve::{ServeConfig, StaticServer};

use crate::cell::{report as print_outcome, Outcome};
use crate::runner::{summarise, Reader, Runner, Summary, READERS};
use crate::scenario::{Filter, Kind, Scenario};
use crate::tables::Tables;

/// Added to every request of the HTTP scenarios.
const LATENCY: Duration = Duration::from_millis(50);

#[derive(Debug, Parser)]
#[command(about = "Benchmarks our reader against delta_kernel, delta-rs and arrow-rs")]
struct Args {
    /// A small table and one run per cell (a smoke test of the whole command).
    #[arg(long)]
    quick: bool,
    /// Run only these scenarios (repeatable): full, projection, selective, partition, dv,
    /// log300k, log10k, http.
    #[arg(long)]
    only: Vec<String>,
    /// Runs per cell (default 3; 1 with --quick).
    #[arg(long)]
    reps: Option<usize>,
    /// Where the generated tables are cached (default $HOME/.cache/dar-bench).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// The shared corpus (for the 300k-file table).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"))]
    corpus: PathBuf,
    /// The Python of a virtual environment with `deltalake` and `pyarrow`.
    #[arg(long, requires = "deltars_script")]
    python: Option<PathBuf>,
    /// `scripts/bench_deltars.py`.
    #[arg(long)]
    deltars_script: Option<PathBuf>,
    /// A cell running longer is stopped and printed as failed.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
    /// Child mode: run one cell (READER SCENARIO) and print its result line.
    #[arg(long, num_args = 2, value_names = ["READER", "SCENARIO"])]
    cell: Option<Vec<String>>,
    /// Child mode: the table's path or URL.
    #[arg(long)]
    location: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(cell) = &args.cell {
        let outcome = run_cell(&args, cell);
        print_outcome(&outcome);
        return ExitCode::SUCCESS;
    }
    match run_all(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cache_dir(args: &Args) -> PathBuf {
    args.cache.clone().unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
        home.join(".cache").join("dar-bench")
    })
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs one cell in this process (child mode).
fn run_cell(args: &Args, cell: &[String]) -> Outcome {
    let tables = Tables::new(&cache_dir(args), args.quick);
    // The diagnostic `arrow-rs-all-held-N`: the limit on all cores, each thread keeping its
    // last N batches alive (see `limit`).
    let held = cell
        .first()
        .and_then(|r| r.strip_prefix("arrow-rs-all-held-"))
        .map(|n| n.parse::<usize>());
    let held = match held {
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => return Outcome::Failed(format!("arrow-rs-all-held-N: {e}")),
        None => None,
    };
    let (Some(reader), Some(s), Some(location)) = (
        match held {
            Some(_) => Some(Reader::LimitAll),
            None => cell.first().and_then(|r| Reader::parse(r)),
        },
        cell.get(1).and_then(|n| {
            scenario::all(tables.layout, tables.commits)
                .into_iter()
                .find(|s| s.name == *n)
        }),
        args.location.as_deref(),
    ) else {
        return Outcome::Failed(format!("unknown cell {cell:?} or no --location"));
    };
    let result = match reader {
        Reader::Ours => block_on(ours::streaming(location, &s)),
        Reader::DataFusion => block_on(ours::datafusion(location, &s)),
        Reader::Kernel => kernel_url(location).and_then(|url| kernel::run(&url, &s)),
        Reader::LimitOne => limit::run(Path::new(location), &s, 1, 0),
        Reader::LimitAll => limit::run(Path::new(location), &s, cores(), held.unwrap_or(0)),
        Reader::DeltaRs => Err("delta-rs runs in Python".into()),
    };
    match result {
        Ok(r) => Outcome::Ok(r),
        Err(e) => Outcome::Failed(e.lines().next().unwrap_or("").to_string()),
    }
}

/// Runs `f` on a new multi-threaded Tokio runtime (one worker per core).
fn block_on(
    f: impl std::future::Future<Output = Result<cell::CellResult, String>>,
) -> Result<cell::CellResult, String> {
    tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())?
        .block_on(f)
}

fn kernel_url(location: &str) -> Result<url::Url, String> {
    if location.contains("://") {
        return url::Url::parse(location).map_err(|e| e.to_string());
    }
    let path = std::fs::canonicalize(location).map_err(|e| format!("{location}: {e}"))?;
    url::Url::from_directory_path(&path).map_err(|()| format!("{location}: not a directory"))
}

/// Reads every file under `dir` once, so that every reader finds it in the page cache.
fn warm(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            warm(&p);
        } else if let Ok(mut f) = std::fs::File::open(&p) {
            let _ = std::io::copy(&mut f, &mut std::io::sink());
        }
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let kib: u64 = l
                    .strip_prefix("MemTotal:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()?;
                Some(format!("{:.1} GiB", kib as f64 / 1048576.0))
            })
        })
        .unwrap_or_else(|| "unknown".into());
    format!("{} cores (nproc), {memory} memory, CPU: {cpu}", cores())
}

/// Where reader `r` finds the table of `s`.
fn location(s: &Scenario, tables: &Tables, corpus: &Path, server: Option<&StaticServer>) -> String {
    if let Some(name) = s.table.strip_prefix("corpus:") {
        let dir = corpus.join("tables").join(name);
        return std::fs::canonicalize(&dir)
            .unwrap_or(dir)
            .to_string_lossy()
            .into_owned();
    }
    match (s.http, server) {
        (true, Some(server)) => format!("{}/", server.url_for(s.table)),
        _ => tables.dir(s.table).to_string_lossy().into_owned(),
    }
}

fn run_all(args: &Args) -> Result<(), String> {
    let tables = Tables::new(&cache_dir(args), args.quick);
    tables.ensure()?;
    let scenarios: Vec<Scenario> = scenario::all(tables.layout, tables.commits)
        .into_iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|o| o == s.name))
        .collect();
    if scenarios.is_empty() {
        return Err(format!("no scenario is named {:?}", args.only));
    }
    let reps = args.reps.unwrap_or(if args.quick { 1 } else { 3 }).max(1);
    let server = if scenarios.iter().any(|s| s.http) {
        let config = ServeConfig::new(&tables.root).with_latency(LATENCY);
        Some(StaticServer::start_background(config).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let mut child_args = vec![
        "--cache".to_string(),
        cache_dir(args).to_string_lossy().into_owned(),
    ];
    if args.quick {
        child_args.push("--quick".into());
    }
    let runner = Runner {
        child_args,
        python: args.python.clone().zip(args.deltars_script.clone()),
        timeout: Duration::from_secs(args.timeout_secs),
    };
    eprintln!("warming the page cache…");
    warm(&tables.dir("lineitem"));
    warm(&tables.dir("lineitem_dv"));
    let mut rows = Vec::new();
    for s in &scenarios {
        let loc = location(s, &tables, &args.corpus, server.as_ref());
        let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); READERS.len()];
        for rep in 0..reps {
            for (i, &reader) in READERS.iter().enumerate() {
                eprintln!("{} · {} · run {}/{reps}", s.name, reader.name(), rep + 1);
                if let Some(why) = reader.not_applicable(s) {
                    runs[i].push(Outcome::NotApplicable(why.into()));
                    continue;
                }
                // A cell that failed (or timed out) once is not run again.
                if let Some(failed) = runs[i].iter().find(|o| matches!(o, Outcome::Failed(_))) {
                    let failed = failed.clone();
                    runs[i].push(failed);
                    continue;
                }
                if let Some(server) = &server {
                    server.stats().reset();
                }
                let mut outcome = runner.run(reader, s, &loc);
                if let (Outcome::Ok(r), true, Some(server)) = (&mut outcome, s.http, &server) {
                    r.bytes = server.stats().bytes_sent();
                    r.bytes_from = "server".into();
                }
                runs[i].push(outcome);
            }
        }
        let cells: Vec<Summary> = runs.into_iter().map(summarise).collect();
        let notes = notes(s, &tables, &cells);
        rows.push(report::Row {
            scenario: s.clone(),
            cells,
            notes,
        });
    }
    println!("Machine: {}", machine());
    println!(
        "Tables: {} ({} rows in {} files of {} row groups; cached, generator v{})",
        tables.root.display(),
        tables.layout.rows(),
        tables.layout.files(),
        tables
            .layout
            .rows_per_file
            .div_ceil(tables.layout.rows_per_group),
        tables::GENERATOR_VERSION
    );
    println!();
    print!("{}", report::render(&rows, cores(), reps));
    Ok(())
}

/// The selective scan: the bytes of the row groups whose statistics can match, and ours
/// beside them.
fn notes(s: &Scenario, tables: &Tables, cells: &[Summary]) -> Vec<String> {
    if !matches!(s.filter, Some(Filter::Orderkeys(..))) || s.kind != Kind::Scan {
        return Vec::new();
    }
    match limit::matching_row_groups(&tables.dir(s.table), s) {
        Ok((matching, all, bytes)) => {
            let ours = match cells.first() {
                Some(Summary::Ok { median, .. }) => format!(
                    "; ours read {} bytes = {:.2}× of that",
                    median.bytes,
                    median.bytes as f64 / bytes.max(1) as f64
                ),
                _ => String::new(),
            };
            vec![format!(
                "row groups whose statistics can match: {matching} of {all}, {bytes} bytes (compressed){ours}"
            )]
        }
        Err(e) => vec![format!("cannot read the row groups' statistics: {e}")],
    }
}
