//! `dar info`, `dar schema` and `dar files`: text and JSON output.

use delta_arrow_reader::{DeltaError, DeltaTable};
use serde_json::{json, Value};

pub(super) fn emit(text: &str) -> Result<(), DeltaError> {
    super::terminal::print_text(text)
}

pub(super) fn pretty(value: &Value) -> Result<String, DeltaError> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| DeltaError::InvalidArgument {
            reason: e.to_string(),
        })
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

pub(super) fn timestamp_text(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| "unknown".into())
}

/// The `info` JSON object.
pub fn info_json(table: &DeltaTable) -> Value {
    let p = table.protocol();
    let m = table.metadata();
    json!({
        "location": table.location().to_string(),
        "version": table.version(),
        "timestamp": table.timestamp_ms().map(|_| timestamp_text(table.timestamp_ms())),
        "protocol": p,
        "id": m.id,
        "name": m.name,
        "partitionColumns": table.partition_columns(),
        "columnMapping": table.column_mapping_mode().as_str(),
        "numFiles": table.eager_files().unwrap_or_default().len(),
        "sizeBytes": table.eager_size_bytes().unwrap_or_default(),
        "numColumns": table.schema().fields().len(),
        "load": table.load_info(),
    })
}

/// Prints `dar info`.
pub fn print_info(table: &DeltaTable, json: bool) -> Result<(), DeltaError> {
    if json {
        return emit(&pretty(&info_json(table))?);
    }
    let p = table.protocol();
    let features = |f: &Option<Vec<String>>| match f {
        Some(f) if !f.is_empty() => f.join(", "),
        _ => "-".into(),
    };
    let partitions = if table.partition_columns().is_empty() {
        "-".to_string()
    } else {
        table.partition_columns().join(", ")
    };
    let load = table.load_info();
    let text = format!(
        "location:          {}\n\
         version:           {}\n\
         committed:         {}\n\
         protocol:          reader {} / writer {}\n\
         reader features:   {}\n\
         writer features:   {}\n\
         column mapping:    {}\n\
         partition columns: {}\n\
         columns:           {}\n\
         files:             {}\n\
         size:              {} ({} bytes)\n\
         log:               {:?}, checkpoint {}, {} read ({})\n",
        table.location(),
        table.version(),
        timestamp_text(table.timestamp_ms()),
        p.min_reader_version,
        p.min_writer_version,
        features(&p.reader_features),
        features(&p.writer_features),
        table.column_mapping_mode().as_str(),
        partitions,
        table.schema().fields().len(),
        table.eager_files().unwrap_or_default().len(),
        human_bytes(table.eager_size_bytes().unwrap_or_default()),
        table.eager_size_bytes().unwrap_or_default(),
        load.discovery,
        load.checkpoint_version
            .map_or("none".to_string(), |v| v.to_string()),
        counted(load.log_files_read, "log file"),
        human_bytes(load.log_bytes_read),
    );
    emit(&text)
}

/// Prints `dar schema`.
pub fn print_schema(table: &DeltaTable, json: bool) -> Result<(), DeltaError> {
    let schema = table.schema();
    if json {
        let fields: Vec<Value> = table
            .delta_schema()
            .fields
            .iter()
            .zip(schema.fields().iter())
            .map(|(d, a)| {
                json!({
                    "name": d.name,
                    "type": serde_json::to_value(&d.data_type).unwrap_or(Value::Null),
                    "nullable": d.nullable,
                    "arrowType": a.data_type().to_string(),
                    "partition": table.partition_columns().contains(&d.name),
                })
            })
            .collect();
        return emit(&pretty(
            &json!({ "version": table.version(), "fields": fields }),
        )?);
    }
    let mut grid = grid(["name", "delta type", "arrow type", "nullable", "partition"]);
    for (d, f) in table
        .delta_schema()
        .fields
        .iter()
        .zip(schema.fields().iter())
    {
        let partition = table.partition_columns().contains(&d.name);
        grid.add_row(cells([
            f.name().to_string(),
            d.data_type.to_string(),
            f.data_type().to_string(),
            f.is_nullable().to_string(),
            if partition { "yes" } else { "" }.to_string(),
        ]));
    }
    emit(&format!("{grid}\n"))
}

/// The cells of a grid row, each on one line with its controls escaped as `dar head`
/// escapes them (a name or value holding a newline or an escape sequence would break the
/// grid's lines or drive the terminal).
pub(super) fn cells<const N: usize>(row: [String; N]) -> [String; N] {
    row.map(|text| super::terminal::safe(&text, false).into_owned())
}

/// `count` and `noun`, plural unless one (`1 file`, `3 files`).
pub(super) fn counted(count: impl Into<u64>, noun: &str) -> String {
    let count = count.into();
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
}

/// A table with `header`, drawn like `dar head`'s (ASCII lines, as wide as its cells).
pub(super) fn grid(header: impl Into<comfy_table::Row>) -> comfy_table::Table {
    let mut grid = comfy_table::Table::new();
    grid.load_preset("||--+-++|    ++++++");
    grid.set_header(header);
    grid
}

/// Prints `dar files`.
pub fn print_files(table: &DeltaTable, json: bool) -> Result<(), DeltaError> {
    if json {
        /// One file as `dar files --json` prints it; the statistics verbatim (through a
        /// `Value` a number of more digits than an f64 holds would be rounded).
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct FileJson<'a> {
            path: &'a str,
            size: i64,
            /// By logical column name, as the npm package's `files()` gives them.
            partition_values: serde_json::Map<String, serde_json::Value>,
            deletion_vector: &'a Option<delta_arrow_reader::log::DeletionVectorDescriptor>,
            modification_time: i64,
            stats: Option<Box<serde_json::value::RawValue>>,
        }
        let files = table.eager_files().unwrap_or_default();
        let names = table.partition_column_names();
        let rows: Vec<FileJson<'_>> =
            files
                .iter()
                .map(|f| FileJson {
                    path: &f.path,
                    size: f.size,
                    partition_values: names
                        .iter()
                        .map(|(logical, physical)| {
                            let value = f.partition_values.value_of(physical, logical);
                            (logical.to_string(), value.into())
                        })
                        .collect(),
                    deletion_vector: &f.deletion_vector,
                    modification_time: f.modification_time,
                    stats: f.stats.as_ref().and_then(|s| s.json()).and_then(|s| {
                        serde_json::value::RawValue::from_string(s.into_owned()).ok()
                    }),
                })
                .collect();
        let text =
            serde_json::to_string_pretty(&rows).map_err(|e| DeltaError::InvalidArgument {
                reason: e.to_string(),
            })?;
        return emit(&(text + "\n"));
    }
    let mut grid = grid(["size", "path", "partition values", "rows deleted"]);
    let names = table.partition_column_names();
    for f in table.eager_files().unwrap_or_default() {
        let parts: Vec<String> = names
            .iter()
            .map(|(logical, physical)| {
                let value = f.partition_values.value_of(physical, logical);
                format!("{logical}={}", value.unwrap_or("null"))
            })
            .collect();
        let deleted = f
            .deletion_vector
            .as_ref()
            .map(|d| d.cardinality.to_string())
            .unwrap_or_default();
        grid.add_row(cells([
            f.size.to_string(),
            f.path.clone(),
            parts.join(", "),
            deleted,
        ]));
    }
    if let Some(size) = grid.column_mut(0) {
        size.set_cell_alignment(comfy_table::CellAlignment::Right);
    }
    let mut text = format!("{grid}\n");
    text.push_str(&format!(
        "{}, {}\n",
        counted(table.eager_files().unwrap_or_default().len() as u64, "file"),
        human_bytes(table.eager_size_bytes().unwrap_or_default())
    ));
    emit(&text)
}
