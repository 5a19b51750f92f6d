//! `dar history`: the table's commits, newest first (version, time, operation, its
//! parameters, the engine), as `DESCRIBE HISTORY` shows them; `--json` gives each commit's
//! whole `commitInfo`.

use clap::Args;
use delta_arrow_reader::{DeltaError, DeltaTable};
use serde_json::Value;

use super::info::{cells, counted, emit, grid, timestamp_text};
use super::TableArgs;

/// `dar history` arguments.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Show at most N commits, newest first (0: all of them).
    #[arg(short = 'n', long = "limit", default_value_t = 20, value_name = "N")]
    pub limit: usize,
}

/// The widest a cell of operation parameters is shown in the grid (`--json` has them whole).
const PARAMETERS_WIDTH: usize = 80;

/// Prints `dar history`.
pub async fn print_history(table: &DeltaTable, args: &HistoryArgs) -> Result<(), DeltaError> {
    let limit = (args.limit > 0).then_some(args.limit);
    let entries = table.history(limit).await?;
    if args.table.json {
        let text =
            serde_json::to_string_pretty(&entries).map_err(|e| DeltaError::InvalidArgument {
                reason: e.to_string(),
            })?;
        return emit(&(text + "\n"));
    }
    let mut grid = grid(["version", "timestamp", "operation", "parameters", "engine"]);
    for e in &entries {
        let field = |name: &str| e.commit_info.as_ref().and_then(|m| m.get(name));
        let parameters = field("operationParameters")
            .map(compact)
            .unwrap_or_default();
        let engine = field("engineInfo")
            .or_else(|| field("clientVersion"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        grid.add_row(cells([
            e.version.to_string(),
            timestamp_text(e.timestamp),
            e.operation.clone().unwrap_or_default(),
            parameters,
            engine.to_string(),
        ]));
    }
    let mut text = format!("{grid}\n");
    let oldest = entries.last().map_or(0, |e| e.version);
    let more = if oldest > 0 && limit.is_some_and(|n| entries.len() == n) {
        " (-n 0 shows all of them)"
    } else if oldest > 0 {
        " (older commits were removed by the log's cleanup)"
    } else {
        ""
    };
    text.push_str(&format!(
        "{}{more}\n",
        counted(entries.len() as u64, "commit")
    ));
    emit(&text)
}

/// `value` as one line of JSON, cut at [`PARAMETERS_WIDTH`] characters.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= PARAMETERS_WIDTH {
        return text;
    }
    let cut: String = text.chars().take(PARAMETERS_WIDTH - 1).collect();
    format!("{cut}…")
}
