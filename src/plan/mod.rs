//! Scan planning, pure: which columns to read, which files to read, and how.
//!
//! From a snapshot (schema, partition columns, active files) and a scan request (projection,
//! predicate) it builds the read columns (output columns plus those only the predicate
//! needs) and the output schema ([`plan_columns`]), selects the files the predicate may match
//! (`select`), and makes one [`FileTask`] per selected file with its partition values parsed
//! once to their types ([`crate::predicate::TypedPartitionValues`]); `partitioning` groups
//! the tasks into partitions and `ranged` splits big files into byte ranges; `profile`
//! sums the active files' statistics into a column profile ([`table_profile`]). Strings and
//! binaries take the Arrow types the request's [`OutputTypes`] ask for, in the read columns
//! and the output schema alike (and partition values as [`FileTask::partition_arrays`]
//! gives them).
#![deny(clippy::disallowed_methods, clippy::disallowed_types)] // see clippy.toml

#[cfg(not(target_arch = "wasm32"))] // the npm package reads no change feed
mod changes;
mod partitioning;
mod profile;
mod ranged;
mod select;
mod task;

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};

use crate::error::{DeltaError, Result};
use url::Url;

use crate::log::data_file_path;
use crate::schema::{ColumnMappingMode, FieldIndex, OutputTypes, StructType};

#[cfg(not(target_arch = "wasm32"))]
pub use changes::{change_feed_schema, plan_change_columns, plan_change_task, ChangeColumns};
pub use partitioning::{group_whole_files, target_partitions, PartitionCaps};
pub use profile::{table_profile, ColumnProfile, TableProfile};
#[cfg(not(target_arch = "wasm32"))]
pub use ranged::groups_for_few_files;
pub use ranged::{cap_range, split_byte_ranges, MAX_TASK_BYTES};
pub use select::{select_files, FileSelection, SelectedFile, SkipReason};
pub use task::{DeletionVectorChange, FileTask, ReadColumn};

/// What a scan asks for.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// Output columns by logical name (top-level), in order; `None` for all.
    pub projection: Option<Vec<String>>,
    /// Columns the row predicate reads (top-level logical names).
    pub predicate_columns: Vec<String>,
    /// The Arrow types strings and binaries are read and output as.
    pub output_types: OutputTypes,
}

/// The facts of a snapshot planning needs.
#[derive(Debug, Clone, Copy)]
pub struct TableFacts<'a> {
    /// Table root (data file paths are resolved against it).
    pub root: &'a Url,
    /// Logical schema.
    pub schema: &'a StructType,
    /// Partition columns (logical names).
    pub partition_columns: &'a [String],
    /// Column mapping mode.
    pub mode: ColumnMappingMode,
}

/// The read columns and output of a scan.
#[derive(Debug, Clone)]
pub struct ScanColumns {
    /// Columns read from every file.
    pub columns: Arc<Vec<ReadColumn>>,
    /// Their schema.
    pub read_schema: SchemaRef,
    /// Which read columns are output, in output order.
    pub output_indices: Arc<Vec<usize>>,
    /// The output schema.
    pub output_schema: SchemaRef,
}

fn resolve<'a>(
    schema: &'a StructType,
    index: &FieldIndex<'a>,
    name: &str,
) -> Result<&'a crate::schema::StructField> {
    // Named as a filter names it: close names first, else the first 20 columns, quoted.
    index
        .field(name)
        .ok_or_else(|| crate::predicate::bind::unknown_column(&[], name, schema))
}

/// Resolves the projection and predicate columns.
pub fn plan_columns(facts: TableFacts<'_>, request: &ScanRequest) -> Result<ScanColumns> {
    // Names are looked up once per column: by index, not by a scan of the fields each.
    let index = facts.schema.field_index();
    let resolve = |name: &str| resolve(facts.schema, &index, name);
    let output_names: Vec<String> = match &request.projection {
        Some(p) => {
            let mut seen = HashSet::new();
            let mut names = Vec::with_capacity(p.len());
            for n in p {
                let f = resolve(n)?;
                if !seen.insert(f.name.clone()) {
                    return Err(DeltaError::InvalidArgument {
                        reason: format!("column '{n}' is projected twice"),
                    });
                }
                names.push(f.name.clone());
            }
            names
        }
        None => facts.schema.field_names().map(str::to_string).collect(),
    };
    let mut read_names = output_names.clone();
    let mut reading: HashSet<&str> = output_names.iter().map(String::as_str).collect();
    for n in &request.predicate_columns {
        let f = resolve(n)?;
        if reading.insert(f.name.as_str()) {
            read_names.push(f.name.clone());
        }
    }
    let partitions: HashSet<&str> = facts.partition_columns.iter().map(String::as_str).collect();
    let mut columns = Vec::with_capacity(read_names.len());
    for name in &read_names {
        let field = resolve(name)?.clone();
        let arrow = Arc::new(request.output_types.apply_field(&field.to_arrow()?));
        let partition = partitions.contains(name.as_str());
        columns.push(ReadColumn {
            field,
            arrow,
            partition,
        });
    }
    let read_schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Arc::clone(&c.arrow))
            .collect::<Vec<_>>(),
    ));
    let output_indices: Vec<usize> = (0..output_names.len()).collect();
    let output_schema = Arc::new(Schema::new(
        output_indices
            .iter()
            .map(|&i| Arc::clone(&columns[i].arrow))
            .collect::<Vec<_>>(),
    ));
    Ok(ScanColumns {
        columns: Arc::new(columns),
        read_schema,
        output_indices: Arc::new(output_indices),
        output_schema,
    })
}

/// One task per selected file, in selection (log) order; each task takes the partition values
/// [`select_files`] parsed.
pub fn plan_tasks(
    facts: TableFacts<'_>,
    files: Vec<SelectedFile<'_>>,
    limit: Option<usize>,
) -> Result<Vec<FileTask>> {
    files
        .into_iter()
        .map(
            |SelectedFile {
                 add,
                 partition_values,
             }| {
                let size = u64::try_from(add.size).map_err(|_| {
                    DeltaError::invalid_log(
                        crate::error::redact(&add.path),
                        format!("the data file's size (add.size) is negative: {}", add.size),
                    )
                })?;
                let size = task::checked_file_size(&add.path, size)?;
                Ok(FileTask {
                    path: data_file_path(facts.root, &add.path, crate::error::Phase::Plan)?,
                    size,
                    partition_values,
                    deletion_vector: add.deletion_vector.clone(),
                    #[cfg(not(target_arch = "wasm32"))]
                    deletion_vector_change: None,
                    num_records: add.stats.as_ref().and_then(|s| s.num_records()),
                    limit,
                    range: None,
                })
            },
        )
        .collect()
}
