//! Planning a change data feed read, pure: its columns (the table's, then `_change_type`,
//! `_commit_version` and `_commit_timestamp`) and one [`FileTask`] per changed file (see
//! `log::changes` for which files those are).
//!
//! The three columns ride on the read path's partition columns: each task carries the
//! commit's version and time, and, for a file derived from an `add` or `remove`, its change
//! type, as partition values, which the read repeats on every row. A change data (`cdc`) file
//! holds `_change_type` itself, so its tasks read with their own columns
//! ([`ChangeColumns::change_data`]), where `_change_type` is a data column. Both give the
//! same output schema.

use std::sync::Arc;

use super::{plan_columns, DeletionVectorChange, FileTask, ScanColumns, ScanRequest, TableFacts};
use crate::error::{DeltaError, Phase, Result};
use crate::log::{
    data_file_path, ChangeFile, ChangeType, ChangedRows, PartitionValues, CHANGE_TYPE_COLUMN,
    COMMIT_TIMESTAMP_COLUMN, COMMIT_VERSION_COLUMN,
};
use crate::predicate::{Scalar, TypedPartitionValues};
use crate::schema::{
    ColumnMappingMode, OutputTypes, PrimitiveType, StructField, StructType,
    COLUMN_MAPPING_PHYSICAL_NAME_KEY,
};

/// The columns of a change feed read.
#[derive(Debug, Clone)]
pub struct ChangeColumns {
    /// For files derived from `add` and `remove` actions.
    pub derived: ScanColumns,
    /// For change data (`cdc`) files.
    pub change_data: ScanColumns,
}

impl ChangeColumns {
    /// The output schema (the same for every file).
    pub fn output_schema(&self) -> arrow_schema::SchemaRef {
        Arc::clone(&self.derived.output_schema)
    }
}

/// `schema` with the change feed's three columns after its own. A table that has a column of
/// one of their names cannot be read as a change feed (Delta does not let it enable one).
pub fn change_feed_schema(schema: &StructType, mode: ColumnMappingMode) -> Result<StructType> {
    let mut fields = schema.fields.clone();
    for (name, ty) in [
        (CHANGE_TYPE_COLUMN, PrimitiveType::String),
        (COMMIT_VERSION_COLUMN, PrimitiveType::Long),
        (COMMIT_TIMESTAMP_COLUMN, PrimitiveType::Timestamp),
    ] {
        if schema.field(name).is_some() {
            return Err(DeltaError::invalid_schema(format!(
                "the table has a column named '{name}', which the change data feed adds itself"
            )));
        }
        let mut field = StructField::new(name, ty, false);
        if mode != ColumnMappingMode::None {
            // Change data files hold `_change_type` under its own name.
            field = field.with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, name);
        }
        fields.push(field);
    }
    Ok(StructType::new(fields))
}

/// The columns of a change feed read of the table `facts` describes (whose schema is the
/// change feed's, [`change_feed_schema`]): `projection` (logical names, the three change
/// columns among them) or all.
pub fn plan_change_columns(
    facts: TableFacts<'_>,
    projection: Option<Vec<String>>,
    output_types: OutputTypes,
) -> Result<ChangeColumns> {
    let request = ScanRequest {
        projection,
        predicate_columns: Vec::new(),
        output_types,
    };
    let mut partitions = facts.partition_columns.to_vec();
    partitions.extend([
        COMMIT_VERSION_COLUMN.to_string(),
        COMMIT_TIMESTAMP_COLUMN.to_string(),
    ]);
    let change_data = plan_columns(
        TableFacts {
            partition_columns: &partitions,
            ..facts
        },
        &request,
    )?;
    partitions.push(CHANGE_TYPE_COLUMN.to_string());
    let derived = plan_columns(
        TableFacts {
            partition_columns: &partitions,
            ..facts
        },
        &request,
    )?;
    Ok(ChangeColumns {
        derived,
        change_data,
    })
}

/// The task of a changed file of the commit of `version` made at `timestamp_ms`, whose size
/// is `size`; whether it reads with the change data columns.
pub fn plan_change_task(
    facts: TableFacts<'_>,
    file: &ChangeFile,
    size: u64,
    version: u64,
    timestamp_ms: i64,
) -> Result<(FileTask, bool)> {
    let path = data_file_path(facts.root, &file.path, Phase::Plan)?;
    let size = super::task::checked_file_size(&file.path, size)?;
    let raw = match &file.partition_values {
        Some(values) => values.clone(),
        None if facts.partition_columns.is_empty() => PartitionValues::new(),
        None => {
            return Err(DeltaError::invalid_log(
                crate::log::path::commit_path(version),
                format!(
                    "the remove of {} gives no partitionValues, which reading its rows as \
                     deleted needs (the table is partitioned)",
                    crate::error::redact(&file.path)
                ),
            ))
        }
    };
    let values =
        TypedPartitionValues::parse(&raw, facts.schema, facts.partition_columns, facts.mode)?;
    let version_value = i64::try_from(version).map_err(|_| {
        DeltaError::invalid_log(
            crate::log::path::commit_path(version),
            "the version is past the largest a Delta table has",
        )
    })?;
    let micros = timestamp_ms.checked_mul(1000).ok_or_else(|| {
        DeltaError::invalid_log(
            crate::log::path::commit_path(version),
            format!("the commit's time {timestamp_ms} ms is out of range"),
        )
    })?;
    let mut entries: Vec<(String, Scalar)> = values
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    entries.push((COMMIT_VERSION_COLUMN.into(), Scalar::Long(version_value)));
    entries.push((COMMIT_TIMESTAMP_COLUMN.into(), Scalar::Timestamp(micros)));
    let (deletion_vector, deletion_vector_change, change) = match &file.rows {
        ChangedRows::ChangeData => (None, None, None),
        ChangedRows::Whole {
            change,
            deletion_vector,
        } => (deletion_vector.clone(), None, Some(*change)),
        ChangedRows::DeletionVectorChanged {
            change,
            before,
            after,
        } => {
            let change_rows = DeletionVectorChange {
                newly_deleted: *change == ChangeType::Delete,
                before: before.clone(),
                after: after.clone(),
            };
            (None, Some(change_rows), Some(*change))
        }
    };
    if let Some(change) = change {
        entries.push((
            CHANGE_TYPE_COLUMN.into(),
            Scalar::String(change.as_str().into()),
        ));
    }
    let task = FileTask {
        path,
        size,
        partition_values: TypedPartitionValues::from_entries(entries),
        deletion_vector,
        deletion_vector_change,
        num_records: None,
        limit: None,
        range: None,
    };
    Ok((task, change.is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::DeletionVectorDescriptor;

    fn ok<T>(r: Result<T>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    fn schema() -> StructType {
        StructType::new([
            StructField::new("id", PrimitiveType::Long, true),
            StructField::new("p", PrimitiveType::Integer, true),
        ])
    }

    #[test]
    fn the_feed_columns_follow_the_table_and_are_constants_of_derived_files() {
        let url = ok(
            url::Url::parse("file:///t/").map_err(|e| DeltaError::InvalidArgument {
                reason: e.to_string(),
            }),
        );
        let feed = ok(change_feed_schema(&schema(), ColumnMappingMode::None));
        let names: Vec<&str> = feed.field_names().collect();
        assert_eq!(
            names,
            [
                "id",
                "p",
                "_change_type",
                "_commit_version",
                "_commit_timestamp"
            ]
        );
        let partitions = vec!["p".to_string()];
        let facts = TableFacts {
            root: &url,
            schema: &feed,
            partition_columns: &partitions,
            mode: ColumnMappingMode::None,
        };
        let columns = ok(plan_change_columns(facts, None, OutputTypes::default()));
        assert_eq!(
            columns.derived.output_schema,
            columns.change_data.output_schema
        );
        let partition =
            |c: &ScanColumns| -> Vec<bool> { c.columns.iter().map(|c| c.partition).collect() };
        assert_eq!(partition(&columns.derived), [false, true, true, true, true]);
        assert_eq!(
            partition(&columns.change_data),
            [false, true, false, true, true]
        );

        let mut values = PartitionValues::new();
        values.insert("p".into(), Some("3".into()));
        let file = ChangeFile {
            path: "p=3/a%20b.parquet".into(),
            size: Some(10),
            partition_values: Some(values),
            rows: ChangedRows::DeletionVectorChanged {
                change: ChangeType::Insert,
                before: Some(DeletionVectorDescriptor {
                    storage_type: "i".into(),
                    path_or_inline_dv: "x".into(),
                    offset: None,
                    size_in_bytes: 1,
                    cardinality: 1,
                }),
                after: None,
            },
        };
        let (task, change_data) = ok(plan_change_task(facts, &file, 10, 7, 1_500));
        assert!(!change_data);
        assert_eq!(task.path, "p=3/a b.parquet");
        let change = task.deletion_vector_change.clone();
        assert_eq!(
            change.map(|c| (c.newly_deleted, c.after)),
            Some((false, None))
        );
        let get = |name: &str| task.partition_values.get(name).cloned();
        assert_eq!(get("p"), Some(Scalar::Integer(3)));
        assert_eq!(get("_commit_version"), Some(Scalar::Long(7)));
        assert_eq!(get("_commit_timestamp"), Some(Scalar::Timestamp(1_500_000)));
        assert_eq!(get("_change_type"), Some(Scalar::String("insert".into())));

        let cdc = ChangeFile {
            rows: ChangedRows::ChangeData,
            ..file.clone()
        };
        let (task, change_data) = ok(plan_change_task(facts, &cdc, 10, 7, 1_500));
        assert!(change_data && task.partition_values.get("_change_type").is_none());
        let removed = ChangeFile {
            partition_values: None,
            ..file
        };
        let e = plan_change_task(facts, &removed, 10, 7, 0).err();
        assert_eq!(e.map(|e| e.code()), Some("invalid_log"));
        let e = plan_change_task(facts, &cdc, u64::MAX, 7, 0).err();
        assert_eq!(e.map(|e| e.code()), Some("limit_exceeded"));
        let e = plan_change_task(facts, &cdc, 10, 7, i64::MAX).err();
        assert_eq!(e.map(|e| e.code()), Some("invalid_log"));
    }

    #[test]
    fn a_table_column_named_as_a_feed_column_is_refused() {
        let clash = StructType::new([StructField::new(
            "_commit_version",
            PrimitiveType::Long,
            true,
        )]);
        let e = change_feed_schema(&clash, ColumnMappingMode::None).err();
        assert_eq!(e.map(|e| e.code()), Some("invalid_schema"));
        let mapped = ok(change_feed_schema(&schema(), ColumnMappingMode::Name));
        let physical = mapped
            .field("_change_type")
            .and_then(|f| f.metadata.get(COLUMN_MAPPING_PHYSICAL_NAME_KEY).cloned());
        assert_eq!(
            physical,
            Some(serde_json::Value::String("_change_type".into()))
        );
    }
}
