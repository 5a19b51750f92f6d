//! `dar export`: the whole result of a scan written to a file, a special file or standard
//! output (Parquet, Arrow IPC, CSV or JSON lines), with a progress bar on a terminal that
//! counts the bytes of the files the scan selected. Where the bytes go, and how a regular
//! file is replaced only after success, is `output`'s job.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use clap::{Args, ValueEnum};
use delta_arrow_reader::{DeltaError, DeltaTable};
use futures::StreamExt;

use super::output::{io_error, Output, Sink as OutputSink};
use super::text_formats;
use super::{arrow_error, TableArgs};

/// What every writer writes to.
type Sink = BufWriter<OutputSink>;

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet (zstd).
    #[default]
    Parquet,
    /// Arrow IPC file.
    Ipc,
    /// CSV with a header row.
    Csv,
    /// Newline-delimited JSON objects.
    Json,
}

/// Arguments of `dar export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Output file; `-` writes to standard output. A device or FIFO is written in place; a
    /// regular file is replaced only when the export succeeds.
    #[arg(long)]
    pub out: PathBuf,
    /// Output format (default: from the file extension: .parquet/.pq, .arrow/.ipc/.feather,
    /// .csv, .json/.jsonl/.ndjson; parquet for a name without one; another extension needs
    /// --format).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Comma-separated top-level columns (default: all); a name in double quotes is taken as written, commas and spaces included ("a,b")
    #[arg(long)]
    pub columns: Vec<String>,
    /// Only rows matching this filter, e.g. "country = 'NL' and population >= 500000" (a
    /// filter may start with `-`: `--filter "-5 < x"`).
    #[arg(long, allow_hyphen_values = true)]
    pub filter: Option<String>,
    /// Write at most this many rows.
    #[arg(long, allow_negative_numbers = true)]
    pub limit: Option<usize>,
    /// The largest uncompressed Parquet page a data file may declare, in bytes, K, M or G
    /// (default 256M); a larger one is refused (limit_exceeded) before anything is allocated.
    #[arg(long, value_name = "BYTES", value_parser = super::parse_bytes)]
    pub max_page_bytes: Option<u64>,
}

/// The format `--format` names, else the one the output's extension names (in any case),
/// else Parquet for a name without extension (and for `-`). An extension that names none of
/// them is refused rather than given Parquet bytes (`out.tsv`, `out.csv.gz`).
fn format_for(args: &ExportArgs) -> Result<Format, DeltaError> {
    let by_extension = args
        .out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .map(|extension| match extension.as_str() {
            "parquet" | "pq" => Ok(Format::Parquet),
            "arrow" | "ipc" | "feather" => Ok(Format::Ipc),
            "csv" => Ok(Format::Csv),
            "json" | "jsonl" | "ndjson" => Ok(Format::Json),
            _ => Err(extension),
        });
    match (args.format, by_extension) {
        (Some(f), Some(Ok(named))) if named != f => {
            // Written as asked, but a reader going by the name would take it for another.
            super::terminal::message(&format!(
                "dar: note: writing {f:?} to {}, whose extension names {named:?}",
                super::terminal::safe(&args.out.display().to_string(), false)
            ));
            Ok(f)
        }
        (Some(f), _) => Ok(f),
        (None, None) => Ok(Format::Parquet),
        (None, Some(Ok(named))) => Ok(named),
        (None, Some(Err(extension))) => Err(DeltaError::InvalidArgument {
            reason: format!(
                "cannot tell the output format from the extension '.{extension}': give \
                 --format parquet, ipc, csv or json"
            ),
        }),
    }
}

/// Refuses an output that would change the local table being read: replacing any file in
/// its folder (a data file, a deletion vector, a commit) would destroy the table, and a new
/// file in its `_delta_log` could become a commit. A new file elsewhere in the folder is not
/// the table's and is allowed.
fn refuse_output_inside(table: &DeltaTable, out: &Path) -> Result<(), DeltaError> {
    let url = table.location().url();
    if url.scheme() != "file" || out.as_os_str() == "-" {
        return Ok(());
    }
    let Some(root) = url
        .to_file_path()
        .ok()
        .and_then(|root| std::fs::canonicalize(root).ok())
    else {
        return Ok(());
    };
    // The output as it will be written: a link is followed (export writes its target), and
    // a file not yet there is placed by its folder.
    let existing = std::fs::canonicalize(out).ok();
    let target = existing.clone().or_else(|| {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(parent).ok()?.join(out.file_name()?))
    });
    let Some(target) = target else {
        return Ok(());
    };
    let replaces_a_table_file = existing.is_some() && target.starts_with(&root);
    if replaces_a_table_file || target.starts_with(root.join("_delta_log")) {
        return Err(DeltaError::InvalidArgument {
            reason: format!(
                "refusing to write {}: it would change the table being read ({}); write it \
                 elsewhere",
                out.display(),
                root.display()
            ),
        });
    }
    Ok(())
}

enum Writer {
    Parquet(parquet::arrow::ArrowWriter<Sink>),
    Ipc(arrow_ipc::writer::FileWriter<Sink>),
    Csv(super::csv_rows::CsvWriter<Sink>),
    Json(arrow_json::LineDelimitedWriter<Sink>),
}

/// A failure of the Parquet writer (a full disk, a closed pipe): an I/O error on the output,
/// not a "cannot decode" error, which is about reading.
fn parquet_write_error(source: parquet::errors::ParquetError) -> DeltaError {
    io_error(
        std::path::Path::new("the output"),
        format!("cannot write Parquet: {source}"),
    )
}

/// A failure of the IPC, CSV or JSON writer: one of writing (a full disk, a closed pipe) is
/// an I/O error on the output, as the Parquet writer's is; any other stays an Arrow error.
fn write_error(e: arrow_schema::ArrowError) -> DeltaError {
    match e {
        arrow_schema::ArrowError::IoError(message, _) => {
            io_error(std::path::Path::new("the output"), message)
        }
        other => arrow_error(other),
    }
}

impl Writer {
    fn new(format: Format, file: Sink, schema: &SchemaRef) -> Result<Self, DeltaError> {
        Ok(match format {
            Format::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
                    .build();
                Writer::Parquet(
                    parquet::arrow::ArrowWriter::try_new(file, schema.clone(), Some(props))
                        .map_err(parquet_write_error)?,
                )
            }
            Format::Ipc => Writer::Ipc(
                arrow_ipc::writer::FileWriter::try_new(file, schema).map_err(write_error)?,
            ),
            Format::Csv => Writer::Csv(super::csv_rows::CsvWriter::new(file, true)),
            Format::Json => Writer::Json(text_formats::json_writer(file)),
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), DeltaError> {
        match self {
            Writer::Parquet(w) => w.write(batch).map_err(parquet_write_error),
            Writer::Ipc(w) => w.write(batch).map_err(write_error),
            Writer::Csv(w) => w.write(batch).map_err(write_error),
            Writer::Json(w) => w.write(batch).map_err(write_error),
        }
    }

    fn finish(self, schema: &SchemaRef) -> Result<(), DeltaError> {
        match self {
            Writer::Parquet(w) => w.close().map(|_| ()).map_err(parquet_write_error),
            Writer::Ipc(mut w) => {
                w.finish().map_err(write_error)?;
                w.into_inner()
                    .map_err(write_error)?
                    .flush()
                    .map_err(|e| io_error(std::path::Path::new("the output"), e))
            }
            Writer::Csv(mut w) => {
                // No rows: the header alone, so the columns are still known.
                w.write_header_of(schema).map_err(write_error)?;
                w.into_inner()
                    .flush()
                    .map_err(|e| io_error(std::path::Path::new("the output"), e))
            }
            Writer::Json(mut w) => {
                w.finish().map_err(write_error)?;
                w.into_inner()
                    .flush()
                    .map_err(|e| io_error(std::path::Path::new("the output"), e))
            }
        }
    }
}

/// A progress bar over the bytes of the files a scan selected (hidden off a terminal).
fn progress_bar(total_bytes: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total_bytes.max(1));
    let style = indicatif::ProgressStyle::with_template(
        "[{bar:30}] {percent:>3}%  {binary_bytes}/{binary_total_bytes}  {msg}  {elapsed}",
    )
    .map(|s| s.progress_chars("#>."))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Runs the export.
pub async fn export(table: &DeltaTable, args: &ExportArgs) -> Result<(), DeltaError> {
    let format = format_for(args)?;
    refuse_output_inside(table, &args.out)?;
    let mut scan = table
        .scan()
        .with_execution_options(super::execution_options(args.max_page_bytes));
    if !args.columns.is_empty() {
        scan = scan.with_projection(super::column_list::column_list(&args.columns)?);
    }
    if let Some(n) = args.limit {
        scan = scan.with_limit(n);
    }
    if let Some(f) = &args.filter {
        scan = scan.with_filter(f.clone());
    }
    let scan = scan.build().await?;
    let total_bytes: u64 = scan
        .tasks()
        .iter()
        .map(|t| t.size)
        .fold(0, u64::saturating_add);
    let (sink, output) = Output::open(&args.out)?;
    if output.is_terminal && matches!(format, Format::Parquet | Format::Ipc) {
        return Err(DeltaError::InvalidArgument {
            reason: format!(
                "refusing to write {format:?} (binary) to a terminal: redirect the output or \
                 choose --format csv or json"
            ),
        });
    }
    // CSV or JSON on the screen: escaped as `dar head` escapes, so a value cannot drive the
    // terminal; and no progress bar among the rows.
    let sink: OutputSink = if output.is_terminal {
        Box::new(super::terminal::TerminalSafe::new(sink))
    } else {
        sink
    };
    // In the table's order: the same snapshot exports to the same bytes (on every core all
    // the same; see `into_ordered_stream`).
    let mut stream = scan.into_ordered_stream();
    let schema = stream.schema();
    let metrics = stream.metrics();
    let mut writer = Writer::new(format, BufWriter::with_capacity(1 << 20, sink), &schema)?;
    let bar = if output.is_terminal {
        indicatif::ProgressBar::hidden()
    } else {
        progress_bar(total_bytes)
    };
    let started = Instant::now();
    let mut rows = 0usize;
    let copy = async {
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            rows += batch.num_rows();
            writer.write(&batch)?;
            bar.set_position(metrics.file_bytes_done().min(total_bytes));
            bar.set_message(format!("{rows} rows"));
        }
        Ok::<(), DeltaError>(())
    };
    let result = copy.await.and_then(|()| writer.finish(&schema));
    bar.finish_and_clear();
    if result.is_err() && output.ends_quietly() {
        // A pipe whose reader stopped early (`--out - | head`): it has what it wanted; the
        // command ends quietly, as the other commands do.
        return Ok(());
    }
    if result.is_err() && output.reader_closed() {
        return Err(io_error(
            &args.out,
            format!(
                "its reader closed it after {} of the export: the rest was not written",
                super::info::counted(rows as u64, "row")
            ),
        ));
    }
    // On any other failure `output` is dropped unfinished: its temporary file is removed and
    // the target is left as it was.
    result?;
    output.finish()?;
    let seconds = started.elapsed().as_secs_f64();
    if args.table.json {
        let summary = serde_json::json!({
            "rows": rows,
            "out": args.out.display().to_string(),
            "format": format!("{format:?}").to_ascii_lowercase(),
            "seconds": seconds,
            "version": table.version(),
        });
        super::terminal::message(&summary.to_string());
    } else {
        super::terminal::message(&format!(
            "wrote {} to {} ({:?}) in {seconds:.2} s",
            super::info::counted(rows as u64, "row"),
            args.out.display(),
            format,
        ));
    }
    Ok(())
}
