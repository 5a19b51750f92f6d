//! `dar stats`: what the log's file statistics say about each column (min, max, null count)
//! and the row count, without reading a data file.

use delta_arrow_reader::predicate::Scalar;
use delta_arrow_reader::{DeltaError, DeltaTable};
use serde_json::json;

use super::info::{cells, emit, grid, pretty};

/// Prints `dar stats`.
pub async fn print_stats(table: &DeltaTable, json: bool) -> Result<(), DeltaError> {
    let profile = table.column_profile().await?;
    if json {
        let mut json = profile.to_json();
        json["version"] = json!(table.version());
        return emit(&pretty(&json)?);
    }
    let mut out = grid(["column", "min", "max", "nulls"]);
    for c in &profile.columns {
        // Without bounds in every file, the table's extremes may lie beyond those shown.
        let (lo, hi) = if c.complete { ("", "") } else { ("<= ", ">= ") };
        let bound = |v: &Option<Scalar>, sign: &str| {
            v.as_ref().map(|v| format!("{sign}{v}")).unwrap_or_default()
        };
        out.add_row(cells([
            c.path.join("."),
            bound(&c.min, lo),
            bound(&c.max, hi),
            c.null_count.map(|n| n.to_string()).unwrap_or_default(),
        ]));
    }
    if let Some(nulls) = out.column_mut(3) {
        nulls.set_cell_alignment(comfy_table::CellAlignment::Right);
    }
    let rows = match profile.num_records {
        Some(n) => format!("{n} rows"),
        None => "rows unknown (a file has no row count)".to_string(),
    };
    let nulls = if profile.counts_exact {
        ""
    } else {
        "; null counts may include deleted rows (deletion vectors or loose bounds)"
    };
    // Writers cut timestamp statistics to the millisecond (Delta Spark does): say so where a
    // maximum shown may lie below the data's.
    let timestamps = profile.columns.iter().any(|c| {
        matches!(
            c.max,
            Some(Scalar::Timestamp(m) | Scalar::TimestampNtz(m)) if m % 1000 == 0
        )
    });
    let precision = if timestamps {
        "; a timestamp maximum has the statistics' precision, often the millisecond: values \
         may run up to 999 µs past it"
    } else {
        ""
    };
    // What `<=` and `>=` mean, where a bound shown carries one.
    let loose = if profile
        .columns
        .iter()
        .any(|c| !c.complete && (c.min.is_some() || c.max.is_some()))
    {
        "<= and >=: not every file has bounds for the column"
    } else {
        "every bound shown holds for every file"
    };
    let text = format!(
        "{out}\n{rows}; statistics of {} of {} files, from the log (no data file read); \
         {loose}{nulls}{precision}\n",
        profile.files_with_stats, profile.files
    );
    emit(&text)
}
