//! A snapshot described as plain JS objects: schema fields (Delta and Arrow types),
//! protocol, metadata, load info, I/O counters and the active files.
//!
//! Values are built as JSON with serde and handed over with one `JSON.parse`, which keeps
//! the bundle free of a second serialisation framework; every number fits a JS number.

use serde::Serialize;
use serde_json::{json, Value};
use wasm_bindgen::JsValue;

use super::error::js_error;
use crate::api::DeltaTable;
use crate::error::DeltaError;
use crate::log::{Add, AddStats};
use crate::plan::table_profile;

/// `value` as a JS value through JSON.
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value).map_err(|e| {
        js_error(&DeltaError::Internal {
            reason: format!("cannot describe the value: {e}"),
            phase: crate::Phase::Load,
        })
    })?;
    js_sys::JSON::parse(&text)
}

/// `{ fields: [{ name, type, arrowType, nullable, metadata }] }`: `type` is the Delta type
/// as in the Delta schema JSON (`"long"`, `{ type: "struct", fields: [...] }`, ...),
/// `arrowType` the Arrow type the column is read as.
pub(crate) fn schema(table: &DeltaTable) -> Value {
    let arrow = table.schema();
    let fields: Vec<Value> = table
        .delta_schema()
        .fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let arrow_type = arrow
                .fields()
                .get(i)
                .map(|f| f.data_type().to_string())
                .unwrap_or_default();
            json!({
                "name": field.name,
                "type": field.data_type,
                "arrowType": arrow_type,
                "nullable": field.nullable,
                "metadata": field.metadata,
            })
        })
        .collect();
    json!({ "fields": fields })
}

/// The output schema of a scan: `{ fields: [{ name, arrowType, nullable }] }`.
pub(crate) fn arrow_fields(schema: &arrow_schema::Schema) -> Value {
    let fields: Vec<Value> = schema
        .fields()
        .iter()
        .map(|f| {
            json!({
                "name": f.name(),
                "arrowType": f.data_type().to_string(),
                "nullable": f.is_nullable(),
            })
        })
        .collect();
    json!({ "fields": fields })
}

/// `{ id, name, description, partitionColumns, configuration, createdTime }`.
pub(crate) fn metadata(table: &DeltaTable) -> Value {
    let m = table.metadata();
    json!({
        "id": m.id,
        "name": m.name,
        "description": m.description,
        "partitionColumns": m.partition_columns,
        "configuration": m.configuration,
        "createdTime": m.created_time,
        "columnMapping": table.column_mapping_mode().as_str(),
    })
}

/// The column profile from the log alone (see `plan::table_profile`): `{ files,
/// filesWithStats, numRecords, countsExact, columns: [{ name, path, min, max, nullCount,
/// filesWithBounds, complete }] }`; bounds in the filter syntax (`'text'`, `date '…'`).
pub(crate) fn profile(table: &DeltaTable) -> Result<Value, DeltaError> {
    let files = table.eager_files().unwrap_or_default();
    Ok(table_profile(
        table.delta_schema(),
        table.column_mapping_mode(),
        table.partition_columns(),
        files,
    )?
    .to_json())
}

/// The active files: `[{ path, size, partitionValues, deletionVector, modificationTime,
/// numRecords }]`. `path` is as written in the log; `partitionValues` is keyed by logical
/// column name (the log keys it by physical name under column mapping); `numRecords` comes
/// from the file statistics when present.
pub(crate) fn files(table: &DeltaTable) -> Value {
    let partition_names = table.partition_column_names();
    let files: Vec<Value> = table
        .eager_files()
        .unwrap_or_default()
        .iter()
        .map(|add| file(add, &partition_names))
        .collect();
    Value::Array(files)
}

fn file(add: &Add, partition_names: &[(&str, &str)]) -> Value {
    let partition_values: serde_json::Map<String, Value> = partition_names
        .iter()
        .map(|(logical, physical)| {
            let value = add.partition_values.value_of(physical, logical);
            (logical.to_string(), json!(value))
        })
        .collect();
    json!({
        "path": add.path,
        "size": add.size,
        "partitionValues": partition_values,
        "deletionVector": add.deletion_vector,
        "modificationTime": add.modification_time,
        "numRecords": add.stats.as_ref().and_then(AddStats::num_records),
    })
}
