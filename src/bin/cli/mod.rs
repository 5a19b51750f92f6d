//! Argument parsing and dispatch of the `dar` commands.

mod changes;
#[cfg(feature = "distributed")]
mod cluster;
#[cfg(feature = "distributed")]
mod cluster_bench;
mod column_list;
mod csv_rows;
mod data_grid;
mod export;
mod head;
mod history;
mod info;
mod output;
mod rows_out;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "datafusion")]
mod sql;
mod stats;
mod terminal;
mod text_formats;
mod variant_json;
#[cfg(feature = "serve")]
mod view;
#[cfg(feature = "distributed")]
mod workers;

use std::collections::HashMap;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use delta_arrow_reader::{DeltaError, DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder};

/// Read Delta Lake tables: metadata, schema, files.
#[derive(Debug, Parser)]
#[command(
    name = "dar",
    version,
    about,
    override_usage = "dar [COMMAND]\n       dar [TABLE] [OPTIONS]   (the same as `dar head [TABLE] [OPTIONS]`)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The first rows of the table as a readable grid (the default command).
    Head(head::HeadArgs),
    /// Write the whole result to a file (parquet, ipc, csv, json).
    Export(export::ExportArgs),
    /// Serve local tables over HTTP (byte ranges, CORS) for the browser.
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// Preview a table (or a folder of tables) in the browser: serves the previewer page
    /// built into dar beside the tables, prints its address and opens it.
    #[cfg(feature = "serve")]
    View(view::ViewArgs),
    /// Version, protocol, partition columns, file count and size.
    Info(TableArgs),
    /// The table schema (Delta and Arrow types).
    Schema(TableArgs),
    /// The active data files.
    Files(TableArgs),
    /// Per column, from the log's statistics alone: min, max, null count; the row count.
    Stats(TableArgs),
    /// The table's commits, newest first: version, time, operation, parameters, engine.
    History(history::HistoryArgs),
    /// The rows the commits from --from on inserted, deleted or updated (the change data
    /// feed), each with its change type, commit version and commit time.
    Changes(changes::ChangesArgs),
    /// Run a SQL query over tables registered by name (DataFusion).
    #[cfg(feature = "datafusion")]
    Sql(sql::SqlArgs),
    /// A Ballista scheduler or executor, or a datafusion-distributed worker, that reads
    /// Delta tables.
    #[cfg(feature = "distributed")]
    #[command(subcommand)]
    Cluster(cluster::ClusterCommand),
}

/// Which table, which version, how to print.
#[derive(Debug, Args, Default)]
pub struct TableArgs {
    /// Table path or URL (file://, http(s)://, s3://, az://, abfss://, gs://). Default: the built-in demo table.
    table: Option<String>,
    /// Open this version.
    #[arg(long, conflicts_with = "timestamp", allow_negative_numbers = true)]
    version: Option<u64>,
    /// Open the newest version committed at or before this time (RFC 3339, or
    /// `YYYY-MM-DD[ HH:MM:SS]` in UTC).
    #[arg(long)]
    timestamp: Option<String>,
    /// Storage option KEY=VALUE (repeatable), e.g. -o aws_region=eu-west-1.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Refuse a log of more than N commits after its checkpoint (default 100000).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_commits: Option<u64>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// `dar TABLE …` and `dar --filter … TABLE` are `dar head …`: `head` is put in front of an
/// argument list whose first argument is an option (other than help and version) or a table
/// location (a path that exists, or text with `/`, `.` or `:`). A bare word that is neither
/// (`dar inof`) is left to clap, which names the commands it may have meant.
fn with_default_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    // `dar info --version` with no version after it asks for the tool's version (the table
    // commands' `--version N` opens version N).
    if args.len() == 3 && args.get(2).is_some_and(|a| a == "--version" || a == "-V") {
        args.truncate(1);
        args.push("--version".into());
        return args;
    }
    let Some(first) = args.get(1) else {
        return args;
    };
    let text = first.to_string_lossy();
    let command = Cli::command();
    let is_command = text == "help"
        || command
            .get_subcommands()
            .any(|c| c.get_name() == text || c.get_all_aliases().any(|a| a == text));
    // `--version` alone is the tool's version; `dar --version 0 TABLE` is head's option.
    let help = matches!(&*text, "-h" | "--help")
        || (matches!(&*text, "-V" | "--version") && args.len() == 2);
    let location = std::path::Path::new(first).exists() || text.contains(['/', '.', ':']);
    if !is_command && !help && (text.starts_with('-') || location) {
        args.insert(1, "head".into());
    }
    args
}

/// Entry point: runs the command and turns errors into a one-line message and exit code 1.
pub fn main() -> ExitCode {
    let cli = match parse(with_default_command(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // A decoder's panic on a corrupt file is reported as the file's error, not printed.
    delta_arrow_reader::limits::quiet_contained_panics();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            terminal::message(&format!("dar: cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let command = cli
        .command
        .unwrap_or_else(|| Command::Head(head::HeadArgs::default()));
    match runtime.block_on(run(command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let text = e.to_string();
            terminal::message(&format!(
                "dar: error [{}]: {}",
                e.code(),
                terminal::safe(&text, false)
            ));
            ExitCode::FAILURE
        }
    }
}

/// The command line parsed. A single-valued option given twice takes its last value, as
/// POSIX and GNU tools do (`-n 5 -n 10` shows 10 rows); options given to be repeated (`-o`,
/// `--table`) still gather every value. Help and the version are printed here, and an
/// output that cannot take them (`--help > /dev/full`) fails the command; any other error
/// is the parser's usage message, exit code 2.
fn parse(args: Vec<std::ffi::OsString>) -> Result<Cli, ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    let command = Cli::command()
        .args_override_self(true)
        .mut_subcommands(|c| c.args_override_self(true));
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m));
    match parsed {
        Ok(cli) => Ok(cli),
        Err(e) => {
            use clap::error::ErrorKind;
            let shown = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            if !shown {
                let _ = e.print();
                return Err(ExitCode::from(2));
            }
            // Styled on a terminal, as clap prints it; flushed, so a full device shows.
            let printed = e
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            match printed {
                Ok(()) => Err(ExitCode::SUCCESS),
                Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Err(ExitCode::SUCCESS),
                Err(err) => {
                    terminal::message(&format!(
                        "dar: error [io]: I/O error on standard output: {err}"
                    ));
                    Err(ExitCode::FAILURE)
                }
            }
        }
    }
}

async fn run(command: Command) -> Result<(), DeltaError> {
    match command {
        Command::Head(args) => {
            let table = open(&args.table).await?;
            head::print_head(&table, &args).await
        }
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(&args).await,
        #[cfg(feature = "serve")]
        Command::View(args) => view::view(&args).await,
        Command::Export(args) => {
            let table = open(&args.table).await?;
            export::export(&table, &args).await
        }
        Command::Info(args) => {
            let table = open(&args).await?;
            info::print_info(&table, args.json)
        }
        Command::Schema(args) => {
            let table = open(&args).await?;
            info::print_schema(&table, args.json)
        }
        Command::Files(args) => {
            let table = open(&args).await?;
            info::print_files(&table, args.json)
        }
        Command::Stats(args) => {
            let table = open(&args).await?;
            stats::print_stats(&table, args.json).await
        }
        Command::History(args) => {
            let table = open(&args.table).await?;
            history::print_history(&table, &args).await
        }
        Command::Changes(args) => {
            let table = open(&args.table).await?;
            changes::print_changes(&table, &args).await
        }
        #[cfg(feature = "datafusion")]
        Command::Sql(args) => sql::run_sql(&args).await,
        #[cfg(feature = "distributed")]
        Command::Cluster(command) => cluster::run_cluster(&command).await,
    }
}

/// An Arrow error of writing or printing results, as the reader's error.
pub fn arrow_error(source: arrow_schema::ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: delta_arrow_reader::Phase::Read,
        source,
    }
}

/// Storage options from `KEY=VALUE` arguments.
pub fn parse_options(args: &[String]) -> Result<HashMap<String, String>, DeltaError> {
    let mut options = env_options()?;
    for (i, o) in args.iter().enumerate() {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| DeltaError::InvalidArgument {
                reason: bad_option(i, o),
            })?;
        options.insert(k.to_string(), v.to_string());
    }
    Ok(options)
}

/// The environment variable holding storage options as a JSON object of strings: for every
/// command, so that secrets stay off the command line (where `ps` shows them to others).
pub const STORAGE_OPTIONS_ENV: &str = "DAR_STORAGE_OPTIONS";

/// Storage options from $DAR_STORAGE_OPTIONS (none when it is unset or empty).
fn env_options() -> Result<HashMap<String, String>, DeltaError> {
    match std::env::var(STORAGE_OPTIONS_ENV) {
        Ok(text) if !text.trim().is_empty() => {
            serde_json::from_str(&text).map_err(|e| DeltaError::InvalidArgument {
                reason: format!("${STORAGE_OPTIONS_ENV} is not a JSON object of strings: {e}"),
            })
        }
        _ => Ok(HashMap::new()),
    }
}

/// Why option number `i` (`o`, without `=`) is refused, never showing its text past what
/// looks like a key: the value may be a secret (`aws_secret_access_key:…`).
fn bad_option(i: usize, o: &str) -> String {
    let key = o
        .split_once([':', ' '])
        .map(|(k, _)| k)
        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    match key {
        Some(key) => format!(
            "storage option {} ('{key}' followed by a value not shown) is not KEY=VALUE: \
             write {key}=VALUE",
            i + 1
        ),
        None => format!(
            "storage option {} is not KEY=VALUE (its text is not shown: it may hold a secret)",
            i + 1
        ),
    }
}

/// A byte count: digits with an optional K, M, G or T (powers of 1024; `B`/`iB` allowed).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a byte count such as 512M or 4G"))?;
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        other if other.starts_with(['.', ',']) => {
            return Err(format!(
                "{text:?}: a whole number of bytes or of a unit is needed (1.5G is written 1536M)"
            ))
        }
        _ => return Err(format!("{text:?}: unknown unit (K, M, G or T)")),
    };
    number
        .checked_mul(1 << shift)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{text:?} is not a byte count above 0 that fits"))
}

/// The scan options of `dar head` and `dar export`: the defaults, with `--max-page-bytes`.
pub fn execution_options(max_page_bytes: Option<u64>) -> DeltaScanExecutionOptions {
    let mut options = DeltaScanExecutionOptions::default();
    if let Some(n) = max_page_bytes {
        options.max_page_bytes = n;
    }
    options
}

pub async fn open(args: &TableArgs) -> Result<DeltaTable, DeltaError> {
    let location = match &args.table {
        Some(t) => t.clone(),
        None => delta_arrow_reader::fixture::demo_table_dir()?
            .to_string_lossy()
            .into_owned(),
    };
    let options = parse_options(&args.options)?;
    let mut builder = DeltaTableBuilder::new(location).with_storage_options(options);
    if let Some(v) = args.version {
        builder = builder.with_version(v);
    }
    if let Some(t) = &args.timestamp {
        builder = builder.with_timestamp_str(t)?;
    }
    if let Some(n) = args.max_commits {
        if n == 0 {
            return Err(DeltaError::InvalidArgument {
                reason: "--max-commits must be at least 1".into(),
            });
        }
        builder = builder.with_max_commits(n);
    }
    let table = builder.load_table_with_eager_scan_metadata().await?;
    note_forbidden_log_files(&table);
    Ok(table)
}

/// Says so when the table's host answered `404` for some missing log files and `403
/// Forbidden` for others, which the load also took as missing (S3 answers `403` for every
/// missing key to a reader without `ListBucket`, so a `403` alone is not remarked on): a
/// commit the reader may not read would then hide a newer version than the one read.
fn note_forbidden_log_files(table: &DeltaTable) {
    let (not_found, forbidden) = table.store().missing_log_answers();
    if not_found > 0 && forbidden > 0 {
        terminal::message(&format!(
            "dar: note: the server answered 403 Forbidden for {} and 404 Not Found for others; the \
             forbidden ones were taken as missing, so if one exists the version read ({}) is \
             not the latest",
            info::counted(forbidden, "log file"),
            table.version()
        ));
    }
}
