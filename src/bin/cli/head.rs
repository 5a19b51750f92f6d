//! `dar head`: the first rows of a table, printed as a grid.

use clap::Args;
use delta_arrow_reader::{DeltaError, DeltaTable};

use super::TableArgs;

/// Rows `dar head` shows unless told otherwise.
pub const DEFAULT_ROWS: usize = 20;

/// Arguments of `dar head`.
#[derive(Debug, Args)]
pub struct HeadArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Number of rows to show.
    #[arg(short = 'n', long = "rows", default_value_t = DEFAULT_ROWS, allow_negative_numbers = true)]
    pub rows: usize,
    /// Comma-separated top-level columns to show (default: all); a name in double quotes is taken as written, commas and spaces included ("a,b")
    #[arg(long)]
    pub columns: Vec<String>,
    /// Only rows matching this filter, e.g. "country = 'NL' and population >= 500000" (a
    /// filter may start with `-`: `--filter "-5 < x"`).
    #[arg(long, allow_hyphen_values = true)]
    pub filter: Option<String>,
    /// The largest uncompressed Parquet page a data file may declare, in bytes, K, M or G
    /// (default 256M); a larger one is refused (limit_exceeded) before anything is allocated.
    #[arg(long, value_name = "BYTES", value_parser = super::parse_bytes)]
    pub max_page_bytes: Option<u64>,
}

impl Default for HeadArgs {
    /// What plain `dar` runs: the demo table, [`DEFAULT_ROWS`] rows.
    fn default() -> Self {
        HeadArgs {
            table: TableArgs::default(),
            rows: DEFAULT_ROWS,
            columns: Vec::new(),
            filter: None,
            max_page_bytes: None,
        }
    }
}

/// Reads the first rows and prints them: a grid, or JSON lines with `--json`.
pub async fn print_head(table: &DeltaTable, args: &HeadArgs) -> Result<(), DeltaError> {
    let mut scan = table
        .scan()
        .with_limit(args.rows)
        .with_execution_options(super::execution_options(args.max_page_bytes));
    if !args.columns.is_empty() {
        scan = scan.with_projection(super::column_list::column_list(&args.columns)?);
    }
    if let Some(f) = &args.filter {
        scan = scan.with_filter(f.clone());
    }
    let scan = scan.build().await?;
    let selection = scan.file_selection();
    let stream = scan.into_stream();
    let schema = stream.schema();
    if args.table.json {
        // Printed as the rows arrive: `-n 10000000 --json` needs no more memory than `-n 10`.
        return super::rows_out::print_rows(stream, super::rows_out::RowFormat::Json).await;
    }
    // A grid shows at most GRID_MAX_ROWS rows, and the scan stops there.
    let gathered = super::rows_out::gather_for_grid(stream, false).await?;
    let batches = gathered.batches;
    let rows = gathered.shown;
    let cut = if args.rows > rows && rows == super::rows_out::GRID_MAX_ROWS {
        format!(" (a grid shows at most {rows}: --json, or dar export, for all)")
    } else {
        String::new()
    };
    // With no rows, the grid still names the columns.
    let grid = super::data_grid::format(&schema, &batches)?;
    let files = table.eager_files().unwrap_or_default();
    let counted: Vec<u64> = files
        .iter()
        .filter_map(delta_arrow_reader::log::Add::live_records)
        .collect();
    let total: u64 = counted.iter().fold(0, |a, &b| a.saturating_add(b));
    // Files without `numRecords` leave a lower bound.
    let bound = if counted.len() == files.len() {
        ""
    } else {
        "at least "
    };
    let skipped = selection.files_total - selection.files_selected;
    let files = if skipped > 0 {
        format!(
            "{} of {} files read",
            selection.files_selected, selection.files_total
        )
    } else {
        super::info::counted(selection.files_total as u64, "file")
    };
    let text = format!(
        "{}\n{}\n{} shown{cut}; version {}, {files}{}\n",
        table.location(),
        grid,
        super::info::counted(rows as u64, "row"),
        table.version(),
        if total > 0 || bound.is_empty() {
            format!(", {bound}{}", super::info::counted(total, "row")) + " in the table"
        } else {
            String::new()
        }
    );
    super::terminal::print_text(&text)
}
