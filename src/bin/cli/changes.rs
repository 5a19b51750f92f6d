//! `dar changes`: the table's change data feed, the rows the commits from `--from` to the
//! opened version inserted, deleted or updated, each with `_change_type`, `_commit_version`
//! and `_commit_timestamp`; a grid, or JSON lines with `--json`.

use clap::Args;
use delta_arrow_reader::{DeltaError, DeltaTable};

use super::TableArgs;

/// Arguments of `dar changes`.
#[derive(Debug, Args)]
pub struct ChangesArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// The first version whose changes are shown, or a time (RFC 3339, `YYYY-MM-DD[
    /// HH:MM:SS]` in UTC): from the first version committed then or later. The last is the
    /// opened one (`--version`, `--timestamp`, else the newest).
    #[arg(long, value_name = "VERSION|TIME", allow_hyphen_values = true)]
    pub from: String,
    /// Number of rows to show (0: all, up to what a grid shows; --json prints them all).
    #[arg(short = 'n', long = "rows", default_value_t = super::head::DEFAULT_ROWS, allow_negative_numbers = true)]
    pub rows: usize,
    /// Comma-separated columns to show (the table's, and _change_type, _commit_version,
    /// _commit_timestamp; default: all); a name in double quotes is taken as written.
    #[arg(long)]
    pub columns: Vec<String>,
}

/// Reads the changes and prints them: a grid with a summary, or JSON lines with `--json`.
pub async fn print_changes(table: &DeltaTable, args: &ChangesArgs) -> Result<(), DeltaError> {
    let limit = (args.rows > 0).then_some(args.rows);
    let grid_rows = limit.unwrap_or(super::rows_out::GRID_MAX_ROWS);
    let from = args.from.trim();
    let mut builder = if !from.is_empty() && from.bytes().all(|b| b.is_ascii_digit()) {
        let version = from.parse().map_err(|_| DeltaError::InvalidArgument {
            reason: format!("--from {from}: the version is too large"),
        })?;
        table.changes(version)
    } else if from.starts_with('-') {
        return Err(DeltaError::InvalidArgument {
            reason: format!("--from {from}: a version is 0 or more"),
        });
    } else {
        table.changes_since(delta_arrow_reader::parse_timestamp(from)?)
    };
    if !args.table.json {
        builder = builder.with_limit(grid_rows);
    } else if let Some(n) = limit {
        builder = builder.with_limit(n);
    }
    if !args.columns.is_empty() {
        builder = builder.with_projection(super::column_list::column_list(&args.columns)?);
    }
    let changes = builder.build().await?;
    let (start, end) = (changes.start_version(), changes.end_version());
    let files = changes.files().len();
    let stream = changes.into_stream();
    let schema = stream.schema();
    if args.table.json {
        return super::rows_out::print_rows(stream, super::rows_out::RowFormat::Json).await;
    }
    let gathered = super::rows_out::gather_for_grid(stream, false).await?;
    let grid = super::data_grid::format(&schema, &gathered.batches)?;
    let shown = gathered.shown;
    let more = if shown == grid_rows {
        " (-n N shows more; --json prints every row)"
    } else {
        ""
    };
    let range = if start > end {
        format!("nothing was committed since {from} up to version {end}")
    } else {
        format!(
            "changes of versions {start} to {end}, from {}",
            super::info::counted(files as u64, "file")
        )
    };
    let text = format!(
        "{}\n{grid}\n{} shown{more}; {range}\n",
        table.location(),
        super::info::counted(shown as u64, "row"),
    );
    super::terminal::print_text(&text)
}
