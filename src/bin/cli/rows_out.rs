//! A query's rows on standard output as they arrive (JSON lines, CSV), or gathered for a
//! grid up to [`GRID_MAX_ROWS`]: a large result never has to fit in memory, and a reader
//! that closes the pipe (`| head`) stops the work.

use arrow_array::RecordBatch;
use futures::{Stream, StreamExt};

use delta_arrow_reader::DeltaError;

/// The most rows a grid shows; more are printed with `--json` or `--csv`, or exported.
pub const GRID_MAX_ROWS: usize = 10_000;

/// How the rows are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// One JSON object per line.
    Json,
    /// CSV with a header row.
    #[cfg(feature = "datafusion")]
    Csv,
}

/// Prints each batch of `rows` as it arrives; ends early, quietly, when the reader of
/// standard output has gone.
pub async fn print_rows<S>(mut rows: S, format: RowFormat) -> Result<(), DeltaError>
where
    S: Stream<Item = Result<RecordBatch, DeltaError>> + Unpin,
{
    let mut first = true;
    while let Some(batch) = rows.next().await {
        let batch = batch?;
        if batch.num_rows() == 0 && !first {
            continue;
        }
        let text = match format {
            RowFormat::Json => super::text_formats::json_lines(std::slice::from_ref(&batch))?,
            #[cfg(feature = "datafusion")]
            RowFormat::Csv => super::text_formats::csv_piece(std::slice::from_ref(&batch), first)?,
        };
        first = false;
        if !super::terminal::print_data_piece(&text)? {
            return Ok(());
        }
    }
    Ok(())
}

/// The rows a grid shows, and how many there were in all.
pub struct GridRows {
    /// At most [`GRID_MAX_ROWS`] rows.
    pub batches: Vec<RecordBatch>,
    pub shown: usize,
    /// All the rows (`shown` when the rest was not counted).
    pub total: usize,
}

/// The first [`GRID_MAX_ROWS`] rows of `rows`; with `count_rest`, the others are read and
/// counted (not kept), otherwise reading stops there.
pub async fn gather_for_grid<S>(mut rows: S, count_rest: bool) -> Result<GridRows, DeltaError>
where
    S: Stream<Item = Result<RecordBatch, DeltaError>> + Unpin,
{
    let mut out = GridRows {
        batches: Vec::new(),
        shown: 0,
        total: 0,
    };
    while let Some(batch) = rows.next().await {
        let batch = batch?;
        out.total = out.total.saturating_add(batch.num_rows());
        let room = GRID_MAX_ROWS - out.shown;
        if room > 0 && batch.num_rows() > 0 {
            let kept = batch.slice(0, batch.num_rows().min(room));
            out.shown += kept.num_rows();
            out.batches.push(kept);
        }
        if out.shown == GRID_MAX_ROWS && !count_rest {
            break;
        }
    }
    Ok(out)
}
