//! `dar sql`: a SQL query (DataFusion) over one or more tables registered by name, printed
//! as a grid, CSV or JSON lines (feature `datafusion`). Only queries run: statements that
//! would create, change or write anything are refused.

use arrow_array::RecordBatch;
use clap::Args;
use datafusion::execution::context::SQLOptions;
use datafusion::prelude::SessionContext;
use delta_arrow_reader::datafusion::{register_table, ScanOptions};
use delta_arrow_reader::{DeltaError, DeltaTableBuilder, Phase};

/// Arguments of `dar sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The query, e.g. "SELECT letter, count(*) FROM t GROUP BY letter".
    pub query: String,
    /// A table the query names: NAME=TABLE (path or URL), repeatable.
    #[arg(long = "table", value_name = "NAME=TABLE", required = true)]
    pub tables: Vec<String>,
    /// Storage option KEY=VALUE for every table (repeatable).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Print newline-delimited JSON objects instead of a grid.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header row instead of a grid.
    #[arg(long)]
    pub csv: bool,
}

fn invalid(reason: String) -> DeltaError {
    DeltaError::InvalidArgument { reason }
}

fn arrow_error(source: arrow_schema::ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}

/// A DataFusion error as a reader error: the reader's own error when it is one.
fn from_df(e: datafusion::error::DataFusionError) -> DeltaError {
    match e.find_root() {
        datafusion::error::DataFusionError::External(inner) => {
            match inner.downcast_ref::<DeltaError>() {
                Some(d) => invalid(d.to_string()),
                None => invalid(format!("query failed: {e}")),
            }
        }
        _ => invalid(format!("query failed: {e}")),
    }
}

/// Registers the tables, runs the query and prints its result.
pub async fn run_sql(args: &SqlArgs) -> Result<(), DeltaError> {
    let ctx = SessionContext::new();
    let storage = super::parse_options(&args.options)?;
    for spec in &args.tables {
        let (name, location) = spec
            .split_once('=')
            .filter(|(n, l)| !n.trim().is_empty() && !l.trim().is_empty())
            .ok_or_else(|| invalid(format!("--table '{spec}' is not NAME=TABLE")))?;
        let table = DeltaTableBuilder::new(location.trim())
            .with_storage_options(storage.clone())
            .load_table_with_eager_scan_metadata()
            .await?;
        register_table(&ctx, name.trim(), table, ScanOptions::default()).map_err(from_df)?;
    }
    // A read tool: DDL (CREATE, DROP), DML (INSERT, COPY … TO, which writes files) and
    // other statements (SET, PREPARE) are refused before anything runs.
    let read_only = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let frame = ctx
        .sql_with_options(&args.query, read_only)
        .await
        .map_err(from_df)?;
    let batches = frame.collect().await.map_err(from_df)?;
    if args.json {
        super::terminal::print_data(&lines(&batches, Output::Json)?);
    } else if args.csv {
        super::terminal::print_data(&lines(&batches, Output::Csv)?);
    } else {
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let grid = arrow_cast::pretty::pretty_format_batches(&batches).map_err(arrow_error)?;
        let text = format!("{grid}\n{rows} row{}\n", if rows == 1 { "" } else { "s" });
        super::terminal::print_text(&text);
    }
    Ok(())
}

enum Output {
    Json,
    Csv,
}

fn lines(batches: &[RecordBatch], output: Output) -> Result<String, DeltaError> {
    let mut buf = Vec::new();
    match output {
        Output::Json => {
            let mut w = arrow_json::LineDelimitedWriter::new(&mut buf);
            for b in batches {
                w.write(b).map_err(arrow_error)?;
            }
            w.finish().map_err(arrow_error)?;
        }
        Output::Csv => {
            let mut w = arrow_csv::Writer::new(&mut buf);
            for b in batches {
                w.write(b).map_err(arrow_error)?;
            }
        }
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
