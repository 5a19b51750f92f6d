//! What planning hands to the read layer: the columns every file of a scan reads
//! ([`ReadColumn`]) and one [`FileTask`] per data file (or byte range of one).

use arrow_array::ArrayRef;
use arrow_schema::FieldRef;

use crate::error::Result;
use crate::log::DeletionVectorDescriptor;
use crate::predicate::TypedPartitionValues;
use crate::schema::StructField;

/// One logical column to read.
#[derive(Debug, Clone)]
pub struct ReadColumn {
    /// The logical Delta field.
    pub field: StructField,
    /// The Arrow field it is read as (logical name and type).
    pub arrow: FieldRef,
    /// Whether it is a partition column (its values come from the log, not the file).
    pub partition: bool,
}

impl ReadColumn {
    /// Every field of `schema` as read unchanged, the ones named in `partitions` as
    /// partition columns (tests of the read layer, which plan no scan).
    #[cfg(test)]
    pub(crate) fn all_of(schema: &crate::schema::StructType, partitions: &[&str]) -> Vec<Self> {
        schema
            .fields
            .iter()
            .map(|f| ReadColumn {
                field: f.clone(),
                arrow: std::sync::Arc::new(f.to_arrow().unwrap_or_else(|e| panic!("{e}"))),
                partition: partitions.contains(&f.name.as_str()),
            })
            .collect()
    }
}

/// One data file to read.
#[derive(Debug, Clone)]
pub struct FileTask {
    /// Path relative to the table root (percent-decoded), or an absolute URL.
    pub path: String,
    /// Size in bytes, from `add.size`.
    pub size: u64,
    /// The file's partition values, typed.
    pub partition_values: TypedPartitionValues,
    /// The file's deletion vector.
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// For a change data feed: read only the rows whose deletion a commit changed (then
    /// `deletion_vector` is `None`). Native only: the npm package reads no change feed, and
    /// the field's copies and drops in every task cost the browser module its last bytes.
    #[cfg(not(target_arch = "wasm32"))]
    pub deletion_vector_change: Option<DeletionVectorChange>,
    /// The file's row count as its statistics give it (`numRecords`): the footer must agree.
    pub num_records: Option<u64>,
    /// Stop after this many rows (of those the predicate selects).
    pub limit: Option<usize>,
    /// Read only the rows this byte range of the file owns (whole row groups, or rows of a
    /// row group the ranges share; see `read::ranges`); `None` reads the whole file. Row
    /// positions (deletion vectors) stay those of the whole file.
    pub range: Option<std::ops::Range<u64>>,
}

/// The rows of a file whose deletion one commit changed: it removed the file with deletion
/// vector `before` and added it again with `after`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeletionVectorChange {
    /// `true`: the rows `after` deletes and `before` did not (deleted by the commit);
    /// `false`: the rows `before` deleted and `after` does not (restored by it).
    pub newly_deleted: bool,
    /// The removed file's deletion vector (none: no row was deleted).
    pub before: Option<DeletionVectorDescriptor>,
    /// The added file's deletion vector (none: no row is deleted).
    pub after: Option<DeletionVectorDescriptor>,
}

/// `size`, the declared size of data file `path`, checked against
/// [`crate::limits::MAX_DATA_FILE_BYTES`].
pub(crate) fn checked_file_size(path: &str, size: u64) -> Result<u64> {
    if size > crate::limits::MAX_DATA_FILE_BYTES {
        return Err(crate::error::DeltaError::limit_exceeded(
            "data file size (add.size, bytes)",
            size,
            crate::limits::MAX_DATA_FILE_BYTES,
            Some(&crate::error::redact(path)),
            crate::error::Phase::Plan,
        ));
    }
    Ok(size)
}

impl FileTask {
    /// The bytes the task reads: its byte range's length, else the whole file's size.
    pub fn bytes(&self) -> u64 {
        self.range.as_ref().map_or(self.size, |r| r.end - r.start)
    }

    /// For each of `columns`: its value in this file as a length-1 array of the column's
    /// Arrow type, for partition columns (`None` for data columns).
    pub fn partition_arrays(&self, columns: &[ReadColumn]) -> Result<Vec<Option<ArrayRef>>> {
        columns
            .iter()
            .map(|c| match c.partition {
                true => self
                    .partition_values
                    .array(&c.field.name, c.arrow.data_type()),
                false => Ok(None),
            })
            .collect()
    }
}
