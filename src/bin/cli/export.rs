//! `dar export`: the whole result of a scan written to a file (Parquet, Arrow IPC, CSV or
//! JSON lines), with a progress line on a terminal.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use clap::{Args, ValueEnum};
use delta_arrow_reader::{DeltaError, DeltaTable, Phase};
use futures::StreamExt;

use super::TableArgs;

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
    /// Output file.
    #[arg(long)]
    pub out: PathBuf,
    /// Output format (default: from the file extension, else parquet).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Comma-separated columns (default: all).
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Only rows matching this filter, e.g. "country = 'NL' and population >= 500000".
    #[arg(long)]
    pub filter: Option<String>,
    /// Write at most this many rows.
    #[arg(long)]
    pub limit: Option<usize>,
}

fn format_for(args: &ExportArgs) -> Format {
    if let Some(f) = args.format {
        return f;
    }
    match args.out.extension().and_then(|e| e.to_str()) {
        Some("arrow" | "ipc" | "feather") => Format::Ipc,
        Some("csv") => Format::Csv,
        Some("json" | "jsonl" | "ndjson") => Format::Json,
        _ => Format::Parquet,
    }
}

fn io_error(path: &std::path::Path, e: impl std::fmt::Display) -> DeltaError {
    DeltaError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
        phase: Phase::Read,
        transient: false,
    }
}

fn arrow_error(source: arrow_schema::ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}

enum Writer {
    Parquet(parquet::arrow::ArrowWriter<BufWriter<File>>),
    Ipc(arrow_ipc::writer::FileWriter<BufWriter<File>>),
    Csv(arrow_csv::Writer<BufWriter<File>>),
    Json(arrow_json::LineDelimitedWriter<BufWriter<File>>),
}

impl Writer {
    fn new(format: Format, file: BufWriter<File>, schema: &SchemaRef) -> Result<Self, DeltaError> {
        Ok(match format {
            Format::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
                    .build();
                Writer::Parquet(
                    parquet::arrow::ArrowWriter::try_new(file, schema.clone(), Some(props))
                        .map_err(|source| DeltaError::Parquet {
                            path: "output".into(),
                            phase: Phase::Read,
                            source,
                        })?,
                )
            }
            Format::Ipc => Writer::Ipc(
                arrow_ipc::writer::FileWriter::try_new(file, schema).map_err(arrow_error)?,
            ),
            Format::Csv => Writer::Csv(arrow_csv::Writer::new(file)),
            Format::Json => Writer::Json(arrow_json::LineDelimitedWriter::new(file)),
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), DeltaError> {
        match self {
            Writer::Parquet(w) => w.write(batch).map_err(|source| DeltaError::Parquet {
                path: "output".into(),
                phase: Phase::Read,
                source,
            }),
            Writer::Ipc(w) => w.write(batch).map_err(arrow_error),
            Writer::Csv(w) => w.write(batch).map_err(arrow_error),
            Writer::Json(w) => w.write(batch).map_err(arrow_error),
        }
    }

    fn finish(self) -> Result<(), DeltaError> {
        match self {
            Writer::Parquet(w) => w.close().map(|_| ()).map_err(|source| DeltaError::Parquet {
                path: "output".into(),
                phase: Phase::Read,
                source,
            }),
            Writer::Ipc(mut w) => w.finish().map_err(arrow_error),
            Writer::Csv(w) => w
                .into_inner()
                .flush()
                .map_err(|e| io_error(std::path::Path::new("output"), e)),
            Writer::Json(mut w) => w.finish().map_err(arrow_error),
        }
    }
}

/// Runs the export.
pub async fn export(table: &DeltaTable, args: &ExportArgs) -> Result<(), DeltaError> {
    let mut scan = table.scan();
    if !args.columns.is_empty() {
        scan = scan.with_projection(args.columns.iter().map(|c| c.trim().to_string()));
    }
    if let Some(n) = args.limit {
        scan = scan.with_limit(n);
    }
    if let Some(f) = &args.filter {
        scan = scan.with_filter(f.clone());
    }
    let mut stream = scan.build().await?.into_stream();
    let schema = stream.schema();
    let format = format_for(args);
    // Write to a temporary name beside the target, renamed at the end: a failed export
    // leaves no half-written file under the requested name.
    let partial = args.out.with_extension("dar-partial");
    let file = File::create(&partial).map_err(|e| io_error(&partial, e))?;
    let mut writer = Writer::new(format, BufWriter::new(file), &schema)?;
    let progress = std::io::stderr().is_terminal();
    let counters = table.io_counters();
    let total_bytes = table.eager_size_bytes().unwrap_or_default().max(1);
    let started = Instant::now();
    let mut rows = 0usize;
    let result: Result<(), DeltaError> = async {
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            rows += batch.num_rows();
            writer.write(&batch)?;
            if progress {
                let read = counters.snapshot().bytes_received;
                let pct = (read as f64 / total_bytes as f64 * 100.0).min(100.0);
                let bar: String = (0..30)
                    .map(|i| {
                        if (i as f64) < pct / 100.0 * 30.0 {
                            '#'
                        } else {
                            '.'
                        }
                    })
                    .collect();
                eprint!(
                    "\r[{bar}] {pct:5.1}%  {rows} rows  {:.1} s",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        Ok(())
    }
    .await;
    if progress {
        eprintln!();
    }
    if let Err(e) = result.and_then(|_| writer.finish()) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, &args.out).map_err(|e| io_error(&args.out, e))?;
    eprintln!(
        "wrote {rows} rows to {} ({:?}) in {:.2} s",
        args.out.display(),
        format,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
